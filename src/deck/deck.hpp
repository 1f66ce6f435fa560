#pragma once
// An input deck: what to multiply, on which processors, partitioned how, run how often.
// docs/decks.md documents every key; load_deck() rejects anything else with file:line:column.
#include <cuboid/gemm.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "exec/initial_c.hpp"
#include "exec/steal_policy.hpp"
#include "partition/strategy.hpp"

namespace cuboid::deck {

enum class Precision { float64, float32, complex64, complex128 };
bool is_complex(Precision p);
// Bytes of one element.
std::size_t element_bytes(Precision p);
// What C holds before the product.
using CInit = exec::InitialC;

struct Problem {
  std::int64_t m = 1024, n = 1024, k = 1024;
  std::int64_t tile = 256;
  Precision precision = Precision::float64;
  // op(A), op(B): C = alpha op(A) op(B) + beta C, op(A) m x k and op(B) k x n; a transposed A
  // is generated and stored k x m, a transposed B n x k.
  Op trans_a = Op::none, trans_b = Op::none;
  // alpha = alpha + i alpha_im, beta likewise; the imaginary parts are 0 unless the precision is
  // complex.
  double alpha = 1.0, beta = 0.0;
  double alpha_im = 0.0, beta_im = 0.0;
  std::uint64_t seed = 2016;
  CInit c_init = CInit::random;
};

struct Platform {
  std::vector<std::string> processors;  // empty: every enabled space
  bool measure_speeds = true;
  std::vector<double> speeds;    // given speeds, when not measured
  double memory_budget_mib = 0;  // 0: automatic, per processor
  bool use_speed_cache = true;
  // platform.speed_model: "flops+link" (false: a device's GEMM rate and link are measured
  // apart and the partition weighs both) or "flops" (true: one rate per processor).
  bool speed_model_flops_only = false;
  double staged_link_gbs = 0;        // 0: staged copies run at memcpy speed
  double staged_copy_jitter_us = 0;  // test mode: random delays before staged copies
  double emulated_link_gbs = 0;      // 0: emulated device copies run at memcpy speed
  double emulated_gflops = 0;        // > 0: timing mode, emulated GEMMs sleep at this rate
  // Processors that copy page-lock the caller's arrays for each run and copy straight from and
  // to them (false: every copy goes through the staging ring).
  bool register_host = true;
  // Test and benchmark mode: per processor, a factor by which its GEMMs are slowed from
  // slowdown_after_s into each run (empty: none).
  std::vector<double> slowdown;
  double slowdown_after_s = 0;
};

struct Partition {
  partition::Algorithm algorithm = partition::Algorithm::nrrp3d;
  partition::Discretization discretization = partition::Discretization::stepped;
  // "auto": the run chooses (partition/choose.hpp, by a time model). Then `algorithm` and
  // `discretization` hold the defaults above, for a runner that does not choose.
  // partition.algorithm = "auto" also chooses the discretisation unless partition.discretization
  // is given.
  bool auto_algorithm = false;
  bool auto_discretization = false;
  bool is_auto() const { return auto_algorithm || auto_discretization; }
};

// How steps are shared out (work stealing).
using Schedule = exec::StealPolicy;

struct Run {
  int repetitions = 3;
  int warmup = 1;
  bool validate = true;
  Schedule schedule = Schedule::static_plan;  // work stealing (docs/scheduling.md)
  // Largest side, in tiles, of the C blocks steps are cut into so that work can move; 0: none
  // for "static", automatic for the stealing schedules.
  std::int64_t task_tiles = 0;
};

// Across MPI ranks: used under mpirun at any number of ranks (one included) and by simulate;
// ignored only by runs started without mpirun.
struct Mpi {
  std::vector<int> grid;   // process grid [P_r, P_c] of the block-cyclic layout; empty: near-square
  std::int64_t block = 0;  // block-cyclic block size; 0: the tile size
  std::vector<double> rank_speeds;  // speed factor per rank (scales each rank's measured speed)
  std::int64_t full_check_max = std::int64_t(1) << 26;  // full check when m*n is at most this
  bool aligned = false;         // "aligned": data starts where the zones use it; else block-cyclic
  double bandwidth_gbs = 10;    // the traffic model's receive bandwidth per rank (GB/s)
  double memory_limit_mib = 0;  // per rank; 0: the rank's share of its node's memory
};

struct Deck {
  std::string path;  // as given, for messages
  Problem problem;
  Platform platform;
  Partition partition;
  Run run;
  Mpi mpi;
  // "section.key" -> "file:line:column" (or "--set section.key") of every key that was given,
  // so later stages can point at the line that caused an error.
  std::map<std::string, std::string> where;
  // "section.key" -> its value in TOML syntax, for every key the file or a --set gave (a --set
  // replaces the file's value): the effective deck that run records hash.
  std::map<std::string, std::string> given;

  std::string location(const std::string& key) const;
  // location(key) followed by the key ("deck.toml:4:14: platform.processors"), for messages
  // about a value; a key not given reads "deck.toml (key not given; default)".
  std::string at(const std::string& key) const;
};

// Reads `path`, applies `overrides` ("section.key=value", value in TOML syntax; a bare word is a
// string), checks every key and value. Throws cuboid::Error naming file:line:column and key.
Deck load_deck(const std::string& path, const std::vector<std::string>& overrides = {});

// The same from TOML text (tests, and decks generated in memory); `name` stands for the file.
Deck parse_deck(const std::string& text, const std::string& name,
                const std::vector<std::string>& overrides = {});

// A deck's settings as a product is set up with, whoever runs it: the processors and their speeds,
// the local partition and the rank partition ([platform], [partition], [mpi]). The one mapping
// from a deck to settings: `cuboid run` (one process and under mpirun) and p?gemm_'s CUBOID_DECK
// read a deck through it. [problem] and [run] describe a run, not a product's setup.
struct ProductSettings {
  std::vector<std::string> processors;  // empty: every enabled space
  std::vector<double> speeds;           // given; empty: cached or measured
  bool use_speed_cache = true;
  bool link_model = true;  // platform.speed_model = "flops+link"
  double memory_budget_mib = 0;
  bool register_host = true;              // platform.register_host
  std::string algorithm, discretization;  // the processors' partition (names)
  // The ranks' partition: "auto" (the traffic model chooses) unless the deck names an algorithm.
  std::string rank_algorithm = "auto";
  std::vector<double> rank_speeds;  // factors per rank; empty: equal
  double bandwidth_gbs = 10;
  double memory_limit_mib = 0;  // per rank; 0: the caller's default
};
ProductSettings product_settings(const Deck& d);

std::string to_string(Precision p);
std::string to_string(CInit c);

}  // namespace cuboid::deck
