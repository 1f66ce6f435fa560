// Hostile decks and --set values: refused with the file, line and key, clipped, never a crash.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "../support/message_of.hpp"
#include "deck/deck.hpp"
#include "util/error.hpp"

namespace cuboid {
namespace {

using ::cuboid::testing::message_of;

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

}  // namespace
}  // namespace cuboid
