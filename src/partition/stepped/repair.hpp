#pragma once
// Repair of finished zones: neighbouring zones cut again as one region with the same counts, to
// bring each zone down to four boxes or fewer; the zones not involved stay as they are.
#include <cstddef>
#include <vector>

#include "partition/box.hpp"

namespace cuboid::partition::stepped_detail {

// Each zone above four boxes re-cut with each of its neighbours in turn, when that lowers the
// larger of their box counts (or keeps it and lowers their half-surface); a bounded number of
// re-cuts per processor.
void repair(std::vector<TileZone>& zones);

// The work the chain and triple repairs may do (cuts made times the boxes of the two regions
// cut: counted the same on every machine, about a second on one core): regions of many small
// steps made them take minutes. They only lower the boxes of zones above four, so stopping
// leaves an exact partition.
constexpr std::size_t kRepairWork = 4000000;

// The last resort for zones still above four boxes: re-cuts with one neighbour that leave both
// at four boxes or fewer, or chains of two re-cuts through a second neighbour. Adds its work to
// `work` and stops once that passes kRepairWork.
void repair_chains(std::vector<TileZone>& zones, std::size_t& work);

// The last resort's third pass: a zone still above four boxes and two of its neighbours cut
// again as one region. Work as repair_chains.
void repair_triples(std::vector<TileZone>& zones, std::size_t& work);

// Zones still above four boxes cut again by sweeps (fewest_boxes), where that finds fewer.
void fewest(std::vector<TileZone>& zones);

}  // namespace cuboid::partition::stepped_detail
