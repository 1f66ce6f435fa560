#pragma once
// Internals of discretize(), exposed for tests and tools.
#include <cstdint>
#include <vector>

#include "partition/geometry.hpp"
#include "partition/strategy.hpp"

namespace cuboid::partition {

// The PRECISE task counts: n_1 = round(s_1 T),
// n_k = round(T sum_{i<=k} s_i) - sum_{i<k} n_i, with s the normalised weights and rounding half
// up. They sum to `total` exactly. Weights may be zero (that processor gets no task).
std::vector<std::int64_t> exact_counts(const std::vector<double>& weights, std::int64_t total);

// PRECISE refuses (TooLarge) cuboids whose cut faces hold more tiles than this: each costs about
// 100 bytes and a microsecond (512^3 tiles among 40 processors hand out about 4 million, 4 s),
// and a run partitions more than once (calibration, plan).
constexpr double kPreciseMaxBoundaryTiles = 1e6;

// True when every box spans the whole l range [0, k).
bool spans_l(const std::vector<Zone>& zones, double k);

// discretize() without input validation. With keep_l_whole (the 2D algorithms; the zones must
// span l), PRECISE works on the C face with C tiles as units, so zones keep spanning [0,K) and
// the exact counts are in C tiles (each worth K tasks); otherwise units are tile tasks.
std::vector<TileZone> discretize_zones(Discretization d, const std::vector<Zone>& zones,
                                       const std::vector<double>& speeds, const TileExtent& tiles,
                                       bool keep_l_whole);

}  // namespace cuboid::partition
