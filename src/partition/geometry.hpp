#pragma once
// Measures of zones: volume, projections (as unions, never double counting), half-covering
// surface Hs and the lower bounds it is compared with.
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "partition/box.hpp"

namespace cuboid::partition {

// Exact area of a union of rectangles (sweep over x, segment tree over compressed y).
// Exact for integer coordinates up to 2^53; O(n log n).
double union_area(const std::vector<RealRect>& rects);

// Length of a union of intervals [a,b).
double union_length(std::vector<std::array<double, 2>> intervals);

// The projections of a zone seen as the union of its boxes: pi[0] = |pi_A| (i,l plane),
// pi[1] = |pi_B| (l,j plane), pi[2] = |pi_C| (i,j plane).
std::array<double, 3> projections(const Zone& zone);
std::array<double, 3> projections(const TileZone& zone);

double volume(const Zone& zone);
double volume(const TileZone& zone);

// Hs = |pi_A| + |pi_B| + |pi_C|.
double half_surface(const Zone& zone);
double half_surface(const TileZone& zone);

// Loomis-Whitney bound 3 V^(2/3).
double lower_bound_plain(double v);

// Shape-aware bound L(V): the Hs of the best box of volume V that fits in the cuboid `extent`.
double lower_bound(double v, const Extent& extent);

// Aspect ratio (largest edge / smallest edge) and second aspect ratio (largest / median).
double aspect_ratio(const Box& b);
double second_aspect_ratio(const Box& b);

// Bounding box of a zone (empty box for an empty zone).
Box bounding_box(const Zone& zone);

// 2D model: the zone's footprint on the C face, (pi_i, pi_j, area s).
struct Footprint {
  double pi_i, pi_j, area;
};
Footprint footprint(const Zone& zone);
Footprint footprint(const TileZone& zone);

// Lower bound 2 sqrt(s) of the half-perimeter of a 2D zone of area s.
inline double lower_bound_2d(double area) { return 2.0 * std::sqrt(area); }

}  // namespace cuboid::partition
