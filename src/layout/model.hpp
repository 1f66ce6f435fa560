#pragma once
// The communication model of the MPI layer: from the rank-level partition and the block-cyclic
// layout, the exact element counts each rank sends and receives, and the lower bounds they are
// compared with. `cuboid simulate` is this file alone; `cuboid run` under mpirun reports the
// same figures next to what it measured. No MPI here.
//
// What is counted (elements; bytes = elements * sizeof(scalar)):
// - A rank needs every element of the A tiles its zone projects onto (pi_A) and of the B tiles
//   (pi_B), once each even when several of its boxes share them, and produces a partial of every
//   element of its pi_C tiles. A and B are counted as stored: under a part of op(A) = A^T lies
//   the transposed rectangle of the k x m stored A, owned as the stored layout says.
// - Elements it already owns in the block-cyclic layout are copied locally and NOT counted:
//   "moved" counts only elements that cross between ranks.
// - A partial C element goes to the element's owner, which adds beta*C0 and the partials.
// - The volume charged to rank r, `moved(r)` = A received + B received + partial C sent: every
//   element that crosses is charged exactly once, to the rank whose zone needs or produces it,
//   which is what the lower bound constrains. `footprint(r)` = |pi_A| + |pi_B| + |pi_C| in
//   elements counts the owned ones too: the volume if nothing started local.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "layout/distribution.hpp"
#include "partition/box.hpp"

namespace cuboid::layout {

struct RankTraffic {
  // Elements received (in) and sent (out) per category.
  double a_in = 0, b_in = 0, c_in = 0;
  double a_out = 0, b_out = 0, c_out = 0;
  // Elements of the zone's projections, owned or not.
  double a_foot = 0, b_foot = 0, c_foot = 0;
  // Elements of the boxes' C panels, each box apart: a zone's partial C is one block per box
  // (boxes stacked along k each hold their own), not the footprint's union.
  double c_boxes = 0;
  double tasks = 0;  // tile tasks of the zone
  double flops = 0;  // 2 * elements of the zone's boxes
  double moved() const { return a_in + b_in + c_out; }
  double received() const { return a_in + b_in + c_in; }
  double footprint() const { return a_foot + b_foot + c_foot; }
};

// `zones` are in the positions of `order`; `dist` says where every element starts.
std::vector<RankTraffic> model_traffic(const std::vector<partition::TileZone>& zones,
                                       const TileOrder& order, const Distribution& dist);

// The operations model_traffic() would take for these zones (an upper estimate: every owner
// count of every projection of every box), found without doing them: a candidate too costly to
// model can be left out, or refused, before any of that work.
double model_traffic_cost(const std::vector<partition::TileZone>& zones, const TileOrder& order,
                          const Distribution& dist);

// The model's time: rank r computes its flops at speeds[r] GFLOP/s, then receives its bytes at
// `bandwidth_gbs` (no overlap assumed: an upper estimate), plus `latency_s` when it receives
// anything; the slowest rank sets the time. A
// rank with work and speed 0 makes it infinite.
double model_time(const std::vector<RankTraffic>& t, const std::vector<double>& speeds,
                  double bandwidth_gbs, std::size_t elem, double latency_s = 0);

// COSMA's per-rank bound (003 eq. 33) for p ranks with S elements of memory each, in the form
// Q >= 2mnk/(p a) + a^2 with a = min(sqrt(S), (mnk/p)^(1/3)). Eq. 33 writes it as the min of
// the two expressions; since 2mnk/(p sqrt S) + S >= 3 (mnk/p)^(2/3) for every S (AM-GM), that
// min is always the second term, and the memory-limited branch is this one with a = sqrt(S).
// S = infinity gives 3 (mnk/p)^(2/3), the smallest value the bound takes.
double cosma_bound_elements(double m, double n, double k, double p,
                            double S = std::numeric_limits<double>::infinity());

// The bound on what a rank must move when it starts with its share of the data: each of p ranks
// doing mnk/p multiply-adds with S words of memory accesses at least
//   W(S) = 2mnk/(p sqrt S) + S   for S < (mnk/p)^(2/3),   3 (mnk/p)^(2/3)   above,
// words (COSMA eq. 33, both branches); with a balanced start, (mn + mk + nk)/p of them are its own
// and need not travel. What remains travels in (A and B received) or out (partial C sent to its
// owner): it bounds `moved()`, and `received()` wherever C stays with its owner. Never below 0.
double moved_bound_elements(double m, double n, double k, double p,
                            double S = std::numeric_limits<double>::infinity());
// moved_bound_elements with S = a memory limit of `limit_bytes` per rank, in bytes of `elem`;
// 0 when there is no limit (limit_bytes <= 0).
double moved_bound_at_limit_bytes(double m, double n, double k, double p, double limit_bytes,
                                  double elem);
// The shape-aware bound (partition/geometry.hpp) in elements: the Hs of the best box of volume
// mnk/p that fits in the m x n x k cuboid. Equal to the COSMA bound with infinite S when the cube
// of volume mnk/p fits, larger for flat and largeK shapes at few ranks.
double shape_bound_elements(double m, double n, double k, double p);

struct CommSummary {
  int ranks = 0;
  double moved_max = 0, moved_mean = 0;          // elements
  double received_max = 0, received_mean = 0;    // elements: A, B and partial C received
  double footprint_max = 0, footprint_mean = 0;  // elements
  double lower_bound = 0;                        // cosma_bound_elements, S infinite
  double moved_bound = 0;                        // moved_bound_elements, S infinite
  double moved_shape_bound = 0;                  // shape_bound - (mn + mk + nk)/p, at least 0
  double shape_bound = 0;
  // max over ranks with work of moved(r) / L(V_r), V_r the rank's own volume (flops / 2): the
  // fair figure when speeds differ and the busiest rank is meant to hold more.
  double worst_rank_ratio = 0;
};

CommSummary summarize(const std::vector<RankTraffic>& t, std::int64_t m, std::int64_t n,
                      std::int64_t k);

// How a rank's inputs travel: each box whose inputs travel is cut into `slabs` pieces along k,
// and receives are posted `window` stages ahead (0: every stage at once). Finer slabs and a
// window of one stage hold less: k streamed in rounds of receive, multiply, free.
struct Streaming {
  int slabs = 4;
  int window = 0;
};
// In words, for reports: "k in 4 slabs per box, every receive posted at once".
std::string describe(const Streaming& s);

// What a rank holds at its peak in a distributed run, in elements, as the runner allocates it:
// its blocks of A, B and C (no copy of C0: it is regenerated from the seed); a buffer for what
// it receives (all of it, or `window` stages, each taken as its piece's whole panels: an upper
// estimate, exact where a slab's inputs lie on other ranks) and for the partial C it sends and
// receives (sends of A and B are read from the blocks in place); partial C for its zone unless its
// zone is its own C (nothing of C travels); and the reusable A and B panels of its largest piece
// (none when nothing travels and the block-cyclic arrays are the panels). `zone` is the rank's,
// in positions of `order`. The processors' own buffers are not counted: the runner adds them as
// their plans reserve them.
struct RankMemoryModel {
  double blocks = 0, messages = 0, partial_c = 0, panels = 0;
  double total() const { return blocks + messages + partial_c + panels; }
};
RankMemoryModel predict_rank_memory(const RankTraffic& t, const Distribution& dist, int rank,
                                    const partition::TileZone& zone, const TileOrder& order,
                                    Streaming streaming = {});

}  // namespace cuboid::layout
