// Properties of the planner, without Kokkos: every (C element, k index) pair is computed
// exactly once, beta is applied exactly once per element, budgets are respected.
#include <gtest/gtest.h>

#include <random>

#include "exec/plan.hpp"
#include "partition/strategy.hpp"

using namespace cuboid;
using exec::BetaUse;

namespace {

struct Problem {
  std::int64_t m, n, k, tile;
};

// Counts, per element of C, how many times each inner index is covered and beta applied.
void check_plan(const exec::Plan& plan, const Problem& p, bool beta_is_one) {
  std::vector<int> cover(std::size_t(p.m * p.n * p.k), 0);
  std::vector<int> beta(std::size_t(p.m * p.n), 0);
  for (const auto& r : plan.prescale)
    for (auto j = r.j0; j < r.j1; ++j)
      for (auto i = r.i0; i < r.i1; ++i) ++beta[std::size_t(i + p.m * j)];
  for (std::size_t q = 0; q < plan.processors.size(); ++q) {
    for (const auto& s : plan.processors[q].steps) {
      ASSERT_LT(s.c.i0, s.c.i1);
      ASSERT_LT(s.l0, s.l1);
      for (auto j = s.c.j0; j < s.c.j1; ++j)
        for (auto i = s.c.i0; i < s.c.i1; ++i) {
          for (auto l = s.l0; l < s.l1; ++l) ++cover[std::size_t(i + p.m * (j + p.n * l))];
          if (s.dest < 0 && s.beta == BetaUse::beta) ++beta[std::size_t(i + p.m * j)];
        }
      if (s.dest >= 0) {
        const auto& buf = plan.partials[std::size_t(s.dest)];
        EXPECT_EQ(buf.processor, int(q));
        EXPECT_LE(buf.c.i0, s.c.i0);
        EXPECT_GE(buf.c.i1, s.c.i1);
        EXPECT_LE(buf.c.j0, s.c.j0);
        EXPECT_GE(buf.c.j1, s.c.j1);
      }
    }
  }
  for (std::size_t e = 0; e < cover.size(); ++e) ASSERT_EQ(cover[e], 1) << "element-task " << e;
  for (std::size_t e = 0; e < beta.size(); ++e)
    ASSERT_EQ(beta[e], beta_is_one ? 0 : 1) << "C element " << e;
}

exec::Plan plan_for(partition::Algorithm a, partition::Discretization d,
                    const std::vector<double>& speeds, const Problem& p, exec::PlanOptions o) {
  const partition::TileExtent t{(p.m + p.tile - 1) / p.tile, (p.n + p.tile - 1) / p.tile,
                                (p.k + p.tile - 1) / p.tile};
  return exec::make_plan(partition::partition_tiles(a, d, speeds, t), p.m, p.n, p.k, p.tile, o);
}

}  // namespace

TEST(Plan, EveryAlgorithmCoversOnceAndAppliesBetaOnce) {
  const Problem p{31, 32, 33, 8};
  const std::vector<std::vector<double>> speed_sets = {{1.0}, {1.0, 3.0}, {5.0, 1.0, 2.0}};
  for (auto name : partition::algorithm_names()) {
    for (auto disc : {partition::Discretization::rounded, partition::Discretization::precise}) {
      for (const auto& speeds : speed_sets) {
        for (bool beta_one : {false, true}) {
          SCOPED_TRACE(std::string(name) + " " + std::string(partition::to_string(disc)) +
                       " p=" + std::to_string(speeds.size()) + (beta_one ? " beta=1" : ""));
          exec::PlanOptions o;
          o.beta_is_one = beta_one;
          check_plan(plan_for(*partition::parse_algorithm(name), disc, speeds, p, o), p, beta_one);
        }
      }
    }
  }
}

