#pragma once
// A computed partition as the `cuboid partition` command reports it, and its JSON form.
#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "partition/metrics.hpp"
#include "partition/strategy.hpp"

namespace cuboid::report {

struct PartitionResult {
  std::array<std::int64_t, 3> dims{};
  partition::Algorithm algorithm{};
  partition::Discretization discretization{};
  std::vector<double> speeds;
  // Per processor, in input order, its boxes in tile units: continuous partitions
  // (discretization "none") have fractional coordinates.
  std::vector<partition::Zone> pieces;
  partition::PartitionMetrics metrics;
};

// Runs the algorithm (and the discretisation unless it is `none`) and measures the result.
PartitionResult compute_partition(const std::array<std::int64_t, 3>& dims,
                                  partition::Algorithm algorithm,
                                  partition::Discretization discretization,
                                  const std::vector<double>& speeds);

// {dims, algorithm, discretization, processors: [{id, speed, target_volume, volume, pieces, hs,
//  lower_bound, lower_bound_plain}], hs_total, lower_bound_total, ratio, ratio_plain, imbalance};
// a piece is [i0, i1, j0, j1, l0, l1].
nlohmann::json partition_to_json(const PartitionResult& result);

}  // namespace cuboid::report
