#pragma once
// STEPPED discretisation: the recursion of the partition algorithm redone on whole tiles, every
// cut made exact where it happens. A cut is a plane at an integer coordinate; the few tiles by
// which that plane misses the exact count move across it as one *step* (a staircase: whole rows
// plus one partial row of the layer next to the plane, or one box when a row width divides the
// count), so every sub-region of the recursion holds exactly its processors' PRECISE counts.
// Each node tries a handful of choices (rounding up or down, the step's orientation and window,
// and for nrrp3d the split point and axis near the ones the continuous rule picks) and keeps the
// one whose completed subtree has the fewest zones above four boxes, among those within a few
// per cent of the smallest total half-surface; a bounded repair then re-cuts pairs of
// neighbouring zones. Work and memory depend on the number of processors and on the boxes of
// the regions, never on M*N*K.
#include <cstdint>
#include <vector>

#include "partition/box.hpp"
#include "partition/cut_tree.hpp"

namespace cuboid::partition {

// Zone boxes of one processor are merged (merge_boxes); every zone holds exactly targets[p]
// tiles. Throws std::invalid_argument when the targets do not add up to the cuboid.
// nrrp3d decisions taken on the integer regions (three_modes = false: the conference version).
std::vector<TileZone> stepped_nrrp3d(const std::vector<std::int64_t>& targets,
                                     const TileExtent& tiles, bool three_modes);

// Follows a continuous cut tree (any algorithm): its splits, in order, with exact integer cuts.
// `tree` must partition the box [0,tiles) (continuous coordinates in tile units).
std::vector<TileZone> stepped_tree(const CutTree& tree, const std::vector<std::int64_t>& targets,
                                   const TileExtent& tiles);

// Effort by the number of processors with a non-zero count: up to the first figure each node
// compares its candidates by completing their subtrees (and a repair pass follows); up to the
// second by the candidates' own regions; beyond, each node takes the one cut the rule asks for,
// with one step (linear time, no comparison).
constexpr std::size_t kSteppedLookaheadProcessors = 64;
constexpr std::size_t kSteppedCompareProcessors = 4096;

}  // namespace cuboid::partition
