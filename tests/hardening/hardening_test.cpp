// The hardening pieces that need no Kokkos: checked arithmetic, messages that clip what they
// echo, reading and writing files, hostile decks and --set, and the fault-injection plan rewrite.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <tuple>

#include "deck/deck.hpp"
#include "exec/fault.hpp"
#include "exec/plan.hpp"
#include "partition/speeds.hpp"
#include "partition/strategy.hpp"
#include "util/atomic_output.hpp"
#include "util/checked.hpp"
#include "util/error.hpp"
#include "util/input_file.hpp"
#include "util/text.hpp"

namespace cuboid {
namespace {

namespace fs = std::filesystem;

// A fresh directory per test, removed afterwards.
class Scratch : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("cuboid-hardening-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
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
  fs::path dir_;
};

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no exception)";
}

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

// --- decks and --set ---------------------------------------------------------------------------

std::string deck_error(const std::string& text, const std::vector<std::string>& sets = {}) {
  return message_of([&] { deck::parse_deck(text, "t.toml", sets); });
}

TEST(HostileDeck, SetTakesOneKeyAndOneValue) {
  EXPECT_NE(deck_error("", {"problem.m=64\nn=1"}).find("line break"), std::string::npos);
  EXPECT_NE(deck_error("", {"problem.m=64\r"}).find("control character"), std::string::npos);
  EXPECT_EQ(deck_error("", {"problem.m=64 # comment"}), "(no exception)") << "a comment is fine";
  EXPECT_EQ(deck::parse_deck("", "t.toml", {"problem.m=64 # comment"}).problem.m, 64);
  EXPECT_NE(deck_error("", {"problem.m={a=1}"}).find("expected an integer"), std::string::npos);
}

TEST(HostileDeck, HugeValuesAreClippedInMessages) {
  const std::string huge(150000, 'q');
  for (const auto& set : {"problem.precision=" + huge, "problem." + huge + "=1"}) {
    const std::string m = deck_error("", {set});
    EXPECT_LT(m.size(), 400u) << m.substr(0, 200);
  }
  const std::string m = deck_error("[problem]\nc_init = \"" + huge + "\"\n");
  EXPECT_LT(m.size(), 400u);
  EXPECT_NE(m.find("t.toml:2:10: problem.c_init"), std::string::npos) << m;
}

TEST(HostileDeck, SizesAndGridsAreChecked) {
  EXPECT_NE(deck_error("[mpi]\ngrid = [4100, 1047553]\n").find("t.toml:2:8: mpi.grid"),
            std::string::npos);
  EXPECT_NE(deck_error("[problem]\nm = 1099511627776\nn = 1099511627776\nk = 1\ntile = 1048576\n")
                .find("problem.m"),
            std::string::npos);
  EXPECT_NE(deck_error("[problem]\nm = 1099511627776\nn = 1099511627776\nk = 1099511627776\n"
                       "tile = 1\n")
                .find("problem.tile"),
            std::string::npos);
  EXPECT_NE(deck_error("[platform]\nmemory_budget_mib = 1e30\n").find("platform.memory_budget_mib"),
            std::string::npos);
  EXPECT_EQ(
      deck::parse_deck("[platform]\nmemory_budget_mib = 1048576\n", "t").platform.memory_budget_mib,
      1048576.0);
}

TEST(HostileDeck, NumbersTheScalarCannotHoldAreRefused) {
  EXPECT_NE(deck_error("[problem]\nprecision = \"float\"\nalpha = 1e300\n").find("problem.alpha"),
            std::string::npos);
  EXPECT_NE(deck_error("[problem]\nprecision = \"float\"\nbeta = 1e-60\n").find("problem.beta"),
            std::string::npos);
  EXPECT_NE(deck_error("[problem]\nalpha = 1e306\nk = 1000\n").find("|alpha| k"),
            std::string::npos);
  // A double deck takes what a float deck refuses.
  EXPECT_EQ(deck::parse_deck("[problem]\nalpha = 1e300\nk = 8\n", "t").problem.alpha, 1e300);
}

TEST(HostileDeck, SpeedsThatCannotBePartitionedNameTheirKey) {
  const std::string procs = "[platform]\nprocessors = [\"host\", \"staged\"]\n";
  EXPECT_NE(deck_error(procs + "speeds = [1e-300, 1.0]\n").find("t.toml:3:10: platform.speeds"),
            std::string::npos);
  EXPECT_NE(deck_error(procs + "speeds = [1e308, 1e308]\n").find("overflows"), std::string::npos);
  EXPECT_NE(deck_error("[mpi]\nrank_speeds = [0.0, 0.0]\n").find("mpi.rank_speeds"),
            std::string::npos);
  EXPECT_NE(deck_error("[mpi]\nrank_speeds = [1e-300, 0.0, 1.0]\n").find("mpi.rank_speeds"),
            std::string::npos);
  EXPECT_NO_THROW(deck::parse_deck("[mpi]\nrank_speeds = [0.0, 1.0, 2.0]\n", "t"));
}

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

