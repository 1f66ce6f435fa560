// Measures: union projections, Hs, the two lower bounds, traffic.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "partition/geometry.hpp"
#include "partition/metrics.hpp"

namespace cuboid::partition {
namespace {

TEST(Geometry, UnionAreaAgainstCellCounting) {
  // Random integer rectangles on a 30 x 30 board: the sweep must count each cell once.
  std::mt19937_64 rng(1);
  for (int r = 0; r < 300; ++r) {
    std::vector<RealRect> rects;
    std::vector<int> board(900, 0);
    const int n = 1 + int(rng() % 12);
    for (int k = 0; k < n; ++k) {
      const int x0 = int(rng() % 30), y0 = int(rng() % 30);
      const int x1 = x0 + 1 + int(rng() % std::uint64_t(30 - x0));
      const int y1 = y0 + 1 + int(rng() % std::uint64_t(30 - y0));
      rects.push_back({double(x0), double(x1), double(y0), double(y1)});
      for (int x = x0; x < x1; ++x)
        for (int y = y0; y < y1; ++y) board[std::size_t(x * 30 + y)] = 1;
    }
    double cells = 0;
    for (int c : board) cells += c;
    EXPECT_EQ(union_area(rects), cells);
  }
}

TEST(Geometry, ZoneProjectionsAgainstCellCounting) {
  // Random boxes on a 10^3 board (stacked, adjacent, nested or overlapping): each projection
  // is the number of covered cells of its plane.
  std::mt19937_64 rng(2);
  static constexpr int kPlanes[3][2] = {{0, 2}, {2, 1}, {0, 1}};
  for (int r = 0; r < 300; ++r) {
    TileZone zone;
    const int n = 1 + int(rng() % 14);
    for (int k = 0; k < n; ++k) {
      TileBox b;
      for (int d = 0; d < 3; ++d) {
        b.lo[d] = std::int64_t(rng() % 10);
        b.hi[d] = b.lo[d] + 1 + std::int64_t(rng() % std::uint64_t(10 - b.lo[d]));
      }
      if (rng() % 3 == 0 && !zone.empty()) {
        // Stacked on the previous box along one axis: same section, the common case.
        const int d = int(rng() % 3);
        b = zone.back();
        b.lo[d] = b.hi[d] % 10;
        b.hi[d] = b.lo[d] + 1;
      }
      zone.push_back(b);
    }
    const auto pi = projections(zone);
    for (int f = 0; f < 3; ++f) {
      std::vector<int> board(100, 0);
      for (const TileBox& b : zone)
        for (std::int64_t x = b.lo[kPlanes[f][0]]; x < b.hi[kPlanes[f][0]]; ++x)
          for (std::int64_t y = b.lo[kPlanes[f][1]]; y < b.hi[kPlanes[f][1]]; ++y)
            board[std::size_t(x * 10 + y)] = 1;
      double cells = 0;
      for (int c : board) cells += c;
      EXPECT_EQ(pi[std::size_t(f)], cells) << "plane " << f << ", instance " << r;
    }
  }
}

TEST(Geometry, ZoneProjectionsAreUnions) {
  // An L-shaped zone: two boxes stacked along l share their whole C projection.
  const TileZone z = {TileBox{{0, 0, 0}, {2, 3, 1}}, TileBox{{0, 0, 1}, {2, 3, 4}}};
  const auto pi = projections(z);
  EXPECT_EQ(pi[2], 2.0 * 3.0);  // C counted once, not twice
  EXPECT_EQ(pi[0], 2.0 * 4.0);
  EXPECT_EQ(pi[1], 4.0 * 3.0);
  EXPECT_EQ(half_surface(z), 6.0 + 8.0 + 12.0);
  EXPECT_EQ(volume(z), 24.0);
}

TEST(Geometry, ShapeAwareBound) {
  const Extent cube = {10, 10, 10};
  // Small volumes fit a cube: both bounds agree.
  EXPECT_DOUBLE_EQ(lower_bound(8.0, cube), lower_bound_plain(8.0));
  // Flat 16 x 16 x 1: a volume of 64 is at best 1 x 8 x 8.
  const Extent flat = {16, 16, 1};
  EXPECT_DOUBLE_EQ(lower_bound(64.0, flat), 8.0 * 8.0 + 2 * 8.0);
  // A volume larger than d1 * d2^2: the box d1 x d2 x V/(d1 d2).
  EXPECT_DOUBLE_EQ(lower_bound(16.0 * 16.0 * 1.0, flat), 16.0 * 16.0 + 2 * 16.0);
  // L(V) never exceeds what the whole cuboid achieves and is at least the plain bound.
  for (double v = 1; v <= 256; v *= 1.7) {
    EXPECT_GE(lower_bound(v, flat), lower_bound_plain(v) * (1 - 1e-12));
  }
}

TEST(Metrics, MeasureOfAPerfectSplit) {
  // Two equal halves of a 2 x 2 x 2 cube: each zone 1 x 2 x 2, Hs = 2 + 4 + 2 = 8.
  const std::vector<TileZone> zones = {{TileBox{{0, 0, 0}, {1, 2, 2}}},
                                       {TileBox{{1, 0, 0}, {2, 2, 2}}}};
  const auto m = measure(zones, {1.0, 1.0}, TileExtent{2, 2, 2});
  EXPECT_EQ(m.hs_total, 16.0);
  EXPECT_DOUBLE_EQ(m.lower_bound_total, 2 * lower_bound_plain(4.0));
  EXPECT_DOUBLE_EQ(m.imbalance, 0.0);
  EXPECT_DOUBLE_EQ(m.ratio, 16.0 / m.lower_bound_total);
}

TEST(Metrics, TrafficWithPartialTilesAndReduction) {
  // m = n = k = 10 elements in tiles of 4 -> 3 x 3 x 3 tiles, the last of 2 elements.
  // Zone 0 computes l tile 0, zone 1 the rest: zone 1 holds partial C it does not own.
  const std::vector<TileZone> zones = {{TileBox{{0, 0, 0}, {3, 3, 1}}},
                                       {TileBox{{0, 0, 1}, {3, 3, 3}}}};
  const auto t = traffic(zones, 10, 10, 10, 4, 8, true);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].a_bytes, 10.0 * 4.0 * 8);  // i: 10 elements, l: one full tile of 4
  EXPECT_EQ(t[1].a_bytes, 10.0 * 6.0 * 8);  // l: 4 + 2 elements
  EXPECT_EQ(t[0].c_read_bytes, 100.0 * 8);
  EXPECT_EQ(t[0].reduction_bytes, 0.0);
  EXPECT_EQ(t[1].reduction_bytes, 100.0 * 8);
  const auto without_beta = traffic(zones, 10, 10, 10, 4, 8, false);
  EXPECT_EQ(without_beta[0].c_read_bytes, 0.0);
  EXPECT_EQ(sum(t).a_bytes, t[0].a_bytes + t[1].a_bytes);
}

TEST(Metrics, Ratio2dOfColumns) {
  // Four quarter squares of the unit square: half-perimeter 1 each, bound 2 sqrt(1/4) = 1.
  const std::vector<Zone> zones = {{Box{{0, 0, 0}, {0.5, 0.5, 1}}},
                                   {Box{{0.5, 0, 0}, {1, 0.5, 1}}},
                                   {Box{{0, 0.5, 0}, {0.5, 1, 1}}},
                                   {Box{{0.5, 0.5, 0}, {1, 1, 1}}}};
  EXPECT_DOUBLE_EQ(ratio_2d(zones), 1.0);
}

}  // namespace
}  // namespace cuboid::partition
