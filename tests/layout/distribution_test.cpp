// Distributions of stored transposed operands: a transposed A is the k x m matrix it is stored
// as, laid out as that matrix (as ScaLAPACK's descriptor of it says), in both layouts.
#include <gtest/gtest.h>

#include <set>
#include <utility>
#include <vector>

#include "layout/distribution.hpp"

namespace cuboid::layout {
namespace {

using partition::TileBox;
using partition::TileZone;

constexpr std::pair<bool, bool> kTransposes[] = {
    {false, false}, {true, false}, {false, true}, {true, true}};

TEST(Distribution, BlockCyclicLaysOutTheStoredMatrices) {
  const std::int64_t m = 67, n = 45, k = 53, block = 12;
  const ProcessGrid g{2, 3};
  for (const auto& [ta, tb] : kTransposes) {
    const Distribution d = block_cyclic_distribution(m, n, k, block, g, ta, tb);
    EXPECT_EQ(d.a_transposed, ta);
    EXPECT_EQ(d.b_transposed, tb);
    EXPECT_EQ(d.depth(), k);
    // Stored extents, and each one's local arrays as ScaLAPACK's NUMROC gives them.
    const std::int64_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
    EXPECT_EQ(d.a.rows(), ar);
    EXPECT_EQ(d.a.cols(), ac);
    EXPECT_EQ(d.b.rows(), br);
    EXPECT_EQ(d.b.cols(), bc);
    for (int r = 0; r < g.size(); ++r) {
      EXPECT_EQ(d.a.local_size(r), numroc(ar, block, g.row_of(r), 0, g.rows) *
                                       numroc(ac, block, g.col_of(r), 0, g.cols));
      EXPECT_EQ(d.b.local_size(r), numroc(br, block, g.row_of(r), 0, g.rows) *
                                       numroc(bc, block, g.col_of(r), 0, g.cols));
    }
    // A rectangle of op(A) lies transposed in a transposed A, and its owner is the stored one's.
    const exec::Rect op{3, 20, 5, 31};
    const exec::Rect st = d.stored_a(op);
    EXPECT_EQ(st.rows(), ta ? op.cols() : op.rows());
    for (std::int64_t i = op.i0; i < op.i1; ++i)
      for (std::int64_t l = op.j0; l < op.j1; ++l)
        EXPECT_EQ(
            d.a.owner(ta ? l : i, ta ? i : l),
            g.rank_of(int(((ta ? l : i) / block) % g.rows), int(((ta ? i : l) / block) % g.cols)));
    // Pieces of the stored rectangle cover it once, each with its owner.
    std::int64_t covered = 0;
    d.a.for_each_piece(st, [&](const exec::Rect& q, int owner) {
      covered += q.rows() * q.cols();
      EXPECT_EQ(owner, d.a.owner(q.i0, q.j0));
      EXPECT_EQ(owner, d.a.owner(q.i1 - 1, q.j1 - 1));
    });
    EXPECT_EQ(covered, op.rows() * op.cols());
  }
}

// A matrix whose first block lies on process (r, c): block (I, J) on ((I + r) mod P_r,
// (J + c) mod P_c), local arrays as NUMROC counts from there, and an element's local place the
// same as from (0, 0) (ScaLAPACK's INDXG2L does not depend on the source).
TEST(Distribution, FirstBlockOnAnyProcess) {
  const std::int64_t m = 67, n = 45, k = 53, block = 12;
  const ProcessGrid g{2, 3};
  const FirstProcesses first{{1, 2}, {0, 1}, {1, 0}};
  const Distribution d = block_cyclic_distribution(m, n, k, block, g, false, false, first);
  const std::pair<const MatrixDist*, FirstProcess> mats[] = {
      {&d.a, first.a}, {&d.b, first.b}, {&d.c, first.c}};
  for (const auto& [dist, f] : mats) {
    // A copy the lambda below may capture (capturing a structured binding is C++20).
    const MatrixDist* md = dist;
    const BlockCyclic& L = md->block_cyclic();
    EXPECT_TRUE(L.first() == f);
    std::vector<std::int64_t> owned(std::size_t(g.size()), 0);
    for (std::int64_t j = 0; j < md->cols(); ++j)
      for (std::int64_t i = 0; i < md->rows(); ++i) {
        const int o = md->owner(i, j);
        ASSERT_EQ(o,
                  g.rank_of(int((i / block + f.row) % g.rows), int((j / block + f.col) % g.cols)));
        ++owned[std::size_t(o)];
        // Back from the owner's local place to the element.
        ASSERT_EQ(L.global_row(L.local_row(i), g.row_of(o)), i);
        ASSERT_EQ(L.global_col(L.local_col(j), g.col_of(o)), j);
        ASSERT_LT(L.local_row(i), L.local_rows(o));
        ASSERT_LT(L.local_col(j), L.local_cols(o));
      }
    for (int r = 0; r < g.size(); ++r) {
      EXPECT_EQ(md->local_size(r), owned[std::size_t(r)]);
      EXPECT_EQ(L.local_rows(r), numroc(md->rows(), block, g.row_of(r), f.row, g.rows));
      std::int64_t units = 0;
      md->for_each_owned(r, [&](const exec::Rect& u) {
        units += u.rows() * u.cols();
        EXPECT_EQ(md->owner(u.i0, u.j0), r);
      });
      EXPECT_EQ(units, owned[std::size_t(r)]);
      const Descriptor desc = L.descriptor(r);
      EXPECT_EQ(desc[RSRC_], f.row);
      EXPECT_EQ(desc[CSRC_], f.col);
    }
  }
  EXPECT_NE(d.c.describe().find("first block on process (1, 0)"), std::string::npos);
  EXPECT_THROW(BlockCyclic(m, n, block, block, g, FirstProcess{2, 0}), std::invalid_argument);
  EXPECT_THROW(BlockCyclic(m, n, block, block, g, FirstProcess{0, -1}), std::invalid_argument);
}

// Aligned: every stored tile of A and B is owned by a rank whose zone uses the op tile above it,
// and the ranks' storage holds each element once.
TEST(Distribution, AlignedPlacesStoredTilesWhereTheZonesUseThem) {
  const std::int64_t m = 67, n = 45, k = 53, t = 16;
  const TileOrder o = natural_order(m, n, k, t);
  // Three ranks: k split between ranks 0 and 1 over the first rows, rank 2 the remaining rows.
  const std::vector<TileZone> zones{{TileBox{{0, 0, 0}, {3, 3, 2}}},
                                    {TileBox{{0, 0, 2}, {3, 3, 4}}},
                                    {TileBox{{3, 0, 0}, {5, 3, 4}}}};
  auto users = [&](std::int64_t x, std::int64_t y, int ax, int ay) {
    std::set<int> u;
    for (int r = 0; r < 3; ++r)
      for (const auto& b : zones[std::size_t(r)])
        if (b.lo[ax] <= x && x < b.hi[ax] && b.lo[ay] <= y && y < b.hi[ay]) u.insert(r);
    return u;
  };
  for (const auto& [ta, tb] : kTransposes) {
    const Distribution d = aligned_distribution(zones, o, m, n, k, t, ta, tb);
    EXPECT_EQ(d.a.rows(), ta ? k : m);
    EXPECT_EQ(d.b.rows(), tb ? n : k);
    for (std::int64_t x = 0; x < o.i.size(); ++x)
      for (std::int64_t l = 0; l < o.k.size(); ++l) {
        const int owner = ta ? d.a.owner(l * t, x * t) : d.a.owner(x * t, l * t);
        EXPECT_TRUE(users(x, l, 0, 2).count(owner)) << "A tile " << x << "," << l;
      }
    for (std::int64_t l = 0; l < o.k.size(); ++l)
      for (std::int64_t y = 0; y < o.j.size(); ++y) {
        const int owner = tb ? d.b.owner(y * t, l * t) : d.b.owner(l * t, y * t);
        EXPECT_TRUE(users(y, l, 1, 2).count(owner)) << "B tile " << l << "," << y;
      }
    std::int64_t a = 0, b = 0;
    for (int r = 0; r < 3; ++r) a += d.a.local_size(r), b += d.b.local_size(r);
    EXPECT_EQ(a, m * k);
    EXPECT_EQ(b, k * n);
  }
}

// A rank whose zone is one box it alone uses keeps C as that box's panel: every element's offset
// and leading dimension are those of a column-major array of the box, in the order's positions.
TEST(Distribution, AlignedCOfALoneBoxIsOnePanel) {
  const std::int64_t m = 70, n = 50, k = 40, t = 16;  // edge tiles of 6 and 2 elements
  // Rows grouped so that the box's positions are tiles 4, 0, 2 (not in the original order).
  const std::int64_t key_i[] = {1, 2, 1, 2, 0};
  const TileOrder o{grouped_order(m, t, [&](std::int64_t x) { return key_i[x]; }),
                    identity_order(n, t), identity_order(k, t), "test"};
  // Rank 0: positions 0..3 of i, every j; rank 1 the last two positions of i; k is whole.
  const std::vector<TileZone> zones{{TileBox{{0, 0, 0}, {3, 4, 3}}},
                                    {TileBox{{3, 0, 0}, {5, 4, 3}}}};
  const Distribution d = aligned_distribution(zones, o, m, n, k, t);
  for (int r = 0; r < 2; ++r) {
    const auto& b = zones[std::size_t(r)][0];
    const std::int64_t rows = o.i.first[std::size_t(b.hi[0])] - o.i.first[std::size_t(b.lo[0])];
    EXPECT_EQ(d.c.panel_rows(r), rows);
    EXPECT_EQ(d.c.local_size(r), rows * n);
    for (std::int64_t x = b.lo[0]; x < b.hi[0]; ++x)
      for (std::int64_t gi = o.i.lo(x); gi < o.i.hi(x); ++gi)
        for (std::int64_t gj = 0; gj < n; gj += 7) {
          const std::int64_t pi =
              o.i.first[std::size_t(x)] - o.i.first[std::size_t(b.lo[0])] + (gi - o.i.lo(x));
          EXPECT_EQ(d.c.owner(gi, gj), r);
          EXPECT_EQ(d.c.offset(gi, gj), pi + gj * rows) << gi << "," << gj;
          EXPECT_EQ(d.c.ld(gi, gj), rows);
        }
  }
  // Split along k, the two ranks share C's tiles: neither keeps a panel.
  const std::vector<TileZone> split{{TileBox{{0, 0, 0}, {5, 4, 1}}},
                                    {TileBox{{0, 0, 1}, {5, 4, 3}}}};
  const Distribution s = aligned_distribution(split, o, m, n, k, t);
  EXPECT_EQ(s.c.panel_rows(0), 0);
  EXPECT_EQ(s.c.panel_rows(1), 0);
}

}  // namespace
}  // namespace cuboid::layout
