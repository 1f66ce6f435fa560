// Work stealing without an engine: units keep chains whole and overlapping writes together,
// every step is handed out exactly once, a started unit never moves, and the strategies pick
// the units they say they pick.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "exec/schedule.hpp"
#include "partition/strategy.hpp"

using namespace cuboid;

namespace {

// The clock StealScheduler measures rates with (exec::now_seconds, without the engine's library).
double clock_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

exec::Plan plan_for(partition::Algorithm a, const std::vector<double>& speeds, std::int64_t m,
                    std::int64_t n, std::int64_t k, std::int64_t tile, exec::PlanOptions o) {
  const partition::TileExtent t{(m + tile - 1) / tile, (n + tile - 1) / tile,
                                (k + tile - 1) / tile};
  return exec::make_plan(
      partition::partition_tiles(a, partition::Discretization::precise, speeds, t), m, n, k, tile,
      o);
}

bool overlap(const exec::Rect& a, const exec::Rect& b) {
  return a.i0 < b.i1 && b.i0 < a.i1 && a.j0 < b.j1 && b.j0 < a.j1;
}

// Every step in one unit; a unit's steps are whole chains of its owner, in plan order; steps of
// different units never write overlapping elements of one destination.
void check_units(const exec::Plan& plan, const std::vector<exec::Unit>& units) {
  std::map<std::pair<int, std::size_t>, int> unit_of;
  for (std::size_t u = 0; u < units.size(); ++u) {
    const auto& steps = plan.processors[std::size_t(units[u].owner)].steps;
    ASSERT_FALSE(units[u].steps.empty());
    const std::size_t first = units[u].steps.front();
    EXPECT_TRUE(first == 0 || steps[first - 1].c_out) << "unit " << u << " starts mid-chain";
    EXPECT_TRUE(steps[units[u].steps.back()].c_out) << "unit " << u << " ends mid-chain";
    for (std::size_t i = 0; i < units[u].steps.size(); ++i) {
      const std::size_t s = units[u].steps[i];
      EXPECT_TRUE(unit_of.emplace(std::make_pair(units[u].owner, s), int(u)).second);
      if (i > 0) {
        EXPECT_GT(s, units[u].steps[i - 1]);
        if (!steps[units[u].steps[i - 1]].c_out) {
          EXPECT_EQ(s, units[u].steps[i - 1] + 1);
        }
      }
    }
  }
  std::size_t total = 0;
  for (const auto& pp : plan.processors) total += pp.steps.size();
  EXPECT_EQ(unit_of.size(), total);
  for (const auto& [a, ua] : unit_of)
    for (const auto& [b, ub] : unit_of) {
      if (ua == ub) continue;
      const auto& sa = plan.processors[std::size_t(a.first)].steps[a.second];
      const auto& sb = plan.processors[std::size_t(b.first)].steps[b.second];
      if (sa.dest == sb.dest && overlap(sa.c, sb.c))
        ADD_FAILURE() << "units " << ua << " and " << ub << " write the same elements";
    }
}

}  // namespace

TEST(Schedule, StrategyNames) {
  for (auto name : exec::steal_policy_names())
    EXPECT_EQ(exec::to_string(*exec::parse_steal_policy(name)), name);
  EXPECT_FALSE(exec::parse_steal_policy("steal"));
}

TEST(Schedule, UnitsAreWholeChainsAndKeepOverlappingWritesTogether) {
  exec::PlanOptions o;
  o.budget_elements = {3000, 0, 5000};
  o.min_panels = {4, 1, 4};
  o.block_tiles = 2;
  o.shared_steps = true;
  // k split between processors (partial buffers), budgets that stream along k.
  const auto plan = plan_for(partition::Algorithm::nrrp3d, {2, 1, 1.5}, 64, 56, 160, 8, o);
  ASSERT_TRUE(plan.k_split);
  const auto units = exec::make_units(plan, sizeof(double));
  check_units(plan, units);
  EXPECT_GT(units.size(), plan.processors.size() * 4);

  // One C block computed by two pieces of one processor in a row: one unit, in order.
  std::vector<partition::TileZone> zones(1);
  zones[0].push_back(partition::TileBox{{0, 0, 0}, {2, 2, 2}});
  zones[0].push_back(partition::TileBox{{0, 0, 2}, {2, 2, 4}});
  const auto twice = exec::make_plan(zones, 16, 16, 32, 8, {});
  const auto one = exec::make_units(twice, sizeof(double));
  check_units(twice, one);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].steps, (std::vector<std::size_t>{0, 1}));
  EXPECT_TRUE(one[0].c_in) << "the second piece adds to the first: it brings C in";
}

