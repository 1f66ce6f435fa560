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

using TileKey = std::pair<std::int64_t, std::int64_t>;

// Calls visit(stage, is_a, x, y) for each A tile (i, l) and B tile (l, j) the pieces need, at
// the first piece that needs it: A tiles l-major, then B tiles j-major, piece by piece.
template <class F>
void for_each_new_tile(const std::vector<Piece>& pieces, F&& visit) {
  std::set<TileKey> seen_a, seen_b;
  for (std::size_t s = 0; s < pieces.size(); ++s) {
    const auto& b = pieces[s].box;
    for (std::int64_t l = b.lo[2]; l < b.hi[2]; ++l)
      for (std::int64_t i = b.lo[0]; i < b.hi[0]; ++i)
        if (seen_a.insert({i, l}).second) visit(int(s), true, i, l);
    for (std::int64_t j = b.lo[1]; j < b.hi[1]; ++j)
      for (std::int64_t l = b.lo[2]; l < b.hi[2]; ++l)
        if (seen_b.insert({l, j}).second) visit(int(s), false, l, j);
  }
}

// The C tiles of a zone with the boxes covering each, sorted by (j, i).
std::map<TileKey, std::vector<int>> c_tiles_of(const partition::TileZone& zone) {
  std::map<TileKey, std::vector<int>> out;
  int index = 0;
  for (const auto& b : zone) {
    if (b.empty()) continue;
    for (std::int64_t j = b.lo[1]; j < b.hi[1]; ++j)
      for (std::int64_t i = b.lo[0]; i < b.hi[0]; ++i) out[{j, i}].push_back(index);
    ++index;
  }
  return out;
}

}  // namespace

