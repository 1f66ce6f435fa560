#include "exec/plan.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>

namespace cuboid::exec {
namespace {

// A dense map over C tiles: small (M*N ints) even for large problems at usual tile sizes.
template <class T>
class TileGrid {
 public:
  TileGrid(std::int64_t rows, std::int64_t cols, T init)
      : rows_(rows), cols_(cols), cells_(std::size_t(rows * cols), init) {}
  T& at(std::int64_t i, std::int64_t j) { return cells_[std::size_t(i + rows_ * j)]; }
  const T& at(std::int64_t i, std::int64_t j) const { return cells_[std::size_t(i + rows_ * j)]; }
  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }

 private:
  std::int64_t rows_, cols_;
  std::vector<T> cells_;
};

Rect to_elements(const partition::TileBox& b, std::int64_t m, std::int64_t n, std::int64_t tile) {
  return Rect{b.lo[0] * tile, std::min(b.hi[0] * tile, m), b.lo[1] * tile,
              std::min(b.hi[1] * tile, n)};
}

// Cuts a piece into steps that fit `budget` elements of buffers. Keeps C blocks as large as
// possible (they are the expensive part to move) and streams along k first.
using Part = std::tuple<Rect, std::int64_t, std::int64_t>;  // C block, k range

void split_for_budget(const Rect& c, std::int64_t l0, std::int64_t l1, std::int64_t tile,
                      std::int64_t budget, int min_panels, int c_blocks, std::vector<Part>& out) {
  const std::int64_t depth = l1 - l0;
  // Deepest panel that still gives min_panels panels, on tile boundaries.
  const std::int64_t wanted =
      min_panels > 1 ? std::max(tile, (depth / min_panels + tile - 1) / tile * tile) : depth;
  // The A and B buffers are sized by the largest A and the largest B panel over all steps,
  // which may come from different steps: a tall block's A and a wide block's B. A panel is
  // therefore sized as if both of its sides were the longer one, so that the largest A plus the
  // largest B never exceed what one step was given.
  const std::int64_t side = std::max(c.rows(), c.cols());
  if (budget <= 0 || 4 * side * depth + c_blocks * c.rows() * c.cols() <= budget) {
    if (wanted >= depth) {
      out.emplace_back(c, l0, l1);
    } else {
      for (std::int64_t l = l0; l < l1; l += wanted)
        out.emplace_back(c, l, std::min(l1, l + wanted));
    }
    return;
  }
  // Deepest panel (a multiple of the tile) that fits next to this C block.
  const std::int64_t room = budget - c_blocks * c.rows() * c.cols();
  std::int64_t panel = room > 0 ? std::min(wanted, room / (4 * side)) : 0;
  if (panel >= std::min(depth, tile)) {
    if (panel < depth) panel = std::max(tile, panel / tile * tile);
    for (std::int64_t l = l0; l < l1; l += panel) out.emplace_back(c, l, std::min(l1, l + panel));
    return;
  }
  // The C block itself is too large: halve its longer side on a tile boundary.
  if (c.rows() <= tile && c.cols() <= tile) {
    // One tile does not fit with a one-tile panel: stream at element granularity.
    const std::int64_t p = std::max<std::int64_t>(1, room / (4 * side));
    if (room <= 0) throw std::runtime_error("memory budget too small for a single tile");
    for (std::int64_t l = l0; l < l1; l += p) out.emplace_back(c, l, std::min(l1, l + p));
    return;
  }
  Rect a = c, b = c;
  if (c.rows() >= c.cols()) {
    std::int64_t mid = c.i0 + std::max(tile, (c.rows() / 2) / tile * tile);
    a.i1 = mid, b.i0 = mid;
  } else {
    std::int64_t mid = c.j0 + std::max(tile, (c.cols() / 2) / tile * tile);
    a.j1 = mid, b.j0 = mid;
  }
  split_for_budget(a, l0, l1, tile, budget, min_panels, c_blocks, out);
  split_for_budget(b, l0, l1, tile, budget, min_panels, c_blocks, out);
}

// Cuts a piece's C block into blocks of at most `block` tiles a side, balanced on tile
// boundaries, column band by column band, the rows of every other band in reverse: consecutive
// blocks share their columns (so their B panel) or, where one band turns into the next, their
// rows (their A panel), which a copying processor then keeps resident.
std::vector<Rect> cut_blocks(const Rect& c, std::int64_t tile, std::int64_t block) {
  if (block <= 0) return {c};
  const std::int64_t rt = (c.rows() + tile - 1) / tile, ct = (c.cols() + tile - 1) / tile;
  const std::int64_t nr = (rt + block - 1) / block, nc = (ct + block - 1) / block;
  std::vector<Rect> out;
  for (std::int64_t b = 0; b < nc; ++b) {
    const std::int64_t j0 = c.j0 + (ct * b / nc) * tile,
                       j1 = std::min(c.j1, c.j0 + (ct * (b + 1) / nc) * tile);
    for (std::int64_t r = 0; r < nr; ++r) {
      const std::int64_t a = b % 2 ? nr - 1 - r : r;
      const std::int64_t i0 = c.i0 + (rt * a / nr) * tile,
                         i1 = std::min(c.i1, c.i0 + (rt * (a + 1) / nr) * tile);
      out.push_back(Rect{i0, i1, j0, j1});
    }
  }
  return out;
}

// One piece to cut: its C block and k range, the fewest panels its processor wants, and
// whether it is its processor's first piece (whose first step fills the pipeline).
struct PieceCut {
  Rect c;
  std::int64_t l0 = 0, l1 = 0;
  int min_panels = 1;
  bool first = false;
  PlanOptions::FillRate fill{};  // its processor's (PlanOptions::fill)
  double element_bytes = 8;
  // Elements x depth of its processor's pieces before it, and of all of them (coarse_head).
  double before = 0, total = 0;
};

double volume(const Rect& r, std::int64_t l0, std::int64_t l1) {
  return double(r.rows()) * double(r.cols()) * double(l1 - l0);
}

// A piece's blocks: of at most `block` tiles a side; with `coarse_head`, larger where they end
// early in the processor's volume -- four times that side within the first half (the head of its
// queue, which it most likely runs itself: fewer, larger GEMMs and copies), twice within the
// third quarter -- and `block` only in the last quarter, which processors short of work take.
// Each block says whether it is cut to `block` (the tail).
struct Block {
  Rect c;
  bool tail = false;
};

std::vector<Block> blocks_of(const PieceCut& pc, std::int64_t tile, std::int64_t block,
                             bool coarse_head) {
  std::vector<Block> out;
  if (!coarse_head || block <= 0) {
    for (const Rect& r : cut_blocks(pc.c, tile, block)) out.push_back(Block{r, block > 0});
    return out;
  }
  double pos = pc.before;
  // 4 block within the first half, 2 block within the next quarter, then block (share 1).
  std::function<void(const Rect&, std::int64_t, double)> cut = [&](const Rect& r, std::int64_t side,
                                                                   double end_share) {
    for (const Rect& b : cut_blocks(r, tile, side)) {
      const double v = volume(b, pc.l0, pc.l1);
      if (side == block || pos + v <= end_share * pc.total) {
        out.push_back(Block{b, side == block});
        pos += v;
      } else {
        cut(b, side / 2, end_share + (1 - end_share) / 2);
      }
    }
  };
  cut(pc.c, 4 * block, 0.5);
  return out;
}

// Orders the k-panels of each chain (consecutive parts on one C block) so that its first panel
// is the previous chain's last one where the two blocks share rows or columns: ascending, then
// descending, and so on. The step where one chain turns into the next then shares its A or B
// panel with the step before, which a copying processor keeps resident instead of copying it
// again. The order is the plan's, so every schedule of the plan sums in the same order.
void serpentine(std::vector<Part>& parts) {
  std::size_t prev_end = 0;  // end of the previous chain (0: none yet)
  for (std::size_t s = 0; s < parts.size();) {
    const Rect& c = std::get<0>(parts[s]);
    std::size_t e = s + 1;
    while (e < parts.size() && std::get<0>(parts[e]) == c) ++e;
    if (prev_end > 0 && e - s > 1) {
      const Part& prev = parts[prev_end - 1];
      const Rect& p = std::get<0>(prev);
      const bool shares = (p.i0 == c.i0 && p.i1 == c.i1) || (p.j0 == c.j0 && p.j1 == c.j1);
      auto same_k = [&](const Part& x) {
        return std::get<1>(x) == std::get<1>(prev) && std::get<2>(x) == std::get<2>(prev);
      };
      if (shares && same_k(parts[e - 1]) && !same_k(parts[s]))
        std::reverse(parts.begin() + std::ptrdiff_t(s), parts.begin() + std::ptrdiff_t(e));
    }
    prev_end = e;
    s = e;
  }
}

// Re-cuts the first block's k-panels (its first parts, ascending) for the pipeline's fill, as
// PlanOptions::fill says: one tile, then each panel deeper by the ratio of a panel's GEMM time
// to its copy time, on tile boundaries, none deeper than `room` (elements of buffers, 0: no
// limit) allows beside the block. False (nothing changed) without rates or where the ratio is
// not above 1.
bool fill_by_rates(const PieceCut& pc, std::int64_t tile, std::int64_t room, int c_blocks,
                   std::vector<Part>& parts) {
  if (!(pc.fill.gflops > 0 && pc.fill.link_gbs > 0)) return false;
  const Rect c = std::get<0>(parts.front());
  std::size_t e = 0;
  while (e < parts.size() && std::get<0>(parts[e]) == c) ++e;
  const std::int64_t l0 = std::get<1>(parts.front()), l1 = std::get<2>(parts[e - 1]);
  // As split_for_budget sizes panels: both sides taken as the longer one.
  std::int64_t cap = l1 - l0;
  if (room > 0) {
    const std::int64_t side = std::max(c.rows(), c.cols());
    cap = std::max(tile, (room - c_blocks * c.rows() * c.cols()) / (4 * side) / tile * tile);
  }
  const double r = double(c.rows()), cc = double(c.cols());
  const double ratio =
      2.0 * r * cc * pc.fill.link_gbs / ((r + cc) * pc.element_bytes * pc.fill.gflops);
  if (!(ratio > 1) || l1 - l0 <= tile) return false;
  std::vector<Part> fill;
  double want = double(tile);
  for (std::int64_t l = l0; l < l1;) {
    std::int64_t d = std::max(tile, std::int64_t(want / double(tile)) * tile);
    d = std::min({d, cap, l1 - l});
    fill.emplace_back(c, l, l + d);
    l += d;
    want = double(d) * ratio;
  }
  parts.erase(parts.begin(), parts.begin() + std::ptrdiff_t(e));
  parts.insert(parts.begin(), fill.begin(), fill.end());
  return true;
}

// A budget the steps' buffers must fit: budget elements, and what counts against them.
struct BudgetLimit {
  std::int64_t budget = 0;
  BufferCost cost;
};

// Cuts pieces (of one processor, or of all of them with shared steps) into steps. The buffers
// are sized for the largest panels and the largest C block over all steps, which may come from
// different steps; so when their sum exceeds a budget, the pieces are cut again with a smaller
// room: the largest that fits every budget, found by bisection.
std::vector<std::vector<Part>> split_pieces(const std::vector<PieceCut>& pieces, std::int64_t tile,
                                            std::int64_t block, bool coarse_head,
                                            const std::vector<BudgetLimit>& limits) {
  // The room the cut starts from, and the C blocks it counts: the tightest of the budgets.
  std::int64_t limit = 0;
  int c_blocks = 0;
  for (const auto& b : limits) {
    const std::int64_t l = b.budget - b.cost.fixed;  // for panels and C blocks
    if (l <= 0)
      throw std::runtime_error("memory budget too small for the processor's staging ring");
    limit = limit == 0 ? l : std::min(limit, l);
    c_blocks = std::max(c_blocks, b.cost.c_blocks);
  }
  // Cuts with `room`; returns whether the buffers then fit every budget.
  auto cut = [&](std::int64_t room, std::vector<std::vector<Part>>& out) {
    out.assign(pieces.size(), {});
    std::int64_t max_a = 0, max_b = 0, max_c = 0;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      const PieceCut& pc = pieces[i];
      auto& parts = out[i];
      // A piece cut into at least min_panels blocks has enough steps for the copies of one to
      // overlap the GEMM of another: its tail blocks are not cut along k (budget permitting), so
      // that consecutive blocks of a band share a whole panel and their GEMMs are deeper.
      const std::vector<Block> blocks = blocks_of(pc, tile, block, coarse_head);
      const bool enough = std::int64_t(blocks.size()) >= pc.min_panels;
      for (const Block& b : blocks)
        split_for_budget(b.c, pc.l0, pc.l1, tile, room, b.tail && enough ? 1 : pc.min_panels,
                         c_blocks, parts);
      // The first step's copies cannot overlap anything: a processor that overlaps copies
      // starts with a panel of one tile, so that less waits to fill the pipeline.
      // With the processor's rates, its first block is cut for the fill instead.
      if (pc.first && pc.min_panels > 1 && !parts.empty() &&
          !fill_by_rates(pc, tile, room, c_blocks, parts)) {
        auto [rect, a, z] = parts.front();
        if (z - a > tile) {
          parts.front() = std::make_tuple(rect, a, a + tile);
          parts.insert(parts.begin() + 1, std::make_tuple(rect, a + tile, z));
        }
      }
      serpentine(parts);
      for (const auto& [rect, a, z] : parts) {
        max_a = std::max(max_a, rect.rows() * (z - a));
        max_b = std::max(max_b, (z - a) * rect.cols());
        max_c = std::max(max_c, rect.rows() * rect.cols());
      }
    }
    for (const auto& b : limits)
      if (2 * (max_a + max_b) + b.cost.c_blocks * max_c > b.budget - b.cost.fixed) return false;
    return true;
  };
  std::vector<std::vector<Part>> out, trial;
  if (limits.empty()) {
    cut(0, out);  // no budget: pieces are cut only into blocks and min_panels panels
    return out;
  }
  if (cut(limit, out)) return out;
  // Shrink until it fits, then bisect between the last room that failed and the one that fits.
  std::int64_t bad = limit, good = limit;
  do {
    bad = good;
    good = good * 9 / 10;
    if (good <= 0) throw std::runtime_error("memory budget too small for a single tile");
  } while (!cut(good, out));
  while (bad - good > std::max<std::int64_t>(1, good / 256)) {
    const std::int64_t mid = good + (bad - good) / 2;
    if (cut(mid, trial)) {
      good = mid;
      out.swap(trial);
    } else {
      bad = mid;
    }
  }
  return out;
}

