#include "deck/deck.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <optional>
#include <sstream>

#include "partition/speeds.hpp"
#include "util/checked.hpp"
#include "util/error.hpp"
#include "util/input_file.hpp"
#include "util/names.hpp"
#include "util/text.hpp"

namespace cuboid::deck {
namespace {

// In the order a refusal lists them.
constexpr Named<Precision> kPrecisions[] = {{Precision::float64, "double"},
                                            {Precision::float32, "float"},
                                            {Precision::complex128, "complex-double"},
                                            {Precision::complex64, "complex-float"}};

std::string position(const std::string& file, const toml::source_region& src) {
  std::ostringstream os;
  os << clip(file, 200) << ":" << src.begin.line << ":" << src.begin.column;
  return os.str();
}

// Where a key came from: a line of the deck, or a --set override.
struct Origin {
  std::string text;
};

[[noreturn]] void fail(const Origin& at, const std::string& key, const std::string& message) {
  throw Error(at.text + ": " + clip(key) + ": " + message);
}

std::string describe(const toml::node& node) {
  std::ostringstream os;
  switch (node.type()) {
    case toml::node_type::string:
      os << "the string \"" << clip(*node.value<std::string>()) << "\"";
      break;
    case toml::node_type::integer:
      os << "the integer " << *node.value<std::int64_t>();
      break;
    case toml::node_type::floating_point:
      os << "the number " << *node.value<double>();
      break;
    case toml::node_type::boolean:
      os << (*node.value<bool>() ? "true" : "false");
      break;
    case toml::node_type::array:
      os << "an array";
      break;
    case toml::node_type::table:
      os << "a table";
      break;
    default:
      os << "a " << node.type();
      break;
  }
  return os.str();
}

std::int64_t get_int(const toml::node& node, const Origin& at, const std::string& key,
                     std::int64_t lo, std::int64_t hi) {
  auto v = node.value_exact<std::int64_t>();
  if (!v) fail(at, key, "expected an integer, got " + describe(node));
  if (*v < lo || *v > hi) {
    fail(at, key,
         std::to_string(*v) + " is out of range: it must be between " + std::to_string(lo) +
             " and " + std::to_string(hi));
  }
  return *v;
}

double get_number(const toml::node& node, const Origin& at, const std::string& key) {
  std::optional<double> v;
  if (node.is_integer()) v = double(*node.value<std::int64_t>());
  if (node.is_floating_point()) v = *node.value<double>();
  if (!v) fail(at, key, "expected a number, got " + describe(node));
  if (!std::isfinite(*v)) fail(at, key, "must be a finite number, got " + describe(node));
  return *v;
}

// A number from 0 to 10^6; `unit` says what it measures.
double get_up_to_a_million(const toml::node& node, const Origin& at, const std::string& key,
                           const std::string& unit) {
  const double v = get_number(node, at, key);
  if (v < 0 || v > 1e6)
    fail(at, key, "must be between 0 and 1000000 (" + unit + "), got " + describe(node));
  return v;
}

// A number that must be positive; `unit` says what it measures.
double get_positive(const toml::node& node, const Origin& at, const std::string& key,
                    const std::string& unit) {
  const double v = get_number(node, at, key);
  if (!(v > 0)) fail(at, key, "must be positive (" + unit + "), got " + describe(node));
  return v;
}

bool get_bool(const toml::node& node, const Origin& at, const std::string& key) {
  auto v = node.value_exact<bool>();
  if (!v) fail(at, key, "expected true or false, got " + describe(node));
  return *v;
}

std::string get_string(const toml::node& node, const Origin& at, const std::string& key) {
  auto v = node.value_exact<std::string>();
  if (!v) fail(at, key, "expected a string, got " + describe(node));
  return *v;
}

template <class T>
T get_choice(const toml::node& node, const Origin& at, const std::string& key,
             const std::vector<std::pair<std::string, T>>& choices) {
  const std::string s = get_string(node, at, key);
  std::string names;
  for (const auto& [name, value] : choices) {
    if (name == s) return value;
    names += (names.empty() ? "" : ", ") + ("\"" + name + "\"");
  }
  fail(at, key, "\"" + clip(s) + "\" is not one of " + names);
}

template <class T, std::size_t N>
T get_choice(const toml::node& node, const Origin& at, const std::string& key,
             const Named<T> (&table)[N]) {
  std::vector<std::pair<std::string, T>> choices;
  for (const auto& e : table) choices.emplace_back(std::string(e.name), e.value);
  return get_choice(node, at, key, choices);
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
      diag = up;
    }
  }
  return row[b.size()];
}

