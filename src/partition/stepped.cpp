// STEPPED discretisation (see stepped.hpp). Regions are short lists of disjoint integer boxes;
// a step is cut out of one layer with a 2D sweep over that layer's rectangles, so its cost
// depends on the boxes involved, never on the number of tiles.
#include "partition/stepped.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <tuple>

#include "partition/geometry.hpp"
#include "partition/merge.hpp"

namespace cuboid::partition {
namespace {

using I = std::int64_t;
using Region = std::vector<TileBox>;

I cells(const TileBox& b) { return b.empty() ? 0 : b.extent(0) * b.extent(1) * b.extent(2); }

I cells(const Region& r) {
  I s = 0;
  for (const TileBox& b : r) s += cells(b);
  return s;
}

TileBox bounds(const Region& r) {
  TileBox out;
  bool first = true;
  for (const TileBox& b : r) {
    if (b.empty()) continue;
    for (int d = 0; d < 3; ++d) {
      out.lo[d] = first ? b.lo[d] : std::min(out.lo[d], b.lo[d]);
      out.hi[d] = first ? b.hi[d] : std::max(out.hi[d], b.hi[d]);
    }
    first = false;
  }
  return out;
}

TileBox clip(TileBox b, const TileBox& w) {
  for (int d = 0; d < 3; ++d) {
    b.lo[d] = std::max(b.lo[d], w.lo[d]);
    b.hi[d] = std::min(b.hi[d], w.hi[d]);
  }
  return b;
}

// Tiles of `r` with x_d < c.
I count_below(const Region& r, int d, I c) {
  I s = 0;
  for (TileBox b : r) {
    if (b.lo[d] >= c) continue;
    b.hi[d] = std::min(b.hi[d], c);
    s += cells(b);
  }
  return s;
}

// The largest c in [lo, hi] with count_below(r, d, c) <= want, r within [lo, hi) along d.
// count_below grows piecewise linearly between the faces of r's boxes: one sweep over the
// faces instead of a search over the coordinates.
I last_cut(const Region& r, int d, I lo, I hi, I want) {
  thread_local std::vector<std::pair<I, I>> faces;  // position, change of tiles per layer
  faces.clear();
  for (const TileBox& b : r) {
    if (b.empty()) continue;
    const I layer = cells(b) / b.extent(d);
    faces.push_back({b.lo[d], layer});
    faces.push_back({b.hi[d], -layer});
  }
  std::sort(faces.begin(), faces.end());
  I count = 0, per_layer = 0, at = lo;  // count = count_below(at) <= want
  for (std::size_t i = 0; i < faces.size();) {
    const I x = faces[i].first;
    if (x > at) {
      if (per_layer > 0 && count + per_layer * (x - at) > want)
        return at + (want - count) / per_layer;
      count += per_layer * (x - at);
      at = x;
    }
    for (; i < faces.size() && faces[i].first == x; ++i) per_layer += faces[i].second;
  }
  return hi;
}

void cut(const Region& r, int d, I c, Region& below, Region& above) {
  below.reserve(below.size() + r.size());
  above.reserve(above.size() + r.size());
  for (const TileBox& b : r) {
    if (b.hi[d] <= c) {
      below.push_back(b);
    } else if (b.lo[d] >= c) {
      above.push_back(b);
    } else {
      TileBox x = b, y = b;
      x.hi[d] = c;
      y.lo[d] = c;
      below.push_back(x);
      above.push_back(y);
    }
  }
}

Region inside(const Region& r, const TileBox& w) {
  Region out;
  for (const TileBox& b : r) {
    const TileBox x = clip(b, w);
    if (!x.empty()) out.push_back(x);
  }
  return out;
}

// b minus s, as at most six disjoint boxes, cut across `first` first (a step's own axis: the
// part of b outside the step's layer stays one box).
void box_minus(const TileBox& b, const TileBox& s, Region& out, int first) {
  const TileBox x = clip(s, b);
  if (x.empty()) {
    out.push_back(b);
    return;
  }
  TileBox rest = b;
  for (int k = 0; k < 3; ++k) {
    const int d = (first + k) % 3;
    if (rest.lo[d] < x.lo[d]) {
      TileBox p = rest;
      p.hi[d] = x.lo[d];
      out.push_back(p);
    }
    if (x.hi[d] < rest.hi[d]) {
      TileBox p = rest;
      p.lo[d] = x.hi[d];
      out.push_back(p);
    }
    rest.lo[d] = x.lo[d];
    rest.hi[d] = x.hi[d];
  }
}

// One round of joining boxes that share a whole face, per axis (sort, then join runs): short
// regions stay short between cuts. Final zones go through merge_boxes, which repeats this to a
// fixed point and returns a canonical order.
// Up to this many boxes, compact() joins pairs to a fixed point (as merge_boxes would).
constexpr std::size_t kFewBoxes = 12;

// Two boxes that share a whole face, joined into `a`. Equal extents are counted without branches:
// most pairs differ on two axes or more, and this test is most of compact's time.
bool join_pair(TileBox& a, const TileBox& b) {
  const int e0 = (a.lo[0] == b.lo[0]) & (a.hi[0] == b.hi[0]);
  const int e1 = (a.lo[1] == b.lo[1]) & (a.hi[1] == b.hi[1]);
  const int e2 = (a.lo[2] == b.lo[2]) & (a.hi[2] == b.hi[2]);
  if (e0 + e1 + e2 != 2) return false;
  const int along = !e0 ? 0 : !e1 ? 1 : 2;
  if (!(a.hi[along] == b.lo[along] || b.hi[along] == a.lo[along])) return false;
  a.lo[along] = std::min(a.lo[along], b.lo[along]);
  a.hi[along] = std::max(a.hi[along], b.hi[along]);
  return true;
}

// Joins boxes that share a whole face; true when `r` is then a fixed point (no pair left to
// join: compacting it again changes nothing, so finish() can skip it).
bool compact_in_place(Region& r) {
  r.erase(std::remove_if(r.begin(), r.end(), [](const TileBox& b) { return b.empty(); }), r.end());
  if (r.size() < 2) return true;
  if (r.size() <= kFewBoxes) {
    // Few boxes (the common case): join pairs until no pair shares a whole face, no sorting.
    TileBox* v = r.data();
    std::size_t n = r.size();
    for (bool changed = true; changed;) {
      changed = false;
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n; ++j)
          if (join_pair(v[i], v[j])) {
            v[j--] = v[--n];
            changed = true;
          }
    }
    r.resize(n);
    return true;
  }
  for (int d : {2, 1, 0}) {
    const int a = (d + 1) % 3, b = (d + 2) % 3;
    std::sort(r.begin(), r.end(), [&](const TileBox& x, const TileBox& y) {
      return std::tie(x.lo[a], x.hi[a], x.lo[b], x.hi[b], x.lo[d]) <
             std::tie(y.lo[a], y.hi[a], y.lo[b], y.hi[b], y.lo[d]);
    });
    std::size_t out = 0;
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (out > 0) {
        TileBox& last = r[out - 1];
        const TileBox& cur = r[i];
        if (last.lo[a] == cur.lo[a] && last.hi[a] == cur.hi[a] && last.lo[b] == cur.lo[b] &&
            last.hi[b] == cur.hi[b] && last.hi[d] == cur.lo[d]) {
          last.hi[d] = cur.hi[d];
          continue;
        }
      }
      r[out++] = r[i];
    }
    r.resize(out);
  }
  return false;
}

