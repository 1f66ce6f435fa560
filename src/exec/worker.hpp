#pragma once
// A worker executes one processor's steps. The host worker runs Kokkos Kernels gemm on block
// views of the matrices in place; the staged worker (host-backed "staged" processor and every
// device) packs panels into staging buffers, moves them with asynchronous deep copies on its
// own execution-space instances, and overlaps the copies of the next step with the GEMM of
// the current one (double buffering).
#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "exec/matrices.hpp"
#include "exec/plan.hpp"
#include "exec/schedule.hpp"
#include "kokkos_ext/compat.hpp"
#include "platform/device_calls.hpp"
#include "platform/processor.hpp"
#include "util/trace.hpp"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace cuboid::exec {

// A step in a trace event's arguments: its C block (rows, columns) and its k range.
inline std::string step_args(const Step& s) {
  auto range = [](std::int64_t a, std::int64_t b) {
    return "[" + std::to_string(a) + ", " + std::to_string(b) + "]";
  };
  return "\"rows\": " + range(s.c.i0, s.c.i1) + ", \"cols\": " + range(s.c.j0, s.c.j1) +
         ", \"k\": " + range(s.l0, s.l1);
}

// Processors whose GEMM rates are measured together: each runs GEMMs until `stop`, and counts
// only those that ended before it, so that every GEMM counted ran while all were busy (a best
// of a few, or a fixed count each, would time some alone once a faster one stopped). `ready`
// counts the processors that have timed two (or failed): the window closes after that.
struct GemmWindow {
  std::atomic<bool> stop{false};
  std::atomic<int> ready{0};
};

struct WorkerStats {
  double busy_s = 0;  // time its GEMMs ran
  // Processors with their own memory: time the copies took (in and out), and time the GEMM
  // queue sat idle before a GEMM waiting for its inputs (the copy time not hidden).
  double copy_s = 0;
  double stall_s = 0;
  double finish_s = 0;  // when it finished, from the start of the run
  double h2d_bytes = 0, d2h_bytes = 0;
  // Copies straight from and to the caller's page-locked arrays, and through staging (a chunk
  // of the input ring, or of a drained C block); registrations the run made (and those refused),
  // the bytes they page-locked and the time they took.
  int direct_copies = 0, staged_copies = 0;
  int registrations = 0, refused_registrations = 0;
  double registered_bytes = 0, register_s = 0;
  double flops = 0;
  int steps = 0;
  // Work stealing: bytes it copied (in and out) for steps it stole, and what the schedule moved
  // (filled by the engine).
  double steal_bytes = 0;
  int stolen_steps = 0, lost_steps = 0;
  double stolen_flops = 0;
  std::vector<StealRecord> steals;  // the decisions behind its stolen steps
};

template <class Scalar>
struct RunContext {
  // As stored: A is k x m where ops.a transposes, B n x k where ops.b does. Steps are cut in
  // op(A) op(B); a worker reads the stored block under each and lets the GEMM apply the op.
  HostMatrix<Scalar> A, B, C;
  kokkos_ext::Ops ops;
  std::vector<HostMatrix<Scalar>> partials;  // one per Plan::partials entry
  std::vector<Rect> partial_rects;           // where each partial buffer sits in C
  Scalar alpha{1}, beta{0};
  // Per processor: how its GEMMs are cut (gemm_team()). A step keeps its owner's cut wherever
  // it runs, so that a stolen step makes the same BLAS calls.
  std::vector<int> teams;
};

template <class Scalar>
class Worker {
 public:
  virtual ~Worker() = default;
  const platform::ProcessorSpec& spec() const { return spec_; }
  // Grows its buffers so that the plan runs without allocating (outside timed regions);
  // buffers only grow, so after several calls they fit the largest needs of all the plans.
  virtual void prepare(const ProcessorPlan& plan) = 0;
  // Bytes of the buffers it holds (its own memory and host staging).
  virtual double reserved_bytes() const { return 0; }
  // Runs the steps `source` hands it, one at a time; `t0` is the run's start on the steady
  // clock (seconds since epoch of it).
  virtual WorkerStats execute(StepSource& source, const RunContext<Scalar>& ctx, double t0) = 0;
  // GEMM rate (GFLOP/s) on data in the processor's own memory, for an s x s x s product.
  virtual double measure_gemm_rate(std::int64_t s, double max_seconds) = 0;
  // The same beside other processors measured at once (GemmWindow): s x s x s GEMMs back to
  // back until the window closes, the rate over those that ended before it.
  virtual double measure_gemm_rate_in(std::int64_t s, GemmWindow& window) = 0;
  // A processor that copies: GB/s of its link each way (host staging to its memory, back),
  // the best of a few copies of `bytes` through its own queues. {0, 0}: it works in place.
  struct Link {
    double h2d_gbs = 0, d2h_gbs = 0;
  };
  virtual Link measure_link(std::size_t /*bytes*/) { return {}; }