// A number for a message: "1e+300", not 300 digits.
std::string num(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// Largest memory budget a deck may give (MiB): 1 PiB.
constexpr double kMaxBudgetMib = double(std::int64_t(1) << 30);

// A memory size in MiB: positive (`meaning` says what of), and far inside int64 once converted
// to elements or bytes (2^30 MiB = 1 PiB, more than any `holder` has).
double get_mib(const toml::node& node, const Origin& at, const std::string& key,
               const std::string& meaning, const std::string& holder) {
  const double v = get_number(node, at, key);
  if (!(v > 0)) fail(at, key, "must be " + meaning + ", got " + describe(node));
  if (v > kMaxBudgetMib)
    fail(at, key,
         describe(node) + " is more memory than any " + holder + " has: at most " +
             std::to_string(std::int64_t(kMaxBudgetMib)) + " MiB (1 PiB)");
  return v;
}

// Most processes a grid may have: more than any machine runs, small enough that products of
// grid sides never overflow.
constexpr std::int64_t kMaxGridProcesses = std::int64_t(1) << 24;

using Setter = std::function<void(Deck&, const toml::node&, const Origin&, const std::string&)>;

using Setters = std::map<std::string, Setter>;

// Largest matrix side and largest check a deck may ask for.
constexpr std::int64_t kBig = std::int64_t(1) << 40;

// [problem]: the product C = alpha op(A) op(B) + beta C.
void add_problem_keys(Setters& t) {
  t["problem.m"] = [](Deck& d, auto& n, auto& at, auto& k) {
    d.problem.m = get_int(n, at, k, 1, kBig);
  };
  t["problem.n"] = [](Deck& d, auto& n, auto& at, auto& k) {
    d.problem.n = get_int(n, at, k, 1, kBig);
  };
  t["problem.k"] = [](Deck& d, auto& n, auto& at, auto& k) {
    d.problem.k = get_int(n, at, k, 1, kBig);
  };
  t["problem.tile"] = [](Deck& d, auto& n, auto& at, auto& k) {
    d.problem.tile = get_int(n, at, k, 1, std::int64_t(1) << 20);
  };
  t["problem.precision"] = [](Deck& d, auto& n, auto& at, auto& k) {
    d.problem.precision = get_choice(n, at, k, kPrecisions);
  };
  // BLAS's letters, in either case.
  for (const char* key : {"problem.trans_a", "problem.trans_b"})
    t[key] = [](Deck& d, auto& n, auto& at, auto& k) {
      const std::string v = get_string(n, at, k);
      std::optional<Op> op;
      const char c = v.size() == 1 ? char(std::toupper(static_cast<unsigned char>(v[0]))) : 0;
      if (c == 'N' || c == 'T' || c == 'C') op = Op(c);
      if (!op)
        fail(at, k,
             "\"" + clip(v) +
                 "\" is not one of \"N\" (as stored), \"T\" (transposed), \"C\" (conjugate "
                 "transposed)");
      (k == "problem.trans_a" ? d.problem.trans_a : d.problem.trans_b) = *op;
    };
  // A number, or [re, im] for a complex precision.
  for (const char* key : {"problem.alpha", "problem.beta"})
    t[key] = [](Deck& d, auto& n, auto& at, auto& k) {
      const bool a = k == "problem.alpha";
      double& re = a ? d.problem.alpha : d.problem.beta;
      double& im = a ? d.problem.alpha_im : d.problem.beta_im;
      if (const toml::array* arr = n.as_array()) {
        if (arr->size() != 2)
          fail(at, k,
               "expected a number or [re, im], got an array of " + std::to_string(arr->size()) +
                   " elements");
        re = get_number(*arr->get(0), at, k);
        im = get_number(*arr->get(1), at, k);
      } else {
        re = get_number(n, at, k);
        im = 0;
      }
    };
  t["problem.seed"] = [](Deck& d, auto& n, auto& at, auto& k) {
    d.problem.seed = std::uint64_t(get_int(n, at, k, 0, std::numeric_limits<std::int64_t>::max()));
  };
  t["problem.c_init"] = [](Deck& d, auto& n, auto& at, auto& k) {
    d.problem.c_init = get_choice<CInit>(
        n, at, k, {{"random", CInit::random}, {"zero", CInit::zero}, {"nan", CInit::nan}});
  };
}

// [platform]: which processors run, and how fast they are taken to be.
void add_platform_keys(Setters& t) {
  t["platform.processors"] = [](Deck& d, auto& n, auto& at, auto& k) {
    const toml::array* arr = n.as_array();
    if (!arr)
      fail(at, k,
           "expected a list of processor names such as [\"host\", \"cuda:0\"], got " + describe(n));
    if (arr->empty())
      fail(at, k,
           "the list is empty: name at least one processor, or remove the key to use every "
           "enabled space");
    d.platform.processors.clear();
    for (const toml::node& e : *arr) {
      const std::string name = get_string(e, at, k);
      if (std::find(d.platform.processors.begin(), d.platform.processors.end(), name) !=
          d.platform.processors.end())
        fail(at, k, "processor \"" + clip(name) + "\" is listed twice");
      d.platform.processors.push_back(name);
    }
  };
  t["platform.speeds"] = [](Deck& d, auto& n, auto& at, auto& k) {
    if (n.is_string()) {
      if (get_string(n, at, k) != "measure")
        fail(at, k, "expected \"measure\" or a list of positive numbers, got " + describe(n));
      d.platform.measure_speeds = true;
      d.platform.speeds.clear();
      return;
    }
    const toml::array* arr = n.as_array();
    if (!arr) fail(at, k, "expected \"measure\" or a list of positive numbers, got " + describe(n));
    if (arr->empty()) fail(at, k, "the list is empty: give one speed per processor");
    d.platform.measure_speeds = false;
    d.platform.speeds.clear();
    for (const toml::node& e : *arr) {
      double v = get_number(e, at, k);
      if (!(v > 0)) fail(at, k, "speed " + describe(e) + " is not positive");
      d.platform.speeds.push_back(v);
    }
  };
  t["platform.memory_budget_mib"] = [](Deck& d, auto& n, auto& at, auto& k) {
    d.platform.memory_budget_mib =
        get_mib(n, at, k, "positive (MiB of processor memory a run may use)", "processor");
  };
  t["platform.speed_cache"] = [](Deck& d, auto& n, auto& at, auto& k) {
    d.platform.use_speed_cache = get_bool(n, at, k);
  };
  t["platform.speed_model"] = [](Deck& d, auto& n, auto& at, auto& k) {
    const std::string s = get_string(n, at, k);
    if (s != "flops" && s != "flops+link")
      fail(at, k,
           "expected \"flops+link\" (a device's GEMM rate and link, measured apart) or "
           "\"flops\" (one rate per processor, copies included), got " +
               describe(n));
    d.platform.speed_model_flops_only = s == "flops";
  };
}

// [platform]: the emulated and staged devices and the slowdowns that tests and studies use.
void add_platform_emulation_keys(Setters& t) {
  t["platform.staged_link_gbs"] = [](Deck& d, auto& n, auto& at, auto& k) {
    d.platform.staged_link_gbs =
        get_positive(n, at, k, "GB/s of the link a staged processor copies over");
  };
  t["platform.emulated_link_gbs"] = [](Deck& d, auto& n, auto& at, auto& k) {
    d.platform.emulated_link_gbs =
        get_positive(n, at, k, "GB/s of the link an emulated device copies over");
  };
  t["platform.emulated_gflops"] = [](Deck& d, auto& n, auto& at, auto& k) {
    double v = get_number(n, at, k);
    if (!(v >= 0))
      fail(at, k,
           "must be 0 (emulated GEMMs compute) or a positive rate in GFLOP/s (timing mode: "
           "they sleep for their flops at that rate), got " +
               describe(n));
    d.platform.emulated_gflops = v;
  };
  t["platform.register_host"] = [](Deck& d, auto& n, auto& at, auto& k) {
    d.platform.register_host = get_bool(n, at, k);
  };
  t["platform.staged_copy_jitter_us"] = [](Deck& d, auto& n, auto& at, auto& k) {
    d.platform.staged_copy_jitter_us =
        get_up_to_a_million(n, at, k, "microseconds of random delay before each staged copy");
  };
  t["platform.slowdown"] = [](Deck& d, auto& n, auto& at, auto& k) {
    const toml::array* arr = n.as_array();
    if (!arr || arr->empty())
      fail(at, k,
           "expected a list of slowdown factors, one per processor (1: full speed), got " +
               describe(n));
    d.platform.slowdown.clear();
    for (const toml::node& e : *arr) {
      const double v = get_number(e, at, k);
      if (!(v >= 1) || v > 1000)
        fail(at, k,
             "slowdown factor " + describe(e) +
                 " must be between 1 (full speed) and 1000 (a thousand times slower)");
      d.platform.slowdown.push_back(v);
    }
  };
  t["platform.slowdown_after_s"] = [](Deck& d, auto& n, auto& at, auto& k) {
    d.platform.slowdown_after_s =
        get_up_to_a_million(n, at, k, "seconds into each run before platform.slowdown applies");
  };
}

// [partition] and [run]: how the cuboid is cut, and how the product is run and checked.
void add_partition_and_run_keys(Setters& t) {
  t["partition.algorithm"] = [](Deck& d, auto& n, auto& at, auto& k) {
    if (n.is_string() && get_string(n, at, k) == "auto") {
      d.partition.auto_algorithm = true;
      return;
    }
    std::vector<std::pair<std::string, partition::Algorithm>> c;
    for (auto name : partition::algorithm_names())
      c.emplace_back(std::string(name), *partition::parse_algorithm(name));
    c.emplace_back("auto", partition::Algorithm::nrrp3d);
    d.partition.algorithm = get_choice(n, at, k, c);
    d.partition.auto_algorithm = false;
  };
  t["partition.discretization"] = [](Deck& d, auto& n, auto& at, auto& k) {
    const std::string s = get_string(n, at, k);
    if (s == "none")
      fail(at, k,
           "\"none\" keeps the partition continuous, which cannot run: use \"stepped\", "
           "\"precise\", \"rounded\" or \"auto\"");
    if (s == "auto") {
      d.partition.auto_discretization = true;
      return;
    }
    d.partition.discretization =
        get_choice<partition::Discretization>(n, at, k,
                                              {{"stepped", partition::Discretization::stepped},
                                               {"precise", partition::Discretization::precise},
                                               {"rounded", partition::Discretization::rounded},
                                               {"auto", partition::Discretization::stepped}});
    d.partition.auto_discretization = false;
  };
  t["run.repetitions"] = [](Deck& d, auto& n, auto& at, auto& k) {
    d.run.repetitions = int(get_int(n, at, k, 1, 100000));
  };
  t["run.warmup"] = [](Deck& d, auto& n, auto& at, auto& k) {
    d.run.warmup = int(get_int(n, at, k, 0, 100000));
  };
  t["run.validate"] = [](Deck& d, auto& n, auto& at, auto& k) {
    d.run.validate = get_bool(n, at, k);
  };
  t["run.schedule"] = [](Deck& d, auto& n, auto& at, auto& k) {
    d.run.schedule = get_choice<Schedule>(n, at, k,
                                          {{"static", Schedule::static_plan},
                                           {"random", Schedule::random},
                                           {"cheapest", Schedule::cheapest}});
  };
  t["run.task_tiles"] = [](Deck& d, auto& n, auto& at, auto& k) {
    d.run.task_tiles = get_int(n, at, k, 1, std::int64_t(1) << 20);
  };
}

// [mpi]: the process grid, the layout of the matrices over it, and the per-rank limits.
void add_mpi_keys(Setters& t) {
  t["mpi.grid"] = [](Deck& d, auto& n, auto& at, auto& k) {
    const toml::array* arr = n.as_array();
    if (!arr || arr->size() != 2)
      fail(at, k, "expected two integers [rows, columns] of the process grid, got " + describe(n));
    d.mpi.grid.clear();
    for (const toml::node& e : *arr) d.mpi.grid.push_back(int(get_int(e, at, k, 1, 1 << 20)));
  };
  t["mpi.block"] = [](Deck& d, auto& n, auto& at, auto& k) {
    d.mpi.block = get_int(n, at, k, 1, std::int64_t(1) << 20);
  };
  t["mpi.rank_speeds"] = [](Deck& d, auto& n, auto& at, auto& k) {
    const toml::array* arr = n.as_array();
    if (!arr || arr->empty())
      fail(at, k, "expected a non-empty list of per-rank speed factors, got " + describe(n));
    d.mpi.rank_speeds.clear();
    for (const toml::node& e : *arr) {
      double v = get_number(e, at, k);
      if (v < 0)
        fail(at, k, "rank speed factor " + describe(e) + " is negative (0 gives a rank no work)");
      d.mpi.rank_speeds.push_back(v);
    }
  };
  t["mpi.layout"] = [](Deck& d, auto& n, auto& at, auto& k) {
    d.mpi.aligned = get_choice<bool>(n, at, k, {{"block-cyclic", false}, {"aligned", true}});
  };
  t["mpi.bandwidth_gbs"] = [](Deck& d, auto& n, auto& at, auto& k) {
    const double v = get_number(n, at, k);
    if (!(v > 0) || !std::isfinite(v))
      fail(at, k, "must be a positive number of GB/s, got " + describe(n));
    d.mpi.bandwidth_gbs = v;
  };
  t["mpi.full_check_max"] = [](Deck& d, auto& n, auto& at, auto& k) {
    d.mpi.full_check_max = get_int(n, at, k, 0, kBig);
  };
  t["mpi.memory_limit_mib"] = [](Deck& d, auto& n, auto& at, auto& k) {
    d.mpi.memory_limit_mib = get_mib(n, at, k, "a positive number of MiB per rank", "rank");
  };
}

// Every key a deck may hold. Adding a key means adding a line in one of the functions above
// and a row in docs/decks.md.
const Setters& keys() {
  static const Setters table = [] {
    Setters t;
    add_problem_keys(t);
    add_platform_keys(t);
    add_platform_emulation_keys(t);
    add_partition_and_run_keys(t);
    add_mpi_keys(t);
    return t;
  }();
  return table;
}

const std::vector<std::string>& sections() {
  static const std::vector<std::string> s = {"problem", "platform", "partition", "run", "mpi"};
  return s;
}

std::string suggestion(const std::string& full) {
  std::string best;
  std::size_t best_d = 4;
  for (const auto& [name, setter] : keys()) {
    std::size_t d = edit_distance(full, name);
    if (d < best_d) best_d = d, best = name;
  }
  return best.empty() ? "" : " (did you mean '" + best + "'?)";
}

// The value as TOML text, for the provenance record. Arrays and tables are written here rather
// than by toml++'s formatter, whose line-width estimate converts log10 of a number below 0.1 to
// an unsigned integer (undefined behaviour, found by the deck fuzzer on `speeds = [0.01, 1.0]`).
std::string echo(const toml::node& node) {
  if (const auto* arr = node.as_array()) {
    std::string s = "[";
    for (std::size_t i = 0; i < arr->size(); ++i) s += (i ? ", " : "") + echo((*arr)[i]);
    return s + "]";
  }
  if (const auto* tbl = node.as_table()) {
    std::string s = "{";
    bool first = true;
    for (const auto& [k, v] : *tbl) {
      s += (first ? " " : ", ") + std::string(k.str()) + " = " + echo(v);
      first = false;
    }
    return s + (first ? "}" : " }");
  }
  std::ostringstream value;
  node.visit([&](const auto& v) { value << v; });
  return value.str();
}

void apply(Deck& deck, const std::string& full, const toml::node& node, const Origin& at) {
  auto it = keys().find(full);
  if (it == keys().end()) fail(at, full, "unknown key" + suggestion(full));
  it->second(deck, node, at, full);
  deck.where[full] = at.text;
  deck.given[full] = echo(node);
}

// Cross-key checks: each names the key that has to change.
void check(Deck& d) {
  // partition.algorithm = "auto" chooses the discretisation too, unless one was given.
  if (d.partition.auto_algorithm && d.where.count("partition.discretization") == 0)
    d.partition.auto_discretization = true;
  const auto at = [&](const std::string& key) { return Origin{d.location(key)}; };
  if (!d.platform.measure_speeds && !d.platform.processors.empty() &&
      d.platform.speeds.size() != d.platform.processors.size()) {
    fail(at("platform.speeds"), "platform.speeds",
         std::to_string(d.platform.speeds.size()) + " speeds for " +
             std::to_string(d.platform.processors.size()) + " processors: give one per processor");
  }
  const auto& pr = d.problem;
  const auto tasks =
      checked_product({ceil_div(pr.m, pr.tile), ceil_div(pr.n, pr.tile), ceil_div(pr.k, pr.tile)},
                      std::int64_t(1e15));
  if (!tasks)
    fail(at("problem.tile"), "problem.tile",
         "m=" + std::to_string(pr.m) + " n=" + std::to_string(pr.n) + " k=" + std::to_string(pr.k) +
             " in tiles of " + std::to_string(pr.tile) +
             " make more than 10^15 tile tasks; use a larger tile");
  if (!checked_product({pr.m, pr.n}) || !checked_product({pr.m, pr.k}) ||
      !checked_product({pr.k, pr.n}))
    fail(at("problem.m"), "problem.m",
         "m=" + std::to_string(pr.m) + " n=" + std::to_string(pr.n) + " k=" + std::to_string(pr.k) +
             ": a matrix of more than 2^63 elements");

  // alpha and beta must be numbers of the run's scalar type, and so must every element of C:
  // |C| <= |alpha| k + |beta| with |A|, |B|, |C0| < 1 (moduli, and sqrt(2) more, for complex).
  const bool single = pr.precision == Precision::float32 || pr.precision == Precision::complex64;
  const bool complex = is_complex(pr.precision);
  const double largest =
      single ? double(std::numeric_limits<float>::max()) : std::numeric_limits<double>::max();
  const std::string type = to_string(pr.precision);
  const std::string wider = complex ? "\"complex-double\"" : "\"double\"";
  for (const char* key : {"problem.alpha", "problem.beta"}) {
    const bool a = std::string(key) == "problem.alpha";
    const double re = a ? pr.alpha : pr.beta, im = a ? pr.alpha_im : pr.beta_im;
    if (im != 0 && !complex)
      fail(at(key), key,
           "has an imaginary part (" + num(im) + ") but precision \"" + type +
               "\" is real: use precision \"complex-" + type + "\"");
    for (const double v : {re, im}) {
      if (std::abs(v) > largest)
        fail(at(key), key,
             num(v) + " is beyond the largest " + type + " (" + num(largest) + "): use precision " +
                 wider + " or a smaller value");
      if (single && v != 0 && float(v) == 0.0f)
        fail(at(key), key, "is nonzero but 0 as a float (" + num(v) + "): use precision " + wider);
    }
  }
  const double growth = complex ? std::sqrt(2.0) : 1.0;
  const double alpha_abs = std::hypot(pr.alpha, pr.alpha_im),
               beta_abs = std::hypot(pr.beta, pr.beta_im);
  if (growth * (alpha_abs * double(pr.k) + beta_abs) > largest)
    fail(at("problem.alpha"), "problem.alpha",
         "|alpha| k = " + num(alpha_abs * double(pr.k)) +
             ": elements of C could exceed the largest " + type +
             " and overflow; use a smaller alpha" +
             (single ? " or precision " + wider : std::string()));

  // Timing mode computes no product: one cannot be validated.
  if (d.platform.emulated_gflops > 0 && d.run.validate)
    fail(at("platform.emulated_gflops"), "platform.emulated_gflops",
         "timing mode: emulated GEMMs sleep instead of computing, so the product cannot be "
         "validated: set run.validate = false");

  if (!d.platform.slowdown.empty() && !d.platform.processors.empty() &&
      d.platform.slowdown.size() != d.platform.processors.size())
    fail(at("platform.slowdown"), "platform.slowdown",
         std::to_string(d.platform.slowdown.size()) + " factors for " +
             std::to_string(d.platform.processors.size()) +
             " processors: give one per processor (1: full speed)");
  if (!d.platform.measure_speeds)
    if (const auto problem = partition::speed_problem(d.platform.speeds))
      fail(at("platform.speeds"), "platform.speeds", *problem);
  if (!d.mpi.rank_speeds.empty()) {
    std::vector<double> working;
    for (double f : d.mpi.rank_speeds)
      if (f > 0) working.push_back(f);
    if (working.empty())
      fail(at("mpi.rank_speeds"), "mpi.rank_speeds",
           "every factor is 0: no rank has a positive speed, nobody would compute");
    if (const auto problem = partition::speed_problem(working))
      fail(at("mpi.rank_speeds"), "mpi.rank_speeds", *problem + " (the nonzero factors)");
  }
  if (d.mpi.grid.size() == 2 && !checked_product({d.mpi.grid[0], d.mpi.grid[1]}, kMaxGridProcesses))
    fail(at("mpi.grid"), "mpi.grid",
         "[" + std::to_string(d.mpi.grid[0]) + ", " + std::to_string(d.mpi.grid[1]) +
             "] is a grid of more than " + std::to_string(kMaxGridProcesses) + " processes");
}

void parse_into(Deck& deck, const toml::table& root, const std::string& name) {
  for (const auto& [sec_key, sec_node] : root) {
    const std::string section(sec_key.str());
    const Origin sec_at{position(name, sec_node.source())};
    if (std::find(sections().begin(), sections().end(), section) == sections().end()) {
      const Origin key_at{position(name, sec_key.source())};
      if (!sec_node.is_table())
        fail(key_at, section,
             "keys belong in a section: [problem], [platform], [partition], [run] or [mpi]");
      fail(key_at, section,
           "unknown section [" + section +
               "]; sections are [problem], [platform], [partition], [run], [mpi]");
    }
    const toml::table* tbl = sec_node.as_table();
    if (!tbl)
      fail(sec_at, section, "expected a section [" + section + "], got " + describe(sec_node));
    for (const auto& [key, node] : *tbl) {
      apply(deck, section + "." + std::string(key.str()), node,
            Origin{position(name, node.source())});
    }
  }
}

// toml++ 3.3 (Debian 12) reaches __builtin_unreachable() -- undefined behaviour -- on some
// non-ASCII characters where it looks for whitespace (marzer/tomlplusplus#190, fixed upstream
// later). No deck needs them outside comments (every string a deck holds is a name), so they
// are refused before toml++ sees the text. Strings are followed so that a '#' inside one does
// not start a comment; when unsure, text counts as a string (refused), never as a comment.
void require_ascii(const std::string& text, const std::string& name) {
  enum class In { code, comment, basic, literal, ml_basic, ml_literal } in = In::code;
  std::size_t line = 1, column = 0;
  const auto at = [&](std::size_t i, const char* s) {
    return text.compare(i, std::strlen(s), s) == 0;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    ++column;
    if (c == '\n') {
      line += 1, column = 0;
      if (in == In::comment || in == In::basic || in == In::literal) in = In::code;
      continue;
    }
    if (static_cast<unsigned char>(c) >= 0x80 && in != In::comment) {
      std::ostringstream os;
      os << clip(name, 200) << ":" << line << ":" << column
         << ": a non-ASCII character outside a comment (deck keys and values are ASCII)";
      throw Error(os.str());
    }
    switch (in) {
      case In::code:
        if (at(i, "\"\"\"")) {
          in = In::ml_basic, i += 2, column += 2;
        } else if (at(i, "'''")) {
          in = In::ml_literal, i += 2, column += 2;
        } else if (c == '"') {
          in = In::basic;
        } else if (c == '\'') {
          in = In::literal;
        } else if (c == '#') {
          in = In::comment;
        }
        break;
      case In::basic:
      case In::ml_basic:
        if (c == '\\') {
          // The escaped character is skipped (a line break after a backslash is counted).
          if (i + 1 < text.size() && text[i + 1] == '\n') {
            line += 1, column = 0, ++i;
          } else if (i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) < 0x80) {
            ++i, ++column;
          }
        } else if (in == In::basic && c == '"') {
          in = In::code;
        } else if (in == In::ml_basic && at(i, "\"\"\"")) {
          in = In::code, i += 2, column += 2;
        }
        break;
      case In::literal:
        if (c == '\'') in = In::code;
        break;
      case In::ml_literal:
        if (at(i, "'''")) in = In::code, i += 2, column += 2;
        break;
      case In::comment:
        break;
    }
  }
}