template <class Scalar>
Exchange<Scalar>::Exchange(const Communicator& comm, const std::vector<partition::TileZone>& zones,
                           int slabs_per_box, const Layouts& layouts, std::int64_t m,
                           std::int64_t n, std::int64_t k, std::int64_t tile)
    : comm_(comm), layouts_(layouts), m_(m), n_(n), k_(k), tile_(tile) {
  const int me = comm.rank(), P = comm.size();
  if (int(zones.size()) != P) throw std::invalid_argument("exchange: one zone per rank is needed");
  const std::int64_t t = tile;
  auto a_tile = [&](std::int64_t i, std::int64_t l) {
    return exec::Rect{i * t, std::min((i + 1) * t, m), l * t, std::min((l + 1) * t, k)};
  };
  auto b_tile = [&](std::int64_t l, std::int64_t j) {
    return exec::Rect{l * t, std::min((l + 1) * t, k), j * t, std::min((j + 1) * t, n)};
  };
  auto c_tile = [&](std::int64_t i, std::int64_t j) {
    return exec::Rect{i * t, std::min((i + 1) * t, m), j * t, std::min((j + 1) * t, n)};
  };

  std::vector<std::vector<Piece>> all(static_cast<std::size_t>(P));
  for (int d = 0; d < P; ++d) all[std::size_t(d)] = pieces_of(zones[std::size_t(d)], slabs_per_box);
  pieces_ = all[std::size_t(me)];
  if (pieces_.size() >= std::size_t(kCTag))
    throw std::invalid_argument("exchange: too many pieces for one rank (" +
                                std::to_string(pieces_.size()) + ")");
  for (const auto& b : zones[std::size_t(me)])
    if (!b.empty()) box_rects_.push_back(c_rect(b, m, n, t)), ++boxes_;

  // What this rank receives, stage by stage, and what it copies from its own blocks.
  const std::size_t S = pieces_.size();
  incoming_.resize(S), own_a_.resize(S), own_b_.resize(S), stage_requests_.resize(S);
  {
    std::vector<std::map<int, Message>> by_source(S);
    for_each_new_tile(pieces_, [&](int s, bool is_a, std::int64_t x, std::int64_t y) {
      const exec::Rect r = is_a ? a_tile(x, y) : b_tile(x, y);
      auto& tiles = is_a ? a_tiles_ : b_tiles_;
      const int idx = int(tiles.size());
      (is_a ? a_index_ : b_index_)[{x, y}] = idx;
      tiles.emplace_back(
          Kokkos::view_alloc(Kokkos::WithoutInitializing,
                             std::string(is_a ? "cuboid::dist::A_tile" : "cuboid::dist::B_tile")),
          r.rows(), r.cols());
      (is_a ? layouts.a : layouts.b).for_each_piece(r, [&](const exec::Rect& p, int o) {
        const Segment seg{p.i0, p.j0, p.rows(), p.cols(), idx};
        if (o == me) {
          (is_a ? own_a_ : own_b_)[std::size_t(s)].push_back(seg);
          return;
        }
        Message& msg = by_source[std::size_t(s)][o];
        msg.peer = o, msg.tag = s;
        (is_a ? msg.a : msg.b).push_back(seg);
        (is_a ? msg.a_elems : msg.b_elems) += p.rows() * p.cols();
      });
    });
    for (std::size_t s = 0; s < S; ++s)
      for (auto& [o, msg] : by_source[s]) {
        msg.buffer.resize(std::size_t(msg.a_elems + msg.b_elems));
        incoming_[s].push_back(std::move(msg));
      }
  }

  // What this rank sends to each other rank, stage by stage.
  for (int d = 0; d < P; ++d) {
    if (d == me) continue;
    std::map<int, Message> by_stage;
    for_each_new_tile(all[std::size_t(d)], [&](int s, bool is_a, std::int64_t x, std::int64_t y) {
      const exec::Rect r = is_a ? a_tile(x, y) : b_tile(x, y);
      (is_a ? layouts.a : layouts.b).for_each_piece(r, [&](const exec::Rect& p, int o) {
        if (o != me) return;
        Message& msg = by_stage[s];
        msg.peer = d, msg.tag = s;
        (is_a ? msg.a : msg.b).push_back(Segment{p.i0, p.j0, p.rows(), p.cols(), -1});
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

  // Partial C: what this rank sends, per owner.
  {
    std::map<int, Message> by_owner;
    for (const auto& [key, boxes] : c_tiles_of(zones[std::size_t(me)])) {
      const int idx = int(c_tiles_.size());
      c_tiles_.push_back(CTile{key.second, key.first, boxes});
      layouts.c.for_each_piece(c_tile(key.second, key.first), [&](const exec::Rect& p, int o) {
        Message& msg = by_owner[o];
        msg.peer = o, msg.tag = kCTag;
        msg.a.push_back(Segment{p.i0, p.j0, p.rows(), p.cols(), idx});
        msg.a_elems += p.rows() * p.cols();
      });
    }
    for (auto& [o, msg] : by_owner) {
      msg.buffer.resize(std::size_t(msg.a_elems));
      if (o == me) self_c_ = int(c_out_.size());
      c_out_.push_back(std::move(msg));
    }
  }
  // ...and what it receives, per source, in rank order.
  c_in_.resize(std::size_t(P));
  c_requests_.resize(std::size_t(P));
  for (int s = 0; s < P; ++s) {
    if (s == me) continue;
    Message& msg = c_in_[std::size_t(s)];
    msg.peer = s, msg.tag = kCTag;
    for (const auto& [key, boxes] : c_tiles_of(zones[std::size_t(s)]))
      layouts.c.for_each_piece(c_tile(key.second, key.first), [&](const exec::Rect& p, int o) {
        if (o != me) return;
        msg.a.push_back(Segment{p.i0, p.j0, p.rows(), p.cols(), -1});
        msg.a_elems += p.rows() * p.cols();
      });
    msg.buffer.resize(std::size_t(msg.a_elems));
  }
}

template <class Scalar>
void Exchange<Scalar>::start(const Matrix& A_local, const Matrix& B_local) {
  counters_ = {};
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
    auto pack = [&](const std::vector<Segment>& segs, const Matrix& X, const BlockCyclic& L) {
      for (const auto& seg : segs) {
        const std::int64_t r0 = L.local_row(seg.gi), c0 = L.local_col(seg.gj);
        for (std::int64_t c = 0; c < seg.cols; ++c)
          for (std::int64_t r = 0; r < seg.rows; ++r) msg.buffer[pos++] = X(r0 + r, c0 + c);
      }
    };
    pack(msg.a, A_local, layouts_.a);
    pack(msg.b, B_local, layouts_.b);
    comm_.isend(msg.buffer.data(), msg.buffer.size() * sizeof(Scalar), msg.peer, msg.tag,
                send_requests_);
    counters_.a_sent += double(msg.a_elems) * sz;
    counters_.b_sent += double(msg.b_elems) * sz;
  }
}

template <class Scalar>
void Exchange<Scalar>::inputs_for(int s, const Matrix& A_local, const Matrix& B_local,
                                  const Matrix& A_panel, const Matrix& B_panel) {
  const std::size_t st = std::size_t(s);
  Communicator::wait_all(stage_requests_[st]);
  const double sz = double(sizeof(Scalar));
  const std::int64_t t = tile_;
  for (const auto& msg : incoming_[st]) {
    std::size_t pos = 0;
    auto unpack = [&](const std::vector<Segment>& segs, std::vector<Matrix>& tiles) {
      for (const auto& seg : segs) {
        const Matrix& T = tiles[std::size_t(seg.tile)];
        const std::int64_t r0 = seg.gi % t, c0 = seg.gj % t;
        for (std::int64_t c = 0; c < seg.cols; ++c)
          for (std::int64_t r = 0; r < seg.rows; ++r) T(r0 + r, c0 + c) = msg.buffer[pos++];
      }
    };
    unpack(msg.a, a_tiles_);
    unpack(msg.b, b_tiles_);
    counters_.a_recv += double(msg.a_elems) * sz;
    counters_.b_recv += double(msg.b_elems) * sz;
  }
  auto copy_own = [&](const std::vector<Segment>& segs, const Matrix& X, const BlockCyclic& L,
                      std::vector<Matrix>& tiles) {
    for (const auto& seg : segs) {
      const Matrix& T = tiles[std::size_t(seg.tile)];
      const std::int64_t r0 = seg.gi % t, c0 = seg.gj % t;
      const std::int64_t lr = L.local_row(seg.gi), lc = L.local_col(seg.gj);
      for (std::int64_t c = 0; c < seg.cols; ++c)
        for (std::int64_t r = 0; r < seg.rows; ++r) T(r0 + r, c0 + c) = X(lr + r, lc + c);
    }
  };
  copy_own(own_a_[st], A_local, layouts_.a, a_tiles_);
  copy_own(own_b_[st], B_local, layouts_.b, b_tiles_);

  // Panels of the piece, tile by tile.
  const auto& b = pieces_[st].box;
  for (std::int64_t l = b.lo[2]; l < b.hi[2]; ++l)
    for (std::int64_t i = b.lo[0]; i < b.hi[0]; ++i) {
      const Matrix& T = a_tiles_[std::size_t(a_index_.at({i, l}))];
      const std::int64_t r0 = (i - b.lo[0]) * t, c0 = (l - b.lo[2]) * t;
      for (std::int64_t c = 0; c < std::int64_t(T.extent(1)); ++c)
        for (std::int64_t r = 0; r < std::int64_t(T.extent(0)); ++r)
          A_panel(r0 + r, c0 + c) = T(r, c);
    }
  for (std::int64_t j = b.lo[1]; j < b.hi[1]; ++j)
    for (std::int64_t l = b.lo[2]; l < b.hi[2]; ++l) {
      const Matrix& T = b_tiles_[std::size_t(b_index_.at({l, j}))];
      const std::int64_t r0 = (l - b.lo[2]) * t, c0 = (j - b.lo[1]) * t;
      for (std::int64_t c = 0; c < std::int64_t(T.extent(1)); ++c)
        for (std::int64_t r = 0; r < std::int64_t(T.extent(0)); ++r)
          B_panel(r0 + r, c0 + c) = T(r, c);
    }
}

template <class Scalar>
void Exchange<Scalar>::reduce(const std::vector<Matrix>& box_c, const Matrix& C0_local, Scalar beta,
                              const Matrix& C_local) {
  // Partials may have been written by a device processor through the engine: let every
  // Kokkos space finish before MPI reads host memory.
  Kokkos::fence();
  const double sz = double(sizeof(Scalar));
  const int me = comm_.rank();
  for (auto& msg : c_out_) {
    std::size_t pos = 0;
    for (const auto& seg : msg.a) {
      const CTile& ct = c_tiles_[std::size_t(seg.tile)];
      for (std::int64_t c = 0; c < seg.cols; ++c)
        for (std::int64_t r = 0; r < seg.rows; ++r) {
          Scalar v = 0;
          bool first = true;
          for (int bi : ct.boxes) {
            const exec::Rect& br = box_rects_[std::size_t(bi)];
            const Scalar x = box_c[std::size_t(bi)](seg.gi + r - br.i0, seg.gj + c - br.j0);
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
  const std::int64_t lr = std::int64_t(C_local.extent(0)), lc = std::int64_t(C_local.extent(1));
  for (std::int64_t c = 0; c < lc; ++c)
    for (std::int64_t r = 0; r < lr; ++r)
      C_local(r, c) = beta == Scalar(0) ? Scalar(0) : beta * C0_local(r, c);

  const BlockCyclic& L = layouts_.c;
  for (int s = 0; s < comm_.size(); ++s) {
    const Message* msg = nullptr;
    if (s == me) {
      if (self_c_ >= 0) msg = &c_out_[std::size_t(self_c_)];
    } else if (!c_in_[std::size_t(s)].buffer.empty()) {
      Communicator::wait_all(c_requests_[std::size_t(s)]);
      msg = &c_in_[std::size_t(s)];
      counters_.c_recv += double(msg->a_elems) * sz;
    }
    if (!msg) continue;
    std::size_t pos = 0;
    for (const auto& seg : msg->a) {
      const std::int64_t r0 = L.local_row(seg.gi), c0 = L.local_col(seg.gj);
      for (std::int64_t c = 0; c < seg.cols; ++c)
        for (std::int64_t r = 0; r < seg.rows; ++r) C_local(r0 + r, c0 + c) += msg->buffer[pos++];
    }
  }
  Communicator::wait_all(send_requests_);
}

template class Exchange<double>;
template class Exchange<float>;

}  // namespace cuboid::dist