TEST(Plan, BuffersOverAllStepsStayWithinTheBudget) {
  // The buffers are sized by the largest panels and the largest C block over all steps, which
  // may come from different steps (pieces of different shapes): their sum must fit.
  std::mt19937 rng(7);
  int shrunk = 0;
  for (int trial = 0; trial < 60; ++trial) {
    std::uniform_int_distribution<std::int64_t> dim(20, 300);
    const Problem p{dim(rng), dim(rng), dim(rng), 16};
    const std::vector<exec::BufferCost> costs = {{2, 0}, {4, 0}, {4, 500}};
    const auto cost = costs[std::size_t(trial) % costs.size()];
    const std::int64_t budget =
        cost.fixed + std::uniform_int_distribution<std::int64_t>(4000, 60000)(rng);
    exec::PlanOptions o;
    o.budget_elements = std::vector<std::int64_t>{budget, budget, budget};
    o.buffer_cost = {cost, cost, cost};
    o.min_panels = {4, 1, 4};
    const auto alg = trial % 2 ? partition::Algorithm::nrrp3d : partition::Algorithm::grid;
    const auto plan = plan_for(alg, partition::Discretization::precise, {1.0, 2.5, 0.7}, p, o);
    check_plan(plan, p, false);
    for (const auto& pp : plan.processors) {
      if (pp.steps.empty()) continue;
      EXPECT_LE(exec::buffer_elements(pp, cost), budget)
          << p.m << "x" << p.n << "x" << p.k << " budget " << budget;
      // Without the whole-plan rule, each step alone would fit but the sum need not.
      std::int64_t step_max = 0;
      for (const auto& st : pp.steps)
        step_max = std::max(
            step_max, exec::staged_footprint(st.c.rows(), st.c.cols(), st.depth(), cost.c_blocks));
      shrunk += exec::buffer_elements(pp, cost) - cost.fixed > step_max ? 1 : 0;
    }
  }
  EXPECT_GT(shrunk, 0) << "no case had its largest panel and block in different steps";
}

TEST(Plan, BudgetBelowTheFixedBuffersIsRefused) {
  const Problem p{64, 64, 64, 16};
  exec::PlanOptions o;
  o.budget_elements = std::vector<std::int64_t>{100};
  o.buffer_cost = {{4, 100}};
  EXPECT_THROW(
      plan_for(partition::Algorithm::slab, partition::Discretization::rounded, {1.0}, p, o),
      std::runtime_error);
}

TEST(Plan, BudgetSplitsStepsAndKeepsBlocksResident) {
  const Problem p{96, 80, 200, 16};
  exec::PlanOptions o;
  const std::int64_t budget = 6000;  // elements: far less than one piece
  o.budget_elements = std::vector<std::int64_t>{budget, budget};
  const auto plan =
      plan_for(partition::Algorithm::slab, partition::Discretization::rounded, {1.0, 1.0}, p, o);
  check_plan(plan, p, false);
  for (const auto& pp : plan.processors) {
    EXPECT_GT(pp.steps.size(), std::size_t(pp.pieces));
    for (std::size_t s = 0; s < pp.steps.size(); ++s) {
      const auto& st = pp.steps[s];
      EXPECT_LE(exec::staged_footprint(st.c.rows(), st.c.cols(), st.depth()), budget);
      const bool continues = s > 0 && !pp.steps[s - 1].c_out;
      if (continues) {
        EXPECT_TRUE(pp.steps[s - 1].c == st.c);
        EXPECT_EQ(st.beta, BetaUse::one);
        EXPECT_FALSE(st.c_in);
      }
    }
    EXPECT_TRUE(pp.steps.back().c_out);
  }
}

TEST(Plan, SplitKGoesThroughPartialsOwnedByLowerProcessorsFirst) {
  const Problem p{64, 64, 256, 16};
  // Equal speeds on a largeK cuboid: nrrp3d cuts k, so several processors share C tiles.
  const auto plan = plan_for(partition::Algorithm::nrrp3d, partition::Discretization::precise,
                             {1.0, 1.0, 1.0, 1.0}, p, {});
  check_plan(plan, p, false);
  EXPECT_TRUE(plan.k_split);
  EXPECT_FALSE(plan.partials.empty());
  for (const auto& buf : plan.partials)
    EXPECT_GT(buf.processor, 0);  // processor 0 owns what it touches
}

TEST(Plan, BetaZeroNeedsNoOldC) {
  const Problem p{40, 40, 40, 8};
  exec::PlanOptions o;
  o.beta_is_zero = true;
  const auto plan =
      plan_for(partition::Algorithm::nrrp3d, partition::Discretization::precise, {1.0, 2.0}, p, o);
  for (const auto& pp : plan.processors)
    for (const auto& s : pp.steps)
      if (s.beta != BetaUse::one) {
        EXPECT_FALSE(s.c_in);
      }
}

TEST(Plan, RejectsHolesAndOutsidePieces) {
  using partition::TileBox;
  std::vector<partition::TileZone> hole{{TileBox{{0, 0, 0}, {1, 2, 2}}}};
  EXPECT_THROW(exec::make_plan(hole, 16, 16, 16, 8, {}), std::invalid_argument);
  std::vector<partition::TileZone> outside{{TileBox{{0, 0, 0}, {3, 2, 2}}}};
  EXPECT_THROW(exec::make_plan(outside, 16, 16, 16, 8, {}), std::invalid_argument);
}

