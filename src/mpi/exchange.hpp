#pragma once
// Executes a communication plan (comm_plan.hpp, which says what travels where), non-blocking
// throughout.
//
// Receives are posted `window` stages ahead (every one up front when the window is 0): the rank
// waits only for stage s before computing piece s, so later stages travel while earlier pieces
// compute (the runner calls progress() meanwhile), and the receive buffers hold `window` stages
// at most. Sends are gathered from the local arrays where they lie: nothing is packed, so a
// rank's parts cost no memory however many ranks need them; a message whose parts make one
// range of memory (for_each_run's order) goes as plain bytes, which MPI copies once.
// A receive posted late costs no deadlock: every send is issued at the start, and a rank waits
// only for receives it posted itself.
// Received parts are unpacked into the panels, carried tiles kept until their last use, owned
// parts copied from the local arrays. After its last piece a rank holds one partial C block per
// box (alpha applied); an owner computes C = beta*C0 + the partials in rank order, so beta*C0
// is applied exactly once and the result does not depend on arrival order. When C is in place
// the GEMMs write it (beta applied by the first) and nothing is reduced.
#include <cstdint>
#include <vector>

#include "exec/matrices.hpp"
#include "exec/memory_meter.hpp"
#include "layout/comm_plan.hpp"
#include "layout/distribution.hpp"
#include "layout/rank_zones.hpp"
#include "mpi/communicator.hpp"

namespace cuboid::mpi {
using layout::CommPlan;
using layout::Distribution;
using layout::LocalBlock;
using layout::MatrixDist;
using layout::Piece;
using layout::TileOrder;

struct TrafficCounters {  // bytes of one product; received bytes as MPI delivered them
  double a_sent = 0, a_recv = 0, b_sent = 0, b_recv = 0, c_sent = 0, c_recv = 0;
  double recv_mpi = 0;  // every receive's MPI_Get_count, summed: must equal a+b+c received
};

template <class Scalar>
class Exchange {
 public:
  using Matrix = exec::HostMatrix<Scalar>;
  using Storage = Kokkos::View<Scalar*, Kokkos::HostSpace>;

  // Collective in spirit (every rank must build one from the same zones) but communicates
  // nothing: the plan derives from the zones and the distribution (make_comm_plan).
  Exchange(const Communicator& comm, const std::vector<partition::TileZone>& zones,
           const TileOrder& order, const Distribution& dist, int slabs_per_box, int window = 0);
  // Executes `plan`, made for this rank of `comm` with `dist`; both must outlive the exchange.
  Exchange(const Communicator& comm, CommPlan plan, const Distribution& dist, int window = 0);

  const CommPlan& plan() const { return plan_; }
  const std::vector<Piece>& pieces() const { return plan_.pieces; }
  int boxes() const { return int(plan_.box_panels.size()); }
  // Panel extents of piece s (A: rows x depth, B: depth x cols) and of each box's C.
  exec::Rect a_panel_of(int s) const { return plan_.a_panels[std::size_t(s)]; }
  exec::Rect b_panel_of(int s) const { return plan_.b_panels[std::size_t(s)]; }
  const exec::Rect& box_panel(int b) const { return plan_.box_panels[std::size_t(b)]; }
  // In place: piece s reads A (B) from a block of the local array, starting there; the zone
  // writes C into the local array.
  LocalBlock a_at(int s) const { return plan_.a_at[std::size_t(s)]; }
  LocalBlock b_at(int s) const { return plan_.b_at[std::size_t(s)]; }
  bool c_in_place() const { return plan_.c_in_place; }
  // Bytes of the tiles kept for later pieces, at most at once (peak of the carry store).
  double carry_peak_bytes() const { return carry_peak_ * double(sizeof(Scalar)); }
  // Bytes of the message buffers, allocated once: the receive slots and partial C both ways.
  double buffer_bytes() const { return buffer_bytes_; }
  // Frees the message buffers once the last product is done (validation may use the memory);
  // the exchange cannot run again.
  void release();
  // Stages whose receives are posted at once.
  int window() const { return window_; }

  // Posts the receives of the first `window` stages, then sends this rank's A and B parts.
  void start(const Storage& A_local, const Storage& B_local);
  // Waits for stage s, fills the panels of piece s that are not in place, and posts the receives
  // of stage s + window into the buffers stage s has left.
  void inputs_for(int s, const Storage& A_local, const Storage& B_local, const Matrix& A_panel,
                  const Matrix& B_panel);
  // Lets MPI move messages while the caller computes (between waits nothing else would) and
  // retires completed requests; false when none is left outstanding.
  bool progress();
  // Sends this rank's partials and reduces the owned C blocks into C_local, which holds C0
  // (C = beta*C0 + the partials); waits for every send of the product before returning.
  // Nothing to do when C is in place.
  void reduce(const std::vector<Matrix>& box_c, Scalar beta, const Storage& C_local);

  TrafficCounters counters() const { return counters_; }

 private:
  // Message buffers count in cuboid's metered memory (exec/memory_meter.hpp).
  using Buffer = std::vector<Scalar, exec::meter::Allocator<Scalar>>;
  using Message = CommPlan::Message;

  void unpack(const Message& msg, const Scalar* data, const Matrix& A_panel, const Matrix& B_panel);
  void post(std::size_t stage);
  Scalar* stage_data(std::size_t stage, std::size_t message) {
    return slots_[stage % std::size_t(window_)].data() + offsets_[stage][message];
  }
  void fill(const std::vector<CommPlan::PanelCopy>& copies, const Storage& X, const MatrixDist& L,
            const Matrix& panel) const;
  // Gives MPI a chance to move messages every kProgressBytes copied (panels are filled outside
  // MPI, and with one thread per rank nothing else would).
  static constexpr std::size_t kProgressBytes = std::size_t(1) << 15;
  void progress_while_copying(std::size_t bytes) const;
  // Column c of `seg`'s part of C summed over this rank's boxes, in box order, column by column
  // (a box's columns are contiguous): written to `out` (seg.rows elements), or, from a single
  // box, that box's own column returned without a copy.
  const Scalar* partial_column(const CommPlan::Segment& seg, const std::vector<Matrix>& box_c,
                               std::int64_t c, Scalar* out) const;
  void sum_partials(const Message& msg, const std::vector<Matrix>& box_c, Buffer& buffer) const;

  const Communicator& comm_;
  const Distribution& dist_;
  const CommPlan plan_;

  // Stage s receives into slot s % window_, its messages one after another (offsets_): a slot
  // is as large as the largest of its stages, allocated once.
  int window_ = 1;
  std::vector<Buffer> slots_;
  std::vector<std::vector<std::size_t>> offsets_;  // per stage and message, in its slot
  std::vector<Buffer> c_out_, c_in_;
  double buffer_bytes_ = 0;
  std::vector<std::vector<MPI_Request>> stage_requests_;  // per stage
  std::vector<MPI_Request> send_requests_;
  std::vector<std::vector<MPI_Request>> c_requests_;  // per rank
  std::vector<Buffer> carried_;                       // per carry slot, while it is needed
  double carry_bytes_now_ = 0, carry_peak_ = 0;

  TrafficCounters counters_;
  mutable std::size_t copied_since_progress_ = 0;
};

}  // namespace cuboid::mpi
