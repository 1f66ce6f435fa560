#pragma once
// Processor speeds measured the way runs use them: through the engine, all processors at once,
// on the steps a plan of the run's problem gives them (copies, pipelining and the competition
// for cores and memory bandwidth included).
#include <cstdint>
#include <string>
#include <vector>

#include "exec/plan.hpp"
#include "partition/strategy.hpp"
#include "platform/processor.hpp"

namespace cuboid::exec {

struct CalibrationProblem {
  std::int64_t m = 0, n = 0, k = 0, tile = 0;
  partition::Algorithm algorithm = partition::Algorithm::nrrp3d;
  partition::Discretization discretization = partition::Discretization::precise;
  PlanOptions options;  // the run's budgets and beta flags
  // A short text naming all of the above, for the speed cache key.
  std::string describe() const;
};

// The run's problem with each edge capped at 2048 (at most 17 GFLOP, a fraction of which is
// timed), every processor's pieces cut into at least 4 k-panels so that the timed part can
// stop after any step; the tile halved (not below 64) while the capped cuboid has fewer than 8
// tile tasks to share.
CalibrationProblem calibration_problem(std::int64_t m, std::int64_t n, std::int64_t k,
                                       std::int64_t tile, partition::Algorithm algorithm,
                                       partition::Discretization discretization,
                                       const PlanOptions& options);

// GFLOP/s of each processor: a fresh set of workers runs the problem partitioned with equal
// speeds, first a few steps each (set-up costs, and a first estimate of the rates), then about
// `seconds` of steps each, all processors together, three times; a processor's rate is the
// median over those runs of its flops over the time until its last block was back in host
// memory.
template <class Scalar>
std::vector<double> measure_rates(const std::vector<platform::ProcessorSpec>& specs,
                                  const CalibrationProblem& problem, double seconds);

// The first steps of each processor of `plan` (at least one, and then until their flops reach
// `flops[q]`); the last step kept drains its C block. Beta pre-pass dropped.
Plan truncate_plan(const Plan& plan, const std::vector<double>& flops);

}  // namespace cuboid::exec
