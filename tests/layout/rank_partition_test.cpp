// The rank partition's refusals and limits, beside the traffic figures model_test.cpp checks.
#include <gtest/gtest.h>

#include <string>

#include "layout/rank_partition.hpp"

namespace cuboid::dist {
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
}  // namespace cuboid::dist