void apply_override(Deck& deck, const std::string& text) {
  const Origin at{"--set " + clip(text)};
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw Error(at.text + ": expected section.key=value, e.g. --set problem.m=4096");
  const std::string full = text.substr(0, eq);
  const std::string value = text.substr(eq + 1);
  if (full.find('.') == std::string::npos)
    throw Error(at.text + ": the key must name its section, e.g. problem.m");
  // One key, one value: a line break or another control character would let TOML read more
  // than one assignment (or a comment) out of it.
  for (const char c : text) {
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f)
      throw Error(at.text + ": the value holds a line break or control character; give one " +
                  "key=value per --set");
    if (static_cast<unsigned char>(c) >= 0x80)
      throw Error(at.text + ": a non-ASCII character (deck keys and values are ASCII)");
  }
  toml::table parsed;
  try {
    parsed = toml::parse("v = " + value);
  } catch (const toml::parse_error&) {
    // A bare word such as nrrp3d or cuda:0 is taken as a string.
    parsed = toml::table{{"v", value}};
  }
  if (parsed.size() != 1 || !parsed.get("v"))
    throw Error(at.text + ": expected one value after '=', e.g. --set problem.m=4096");
  apply(deck, full, *parsed.get("v"), at);
}

}  // namespace

std::string Deck::location(const std::string& key) const {
  auto it = where.find(key);
  return it != where.end() ? it->second : path + " (" + key + " not given; default)";
}

