#pragma once
// The recursion behind a continuous partition, kept so that a discretisation can redo it on
// whole tiles: every algorithm builds its zones as a tree of axis-parallel cuts.
#include <cstddef>
#include <vector>

#include "partition/box.hpp"

namespace cuboid::partition {

struct CutNode {
  enum class Kind { leaf, split, corner };
  Kind kind = Kind::leaf;
  Box box;         // the region of this node
  int owner = -1;  // leaf: the processor; corner: the processor that keeps box minus inner
  int axis = -1;   // split: cut perpendicular to this axis ...
  double cut = 0;  // ... at this coordinate
  int lo = -1;     // split: the child below the cut; corner: the subtree inside `inner`
  int hi = -1;     // split: the child above the cut
  Box inner;       // corner: a box sharing box.lo, holding the other processors
};

struct CutTree {
  std::vector<CutNode> nodes;
  int root = -1;

  int add(const CutNode& n) {
    nodes.push_back(n);
    return int(nodes.size()) - 1;
  }
};

// One zone per processor: leaf boxes, and for a corner node its box minus `inner` as at most
// three boxes (peeled along axis 0, then 1, then 2).
std::vector<Zone> zones_of(const CutTree& tree, std::size_t processors);

}  // namespace cuboid::partition
