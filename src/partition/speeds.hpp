#pragma once
// Whether a set of relative speeds can be partitioned: the one rule the partitioner applies,
// exposed so that callers can check speeds where they come from (a deck key, the speed cache,
// per-rank factors) and blame that source instead of the partition.
#include <optional>
#include <string>
#include <vector>

namespace cuboid::partition {

// Fastest / slowest beyond which the slowest zones are thinner than the rounding error of a
// coordinate in double precision.
inline constexpr double kMaxSpeedSpread = 1e12;

// Nothing when `speeds` can be partitioned; otherwise what is wrong, in words ("speed 2 is -1:
// speeds must be finite and positive", "the sum of the speeds overflows", ...).
std::optional<std::string> speed_problem(const std::vector<double>& speeds);

}  // namespace cuboid::partition
