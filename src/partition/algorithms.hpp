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

// The recursion the NRRP variants share: the weights sorted, and a stack of ranges of them, each
// with the node of the box it fills. A range of one weight makes its node a leaf; any other is
// handed to the variant's rule, which either splits the box across an axis or gives all but the
// largest weight a corner of it.
class Peeler {
 public:
  struct Range {
    std::size_t lo, hi;  // [lo, hi) of the sorted weights
    int node;            // the tree node of this range, its box already set
  };
  Peeler(const std::vector<double>& weights, const Box& cuboid);

  // Runs rule(range, box) on every range of two or more weights; returns the finished tree.
  template <class Rule>
  CutTree run(Rule rule) {
    while (!stack_.empty()) {
      const Range r = stack_.back();
      stack_.pop_back();
      const Box box = tree_.nodes[std::size_t(r.node)].box;
      if (r.hi - r.lo == 1) {
        CutNode& leaf = tree_.nodes[std::size_t(r.node)];
        leaf.kind = CutNode::Kind::leaf;
        leaf.owner = order_[r.lo];
        continue;
      }
      rule(r, box);
    }
    return std::move(tree_);
  }

  // The sum of the sorted weights [lo, hi).
  double sum(std::size_t lo, std::size_t hi) const { return prefix_[hi] - prefix_[lo]; }
  // The smallest k in (lo, hi) with sum(lo, k) >= amount (both sides non-empty), or hi.
  std::size_t first_reaching(const Range& r, double amount) const;
  // Cuts `box` across `axis` in proportion to the weights [lo, k) and [k, hi), below and above.
  void split(const Range& r, const Box& box, int axis, std::size_t k);
  // All weights but the largest into `inner` (a box sharing box.lo); the largest keeps the rest.
  void corner(const Range& r, const Box& inner);

 private:
  std::vector<int> order_;
  std::vector<double> prefix_;  // prefix_[i]: the sum of the i smallest weights
  CutTree tree_;
  // Explicit: with geometric weights every step peels one processor, so a recursion would be
  // as deep as p.
  std::vector<Range> stack_;
};

// Cuts `outer` minus the box `inner` (which shares the lo corner of `outer`) into at most three
// disjoint boxes and appends the non-empty ones to `out`.
void append_corner_complement(const Box& outer, const Box& inner, Zone& out);

}  // namespace cuboid::partition::detail
