#include "layout/model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "layout/rank_zones.hpp"
#include "partition/geometry.hpp"

namespace cuboid::layout {
namespace {

// A union of rectangles as disjoint cells of its coordinate compression: zones hold a handful
// of boxes, so the (2b)^2 cells stay tiny.
std::vector<exec::Rect> disjoint_union(const std::vector<exec::Rect>& rects) {
  std::vector<std::int64_t> xs, ys;
  for (const auto& r : rects) {
    if (r.rows() <= 0 || r.cols() <= 0) continue;
    xs.push_back(r.i0), xs.push_back(r.i1), ys.push_back(r.j0), ys.push_back(r.j1);
  }
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  std::sort(ys.begin(), ys.end());
  ys.erase(std::unique(ys.begin(), ys.end()), ys.end());
  std::vector<exec::Rect> out;
  for (std::size_t a = 0; a + 1 < xs.size(); ++a)
    for (std::size_t b = 0; b + 1 < ys.size(); ++b) {
      const exec::Rect cell{xs[a], xs[a + 1], ys[b], ys[b + 1]};
      for (const auto& r : rects)
        if (r.i0 <= cell.i0 && cell.i1 <= r.i1 && r.j0 <= cell.j0 && cell.j1 <= r.j1) {
          out.push_back(cell);
          break;
        }
    }
  return out;
}

// Elements of a cell of positions (rows [x0,x1) of `rows`, columns [y0,y1) of `cols`) that
// each rank owns. Block-cyclic ownership is separable: per-axis prefix counts by process
// coordinate make a cell O(P_r * P_c). Tile owners are counted tile by tile.
class OwnerCounter {
 public:
  OwnerCounter(const MatrixDist& d, const AxisOrder& rows, const AxisOrder& cols)
      : d_(d), rows_(rows), cols_(cols) {
    if (d.kind() != MatrixDist::Kind::block_cyclic) return;
    const BlockCyclic& L = d.block_cyclic();
    row_prefix_ =
        prefix(rows, L.row_block(), L.grid().rows, [&L](int p) { return L.row_offset(p); });
    col_prefix_ =
        prefix(cols, L.col_block(), L.grid().cols, [&L](int q) { return L.col_offset(q); });
  }

  template <class F>
  void count(const exec::Rect& cell, F&& f) const {
    if (d_.kind() == MatrixDist::Kind::block_cyclic) {
      const ProcessGrid& g = d_.block_cyclic().grid();
      for (int p = 0; p < g.rows; ++p) {
        const auto& rp = row_prefix_[std::size_t(p)];
        const double nr = double(rp[std::size_t(cell.i1)] - rp[std::size_t(cell.i0)]);
        if (nr == 0) continue;
        for (int q = 0; q < g.cols; ++q) {
          const auto& cp = col_prefix_[std::size_t(q)];
          const double nc = double(cp[std::size_t(cell.j1)] - cp[std::size_t(cell.j0)]);
          if (nc > 0) f(g.rank_of(p, q), nr * nc);
        }
      }
      return;
    }
    for (std::int64_t y = cell.j0; y < cell.j1; ++y)
      for (std::int64_t x = cell.i0; x < cell.i1; ++x)
        f(d_.owner(rows_.lo(x), cols_.lo(y)),
          double(rows_.hi(x) - rows_.lo(x)) * double(cols_.hi(y) - cols_.lo(y)));
  }