// Owner of each C tile: the lowest-numbered processor whose zone touches it (-1: none).
// `k_split` tells whether several processors contribute to some tile.
TileGrid<int> tile_owners(const std::vector<partition::TileZone>& zones, std::int64_t M,
                          std::int64_t N, std::int64_t K, bool& k_split) {
  TileGrid<int> owner(M, N, -1);
  for (int q = 0; q < int(zones.size()); ++q) {
    for (const auto& b : zones[std::size_t(q)]) {
      if (b.empty()) continue;
      if (b.lo[0] < 0 || b.hi[0] > M || b.lo[1] < 0 || b.hi[1] > N || b.lo[2] < 0 || b.hi[2] > K)
        throw std::invalid_argument("make_plan: a piece lies outside the tile cuboid");
      for (std::int64_t j = b.lo[1]; j < b.hi[1]; ++j)
        for (std::int64_t i = b.lo[0]; i < b.hi[0]; ++i) {
          int& o = owner.at(i, j);
          if (o == -1)
            o = q;
          else if (o != q)
            k_split = true;
        }
    }
  }
  return owner;
}

BudgetLimit budget_of(const PlanOptions& options, int q) {
  const std::int64_t budget =
      q < int(options.budget_elements.size()) ? options.budget_elements[std::size_t(q)] : 0;
  const BufferCost cost =
      q < int(options.buffer_cost.size()) ? options.buffer_cost[std::size_t(q)] : BufferCost{};
  return BudgetLimit{budget, cost};
}