Region compact(Region r) {
  compact_in_place(r);
  return r;
}

// r minus the boxes of s, not compacted; pieces cut across `first` first (see box_minus).
// Each box of r minus the boxes of s in turn, pieces in place of the box: the same list as
// subtracting each box of s from the whole of r in turn, without copying the boxes that miss s
// (most of them: a step lies in one layer).
void subtract_in_place(Region& r, const Region& s, int first) {
  if (s.empty()) return;
  const TileBox reach = bounds(s);
  thread_local Region next, piece, pieces;
  next.clear();
  for (const TileBox& b : r) {
    if (clip(b, reach).empty()) {
      next.push_back(b);
      continue;
    }
    piece.assign(1, b);
    for (const TileBox& t : s) {
      pieces.clear();
      for (const TileBox& x : piece) box_minus(x, t, pieces, first);
      piece.swap(pieces);
    }
    next.insert(next.end(), piece.begin(), piece.end());
  }
  r.swap(next);
}

Region subtract(const Region& r, const Region& s, int first = 0) {
  Region out = r;
  subtract_in_place(out, s, first);
  return compact(std::move(out));
}

Region join(Region a, const Region& b) {
  a.insert(a.end(), b.begin(), b.end());
  return compact(std::move(a));
}

// A 2D order of the tiles of one layer: rows along `minor`, taken one after the other along
// `major`, each direction ascending or descending.
struct Orientation {
  int major, minor;
  bool major_up, minor_up;
};

// The first `m` tiles, in the order `o`, of the tiles of `src` with x_d == layer inside `window`.
// Whole rows, then one partial row: at most two boxes per rectangle of the layer.
void staircase_into(const Region& src, int d, I layer, const TileBox& window, I m,
                    const Orientation& o, Region& out) {
  struct Rect {
    I a0, a1, b0, b1;
  };
  thread_local std::vector<Rect> rects;
  thread_local std::vector<I> marks;
  rects.clear();
  marks.clear();
  for (const TileBox& b : src) {
    if (!(b.lo[d] <= layer && layer < b.hi[d])) continue;
    const TileBox x = clip(b, window);
    if (x.empty() || !(x.lo[d] <= layer && layer < x.hi[d])) continue;
    rects.push_back({x.lo[o.major], x.hi[o.major], x.lo[o.minor], x.hi[o.minor]});
    marks.push_back(x.lo[o.major]);
    marks.push_back(x.hi[o.major]);
  }
  std::sort(marks.begin(), marks.end());
  marks.erase(std::unique(marks.begin(), marks.end()), marks.end());
  out.clear();
  auto emit = [&](I a0, I a1, I b0, I b1) {
    TileBox t;
    t.lo[d] = layer;
    t.hi[d] = layer + 1;
    t.lo[o.major] = a0;
    t.hi[o.major] = a1;
    t.lo[o.minor] = b0;
    t.hi[o.minor] = b1;
    out.push_back(t);
  };
  thread_local std::vector<std::pair<I, I>> segs;
  I rem = m;
  const std::size_t n = marks.size();
  for (std::size_t s = 0; s + 1 < n && rem > 0; ++s) {
    const std::size_t i = o.major_up ? s : n - 2 - s;
    const I p = marks[i], q = marks[i + 1];
    segs.clear();
    I len = 0;
    for (const Rect& r : rects)
      if (r.a0 <= p && q <= r.a1) {
        segs.push_back({r.b0, r.b1});
        len += r.b1 - r.b0;
      }
    if (len == 0) continue;
    std::sort(segs.begin(), segs.end());
    if (!o.minor_up) std::reverse(segs.begin(), segs.end());
    const I rows = q - p;
    const I full = std::min(rows, rem / len);
    if (full > 0) {
      const I r0 = o.major_up ? p : q - full;
      for (const auto& sg : segs) emit(r0, r0 + full, sg.first, sg.second);
      rem -= full * len;
    }
    if (rem > 0 && full < rows) {
      const I row = o.major_up ? p + full : q - full - 1;
      for (const auto& sg : segs) {
        const I t = std::min(rem, sg.second - sg.first);
        if (o.minor_up) {
          emit(row, row + 1, sg.first, sg.first + t);
        } else {
          emit(row, row + 1, sg.second - t, sg.second);
        }
        rem -= t;
        if (rem == 0) break;
      }
    }
  }
}

Region staircase(const Region& src, int d, I layer, const TileBox& window, I m,
                 const Orientation& o) {
  Region out;
  staircase_into(src, d, layer, window, m, o, out);
  return out;
}

// The eight orientations of the layer perpendicular to `d`.
std::vector<Orientation> orientations(int d) {
  const int a = (d + 1) % 3, b = (d + 2) % 3;
  std::vector<Orientation> out;
  for (auto [mj, mn] : {std::pair{a, b}, std::pair{b, a}})
    for (bool u : {true, false})
      for (bool v : {true, false}) out.push_back({mj, mn, u, v});
  return out;
}

// The one orientation used when there is no time to compare: rows along the shorter edge of
// the layer, stacked along the longer one, from a corner. Against rows stacked along the axis
// the next cut is likely to take, on 10^6 processors: 5.9 boxes per zone instead of 6.2, a
// smaller Hs, and a tenth less time.
Orientation default_orientation(int d, const TileBox& b) {
  const int a = (d + 1) % 3, c = (d + 2) % 3;
  return b.extent(a) >= b.extent(c) ? Orientation{a, c, true, true} : Orientation{c, a, true, true};
}

// ---------------------------------------------------------------------------------------------
// The recursion.

enum class Effort { minimal, narrow, wide };

struct Task {
  int lo = 0, hi = 0;  // nrrp3d: range of processors in ascending target order
  int node = -1;       // cut tree: the node
  int proc = -1;       // >= 0: a leaf of this processor
  I target = 0;
  Region region;
  bool settled = false;  // region a fixed point of compact_in_place
};

struct Option {
  Task first, second;
  std::array<double, 2> key{};  // smaller is better: (boxes above four of a final zone, Hs)
  int family = 0;               // which split or corner of the rule it realises
};

