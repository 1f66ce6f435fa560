#pragma once
// The communication plan of one distributed product for one rank: what it computes, which
// parts of A and B it sends to and receives from whom, what it reads in place, and how partial
// C blocks travel to their owners. A pure function of the zones and the distribution (no MPI,
// no Kokkos): every rank builds its own plan and the plans agree without talking, which is what
// lets tests check them against each other and against the traffic model (model.hpp).
// Exchange (exchange.hpp) executes a plan.
//
// Zones are boxes of positions of a TileOrder (distribution.hpp); a box's panels are the rows
// and columns of its positions in that order, so a rank whose zone matches what it owns reads
// its local arrays in place (a panel that is a block of a local array is read there too).
//
// Inputs. A rank's zone is cut into pieces (k-slabs of its boxes, strategy.hpp; a box whose A
// and B the rank owns entirely is one piece: there is nothing to wait for; a box's slabs with
// more of their inputs on the rank run before the others, so that the first waits least). Piece s
// is "stage" s: the A and B tiles it needs that no earlier piece needed arrive in the stage-s
// messages (tag s), one message per (owner, stage) holding the owner's parts of those tiles, A then
// B, in the order both sides enumerate (MatrixDist::for_each_piece). A received part is unpacked
// straight into the panel of the piece that needs it first; only tiles a later piece needs
// again are carried, and each is freed after its last use. Tiles a rank owns are copied from
// its local array into the panel, or not at all when the panel is a block of the local array.
// When every k-slab of a box needs another rank's inputs, the part of the box whose inputs are
// all on the rank is cut out and runs first (pieces_for).
//
// Partial C. After its last piece a rank holds one partial C block per box. For every C tile of
// its zone it sums its boxes' partials (box order) and sends the parts to the tiles' owners (one
// message per owner, tag `c_tag`). An owner adds the partials in rank order, its own among
// them. When a rank's zone is one box whose C is exactly its own local C and no other zone
// touches it, C is written in place and the rank plans no partial C at all.
#include <cstdint>
#include <vector>

#include "exec/plan.hpp"
#include "layout/distribution.hpp"
#include "layout/rank_zones.hpp"
#include "partition/box.hpp"

namespace cuboid::layout {

struct CommVolume {  // elements one rank's plan sends and receives, per matrix
  std::int64_t a_sent = 0, a_recv = 0, b_sent = 0, b_recv = 0, c_sent = 0, c_recv = 0;
};

struct CommPlan {
  // Input stages use tags 0, 1, ...; partial C uses this one. MPI guarantees tags up to 32767.
  static constexpr int c_tag = 32767;

  struct Segment {                                    // one tile-and-unit intersection
    std::int64_t gi = 0, gj = 0, rows = 0, cols = 0;  // global stored position and extent
    std::int64_t pi = 0, pj = 0;  // receiver: position in the panel (inputs) or C tile
    int carry = -1;               // inputs: carry slot to copy it into too; C: the C tile
    std::int64_t elements() const { return rows * cols; }
  };
  struct Message {  // its data travels A then B, each part run by run (for_each_run)
    int peer = 0;
    int tag = 0;
    std::vector<Segment> a, b;  // inputs: A part then B part; C messages use `a` only
    std::int64_t a_elems = 0, b_elems = 0;
    std::int64_t elements() const { return a_elems + b_elems; }
  };
  struct PanelCopy {  // part of a panel that comes from the local array or a carried tile
    std::int64_t gi = 0, gj = 0, rows = 0, cols = 0, pi = 0, pj = 0;
    int carry = -1;  // -1: from the local array
  };
  struct Carried {  // a received input tile part a later piece needs again
    std::int64_t gi = 0, gj = 0, rows = 0, cols = 0;
    int last_piece = 0;
  };
  struct CTile {
    std::int64_t x = 0, y = 0;    // positions along i and j
    std::int64_t i0 = 0, j0 = 0;  // its first element in permuted coordinates
    std::vector<int> boxes;       // boxes of this rank covering it, in box order
  };

  int rank = 0, ranks = 0;
  std::vector<Piece> pieces;
  // Per piece, the stored panels (permuted element coordinates): A rows x depth, B depth x
  // cols, each transposed when its operand is stored transposed, so the multiply applies the op.
  std::vector<exec::Rect> a_panels, b_panels;
  std::vector<exec::Rect> box_panels;  // C panel of each box (positions' elements)
  // Where piece s's stored A (B) panel lies in the local array when it is read in place there.
  std::vector<LocalBlock> a_at, b_at;
  bool c_in_place = false;  // the zone writes C into the local array

  // Inputs, per stage: received messages (by source rank), copies from the local array or
  // carried tiles, and the carry slots whose last use is that stage.
  std::vector<std::vector<Message>> incoming;
  std::vector<std::vector<PanelCopy>> copies_a, copies_b;
  std::vector<std::vector<int>> free_after;
  std::vector<Carried> carried;
  std::vector<Message> outgoing;  // to other ranks, earlier stages first

  // Partial C.
  std::vector<CTile> c_tiles;  // of this rank's zone, by (y, x)
  std::vector<Message> c_out;  // one per owner this rank sends to (itself included)
  std::vector<Message> c_in;   // one per rank, in rank order (no segments when none)
  int self_c = -1;             // index in c_out of the part this rank owns

  // What crosses between ranks (the part of C a rank keeps is not counted).
  CommVolume volume() const;
};

// Consecutive segments of a message's part that continue each other down the same columns of
// the stored matrix (the next one's rows follow on) form a run, and a run's data travels column
// by column across its segments: a run that lies in one column range of the sender's array (a
// slab of A's k blocks spanning every row, say) is one contiguous range there, which MPI sends
// without packing. Calls f(first, end) for each run [first, end) of `segs`, in order. Runs
// depend on the stored positions alone, which sender and receiver share (a segment's panel
// position is the receiver's), so both cut a message into the same runs.
inline bool continues(const CommPlan::Segment& a, const CommPlan::Segment& b) {
  return b.gj == a.gj && b.cols == a.cols && b.gi == a.gi + a.rows;
}
template <class F>
void for_each_run(const std::vector<CommPlan::Segment>& segs, F&& f) {
  for (std::size_t i = 0, j = 0; i < segs.size(); i = j) {
    for (j = i + 1; j < segs.size() && continues(segs[j - 1], segs[j]);) ++j;
    f(i, j);
  }
}

// The plan of `rank` among `ranks` for `zones` (one per rank, in positions of `order`). Every
// rank must build its plan from the same arguments. Throws std::invalid_argument when there is
// not one zone per rank or the rank has more pieces than there are input tags.
CommPlan make_comm_plan(int rank, int ranks, const std::vector<partition::TileZone>& zones,
                        const TileOrder& order, const Distribution& dist, int slabs_per_box);

}  // namespace cuboid::layout
