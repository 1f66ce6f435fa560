#include "app/setup.hpp"

#include "partition/speeds.hpp"
#include "util/error.hpp"
#include "util/host_memory.hpp"

namespace cuboid::app {

std::vector<platform::ProcessorSpec> processors_of(const deck::Deck& d) {
  const bool given = !d.platform.processors.empty();
  auto names = given ? d.platform.processors : platform::default_processor_names();
  auto specs = platform::resolve_processors(names, d.at("platform.processors"));
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
  using platform::ProcessorKind;
  exec::PlanOptions o;
  for (const auto& p : specs) {
    const bool device = p.kind == ProcessorKind::device;
    o.min_panels.push_back(device ? 4 : 1);
    if (p.kind == ProcessorKind::host) {
      o.budget_elements.push_back(0);
      continue;
    }
    double bytes = d.platform.memory_budget_mib * 1024.0 * 1024.0;
    if (bytes <= 0) bytes = device ? 0.8 * double(p.memory_bytes) : 512.0 * 1024 * 1024;
    if (device && p.memory_bytes > 0 && bytes > double(p.memory_bytes))
      throw Error(d.location("platform.memory_budget_mib") + ": platform.memory_budget_mib: " +
                  human_bytes(bytes) + " exceeds the free memory of " + p.name + " (" +
                  human_bytes(double(p.memory_bytes)) + ")");
    o.budget_elements.push_back(std::int64_t(bytes / double(element_bytes)));
  }
  return o;
}

template <class Scalar>
std::vector<std::unique_ptr<exec::Worker<Scalar>>> workers_for(
    const std::vector<platform::ProcessorSpec>& specs) {
  std::vector<std::unique_ptr<exec::Worker<Scalar>>> w;
  for (const auto& s : specs) w.push_back(exec::make_worker<Scalar>(s));
  return w;
}

template <class Scalar>
std::vector<platform::Speed> speeds_for(const deck::Deck& d,
                                        const std::vector<platform::ProcessorSpec>& specs,
                                        std::vector<std::unique_ptr<exec::Worker<Scalar>>>& workers,
                                        bool fresh, std::ostream& progress) {
  std::vector<platform::Speed> speeds;
  if (!d.platform.measure_speeds) {
    for (double s : d.platform.speeds) speeds.push_back(platform::Speed{s, "deck"});
    return speeds;
  }
  std::vector<platform::Measure> measure;
  for (auto& w : workers) {
    exec::Worker<Scalar>* raw = w.get();
    measure.emplace_back([raw, &d](std::int64_t s, double t) {
      // Timing an s^3 GEMM holds A, B and C of s x s in the processor's memory.
      const double need = 3.0 * double(s) * double(s) * sizeof(Scalar);
      const auto& spec = raw->spec();
      const double have = spec.kind == platform::ProcessorKind::device
                              ? double(spec.memory_bytes)
                              : double(host_memory_available());
      if (have > 0 && need > 0.9 * have)
        throw Error(d.at("problem.tile") + ": calibrating " + spec.name + " times a " +
                    std::to_string(s) + "^3 GEMM (the tile, at least 512, at most the problem), " +
                    "which needs " + human_bytes(need) + " but only " + human_bytes(have) +
                    " is available: use a smaller problem.tile or give platform.speeds");
      return raw->measure_gemm_rate(s, t);
    });
  }
  const auto& p = d.problem;
  const std::int64_t size = platform::calibration_size(p.tile, p.m, p.n, p.k);
  std::unique_ptr<platform::SpeedCache> cache;
  if (d.platform.use_speed_cache)
    cache = std::make_unique<platform::SpeedCache>(platform::default_speed_cache_path());
  return platform::calibrate(specs, measure, deck::to_string(p.precision), size, cache.get(), fresh,
                             progress);
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

template std::vector<std::unique_ptr<exec::Worker<double>>> workers_for<double>(
    const std::vector<platform::ProcessorSpec>&);
template std::vector<std::unique_ptr<exec::Worker<float>>> workers_for<float>(
    const std::vector<platform::ProcessorSpec>&);
template std::vector<platform::Speed> speeds_for<double>(
    const deck::Deck&, const std::vector<platform::ProcessorSpec>&,
    std::vector<std::unique_ptr<exec::Worker<double>>>&, bool, std::ostream&);
template std::vector<platform::Speed> speeds_for<float>(
    const deck::Deck&, const std::vector<platform::ProcessorSpec>&,
    std::vector<std::unique_ptr<exec::Worker<float>>>&, bool, std::ostream&);

}  // namespace cuboid::app
