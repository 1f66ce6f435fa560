// Candidates (see candidates.hpp): the exact cuts and corner boxes a node of the recursion may
// take, each made exact by one staircase.
#include "partition/stepped/candidates.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <utility>

#include "partition/stepped/staircase.hpp"

namespace cuboid::partition::stepped_detail {
namespace {

// Where a step may lie in the layer x_d == layer: the whole layer, and (when comparing) a band
// about sqrt(m) wide along each end of the rows, so a small step stays in a corner of the layer
// and is less likely to be shared by several zones further down.
std::vector<TileBox> windows(const TileBox& bb, int d, I layer, const Orientation& o, Effort effort,
                             I m) {
  TileBox whole = bb;
  whole.lo[d] = layer;
  whole.hi[d] = layer + 1;
  std::vector<TileBox> out;
  if (effort != Effort::minimal) out.push_back(whole);
  if (effort != Effort::wide) return out;
  auto band = [&](I width) {
    if (width >= bb.extent(o.minor)) return;
    TileBox w = whole;
    if (o.minor_up) {
      w.hi[o.minor] = w.lo[o.minor] + width;
    } else {
      w.lo[o.minor] = w.hi[o.minor] - width;
    }
    out.push_back(w);
  };
  band(std::max<I>(1, I(std::ceil(std::sqrt(double(m))))));
  // Widths that divide m: the step is then whole rows, one box (the closest to a square, and
  // the widest that fits).
  I square = 0, widest = 0;
  const I rows_max = bb.extent(o.major);
  for (I w = 1; w * w <= m; ++w) {
    if (m % w) continue;
    for (I x : {w, m / w})
      if (x <= bb.extent(o.minor) && m / x <= rows_max) {
        widest = std::max(widest, x);
        if (square == 0 || std::abs(double(x) - std::sqrt(double(m))) <
                               std::abs(double(square) - std::sqrt(double(m))))
          square = x;
      }
  }
  if (square > 0) band(square);
  if (widest > 0 && widest != square) band(widest);
  if (out.empty()) out.push_back(whole);
  return out;
}

// Edges of the inner boxes a corner tries: the ideal edges rounded down or up (all down or all
// up at the minimal effort) and, when comparing, prisms (one edge full) and slabs (two edges
// full) that hold about `want` tiles; each edge within the bounds `bb`, no edges twice.
std::vector<std::array<I, 3>> corner_edges(const std::array<double, 3>& ideal, I want,
                                           const TileBox& bb, Effort effort) {
  std::array<I, 3> ext{};
  for (int d = 0; d < 3; ++d) ext[d] = bb.extent(d);
  auto clampi = [&](double x, int d) { return std::clamp<I>(I(x), 1, ext[d]); };
  std::vector<std::array<I, 3>> dims;
  auto add = [&](std::array<I, 3> v) {
    if (std::find(dims.begin(), dims.end(), v) == dims.end()) dims.push_back(v);
  };
  for (int mask = 0; mask < 8; ++mask) {
    if (effort == Effort::minimal && mask != 0 && mask != 7) continue;
    std::array<I, 3> v{};
    for (int d = 0; d < 3; ++d)
      v[d] = clampi((mask >> d & 1) ? std::ceil(ideal[d]) : std::floor(ideal[d]), d);
    add(v);
  }
  if (effort == Effort::minimal) return dims;
  for (int s = 0; s < 3; ++s) {
    const int a = (s + 1) % 3, b = (s + 2) % 3;
    const double side = std::sqrt(double(want) / double(ext[s]));
    for (int mask = 0; mask < 4; ++mask) {
      std::array<I, 3> v{};
      v[s] = ext[s];
      v[a] = clampi((mask & 1) ? std::ceil(side) : std::floor(side), a);
      v[b] = clampi((mask & 2) ? std::ceil(side) : std::floor(side), b);
      add(v);
    }
    const double depth = double(want) / double(ext[a] * ext[b]);
    for (double x : {std::floor(depth), std::ceil(depth)}) {
      std::array<I, 3> v{};
      v[a] = ext[a];
      v[b] = ext[b];
      v[s] = clampi(x, s);
      add(v);
    }
  }
  return dims;
}

// The tiles of `region` in the box `ib`, at corner `corner` of the bounds `bb` (bit d set: at
// the high end along d), as the inner region of `c`: as they are when they hold its count,
// otherwise made exact with one step in the layer next to a face of ib away from the corner.
void exact_corner_box(const Source::Corner& c, const Region& region, const TileBox& bb,
                      const TileBox& ib, int corner, Effort effort, std::vector<Option>& out) {
  const I want = c.inner.target;
  const Region inner = compact(inside(region, ib));
  const I have = cells(inner);
  const I m = want - have;
  const Region rest = subtract(region, inner);
  auto push = [&](Region in, Region dom) {
    Option o{c.inner, c.dominant, {}};
    o.first.region = std::move(in);
    o.second.region = std::move(dom);
    out.push_back(std::move(o));
  };
  if (m == 0) {
    if (have > 0 && cells(rest) == c.dominant.target) push(inner, rest);
    return;
  }
  for (int f = 0; f < 3; ++f) {
    const bool high = corner >> f & 1;
    // The face of ib away from the corner, and the layer next to it on the needed side.
    I layer;
    if (m > 0) {
      layer = high ? ib.lo[f] - 1 : ib.hi[f];
      if (layer < bb.lo[f] || layer >= bb.hi[f]) continue;
    } else {
      layer = high ? ib.lo[f] : ib.hi[f] - 1;
    }
    TileBox window = ib;
    window.lo[f] = layer;
    window.hi[f] = layer + 1;
    const Region& src = m > 0 ? rest : inner;
    if (cells(inside(src, window)) < std::abs(m)) continue;
    std::vector<Orientation> os = effort == Effort::minimal
                                      ? std::vector<Orientation>{default_orientation(f, ib)}
                                      : orientations(f);
    for (const Orientation& o : os) {
      const Region step = staircase(src, f, layer, window, std::abs(m), o);
      if (m > 0) {
        push(join(inner, step), subtract(rest, step, f));
      } else {
        push(subtract(inner, step, f), join(rest, step));
      }
    }
    if (effort == Effort::minimal) break;
  }
}

}  // namespace

void split_options(const Source::Split& s, const Task& t, const TileBox& bb, Effort effort,
                   std::vector<Option>& out) {
  const int d = s.axis;
  const I want = s.below.target;
  // Largest c with count_below(c) <= want: the cut at c leaves `want - count` tiles to step
  // over from the layer c; the cut at c + 1 gives back the excess of that layer.
  const I c = last_cut(t.region, d, bb.lo[d], bb.hi[d], want);
  auto push = [&](Region b, Region a) {
    Option o{s.below, s.above, {}};
    o.first.region = std::move(b);
    o.second.region = std::move(a);
    out.push_back(std::move(o));
  };
  if (count_below(t.region, d, c) == want) {
    Region below, above;
    cut(t.region, d, c, below, above);
    push(compact(below), compact(above));
    if (effort == Effort::minimal) return;
  }
  // Cut positions: the two around the count, and (when comparing) the faces of the region's
  // boxes close to them, so that a step inherited from above can stay whole on one side.
  std::vector<I> positions{c, c + 1};
  if (effort == Effort::wide) {
    for (const TileBox& b : t.region)
      for (I x : {b.lo[d], b.hi[d]})
        if (x > bb.lo[d] && x < bb.hi[d] && x >= c - 2 && x <= c + 3) positions.push_back(x);
    std::sort(positions.begin(), positions.end());
    positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
  }
  struct Cut {
    I at, m;  // cut position; tiles to take from layer `at` (> 0) or give from layer at-1 (< 0)
  };
  std::vector<Cut> cuts;
  for (I q : positions) {
    if (q < bb.lo[d] || q > bb.hi[d]) continue;
    const I m = want - count_below(t.region, d, q);
    if (m == 0) continue;  // the exact cut was pushed above
    const I layer_cells = m > 0 ? count_below(t.region, d, q + 1) - count_below(t.region, d, q)
                                : count_below(t.region, d, q) - count_below(t.region, d, q - 1);
    if (layer_cells < std::abs(m)) continue;
    cuts.push_back({q, m});
  }
  if (effort == Effort::minimal && !cuts.empty()) {
    // The smaller of the two steps around the count.
    const Cut* best = nullptr;
    for (const Cut& k : cuts)
      if ((k.at == c || k.at == c + 1) && (!best || std::abs(k.m) < std::abs(best->m))) best = &k;
    cuts = {*best};
  }
  for (const Cut& k : cuts) {
    Region below, above;
    cut(t.region, d, k.at, below, above);
    const I layer = k.m > 0 ? k.at : k.at - 1;
    const I amount = std::abs(k.m);
    std::vector<Orientation> os = effort == Effort::minimal
                                      ? std::vector<Orientation>{default_orientation(d, bb)}
                                      : orientations(d);
    for (const Orientation& o : os) {
      std::vector<TileBox> ws;
      if (effort == Effort::minimal) {
        TileBox whole = bb;
        whole.lo[d] = layer;
        whole.hi[d] = layer + 1;
        ws.push_back(whole);
      } else {
        ws = windows(bb, d, layer, o, effort, amount);
      }
      for (const TileBox& w : ws) {
        const Region& src = k.m > 0 ? above : below;
        if (cells(inside(src, w)) < amount) continue;
        const Region step = staircase(src, d, layer, w, amount, o);
        if (k.m > 0) {
          push(join(below, step), subtract(above, step, d));
        } else {
          push(subtract(below, step, d), join(above, step));
        }
        if (effort == Effort::minimal) break;
      }
    }
  }
}

// The minimal split without candidate lists: the cut on the side of the count that needs the
// smaller step, the step in whole rows stacked along the larger side's likely next cut.
void lean_split(const Region& region, const TileBox& bb, int d, I want, Task& lo, Task& hi) {
  Region& below = lo.region;
  Region& above = hi.region;
  const I c = last_cut(region, d, bb.lo[d], bb.hi[d], want);
  const I short_by = want - count_below(region, d, c);
  if (short_by == 0) {
    cut(region, d, c, below, above);
    return;
  }
  const I excess = count_below(region, d, c + 1) - want;
  const I at = short_by <= excess ? c : c + 1;
  cut(region, d, at, below, above);
  TileBox layer = bb;
  layer.lo[d] = c;
  layer.hi[d] = c + 1;
  const Orientation o = default_orientation(d, bb);
  // In place, with scratch buffers: this runs once per processor when there are millions.
  thread_local Region step;
  Region& from = short_by <= excess ? above : below;
  Region& to = short_by <= excess ? below : above;
  staircase_into(from, d, c, layer, short_by <= excess ? short_by : excess, o, step);
  subtract_in_place(from, step, d);
  to.insert(to.end(), step.begin(), step.end());
  (short_by <= excess ? hi : lo).settled = compact_in_place(from);
  (short_by <= excess ? lo : hi).settled = compact_in_place(to);
}

void corner_options(const Source::Corner& c, const Task& t, const TileBox& bb, Effort effort,
                    std::vector<Option>& out) {
  const bool irregular = t.region.size() > 1;
  const int corners = (effort == Effort::wide && irregular) ? 8 : 1;
  for (const auto& dm : corner_edges(c.ideal, c.inner.target, bb, effort)) {
    for (int corner = 0; corner < corners; ++corner) {
      TileBox ib;
      for (int d = 0; d < 3; ++d) {
        const bool high = corner >> d & 1;
        ib.lo[d] = high ? bb.hi[d] - dm[d] : bb.lo[d];
        ib.hi[d] = high ? bb.hi[d] : bb.lo[d] + dm[d];
      }
      exact_corner_box(c, t.region, bb, ib, corner, effort, out);
    }
  }
}

}  // namespace cuboid::partition::stepped_detail
