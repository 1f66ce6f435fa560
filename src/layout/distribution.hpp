#pragma once
// Where the tiles of A, B and C live, and in which order the rank partition sees them. No MPI.
//
// TileOrder. The rank partition cuts a tile cuboid whose axes need not be in the matrices' own
// order: each axis is a permutation of the tiles along it. Grouping the tile rows of A and C by
// the process row that owns them (and the columns of B and C by process column, the inner tiles
// by the process column of A or the process row of B) makes a box of that "layout space" a set
// of tiles one rank already holds, which is what lets the partition move less data. Positions
// along an axis are tile indices of the permuted order; `first[x]` is the first element of
// position x counted in that order, so a box of positions is a contiguous panel of elements.
//
// MatrixDist. One matrix spread over the ranks, either 2D block-cyclic (ScaLAPACK's, a local
// column-major array per rank) or by tile owners ("aligned": every tile starts on a rank whose
// zone uses it; a rank stores its tiles one after another, each column-major). Both answer the
// same questions: who owns an element, which pieces a rectangle splits into, and where an owned
// element sits in its owner's storage.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "exec/plan.hpp"
#include "layout/layout.hpp"
#include "partition/box.hpp"

namespace cuboid::layout {

struct AxisOrder {
  std::int64_t tile = 1, extent = 0;  // tile size and number of elements along the axis
  std::vector<std::int64_t> tiles;    // position -> original tile index
  std::vector<std::int64_t> first;    // position -> first element in permuted order (size+1)

  std::int64_t size() const { return std::int64_t(tiles.size()); }
  // Elements [lo, hi) of the original axis that position x covers.
  std::int64_t lo(std::int64_t x) const { return tiles[std::size_t(x)] * tile; }
  std::int64_t hi(std::int64_t x) const {
    return std::min(extent, (tiles[std::size_t(x)] + 1) * tile);
  }
  bool identity() const;
};

// The identity order, and the order that groups tiles by `key(tile)` (ascending, stable).
AxisOrder identity_order(std::int64_t extent, std::int64_t tile);
AxisOrder grouped_order(std::int64_t extent, std::int64_t tile,
                        const std::function<std::int64_t(std::int64_t)>& key);

struct TileOrder {
  AxisOrder i, j, k;  // rows of C and A; columns of C and B; the inner dimension
  std::string name;   // "natural", or which owners each axis is grouped by
};

TileOrder natural_order(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t tile);

// Element rectangles of a box of positions, in permuted element coordinates (panels), of C,
// op(A) (rows x depth) and op(B) (depth x columns).
exec::Rect c_panel(const TileOrder& o, const partition::TileBox& b);
exec::Rect a_panel(const TileOrder& o, const partition::TileBox& b);
exec::Rect b_panel(const TileOrder& o, const partition::TileBox& b);

// The rectangle with rows and columns exchanged: where a part of op(X) lies in a transposed X.
inline exec::Rect transposed(const exec::Rect& r) { return exec::Rect{r.j0, r.j1, r.i0, r.i1}; }

class MatrixDist {
 public:
  enum class Kind { block_cyclic, tiles };
  MatrixDist() = default;
  explicit MatrixDist(BlockCyclic L);
  // Tile owners: owner[ti + tj * row_tiles] for the rows x cols matrix cut in tile x tile.
  MatrixDist(std::int64_t rows, std::int64_t cols, std::int64_t tile, std::vector<int> owner,
             int ranks);

  Kind kind() const { return kind_; }
  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }
  const BlockCyclic& block_cyclic() const { return bc_; }  // Kind::block_cyclic only
  std::int64_t unit_rows() const { return kind_ == Kind::tiles ? tile_ : bc_.row_block(); }
  std::int64_t unit_cols() const { return kind_ == Kind::tiles ? tile_ : bc_.col_block(); }

  int owner(std::int64_t gi, std::int64_t gj) const;
  // Elements `rank` stores.
  std::int64_t local_size(int rank) const;
  // Offset of the owned element (gi, gj) in its owner's storage and the leading dimension of
  // the column-major unit (block-cyclic: the local array; tiles: the tile) it sits in.
  std::int64_t offset(std::int64_t gi, std::int64_t gj) const;
  std::int64_t ld(std::int64_t gi, std::int64_t gj) const;

