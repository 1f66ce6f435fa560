#include "partition/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "partition/geometry.hpp"
#include "partition/parallel.hpp"

namespace cuboid::partition {
namespace {

template <class Z>
double bounding_aspect(const Z& zone) {
  const Box bb = bounds_of<Box>(zone);
  return bb.empty() ? 0.0 : aspect_ratio(bb);
}

template <class Z>
PartitionMetrics measure_any(const std::vector<Z>& zones, const std::vector<double>& speeds,
                             const Extent& extent) {
  if (zones.size() != speeds.size())
    throw std::invalid_argument("measure: one speed per zone is needed");
  double total_speed = 0.0;
  for (double s : speeds) total_speed += s;
  const double total_volume = extent[0] * extent[1] * extent[2];
  PartitionMetrics out{};
  double plain_total = 0.0;
  out.imbalance = -1.0;
  out.zones.resize(zones.size());
  // Zones are measured independently (10^6 of them take a second and a half alone); sums are
  // then taken in zone order, so results do not depend on the number of threads.
  for_each_item(zones, [&](std::size_t p) {
    ZoneMetrics& z = out.zones[p];
    z.speed = speeds[p];
    z.target_volume = speeds[p] / total_speed * total_volume;
    z.volume = volume(zones[p]);
    z.hs = half_surface(zones[p]);
    z.lower_bound = lower_bound(z.volume, extent);
    z.lower_bound_plain = lower_bound_plain(z.volume);
    z.aspect_ratio = bounding_aspect(zones[p]);
  });
  for (const ZoneMetrics& z : out.zones) {
    out.hs_total += z.hs;
    out.lower_bound_total += z.lower_bound;
    plain_total += z.lower_bound_plain;
    if (z.target_volume > 0)
      out.imbalance = std::max(out.imbalance, z.volume / z.target_volume - 1);
    if (z.volume > 0 && z.lower_bound > 0)
      out.worst_zone_ratio = std::max(out.worst_zone_ratio, z.hs / z.lower_bound);
  }
  out.ratio = out.lower_bound_total > 0 ? out.hs_total / out.lower_bound_total : 0.0;
  out.ratio_plain = plain_total > 0 ? out.hs_total / plain_total : 0.0;
  return out;
}

template <class Z>
double ratio_2d_any(const std::vector<Z>& zones) {
  double perimeter = 0.0, bound = 0.0;
  for (const Z& z : zones) {
    const Footprint f = footprint(z);
    perimeter += f.pi_i + f.pi_j;
    bound += lower_bound_2d(f.area);
  }
  return bound > 0 ? perimeter / bound : 0.0;
}

}  // namespace

PartitionMetrics measure(const std::vector<Zone>& zones, const std::vector<double>& speeds,
                         const Extent& extent) {
  return measure_any(zones, speeds, extent);
}

PartitionMetrics measure(const std::vector<TileZone>& zones, const std::vector<double>& speeds,
                         const TileExtent& extent) {
  return measure_any(zones, speeds, {double(extent[0]), double(extent[1]), double(extent[2])});
}

double ratio_2d(const std::vector<Zone>& zones) { return ratio_2d_any(zones); }
double ratio_2d(const std::vector<TileZone>& zones) { return ratio_2d_any(zones); }

std::vector<Traffic> traffic(const std::vector<TileZone>& zones, std::int64_t m, std::int64_t n,
                             std::int64_t k, std::int64_t tile, std::size_t elem_bytes,
                             bool beta_nonzero) {
  if (tile < 1 || m < 1 || n < 1 || k < 1)
    throw std::invalid_argument("traffic: matrix sizes and tile size must be positive");
  // Tile coordinate -> element coordinate is monotone (x b, capped at the matrix size), so the
  // union of projected rectangles maps to the union of element rectangles.
  const std::int64_t size[3] = {m, n, k};
  auto elem = [&](int axis, std::int64_t x) { return double(std::min(x * tile, size[axis])); };
  auto area = [&](const TileZone& z, int a, int b, bool only_first_layer) {
    std::vector<RealRect> rects;
    for (const TileBox& t : z) {
      if (t.empty() || (only_first_layer && t.lo[2] != 0)) continue;
      rects.push_back({elem(a, t.lo[a]), elem(a, t.hi[a]), elem(b, t.lo[b]), elem(b, t.hi[b])});
    }
    return union_area(rects);
  };
  const double bytes = double(elem_bytes);
  std::vector<Traffic> out;
  out.reserve(zones.size());
  for (const TileZone& z : zones) {
    Traffic t;
    t.a_bytes = area(z, 0, 2, false) * bytes;
    t.b_bytes = area(z, 2, 1, false) * bytes;
    const double c = area(z, 0, 1, false);
    const double owned = area(z, 0, 1, true);
    t.c_write_bytes = c * bytes;
    t.c_read_bytes = beta_nonzero ? c * bytes : 0.0;
    t.reduction_bytes = (c - owned) * bytes;
    out.push_back(t);
  }
  return out;
}

Traffic sum(const std::vector<Traffic>& per_zone) {
  Traffic t;
  for (const Traffic& z : per_zone) {
    t.a_bytes += z.a_bytes;
    t.b_bytes += z.b_bytes;
    t.c_read_bytes += z.c_read_bytes;
    t.c_write_bytes += z.c_write_bytes;
    t.reduction_bytes += z.reduction_bytes;
  }
  return t;
}

}  // namespace cuboid::partition
