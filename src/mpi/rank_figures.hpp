#pragma once
// What one rank reports of a distributed run, as typed data: gathered on rank 0 and turned into
// the record there. Its JSON form (to_json/from_json, the record's "ranks" entries) is written
// and read in one place, so that a misspelt key cannot compile into a silent zero.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipeline/figures.hpp"

namespace cuboid::mpi {

struct RankPhases {  // seconds, of the median repetition
  double calibrate_s = 0, partition_s = 0, exchange_s = 0, compute_s = 0, reduce_s = 0, total_s = 0;
};

struct RankBytes {  // as the exchange counted them, as MPI delivered them, as the model predicts
  double a_sent = 0, a_recv = 0, b_sent = 0, b_recv = 0, c_sent = 0, c_recv = 0;
  double recv_mpi = 0;
  double model_recv = 0, model_moved = 0;
  double sent() const { return a_sent + b_sent + c_sent; }
};

struct RankMemory {               // bytes
  double local_blocks_bytes = 0;  // A, B and C as the layout gives them (C0 is not kept)
  double projections_bytes = 0;   // what the rank's zone touches, by the model
  double data_bytes = 0;          // everything held for data (blocks, panels, buffers, messages)
  double engine_bytes = 0;
  double carry_peak_bytes = 0;
  double peak_resident_bytes = 0;   // VmHWM
  double limit_bytes = 0;           // the limit the rank partition honoured (0: none)
  double predicted_peak_bytes = 0;  // the rank partition's prediction for this rank
  // Metered (exec/memory_meter.hpp) from the run's start, where the meter is installed (the
  // cuboid program; 0 otherwise): the peak of what cuboid held in host memory through the
  // product's repetitions, and through validation too (which computes a reference); per device
  // memory space; the resident set before the first matrix.
  double allocated_peak_bytes = 0;
  double validation_peak_bytes = 0;
  std::map<std::string, double> device_peak_bytes;
  double baseline_bytes = 0;
};

// How this rank drove MPI while it computed, in the median repetition: the calls that progressed
// MPI while its processors ran a piece (the calling thread polls while the engine's workers
// compute), and the pieces run as one GEMM on the calling thread, which drive none while they
// run. Ranks that poll while computing do not wait for each other's transfers in lock-step.
struct RankProgress {
  double polls_while_computing = 0;
  int pieces_on_workers = 0, pieces_inline = 0;
};

struct RankFigures {
  int rank = 0;
  std::string host;
  double speed_gflops = 0, speed_factor = 1;
  double tasks = 0;
  int boxes = 0, pieces = 0;
  bool c_in_place = false;
  int engines_created = 0;
  RankPhases phases;
  RankBytes bytes;
  RankMemory memory;
  RankProgress progress;
  std::vector<pipeline::ProcessorFigures> processors;
  nlohmann::json environment;  // the process's placement (report::ProcessEnvironment as JSON)
};

void to_json(nlohmann::json& j, const RankFigures& f);
void from_json(const nlohmann::json& j, RankFigures& f);

}  // namespace cuboid::mpi
