// Bad input gets a clear std::invalid_argument, never a crash or a silent partition.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "../support/message_of.hpp"
#include "partition/strategy.hpp"

namespace cuboid::partition {
namespace {

using ::cuboid::testing::message_of;

TEST(Errors, NoProcessors) {
  for (Algorithm a : {Algorithm::nrrp3d, Algorithm::grid})
    EXPECT_NE(message_of([&] {
                partition_tiles(a, Discretization::precise, {}, {4, 4, 4});
              }).find("no processors"),
              std::string::npos);
}

TEST(Errors, BadSpeeds) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (double bad : {0.0, -1.0, nan, inf}) {
    const std::string msg = message_of([&] {
      partition_continuous(Algorithm::nrrp3d, {1.0, 2.0, 1.0, bad}, {4.0, 4.0, 4.0});
    });
    EXPECT_NE(msg.find("speed 3 is"), std::string::npos) << msg;
    EXPECT_NE(msg.find("finite and positive"), std::string::npos) << msg;
  }
}

TEST(Errors, ZeroDimensions) {
  EXPECT_NE(message_of([] {
              partition_tiles(Algorithm::slab, Discretization::rounded, {1.0}, {0, 4, 4});
            }).find("at least 1 tile"),
            std::string::npos);
  EXPECT_NE(message_of([] {
              partition_continuous(Algorithm::slab, {1.0}, {4.0, 0.0, 4.0});
            }).find("finite and positive"),
            std::string::npos);
}

TEST(Errors, MoreProcessorsThanTasks) {
  const std::vector<double> seven(7, 1.0);
  EXPECT_EQ(message_of([&] {
              partition_tiles(Algorithm::nrrp3d, Discretization::precise, seven, {1, 2, 3});
            }),
            "7 processors but only 6 tile tasks");
}

TEST(Errors, DiscretizeNeedsAMethodAndOneZonePerSpeed) {
  const auto zones = partition_continuous(Algorithm::slab, {1.0, 1.0}, {2.0, 2.0, 2.0});
  EXPECT_THROW(discretize(Discretization::none, zones, {1.0, 1.0}, {2, 2, 2}),
               std::invalid_argument);
  EXPECT_THROW(discretize(Discretization::precise, zones, {1.0}, {2, 2, 2}), std::invalid_argument);
}

TEST(Names, RoundTrip) {
  for (auto n : algorithm_names()) EXPECT_EQ(to_string(*parse_algorithm(n)), n);
  for (auto n : discretization_names()) EXPECT_EQ(to_string(*parse_discretization(n)), n);
  EXPECT_FALSE(parse_algorithm("nrrp4d").has_value());
  EXPECT_FALSE(parse_discretization("exact").has_value());
}

}  // namespace
}  // namespace cuboid::partition