// Where the decisions come from: the integer nrrp3d rule, or a continuous cut tree.
class Source {
 public:
  virtual ~Source() = default;
  // A split of `t`: the two child tasks (targets set, regions empty) and the axis.
  struct Split {
    Task below, above;
    int axis;
  };
  struct Corner {
    Task inner, dominant;
    std::array<double, 3> ideal;  // edges of the inner box, before rounding
  };
  virtual void decide(const Task& t, const TileBox& bounds, Effort e, std::vector<Split>& splits,
                      std::vector<Corner>& corners) const = 0;
};

double half_surface_of(const Region& r) { return r.empty() ? 0.0 : half_surface(r); }

// Boxes above four once the faces are joined (the final zones may come out with fewer: see
// fewest_boxes; the sweeps cost too much to run on every candidate).
int over_four(const Region& zone) { return std::max(0, int(join_faces(zone).size()) - 4); }

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

// Inner regions for a corner: boxes at a corner of the region's bounds, near the ideal edges,
// as prisms (one edge full) and as slabs (two edges full), each made exact with one step on one
// of its inner faces.
void corner_options(const Source::Corner& c, const Task& t, const TileBox& bb, Effort effort,
                    std::vector<Option>& out) {
  const I want = c.inner.target;
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
      v[d] = clampi((mask >> d & 1) ? std::ceil(c.ideal[d]) : std::floor(c.ideal[d]), d);
    add(v);
  }
  if (effort != Effort::minimal) {
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
  }
  const bool irregular = t.region.size() > 1;
  const int corners = (effort == Effort::wide && irregular) ? 8 : 1;
  for (const auto& dm : dims) {
    for (int corner = 0; corner < corners; ++corner) {
      TileBox ib;
      for (int d = 0; d < 3; ++d) {
        const bool high = corner >> d & 1;
        ib.lo[d] = high ? bb.hi[d] - dm[d] : bb.lo[d];
        ib.hi[d] = high ? bb.hi[d] : bb.lo[d] + dm[d];
      }
      const Region inner = compact(inside(t.region, ib));
      const I have = cells(inner);
      const I m = want - have;
      const Region rest = subtract(t.region, inner);
      auto push = [&](Region in, Region dom) {
        Option o{c.inner, c.dominant, {}};
        o.first.region = std::move(in);
        o.second.region = std::move(dom);
        out.push_back(std::move(o));
      };
      if (m == 0) {
        if (have > 0 && cells(rest) == c.dominant.target) push(inner, rest);
        continue;
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
  }
}

// Fewer boxes may cost surface, never more than this share of the smallest Hs on offer: a flat
// slab of few boxes must not win over a compact zone of one box more.
constexpr double kBoxesSurfaceSlack = 0.05;

// The candidate of rank `rank` in pick's order (within the slack by key, then the rest by key),
// or the last one.
std::size_t ranked(const std::vector<std::array<double, 2>>& keys, std::size_t rank) {
  double least = std::numeric_limits<double>::infinity();
  for (const auto& k : keys) least = std::min(least, k[1]);
  std::vector<std::size_t> order(keys.size());
  std::iota(order.begin(), order.end(), 0);
  auto outside = [&](std::size_t i) { return keys[i][1] > (1 + kBoxesSurfaceSlack) * least; };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::make_pair(outside(a), keys[a]) < std::make_pair(outside(b), keys[b]);
  });
  return order[std::min(rank, order.size() - 1)];
}

// The smallest key (boxes first, then Hs) among those whose Hs is within the slack.
std::size_t pick(const std::vector<std::array<double, 2>>& keys) {
  double least = std::numeric_limits<double>::infinity();
  for (const auto& k : keys) least = std::min(least, k[1]);
  std::size_t best = keys.size();
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (keys[i][1] <= (1 + kBoxesSurfaceSlack) * least &&
        (best == keys.size() || keys[i] < keys[best]))
      best = i;
  return best;
}

class Solver {
 public:
  // lookahead: compare candidates by completing their subtrees; otherwise greedy, comparing
  // candidates by their regions (compare) or taking the one cut the rule asks for (!compare).
  Solver(const Source& source, std::size_t processors, bool lookahead, bool compare)
      : source_(source), zones_(processors), lookahead_(lookahead), compare_(compare) {}

  // A node of the recursion where the lookahead chose among several candidates, and a node
  // where a retry takes the candidate of that rank instead of the best (0).
  struct Node {
    int lo, hi, node;
    std::size_t candidates;
  };
  struct Forced {
    int lo, hi, node;
    std::size_t rank;
  };
  // A lookahead node's choice in the first pass, by its region: what a retry replays.
  struct Memo {
    int lo, hi, node;
    Region region;
    std::size_t best;
  };
  std::vector<Forced> forced_;
  std::vector<Node> decided_;
  std::vector<Memo>* record_ = nullptr;      // the first pass writes its choices here
  const std::vector<Memo>* memo_ = nullptr;  // retries read them

  template <class A>
  static bool same(const A& a, const Task& t) {
    return a.lo == t.lo && a.hi == t.hi && a.node == t.node;
  }

