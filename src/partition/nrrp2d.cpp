// 2D NRRP on the C face (i,j); the l range is never split, so every zone spans [0,K).
//
// This is the recursive scheme of Beaumont, Eyraud-Dubois and Lambert (IPDPS 2016) in the simple
// form that 3D-NRRP generalises: with rho = long side / short side of the
// current rectangle and s its area, if a prefix of the sorted areas reaches s / (3 rho), cut
// across the long side; otherwise the largest processor dominates and the others get a square
// in a corner (it always fits: its area is below short^2 / 3). Rectangles keep rho <= max(3,
// rho0), so a rectangular zone has half-perimeter <= 2/sqrt(3) * 2 sqrt(s) and an L-shaped one
// (rectangle minus a square of at most 1/(3 rho) of it) <= sqrt(3/2) * 2 sqrt(s).
#include <algorithm>
#include <cmath>

#include "partition/algorithms.hpp"

namespace cuboid::partition::detail {

CutTree nrrp2d(const std::vector<double>& weights, const Box& cuboid) {
  Peeler peeler(weights, cuboid);
  return peeler.run([&](const Peeler::Range& t, const Box& r) {
    const int long_axis = r.extent(1) > r.extent(0) ? 1 : 0;
    const int short_axis = 1 - long_axis;
    const double rho = r.extent(long_axis) / r.extent(short_axis);
    const double s = peeler.sum(t.lo, t.hi);
    const std::size_t k = peeler.first_reaching(t, s / (3.0 * rho));
    if (k != t.hi) {
      peeler.split(t, r, long_axis, k);
      return;
    }
    const double alpha = peeler.sum(t.lo, t.hi - 1) / s;
    const double side = std::sqrt(alpha * r.extent(0) * r.extent(1));
    Box inner = r;
    for (int d = 0; d < 2; ++d) inner.hi[d] = std::min(r.hi[d], r.lo[d] + side);
    peeler.corner(t, inner);
  });
}

}  // namespace cuboid::partition::detail
