#pragma once
// Quality and traffic of a partition: half-covering surfaces against their lower bounds.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "partition/box.hpp"

namespace cuboid::partition {

struct ZoneMetrics {
  double speed;
  double target_volume;  // speed / sum of speeds * M N K
  double volume;
  double hs;                 // |pi_A| + |pi_B| + |pi_C|, projections of the zone as a union
  double lower_bound;        // shape-aware L(V)
  double lower_bound_plain;  // 3 V^(2/3)
  double aspect_ratio;       // of the zone's bounding box (0 for an empty zone)
};

struct PartitionMetrics {
  std::vector<ZoneMetrics> zones;
  double hs_total;
  double lower_bound_total;
  double ratio;             // hs_total / lower_bound_total
  double ratio_plain;       // hs_total / sum of 3 V^(2/3)
  double imbalance;         // max_p V_p / v_p - 1
  double worst_zone_ratio;  // max_p hs / lower_bound over non-empty zones
};

PartitionMetrics measure(const std::vector<Zone>& zones, const std::vector<double>& speeds,
                         const Extent& extent);
PartitionMetrics measure(const std::vector<TileZone>& zones, const std::vector<double>& speeds,
                         const TileExtent& extent);

// The 2D model (PERI-SUM): sum over zones of (pi_i + pi_j) divided by the sum of 2 sqrt(s), on
// the zones' C footprints. Meaningful for partitions that never split l.
double ratio_2d(const std::vector<Zone>& zones);
double ratio_2d(const std::vector<TileZone>& zones);

// Bytes one zone moves, in elements of the real matrices (the last tile of a dimension may be
// partial). A and B are read once per distinct tile of the zone's projections; C is written once
// per distinct C tile and read first when beta != 0. `reduction_bytes` counts the partial C
// tiles this zone holds without owning them: the owner of C(i,j) is the zone that computes task
// (i,j,0); the others' partial results must be added into it.
struct Traffic {
  double a_bytes = 0, b_bytes = 0, c_read_bytes = 0, c_write_bytes = 0, reduction_bytes = 0;
  double total() const {
    return a_bytes + b_bytes + c_read_bytes + c_write_bytes + reduction_bytes;
  }
};

// One entry per zone.
std::vector<Traffic> traffic(const std::vector<TileZone>& zones, std::int64_t m, std::int64_t n,
                             std::int64_t k, std::int64_t tile, std::size_t elem_bytes,
                             bool beta_nonzero);

// Field-wise sum.
Traffic sum(const std::vector<Traffic>& per_zone);

}  // namespace cuboid::partition
