#include "dist/model.hpp"

#include <algorithm>
#include <cmath>

#include "dist/strategy.hpp"
#include "partition/geometry.hpp"

namespace cuboid::dist {
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

// The process coordinates a range of indices touches, with how many indices each owns.
std::vector<std::pair<int, std::int64_t>> axis_owners(std::int64_t lo, std::int64_t hi,
                                                      std::int64_t nb, int nprocs) {
  std::vector<std::pair<int, std::int64_t>> out;
  if (hi <= lo) return out;
  const std::int64_t b0 = lo / nb, b1 = (hi - 1) / nb;
  if (b1 - b0 + 1 >= nprocs) {
    for (int p = 0; p < nprocs; ++p) out.emplace_back(p, owned_in_range(lo, hi, nb, p, nprocs));
  } else {
    for (std::int64_t b = b0; b <= b1; ++b) {
      const int p = int(b % nprocs);
      out.emplace_back(p, owned_in_range(lo, hi, nb, p, nprocs));
    }
  }
  return out;
}

// For rank r needing `cells` of a matrix laid out by L: what r receives, and what each owner
// sends it. `incoming` true: r needs the data (A, B); false: r sends its partials (C).
void charge(const std::vector<exec::Rect>& cells, const BlockCyclic& L, int r,
            std::vector<RankTraffic>& t, double RankTraffic::*need_side,
            double RankTraffic::*owner_side, double RankTraffic::*foot) {
  for (const auto& c : cells) {
    const double area = double(c.rows()) * double(c.cols());
    t[std::size_t(r)].*foot += area;
    const auto rows = axis_owners(c.i0, c.i1, L.row_block(), L.grid().rows);
    const auto cols = axis_owners(c.j0, c.j1, L.col_block(), L.grid().cols);
    for (const auto& [pr, nr] : rows)
      for (const auto& [pc, nc] : cols) {
        const int o = L.grid().rank_of(pr, pc);
        if (o == r || nr == 0 || nc == 0) continue;
        const double e = double(nr) * double(nc);
        t[std::size_t(r)].*need_side += e;
        t[std::size_t(o)].*owner_side += e;
      }
  }
}

}  // namespace

Layouts make_layouts(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t block,
                     const ProcessGrid& grid) {
  return Layouts{BlockCyclic(m, k, block, block, grid), BlockCyclic(k, n, block, block, grid),
                 BlockCyclic(m, n, block, block, grid)};
}

std::vector<RankTraffic> model_traffic(const std::vector<partition::TileZone>& zones,
                                       std::int64_t m, std::int64_t n, std::int64_t k,
                                       std::int64_t tile, const Layouts& L) {
  std::vector<RankTraffic> t(zones.size());
  for (std::size_t r = 0; r < zones.size(); ++r) {
    std::vector<exec::Rect> pa, pb, pc;
    for (const auto& b : zones[r]) {
      if (b.empty()) continue;
      pa.push_back(a_rect(b, m, k, tile));
      pb.push_back(b_rect(b, k, n, tile));
      const exec::Rect c = c_rect(b, m, n, tile);
      pc.push_back(c);
      t[r].tasks += b.volume();
      const auto a = a_rect(b, m, k, tile);
      t[r].flops += 2.0 * double(c.rows()) * double(c.cols()) * double(a.cols());
    }
    const int ri = int(r);
    charge(disjoint_union(pa), L.a, ri, t, &RankTraffic::a_in, &RankTraffic::a_out,
           &RankTraffic::a_foot);
    charge(disjoint_union(pb), L.b, ri, t, &RankTraffic::b_in, &RankTraffic::b_out,
           &RankTraffic::b_foot);
    charge(disjoint_union(pc), L.c, ri, t, &RankTraffic::c_out, &RankTraffic::c_in,
           &RankTraffic::c_foot);
  }
  return t;
}

double cosma_bound_elements(double m, double n, double k, double p, double S) {
  const double per = m * n * k / p;
  const double a = std::min(std::sqrt(S), std::cbrt(per));
  return 2.0 * per / a + a * a;
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
    s.footprint_max = std::max(s.footprint_max, r.footprint());
    s.footprint_mean += r.footprint();
    if (r.flops > 0)
      s.worst_rank_ratio = std::max(
          s.worst_rank_ratio,
          r.moved() / partition::lower_bound(r.flops / 2,
                                             partition::Extent{double(m), double(n), double(k)}));
  }
  if (!t.empty()) s.moved_mean /= double(t.size()), s.footprint_mean /= double(t.size());
  s.lower_bound = cosma_bound_elements(double(m), double(n), double(k), double(t.size()));
  s.shape_bound = shape_bound_elements(double(m), double(n), double(k), double(t.size()));
  return s;
}

}  // namespace cuboid::dist