  std::vector<TileZone> run(Task root) {
    std::vector<Task> stack;
    stack.push_back(std::move(root));
    while (!stack.empty()) {
      Task t = std::move(stack.back());
      stack.pop_back();
      if (t.proc >= 0) {
        finish(t);
        continue;
      }
      if (t.target == 0) continue;  // only processors without tasks below
      if (!lookahead_ && !compare_) {
        // No comparison to make: cut straight into the two children when the rule asks for
        // one split (the common case with many processors), no candidate lists.
        const TileBox bb = bounds(t.region);
        splits_.clear();
        corners_.clear();
        source_.decide(t, bb, Effort::minimal, splits_, corners_);
        if (splits_.size() == 1 && corners_.empty()) {
          Task below = splits_[0].below, above = splits_[0].above;
          // Buffers of finished regions, reused: one allocation a leaf instead of two a node.
          below.region = spare();
          above.region = spare();
          lean_split(t.region, bb, splits_[0].axis, below.target, below, above);
          t.region.clear();
          spare_.push_back(std::move(t.region));
          stack.push_back(std::move(above));
          stack.push_back(std::move(below));
          continue;
        }
      }
      std::vector<Option> opts = options(t, lookahead_ ? Effort::wide
                                            : compare_ ? Effort::narrow
                                                       : Effort::minimal);
      std::size_t best = 0;
      const Memo* known = nullptr;
      if (lookahead_ && opts.size() > 1 && memo_ != nullptr) {
        bool forced = false;
        for (const Forced& f : forced_) forced = forced || same(f, t);
        for (const Memo& m : *memo_)
          if (!forced && same(m, t) && m.region == t.region) known = &m;
      }
      if (known != nullptr) {
        // A retry reaching a node with the region of the first pass: the first pass's choice.
        best = known->best;
      } else if (lookahead_ && opts.size() > 1) {
        // The candidates that look best locally, each completed greedily and compared.
        std::vector<std::size_t> order(opts.size());
        std::iota(order.begin(), order.end(), 0);
        // Each family (split point, axis, corner) by its key, then taken in turns: the
        // candidates compared are not all variants of one cut.
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
          return std::make_pair(opts[a].family, opts[a].key) <
                 std::make_pair(opts[b].family, opts[b].key);
        });
        std::vector<int> rank(opts.size());
        for (std::size_t i = 0; i < order.size(); ++i)
          rank[order[i]] = i > 0 && opts[order[i]].family == opts[order[i - 1]].family
                               ? rank[order[i - 1]] + 1
                               : 0;
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
          return std::make_pair(rank[a], opts[a].key) < std::make_pair(rank[b], opts[b].key);
        });
        if (order.size() > kLookaheadCandidates) order.resize(kLookaheadCandidates);
        std::vector<std::array<double, 2>> scores;
        for (std::size_t i : order) {
          std::array<double, 2> score{};
          complete(opts[i].first, score);
          complete(opts[i].second, score);
          scores.push_back(score);
        }
        best = order[pick(scores)];
        if (scores.size() > 1) {
          decided_.push_back({t.lo, t.hi, t.node, scores.size()});
          for (const Forced& f : forced_)
            if (same(f, t)) best = order[ranked(scores, f.rank)];
        }
        if (record_ != nullptr) record_->push_back({t.lo, t.hi, t.node, t.region, best});
      } else {
        best = pick_option(opts);
      }
      stack.push_back(std::move(opts[best].second));
      stack.push_back(std::move(opts[best].first));
    }
    // Zones put in processor order at the end, in one pass: stored as each leaf finished, the
    // writes at random places stalled the recursion (a cache miss a zone with 10^6 of them).
    for (auto& [proc, zone] : finished_) zones_[std::size_t(proc)] = std::move(zone);
    finished_.clear();
    return std::move(zones_);
  }

 private:
  static constexpr std::size_t kLookaheadCandidates = 32;

  void finish(Task& t) {
    if (cells(t.region) != t.target)
      throw std::logic_error("stepped: processor " + std::to_string(t.proc) + " got " +
                             std::to_string(cells(t.region)) + " tiles instead of " +
                             std::to_string(t.target));
    if (t.region.size() <= kFewBoxes) {
      // compact() joins few boxes to a fixed point; merge_boxes's canonical order.
      // A copy, not the buffer: the zone keeps no spare capacity (10^6 zones), the buffer is
      // reused.
      Region z = t.region;
      t.region.clear();
      spare_.push_back(std::move(t.region));
      if (!t.settled) compact_in_place(z);
      std::sort(z.begin(), z.end(), [](const TileBox& a, const TileBox& b) {
        return std::tie(a.lo, a.hi) < std::tie(b.lo, b.hi);
      });
      finished_.emplace_back(t.proc, std::move(z));
    } else {
      finished_.emplace_back(t.proc, merge_boxes(t.region));
    }
  }

  // Greedy completion: adds (boxes above four, Hs) of the zones it would produce to `score`.
  void complete(const Task& t, std::array<double, 2>& score) const {
    if (t.proc >= 0) {
      score[0] += over_four(t.region);
      score[1] += half_surface_of(t.region);
      return;
    }
    if (t.target == 0) return;
    std::vector<Option> opts = options(t, Effort::narrow);
    const std::size_t best = pick_option(opts);
    complete(opts[best].first, score);
    complete(opts[best].second, score);
  }

  static std::size_t pick_option(const std::vector<Option>& opts) {
    std::vector<std::array<double, 2>> keys;
    for (const Option& o : opts) keys.push_back(o.key);
    return pick(keys);
  }

  std::vector<Option> options(const Task& t, Effort effort) const {
    const TileBox bb = bounds(t.region);
    std::vector<Source::Split> splits;
    std::vector<Source::Corner> corners;
    source_.decide(t, bb, effort, splits, corners);
    std::vector<Option> out;
    int family = 0;
    for (const auto& s : splits) {
      const std::size_t from = out.size();
      split_options(s, t, bb, effort, out);
      for (std::size_t i = from; i < out.size(); ++i) out[i].family = family;
      ++family;
    }
    for (const auto& c : corners) {
      const std::size_t from = out.size();
      corner_options(c, t, bb, effort, out);
      for (std::size_t i = from; i < out.size(); ++i) out[i].family = family;
      ++family;
    }
    if (out.empty()) {
      // The one step the minimal effort tries may not fit (a few tiles a processor: the corner
      // box misses its count by more than the layer next to it holds); the wider efforts try
      // more shapes, orientations and windows.
      if (effort == Effort::minimal) return options(t, Effort::narrow);
      if (effort == Effort::narrow) return options(t, Effort::wide);
      throw std::logic_error("stepped: no way to cut a region");
    }
    if (out.size() == 1) return out;
    if (effort == Effort::minimal) {
      // No time for surfaces: the dominant with the fewest boxes, then the inner region.
      for (Option& o : out)
        o.key = {double(o.second.region.size()) * 1e3 + double(o.first.region.size()), 0};
      return out;
    }
    // Different orientations often give the same step (a whole layer, say): keep one of each.
    std::vector<Option> unique;
    for (Option& o : out) {
      bool seen = false;
      for (const Option& u : unique)
        if (u.first.lo == o.first.lo && u.first.hi == o.first.hi && u.first.node == o.first.node &&
            u.first.region == o.first.region) {
          seen = true;
          break;
        }
      if (!seen) unique.push_back(std::move(o));
    }
    out.swap(unique);
    for (Option& o : out) {
      // A final zone's boxes count now; the regions' surfaces stand for their zones' surfaces.
      double over = 0;
      if (o.first.proc >= 0) over += over_four(o.first.region);
      if (o.second.proc >= 0) over += over_four(o.second.region);
      o.key = {over * 1e9 + 1e6 * double(o.first.region.size() + o.second.region.size()),
               half_surface_of(o.first.region) + half_surface_of(o.second.region)};
    }
    return out;
  }

  const Source& source_;
  std::vector<TileZone> zones_;
  std::vector<std::pair<int, TileZone>> finished_;
  bool lookahead_, compare_;
  std::vector<Source::Split> splits_;
  std::vector<Source::Corner> corners_;
  std::vector<Region> spare_;

  Region spare() {
    if (spare_.empty()) return {};
    Region r = std::move(spare_.back());
    spare_.pop_back();
    return r;
  }
};

// ---------------------------------------------------------------------------------------------
// nrrp3d on integer regions: processors in ascending target order, a task is a range of them.

class NrrpSource : public Source {
 public:
  NrrpSource(std::vector<int> order, std::vector<I> prefix, bool three_modes)
      : order_(std::move(order)), prefix_(std::move(prefix)), three_modes_(three_modes) {}

  Task task(int lo, int hi) const {
    Task t;
    t.lo = lo;
    t.hi = hi;
    t.target = prefix_[std::size_t(hi)] - prefix_[std::size_t(lo)];
    if (hi - lo == 1) t.proc = order_[std::size_t(lo)];
    return t;
  }

