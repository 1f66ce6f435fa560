#pragma once
// From tile zones to the steps each processor executes. Pure C++: no Kokkos, testable alone.
//
// Rules that make the result independent of the partition (up to reassociation):
// - C is owned tile by tile by the lowest-numbered processor whose zone touches the tile.
//   A piece whose C block lies entirely in tiles its processor owns writes C directly; any
//   other piece writes a private partial buffer, and the partials are added to C after all
//   processors finish, in a fixed order (processor, then buffer) -- the paper's "Redux".
// - beta is applied exactly once per C element: by the first direct piece that touches a whole
//   untouched block, otherwise by a pre-pass over the remaining tiles before the run.
// - Pieces larger than a processor's memory budget are cut into sub-blocks of C and panels
//   along k; consecutive steps on the same C block keep it resident, and the k-panels of one
//   block after another go up, then down, so that where one block turns into the next (sharing
//   rows or columns) the two steps share a panel, which a copying processor keeps resident.
#include <cstdint>
#include <vector>

#include "partition/box.hpp"

namespace cuboid::exec {

using partition::Rect;  // blocks of C, in elements

enum class BetaUse { beta, zero, one };  // the beta of one GEMM: the user's, 0, or 1

struct Step {
  Rect c;                       // the C block
  std::int64_t l0 = 0, l1 = 0;  // the inner range (k) in elements
  int dest = -1;                // -1: C itself; otherwise an index into Plan::partials
  BetaUse beta = BetaUse::one;
  bool c_in = false;   // a staged processor brings the C block in before this GEMM
  bool c_out = false;  // ...and drains it after this GEMM (the last step on this block)
  int piece = 0;       // which piece of the zone it comes from
  std::int64_t depth() const { return l1 - l0; }
  double flops() const { return 2.0 * double(c.rows()) * double(c.cols()) * double(depth()); }
};

struct PartialBuffer {
  int processor = 0;
  Rect c;
};

struct ProcessorPlan {
  std::vector<Step> steps;
  int pieces = 0;
  double tasks = 0;  // tile tasks in the zone
  double flops = 0;
  // Largest panels and blocks of any step: what a staged processor allocates (elements).
  std::int64_t max_a = 0, max_b = 0, max_c = 0;
};

// What a copying processor's buffers cost against its budget, besides two A and two B panel
// buffers (each as large as the largest such panel of any step: a panel two steps share stays
// in its buffer while the other panel changes): the C blocks it holds (two on a device; four when
// its staging lives in the same memory, as a staged processor's does) and fixed buffers (a staging
// ring in the same memory), in elements.
struct BufferCost {
  int c_blocks = 2;
  std::int64_t fixed = 0;
};

struct Plan {
  std::int64_t m = 0, n = 0, k = 0, tile = 0;
  std::vector<ProcessorPlan> processors;
  std::vector<PartialBuffer> partials;  // reduced into C in this order
  std::vector<Rect> prescale;           // C blocks to scale by beta (or zero) before the run
  bool k_split = false;                 // some C tile has contributions from several processors
  bool shared_steps = false;            // made with PlanOptions::shared_steps: any processor's
                                        // buffers fit any step
};

struct PlanOptions {
  bool beta_is_one = false;   // then nothing needs scaling and no GEMM needs the old C scaled
  bool beta_is_zero = false;  // then a GEMM that applies beta needs no old C at all
  // Elements each processor's buffers may hold over the whole plan (see BufferCost); 0 means it
  // works in place and needs no buffers.
  std::vector<std::int64_t> budget_elements;
  // Fewest k-panels each piece of a processor is cut into (1 when absent). A device needs
  // several: with a single step there is nothing for the copies to overlap with. With more
  // than one, the processor's first step is also cut to one tile deep (pipeline fill). A piece
  // cut into at least this many blocks (block_tiles) already has that many steps: its tail
  // blocks are not cut along k (budget permitting), so consecutive ones share a whole panel.
  std::vector<int> min_panels;
  // Per processor (BufferCost{} when absent): what counts against its budget.
  std::vector<BufferCost> buffer_cost;
  // Per processor that copies, from the speed model (absent or 0: the first block's first step
  // one tile deep, then its min_panels panels): its GEMM rate (GFLOP/s) and link in (GB/s). Its
  // first block is then cut for the pipeline's fill instead: a first panel of one tile, and each
  // next one as deep as the GEMM of the one before hides its copy -- deeper by the ratio
  // 2 rows cols link / ((rows + cols) element_bytes rate) -- within what the budget gave each.
  // A ratio not above 1 (the link bounds the block) keeps the default.
  struct FillRate {
    double gflops = 0, link_gbs = 0;
  };
  std::vector<FillRate> fill;
  std::size_t element_bytes = 8;
  // Work stealing needs steps small enough to move and able to run anywhere:
  // - block_tiles > 0: every piece's C block is first cut into blocks of at most this many
  //   tiles a side (balanced, on tile boundaries), so that a zone is many chains of steps --
  //   column band by column band, every other band's rows in reverse, and each block's
  //   k-panels in the order that starts with the previous block's last one, so that
  //   consecutive steps share an A or B panel where they can;
  // - shared_steps: every processor's steps fit the buffers of every processor with a budget
  //   (the largest panels and C block over all steps of the plan, with each one's BufferCost),
  //   so that any of them can run a step stolen from any other.
  // - coarse_head (with block_tiles): blocks are four times as large a side where they end
  //   within the first half of their processor's volume (in plan order: the head of its queue,
  //   which it most likely runs itself -- fewer GEMMs and copies), twice within the third
  //   quarter, and only the last quarter, where others steal, is cut to block_tiles.
  std::int64_t block_tiles = 0;
  bool shared_steps = false;
  bool coarse_head = false;
};

Plan make_plan(const std::vector<partition::TileZone>& zones, std::int64_t m, std::int64_t n,
               std::int64_t k, std::int64_t tile, const PlanOptions& options);

// The buffers a copying processor needs for one step of the given shape (elements).
std::int64_t staged_footprint(std::int64_t rows, std::int64_t cols, std::int64_t depth,
                              int c_blocks = 2);
// The buffers it holds for a whole plan (elements): what must stay within its budget.
std::int64_t buffer_elements(const ProcessorPlan& pp, const BufferCost& cost);
// The same for every step of the plan, whichever processor it belongs to (shared_steps).
std::int64_t shared_buffer_elements(const Plan& plan, const BufferCost& cost);
// Widens `all` to hold `pp`'s largest panels and block too (no-op for a plan without steps), so
// that buffer_elements(all, cost) is what buffers sized for both cost.
void widen_needs(ProcessorPlan& all, const ProcessorPlan& pp);

// Chains: a processor's steps from one that starts a C block to the one that drains it
// (c_out); a copying processor keeps the block resident between them. Returns, per processor,
// the index of the first step of each chain.
std::vector<std::vector<std::size_t>> chain_starts(const Plan& plan);

}  // namespace cuboid::exec
