// STEPPED: exact PRECISE counts, few boxes per zone, surfaces close to the continuous partition,
// on cubes of 8, 16 and 32 tiles a side with three fixed speed sets and random families.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "checks.hpp"
#include "instances.hpp"
#include "partition/discretize.hpp"
#include "partition/metrics.hpp"
#include "partition/strategy.hpp"

namespace cuboid::partition {
namespace {

struct Instance {
  std::string name;
  std::vector<double> speeds;
};

// Three fixed speed sets (4 x 30 + 8, 8 equal, 100 + 20 x 1) and `per` random instances of
// every family of instances.hpp, p uniform in [2, 64].
std::vector<Instance> acceptance_instances(int per, std::uint64_t seed) {
  std::vector<Instance> out;
  out.push_back({"4 x 30 + 8", {30, 30, 30, 30, 8}});
  out.push_back({"8 equal", std::vector<double>(8, 1.0)});
  std::vector<double> dominant(21, 1.0);
  dominant[0] = 100.0;
  out.push_back({"100 + 20 x 1", dominant});
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> p_of(2, 64);
  for (testing::Family f : testing::all_families())
    for (int r = 0; r < per; ++r) {
      auto s = testing::speeds(f, p_of(rng), rng);
      out.push_back({testing::name(f) + " p=" + std::to_string(s.size()), s});
    }
  return out;
}

int most_boxes(const std::vector<TileZone>& zones) {
  std::size_t m = 0;
  for (const TileZone& z : zones) m = std::max(m, z.size());
  return int(m);
}

class SteppedAcceptance : public ::testing::TestWithParam<std::int64_t> {};

// At most four boxes per zone (each box costs a GEMM call): on every instance here and in
// the 60 instances per cube of docs/measurements/2026-11-21-partition-quality.md.
TEST_P(SteppedAcceptance, ExactCountsFewBoxesCloseSurfaces) {
  const std::int64_t edge = GetParam();
  const TileExtent tiles = {edge, edge, edge};
  double sum = 0.0, worst = 0.0;
  int n = 0;
  std::int64_t zones = 0, above_four = 0;
  std::map<int, int> boxes;  // most boxes of a zone -> instances
  // Fewer random instances on the largest cube: each takes a few tenths of a second.
  for (const Instance& c : acceptance_instances(edge >= 32 ? 1 : 3, 1300 + std::uint64_t(edge))) {
    SCOPED_TRACE(c.name + " on " + std::to_string(edge) + "^3");
    const auto result =
        partition_tiles(Algorithm::nrrp3d, Discretization::stepped, c.speeds, tiles);
    ASSERT_TRUE(testing::tiles_exactly(result, tiles));
    const auto counts = exact_counts(c.speeds, edge * edge * edge);
    for (std::size_t p = 0; p < result.size(); ++p) {
      ASSERT_EQ(testing::cell_count(result[p]), counts[p]) << "processor " << p;
      zones += !result[p].empty();
      above_four += result[p].size() > 4;
    }
    const int most = most_boxes(result);
    ++boxes[most];
    EXPECT_LE(most, 4) << "a zone has " << most << " boxes";
    const double ratio = measure(result, c.speeds, tiles).ratio;
    EXPECT_LE(ratio, 1.20);
    sum += ratio;
    worst = std::max(worst, ratio);
    ++n;
  }
  EXPECT_LE(sum / n, 1.10) << "mean sum Hs / sum L(V) over " << n << " instances";
  EXPECT_EQ(above_four, 0) << above_four << " of " << zones;
  std::string hist;
  for (auto [b, count] : boxes) hist += " " + std::to_string(b) + ":" + std::to_string(count);
  std::cout << edge << "^3, " << n << " instances: mean Hs/L " << sum / n << ", worst " << worst
            << ", most boxes of a zone (boxes:instances)" << hist << ", zones above four boxes "
            << above_four << " of " << zones << "\n";
}

INSTANTIATE_TEST_SUITE_P(Cubes, SteppedAcceptance, ::testing::Values(8, 16, 32),
                         [](const auto& info) { return "edge" + std::to_string(info.param); });

// Three of the random acceptance instances on 32^3 (docs/measurements/, partition quality) that
// used to keep a zone of five boxes: a main box with steps on three faces, each shared with a
// different neighbour. The last resort's chain of two re-cuts, tried from more distinct first
// re-cuts, or a retry with another candidate at an ancestor, brings every zone to four boxes or
// fewer with exact counts.
TEST(Stepped, FiveBoxZonesRepairedOn32Cube) {
  std::vector<double> dominant(64, 1.0);  // the "dominant" family, p = 64
  dominant[30] = 20.815428715338182;
  std::vector<double> two_classes(16, 21.769862698309002);  // "two-classes", p = 16
  for (std::size_t p : {1, 2, 3, 7, 12, 14}) two_classes[p] = 1.0;
  // One more, from cuboid-partition-quality (32^3, uniform instance 3), fixed by a retry with
  // another candidate at an ancestor of the five-box zone (two-classes instance 2, p = 42, is
  // fixed the same way and shows in that bench; it takes three times as long).
  const std::vector<double> uniform = {
      // "uniform", p = 23
      9.4897853797644149, 2.2754050821761389, 6.702748570651047,  6.3522136550343209,
      2.3251336633931206, 3.5809716857204315, 9.8767247473564552, 1.9331115784203645,
      2.6031230520811457, 2.0060398851716417, 5.2774572755745499, 1.1310630495927949,
      2.4253875445516,    5.0933460675479587, 8.7293812300162017, 8.1661158052347034,
      7.0466022383132225, 4.9188457869439217, 5.4762062303874188, 8.8758893654336379,
      4.2963556344745983, 2.3370418853711077, 7.5968084464966612};
  const TileExtent tiles = {32, 32, 32};
  for (const auto& speeds : {dominant, two_classes, uniform}) {
    SCOPED_TRACE("p = " + std::to_string(speeds.size()));
    const auto zones = partition_tiles(Algorithm::nrrp3d, Discretization::stepped, speeds, tiles);
    ASSERT_TRUE(testing::tiles_exactly(zones, tiles));
    const auto counts = exact_counts(speeds, tiles[0] * tiles[1] * tiles[2]);
    ASSERT_EQ(zones.size(), counts.size());
    for (std::size_t p = 0; p < zones.size(); ++p) {
      EXPECT_EQ(testing::cell_count(zones[p]), counts[p]) << "processor " << p;
      EXPECT_LE(zones[p].size(), 4u) << "processor " << p;
    }
    EXPECT_LE(measure(zones, speeds, tiles).ratio, 1.20);
  }
}

// Every algorithm's cuts made exact: the PRECISE counts (C tiles for the 2D algorithms, whose
// zones keep spanning l), an exact tiling, and zones merged.
TEST(Stepped, EveryAlgorithmExact) {
  const std::vector<Algorithm> algorithms = {Algorithm::nrrp3d, Algorithm::nrrp3d_2mode,
                                             Algorithm::nrrp2d, Algorithm::column,
                                             Algorithm::slab,   Algorithm::grid};
  std::mt19937_64 rng(77);
  for (testing::Family f : testing::all_families())
    for (testing::Shape s : testing::all_shapes())
      for (int r = 0; r < 2; ++r) {
        const std::int64_t m = 4 + std::int64_t(rng() % 13);
        const TileExtent t = testing::extent(s, m);
        const int p = testing::draw_p(rng, int(std::min<std::int64_t>(40, t[0] * t[1] * t[2])));
        const auto speeds = testing::speeds(f, p, rng);
        for (Algorithm a : algorithms) {
          SCOPED_TRACE(std::string(to_string(a)) + " " + testing::name(f) + " " + testing::name(s) +
                       " m=" + std::to_string(m) + " p=" + std::to_string(p));
          const auto zones = partition_tiles(a, Discretization::stepped, speeds, t);
          ASSERT_TRUE(testing::tiles_exactly(zones, t));
          const auto continuous =
              partition_continuous(a, speeds, {double(t[0]), double(t[1]), double(t[2])});
          std::vector<double> w = speeds;
          for (std::size_t q = 0; q < w.size(); ++q)
            if (continuous[q].empty()) w[q] = 0;  // an idle grid processor
          const std::int64_t units = is_2d(a) ? t[0] * t[1] : t[0] * t[1] * t[2];
          const auto counts = exact_counts(w, units);
          for (std::size_t q = 0; q < zones.size(); ++q) {
            ASSERT_EQ(testing::cell_count(zones[q]), counts[q] * (is_2d(a) ? t[2] : 1));
            for (const TileBox& b : zones[q])
              if (is_2d(a)) {
                ASSERT_EQ(b.lo[2], 0);
                ASSERT_EQ(b.hi[2], t[2]);
              }
          }
        }
      }
}

TEST(Stepped, Deterministic) {
  std::mt19937_64 rng(5);
  const auto speeds = testing::speeds(testing::Family::uniform, 40, rng);
  for (Algorithm a : {Algorithm::nrrp3d, Algorithm::column, Algorithm::grid})
    EXPECT_EQ(partition_tiles(a, Discretization::stepped, speeds, {16, 16, 16}),
              partition_tiles(a, Discretization::stepped, speeds, {16, 16, 16}));
}

// Memory and work depend on the processors and boxes, not on M*N*K: 4096^3 tiles with 2000
// processors (beyond the sizes that compare candidates) is exact. PRECISE refuses the same
// cuboid up front, naming the way out, instead of growing a table until it runs out of memory.
TEST(Stepped, LargeCuboidExactWherePreciseRefuses) {
  std::mt19937_64 rng(9);
  const auto speeds = testing::speeds(testing::Family::uniform, 2000, rng);
  const TileExtent tiles = {4096, 4096, 4096};
  const auto zones = partition_tiles(Algorithm::nrrp3d, Discretization::stepped, speeds, tiles);
  const auto counts = exact_counts(speeds, tiles[0] * tiles[1] * tiles[2]);
  std::int64_t total = 0;
  for (std::size_t p = 0; p < zones.size(); ++p) {
    ASSERT_EQ(testing::cell_count(zones[p]), counts[p]);
    total += counts[p];
  }
  EXPECT_EQ(total, tiles[0] * tiles[1] * tiles[2]);
  try {
    partition_tiles(Algorithm::nrrp3d, Discretization::precise, speeds, tiles);
    FAIL() << "precise accepted 4096^3 tiles with 2000 processors";
  } catch (const TooLarge& e) {
    EXPECT_NE(std::string(e.what()).find("stepped"), std::string::npos) << e.what();
  }
}

// Beyond 4096 processors each node tries one step; with 3.7 tiles a processor and one processor
// 12 times faster, that step did not fit the dominant's corner ("no way to cut a region").
TEST(Stepped, ManyProcessorsOnFewTiles) {
  std::vector<double> speeds(5000, 1.0);
  speeds[1721] = 12.0;
  const TileExtent tiles = {32, 34, 17};
  const auto zones = partition_tiles(Algorithm::nrrp3d, Discretization::stepped, speeds, tiles);
  const auto counts = exact_counts(speeds, tiles[0] * tiles[1] * tiles[2]);
  ASSERT_EQ(zones.size(), counts.size());
  EXPECT_TRUE(testing::tiles_exactly(zones, tiles));
  for (std::size_t p = 0; p < zones.size(); ++p)
    ASSERT_EQ(testing::cell_count(zones[p]), counts[p]) << "processor " << p;
}

TEST(Stepped, NeedsTheAlgorithm) {
  const auto zones = partition_continuous(Algorithm::slab, {1.0, 2.0}, {2.0, 2.0, 2.0});
  EXPECT_THROW(discretize(Discretization::stepped, zones, {1.0, 2.0}, {2, 2, 2}),
               std::invalid_argument);
}

}  // namespace
}  // namespace cuboid::partition
