#pragma once
// The choice behind partition.algorithm = "auto" on one node: every candidate (algorithm x
// discretisation) is partitioned and timed by a model, fastest first.
//
// The model, per processor p: compute = its flops / its speed; copies = the bytes of its zone's
// projections (A and B panels it reads, the C blocks it reads when beta != 0 and writes back,
// partial last tiles counted in elements) / its link bandwidth, none for a processor that works
// in place. The split-k reduction adds each partial C element into C on the host (read the
// partial, read and write C: three element transfers) at `host_gbs`. A run takes
// max_p (compute_p + copies_p) + reduction. Copies are not assumed to overlap the GEMMs.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "partition/box.hpp"
#include "partition/strategy.hpp"

namespace cuboid::partition {

struct ProcessorModel {
  double gflops = 0;  // GEMM rate, GFLOP/s
  // Host memory <-> the processor's memory, GB/s. 0: it works in place on the host's matrices
  // (no copies); infinity: copies cost nothing (unlimited).
  double link_gbs = 0;
};

struct ModelProblem {
  std::int64_t m = 0, n = 0, k = 0, tile = 0;  // elements; the tile edge
  std::size_t element_bytes = 8;
  bool beta_nonzero = false;
};

struct ModelOptions {
  double host_gbs = 20;  // bandwidth of the host-side reduction, GB/s
  // Estimates within this share of the best are not told apart: among them the fewest boxes
  // per zone come first.
  double tie_window = 0.01;
};

struct Estimate {
  Algorithm algorithm = Algorithm::nrrp3d;
  Discretization discretization = Discretization::stepped;
  double seconds = std::numeric_limits<double>::infinity();  // the model's run time
  double reduction_s = 0;
  std::vector<double> compute_s, copy_s;  // per processor
  int max_boxes = 0;                      // most boxes of one zone (GEMMs per processor)
  std::string failed;                     // why the candidate could not be built, if it could not
};

// The model applied to one discretised partition (one zone per processor).
Estimate estimate(const std::vector<TileZone>& zones, const ModelProblem& problem,
                  const std::vector<ProcessorModel>& processors, const ModelOptions& options = {});

// Every algorithm x discretisation given, fastest first, except that those within
// options.tie_window of the fastest come first ordered by their most boxes per zone; on equal
// estimates (and equal boxes among those) the order of the lists decides (so put the preferred
// ones first). Candidates that cannot be built (a
// discretisation refused as too large) come last with `failed` set. Throws
// std::invalid_argument for bad input (no processors, a speed that is not positive).
std::vector<Estimate> rank_candidates(const ModelProblem& problem,
                                      const std::vector<ProcessorModel>& processors,
                                      const std::vector<Algorithm>& algorithms,
                                      const std::vector<Discretization>& discretizations,
                                      const ModelOptions& options = {});

}  // namespace cuboid::partition
