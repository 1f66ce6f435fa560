#pragma once
// A worker executes one processor's steps. The host worker runs Kokkos Kernels gemm on block
// views of the matrices in place; the staged worker (host-backed "staged" processor and every
// device) packs panels into staging buffers, moves them with asynchronous deep copies on its
// own execution-space instances, and overlaps the copies of the next step with the GEMM of
// the current one (double buffering).
#include <memory>
#include <string>
#include <vector>

#include "exec/matrices.hpp"
#include "exec/plan.hpp"
#include "platform/processor.hpp"

namespace cuboid::exec {

struct WorkerStats {
  double busy_s = 0;    // time spent in (or waiting for) GEMMs
  double stall_s = 0;   // time a staged processor waited for input copies: the copy time not hidden
  double finish_s = 0;  // when it finished, from the start of the run
  double h2d_bytes = 0, d2h_bytes = 0;
  double flops = 0;
  int steps = 0;
};

template <class Scalar>
struct RunContext {
  HostMatrix<Scalar> A, B, C;
  std::vector<HostMatrix<Scalar>> partials;  // one per Plan::partials entry
  std::vector<Rect> partial_rects;           // where each partial buffer sits in C
  Scalar alpha{1}, beta{0};
};

template <class Scalar>
class Worker {
 public:
  virtual ~Worker() = default;
  const platform::ProcessorSpec& spec() const { return spec_; }
  // Allocates whatever buffers the plan needs (outside timed regions).
  virtual void prepare(const ProcessorPlan& plan) = 0;
  // Runs the steps; `t0` is the run's start on the steady clock (seconds since epoch of it).
  virtual WorkerStats execute(const ProcessorPlan& plan, const RunContext<Scalar>& ctx,
                              double t0) = 0;
  // GEMM rate (GFLOP/s) on data in the processor's own memory, for an s x s x s product.
  virtual double measure_gemm_rate(std::int64_t s, double max_seconds) = 0;

 protected:
  explicit Worker(platform::ProcessorSpec spec) : spec_(std::move(spec)) {}
  platform::ProcessorSpec spec_;
};

template <class Scalar>
std::unique_ptr<Worker<Scalar>> make_worker(const platform::ProcessorSpec& spec);

// Sets the calling thread's OpenMP (and so OpenBLAS) thread count; no-op without OpenMP.
void set_thread_count(int threads);
double now_seconds();

}  // namespace cuboid::exec
