#pragma once
// Point-to-point traffic of one distributed product, non-blocking throughout.
//
// Inputs. A rank's zone is cut into pieces (k-slabs of its boxes, strategy.hpp). Piece s is
// "stage" s: the A and B tiles it needs that no earlier piece needed arrive in the stage-s
// messages (tag s), one message per (owner, stage) holding the owner's parts of those tiles,
// A then B, in the order both sides enumerate (BlockCyclic::for_each_piece). Every receive is
// posted up front; the rank waits only for stage s before computing piece s, so later stages
// travel while earlier pieces compute. Tiles a rank owns itself are copied, never sent.
//
// Partial C. After its last piece a rank holds one partial C block per box (alpha applied).
// For every C tile of its zone it sums its boxes' partials (box order) and sends the parts to
// the tiles' owners in the C layout. An owner computes C = beta*C0 + sum of the partials in
// rank order (its own among them), so beta*C0 is applied exactly once and the result does not
// depend on arrival order. The C receives are posted with the input receives.
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "dist/communicator.hpp"
#include "dist/model.hpp"
#include "dist/strategy.hpp"
#include "exec/matrices.hpp"

namespace cuboid::dist {

struct TrafficCounters {  // bytes of one product
  double a_sent = 0, a_recv = 0, b_sent = 0, b_recv = 0, c_sent = 0, c_recv = 0;
};

template <class Scalar>
class Exchange {
 public:
  using Matrix = exec::HostMatrix<Scalar>;

  // Collective in spirit (every rank must build one from the same zones) but communicates
  // nothing: all lists derive from the zones and the layouts.
  Exchange(const Communicator& comm, const std::vector<partition::TileZone>& zones,
           int slabs_per_box, const Layouts& layouts, std::int64_t m, std::int64_t n,
           std::int64_t k, std::int64_t tile);

  const std::vector<Piece>& pieces() const { return pieces_; }
  int boxes() const { return boxes_; }

  // Posts every receive of this product, then packs and sends this rank's A and B parts.
  void start(const Matrix& A_local, const Matrix& B_local);
  // Waits for stage s and fills the panels of piece s (A: rows x depth, B: depth x cols).
  void inputs_for(int s, const Matrix& A_local, const Matrix& B_local, const Matrix& A_panel,
                  const Matrix& B_panel);
  // Sends this rank's partials and reduces the owned C blocks into C_local; waits for every
  // send of the product before returning.
  void reduce(const std::vector<Matrix>& box_c, const Matrix& C0_local, Scalar beta,
              const Matrix& C_local);

  TrafficCounters counters() const { return counters_; }

 private:
  struct Segment {                                    // one tile-and-block intersection
    std::int64_t gi = 0, gj = 0, rows = 0, cols = 0;  // global position and extent
    int tile = -1;                                    // tile store index (inputs) or C tile
  };
  struct Message {
    int peer = 0;
    int tag = 0;
    std::vector<Segment> a, b;  // inputs: A part then B part; C messages use `a` only
    std::int64_t a_elems = 0, b_elems = 0;
    std::vector<Scalar> buffer;
  };
  struct CTile {
    std::int64_t i = 0, j = 0;  // tile coordinates
    std::vector<int> boxes;     // boxes of this rank covering it, in box order
  };

  const Communicator& comm_;
  const Layouts& layouts_;
  std::int64_t m_, n_, k_, tile_;
  int boxes_ = 0;
  std::vector<Piece> pieces_;
  std::vector<exec::Rect> box_rects_;  // C rectangle of each box, elements

  // Inputs, per stage of this rank.
  std::vector<std::vector<Message>> incoming_;
  std::vector<std::vector<Segment>> own_a_, own_b_;
  std::vector<std::vector<MPI_Request>> stage_requests_;
  std::vector<Message> outgoing_;  // to other ranks, every stage
  std::vector<MPI_Request> send_requests_;
  std::map<std::pair<std::int64_t, std::int64_t>, int> a_index_, b_index_;
  std::vector<Matrix> a_tiles_, b_tiles_;

  // Partial C.
  std::vector<CTile> c_tiles_;
  std::vector<Message> c_out_;  // one per owner this rank sends to (itself included)
  std::vector<Message> c_in_;   // one per rank, in rank order (empty when none)
  std::vector<std::vector<MPI_Request>> c_requests_;  // per rank
  int self_c_ = -1;                                   // index in c_out_ of the self part

  TrafficCounters counters_;
};

}  // namespace cuboid::dist
