#include "mpi/exchange.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "util/trace.hpp"

namespace cuboid::mpi {
namespace {
// The track of a rank's messages in a trace (the rank is the trace's process).
const std::string kTrack = "messages";
}  // namespace

using layout::CommPlan;
using layout::Distribution;
using layout::for_each_run;
using layout::make_comm_plan;
using layout::MatrixDist;
using layout::TileOrder;
namespace {

template <class Scalar>
std::vector<std::vector<Scalar, exec::meter::Allocator<Scalar>>> buffers_for(
    const std::vector<CommPlan::Message>& messages) {
  std::vector<std::vector<Scalar, exec::meter::Allocator<Scalar>>> out;
  for (const auto& msg : messages) out.emplace_back(std::size_t(msg.elements()));
  return out;
}

}  // namespace

template <class Scalar>
Exchange<Scalar>::Exchange(const Communicator& comm, const std::vector<partition::TileZone>& zones,
                           const TileOrder& order, const Distribution& dist, int slabs_per_box,
                           int window)
    : Exchange(comm, make_comm_plan(comm.rank(), comm.size(), zones, order, dist, slabs_per_box),
               dist, window) {}

template <class Scalar>
Exchange<Scalar>::Exchange(const Communicator& comm, CommPlan plan, const Distribution& dist,
                           int window)
    : comm_(comm), dist_(dist), plan_(std::move(plan)) {
  if (plan_.rank != comm.rank() || plan_.ranks != comm.size())
    throw std::invalid_argument("exchange: the plan is not this rank's");
  const int stages = int(plan_.incoming.size());
  window_ = std::max(1, window <= 0 ? stages : std::min(window, stages));
  std::vector<std::size_t> slot_size(std::size_t(window_), 0);
  for (std::size_t s = 0; s < plan_.incoming.size(); ++s) {
    std::size_t at = 0;
    offsets_.emplace_back();
    for (const auto& msg : plan_.incoming[s])
      offsets_.back().push_back(at), at += std::size_t(msg.elements());
    auto& size = slot_size[s % std::size_t(window_)];
    size = std::max(size, at);
  }
  for (std::size_t size : slot_size) slots_.emplace_back(size);
  c_out_ = buffers_for<Scalar>(plan_.c_out);
  // This rank's own partials are added into its C straight from the boxes (reduce): no buffer.
  if (plan_.self_c >= 0) Buffer().swap(c_out_[std::size_t(plan_.self_c)]);
  c_in_ = buffers_for<Scalar>(plan_.c_in);
  std::size_t elements = 0;
  for (const auto* buffers : {&slots_, &c_out_, &c_in_})
    for (const auto& b : *buffers) elements += b.size();
  buffer_bytes_ = double(elements) * double(sizeof(Scalar));
  stage_requests_.resize(plan_.incoming.size());
  c_requests_.resize(std::size_t(comm.size()));
  carried_.resize(plan_.carried.size());
}

template <class Scalar>
void Exchange<Scalar>::start(const Storage& A_local, const Storage& B_local) {
  counters_ = {};
  carry_bytes_now_ = 0;
  const double sz = double(sizeof(Scalar));
  for (int s = 0; s < comm_.size(); ++s) {
    auto& buffer = c_in_[std::size_t(s)];
    if (s != comm_.rank() && !buffer.empty())
      comm_.irecv(buffer.data(), buffer.size() * sizeof(Scalar), s, CommPlan::c_tag,
                  c_requests_[std::size_t(s)]);
  }
  if (trace::on()) trace::instant(kTrack, "post partial C receives", trace::Clock::now());
  for (std::size_t s = 0; s < std::size_t(window_) && s < plan_.incoming.size(); ++s) post(s);
  std::vector<Communicator::Block> blocks;
  for (const Message& msg : plan_.outgoing) {
    blocks.clear();
    // Run by run, column by column, as the receiver unpacks them; adjacent blocks are sent as one.
    auto gather = [&](const std::vector<CommPlan::Segment>& segs, const Storage& X,
                      const MatrixDist& L) {
      for_each_run(segs, [&](std::size_t first, std::size_t end) {
        for (std::int64_t c = 0; c < segs[first].cols; ++c)
          for (std::size_t q = first; q < end; ++q) {
            const auto& seg = segs[q];
            const Scalar* src = X.data() + L.offset(seg.gi, seg.gj) + c * L.ld(seg.gi, seg.gj);
            blocks.push_back({src, std::size_t(seg.rows) * sizeof(Scalar)});
          }
      });
    };
    gather(msg.a, A_local, dist_.a);
    gather(msg.b, B_local, dist_.b);
    comm_.isend_blocks(blocks, msg.peer, msg.tag, send_requests_);
    if (trace::on())
      trace::instant(kTrack, "send inputs", trace::Clock::now(),
                     "\"to\": " + std::to_string(msg.peer) +
                         ", \"elements\": " + std::to_string(msg.a_elems + msg.b_elems));
    counters_.a_sent += double(msg.a_elems) * sz;
    counters_.b_sent += double(msg.b_elems) * sz;
  }
}

template <class Scalar>
void Exchange<Scalar>::post(std::size_t s) {
  if (trace::on())
    trace::instant(kTrack, "post receives", trace::Clock::now(), "\"piece\": " + std::to_string(s));
  for (std::size_t m = 0; m < plan_.incoming[s].size(); ++m) {
    const Message& msg = plan_.incoming[s][m];
    comm_.irecv(stage_data(s, m), std::size_t(msg.elements()) * sizeof(Scalar), msg.peer, msg.tag,
                stage_requests_[s]);
  }
}

template <class Scalar>
void Exchange<Scalar>::release() {
  for (auto* buffers : {&slots_, &c_out_, &c_in_})
    for (auto& b : *buffers) Buffer().swap(b);
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

// With one thread per rank, a message whose sender is copying outside MPI does not move (a large
// one waits for the sender's next MPI call to be matched): long copies into the panels give MPI
// a chance every kProgressBytes, a few tens of microseconds of copying.
template <class Scalar>
void Exchange<Scalar>::progress_while_copying(std::size_t bytes) const {
  copied_since_progress_ += bytes;
  if (copied_since_progress_ < kProgressBytes) return;
  copied_since_progress_ = 0;
  comm_.progress();
}

// Received parts go into the panels, and into the carry store when a later piece needs them.
template <class Scalar>
void Exchange<Scalar>::unpack(const Message& msg, const Scalar* data, const Matrix& A_panel,
                              const Matrix& B_panel) {
  const double sz = double(sizeof(Scalar));
  std::size_t pos = 0;
  // Run by run, column by column (for_each_run); a carried segment is kept column-major.
  auto unpack_part = [&](const std::vector<CommPlan::Segment>& segs, const Matrix& panel) {
    for_each_run(segs, [&](std::size_t first, std::size_t end) {
      for (std::size_t q = first; q < end; ++q)
        if (segs[q].carry >= 0) {
          auto& keep = carried_[std::size_t(segs[q].carry)];
          keep.resize(std::size_t(segs[q].elements()));
          carry_bytes_now_ += double(keep.size()) * sz;
        }
      for (std::int64_t c = 0; c < segs[first].cols; ++c)
        for (std::size_t q = first; q < end; ++q) {
          const auto& seg = segs[q];
          const Scalar* src = data + pos;
          std::copy_n(src, seg.rows, &panel(seg.pi, seg.pj + c));
          if (seg.carry >= 0)
            std::copy_n(src, seg.rows, carried_[std::size_t(seg.carry)].data() + c * seg.rows);
          progress_while_copying(std::size_t(seg.rows) * sizeof(Scalar));
          pos += std::size_t(seg.rows);
        }
    });
  };
  unpack_part(msg.a, A_panel);
  unpack_part(msg.b, B_panel);
  counters_.a_recv += double(msg.a_elems) * sz;
  counters_.b_recv += double(msg.b_elems) * sz;
}

template <class Scalar>
void Exchange<Scalar>::fill(const std::vector<CommPlan::PanelCopy>& copies, const Storage& X,
                            const MatrixDist& L, const Matrix& panel) const {
  for (const auto& cp : copies) {
    const Scalar* src;
    std::int64_t ld;
    if (cp.carry < 0) {
      src = X.data() + L.offset(cp.gi, cp.gj), ld = L.ld(cp.gi, cp.gj);
    } else {
      src = carried_[std::size_t(cp.carry)].data(), ld = cp.rows;
    }
    for (std::int64_t c = 0; c < cp.cols; ++c) {
      std::copy_n(src + c * ld, cp.rows, &panel(cp.pi, cp.pj + c));
      progress_while_copying(std::size_t(cp.rows) * sizeof(Scalar));
    }
  }
}

template <class Scalar>
void Exchange<Scalar>::inputs_for(int s, const Storage& A_local, const Storage& B_local,
                                  const Matrix& A_panel, const Matrix& B_panel) {
  const std::size_t st = std::size_t(s);
  const std::string piece = trace::on() ? "\"piece\": " + std::to_string(s) : std::string();
  {
    // Short when the receives completed while the previous pieces computed.
    trace::Span waited(kTrack, "wait for inputs", piece);
    counters_.recv_mpi += Communicator::wait_all_received(stage_requests_[st]);
  }
  trace::Span span(kTrack, "unpack inputs", piece);
  for (std::size_t m = 0; m < plan_.incoming[st].size(); ++m)
    unpack(plan_.incoming[st][m], stage_data(st, m), A_panel, B_panel);
  // The slot is free again: the stage `window` ahead receives into it while this piece computes.
  if (st + std::size_t(window_) < plan_.incoming.size()) post(st + std::size_t(window_));
  const double sz = double(sizeof(Scalar));
  carry_peak_ = std::max(carry_peak_, carry_bytes_now_ / sz);
  fill(plan_.copies_a[st], A_local, dist_.a, A_panel);
  fill(plan_.copies_b[st], B_local, dist_.b, B_panel);
  for (int slot : plan_.free_after[st]) {
    auto& keep = carried_[std::size_t(slot)];
    carry_bytes_now_ -= double(keep.size()) * sz;
    Buffer().swap(keep);
  }
}

template <class Scalar>
const Scalar* Exchange<Scalar>::partial_column(const CommPlan::Segment& seg,
                                               const std::vector<Matrix>& box_c, std::int64_t c,
                                               Scalar* out) const {
  const CommPlan::CTile& ct = plan_.c_tiles[std::size_t(seg.carry)];
  auto column = [&](int bi) -> const Scalar* {
    const exec::Rect& bp = plan_.box_panels[std::size_t(bi)];
    return &box_c[std::size_t(bi)](ct.i0 - bp.i0 + seg.pi, ct.j0 - bp.j0 + seg.pj + c);
  };
  if (seg.rows <= 0) return out;
  if (ct.boxes.empty()) {
    std::fill_n(out, seg.rows, Scalar(0));
    return out;
  }
  if (ct.boxes.size() == 1) return column(ct.boxes.front());
  // The same additions, in the same order, as element by element: x0 + x1 + ... per element.
  std::copy_n(column(ct.boxes.front()), seg.rows, out);
  for (std::size_t b = 1; b < ct.boxes.size(); ++b) {
    const Scalar* x = column(ct.boxes[b]);
    for (std::int64_t r = 0; r < seg.rows; ++r) out[r] = out[r] + x[r];
  }
  return out;
}

// The sum of this rank's boxes' partials (box order) for each segment of a partial C message.
template <class Scalar>
void Exchange<Scalar>::sum_partials(const Message& msg, const std::vector<Matrix>& box_c,
                                    Buffer& buffer) const {
  std::size_t pos = 0;
  for (const auto& seg : msg.a)
    for (std::int64_t c = 0; c < seg.cols; ++c) {
      Scalar* out = buffer.data() + pos;
      const Scalar* x = partial_column(seg, box_c, c, out);
      if (x != out) std::copy_n(x, seg.rows, out);
      pos += std::size_t(seg.rows);
    }
}

template <class Scalar>
void Exchange<Scalar>::reduce(const std::vector<Matrix>& box_c, Scalar beta,
                              const Storage& C_local) {
  // Partials may have been written by a device processor through the engine: let every
  // Kokkos space finish before MPI reads host memory.
  Kokkos::fence();
  trace::Span span(kTrack, "reduce partial C");
  if (plan_.c_in_place) {
    Communicator::wait_all(send_requests_);
    return;
  }
  const double sz = double(sizeof(Scalar));
  const int me = comm_.rank();
  for (std::size_t m = 0; m < plan_.c_out.size(); ++m) {
    const Message& msg = plan_.c_out[m];
    if (msg.peer == me) continue;
    sum_partials(msg, box_c, c_out_[m]);
    comm_.isend(c_out_[m].data(), c_out_[m].size() * sizeof(Scalar), msg.peer, CommPlan::c_tag,
                send_requests_);
    counters_.c_sent += double(msg.a_elems) * sz;
  }

  // beta = 0 must not multiply: it has to clear NaN and Inf in the old C.
  Scalar* const c0 = C_local.data();
  const std::size_t local = C_local.extent(0);
  if (beta == Scalar(0))
    std::fill_n(c0, local, Scalar(0));
  else if (beta != Scalar(1))
    for (std::size_t e = 0; e < local; ++e) c0[e] = beta * c0[e];

  // Adds column(seg, c) (seg.rows values) into C for every column of `msg`'s segments, in
  // message order.
  const MatrixDist& L = dist_.c;
  auto add_into_c = [&](const Message& msg, auto&& column) {
    for (const auto& seg : msg.a) {
      Scalar* dst = C_local.data() + L.offset(seg.gi, seg.gj);
      const std::int64_t ld = L.ld(seg.gi, seg.gj);
      for (std::int64_t c = 0; c < seg.cols; ++c) {
        const Scalar* x = column(seg, c);
        Scalar* d = dst + c * ld;
        for (std::int64_t r = 0; r < seg.rows; ++r) d[r] += x[r];
      }
    }
  };
  for (int s = 0; s < comm_.size(); ++s) {
    if (s == me) {
      // In rank order among the others' partials, summed over the boxes as a message would be.
      if (plan_.self_c >= 0) {
        std::vector<Scalar> column;
        add_into_c(plan_.c_out[std::size_t(plan_.self_c)],
                   [&](const CommPlan::Segment& seg, std::int64_t c) {
                     if (column.size() < std::size_t(seg.rows))
                       column.resize(std::size_t(seg.rows));
                     return partial_column(seg, box_c, c, column.data());
                   });
      }
    } else if (!c_in_[std::size_t(s)].empty()) {
      {
        trace::Span waited(kTrack, "wait for partial C", "\"from\": " + std::to_string(s));
        counters_.recv_mpi += Communicator::wait_all_received(c_requests_[std::size_t(s)]);
      }
      const Message& msg = plan_.c_in[std::size_t(s)];
      counters_.c_recv += double(msg.a_elems) * sz;
      const Buffer& buffer = c_in_[std::size_t(s)];
      std::size_t pos = 0;
      add_into_c(msg, [&](const CommPlan::Segment& seg, std::int64_t) {
        const Scalar* x = buffer.data() + pos;
        pos += std::size_t(seg.rows);
        return x;
      });
    }
  }
  Communicator::wait_all(send_requests_);
}

#define CUBOID_EXCHANGE(Scalar) template class Exchange<Scalar>;
CUBOID_FOR_EACH_SCALAR(CUBOID_EXCHANGE)
#undef CUBOID_EXCHANGE

}  // namespace cuboid::mpi
