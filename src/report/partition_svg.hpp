#pragma once
// A picture of a partition: one colour per processor, a legend with speed and share.
// Partitions that never split l are drawn as the C face seen from above (a square for square
// matrices); others as an isometric view of the cuboid with the pieces pulled slightly apart
// from its centre so that inner pieces show.
#include <cstddef>
#include <string>

#include "report/partition_json.hpp"

namespace cuboid::report {

// Throws std::runtime_error when the picture would hold more than `max_pieces` pieces (an SVG
// of a million boxes helps nobody).
std::string partition_to_svg(const PartitionResult& result, std::size_t max_pieces = 20000);

}  // namespace cuboid::report