// A processor's nonempty pieces in elements, in zone order, each with the volume of the pieces
// before it and of all of them (coarse_head cuts by position in that volume).
std::vector<PieceCut> pieces_of(const partition::TileZone& zone, int min_panels, std::int64_t m,
                                std::int64_t n, std::int64_t k, std::int64_t tile) {
  std::vector<PieceCut> pieces;
  for (const auto& b : zone)
    if (!b.empty())
      pieces.push_back(PieceCut{to_elements(b, m, n, tile), b.lo[2] * tile,
                                std::min(b.hi[2] * tile, k), min_panels, pieces.empty()});
  double total = 0;
  for (auto& pc : pieces) {
    pc.before = total;
    total += volume(pc.c, pc.l0, pc.l1);
  }
  for (auto& pc : pieces) pc.total = total;
  return pieces;
}

// The parts of each piece of a processor, in zone order.
using PieceParts = std::vector<std::vector<Part>>;

// Every processor's pieces cut into steps: each within its own budget, or with shared steps
// all together within every budget.
std::vector<PieceParts> split_zones(const std::vector<partition::TileZone>& zones, std::int64_t m,
                                    std::int64_t n, std::int64_t k, std::int64_t tile,
                                    const PlanOptions& options) {
  const int p = int(zones.size());
  std::vector<PieceParts> split(static_cast<std::size_t>(p));
  std::vector<PieceCut> all;
  std::vector<BudgetLimit> all_limits;
  std::vector<int> owner_of_piece;
  for (int q = 0; q < p; ++q) {
    const int min_panels =
        q < int(options.min_panels.size()) ? options.min_panels[std::size_t(q)] : 1;
    std::vector<PieceCut> pieces = pieces_of(zones[std::size_t(q)], min_panels, m, n, k, tile);
    for (auto& pc : pieces) {
      if (q < int(options.fill.size())) pc.fill = options.fill[std::size_t(q)];
      pc.element_bytes = double(options.element_bytes);
    }
    const BudgetLimit limit = budget_of(options, q);
    if (options.shared_steps) {
      all.insert(all.end(), pieces.begin(), pieces.end());
      owner_of_piece.insert(owner_of_piece.end(), pieces.size(), q);
      if (limit.budget > 0) all_limits.push_back(limit);
    } else {
      split[std::size_t(q)] = split_pieces(
          pieces, tile, options.block_tiles, options.coarse_head,
          limit.budget > 0 ? std::vector<BudgetLimit>{limit} : std::vector<BudgetLimit>{});
    }
  }
  if (options.shared_steps) {
    auto parts = split_pieces(all, tile, options.block_tiles, options.coarse_head, all_limits);
    for (std::size_t i = 0; i < parts.size(); ++i)
      split[std::size_t(owner_of_piece[i])].push_back(std::move(parts[i]));
  }
  return split;
}