TEST(Schedule, AutoTaskTilesBoundsTheLargestUnit) {
  exec::PlanOptions o;
  o.shared_steps = true;
  const std::int64_t m = 512, n = 512, k = 512, tile = 16;
  const partition::TileExtent t{32, 32, 32};
  const auto zones = partition::partition_tiles(partition::Algorithm::nrrp3d,
                                                partition::Discretization::precise, {1, 2}, t);
  const std::int64_t g = exec::auto_task_tiles(zones, m, n, k, tile, o, 8, 64);
  EXPECT_GE(g, 4) << "at least 64 elements a side";
  o.block_tiles = g;
  const auto units = exec::make_units(exec::make_plan(zones, m, n, k, tile, o), 8);
  double total = 0, largest = 0;
  for (const auto& u : units) total += u.flops, largest = std::max(largest, u.flops);
  EXPECT_LE(largest, total / 16);
  // The next larger side would not have done.
  o.block_tiles = g + 1;
  double largest2 = 0;
  for (const auto& u : exec::make_units(exec::make_plan(zones, m, n, k, tile, o), 8))
    largest2 = std::max(largest2, u.flops);
  EXPECT_GT(largest2, total / 16);
}

namespace {

// A plan written by hand: processor q gets the given steps, each a chain of its own unless
// `chained` lists how many steps each chain has.
exec::Step step(std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1,
                std::int64_t depth, bool c_in) {
  exec::Step s;
  s.c = exec::Rect{i0, i1, j0, j1};
  s.l0 = 0, s.l1 = depth;
  s.c_in = c_in;
  s.c_out = true;
  s.beta = c_in ? exec::BetaUse::beta : exec::BetaUse::zero;
  return s;
}

exec::Plan hand_plan(std::vector<std::vector<exec::Step>> steps) {
  exec::Plan plan;
  plan.m = plan.n = 64, plan.k = 64, plan.tile = 8;
  for (auto& s : steps) {
    exec::ProcessorPlan pp;
    pp.steps = std::move(s);
    plan.processors.push_back(std::move(pp));
  }
  return plan;
}

// The steps of the three units below: same flops, different surfaces and C needs.
std::vector<exec::Step> three_units() {
  return {step(0, 4, 0, 16, 16, true),      // 0: 4 x 16, brings C in: most bytes per flop
          step(8, 16, 0, 8, 16, false),     // 1: square, no old C: fewest bytes per flop
          step(16, 20, 0, 16, 16, false)};  // 2: 4 x 16, no old C
}

int owner_after_steal(exec::StealPolicy strategy, bool thief_copies, bool victim_copies) {
  const auto plan = hand_plan({{}, three_units()});
  exec::ScheduleOptions o;
  o.policy = strategy;
  exec::StealScheduler s(plan, exec::make_units(plan, 8), {thief_copies, victim_copies}, o,
                         clock_now());
  exec::StepRef ref;
  EXPECT_TRUE(s.next(0, ref));  // idle: steals at once (and one more in advance)
  EXPECT_TRUE(ref.stolen);
  EXPECT_EQ(ref.owner, 1);
  EXPECT_GE(s.counts(0).stolen_steps, 1);
  EXPECT_EQ(s.counts(0).stolen_steps, s.counts(1).lost_steps);
  return int(ref.step - plan.processors[1].steps.data());
}

}  // namespace

