#include "dist/exchange.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>

namespace cuboid::dist {
namespace {

// Input stages use tags 0, 1, ...; partial C uses this one. MPI guarantees tags up to 32767.
constexpr int kCTag = 32767;

using Key = std::pair<std::int64_t, std::int64_t>;

// Element rectangles of the A tile at positions (x of i, y of k) and the B tile (y of k, x of j).
exec::Rect a_tile(const TileOrder& o, std::int64_t x, std::int64_t y) {
  return exec::Rect{o.i.lo(x), o.i.hi(x), o.k.lo(y), o.k.hi(y)};
}
exec::Rect b_tile(const TileOrder& o, std::int64_t y, std::int64_t x) {
  return exec::Rect{o.k.lo(y), o.k.hi(y), o.j.lo(x), o.j.hi(x)};
}

// True when `rank` owns every element of the box's A and B.
bool owns_inputs(const TileOrder& o, const Distribution& d, const partition::TileBox& b, int rank) {
  bool all = true;
  auto mine = [&](const exec::Rect&, int owner) { all = all && owner == rank; };
  for (std::int64_t y = b.lo[2]; y < b.hi[2] && all; ++y) {
    for (std::int64_t x = b.lo[0]; x < b.hi[0] && all; ++x)
      d.a.for_each_piece(a_tile(o, x, y), mine);
    for (std::int64_t x = b.lo[1]; x < b.hi[1] && all; ++x)
      d.b.for_each_piece(b_tile(o, y, x), mine);
  }
  return all;
}

// The pieces of a rank's zone: k-slabs of each box, or the whole box when the rank owns all of
// its inputs (then there is nothing to wait for, and one GEMM per box is fastest).
std::vector<Piece> pieces_for(const TileOrder& o, const Distribution& d,
                              const partition::TileZone& zone, int rank, int slabs_per_box) {
  std::vector<Piece> out;
  int index = 0;
  for (const auto& b : zone) {
    if (b.empty()) continue;
    const int slabs = owns_inputs(o, d, b, rank) ? 1 : slabs_per_box;
    for (Piece p : pieces_of({b}, slabs)) {
      p.box_index = index;
      out.push_back(p);
    }
    ++index;
  }
  return out;
}

// Calls visit(stage, is_a, x, y, first) for each A tile (x of i, y of k) and B tile (y of k, x
// of j) each piece needs, piece by piece (A tiles k-major, then B tiles j-major); `first` is
// true at the first piece that needs the tile.
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

bool overlaps_ij(const partition::TileBox& a, const partition::TileBox& b) {
  return a.lo[0] < b.hi[0] && b.lo[0] < a.hi[0] && a.lo[1] < b.hi[1] && b.lo[1] < a.hi[1];
}

}  // namespace

template <class Scalar>
Exchange<Scalar>::Exchange(const Communicator& comm, const std::vector<partition::TileZone>& zones,
                           const TileOrder& order, const Distribution& dist, int slabs_per_box)
    : comm_(comm), order_(order), dist_(dist) {
  const int me = comm.rank(), P = comm.size();
  if (int(zones.size()) != P) throw std::invalid_argument("exchange: one zone per rank is needed");
  const TileOrder& o = order_;

  std::vector<std::vector<Piece>> all(static_cast<std::size_t>(P));
  for (int d = 0; d < P; ++d)
    all[std::size_t(d)] = pieces_for(o, dist, zones[std::size_t(d)], d, slabs_per_box);
  pieces_ = all[std::size_t(me)];
  if (pieces_.size() >= std::size_t(kCTag))
    throw std::invalid_argument("exchange: too many pieces for one rank (" +
                                std::to_string(pieces_.size()) + ")");
  const auto& my_zone = zones[std::size_t(me)];
  for (const auto& b : my_zone)
    if (!b.empty()) box_panels_.push_back(c_panel(o, b));

  // What is in place: only a block-cyclic local array can be a panel.
  const std::size_t S = pieces_.size();
  a_in_place_.assign(S, 0), b_in_place_.assign(S, 0);
  if (dist.a.kind() == MatrixDist::Kind::block_cyclic) {
    const BlockCyclic &La = dist.a.block_cyclic(), &Lb = dist.b.block_cyclic(),
                      &Lc = dist.c.block_cyclic();
    const ProcessGrid& g = La.grid();
    const int pr = g.row_of(me), pc = g.col_of(me);
    for (std::size_t s = 0; s < S; ++s) {
      const auto& b = pieces_[s].box;
      a_in_place_[s] = is_whole_local_axis(o.i, b.lo[0], b.hi[0], La.row_block(), pr, g.rows) &&
                       is_whole_local_axis(o.k, b.lo[2], b.hi[2], La.col_block(), pc, g.cols);
      b_in_place_[s] = is_whole_local_axis(o.k, b.lo[2], b.hi[2], Lb.row_block(), pr, g.rows) &&
                       is_whole_local_axis(o.j, b.lo[1], b.hi[1], Lb.col_block(), pc, g.cols);
    }
    if (box_panels_.size() == 1) {
      const auto it =
          std::find_if(my_zone.begin(), my_zone.end(), [](auto& b) { return !b.empty(); });
      bool alone = true;
      for (int d = 0; d < P; ++d)
        if (d != me)
          for (const auto& b : zones[std::size_t(d)])
            alone = alone && (b.empty() || !overlaps_ij(b, *it));
      c_in_place_ = alone &&
                    is_whole_local_axis(o.i, it->lo[0], it->hi[0], Lc.row_block(), pr, g.rows) &&
                    is_whole_local_axis(o.j, it->lo[1], it->hi[1], Lc.col_block(), pc, g.cols);
    }
  }

  // What this rank needs, piece by piece: local parts to copy (unless in place), received
  // parts (unpacked into the first piece's panel, carried when a later piece needs them too).
  incoming_.resize(S), copies_a_.resize(S), copies_b_.resize(S), stage_requests_.resize(S),
      free_after_.resize(S);
  {
    std::map<std::pair<bool, Key>, int> carry_of;  // (is_a, segment origin) -> carry slot
    std::map<std::pair<bool, Key>, int> last_use;  // received segment -> last stage needing it
    for_each_tile(pieces_, [&](int s, bool is_a, std::int64_t x, std::int64_t y, bool) {
      const exec::Rect r = is_a ? a_tile(o, x, y) : b_tile(o, y, x);
      (is_a ? dist.a : dist.b).for_each_piece(r, [&](const exec::Rect& p, int owner) {
        if (owner != me) last_use[{is_a, {p.i0, p.j0}}] = s;
      });
    });
    std::vector<std::map<int, Message>> by_source(S);
    for_each_tile(pieces_, [&](int s, bool is_a, std::int64_t x, std::int64_t y, bool first) {
      const auto& box = pieces_[std::size_t(s)].box;
      const exec::Rect r = is_a ? a_tile(o, x, y) : b_tile(o, y, x);
      // The tile's place in the panel of piece s.
      const std::int64_t pi0 = is_a ? o.i.first[std::size_t(x)] - o.i.first[std::size_t(box.lo[0])]
                                    : o.k.first[std::size_t(y)] - o.k.first[std::size_t(box.lo[2])];
      const std::int64_t pj0 = is_a ? o.k.first[std::size_t(y)] - o.k.first[std::size_t(box.lo[2])]
                                    : o.j.first[std::size_t(x)] - o.j.first[std::size_t(box.lo[1])];
      const bool in_place = is_a ? a_in_place_[std::size_t(s)] : b_in_place_[std::size_t(s)];
      (is_a ? dist.a : dist.b).for_each_piece(r, [&](const exec::Rect& p, int owner) {
        const std::int64_t pi = pi0 + p.i0 - r.i0, pj = pj0 + p.j0 - r.j0;
        auto& copies = is_a ? copies_a_ : copies_b_;
        if (owner == me) {
          if (!in_place)
            copies[std::size_t(s)].push_back(PanelCopy{p.i0, p.j0, p.rows(), p.cols(), pi, pj, -1});
          return;
        }
        const std::pair<bool, Key> key{is_a, {p.i0, p.j0}};
        if (!first) {  // received at an earlier stage and carried
          copies[std::size_t(s)].push_back(
              PanelCopy{p.i0, p.j0, p.rows(), p.cols(), pi, pj, carry_of.at(key)});
          return;
        }
        int slot = -1;
        if (last_use.at(key) > s) {
          slot = int(carried_.size());
          carried_.push_back(Carried{p.i0, p.j0, p.rows(), p.cols(), last_use.at(key), {}});
          carry_of[key] = slot;
          free_after_[std::size_t(last_use.at(key))].push_back(slot);
        }
        Message& msg = by_source[std::size_t(s)][owner];
        msg.peer = owner, msg.tag = s;
        (is_a ? msg.a : msg.b).push_back(Segment{p.i0, p.j0, p.rows(), p.cols(), pi, pj, slot});
        (is_a ? msg.a_elems : msg.b_elems) += p.rows() * p.cols();
      });
    });
    for (std::size_t s = 0; s < S; ++s)
      for (auto& [src, msg] : by_source[s]) {
        msg.buffer.resize(std::size_t(msg.a_elems + msg.b_elems));
        incoming_[s].push_back(std::move(msg));
      }
  }

  // What this rank sends to each other rank, stage by stage, in the receiver's order.
  for (int d = 0; d < P; ++d) {
    if (d == me) continue;
    std::map<int, Message> by_stage;
    for_each_tile(all[std::size_t(d)],
                  [&](int s, bool is_a, std::int64_t x, std::int64_t y, bool first) {
                    if (!first) return;
                    const exec::Rect r = is_a ? a_tile(o, x, y) : b_tile(o, y, x);
                    (is_a ? dist.a : dist.b).for_each_piece(r, [&](const exec::Rect& p, int owner) {
                      if (owner != me) return;
                      Message& msg = by_stage[s];
                      msg.peer = d, msg.tag = s;
                      (is_a ? msg.a : msg.b).push_back(Segment{p.i0, p.j0, p.rows(), p.cols()});
                      (is_a ? msg.a_elems : msg.b_elems) += p.rows() * p.cols();
                    });
                  });
    for (auto& [s, msg] : by_stage) {
      msg.buffer.resize(std::size_t(msg.a_elems + msg.b_elems));
      outgoing_.push_back(std::move(msg));
    }
  }
  // Earlier stages first: they are what the receivers wait for first.
  std::stable_sort(outgoing_.begin(), outgoing_.end(),
                   [](const Message& x, const Message& y) { return x.tag < y.tag; });

  // Partial C: what this rank sends, per owner...
  c_requests_.resize(std::size_t(P));
  c_in_.resize(std::size_t(P));
  if (c_in_place_) return;  // nobody else touches this rank's C, and it touches no other
  {
    std::map<int, Message> by_owner;
    for (const auto& [key, boxes] : c_tiles_of(my_zone)) {
      const int idx = int(c_tiles_.size());
      const std::int64_t x = key.second, y = key.first;
      c_tiles_.push_back(CTile{x, y, boxes});
      const exec::Rect r{o.i.lo(x), o.i.hi(x), o.j.lo(y), o.j.hi(y)};
      dist.c.for_each_piece(r, [&](const exec::Rect& p, int owner) {
        Message& msg = by_owner[owner];
        msg.peer = owner, msg.tag = kCTag;
        msg.a.push_back(Segment{p.i0, p.j0, p.rows(), p.cols(), p.i0 - r.i0, p.j0 - r.j0, idx});
        msg.a_elems += p.rows() * p.cols();
      });
    }
    for (auto& [owner, msg] : by_owner) {
      msg.buffer.resize(std::size_t(msg.a_elems));
      if (owner == me) self_c_ = int(c_out_.size());
      c_out_.push_back(std::move(msg));
    }
  }
  // ...and what it receives, per source, in rank order.
  for (int s = 0; s < P; ++s) {
    if (s == me) continue;
    Message& msg = c_in_[std::size_t(s)];
    msg.peer = s, msg.tag = kCTag;
    for (const auto& [key, boxes] : c_tiles_of(zones[std::size_t(s)])) {
      const std::int64_t x = key.second, y = key.first;
      dist.c.for_each_piece(exec::Rect{o.i.lo(x), o.i.hi(x), o.j.lo(y), o.j.hi(y)},
                            [&](const exec::Rect& p, int owner) {
                              if (owner != me) return;
                              msg.a.push_back(Segment{p.i0, p.j0, p.rows(), p.cols()});
                              msg.a_elems += p.rows() * p.cols();
                            });
    }
    msg.buffer.resize(std::size_t(msg.a_elems));
  }
}

template <class Scalar>
void Exchange<Scalar>::start(const Storage& A_local, const Storage& B_local) {
  counters_ = {};
  carry_bytes_now_ = 0;
  const double sz = double(sizeof(Scalar));
  for (int s = 0; s < comm_.size(); ++s) {
    auto& msg = c_in_[std::size_t(s)];
    if (!msg.buffer.empty())
      comm_.irecv(msg.buffer.data(), msg.buffer.size() * sizeof(Scalar), s, kCTag,
                  c_requests_[std::size_t(s)]);
  }
  for (std::size_t s = 0; s < incoming_.size(); ++s)
    for (auto& msg : incoming_[s])
      comm_.irecv(msg.buffer.data(), msg.buffer.size() * sizeof(Scalar), msg.peer, msg.tag,
                  stage_requests_[s]);
  for (auto& msg : outgoing_) {
    std::size_t pos = 0;
    auto pack = [&](const std::vector<Segment>& segs, const Storage& X, const MatrixDist& L) {
      for (const auto& seg : segs) {
        const Scalar* src = X.data() + L.offset(seg.gi, seg.gj);
        const std::int64_t ld = L.ld(seg.gi, seg.gj);
        for (std::int64_t c = 0; c < seg.cols; ++c, pos += std::size_t(seg.rows))
          std::copy_n(src + c * ld, seg.rows, msg.buffer.data() + pos);
      }
    };
    pack(msg.a, A_local, dist_.a);
    pack(msg.b, B_local, dist_.b);
    comm_.isend(msg.buffer.data(), msg.buffer.size() * sizeof(Scalar), msg.peer, msg.tag,
                send_requests_);
    counters_.a_sent += double(msg.a_elems) * sz;
    counters_.b_sent += double(msg.b_elems) * sz;
  }
}

template <class Scalar>
bool Exchange<Scalar>::progress() {
  comm_.progress();
  // Completed requests are retired here (receives with their byte counts), so that once the
  // inputs have arrived and left, the caller stops polling. The partial C blocks' receives are
  // left alone: they complete only after the other ranks' compute, so polling for them would
  // wake a core the GEMMs use for nothing.
  bool pending = !Communicator::test_all(send_requests_);
  for (auto& r : stage_requests_)
    pending |= !Communicator::test_all_received(r, counters_.recv_mpi);
  return pending;
}

template <class Scalar>
void Exchange<Scalar>::inputs_for(int s, const Storage& A_local, const Storage& B_local,
                                  const Matrix& A_panel, const Matrix& B_panel) {
  const std::size_t st = std::size_t(s);
  counters_.recv_mpi += Communicator::wait_all_received(stage_requests_[st]);
  const double sz = double(sizeof(Scalar));
  for (const auto& msg : incoming_[st]) {
    std::size_t pos = 0;
    auto unpack = [&](const std::vector<Segment>& segs, const Matrix& panel) {
      for (const auto& seg : segs) {
        const Scalar* src = msg.buffer.data() + pos;
        for (std::int64_t c = 0; c < seg.cols; ++c)
          std::copy_n(src + c * seg.rows, seg.rows, &panel(seg.pi, seg.pj + c));
        if (seg.carry >= 0) {
          auto& keep = carried_[std::size_t(seg.carry)].data;
          keep.assign(src, src + seg.rows * seg.cols);
          carry_bytes_now_ += double(keep.size()) * sz;
        }
        pos += std::size_t(seg.rows * seg.cols);
      }
    };
    unpack(msg.a, A_panel);
    unpack(msg.b, B_panel);
    counters_.a_recv += double(msg.a_elems) * sz;
    counters_.b_recv += double(msg.b_elems) * sz;
  }
  carry_peak_ = std::max(carry_peak_, carry_bytes_now_ / sz);
  auto fill = [&](const std::vector<PanelCopy>& copies, const Storage& X, const MatrixDist& L,
                  const Matrix& panel) {
    for (const auto& cp : copies) {
      const Scalar* src;
      std::int64_t ld;
      if (cp.carry < 0) {
        src = X.data() + L.offset(cp.gi, cp.gj), ld = L.ld(cp.gi, cp.gj);
      } else {
        src = carried_[std::size_t(cp.carry)].data.data(), ld = cp.rows;
      }
      for (std::int64_t c = 0; c < cp.cols; ++c)
        std::copy_n(src + c * ld, cp.rows, &panel(cp.pi, cp.pj + c));
    }
  };
  fill(copies_a_[st], A_local, dist_.a, A_panel);
  fill(copies_b_[st], B_local, dist_.b, B_panel);
  for (int slot : free_after_[st]) {
    auto& keep = carried_[std::size_t(slot)].data;
    carry_bytes_now_ -= double(keep.size()) * sz;
    std::vector<Scalar>().swap(keep);
  }
}

template <class Scalar>
void Exchange<Scalar>::reduce(const std::vector<Matrix>& box_c, const Storage& C0_local,
                              Scalar beta, const Storage& C_local) {
  // Partials may have been written by a device processor through the engine: let every
  // Kokkos space finish before MPI reads host memory.
  Kokkos::fence();
  if (c_in_place_) {
    Communicator::wait_all(send_requests_);
    return;
  }
  const double sz = double(sizeof(Scalar));
  const int me = comm_.rank();
  const TileOrder& o = order_;
  for (auto& msg : c_out_) {
    std::size_t pos = 0;
    for (const auto& seg : msg.a) {
      const CTile& ct = c_tiles_[std::size_t(seg.carry)];
      for (std::int64_t c = 0; c < seg.cols; ++c)
        for (std::int64_t r = 0; r < seg.rows; ++r) {
          Scalar v = 0;
          bool first = true;
          for (int bi : ct.boxes) {
            const exec::Rect& bp = box_panels_[std::size_t(bi)];
            const std::int64_t pi = o.i.first[std::size_t(ct.x)] - bp.i0 + seg.pi + r;
            const std::int64_t pj = o.j.first[std::size_t(ct.y)] - bp.j0 + seg.pj + c;
            const Scalar x = box_c[std::size_t(bi)](pi, pj);
            v = first ? x : v + x;
            first = false;
          }
          msg.buffer[pos++] = v;
        }
    }
    if (msg.peer != me) {
      comm_.isend(msg.buffer.data(), msg.buffer.size() * sizeof(Scalar), msg.peer, kCTag,
                  send_requests_);
      counters_.c_sent += double(msg.a_elems) * sz;
    }
  }

  // beta = 0 must not multiply: it has to clear NaN and Inf in the old C.
  const std::int64_t local = std::int64_t(C_local.extent(0));
  for (std::int64_t e = 0; e < local; ++e)
    C_local(e) = beta == Scalar(0) ? Scalar(0) : beta * C0_local(e);

  const MatrixDist& L = dist_.c;
  for (int s = 0; s < comm_.size(); ++s) {
    const Message* msg = nullptr;
    if (s == me) {
      if (self_c_ >= 0) msg = &c_out_[std::size_t(self_c_)];
    } else if (!c_in_[std::size_t(s)].buffer.empty()) {
      counters_.recv_mpi += Communicator::wait_all_received(c_requests_[std::size_t(s)]);
      msg = &c_in_[std::size_t(s)];
      counters_.c_recv += double(msg->a_elems) * sz;
    }
    if (!msg) continue;
    std::size_t pos = 0;
    for (const auto& seg : msg->a) {
      Scalar* dst = C_local.data() + L.offset(seg.gi, seg.gj);
      const std::int64_t ld = L.ld(seg.gi, seg.gj);
      for (std::int64_t c = 0; c < seg.cols; ++c)
        for (std::int64_t r = 0; r < seg.rows; ++r) dst[r + c * ld] += msg->buffer[pos++];
    }
  }
  Communicator::wait_all(send_requests_);
}

template class Exchange<double>;
template class Exchange<float>;

}  // namespace cuboid::dist
