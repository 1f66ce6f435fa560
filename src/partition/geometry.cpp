#include "partition/geometry.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

namespace cuboid::partition {
namespace {

// Segment tree over compressed y coordinates: cover counts and covered length per node.
// The classic trick: a node's count is only changed by updates spanning it entirely, so no
// push-down is needed and covered length is exact.
class CoverTree {
 public:
  explicit CoverTree(std::vector<double> ys) : ys_(std::move(ys)) {
    const std::size_t n = ys_.size() > 1 ? ys_.size() - 1 : 1;
    count_.assign(4 * n, 0);
    covered_.assign(4 * n, 0.0);
  }
  void add(std::size_t lo, std::size_t hi, int delta) {
    if (lo < hi) update(1, 0, ys_.size() - 1, lo, hi, delta);
  }
  double covered() const { return covered_[1]; }

 private:
  void update(std::size_t node, std::size_t l, std::size_t r, std::size_t lo, std::size_t hi,
              int delta) {
    if (hi <= l || r <= lo) return;
    if (lo <= l && r <= hi) {
      count_[node] += delta;
    } else {
      const std::size_t mid = (l + r) / 2;
      update(2 * node, l, mid, lo, hi, delta);
      update(2 * node + 1, mid, r, lo, hi, delta);
    }
    if (count_[node] > 0) {
      covered_[node] = ys_[r] - ys_[l];
    } else if (r - l == 1) {
      covered_[node] = 0.0;
    } else {
      covered_[node] = covered_[2 * node] + covered_[2 * node + 1];
    }
  }
  std::vector<double> ys_;
  std::vector<int> count_;
  std::vector<double> covered_;
};

// Drops rectangles inside another and joins two that share a whole edge, until none is left:
// the boxes of a zone stacked along an axis project onto the same rectangle, so a zone of
// many boxes usually has a few distinct projections. Same union.
void simplify(std::vector<RealRect>& v) {
  RealRect* r = v.data();
  std::size_t n = v.size();
  // Every test is evaluated without branching (this runs three times a zone, and most pairs
  // fail all four tests); a rectangle that grew is compared again in the next round.
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = i + 1; j < n;) {
        RealRect& x = r[i];
        const RealRect& y = r[j];
        const bool rows = (x.j0 == y.j0) & (x.j1 == y.j1) & (x.i0 <= y.i1) & (y.i0 <= x.i1);
        const bool cols = (x.i0 == y.i0) & (x.i1 == y.i1) & (x.j0 <= y.j1) & (y.j0 <= x.j1);
        const bool y_in_x = (x.i0 <= y.i0) & (y.i1 <= x.i1) & (x.j0 <= y.j0) & (y.j1 <= x.j1);
        const bool x_in_y = (y.i0 <= x.i0) & (x.i1 <= y.i1) & (y.j0 <= x.j0) & (x.j1 <= y.j1);
        if (!(rows | cols | y_in_x | x_in_y)) {
          ++j;
          continue;
        }
        if (rows) {  // same rows, touching or overlapping along x
          x.i0 = std::min(x.i0, y.i0);
          x.i1 = std::max(x.i1, y.i1);
        } else if (cols) {
          x.j0 = std::min(x.j0, y.j0);
          x.j1 = std::max(x.j1, y.j1);
        } else if (!y_in_x) {
          x = y;
        }
        r[j] = r[--n];
        changed = true;
      }
  }
  v.resize(n);
}

template <class Z>
std::array<double, 3> projections_of(const Z& zone) {
  // Plane of pi_A is (i,l), of pi_B (l,j), of pi_C (i,j).
  static constexpr int axes[3][2] = {{0, 2}, {2, 1}, {0, 1}};
  std::array<double, 3> out{};
  thread_local std::vector<RealRect> rects;  // reused: measure() calls this once per zone
  for (int f = 0; f < 3; ++f) {
    rects.clear();
    for (const auto& b : zone) {
      if (b.empty()) continue;
      const int a = axes[f][0], c = axes[f][1];
      rects.push_back({double(b.lo[a]), double(b.hi[a]), double(b.lo[c]), double(b.hi[c])});
    }
    if (rects.size() > 4) simplify(rects);  // up to four, inclusion-exclusion is cheaper
    out[f] = union_area(rects);
  }
  return out;
}

