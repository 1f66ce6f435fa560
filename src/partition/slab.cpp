// Proportional slabs across the longest edge, in input order: the 1D baseline. Every zone is a
// box with two full faces, so its Hs grows like the cuboid's face whatever its volume.
#include <algorithm>

#include "partition/algorithms.hpp"

namespace cuboid::partition::detail {

CutTree slab(const std::vector<double>& weights, const Box& cuboid) {
  int d = 0;
  for (int e = 1; e < 3; ++e)
    if (cuboid.extent(e) > cuboid.extent(d)) d = e;
  double total = 0.0;
  for (double w : weights) total += w;
  CutTree tree;
  std::vector<int> parts;
  double acc = 0.0;
  double start = cuboid.lo[d];
  for (std::size_t p = 0; p < weights.size(); ++p) {
    acc += weights[p];
    // The last cut is the cuboid's own face, so rounding never leaves a sliver uncovered.
    const double end = p + 1 == weights.size()
                           ? cuboid.hi[d]
                           : std::min(cuboid.hi[d], cuboid.lo[d] + acc / total * cuboid.extent(d));
    parts.push_back(leaf(tree, int(p), with_axis(cuboid, d, start, end)));
    start = end;
  }
  tree.root = join_along(tree, parts, d);
  return tree;
}

}  // namespace cuboid::partition::detail
