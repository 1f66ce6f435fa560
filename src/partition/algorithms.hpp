#pragma once
// The continuous partition algorithms. Each takes positive weights (any order, already
// validated) and the cuboid, and returns the tree of cuts it made; zones_of(tree) gives one zone
// per weight, in input order, whose volumes are proportional to the weights and whose union is
// exactly the cuboid.
#include <vector>

#include "partition/box.hpp"
#include "partition/cut_tree.hpp"

namespace cuboid::partition::detail {

// 3D-NRRP (Beaumont, Eyraud-Dubois, Lambert, Algorithm 1). With three_modes = false, the
// conference version: the small processors always get a cube (falls back to a cut along the
// longest edge when that cube would not fit, which can only happen on non-cubic inputs).
CutTree nrrp3d(const std::vector<double>& weights, const Box& cuboid, bool three_modes);

// 2D NRRP on the (i,j) face; every zone spans the whole l range.
CutTree nrrp2d(const std::vector<double>& weights, const Box& cuboid);

// Column-based 2D partition, column split by dynamic programming; zones span the l range.
CutTree column(const std::vector<double>& weights, const Box& cuboid);

// Proportional slabs across the longest edge.
CutTree slab(const std::vector<double>& weights, const Box& cuboid);

// p_m x p_n x p_k processor grid (possibly leaving a few processors idle with an empty zone).
CutTree grid(const std::vector<double>& weights, const Box& cuboid);

// Indices of `weights` sorted by non-decreasing weight (ties by index, for determinism).
std::vector<int> sorted_order(const std::vector<double>& weights);

// Box with the coordinates of `b` except [lo, hi) along axis d.
inline Box with_axis(Box b, int d, double lo, double hi) {
  b.lo[d] = lo;
  b.hi[d] = hi;
  return b;
}

// Leaf of `owner` with box `b`.
inline int leaf(CutTree& t, int owner, const Box& b) {
  CutNode n;
  n.kind = CutNode::Kind::leaf;
  n.owner = owner;
  n.box = b;
  return t.add(n);
}

// Nodes lying one after the other along `axis` (in that order), joined by a balanced tree of
// splits; returns its root.
int join_along(CutTree& t, const std::vector<int>& parts, int axis);

// Cuts `outer` minus the box `inner` (which shares the lo corner of `outer`) into at most three
// disjoint boxes and appends the non-empty ones to `out`.
void append_corner_complement(const Box& outer, const Box& inner, Zone& out);

}  // namespace cuboid::partition::detail
