#pragma once
// The rank level of the partition: which tiles of the cuboid each rank computes, chosen to move
// as little as the starting layout allows. No MPI.
//
// Candidates are partitions in a tile order (distribution.hpp) together with the distribution
// the data starts in; the traffic model (model.hpp) scores each, exactly, and `model_time` picks.
// - block-cyclic start: the order groups tile rows by process row, columns by process column
//   and inner tiles by the owner of A (or of B), so that a box is what one rank already holds.
//   Owners are those of the stored operands: for op(A) = A^T the i axis of A is grouped by A's
//   process column and its k axis by process row (B^T alike).
//   Candidates: the process grid's own decomposition (rank (p,q) computes the C it owns:
//   pdgemm's traffic, C never moves), "A-stationary" (rank (p,q) takes its rows of A and the
//   inner tiles whose A it owns; only B and partial C move), "B-stationary" (the transpose),
//   each with cuts on the owners' boundaries and with cuts balanced by speed; and the
//   partition library's algorithm in the same order.
// - aligned start: the data is placed after the partition (every tile on a rank that uses it),
//   so only shape matters: every factorisation P = g_i g_j g_k as a grid of boxes cut by speed,
//   and the library's algorithm.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "layout/distribution.hpp"
#include "layout/model.hpp"
#include "partition/strategy.hpp"

namespace cuboid::layout {

// What choose_rank_partition says when every candidate leaves a working rank without work (too
// few tiles for the ranks): a caller may retry with smaller tiles.
inline constexpr double kTimeBand = 0.05;
inline constexpr const char* kNoCandidateFits = "no candidate partition fits these ranks";

struct RankPartitionRequest {
  std::int64_t m = 0, n = 0, k = 0, tile = 0;
  std::vector<double> speeds;  // GFLOP/s per rank; 0: the rank computes nothing
  bool aligned = false;        // mpi.layout = "aligned"; else block-cyclic on `grid`
  ProcessGrid grid;            // block-cyclic process grid
  std::int64_t block = 0;      // block-cyclic block size
  // op(A) = A^T or A^H (A stored k x m), op(B) = B^T or B^H (B stored n x k): the layouts are of
  // the stored matrices, so which rank owns which part of op(A) and op(B) changes with them.
  bool a_transposed = false, b_transposed = false;
  FirstProcesses first;   // the processes holding the first blocks of stored A, B and C
  bool automatic = true;  // every candidate; else only `algorithm` (in layout order)
  partition::Algorithm algorithm = partition::Algorithm::nrrp3d;
  partition::Discretization discretization = partition::Discretization::rounded;
  double bandwidth_gbs = 10;  // the time model's receive bandwidth per rank
  std::size_t elem = 8;       // bytes per element
  // Small products: candidates may leave working ranks idle (where the data already lies), and
  // each rank that receives pays `latency_s` once, so that the model can see when moving data
  // costs more than computing it where it is.
  bool allow_idle = false;
  double latency_s = 0;
  // Bytes each rank may hold for data (0: no limit): candidates whose predicted peak on some rank
  // (predict_rank_memory) is above it are refused. A candidate that does not fit as `streaming`
  // says is tried again with k streamed: receives one stage ahead and slabs twice as fine each
  // time, down to one tile deep. The processors' own buffers are the caller's to add.
  double memory_limit_bytes = 0;
  Streaming streaming;
};

struct RankCandidate {
  std::string name;
  double predicted_s = 0;   // model_time
  double received_max = 0;  // elements, the most any rank receives
  double moved_max = 0;     // elements
  double peak_bytes = 0;    // the largest predicted peak of any rank
  bool fits = true;         // peak_bytes within the request's memory limit
  Streaming streaming;      // the first that fits (else the finest tried)
};

struct RankPartition {
  std::string name;  // the candidate chosen
  TileOrder order;
  std::vector<partition::TileZone> zones;  // one per rank, in positions of `order`
  Distribution dist;                       // where the data starts
  std::vector<RankTraffic> traffic;        // the model's figures (elements)
  double predicted_s = 0;
  std::vector<RankCandidate> candidates;  // every candidate scored, best first
  std::vector<std::string> skipped;       // candidates left out: too costly to model
  double memory_limit_bytes = 0;          // as requested (0: none)
  std::vector<double> peak_bytes;         // the chosen candidate's predicted peak per rank
  Streaming streaming;                    // how the chosen candidate's inputs travel
};

// No candidate's predicted peak fits the memory limit: `minimum_bytes` would do for the
// candidate whose peak is smallest.
struct MemoryLimitTooSmall : std::invalid_argument {
  MemoryLimitTooSmall(const std::string& what, double minimum)
      : std::invalid_argument(what), minimum_bytes(minimum) {}
  double minimum_bytes = 0;
};

// Rank zones all block-cyclic candidates together may hold: at many ranks only the 2.5D bands
// whose replication is nearest P^(1/3) are built within it (each rank zone of a candidate costs
// about 100 bytes, measured).
constexpr double kCandidateRankZones = 2e6;

// A rank partition whose traffic model would take longer than choosing may (the message says
// how long): fewer ranks, or a larger tile, make it cheaper.
struct TooCostly : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// Every candidate leaves a rank that has speed without work (or with work and no speed): a caller
// may retry with a fixed algorithm or smaller tiles. The message starts with kNoCandidateFits.
struct NoCandidateFits : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// Throws std::invalid_argument on speeds that are negative or not finite, when no rank has a
// positive speed, or when no candidate can be built (more working ranks than tile tasks);
// MemoryLimitTooSmall when every candidate's predicted peak exceeds the memory limit.
RankPartition choose_rank_partition(const RankPartitionRequest& req);

// Integer cuts of `count` positions into parts proportional to `weights` (cumulative rounding,
// so parts differ from their share by less than one and zero weights get nothing).
std::vector<std::int64_t> weighted_cuts(std::int64_t count, const std::vector<double>& weights);

}  // namespace cuboid::layout
