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
  double busy_s = 0, finish_s = 0;
  // Processors with their own memory: time their copies took, and time their GEMMs waited
  // for inputs. 1 - stall/copy is the share of the copy time hidden behind GEMMs.
  double copy_s = 0, stall_s = 0;
  double h2d_bytes = 0, d2h_bytes = 0;
  double flops = 0;
  double predicted_s = 0;  // the model: flops / speed
  // Work stealing: steps it took from others' queues (and their flops), steps others took from
  // its queue, and the bytes it copied in and out to run the steps it took.
  int stolen_steps = 0, lost_steps = 0;
  double stolen_flops = 0, steal_bytes = 0;
  // Each steal it made, as decided: when (s from the run's start), from whom, how much, and
  // the estimates that made it pay (see exec::StealRecord).
  struct Steal {
    double at_s = 0;
    int victim = 0, steps = 0;
    double flops = 0, bytes = 0;
    double thief_done_s = 0, victim_done_s = 0, thief_gflops = 0, victim_gflops = 0;
    bool idle = false;
  };
  std::vector<Steal> steals;
  bool copies() const { return copy_s > 0; }
  double hidden_copy_fraction() const { return copies() ? 1.0 - stall_s / copy_s : 0.0; }
};

// The Kokkos this process runs on (report/kokkos_facts.hpp fills it).
struct KokkosFacts {
  std::string version, default_space, default_host_space;
  int host_concurrency = 0;
  std::vector<std::string> spaces;        // execution spaces compiled in
  std::vector<std::string> kernels_tpls;  // Kokkos Kernels' third-party libraries (BLAS, cuBLAS)
};

// Where and how one process runs: what a study needs to check the placement it asked for.
struct ProcessEnvironment {
  std::string host;
  int cpus_allowed = 0;             // CPUs in the process's affinity mask
  int kokkos_host_concurrency = 0;  // threads of the default host space
  std::string launcher;             // mpirun, srun, mpiexec or none (from the environment)
  std::string omp_num_threads, omp_proc_bind, omp_places;  // as set, empty when not
};

// One candidate of partition.algorithm = "auto", as the model saw it.
struct PartitionCandidate {
  std::string algorithm, discretization;
  double model_s = 0;      // the model's run time (max over processors + reduction)
  double compute_s = 0;    // of the processor that finishes last in the model
  double copy_s = 0;       // its copies
  double reduction_s = 0;  // split-k reduction on the host
  int max_boxes = 0;       // most boxes (GEMMs) of one zone
  std::string failed;      // why it could not be built, if so
};

struct RunRecord {
  std::string deck;
  std::string deck_effective;  // the keys the file and --set gave, sorted (provenance.hpp)
  std::string deck_sha256;     // of deck_effective
  std::int64_t m = 0, n = 0, k = 0, tile = 0;
  std::string precision;
  std::string trans_a = "N", trans_b = "N";  // op(A), op(B) as BLAS spells them
  double alpha = 1, beta = 0;
  double alpha_im = 0, beta_im = 0;  // nonzero only in a complex precision
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
  // The time model of the plan that ran: "flops" (each processor's flops at its speed) or
  // "flops+link" (devices: GEMM rate and link, copies overlapping GEMMs), and its run time
  // (the slowest processor plus the split-k reduction). 0: not modelled (a distributed run).
  std::string speed_model = "flops";
  double predicted_s = 0;

  // How steps were shared out (docs/scheduling.md): "static", "random" or "cheapest"; the C
  // block side (tiles) steps were cut to so that they can move (0: pieces whole), and the
  // units of work the schedule could move.
  std::string schedule = "static";
  std::int64_t task_tiles = 0;
  int units = 0;

  int repetitions = 0, warmup = 0;
  std::vector<double> times_s;
  double min_s = 0, median_s = 0, max_s = 0;
  double gflops = 0;  // 2mnk / median
  double prescale_s = 0, reduce_s = 0;

  bool validation_performed = false, validation_passed = false;
  double validation_error = 0, validation_bound = 0;
  std::string validation_method;

  KokkosFacts kokkos;
  ProcessEnvironment environment;  // this process (rank 0 under MPI)
  // Bitwise identity of the products: a hash of C after each run (warm-up included). Empty
  // where not computed (the MPI runner).
  std::vector<std::string> c_hashes;
  std::string host;
};

}  // namespace cuboid::report
