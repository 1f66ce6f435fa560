// Communication plans without MPI: every rank's plan of a few small problems, checked against
// the other ranks' plans (what one sends, the other receives) and against a brute-force reading
// of the zones and the distribution, element by element.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "layout/comm_plan.hpp"
#include "layout/model.hpp"
#include "layout/rank_partition.hpp"
#include "layout/rank_zones.hpp"

namespace cuboid::layout {
namespace {

using partition::Algorithm;
using partition::TileBox;
using partition::TileZone;

struct Problem {
  std::string name;
  TileOrder order;
  std::vector<TileZone> zones;
  Distribution dist;
};

// "A^T", "B^T" or both: which operands the problem stores transposed (conjugation moves nothing,
// so op 'C' lays out as 'T').
std::string ops_name(bool ta, bool tb) {
  return !ta && !tb ? "" : std::string(" op(A)=") + (ta ? "T" : "N") + " op(B)=" + (tb ? "T" : "N");
}

// The rank partition and start layout `cuboid run` would use.
Problem chosen(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t tile,
               std::int64_t block, std::vector<double> speeds, bool aligned, bool automatic,
               Algorithm a = Algorithm::nrrp3d, bool ta = false, bool tb = false,
               bool first_apart = false) {
  RankPartitionRequest req;
  req.m = m, req.n = n, req.k = k, req.tile = tile, req.block = block;
  req.a_transposed = ta, req.b_transposed = tb;
  req.grid = near_square_grid(int(speeds.size()));
  // As an update of a factorisation has them: A, B and C each with its first block elsewhere.
  const int lr = req.grid.rows - 1, lc = req.grid.cols - 1;
  if (first_apart) req.first = {{lr, 0}, {0, lc}, {lr, lc}};
  req.speeds = std::move(speeds);
  req.aligned = aligned, req.automatic = automatic, req.algorithm = a;
  RankPartition rp = choose_rank_partition(req);
  return {std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " " +
              (aligned ? "aligned " : "block-cyclic ") + rp.name +
              " P=" + std::to_string(req.speeds.size()) + ops_name(ta, tb) +
              (first_apart ? " first blocks apart" : ""),
          rp.order, rp.zones, rp.dist};
}

// Zones cut in the natural order over a block-cyclic layout: boxes rarely match what a rank
// owns, so tiles split into several owners' blocks.
Problem natural(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t tile,
                std::int64_t block, const std::vector<double>& speeds, Algorithm a, bool ta = false,
                bool tb = false) {
  const TileOrder o = natural_order(m, n, k, tile);
  const auto zones = partition_ranks(a, partition::Discretization::precise, speeds,
                                     {o.i.size(), o.j.size(), o.k.size()});
  const ProcessGrid g = near_square_grid(int(speeds.size()));
  return {std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " natural " +
              std::string(partition::to_string(a)) + " block " + std::to_string(block) +
              " P=" + std::to_string(speeds.size()) + ops_name(ta, tb),
          o, zones, block_cyclic_distribution(m, n, k, block, g, ta, tb)};
}

// Two ranks on a 1x2 grid, 4x4x4 tiles grouped by process column: rank 0's one box is exactly
// its local C, but rank 1 computes part of the same C tiles, so C cannot be written in place.
Problem shared_c() {
  const std::int64_t e = 32, t = 8;
  TileOrder o = natural_order(e, e, e, t);
  o.j = grouped_order(e, t, [](std::int64_t x) { return x % 2; });
  o.k = grouped_order(e, t, [](std::int64_t x) { return x % 2; });
  o.name = "grouped";
  const std::vector<TileZone> zones{{TileBox{{0, 0, 0}, {4, 2, 2}}},
                                    {TileBox{{0, 2, 0}, {4, 4, 4}}, TileBox{{0, 0, 2}, {4, 2, 4}}}};
  return {"32^3 block-cyclic hand-made k split over rank 0's C P=2", o, zones,
          block_cyclic_distribution(e, e, e, t, ProcessGrid{1, 2})};
}

const std::vector<Problem>& problems() {
  static const std::vector<Problem> all = [] {
    std::vector<Problem> p;
    p.push_back(chosen(64, 64, 64, 8, 8, {1, 1, 1, 1}, false, true));  // the process grid
    p.push_back(chosen(40, 48, 256, 8, 8, {1, 1}, false, true));       // largeK
    p.push_back(chosen(50, 37, 61, 8, 8, {2, 1, 1, 0.5, 1, 1}, false, true));
    p.push_back(chosen(72, 56, 40, 8, 8, {1, 3, 1, 2, 1, 1, 1, 1}, false, false));
    p.push_back(chosen(48, 40, 56, 8, 0, {1, 2, 1}, true, true));
    p.push_back(chosen(40, 40, 256, 8, 0, {1, 1, 1, 1}, true, true));  // splits k
    p.push_back(chosen(60, 52, 44, 8, 0, {1, 1, 2, 1, 1, 1, 1, 3}, true, false));
    p.push_back(natural(50, 37, 61, 8, 5, {2.5, 1, 0, 1, 1}, Algorithm::nrrp3d));  // an idle rank
    p.push_back(natural(40, 40, 9, 4, 7, {1, 1, 1}, Algorithm::grid));
    p.push_back(natural(36, 44, 52, 4, 6, {3, 1, 1, 2, 1, 1, 1}, Algorithm::nrrp2d));
    p.push_back(shared_c());
    // Transposed operands, stored k x m (n x k) and laid out as stored: every combination on
    // shapes that are not multiples of the tile or the block, both layouts, fixed and chosen
    // partitions (the chosen ones group axes by the stored owners).
    for (const auto& [ta, tb] : {std::pair{true, false}, {false, true}, {true, true}}) {
      p.push_back(chosen(67, 45, 53, 16, 16, {1, 1, 1, 1}, false, true, Algorithm::nrrp3d, ta, tb));
      p.push_back(
          chosen(50, 37, 61, 8, 8, {2, 1, 1, 0.5, 1, 1}, false, true, Algorithm::nrrp3d, ta, tb));
      p.push_back(chosen(40, 48, 256, 8, 8, {1, 1}, false, true, Algorithm::nrrp3d, ta, tb));
      p.push_back(
          chosen(72, 56, 40, 8, 8, {1, 3, 1, 2, 1, 1}, false, false, Algorithm::nrrp3d, ta, tb));
      p.push_back(chosen(67, 45, 53, 16, 0, {1, 2, 1}, true, true, Algorithm::nrrp3d, ta, tb));
      p.push_back(chosen(40, 40, 256, 8, 0, {1, 1, 1, 1}, true, true, Algorithm::nrrp3d, ta, tb));
      p.push_back(natural(50, 37, 61, 8, 5, {2.5, 1, 0, 1, 1}, Algorithm::nrrp3d, ta, tb));
    }
    // First blocks on other processes than (0, 0), every op: the chosen candidates group by
    // those owners, so boxes are still what a rank holds (and may be used in place).
    for (const auto& [ta, tb] :
         {std::pair{false, false}, {true, false}, {false, true}, {true, true}}) {
      p.push_back(
          chosen(64, 64, 64, 8, 8, {1, 1, 1, 1}, false, true, Algorithm::nrrp3d, ta, tb, true));
      p.push_back(chosen(50, 37, 61, 8, 8, {2, 1, 1, 0.5, 1, 1}, false, true, Algorithm::nrrp3d, ta,
                         tb, true));
      p.push_back(chosen(40, 48, 256, 8, 8, {1, 1}, false, true, Algorithm::nrrp3d, ta, tb, true));
    }
    return p;
  }();
  return all;
}

std::vector<CommPlan> plans_of(const Problem& p, int slabs) {
  std::vector<CommPlan> out;
  const int P = int(p.zones.size());
  for (int r = 0; r < P; ++r) out.push_back(make_comm_plan(r, P, p.zones, p.order, p.dist, slabs));
  return out;
}

// Calls f(problem, slabs, plans) for every problem at 1 to 3 slabs per box.
template <class F>
void for_each_case(F&& f) {
  for (const Problem& p : problems())
    for (int slabs : {1, 2, 3}) {
      SCOPED_TRACE(p.name + ", " + std::to_string(slabs) + " slabs per box");
      f(p, slabs, plans_of(p, slabs));
    }
}

using Shape = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>;
std::vector<Shape> shapes(const std::vector<CommPlan::Segment>& segs) {
  std::vector<Shape> out;
  for (const auto& s : segs) out.emplace_back(s.gi, s.gj, s.rows, s.cols);
  return out;
}

// The original element index of each element of a panel along one axis: positions [x0, x1).
std::vector<std::int64_t> panel_axis(const AxisOrder& axis, std::int64_t x0, std::int64_t x1) {
  std::vector<std::int64_t> out;
  for (std::int64_t x = x0; x < x1; ++x)
    for (std::int64_t g = axis.lo(x); g < axis.hi(x); ++g) out.push_back(g);
  return out;
}

// True when the panel whose elements are rows x cols is `rank`'s local array itself.
bool is_local_array(const MatrixDist& d, int rank, const std::vector<std::int64_t>& rows,
                    const std::vector<std::int64_t>& cols) {
  if (d.kind() != MatrixDist::Kind::block_cyclic) return false;
  const BlockCyclic& L = d.block_cyclic();
  if (std::int64_t(rows.size()) != L.local_rows(rank) ||
      std::int64_t(cols.size()) != L.local_cols(rank))
    return false;
  for (std::size_t v = 0; v < cols.size(); ++v)
    for (std::size_t u = 0; u < rows.size(); ++u)
      if (d.owner(rows[u], cols[v]) != rank ||
          d.offset(rows[u], cols[v]) != std::int64_t(u) + std::int64_t(v) * d.ld(rows[u], cols[v]))
        return false;
  return true;
}

// Where the panel whose elements are rows x cols lies in `rank`'s block-cyclic local array when
// it is a block of it (each element at the first one's local row and column plus its place in
// the panel); row -1 otherwise.
LocalBlock local_block(const MatrixDist& d, int rank, const std::vector<std::int64_t>& rows,
                       const std::vector<std::int64_t>& cols) {
  LocalBlock none;
  if (d.kind() != MatrixDist::Kind::block_cyclic || rows.empty() || cols.empty()) return none;
  if (d.owner(rows[0], cols[0]) != rank) return none;
  const std::int64_t ld = d.ld(rows[0], cols[0]), first = d.offset(rows[0], cols[0]);
  for (std::size_t v = 0; v < cols.size(); ++v)
    for (std::size_t u = 0; u < rows.size(); ++u)
      if (d.owner(rows[u], cols[v]) != rank || d.ld(rows[u], cols[v]) != ld ||
          d.offset(rows[u], cols[v]) != first + std::int64_t(u) + std::int64_t(v) * ld)
        return none;
  // A block must not run past the local array's last row into the next column.
  if (first % ld + std::int64_t(rows.size()) > ld) return none;
  return LocalBlock{first % ld, first / ld};
}

bool owns_all(const MatrixDist& d, int rank, const std::vector<std::int64_t>& rows,
              const std::vector<std::int64_t>& cols) {
  for (std::int64_t gj : cols)
    for (std::int64_t gi : rows)
      if (d.owner(gi, gj) != rank) return false;
  return true;
}

// The stored rows and columns of A under op(A)'s rows i and depth l, and of B under op(B)'s
// depth l and columns j.
using Axes = std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>>;
Axes stored_a(const Problem& p, const std::vector<std::int64_t>& i,
              const std::vector<std::int64_t>& l) {
  return p.dist.a_transposed ? Axes{l, i} : Axes{i, l};
}
Axes stored_b(const Problem& p, const std::vector<std::int64_t>& l,
              const std::vector<std::int64_t>& j) {
  return p.dist.b_transposed ? Axes{j, l} : Axes{l, j};
}

std::set<std::pair<std::int64_t, std::int64_t>> ij_cells(const TileZone& zone) {
  std::set<std::pair<std::int64_t, std::int64_t>> out;
  for (const auto& b : zone)
    for (std::int64_t x = b.lo[0]; x < b.hi[0]; ++x)
      for (std::int64_t y = b.lo[1]; y < b.hi[1]; ++y) out.insert({x, y});
  return out;
}

TEST(CommPlan, EverySendIsAReceiveOfTheSameParts) {
  for_each_case([](const Problem&, int, const std::vector<CommPlan>& plans) {
    const int P = int(plans.size());
    std::size_t sends = 0, receives = 0;
    for (int r = 0; r < P; ++r) {
      const auto& out = plans[std::size_t(r)].outgoing;
      EXPECT_TRUE(std::is_sorted(out.begin(), out.end(), [](const auto& x, const auto& y) {
        return x.tag < y.tag;
      })) << "earlier stages are sent first";
      std::set<std::pair<int, int>> seen;
      for (const auto& msg : plans[std::size_t(r)].outgoing) {
        ++sends;
        ASSERT_NE(msg.peer, r);
        ASSERT_TRUE(seen.insert({msg.peer, msg.tag}).second) << "two messages to one stage";
        ASSERT_GT(msg.elements(), 0);
        const CommPlan& dst = plans[std::size_t(msg.peer)];
        ASSERT_LT(std::size_t(msg.tag), dst.incoming.size());
        int found = 0;
        for (const auto& in : dst.incoming[std::size_t(msg.tag)])
          if (in.peer == r) {
            ++found;
            EXPECT_EQ(in.tag, msg.tag);
            EXPECT_EQ(in.a_elems, msg.a_elems);
            EXPECT_EQ(in.b_elems, msg.b_elems);
            // Packed and unpacked in the same order.
            EXPECT_EQ(shapes(in.a), shapes(msg.a));
            EXPECT_EQ(shapes(in.b), shapes(msg.b));
          }
        EXPECT_EQ(found, 1) << "rank " << r << " sends stage " << msg.tag << " to " << msg.peer;
      }
      for (const auto& stage : plans[std::size_t(r)].incoming) receives += stage.size();
      // Partial C: what r sends each owner is what that owner expects from r.
      const CommPlan& me = plans[std::size_t(r)];
      std::set<int> owners;
      for (const auto& msg : me.c_out) {
        EXPECT_EQ(msg.tag, CommPlan::c_tag);
        ASSERT_TRUE(owners.insert(msg.peer).second);
        if (msg.peer == r) continue;
        const auto& in = plans[std::size_t(msg.peer)].c_in[std::size_t(r)];
        EXPECT_EQ(in.elements(), msg.elements());
        EXPECT_EQ(shapes(in.a), shapes(msg.a));
      }
      EXPECT_EQ(owners.count(r) == 1, me.self_c >= 0);
      if (me.self_c >= 0) {
        EXPECT_EQ(me.c_out[std::size_t(me.self_c)].peer, r);
      }
      for (int s = 0; s < P; ++s) {
        const auto& out = plans[std::size_t(s)].c_out;
        const bool sends = std::any_of(out.begin(), out.end(),
                                       [&](const CommPlan::Message& m) { return m.peer == r; });
        if (s != r) {
          EXPECT_EQ(me.c_in[std::size_t(s)].elements() > 0, sends) << r << " from " << s;
        }
      }
    }
    EXPECT_EQ(sends, receives);
  });
}

TEST(CommPlan, EveryTileTaskIsInExactlyOneRanksPieces) {
  for_each_case([](const Problem& p, int slabs, const std::vector<CommPlan>& plans) {
    const std::int64_t I = p.order.i.size(), J = p.order.j.size(), K = p.order.k.size();
    std::vector<int> zone_of(std::size_t(I * J * K), -1), piece_of(zone_of.size(), -1);
    auto mark = [&](std::vector<int>& owner, const TileBox& b, int r) {
      for (std::int64_t x = b.lo[0]; x < b.hi[0]; ++x)
        for (std::int64_t y = b.lo[1]; y < b.hi[1]; ++y)
          for (std::int64_t z = b.lo[2]; z < b.hi[2]; ++z) {
            int& o = owner[std::size_t((x * J + y) * K + z)];
            EXPECT_EQ(o, -1) << "task (" << x << "," << y << "," << z << ") twice";
            o = r;
          }
    };
    for (std::size_t r = 0; r < plans.size(); ++r) {
      for (const auto& b : p.zones[r]) mark(zone_of, b, int(r));
      // A piece starts its C rows and columns (first_of_box) exactly when no earlier piece of its
      // box wrote any of them; a later one adds to C that earlier pieces started.
      std::map<int, std::set<std::pair<std::int64_t, std::int64_t>>> started;
      std::map<int, std::int64_t> per_box;
      for (const Piece& piece : plans[r].pieces) {
        mark(piece_of, piece.box, int(r));
        ++per_box[piece.box_index];
        auto& cells = started[piece.box_index];
        int before = 0, cells_of_piece = 0;
        for (std::int64_t x = piece.box.lo[0]; x < piece.box.hi[0]; ++x)
          for (std::int64_t y = piece.box.lo[1]; y < piece.box.hi[1]; ++y)
            ++cells_of_piece, before += cells.count({x, y}) > 0;
        EXPECT_EQ(before, piece.first_of_box ? 0 : cells_of_piece) << p.name << " rank " << r;
        for (std::int64_t x = piece.box.lo[0]; x < piece.box.hi[0]; ++x)
          for (std::int64_t y = piece.box.lo[1]; y < piece.box.hi[1]; ++y) cells.insert({x, y});
      }
      // Slabs no deeper than the box's in `slabs`, except for a box whose inputs the rank owns:
      // nothing to wait for, one GEMM.
      std::vector<TileBox> boxes;
      for (const auto& b : p.zones[r])
        if (!b.empty()) boxes.push_back(b);
      ASSERT_EQ(per_box.size(), boxes.size());
      for (const Piece& piece : plans[r].pieces) {
        const TileBox& b = boxes[std::size_t(piece.box_index)];
        const auto i = panel_axis(p.order.i, b.lo[0], b.hi[0]),
                   j = panel_axis(p.order.j, b.lo[1], b.hi[1]),
                   l = panel_axis(p.order.k, b.lo[2], b.hi[2]);
        const auto [ar, ac] = stored_a(p, i, l);
        const auto [br, bc] = stored_b(p, l, j);
        const bool owned = owns_all(p.dist.a, int(r), ar, ac) && owns_all(p.dist.b, int(r), br, bc);
        if (owned) {
          EXPECT_EQ(per_box[piece.box_index], 1);
          EXPECT_EQ(piece.box, b);
        } else {
          const std::int64_t depth = b.extent(2), most = std::min<std::int64_t>(slabs, depth);
          EXPECT_LE(piece.box.extent(2), (depth + most - 1) / most) << p.name << " rank " << r;
        }
      }
    }
    EXPECT_EQ(std::count(piece_of.begin(), piece_of.end(), -1), 0);
    EXPECT_EQ(piece_of, zone_of) << "a rank's pieces are not its zone";
  });
}

std::int64_t owned_count(const MatrixDist& d, int rank, const std::vector<std::int64_t>& rows,
                         const std::vector<std::int64_t>& cols) {
  std::int64_t n = 0;
  for (std::int64_t gj : cols)
    for (std::int64_t gi : rows) n += d.owner(gi, gj) == rank;
  return n;
}

// A box's slabs run those with more of their A and B elements on the rank first, k ascending
// among equals: with one thread per rank only the first slab's wait cannot be hidden.
TEST(CommPlan, SlabsWithMoreOfTheirInputsOnTheRankRunFirst) {
  int reordered = 0;
  for_each_case([&](const Problem& p, int, const std::vector<CommPlan>& plans) {
    for (std::size_t r = 0; r < plans.size(); ++r) {
      // Per box and part of it (its rows and columns): owned elements and k of each slab.
      using Part = std::tuple<int, std::int64_t, std::int64_t, std::int64_t, std::int64_t>;
      std::map<Part, std::vector<std::pair<std::int64_t, std::int64_t>>> per_box;
      for (const Piece& piece : plans[r].pieces) {
        const TileBox& b = piece.box;
        const auto i = panel_axis(p.order.i, b.lo[0], b.hi[0]),
                   j = panel_axis(p.order.j, b.lo[1], b.hi[1]),
                   l = panel_axis(p.order.k, b.lo[2], b.hi[2]);
        const auto [ar, ac] = stored_a(p, i, l);
        const auto [br, bc] = stored_b(p, l, j);
        per_box[{piece.box_index, b.lo[0], b.hi[0], b.lo[1], b.hi[1]}].push_back(
            {owned_count(p.dist.a, int(r), ar, ac) + owned_count(p.dist.b, int(r), br, bc),
             b.lo[2]});
      }
      for (const auto& [part, slabs] : per_box) {
        const int index = std::get<0>(part);
        for (std::size_t s = 1; s < slabs.size(); ++s) {
          EXPECT_GE(slabs[s - 1].first, slabs[s].first) << "rank " << r << " box " << index;
          if (slabs[s - 1].first == slabs[s].first) {
            EXPECT_LT(slabs[s - 1].second, slabs[s].second) << "rank " << r << " box " << index;
          }
          reordered += slabs[s - 1].second > slabs[s].second;
        }
      }
    }
  });
  // The process grid on 1 x 2 (C stays, A's k blocks split): rank 1's own blocks come after rank
  // 0's in k, and it starts with them.
  EXPECT_GT(reordered, 0) << "no case ran a later slab first: the order is not exercised";
  const Problem p = chosen(64, 64, 64, 8, 8, {1, 1}, false, true);
  const std::vector<CommPlan> plans = plans_of(p, 4);
  ASSERT_GT(plans[1].pieces.size(), 1u) << p.name;
  const TileBox& first = plans[1].pieces.front().box;
  const auto i = panel_axis(p.order.i, first.lo[0], first.hi[0]),
             j = panel_axis(p.order.j, first.lo[1], first.hi[1]),
             l = panel_axis(p.order.k, first.lo[2], first.hi[2]);
  EXPECT_TRUE(owns_all(p.dist.a, 1, i, l) && owns_all(p.dist.b, 1, l, j))
      << p.name << ": rank 1's first slab waits for another rank";
  EXPECT_TRUE(plans[1].incoming.front().empty()) << p.name << ": stage 0 receives";
}

// Where every k-slab of a box needs another rank's inputs, the part of the box whose inputs are
// all on the rank runs first. A-stationary on a 1 x 2 grid: each rank keeps its k blocks of A and
// needs the other's columns of B for every slab, but its own columns of C need nothing.
TEST(CommPlan, ThePartOfABoxWhoseInputsAreOnTheRankRunsFirst) {
  int cases = 0;
  for (const bool first_apart : {false, true}) {
    const Problem p = chosen(40, 48, 256, 8, 8, {1, 1}, false, true, Algorithm::nrrp3d, false,
                             false, first_apart);
    for (int slabs : {1, 2, 4}) {
      const std::vector<CommPlan> plans = plans_of(p, slabs);
      for (std::size_t r = 0; r < plans.size(); ++r) {
        const CommPlan& plan = plans[r];
        ASSERT_GT(plan.pieces.size(), 1u) << p.name;
        bool every_slab_waits = true;  // of the whole box cut into slabs
        for (const Piece& slab : pieces_of(p.zones[r], slabs)) {
          const auto i = panel_axis(p.order.i, slab.box.lo[0], slab.box.hi[0]),
                     j = panel_axis(p.order.j, slab.box.lo[1], slab.box.hi[1]),
                     l = panel_axis(p.order.k, slab.box.lo[2], slab.box.hi[2]);
          const auto [ar, ac] = stored_a(p, i, l);
          const auto [br, bc] = stored_b(p, l, j);
          every_slab_waits &=
              !(owns_all(p.dist.a, int(r), ar, ac) && owns_all(p.dist.b, int(r), br, bc));
        }
        ASSERT_TRUE(every_slab_waits) << p.name << ": not the case this test is about";
        // The first slabs read nothing from other ranks, and cover the rank's own C columns.
        const TileBox& first = plan.pieces.front().box;
        EXPECT_TRUE(plan.incoming.front().empty()) << p.name << " rank " << r;
        const auto j = panel_axis(p.order.j, first.lo[1], first.hi[1]);
        for (std::int64_t gj : j) EXPECT_EQ(p.dist.c.owner(0, gj), int(r)) << p.name;
        EXPECT_LT(first.extent(1), p.zones[r].front().extent(1));
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, 12);
}

// The ranges of the sender's local array a message part's data is read from, in the order it
// travels (for_each_run), adjacent ones joined: element offsets and lengths.
std::vector<std::pair<std::int64_t, std::int64_t>> sender_ranges(
    const std::vector<CommPlan::Segment>& segs, const MatrixDist& d) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  for_each_run(segs, [&](std::size_t first, std::size_t end) {
    for (std::int64_t c = 0; c < segs[first].cols; ++c)
      for (std::size_t q = first; q < end; ++q) {
        const auto& seg = segs[q];
        const std::int64_t at = d.offset(seg.gi, seg.gj) + c * d.ld(seg.gi, seg.gj);
        if (!out.empty() && out.back().first + out.back().second == at)
          out.back().second += seg.rows;
        else
          out.push_back({at, seg.rows});
      }
  });
  return out;
}

// Runs: every segment in exactly one, in order, each run's segments continuing each other down
// the same stored columns; sender and receiver cut each message the same way (their segment
// lists are equal: EverySendIsAReceiveOfTheSameParts); and on the process grid of a 1 x 2 grid,
// where a slab of A's k blocks spans every row of the sender's array, each message's A part is one
// range there (sent unpacked).
TEST(CommPlan, MessagePartsTravelInRunsThatTheSenderReadsAsFewRanges) {
  for_each_case([](const Problem& p, int, const std::vector<CommPlan>& plans) {
    for (const auto& plan : plans)
      for (const auto& msg : plan.outgoing)
        for (const auto* segs : {&msg.a, &msg.b}) {
          std::size_t next = 0;
          for_each_run(*segs, [&](std::size_t first, std::size_t end) {
            EXPECT_EQ(first, next);
            EXPECT_LT(first, end);
            for (std::size_t q = first + 1; q < end; ++q) {
              EXPECT_EQ((*segs)[q].gj, (*segs)[first].gj);
              EXPECT_EQ((*segs)[q].cols, (*segs)[first].cols);
              EXPECT_EQ((*segs)[q].gi, (*segs)[q - 1].gi + (*segs)[q - 1].rows);
            }
            next = end;
          });
          EXPECT_EQ(next, segs->size()) << p.name;
        }
  });
  const Problem p = chosen(64, 64, 64, 8, 8, {1, 1}, false, true);
  const std::vector<CommPlan> plans = plans_of(p, 4);
  int messages = 0;
  for (const auto& plan : plans)
    for (const auto& msg : plan.outgoing) {
      if (msg.a.empty()) continue;
      ++messages;
      const auto ranges = sender_ranges(msg.a, p.dist.a);
      EXPECT_EQ(ranges.size(), 1u) << p.name << ": rank " << plan.rank << " to " << msg.peer;
      std::int64_t elements = 0;
      for (const auto& r : ranges) elements += r.second;
      EXPECT_EQ(elements, msg.a_elems);
    }
  EXPECT_GT(messages, 0) << p.name << ": no A travels";
}

TEST(CommPlan, PanelsAreReadInPlaceWhereTheyAreBlocksOfTheLocalArrays) {
  int a_in = 0, b_in = 0, c_in = 0, at_in = 0, bt_in = 0, a_part = 0, b_part = 0;
  for_each_case([&](const Problem& p, int, const std::vector<CommPlan>& plans) {
    const TileOrder& o = p.order;
    for (std::size_t r = 0; r < plans.size(); ++r) {
      const CommPlan& plan = plans[r];
      const int rank = int(r);
      for (std::size_t s = 0; s < plan.pieces.size(); ++s) {
        const TileBox& b = plan.pieces[s].box;
        const auto i = panel_axis(o.i, b.lo[0], b.hi[0]), j = panel_axis(o.j, b.lo[1], b.hi[1]),
                   l = panel_axis(o.k, b.lo[2], b.hi[2]);
        const auto [ar, ac] = stored_a(p, i, l);
        const auto [br, bc] = stored_b(p, l, j);
        const LocalBlock a_at = local_block(p.dist.a, rank, ar, ac),
                         b_at = local_block(p.dist.b, rank, br, bc);
        EXPECT_EQ(plan.a_at[s].row, a_at.row) << p.name << " rank " << r << " piece " << s;
        EXPECT_EQ(plan.a_at[s].col, a_at.col) << p.name << " rank " << r << " piece " << s;
        EXPECT_EQ(plan.b_at[s].row, b_at.row) << p.name << " rank " << r << " piece " << s;
        EXPECT_EQ(plan.b_at[s].col, b_at.col) << p.name << " rank " << r << " piece " << s;
        const bool a_in_place = plan.a_at[s].in_place(), b_in_place = plan.b_at[s].in_place();
        a_in += a_in_place, b_in += b_in_place;
        a_part += a_in_place && !is_local_array(p.dist.a, rank, ar, ac);
        b_part += b_in_place && !is_local_array(p.dist.b, rank, br, bc);
        at_in += p.dist.a_transposed && a_in_place;
        bt_in += p.dist.b_transposed && b_in_place;
      }
      // C in place: one box, C is the local array, and no other zone shares a C tile with it.
      bool expected = plan.box_panels.size() == 1;
      if (expected) {
        const TileBox& b = *std::find_if(p.zones[r].begin(), p.zones[r].end(),
                                         [](const TileBox& x) { return !x.empty(); });
        expected = is_local_array(p.dist.c, rank, panel_axis(o.i, b.lo[0], b.hi[0]),
                                  panel_axis(o.j, b.lo[1], b.hi[1]));
        const auto mine = ij_cells(p.zones[r]);
        for (std::size_t d = 0; d < plans.size(); ++d)
          for (const auto& cell : ij_cells(p.zones[d]))
            if (d != r && mine.count(cell)) expected = false;
      }
      EXPECT_EQ(plan.c_in_place, expected) << "rank " << r;
      c_in += plan.c_in_place;
      if (plan.c_in_place) {
        EXPECT_TRUE(plan.c_out.empty());
        for (const auto& msg : plan.c_in) EXPECT_EQ(msg.elements(), 0);
      }
    }
  });
  // Not vacuous: some problems read and write in place.
  EXPECT_GT(a_in, 0);
  EXPECT_GT(b_in, 0);
  EXPECT_GT(c_in, 0);
  // Nor for transposed operands: a stored panel of A^T (B^T) can be the local array too.
  EXPECT_GT(at_in, 0);
  EXPECT_GT(bt_in, 0);
  // Nor only whole arrays: slabs of a rank's own k blocks are blocks of its local arrays.
  EXPECT_GT(a_part, 0);
  EXPECT_GT(b_part, 0);
}

// Every element of a panel that is not in place is written exactly once per piece, by a copy
// of a local or carried part or by a received part, and it is the element the panel stands for.
void check_panel(const CommPlan& plan, std::size_t s, bool is_a, const MatrixDist& d,
                 const std::vector<std::int64_t>& rows, const std::vector<std::int64_t>& cols,
                 const std::map<int, std::size_t>& filled_at) {
  const bool in_place = (is_a ? plan.a_at[s] : plan.b_at[s]).in_place();
  const auto& copies = (is_a ? plan.copies_a : plan.copies_b)[s];
  std::vector<int> count(rows.size() * cols.size(), 0);
  auto cover = [&](std::int64_t gi, std::int64_t gj, std::int64_t nr, std::int64_t nc,
                   std::int64_t pi, std::int64_t pj, int owner) {
    for (std::int64_t v = 0; v < nc; ++v)
      for (std::int64_t u = 0; u < nr; ++u) {
        const std::size_t ru = std::size_t(pi + u), cv = std::size_t(pj + v);
        ASSERT_LT(ru, rows.size());
        ASSERT_LT(cv, cols.size());
        EXPECT_EQ(rows[ru], gi + u);
        EXPECT_EQ(cols[cv], gj + v);
        if (owner >= 0) {
          EXPECT_EQ(d.owner(gi + u, gj + v), owner);
        }
        ++count[ru + cv * rows.size()];
      }
  };
  for (const auto& cp : copies) {
    if (cp.carry < 0) {
      cover(cp.gi, cp.gj, cp.rows, cp.cols, cp.pi, cp.pj, plan.rank);
      continue;
    }
    const auto& slot = plan.carried.at(std::size_t(cp.carry));
    EXPECT_EQ(Shape(slot.gi, slot.gj, slot.rows, slot.cols), Shape(cp.gi, cp.gj, cp.rows, cp.cols));
    ASSERT_TRUE(filled_at.count(cp.carry)) << "carry slot " << cp.carry << " never received";
    EXPECT_LT(filled_at.at(cp.carry), s);
    EXPECT_LE(s, std::size_t(slot.last_piece));
    cover(cp.gi, cp.gj, cp.rows, cp.cols, cp.pi, cp.pj, -1);
  }
  for (const auto& msg : plan.incoming[s])
    for (const auto& seg : is_a ? msg.a : msg.b)
      cover(seg.gi, seg.gj, seg.rows, seg.cols, seg.pi, seg.pj, msg.peer);
  if (in_place) {
    EXPECT_TRUE(std::all_of(count.begin(), count.end(), [](int c) { return c == 0; }));
  } else {
    EXPECT_TRUE(std::all_of(count.begin(), count.end(), [](int c) { return c == 1; }))
        << (is_a ? "A" : "B") << " panel of piece " << s << " of rank " << plan.rank;
  }
}

TEST(CommPlan, PanelsAreFilledOnceFromTheRightElements) {
  std::size_t carried = 0;
  for_each_case([&](const Problem& p, int, const std::vector<CommPlan>& plans) {
    const TileOrder& o = p.order;
    for (const CommPlan& plan : plans) {
      std::map<int, std::size_t> filled_at;  // carry slot -> stage that receives it
      for (std::size_t s = 0; s < plan.incoming.size(); ++s)
        for (const auto& msg : plan.incoming[s])
          for (const auto* segs : {&msg.a, &msg.b})
            for (const auto& seg : *segs)
              if (seg.carry >= 0) {
                EXPECT_TRUE(filled_at.emplace(seg.carry, s).second);
              }
      EXPECT_EQ(filled_at.size(), plan.carried.size());
      carried += plan.carried.size();
      std::map<int, int> freed;
      for (std::size_t s = 0; s < plan.free_after.size(); ++s)
        for (int slot : plan.free_after[s]) {
          EXPECT_TRUE(freed.emplace(slot, int(s)).second);
          EXPECT_EQ(plan.carried.at(std::size_t(slot)).last_piece, int(s));
        }
      EXPECT_EQ(freed.size(), plan.carried.size());
      // A carried part is read again at its last piece (else carrying it was waste).
      for (std::size_t slot = 0; slot < plan.carried.size(); ++slot) {
        const int last = plan.carried[slot].last_piece;
        for (const auto* copies : {&plan.copies_a, &plan.copies_b})
          for (const auto& cp : (*copies)[std::size_t(last)])
            if (cp.carry == int(slot)) freed.erase(int(slot));
      }
      EXPECT_TRUE(freed.empty()) << freed.size() << " carried parts never read at their last piece";
      for (std::size_t s = 0; s < plan.pieces.size(); ++s) {
        const TileBox& b = plan.pieces[s].box;
        const auto i = panel_axis(o.i, b.lo[0], b.hi[0]), j = panel_axis(o.j, b.lo[1], b.hi[1]),
                   l = panel_axis(o.k, b.lo[2], b.hi[2]);
        // Panels are stored: a transposed operand's panel is transposed.
        const auto [ar, ac] = stored_a(p, i, l);
        const auto [br, bc] = stored_b(p, l, j);
        EXPECT_EQ(plan.a_panels[s].rows(), std::int64_t(ar.size()));
        EXPECT_EQ(plan.a_panels[s].cols(), std::int64_t(ac.size()));
        EXPECT_EQ(plan.b_panels[s].rows(), std::int64_t(br.size()));
        EXPECT_EQ(plan.b_panels[s].cols(), std::int64_t(bc.size()));
        check_panel(plan, s, true, p.dist.a, ar, ac, filled_at);
        check_panel(plan, s, false, p.dist.b, br, bc, filled_at);
      }
    }
  });
  EXPECT_GT(carried, 0u) << "no problem carries a tile from one piece to a later one";
}

// Every element of C gets the partial of every rank whose zone covers it, at its owner, once;
// or its owner, alone in covering it, writes it in place.
TEST(CommPlan, PartialCReachesEveryOwnerOnce) {
  for_each_case([](const Problem& p, int, const std::vector<CommPlan>& plans) {
    const TileOrder& o = p.order;
    const MatrixDist& C = p.dist.c;
    std::map<std::pair<std::int64_t, std::int64_t>, std::vector<int>> got, expected;
    for (std::size_t r = 0; r < plans.size(); ++r) {
      const CommPlan& plan = plans[r];
      for (const auto& [x, y] : ij_cells(p.zones[r]))
        for (std::int64_t gj = o.j.lo(y); gj < o.j.hi(y); ++gj)
          for (std::int64_t gi = o.i.lo(x); gi < o.i.hi(x); ++gi)
            expected[{gi, gj}].push_back(int(r));
      if (plan.c_in_place) {
        for (const auto& [x, y] : ij_cells(p.zones[r]))
          for (std::int64_t gj = o.j.lo(y); gj < o.j.hi(y); ++gj)
            for (std::int64_t gi = o.i.lo(x); gi < o.i.hi(x); ++gi) got[{gi, gj}].push_back(int(r));
        continue;
      }
      for (const auto& msg : plan.c_out)
        for (const auto& seg : msg.a) {
          const auto& ct = plan.c_tiles.at(std::size_t(seg.carry));
          EXPECT_EQ(seg.gi, o.i.lo(ct.x) + seg.pi);
          EXPECT_EQ(seg.gj, o.j.lo(ct.y) + seg.pj);
          EXPECT_EQ(ct.i0, o.i.first[std::size_t(ct.x)]);
          EXPECT_EQ(ct.j0, o.j.first[std::size_t(ct.y)]);
          for (int bi : ct.boxes) {
            const exec::Rect& bp = plan.box_panels.at(std::size_t(bi));
            EXPECT_TRUE(bp.i0 <= ct.i0 && ct.i0 < bp.i1 && bp.j0 <= ct.j0 && ct.j0 < bp.j1);
          }
          for (std::int64_t v = 0; v < seg.cols; ++v)
            for (std::int64_t u = 0; u < seg.rows; ++u) {
              EXPECT_EQ(C.owner(seg.gi + u, seg.gj + v), msg.peer);
              got[{seg.gi + u, seg.gj + v}].push_back(int(r));
            }
        }
    }
    EXPECT_EQ(std::int64_t(expected.size()), C.rows() * C.cols());
    EXPECT_EQ(got, expected);
  });
}

// The plan moves what the traffic model predicts, matrix by matrix, sent and received.
TEST(CommPlan, VolumeEqualsTheTrafficModel) {
  for_each_case([](const Problem& p, int, const std::vector<CommPlan>& plans) {
    const auto model = model_traffic(p.zones, p.order, p.dist);
    for (std::size_t r = 0; r < plans.size(); ++r) {
      const CommVolume v = plans[r].volume();
      const RankTraffic& t = model[r];
      EXPECT_EQ(double(v.a_recv), t.a_in) << "rank " << r;
      EXPECT_EQ(double(v.b_recv), t.b_in) << "rank " << r;
      EXPECT_EQ(double(v.c_recv), t.c_in) << "rank " << r;
      EXPECT_EQ(double(v.a_sent), t.a_out) << "rank " << r;
      EXPECT_EQ(double(v.b_sent), t.b_out) << "rank " << r;
      EXPECT_EQ(double(v.c_sent), t.c_out) << "rank " << r;
    }
  });
}

TEST(CommPlan, RejectsZonesThatAreNotOnePerRank) {
  const Problem& p = problems().front();
  const int P = int(p.zones.size());
  EXPECT_THROW(make_comm_plan(0, P + 1, p.zones, p.order, p.dist, 1), std::invalid_argument);
  EXPECT_THROW(make_comm_plan(P, P, p.zones, p.order, p.dist, 1), std::invalid_argument);
}

}  // namespace
}  // namespace cuboid::layout
