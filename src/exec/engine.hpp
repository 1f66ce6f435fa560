#pragma once
// Runs plans on a fixed set of processors: beta pre-pass, one long-lived thread per processor,
// then the fixed-order reduction of partial C buffers. Threads, worker buffers and partial
// buffers are made once and reused by every plan run on the engine.
#include <functional>
#include <memory>
#include <vector>

#include "exec/plan.hpp"
#include "exec/schedule.hpp"
#include "exec/thread_lane.hpp"
#include "exec/worker.hpp"

namespace cuboid::exec {

struct RunResult {
  double seconds = 0;     // whole product, pre-pass and reduction included
  double prescale_s = 0;  // applying beta to blocks no GEMM applies it to
  double reduce_s = 0;    // adding partial C buffers
  std::vector<WorkerStats> workers;
  int units = 0;  // units of work the schedule could move (0: static)
};

template <class Scalar>
class Engine {
 public:
  // Takes one worker per processor and starts a thread (lane) for each.
  explicit Engine(std::vector<std::unique_ptr<Worker<Scalar>>> workers);
  // How runs share out the steps (schedule.hpp); static by default. With stealing, every worker's
  // buffers are reserved for every step of a plan, whichever processor it belongs to: plans for
  // it are made with PlanOptions::shared_steps so that those fit every budget.
  void set_schedule(const ScheduleOptions& options);
  const ScheduleOptions& schedule() const { return schedule_; }
  // Grows worker buffers and partial buffers so that `plan` runs without allocating. Call it for
  // every plan before the first timed run; buffers are sized for the largest needs over the
  // plans reserved (a plan's partial i uses buffer i, viewed at its rectangle's size).
  void reserve(const Plan& plan);
  // C <- alpha*op(A)*op(B) + beta*C with `plan` (one ProcessorPlan per worker, in order); A, B, C
  // are the whole host matrices of the plan's problem as stored (A k x m where ops.a transposes,
  // B n x k where ops.b does). A plan not reserved first is reserved here.
  // `poll`, when given, is called repeatedly on the calling thread while the workers compute
  // (about every 100 us, e.g. to progress MPI) until it returns false (nothing left to
  // progress: the thread then only waits, and wakes no core the GEMMs use); what it throws is
  // rethrown once every worker has stopped.
  RunResult run(const Plan& plan, const HostMatrix<Scalar>& A, const HostMatrix<Scalar>& B,
                const HostMatrix<Scalar>& C, Scalar alpha, Scalar beta,
                const std::function<bool()>& poll = {}, kokkos_ext::Ops ops = {});
  // Bytes of the buffers held (workers' and partial buffers), for memory reports.
  double reserved_bytes() const;
  // Engines (each a set of workers and threads) this process has created: a distributed run
  // records it to show that every rank made one set for the whole run.
  static int created();

 private:
  // The steps of run(), in order.
  static void check_extents(const Plan& plan, const HostMatrix<Scalar>& A,
                            const HostMatrix<Scalar>& B, const HostMatrix<Scalar>& C,
                            kokkos_ext::Ops ops);
  void bind(const Plan& plan, const HostMatrix<Scalar>& A, const HostMatrix<Scalar>& B,
            const HostMatrix<Scalar>& C, Scalar alpha, Scalar beta, kokkos_ext::Ops ops);
  std::unique_ptr<StealScheduler> make_stealer(const Plan& plan, std::vector<Unit> units,
                                               double t0);
  // Starts every worker on its lane, polls while they run, waits for all of them.
  void compute(const Plan& plan, StealScheduler* stealer, const std::function<bool()>& poll,
               double t0, RunResult& result);

  std::vector<std::unique_ptr<Worker<Scalar>>> workers_;
  std::vector<std::unique_ptr<ThreadLane>> lanes_;  // one per worker, alive across runs
  std::vector<Kokkos::View<Scalar*, Kokkos::HostSpace>> partial_storage_;
  RunContext<Scalar> ctx_;  // reused so that a run allocates nothing
  ScheduleOptions schedule_;
};

}  // namespace cuboid::exec