// Sets the tiles of `grid` that the C face of b covers.
void mark(TileGrid<char>& grid, const partition::TileBox& b) {
  for (std::int64_t j = b.lo[1]; j < b.hi[1]; ++j)
    for (std::int64_t i = b.lo[0]; i < b.hi[0]; ++i) grid.at(i, j) = 1;
}

// Whether a piece of processor q writes C directly (it owns every C tile of the piece) and, if
// so, whether it is fresh (none of those tiles touched by q's earlier direct pieces).
struct Coverage {
  bool direct = true, fresh = true;
};

Coverage coverage(const partition::TileBox& b, int q, const TileGrid<int>& owner,
                  const TileGrid<char>& touched) {
  Coverage cov;
  for (std::int64_t j = b.lo[1]; j < b.hi[1] && cov.direct; ++j)
    for (std::int64_t i = b.lo[0]; i < b.hi[0]; ++i) {
      if (owner.at(i, j) != q) {
        cov.direct = false;
        break;
      }
      if (touched.at(i, j)) cov.fresh = false;
    }
  return cov;
}

// What the processors' steps share while they are made: the C tiles whose beta a direct
// first-touch GEMM already applies, and the partial buffer of each (processor, C block).
struct Destinations {
  TileGrid<char> beta_done;
  std::map<std::tuple<int, std::int64_t, std::int64_t, std::int64_t, std::int64_t>, int> partial_of;
};