std::string Deck::at(const std::string& key) const {
  auto it = where.find(key);
  return it != where.end() ? it->second + ": " + key : location(key);
}

Deck parse_deck(const std::string& with_bom, const std::string& name,
                const std::vector<std::string>& overrides) {
  Deck deck;
  deck.path = name;
  // A UTF-8 byte-order mark (some Windows editors write one) is valid TOML only at the very
  // start. It is dropped before anything counts lines or columns, so that positions on the
  // first line are those an editor shows, and so that require_ascii does not refuse it.
  const std::string text =
      with_bom.compare(0, 3, "\xEF\xBB\xBF") == 0 ? with_bom.substr(3) : with_bom;
  require_ascii(text, name);
  toml::table root;
  try {
    root = toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    throw Error(position(name, e.source()) + ": " + clip(e.description(), 200));
  }
  parse_into(deck, root, name);
  for (const auto& o : overrides) apply_override(deck, o);
  check(deck);
  return deck;
}

Deck load_deck(const std::string& path, const std::vector<std::string>& overrides) {
  // Decks are a few lines; anything near this size is not one.
  constexpr std::size_t kMaxDeckBytes = std::size_t(1) << 20;
  return parse_deck(read_input_file(path, kMaxDeckBytes, "the deck"), path, overrides);
}

