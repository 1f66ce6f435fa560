// Seeded property tests of ROUNDED and PRECISE on tile grids.
#include <gtest/gtest.h>

#include "checks.hpp"
#include "instances.hpp"
#include "partition/discretize.hpp"
#include "partition/merge.hpp"
#include "partition/strategy.hpp"

namespace cuboid::partition {
namespace {

using testing::Family;
using testing::Shape;

const std::vector<Algorithm> kAlgorithms = {Algorithm::nrrp3d, Algorithm::nrrp3d_2mode,
                                            Algorithm::nrrp2d, Algorithm::column,
                                            Algorithm::slab,   Algorithm::grid};

struct Case {
  Family family;
  Shape shape;
  std::vector<double> speeds;
  TileExtent tiles;
};

std::vector<Case> make_cases(int per, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Case> out;
  for (Family f : testing::all_families())
    for (Shape s : testing::all_shapes())
      for (int r = 0; r < per; ++r) {
        // Edges of 4..40 tiles (largeK up to 40 x 40 x 640): many instances with few tiles per
        // zone, where discretisation is hardest.
        const std::int64_t m = 4 + std::int64_t(rng() % 37);
        const TileExtent t = testing::extent(s, m);
        const std::int64_t tasks = t[0] * t[1] * t[2];
        const int p = testing::draw_p(rng, int(std::min<std::int64_t>(300, tasks)));
        out.push_back({f, s, testing::speeds(f, p, rng), t});
      }
  return out;
}

std::string describe(const Case& c, Algorithm a, Discretization d) {
  return std::string(to_string(a)) + "/" + std::string(to_string(d)) + " " +
         testing::name(c.family) + " " + testing::name(c.shape) + " " + std::to_string(c.tiles[0]) +
         "x" + std::to_string(c.tiles[1]) + "x" + std::to_string(c.tiles[2]) +
         " p=" + std::to_string(c.speeds.size());
}

// No two boxes of a zone share a whole face: the merge reached its fixed point.
bool fully_merged(const TileZone& z) { return merge_boxes(z).size() == z.size(); }

class Discretized : public ::testing::TestWithParam<Discretization> {};

TEST_P(Discretized, ExactTilingCountsAndShapes) {
  const Discretization d = GetParam();
  for (const Case& c : make_cases(6, d == Discretization::precise ? 11 : 12)) {
    for (Algorithm a : kAlgorithms) {
      SCOPED_TRACE(describe(c, a, d));
      const auto zones = partition_tiles(a, d, c.speeds, c.tiles);
      ASSERT_EQ(zones.size(), c.speeds.size());
      ASSERT_TRUE(testing::tiles_exactly(zones, c.tiles));
      for (const TileZone& z : zones) ASSERT_TRUE(fully_merged(z));
      if (is_2d(a))
        for (const TileZone& z : zones)
          for (const TileBox& b : z) {
            ASSERT_EQ(b.lo[2], 0);
            ASSERT_EQ(b.hi[2], c.tiles[2]);
          }
      if (d != Discretization::rounded) {
        // Exact counts from the speeds (idle grid processors excepted), over C tiles for the
        // algorithms that never split l.
        const auto continuous = partition_continuous(
            a, c.speeds, {double(c.tiles[0]), double(c.tiles[1]), double(c.tiles[2])});
        std::vector<double> w = c.speeds;
        for (std::size_t p = 0; p < w.size(); ++p)
          if (continuous[p].empty() || volume(continuous[p]) == 0) w[p] = 0;
        const std::int64_t units =
            is_2d(a) ? c.tiles[0] * c.tiles[1] : c.tiles[0] * c.tiles[1] * c.tiles[2];
        const auto counts = exact_counts(w, units);
        for (std::size_t p = 0; p < zones.size(); ++p)
          ASSERT_EQ(testing::cell_count(zones[p]), counts[p] * (is_2d(a) ? c.tiles[2] : 1))
              << "processor " << p;
      }
    }
  }
}

TEST_P(Discretized, Deterministic) {
  for (const Case& c : make_cases(1, 5))
    for (Algorithm a : kAlgorithms)
      EXPECT_EQ(partition_tiles(a, GetParam(), c.speeds, c.tiles),
                partition_tiles(a, GetParam(), c.speeds, c.tiles))
          << describe(c, a, GetParam());
}

// STEPPED has its own tests (stepped_test.cpp).
INSTANTIATE_TEST_SUITE_P(Both, Discretized,
                         ::testing::Values(Discretization::rounded, Discretization::precise),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(ExactCounts, FollowThePartialSumFormula) {
  // Worked example: s = (0.25, 0.25, 0.5) of T = 10 -> round(2.5)=3, round(5)-3=2, 10-5=5.
  EXPECT_EQ(exact_counts({1, 1, 2}, 10), (std::vector<std::int64_t>{3, 2, 5}));
  std::mt19937_64 rng(3);
  for (int r = 0; r < 500; ++r) {
    const auto w = testing::speeds(Family::uniform, testing::draw_p(rng, 200), rng);
    const std::int64_t total = 1 + std::int64_t(rng() % 100000);
    const auto n = exact_counts(w, total);
    std::int64_t sum = 0;
    double wsum = 0.0;
    for (double x : w) wsum += x;
    for (std::size_t i = 0; i < n.size(); ++i) {
      sum += n[i];
      EXPECT_LT(std::abs(double(n[i]) - w[i] / wsum * double(total)), 1.0 + 1e-9);
    }
    EXPECT_EQ(sum, total);
  }
}

// Integer-aligned continuous zones come back unchanged from both routines.
TEST(Discretize, AlignedZonesAreKept) {
  const std::vector<double> speeds(8, 1.0);
  for (Discretization d : {Discretization::rounded, Discretization::precise}) {
    const auto zones = partition_tiles(Algorithm::grid, d, speeds, {8, 8, 8});
    for (const TileZone& z : zones) {
      ASSERT_EQ(z.size(), 1u);
      EXPECT_EQ(z[0].extent(0) * z[0].extent(1) * z[0].extent(2), 64);
    }
  }
}

// PRECISE visits only the cells near cuts: a large cuboid with few processors is fast and exact.
TEST(Discretize, PreciseOnLargeCuboid) {
  const std::vector<double> speeds = {1.0, 3.0, 7.0, 0.5, 2.0};
  const TileExtent tiles = {400, 400, 400};
  const auto zones = partition_tiles(Algorithm::nrrp3d, Discretization::precise, speeds, tiles);
  const auto counts = exact_counts(speeds, tiles[0] * tiles[1] * tiles[2]);
  std::int64_t total = 0;
  for (std::size_t p = 0; p < zones.size(); ++p) {
    EXPECT_EQ(testing::cell_count(zones[p]), counts[p]);
    EXPECT_LT(zones[p].size(), 2000u) << "zone " << p << " is fragmented";
    total += testing::cell_count(zones[p]);
  }
  EXPECT_EQ(total, tiles[0] * tiles[1] * tiles[2]);
}

// A zone whose faces joined as given stay five boxes; cut again by a sweep, four.
TEST(Merge, FewestBoxesCutsTheUnionAgain) {
  const TileZone zone = {TileBox{{0, 0, 28}, {4, 6, 32}}, TileBox{{0, 6, 27}, {10, 12, 32}},
                         TileBox{{4, 0, 28}, {6, 5, 32}}, TileBox{{4, 5, 27}, {6, 6, 32}},
                         TileBox{{6, 0, 27}, {10, 6, 32}}};
  const TileZone joined = merge_boxes(zone);
  const TileZone fewest = fewest_boxes(zone);
  EXPECT_EQ(joined.size(), 5u);
  EXPECT_EQ(fewest.size(), 4u);
  // The same cells, each once.
  std::vector<int> cells(10 * 12 * 32, 0), again(10 * 12 * 32, 0);
  auto mark = [](const TileZone& z, std::vector<int>& board) {
    for (const TileBox& b : z)
      for (std::int64_t i = b.lo[0]; i < b.hi[0]; ++i)
        for (std::int64_t j = b.lo[1]; j < b.hi[1]; ++j)
          for (std::int64_t l = b.lo[2]; l < b.hi[2]; ++l)
            ++board[std::size_t((i * 12 + j) * 32 + l)];
  };
  mark(zone, cells);
  mark(fewest, again);
  EXPECT_EQ(cells, again);
  EXPECT_EQ(fewest_boxes(fewest), fewest);  // a fixed point
}

TEST(ProcessorZones, SplitACuboidAmongProcessorsOrGiveASmallOneToTheFastest) {
  const auto z = processor_zones(Algorithm::nrrp3d, Discretization::precise, {1, 3}, {4, 4, 4});
  ASSERT_EQ(z.size(), 2u);
  EXPECT_TRUE(testing::tiles_exactly(z, TileExtent{4, 4, 4}));
  // One task and two processors: the faster one takes it.
  const auto one = processor_zones(Algorithm::nrrp3d, Discretization::precise, {1, 3}, {1, 1, 1});
  EXPECT_TRUE(one[0].empty());
  EXPECT_EQ(one[1].size(), 1u);
  // A 2D algorithm counts C tiles: one C tile four deep still goes to one processor.
  const auto flat = processor_zones(Algorithm::nrrp2d, Discretization::precise, {2, 1}, {1, 1, 4});
  EXPECT_EQ(flat[0].size(), 1u);
  EXPECT_TRUE(flat[1].empty());
}

}  // namespace
}  // namespace cuboid::partition
