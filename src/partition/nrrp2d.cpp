// 2D NRRP on the C face (i,j); the l range is never split, so every zone spans [0,K).
//
// This is the recursive scheme of Beaumont, Eyraud-Dubois and Lambert (IPDPS 2016) in the simple
// form that 3D-NRRP generalises: with rho = long side / short side of the
// current rectangle and s its area, if a prefix of the sorted areas reaches s / (3 rho), cut
// across the long side; otherwise the largest processor dominates and the others get a square
// in a corner (it always fits: its area is below short^2 / 3). Rectangles keep rho <= max(3,
// rho0), so a rectangular zone has half-perimeter <= 2/sqrt(3) * 2 sqrt(s) and an L-shaped one
// (rectangle minus a square of at most 1/(3 rho) of it) <= sqrt(3/2) * 2 sqrt(s).
#include <algorithm>
#include <cmath>

#include "partition/algorithms.hpp"

namespace cuboid::partition::detail {
namespace {

struct Task {
  std::size_t lo, hi;
  int node;
};

}  // namespace

CutTree nrrp2d(const std::vector<double>& weights, const Box& cuboid) {
  const std::size_t n = weights.size();
  CutTree tree;
  const std::vector<int> order = sorted_order(weights);
  std::vector<double> prefix(n + 1, 0.0);
  for (std::size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + weights[order[i]];

  CutNode top;
  top.box = cuboid;
  tree.root = tree.add(top);
  std::vector<Task> stack{{0, n, tree.root}};
  while (!stack.empty()) {
    const Task t = stack.back();
    stack.pop_back();
    const Box r = tree.nodes[std::size_t(t.node)].box;
    if (t.hi - t.lo == 1) {
      CutNode& leaf = tree.nodes[std::size_t(t.node)];
      leaf.kind = CutNode::Kind::leaf;
      leaf.owner = order[t.lo];
      continue;
    }
    const int long_axis = r.extent(1) > r.extent(0) ? 1 : 0;
    const int short_axis = 1 - long_axis;
    const double rho = r.extent(long_axis) / r.extent(short_axis);
    const double s = prefix[t.hi] - prefix[t.lo];
    const auto first = prefix.begin() + std::ptrdiff_t(t.lo + 1);
    const auto last = prefix.begin() + std::ptrdiff_t(t.hi);
    const auto it = std::lower_bound(first, last, prefix[t.lo] + s / (3.0 * rho));
    if (it != last) {
      const std::size_t k = std::size_t(it - prefix.begin());
      const double share = (prefix[k] - prefix[t.lo]) / s;
      const double cut = std::clamp(r.lo[long_axis] + share * r.extent(long_axis), r.lo[long_axis],
                                    r.hi[long_axis]);
      CutNode lo_child, hi_child;
      lo_child.box = with_axis(r, long_axis, r.lo[long_axis], cut);
      hi_child.box = with_axis(r, long_axis, cut, r.hi[long_axis]);
      const int a = tree.add(lo_child);
      const int b = tree.add(hi_child);
      CutNode& node = tree.nodes[std::size_t(t.node)];
      node.kind = CutNode::Kind::split;
      node.axis = long_axis;
      node.cut = cut;
      node.lo = a;
      node.hi = b;
      stack.push_back({k, t.hi, b});
      stack.push_back({t.lo, k, a});
      continue;
    }
    const double alpha = (prefix[t.hi - 1] - prefix[t.lo]) / s;
    const double side = std::sqrt(alpha * r.extent(0) * r.extent(1));
    Box inner = r;
    for (int d = 0; d < 2; ++d) inner.hi[d] = std::min(r.hi[d], r.lo[d] + side);
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
