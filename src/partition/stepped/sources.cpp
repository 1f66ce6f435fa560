// The two sources of STEPPED's decisions (see sources.hpp): the nrrp3d rule applied to the
// integer region of a node, and a continuous cut tree followed node by node.
#include "partition/stepped/sources.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace cuboid::partition::stepped_detail {

Task NrrpSource::task(int lo, int hi) const {
  Task t;
  t.lo = lo;
  t.hi = hi;
  t.target = prefix_[std::size_t(hi)] - prefix_[std::size_t(lo)];
  if (hi - lo == 1) t.proc = order_[std::size_t(lo)];
  return t;
}

void NrrpSource::decide(const Task& t, const TileBox& bb, Effort effort, std::vector<Split>& splits,
                        std::vector<Corner>& corners) const {
  std::array<double, 3> e{};
  for (int d = 0; d < 3; ++d) e[d] = double(bb.extent(d));
  std::array<double, 3> s = e;
  std::sort(s.begin(), s.end());
  const double rho1 = s[2] / s[0], rho2 = s[2] / s[1];
  const double v = double(t.target);
  const double threshold = v / (3.0 * rho2);
  const auto first = prefix_.begin() + t.lo + 1, last = prefix_.begin() + t.hi;
  const auto it =
      std::lower_bound(first, last, prefix_[std::size_t(t.lo)] + I(std::ceil(threshold)));
  int longest = 0;
  for (int d = 1; d < 3; ++d)
    if (e[d] > e[longest]) longest = d;
  if (it != last) {
    const int k0 = int(it - prefix_.begin());
    // Fixed arrays: this runs once a node, a million times with a million processors.
    std::array<int, 2> ks{k0, 0};
    std::array<int, 3> axes{longest, 0, 0};
    int nk = 1, na = 1;
    if (effort == Effort::wide) {
      // The next split point too, when both sides still hold at least the rule's threshold
      // (what its guarantee needs; the point before it falls short by definition): it often
      // lands on whole layers (eight equal processors on a cube: halves, then eight cubes).
      if (k0 + 1 < t.hi &&
          double(prefix_[std::size_t(t.hi)] - prefix_[std::size_t(k0 + 1)]) >= threshold)
        ks[std::size_t(nk++)] = k0 + 1;
      for (int d = 0; d < 3; ++d)
        if (d != longest && e[d] >= 0.75 * e[longest]) axes[std::size_t(na++)] = d;
    }
    for (int i = 0; i < nk; ++i)
      for (int j = 0; j < na; ++j) {
        const int k = ks[std::size_t(i)];
        splits.push_back({task(t.lo, k), task(k, t.hi), axes[std::size_t(j)]});
      }
    return;
  }
  // The largest dominates: the others in a corner box (a cube, or with the shortest edge
  // full when the cube would not fit), the largest keeps the rest.
  const double small = double(prefix_[std::size_t(t.hi - 1)] - prefix_[std::size_t(t.lo)]);
  const double alpha = small / v;
  std::array<double, 3> ideal{};
  const bool cube_fits = alpha * rho1 * rho1 <= rho2;
  if (cube_fits || !three_modes_) {
    for (int d = 0; d < 3; ++d) ideal[d] = std::min(e[d], std::cbrt(small));
  } else {
    int shortest = 0;
    for (int d = 1; d < 3; ++d)
      if (e[d] < e[shortest]) shortest = d;
    const double side = std::sqrt(small / e[shortest]);
    for (int d = 0; d < 3; ++d) ideal[d] = d == shortest ? e[d] : std::min(e[d], side);
  }
  corners.push_back({task(t.lo, t.hi - 1), task(t.hi - 1, t.hi), ideal});
  if (effort != Effort::minimal)
    splits.push_back({task(t.lo, t.hi - 1), task(t.hi - 1, t.hi), longest});
}

TreeSource::TreeSource(const CutTree& tree, const std::vector<I>& targets) : tree_(tree) {
  target_.assign(tree.nodes.size(), 0);
  // Post-order sums of the processors' targets (explicit stack: trees can be deep).
  std::vector<std::pair<int, bool>> stack{{tree.root, false}};
  while (!stack.empty()) {
    auto [id, done] = stack.back();
    stack.pop_back();
    const CutNode& n = tree.nodes[std::size_t(id)];
    if (n.kind == CutNode::Kind::leaf) {
      target_[std::size_t(id)] = n.owner >= 0 ? targets[std::size_t(n.owner)] : 0;
      continue;
    }
    if (!done) {
      stack.push_back({id, true});
      stack.push_back({n.lo, false});
      if (n.kind == CutNode::Kind::split) stack.push_back({n.hi, false});
      continue;
    }
    target_[std::size_t(id)] = n.kind == CutNode::Kind::split
                                   ? target_[std::size_t(n.lo)] + target_[std::size_t(n.hi)]
                                   : target_[std::size_t(n.lo)] + targets[std::size_t(n.owner)];
  }
  dominant_target_ = targets;
}

Task TreeSource::task(int node) const {
  Task t;
  t.node = node;
  t.target = target_[std::size_t(node)];
  const CutNode& n = tree_.nodes[std::size_t(node)];
  if (n.kind == CutNode::Kind::leaf) t.proc = n.owner;
  return t;
}

void TreeSource::decide(const Task& t, const TileBox& bb, Effort, std::vector<Split>& splits,
                        std::vector<Corner>& corners) const {
  const CutNode& n = tree_.nodes[std::size_t(t.node)];
  if (n.kind == CutNode::Kind::split) {
    splits.push_back({task(n.lo), task(n.hi), n.axis});
    return;
  }
  Task dom;
  dom.proc = n.owner;
  dom.target = dominant_target_[std::size_t(n.owner)];
  // The carved box scaled to the inner processors' count; edges that span the whole box stay
  // whole.
  std::array<double, 3> ideal{};
  double fixed = 1.0, free_volume = 1.0;
  int free_axes = 0;
  for (int d = 0; d < 3; ++d) {
    const bool full = n.inner.hi[d] >= n.box.hi[d] && n.inner.lo[d] <= n.box.lo[d];
    if (full) {
      ideal[d] = double(bb.extent(d));
      fixed *= ideal[d];
    } else {
      ideal[d] = n.inner.extent(d);
      free_volume *= ideal[d];
      ++free_axes;
    }
  }
  const double want = double(target_[std::size_t(n.lo)]);
  if (free_axes > 0 && free_volume > 0) {
    const double scale = std::pow(want / fixed / free_volume, 1.0 / free_axes);
    for (int d = 0; d < 3; ++d)
      if (ideal[d] != double(bb.extent(d)) || free_axes == 3) ideal[d] *= scale;
  }
  corners.push_back({task(n.lo), dom, ideal});
}

}  // namespace cuboid::partition::stepped_detail
