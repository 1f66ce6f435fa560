// partition::speed_problem: the speeds a partitioner refuses, said before it runs.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "partition/speeds.hpp"
#include "partition/strategy.hpp"

namespace cuboid {
namespace {

TEST(Speeds, TheRuleIsThePartitionersOwn) {
  // Whatever speed_problem() accepts, the partitioner accepts; what it refuses, it refuses.
  const std::vector<std::vector<double>> sets = {{1, 2, 3}, {1e-300, 1}, {1e308, 1e308}, {0, 1},
                                                 {-1, 1},   {1e-12, 1},  {1e-13, 1},     {}};
  for (const auto& s : sets) {
    bool partition_fails = false;
    try {
      partition::partition_tiles(partition::Algorithm::nrrp3d, partition::Discretization::rounded,
                                 s, {4, 4, 4});
    } catch (const std::invalid_argument&) {
      partition_fails = true;
    }
    EXPECT_EQ(bool(partition::speed_problem(s)), partition_fails) << s.size();
  }
}

}  // namespace
}  // namespace cuboid
