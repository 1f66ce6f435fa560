// The MPI layer's MPI-free half: block-cyclic layout, two-level partition, traffic model.
// Every figure is checked against a brute-force count written here, element by element.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "../partition/checks.hpp"
#include "layout/layout.hpp"
#include "layout/model.hpp"
#include "layout/rank_partition.hpp"
#include "layout/rank_zones.hpp"

namespace cuboid::layout {
namespace {

using partition::TileBox;
using partition::TileExtent;
using partition::TileZone;

TEST(Layout, NearSquareGrid) {
  EXPECT_EQ(near_square_grid(1).rows, 1);
  EXPECT_EQ(near_square_grid(4).rows, 2);
  EXPECT_EQ(near_square_grid(4).cols, 2);
  EXPECT_EQ(near_square_grid(3).rows, 1);  // a prime factors badly: 1 x p
  EXPECT_EQ(near_square_grid(3).cols, 3);
  EXPECT_EQ(near_square_grid(12).rows, 3);
  EXPECT_EQ(near_square_grid(12).cols, 4);
  EXPECT_EQ(near_square_grid(100000).size(), 100000);
  EXPECT_THROW(near_square_grid(0), std::invalid_argument);
}

TEST(Layout, NumrocCountsOwnedIndices) {
  for (std::int64_t n : {1, 7, 64, 100, 129})
    for (std::int64_t nb : {1, 3, 16, 64})
      for (int P : {1, 2, 3, 5}) {
        std::int64_t sum = 0;
        for (int p = 0; p < P; ++p) {
          std::int64_t brute = 0;
          for (std::int64_t g = 0; g < n; ++g) brute += (g / nb) % P == p;
          EXPECT_EQ(numroc(n, nb, p, 0, P), brute) << n << " " << nb << " " << p << "/" << P;
          sum += numroc(n, nb, p, 0, P);
          // Any sub-range, against the same brute force.
          for (std::int64_t lo = 0; lo < n; lo += 5)
            for (std::int64_t hi = lo; hi <= n; hi += 7) {
              std::int64_t b = 0;
              for (std::int64_t g = lo; g < hi; ++g) b += (g / nb) % P == p;
              ASSERT_EQ(owned_in_range(lo, hi, nb, p, P), b);
            }
        }
        EXPECT_EQ(sum, n);
      }
}

TEST(Layout, LocalAndGlobalIndicesRoundTrip) {
  const BlockCyclic L(37, 23, 5, 4, ProcessGrid{2, 3});
  std::map<int, std::set<std::pair<std::int64_t, std::int64_t>>> seen;
  for (std::int64_t i = 0; i < 37; ++i)
    for (std::int64_t j = 0; j < 23; ++j) {
      const int o = L.owner(i, j);
      const std::int64_t li = L.local_row(i), lj = L.local_col(j);
      ASSERT_LT(li, L.local_rows(o));
      ASSERT_LT(lj, L.local_cols(o));
      EXPECT_EQ(L.global_row(li, L.grid().row_of(o)), i);
      EXPECT_EQ(L.global_col(lj, L.grid().col_of(o)), j);
      EXPECT_TRUE(seen[o].insert({li, lj}).second) << "two elements share a local slot";
    }
  for (int r = 0; r < 6; ++r)
    EXPECT_EQ(std::int64_t(seen[r].size()), L.local_rows(r) * L.local_cols(r));
  const Descriptor d = L.descriptor(4);  // process (1, 1)
  EXPECT_EQ(d[DTYPE_], 1);
  EXPECT_EQ(d[M_], 37);
  EXPECT_EQ(d[N_], 23);
  EXPECT_EQ(d[MB_], 5);
  EXPECT_EQ(d[NB_], 4);
  EXPECT_EQ(d[RSRC_], 0);
  EXPECT_EQ(d[LLD_], L.local_rows(4));
}

TEST(Layout, PiecesCoverARectangleOnceWithTheRightOwner) {
  const BlockCyclic L(50, 40, 6, 7, ProcessGrid{3, 2});
  const exec::Rect r{5, 31, 3, 38};
  std::vector<int> hits(std::size_t(r.rows() * r.cols()), 0);
  std::map<int, std::int64_t> per_owner;
  L.for_each_piece(r, [&](const exec::Rect& p, int o) {
    for (std::int64_t i = p.i0; i < p.i1; ++i)
      for (std::int64_t j = p.j0; j < p.j1; ++j) {
        ASSERT_EQ(L.owner(i, j), o);
        ++hits[std::size_t((i - r.i0) + r.rows() * (j - r.j0))];
      }
    per_owner[o] += p.rows() * p.cols();
  });
  for (int h : hits) ASSERT_EQ(h, 1);
  for (int o = 0; o < 6; ++o) EXPECT_EQ(per_owner[o], L.owned_elements(r, o));
}

TEST(Strategy, ZeroSpeedRanksGetNothingAndTheRestTile) {
  const TileExtent e{6, 5, 4};
  for (auto a :
       {partition::Algorithm::nrrp3d, partition::Algorithm::grid, partition::Algorithm::nrrp2d,
        partition::Algorithm::column, partition::Algorithm::slab}) {
    const auto zones = partition_ranks(a, partition::Discretization::precise, {1, 0, 2, 1}, e);
    ASSERT_EQ(zones.size(), 4u);
    EXPECT_TRUE(zones[1].empty()) << partition::to_string(a);
    std::vector<TileZone> working{zones[0], zones[2], zones[3]};
    EXPECT_TRUE(partition::testing::tiles_exactly(working, e)) << partition::to_string(a);
  }
  EXPECT_THROW(
      partition_ranks(partition::Algorithm::nrrp3d, partition::Discretization::precise, {0, 0}, e),
      std::invalid_argument);
  EXPECT_THROW(
      partition_ranks(partition::Algorithm::nrrp3d, partition::Discretization::precise, {1, -1}, e),
      std::invalid_argument);
}

TEST(Strategy, PiecesAreKSlabsThatTileEachBox) {
  const TileZone zone{TileBox{{0, 0, 0}, {2, 3, 7}}, TileBox{{2, 0, 0}, {4, 3, 2}}};
  const auto pieces = pieces_of(zone, 4);
  ASSERT_EQ(pieces.size(), 6u);  // 4 slabs of the first box, 2 of the second (depth 2)
  // The slabs of the first box (which starts at the origin) tile it exactly.
  std::vector<TileZone> first_box;
  for (const auto& p : pieces)
    if (p.box_index == 0) first_box.push_back({p.box});
  EXPECT_TRUE(partition::testing::tiles_exactly(first_box, TileExtent{2, 3, 7}));
  int firsts = 0;
  std::int64_t depth = 0;
  for (const auto& p : pieces) {
    firsts += p.first_of_box;
    if (p.box_index == 0) depth += p.box.extent(2);
    EXPECT_EQ(p.box.lo[0], zone[std::size_t(p.box_index)].lo[0]);
  }
  EXPECT_EQ(firsts, 2);
  EXPECT_EQ(depth, 7);
  EXPECT_TRUE(pieces.front().first_of_box);
}

// Brute force: for every element each rank's zone needs (zones in positions of `o`), is it
// owned? Counted per category, element by element.
std::vector<RankTraffic> brute_traffic(const std::vector<TileZone>& zones, const TileOrder& o,
                                       const Distribution& d) {
  std::vector<RankTraffic> out(zones.size());
  for (std::size_t r = 0; r < zones.size(); ++r) {
    std::set<std::pair<std::int64_t, std::int64_t>> a, b, c;  // original tiles
    for (const auto& box : zones[r])
      for (std::int64_t i = box.lo[0]; i < box.hi[0]; ++i)
        for (std::int64_t j = box.lo[1]; j < box.hi[1]; ++j)
          for (std::int64_t l = box.lo[2]; l < box.hi[2]; ++l) {
            const auto ti = o.i.tiles[std::size_t(i)], tj = o.j.tiles[std::size_t(j)],
                       tl = o.k.tiles[std::size_t(l)];
            // Stored tiles: a transposed A's tile under op(A)'s (ti, tl) is (tl, ti).
            a.insert(d.a_transposed ? std::pair{tl, ti} : std::pair{ti, tl});
            b.insert(d.b_transposed ? std::pair{tj, tl} : std::pair{tl, tj});
            c.insert({ti, tj});
          }
    auto count = [&](const std::set<std::pair<std::int64_t, std::int64_t>>& tiles,
                     const MatrixDist& lay, std::int64_t t, double& in, double& foot,
                     double RankTraffic::*owner_side) {
      for (const auto& [x, y] : tiles)
        for (std::int64_t i = x * t; i < std::min((x + 1) * t, lay.rows()); ++i)
          for (std::int64_t j = y * t; j < std::min((y + 1) * t, lay.cols()); ++j) {
            foot += 1;
            const int ow = lay.owner(i, j);
            if (ow != int(r)) in += 1, out[std::size_t(ow)].*owner_side += 1;
          }
    };
    count(a, d.a, o.i.tile, out[r].a_in, out[r].a_foot, &RankTraffic::a_out);
    count(b, d.b, o.i.tile, out[r].b_in, out[r].b_foot, &RankTraffic::b_out);
    count(c, d.c, o.i.tile, out[r].c_out, out[r].c_foot, &RankTraffic::c_in);
    // Each box's C block, element by element (boxes stacked along k each count).
    for (const auto& box : zones[r])
      for (std::int64_t i = box.lo[0]; i < box.hi[0]; ++i)
        for (std::int64_t j = box.lo[1]; j < box.hi[1]; ++j)
          out[r].c_boxes += double(o.i.hi(i) - o.i.lo(i)) * double(o.j.hi(j) - o.j.lo(j));
  }
  return out;
}

void expect_same_traffic(const std::vector<RankTraffic>& model,
                         const std::vector<RankTraffic>& brute, const std::string& what) {
  ASSERT_EQ(model.size(), brute.size());
  for (std::size_t r = 0; r < model.size(); ++r) {
    const auto &x = model[r], &y = brute[r];
    EXPECT_EQ(x.a_in, y.a_in) << what << " rank " << r;
    EXPECT_EQ(x.b_in, y.b_in) << what << " rank " << r;
    EXPECT_EQ(x.c_out, y.c_out) << what << " rank " << r;
    EXPECT_EQ(x.a_out, y.a_out) << what << " rank " << r;
    EXPECT_EQ(x.b_out, y.b_out) << what << " rank " << r;
    EXPECT_EQ(x.c_in, y.c_in) << what << " rank " << r;
    EXPECT_EQ(x.footprint(), y.footprint()) << what << " rank " << r;
    EXPECT_EQ(x.c_boxes, y.c_boxes) << what << " rank " << r;
  }
}

TEST(Model, TrafficMatchesBruteForce) {
  for (auto [m, n, k, t, block, P] :
       std::vector<std::tuple<int, int, int, int, int, int>>{{64, 64, 64, 16, 16, 4},
                                                             {50, 37, 61, 8, 8, 3},
                                                             {50, 37, 61, 8, 5, 6},
                                                             {40, 40, 9, 4, 7, 5}}) {
    std::vector<double> speeds(std::size_t(P), 1.0);
    speeds[0] = 2.5;
    if (P > 3) speeds[2] = 0;  // a rank with no work still owns blocks
    const ProcessGrid g = near_square_grid(P);
    // The natural order and an order grouped by owners (as the rank partition uses).
    const TileOrder natural = natural_order(m, n, k, t);
    TileOrder grouped = natural;
    // Lambdas capture copies: capturing structured bindings is C++20 (Clang/hipcc rejects it).
    const std::int64_t tile = t, blk = block;
    grouped.i = grouped_order(m, t, [&](std::int64_t x) { return (x * tile / blk) % g.rows; });
    grouped.j = grouped_order(n, t, [&](std::int64_t x) { return (x * tile / blk) % g.cols; });
    grouped.k = grouped_order(k, t, [&](std::int64_t x) { return (x * tile / blk) % g.cols; });
    const TileExtent e{natural.i.size(), natural.j.size(), natural.k.size()};
    for (auto a :
         {partition::Algorithm::nrrp3d, partition::Algorithm::grid, partition::Algorithm::column}) {
      const auto zones = partition_ranks(a, partition::Discretization::precise, speeds, e);
      // A and B stored as given or transposed (k x m, n x k): counted on the stored matrices.
      for (const auto& [ta, tb] :
           {std::pair{false, false}, {true, false}, {false, true}, {true, true}}) {
        const std::string ops = std::string(ta ? " A^T" : "") + (tb ? " B^T" : "");
        const auto bc = block_cyclic_distribution(m, n, k, block, g, ta, tb);
        // And with each matrix's first block on another process, as sub-matrices have them.
        const auto apart =
            block_cyclic_distribution(m, n, k, block, g, ta, tb,
                                      {{g.rows - 1, 0}, {0, g.cols - 1}, {g.rows - 1, g.cols - 1}});
        EXPECT_EQ(bc.a.rows(), ta ? k : m);
        EXPECT_EQ(bc.b.cols(), tb ? k : n);
        for (const TileOrder* o : std::vector<const TileOrder*>{&natural, &grouped}) {
          expect_same_traffic(
              model_traffic(zones, *o, bc), brute_traffic(zones, *o, bc),
              std::string(partition::to_string(a)) + " block-cyclic " + o->name + ops);
          expect_same_traffic(
              model_traffic(zones, *o, apart), brute_traffic(zones, *o, apart),
              std::string(partition::to_string(a)) + " block-cyclic apart " + o->name + ops);
          const auto al = aligned_distribution(zones, *o, m, n, k, t, ta, tb);
          expect_same_traffic(model_traffic(zones, *o, al), brute_traffic(zones, *o, al),
                              std::string(partition::to_string(a)) + " aligned " + o->name + ops);
        }
      }
    }
  }
}

TEST(Distribution, AlignedOwnersUseTheirTilesAndShareThemEvenly) {
  // Two ranks splitting k: every A and B tile has one user, every C tile two.
  const std::vector<TileZone> zones{{TileBox{{0, 0, 0}, {4, 4, 2}}},
                                    {TileBox{{0, 0, 2}, {4, 4, 4}}}};
  const auto o = natural_order(32, 32, 32, 8);
  const auto d = aligned_distribution(zones, o, 32, 32, 32, 8);
  for (std::int64_t i = 0; i < 32; i += 8)
    for (std::int64_t l = 0; l < 32; l += 8) EXPECT_EQ(d.a.owner(i, l), l < 16 ? 0 : 1);
  EXPECT_EQ(d.c.local_size(0), d.c.local_size(1));
  EXPECT_EQ(d.c.local_size(0) + d.c.local_size(1), 32 * 32);
  // Storage offsets of one rank's tiles never overlap and fill its storage.
  std::set<std::int64_t> seen;
  d.c.for_each_owned(0, [&](const exec::Rect& u) {
    for (std::int64_t j = u.j0; j < u.j1; ++j)
      for (std::int64_t i = u.i0; i < u.i1; ++i) EXPECT_TRUE(seen.insert(d.c.offset(i, j)).second);
  });
  EXPECT_EQ(std::int64_t(seen.size()), d.c.local_size(0));
  EXPECT_EQ(*seen.rbegin(), d.c.local_size(0) - 1);
}

TEST(Distribution, WholeLocalAxisMeansTheLocalArrayInOrder) {
  // 10 tiles of 4, blocks of 8 (two tiles), 2 process rows: grouped by owner, process row 0
  // holds positions [0, 6) (tiles 0,1,4,5,8,9), row 1 the rest.
  const auto a = grouped_order(40, 4, [](std::int64_t x) { return (x * 4 / 8) % 2; });
  EXPECT_TRUE(is_whole_local_axis(a, 0, 6, 8, 0, 2));
  EXPECT_TRUE(is_whole_local_axis(a, 6, 10, 8, 1, 2));
  EXPECT_FALSE(is_whole_local_axis(a, 0, 5, 8, 0, 2));  // not all of it
  EXPECT_FALSE(is_whole_local_axis(a, 0, 6, 8, 1, 2));  // not its own
  EXPECT_FALSE(is_whole_local_axis(identity_order(40, 4), 0, 10, 8, 0, 2));
  EXPECT_TRUE(is_whole_local_axis(identity_order(40, 4), 0, 10, 8, 0, 1));
}

TEST(RankPartition, WeightedCutsFollowTheWeights) {
  EXPECT_EQ(weighted_cuts(10, {1, 1}), (std::vector<std::int64_t>{0, 5, 10}));
  EXPECT_EQ(weighted_cuts(10, {1, 0, 1}), (std::vector<std::int64_t>{0, 5, 5, 10}));
  EXPECT_EQ(weighted_cuts(9, {1, 2}), (std::vector<std::int64_t>{0, 3, 9}));
}

// pdgemm's per-rank receive, counted element by element: rank (p, q) computes the C it owns,
// so it needs A's rows of process row p and B's columns of process column q, all of k.
double pdgemm_received_max(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t block,
                           const ProcessGrid& g) {
  const auto d = block_cyclic_distribution(m, n, k, block, g);
  double worst = 0;
  for (int r = 0; r < g.size(); ++r) {
    double got = 0;
    for (std::int64_t i = 0; i < m; ++i)
      if ((i / block) % g.rows == g.row_of(r))
        for (std::int64_t l = 0; l < k; ++l) got += d.a.owner(i, l) != r;
    for (std::int64_t j = 0; j < n; ++j)
      if ((j / block) % g.cols == g.col_of(r))
        for (std::int64_t l = 0; l < k; ++l) got += d.b.owner(l, j) != r;
    worst = std::max(worst, got);
  }
  return worst;
}

// With tiles that divide evenly among the grid (else balance, which pdgemm lacks too, may
// rightly cost bytes), "auto" never receives more than pdgemm on the same layout.
TEST(RankPartition, AutoNeverReceivesMoreThanPdgemm) {
  for (auto [m, n, k, P] : std::vector<std::tuple<int, int, int, int>>{{1024, 1024, 1024, 2},
                                                                       {1024, 1024, 1024, 4},
                                                                       {768, 768, 768, 6},
                                                                       {256, 256, 8192, 4},
                                                                       {256, 256, 8192, 8},
                                                                       {2048, 2048, 128, 8}}) {
    RankPartitionRequest req;
    req.m = m, req.n = n, req.k = k, req.tile = 64, req.block = 64;
    req.speeds.assign(std::size_t(P), 100.0);
    req.grid = near_square_grid(P);
    const auto rp = choose_rank_partition(req);
    EXPECT_LE(summarize(rp.traffic, m, n, k).received_max,
              pdgemm_received_max(m, n, k, 64, req.grid))
        << m << "x" << n << "x" << k << " P=" << P << " chose " << rp.name;
    EXPECT_GE(rp.candidates.size(), 6u);
    EXPECT_TRUE(partition::testing::tiles_exactly(
        rp.zones, TileExtent{rp.order.i.size(), rp.order.j.size(), rp.order.k.size()}));
  }
}

TEST(RankPartition, OneRankMovesNothingAndIdleRanksGetNothing) {
  RankPartitionRequest req;
  req.m = 300, req.n = 200, req.k = 100, req.tile = 32, req.block = 32;
  req.speeds = {50};
  req.grid = {1, 1};
  for (bool aligned : {false, true}) {
    req.aligned = aligned;
    const auto one = choose_rank_partition(req);
    EXPECT_EQ(one.traffic[0].received(), 0) << aligned;
  }
  req.speeds = {50, 0, 50, 50};
  req.grid = {2, 2};
  for (bool aligned : {false, true}) {
    req.aligned = aligned;
    const auto rp = choose_rank_partition(req);
    EXPECT_TRUE(rp.zones[1].empty()) << aligned << " " << rp.name;
    EXPECT_EQ(rp.traffic[1].flops, 0) << aligned;
  }
  req.speeds = {0, 0, 0, 0};
  EXPECT_THROW(choose_rank_partition(req), std::invalid_argument);
}

// The aligned start reaches COSMA's own-layout figures on the square, largeK and flat shapes of
// docs/scaling.md, scaled down: square (m n k / P)^(2/3)-like grids, largeK splits k (only C is
// reduced), flat splits i, j.
TEST(RankPartition, AlignedLayoutMovesWhatCosmaMoves) {
  struct Case {
    int m, n, k, P;
    double expected;  // elements, the most any rank receives
  };
  for (const Case& c : std::vector<Case>{
           {512, 512, 512, 8, 3.0 * 256 * 256 / 2},   // 2x2x2: half of A, B and C blocks
           {128, 128, 4096, 4, 3.0 * 128 * 128 / 4},  // 1x1x4: three partials of a quarter
           {1024, 1024, 64, 2, 64.0 * 1024 / 2}}) {   // 2x1x1: half of B
    RankPartitionRequest req;
    req.m = c.m, req.n = c.n, req.k = c.k, req.tile = 32;
    req.speeds.assign(std::size_t(c.P), 100.0);
    req.aligned = true;
    const auto rp = choose_rank_partition(req);
    EXPECT_EQ(summarize(rp.traffic, c.m, c.n, c.k).received_max, c.expected) << rp.name;
  }
}

TEST(Model, Bounds) {
  // S infinite: 3 (mnk/p)^(2/3); a memory-limited S can only raise the bound.
  EXPECT_NEAR(cosma_bound_elements(1000, 1000, 1000, 8), 3 * std::pow(1e9 / 8, 2.0 / 3), 1e-6);
  EXPECT_GT(cosma_bound_elements(1000, 1000, 1000, 8, 1e4),
            cosma_bound_elements(1000, 1000, 1000, 8));
  EXPECT_NEAR(cosma_bound_elements(1000, 1000, 1000, 8, 1e4), 2e9 / 8 / 100 + 1e4, 1e-6);
  // The shape-aware bound equals it for a cube and exceeds it for a flat product at few ranks.
  EXPECT_NEAR(shape_bound_elements(1000, 1000, 1000, 8), cosma_bound_elements(1000, 1000, 1000, 8),
              1e-3);
  EXPECT_GT(shape_bound_elements(4096, 4096, 64, 2), 1.1 * cosma_bound_elements(4096, 4096, 64, 2));
}

// What a rank must move when it starts with its share: W(S) - (mn + mk + nk)/p, W continuous
// where its two branches meet, never below 0; every modelled partition moves at least that.
TEST(Model, MovedBound) {
  const double own = 3e6 / 8;  // (mn + mk + nk)/p for 1000^3 at p = 8
  EXPECT_NEAR(moved_bound_elements(1000, 1000, 1000, 8), 3 * std::pow(1e9 / 8, 2.0 / 3) - own,
              1e-6);
  EXPECT_NEAR(moved_bound_elements(1000, 1000, 1000, 8, 1e4), 2e9 / 8 / 100 + 1e4 - own, 1e-6);
  const double knee = std::pow(1e9 / 8, 2.0 / 3);
  EXPECT_NEAR(moved_bound_elements(1000, 1000, 1000, 8, knee * (1 - 1e-12)),
              moved_bound_elements(1000, 1000, 1000, 8, knee), 1e-3);
  EXPECT_EQ(moved_bound_elements(4096, 4096, 64, 2), 0.0);  // the cube does not fit
  for (int P : {2, 3, 4, 8, 16}) {
    RankPartitionRequest req;
    req.m = 512, req.n = 384, req.k = 640, req.tile = 32;
    req.speeds.assign(std::size_t(P), 1.0);
    req.grid = near_square_grid(P), req.block = 32;
    const auto rp = choose_rank_partition(req);
    const auto sum = summarize(rp.traffic, req.m, req.n, req.k);
    EXPECT_GE(sum.moved_max, sum.moved_bound) << "P = " << P << ", " << rp.name;
    EXPECT_GE(sum.moved_max, sum.moved_shape_bound) << "P = " << P << ", " << rp.name;
    EXPECT_GT(sum.moved_bound, 0) << "P = " << P;
  }
}

TEST(Model, EqualRanksOnACubeStayWithinTheNrrpGuarantee) {
  for (int P : {2, 4, 8, 27}) {
    const TileExtent e{12, 12, 12};
    const auto zones =
        partition_ranks(partition::Algorithm::nrrp3d, partition::Discretization::precise,
                        std::vector<double>(std::size_t(P), 1.0), e);
    const auto L = block_cyclic_distribution(1200, 1200, 1200, 100, near_square_grid(P));
    const auto s =
        summarize(model_traffic(zones, natural_order(1200, 1200, 1200, 100), L), 1200, 1200, 1200);
    // 3D-NRRP: every zone's Hs within 5/6^(2/3) of 3 V^(2/3) (Theorem 2 of Beaumont et al.,
    // "Cuboid Partitioning for Parallel Matrix Multiplication on Heterogeneous Platforms"), plus
    // a little for rounding to tiles. What moves is at most what a zone touches (own blocks stay).
    EXPECT_GE(s.footprint_max / s.lower_bound, 1.0 - 1e-12) << P;
    EXPECT_LE(s.footprint_max / s.lower_bound, 5.0 / std::pow(6.0, 2.0 / 3.0) + 0.05) << P;
    EXPECT_LE(s.moved_max, s.footprint_max) << P;
  }
}

}  // namespace
}  // namespace cuboid::layout
