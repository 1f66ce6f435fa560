#pragma once
// Region algebra for STEPPED: a region is a short list of disjoint integer boxes, and every
// operation here costs in proportion to its boxes, never to its tiles.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "partition/box.hpp"

namespace cuboid::partition::stepped_detail {

using I = std::int64_t;
using Region = std::vector<TileBox>;

// Inline: called for every box of every region.
inline I cells(const TileBox& b) { return b.empty() ? 0 : b.extent(0) * b.extent(1) * b.extent(2); }

inline TileBox clip(TileBox b, const TileBox& w) {
  for (int d = 0; d < 3; ++d) {
    b.lo[d] = std::max(b.lo[d], w.lo[d]);
    b.hi[d] = std::min(b.hi[d], w.hi[d]);
  }
  return b;
}

I cells(const Region& r);

// The bounding box of the non-empty boxes of `r`.
TileBox bounds(const Region& r);

// Tiles of `r` with x_d < c.
I count_below(const Region& r, int d, I c);

// The largest c in [lo, hi] with count_below(r, d, c) <= want, r within [lo, hi) along d.
I last_cut(const Region& r, int d, I lo, I hi, I want);

// The boxes of `r` split by the plane x_d == c, appended to `below` and `above`.
void cut(const Region& r, int d, I c, Region& below, Region& above);

// The parts of the boxes of `r` inside `w`.
Region inside(const Region& r, const TileBox& w);

// Up to this many boxes, compact() joins pairs to a fixed point (as merge_boxes would).
constexpr std::size_t kFewBoxes = 12;

// Joins boxes that share a whole face: up to kFewBoxes to a fixed point, beyond that one round
// per axis (sort, then join runs), so that short regions stay short between cuts. Final zones go
// through merge_boxes, which repeats this to a fixed point and returns a canonical order.
// compact_in_place is true when `r` is then a fixed point (no pair left to join: compacting it
// again changes nothing, so the solver's finish() can skip it).
bool compact_in_place(Region& r);
Region compact(Region r);

// r minus the boxes of s, not compacted; pieces cut across `first` first (a step's own axis: the
// part of a box outside the step's layer stays one box).
void subtract_in_place(Region& r, const Region& s, int first);

// r minus s, compacted.
Region subtract(const Region& r, const Region& s, int first = 0);

// The boxes of `a` and of `b` (disjoint from them), compacted.
Region join(Region a, const Region& b);

// Hs of a region (0 when empty).
double half_surface_of(const Region& r);

}  // namespace cuboid::partition::stepped_detail
