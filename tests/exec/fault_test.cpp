// exec/fault: a plan that loses exactly one tile task, and the bit flips of a corrupted result.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <tuple>
#include <vector>

#include "exec/fault.hpp"
#include "exec/plan.hpp"
#include "partition/strategy.hpp"

namespace cuboid {
namespace {

// How many steps cover each (i, j, l), and whether the chain rules of plan.hpp hold.
using Coverage = std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, int>;
Coverage coverage(const exec::Plan& plan) {
  Coverage c;
  for (const auto& pp : plan.processors)
    for (const auto& s : pp.steps)
      for (std::int64_t l = s.l0; l < s.l1; ++l)
        for (std::int64_t j = s.c.j0; j < s.c.j1; ++j)
          for (std::int64_t i = s.c.i0; i < s.c.i1; ++i) ++c[{i, j, l}];
  return c;
}

void expect_chains_hold(const exec::Plan& plan) {
  for (const auto& pp : plan.processors) {
    const auto& st = pp.steps;
    for (std::size_t s = 0; s < st.size(); ++s) {
      if (!st[s].c_in && st[s].beta == exec::BetaUse::one) {
        // Continues a resident block: the previous step is on it and did not drain it.
        ASSERT_GT(s, 0u);
        EXPECT_TRUE(st[s - 1].c == st[s].c && st[s - 1].dest == st[s].dest && !st[s - 1].c_out);
      }
      if (!st[s].c_out) {
        ASSERT_LT(s + 1, st.size());
        EXPECT_TRUE(st[s + 1].c == st[s].c && !st[s + 1].c_in);
      }
    }
  }
}

TEST(DropTask, ExactlyOneTileTaskIsLeftOutAndTheRulesHold) {
  std::mt19937 rng(7);
  int tried = 0;
  for (auto alg : {partition::Algorithm::nrrp3d, partition::Algorithm::slab,
                   partition::Algorithm::grid, partition::Algorithm::column}) {
    for (int budget : {0, 600, 3000}) {
      for (int min_panels : {1, 4}) {
        const std::int64_t m = 37, n = 29, k = 45, tile = 8;
        const std::vector<double> speeds{1.0, 2.0, 0.5};
        const partition::TileExtent tiles{5, 4, 6};
        const auto zones =
            partition::partition_tiles(alg, partition::Discretization::precise, speeds, tiles);
        exec::PlanOptions o;
        o.budget_elements = {0, budget, budget};
        o.min_panels = {1, min_panels, min_panels};
        o.beta_is_one = rng() % 2;
        const exec::Plan plan = exec::make_plan(zones, m, n, k, tile, o);
        exec::Plan dropped = plan;
        const auto task = exec::drop_one_task(dropped);
        ASSERT_TRUE(task);
        ++tried;
        expect_chains_hold(dropped);
        const Coverage before = coverage(plan), after = coverage(dropped);
        for (const auto& [ijl, count] : before) {
          const auto [i, j, l] = ijl;
          const bool in = i >= task->c.i0 && i < task->c.i1 && j >= task->c.j0 && j < task->c.j1 &&
                          l >= task->l0 && l < task->l1;
          auto it = after.find(ijl);
          EXPECT_EQ(it == after.end() ? 0 : it->second, in ? 0 : count);
        }
        EXPECT_LE(task->c.rows(), tile);
        EXPECT_LE(task->c.cols(), tile);
        EXPECT_LE(task->l1 - task->l0, tile);
        EXPECT_GT(task->c.rows() * task->c.cols() * (task->l1 - task->l0), 0);
      }
    }
  }
  EXPECT_EQ(tried, 24);
}

TEST(DropTask, RefusesWhenOnlyBetaStepsOneTileDeepExist) {
  const auto zones = partition::partition_tiles(
      partition::Algorithm::nrrp3d, partition::Discretization::precise, {1.0}, {2, 2, 1});
  auto plan = exec::make_plan(zones, 16, 16, 8, 8, {});
  EXPECT_FALSE(exec::drop_one_task(plan));
}

TEST(Fault, NamesAndBitFlips) {
  EXPECT_EQ(exec::parse_fault("drop-task"), exec::Fault::drop_task);
  EXPECT_EQ(exec::parse_fault("corrupt"), exec::Fault::corrupt);
  EXPECT_FALSE(exec::parse_fault("melt"));
  // Every flip moves the value by at least 2 (or to Inf/NaN).
  for (double x : {0.0, 1e-300, 0.5, -1.999, 2.0, -3.5, 1e300}) {
    const double y = exec::flip_exponent_bit(x);
    EXPECT_TRUE(!std::isfinite(y) || std::abs(y - x) >= 2.0) << x << " -> " << y;
    const float xf = float(x), yf = exec::flip_exponent_bit(xf);
    EXPECT_TRUE(!std::isfinite(yf) || std::abs(double(yf) - double(xf)) >= 2.0) << xf;
  }
}

}  // namespace
}  // namespace cuboid