TEST(Schedule, CheapestTakesTheUnitWithTheLeastToMove) {
  // A copying thief from a processor that computes in place: the unit with no old C to bring
  // in (cost 2, not 3), then the one with the fewest bytes per flop.
  EXPECT_EQ(owner_after_steal(exec::StealPolicy::cheapest, true, false), 1);
  // A thief in host memory (cost 0 for all) from a copying victim: the unit that spares the
  // victim the most bytes per flop. Unit 0 has the most bytes of its own, but taking unit 1
  // also puts units 0 and 2 (same columns, same k range) next to each other, so that the
  // victim brings their B panel in once: 320 + 256 elements saved against 448.
  EXPECT_EQ(owner_after_steal(exec::StealPolicy::cheapest, false, true), 1);
  // random: the victim's last unit, whatever it costs.
  EXPECT_EQ(owner_after_steal(exec::StealPolicy::random, true, false), 2);
  EXPECT_EQ(owner_after_steal(exec::StealPolicy::random, false, true), 2);
}

namespace {

// The step a copying processor 0 steals first from processor 1 (in host memory), in advance,
// once it has taken its own one step. `speeds`: as the partition assumed them (empty: equal).
const exec::Step* first_stolen(const exec::Plan& plan, std::vector<double> speeds = {}) {
  exec::ScheduleOptions o;
  o.policy = exec::StealPolicy::cheapest;
  o.speeds = std::move(speeds);
  exec::StealScheduler s(plan, exec::make_units(plan, 8), {true, false}, o, clock_now());
  exec::StepRef r;
  EXPECT_TRUE(s.next(0, r));  // its own step; fewer than two ready: it steals one unit now
  EXPECT_FALSE(r.stolen);
  EXPECT_TRUE(s.next(0, r));
  EXPECT_TRUE(r.stolen);
  return r.step;
}

}  // namespace

TEST(Schedule, CheapestCountsThePanelsACopyingThiefAlreadyHolds) {
  // Processor 0 copies and runs one step on columns 0-8; of processor 1's units (alike in flops
  // and bytes), the middle one has the same columns and k range: its B panel is in the
  // thief's memory already (cost 1, not 2).
  const auto plan = hand_plan({{step(0, 8, 0, 8, 16, false)},
                               {step(8, 16, 24, 32, 16, false), step(16, 24, 0, 8, 16, false),
                                step(24, 32, 24, 32, 16, false)}});
  const auto units = exec::make_units(plan, 8);
  EXPECT_EQ(exec::steal_cost(plan, units[1], true, &plan.processors[0].steps[0]), 2);
  EXPECT_EQ(exec::steal_cost(plan, units[2], true, &plan.processors[0].steps[0]), 1);
  EXPECT_EQ(exec::steal_cost(plan, units[2], false, &plan.processors[0].steps[0]), 0);
  EXPECT_EQ(first_stolen(plan), &plan.processors[1].steps[1]);
}

TEST(Schedule, CheapestRanksBytesPerFlopBeforeSharedPanels) {
  // Unit 1 shares its B panel with the thief's step (cost 1) but still brings 96 elements for
  // 1,024 flops; unit 0 brings all of its panels (cost 2) yet 1,280 for 16,384 flops. The thief
  // is four times faster, so that taking unit 0 pays by more than half of its time there.
  const auto plan = hand_plan({{step(0, 2, 0, 8, 16, false)},
                               {step(16, 32, 16, 32, 32, false), step(8, 12, 0, 8, 16, false)}});
  const auto units = exec::make_units(plan, 8);
  EXPECT_EQ(exec::steal_cost(plan, units[2], true, &plan.processors[0].steps[0]), 1);
  EXPECT_EQ(exec::steal_cost(plan, units[1], true, &plan.processors[0].steps[0]), 2);
  EXPECT_EQ(first_stolen(plan, {4.0, 1.0}), &plan.processors[1].steps[0]);
}

TEST(Schedule, CheapestTakesFromTheBackHalfOfTheQueue) {
  // Unit 0, first in the victim's queue, has the fewest bytes per flop (1,088 for 8,192) but
  // lies in the front half by flops: the victim runs it next, and the thief takes from the back
  // (four units of 704 for 4,096 each, the plan's fine tail), the last of them on a tie.
  std::vector<exec::Step> victim{step(0, 8, 32, 40, 64, false)};
  for (std::int64_t i = 0; i < 4; ++i)
    victim.push_back(step(32 + 4 * i, 36 + 4 * i, 0, 32, 16, false));
  const auto plan = hand_plan({{step(60, 62, 60, 62, 2, false)}, victim});
  EXPECT_EQ(first_stolen(plan), &plan.processors[1].steps[4]);
}

