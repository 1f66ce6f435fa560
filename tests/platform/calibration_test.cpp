// The speed cache and calibrate(): what is measured, what is reused, and what is refused.
#include "platform/calibration.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../support/scratch_dir.hpp"
#include "util/error.hpp"

namespace cuboid::platform {
namespace {

namespace fs = std::filesystem;

ProcessorSpec spec(const std::string& name, ProcessorKind kind, int threads) {
  ProcessorSpec p;
  p.name = name;
  p.kind = kind;
  p.threads = threads;
  return p;
}

class Cache : public ::cuboid::testing::ScratchDir {
 protected:
  std::string file() const { return (dir_ / "sub" / "speeds.json").string(); }
  std::vector<ProcessorSpec> procs{spec("host", ProcessorKind::host, 2),
                                   spec("staged", ProcessorKind::staged, 1)};
};

// A measurement that counts its calls and returns the given rates.
struct FakeMeasure {
  std::vector<double> rates;
  int* calls;
  std::vector<double> operator()() const {
    ++*calls;
    return rates;
  }
};

TEST_F(Cache, MeasuredRatesAreSavedAndReusedTogether) {
  int calls = 0;
  std::ostringstream progress;
  {
    SpeedCache cache(file());
    const auto s =
        calibrate(procs, "double", "m=64", FakeMeasure{{10, 4}, &calls}, &cache, false, progress);
    ASSERT_EQ(s.size(), 2u);
    EXPECT_EQ(s[0].gflops, 10);
    EXPECT_EQ(s[1].gflops, 4);
    EXPECT_EQ(s[0].source, "measured");
  }
  ASSERT_TRUE(fs::exists(file())) << "the cache's folder is made when it is saved";
  SpeedCache again(file());
  const auto s =
      calibrate(procs, "double", "m=64", FakeMeasure{{1, 1}, &calls}, &again, false, progress);
  EXPECT_EQ(calls, 1) << "every rate was cached: nothing is measured again";
  EXPECT_EQ(s[0].gflops, 10);
  EXPECT_EQ(s[1].source, "cache");
  EXPECT_NE(progress.str().find("(cached)"), std::string::npos);
}

TEST_F(Cache, RemeasureAnotherContextOrAnotherSetMeasuresAgain) {
  int calls = 0;
  std::ostringstream progress;
  SpeedCache cache(file());
  calibrate(procs, "double", "m=64", FakeMeasure{{10, 4}, &calls}, &cache, false, progress);
  calibrate(procs, "double", "m=64", FakeMeasure{{11, 5}, &calls}, &cache, true, progress);
  EXPECT_EQ(calls, 2) << "remeasure ignores the cache";
  calibrate(procs, "float", "m=64", FakeMeasure{{20, 8}, &calls}, &cache, false, progress);
  EXPECT_EQ(calls, 3) << "another precision is another entry";
  calibrate(procs, "double", "m=128", FakeMeasure{{9, 3}, &calls}, &cache, false, progress);
  EXPECT_EQ(calls, 4) << "another problem is another entry";
  // The host alone was never measured by itself: rates measured together are not reused alone.
  const auto alone =
      calibrate({procs[0]}, "double", "m=64", FakeMeasure{{12}, &calls}, &cache, false, progress);
  EXPECT_EQ(calls, 5);
  EXPECT_EQ(alone[0].gflops, 12);
  // The latest measurement of the pair is the one kept.
  const auto kept =
      calibrate(procs, "double", "m=64", FakeMeasure{{0, 0}, &calls}, &cache, false, progress);
  EXPECT_EQ(calls, 5);
  EXPECT_EQ(kept[0].gflops, 11);
}

TEST_F(Cache, KeysTellThreadsLinksAndTimingModeApart) {
  ProcessorSpec a = spec("staged", ProcessorKind::staged, 1), b = a;
  const std::string k = SpeedCache::key(a, "double", "c");
  b.threads = 2;
  EXPECT_NE(SpeedCache::key(b, "double", "c"), k);
  b = a, b.link_gbs = 1;
  EXPECT_NE(SpeedCache::key(b, "double", "c"), k);
  b = a, b.copy_jitter_us = 5;
  EXPECT_NE(SpeedCache::key(b, "double", "c"), k);
  b = a, b.emulated_gflops = 100;
  EXPECT_NE(SpeedCache::key(b, "double", "c"), k);
  EXPECT_NE(SpeedCache::key(a, "float", "c"), k);
  EXPECT_EQ(SpeedCache::key(a, "double", "c"), k);
}

TEST_F(Cache, EditedEntriesAreRefusedNamingTheFile) {
  int calls = 0;
  std::ostringstream progress;
  SpeedCache cache(file());
  calibrate(procs, "double", "m=64", FakeMeasure{{10, 4}, &calls}, &cache, false, progress);
  // Every stored value made negative, as a hand edit would.
  nlohmann::json j;
  std::ifstream(file()) >> j;
  for (auto& [key, value] : j.at("speeds").items()) value = -value.get<double>();
  std::ofstream(file()) << j.dump();
  SpeedCache edited(file());
  try {
    calibrate(procs, "double", "m=64", FakeMeasure{{1, 1}, &calls}, &edited, false, progress);
    FAIL() << "a negative cached speed was used";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(file()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not a measured speed"), std::string::npos) << e.what();
  }
}

TEST_F(Cache, AnUnreadableCacheIsIgnoredAndReplaced) {
  fs::create_directories(fs::path(file()).parent_path());
  std::ofstream(file()) << "{ not json";
  int calls = 0;
  std::ostringstream progress;
  SpeedCache cache(file());  // warns, starts empty
  const auto s =
      calibrate(procs, "double", "m=64", FakeMeasure{{10, 4}, &calls}, &cache, false, progress);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(s[1].gflops, 4);
  SpeedCache reread(file());
  const auto reused =
      calibrate(procs, "double", "m=64", FakeMeasure{{1, 1}, &calls}, &reread, false, progress);
  EXPECT_EQ(calls, 1) << "the file was replaced by a readable one that answers";
  EXPECT_EQ(reused[0].gflops, 10);
}

TEST_F(Cache, AMeasurementWithoutARateForEveryProcessorIsAnError) {
  int calls = 0;
  std::ostringstream progress;
  SpeedCache cache(file());
  EXPECT_THROW(
      calibrate(procs, "double", "m=64", FakeMeasure{{10}, &calls}, &cache, false, progress),
      std::logic_error);
  EXPECT_THROW(
      calibrate(procs, "double", "m=64", FakeMeasure{{10, 0}, &calls}, &cache, false, progress),
      std::runtime_error);
  EXPECT_FALSE(fs::exists(file())) << "nothing measured, nothing saved";
}

TEST_F(Cache, WithoutACacheEveryCallMeasures) {
  int calls = 0;
  std::ostringstream progress;
  calibrate(procs, "double", "m=64", FakeMeasure{{10, 4}, &calls}, nullptr, false, progress);
  calibrate(procs, "double", "m=64", FakeMeasure{{10, 4}, &calls}, nullptr, false, progress);
  EXPECT_EQ(calls, 2);
}

TEST(SpeedCachePath, FollowsCuboidCacheDir) {
  const char* old = std::getenv("CUBOID_CACHE_DIR");
  const std::string saved = old ? old : "";
  ::setenv("CUBOID_CACHE_DIR", "/some/where", 1);
  EXPECT_EQ(default_speed_cache_path(), "/some/where/speeds.json");
  if (old)
    ::setenv("CUBOID_CACHE_DIR", saved.c_str(), 1);
  else
    ::unsetenv("CUBOID_CACHE_DIR");
}

}  // namespace
}  // namespace cuboid::platform
