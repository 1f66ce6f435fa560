// Staircases (see staircase.hpp): a step cut out of one layer by a 2D sweep over that layer's
// rectangles, and the orders in which a layer's tiles may be taken.
#include "partition/stepped/staircase.hpp"

#include <algorithm>
#include <utility>

namespace cuboid::partition::stepped_detail {

void staircase_into(const Region& src, int d, I layer, const TileBox& window, I m,
                    const Orientation& o, Region& out) {
  struct Slice {  // a box's trace on the layer, in its major and minor axes
    I a0, a1, b0, b1;
  };
  thread_local std::vector<Slice> rects;
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
    for (const Slice& r : rects)
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

std::vector<Orientation> orientations(int d) {
  const int a = (d + 1) % 3, b = (d + 2) % 3;
  std::vector<Orientation> out;
  for (auto [mj, mn] : {std::pair{a, b}, std::pair{b, a}})
    for (bool u : {true, false})
      for (bool v : {true, false}) out.push_back({mj, mn, u, v});
  return out;
}

Orientation default_orientation(int d, const TileBox& b) {
  const int a = (d + 1) % 3, c = (d + 2) % 3;
  return b.extent(a) >= b.extent(c) ? Orientation{a, c, true, true} : Orientation{c, a, true, true};
}

}  // namespace cuboid::partition::stepped_detail
