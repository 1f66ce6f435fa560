#pragma once
// Two-level partition: the global tile cuboid among ranks, then each rank's
// zone among its own processors, both with the partition library. No MPI here.
#include <cstdint>
#include <vector>

#include "exec/plan.hpp"
#include "partition/strategy.hpp"

namespace cuboid::layout {

// One zone per rank, in rank order. A rank whose speed is 0 gets an empty zone (it still owns
// its share of the block-cyclic layout); the others share the cuboid in proportion to speed.
// Throws std::invalid_argument when no rank has a positive speed, a speed is negative or not
// finite, or the working ranks outnumber the tile tasks.
std::vector<partition::TileZone> partition_ranks(partition::Algorithm a,
                                                 partition::Discretization d,
                                                 const std::vector<double>& rank_speeds,
                                                 const partition::TileExtent& tiles);

// A unit of local work: one k-slab of one box of a rank's zone, or of a part of the box (its
// rows and columns the comm plan runs first). Slabs are what lets a rank start computing before
// all its inputs arrived: slab s of a box needs only the A and B tiles of its k range (the
// rounds of COSMA: Kwasniewski et al., "Red-Blue Pebbling Revisited", SC'19).
struct Piece {
  partition::TileBox box;  // the slab, in global tile coordinates
  int box_index = 0;       // which box of the zone it belongs to
  // Its GEMM starts its rows and columns of the box's partial C (beta 0; or of C in place), the
  // later pieces over them add.
  bool first_of_box = true;
};

// The slabs of every box of `zone`, box by box, k ascending. Each box is cut into
// min(slabs_per_box, its k extent) slabs of nearly equal tile depth.
std::vector<Piece> pieces_of(const partition::TileZone& zone, int slabs_per_box);

// Element ranges of a tile box: rows/cols of C (or A, B) it covers.
inline exec::Rect c_rect(const partition::TileBox& b, std::int64_t m, std::int64_t n,
                         std::int64_t t) {
  return exec::Rect{b.lo[0] * t, std::min(b.hi[0] * t, m), b.lo[1] * t, std::min(b.hi[1] * t, n)};
}
inline exec::Rect a_rect(const partition::TileBox& b, std::int64_t m, std::int64_t k,
                         std::int64_t t) {
  return exec::Rect{b.lo[0] * t, std::min(b.hi[0] * t, m), b.lo[2] * t, std::min(b.hi[2] * t, k)};
}
inline exec::Rect b_rect(const partition::TileBox& b, std::int64_t k, std::int64_t n,
                         std::int64_t t) {
  return exec::Rect{b.lo[2] * t, std::min(b.hi[2] * t, k), b.lo[1] * t, std::min(b.hi[1] * t, n)};
}

}  // namespace cuboid::layout