 private:
  // Indexed by process coordinate; NUMROC counts from the first block's (`offset` of a
  // coordinate: BlockCyclic::row_offset or col_offset).
  template <class Offset>
  static std::vector<std::vector<std::int64_t>> prefix(const AxisOrder& a, std::int64_t nb,
                                                       int nprocs, const Offset& offset) {
    std::vector<std::vector<std::int64_t>> out(std::size_t(nprocs),
                                               std::vector<std::int64_t>(a.tiles.size() + 1, 0));
    for (std::int64_t x = 0; x < a.size(); ++x)
      for (int p = 0; p < nprocs; ++p)
        out[std::size_t(p)][std::size_t(x) + 1] =
            out[std::size_t(p)][std::size_t(x)] +
            owned_in_range(a.lo(x), a.hi(x), nb, offset(p), nprocs);
    return out;
  }
  const MatrixDist& d_;
  const AxisOrder &rows_, &cols_;
  std::vector<std::vector<std::int64_t>> row_prefix_, col_prefix_;
};

// For rank r using `cells` (positions) of a matrix: what r receives and what each owner sends
// it (A, B), or what r sends each owner (its partial C).
void charge(const std::vector<exec::Rect>& cells, const OwnerCounter& counter,
            const AxisOrder& rows, const AxisOrder& cols, int r, std::vector<RankTraffic>& t,
            double RankTraffic::*need_side, double RankTraffic::*owner_side,
            double RankTraffic::*foot) {
  for (const auto& c : cells) {
    t[std::size_t(r)].*foot +=
        double(rows.first[std::size_t(c.i1)] - rows.first[std::size_t(c.i0)]) *
        double(cols.first[std::size_t(c.j1)] - cols.first[std::size_t(c.j0)]);
    counter.count(c, [&](int o, double e) {
      if (o == r) return;
      t[std::size_t(r)].*need_side += e;
      t[std::size_t(o)].*owner_side += e;
    });
  }
}

}  // namespace

std::vector<RankTraffic> model_traffic(const std::vector<partition::TileZone>& zones,
                                       const TileOrder& order, const Distribution& dist) {
  std::vector<RankTraffic> t(zones.size());
  // A and B are counted on their stored positions: a transposed operand's rows are op's columns.
  const AxisOrder &a_rows = dist.a_transposed ? order.k : order.i,
                  &a_cols = dist.a_transposed ? order.i : order.k,
                  &b_rows = dist.b_transposed ? order.j : order.k,
                  &b_cols = dist.b_transposed ? order.k : order.j;
  const OwnerCounter ca(dist.a, a_rows, a_cols), cb(dist.b, b_rows, b_cols),
      cc(dist.c, order.i, order.j);
  for (std::size_t r = 0; r < zones.size(); ++r) {
    std::vector<exec::Rect> pa, pb, pc;
    for (const auto& b : zones[r]) {
      if (b.empty()) continue;
      pa.push_back(dist.stored_a(exec::Rect{b.lo[0], b.hi[0], b.lo[2], b.hi[2]}));
      pb.push_back(dist.stored_b(exec::Rect{b.lo[2], b.hi[2], b.lo[1], b.hi[1]}));
      pc.push_back(exec::Rect{b.lo[0], b.hi[0], b.lo[1], b.hi[1]});
      t[r].tasks += b.volume();
      const exec::Rect c = c_panel(order, b);
      t[r].flops += 2.0 * double(c.rows()) * double(c.cols()) * double(a_panel(order, b).cols());
      t[r].c_boxes += double(c.rows()) * double(c.cols());
    }
    const int ri = int(r);
    charge(disjoint_union(pa), ca, a_rows, a_cols, ri, t, &RankTraffic::a_in, &RankTraffic::a_out,
           &RankTraffic::a_foot);
    charge(disjoint_union(pb), cb, b_rows, b_cols, ri, t, &RankTraffic::b_in, &RankTraffic::b_out,
           &RankTraffic::b_foot);
    charge(disjoint_union(pc), cc, order.i, order.j, ri, t, &RankTraffic::c_out, &RankTraffic::c_in,
           &RankTraffic::c_foot);
  }
  return t;
}

double model_traffic_cost(const std::vector<partition::TileZone>& zones, const TileOrder& order,
                          const Distribution& dist) {
  // A block-cyclic count visits every process row, then every process column of each row the
  // cell has elements in; a tile-owned count visits every tile of the cell.
  auto cost = [](const MatrixDist& d, const AxisOrder& rows, std::int64_t x0, std::int64_t x1,
                 std::int64_t y0, std::int64_t y1) {
    if (x1 <= x0 || y1 <= y0) return 0.0;
    if (d.kind() != MatrixDist::Kind::block_cyclic) return double(x1 - x0) * double(y1 - y0);
    const ProcessGrid& g = d.block_cyclic().grid();
    const double elements = double(rows.first[std::size_t(x1)] - rows.first[std::size_t(x0)]);
    const double blocks = double(x1 - x0) + elements / double(d.block_cyclic().row_block());
    return double(g.rows) + std::min(double(g.rows), blocks) * double(g.cols);
  };
  double ops = 0;
  for (const auto& zone : zones)
    for (const auto& b : zone) {
      if (b.empty()) continue;
      // Stored positions, as model_traffic counts them.
      const exec::Rect a = dist.stored_a(exec::Rect{b.lo[0], b.hi[0], b.lo[2], b.hi[2]});
      const exec::Rect bb = dist.stored_b(exec::Rect{b.lo[2], b.hi[2], b.lo[1], b.hi[1]});
      ops += cost(dist.a, dist.a_transposed ? order.k : order.i, a.i0, a.i1, a.j0, a.j1);
      ops += cost(dist.b, dist.b_transposed ? order.j : order.k, bb.i0, bb.i1, bb.j0, bb.j1);
      ops += cost(dist.c, order.i, b.lo[0], b.hi[0], b.lo[1], b.hi[1]);
    }
  return ops;
}

std::string describe(const Streaming& s) {
  std::string out = "k in " + std::to_string(s.slabs) + " slab" + (s.slabs == 1 ? "" : "s") +
                    " per box whose inputs travel, ";
  if (s.window <= 0) return out + "every receive posted at once";
  return out + "receives posted " + std::to_string(s.window) + " stage" +
         (s.window == 1 ? "" : "s") + " ahead (k streamed: receive, multiply, free)";
}

RankMemoryModel predict_rank_memory(const RankTraffic& t, const Distribution& dist, int rank,
                                    const partition::TileZone& zone, const TileOrder& order,
                                    Streaming streaming) {
  RankMemoryModel m;
  m.blocks = double(dist.a.local_size(rank)) + double(dist.b.local_size(rank)) +
             double(dist.c.local_size(rank));
  const bool c_stays =
      t.c_in == 0 && t.c_out == 0 &&
      (dist.c.kind() == MatrixDist::Kind::block_cyclic || dist.c.panel_rows(rank) > 0);
  if (!c_stays) m.partial_c = t.c_boxes;
  // A zone whose inputs all lie on the rank is one piece per box; a piece's panel that is a block
  // of the block-cyclic local array is read there, every other one is filled in a buffer as
  // large as the largest.
  const bool travels = t.a_in > 0 || t.b_in > 0;
  const auto pieces = pieces_of(zone, travels ? std::max(1, streaming.slabs) : 1);
  double a_max = 0, b_max = 0, a_all = 0, b_all = 0;
  for (const auto& p : pieces) {
    const exec::Rect a = a_panel(order, p.box), b = b_panel(order, p.box);
    const double a_size = double(a.rows()) * double(a.cols()),
                 b_size = double(b.rows()) * double(b.cols());
    a_all = std::max(a_all, a_size), b_all = std::max(b_all, b_size);
    if (!panel_in_local_array(order, dist, rank, p.box, true).in_place())
      a_max = std::max(a_max, a_size);
    if (!panel_in_local_array(order, dist, rank, p.box, false).in_place())
      b_max = std::max(b_max, b_size);
  }
  m.panels = a_max + b_max;
  // A stage receives at most its piece's panels: streamed, the slots hold `window` of those.
  double received = t.a_in + t.b_in;
  if (streaming.window > 0 && std::size_t(streaming.window) < pieces.size())
    received = std::min(received, double(streaming.window) * (a_all + b_all));
  m.messages = received + t.c_in + t.c_out;
  return m;
}

double model_time(const std::vector<RankTraffic>& t, const std::vector<double>& speeds,
                  double bandwidth_gbs, std::size_t elem, double latency_s) {
  double worst = 0;
  for (std::size_t r = 0; r < t.size(); ++r) {
    double s = t[r].received() * double(elem) / (bandwidth_gbs * 1e9);
    if (t[r].received() > 0) s += latency_s;
    if (t[r].flops > 0)
      s += speeds[r] > 0 ? t[r].flops / (speeds[r] * 1e9) : std::numeric_limits<double>::infinity();
    worst = std::max(worst, s);
  }
  return worst;
}

double cosma_bound_elements(double m, double n, double k, double p, double S) {
  const double per = m * n * k / p;
  const double a = std::min(std::sqrt(S), std::cbrt(per));
  return 2.0 * per / a + a * a;
}

double moved_bound_elements(double m, double n, double k, double p, double S) {
  const double per = m * n * k / p, cube = std::cbrt(per);
  const double W = S < cube * cube ? 2.0 * per / std::sqrt(S) + S : 3.0 * cube * cube;
  return std::max(0.0, W - (m * n + m * k + n * k) / p);
}

double moved_bound_at_limit_bytes(double m, double n, double k, double p, double limit_bytes,
                                  double elem) {
  return limit_bytes > 0 ? moved_bound_elements(m, n, k, p, limit_bytes / elem) * elem : 0.0;
}

double shape_bound_elements(double m, double n, double k, double p) {
  return partition::lower_bound(m * n * k / p, partition::Extent{m, n, k});
}

CommSummary summarize(const std::vector<RankTraffic>& t, std::int64_t m, std::int64_t n,
                      std::int64_t k) {
  CommSummary s;
  s.ranks = int(t.size());
  for (const auto& r : t) {
    s.moved_max = std::max(s.moved_max, r.moved());
    s.moved_mean += r.moved();
    s.received_max = std::max(s.received_max, r.received());
    s.received_mean += r.received();
    s.footprint_max = std::max(s.footprint_max, r.footprint());
    s.footprint_mean += r.footprint();
    if (r.flops > 0)
      s.worst_rank_ratio = std::max(
          s.worst_rank_ratio,
          r.moved() / partition::lower_bound(r.flops / 2,
                                             partition::Extent{double(m), double(n), double(k)}));
  }
  if (!t.empty())
    s.moved_mean /= double(t.size()), s.received_mean /= double(t.size()),
        s.footprint_mean /= double(t.size());
  s.lower_bound = cosma_bound_elements(double(m), double(n), double(k), double(t.size()));
  s.moved_bound = moved_bound_elements(double(m), double(n), double(k), double(t.size()));
  s.shape_bound = shape_bound_elements(double(m), double(n), double(k), double(t.size()));
  s.moved_shape_bound = std::max(
      0.0, s.shape_bound - (double(m) * double(n) + double(m) * double(k) + double(n) * double(k)) /
                               double(t.size()));
  return s;
}

}  // namespace cuboid::layout