TEST(Schedule, CheapestCountsTheThiefsCopiesInWhetherAStealPays) {
  // Two units of 4,096 flops on processor 1 (in host memory), nothing left on the copying
  // processor 0: in flops a steal pays (about 4 us against 8 us at the assumed 1 GFLOP/s each),
  // but not when the unit's 5,632 bytes take 5.6 ms over a 1 MB/s link.
  const auto plan = hand_plan({{step(60, 62, 60, 62, 2, false)},
                               {step(32, 36, 0, 32, 16, false), step(36, 40, 0, 32, 16, false)}});
  auto stolen_with_link = [&](double gbs) {
    exec::ScheduleOptions o;
    o.policy = exec::StealPolicy::cheapest;
    o.link_gbs = {gbs, 0};
    exec::StealScheduler s(plan, exec::make_units(plan, 8), {true, false}, o, clock_now());
    exec::StepRef r;
    EXPECT_TRUE(s.next(0, r));
    EXPECT_FALSE(r.stolen);
    while (s.next(0, r)) {
    }
    return s.counts(0).stolen_steps;
  };
  EXPECT_EQ(stolen_with_link(1e-3), 0);
  EXPECT_GE(stolen_with_link(100), 1);
}

TEST(Schedule, CheapestBreaksNearTiesTowardFewerBytes) {
  // Processor 0 takes its own step, then steals in advance from processor 1, whose units are F
  // = 2,048 flops each. Speeds assumed equal (1,000 flops/s), nothing reported yet. `random`
  // steals when the thief would finish first, by any margin; `cheapest` when a move that adds
  // bytes (a copying thief) gains more than half the unit's time, and when a move that saves
  // bytes (a thief in host memory relieving a copying victim) loses less than that.
  auto stolen = [](exec::StealPolicy strategy, bool thief_copies, std::int64_t own_flops,
                   int victim_units) {
    std::vector<exec::Step> victim;
    for (int i = 0; i < victim_units; ++i)
      victim.push_back(step(8 + 8 * i, 16 + 8 * i, 0, 8, 16, false));
    const auto plan = hand_plan({{step(0, 2, 0, 2, own_flops / 8, false)}, victim});
    exec::ScheduleOptions o;
    o.policy = strategy;
    o.speeds = {1e-6, 1e-6};
    exec::StealScheduler s(plan, exec::make_units(plan, 8), {thief_copies, !thief_copies}, o,
                           clock_now());
    exec::StepRef r;
    EXPECT_TRUE(s.next(0, r));
    EXPECT_FALSE(r.stolen);
    return s.counts(0).stolen_steps;
  };
  const std::int64_t F = 2048;
  // A thief in host memory holding F/4, one unit left on the copying victim: the thief would
  // finish it a quarter of a unit after the victim would. Taking it spares the victim's copies.
  EXPECT_EQ(stolen(exec::StealPolicy::random, false, F / 4, 1), 0);
  EXPECT_EQ(stolen(exec::StealPolicy::cheapest, false, F / 4, 1), 1);
  // A copying thief, two units on the victim in host memory. Holding F/4, the thief gains three
  // quarters of a unit: both steal. Holding 3F/4, it gains a quarter, for the unit's copies:
  // only `random` steals.
  EXPECT_EQ(stolen(exec::StealPolicy::random, true, F / 4, 2), 1);
  EXPECT_EQ(stolen(exec::StealPolicy::cheapest, true, F / 4, 2), 1);
  EXPECT_EQ(stolen(exec::StealPolicy::random, true, 3 * F / 4, 2), 1);
  EXPECT_EQ(stolen(exec::StealPolicy::cheapest, true, 3 * F / 4, 2), 0);
}