template <class Z>
double volume_of(const Z& zone) {
  double v = 0.0;
  for (const auto& b : zone) v += b.volume();
  return v;
}

template <class Z>
Footprint footprint_of(const Z& zone) {
  std::vector<std::array<double, 2>> is, js;
  std::vector<RealRect> rects;
  for (const auto& b : zone) {
    if (b.empty()) continue;
    is.push_back({double(b.lo[0]), double(b.hi[0])});
    js.push_back({double(b.lo[1]), double(b.hi[1])});
    rects.push_back({double(b.lo[0]), double(b.hi[0]), double(b.lo[1]), double(b.hi[1])});
  }
  return {union_length(std::move(is)), union_length(std::move(js)), union_area(rects)};
}

// Inclusion-exclusion over the subsets of at most 4 rectangles (at most 15 intersections).
double union_area_few(const std::vector<RealRect>& rects) {
  // Inclusion-exclusion over the subsets (at most 15 intersections).
  const std::size_t n = rects.size();
  double area = 0.0;
  for (unsigned mask = 1; mask < (1u << n); ++mask) {
    double x0 = -1e308, x1 = 1e308, y0 = -1e308, y1 = 1e308;
    int bits = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (mask >> i & 1u) {
        x0 = std::max(x0, rects[i].i0);
        x1 = std::min(x1, rects[i].i1);
        y0 = std::max(y0, rects[i].j0);
        y1 = std::min(y1, rects[i].j1);
        ++bits;
      }
    if (x0 < x1 && y0 < y1) area += (bits % 2 ? 1.0 : -1.0) * (x1 - x0) * (y1 - y0);
  }
  return area;
}

// At most 16 rectangles (the common case): the cells of the compressed grid marked, no allocation.
double union_area_grid(const std::vector<RealRect>& rects) {
  std::array<double, 32> xs{}, ys{};
  std::size_t nx = 0, ny = 0;
  auto insert = [](std::array<double, 32>& v, std::size_t& n, double x) {
    std::size_t i = 0;
    while (i < n && v[i] < x) ++i;
    if (i < n && v[i] == x) return;
    for (std::size_t k = n; k > i; --k) v[k] = v[k - 1];
    v[i] = x;
    ++n;
  };
  for (const RealRect& r : rects) {
    if (!(r.i0 < r.i1 && r.j0 < r.j1)) continue;
    insert(xs, nx, r.i0);
    insert(xs, nx, r.i1);
    insert(ys, ny, r.j0);
    insert(ys, ny, r.j1);
  }
  if (nx == 0) return 0.0;
  auto index = [](const std::array<double, 32>& v, std::size_t n, double x) {
    std::size_t i = 0;
    while (i < n && v[i] < x) ++i;
    return i;
  };
  std::array<std::uint32_t, 32> covered{};  // bit j of covered[i]: cell (i, j) is covered
  for (const RealRect& r : rects) {
    if (!(r.i0 < r.i1 && r.j0 < r.j1)) continue;
    const std::size_t i0 = index(xs, nx, r.i0), i1 = index(xs, nx, r.i1);
    const std::size_t j0 = index(ys, ny, r.j0), j1 = index(ys, ny, r.j1);
    const std::uint32_t mask =
        std::uint32_t(((std::uint64_t(1) << j1) - 1) & ~((std::uint64_t(1) << j0) - 1));
    for (std::size_t i = i0; i < i1; ++i) covered[i] |= mask;
  }
  double area = 0.0;
  for (std::size_t i = 0; i + 1 < nx; ++i) {
    double len = 0.0;
    for (std::size_t j = 0; j + 1 < ny; ++j)
      if (covered[i] >> j & 1u) len += ys[j + 1] - ys[j];
    area += len * (xs[i + 1] - xs[i]);
  }
  return area;
}

