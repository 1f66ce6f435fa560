#pragma once
// The one preparation of a multiply, whoever calls it (the command line, the rank runner, the
// library, p?gemm_): the processors' speeds -- given, cached or measured together on a capped
// copy of the problem -- checked once, the flops+link model's rates beside measured speeds,
// and a LocalMultiply made of them. Errors are KeyedError keyed by the pipeline's setting ids
// (pipeline/local_multiply.hpp); each caller attaches the names its users know (deck keys and
// locations, option names).
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "exec/model.hpp"
#include "exec/plan.hpp"
#include "partition/strategy.hpp"
#include "pipeline/local_multiply.hpp"
#include "platform/calibration.hpp"
#include "platform/processor.hpp"
#include "util/error.hpp"

namespace cuboid::pipeline {

// Where the speeds come from.
struct SpeedSource {
  std::vector<double> given;          // non-empty: these speeds, nothing measured, no rates
  std::string given_label = "given";  // Speed::source of given speeds ("deck" for a deck)
  std::string cache_path;             // measured speeds are cached there; empty: no cache
  bool remeasure = false;             // measure even when the cache has them
  bool link_model = true;             // with measured speeds, the flops+link model's rates
};

// What measured speeds are timed on: the problem (each edge capped by the calibration) and how
// it will be cut.
struct CalibrationShape {
  std::int64_t m = 0, n = 0, k = 0, tile = 0;
  partition::Algorithm algorithm = partition::Algorithm::nrrp3d;
  partition::Discretization discretization = partition::Discretization::precise;
  bool beta_is_zero = false, beta_is_one = false;
};

// The speeds and, under the flops+link model, the rates: what a LocalMultiply is made of.
struct Calibration {
  std::vector<platform::Speed> speeds;
  std::vector<exec::ProcessorRate> rates;  // empty: the "flops" model
  double reduce_gbs = 0;
  std::vector<double> gflops() const;
  const char* speed_model() const { return rates.empty() ? "flops" : "flops+link"; }
};

// The one speed check: why these speeds cannot be partitioned, or nothing.
std::optional<std::string> speeds_problem(const std::vector<platform::Speed>& speeds);

// Speeds that cannot be partitioned, keyed setting::speeds; `from_cache` when they were read
// from the speed cache, which the caller then names (deleting it is the remedy).
struct SpeedsRefused : KeyedError {
  SpeedsRefused(const std::string& message, bool cached)
      : KeyedError(setting::speeds, message), from_cache(cached) {}
  bool from_cache;
};

// The partition of the calibration's problem refused its tiles (keyed setting::discretization):
// the caller names the discretisation and the tile setting.
struct CalibrationRefused : KeyedError {
  CalibrationRefused(const std::string& on, const std::string& reason)
      : KeyedError(setting::discretization, "calibration on " + on + ": " + reason),
        problem(on),
        why(reason) {}
  std::string problem;  // "MxNxK", each edge capped
  std::string why;
};

// Speeds given, cached or measured (all processors together, their slowdown left out: a
// slowdown is a surprise the partition must not know), checked (SpeedsRefused), and the
// model's rates when measured. `plan` is the run's (plan_options_for); `progress` gets a line per
// measurement.
template <class Scalar>
Calibration calibrate(const std::vector<platform::ProcessorSpec>& specs,
                      const exec::PlanOptions& plan, const CalibrationShape& shape,
                      const SpeedSource& source, std::ostream& progress);

// A LocalMultiply of `specs` at the calibration's speeds, with its rates and reduction rate.
template <class Scalar>
std::unique_ptr<LocalMultiply<Scalar>> make_local(const std::vector<platform::ProcessorSpec>& specs,
                                                  const Calibration& calibration,
                                                  LocalOptions options);

}  // namespace cuboid::pipeline