TEST(Schedule, CheapestLeavesToAProcessorInHostMemoryWhatItWouldFinishNoLater) {
  // Processor 0 copies and takes its own step of F/4 flops, then steals in advance; processor 1
  // (copying) has two units of F; processor 2 has one step of F/8 left. Speeds assumed equal
  // (1,000 flops/s), nothing reported. Taking a unit of processor 1 pays for processor 0 (done
  // at 1.25 F against 2 F, by more than half a unit); but when processor 2 is in host memory it
  // would be done with the unit at 1.125 F, sooner and with no bytes to move: `cheapest` leaves
  // it there, and processor 2 takes it in advance with its own step. `random` does not look.
  const std::int64_t F = 2048;
  auto run = [&](exec::StealPolicy strategy, bool third_copies, int& third_stole) {
    const auto plan = hand_plan({{step(0, 2, 0, 2, F / 32, false)},
                                 {step(8, 16, 0, 8, 16, false), step(16, 24, 0, 8, 16, false)},
                                 {step(40, 42, 40, 42, F / 64, false)}});
    exec::ScheduleOptions o;
    o.policy = strategy;
    o.speeds = {1e-6, 1e-6, 1e-6};
    exec::StealScheduler s(plan, exec::make_units(plan, 8), {true, true, third_copies}, o,
                           clock_now());
    exec::StepRef r;
    EXPECT_TRUE(s.next(0, r));
    EXPECT_FALSE(r.stolen);
    const int first = s.counts(0).stolen_steps;
    EXPECT_TRUE(s.next(2, r));
    EXPECT_FALSE(r.stolen);
    third_stole = s.counts(2).stolen_steps;
    return first;
  };
  int third = 0;
  EXPECT_EQ(run(exec::StealPolicy::cheapest, false, third), 0);
  EXPECT_EQ(third, 1) << "the processor in host memory takes the unit";
  EXPECT_EQ(run(exec::StealPolicy::random, false, third), 1);
  // With processor 2 copying too, nothing runs the unit for fewer bytes: processor 0 takes it.
  EXPECT_EQ(run(exec::StealPolicy::cheapest, true, third), 1);
}

TEST(Schedule, EveryStealIsRecordedWithTheEstimatesThatMadeItPay) {
  // A copying processor 0 with nothing of its own steals from processor 1 (in host memory).
  for (auto strategy : {exec::StealPolicy::random, exec::StealPolicy::cheapest}) {
    SCOPED_TRACE(std::string(exec::to_string(strategy)));
    auto theirs = three_units();
    for (exec::Step x : three_units()) {  // three more, on other rows
      x.c.i0 += 32, x.c.i1 += 32;
      theirs.push_back(x);
    }
    const auto plan = hand_plan({{}, theirs});
    const auto units = exec::make_units(plan, 8);
    exec::ScheduleOptions o;
    o.policy = strategy;
    exec::StealScheduler s(plan, units, {true, false}, o, clock_now());
    exec::StepRef ref;
    ASSERT_TRUE(s.next(0, ref));  // idle: steals at once, and one more in advance
    const exec::StealCounts c = s.counts(0);
    ASSERT_EQ(int(c.steals.size()), c.stolen_units);
    ASSERT_GE(c.steals.size(), 2u);
    EXPECT_TRUE(c.steals[0].idle);
    EXPECT_FALSE(c.steals[1].idle);
    double flops = 0;
    for (const exec::StealRecord& r : c.steals) {
      flops += r.flops;
      EXPECT_EQ(r.victim, 1);
      EXPECT_EQ(r.steps, 1);
      EXPECT_GE(r.at_s, 0.0);
      EXPECT_GT(r.bytes, 0.0) << "a copying thief copies what it takes";
      EXPECT_GT(r.thief_gflops, 0.0);
      EXPECT_GT(r.victim_gflops, 0.0);
      EXPECT_LT(r.thief_done_s, r.victim_done_s) << "a steal that did not pay was made";
    }
    EXPECT_DOUBLE_EQ(flops, c.stolen_flops);
    // The first unit taken had nothing of the thief's before it: all its bytes.
    const exec::Step* first = ref.step;
    for (const exec::Unit& u : units) {
      if (&plan.processors[1].steps[u.steps.front()] == first) {
        EXPECT_DOUBLE_EQ(c.steals[0].bytes, u.bytes);
      }
    }
    EXPECT_TRUE(s.counts(1).steals.empty()) << "processor 1 stole nothing";
  }
}

