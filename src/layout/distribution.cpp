#include "layout/distribution.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <utility>

namespace cuboid::layout {

bool AxisOrder::identity() const {
  for (std::size_t x = 0; x < tiles.size(); ++x)
    if (tiles[x] != std::int64_t(x)) return false;
  return true;
}

namespace {

AxisOrder with_firsts(AxisOrder o) {
  o.first.assign(o.tiles.size() + 1, 0);
  for (std::int64_t x = 0; x < o.size(); ++x)
    o.first[std::size_t(x) + 1] = o.first[std::size_t(x)] + o.hi(x) - o.lo(x);
  return o;
}

}  // namespace

AxisOrder identity_order(std::int64_t extent, std::int64_t tile) {
  AxisOrder o;
  o.tile = tile, o.extent = extent;
  o.tiles.resize(std::size_t((extent + tile - 1) / tile));
  std::iota(o.tiles.begin(), o.tiles.end(), std::int64_t(0));
  return with_firsts(std::move(o));
}

AxisOrder grouped_order(std::int64_t extent, std::int64_t tile,
                        const std::function<std::int64_t(std::int64_t)>& key) {
  AxisOrder o = identity_order(extent, tile);
  std::vector<std::int64_t> keys(o.tiles.size());
  for (std::size_t x = 0; x < keys.size(); ++x) keys[x] = key(std::int64_t(x));
  std::stable_sort(o.tiles.begin(), o.tiles.end(), [&](std::int64_t a, std::int64_t b) {
    return keys[std::size_t(a)] < keys[std::size_t(b)];
  });
  return with_firsts(std::move(o));
}

TileOrder natural_order(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t tile) {
  return TileOrder{identity_order(m, tile), identity_order(n, tile), identity_order(k, tile),
                   "natural"};
}

exec::Rect c_panel(const TileOrder& o, const partition::TileBox& b) {
  return exec::Rect{o.i.first[std::size_t(b.lo[0])], o.i.first[std::size_t(b.hi[0])],
                    o.j.first[std::size_t(b.lo[1])], o.j.first[std::size_t(b.hi[1])]};
}
exec::Rect a_panel(const TileOrder& o, const partition::TileBox& b) {
  return exec::Rect{o.i.first[std::size_t(b.lo[0])], o.i.first[std::size_t(b.hi[0])],
                    o.k.first[std::size_t(b.lo[2])], o.k.first[std::size_t(b.hi[2])]};
}
exec::Rect b_panel(const TileOrder& o, const partition::TileBox& b) {
  return exec::Rect{o.k.first[std::size_t(b.lo[2])], o.k.first[std::size_t(b.hi[2])],
                    o.j.first[std::size_t(b.lo[1])], o.j.first[std::size_t(b.hi[1])]};
}

MatrixDist::MatrixDist(BlockCyclic L)
    : kind_(Kind::block_cyclic), rows_(L.rows()), cols_(L.cols()), bc_(L) {}

MatrixDist::MatrixDist(std::int64_t rows, std::int64_t cols, std::int64_t tile,
                       std::vector<int> owner, int ranks)
    : kind_(Kind::tiles),
      rows_(rows),
      cols_(cols),
      tile_(tile),
      row_tiles_((rows + tile - 1) / tile),
      col_tiles_((cols + tile - 1) / tile),
      owner_(std::move(owner)) {
  if (std::int64_t(owner_.size()) != row_tiles_ * col_tiles_)
    throw std::invalid_argument("tile owners: one owner per tile is needed");
  rank_size_.assign(std::size_t(ranks), 0);
  panel_rows_.assign(std::size_t(ranks), 0);
  tile_offset_.resize(owner_.size());
  tile_ld_.assign(owner_.size(), 0);
  for (std::int64_t tj = 0; tj < col_tiles_; ++tj)
    for (std::int64_t ti = 0; ti < row_tiles_; ++ti) {
      const std::size_t t = std::size_t(ti + tj * row_tiles_);
      const int o = owner_[t];
      if (o < 0 || o >= ranks) throw std::invalid_argument("tile owners: owner out of range");
      tile_offset_[t] = rank_size_[std::size_t(o)];
      rank_size_[std::size_t(o)] += (std::min(rows_, (ti + 1) * tile_) - ti * tile_) *
                                    (std::min(cols_, (tj + 1) * tile_) - tj * tile_);
    }
}

int MatrixDist::owner(std::int64_t gi, std::int64_t gj) const {
  if (kind_ == Kind::block_cyclic) return bc_.owner(gi, gj);
  return owner_[std::size_t(gi / tile_ + (gj / tile_) * row_tiles_)];
}

std::int64_t MatrixDist::local_size(int rank) const {
  if (kind_ == Kind::block_cyclic) return bc_.local_rows(rank) * bc_.local_cols(rank);
  return rank_size_[std::size_t(rank)];
}

std::int64_t MatrixDist::offset(std::int64_t gi, std::int64_t gj) const {
  if (kind_ == Kind::block_cyclic) return bc_.local_row(gi) + bc_.local_col(gj) * ld(gi, gj);
  const std::int64_t ti = gi / tile_, tj = gj / tile_;
  return tile_offset_[std::size_t(ti + tj * row_tiles_)] + (gi - ti * tile_) +
         (gj - tj * tile_) * ld(gi, gj);
}

std::int64_t MatrixDist::ld(std::int64_t gi, std::int64_t gj) const {
  if (kind_ == Kind::block_cyclic) return std::max<std::int64_t>(1, bc_.local_rows(owner(gi, gj)));
  const std::int64_t ti = gi / tile_;
  const std::int64_t panel = tile_ld_[std::size_t(ti + (gj / tile_) * row_tiles_)];
  return panel > 0 ? panel : std::min(rows_, (ti + 1) * tile_) - ti * tile_;
}

bool MatrixDist::store_as_panel(int rank, const AxisOrder& rows, std::int64_t x0, std::int64_t x1,
                                const AxisOrder& cols, std::int64_t y0, std::int64_t y1) {
  if (kind_ != Kind::tiles || x1 <= x0 || y1 <= y0) return false;
  std::int64_t owned = 0;
  for (int o : owner_) owned += o == rank;
  if (owned != (x1 - x0) * (y1 - y0)) return false;
  auto tile_at = [&](std::int64_t x, std::int64_t y) {
    return std::size_t(rows.tiles[std::size_t(x)] + cols.tiles[std::size_t(y)] * row_tiles_);
  };
  for (std::int64_t y = y0; y < y1; ++y)
    for (std::int64_t x = x0; x < x1; ++x)
      if (owner_[tile_at(x, y)] != rank) return false;
  const std::int64_t ld = rows.first[std::size_t(x1)] - rows.first[std::size_t(x0)];
  for (std::int64_t y = y0; y < y1; ++y)
    for (std::int64_t x = x0; x < x1; ++x) {
      const std::size_t t = tile_at(x, y);
      tile_offset_[t] = (rows.first[std::size_t(x)] - rows.first[std::size_t(x0)]) +
                        (cols.first[std::size_t(y)] - cols.first[std::size_t(y0)]) * ld;
      tile_ld_[t] = ld;
    }
  panel_rows_[std::size_t(rank)] = ld;
  return true;
}

std::int64_t MatrixDist::panel_rows(int rank) const {
  return kind_ == Kind::tiles ? panel_rows_[std::size_t(rank)] : 0;
}

void MatrixDist::for_each_piece(const exec::Rect& r,
                                const std::function<void(const exec::Rect&, int)>& f) const {
  const std::int64_t ub = unit_rows(), vb = unit_cols();
  for (std::int64_t j = r.j0; j < r.j1;) {
    const std::int64_t j1 = std::min(r.j1, (j / vb + 1) * vb);
    for (std::int64_t i = r.i0; i < r.i1;) {
      const std::int64_t i1 = std::min(r.i1, (i / ub + 1) * ub);
      f(exec::Rect{i, i1, j, j1}, owner(i, j));
      i = i1;
    }
    j = j1;
  }
}

void MatrixDist::for_each_owned(int rank, const std::function<void(const exec::Rect&)>& f) const {
  const std::int64_t ub = unit_rows(), vb = unit_cols();
  if (kind_ == Kind::block_cyclic) {
    const ProcessGrid& g = bc_.grid();
    const int pr = bc_.row_offset(g.row_of(rank)), pc = bc_.col_offset(g.col_of(rank));
    for (std::int64_t J = pc; J * vb < cols_; J += g.cols)
      for (std::int64_t I = pr; I * ub < rows_; I += g.rows)
        f(exec::Rect{I * ub, std::min(rows_, (I + 1) * ub), J * vb, std::min(cols_, (J + 1) * vb)});
    return;
  }
  for (std::int64_t tj = 0; tj < col_tiles_; ++tj)
    for (std::int64_t ti = 0; ti < row_tiles_; ++ti)
      if (owner_[std::size_t(ti + tj * row_tiles_)] == rank)
        f(exec::Rect{ti * ub, std::min(rows_, (ti + 1) * ub), tj * vb,
                     std::min(cols_, (tj + 1) * vb)});
}

std::string MatrixDist::describe() const {
  if (kind_ == Kind::block_cyclic)
    return "block-cyclic " + layout::describe(bc_.grid()) + " blocks of " +
           std::to_string(bc_.row_block()) +
           (bc_.first() == FirstProcess{}
                ? std::string()
                : ", first block on process (" + std::to_string(bc_.first().row) + ", " +
                      std::to_string(bc_.first().col) + ")");
  return "tile owners, tiles of " + std::to_string(tile_);
}

Distribution block_cyclic_distribution(std::int64_t m, std::int64_t n, std::int64_t k,
                                       std::int64_t block, const ProcessGrid& grid,
                                       bool a_transposed, bool b_transposed,
                                       const FirstProcesses& first) {
  Distribution d{MatrixDist(a_transposed ? BlockCyclic(k, m, block, block, grid, first.a)
                                         : BlockCyclic(m, k, block, block, grid, first.a)),
                 MatrixDist(b_transposed ? BlockCyclic(n, k, block, block, grid, first.b)
                                         : BlockCyclic(k, n, block, block, grid, first.b)),
                 MatrixDist(BlockCyclic(m, n, block, block, grid, first.c)), "block-cyclic", grid};
  d.a_transposed = a_transposed, d.b_transposed = b_transposed;
  return d;
}

Distribution aligned_distribution(const std::vector<partition::TileZone>& zones,
                                  const TileOrder& order, std::int64_t m, std::int64_t n,
                                  std::int64_t k, std::int64_t tile, bool a_transposed,
                                  bool b_transposed) {
  const int P = int(zones.size());
  // Users of each tile of a (rows x cols)-tile matrix, from the zones' projections on two axes.
  auto owners = [&](const AxisOrder& rows, const AxisOrder& cols, int ax_r, int ax_c) {
    const std::int64_t R = rows.size(), C = cols.size();
    std::vector<std::vector<int>> users(std::size_t(R * C));
    for (int r = 0; r < P; ++r)
      for (const auto& b : zones[std::size_t(r)]) {
        if (b.empty()) continue;
        for (std::int64_t y = b.lo[ax_c]; y < b.hi[ax_c]; ++y)
          for (std::int64_t x = b.lo[ax_r]; x < b.hi[ax_r]; ++x) {
            auto& u =
                users[std::size_t(rows.tiles[std::size_t(x)] + cols.tiles[std::size_t(y)] * R)];
            if (u.empty() || u.back() != r) u.push_back(r);
          }
      }
    std::vector<int> owner(users.size(), 0);
    std::vector<std::int64_t> load(std::size_t(P), 0);
    for (std::int64_t tj = 0; tj < C; ++tj)
      for (std::int64_t ti = 0; ti < R; ++ti) {
        auto& u = users[std::size_t(ti + tj * R)];
        std::sort(u.begin(), u.end());
        u.erase(std::unique(u.begin(), u.end()), u.end());
        if (u.empty()) throw std::invalid_argument("aligned layout: a tile no zone uses");
        int best = u.front();
        for (int r : u)
          if (load[std::size_t(r)] < load[std::size_t(best)]) best = r;
        const std::int64_t elems = (std::min(rows.extent, (ti + 1) * tile) - ti * tile) *
                                   (std::min(cols.extent, (tj + 1) * tile) - tj * tile);
        load[std::size_t(best)] += elems;
        owner[std::size_t(ti + tj * R)] = best;
      }
    return owner;
  };
  Distribution d;
  // A stored transposed has op(A)'s k axis for rows and its i axis for columns (B alike).
  d.a = a_transposed ? MatrixDist(k, m, tile, owners(order.k, order.i, 2, 0), P)
                     : MatrixDist(m, k, tile, owners(order.i, order.k, 0, 2), P);
  d.b = b_transposed ? MatrixDist(n, k, tile, owners(order.j, order.k, 1, 2), P)
                     : MatrixDist(k, n, tile, owners(order.k, order.j, 2, 1), P);
  d.a_transposed = a_transposed, d.b_transposed = b_transposed;
  d.c = MatrixDist(m, n, tile, owners(order.i, order.j, 0, 1), P);
  // A rank whose zone is one box and owns exactly its C tiles keeps them as that box's panel:
  // its GEMMs then write C in place, with no partial block beside it.
  for (int r = 0; r < P; ++r)
    if (const partition::TileBox* b = partition::single_box(zones[std::size_t(r)]))
      d.c.store_as_panel(r, order.i, b->lo[0], b->hi[0], order.j, b->lo[1], b->hi[1]);
  d.layout = "aligned";
  return d;
}

namespace {
// The local run of [x0, x1) on process coordinate p: its first local index and its length, or a
// first index of -1.
std::pair<std::int64_t, std::int64_t> local_run(const AxisOrder& axis, std::int64_t x0,
                                                std::int64_t x1, std::int64_t block, int p,
                                                int nprocs) {
  std::int64_t first = -1, next = -1;
  for (std::int64_t x = x0; x < x1; ++x)
    for (std::int64_t g = axis.lo(x); g < axis.hi(x); ++g) {
      if ((g / block) % nprocs != p) return {-1, 0};
      const std::int64_t li = (g / (block * nprocs)) * block + g % block;
      if (first < 0) first = next = li;
      if (li != next) return {-1, 0};
      ++next;
    }
  return {first, next - first};
}
}  // namespace

bool is_whole_local_axis(const AxisOrder& axis, std::int64_t x0, std::int64_t x1,
                         std::int64_t block, int p, int nprocs) {
  if (x0 >= x1) return numroc(axis.extent, block, p, 0, nprocs) == 0;
  const auto [first, length] = local_run(axis, x0, x1, block, p, nprocs);
  return first == 0 && length == numroc(axis.extent, block, p, 0, nprocs);
}

LocalBlock panel_in_local_array(const TileOrder& o, const Distribution& d, int rank,
                                const partition::TileBox& b, bool is_a) {
  const MatrixDist& M = is_a ? d.a : d.b;
  if (M.kind() != MatrixDist::Kind::block_cyclic) return {};
  const BlockCyclic& L = M.block_cyclic();
  const ProcessGrid& g = L.grid();
  // The stored rows and columns: for a transposed operand the rows are op's depth (k) and the
  // columns op's rows (i), or op's columns (j) for B.
  const bool flip = is_a ? d.a_transposed : d.b_transposed;
  struct Span {
    const AxisOrder* axis;
    std::int64_t x0, x1;
  };
  const Span outer = is_a ? Span{&o.i, b.lo[0], b.hi[0]} : Span{&o.j, b.lo[1], b.hi[1]};
  const Span depth{&o.k, b.lo[2], b.hi[2]};
  const Span rows = is_a != flip ? outer : depth, cols = is_a != flip ? depth : outer;
  const std::int64_t row =
      local_run(*rows.axis, rows.x0, rows.x1, L.row_block(), L.row_offset(g.row_of(rank)), g.rows)
          .first;
  if (row < 0) return {};
  const std::int64_t col =
      local_run(*cols.axis, cols.x0, cols.x1, L.col_block(), L.col_offset(g.col_of(rank)), g.cols)
          .first;
  return col < 0 ? LocalBlock{} : LocalBlock{row, col};
}

}  // namespace cuboid::layout