// --- fault injection: the plan loses exactly one tile task --------------------------------------

// How many steps cover each (i, j, l), and whether the chain rules of plan.hpp hold.
using Coverage = std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, int>;
Coverage coverage(const exec::Plan& plan) {
  Coverage c;
  for (const auto& pp : plan.processors)
    for (const auto& s : pp.steps)
      for (std::int64_t l = s.l0; l < s.l1; ++l)
        for (std::int64_t j = s.c.j0; j < s.c.j1; ++j)
          for (std::int64_t i = s.c.i0; i < s.c.i1; ++i) ++c[{i, j, l}];
  return c;
}

void expect_chains_hold(const exec::Plan& plan) {
  for (const auto& pp : plan.processors) {
    const auto& st = pp.steps;
    for (std::size_t s = 0; s < st.size(); ++s) {
      if (!st[s].c_in && st[s].beta == exec::BetaUse::one) {
        // Continues a resident block: the previous step is on it and did not drain it.
        ASSERT_GT(s, 0u);
        EXPECT_TRUE(st[s - 1].c == st[s].c && st[s - 1].dest == st[s].dest && !st[s - 1].c_out);
      }
      if (!st[s].c_out) {
        ASSERT_LT(s + 1, st.size());
        EXPECT_TRUE(st[s + 1].c == st[s].c && !st[s + 1].c_in);
      }
    }
  }
}

TEST(DropTask, ExactlyOneTileTaskIsLeftOutAndTheRulesHold) {
  std::mt19937 rng(7);
  int tried = 0;
  for (auto alg : {partition::Algorithm::nrrp3d, partition::Algorithm::slab,
                   partition::Algorithm::grid, partition::Algorithm::column}) {
    for (int budget : {0, 600, 3000}) {
      for (int min_panels : {1, 4}) {
        const std::int64_t m = 37, n = 29, k = 45, tile = 8;
        const std::vector<double> speeds{1.0, 2.0, 0.5};
        const partition::TileExtent tiles{5, 4, 6};
        const auto zones =
            partition::partition_tiles(alg, partition::Discretization::precise, speeds, tiles);
        exec::PlanOptions o;
        o.budget_elements = {0, budget, budget};
        o.min_panels = {1, min_panels, min_panels};
        o.beta_is_one = rng() % 2;
        const exec::Plan plan = exec::make_plan(zones, m, n, k, tile, o);
        exec::Plan dropped = plan;
        const auto task = exec::drop_one_task(dropped);
        ASSERT_TRUE(task);
        ++tried;
        expect_chains_hold(dropped);
        const Coverage before = coverage(plan), after = coverage(dropped);
        for (const auto& [ijl, count] : before) {
          const auto [i, j, l] = ijl;
          const bool in = i >= task->c.i0 && i < task->c.i1 && j >= task->c.j0 && j < task->c.j1 &&
                          l >= task->l0 && l < task->l1;
          auto it = after.find(ijl);
          EXPECT_EQ(it == after.end() ? 0 : it->second, in ? 0 : count);
        }
        EXPECT_LE(task->c.rows(), tile);
        EXPECT_LE(task->c.cols(), tile);
        EXPECT_LE(task->l1 - task->l0, tile);
        EXPECT_GT(task->c.rows() * task->c.cols() * (task->l1 - task->l0), 0);
      }
    }
  }
  EXPECT_EQ(tried, 24);
}

TEST(DropTask, RefusesWhenOnlyBetaStepsOneTileDeepExist) {
  const auto zones = partition::partition_tiles(
      partition::Algorithm::nrrp3d, partition::Discretization::precise, {1.0}, {2, 2, 1});
  auto plan = exec::make_plan(zones, 16, 16, 8, 8, {});
  EXPECT_FALSE(exec::drop_one_task(plan));
}

TEST(Fault, NamesAndBitFlips) {
  EXPECT_EQ(exec::parse_fault("drop-task"), exec::Fault::drop_task);
  EXPECT_EQ(exec::parse_fault("corrupt"), exec::Fault::corrupt);
  EXPECT_FALSE(exec::parse_fault("melt"));
  // Every flip moves the value by at least 2 (or to Inf/NaN).
  for (double x : {0.0, 1e-300, 0.5, -1.999, 2.0, -3.5, 1e300}) {
    const double y = exec::flip_exponent_bit(x);
    EXPECT_TRUE(!std::isfinite(y) || std::abs(y - x) >= 2.0) << x << " -> " << y;
    const float xf = float(x), yf = exec::flip_exponent_bit(xf);
    EXPECT_TRUE(!std::isfinite(yf) || std::abs(double(yf) - double(xf)) >= 2.0) << xf;
  }
}

}  // namespace
}  // namespace cuboid
