#include "app/setup.hpp"

#include <memory>

#include "exec/calibrate.hpp"
#include "partition/speeds.hpp"
#include "partition/strategy.hpp"
#include "pipeline/rates.hpp"
#include "util/error.hpp"
#include "util/host_memory.hpp"

namespace cuboid::app {

std::vector<platform::ProcessorSpec> processors_of(const deck::Deck& d) {
  const bool given = !d.platform.processors.empty();
  auto names = given ? d.platform.processors : platform::default_processor_names();
  auto specs = platform::resolve_processors(names, d.at("platform.processors"));
  for (auto& p : specs)
    if (p.kind == platform::ProcessorKind::staged) {
      p.link_gbs = d.platform.staged_link_gbs;
      p.copy_jitter_us = d.platform.staged_copy_jitter_us;
    } else if (p.kind == platform::ProcessorKind::emulated) {
      p.link_gbs = d.platform.emulated_link_gbs;
      p.emulated_gflops = d.platform.emulated_gflops;
    }
  if (!d.platform.slowdown.empty()) {
    if (d.platform.slowdown.size() != specs.size())
      throw Error(d.at("platform.slowdown") + ": " + std::to_string(d.platform.slowdown.size()) +
                  " factors for " + std::to_string(specs.size()) + " processors (" +
                  (given ? "as listed in platform.processors" : "every enabled space, by default") +
                  ")");
    for (std::size_t q = 0; q < specs.size(); ++q) {
      auto& p = specs[q];
      p.slowdown = d.platform.slowdown[q];
      p.slowdown_after_s = d.platform.slowdown_after_s;
      if (p.kind == platform::ProcessorKind::device && p.slowdown != 1)
        throw Error(d.at("platform.slowdown") + ": " + p.name +
                    " cannot be slowed (only host, staged and emulated processors can): give it 1");
    }
  }
  if (!d.platform.measure_speeds && d.platform.speeds.size() != specs.size())
    throw Error(d.location("platform.speeds") +
                ": platform.speeds: " + std::to_string(d.platform.speeds.size()) + " speeds for " +
                std::to_string(specs.size()) + " processors (" +
                (given ? "as listed in platform.processors" : "every enabled space, by default") +
                ")");
  return specs;
}

exec::PlanOptions plan_options_for(const deck::Deck& d,
                                   const std::vector<platform::ProcessorSpec>& specs,
                                   std::size_t element_bytes) {
  try {
    return pipeline::plan_options_for(specs, element_bytes, d.platform.memory_budget_mib);
  } catch (const KeyedError& e) {
    throw Error(d.location(e.key) + ": " + e.what());
  }
}

pipeline::LocalOptions local_options_for(const deck::Deck& d,
                                         const std::vector<platform::ProcessorSpec>& specs,
                                         std::size_t element_bytes) {
  pipeline::LocalOptions o;
  o.algorithm = d.partition.algorithm;
  o.discretization = d.partition.discretization;
  o.schedule = d.run.schedule;
  o.task_tiles = d.run.task_tiles;
  o.seed = d.problem.seed;
  o.plan = plan_options_for(d, specs, element_bytes);
  return o;
}

template <class Scalar>
std::vector<platform::Speed> speeds_for(const deck::Deck& d,
                                        const std::vector<platform::ProcessorSpec>& specs,
                                        bool fresh, std::ostream& progress,
                                        std::vector<exec::ProcessorRate>* rates,
                                        double* reduce_gbs) {
  std::vector<platform::Speed> speeds;
  if (!d.platform.measure_speeds) {
    for (double s : d.platform.speeds) speeds.push_back(platform::Speed{s, "deck"});
    return speeds;
  }
  const auto& p = d.problem;
  exec::PlanOptions options = plan_options_for(d, specs, sizeof(Scalar));
  options.beta_is_one = p.beta == 1.0 && p.beta_im == 0.0;
  options.beta_is_zero = p.beta == 0.0 && p.beta_im == 0.0;
  const exec::CalibrationProblem problem = exec::calibration_problem(
      p.m, p.n, p.k, p.tile, d.partition.algorithm, d.partition.discretization, options);
  std::unique_ptr<platform::SpeedCache> cache;
  if (d.platform.use_speed_cache)
    cache = std::make_unique<platform::SpeedCache>(platform::default_speed_cache_path());
  // Speeds are the processors' own: platform.slowdown is a surprise the partition does not know.
  auto unslowed = specs;
  for (auto& s : unslowed) s.slowdown = 1;
  try {
    speeds = platform::calibrate(
        specs, deck::to_string(p.precision), problem.describe(),
        [&] { return exec::measure_rates<Scalar>(unslowed, problem, 0.25); }, cache.get(), fresh,
        progress);
  } catch (const partition::TooLarge& e) {
    // Calibration partitions the deck's cuboid (each edge capped) before the run does: the
    // same refusal, before any time is spent measuring.
    progress << "\n";
    throw Error(d.location("partition.discretization") + ": partition.discretization = \"" +
                std::string(partition::to_string(d.partition.discretization)) + "\" with " +
                d.at("problem.tile") + " (calibration on " + std::to_string(problem.m) + "x" +
                std::to_string(problem.n) + "x" + std::to_string(problem.k) + "): " + e.what());
  }
  if (rates != nullptr && !d.platform.speed_model_flops_only) {
    std::vector<double> gflops;
    for (const auto& s : speeds) gflops.push_back(s.gflops);
    *rates = pipeline::model_rates<Scalar>(specs, gflops, cache.get(), fresh, progress, reduce_gbs);
    if (cache) cache->save();
  }
  return speeds;
}

std::string speeds_origin(const deck::Deck& d, const std::vector<platform::Speed>& speeds) {
  if (!d.platform.measure_speeds) return d.at("platform.speeds");
  for (const auto& s : speeds)
    if (s.source == "cache")
      return "speed cache '" + platform::default_speed_cache_path() +
             "' (platform.speeds not given: measured speeds are cached there; delete the file or "
             "run `cuboid calibrate --fresh`)";
  return d.location("platform.speeds") + ": measured speeds";
}

void check_speeds(const deck::Deck& d, const std::vector<platform::Speed>& speeds) {
  std::vector<double> w;
  for (const auto& s : speeds) w.push_back(s.gflops);
  if (const auto problem = partition::speed_problem(w))
    throw Error(speeds_origin(d, speeds) + ": " + *problem);
}

#define CUBOID_SPEEDS_FOR(Scalar)                                                          \
  template std::vector<platform::Speed> speeds_for<Scalar>(                                \
      const deck::Deck&, const std::vector<platform::ProcessorSpec>&, bool, std::ostream&, \
      std::vector<exec::ProcessorRate>*, double*);
CUBOID_FOR_EACH_SCALAR(CUBOID_SPEEDS_FOR)
#undef CUBOID_SPEEDS_FOR

}  // namespace cuboid::app
