// The time model of a plan: in place, a processor's steps take their flops at its rate; one that
// copies overlaps its copies with its GEMMs, so that only the first panels in and the last block
// out stay exposed when the link is fast, and the link sets the time when it is slow.
#include <gtest/gtest.h>

#include "exec/model.hpp"
#include "partition/strategy.hpp"

using namespace cuboid;

namespace {

// One zone (the whole cuboid) for one processor, cut into `panels` k-panels.
exec::Plan one_processor(std::int64_t n, std::int64_t tile, int panels, std::int64_t budget) {
  const std::int64_t t = n / tile;
  const auto zones = partition::partition_tiles(
      partition::Algorithm::nrrp3d, partition::Discretization::precise, {1.0}, {t, t, t});
  exec::PlanOptions o;
  o.beta_is_zero = true;
  o.budget_elements = {budget};
  o.min_panels = {panels};
  return exec::make_plan(zones, n, n, n, tile, o);
}

TEST(Model, InPlaceIsFlopsAtTheRate) {
  const exec::Plan plan = one_processor(512, 64, 1, 0);
  const auto p = exec::predict(plan, {exec::ProcessorRate{100, 0, 0}}, 8);
  ASSERT_EQ(p.seconds.size(), 1u);
  EXPECT_NEAR(p.seconds[0], 2.0 * 512 * 512 * 512 / 100e9, 1e-12);
  EXPECT_EQ(p.reduction_s, 0.0);
  EXPECT_DOUBLE_EQ(p.total_s, p.seconds[0]);
}

TEST(Model, OneStepPaysEveryCopyInFull) {
  const std::int64_t n = 512;
  const exec::Plan plan = one_processor(n, 64, 1, 0);
  ASSERT_EQ(plan.processors[0].steps.size(), 1u);
  const exec::ProcessorRate r{1000, 10, 20};
  const double bytes = double(n) * n * 8;
  const double expect = 2 * bytes / 10e9 + 2.0 * n * n * n / 1000e9 + bytes / 20e9;
  EXPECT_NEAR(exec::predict(plan, {r}, 8).seconds[0], expect, 1e-9 * expect);
}

TEST(Model, AFastLinkHidesAllButTheEnds) {
  const std::int64_t n = 2048, tile = 128;
  const exec::Plan plan = one_processor(n, tile, 16, 0);
  ASSERT_GT(plan.processors[0].steps.size(), 8u);
  const exec::ProcessorRate r{1000, 1000, 1000};  // copies far faster than GEMMs
  const double gemm = 2.0 * n * n * n / 1000e9;
  const double t = exec::predict(plan, {r}, 8).seconds[0];
  EXPECT_GT(t, gemm);
  // The first step is one tile deep: its panels, and the C block out, are all that shows.
  const double ends = (2.0 * n * tile + double(n) * n) * 8 / 1000e9;
  EXPECT_LE(t, gemm + ends * 1.001);
}

TEST(Model, ASlowLinkSetsTheTime) {
  const std::int64_t n = 2048, tile = 128;
  const exec::Plan plan = one_processor(n, tile, 16, 0);
  const exec::ProcessorRate r{100000, 1, 1};  // GEMMs far faster than copies
  double in = 0;
  for (const auto& s : plan.processors[0].steps)
    in += double(s.c.rows()) * double(s.depth()) + double(s.depth()) * double(s.c.cols());
  const double t = exec::predict(plan, {r}, 8).seconds[0];
  // At least every input over the link, at most that plus C out and every GEMM.
  EXPECT_GE(t, in * 8 / 1e9);
  EXPECT_LE(t, (in + double(n) * n) * 8 / 1e9 + 2.0 * n * n * n / 100000e9 * 1.001);
}

TEST(Model, SplitKAddsTheReductionAndBadInputIsRefused) {
  const std::int64_t t = 8;
  // Two processors, each with half of k over the whole of C: one writes a partial buffer.
  const std::vector<partition::TileZone> zones = {{partition::TileBox{{0, 0, 0}, {t, t, t / 2}}},
                                                  {partition::TileBox{{0, 0, t / 2}, {t, t, t}}}};
  exec::PlanOptions o;
  o.beta_is_zero = true;
  const exec::Plan plan = exec::make_plan(zones, 256, 256, 256, 32, o);
  ASSERT_FALSE(plan.partials.empty());
  const auto p = exec::predict(plan, {{100, 0, 0}, {100, 0, 0}}, 8, 10.0);
  double partial = 0;
  for (const auto& b : plan.partials) partial += double(b.c.rows()) * double(b.c.cols()) * 8;
  EXPECT_NEAR(p.reduction_s, 3 * partial / 10e9, 1e-15);
  EXPECT_NEAR(p.total_s, std::max(p.seconds[0], p.seconds[1]) + p.reduction_s, 1e-15);
  EXPECT_THROW(exec::predict(plan, {{100, 0, 0}}, 8), std::invalid_argument);
  EXPECT_THROW(exec::predict(plan, {{100, 0, 0}, {0, 0, 0}}, 8), std::invalid_argument);
}

}  // namespace

// The fill cut by the rates (PlanOptions::fill) is predicted no slower than the default first
// step of one tile and min_panels panels, and faster where the default's second panel's copy
// outlasts the first GEMM.
TEST(Model, FillCutByTheRatesIsPredictedNoSlower) {
  const std::int64_t n = 512, tile = 32;
  const auto zones = partition::partition_tiles(
      partition::Algorithm::nrrp3d, partition::Discretization::precise, {1.0}, {16, 16, 16});
  const exec::ProcessorRate rate{32, 1, 1};  // GEMM/copy ratio of a panel: 2
  auto predicted = [&](bool fill) {
    exec::PlanOptions o;
    o.beta_is_zero = true;
    o.budget_elements = {0};
    o.min_panels = {4};
    if (fill) o.fill = {exec::PlanOptions::FillRate{rate.gflops, rate.h2d_gbs}};
    return exec::predict(exec::make_plan(zones, n, n, n, tile, o), {rate}, 8).seconds[0];
  };
  EXPECT_LT(predicted(true), predicted(false));
}
