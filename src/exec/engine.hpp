#pragma once
// Runs a plan: beta pre-pass, one thread per processor, then the fixed-order reduction of
// partial C buffers.
#include <memory>
#include <vector>

#include "exec/plan.hpp"
#include "exec/thread_lane.hpp"
#include "exec/worker.hpp"

namespace cuboid::exec {

struct RunResult {
  double seconds = 0;     // whole product, pre-pass and reduction included
  double prescale_s = 0;  // applying beta to blocks no GEMM applies it to
  double reduce_s = 0;    // adding partial C buffers
  std::vector<WorkerStats> workers;
};

template <class Scalar>
class Engine {
 public:
  // Creates a worker per processor and allocates every buffer the plan needs.
  Engine(Plan plan, std::vector<std::unique_ptr<Worker<Scalar>>> workers, std::int64_t m,
         std::int64_t n);
  // C <- alpha*A*B + beta*C with the plan; A, B, C are the whole host matrices.
  RunResult run(const HostMatrix<Scalar>& A, const HostMatrix<Scalar>& B,
                const HostMatrix<Scalar>& C, Scalar alpha, Scalar beta);
  const Plan& plan() const { return plan_; }
  double partial_bytes() const;

 private:
  Plan plan_;
  std::vector<std::unique_ptr<Worker<Scalar>>> workers_;
  std::vector<std::unique_ptr<ThreadLane>> lanes_;  // one per worker, alive across runs
  std::vector<HostMatrix<Scalar>> partials_;
  std::vector<Rect> partial_rects_;
};

}  // namespace cuboid::exec