  // Tiles only: stores `rank`'s tiles as one column-major array over the positions [x0, x1) of
  // `rows` and [y0, y1) of `cols` (leading dimension: that panel's rows), so that a GEMM over the
  // panel writes the rank's storage in place. Done, and true, only when those positions' tiles
  // are exactly the ones the rank owns.
  bool store_as_panel(int rank, const AxisOrder& rows, std::int64_t x0, std::int64_t x1,
                      const AxisOrder& cols, std::int64_t y0, std::int64_t y1);
  // Rows of `rank`'s panel when its storage is one (store_as_panel), else 0.
  std::int64_t panel_rows(int rank) const;

  // Calls f(piece, owner) for each intersection of `r` with an ownership unit (a block or a
  // tile), units in column-major order: sender and receiver enumerate them alike.
  void for_each_piece(const exec::Rect& r,
                      const std::function<void(const exec::Rect&, int)>& f) const;
  // Calls f(unit) for every unit `rank` owns (the whole of it, clipped to the matrix).
  void for_each_owned(int rank, const std::function<void(const exec::Rect&)>& f) const;

  std::string describe() const;

 private:
  Kind kind_ = Kind::block_cyclic;
  std::int64_t rows_ = 0, cols_ = 0;
  BlockCyclic bc_;
  // Tile owners.
  std::int64_t tile_ = 1, row_tiles_ = 0, col_tiles_ = 0;
  std::vector<int> owner_;
  std::vector<std::int64_t> tile_offset_;  // offset of each tile in its owner's storage
  std::vector<std::int64_t> tile_ld_;      // its leading dimension there; 0: the tile's rows
  std::vector<std::int64_t> rank_size_;
  std::vector<std::int64_t> panel_rows_;  // per rank (store_as_panel), 0: tile after tile
};

// The three matrices of one product, as stored: A is m x k, or k x m when op(A) transposes it
// (and B k x n, or n x k), laid out as that stored matrix, as ScaLAPACK's descriptor of a
// transposed operand describes it. Ownership of a part of op(A) is that of the stored rectangle
// under it (stored_a); conjugation changes no ownership, so only transposition is kept here.
struct Distribution {
  MatrixDist a, b, c;  // stored A, stored B, C (m x n)
  std::string layout;  // "block-cyclic" or "aligned"
  ProcessGrid grid;    // block-cyclic only
  bool a_transposed = false, b_transposed = false;

  // The stored rectangle under a rectangle of op(A) (rows of i, columns of k) or of op(B)
  // (rows of k, columns of j), in the same (original or permuted) coordinates.
  exec::Rect stored_a(const exec::Rect& r) const { return a_transposed ? transposed(r) : r; }
  exec::Rect stored_b(const exec::Rect& r) const { return b_transposed ? transposed(r) : r; }
  std::int64_t depth() const { return a_transposed ? a.rows() : a.cols(); }  // k
};

Distribution block_cyclic_distribution(std::int64_t m, std::int64_t n, std::int64_t k,
                                       std::int64_t block, const ProcessGrid& grid,
                                       bool a_transposed = false, bool b_transposed = false,
                                       const FirstProcesses& first = {});

// The aligned start for `zones` (in the positions of `order`): every tile is owned by one of
// the ranks whose zone uses it, the least loaded so far (tiles visited column by column), so
// each rank starts with a near-equal share of what it uses and nothing is stored twice.
// Stored tiles of a transposed operand are placed by the zones alike (a zone uses the stored
// tile under its part of op(A)).
Distribution aligned_distribution(const std::vector<partition::TileZone>& zones,
                                  const TileOrder& order, std::int64_t m, std::int64_t n,
                                  std::int64_t k, std::int64_t tile, bool a_transposed = false,
                                  bool b_transposed = false);

// True when the positions [x0, x1) of `axis` are exactly the indices process coordinate `p`
// (counted from the first block's: BlockCyclic::row_offset) owns along that axis of a
// block-cyclic matrix, in local order: then a panel of them is the rank's local array itself and
// needs no copy.
bool is_whole_local_axis(const AxisOrder& axis, std::int64_t x0, std::int64_t x1,
                         std::int64_t block, int p, int nprocs);

// Where a stored panel lies in a rank's block-cyclic local array when it is a block of it: its
// first local row and column (rows and columns in local order, read there with the array's
// leading dimension); row -1 when it is not, and the panel is filled instead. A slab of a rank's
// own k blocks is a column range of its A, say.
struct LocalBlock {
  std::int64_t row = -1, col = -1;
  bool in_place() const { return row >= 0; }
};
// The stored A panel (is_a) or B panel of the box of positions `b` in `rank`'s local array, for
// a block-cyclic distribution (never in place otherwise).
LocalBlock panel_in_local_array(const TileOrder& o, const Distribution& d, int rank,
                                const partition::TileBox& b, bool is_a);

}  // namespace cuboid::layout
