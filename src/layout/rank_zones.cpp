#include "layout/rank_zones.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace cuboid::layout {

std::vector<partition::TileZone> partition_ranks(partition::Algorithm a,
                                                 partition::Discretization d,
                                                 const std::vector<double>& rank_speeds,
                                                 const partition::TileExtent& tiles) {
  std::vector<double> working;
  std::vector<int> who;
  for (std::size_t r = 0; r < rank_speeds.size(); ++r) {
    const double s = rank_speeds[r];
    if (!std::isfinite(s) || s < 0)
      throw std::invalid_argument("rank " + std::to_string(r) + " has speed " + std::to_string(s) +
                                  " (speeds must be finite and non-negative)");
    if (s > 0) {
      working.push_back(s);
      who.push_back(int(r));
    }
  }
  if (working.empty())
    throw std::invalid_argument("no rank has a positive speed: nobody would compute");
  const auto zones = partition::partition_tiles(a, d, working, tiles);
  std::vector<partition::TileZone> out(rank_speeds.size());
  for (std::size_t q = 0; q < who.size(); ++q) out[std::size_t(who[q])] = zones[q];
  return out;
}

std::vector<Piece> pieces_of(const partition::TileZone& zone, int slabs_per_box) {
  std::vector<Piece> out;
  int index = 0;
  for (const auto& b : zone) {
    if (b.empty()) continue;
    const std::int64_t depth = b.extent(2);
    const std::int64_t slabs =
        std::max<std::int64_t>(1, std::min<std::int64_t>(slabs_per_box, depth));
    for (std::int64_t s = 0; s < slabs; ++s) {
      Piece p;
      p.box = b;
      // Near-equal depths; the first slabs are the thinner ones, so computing starts sooner.
      p.box.lo[2] = b.lo[2] + depth * s / slabs;
      p.box.hi[2] = b.lo[2] + depth * (s + 1) / slabs;
      p.box_index = index;
      p.first_of_box = s == 0;
      out.push_back(p);
    }
    ++index;
  }
  return out;
}

}  // namespace cuboid::layout
