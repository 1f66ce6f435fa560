// The time model behind partition.algorithm = "auto".
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "partition/choose.hpp"

namespace cuboid::partition {
namespace {

// Two zones splitting k of a 4x4x4 cuboid of 1-element tiles: every figure by hand.
TEST(Choose, ModelByHand) {
  const std::vector<TileZone> zones = {{TileBox{{0, 0, 0}, {4, 4, 2}}},
                                       {TileBox{{0, 0, 2}, {4, 4, 4}}}};
  ModelProblem pr;
  pr.m = pr.n = pr.k = 4;
  pr.tile = 1;
  pr.element_bytes = 8;
  pr.beta_nonzero = true;
  std::vector<ProcessorModel> procs(2);
  procs[0].gflops = 1.0;  // a host: in place
  procs[1].gflops = 2.0;  // a device behind a 10 GB/s link
  procs[1].link_gbs = 10.0;
  ModelOptions o;
  o.host_gbs = 20.0;
  const Estimate e = estimate(zones, pr, procs, o);
  // 2*4*4*2 flops each.
  EXPECT_DOUBLE_EQ(e.compute_s[0], 64.0 / 1e9);
  EXPECT_DOUBLE_EQ(e.compute_s[1], 64.0 / 2e9);
  EXPECT_DOUBLE_EQ(e.copy_s[0], 0.0);
  // A panel 4x2, B panel 2x4, C read and written 4x4: (8 + 8 + 16 + 16) * 8 bytes.
  EXPECT_DOUBLE_EQ(e.copy_s[1], 48.0 * 8 / 10e9);
  // Zone 1 does not compute l = 0: its 16 C elements are partial, each read and added into C.
  EXPECT_DOUBLE_EQ(e.reduction_s, 3.0 * 16 * 8 / 20e9);
  const double slowest = std::max(e.compute_s[0], e.compute_s[1] + e.copy_s[1]);
  EXPECT_DOUBLE_EQ(e.seconds, slowest + e.reduction_s);
  EXPECT_EQ(e.max_boxes, 1);
}

TEST(Choose, FastestFirstAndTiesKeepTheListOrder) {
  ModelProblem pr;
  pr.m = pr.n = pr.k = 1024;
  pr.tile = 128;
  const std::vector<Algorithm> algorithms = {Algorithm::grid, Algorithm::nrrp3d, Algorithm::column,
                                             Algorithm::slab};
  const std::vector<Discretization> ds = {Discretization::stepped, Discretization::rounded};
  // One processor: every candidate is the whole cuboid, so the first of the lists wins.
  auto one = rank_candidates(pr, {{10.0, 0.0}}, algorithms, ds);
  ASSERT_EQ(one.size(), 8u);
  EXPECT_EQ(one[0].algorithm, Algorithm::grid);
  EXPECT_EQ(one[0].discretization, Discretization::stepped);
  for (const Estimate& e : one) EXPECT_DOUBLE_EQ(e.seconds, one[0].seconds);
  // Two devices behind slow links: sorted by the estimate (no window), copies counted.
  const double inf = std::numeric_limits<double>::infinity();
  ModelOptions exact;
  exact.tie_window = 0;
  auto two = rank_candidates(pr, {{10.0, 1.0}, {30.0, inf}}, algorithms, ds, exact);
  for (std::size_t i = 1; i < two.size(); ++i) EXPECT_LE(two[i - 1].seconds, two[i].seconds);
  EXPECT_GT(two[0].copy_s[0], 0.0);
  EXPECT_EQ(two[0].copy_s[1], 0.0);  // unlimited link
}

// Within the window, fewer boxes first, whatever the estimate; beyond it, the estimate.
TEST(Choose, FewestBoxesWithinTheWindow) {
  ModelProblem pr;
  pr.m = pr.n = 4096;
  pr.k = 256;
  pr.tile = 128;  // 32 x 32 x 2 tiles
  const std::vector<ProcessorModel> procs = {{10.0, 0.0}, {11.0, 0.0}, {3.0, 0.0}};
  const std::vector<Algorithm> algorithms = {Algorithm::nrrp3d, Algorithm::column, Algorithm::slab,
                                             Algorithm::grid};
  const std::vector<Discretization> ds = {Discretization::precise, Discretization::stepped,
                                          Discretization::rounded};
  ModelOptions wide;
  wide.tie_window = 0.5;
  const auto r = rank_candidates(pr, procs, algorithms, ds, wide);
  double best = std::numeric_limits<double>::infinity();
  for (const Estimate& e : r) best = std::min(best, e.seconds);
  std::size_t i = 0;
  for (; i < r.size() && r[i].seconds <= 1.5 * best * (1 + 1e-5); ++i) {
    if (i > 0) {
      EXPECT_LE(r[i - 1].max_boxes, r[i].max_boxes) << i;
    }
  }
  ASSERT_GT(i, 1u);               // the window holds several candidates
  EXPECT_GT(r[0].seconds, best);  // and its fewest boxes are not the fastest estimate
  for (std::size_t j = i; j < r.size(); ++j) {
    EXPECT_GT(r[j].seconds, 1.5 * best);
    if (j > i) {
      EXPECT_LE(r[j - 1].seconds, r[j].seconds);
    }
  }
  // With no window the fastest leads.
  ModelOptions exact;
  exact.tie_window = 0;
  EXPECT_DOUBLE_EQ(rank_candidates(pr, procs, algorithms, ds, exact)[0].seconds, best);
}

TEST(Choose, RefusedCandidatesComeLast) {
  ModelProblem pr;
  pr.m = pr.n = pr.k = 4096;
  pr.tile = 1;  // 4096^3 tiles: precise refuses (its cuts hold over 10^7 tiles), stepped does not
  const std::vector<ProcessorModel> procs = {{1.0, 0.0}, {2.0, 0.0}, {3.0, 0.0}};
  auto r = rank_candidates(pr, procs, {Algorithm::nrrp3d},
                           {Discretization::precise, Discretization::stepped});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].discretization, Discretization::stepped);
  EXPECT_TRUE(r[0].failed.empty());
  EXPECT_FALSE(r[1].failed.empty());
  EXPECT_FALSE(std::isfinite(r[1].seconds));
}

TEST(Choose, BadInput) {
  ModelProblem pr;
  pr.m = pr.n = pr.k = 64;
  pr.tile = 16;
  EXPECT_THROW(rank_candidates(pr, {}, {Algorithm::nrrp3d}, {Discretization::stepped}),
               std::invalid_argument);
  EXPECT_THROW(rank_candidates(pr, {{0.0, 0.0}}, {Algorithm::nrrp3d}, {Discretization::stepped}),
               std::invalid_argument);
  EXPECT_THROW(rank_candidates(pr, {{1.0, -1.0}}, {Algorithm::nrrp3d}, {Discretization::stepped}),
               std::invalid_argument);
}

}  // namespace
}  // namespace cuboid::partition