 protected:
  explicit Worker(platform::ProcessorSpec spec) : spec_(std::move(spec)) {}
  platform::ProcessorSpec spec_;
};

template <class Scalar>
std::unique_ptr<Worker<Scalar>> make_worker(const platform::ProcessorSpec& spec);

// What the buffers of the worker made for `spec` cost against its memory budget.
BufferCost buffer_cost(const platform::ProcessorSpec& spec, std::size_t element_bytes);

double now_seconds();

// Best GEMM rate (GFLOP/s) of C = A*B on `space` for s x s views, timed for at most
// `max_seconds` after one untimed call that pays set-up costs.
template <class Space, class View>
double best_gemm_rate(const Space& space, const View& A, const View& B, const View& C,
                      std::int64_t s, double max_seconds) {
  using Scalar = typename View::non_const_value_type;
  platform::gemm(space, Scalar(1), A, B, Scalar(0), C);
  space.fence();
  double best = 0, spent = 0;
  for (int r = 0; r < 20 && spent < max_seconds; ++r) {
    const double t = now_seconds();
    platform::gemm(space, Scalar(1), A, B, Scalar(0), C);
    space.fence();
    const double dt = now_seconds() - t;
    spent += dt;
    best = std::max(best, 2.0 * double(s) * double(s) * double(s) / dt / 1e9);
  }
  return best;
}

// GEMM rate (GFLOP/s) of C = A*B on `space` for s x s views over `window` (GemmWindow): the
// flops of the GEMMs that ended before it closed over their time (the last one's rate when
// none did), after one untimed call that pays set-up costs.
template <class Space, class View>
double window_gemm_rate(const Space& space, const View& A, const View& B, const View& C,
                        std::int64_t s, GemmWindow& window) {
  using Scalar = typename View::non_const_value_type;
  platform::gemm(space, Scalar(1), A, B, Scalar(0), C);
  space.fence();
  const double flops = 2.0 * double(s) * double(s) * double(s);
  double counted = 0, seconds = 0, last = 0;
  for (int reps = 1; !window.stop.load(); ++reps) {
    const double t = now_seconds();
    platform::gemm(space, Scalar(1), A, B, Scalar(0), C);
    space.fence();
    const double dt = now_seconds() - t;
    last = flops / dt / 1e9;
    if (reps == 2) ++window.ready;
    if (window.stop.load()) break;  // ended after the window closed: not counted
    counted += flops, seconds += dt;
  }
  return seconds > 0 ? counted / seconds / 1e9 : last;
}

// Sets the calling thread's OpenMP (and so OpenBLAS) thread count; no-op without OpenMP.
void set_thread_count(int threads);
// The calling thread's OpenMP thread count (1 without OpenMP).
int thread_count();

// The calling thread runs with `threads` for the scope's life, then with its own count again (a
// calibration's GEMM leaves the caller's later host work as it found it).
class ThreadCountScope {
 public:
  explicit ThreadCountScope(int threads) : caller_(thread_count()) { set_thread_count(threads); }
  ~ThreadCountScope() { set_thread_count(caller_); }
  ThreadCountScope(const ThreadCountScope&) = delete;
  ThreadCountScope& operator=(const ThreadCountScope&) = delete;

 private:
  int caller_;
};

