#pragma once
// Half-open axis-aligned boxes in the iteration space of tile tasks.
// Axis 0 is i (rows of C, M tiles), axis 1 is j (columns of C, N tiles), axis 2 is l (the inner
// dimension, K tiles). A box [lo, hi) holds the tasks T(i,j,l) with lo[d] <= x_d < hi[d].
#include <array>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace cuboid::partition {

template <class T>
struct BasicBox {
  std::array<T, 3> lo{};
  std::array<T, 3> hi{};

  T extent(int d) const { return hi[d] - lo[d]; }
  bool empty() const { return !(lo[0] < hi[0] && lo[1] < hi[1] && lo[2] < hi[2]); }
  // Volume as double: integer boxes of 10^6 tiles per edge overflow 64-bit products.
  double volume() const {
    return empty() ? 0.0 : double(extent(0)) * double(extent(1)) * double(extent(2));
  }
  friend bool operator==(const BasicBox& a, const BasicBox& b) {
    return a.lo == b.lo && a.hi == b.hi;
  }
  friend bool operator!=(const BasicBox& a, const BasicBox& b) { return !(a == b); }
};

using Box = BasicBox<double>;            // continuous partitions
using TileBox = BasicBox<std::int64_t>;  // discretised partitions, in tile coordinates

// A half-open axis-aligned rectangle [i0,i1) x [j0,j1) in one plane of the cuboid.
template <class T>
struct BasicRect {
  T i0{}, i1{}, j0{}, j1{};
  T rows() const { return i1 - i0; }
  T cols() const { return j1 - j0; }
  friend bool operator==(const BasicRect& a, const BasicRect& b) {
    return a.i0 == b.i0 && a.i1 == b.i1 && a.j0 == b.j0 && a.j1 == b.j1;
  }
  friend bool operator!=(const BasicRect& a, const BasicRect& b) { return !(a == b); }
};

using Rect = BasicRect<std::int64_t>;  // a block of a matrix, in elements or tiles
using RealRect = BasicRect<double>;    // a projection of a continuous zone

// A zone is what one processor computes: a disjoint union of boxes.
using Zone = std::vector<Box>;
using TileZone = std::vector<TileBox>;

// The smallest box of type Out around the non-empty boxes of `boxes` (any box type), or an
// empty Out when there are none.
template <class Out, class Boxes>
Out bounds_of(const Boxes& boxes) {
  using T = decltype(Out{}.lo[0]);
  Out out;
  bool first = true;
  for (const auto& b : boxes) {
    if (b.empty()) continue;
    for (int d = 0; d < 3; ++d) {
      const auto lo = static_cast<std::decay_t<T>>(b.lo[d]);
      const auto hi = static_cast<std::decay_t<T>>(b.hi[d]);
      out.lo[d] = first || lo < out.lo[d] ? lo : out.lo[d];
      out.hi[d] = first || out.hi[d] < hi ? hi : out.hi[d];
    }
    first = false;
  }
  return out;
}

// The zone's one non-empty box, or nullptr when it has none or several.
inline const TileBox* single_box(const TileZone& zone) {
  const TileBox* found = nullptr;
  for (const auto& b : zone) {
    if (b.empty()) continue;
    if (found != nullptr) return nullptr;
    found = &b;
  }
  return found;
}

// Extents of the cuboid [0,M) x [0,N) x [0,K).
using Extent = std::array<double, 3>;
using TileExtent = std::array<std::int64_t, 3>;

}  // namespace cuboid::partition
