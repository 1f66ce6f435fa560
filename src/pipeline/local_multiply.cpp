#include "pipeline/local_multiply.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>

#include "exec/worker.hpp"
#include "util/error.hpp"
#include "util/host_memory.hpp"

namespace cuboid::pipeline {
namespace {

std::string describe(const partition::TileExtent& t) {
  return std::to_string(t[0]) + "x" + std::to_string(t[1]) + "x" + std::to_string(t[2]);
}

template <class Scalar>
std::vector<std::unique_ptr<exec::Worker<Scalar>>> workers_of(
    const std::vector<platform::ProcessorSpec>& processors) {
  std::vector<std::unique_ptr<exec::Worker<Scalar>>> workers;
  for (const auto& p : processors) workers.push_back(exec::make_worker<Scalar>(p));
  return workers;
}

// The largest panels and block processor q's buffers must hold over all plans: with shared
// steps every processor's buffers fit every step, whichever processor it belongs to.
exec::ProcessorPlan widest_needs(const std::vector<LocalPlan>& plans, std::size_t q) {
  exec::ProcessorPlan all;
  for (const auto& p : plans)
    for (std::size_t r = 0; r < p.steps.processors.size(); ++r)
      if (r == q || p.steps.shared_steps) exec::widen_needs(all, p.steps.processors[r]);
  return all;
}

std::int64_t buffer_need(const std::vector<LocalPlan>& plans, std::size_t q,
                         const exec::BufferCost& cost) {
  return exec::buffer_elements(widest_needs(plans, q), cost);
}

}  // namespace

exec::PlanOptions plan_options_for(const std::vector<platform::ProcessorSpec>& processors,
                                   std::size_t element_bytes, double budget_mib) {
  using platform::ProcessorKind;
  exec::PlanOptions o;
  for (const auto& p : processors) {
    const bool device = p.kind == ProcessorKind::device;
    // Processors that copy (devices, staged) need several steps per piece for the copies of one
    // to overlap the GEMM of another; the host works in place.
    o.min_panels.push_back(p.kind == ProcessorKind::host ? 1 : 4);
    o.buffer_cost.push_back(exec::buffer_cost(p, element_bytes));
    if (p.kind == ProcessorKind::host) {
      o.budget_elements.push_back(0);
      continue;
    }
    double bytes = budget_mib * 1024.0 * 1024.0;
    if (bytes <= 0) bytes = device ? 0.8 * double(p.memory_bytes) : 512.0 * 1024 * 1024;
    if (device && p.memory_bytes > 0 && bytes > double(p.memory_bytes))
      throw KeyedError(setting::memory_budget, human_bytes(bytes) + " exceeds the free memory of " +
                                                   p.name + " (" +
                                                   human_bytes(double(p.memory_bytes)) + ")");
    o.budget_elements.push_back(std::int64_t(bytes / double(element_bytes)));
    // Refused here, before calibration plans with it: the panels and C blocks come on top.
    const double ring = double(o.buffer_cost.back().fixed) * double(element_bytes);
    if (o.budget_elements.back() <= o.buffer_cost.back().fixed)
      throw KeyedError(setting::memory_budget,
                       human_bytes(bytes) + " is not above the staging ring of " + p.name + " (" +
                           human_bytes(ring) +
                           "), which its panels and C blocks come on top of: give more");
  }
  return o;
}

void require_supported(const GemmShape& shape, ScalarType) {
  if (shape.m < 0 || shape.n < 0 || shape.k < 0)
    throw std::invalid_argument("m, n and k must not be negative");
}

template <class Scalar>
LocalMultiply<Scalar>::LocalMultiply(std::vector<platform::ProcessorSpec> processors,
                                     std::vector<double> speeds, LocalOptions options)
    : LocalMultiply(processors, std::move(speeds), std::move(options),
                    workers_of<Scalar>(processors)) {}

template <class Scalar>
LocalMultiply<Scalar>::LocalMultiply(std::vector<platform::ProcessorSpec> processors,
                                     std::vector<double> speeds, LocalOptions options,
                                     std::vector<std::unique_ptr<exec::Worker<Scalar>>> workers)
    : processors_(std::move(processors)),
      speeds_(std::move(speeds)),
      options_(std::move(options)),
      engine_(std::move(workers)) {
  if (speeds_.size() != processors_.size())
    throw std::invalid_argument("local multiply: one speed per processor expected");
  exec::ScheduleOptions schedule;
  schedule.policy = options_.schedule;
  schedule.speeds = speeds_;
  for (const auto& p : processors_) schedule.link_gbs.push_back(p.link_gbs);
  schedule.seed = options_.seed;
  engine_.set_schedule(schedule);
}

template <class Scalar>
LocalPlan LocalMultiply<Scalar>::plan_one(const Product& product, const std::vector<double>& speeds,
                                          const std::vector<std::int64_t>& budgets) const {
  const LocalOptions& o = options_;
  const bool movable_steps = o.schedule != exec::StealPolicy::static_plan || o.task_tiles > 0;
  LocalPlan lp;
  lp.product = product;
  lp.speeds = speeds;
  const partition::TileExtent tiles = product.tiles();
  // A processor of speed 0 is left out: the others share the cuboid, it gets an empty zone.
  std::vector<double> active;
  for (double s : speeds)
    if (s > 0) active.push_back(s);
  try {
    auto zones = partition::processor_zones(o.algorithm, o.discretization, active, tiles);
    lp.zones.assign(speeds.size(), {});
    for (std::size_t q = 0, a = 0; q < speeds.size(); ++q)
      if (speeds[q] > 0) lp.zones[q] = std::move(zones[a++]);
  } catch (const partition::TooLarge& e) {
    throw KeyedError(setting::discretization,
                     "\"" + std::string(partition::to_string(o.discretization)) + "\" on " +
                         describe(tiles) + " tiles: " + e.what());
  } catch (const std::invalid_argument& e) {
    throw KeyedError(setting::algorithm, std::string(partition::to_string(o.algorithm)) + " on " +
                                             describe(tiles) + " tiles: " + e.what());
  }
  exec::PlanOptions popt = o.plan;
  popt.budget_elements = budgets;
  // With the speed model's rates, a copying processor's first block is cut for the fill.
  popt.element_bytes = sizeof(Scalar);
  popt.fill.clear();
  for (const exec::ProcessorRate& r : o.rates)
    popt.fill.push_back(r.copies() ? exec::PlanOptions::FillRate{r.gflops, r.h2d_gbs}
                                   : exec::PlanOptions::FillRate{});
  popt.beta_is_zero = product.beta_is_zero;
  popt.beta_is_one = product.beta_is_one;
  const auto& p = product;
  try {
    if (movable_steps)
      lp.task_tiles = exec::plan_for_stealing(popt, lp.zones, p.m, p.n, p.k, p.tile, o.task_tiles);
    lp.steps = exec::make_plan(lp.zones, p.m, p.n, p.k, p.tile, popt);
  } catch (const std::runtime_error& e) {
    throw KeyedError(setting::memory_budget,
                     std::string(e.what()) + " of tiles of " + std::to_string(p.tile));
  }
  return lp;
}

template <class Scalar>
std::vector<LocalPlan> LocalMultiply<Scalar>::plan_with(
    const std::vector<Product>& products, const std::vector<std::int64_t>& budgets) const {
  const LocalOptions& o = options_;
  std::vector<LocalPlan> plans;
  for (const Product& product : products) {
    require_supported(GemmShape{product.op_a, product.op_b, product.m, product.n, product.k},
                      scalar_type_of<Scalar>());
    // The flops model cuts once by the speeds as given; the flops+link model cuts again by
    // the rate each processor reaches on its zone (flops over predicted time; a geometric mean
    // with the last speeds damps the swings) and keeps the cut that finishes first.
    std::vector<exec::ProcessorRate> rates = o.rates;
    const bool linked = std::any_of(rates.begin(), rates.end(),
                                    [](const exec::ProcessorRate& r) { return r.copies(); });
    if (rates.empty())
      for (double s : speeds_) rates.push_back(exec::ProcessorRate{s, 0, 0});
    auto best_cut = [&](std::vector<double> speeds) {
      LocalPlan lp;
      constexpr int kCuts = 8;
      for (int cut = 0; cut < (linked ? kCuts : 1); ++cut) {
        LocalPlan trial = plan_one(product, speeds, budgets);
        trial.prediction = o.reduce_gbs > 0
                               ? exec::predict(trial.steps, rates, sizeof(Scalar), o.reduce_gbs)
                               : exec::predict(trial.steps, rates, sizeof(Scalar));
        const bool better = cut == 0 || trial.prediction.total_s < lp.prediction.total_s;
        std::vector<double> next = speeds;
        double slowest = 0, fastest = 1e300;
        for (std::size_t q = 0; q < speeds.size(); ++q) {
          const double flops = trial.steps.processors[q].flops, t = trial.prediction.seconds[q];
          if (flops > 0 && t > 0) {
            next[q] = std::sqrt(speeds[q] * flops / t / 1e9);
            slowest = std::max(slowest, t), fastest = std::min(fastest, t);
          }
        }
        if (better) lp = std::move(trial);
        if (slowest <= fastest * 1.01) break;
        speeds = next;
      }
      return lp;
    };
    LocalPlan lp = best_cut(speeds_);
    // A processor whose share costs the others more than it brings (a host's sliver beside a
    // device: the device's zone cut around it into more, smaller steps) is left out when the
    // model predicts the rest finish sooner without it; one at a time, while that holds.
    if (linked)
      for (bool dropped = true; dropped;) {
        dropped = false;
        std::size_t active = 0;
        for (double s : lp.speeds) active += s > 0 ? 1 : 0;
        if (active < 2) break;
        std::optional<LocalPlan> best;
        for (std::size_t q = 0; q < lp.speeds.size(); ++q) {
          if (!(lp.speeds[q] > 0)) continue;
          std::vector<double> without = lp.speeds;
          without[q] = 0;
          LocalPlan trial = best_cut(without);
          if (trial.prediction.total_s < (best ? best->prediction.total_s : lp.prediction.total_s))
            best = std::move(trial);
        }
        if (best) lp = std::move(*best), dropped = true;
      }
    plans.push_back(std::move(lp));
  }
  return plans;
}

template <class Scalar>
std::vector<LocalPlan> LocalMultiply<Scalar>::plan(const std::vector<Product>& products) const {
  const exec::PlanOptions& base = options_.plan;
  std::vector<std::int64_t> budgets = base.budget_elements;
  for (int attempt = 0;; ++attempt) {
    std::vector<LocalPlan> plans = plan_with(products, budgets);
    bool fits = true;
    for (std::size_t q = 0; q < budgets.size(); ++q) {
      const std::int64_t budget = base.budget_elements[q];
      if (budget <= 0) continue;
      const exec::BufferCost cost =
          q < base.buffer_cost.size() ? base.buffer_cost[q] : exec::BufferCost{};
      const std::int64_t need = buffer_need(plans, q, cost);
      if (need <= budget) continue;
      fits = false;
      budgets[q] = std::min(budgets[q] - 1,
                            std::int64_t(double(budgets[q]) * double(budget) / double(need)));
      if (budgets[q] <= cost.fixed || attempt == 32)
        throw KeyedError(setting::memory_budget, "memory budget too small for the steps of " +
                                                     std::to_string(products.size()) +
                                                     " products in tiles of " +
                                                     std::to_string(products.front().tile));
    }
    if (fits) return plans;
  }
}

template <class Scalar>
exec::RunResult LocalMultiply<Scalar>::multiply(const LocalPlan& plan,
                                                const exec::HostMatrix<Scalar>& A,
                                                const exec::HostMatrix<Scalar>& B,
                                                const exec::HostMatrix<Scalar>& C, Scalar alpha,
                                                Scalar beta, const std::function<bool()>& poll) {
  const Product& p = plan.product;  // the engine checks the extents against it
  return engine_.run(plan.steps, A, B, C, alpha, beta, poll,
                     kokkos_ext::Ops{char(p.op_a), char(p.op_b)});
}

template <class Scalar>
HostBuffers LocalMultiply<Scalar>::host_buffers(const std::vector<LocalPlan>& plans) const {
  HostBuffers out;
  const double elem = double(sizeof(Scalar));
  // Partial buffers are made per index and reused by every plan (the largest counts).
  std::vector<double> partials;
  for (const auto& lp : plans)
    for (std::size_t i = 0; i < lp.steps.partials.size(); ++i) {
      const auto& c = lp.steps.partials[i].c;
      if (partials.size() <= i) partials.resize(i + 1, 0.0);
      partials[i] = std::max(partials[i], double(c.rows()) * double(c.cols()) * elem);
    }
  for (double b : partials) out.partial_bytes += b;
  const auto& costs = options_.plan.buffer_cost;
  for (std::size_t q = 0; q < processors_.size(); ++q) {
    const auto kind = processors_[q].kind;
    if (kind == platform::ProcessorKind::host) continue;
    const exec::BufferCost cost = q < costs.size() ? costs[q] : exec::BufferCost{};
    if (kind == platform::ProcessorKind::staged) {
      out.copying_bytes += double(buffer_need(plans, q, cost)) * elem;
      continue;
    }
    // An emulated device's memory is host memory too.
    if (kind == platform::ProcessorKind::emulated)
      out.copying_bytes += double(buffer_need(plans, q, cost)) * elem;
    // A device's host staging: two of each of its largest panels and blocks.
    const exec::ProcessorPlan all = widest_needs(plans, q);
    out.copying_bytes += 2.0 * (double(all.max_a) + double(all.max_b) + double(all.max_c)) * elem;
  }
  return out;
}

#define CUBOID_LOCAL_MULTIPLY(Scalar) template class LocalMultiply<Scalar>;
CUBOID_FOR_EACH_SCALAR(CUBOID_LOCAL_MULTIPLY)
#undef CUBOID_LOCAL_MULTIPLY

}  // namespace cuboid::pipeline