TEST(Plan, MinPanelsCutsEveryPieceAlongK) {
  const Problem p{64, 64, 512, 16};
  exec::PlanOptions o;
  o.budget_elements =
      std::vector<std::int64_t>{0, 1 << 20};  // the second processor fits everything in one step...
  o.min_panels = {1, 4};                      // ...but is asked for four panels per piece
  const auto plan =
      plan_for(partition::Algorithm::slab, partition::Discretization::rounded, {1.0, 1.0}, p, o);
  check_plan(plan, p, false);
  EXPECT_EQ(plan.processors[0].steps.size(), std::size_t(plan.processors[0].pieces));
  EXPECT_GE(plan.processors[1].steps.size(), 4u * std::size_t(plan.processors[1].pieces));
  for (const auto& s : plan.processors[1].steps) EXPECT_EQ(s.depth() % p.tile, 0);
}

TEST(Plan, BlockTilesCutEveryPieceIntoSmallBlocks) {
  const Problem p{100, 90, 120, 8};  // 13 x 12 x 15 tiles, the last ones partial
  for (std::int64_t g : {1, 2, 3, 5}) {
    for (auto alg : {partition::Algorithm::nrrp3d, partition::Algorithm::grid}) {
      exec::PlanOptions o;
      o.block_tiles = g;
      o.beta_is_one = false;
      const auto plan = plan_for(alg, partition::Discretization::precise, {1.0, 2.0, 0.5}, p, o);
      check_plan(plan, p, false);
      for (const auto& pp : plan.processors)
        for (const auto& s : pp.steps) {
          EXPECT_LE(s.c.rows(), g * p.tile);
          EXPECT_LE(s.c.cols(), g * p.tile);
          EXPECT_EQ(s.c.i0 % p.tile, 0);
          EXPECT_EQ(s.c.j0 % p.tile, 0);
        }
    }
  }
}

TEST(Plan, SharedStepsFitEveryBudget) {
  // Two copying processors with different budgets and the host: every step of every processor
  // must fit the buffers of both copying ones, over the whole plan.
  std::mt19937 rng(11);
  for (int trial = 0; trial < 20; ++trial) {
    std::uniform_int_distribution<std::int64_t> dim(40, 240);
    const Problem p{dim(rng), dim(rng), dim(rng), 16};
    exec::PlanOptions o;
    const exec::BufferCost staged{4, 300}, device{2, 0};
    const std::int64_t b1 = 300 + std::uniform_int_distribution<std::int64_t>(6000, 40000)(rng);
    const std::int64_t b2 = std::uniform_int_distribution<std::int64_t>(6000, 40000)(rng);
    o.budget_elements = std::vector<std::int64_t>{0, b1, b2};
    o.buffer_cost = {exec::BufferCost{}, staged, device};
    o.min_panels = {1, 4, 4};
    o.shared_steps = true;
    o.block_tiles = 1 + trial % 4;
    const auto plan =
        plan_for(partition::Algorithm::nrrp3d, partition::Discretization::precise, {2, 1, 1}, p, o);
    check_plan(plan, p, false);
    EXPECT_LE(exec::shared_buffer_elements(plan, staged), b1) << trial;
    EXPECT_LE(exec::shared_buffer_elements(plan, device), b2) << trial;
  }
}

// The stealing plan of two processors (speeds 1 and 2) with blocks of g tiles in the tail.
exec::Plan coarse_head_plan(const Problem& p, std::int64_t g, exec::PlanOptions o) {
  o.block_tiles = g;
  o.coarse_head = true;
  const auto plan =
      plan_for(partition::Algorithm::nrrp3d, partition::Discretization::precise, {1.0, 2.0}, p, o);
  check_plan(plan, p, false);
  return plan;
}

TEST(Plan, CoarseHeadCutsOnlyTheTailToBlockTiles) {
  const Problem p{200, 184, 96, 8};
  for (std::int64_t g : {1, 2, 3}) {
    const auto plan = coarse_head_plan(p, g, {});
    for (const auto& pp : plan.processors) {
      double total = 0, pos = 0;
      for (const auto& s : pp.steps) total += double(s.c.rows() * s.c.cols() * s.depth());
      int coarse = 0;
      for (const auto& s : pp.steps) {
        pos += double(s.c.rows() * s.c.cols() * s.depth());
        const std::int64_t side = std::max(s.c.rows(), s.c.cols());
        EXPECT_LE(side, 4 * g * p.tile);
        if (pos > 0.75 * total) {
          EXPECT_LE(side, g * p.tile) << "a large block in the last quarter";
        } else if (pos > 0.5 * total) {
          EXPECT_LE(side, 2 * g * p.tile) << "a block too large in the third quarter";
        }
        if (side > g * p.tile) ++coarse;
      }
      EXPECT_GT(coarse, 0) << "the head has blocks larger than block_tiles";
      EXPECT_LE(pp.steps.back().c.rows(), g * p.tile);
    }
  }
}