// The partial buffer processor q's piece on block c adds into, created on first use (its
// first GEMM then overwrites it: beta 0).
int partial_buffer(Plan& plan, Destinations& dests, int q, const Rect& c, BetaUse& first_beta) {
  auto key = std::make_tuple(q, c.i0, c.i1, c.j0, c.j1);
  auto it = dests.partial_of.find(key);
  if (it != dests.partial_of.end()) return it->second;
  const int dest = int(plan.partials.size());
  plan.partials.push_back(PartialBuffer{q, c});
  dests.partial_of.emplace(key, dest);
  first_beta = BetaUse::zero;
  return dest;
}

// Appends a piece's parts as steps. Steps on the same sub-block follow each other, so the
// block stays resident from its first step (c_in) to its last (c_out).
void append_steps(ProcessorPlan& pp, const std::vector<Part>& parts, int dest, int piece,
                  BetaUse first_beta, bool beta_is_zero) {
  for (std::size_t s = 0; s < parts.size(); ++s) {
    const auto& [rect, a, z] = parts[s];
    Step st;
    st.c = rect, st.l0 = a, st.l1 = z, st.dest = dest, st.piece = piece;
    const bool continues = s > 0 && std::get<0>(parts[s - 1]) == rect;
    st.beta = continues ? BetaUse::one : first_beta;
    // The first GEMM on a block needs the old C unless it overwrites it (beta 0).
    st.c_in = !continues && st.beta != BetaUse::zero && !(st.beta == BetaUse::beta && beta_is_zero);
    const bool last = s + 1 == parts.size() || !(std::get<0>(parts[s + 1]) == rect);
    st.c_out = last;
    pp.flops += st.flops();
    pp.max_a = std::max(pp.max_a, rect.rows() * st.depth());
    pp.max_b = std::max(pp.max_b, st.depth() * rect.cols());
    pp.max_c = std::max(pp.max_c, rect.rows() * rect.cols());
    pp.steps.push_back(st);
  }
}

