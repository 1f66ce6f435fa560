// The crossover ladder: the smallest size from which cuboid is never more than 5 % slower, every
// larger size included; above the ladder when it is slower at the top.
#include "platform/crossover.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <vector>

namespace cuboid::platform {
namespace {

// Seconds per ladder size for cuboid and the other library; the sizes the ladder asked for.
struct Timings {
  std::map<std::int64_t, double> ours, theirs;
  std::vector<std::int64_t> asked;
  std::int64_t run() {
    return ladder_crossover(
        [&](std::int64_t n) {
          asked.push_back(n);
          return ours.at(n);
        },
        [&](std::int64_t n) { return theirs.at(n); });
  }
};

TEST(Crossover, TheSmallestSizeFromWhichCuboidKeepsUp) {
  Timings t{{{1024, 1.0}, {512, 0.2}, {256, 0.03}, {128, 0.01}},
            {{1024, 1.0}, {512, 0.2}, {256, 0.025}, {128, 0.005}},
            {}};
  EXPECT_EQ(t.run(), 512);                                          // 256: 0.03 > 1.05 * 0.025
  EXPECT_EQ(t.asked, (std::vector<std::int64_t>{1024, 512, 256}));  // stops at the first loss
}

TEST(Crossover, FivePercentSlowerStillKeepsUp) {
  Timings t{{{1024, 1.05}, {512, 0.21}, {256, 0.0315}, {128, 0.00525}},
            {{1024, 1.0}, {512, 0.2}, {256, 0.03}, {128, 0.005}},
            {}};
  EXPECT_EQ(t.run(), 128);
}

TEST(Crossover, SlowerAtTheTopMeansAboveTheLadder) {
  Timings t{{{1024, 2.0}, {512, 0.1}}, {{1024, 1.0}, {512, 0.2}}, {}};
  EXPECT_EQ(t.run(), 2 * kCrossoverLadder[0]);  // a gain below a loss does not count
  EXPECT_EQ(t.asked, (std::vector<std::int64_t>{1024}));
}

TEST(Crossover, MedianOfThreeAfterAWarmUp) {
  int calls = 0;
  median_of_three([&] { ++calls; });
  EXPECT_EQ(calls, 4);
}

}  // namespace
}  // namespace cuboid::platform
