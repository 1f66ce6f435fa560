#pragma once
// The distributed product: the single-process pipeline with a rank level on top.
//   rank speeds, allgathered -> rank 0 chooses the rank partition (candidates scored by the
//   traffic model, rank_partition.hpp) and broadcasts it -> A and B generated where the layout
//   puts them (C0 too, into C, before each repetition: no copy is kept) -> each rank's pieces among
//   its processors, planned, on ONE engine whose workers live for the whole run -> per repetition:
//   exchange inputs (MPI progressed while computing), compute pieces as their inputs arrive, reduce
//   partial C onto owners -> distributed validation -> every rank's figures gathered on rank 0.
// Each piece is computed by the local multiply (pipeline/local_multiply.hpp), the same call a
// single-process run makes. No deck, no report: the app turns a deck into these settings and
// the outcome into text and JSON.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "exec/fault.hpp"
#include "exec/initial_c.hpp"
#include "layout/rank_partition.hpp"
#include "mpi/communicator.hpp"
#include "mpi/rank_figures.hpp"
#include "mpi/setting.hpp"
#include "mpi/validate.hpp"
#include "pipeline/local_multiply.hpp"
#include "platform/calibration.hpp"
#include "platform/processor.hpp"

namespace cuboid::mpi {
using layout::RankPartition;

struct DistSettings {
  std::int64_t m = 0, n = 0, k = 0, tile = 0;
  // C = alpha op(A) op(B) + beta C: A is stored k x m when op_a transposes, B n x k when op_b
  // does, each laid out as stored.
  Op op_a = Op::none, op_b = Op::none;
  double alpha = 1, beta = 0;
  double alpha_im = 0, beta_im = 0;  // complex types only
  std::uint64_t seed = 0;
  exec::InitialC c_init = exec::InitialC::random;
  // The rank partition.
  bool automatic = true;
  partition::Algorithm algorithm = partition::Algorithm::nrrp3d;
  partition::Discretization discretization = partition::Discretization::rounded;
  bool aligned = false;             // else block-cyclic
  std::vector<int> grid;            // block-cyclic [P_r, P_c]; empty: the near-square grid
  std::int64_t block = 0;           // block-cyclic block; 0: the tile
  layout::FirstProcesses first;     // block-cyclic: the processes of A's, B's and C's first blocks
  std::vector<double> rank_speeds;  // speed factor per rank; empty: 1 each
  double bandwidth_gbs = 10;        // the model's receive bandwidth per rank
  int slabs_per_box = 4;            // pieces per box along k when inputs travel
  bool allow_idle = false;          // RankPartitionRequest::allow_idle
  double latency_s = 0;             // RankPartitionRequest::latency_s
  // Bytes a rank may hold (0: no limit); the smallest any rank gives applies to all.
  double memory_limit_bytes = 0;
  std::string memory_limit_origin;  // for the report: the key, or the node's share
  // The repetitions and the check.
  int repetitions = 3, warmup = 1;
  bool validate = true;
  std::int64_t full_check_max = 0;
  // Recorded with this rank's figures as "environment" (the app fills it: host, threads, ...).
  nlohmann::json rank_info;
  // For testing validation: drop-task leaves one tile task of the lowest rank with work out;
  // corrupt changes C(0, 0) on its owner after the last repetition (exec/fault.hpp).
  exec::Fault fault = exec::Fault::none;
  // Stop once the rank partition is chosen (and with it each rank's predicted traffic and
  // memory): no matrix is made, nothing multiplied.
  bool dry_run = false;
};

// The rank partition's settings into `s`, from whichever source gave them (a deck through
// deck::product_settings, a call's RankOptions): `algorithm` "auto" lets the traffic model choose
// among its candidates, else names a partition algorithm (KeyedError setting::rank_algorithm
// otherwise); speed factors per rank (empty: equal); the model's bandwidth per rank.
void set_rank_partition(DistSettings& s, const std::string& algorithm,
                        const std::vector<double>& rank_speeds, double bandwidth_gbs);

// The caller's matrices for a DistributedProduct, in the block-cyclic layout its settings
// describe (local arrays with ScaLAPACK's lld = local rows), A and B as stored. C is updated in
// place: it is also C0, read once for beta (never when beta is 0). A and B are only read.
template <class Scalar>
struct CallerMatrices {
  Kokkos::View<Scalar*, Kokkos::HostSpace> A, B, C;
};

// This rank's processors, as the app made them: the local multiply that computes every piece
// (its engine made once for the whole run), the speeds it was given and where they came from.
template <class Scalar>
struct RankProcessors {
  pipeline::LocalMultiply<Scalar>* local = nullptr;
  std::vector<platform::Speed> speeds;
  double calibration_s = 0;
  int engines_before = 0;  // exec::Engine::created() before the local multiply was made
};

// A failure on one rank once the traffic has started: the others may be waiting for this rank,
// so no agreement is possible. The caller ends the job with the message (MPI_Abort).
struct RankFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct DistOutcome {
  int ranks = 0;
  RankPartition partition;          // on every rank (broadcast by rank 0)
  std::vector<double> rank_speeds;  // GFLOP/s, after factors
  std::vector<double> times_s;      // slowest rank's time per repetition (not warm-up)
  DistValidation validation;
  bool validated = false;
  // Rank 0 only: every rank's figures of the median repetition.
  std::vector<RankFigures> per_rank;
};

// One distributed product prepared for the caller's matrices of a shape and layout: the rank
// partition chosen, the pieces planned, every buffer made, once (collective over `comm`, which
// must outlive it); then multiply() runs it on matrices of that layout, as often as asked
// (collective). The plans assume beta = 0 or 1 as `s.beta` is, or neither; validation and
// figures are the caller's.
template <class Scalar>
class DistributedProduct {
 public:
  // `locate(key)` names a setting the product refuses as its caller calls it.
  DistributedProduct(
      const DistSettings& s, MPI_Comm comm, RankProcessors<Scalar> processors,
      std::function<std::string(const std::string&)> locate = [](const std::string& key) {
        return key;
      });
  ~DistributedProduct();
  DistributedProduct(const DistributedProduct&) = delete;
  DistributedProduct& operator=(const DistributedProduct&) = delete;
  // This rank's time (no collective beyond the product's own traffic).
  double multiply(const CallerMatrices<Scalar>& m, Scalar alpha, Scalar beta);
  const RankPartition& partition() const;
  double received_bytes() const;  // this rank's in the last multiply, as MPI delivered them
  RankProgress progress() const;  // how this rank drove MPI in the last multiply

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Collective over `comm`. Input errors found before any traffic throw CollectiveFailure on
// every rank (rank 0 prints it); `locate(key)` prefixes a KeyedError's message with where the
// key was given. A failure in the middle of the traffic throws RankFailure on the failing rank.
template <class Scalar>
DistOutcome run_distributed(const DistSettings& s, const Communicator& comm,
                            RankProcessors<Scalar>& processors,
                            const std::function<std::string(const std::string&)>& locate);

}  // namespace cuboid::mpi
