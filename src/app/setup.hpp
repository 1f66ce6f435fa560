#pragma once
// Steps shared by `run` and `calibrate`: from a deck to processors, workers and speeds.
#include <iosfwd>
#include <memory>
#include <vector>

#include "deck/deck.hpp"
#include "exec/plan.hpp"
#include "exec/scalar.hpp"
#include "exec/worker.hpp"
#include "pipeline/local_multiply.hpp"
#include "pipeline/prepare.hpp"
#include "platform/calibration.hpp"
#include "util/error.hpp"

namespace cuboid::app {

// The deck key of a setting a computing layer refused, by its id (pipeline::setting,
// mpi::setting); an id that is no known setting comes back as it is.
std::string deck_key(const std::string& id);

std::vector<platform::ProcessorSpec> processors_of(const deck::Deck& d);

// Calls f with a value (zero) of the deck's scalar type: the one switch from the deck's precision
// to the templates.
template <class F>
decltype(auto) with_scalar(const deck::Deck& d, F&& f) {
#if CUBOID_DOUBLE_ONLY
  if (d.problem.precision != deck::Precision::float64)
    throw Error(d.at("problem.precision") +
                ": this build computes double precision only (configured with "
                "CUBOID_PRECISIONS=double, as scripts/quickstart does); scripts/check or `cmake "
                "--preset default` builds every precision");
  return f(double{});
#else
  switch (d.problem.precision) {
    case deck::Precision::float32:
      return f(float{});
    case deck::Precision::complex64:
      return f(Kokkos::complex<float>{});
    case deck::Precision::complex128:
      return f(Kokkos::complex<double>{});
    case deck::Precision::float64:
      break;
  }
  return f(double{});
#endif
}

// What the planner needs to know of each processor: its memory budget (devices: 80 % of free
// memory, staged: 512 MiB, unless platform.memory_budget_mib says otherwise; host: none, it
// works in place) and the fewest k-panels per piece (devices and staged: 4, so that copies
// overlap GEMMs).
// The beta flags are left for the caller.
exec::PlanOptions plan_options_for(const deck::Deck& d,
                                   const std::vector<platform::ProcessorSpec>& specs,
                                   std::size_t element_bytes);

// The local multiply's settings from the deck: the partition (a fixed one; "auto" is resolved
// by the caller), the schedule, and plan_options_for().
pipeline::LocalOptions local_options_for(const deck::Deck& d,
                                         const std::vector<platform::ProcessorSpec>& specs,
                                         std::size_t element_bytes);

// Speeds from the deck, or measured (through the cache unless `fresh`), checked, and under
// platform.speed_model = "flops+link" the model's rates: the pipeline's one preparation
// (pipeline::calibrate), its errors named by the deck's file, line and key.
template <class Scalar>
pipeline::Calibration calibration_for(const deck::Deck& d,
                                      const std::vector<platform::ProcessorSpec>& specs, bool fresh,
                                      std::ostream& progress);

// Where the speeds came from, for messages about them: "deck.toml:7:10: platform.speeds", the
// speed cache file, or measured speeds.
std::string speeds_origin(const deck::Deck& d, bool from_cache);
std::string speeds_origin(const deck::Deck& d, const std::vector<platform::Speed>& speeds);

}  // namespace cuboid::app
