// The figures a run reports: the repetitions' summary, a processor's totals over the products
// it computed, and each processor's part over several plans.
#include <gtest/gtest.h>

#include <vector>

#include "../support/expect_same.hpp"
#include "local_options.hpp"
#include "pipeline/figures.hpp"

using namespace cuboid;

TEST(SummarizeTimes, AnOddCountHasItsMiddleRepetitionAsTheMedian) {
  const auto t = pipeline::summarize_times({0.5, 0.2, 0.9, 0.4, 0.3});
  EXPECT_DOUBLE_EQ(t.min_s, 0.2);
  EXPECT_DOUBLE_EQ(t.max_s, 0.9);
  EXPECT_DOUBLE_EQ(t.median_s, 0.4);
  EXPECT_EQ(t.median_index, 3u);  // the repetition that took 0.4 s, wherever it ran
}

TEST(SummarizeTimes, AnEvenCountAveragesTheMiddleTwoAndStandsByTheUpperOne) {
  const auto t = pipeline::summarize_times({0.8, 0.1, 0.4, 0.2});
  EXPECT_DOUBLE_EQ(t.median_s, 0.3);
  EXPECT_EQ(t.median_index, 2u);  // 0.4 s: the upper middle one
  EXPECT_DOUBLE_EQ(t.min_s, 0.1);
  EXPECT_DOUBLE_EQ(t.max_s, 0.8);
}

TEST(SummarizeTimes, OneRepetitionIsItsOwnSummaryAndNoneGivesZeros) {
  const auto one = pipeline::summarize_times({0.25});
  EXPECT_DOUBLE_EQ(one.min_s, 0.25);
  EXPECT_DOUBLE_EQ(one.median_s, 0.25);
  EXPECT_DOUBLE_EQ(one.max_s, 0.25);
  EXPECT_EQ(one.median_index, 0u);
  const auto none = pipeline::summarize_times({});
  EXPECT_EQ(none.median_s, 0.0);
  EXPECT_EQ(none.median_index, 0u);
}

namespace {

// A product's figures in which every field differs, scaled by `f`.
exec::WorkerStats product_stats(int f) {
  exec::WorkerStats s;
  s.busy_s = 1.0 * f, s.copy_s = 2.0 * f, s.stall_s = 3.0 * f, s.finish_s = 10.0 - f;
  s.h2d_bytes = 4.0 * f, s.d2h_bytes = 5.0 * f;
  s.direct_copies = 6 * f, s.staged_copies = 7 * f;
  s.registrations = 8 * f, s.refused_registrations = 9 * f;
  s.registered_bytes = 10.0 * f, s.register_s = 11.0 * f;
  s.flops = 12.0 * f, s.steps = 13 * f;
  s.steal_bytes = 14.0 * f, s.stolen_steps = 15 * f, s.lost_steps = 16 * f;
  s.stolen_flops = 17.0 * f;
  s.steals.resize(std::size_t(f));
  return s;
}

}  // namespace

TEST(AddProduct, SumsEveryCountAndTimeAndKeepsTheLatestFinish) {
  exec::WorkerStats total;
  pipeline::add_product(total, product_stats(1));
  pipeline::add_product(total, product_stats(2));
  exec::WorkerStats want = product_stats(3);  // 1 + 2 of every summed field
  want.finish_s = 9.0;                        // the first product's, the later of the two
  using W = exec::WorkerStats;
  expect_same(total, want, &W::busy_s, &W::copy_s, &W::stall_s, &W::finish_s, &W::h2d_bytes,
              &W::d2h_bytes, &W::direct_copies, &W::staged_copies, &W::registrations,
              &W::refused_registrations, &W::registered_bytes, &W::register_s, &W::flops, &W::steps,
              &W::steal_bytes, &W::stolen_steps, &W::lost_steps, &W::stolen_flops);
  EXPECT_EQ(total.steals.size(), 3u);
}

TEST(ProcessorFigures, SumThePlansOfEveryProductPerProcessor) {
  const auto specs = platform::resolve_processors({"host", "staged"}, "test");
  pipeline::LocalMultiply<double> lm(specs, {3.0, 1.0}, options_for(specs, 0, sizeof(double)));
  const std::vector<pipeline::Product> products = {{128, 96, 64, 16}, {64, 64, 160, 16}};
  const auto plans = lm.plan(products);
  const std::vector<platform::Speed> speeds = {{3.0, "deck"}, {1.0, "cache"}};
  std::vector<exec::WorkerStats> done(2);
  done[1].flops = 42;
  const auto figures = pipeline::processor_figures(lm, speeds, plans, done);
  ASSERT_EQ(figures.size(), 2u);
  double tasks = 0, flops = 0;
  for (std::size_t q = 0; q < 2; ++q) {
    const auto& f = figures[q];
    EXPECT_EQ(f.name, specs[q].name);
    EXPECT_EQ(f.speed_source, speeds[q].source);
    EXPECT_DOUBLE_EQ(f.speed_gflops, lm.speeds()[q]);
    EXPECT_DOUBLE_EQ(f.cut_gflops, plans.front().speeds[q]);
    double want_tasks = 0, want_predicted = 0;
    int want_pieces = 0;
    for (const auto& lp : plans) {
      want_tasks += lp.steps.processors[q].tasks;
      want_pieces += lp.steps.processors[q].pieces;
      want_predicted += lp.prediction.seconds[q];
    }
    EXPECT_DOUBLE_EQ(f.tasks, want_tasks);
    EXPECT_EQ(f.pieces, want_pieces);
    EXPECT_DOUBLE_EQ(f.predicted_s, want_predicted);
    tasks += f.tasks, flops += f.planned_flops;
  }
  // Between them the processors plan every tile task and flop of both products, once.
  double want_tasks = 0, want_flops = 0;
  for (const auto& p : products) {
    const auto t = p.tiles();
    want_tasks += double(t[0]) * double(t[1]) * double(t[2]);
    want_flops += 2.0 * double(p.m) * double(p.n) * double(p.k);
  }
  EXPECT_DOUBLE_EQ(tasks, want_tasks);
  EXPECT_DOUBLE_EQ(flops, want_flops);
  EXPECT_EQ(figures[1].done.flops, 42.0);
  EXPECT_EQ(figures[0].done.flops, 0.0);
}
