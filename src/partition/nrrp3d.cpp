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

namespace {

struct Task {
  std::size_t lo, hi;  // range [lo, hi) of the sorted weights
  int node;            // the tree node of this range, its box already set
};

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
  const std::size_t n = weights.size();
  CutTree tree;
  const std::vector<int> order = sorted_order(weights);
  // prefix[i] = sum of the i smallest weights; sub-ranges are contiguous in sorted order.
  std::vector<double> prefix(n + 1, 0.0);
  for (std::size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + weights[order[i]];

  CutNode top;
  top.box = cuboid;
  tree.root = tree.add(top);
  // Explicit stack: with geometric speeds every step peels one processor, so the recursion
  // would be as deep as p.
  std::vector<Task> stack{{0, n, tree.root}};
  while (!stack.empty()) {
    const Task t = stack.back();
    stack.pop_back();
    const Box cu = tree.nodes[std::size_t(t.node)].box;
    if (t.hi - t.lo == 1) {
      CutNode& leaf = tree.nodes[std::size_t(t.node)];
      leaf.kind = CutNode::Kind::leaf;
      leaf.owner = order[t.lo];
      continue;
    }
    std::array<double, 3> e = {cu.extent(0), cu.extent(1), cu.extent(2)};
    std::sort(e.begin(), e.end());
    const double rho1 = e[2] / e[0];
    const double rho2 = e[2] / e[1];
    const double v = prefix[t.hi] - prefix[t.lo];
    const double threshold = v / (3.0 * rho2);

    // Smallest k with v_1 + ... + v_{k-1} >= threshold, the prefix non-empty and the suffix
    // non-empty: a binary search on the prefix sums of the range.
    const auto first = prefix.begin() + std::ptrdiff_t(t.lo + 1);
    const auto last = prefix.begin() + std::ptrdiff_t(t.hi);  // prefix[t.hi - 1] is the last
    const auto it = std::lower_bound(first, last, prefix[t.lo] + threshold);
    const double small = prefix[t.hi - 1] - prefix[t.lo];  // all but the largest
    const bool cube_fits = (small / v) * rho1 * rho1 <= rho2;

    if (it != last || (!three_modes && !cube_fits)) {
      // Mode 1: cut across the longest edge. (The two-mode variant also lands here, with all
      // the small processors on one side, when its cube would not fit.)
      const std::size_t k = it != last ? std::size_t(it - prefix.begin()) : t.hi - 1;
      const double share = (prefix[k] - prefix[t.lo]) / v;
      const int d = longest_axis(cu);
      double cut = cu.lo[d] + share * cu.extent(d);
      cut = std::clamp(cut, cu.lo[d], cu.hi[d]);
      CutNode lo_child, hi_child;
      lo_child.box = with_axis(cu, d, cu.lo[d], cut);
      hi_child.box = with_axis(cu, d, cut, cu.hi[d]);
      const int a = tree.add(lo_child);
      const int b = tree.add(hi_child);
      CutNode& node = tree.nodes[std::size_t(t.node)];
      node.kind = CutNode::Kind::split;
      node.axis = d;
      node.cut = cut;
      node.lo = a;
      node.hi = b;
      stack.push_back({k, t.hi, b});
      stack.push_back({t.lo, k, a});
      continue;
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
    CutNode in;
    in.box = inner;
    const int a = tree.add(in);
    CutNode& node = tree.nodes[std::size_t(t.node)];
    node.kind = CutNode::Kind::corner;
    node.owner = order[t.hi - 1];
    node.inner = inner;
    node.lo = a;
    stack.push_back({t.lo, t.hi - 1, a});
  }
  return tree;
}

}  // namespace cuboid::partition::detail