  void decide(const Task& t, const TileBox& bb, Effort effort, std::vector<Split>& splits,
              std::vector<Corner>& corners) const override {
    std::array<double, 3> e{};
    for (int d = 0; d < 3; ++d) e[d] = double(bb.extent(d));
    std::array<double, 3> s = e;
    std::sort(s.begin(), s.end());
    const double rho1 = s[2] / s[0], rho2 = s[2] / s[1];
    const double v = double(t.target);
    const double threshold = v / (3.0 * rho2);
    const auto first = prefix_.begin() + t.lo + 1, last = prefix_.begin() + t.hi;
    const auto it =
        std::lower_bound(first, last, prefix_[std::size_t(t.lo)] + I(std::ceil(threshold)));
    int longest = 0;
    for (int d = 1; d < 3; ++d)
      if (e[d] > e[longest]) longest = d;
    if (it != last) {
      const int k0 = int(it - prefix_.begin());
      // Fixed arrays: this runs once a node, a million times with a million processors.
      std::array<int, 2> ks{k0, 0};
      std::array<int, 3> axes{longest, 0, 0};
      int nk = 1, na = 1;
      if (effort == Effort::wide) {
        // The next split point too, when both sides still hold at least the rule's threshold
        // (what its guarantee needs; the point before it falls short by definition): it often
        // lands on whole layers (eight equal processors on a cube: halves, then eight cubes).
        if (k0 + 1 < t.hi &&
            double(prefix_[std::size_t(t.hi)] - prefix_[std::size_t(k0 + 1)]) >= threshold)
          ks[std::size_t(nk++)] = k0 + 1;
        for (int d = 0; d < 3; ++d)
          if (d != longest && e[d] >= 0.75 * e[longest]) axes[std::size_t(na++)] = d;
      }
      for (int i = 0; i < nk; ++i)
        for (int j = 0; j < na; ++j) {
          const int k = ks[std::size_t(i)];
          splits.push_back({task(t.lo, k), task(k, t.hi), axes[std::size_t(j)]});
        }
      return;
    }
    // The largest dominates: the others in a corner box (a cube, or with the shortest edge
    // full when the cube would not fit), the largest keeps the rest.
    const double small = double(prefix_[std::size_t(t.hi - 1)] - prefix_[std::size_t(t.lo)]);
    const double alpha = small / v;
    std::array<double, 3> ideal{};
    const bool cube_fits = alpha * rho1 * rho1 <= rho2;
    if (cube_fits || !three_modes_) {
      for (int d = 0; d < 3; ++d) ideal[d] = std::min(e[d], std::cbrt(small));
    } else {
      int shortest = 0;
      for (int d = 1; d < 3; ++d)
        if (e[d] < e[shortest]) shortest = d;
      const double side = std::sqrt(small / e[shortest]);
      for (int d = 0; d < 3; ++d) ideal[d] = d == shortest ? e[d] : std::min(e[d], side);
    }
    corners.push_back({task(t.lo, t.hi - 1), task(t.hi - 1, t.hi), ideal});
    if (effort != Effort::minimal)
      splits.push_back({task(t.lo, t.hi - 1), task(t.hi - 1, t.hi), longest});
  }

 private:
  std::vector<int> order_;
  std::vector<I> prefix_;
  bool three_modes_;
};

// A continuous cut tree, followed split by split.
class TreeSource : public Source {
 public:
  TreeSource(const CutTree& tree, const std::vector<I>& targets) : tree_(tree) {
    target_.assign(tree.nodes.size(), 0);
    // Post-order sums of the processors' targets (explicit stack: trees can be deep).
    std::vector<std::pair<int, bool>> stack{{tree.root, false}};
    while (!stack.empty()) {
      auto [id, done] = stack.back();
      stack.pop_back();
      const CutNode& n = tree.nodes[std::size_t(id)];
      if (n.kind == CutNode::Kind::leaf) {
        target_[std::size_t(id)] = n.owner >= 0 ? targets[std::size_t(n.owner)] : 0;
        continue;
      }
      if (!done) {
        stack.push_back({id, true});
        stack.push_back({n.lo, false});
        if (n.kind == CutNode::Kind::split) stack.push_back({n.hi, false});
        continue;
      }
      target_[std::size_t(id)] = n.kind == CutNode::Kind::split
                                     ? target_[std::size_t(n.lo)] + target_[std::size_t(n.hi)]
                                     : target_[std::size_t(n.lo)] + targets[std::size_t(n.owner)];
    }
    dominant_target_ = targets;
  }

  Task task(int node) const {
    Task t;
    t.node = node;
    t.target = target_[std::size_t(node)];
    const CutNode& n = tree_.nodes[std::size_t(node)];
    if (n.kind == CutNode::Kind::leaf) t.proc = n.owner;
    return t;
  }

  void decide(const Task& t, const TileBox& bb, Effort, std::vector<Split>& splits,
              std::vector<Corner>& corners) const override {
    const CutNode& n = tree_.nodes[std::size_t(t.node)];
    if (n.kind == CutNode::Kind::split) {
      splits.push_back({task(n.lo), task(n.hi), n.axis});
      return;
    }
    Task dom;
    dom.proc = n.owner;
    dom.target = dominant_target_[std::size_t(n.owner)];
    // The carved box scaled to the inner processors' count; edges that span the whole box stay
    // whole.
    std::array<double, 3> ideal{};
    double fixed = 1.0, free_volume = 1.0;
    int free_axes = 0;
    for (int d = 0; d < 3; ++d) {
      const bool full = n.inner.hi[d] >= n.box.hi[d] && n.inner.lo[d] <= n.box.lo[d];
      if (full) {
        ideal[d] = double(bb.extent(d));
        fixed *= ideal[d];
      } else {
        ideal[d] = n.inner.extent(d);
        free_volume *= ideal[d];
        ++free_axes;
      }
    }
    const double want = double(target_[std::size_t(n.lo)]);
    if (free_axes > 0 && free_volume > 0) {
      const double scale = std::pow(want / fixed / free_volume, 1.0 / free_axes);
      for (int d = 0; d < 3; ++d)
        if (ideal[d] != double(bb.extent(d)) || free_axes == 3) ideal[d] *= scale;
    }
    corners.push_back({task(n.lo), dom, ideal});
  }

 private:
  const CutTree& tree_;
  std::vector<I> target_;
  std::vector<I> dominant_target_;
};

// ---------------------------------------------------------------------------------------------
// Repair: two neighbouring zones are cut again as one region, with the same counts, when that
// lowers the larger of their box counts (or keeps it and lowers their half-surface). Only tiles
// on their shared boundary change hands in effect; no other zone is touched.

