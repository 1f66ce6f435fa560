#include "partition/cut_tree.hpp"

#include "partition/algorithms.hpp"

namespace cuboid::partition {

std::vector<Zone> zones_of(const CutTree& tree, std::size_t processors) {
  std::vector<Zone> zones(processors);
  // Every processor appears in exactly one node, so the order of the visit does not matter.
  for (const CutNode& n : tree.nodes) {
    if (n.kind == CutNode::Kind::leaf && n.owner >= 0) {
      zones[std::size_t(n.owner)].push_back(n.box);
    } else if (n.kind == CutNode::Kind::corner) {
      detail::append_corner_complement(n.box, n.inner, zones[std::size_t(n.owner)]);
    }
  }
  return zones;
}

namespace detail {

int join_along(CutTree& t, const std::vector<int>& parts, int axis) {
  // Explicit halving on index ranges: depth log2(parts).
  struct Range {
    std::size_t lo, hi;
    int node;
  };
  if (parts.size() == 1) return parts[0];
  auto box_of = [&](std::size_t lo, std::size_t hi) {
    Box b = t.nodes[std::size_t(parts[lo])].box;
    b.hi[axis] = t.nodes[std::size_t(parts[hi - 1])].box.hi[axis];
    return b;
  };
  CutNode top;
  top.box = box_of(0, parts.size());
  const int root = t.add(top);
  std::vector<Range> stack{{0, parts.size(), root}};
  while (!stack.empty()) {
    const Range r = stack.back();
    stack.pop_back();
    const std::size_t mid = r.lo + (r.hi - r.lo) / 2;
    auto child = [&](std::size_t lo, std::size_t hi) {
      if (hi - lo == 1) return parts[lo];
      CutNode n;
      n.box = box_of(lo, hi);
      const int id = t.add(n);
      stack.push_back({lo, hi, id});
      return id;
    };
    const int a = child(r.lo, mid);
    const int b = child(mid, r.hi);
    CutNode& n = t.nodes[std::size_t(r.node)];
    n.kind = CutNode::Kind::split;
    n.axis = axis;
    n.cut = t.nodes[std::size_t(a)].box.hi[axis];
    n.lo = a;
    n.hi = b;
  }
  return root;
}

}  // namespace detail

}  // namespace cuboid::partition
