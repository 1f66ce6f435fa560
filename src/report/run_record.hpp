#pragma once
// Everything a run reports, as plain data: filled by the app, printed as text or JSON.
#include <cstdint>
#include <string>
#include <vector>

namespace cuboid::report {

struct ProcessorRecord {
  std::string name, kind, space;
  int threads = 0;
  double speed_gflops = 0;
  std::string speed_source;
  double target_share = 0;  // speed / total speed
  double volume = 0;        // tile tasks
  double volume_share = 0;
  int pieces = 0, steps = 0;
  double busy_s = 0, stall_s = 0, finish_s = 0;
  double h2d_bytes = 0, d2h_bytes = 0;
  double flops = 0;
  double predicted_s = 0;  // the model: flops / speed
};

// One candidate of partition.algorithm = "auto", as the model saw it.
struct PartitionCandidate {
  std::string algorithm, discretization;
  // partition "auto": every candidate, fastest first (the first is the one run), and how the
  // model treated the processors' links. Empty when the deck fixed the partition.
  std::vector<PartitionCandidate> partition_candidates;
  std::string partition_model;
  double model_s = 0;      // the model's run time (max over processors + reduction)
  double compute_s = 0;    // of the processor that finishes last in the model
  double copy_s = 0;       // its copies
  double reduction_s = 0;  // split-k reduction on the host
  int max_boxes = 0;       // most boxes (GEMMs) of one zone
  std::string failed;      // why it could not be built, if so
};

struct RunRecord {
  std::string deck;
  std::int64_t m = 0, n = 0, k = 0, tile = 0;
  std::string precision;
  double alpha = 1, beta = 0;
  std::uint64_t seed = 0;
  std::string c_init;

  std::vector<ProcessorRecord> processors;

  std::string algorithm, discretization;
  // partition "auto": every candidate, fastest first (the first is the one run), and how the
  // model treated the processors' links. Empty when the deck fixed the partition.
  std::vector<PartitionCandidate> partition_candidates;
  std::string partition_model;
  double ratio_to_lower_bound = 0, ratio_plain = 0, imbalance = 0;
  bool k_split = false;
  int partial_buffers = 0;
  double partial_bytes = 0;
  double partition_s = 0, calibration_s = 0;

  int repetitions = 0, warmup = 0;
  std::vector<double> times_s;
  double min_s = 0, median_s = 0, max_s = 0;
  double gflops = 0;  // 2mnk / median
  double prescale_s = 0, reduce_s = 0;

  bool validation_performed = false, validation_passed = false;
  double validation_error = 0, validation_bound = 0;
  std::string validation_method;

  std::string build;  // Kokkos version, backends, TPLs
  std::string host;
};

}  // namespace cuboid::report
