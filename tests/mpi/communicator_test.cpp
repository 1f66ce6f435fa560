// How a gathered send is cut into messages: the cuts must fall where a receive of the same total
// bytes is cut, or MPI would match pieces of different sizes; and how adjacent blocks are joined
// first. No MPI is needed to check that.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "mpi/communicator.hpp"

namespace cuboid::mpi {
namespace {

using Block = Communicator::Block;

std::size_t total(const std::vector<Block>& message) {
  return std::accumulate(message.begin(), message.end(), std::size_t(0),
                         [](std::size_t s, const Block& b) { return s + b.bytes; });
}

TEST(CutIntoMessages, EveryMessageButTheLastIsFullAndTheBytesKeepTheirOrder) {
  std::vector<char> data(1000);
  // Blocks of 7, 30 and 13 bytes at scattered places; messages of at most 16 bytes.
  const std::vector<Block> blocks{{&data[0], 7}, {&data[100], 30}, {&data[500], 13}};
  const auto messages = cut_into_messages(blocks, 16);
  ASSERT_EQ(messages.size(), 4u);  // 50 bytes: 16, 16, 16, 2
  for (std::size_t m = 0; m + 1 < messages.size(); ++m) EXPECT_EQ(total(messages[m]), 16u);
  EXPECT_EQ(total(messages.back()), 2u);
  // Concatenated, the pieces are the blocks' bytes in order.
  std::vector<const char*> bytes, expected;
  for (const auto& message : messages)
    for (const auto& b : message)
      for (std::size_t i = 0; i < b.bytes; ++i)
        bytes.push_back(static_cast<const char*>(b.data) + i);
  for (const auto& b : blocks)
    for (std::size_t i = 0; i < b.bytes; ++i)
      expected.push_back(static_cast<const char*>(b.data) + i);
  EXPECT_EQ(bytes, expected);
}

TEST(CutIntoMessages, ABlockOfExactlyTheLimitIsOneMessage) {
  std::vector<char> data(64);
  const auto messages = cut_into_messages({{data.data(), 32}}, 32);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(total(messages[0]), 32u);
  // Twice the limit: two full messages and no empty third one.
  EXPECT_EQ(cut_into_messages({{data.data(), 64}}, 32).size(), 2u);
}

TEST(CutIntoMessages, NothingToSendIsOneEmptyMessage) {
  const auto none = cut_into_messages({}, 32);
  ASSERT_EQ(none.size(), 1u);
  EXPECT_TRUE(none[0].empty());
  std::vector<char> data(4);
  const auto empty_blocks = cut_into_messages({{data.data(), 0}, {data.data(), 0}}, 32);
  ASSERT_EQ(empty_blocks.size(), 1u);
  EXPECT_TRUE(empty_blocks[0].empty());
}

TEST(MergeAdjacent, BlocksThatFollowEachOtherBecomeOneAndTheBytesKeepTheirOrder) {
  std::vector<char> data(100);
  // 0..10 and 10..30 follow each other, 40..50 does not follow 30, 50..60 follows 40..50; the
  // empty block is dropped; 0..5 after 50..60 does not follow it (memory goes back).
  const std::vector<Block> blocks{{&data[0], 10}, {&data[10], 20}, {&data[40], 10},
                                  {&data[70], 0}, {&data[50], 10}, {&data[0], 5}};
  const auto merged = merge_adjacent(blocks);
  ASSERT_EQ(merged.size(), 3u);
  EXPECT_EQ(merged[0].data, &data[0]);
  EXPECT_EQ(merged[0].bytes, 30u);
  EXPECT_EQ(merged[1].data, &data[40]);
  EXPECT_EQ(merged[1].bytes, 20u);
  EXPECT_EQ(merged[2].data, &data[0]);
  EXPECT_EQ(merged[2].bytes, 5u);
  EXPECT_EQ(total(merged), total(blocks));
  EXPECT_TRUE(merge_adjacent({}).empty());
}

}  // namespace
}  // namespace cuboid::mpi
