#include "pipeline/prepare.hpp"

#include <string>

#include "exec/calibrate.hpp"
#include "exec/scalar.hpp"
#include "partition/speeds.hpp"
#include "pipeline/rates.hpp"
#include "util/error.hpp"

namespace cuboid::pipeline {

std::vector<double> Calibration::gflops() const {
  std::vector<double> g;
  for (const auto& s : speeds) g.push_back(s.gflops);
  return g;
}

std::optional<std::string> speeds_problem(const std::vector<platform::Speed>& speeds) {
  std::vector<double> g;
  for (const auto& s : speeds) g.push_back(s.gflops);
  return partition::speed_problem(g);
}

namespace {

template <class Scalar>
std::vector<platform::Speed> measured_speeds(const std::vector<platform::ProcessorSpec>& specs,
                                             const exec::CalibrationProblem& problem,
                                             platform::SpeedCache* cache, bool remeasure,
                                             std::ostream& progress) {
  auto unslowed = specs;
  for (auto& s : unslowed) s.slowdown = 1;
  try {
    return platform::calibrate(
        specs, std::string(to_string(scalar_type_of<Scalar>())), problem.describe(),
        [&] { return exec::measure_rates<Scalar>(unslowed, problem, 0.25); }, cache, remeasure,
        progress);
  } catch (const partition::TooLarge& e) {
    // Calibration partitions the capped cuboid before the run does: the same refusal, before
    // any time is spent measuring.
    progress << "\n";
    throw CalibrationRefused(std::to_string(problem.m) + "x" + std::to_string(problem.n) + "x" +
                                 std::to_string(problem.k),
                             e.what());
  }
}

}  // namespace

template <class Scalar>
Calibration calibrate(const std::vector<platform::ProcessorSpec>& specs,
                      const exec::PlanOptions& plan, const CalibrationShape& shape,
                      const SpeedSource& source, std::ostream& progress) {
  Calibration c;
  std::unique_ptr<platform::SpeedCache> cache;
  if (!source.given.empty()) {
    for (double s : source.given) c.speeds.push_back(platform::Speed{s, source.given_label});
  } else {
    if (!source.cache_path.empty())
      cache = std::make_unique<platform::SpeedCache>(source.cache_path);
    exec::PlanOptions options = plan;
    options.beta_is_zero = shape.beta_is_zero, options.beta_is_one = shape.beta_is_one;
    const exec::CalibrationProblem problem = exec::calibration_problem(
        shape.m, shape.n, shape.k, shape.tile, shape.algorithm, shape.discretization, options);
    c.speeds = measured_speeds<Scalar>(specs, problem, cache.get(), source.remeasure, progress);
  }
  if (const auto problem = speeds_problem(c.speeds)) {
    bool cached = false;
    for (const auto& s : c.speeds) cached = cached || s.source == "cache";
    throw SpeedsRefused(*problem, cached);
  }
  if (source.given.empty() && source.link_model) {
    c.rates = model_rates<Scalar>(specs, c.gflops(), cache.get(), source.remeasure, progress,
                                  &c.reduce_gbs);
    if (cache) cache->save();
  }
  return c;
}

template <class Scalar>
std::unique_ptr<LocalMultiply<Scalar>> make_local(const std::vector<platform::ProcessorSpec>& specs,
                                                  const Calibration& calibration,
                                                  LocalOptions options) {
  options.rates = calibration.rates;
  options.reduce_gbs = calibration.reduce_gbs;
  return std::make_unique<LocalMultiply<Scalar>>(specs, calibration.gflops(), std::move(options));
}

#define CUBOID_PREPARE(Scalar)                                                              \
  template Calibration calibrate<Scalar>(const std::vector<platform::ProcessorSpec>&,       \
                                         const exec::PlanOptions&, const CalibrationShape&, \
                                         const SpeedSource&, std::ostream&);                \
  template std::unique_ptr<LocalMultiply<Scalar>> make_local<Scalar>(                       \
      const std::vector<platform::ProcessorSpec>&, const Calibration&, LocalOptions);
CUBOID_FOR_EACH_SCALAR(CUBOID_PREPARE)

}  // namespace cuboid::pipeline
