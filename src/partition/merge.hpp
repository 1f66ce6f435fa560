#pragma once
// Merging integer boxes into fewer, larger ones: the engine runs one GEMM per box.
#include <vector>

#include "partition/box.hpp"

namespace cuboid::partition {

// Given disjoint boxes, repeatedly joins two boxes that share a whole face until no such pair
// is left (per axis: sort, then join runs). The union is unchanged; the result is not
// guaranteed minimal (that problem is NP-hard) but unit cells of a box come back as that box.
// join_faces leaves them unordered; merge_boxes returns them in a canonical order.
TileZone join_faces(TileZone boxes);

// One pass along axis d: boxes sorted by their cross-section, then each run of boxes that
// touch along d joined into one. True when something was joined.
bool join_along(TileZone& boxes, int d);
TileZone merge_boxes(TileZone boxes);

// merge_boxes, then (up to a few dozen boxes) the union cut again by a sweep in each of the six
// axis orders and joined, kept when that gives fewer boxes: an L-shaped zone cut the wrong way
// comes back as two boxes. Costs up to the cube of the count.
TileZone fewest_boxes(TileZone boxes);

}  // namespace cuboid::partition
