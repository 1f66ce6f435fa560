// The rank partition's refusals and limits, beside the traffic figures model_test.cpp checks.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include <algorithm>

#include "layout/layout.hpp"
#include "layout/model.hpp"
#include "layout/rank_partition.hpp"

namespace cuboid::layout {
namespace {

// Many ranks in the aligned layout: every zone's projections would be visited to place the data
// and again to model it. Refused before any zone is built, for a fixed algorithm as for auto.
TEST(RankPartition, AlignedTooManyRanksIsRefusedBeforeAnyZone) {
  RankPartitionRequest req;
  req.m = req.n = req.k = 1000;
  req.tile = 1;
  req.speeds.assign(1000000, 1.0);
  req.aligned = true;
  for (bool automatic : {false, true}) {
    req.automatic = automatic;
    try {
      choose_rank_partition(req);
      FAIL() << "10^6 aligned ranks on 10^9 tiles were partitioned";
    } catch (const TooCostly& e) {
      EXPECT_NE(std::string(e.what()).find("any candidate for 1000000 ranks"), std::string::npos)
          << e.what();
    }
  }
}

// The floor follows the work: the same ranks on few enough tiles are partitioned.
TEST(RankPartition, AlignedFloorLetsSmallProblemsThrough) {
  RankPartitionRequest req;
  req.m = req.n = req.k = 64;
  req.tile = 4;
  req.speeds.assign(64, 1.0);
  req.aligned = true;
  const RankPartition rp = choose_rank_partition(req);
  EXPECT_EQ(rp.zones.size(), 64u);
  EXPECT_FALSE(rp.candidates.empty());
}

}  // namespace
}  // namespace cuboid::layout