TEST(Schedule, AVictimsReportedProgressCountsInWhetherAStealPays) {
  // Processor 1 has started a step of 2,048 flops and has one more unit of 2,048; processor 0
  // takes its step of 16 flops. Speeds assumed 1,000 flops/s each, the run one second old.
  // Unreported, processor 1's step counts as not done and its rate as almost nothing: taking its
  // last unit looks like it pays. Once processor 1 reports the step done (2,048 flops in a
  // second), it finishes its unit long before the thief, whose progress is still unknown, would.
  const auto plan = hand_plan({{step(0, 2, 0, 2, 2, false)},
                               {step(8, 16, 0, 8, 16, false), step(16, 24, 0, 8, 16, false)}});
  auto stolen = [&](bool reported) {
    exec::ScheduleOptions o;
    o.policy = exec::StealPolicy::random;
    o.speeds = {1e-6, 1e-6};
    exec::StealScheduler s(plan, exec::make_units(plan, 8), {false, false}, o, clock_now() - 1.0);
    exec::StepRef r;
    EXPECT_TRUE(s.next(1, r));
    EXPECT_EQ(r.step, &plan.processors[1].steps[0]);
    EXPECT_EQ(s.counts(1).stolen_steps, 0) << "processor 1 has more left than processor 0";
    if (reported) s.done(1, r.step->flops());
    EXPECT_TRUE(s.next(0, r));
    EXPECT_FALSE(r.stolen);
    return s.counts(0).stolen_steps;
  };
  EXPECT_EQ(stolen(false), 1);
  EXPECT_EQ(stolen(true), 0);
}

TEST(Schedule, StealsInAdvanceAndNeverAStartedUnit) {
  // Processor 0 has one step, processor 1 a unit of two chained steps and three more units.
  auto mine = std::vector<exec::Step>{step(0, 8, 0, 8, 16, false)};
  auto theirs = three_units();
  exec::Step a = step(40, 48, 40, 48, 8, false), b = a;
  a.c_out = false;
  b.l0 = 8, b.l1 = 16, b.beta = exec::BetaUse::one;
  theirs.insert(theirs.begin(), {a, b});
  const auto plan = hand_plan({mine, theirs});
  exec::ScheduleOptions o;
  o.policy = exec::StealPolicy::cheapest;
  exec::StealScheduler s(plan, exec::make_units(plan, 8), {false, false}, o, clock_now());
  exec::StepRef r1, r0;
  ASSERT_TRUE(s.next(1, r1));  // processor 1 starts its first unit (steps a, b)
  EXPECT_EQ(r1.step, &plan.processors[1].steps[0]);
  ASSERT_TRUE(s.next(0, r0));  // its own step; fewer than two ready: it steals one unit now
  EXPECT_FALSE(r0.stolen);
  EXPECT_EQ(s.counts(1).lost_steps, 1) << "stolen in advance, while its own step runs";
  std::set<const exec::Step*> seen{r1.step, r0.step};
  std::vector<const exec::Step*> got0, got1;
  // Processor 0 takes what it can; processor 1 must still get step b of its started unit next.
  for (exec::StepRef r; s.next(0, r);) got0.push_back(r.step), seen.insert(r.step);
  ASSERT_TRUE(s.next(1, r1));
  EXPECT_EQ(r1.step, &plan.processors[1].steps[1]) << "a started unit stays with its processor";
  got1.push_back(r1.step);
  for (exec::StepRef r; s.next(1, r);) got1.push_back(r.step), seen.insert(r.step);
  seen.insert(r1.step);
  EXPECT_EQ(seen.size(), 6u) << "every step handed out exactly once";
  EXPECT_EQ(got0.size() + got1.size() + 2, 6u);
  EXPECT_EQ(s.counts(0).stolen_steps, s.counts(1).lost_steps);
}