// Any number: a sweep along i over a segment tree of the distinct j bounds.
double union_area_sweep(const std::vector<RealRect>& rects) {
  std::vector<double> ys;
  ys.reserve(2 * rects.size());
  for (const RealRect& r : rects) {
    if (r.i0 < r.i1 && r.j0 < r.j1) {
      ys.push_back(r.j0);
      ys.push_back(r.j1);
    }
  }
  if (ys.empty()) return 0.0;
  std::sort(ys.begin(), ys.end());
  ys.erase(std::unique(ys.begin(), ys.end()), ys.end());
  struct Event {
    double x;
    int delta;
    std::size_t lo, hi;
  };
  std::vector<Event> events;
  events.reserve(2 * rects.size());
  auto index = [&](double y) {
    return std::size_t(std::lower_bound(ys.begin(), ys.end(), y) - ys.begin());
  };
  for (const RealRect& r : rects) {
    if (!(r.i0 < r.i1 && r.j0 < r.j1)) continue;
    const std::size_t lo = index(r.j0), hi = index(r.j1);
    events.push_back({r.i0, +1, lo, hi});
    events.push_back({r.i1, -1, lo, hi});
  }
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.x < b.x || (a.x == b.x && a.delta < b.delta);
  });
  CoverTree tree(std::move(ys));
  double area = 0.0;
  double x = events.front().x;
  for (const Event& e : events) {
    area += tree.covered() * (e.x - x);
    x = e.x;
    tree.add(e.lo, e.hi, e.delta);
  }
  return area;
}

}  // namespace

double union_area(const std::vector<RealRect>& rects) {
  if (rects.empty()) return 0.0;
  if (rects.size() == 1) {
    const RealRect& r = rects[0];
    return std::max(0.0, r.i1 - r.i0) * std::max(0.0, r.j1 - r.j0);
  }
  if (rects.size() <= 4) return union_area_few(rects);
  if (rects.size() <= 16) return union_area_grid(rects);
  return union_area_sweep(rects);
}

double union_length(std::vector<std::array<double, 2>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  double total = 0.0, start = 0.0, end = 0.0;
  bool open = false;
  for (const auto& iv : intervals) {
    if (!(iv[0] < iv[1])) continue;
    if (open && iv[0] <= end) {
      end = std::max(end, iv[1]);
    } else {
      if (open) total += end - start;
      start = iv[0];
      end = iv[1];
      open = true;
    }
  }
  if (open) total += end - start;
  return total;
}

std::array<double, 3> projections(const Zone& zone) { return projections_of(zone); }
std::array<double, 3> projections(const TileZone& zone) { return projections_of(zone); }
double volume(const Zone& zone) { return volume_of(zone); }
double volume(const TileZone& zone) { return volume_of(zone); }

double half_surface(const Zone& zone) {
  const auto p = projections(zone);
  return p[0] + p[1] + p[2];
}
double half_surface(const TileZone& zone) {
  const auto p = projections(zone);
  return p[0] + p[1] + p[2];
}

double lower_bound_plain(double v) { return v > 0 ? 3.0 * std::cbrt(v * v) : 0.0; }

double lower_bound(double v, const Extent& extent) {
  if (!(v > 0)) return 0.0;
  std::array<double, 3> d = extent;
  std::sort(d.begin(), d.end());
  const double edge = std::cbrt(v);
  if (edge <= d[0]) return 3.0 * edge * edge;
  const double s = std::sqrt(v / d[0]);
  if (s <= d[1]) return 2.0 * d[0] * s + s * s;
  const double e3 = v / (d[0] * d[1]);
  return d[0] * d[1] + d[0] * e3 + d[1] * e3;
}

double aspect_ratio(const Box& b) {
  const double e[3] = {b.extent(0), b.extent(1), b.extent(2)};
  return std::max({e[0], e[1], e[2]}) / std::min({e[0], e[1], e[2]});
}

double second_aspect_ratio(const Box& b) {
  std::array<double, 3> e = {b.extent(0), b.extent(1), b.extent(2)};
  std::sort(e.begin(), e.end());
  return e[2] / e[1];
}

Box bounding_box(const Zone& zone) { return bounds_of<Box>(zone); }

Footprint footprint(const Zone& zone) { return footprint_of(zone); }
Footprint footprint(const TileZone& zone) { return footprint_of(zone); }

}  // namespace cuboid::partition
