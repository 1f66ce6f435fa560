// resolve_processors: names to processors, one processor per name, host cores shared out.
#include "platform/processor.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "util/error.hpp"

namespace cuboid::platform {
namespace {

std::string message_of(const std::vector<std::string>& names) {
  try {
    resolve_processors(names, "deck.toml:3:1: platform.processors");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Processors, NamesBecomeKindsAndIndices) {
  const auto p = resolve_processors({"host", "staged:2", "emulated:0"}, "here");
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].kind, ProcessorKind::host);
  EXPECT_EQ(p[1].kind, ProcessorKind::staged);
  EXPECT_EQ(p[1].index, 2);
  EXPECT_EQ(p[2].kind, ProcessorKind::emulated);
  EXPECT_EQ(p[2].name, "emulated:0");
  for (const auto& q : p) {
    EXPECT_GT(q.memory_bytes, 0u) << q.name;
    EXPECT_FALSE(q.space.empty()) << q.name;
  }
}

TEST(Processors, HostSideProcessorsShareTheCoresWithoutLosingAny) {
  const auto alone = resolve_processors({"host"}, "here");
  const int cores = alone[0].threads;
  ASSERT_GE(cores, 1);
  EXPECT_FALSE(alone[0].team_gemm) << "a processor alone has its cores to itself";
  const auto three = resolve_processors({"host", "staged", "emulated:1"}, "here");
  int sum = 0;
  for (const auto& q : three) {
    EXPECT_GE(q.threads, 1) << q.name;
    sum += q.threads;
  }
  // Every processor gets at least one thread, so more processors than cores oversubscribe.
  EXPECT_EQ(sum, std::max(cores, 3));
}

TEST(Processors, OneProcessorNamedTwiceIsRefused) {
  EXPECT_NE(message_of({"staged", "staged:0"}).find("is the same processor as \"staged\""),
            std::string::npos);
  EXPECT_NE(message_of({"emulated:1", "emulated:0001"}).find("name each processor once"),
            std::string::npos);
  EXPECT_NE(message_of({"host", "host"}).find("same processor"), std::string::npos);
}

TEST(Processors, UnknownOrMissingProcessorsNameWhere) {
  const std::string unknown = message_of({"host", "gpu"});
  EXPECT_EQ(unknown.rfind("deck.toml:3:1: platform.processors", 0), 0u) << unknown;
  EXPECT_NE(unknown.find("unknown processor \"gpu\""), std::string::npos) << unknown;
  EXPECT_NE(message_of({}).find("no processors"), std::string::npos);
  // A device of a backend this build does not have (or one beyond the node's count).
  const std::string device = message_of({"host", "cuda:7"}) + message_of({"hip:7"});
  EXPECT_NE(device.find("is not available"), std::string::npos) << device;
}

TEST(Processors, TheDefaultListStartsWithTheHostAndResolves) {
  const auto names = default_processor_names();
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names[0], "host");
  EXPECT_EQ(resolve_processors(names, "default").size(), names.size());
}

}  // namespace
}  // namespace cuboid::platform
