// Region algebra for STEPPED (see region.hpp): counting, cutting, clipping, subtracting and
// joining short lists of disjoint integer boxes.
#include "partition/stepped/region.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

#include "partition/geometry.hpp"
#include "partition/merge.hpp"

namespace cuboid::partition::stepped_detail {
namespace {

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

}  // namespace

I cells(const Region& r) {
  I s = 0;
  for (const TileBox& b : r) s += cells(b);
  return s;
}

TileBox bounds(const Region& r) { return bounds_of<TileBox>(r); }

I count_below(const Region& r, int d, I c) {
  I s = 0;
  for (TileBox b : r) {
    if (b.lo[d] >= c) continue;
    b.hi[d] = std::min(b.hi[d], c);
    s += cells(b);
  }
  return s;
}

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
  for (int d : {2, 1, 0}) join_along(r, d);
  return false;
}

Region compact(Region r) {
  compact_in_place(r);
  return r;
}

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

Region subtract(const Region& r, const Region& s, int first) {
  Region out = r;
  subtract_in_place(out, s, first);
  return compact(std::move(out));
}

Region join(Region a, const Region& b) {
  a.insert(a.end(), b.begin(), b.end());
  return compact(std::move(a));
}

double half_surface_of(const Region& r) { return r.empty() ? 0.0 : half_surface(r); }

}  // namespace cuboid::partition::stepped_detail