// An s x s calibration operand (any rank of view holding s*s elements) set to `value`: without
// Kokkos where the host can write it, so that processors can be measured at once from threads
// of their own (Kokkos' host space is driven from its initial thread).
template <class View>
void fill_operand(const View& v, typename View::non_const_value_type value) {
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                           typename View::memory_space>::accessible)
    std::fill_n(v.data(), v.span(), value);
  else
    Kokkos::deep_copy(v, value);
}

// How a processor cuts its GEMMs: into a grid of `team` single-threaded BLAS calls (team_gemm;
// 1: one single-threaded call), or 0: one call with all of the caller's threads (a processor
// alone on the host cores, or a device).
int gemm_team(const platform::ProcessorSpec& spec);

// Sleeps so that a GEMM that took `seconds` seems `factor` times slower, once `since_start`
// has reached the processor's slowdown_after_s: the test and benchmark knob
// platform.slowdown, a processor slowed during the run as if by another job.
void slow_down(const platform::ProcessorSpec& spec, double seconds, double since_start);

// C = alpha*op(A)*op(B) + beta*C on a host space as an OpenMP team of single-threaded BLAS calls,
// one per block of a near-square grid of `blocks` blocks over C, run by `threads` threads.
// OpenBLAS's OpenMP build serves one multi-threaded call at a time: a second processor calling at
// once spins until the first is done (bench/exec/blas_concurrency.cpp measures it). A call made
// inside a parallel region runs single-threaded and needs no such slot, so host-side processors
// sharing the cores overlap. The grid depends on `blocks` only: a step stolen by a processor with
// another thread count makes the same calls. blocks == 0: one call with the caller's threads.
template <class Space, class AView, class BView, class CView>
void team_gemm(const Space& space, int blocks, int threads, kokkos_ext::Ops ops,
               typename CView::const_value_type alpha, const AView& A, const BView& B,
               typename CView::const_value_type beta, const CView& C) {
  const std::int64_t m = std::int64_t(C.extent(0)), n = std::int64_t(C.extent(1));
  const std::int64_t depth = std::int64_t(ops.a == 'N' ? A.extent(1) : A.extent(0));
  int pr = 1;
  for (int d = 1; d * d <= blocks; ++d)
    if (blocks % d == 0) pr = d;
  const int pc = blocks > 0 ? blocks / pr : 1;
  if (blocks <= 1 || depth == 0 || m < pr || n < pc) {
    // One call: single-threaded where the owner made it so, whatever the caller's threads.
    const bool single = blocks == 1 && threads > 1;
    if (single) set_thread_count(1);
    kokkos_ext::gemm(space, ops, alpha, A, B, beta, C);
    if (single) set_thread_count(threads);
    return;
  }
  // The rows of op(A) are columns of A as stored when it is transposed; likewise for B.
  const auto all = std::make_pair(std::int64_t(0), depth);
  const bool ta = ops.a != 'N', tb = ops.b != 'N';
#if defined(_OPENMP)
#pragma omp parallel for num_threads(std::max(1, std::min(threads, blocks))) schedule(static, 1)
#endif
  for (int t = 0; t < blocks; ++t) {
    const int r = t % pr, c = t / pr;
    const auto rows = std::make_pair(m * r / pr, m * (r + 1) / pr);
    const auto cols = std::make_pair(n * c / pc, n * (c + 1) / pc);
    kokkos_ext::gemm(space, ops, alpha,
                     ta ? Kokkos::subview(A, all, rows) : Kokkos::subview(A, rows, all),
                     tb ? Kokkos::subview(B, cols, all) : Kokkos::subview(B, all, cols), beta,
                     Kokkos::subview(C, rows, cols));
  }
}

template <class Space, class AView, class BView, class CView>
void team_gemm(const Space& space, int blocks, int threads, typename CView::const_value_type alpha,
               const AView& A, const BView& B, typename CView::const_value_type beta,
               const CView& C) {
  team_gemm(space, blocks, threads, kokkos_ext::Ops{}, alpha, A, B, beta, C);
}

// The same with one block per thread: what a processor does with its own steps.
template <class Space, class AView, class BView, class CView>
void team_gemm(const Space& space, int threads, typename CView::const_value_type alpha,
               const AView& A, const BView& B, typename CView::const_value_type beta,
               const CView& C) {
  team_gemm(space, threads, threads, alpha, A, B, beta, C);
}

}  // namespace cuboid::exec
