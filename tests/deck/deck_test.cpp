#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "deck/deck.hpp"
#include "util/error.hpp"

using cuboid::deck::Deck;
using cuboid::deck::parse_deck;
using cuboid::deck::product_settings;
using cuboid::deck::ProductSettings;

namespace {

std::string error_of(const std::string& text, const std::vector<std::string>& overrides = {}) {
  try {
    parse_deck(text, "bad.toml", overrides);
  } catch (const cuboid::Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(Deck, DefaultsWhenEmpty) {
  const Deck d = parse_deck("", "empty.toml");
  EXPECT_EQ(d.problem.m, 1024);
  EXPECT_EQ(d.problem.tile, 256);
  EXPECT_EQ(d.problem.trans_a, cuboid::Op::none);
  EXPECT_EQ(d.problem.trans_b, cuboid::Op::none);
  EXPECT_TRUE(d.platform.measure_speeds);
  EXPECT_FALSE(d.platform.speed_model_flops_only);
  EXPECT_TRUE(d.platform.register_host);
  EXPECT_TRUE(d.platform.processors.empty());
  EXPECT_EQ(d.partition.algorithm, cuboid::partition::Algorithm::nrrp3d);
  EXPECT_EQ(d.partition.discretization, cuboid::partition::Discretization::stepped);
  EXPECT_FALSE(d.partition.is_auto());
  EXPECT_TRUE(d.run.validate);
}

TEST(Deck, ReadsEveryKind) {
  const Deck d = parse_deck(R"(
[problem]
m = 31
n = 32
k = 33
tile = 8
precision = "float"
trans_a = "t"
trans_b = "C"
alpha = -2
beta = 0.5
seed = 7
[platform]
processors = ["host", "staged"]
speeds = [1.0, 3]
memory_budget_mib = 1.5
staged_link_gbs = 4
speed_model = "flops"
staged_copy_jitter_us = 250
emulated_link_gbs = 12.5
register_host = false
slowdown = [1, 2.5]
slowdown_after_s = 0.25
[partition]
algorithm = "grid"
discretization = "rounded"
[run]
repetitions = 2
warmup = 0
validate = false
schedule = "cheapest"
task_tiles = 3
)",
                            "ok.toml");
  EXPECT_EQ(d.problem.m, 31);
  EXPECT_EQ(d.problem.k, 33);
  EXPECT_EQ(d.problem.precision, cuboid::deck::Precision::float32);
  EXPECT_EQ(d.problem.trans_a, cuboid::Op::transpose);
  EXPECT_EQ(d.problem.trans_b, cuboid::Op::conjugate_transpose);
  EXPECT_DOUBLE_EQ(d.problem.alpha, -2.0);
  EXPECT_EQ(d.platform.processors.size(), 2u);
  EXPECT_FALSE(d.platform.measure_speeds);
  EXPECT_DOUBLE_EQ(d.platform.speeds[1], 3.0);
  EXPECT_DOUBLE_EQ(d.platform.staged_link_gbs, 4.0);
  EXPECT_TRUE(d.platform.speed_model_flops_only);
  EXPECT_DOUBLE_EQ(d.platform.staged_copy_jitter_us, 250.0);
  EXPECT_DOUBLE_EQ(d.platform.emulated_link_gbs, 12.5);
  EXPECT_FALSE(d.platform.register_host);
  EXPECT_EQ(d.partition.algorithm, cuboid::partition::Algorithm::grid);
  EXPECT_FALSE(d.run.validate);
  EXPECT_EQ(d.run.schedule, cuboid::deck::Schedule::cheapest);
  EXPECT_EQ(d.run.task_tiles, 3);
  EXPECT_EQ(d.platform.slowdown, (std::vector<double>{1.0, 2.5}));
  EXPECT_DOUBLE_EQ(d.platform.slowdown_after_s, 0.25);
  EXPECT_EQ(d.location("problem.k"), "ok.toml:5:5");
}

TEST(Deck, OverridesApplyAndAreLocated) {
  const Deck d =
      parse_deck("[problem]\nm = 10\n", "o.toml",
                 {"problem.m=20", "partition.algorithm=slab", "platform.processors=[\"host\"]"});
  EXPECT_EQ(d.problem.m, 20);
  EXPECT_EQ(d.partition.algorithm, cuboid::partition::Algorithm::slab);
  EXPECT_EQ(d.location("problem.m"), "--set problem.m=20");
}

// The record of given values (provenance) writes arrays itself: toml++'s own formatter has
// undefined behaviour on numbers below 0.1 inside an array.
TEST(Deck, GivenValuesAreRecordedAsText) {
  const Deck d = parse_deck(
      "[platform]\nprocessors = [\"host\", \"staged\"]\nspeeds = [0.01, 2.5]\n"
      "[problem]\nalpha = 0.001\nm = 64\n",
      "g.toml");
  EXPECT_EQ(d.given.at("platform.processors"), "['host', 'staged']");
  EXPECT_EQ(d.given.at("platform.speeds"), "[0.01, 2.5]");
  EXPECT_EQ(d.given.at("problem.alpha"), "0.001");
  EXPECT_EQ(d.given.at("problem.m"), "64");
}

TEST(Deck, AutoPartition) {
  using cuboid::partition::Algorithm;
  using cuboid::partition::Discretization;
  // "auto" for the algorithm chooses the discretisation too, unless the deck names one.
  Deck d = parse_deck("[partition]\nalgorithm = \"auto\"\n", "a.toml");
  EXPECT_TRUE(d.partition.auto_algorithm);
  EXPECT_TRUE(d.partition.auto_discretization);
  EXPECT_EQ(d.partition.algorithm, Algorithm::nrrp3d);  // what a runner that does not choose uses
  d = parse_deck("[partition]\nalgorithm = \"auto\"\ndiscretization = \"precise\"\n", "a.toml");
  EXPECT_TRUE(d.partition.auto_algorithm);
  EXPECT_FALSE(d.partition.auto_discretization);
  EXPECT_EQ(d.partition.discretization, Discretization::precise);
  d = parse_deck("[partition]\nalgorithm = \"grid\"\n", "a.toml",
                 {"partition.discretization=auto"});
  EXPECT_FALSE(d.partition.auto_algorithm);
  EXPECT_TRUE(d.partition.auto_discretization);
  EXPECT_EQ(d.partition.algorithm, Algorithm::grid);
  // A later override back to a fixed choice wins.
  d = parse_deck("[partition]\nalgorithm = \"auto\"\n", "a.toml",
                 {"partition.algorithm=slab", "partition.discretization=rounded"});
  EXPECT_FALSE(d.partition.is_auto());
  EXPECT_EQ(d.partition.algorithm, Algorithm::slab);
  EXPECT_EQ(d.partition.discretization, Discretization::rounded);
}

struct BadDeck {
  const char* name;
  std::string text;
  std::vector<std::string> overrides;
  std::string expected;  // a substring of the message
};

class BadDecks : public ::testing::TestWithParam<BadDeck> {};

TEST_P(BadDecks, FailWithLocatedMessage) {
  const BadDeck& c = GetParam();
  const std::string msg = error_of(c.text, c.overrides);
  EXPECT_NE(msg.find(c.expected), std::string::npos) << "message was: " << msg;
  if (c.overrides.empty()) {
    EXPECT_EQ(msg.rfind("bad.toml:", 0), 0u) << "message was: " << msg;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Deck, BadDecks,
    ::testing::Values(
        BadDeck{"syntax", "[problem\nm = 1\n", {}, "bad.toml:1:"},
        BadDeck{"unknown_key",
                "[problem]\nmm = 4\n",
                {},
                "bad.toml:2:6: problem.mm: unknown key (did you mean 'problem.m'?)"},
        BadDeck{"unknown_section", "[problme]\nm = 4\n", {}, "unknown section [problme]"},
        BadDeck{"key_outside_section", "m = 4\n", {}, "keys belong in a section"},
        BadDeck{"string_for_int",
                "[problem]\nm = \"big\"\n",
                {},
                "problem.m: expected an integer, got the string \"big\""},
        BadDeck{"float_for_int",
                "[problem]\nn = 2.5\n",
                {},
                "problem.n: expected an integer, got the number 2.5"},
        BadDeck{"zero_dimension",
                "[problem]\nk = 0\n",
                {},
                "bad.toml:2:5: problem.k: 0 is out of range"},
        BadDeck{"negative_tile", "[problem]\ntile = -8\n", {}, "problem.tile: -8 is out of range"},
        BadDeck{"bad_precision",
                "[problem]\nprecision = \"half\"\n",
                {},
                "\"half\" is not one of \"double\", \"float\""},
        BadDeck{"bad_trans",
                "[problem]\ntrans_b = \"TN\"\n",
                {},
                "bad.toml:2:11: problem.trans_b: \"TN\" is not one of \"N\" (as stored), \"T\""},
        BadDeck{"number_trans",
                "[problem]\ntrans_a = 1\n",
                {},
                "problem.trans_a: expected a string, got"},
        BadDeck{
            "nan_alpha", "[problem]\nalpha = nan\n", {}, "problem.alpha: must be a finite number"},
        BadDeck{"bool_beta",
                "[problem]\nbeta = true\n",
                {},
                "problem.beta: expected a number, got true"},
        BadDeck{"processors_not_list",
                "[platform]\nprocessors = \"host\"\n",
                {},
                "expected a list of processor names"},
        BadDeck{"processors_empty", "[platform]\nprocessors = []\n", {}, "the list is empty"},
        BadDeck{"processor_twice",
                "[platform]\nprocessors = [\"host\", \"host\"]\n",
                {},
                "processor \"host\" is listed twice"},
        BadDeck{"speeds_word",
                "[platform]\nspeeds = \"fast\"\n",
                {},
                "expected \"measure\" or a list of positive numbers"},
        BadDeck{"speed_negative",
                "[platform]\nspeeds = [1, -2]\n",
                {},
                "speed the integer -2 is not positive"},
        BadDeck{"speed_count",
                "[platform]\nprocessors = [\"host\", \"staged\"]\nspeeds = [1]\n",
                {},
                "1 speeds for 2 processors"},
        BadDeck{"budget_zero",
                "[platform]\nmemory_budget_mib = 0\n",
                {},
                "platform.memory_budget_mib: must be positive"},
        BadDeck{"speed_model_unknown",
                "[platform]\nspeed_model = \"link\"\n",
                {},
                "platform.speed_model: expected \"flops+link\""},
        BadDeck{"link_zero",
                "[platform]\nstaged_link_gbs = 0\n",
                {},
                "platform.staged_link_gbs: must be positive"},
        BadDeck{"emulated_link_negative",
                "[platform]\nemulated_link_gbs = -2\n",
                {},
                "platform.emulated_link_gbs: must be positive"},
        BadDeck{"register_host_not_a_bool",
                "[platform]\nregister_host = \"off\"\n",
                {},
                "platform.register_host: expected true or false"},
        BadDeck{"jitter_negative",
                "[platform]\nstaged_copy_jitter_us = -1\n",
                {},
                "platform.staged_copy_jitter_us: must be between 0 and 1000000"},
        BadDeck{"bad_algorithm",
                "[partition]\nalgorithm = \"nrrp4d\"\n",
                {},
                "\"nrrp4d\" is not one of \"nrrp3d\""},
        BadDeck{"discretization_none",
                "[partition]\ndiscretization = \"none\"\n",
                {},
                "cannot run: use \"stepped\", \"precise\", \"rounded\" or \"auto\""},
        BadDeck{"bad_discretization",
                "[partition]\ndiscretization = \"exact\"\n",
                {},
                "\"exact\" is not one of \"stepped\", \"precise\", \"rounded\", \"auto\""},
        BadDeck{"repetitions_zero",
                "[run]\nrepetitions = 0\n",
                {},
                "run.repetitions: 0 is out of range"},
        BadDeck{"validate_string",
                "[run]\nvalidate = \"yes\"\n",
                {},
                "run.validate: expected true or false"},
        BadDeck{"bad_schedule",
                "[run]\nschedule = \"steal\"\n",
                {},
                "run.schedule: \"steal\" is not one of \"static\", \"random\", \"cheapest\""},
        BadDeck{
            "task_tiles_zero", "[run]\ntask_tiles = 0\n", {}, "run.task_tiles: 0 is out of range"},
        BadDeck{"slowdown_below_one",
                "[platform]\nslowdown = [1, 0.5]\n",
                {},
                "platform.slowdown: slowdown factor the number 0.5 must be between 1"},
        BadDeck{"slowdown_count",
                "[platform]\nprocessors = [\"host\", \"staged\"]\nslowdown = [2]\n",
                {},
                "platform.slowdown: 1 factors for 2 processors"},
        BadDeck{"slowdown_not_list",
                "[platform]\nslowdown = 2\n",
                {},
                "platform.slowdown: expected a list of slowdown factors"},
        BadDeck{"slowdown_after_negative",
                "[platform]\nslowdown_after_s = -1\n",
                {},
                "platform.slowdown_after_s: must be between 0 and 1000000"},
        BadDeck{"mpi_grid_shape", "[mpi]\ngrid = [2]\n", {}, "mpi.grid: expected two integers"},
        BadDeck{
            "override_unknown", "", {"problem.q=3"}, "--set problem.q=3: problem.q: unknown key"},
        BadDeck{"override_no_equals", "", {"problem.m"}, "expected section.key=value"},
        BadDeck{"override_bad_value",
                "",
                {"problem.m=x1"},
                "--set problem.m=x1: problem.m: expected an integer"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(Deck, MissingFileIsNamed) {
  try {
    cuboid::deck::load_deck("/nonexistent/deck.toml");
    FAIL() << "no error";
  } catch (const cuboid::Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/deck.toml: cannot open"), std::string::npos);
  }
}

// A UTF-8 byte-order mark at the start of the file is valid TOML (editors on Windows write one).
const std::string kBom = "\xEF\xBB\xBF";

TEST(Deck, ByteOrderMarkIsSkipped) {
  const Deck d = parse_deck(kBom + "[problem]\nm = 31\n", "bom.toml");
  EXPECT_EQ(d.problem.m, 31);
  // The same through the file reader, as `cuboid run` reads a deck.
  const auto path = std::filesystem::temp_directory_path() /
                    ("cuboid-deck-bom-" + std::to_string(::getpid()) + ".toml");
  {
    std::ofstream out(path, std::ios::binary);
    out << kBom << "# saved by an editor that writes a BOM\n[problem]\nn = 33\n";
  }
  Deck loaded;
  EXPECT_NO_THROW(loaded = cuboid::deck::load_deck(path.string()));
  std::filesystem::remove(path);
  EXPECT_EQ(loaded.problem.n, 33);
}

// Errors in a deck with a BOM name the same line and column as without one (the BOM is no
// column of line 1), whichever check finds them: toml++'s parser, a key's check, or the
// refusal of non-ASCII text.
TEST(Deck, ByteOrderMarkKeepsPositions) {
  const struct {
    std::string text, expected;
  } cases[] = {
      {"[problem]\nmm = 4\n", "bad.toml:2:6: problem.mm: unknown key"},
      {"[problem]\nm = 4 4\n", "bad.toml:2:7: "},
      {"[problem]\nk = \"\xC3\xA9\"\n", "bad.toml:2:6: a non-ASCII character"},
      {"[problem] x\nm = 4\n", "bad.toml:1:11: "},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const std::string plain = error_of(c.text);
    EXPECT_EQ(plain.rfind(c.expected, 0), 0u) << "message was: " << plain;
    EXPECT_EQ(error_of(kBom + c.text), plain);
  }
}

// Only at the very start: a BOM anywhere else is a non-ASCII character like any other.
TEST(Deck, ByteOrderMarkOnlyAtTheStart) {
  EXPECT_EQ(error_of("[problem]\n" + kBom + "m = 4\n").rfind("bad.toml:2:1: a non-ASCII", 0), 0u);
  EXPECT_EQ(error_of(kBom + kBom + "[problem]\n").rfind("bad.toml:1:1: a non-ASCII", 0), 0u);
}

// The one mapping from a deck to a product's settings (the CLI's runs, p?gemm_'s CUBOID_DECK).
TEST(Deck, ProductSettingsFollowTheDeck) {
  const Deck defaults = parse_deck("", "empty.toml");
  const ProductSettings d = product_settings(defaults);
  EXPECT_TRUE(d.processors.empty());
  EXPECT_TRUE(d.speeds.empty());  // measured (or cached)
  EXPECT_TRUE(d.use_speed_cache);
  EXPECT_TRUE(d.register_host);
  EXPECT_EQ(d.rank_algorithm, "auto");  // across ranks the traffic model chooses by default
  EXPECT_EQ(d.algorithm, "nrrp3d");
  const Deck given = parse_deck(
      "[platform]\nprocessors = [\"host\", \"staged\"]\nspeeds = [2.0, 1.0]\n"
      "memory_budget_mib = 64.0\nspeed_model = \"flops\"\nregister_host = false\n"
      "[partition]\nalgorithm = \"grid\"\n"
      "[mpi]\nrank_speeds = [1.0, 0.5]\nbandwidth_gbs = 3.0\nmemory_limit_mib = 100.0\n",
      "given.toml");
  const ProductSettings s = product_settings(given);
  EXPECT_EQ(s.processors, (std::vector<std::string>{"host", "staged"}));
  EXPECT_EQ(s.speeds, (std::vector<double>{2.0, 1.0}));
  EXPECT_FALSE(s.link_model);
  EXPECT_DOUBLE_EQ(s.memory_budget_mib, 64.0);
  EXPECT_FALSE(s.register_host);
  EXPECT_EQ(s.algorithm, "grid");
  EXPECT_EQ(s.rank_algorithm, "grid");  // named by the deck: used across ranks too
  EXPECT_EQ(s.rank_speeds, (std::vector<double>{1.0, 0.5}));
  EXPECT_DOUBLE_EQ(s.bandwidth_gbs, 3.0);
  EXPECT_DOUBLE_EQ(s.memory_limit_mib, 100.0);
}

TEST(Deck, EveryShippedDeckParses) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(CUBOID_INPUTS_DIR)) {
    if (entry.path().extension() != ".toml") continue;
    SCOPED_TRACE(entry.path().string());
    EXPECT_NO_THROW(cuboid::deck::load_deck(entry.path().string()));
    ++count;
  }
  EXPECT_GE(count, 5);
}
