// 3D-NRRP, following Algorithm 1 of Beaumont, Eyraud-Dubois and Lambert, "Cuboid Partitioning
// for Parallel Matrix Multiplication on Heterogeneous Platforms" (extended version, section 4).
// Notes on the listing: line 18 reads [a, n] where [a, b] is meant; line 7 compares with
// v / (3 rho2), rho2 being the second aspect ratio (largest / median edge), which is what
// Lemma 3 needs.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "partition/algorithms.hpp"

namespace cuboid::partition::detail {

std::vector<int> sorted_order(const std::vector<double>& weights) {
  std::vector<int> order(weights.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return weights[a] < weights[b]; });
  return order;
}

void append_corner_complement(const Box& outer, const Box& inner, Zone& out) {
  // Peel along axis 0, then 1, then 2: what lies beyond the inner box along axis d, restricted
  // to the inner box's span on the axes already peeled.
  Box rest = outer;
  for (int d = 0; d < 3; ++d) {
    Box piece = with_axis(rest, d, inner.hi[d], outer.hi[d]);
    if (!piece.empty()) out.push_back(piece);
    rest.hi[d] = inner.hi[d];
  }
}

Peeler::Peeler(const std::vector<double>& weights, const Box& cuboid)
    : order_(sorted_order(weights)), prefix_(weights.size() + 1, 0.0) {
  for (std::size_t i = 0; i < weights.size(); ++i)
    prefix_[i + 1] = prefix_[i] + weights[std::size_t(order_[i])];
  CutNode top;
  top.box = cuboid;
  tree_.root = tree_.add(top);
  stack_.push_back({0, weights.size(), tree_.root});
}

std::size_t Peeler::first_reaching(const Range& r, double amount) const {
  // A binary search on the prefix sums of the range; prefix_[hi - 1] is the last candidate.
  const auto first = prefix_.begin() + std::ptrdiff_t(r.lo + 1);
  const auto last = prefix_.begin() + std::ptrdiff_t(r.hi);
  const auto it = std::lower_bound(first, last, prefix_[r.lo] + amount);
  return it != last ? std::size_t(it - prefix_.begin()) : r.hi;
}

void Peeler::split(const Range& r, const Box& box, int axis, std::size_t k) {
  const double share = sum(r.lo, k) / sum(r.lo, r.hi);
  const double cut =
      std::clamp(box.lo[axis] + share * box.extent(axis), box.lo[axis], box.hi[axis]);
  CutNode lo_child, hi_child;
  lo_child.box = with_axis(box, axis, box.lo[axis], cut);
  hi_child.box = with_axis(box, axis, cut, box.hi[axis]);
  const int a = tree_.add(lo_child);
  const int b = tree_.add(hi_child);
  CutNode& node = tree_.nodes[std::size_t(r.node)];
  node.kind = CutNode::Kind::split;
  node.axis = axis;
  node.cut = cut;
  node.lo = a;
  node.hi = b;
  stack_.push_back({k, r.hi, b});
  stack_.push_back({r.lo, k, a});
}

void Peeler::corner(const Range& r, const Box& inner) {
  CutNode in;
  in.box = inner;
  const int a = tree_.add(in);
  CutNode& node = tree_.nodes[std::size_t(r.node)];
  node.kind = CutNode::Kind::corner;
  node.owner = order_[r.hi - 1];
  node.inner = inner;
  node.lo = a;
  stack_.push_back({r.lo, r.hi - 1, a});
}

namespace {

int longest_axis(const Box& b) {
  int d = 0;
  for (int e = 1; e < 3; ++e)
    if (b.extent(e) > b.extent(d)) d = e;
  return d;
}

int shortest_axis(const Box& b) {
  int d = 0;
  for (int e = 1; e < 3; ++e)
    if (b.extent(e) < b.extent(d)) d = e;
  return d;
}

}  // namespace

CutTree nrrp3d(const std::vector<double>& weights, const Box& cuboid, bool three_modes) {
  Peeler peeler(weights, cuboid);
  return peeler.run([&](const Peeler::Range& t, const Box& cu) {
    std::array<double, 3> e = {cu.extent(0), cu.extent(1), cu.extent(2)};
    std::sort(e.begin(), e.end());
    const double rho1 = e[2] / e[0];
    const double rho2 = e[2] / e[1];
    const double v = peeler.sum(t.lo, t.hi);
    // Smallest k with v_1 + ... + v_{k-1} >= v / (3 rho2), the prefix and the suffix non-empty.
    const std::size_t k = peeler.first_reaching(t, v / (3.0 * rho2));
    const double small = peeler.sum(t.lo, t.hi - 1);  // all but the largest
    const bool cube_fits = (small / v) * rho1 * rho1 <= rho2;
    if (k != t.hi || (!three_modes && !cube_fits)) {
      // Mode 1: cut across the longest edge. (The two-mode variant also lands here, with all
      // the small processors on one side, when its cube would not fit.)
      peeler.split(t, cu, longest_axis(cu), k != t.hi ? k : t.hi - 1);
      return;
    }
    // The largest processor dominates: the others go into a corner part Cu1 of volume v',
    // the largest keeps Cu minus Cu1 (at most three boxes).
    const double alpha = small / v;
    const double total = cu.volume();
    Box inner = cu;
    if (cube_fits) {  // mode 2: a cube
      const double edge = std::cbrt(alpha * total);
      for (int d = 0; d < 3; ++d) inner.hi[d] = std::min(cu.hi[d], cu.lo[d] + edge);
    } else {  // mode 3: full along the shortest edge, square across the other two
      const int s = shortest_axis(cu);
      const double side = std::sqrt(alpha * total / cu.extent(s));
      for (int d = 0; d < 3; ++d)
        if (d != s) inner.hi[d] = std::min(cu.hi[d], cu.lo[d] + side);
    }
    peeler.corner(t, inner);
  });
}

}  // namespace cuboid::partition::detail
