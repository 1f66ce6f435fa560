// Seeded property tests of the continuous algorithms over speed families and cuboid shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "checks.hpp"
#include "instances.hpp"
#include "partition/geometry.hpp"
#include "partition/strategy.hpp"

namespace cuboid::partition {
namespace {

using testing::Family;
using testing::Shape;

const double kNrrp3dZoneBound = 5.0 / std::pow(6.0, 2.0 / 3.0);
const double kNrrp2dZoneBound = std::sqrt(1.5);

Extent as_extent(const TileExtent& t) { return {double(t[0]), double(t[1]), double(t[2])}; }

double aspect_of(const Extent& e) {
  return *std::max_element(e.begin(), e.end()) / *std::min_element(e.begin(), e.end());
}

struct Case {
  Family family;
  Shape shape;
  std::vector<double> speeds;
  Extent extent;
};

// Instances: every family x shape, `per` random p and speeds each.
std::vector<Case> make_cases(int per, int max_p, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Case> out;
  for (Family f : testing::all_families())
    for (Shape s : testing::all_shapes())
      for (int r = 0; r < per; ++r) {
        const int p = testing::draw_p(rng, max_p);
        out.push_back({f, s, testing::speeds(f, p, rng), as_extent(testing::extent(s, 64))});
      }
  return out;
}

std::string describe(const Case& c, Algorithm a) {
  return std::string(to_string(a)) + " " + testing::name(c.family) + " " + testing::name(c.shape) +
         " p=" + std::to_string(c.speeds.size());
}

class ContinuousProperties : public ::testing::TestWithParam<Algorithm> {};

TEST_P(ContinuousProperties, ExactCoverAndTargetVolumes) {
  const Algorithm alg = GetParam();
  for (const Case& c : make_cases(40, 1000, 20240611)) {
    SCOPED_TRACE(describe(c, alg));
    const auto zones = partition_continuous(alg, c.speeds, c.extent);
    ASSERT_EQ(zones.size(), c.speeds.size());
    ASSERT_TRUE(testing::covers_exactly(zones, c.extent, 1e-9));
    const double total_volume = c.extent[0] * c.extent[1] * c.extent[2];
    // The grid may leave processors idle; the others share the volume by speed.
    double active_speed = 0.0;
    std::size_t idle = 0;
    for (std::size_t p = 0; p < zones.size(); ++p) {
      if (volume(zones[p]) > 0) {
        active_speed += c.speeds[p];
      } else {
        ++idle;
      }
    }
    if (alg == Algorithm::grid) {
      EXPECT_LE(double(idle), 0.05 * double(c.speeds.size()));
    } else {
      ASSERT_EQ(idle, 0u);
    }
    for (std::size_t p = 0; p < zones.size(); ++p) {
      const double v = volume(zones[p]);
      if (v == 0) continue;
      const double target = c.speeds[p] / active_speed * total_volume;
      ASSERT_NEAR(v, target, 1e-9 * target + 1e-12 * total_volume) << "processor " << p;
    }
    if (is_2d(alg))
      for (const Zone& z : zones)
        for (const Box& b : z) {
          ASSERT_EQ(b.lo[2], 0.0);
          ASSERT_EQ(b.hi[2], c.extent[2]);
        }
  }
}

TEST_P(ContinuousProperties, Deterministic) {
  const Algorithm alg = GetParam();
  for (const Case& c : make_cases(3, 1000, 7)) {
    SCOPED_TRACE(describe(c, alg));
    EXPECT_EQ(partition_continuous(alg, c.speeds, c.extent),
              partition_continuous(alg, c.speeds, c.extent));
  }
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, ContinuousProperties,
                         ::testing::Values(Algorithm::nrrp3d, Algorithm::nrrp3d_2mode,
                                           Algorithm::nrrp2d, Algorithm::column, Algorithm::slab,
                                           Algorithm::grid),
                         [](const auto& info) {
                           std::string n(to_string(info.param));
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

// The invariant of the proof (Lemmas 3 and 5): every cuboid 3D-NRRP works on has aspect ratio
// at most max(3, rho0). The zone of a leaf is such a cuboid, the zone of a dominant processor is
// such a cuboid minus a corner, so its bounding box is one.
TEST(Nrrp3d, AspectRatioInvariant) {
  for (const Case& c : make_cases(60, 1000, 99)) {
    SCOPED_TRACE(describe(c, Algorithm::nrrp3d));
    const double limit = std::max(3.0, aspect_of(c.extent)) * (1 + 1e-9);
    for (const Zone& z : partition_continuous(Algorithm::nrrp3d, c.speeds, c.extent))
      ASSERT_LE(aspect_ratio(bounding_box(z)), limit);
  }
}

// Theorem 2: on a cube every zone has Hs <= 5/6^(2/3) * 3 V^(2/3).
TEST(Nrrp3d, ZoneBoundOnCubes) {
  std::mt19937_64 rng(4242);
  double worst = 0.0;
  for (int r = 0; r < 600; ++r) {
    const Family f = testing::all_families()[std::size_t(r) % testing::all_families().size()];
    const auto speeds = testing::speeds(f, testing::draw_p(rng, 1000), rng);
    SCOPED_TRACE(testing::name(f) + " p=" + std::to_string(speeds.size()));
    for (const Zone& z : partition_continuous(Algorithm::nrrp3d, speeds, {1.0, 1.0, 1.0})) {
      const double ratio = half_surface(z) / lower_bound_plain(volume(z));
      worst = std::max(worst, ratio);
      ASSERT_LE(ratio, kNrrp3dZoneBound * (1 + 1e-9));
    }
  }
  RecordProperty("worst_zone_ratio", std::to_string(worst));
}

// The 2D restriction on a square face: rectangles of aspect ratio <= 3 and rectangles minus a
// corner square keep every zone within sqrt(3/2) of 2 sqrt(s).
TEST(Nrrp2d, ZoneBoundOnSquares) {
  std::mt19937_64 rng(77);
  for (int r = 0; r < 600; ++r) {
    const Family f = testing::all_families()[std::size_t(r) % testing::all_families().size()];
    const auto speeds = testing::speeds(f, testing::draw_p(rng, 1000), rng);
    SCOPED_TRACE(testing::name(f) + " p=" + std::to_string(speeds.size()));
    for (const Zone& z : partition_continuous(Algorithm::nrrp2d, speeds, {1.0, 1.0, 5.0})) {
      const Footprint fp = footprint(z);
      ASSERT_LE(fp.pi_i + fp.pi_j, kNrrp2dZoneBound * lower_bound_2d(fp.area) * (1 + 1e-9));
    }
  }
}

// Column partitions are optimal among column-based ones: on equal speeds with p = c^2 on a
// square, c columns of c squares reach the 2D bound exactly.
TEST(Column, PerfectSquareOfEqualSpeeds) {
  for (int c : {1, 2, 3, 7, 12}) {
    const std::vector<double> speeds(std::size_t(c * c), 1.0);
    const auto zones = partition_continuous(Algorithm::column, speeds, {1.0, 1.0, 1.0});
    double perimeter = 0.0, bound = 0.0;
    for (const Zone& z : zones) {
      const Footprint fp = footprint(z);
      perimeter += fp.pi_i + fp.pi_j;
      bound += lower_bound_2d(fp.area);
    }
    EXPECT_NEAR(perimeter / bound, 1.0, 1e-9) << "p = " << c * c;
  }
}

// Grid fitting: a prime number of equal processors on a cube leaves a few idle rather than
// cutting slabs, and a perfect cube count gives cubes.
TEST(Grid, FitsBadlyFactoringCounts) {
  const std::vector<double> prime(127, 1.0);  // 127 is prime; 125 = 5^3 is 2 away
  const auto zones = partition_continuous(Algorithm::grid, prime, {1.0, 1.0, 1.0});
  int idle = 0;
  double worst = 0.0;
  for (const Zone& z : zones) {
    if (volume(z) == 0) {
      ++idle;
    } else {
      worst = std::max(worst, half_surface(z) / lower_bound_plain(volume(z)));
    }
  }
  EXPECT_EQ(idle, 2);
  EXPECT_NEAR(worst, 1.0, 1e-9);
}

TEST(Slab, CutsAcrossLongestEdge) {
  const auto zones = partition_continuous(Algorithm::slab, {1.0, 2.0, 1.0}, {2.0, 8.0, 4.0});
  ASSERT_EQ(zones.size(), 3u);
  for (const Zone& z : zones) {
    ASSERT_EQ(z.size(), 1u);
    EXPECT_EQ(z[0].extent(0), 2.0);
    EXPECT_EQ(z[0].extent(2), 4.0);
  }
  EXPECT_NEAR(zones[1][0].extent(1), 4.0, 1e-12);
}

// A million processors, one dominant: no deep recursion, still exact.
TEST(Nrrp3d, MillionProcessors) {
  std::vector<double> speeds(1000000, 1.0);
  speeds[123456] = 1000.0;
  const auto zones = partition_continuous(Algorithm::nrrp3d, speeds, {1.0, 1.0, 1.0});
  ASSERT_EQ(zones.size(), speeds.size());
  double total = 0.0;
  for (const Zone& z : zones) total += volume(z);
  EXPECT_NEAR(total, 1.0, 1e-9);
  const double total_speed = std::accumulate(speeds.begin(), speeds.end(), 0.0);
  EXPECT_NEAR(volume(zones[123456]), 1000.0 / total_speed, 1e-12);
}

// Long chains of unequal speeds: deep decompositions must not hit a recursion limit.
TEST(Nrrp3d, GeometricChainHasNoRecursionLimit) {
  std::vector<double> speeds(200000);
  for (std::size_t i = 0; i < speeds.size(); ++i) speeds[i] = 1.0 + 1e-3 * double(i % 997);
  speeds[0] = 1e6;
  std::vector<double> chain(2000);
  for (std::size_t i = 0; i < chain.size(); ++i) chain[i] = std::pow(1.01, double(i));
  const auto many = partition_continuous(Algorithm::nrrp3d, speeds, {1.0, 1.0, 1.0});
  double total = 0.0;
  for (const Zone& z : many) total += volume(z);
  EXPECT_NEAR(total, 1.0, 1e-9);
  const auto zones = partition_continuous(Algorithm::nrrp3d, chain, {1.0, 1.0, 1.0});
  EXPECT_TRUE(testing::covers_exactly(zones, {1.0, 1.0, 1.0}, 1e-9));
}

}  // namespace
}  // namespace cuboid::partition