bool touch(const TileBox& a, const TileBox& b) {
  int face = -1;
  for (int d = 0; d < 3; ++d) {
    const I lo = std::max(a.lo[d], b.lo[d]), hi = std::min(a.hi[d], b.hi[d]);
    if (lo > hi) return false;
    if (lo == hi) {
      if (face >= 0) return false;
      face = d;
    }
  }
  return face >= 0;
}

bool neighbours(const TileZone& a, const TileZone& b) {
  for (const TileBox& x : a)
    for (const TileBox& y : b)
      if (touch(x, y)) return true;
  return false;
}

std::pair<int, double> cost(const Region& a, const Region& b) {
  return {std::max(int(a.size()), int(b.size())), half_surface_of(a) + half_surface_of(b)};
}

// u' = (u + v) inside the box `ib`, made exact with one step in the layer next to any face of
// ib (inside ib when it holds too many): the zone keeps one box and gains a step on the face
// where it fits, instead of the face where the recursion put it.
void anchored_cuts(const Region& region, const TileBox& bb, const TileBox& ib, I want,
                   std::vector<std::pair<Region, Region>>& out) {
  const Region inner = compact(inside(region, ib));
  const I have = cells(inner);
  if (have == 0) return;
  const I m = want - have;
  const Region rest = subtract(region, inner);
  if (m == 0) {
    out.push_back({inner, rest});
    return;
  }
  for (int f = 0; f < 3; ++f)
    for (bool high : {false, true}) {
      I layer;
      if (m > 0) {
        layer = high ? ib.hi[f] : ib.lo[f] - 1;
        if (layer < bb.lo[f] || layer >= bb.hi[f]) continue;
      } else {
        layer = high ? ib.hi[f] - 1 : ib.lo[f];
      }
      TileBox window = ib;
      window.lo[f] = layer;
      window.hi[f] = layer + 1;
      const Region& src = m > 0 ? rest : inner;
      if (cells(inside(src, window)) < std::abs(m)) continue;
      for (const Orientation& o : orientations(f)) {
        const Region step = staircase(src, f, layer, window, std::abs(m), o);
        if (m > 0) {
          out.push_back({join(inner, step), subtract(rest, step, f)});
        } else {
          out.push_back({subtract(inner, step, f), join(rest, step)});
        }
      }
    }
}

// Exact cuts of u + v into (u', v'), u' with u's count: u' (or v') as a corner box shaped like
// the zone's bounds, or a plane with a step along each axis; with `anchored`, also each box of
// u (or v) as it is and with one face moved to the count, made exact by anchored_cuts.
void pair_cuts(const TileZone& u, const TileZone& v, bool anchored,
               std::vector<std::pair<Region, Region>>& out, I count = -1) {
  const I want = count >= 0 ? count : cells(u);
  Task t;
  t.region = join(u, v);
  t.target = cells(t.region);
  const TileBox bb = bounds(t.region);
  auto take = [&](Option& o, bool flip) {
    out.push_back(flip ? std::make_pair(std::move(o.second.region), std::move(o.first.region))
                       : std::make_pair(std::move(o.first.region), std::move(o.second.region)));
  };
  std::vector<Option> opts;
  for (bool flip : {false, true}) {
    Source::Corner c;
    c.inner.target = flip ? t.target - want : want;
    c.dominant.target = t.target - c.inner.target;
    c.dominant.proc = 0;
    const TileBox shape = bounds(flip ? v : u);
    for (int d = 0; d < 3; ++d) c.ideal[d] = double(shape.extent(d));
    opts.clear();
    corner_options(c, t, bb, Effort::wide, opts);
    for (Option& o : opts) take(o, flip);
  }
  for (int d = 0; d < 3; ++d)
    for (bool flip : {false, true}) {
      Source::Split s;
      s.axis = d;
      s.below.target = flip ? t.target - want : want;
      s.above.target = t.target - s.below.target;
      opts.clear();
      split_options(s, t, bb, Effort::wide, opts);
      for (Option& o : opts) take(o, flip);
    }
  if (!anchored) return;
  std::vector<std::pair<Region, Region>> cuts;
  for (bool flip : {false, true}) {
    const I w = flip ? t.target - want : want;
    std::vector<TileBox> boxes;
    for (const TileBox& b : flip ? v : u) {
      boxes.push_back(b);
      for (int f = 0; f < 3; ++f) {
        // The high face moved to where the box holds about w tiles of the union, then the low.
        TileBox up = b;
        up.hi[f] = bb.hi[f];
        const I c = last_cut(inside(t.region, up), f, b.lo[f], bb.hi[f], w);
        for (I x : {c, c + 1})
          if (x > b.lo[f] && x <= bb.hi[f]) {
            up.hi[f] = x;
            boxes.push_back(up);
          }
        TileBox down = b;
        down.lo[f] = bb.lo[f];
        const Region in = inside(t.region, down);
        const I e = last_cut(in, f, bb.lo[f], b.hi[f], cells(in) - w);
        for (I x : {e, e + 1})
          if (x >= bb.lo[f] && x < b.hi[f]) {
            down.lo[f] = x;
            boxes.push_back(down);
          }
      }
    }
    for (const TileBox& ib : boxes) {
      cuts.clear();
      anchored_cuts(t.region, bb, ib, w, cuts);
      for (auto& [a, b] : cuts)
        out.push_back(flip ? std::make_pair(std::move(b), std::move(a))
                           : std::make_pair(std::move(a), std::move(b)));
    }
  }
}

// A re-cut may trade a little surface for fewer boxes, never more than this share.
constexpr double kRepairSurfaceSlack = 1.02;

// The best exact re-cut of u + v (u keeps its count), or nothing better than now.
bool recut(TileZone& u, TileZone& v) {
  auto best = cost(u, v);
  const double surface_cap = kRepairSurfaceSlack * best.second;
  bool improved = false;
  std::vector<std::pair<Region, Region>> cuts;
  pair_cuts(u, v, false, cuts);
  for (auto& [nu, nv] : cuts) {
    const auto k = cost(nu, nv);
    if (k < best && k.second <= surface_cap) {
      best = k;
      u = std::move(nu);
      v = std::move(nv);
      improved = true;
    }
  }
  return improved;
}

// Re-cuts of two neighbouring zones allowed per processor: the repair's work stays
// proportional to the processors whatever the cuboid.
constexpr int kRepairRecutsPerProcessor = 2;

void repair(std::vector<TileZone>& zones) {
  std::size_t active = 0;
  for (const TileZone& z : zones) active += !z.empty();
  long budget = long(kRepairRecutsPerProcessor * active);
  for (int round = 0; round < 2 && budget > 0; ++round) {
    bool changed = false;
    for (std::size_t p = 0; p < zones.size(); ++p) {
      if (zones[p].size() <= 4) continue;
      for (std::size_t q = 0; q < zones.size() && zones[p].size() > 4 && budget > 0; ++q) {
        if (q == p || zones[q].empty() || !neighbours(zones[p], zones[q])) continue;
        --budget;
        changed = recut(zones[p], zones[q]) || changed;
      }
    }
    if (!changed) break;
  }
}

