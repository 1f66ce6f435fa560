#pragma once
// Merging integer boxes into fewer, larger ones: the engine runs one GEMM per box.
#include <vector>

#include "partition/box.hpp"

namespace cuboid::partition {

// Given disjoint boxes, repeatedly joins two boxes that share a whole face until no such pair
// is left (per axis: sort, then join runs). The union is unchanged; the result is not
// guaranteed minimal (that problem is NP-hard) but unit cells of a box come back as that box.
TileZone merge_boxes(TileZone boxes);

}  // namespace cuboid::partition
