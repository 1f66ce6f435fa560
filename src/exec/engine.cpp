#include "exec/engine.hpp"

#include <atomic>

#include <exception>
#include <stdexcept>
#include <string>

#include "kokkos_ext/compat.hpp"
#include "kokkos_ext/host.hpp"
#include "util/trace.hpp"

namespace cuboid::exec {

namespace {
std::atomic<int> engines_created{0};

// One processor's view of the run's steal queues.
class StealSource final : public StepSource {
 public:
  StealSource(StealScheduler& s, int p, const std::vector<Step>& planned)
      : s_(s), p_(p), planned_(planned) {}
  bool next(StepRef& out) override { return s_.next(p_, out); }
  void done(double flops) override { s_.done(p_, flops); }
  const std::vector<Step>* planned() const override { return &planned_; }

 private:
  StealScheduler& s_;
  int p_;
  const std::vector<Step>& planned_;
};
}  // namespace

template <class Scalar>
Engine<Scalar>::Engine(std::vector<std::unique_ptr<Worker<Scalar>>> workers)
    : workers_(std::move(workers)) {
  ++engines_created;
  for (const auto& w : workers_) {
    if (!w) throw std::invalid_argument("engine: a worker is missing");
    lanes_.push_back(std::make_unique<ThreadLane>());
  }
}

template <class Scalar>
void Engine<Scalar>::set_schedule(const ScheduleOptions& options) {
  if (!options.speeds.empty() && options.speeds.size() != workers_.size())
    throw std::invalid_argument("engine: " + std::to_string(options.speeds.size()) +
                                " speeds for " + std::to_string(workers_.size()) + " processors");
  schedule_ = options;
}

template <class Scalar>
void Engine<Scalar>::reserve(const Plan& plan) {
  if (plan.processors.size() != workers_.size())
    throw std::invalid_argument("engine: the plan has " + std::to_string(plan.processors.size()) +
                                " processors but the engine " + std::to_string(workers_.size()));
  kokkos_ext::ScopedRegion region("cuboid::exec::reserve");
  if (schedule_.policy == StealPolicy::static_plan) {
    for (std::size_t q = 0; q < workers_.size(); ++q) workers_[q]->prepare(plan.processors[q]);
  } else {
    // Any processor may run any step: each must fit every budget.
    if (!plan.shared_steps)
      throw std::invalid_argument(
          "engine: a stealing schedule needs a plan made with PlanOptions::shared_steps");
    ProcessorPlan all;
    for (const auto& pp : plan.processors)
      all.steps.insert(all.steps.end(), pp.steps.begin(), pp.steps.end());
    for (auto& w : workers_) w->prepare(all);
  }
  if (partial_storage_.size() < plan.partials.size()) partial_storage_.resize(plan.partials.size());
  for (std::size_t b = 0; b < plan.partials.size(); ++b) {
    const std::size_t need = std::size_t(plan.partials[b].c.rows() * plan.partials[b].c.cols());
    if (partial_storage_[b].extent(0) < need)
      partial_storage_[b] = Kokkos::View<Scalar*, Kokkos::HostSpace>(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::exec::C_partial"), need);
  }
}

template <class Scalar>
double Engine<Scalar>::reserved_bytes() const {
  double b = 0;
  for (const auto& w : workers_) b += w->reserved_bytes();
  for (const auto& p : partial_storage_) b += double(p.extent(0)) * sizeof(Scalar);
  return b;
}

// Rows and columns of a view as the host loops count them.
template <class View>
std::int64_t rows_of(const View& v) {
  return std::int64_t(v.extent(0));
}
template <class View>
std::int64_t cols_of(const View& v) {
  return std::int64_t(v.extent(1));
}

// The host loops of a run, at namespace scope: a device lambda (KOKKOS_LAMBDA in a CUDA build)
// may not sit in a private member function. They run on the caller's thread (host_for).

// C <- beta * C on each rectangle that no step scales itself.
template <class Scalar>
void prescale_c(const std::vector<Rect>& rects, const HostMatrix<Scalar>& C, Scalar beta) {
  kokkos_ext::ScopedRegion region("cuboid::exec::prescale");
  for (const Rect& r : rects) {
    auto c = Kokkos::subview(C, std::make_pair(r.i0, r.i1), std::make_pair(r.j0, r.j1));
    // beta = 0 must clear NaN and Inf in the old C, which multiplying by zero would keep.
    if (beta == Scalar(0)) {
      kokkos_ext::host_for(
          "cuboid::exec::prescale_zero", rows_of(c), cols_of(c),
          KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { c(i, j) = Scalar(0); });
    } else {
      kokkos_ext::host_for(
          "cuboid::exec::prescale_beta", rows_of(c), cols_of(c),
          KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { c(i, j) *= beta; });
    }
  }
}

// C += each split-k partial, in the plan's fixed order: the result depends on the partition only
// through reassociation.
template <class Scalar>
void add_partials(const Plan& plan, const std::vector<HostMatrix<Scalar>>& partials,
                  const HostMatrix<Scalar>& C) {
  kokkos_ext::ScopedRegion region("cuboid::exec::reduce");
  trace::Span span("reduction", "add split-k partials",
                   "\"blocks\": " + std::to_string(plan.partials.size()));
  for (std::size_t b = 0; b < plan.partials.size(); ++b) {
    const Rect& r = plan.partials[b].c;
    auto c = Kokkos::subview(C, std::make_pair(r.i0, r.i1), std::make_pair(r.j0, r.j1));
    auto p = partials[b];
    kokkos_ext::host_for(
        "cuboid::exec::reduce_partial", rows_of(c), cols_of(c),
        KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { c(i, j) += p(i, j); });
  }
}

template <class Scalar>
void Engine<Scalar>::check_extents(const Plan& plan, const HostMatrix<Scalar>& A,
                                   const HostMatrix<Scalar>& B, const HostMatrix<Scalar>& C,
                                   kokkos_ext::Ops ops) {
  auto stored = [](const HostMatrix<Scalar>& X, std::int64_t rows, std::int64_t cols, char op) {
    return op == 'N' ? std::int64_t(X.extent(0)) == rows && std::int64_t(X.extent(1)) == cols
                     : std::int64_t(X.extent(0)) == cols && std::int64_t(X.extent(1)) == rows;
  };
  if (!stored(C, plan.m, plan.n, 'N') || !stored(A, plan.m, plan.k, ops.a) ||
      !stored(B, plan.k, plan.n, ops.b))
    throw std::invalid_argument("the matrices' extents do not match the plan's " +
                                std::to_string(plan.m) + "x" + std::to_string(plan.n) + "x" +
                                std::to_string(plan.k) + " product (A and B as stored)");
}

template <class Scalar>
void Engine<Scalar>::bind(const Plan& plan, const HostMatrix<Scalar>& A,
                          const HostMatrix<Scalar>& B, const HostMatrix<Scalar>& C, Scalar alpha,
                          Scalar beta, kokkos_ext::Ops ops) {
  ctx_.A = A, ctx_.B = B, ctx_.C = C, ctx_.alpha = alpha, ctx_.beta = beta, ctx_.ops = ops;
  // Partial i of this plan is buffer i seen at its rectangle's size.
  ctx_.partials.resize(plan.partials.size());
  ctx_.partial_rects.resize(plan.partials.size());
  for (std::size_t b = 0; b < plan.partials.size(); ++b) {
    const Rect& r = plan.partials[b].c;
    ctx_.partials[b] = HostMatrix<Scalar>(partial_storage_[b].data(), r.rows(), r.cols());
    ctx_.partial_rects[b] = r;
  }
  ctx_.teams.resize(workers_.size());
  for (std::size_t q = 0; q < workers_.size(); ++q) ctx_.teams[q] = gemm_team(workers_[q]->spec());
}

template <class Scalar>
std::unique_ptr<StealScheduler> Engine<Scalar>::make_stealer(const Plan& plan,
                                                             std::vector<Unit> units, double t0) {
  if (units.empty()) return nullptr;
  std::vector<bool> copies(workers_.size());
  for (std::size_t q = 0; q < workers_.size(); ++q)
    copies[q] = workers_[q]->spec().kind != platform::ProcessorKind::host;
  return std::make_unique<StealScheduler>(plan, std::move(units), copies, schedule_, t0);
}

template <class Scalar>
void Engine<Scalar>::compute(const Plan& plan, StealScheduler* stealer,
                             const std::function<bool()>& poll, double t0, RunResult& result) {
  kokkos_ext::ScopedRegion region("cuboid::exec::compute");
  result.workers.resize(workers_.size());
  std::vector<std::unique_ptr<StepSource>> sources(workers_.size());
  const RunContext<Scalar>& ctx = ctx_;
  for (std::size_t q = 0; q < workers_.size(); ++q) {
    if (stealer) {
      sources[q] = std::make_unique<StealSource>(*stealer, int(q), plan.processors[q].steps);
    } else {
      sources[q] = std::make_unique<PlanSteps>(plan.processors[q].steps, int(q));
    }
    lanes_[q]->start([&, q] { result.workers[q] = workers_[q]->execute(*sources[q], ctx, t0); });
  }
  std::exception_ptr first;
  if (poll) {
    try {
      for (std::size_t next = 0; next < lanes_.size();) {
        if (!poll()) break;
        // Sleeps on the first unfinished lane: no busy spinning between polls.
        while (next < lanes_.size() && lanes_[next]->wait_for(std::chrono::microseconds(100)))
          ++next;
      }
    } catch (...) {
      first = std::current_exception();
    }
  }
  // Wait for every lane before reporting the first failure: none may still use the buffers.
  for (auto& lane : lanes_) {
    try {
      lane->wait();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
  if (stealer)
    for (std::size_t q = 0; q < workers_.size(); ++q) {
      const StealCounts c = stealer->counts(int(q));
      auto& w = result.workers[q];
      w.stolen_steps = c.stolen_steps, w.lost_steps = c.lost_steps, w.stolen_flops = c.stolen_flops;
      w.steals = c.steals;
    }
}

template <class Scalar>
RunResult Engine<Scalar>::run(const Plan& plan, const HostMatrix<Scalar>& A,
                              const HostMatrix<Scalar>& B, const HostMatrix<Scalar>& C,
                              Scalar alpha, Scalar beta, const std::function<bool()>& poll,
                              kokkos_ext::Ops ops) {
  check_extents(plan, A, B, C, ops);
  reserve(plan);  // nothing to do when the plan was reserved before
  bind(plan, A, B, C, alpha, beta, ops);
  std::vector<Unit> units;
  if (schedule_.policy != StealPolicy::static_plan) units = make_units(plan, sizeof(Scalar));
  RunResult result;
  const double t0 = now_seconds();
  const std::unique_ptr<StealScheduler> stealer = make_stealer(plan, std::move(units), t0);
  if (stealer) result.units = int(stealer->units().size());
  prescale_c(plan.prescale, C, beta);
  result.prescale_s = now_seconds() - t0;
  compute(plan, stealer.get(), poll, t0, result);
  const double t1 = now_seconds();
  add_partials(plan, ctx_.partials, C);
  const double t2 = now_seconds();
  result.reduce_s = t2 - t1;
  result.seconds = t2 - t0;
  return result;
}

template <class Scalar>
int Engine<Scalar>::created() {
  return engines_created.load();
}

#define CUBOID_ENGINE(Scalar) template class Engine<Scalar>;
CUBOID_FOR_EACH_SCALAR(CUBOID_ENGINE)
#undef CUBOID_ENGINE

}  // namespace cuboid::exec
