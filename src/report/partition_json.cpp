#include "report/partition_json.hpp"

#include "partition/parallel.hpp"

namespace cuboid::report {
namespace {

template <class B>
partition::Box to_piece(const B& b) {
  return {{double(b.lo[0]), double(b.lo[1]), double(b.lo[2])},
          {double(b.hi[0]), double(b.hi[1]), double(b.hi[2])}};
}

}  // namespace

PartitionResult compute_partition(const std::array<std::int64_t, 3>& dims,
                                  partition::Algorithm algorithm,
                                  partition::Discretization discretization,
                                  const std::vector<double>& speeds) {
  PartitionResult r;
  r.dims = dims;
  r.algorithm = algorithm;
  r.discretization = discretization;
  r.speeds = speeds;
  if (discretization == partition::Discretization::none) {
    for (std::int64_t d : dims)
      if (d < 1) throw std::invalid_argument("every dimension must be at least 1 tile");
    const partition::Extent extent = {double(dims[0]), double(dims[1]), double(dims[2])};
    const auto zones = partition::partition_continuous(algorithm, speeds, extent);
    for (const auto& z : zones) {
      r.pieces.emplace_back();
      for (const auto& b : z) r.pieces.back().push_back(to_piece(b));
    }
    r.metrics = partition::measure(zones, speeds, extent);
  } else {
    auto zones = partition::partition_tiles(algorithm, discretization, speeds, dims);
    r.metrics = partition::measure(zones, speeds, dims);
    // Each zone freed once copied: a million zones would otherwise be held twice. A million
    // zones are copied by the cores together (as measure() does).
    r.pieces.resize(zones.size());
    partition::for_each_item(zones, [&](std::size_t p) {
      r.pieces[p].reserve(zones[p].size());
      for (const auto& b : zones[p]) r.pieces[p].push_back(to_piece(b));
      partition::TileZone().swap(zones[p]);
    });
  }
  return r;
}

nlohmann::json partition_to_json(const PartitionResult& r) {
  nlohmann::json j;
  j["dims"] = r.dims;
  j["algorithm"] = std::string(partition::to_string(r.algorithm));
  j["discretization"] = std::string(partition::to_string(r.discretization));
  const bool integral = r.discretization != partition::Discretization::none;
  nlohmann::json procs = nlohmann::json::array();
  for (std::size_t p = 0; p < r.pieces.size(); ++p) {
    const auto& z = r.metrics.zones[p];
    nlohmann::json pieces = nlohmann::json::array();
    for (const partition::Box& piece : r.pieces[p]) {
      // Tile coordinates are written as integers so that a checker can count cells.
      nlohmann::json row = nlohmann::json::array();
      for (double c :
           {piece.lo[0], piece.hi[0], piece.lo[1], piece.hi[1], piece.lo[2], piece.hi[2]}) {
        if (integral) {
          row.push_back(std::int64_t(c));
        } else {
          row.push_back(c);
        }
      }
      pieces.push_back(std::move(row));
    }
    procs.push_back({{"id", p},
                     {"speed", z.speed},
                     {"target_volume", z.target_volume},
                     {"volume", z.volume},
                     {"pieces", std::move(pieces)},
                     {"hs", z.hs},
                     {"lower_bound", z.lower_bound},
                     {"lower_bound_plain", z.lower_bound_plain}});
  }
  j["processors"] = std::move(procs);
  j["hs_total"] = r.metrics.hs_total;
  j["lower_bound_total"] = r.metrics.lower_bound_total;
  j["ratio"] = r.metrics.ratio;
  j["ratio_plain"] = r.metrics.ratio_plain;
  j["imbalance"] = r.metrics.imbalance;
  return j;
}

}  // namespace cuboid::report
