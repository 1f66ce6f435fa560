#include "layout/comm_plan.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

namespace cuboid::layout {
namespace {

using Key = std::pair<std::int64_t, std::int64_t>;
using Message = CommPlan::Message;
using Segment = CommPlan::Segment;

// Stored element rectangles under the op(A) tile at positions (x of i, y of k) and the op(B)
// tile (y of k, x of j): what travels and what is read is always the stored matrix.
exec::Rect a_tile(const TileOrder& o, const Distribution& d, std::int64_t x, std::int64_t y) {
  return d.stored_a(exec::Rect{o.i.lo(x), o.i.hi(x), o.k.lo(y), o.k.hi(y)});
}
exec::Rect b_tile(const TileOrder& o, const Distribution& d, std::int64_t y, std::int64_t x) {
  return d.stored_b(exec::Rect{o.k.lo(y), o.k.hi(y), o.j.lo(x), o.j.hi(x)});
}
exec::Rect input_tile(const TileOrder& o, const Distribution& d, bool is_a, std::int64_t x,
                      std::int64_t y) {
  return is_a ? a_tile(o, d, x, y) : b_tile(o, d, y, x);
}

// The elements of the box's A and B that `rank` owns, and how many there are in all.
std::pair<double, double> owned_inputs(const TileOrder& o, const Distribution& d,
                                       const partition::TileBox& b, int rank) {
  double mine = 0, all = 0;
  auto count = [&](const exec::Rect& r, int owner) {
    const double e = double(r.rows()) * double(r.cols());
    all += e;
    if (owner == rank) mine += e;
  };
  for (std::int64_t y = b.lo[2]; y < b.hi[2]; ++y) {
    for (std::int64_t x = b.lo[0]; x < b.hi[0]; ++x) d.a.for_each_piece(a_tile(o, d, x, y), count);
    for (std::int64_t x = b.lo[1]; x < b.hi[1]; ++x) d.b.for_each_piece(b_tile(o, d, y, x), count);
  }
  return {mine, all};
}

// The longest run of positions [lo, hi) of a box's axis for which `mine(x)` holds: {lo, lo}
// when none does.
template <class F>
std::pair<std::int64_t, std::int64_t> longest_run(std::int64_t lo, std::int64_t hi, F&& mine) {
  std::pair<std::int64_t, std::int64_t> best{lo, lo};
  for (std::int64_t x = lo, start = lo; x < hi; ++x) {
    if (!mine(x)) {
      start = x + 1;
      continue;
    }
    if (x + 1 - start > best.second - best.first) best = {start, x + 1};
  }
  return best;
}

// The part of box b whose A and B the rank owns entirely, over the box's whole depth: the
// longest run of its rows whose A it owns, times the longest run of its columns whose B it owns
// (the orders group positions by owner, so these are the rank's own rows and columns). Empty
// when there is none.
partition::TileBox local_part(const TileOrder& o, const Distribution& d,
                              const partition::TileBox& b, int rank) {
  auto owns = [&](const MatrixDist& M, const exec::Rect& r) {
    bool all = true;
    M.for_each_piece(r, [&](const exec::Rect&, int owner) { all = all && owner == rank; });
    return all;
  };
  auto a_row = [&](std::int64_t x) {
    for (std::int64_t y = b.lo[2]; y < b.hi[2]; ++y)
      if (!owns(d.a, a_tile(o, d, x, y))) return false;
    return true;
  };
  auto b_col = [&](std::int64_t x) {
    for (std::int64_t y = b.lo[2]; y < b.hi[2]; ++y)
      if (!owns(d.b, b_tile(o, d, y, x))) return false;
    return true;
  };
  partition::TileBox part = b;
  std::tie(part.lo[0], part.hi[0]) = longest_run(b.lo[0], b.hi[0], a_row);
  if (part.lo[0] == part.hi[0]) return part;
  std::tie(part.lo[1], part.hi[1]) = longest_run(b.lo[1], b.hi[1], b_col);
  return part;
}

// Box b less its part `in` (same depth, within b's rows and columns): the columns before and
// after it at full height, then the rows above and below it in its columns.
std::vector<partition::TileBox> around(const partition::TileBox& b, const partition::TileBox& in) {
  std::vector<partition::TileBox> out;
  auto add = [&](std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1) {
    partition::TileBox x = b;
    x.lo[0] = i0, x.hi[0] = i1, x.lo[1] = j0, x.hi[1] = j1;
    if (!x.empty()) out.push_back(x);
  };
  add(b.lo[0], b.hi[0], b.lo[1], in.lo[1]);
  add(b.lo[0], b.hi[0], in.hi[1], b.hi[1]);
  add(b.lo[0], in.lo[0], in.lo[1], in.hi[1]);
  add(in.hi[0], b.hi[0], in.lo[1], in.hi[1]);
  return out;
}

// The k-slabs of `part` (a box or a part of one), those with more of their inputs on the rank
// first (ties in k order), each starting its C rows and columns when it is the part's first.
void add_slabs(const TileOrder& o, const Distribution& d, const partition::TileBox& part, int rank,
               int slabs_per_box, int box_index, std::vector<Piece>& out) {
  const std::vector<Piece> slabs = pieces_of({part}, slabs_per_box);
  std::vector<double> owned;
  for (const Piece& p : slabs) owned.push_back(owned_inputs(o, d, p.box, rank).first);
  std::vector<std::size_t> by(slabs.size());
  for (std::size_t s = 0; s < by.size(); ++s) by[s] = s;
  std::stable_sort(by.begin(), by.end(),
                   [&](std::size_t x, std::size_t y) { return owned[x] > owned[y]; });
  for (std::size_t s = 0; s < by.size(); ++s) {
    Piece p = slabs[by[s]];
    p.box_index = box_index;
    p.first_of_box = s == 0;
    out.push_back(p);
  }
}

// The pieces of a rank's zone: k-slabs of each box, or the whole box when the rank owns all of
// its inputs (then there is nothing to wait for, and one GEMM per box is fastest). With one
// thread per rank, the first piece's wait is what the exchange cannot hide, and a piece read
// from the local arrays has none while the others' parts arrive: a box's slabs run those with
// more of their inputs on the rank first; and when every slab needs another rank's inputs (each
// rank keeping its own k blocks of A, say, and needing the others' columns of B), the part of the
// box whose inputs are all on the rank runs first, in slabs of its own, then the rest of the box.
// Each part's first piece starts its C rows and columns (a box's partial C, or C in place).
std::vector<Piece> pieces_for(const TileOrder& o, const Distribution& d,
                              const partition::TileZone& zone, int rank, int slabs_per_box) {
  std::vector<Piece> out;
  int index = 0;
  for (const auto& b : zone) {
    if (b.empty()) continue;
    double mine = 0, all = 0;
    bool local_slab = false;
    for (const Piece& p : pieces_of({b}, slabs_per_box)) {
      const auto [slab_mine, slab_all] = owned_inputs(o, d, p.box, rank);
      mine += slab_mine, all += slab_all, local_slab |= slab_mine == slab_all;
    }
    if (mine == all) {
      out.push_back(pieces_of({b}, 1).front());
      out.back().box_index = index++;
      continue;
    }
    const partition::TileBox part = local_slab ? partition::TileBox{} : local_part(o, d, b, rank);
    if (part.empty()) {
      add_slabs(o, d, b, rank, slabs_per_box, index++, out);
      continue;
    }
    add_slabs(o, d, part, rank, slabs_per_box, index, out);
    for (const auto& rest : around(b, part)) add_slabs(o, d, rest, rank, slabs_per_box, index, out);
    ++index;
  }
  return out;
}

// Calls visit(stage, is_a, x, y, first) for each A tile (x of i, y of k) and B tile (y of k, x
// of j) each piece needs, piece by piece (A tiles k-major, then B tiles j-major); `first` is
// true at the first piece that needs the tile. Sender and receiver both enumerate this way.
template <class F>
void for_each_tile(const std::vector<Piece>& pieces, F&& visit) {
  std::set<Key> seen_a, seen_b;
  for (std::size_t s = 0; s < pieces.size(); ++s) {
    const auto& b = pieces[s].box;
    for (std::int64_t y = b.lo[2]; y < b.hi[2]; ++y)
      for (std::int64_t x = b.lo[0]; x < b.hi[0]; ++x)
        visit(int(s), true, x, y, seen_a.insert({x, y}).second);
    for (std::int64_t x = b.lo[1]; x < b.hi[1]; ++x)
      for (std::int64_t y = b.lo[2]; y < b.hi[2]; ++y)
        visit(int(s), false, x, y, seen_b.insert({y, x}).second);
  }
}

// The C tiles (positions) of a zone with the boxes covering each, sorted by (y, x).
std::map<Key, std::vector<int>> c_tiles_of(const partition::TileZone& zone) {
  std::map<Key, std::vector<int>> out;
  int index = 0;
  for (const auto& b : zone) {
    if (b.empty()) continue;
    for (std::int64_t y = b.lo[1]; y < b.hi[1]; ++y)
      for (std::int64_t x = b.lo[0]; x < b.hi[0]; ++x) out[{y, x}].push_back(index);
    ++index;
  }
  return out;
}

exec::Rect c_tile(const TileOrder& o, const Key& yx) {
  return exec::Rect{o.i.lo(yx.second), o.i.hi(yx.second), o.j.lo(yx.first), o.j.hi(yx.first)};
}

bool overlaps_ij(const partition::TileBox& a, const partition::TileBox& b) {
  return a.lo[0] < b.hi[0] && b.lo[0] < a.hi[0] && a.lo[1] < b.hi[1] && b.lo[1] < a.hi[1];
}

void add_segment(Message& msg, bool is_a, const Segment& seg) {
  (is_a ? msg.a : msg.b).push_back(seg);
  (is_a ? msg.a_elems : msg.b_elems) += seg.elements();
}

// A and B are read in place only from block-cyclic local arrays, where a panel is a block of one. C
// is in place when the zone is one box no other zone touches whose C is the rank's whole local C:
// its block-cyclic array, or on the aligned layout its tiles stored as the box's panel.
void plan_in_place(CommPlan& p, const std::vector<partition::TileZone>& zones, const TileOrder& o,
                   const Distribution& dist) {
  p.a_at.assign(p.pieces.size(), {}), p.b_at.assign(p.pieces.size(), {});
  const partition::TileBox* box = partition::single_box(zones[std::size_t(p.rank)]);
  auto touched = [&](const partition::TileBox& mine) {
    for (int d = 0; d < p.ranks; ++d)
      if (d != p.rank)
        for (const auto& b : zones[std::size_t(d)])
          if (!b.empty() && overlaps_ij(b, mine)) return true;
    return false;
  };
  if (box != nullptr && touched(*box)) box = nullptr;
  if (dist.a.kind() != MatrixDist::Kind::block_cyclic) {
    p.c_in_place = box != nullptr && dist.c.panel_rows(p.rank) > 0;
    return;
  }
  for (std::size_t s = 0; s < p.pieces.size(); ++s) {
    p.a_at[s] = panel_in_local_array(o, dist, p.rank, p.pieces[s].box, true);
    p.b_at[s] = panel_in_local_array(o, dist, p.rank, p.pieces[s].box, false);
  }
  if (box == nullptr) return;
  const BlockCyclic& Lc = dist.c.block_cyclic();
  const ProcessGrid& g = Lc.grid();
  const int pr = g.row_of(p.rank), pc = g.col_of(p.rank);
  p.c_in_place =
      is_whole_local_axis(o.i, box->lo[0], box->hi[0], Lc.row_block(), Lc.row_offset(pr), g.rows) &&
      is_whole_local_axis(o.j, box->lo[1], box->hi[1], Lc.col_block(), Lc.col_offset(pc), g.cols);
}

// The last stage that needs each part (is_a, origin) this rank receives.
std::map<std::pair<bool, Key>, int> last_uses(const CommPlan& p, const TileOrder& o,
                                              const Distribution& dist) {
  std::map<std::pair<bool, Key>, int> last;
  for_each_tile(p.pieces, [&](int s, bool is_a, std::int64_t x, std::int64_t y, bool) {
    (is_a ? dist.a : dist.b)
        .for_each_piece(input_tile(o, dist, is_a, x, y), [&](const exec::Rect& r, int owner) {
          if (owner != p.rank) last[{is_a, {r.i0, r.j0}}] = s;
        });
  });
  return last;
}

// What this rank needs, piece by piece: local parts to copy (unless in place), received parts
// (unpacked into the first piece's panel, carried when a later piece needs them too).
void plan_inputs(CommPlan& p, const TileOrder& o, const Distribution& dist) {
  const std::size_t S = p.pieces.size();
  p.incoming.resize(S), p.copies_a.resize(S), p.copies_b.resize(S), p.free_after.resize(S);
  const auto last_use = last_uses(p, o, dist);
  std::map<std::pair<bool, Key>, int> carry_of;  // received part -> its carry slot
  std::vector<std::map<int, Message>> by_source(S);
  for_each_tile(p.pieces, [&](int s, bool is_a, std::int64_t x, std::int64_t y, bool first) {
    const auto& box = p.pieces[std::size_t(s)].box;
    const exec::Rect r = input_tile(o, dist, is_a, x, y);
    // The tile's place in the stored panel of piece s (op's row and column offsets, exchanged
    // for a transposed operand).
    const std::int64_t di = is_a ? o.i.first[std::size_t(x)] - o.i.first[std::size_t(box.lo[0])]
                                 : o.k.first[std::size_t(y)] - o.k.first[std::size_t(box.lo[2])];
    const std::int64_t dj = is_a ? o.k.first[std::size_t(y)] - o.k.first[std::size_t(box.lo[2])]
                                 : o.j.first[std::size_t(x)] - o.j.first[std::size_t(box.lo[1])];
    const bool flip = is_a ? dist.a_transposed : dist.b_transposed;
    const std::int64_t pi0 = flip ? dj : di, pj0 = flip ? di : dj;
    const bool in_place = (is_a ? p.a_at[std::size_t(s)] : p.b_at[std::size_t(s)]).in_place();
    auto& copies = (is_a ? p.copies_a : p.copies_b)[std::size_t(s)];
    (is_a ? dist.a : dist.b).for_each_piece(r, [&](const exec::Rect& q, int owner) {
      const std::int64_t pi = pi0 + q.i0 - r.i0, pj = pj0 + q.j0 - r.j0;
      if (owner == p.rank) {
        if (!in_place) copies.push_back({q.i0, q.j0, q.rows(), q.cols(), pi, pj, -1});
        return;
      }
      const std::pair<bool, Key> key{is_a, {q.i0, q.j0}};
      if (!first) {  // received at an earlier stage and carried
        copies.push_back({q.i0, q.j0, q.rows(), q.cols(), pi, pj, carry_of.at(key)});
        return;
      }
      int slot = -1;
      if (const int last = last_use.at(key); last > s) {
        slot = int(p.carried.size());
        p.carried.push_back({q.i0, q.j0, q.rows(), q.cols(), last});
        carry_of[key] = slot;
        p.free_after[std::size_t(last)].push_back(slot);
      }
      Message& msg = by_source[std::size_t(s)][owner];
      msg.peer = owner, msg.tag = s;
      add_segment(msg, is_a, Segment{q.i0, q.j0, q.rows(), q.cols(), pi, pj, slot});
    });
  });
  for (std::size_t s = 0; s < S; ++s)
    for (auto& [src, msg] : by_source[s]) p.incoming[s].push_back(std::move(msg));
}

// What this rank sends to each other rank, stage by stage, in the receiver's order; earlier
// stages first, since they are what the receivers wait for first.
void plan_outgoing(CommPlan& p, const std::vector<std::vector<Piece>>& all, const TileOrder& o,
                   const Distribution& dist) {
  for (int d = 0; d < p.ranks; ++d) {
    if (d == p.rank) continue;
    std::map<int, Message> by_stage;
    for_each_tile(
        all[std::size_t(d)], [&](int s, bool is_a, std::int64_t x, std::int64_t y, bool first) {
          if (!first) return;
          (is_a ? dist.a : dist.b)
              .for_each_piece(input_tile(o, dist, is_a, x, y), [&](const exec::Rect& q, int owner) {
                if (owner != p.rank) return;
                Message& msg = by_stage[s];
                msg.peer = d, msg.tag = s;
                add_segment(msg, is_a, Segment{q.i0, q.j0, q.rows(), q.cols()});
              });
        });
    for (auto& [s, msg] : by_stage) p.outgoing.push_back(std::move(msg));
  }
  std::stable_sort(p.outgoing.begin(), p.outgoing.end(),
                   [](const Message& x, const Message& y) { return x.tag < y.tag; });
}

// Partial C: what this rank sends, per owner, and what it receives, per source in rank order.
void plan_partial_c(CommPlan& p, const std::vector<partition::TileZone>& zones, const TileOrder& o,
                    const Distribution& dist) {
  p.c_in.resize(std::size_t(p.ranks));
  for (int s = 0; s < p.ranks; ++s) p.c_in[std::size_t(s)].peer = s;
  for (auto& msg : p.c_in) msg.tag = CommPlan::c_tag;
  if (p.c_in_place) return;  // nobody else touches this rank's C, and it touches no other
  std::map<int, Message> by_owner;
  for (const auto& [key, boxes] : c_tiles_of(zones[std::size_t(p.rank)])) {
    const int idx = int(p.c_tiles.size());
    const std::int64_t x = key.second, y = key.first;
    p.c_tiles.push_back({x, y, o.i.first[std::size_t(x)], o.j.first[std::size_t(y)], boxes});
    const exec::Rect r = c_tile(o, key);
    dist.c.for_each_piece(r, [&](const exec::Rect& q, int owner) {
      Message& msg = by_owner[owner];
      msg.peer = owner, msg.tag = CommPlan::c_tag;
      add_segment(msg, true,
                  Segment{q.i0, q.j0, q.rows(), q.cols(), q.i0 - r.i0, q.j0 - r.j0, idx});
    });
  }
  for (auto& [owner, msg] : by_owner) {
    if (owner == p.rank) p.self_c = int(p.c_out.size());
    p.c_out.push_back(std::move(msg));
  }
  for (int s = 0; s < p.ranks; ++s) {
    if (s == p.rank) continue;
    Message& msg = p.c_in[std::size_t(s)];
    for (const auto& [key, boxes] : c_tiles_of(zones[std::size_t(s)]))
      dist.c.for_each_piece(c_tile(o, key), [&](const exec::Rect& q, int owner) {
        if (owner == p.rank) add_segment(msg, true, Segment{q.i0, q.j0, q.rows(), q.cols()});
      });
  }
}

}  // namespace

CommVolume CommPlan::volume() const {
  CommVolume v;
  for (const auto& msg : outgoing) v.a_sent += msg.a_elems, v.b_sent += msg.b_elems;
  for (const auto& stage : incoming)
    for (const auto& msg : stage) v.a_recv += msg.a_elems, v.b_recv += msg.b_elems;
  for (const auto& msg : c_out)
    if (msg.peer != rank) v.c_sent += msg.a_elems;
  for (const auto& msg : c_in)
    if (msg.peer != rank) v.c_recv += msg.a_elems;
  return v;
}

CommPlan make_comm_plan(int rank, int ranks, const std::vector<partition::TileZone>& zones,
                        const TileOrder& order, const Distribution& dist, int slabs_per_box) {
  if (ranks < 1 || rank < 0 || rank >= ranks)
    throw std::invalid_argument("exchange: rank " + std::to_string(rank) + " of " +
                                std::to_string(ranks));
  if (int(zones.size()) != ranks)
    throw std::invalid_argument("exchange: one zone per rank is needed");
  CommPlan p;
  p.rank = rank, p.ranks = ranks;
  std::vector<std::vector<Piece>> all(static_cast<std::size_t>(ranks));
  for (int d = 0; d < ranks; ++d)
    all[std::size_t(d)] = pieces_for(order, dist, zones[std::size_t(d)], d, slabs_per_box);
  p.pieces = all[std::size_t(rank)];
  if (p.pieces.size() >= std::size_t(CommPlan::c_tag))
    throw std::invalid_argument("exchange: too many pieces for one rank (" +
                                std::to_string(p.pieces.size()) + ")");
  for (const auto& piece : p.pieces) {
    p.a_panels.push_back(dist.stored_a(a_panel(order, piece.box)));
    p.b_panels.push_back(dist.stored_b(b_panel(order, piece.box)));
  }
  for (const auto& b : zones[std::size_t(rank)])
    if (!b.empty()) p.box_panels.push_back(c_panel(order, b));
  plan_in_place(p, zones, order, dist);
  plan_inputs(p, order, dist);
  plan_outgoing(p, all, order, dist);
  plan_partial_c(p, zones, order, dist);
  return p;
}

}  // namespace cuboid::layout