std::string to_string(Precision p) { return std::string(name_of(p, kPrecisions)); }
bool is_complex(Precision p) { return p == Precision::complex64 || p == Precision::complex128; }
ProductSettings product_settings(const Deck& d) {
  ProductSettings s;
  s.processors = d.platform.processors;
  if (!d.platform.measure_speeds) s.speeds = d.platform.speeds;
  s.use_speed_cache = d.platform.use_speed_cache;
  s.link_model = !d.platform.speed_model_flops_only;
  s.memory_budget_mib = d.platform.memory_budget_mib;
  s.register_host = d.platform.register_host;
  s.algorithm = std::string(partition::to_string(d.partition.algorithm));
  s.discretization = std::string(partition::to_string(d.partition.discretization));
  // Across ranks "auto" is the default: a fixed algorithm is a choice the deck must make.
  if (d.where.count("partition.algorithm") && !d.partition.auto_algorithm)
    s.rank_algorithm = s.algorithm;
  s.rank_speeds = d.mpi.rank_speeds;
  s.bandwidth_gbs = d.mpi.bandwidth_gbs;
  s.memory_limit_mib = d.mpi.memory_limit_mib;
  return s;
}

std::size_t element_bytes(Precision p) {
  switch (p) {
    case Precision::float32:
      return 4;
    case Precision::float64:
    case Precision::complex64:
      return 8;
    case Precision::complex128:
      return 16;
  }
  return 8;
}
std::string to_string(CInit c) {
  return c == CInit::random ? "random" : c == CInit::zero ? "zero" : "nan";
}

}  // namespace cuboid::deck
