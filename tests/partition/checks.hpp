#pragma once
// Independent checks of partitions, written against the box type only (not the library's
// geometry code), so a bug in the library's measures cannot hide a bug in a partition.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "partition/box.hpp"

namespace cuboid::partition::testing {

// Every cell of the cuboid belongs to exactly one box of one zone (dense owner map: only for
// small cuboids).
inline ::testing::AssertionResult tiles_exactly(const std::vector<TileZone>& zones,
                                                const TileExtent& e) {
  const std::int64_t cells = e[0] * e[1] * e[2];
  std::vector<int> owner(std::size_t(cells), -1);
  for (std::size_t p = 0; p < zones.size(); ++p)
    for (const TileBox& b : zones[p]) {
      for (int d = 0; d < 3; ++d)
        if (b.lo[d] < 0 || b.hi[d] > e[d] || b.lo[d] >= b.hi[d])
          return ::testing::AssertionFailure() << "zone " << p << " has a box outside the cuboid "
                                               << "or empty on axis " << d;
      for (std::int64_t i = b.lo[0]; i < b.hi[0]; ++i)
        for (std::int64_t j = b.lo[1]; j < b.hi[1]; ++j)
          for (std::int64_t l = b.lo[2]; l < b.hi[2]; ++l) {
            int& o = owner[std::size_t((i * e[1] + j) * e[2] + l)];
            if (o >= 0)
              return ::testing::AssertionFailure()
                     << "cell (" << i << "," << j << "," << l << ") in zones " << o << " and " << p;
            o = int(p);
          }
    }
  const auto missing = std::count(owner.begin(), owner.end(), -1);
  if (missing) return ::testing::AssertionFailure() << missing << " cells not covered";
  return ::testing::AssertionSuccess();
}

inline std::int64_t cell_count(const TileZone& z) {
  std::int64_t n = 0;
  for (const TileBox& b : z) n += b.extent(0) * b.extent(1) * b.extent(2);
  return n;
}

inline double box_volume(const Box& b) {
  return (b.hi[0] - b.lo[0]) * (b.hi[1] - b.lo[1]) * (b.hi[2] - b.lo[2]);
}

// Continuous partitions: boxes inside the cuboid, pairwise overlap below tol (sweep along
// axis 0), volumes adding up to the cuboid.
inline ::testing::AssertionResult covers_exactly(const std::vector<Zone>& zones, const Extent& e,
                                                 double rel_tol) {
  const double total = e[0] * e[1] * e[2];
  struct Entry {
    Box b;
    std::size_t zone;
  };
  std::vector<Entry> all;
  double sum = 0.0;
  for (std::size_t p = 0; p < zones.size(); ++p)
    for (const Box& b : zones[p]) {
      for (int d = 0; d < 3; ++d)
        if (b.lo[d] < -rel_tol * e[d] || b.hi[d] > e[d] * (1 + rel_tol) || b.lo[d] > b.hi[d])
          return ::testing::AssertionFailure() << "zone " << p << " has a box outside the cuboid";
      sum += box_volume(b);
      all.push_back({b, p});
    }
  if (std::abs(sum - total) > rel_tol * total)
    return ::testing::AssertionFailure() << "volumes sum to " << sum << " instead of " << total;
  std::sort(all.begin(), all.end(),
            [](const Entry& a, const Entry& b) { return a.b.lo[0] < b.b.lo[0]; });
  for (std::size_t x = 0; x < all.size(); ++x)
    for (std::size_t y = x + 1; y < all.size() && all[y].b.lo[0] < all[x].b.hi[0]; ++y) {
      double overlap = 1.0;
      for (int d = 0; d < 3; ++d)
        overlap *= std::max(0.0, std::min(all[x].b.hi[d], all[y].b.hi[d]) -
                                     std::max(all[x].b.lo[d], all[y].b.lo[d]));
      if (overlap > rel_tol * total)
        return ::testing::AssertionFailure() << "boxes of zones " << all[x].zone << " and "
                                             << all[y].zone << " overlap by " << overlap;
    }
  return ::testing::AssertionSuccess();
}

}  // namespace cuboid::partition::testing
