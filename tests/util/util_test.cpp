// src/util: checked arithmetic, clipped messages, input files, all-or-nothing output files.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "../support/message_of.hpp"
#include "../support/scratch_dir.hpp"
#include "util/atomic_output.hpp"
#include "util/checked.hpp"
#include "util/error.hpp"
#include "util/input_file.hpp"
#include "util/text.hpp"

namespace cuboid {
namespace {

namespace fs = std::filesystem;

// A fresh directory per test, removed afterwards.
class Scratch : public ::cuboid::testing::ScratchDir {
 protected:
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }
  static std::string read(const std::string& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
};

using ::cuboid::testing::message_of;

TEST(Checked, ProductsThatOverflowAreRefused) {
  EXPECT_EQ(*checked_product({4100, 1047553}), 4294967300);  // 2^32 + 4: wrapped to 4 in int
  EXPECT_FALSE(checked_product({4100, 1047553}, std::int64_t(1) << 24));
  EXPECT_FALSE(checked_product({std::int64_t(1) << 40, std::int64_t(1) << 40}));
  EXPECT_FALSE(checked_mul(std::numeric_limits<std::int64_t>::max(), 2));
  EXPECT_FALSE(checked_add(std::numeric_limits<std::int64_t>::max(), 1));
  EXPECT_EQ(ceil_div(std::numeric_limits<std::int64_t>::max(), 2), std::int64_t(1) << 62);
  EXPECT_EQ(ceil_div(7, 7), 1);
  EXPECT_EQ(ceil_div(8, 7), 2);
}

TEST(Checked, DoublesBeyondInt64AreNotConverted) {
  EXPECT_FALSE(to_int64(1e30));
  EXPECT_FALSE(to_int64(-1e30));
  EXPECT_FALSE(to_int64(std::numeric_limits<double>::quiet_NaN()));
  EXPECT_FALSE(to_int64(9223372036854775808.0));
  EXPECT_EQ(*to_int64(-9223372036854775808.0), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(*to_int64(1e15), std::int64_t(1e15));
}

TEST(Clip, HugeValuesAndControlCharactersAreNotEchoed) {
  const std::string huge(200000, 'x');
  const std::string c = clip(huge);
  EXPECT_LT(c.size(), 120u);
  EXPECT_NE(c.find("(200000 bytes)"), std::string::npos);
  EXPECT_EQ(clip("a\nb\x01"), "a\\nb\\x01");
  EXPECT_EQ(clip("plain"), "plain");
}

TEST_F(Scratch, InputFilesMustBeRegularAndSmall) {
  EXPECT_NE(message_of([] {
              read_input_file("/dev/zero", 1 << 20, "the deck");
            }).find("/dev/zero: cannot open the deck: it is not a regular file"),
            std::string::npos);
  EXPECT_NE(message_of([&] {
              read_input_file(dir_.string(), 1 << 20, "the deck");
            }).find("it is a directory"),
            std::string::npos);
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  EXPECT_NE(message_of([&] {
              read_input_file(path("fifo"), 1 << 20, "the deck");
            }).find("not a regular file"),
            std::string::npos);
  std::ofstream(path("big")) << std::string(5000, '#');
  EXPECT_NE(message_of([&] { read_input_file(path("big"), 4096, "the deck"); }).find("it holds"),
            std::string::npos);
  EXPECT_EQ(read_input_file(path("big"), 5000, "the deck").size(), 5000u);
  EXPECT_NE(message_of([&] {
              read_input_file(path("absent"), 4096, "the deck");
            }).find("absent: cannot open the deck"),
            std::string::npos);
}

TEST_F(Scratch, OutputPathsAreCheckedBeforeAnyWork) {
  EXPECT_THROW(check_output_path("--json", ""), Error);
  EXPECT_THROW(check_output_path("--json", dir_.string()), Error);
  EXPECT_THROW(check_output_path("--json", path("sub/")), Error);
  EXPECT_THROW(check_output_path("--json", path("nowhere/x.json")), Error);
  EXPECT_THROW(check_output_path("--json", "/dev/null"), Error);
  EXPECT_NO_THROW(check_output_path("--json", path("x.json")));
  EXPECT_TRUE(listing().empty()) << "the check left its probe behind";
  EXPECT_NE(message_of([&] { check_output_path("--svg", dir_.string()); }).find("--svg '"),
            std::string::npos);
}

TEST_F(Scratch, OutputsAreWrittenAllOrNothing) {
  std::ofstream(path("a.json")) << "old";
  fs::create_directories(path("dir"));
  // The second target is a directory: nothing is written, the first keeps its old content.
  EXPECT_THROW(write_outputs({{"--json", path("a.json"), "new"}, {"--svg", path("dir"), "svg"}}),
               Error);
  EXPECT_EQ(read(path("a.json")), "old");
  EXPECT_EQ(listing(), (std::vector<std::string>{"a.json", "dir"}));
  write_outputs({{"--json", path("a.json"), "new"}, {"--svg", path("b.svg"), "svg"}});
  EXPECT_EQ(read(path("a.json")), "new");
  EXPECT_EQ(read(path("b.svg")), "svg");
  EXPECT_EQ(listing(), (std::vector<std::string>{"a.json", "b.svg", "dir"}));
  struct stat st {};
  ASSERT_EQ(::stat(path("b.svg").c_str(), &st), 0);
  EXPECT_NE(st.st_mode & S_IRGRP, 0u) << "written files follow the umask, not mkstemp's 0600";
}

}  // namespace
}  // namespace cuboid
