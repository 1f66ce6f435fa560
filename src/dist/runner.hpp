#pragma once
// `cuboid run` under mpirun: the distributed pipeline. It mirrors the single-process one
// (src/app/cmd_run.cpp) step by step:
//   calibrate (each rank, its own processors) -> rank speeds, allgathered -> partition the tile
//   cuboid among ranks -> each rank's pieces among its processors (one plan per piece, all run
//   by one Engine made from the rank's workers) ->
//   A, B, C0 generated in the block-cyclic layout -> per repetition: exchange inputs, compute
//   pieces as their inputs arrive, reduce partial C onto owners -> distributed validation ->
//   rank 0 prints and writes the record.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "deck/deck.hpp"
#include "dist/communicator.hpp"
#include "exec/plan.hpp"
#include "exec/worker.hpp"
#include "platform/calibration.hpp"
#include "platform/processor.hpp"

namespace cuboid::dist {

// What the app hands over for this rank: its processors and their speeds (the app owns
// calibration), and the workers that calibrated them: the rank's one Engine takes them over.
template <class Scalar>
struct RankResources {
  std::vector<platform::ProcessorSpec> specs;
  std::vector<platform::Speed> speeds;
  double calibration_s = 0;
  exec::PlanOptions plan_options;  // per-processor budgets and panel counts; beta flags unset
  std::vector<std::unique_ptr<exec::Worker<Scalar>>> workers;
};

struct RunnerOptions {
  std::string json;  // written by rank 0 when not empty
  // Pieces per box along k: more pieces start computing sooner but run smaller GEMMs.
  int slabs_per_box = 4;
};

enum class Outcome { passed, not_validated, validation_failed };

// Collective over `comm`. Input errors found before any traffic throw CollectiveFailure on
// every rank (rank 0 prints it); a failure in the middle of the traffic aborts the job with
// the failing rank's message.
template <class Scalar>
Outcome run_distributed(const deck::Deck& d, const Communicator& comm, RankResources<Scalar>& res,
                        const RunnerOptions& options);

}  // namespace cuboid::dist
