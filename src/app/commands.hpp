#pragma once
// The commands of the `cuboid` program, each with the options its command line gives it. The
// command line itself (main.cpp) is the only unit that includes CLI11: its header alone takes
// several seconds to compile.
#include <cstdint>
#include <string>
#include <vector>

#include "exec/fault.hpp"

namespace cuboid::app {

// `cuboid run DECK`; returns the exit status (0, or that of a distributed run).
struct RunOptions {
  std::string deck;
  std::vector<std::string> overrides;
  std::string json;
  bool json_given = false;
  exec::Fault fault = exec::Fault::none;
  bool dry_run = false;
  std::string trace;  // --trace FILE: Chrome trace-event JSON of the run; empty: none
};
int run_command(const RunOptions& options);

// `cuboid info`.
void info_command();

// `cuboid calibrate DECK`.
struct CalibrateOptions {
  std::string deck;
  std::vector<std::string> overrides;
  bool fresh = false;
};
void calibrate_command(const CalibrateOptions& options);

// `cuboid simulate DECK --ranks P`: the MPI layer's partition and communication model, with no
// GEMM and no MPI (src/layout/model.hpp).
struct SimulateOptions {
  std::string deck;
  std::vector<std::string> overrides;
  int ranks = 0;
  std::vector<double> speeds;
  double rank_gflops = 100;
  double bandwidth_gbs = 10;
  std::string json;
  bool json_given = false;
  bool per_rank = false;
};
void simulate_command(const SimulateOptions& options);

// `cuboid partition`: compute, print and optionally save a partition of the tile cuboid.
struct PartitionOptions {
  std::string dims, speeds, algorithm = "nrrp3d", discretize = "stepped", json, svg;
  bool json_given = false, svg_given = false;
  std::int64_t rows = 64;
};
void partition_command(const PartitionOptions& options);

}  // namespace cuboid::app