TEST(Plan, ConsecutiveBlocksShareAPanel) {
  // A copying processor keeps the panels of the step before: the plan makes consecutive steps
  // share one wherever their blocks share rows or columns and a k range.
  const Problem p{200, 184, 96, 8};
  for (std::int64_t g : {1, 2, 3}) {
    exec::PlanOptions o;
    o.shared_steps = true;
    o.min_panels = {4, 4};
    const auto plan = coarse_head_plan(p, g, o);
    int boundaries = 0, tail_blocks = 0;
    for (const auto& pp : plan.processors) {
      const auto& steps = pp.steps;
      // Each piece's k range, and how many chains (blocks) it has.
      std::vector<std::int64_t> lo(std::size_t(pp.pieces), p.k), hi(std::size_t(pp.pieces), 0);
      std::vector<int> chains(std::size_t(pp.pieces), 0);
      for (std::size_t s = 0; s < steps.size(); ++s) {
        const auto piece = std::size_t(steps[s].piece);
        lo[piece] = std::min(lo[piece], steps[s].l0);
        hi[piece] = std::max(hi[piece], steps[s].l1);
        if (s == 0 || steps[s - 1].c_out) ++chains[piece];
      }
      for (std::size_t s = 0; s < steps.size(); ++s) {
        if (!(s == 0 || steps[s - 1].c_out)) continue;
        std::size_t e = s;  // the chain is [s, e]
        while (!steps[e].c_out) ++e;
        const auto& st = steps[s];
        const auto piece = std::size_t(st.piece);
        // A tail block of a piece with enough blocks is one step over the piece's depth (the
        // processor's first step aside, cut for the pipeline fill).
        if (st.c.rows() <= g * p.tile && st.c.cols() <= g * p.tile && chains[piece] >= 4 && s > 1) {
          ++tail_blocks;
          EXPECT_EQ(e, s) << "a tail block cut along k";
          EXPECT_EQ(st.l0, lo[piece]);
          EXPECT_EQ(st.l1, hi[piece]);
        }
        if (s == 0 || steps[s - 1].piece != st.piece) continue;
        const auto& prev = steps[s - 1];
        const bool rows = prev.c.i0 == st.c.i0 && prev.c.i1 == st.c.i1;
        const bool cols = prev.c.j0 == st.c.j0 && prev.c.j1 == st.c.j1;
        bool same_k_inside = false;
        for (std::size_t t = s; t <= e; ++t)
          same_k_inside = same_k_inside || (steps[t].l0 == prev.l0 && steps[t].l1 == prev.l1);
        if (!(rows || cols) || !same_k_inside) continue;
        ++boundaries;
        // Where the two blocks could share a panel, they do.
        EXPECT_EQ(st.l0, prev.l0) << "step " << s;
        EXPECT_EQ(st.l1, prev.l1) << "step " << s;
      }
    }
    EXPECT_GT(boundaries, 0) << "block_tiles " << g;
    EXPECT_GT(tail_blocks, 0) << "block_tiles " << g;
  }
}

// With a copying processor's rates, its first block is cut for the pipeline's fill: one tile,
// then each k-panel deeper by the ratio of its GEMM time to its copy time (3 here: 2 r c link
// over (r + c) element rate, r = c = 96, 8 bytes, 1 GB/s, 4 GFLOP/s), within the budget. A
// ratio not above 1 keeps the one-tile first step and the min_panels panels.
TEST(Plan, FirstBlockIsCutForTheFillByTheRates) {
  const Problem p{96, 96, 320, 8};
  const auto zones = partition::partition_tiles(
      partition::Algorithm::slab, partition::Discretization::rounded, {1.0}, {12, 12, 40});
  auto depths = [&](double gflops, std::int64_t budget) {
    exec::PlanOptions o;
    o.min_panels.assign(1, 4);
    o.budget_elements.assign(1, budget);
    o.fill = {exec::PlanOptions::FillRate{gflops, 1.0}};
    o.element_bytes = 8;
    const auto plan = exec::make_plan(zones, p.m, p.n, p.k, p.tile, o);
    check_plan(plan, p, false);
    std::vector<std::int64_t> d;
    for (const auto& s : plan.processors[0].steps) d.push_back(s.depth());
    return d;
  };
  EXPECT_EQ(depths(4, 0), (std::vector<std::int64_t>{8, 24, 72, 216}));
  // A budget that allows panels of 80 at most beside the block: the growth stops there.
  const std::int64_t budget = 2 * 96 * 96 + 4 * 96 * 80;
  EXPECT_EQ(depths(4, budget), (std::vector<std::int64_t>{8, 24, 72, 80, 80, 56}));
  // The link bounds the block (ratio 1/2): the default cut.
  EXPECT_EQ(depths(24, 0), (std::vector<std::int64_t>{8, 72, 80, 80, 80}));
}