namespace {

// Processors as threads: each runs the steps it is handed for flops / its true rate (sleeping),
// while the scheduler was told other speeds. Returns the steps each one ran, in order.
std::vector<std::vector<exec::StepRef>> simulate(const exec::Plan& plan, exec::StealPolicy strategy,
                                                 const std::vector<double>& told,
                                                 const std::vector<double>& true_rate,
                                                 std::vector<exec::StealCounts>& counts) {
  const std::size_t np = plan.processors.size();
  exec::ScheduleOptions o;
  o.policy = strategy;
  o.speeds = told;
  const double t0 = clock_now();
  exec::StealScheduler s(plan, exec::make_units(plan, 8), std::vector<bool>(np, false), o, t0);
  std::vector<std::vector<exec::StepRef>> ran(np);
  std::vector<std::thread> threads;
  for (std::size_t p = 0; p < np; ++p)
    threads.emplace_back([&, p] {
      for (exec::StepRef r; s.next(int(p), r);) {
        ran[p].push_back(r);
        std::this_thread::sleep_for(std::chrono::duration<double>(r.step->flops() / true_rate[p]));
      }
    });
  for (auto& t : threads) t.join();
  counts.clear();
  for (std::size_t p = 0; p < np; ++p) counts.push_back(s.counts(int(p)));
  return ran;
}

}  // namespace

TEST(Schedule, ThreadsRunEveryStepOnceWithChainsWhole) {
  exec::PlanOptions o;
  o.budget_elements = {0, 4000, 6000};
  o.min_panels = {1, 4, 4};
  o.block_tiles = 2;
  o.shared_steps = true;
  const auto plan = plan_for(partition::Algorithm::nrrp3d, {1, 1, 1}, 96, 96, 96, 8, o);
  double total = 0;
  for (const auto& pp : plan.processors)
    for (const auto& st : pp.steps) total += st.flops();
  // Without stealing the run takes about 0.4 s at the true rates (long against the 0.05 s for
  // which a rate leans on the speed it was told); processor 0 was believed as fast as the
  // others but is four times faster.
  const std::vector<double> rate = {4 * total / 1.2, total / 1.2, total / 1.2};
  for (auto strategy :
       {exec::StealPolicy::static_plan, exec::StealPolicy::random, exec::StealPolicy::cheapest}) {
    SCOPED_TRACE(std::string(exec::to_string(strategy)));
    std::vector<exec::StealCounts> counts;
    const double told = rate[1] / 1e9;  // GFLOP/s, as the partition assumed: all equal
    const auto ran = simulate(plan, strategy, {told, told, told}, rate, counts);
    std::set<const exec::Step*> seen;
    int stolen = 0, lost = 0;
    for (std::size_t p = 0; p < ran.size(); ++p) {
      for (std::size_t i = 0; i < ran[p].size(); ++i) {
        const auto& r = ran[p][i];
        EXPECT_TRUE(seen.insert(r.step).second) << "a step ran twice";
        EXPECT_EQ(r.stolen, r.owner != int(p));
        // A step that continues a chain follows the chain's previous step on one processor.
        if (r.step != plan.processors[std::size_t(r.owner)].steps.data() && !(r.step - 1)->c_out) {
          ASSERT_GT(i, 0u);
          EXPECT_EQ(ran[p][i - 1].step, r.step - 1) << "a chain was split";
        }
      }
      stolen += counts[p].stolen_steps, lost += counts[p].lost_steps;
    }
    std::size_t steps = 0;
    for (const auto& pp : plan.processors) steps += pp.steps.size();
    EXPECT_EQ(seen.size(), steps);
    EXPECT_EQ(stolen, lost);
    if (strategy == exec::StealPolicy::static_plan) {
      EXPECT_EQ(stolen, 0);
      for (std::size_t p = 0; p < ran.size(); ++p) {
        ASSERT_EQ(ran[p].size(), plan.processors[p].steps.size());
        for (std::size_t i = 0; i < ran[p].size(); ++i)
          EXPECT_EQ(ran[p][i].step, &plan.processors[p].steps[i]);
      }
    } else {
      EXPECT_GT(counts[0].stolen_steps, 0) << "the fast processor found work to steal";
      EXPECT_EQ(counts[0].lost_steps, 0) << "nobody gains by taking from the fastest";
    }
  }
}