// Processor q's steps, piece by piece: each writes C directly or a partial buffer, and the
// first direct piece on untouched tiles applies beta.
void plan_processor(Plan& plan, int q, const partition::TileZone& zone, const PieceParts& split,
                    const TileGrid<int>& owner, Destinations& dests, const PlanOptions& options) {
  ProcessorPlan& pp = plan.processors[std::size_t(q)];
  TileGrid<char> touched(owner.rows(), owner.cols(), 0);  // by q's direct steps so far
  int piece_index = 0;
  for (const auto& b : zone) {
    if (b.empty()) continue;
    pp.tasks += b.volume();
    const Coverage cov = coverage(b, q, owner, touched);
    const Rect c = to_elements(b, plan.m, plan.n, plan.tile);
    int dest = -1;
    BetaUse first_beta = BetaUse::one;
    if (cov.direct) {
      if (cov.fresh && !options.beta_is_one) {
        first_beta = BetaUse::beta;
        mark(dests.beta_done, b);
      }
      mark(touched, b);
    } else {
      dest = partial_buffer(plan, dests, q, c, first_beta);
    }
    append_steps(pp, split[std::size_t(piece_index)], dest, piece_index, first_beta,
                 options.beta_is_zero);
    ++piece_index;
  }
  pp.pieces = piece_index;
}

