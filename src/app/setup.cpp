#include "app/setup.hpp"

#include <map>
#include <memory>

#include "mpi/setting.hpp"
#include "partition/strategy.hpp"
#include "util/error.hpp"
#include "util/host_memory.hpp"

namespace cuboid::app {

std::vector<platform::ProcessorSpec> processors_of(const deck::Deck& d) {
  const bool given = !d.platform.processors.empty();
  auto names = given ? d.platform.processors : platform::default_processor_names();
  auto specs = platform::resolve_processors(names, d.at("platform.processors"));
  for (auto& p : specs) p.register_host = d.platform.register_host;
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

std::string deck_key(const std::string& id) {
  static const std::map<std::string, std::string> keys = {
      {pipeline::setting::memory_budget, "platform.memory_budget_mib"},
      {pipeline::setting::algorithm, "partition.algorithm"},
      {pipeline::setting::discretization, "partition.discretization"},
      {pipeline::setting::speeds, "platform.speeds"},
      {mpi::setting::rank_algorithm, "partition.algorithm"},
      {mpi::setting::rank_speeds, "mpi.rank_speeds"},
      {mpi::setting::grid, "mpi.grid"},
      {mpi::setting::tile, "problem.tile"},
      {mpi::setting::memory_limit, "mpi.memory_limit_mib"}};
  const auto it = keys.find(id);
  return it != keys.end() ? it->second : id;
}

exec::PlanOptions plan_options_for(const deck::Deck& d,
                                   const std::vector<platform::ProcessorSpec>& specs,
                                   std::size_t element_bytes) {
  try {
    return pipeline::plan_options_for(specs, element_bytes,
                                      deck::product_settings(d).memory_budget_mib);
  } catch (const KeyedError& e) {
    throw Error(d.at(deck_key(e.key)) + ": " + e.what());
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
pipeline::Calibration calibration_for(const deck::Deck& d,
                                      const std::vector<platform::ProcessorSpec>& specs, bool fresh,
                                      std::ostream& progress) {
  const deck::ProductSettings set = deck::product_settings(d);
  pipeline::SpeedSource source;
  if (!set.speeds.empty()) source.given = set.speeds, source.given_label = "deck";
  if (set.use_speed_cache) source.cache_path = platform::default_speed_cache_path();
  source.remeasure = fresh;
  source.link_model = set.link_model;
  const auto& p = d.problem;
  pipeline::CalibrationShape shape;
  shape.m = p.m, shape.n = p.n, shape.k = p.k, shape.tile = p.tile;
  shape.algorithm = d.partition.algorithm, shape.discretization = d.partition.discretization;
  shape.beta_is_zero = p.beta == 0.0 && p.beta_im == 0.0;
  shape.beta_is_one = p.beta == 1.0 && p.beta_im == 0.0;
  const exec::PlanOptions plan = plan_options_for(d, specs, sizeof(Scalar));
  try {
    return pipeline::calibrate<Scalar>(specs, plan, shape, source, progress);
  } catch (const pipeline::SpeedsRefused& e) {
    throw Error(speeds_origin(d, e.from_cache) + ": " + e.what());
  } catch (const pipeline::CalibrationRefused& e) {
    throw Error(d.location(deck_key(e.key)) + ": partition.discretization = \"" +
                std::string(partition::to_string(d.partition.discretization)) + "\" with " +
                d.at("problem.tile") + " (calibration on " + e.problem + "): " + e.why);
  } catch (const KeyedError& e) {
    throw Error(d.at(deck_key(e.key)) + ": " + e.what());
  }
}

std::string speeds_origin(const deck::Deck& d, bool from_cache) {
  if (!d.platform.measure_speeds) return d.at("platform.speeds");
  if (from_cache)
    return "speed cache '" + platform::default_speed_cache_path() +
           "' (platform.speeds not given: measured speeds are cached there; delete the file or "
           "run `cuboid calibrate --fresh`)";
  return d.location("platform.speeds") + ": measured speeds";
}

std::string speeds_origin(const deck::Deck& d, const std::vector<platform::Speed>& speeds) {
  bool cached = false;
  for (const auto& s : speeds) cached = cached || s.source == "cache";
  return speeds_origin(d, cached);
}

#define CUBOID_CALIBRATION_FOR(Scalar)                    \
  template pipeline::Calibration calibration_for<Scalar>( \
      const deck::Deck&, const std::vector<platform::ProcessorSpec>&, bool, std::ostream&);
CUBOID_FOR_EACH_SCALAR(CUBOID_CALIBRATION_FOR)
#undef CUBOID_CALIBRATION_FOR

}  // namespace cuboid::app