namespace cuboid::layout {
namespace {

RankPartitionRequest block_cyclic_request() {
  RankPartitionRequest req;
  req.m = req.n = req.k = 512;
  req.tile = 64;
  req.speeds.assign(8, 1.0);
  req.grid = near_square_grid(8);
  req.block = 64;
  return req;
}

// Under a limit, only candidates whose predicted peak fits are chosen; the others are still
// scored and reported with their peak.
TEST(RankPartition, MemoryLimitRefusesCandidatesThatDoNotFit) {
  RankPartitionRequest req = block_cyclic_request();
  const RankPartition free = choose_rank_partition(req);
  double lo = 1e300, hi = 0;
  for (const auto& c : free.candidates) {
    EXPECT_GT(c.peak_bytes, 0.0);
    EXPECT_TRUE(c.fits);
    lo = std::min(lo, c.peak_bytes), hi = std::max(hi, c.peak_bytes);
  }
  ASSERT_LT(lo, hi) << "the candidates' peaks must differ for this test";
  req.memory_limit_bytes = (lo + hi) / 2;
  const RankPartition limited = choose_rank_partition(req);
  EXPECT_EQ(limited.memory_limit_bytes, req.memory_limit_bytes);
  ASSERT_EQ(limited.peak_bytes.size(), 8u);
  for (double p : limited.peak_bytes) EXPECT_LE(p, req.memory_limit_bytes);
  int refused = 0;
  for (const auto& c : limited.candidates) {
    EXPECT_EQ(c.fits, c.peak_bytes <= req.memory_limit_bytes) << c.name;
    if (c.name == limited.name) {
      EXPECT_TRUE(c.fits);
    }
    refused += !c.fits;
  }
  EXPECT_GT(refused, 0);
}

// A limit below every candidate's peak, k streamed as finely as it goes, names the smallest
// peak, which then suffices; it is below every peak with every receive posted at once.
TEST(RankPartition, MemoryLimitBelowEveryCandidateNamesTheMinimum) {
  RankPartitionRequest req = block_cyclic_request();
  const RankPartition free = choose_rank_partition(req);
  double unstreamed = 1e300;
  for (const auto& c : free.candidates) unstreamed = std::min(unstreamed, c.peak_bytes);
  req.memory_limit_bytes = 1;
  double lo = 0;
  try {
    choose_rank_partition(req);
    FAIL() << "a limit of one byte was accepted";
  } catch (const MemoryLimitTooSmall& e) {
    lo = e.minimum_bytes;
  }
  EXPECT_LT(lo, unstreamed);
  req.memory_limit_bytes = lo * 0.99;
  try {
    choose_rank_partition(req);
    FAIL() << "a limit below every candidate's peak was accepted";
  } catch (const MemoryLimitTooSmall& e) {
    EXPECT_DOUBLE_EQ(e.minimum_bytes, lo);
    EXPECT_NE(std::string(e.what()).find("would do"), std::string::npos) << e.what();
  }
  req.memory_limit_bytes = lo;
  EXPECT_NO_THROW(choose_rank_partition(req));
}

// The prediction counts the blocks (no copy of C0), what is received, the partial C the runner
// allocates, and the panels of the largest piece.
TEST(RankPartition, PredictedMemoryCountsBlocksMessagesAndPartialC) {
  const Distribution d = block_cyclic_distribution(512, 512, 512, 64, near_square_grid(4));
  const TileOrder order = natural_order(512, 512, 512, 64);
  // Two boxes stacked along k over the same 4 x 2 tiles of C.
  const partition::TileZone zone = {partition::TileBox{{0, 0, 0}, {4, 2, 4}},
                                    partition::TileBox{{0, 0, 4}, {4, 2, 8}}};
  RankTraffic t;
  t.a_in = 100, t.b_in = 200, t.c_out = 50, t.a_foot = 400, t.b_foot = 800, t.c_foot = 64;
  t.c_boxes = 96;
  const RankMemoryModel m = predict_rank_memory(t, d, 0, zone, order, Streaming{4, 0});
  const double blocks = 3.0 * 512 * 512 / 4;  // A, B and C: a quarter of each
  EXPECT_DOUBLE_EQ(m.blocks, blocks);
  EXPECT_DOUBLE_EQ(m.messages, 350);  // every receive at once, and C's buffers
  EXPECT_DOUBLE_EQ(m.partial_c, 96);  // C travels: each box's C is a buffer of its own
  // Each box of 4 tiles along k in 4 slabs: pieces one tile deep, A 256 x 64, B 64 x 128.
  EXPECT_DOUBLE_EQ(m.panels, 256.0 * 64 + 64.0 * 128);
  // Nothing travels, one piece per box; rank 0 holds every other block of A and B, so neither
  // box's panels are blocks of its local arrays: they are filled, A 256 x 256 and B 256 x 128.
  RankTraffic own;
  EXPECT_DOUBLE_EQ(predict_rank_memory(own, d, 0, zone, order).total(),
                   blocks + 256.0 * 256 + 256.0 * 128);
  // On one process each box's A is a column range and its B a row range of the local arrays:
  // read in place, the blocks alone.
  const Distribution one = block_cyclic_distribution(512, 512, 512, 64, near_square_grid(1));
  const partition::TileZone whole_ij = {partition::TileBox{{0, 0, 0}, {8, 8, 4}},
                                        partition::TileBox{{0, 0, 4}, {8, 8, 8}}};
  EXPECT_DOUBLE_EQ(predict_rank_memory(own, one, 0, whole_ij, order).total(), 3.0 * 512 * 512);
}

// Streamed, a rank holds `window` stages of what it receives, each at most its piece's panels.
TEST(RankPartition, PredictedMemoryOfStreamedInputsIsItsWindow) {
  const Distribution d = block_cyclic_distribution(512, 512, 512, 64, near_square_grid(4));
  const TileOrder order = natural_order(512, 512, 512, 64);
  const partition::TileZone zone = {partition::TileBox{{0, 0, 0}, {4, 4, 8}}};
  RankTraffic t;
  t.a_in = 256.0 * 512, t.b_in = 3 * 256.0 * 512;  // A half received, B three quarters
  const RankMemoryModel all = predict_rank_memory(t, d, 0, zone, order, Streaming{8, 0});
  const RankMemoryModel one = predict_rank_memory(t, d, 0, zone, order, Streaming{8, 1});
  const RankMemoryModel two = predict_rank_memory(t, d, 0, zone, order, Streaming{8, 2});
  const double panels = 2 * 256.0 * 64;  // A 256 x 64 and B 64 x 256 per piece one tile deep
  EXPECT_DOUBLE_EQ(all.messages, t.a_in + t.b_in);
  EXPECT_DOUBLE_EQ(one.messages, panels);
  EXPECT_DOUBLE_EQ(two.messages, 2 * panels);
  EXPECT_DOUBLE_EQ(one.panels, panels);
  EXPECT_DOUBLE_EQ(predict_rank_memory(t, d, 0, zone, order, Streaming{2, 0}).panels,
                   2 * 256.0 * 256);
}

// A limit under what posting every receive at once needs is met by streaming k: the candidate
// is taken with receives one stage ahead and slabs fine enough, not refused.
TEST(RankPartition, TightLimitStreamsInsteadOfRefusing) {
  RankPartitionRequest req;
  req.m = req.n = req.k = 1024, req.tile = 64;
  req.speeds.assign(4, 1.0);
  req.grid = near_square_grid(4), req.block = 64;
  const RankPartition loose = choose_rank_partition(req);
  EXPECT_EQ(loose.streaming.window, 0);
  const double share = 3.0 * 1024 * 1024 * 8 / 4;
  req.memory_limit_bytes = 1.25 * share;
  const RankPartition tight = choose_rank_partition(req);
  EXPECT_EQ(tight.streaming.window, 1);
  EXPECT_GT(tight.streaming.slabs, 4);
  for (double peak : tight.peak_bytes) EXPECT_LE(peak, req.memory_limit_bytes);
}

// Whatever the ops and wherever each matrix's first block lies, a stationary candidate the model
// chooses keeps its operand where it is stored: the axes are grouped by the owners of the matrix
// as stored (A^T's i axis by process column, its k axis by process row, each counted from the
// matrix's first block), so a box is exactly what its rank owns.
TEST(RankPartition, StationaryCandidatesFollowTheStoredOwners) {
  int a_stationary_transposed = 0, b_stationary_transposed = 0, moved_first = 0, c_stays = 0;
  for (bool at_origin : {true, false})
    for (const auto& [ta, tb] :
         {std::pair{false, false}, {true, false}, {false, true}, {true, true}})
      for (int P : {2, 3, 4, 6})
        for (const auto& [m, n, k] : {std::tuple{96, 80, 4096}, std::tuple{4096, 80, 96},
                                      std::tuple{80, 4096, 96}, std::tuple{384, 384, 384}}) {
          RankPartitionRequest req;
          req.m = m, req.n = n, req.k = k, req.tile = 32, req.block = 32;
          req.speeds.assign(std::size_t(P), 100.0);
          req.grid = near_square_grid(P);
          req.a_transposed = ta, req.b_transposed = tb;
          // As a trailing update of a factorisation has them: A, B and C each from another process.
          const int lr = req.grid.rows - 1, lc = req.grid.cols - 1;
          if (!at_origin) req.first = {{lr, 0}, {0, lc}, {lr, lc}};
          const RankPartition rp = choose_rank_partition(req);
          moved_first += !at_origin;
          SCOPED_TRACE(std::string(ta ? "A^T " : "A ") + (tb ? "B^T " : "B ") + std::to_string(m) +
                       "x" + std::to_string(n) + "x" + std::to_string(k) + " " + std::to_string(P) +
                       " ranks, " + (at_origin ? "first blocks on (0, 0)" : "first blocks apart") +
                       ", chose " + rp.name);
          EXPECT_TRUE(rp.dist.c.block_cyclic().first() == req.first.c);
          EXPECT_EQ(rp.dist.a_transposed, ta);
          EXPECT_EQ(rp.dist.b_transposed, tb);
          EXPECT_EQ(rp.dist.a.rows(), ta ? k : m);
          EXPECT_EQ(rp.dist.b.rows(), tb ? n : k);
          double a_in = 0, b_in = 0;
          for (const auto& t : rp.traffic) a_in += t.a_in, b_in += t.b_in;
          if (rp.name == "A-stationary, owner cuts") {
            EXPECT_EQ(a_in, 0);
            a_stationary_transposed += ta;
          }
          if (rp.name == "B-stationary, owner cuts") {
            EXPECT_EQ(b_in, 0);
            b_stationary_transposed += tb;
          }
          if (rp.name == "process grid (C stays), owner cuts") {
            double c_out = 0;
            for (const auto& t : rp.traffic) c_out += t.c_out;
            EXPECT_EQ(c_out, 0);
            c_stays += !at_origin;
          }
        }
  // Not vacuous: each is chosen for a transposed operand somewhere.
  EXPECT_GT(a_stationary_transposed, 0);
  EXPECT_GT(b_stationary_transposed, 0);
  EXPECT_GT(moved_first, 0);
  EXPECT_GT(c_stays, 0);
}

}  // namespace
}  // namespace cuboid::layout
