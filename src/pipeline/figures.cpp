#include "pipeline/figures.hpp"

#include <algorithm>
#include <numeric>

namespace cuboid::pipeline {

TimeSummary summarize_times(const std::vector<double>& seconds) {
  TimeSummary t;
  if (seconds.empty()) return t;
  std::vector<std::size_t> order(seconds.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return seconds[a] < seconds[b]; });
  const std::size_t mid = order.size() / 2;
  t.median_index = order[mid];
  t.min_s = seconds[order.front()];
  t.max_s = seconds[order.back()];
  t.median_s = order.size() % 2 ? seconds[order[mid]]
                                : 0.5 * (seconds[order[mid - 1]] + seconds[order[mid]]);
  return t;
}

void add_product(exec::WorkerStats& total, const exec::WorkerStats& product) {
  total.busy_s += product.busy_s, total.copy_s += product.copy_s;
  total.stall_s += product.stall_s;
  total.finish_s = std::max(total.finish_s, product.finish_s);
  total.h2d_bytes += product.h2d_bytes, total.d2h_bytes += product.d2h_bytes;
  total.direct_copies += product.direct_copies, total.staged_copies += product.staged_copies;
  total.registrations += product.registrations;
  total.refused_registrations += product.refused_registrations;
  total.registered_bytes += product.registered_bytes, total.register_s += product.register_s;
  total.flops += product.flops, total.steps += product.steps;
  total.steal_bytes += product.steal_bytes;
  total.stolen_steps += product.stolen_steps, total.lost_steps += product.lost_steps;
  total.stolen_flops += product.stolen_flops;
  total.steals.insert(total.steals.end(), product.steals.begin(), product.steals.end());
}

template <class Scalar>
std::vector<ProcessorFigures> processor_figures(const LocalMultiply<Scalar>& lm,
                                                const std::vector<platform::Speed>& speeds,
                                                const std::vector<LocalPlan>& plans,
                                                const std::vector<exec::WorkerStats>& done) {
  std::vector<ProcessorFigures> out;
  const auto& specs = lm.processors();
  for (std::size_t q = 0; q < specs.size(); ++q) {
    ProcessorFigures f;
    f.name = specs[q].name, f.kind = platform::to_string(specs[q].kind);
    f.space = specs[q].space, f.threads = specs[q].threads;
    f.speed_gflops = lm.speeds()[q];
    if (q < speeds.size()) f.speed_source = speeds[q].source;
    for (const auto& lp : plans) {
      const auto& pp = lp.steps.processors[q];
      f.tasks += pp.tasks, f.pieces += pp.pieces, f.planned_flops += pp.flops;
      if (q < lp.prediction.seconds.size()) f.predicted_s += lp.prediction.seconds[q];
    }
    f.cut_gflops = !plans.empty() && q < plans.front().speeds.size() ? plans.front().speeds[q]
                                                                     : f.speed_gflops;
    if (q < done.size()) f.done = done[q];
    out.push_back(std::move(f));
  }
  return out;
}

#define CUBOID_FIGURES(Scalar)                                           \
  template std::vector<ProcessorFigures> processor_figures(              \
      const LocalMultiply<Scalar>&, const std::vector<platform::Speed>&, \
      const std::vector<LocalPlan>&, const std::vector<exec::WorkerStats>&);
CUBOID_FOR_EACH_SCALAR(CUBOID_FIGURES)
#undef CUBOID_FIGURES

}  // namespace cuboid::pipeline