// Boxes of a zone once merged: the sweeps of fewest_boxes for five or six joined boxes (below,
// nothing to gain; above, too dear for every candidate).
int boxes_of(const Region& r) {
  if (r.size() <= 4 || r.size() > 6) return int(r.size());
  return int(fewest_boxes(r).size());
}

// The last resort, for the zones that the repair leaves above four boxes (their extra boxes are
// steps of several ancestor cuts on different faces, each shared with another neighbour, so no
// re-cut with one neighbour removes them). Their surfaces may grow by this share of the zones
// involved (a zone of five boxes costs more than the surface: one GEMM per box)...
constexpr double kChainSurfaceSlack = 1.2;
// ...in this many rounds, and a chain's second re-cut starts from this many distinct first ones
// (the first re-cuts that leave both zones alike are tried once: several orientations of a step
// often give the same cut).
constexpr int kChainRounds = 4;
constexpr std::size_t kChainFirstCuts = 64;
// The most boxes a first re-cut may leave the neighbour with, for the second to bring down.
constexpr int kChainMiddleBoxes = 7;

// A zone p above four boxes is re-cut with a neighbour q (anchored cuts too) so that both
// have at most four; failing that, a chain: p with q leaving q above four, then q with one of
// its neighbours r, leaving all three at four or fewer (tiles move p -> q -> r in effect). The
// least total surface wins.
void repair_chains(std::vector<TileZone>& zones) {
  struct First {
    std::size_t q;
    Region u, v;
    double growth;  // of the surfaces of p and q
    int v_boxes;
  };
  std::vector<std::pair<Region, Region>> cuts;
  for (int round = 0; round < kChainRounds; ++round) {
    bool changed = false;
    for (std::size_t p = 0; p < zones.size(); ++p) {
      if (zones[p].size() <= 4) continue;
      const double hp = half_surface_of(zones[p]);
      std::vector<First> firsts;
      double best = std::numeric_limits<double>::infinity();
      First pair{};
      for (std::size_t q = 0; q < zones.size(); ++q) {
        if (q == p || zones[q].empty() || !neighbours(zones[p], zones[q])) continue;
        const double before = hp + half_surface_of(zones[q]);
        cuts.clear();
        pair_cuts(zones[p], zones[q], true, cuts);
        for (auto& [a, b] : cuts) {
          if (boxes_of(a) > 4) continue;
          const double hs = half_surface_of(a) + half_surface_of(b);
          if (hs > kChainSurfaceSlack * before) continue;
          const int vb = boxes_of(b);
          if (vb <= 4 && hs - before < best) {
            best = hs - before;
            pair = {q, std::move(a), std::move(b), hs - before, vb};
          } else if (vb > 4 && vb <= kChainMiddleBoxes) {
            firsts.push_back(
                {q, merge_boxes(std::move(a)), merge_boxes(std::move(b)), hs - before, vb});
          }
        }
      }
      if (best < std::numeric_limits<double>::infinity()) {
        zones[p] = fewest_boxes(std::move(pair.u));
        zones[pair.q] = fewest_boxes(std::move(pair.v));
        changed = true;
        continue;
      }
      std::stable_sort(firsts.begin(), firsts.end(), [](const First& a, const First& b) {
        return std::make_pair(a.v_boxes, a.growth) < std::make_pair(b.v_boxes, b.growth);
      });
      {
        std::vector<First> unique;
        for (First& f : firsts) {
          bool seen = false;
          for (const First& g : unique)
            if (g.q == f.q && g.u == f.u) {
              seen = true;
              break;
            }
          if (!seen) unique.push_back(std::move(f));
        }
        firsts.swap(unique);
      }
      if (firsts.size() > kChainFirstCuts) firsts.resize(kChainFirstCuts);
      std::size_t chosen = 0, third = 0;
      Region v2, w2;
      for (std::size_t i = 0; i < firsts.size(); ++i) {
        const First& f = firsts[i];
        for (std::size_t r = 0; r < zones.size(); ++r) {
          if (r == p || r == f.q || zones[r].empty() || !neighbours(f.v, zones[r])) continue;
          const double hr = half_surface_of(zones[r]);
          const double before = hp + half_surface_of(zones[f.q]) + hr;
          cuts.clear();
          pair_cuts(f.v, zones[r], true, cuts);
          for (auto& [a, b] : cuts) {
            if (boxes_of(a) > 4 || boxes_of(b) > 4) continue;
            const double growth =
                f.growth + half_surface_of(a) + half_surface_of(b) - half_surface_of(f.v) - hr;
            if (before + growth > kChainSurfaceSlack * before || growth >= best) continue;
            best = growth;
            chosen = i;
            third = r;
            v2 = std::move(a);
            w2 = std::move(b);
          }
        }
      }
      if (best < std::numeric_limits<double>::infinity()) {
        zones[p] = fewest_boxes(std::move(firsts[chosen].u));
        zones[firsts[chosen].q] = fewest_boxes(std::move(v2));
        zones[third] = fewest_boxes(std::move(w2));
        changed = true;
      }
    }
    if (!changed) break;
  }
}

// The last resort's third pass, for a zone p still above four boxes: p and two of its
// neighbours q and r cut again as one region. p takes its count from the union of the three
// (anchored cuts against q and r together: tiles may come from both), then what is left is cut
// between q and r with q's count; all three must end at four boxes or fewer, and their surfaces
// within the chains' allowance. The least surface wins.
constexpr std::size_t kTripleFirstCuts = 16;