// The C blocks no GEMM applies beta to, as runs of tiles down each tile column: the pre-pass
// scales them before the run.
std::vector<Rect> prescale_blocks(const TileGrid<char>& beta_done, std::int64_t m, std::int64_t n,
                                  std::int64_t tile) {
  std::vector<Rect> out;
  const std::int64_t M = beta_done.rows(), N = beta_done.cols();
  for (std::int64_t j = 0; j < N; ++j) {
    std::int64_t i = 0;
    while (i < M) {
      if (beta_done.at(i, j)) {
        ++i;
        continue;
      }
      std::int64_t e = i;
      while (e < M && !beta_done.at(e, j)) ++e;
      out.push_back(Rect{i * tile, std::min(e * tile, m), j * tile, std::min((j + 1) * tile, n)});
      i = e;
    }
  }
  return out;
}

// Every C tile must be covered by some zone.
void require_covered(const TileGrid<int>& owner) {
  for (std::int64_t j = 0; j < owner.cols(); ++j)
    for (std::int64_t i = 0; i < owner.rows(); ++i)
      if (owner.at(i, j) == -1)
        throw std::invalid_argument("make_plan: C tile (" + std::to_string(i) + "," +
                                    std::to_string(j) + ") belongs to no zone");
}

}  // namespace

std::int64_t staged_footprint(std::int64_t rows, std::int64_t cols, std::int64_t depth,
                              int c_blocks) {
  return 2 * (rows * depth + depth * cols) + c_blocks * rows * cols;
}

std::int64_t buffer_elements(const ProcessorPlan& pp, const BufferCost& cost) {
  if (pp.steps.empty()) return 0;
  return cost.fixed + 2 * (pp.max_a + pp.max_b) + cost.c_blocks * pp.max_c;
}

void widen_needs(ProcessorPlan& all, const ProcessorPlan& pp) {
  if (pp.steps.empty()) return;
  all.steps.resize(1);
  all.max_a = std::max(all.max_a, pp.max_a);
  all.max_b = std::max(all.max_b, pp.max_b);
  all.max_c = std::max(all.max_c, pp.max_c);
}

std::int64_t shared_buffer_elements(const Plan& plan, const BufferCost& cost) {
  ProcessorPlan all;
  for (const auto& pp : plan.processors) widen_needs(all, pp);
  return buffer_elements(all, cost);
}

std::vector<std::vector<std::size_t>> chain_starts(const Plan& plan) {
  std::vector<std::vector<std::size_t>> out(plan.processors.size());
  for (std::size_t q = 0; q < plan.processors.size(); ++q) {
    const auto& steps = plan.processors[q].steps;
    for (std::size_t s = 0; s < steps.size(); ++s)
      if (s == 0 || steps[s - 1].c_out) out[q].push_back(s);
  }
  return out;
}

Plan make_plan(const std::vector<partition::TileZone>& zones, std::int64_t m, std::int64_t n,
               std::int64_t k, std::int64_t tile, const PlanOptions& options) {
  if (tile <= 0 || m <= 0 || n <= 0 || k <= 0)
    throw std::invalid_argument("make_plan: empty problem");
  const std::int64_t M = (m + tile - 1) / tile, N = (n + tile - 1) / tile,
                     K = (k + tile - 1) / tile;
  const int p = int(zones.size());
  Plan plan;
  plan.m = m, plan.n = n, plan.k = k, plan.tile = tile;
  plan.shared_steps = options.shared_steps;
  plan.processors.resize(std::size_t(p));

  const TileGrid<int> owner = tile_owners(zones, M, N, K, plan.k_split);
  const std::vector<PieceParts> split = split_zones(zones, m, n, k, tile, options);
  Destinations dests{TileGrid<char>(M, N, 0), {}};
  for (int q = 0; q < p; ++q)
    plan_processor(plan, q, zones[std::size_t(q)], split[std::size_t(q)], owner, dests, options);
  // Tiles whose beta no GEMM applied get a pre-pass.
  if (!options.beta_is_one) plan.prescale = prescale_blocks(dests.beta_done, m, n, tile);
  require_covered(owner);
  return plan;
}

}  // namespace cuboid::exec
