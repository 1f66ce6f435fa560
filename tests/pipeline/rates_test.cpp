// The rates of the flops+link model: which processors are priced by a GEMM rate and a link, that
// the links are measured as a run copies (so never above the link a processor is
// throttled to), that timing mode keeps its given GEMM rate, and that the cache answers a
// second call without measuring.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "pipeline/rates.hpp"

using namespace cuboid;

namespace {

std::string temp_cache(const char* name) {
  const auto p = std::filesystem::temp_directory_path() /
                 (std::string("cuboid-rates-test-") + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove(p);
  return p.string();
}

TEST(ModelRates, HostAloneNeedsNoModel) {
  const auto specs = platform::resolve_processors({"host"}, "test");
  std::ostringstream progress;
  double reduce = -1;
  EXPECT_TRUE(
      pipeline::model_rates<double>(specs, {50.0}, nullptr, true, progress, &reduce).empty());
  EXPECT_EQ(reduce, -1);  // nothing measured
  EXPECT_TRUE(progress.str().empty());
}

TEST(ModelRates, StagedGetsAGemmRateAndItsThrottledLinkTheHostNoLink) {
  auto specs = platform::resolve_processors({"host", "staged"}, "test");
  specs[1].link_gbs = 2.0;
  const std::string path = temp_cache("staged");
  platform::SpeedCache cache(path);
  std::ostringstream progress;
  double reduce = 0;
  const auto r =
      pipeline::model_rates<double>(specs, {10.0, 5.0}, &cache, false, progress, &reduce);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_GT(reduce, 0);
  // The host computes in place: a GEMM rate measured beside the staged one, no link.
  EXPECT_GT(r[0].gflops, 0);
  EXPECT_FALSE(r[0].copies());
  // The staged processor: its GEMM rate, and a link no faster than its 2 GB/s throttle.
  EXPECT_GT(r[1].gflops, 0);
  ASSERT_TRUE(r[1].copies());
  EXPECT_LE(r[1].h2d_gbs, 2.0 * 1.05);
  EXPECT_LE(r[1].d2h_gbs, 2.0 * 1.05);
  EXPECT_NE(progress.str().find("measured together"), std::string::npos) << progress.str();

  // The same processors again: every rate from the cache, the same figures.
  std::ostringstream again;
  const auto c = pipeline::model_rates<double>(specs, {10.0, 5.0}, &cache, false, again, nullptr);
  ASSERT_EQ(c.size(), 2u);
  for (std::size_t q = 0; q < 2; ++q) {
    EXPECT_EQ(c[q].gflops, r[q].gflops);
    EXPECT_EQ(c[q].h2d_gbs, r[q].h2d_gbs);
    EXPECT_EQ(c[q].d2h_gbs, r[q].d2h_gbs);
  }
  EXPECT_EQ(again.str().find("(measured)"), std::string::npos) << again.str();
  std::filesystem::remove(path);
}

TEST(ModelRates, TimingModeKeepsItsGemmRateAndMeasuresItsLink) {
  auto specs = platform::resolve_processors({"emulated:0"}, "test");
  specs[0].link_gbs = 4.0;
  specs[0].emulated_gflops = 300.0;
  std::ostringstream progress;
  const auto r = pipeline::model_rates<double>(specs, {1.0}, nullptr, true, progress, nullptr);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].gflops, 300.0);
  ASSERT_TRUE(r[0].copies());
  EXPECT_LE(r[0].h2d_gbs, 4.0 * 1.05);
  EXPECT_LE(r[0].d2h_gbs, 4.0 * 1.05);
  EXPECT_NE(progress.str().find("GEMM 300 GFLOP/s (given)"), std::string::npos) << progress.str();
}

}  // namespace