void repair_triples(std::vector<TileZone>& zones) {
  std::vector<std::pair<Region, Region>> cuts, seconds;
  for (std::size_t p = 0; p < zones.size(); ++p) {
    if (zones[p].size() <= 4) continue;
    std::vector<std::size_t> near;
    for (std::size_t q = 0; q < zones.size(); ++q)
      if (q != p && !zones[q].empty() && neighbours(zones[p], zones[q])) near.push_back(q);
    const double hp = half_surface_of(zones[p]);
    double best = std::numeric_limits<double>::infinity();
    std::size_t bq = 0, br = 0;
    Region bu, bv, bw;
    for (std::size_t i = 0; i < near.size(); ++i)
      for (std::size_t j = i + 1; j < near.size(); ++j) {
        const std::size_t q = near[i], r = near[j];
        const double before = hp + half_surface_of(zones[q]) + half_surface_of(zones[r]);
        const Region qr = join(zones[q], zones[r]);
        cuts.clear();
        pair_cuts(zones[p], qr, true, cuts);
        struct First {
          Region u, rest;
          double hs;
        };
        std::vector<First> firsts;
        for (auto& [a, b] : cuts) {
          if (boxes_of(a) > 4) continue;
          Region u = merge_boxes(std::move(a));
          bool seen = false;
          for (const First& f : firsts)
            if (f.u == u) {
              seen = true;
              break;
            }
          if (!seen) {
            const double hs = half_surface_of(u);
            firsts.push_back({std::move(u), std::move(b), hs});
          }
        }
        std::stable_sort(firsts.begin(), firsts.end(),
                         [](const First& a, const First& b) { return a.hs < b.hs; });
        if (firsts.size() > kTripleFirstCuts) firsts.resize(kTripleFirstCuts);
        for (const First& f : firsts) {
          if (f.hs >= kChainSurfaceSlack * before) break;
          // What is left, split with q's and r's old tiles as the hints.
          Region hq;
          for (const TileBox& b : zones[q])
            for (const TileBox& x : inside(f.rest, b)) hq.push_back(x);
          hq = compact(std::move(hq));
          const Region hr = subtract(f.rest, hq);
          seconds.clear();
          pair_cuts(hq, hr, true, seconds, cells(zones[q]));
          for (auto& [a, b] : seconds) {
            if (boxes_of(a) > 4 || boxes_of(b) > 4) continue;
            const double hs = f.hs + half_surface_of(a) + half_surface_of(b);
            if (hs > kChainSurfaceSlack * before || hs - before >= best) continue;
            best = hs - before;
            bq = q;
            br = r;
            bu = f.u;
            bv = std::move(a);
            bw = std::move(b);
          }
        }
      }
    if (best < std::numeric_limits<double>::infinity()) {
      zones[p] = fewest_boxes(std::move(bu));
      zones[bq] = fewest_boxes(std::move(bv));
      zones[br] = fewest_boxes(std::move(bw));
    }
  }
}

// Zones still above four boxes cut again by sweeps (fewest_boxes), where that finds fewer.
void fewest(std::vector<TileZone>& zones) {
  for (TileZone& z : zones)
    if (z.size() > 4) z = fewest_boxes(std::move(z));
}

double total_half_surface(const std::vector<TileZone>& zones) {
  double s = 0;
  for (const TileZone& z : zones) s += half_surface_of(z);
  return s;
}

// The retries of a result that keeps a zone above four boxes (lookahead only): at most this many
// passes more, each with one ancestor of such a zone on a candidate of rank 1..kRetryRanks, and
// a result kept when its total half-surface is within this share of the first one's.
constexpr int kRetries = 8;
constexpr std::size_t kRetryRanks = 2;
constexpr double kRetrySurfaceSlack = 1.02;

Region whole(const TileExtent& tiles) {
  TileBox b;
  b.hi = tiles;
  return {b};
}

void check_total(const std::vector<I>& targets, const TileExtent& tiles) {
  I total = 0;
  for (I t : targets) {
    if (t < 0) throw std::invalid_argument("stepped: negative tile count");
    total += t;
  }
  if (total != tiles[0] * tiles[1] * tiles[2])
    throw std::invalid_argument("stepped: the counts do not add up to the cuboid");
}

}  // namespace

std::vector<TileZone> stepped_nrrp3d(const std::vector<I>& targets, const TileExtent& tiles,
                                     bool three_modes) {
  check_total(targets, tiles);
  std::vector<int> order;
  for (std::size_t p = 0; p < targets.size(); ++p)
    if (targets[p] > 0) order.push_back(int(p));
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return targets[std::size_t(a)] < targets[std::size_t(b)]; });
  std::vector<I> prefix(order.size() + 1, 0);
  for (std::size_t i = 0; i < order.size(); ++i)
    prefix[i + 1] = prefix[i] + targets[std::size_t(order[i])];
  const std::size_t active = order.size();
  // Each processor's place in `order`: read only by the retries, which only lookahead runs have.
  std::vector<int> position;
  if (active <= kSteppedLookaheadProcessors) {
    position.assign(targets.size(), -1);
    for (std::size_t i = 0; i < order.size(); ++i) position[std::size_t(order[i])] = int(i);
  }
  NrrpSource source(std::move(order), std::move(prefix), three_modes);
  const bool lookahead = active <= kSteppedLookaheadProcessors;
  std::vector<Solver::Node> decided;
  std::vector<Solver::Memo> memo;
  auto solve = [&](const std::vector<Solver::Forced>& forced) {
    Solver solver(source, targets.size(), lookahead, active <= kSteppedCompareProcessors);
    solver.forced_ = forced;
    if (forced.empty())
      solver.record_ = &memo;
    else
      solver.memo_ = &memo;
    Task root = source.task(0, int(active));
    root.region = whole(tiles);
    auto zones = solver.run(std::move(root));
    if (lookahead) repair(zones);
    if (active <= kSteppedCompareProcessors) fewest(zones);
    if (lookahead) {
      repair_chains(zones);
      repair_triples(zones);
    }
    decided = std::move(solver.decided_);
    return zones;
  };
  auto zones = solve({});
  if (!lookahead) return zones;
  // A zone still above four boxes: its steps come from the cuts of its ancestors. Each ancestor
  // that chose among several candidates, deepest first, takes its next candidate instead, and
  // the first result with no zone above four boxes is kept, when its surface is within the
  // allowance; at most kRetries passes more.
  std::vector<std::size_t> bad;
  for (std::size_t p = 0; p < zones.size(); ++p)
    if (zones[p].size() > 4) bad.push_back(p);
  if (bad.empty()) return zones;
  std::vector<Solver::Node> ancestors;
  for (const Solver::Node& n : decided)
    for (std::size_t p : bad)
      if (n.lo <= position[p] && position[p] < n.hi) {
        ancestors.push_back(n);
        break;
      }
  std::stable_sort(ancestors.begin(), ancestors.end(),
                   [](const auto& a, const auto& b) { return a.hi - a.lo < b.hi - b.lo; });
  const double limit = kRetrySurfaceSlack * total_half_surface(zones);
  int tries = 0;
  for (std::size_t rank = 1; rank <= kRetryRanks && tries < kRetries; ++rank)
    for (const Solver::Node& n : ancestors) {
      if (rank >= n.candidates) continue;
      if (tries++ >= kRetries) break;
      auto other = solve({{n.lo, n.hi, n.node, rank}});
      bool ok = true;
      for (const TileZone& z : other) ok = ok && z.size() <= 4;
      if (ok && total_half_surface(other) <= limit) return other;
    }
  return zones;
}

std::vector<TileZone> stepped_tree(const CutTree& tree, const std::vector<I>& targets,
                                   const TileExtent& tiles) {
  check_total(targets, tiles);
  std::size_t active = 0;
  for (I t : targets) active += t > 0;
  TreeSource source(tree, targets);
  Solver solver(source, targets.size(), active <= kSteppedLookaheadProcessors,
                active <= kSteppedCompareProcessors);
  Task root = source.task(tree.root);
  root.region = whole(tiles);
  auto zones = solver.run(std::move(root));
  if (active <= kSteppedCompareProcessors) fewest(zones);
  return zones;
}

}  // namespace cuboid::partition
