#pragma once
// Point-to-point traffic of one distributed product, non-blocking throughout.
//
// Zones are boxes of positions of a TileOrder (distribution.hpp); a box's panels are the rows
// and columns of its positions in that order, so a rank whose zone matches what it owns reads
// its local arrays in place.
//
// Inputs. A rank's zone is cut into pieces (k-slabs of its boxes, strategy.hpp; a box whose A
// and B the rank owns entirely is one piece: there is nothing to wait for). Piece s is "stage"
// s: the A and B tiles it needs that no earlier piece needed arrive in the stage-s messages
// (tag s), one message per (owner, stage) holding the owner's parts of those tiles, A then B,
// in the order both sides enumerate (MatrixDist::for_each_piece). Every receive is posted up
// front; the rank waits only for stage s before computing piece s, so later stages travel
// while earlier pieces compute (the runner calls progress() meanwhile). A received part is
// unpacked straight into the panel of the piece that needs it first; only tiles a later piece
// needs again are kept, and each is freed after its last use. Tiles a rank owns are copied from
// its local array into the panel, or not at all when the panel is the local array itself.
//
// Partial C. After its last piece a rank holds one partial C block per box (alpha applied).
// For every C tile of its zone it sums its boxes' partials (box order) and sends the parts to
// the tiles' owners. An owner computes C = beta*C0 + sum of the partials in rank order (its own
// among them), so beta*C0 is applied exactly once and the result does not depend on arrival
// order. When a rank's zone is one box whose C is exactly its own local C and no other zone
// touches it, the GEMMs write C in place (beta applied by the first) and nothing is reduced.
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "dist/communicator.hpp"
#include "dist/distribution.hpp"
#include "dist/strategy.hpp"
#include "exec/matrices.hpp"

namespace cuboid::dist {

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
  // nothing: all lists derive from the zones and the distribution.
  Exchange(const Communicator& comm, const std::vector<partition::TileZone>& zones,
           const TileOrder& order, const Distribution& dist, int slabs_per_box);

  const std::vector<Piece>& pieces() const { return pieces_; }
  int boxes() const { return int(box_panels_.size()); }
  // Panel extents of piece s (A: rows x depth, B: depth x cols) and of each box's C.
  exec::Rect a_panel_of(int s) const { return a_panel(order_, pieces_[std::size_t(s)].box); }
  exec::Rect b_panel_of(int s) const { return b_panel(order_, pieces_[std::size_t(s)].box); }
  const exec::Rect& box_panel(int b) const { return box_panels_[std::size_t(b)]; }
  // In place: piece s reads A (B) from the local array; the zone writes C into the local array.
  bool a_in_place(int s) const { return a_in_place_[std::size_t(s)]; }
  bool b_in_place(int s) const { return b_in_place_[std::size_t(s)]; }
  bool c_in_place() const { return c_in_place_; }
  // Bytes of the tiles kept for later pieces, at most at once (peak of the carry store).
  double carry_peak_bytes() const { return carry_peak_ * double(sizeof(Scalar)); }

  // Posts every receive of this product, then packs and sends this rank's A and B parts.
  void start(const Storage& A_local, const Storage& B_local);
  // Waits for stage s and fills the panels of piece s that are not in place.
  void inputs_for(int s, const Storage& A_local, const Storage& B_local, const Matrix& A_panel,
                  const Matrix& B_panel);
  // Lets MPI move messages while the caller computes (between waits nothing else would) and
  // retires completed requests; false when none is left outstanding.
  bool progress();
  // Sends this rank's partials and reduces the owned C blocks into C_local; waits for every
  // send of the product before returning. Nothing to do when C is in place.
  void reduce(const std::vector<Matrix>& box_c, const Storage& C0_local, Scalar beta,
              const Storage& C_local);

  TrafficCounters counters() const { return counters_; }

 private:
  struct Segment {                                    // one tile-and-unit intersection
    std::int64_t gi = 0, gj = 0, rows = 0, cols = 0;  // global position and extent
    std::int64_t pi = 0, pj = 0;  // receiver: position in the panel (inputs) or box (C tile)
    int carry = -1;               // inputs: carry slot to copy it into too; C: the C tile
  };
  struct Message {
    int peer = 0;
    int tag = 0;
    std::vector<Segment> a, b;  // inputs: A part then B part; C messages use `a` only
    std::int64_t a_elems = 0, b_elems = 0;
    std::vector<Scalar> buffer;
  };
  struct CTile {
    std::int64_t x = 0, y = 0;  // positions
    std::vector<int> boxes;     // boxes of this rank covering it, in box order
  };
  struct Carried {  // a received input tile a later piece needs again
    std::int64_t gi = 0, gj = 0, rows = 0, cols = 0;
    int last_piece = 0;
    std::vector<Scalar> data;  // column-major rows x cols, allocated when it arrives
  };
  struct PanelCopy {  // part of a panel that comes from the local array or a carried tile
    std::int64_t gi = 0, gj = 0, rows = 0, cols = 0, pi = 0, pj = 0;
    int carry = -1;  // -1: from the local array
  };

  const Communicator& comm_;
  TileOrder order_;
  const Distribution& dist_;
  std::vector<Piece> pieces_;
  std::vector<exec::Rect> box_panels_;  // C panel of each box (positions' elements)
  std::vector<char> a_in_place_, b_in_place_;
  bool c_in_place_ = false;

  // Inputs, per stage of this rank.
  std::vector<std::vector<Message>> incoming_;
  std::vector<std::vector<PanelCopy>> copies_a_, copies_b_;
  std::vector<std::vector<MPI_Request>> stage_requests_;
  std::vector<Message> outgoing_;  // to other ranks, every stage
  std::vector<MPI_Request> send_requests_;
  std::vector<Carried> carried_;
  std::vector<std::vector<int>> free_after_;  // carry slots whose last use is stage s
  double carry_bytes_now_ = 0, carry_peak_ = 0;

  // Partial C.
  std::vector<CTile> c_tiles_;
  std::vector<Message> c_out_;  // one per owner this rank sends to (itself included)
  std::vector<Message> c_in_;   // one per rank, in rank order (empty when none)
  std::vector<std::vector<MPI_Request>> c_requests_;  // per rank
  int self_c_ = -1;                                   // index in c_out_ of the self part

  TrafficCounters counters_;
};

}  // namespace cuboid::dist
