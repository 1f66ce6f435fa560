#pragma once
// partition.algorithm / partition.discretization = "auto" for a single-process run: every
// candidate is partitioned and timed by the model of partition/choose.hpp with this machine's
// processors, and the fastest is run.
#include <string>
#include <vector>

#include "deck/deck.hpp"
#include "partition/choose.hpp"
#include "platform/processor.hpp"

namespace cuboid::app {

struct AutoChoice {
  partition::Algorithm algorithm = partition::Algorithm::nrrp3d;
  partition::Discretization discretization = partition::Discretization::stepped;
  std::vector<partition::Estimate> ranking;  // fastest first; [0] is the choice
  std::string model;                         // how the links were modelled, for the report
};

// `gflops`: one speed per processor (measured or given). Throws cuboid::Error naming
// partition.algorithm when no candidate can be built.
AutoChoice choose_partition(const deck::Deck& d, const std::vector<platform::ProcessorSpec>& specs,
                            const std::vector<double>& gflops, std::size_t element_bytes);

}  // namespace cuboid::app
