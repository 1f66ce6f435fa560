#pragma once
// The continuous partition algorithms. Each takes positive weights (any order, already
// validated) and the cuboid, and returns one zone per weight, in input order, whose volumes are
// proportional to the weights and whose union is exactly the cuboid.
#include <vector>

#include "partition/box.hpp"

namespace cuboid::partition::detail {

// 3D-NRRP (Beaumont, Eyraud-Dubois, Lambert, Algorithm 1). With three_modes = false, the
// conference version: the small processors always get a cube (falls back to a cut along the
// longest edge when that cube would not fit, which can only happen on non-cubic inputs).
std::vector<Zone> nrrp3d(const std::vector<double>& weights, const Box& cuboid, bool three_modes);

// 2D NRRP on the (i,j) face; every zone spans the whole l range.
std::vector<Zone> nrrp2d(const std::vector<double>& weights, const Box& cuboid);

// Column-based 2D partition, column split by dynamic programming; zones span the l range.
std::vector<Zone> column(const std::vector<double>& weights, const Box& cuboid);

// Proportional slabs across the longest edge.
std::vector<Zone> slab(const std::vector<double>& weights, const Box& cuboid);

// p_m x p_n x p_k processor grid (possibly leaving a few processors idle with an empty zone).
std::vector<Zone> grid(const std::vector<double>& weights, const Box& cuboid);

// Indices of `weights` sorted by non-decreasing weight (ties by index, for determinism).
std::vector<int> sorted_order(const std::vector<double>& weights);

// Box with the coordinates of `b` except [lo, hi) along axis d.
inline Box with_axis(Box b, int d, double lo, double hi) {
  b.lo[d] = lo;
  b.hi[d] = hi;
  return b;
}

// Cuts `outer` minus the box `inner` (which shares the lo corner of `outer`) into at most three
// disjoint boxes and appends the non-empty ones to `out`.
void append_corner_complement(const Box& outer, const Box& inner, Zone& out);

}  // namespace cuboid::partition::detail
