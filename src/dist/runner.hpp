#pragma once
// The distributed product: the single-process pipeline with a rank level on top.
//   rank speeds, allgathered -> rank 0 chooses the rank partition (candidates scored by the
//   traffic model, rank_partition.hpp) and broadcasts it -> A, B, C0 generated where the layout
//   puts them -> each rank's pieces among its processors, planned, on ONE engine whose workers
//   live for the whole run -> per repetition: exchange inputs (MPI progressed while computing),
//   compute pieces as their inputs arrive, reduce partial C onto owners -> distributed
//   validation -> every rank's figures gathered on rank 0.
// No deck, no report: the app (src/app/run_distributed.cpp) turns a deck into these settings
// and the outcome into text and JSON.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dist/communicator.hpp"
#include "dist/rank_partition.hpp"
#include "dist/validate.hpp"
#include "exec/engine.hpp"
#include "exec/fault.hpp"
#include "exec/plan.hpp"
#include "exec/worker.hpp"
#include "platform/calibration.hpp"
#include "platform/processor.hpp"

namespace cuboid::dist {

enum class InitialC { random, zero, nan };

struct DistSettings {
  std::int64_t m = 0, n = 0, k = 0, tile = 0;
  double alpha = 1, beta = 0;
  std::uint64_t seed = 0;
  InitialC c_init = InitialC::random;
  // The rank partition.
  bool automatic = true;
  partition::Algorithm algorithm = partition::Algorithm::nrrp3d;
  partition::Discretization discretization = partition::Discretization::rounded;
  bool aligned = false;             // else block-cyclic
  std::vector<int> grid;            // block-cyclic [P_r, P_c]; empty: the near-square grid
  std::int64_t block = 0;           // block-cyclic block; 0: the tile
  std::vector<double> rank_speeds;  // speed factor per rank; empty: 1 each
  double bandwidth_gbs = 10;        // the model's receive bandwidth per rank
  int slabs_per_box = 4;            // pieces per box along k when inputs travel
  // The repetitions and the check.
  int repetitions = 3, warmup = 1;
  bool validate = true;
  std::int64_t full_check_max = 0;
  // Recorded with this rank's figures as "environment" (the app fills it: host, threads, ...).
  nlohmann::json rank_info;
  // For testing validation: drop-task leaves one tile task of the lowest rank with work out;
  // corrupt changes C(0, 0) on its owner after the last repetition (exec/fault.hpp).
  exec::Fault fault = exec::Fault::none;
};

// What the app hands over for this rank: its processors, their speeds (the app owns
// calibration) and their workers, made once and used for every piece and repetition.
template <class Scalar>
struct RankResources {
  std::vector<platform::ProcessorSpec> specs;
  std::vector<platform::Speed> speeds;
  double calibration_s = 0;
  exec::PlanOptions plan_options;  // per-processor budgets and panel counts; beta flags unset
  std::vector<std::unique_ptr<exec::Worker<Scalar>>> workers;
};

// Input errors name a deck key; the app turns it into "file:line:column: key".
struct KeyedError : std::invalid_argument {
  KeyedError(std::string k, const std::string& msg)
      : std::invalid_argument(msg), key(std::move(k)) {}
  std::string key;
};

struct DistOutcome {
  int ranks = 0;
  RankPartition partition;          // on every rank (broadcast by rank 0)
  std::vector<double> rank_speeds;  // GFLOP/s, after factors
  std::vector<double> times_s;      // slowest rank's time per repetition (not warm-up)
  DistValidation validation;
  bool validated = false;
  // Rank 0 only: every rank's figures of the median repetition (rank, host, speeds, phases,
  // bytes as counted and as MPI delivered them, processors, memory).
  std::vector<nlohmann::json> per_rank;
};

// Collective over `comm`. Input errors found before any traffic throw CollectiveFailure on
// every rank (rank 0 prints it); `locate(key)` prefixes a KeyedError's message with where the
// key was given. A failure in the middle of the traffic aborts the job with the failing rank's
// message.
template <class Scalar>
DistOutcome run_distributed(const DistSettings& s, const Communicator& comm,
                            RankResources<Scalar>& res,
                            const std::function<std::string(const std::string&)>& locate);

}  // namespace cuboid::dist
