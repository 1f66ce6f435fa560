#include "partition/strategy.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "partition/algorithms.hpp"
#include "partition/discretize.hpp"
#include "partition/speeds.hpp"
#include "partition/stepped.hpp"

namespace cuboid::partition {
namespace {

constexpr std::array<std::pair<Algorithm, std::string_view>, 6> kAlgorithms = {{
    {Algorithm::nrrp3d, "nrrp3d"},
    {Algorithm::nrrp3d_2mode, "nrrp3d-2mode"},
    {Algorithm::nrrp2d, "nrrp2d"},
    {Algorithm::column, "column"},
    {Algorithm::slab, "slab"},
    {Algorithm::grid, "grid"},
}};
constexpr std::array<std::pair<Discretization, std::string_view>, 4> kDiscretizations = {{
    {Discretization::none, "none"},
    {Discretization::rounded, "rounded"},
    {Discretization::precise, "precise"},
    {Discretization::stepped, "stepped"},
}};

template <class... Args>
[[noreturn]] void fail(const Args&... args) {
  std::ostringstream s;
  (s << ... << args);
  throw std::invalid_argument(s.str());
}

void check_speeds(const std::vector<double>& speeds) {
  if (const auto problem = speed_problem(speeds)) fail(*problem);
}

void check_tiles(std::size_t processors, const TileExtent& t) {
  if (t[0] < 1 || t[1] < 1 || t[2] < 1)
    fail("dimensions ", t[0], " x ", t[1], " x ", t[2],
         " tiles: every dimension must be at least 1 tile");
  // Cell keys and counts are 64-bit; keep a margin below 2^62.
  if (double(t[0]) * double(t[1]) * double(t[2]) > 4.0e18)
    fail("dimensions ", t[0], " x ", t[1], " x ", t[2], " tiles: too many tile tasks");
  const std::int64_t tasks = t[0] * t[1] * t[2];
  if (std::int64_t(processors) > tasks)
    fail(processors, " processors but only ", tasks, " tile tasks");
}

}  // namespace

std::string_view to_string(Algorithm a) {
  for (const auto& [value, name] : kAlgorithms)
    if (value == a) return name;
  return "unknown";
}

std::string_view to_string(Discretization d) {
  for (const auto& [value, name] : kDiscretizations)
    if (value == d) return name;
  return "unknown";
}

std::optional<Algorithm> parse_algorithm(std::string_view name) {
  for (const auto& [value, n] : kAlgorithms)
    if (n == name) return value;
  return std::nullopt;
}

std::optional<Discretization> parse_discretization(std::string_view name) {
  for (const auto& [value, n] : kDiscretizations)
    if (n == name) return value;
  return std::nullopt;
}

std::vector<std::string_view> algorithm_names() {
  std::vector<std::string_view> out;
  for (const auto& entry : kAlgorithms) out.push_back(entry.second);
  return out;
}

std::vector<std::string_view> discretization_names() {
  std::vector<std::string_view> out;
  for (const auto& entry : kDiscretizations) out.push_back(entry.second);
  return out;
}

bool is_2d(Algorithm a) { return a == Algorithm::nrrp2d || a == Algorithm::column; }

namespace {

void check_extent(const Extent& cuboid) {
  for (double e : cuboid)
    if (!std::isfinite(e) || !(e > 0))
      fail("cuboid ", cuboid[0], " x ", cuboid[1], " x ", cuboid[2],
           ": every dimension must be finite and positive");
}

CutTree tree_of(Algorithm a, const std::vector<double>& speeds, const Extent& cuboid) {
  const Box box{{0.0, 0.0, 0.0}, cuboid};
  switch (a) {
    case Algorithm::nrrp3d:
      return detail::nrrp3d(speeds, box, true);
    case Algorithm::nrrp3d_2mode:
      return detail::nrrp3d(speeds, box, false);
    case Algorithm::nrrp2d:
      return detail::nrrp2d(speeds, box);
    case Algorithm::column:
      return detail::column(speeds, box);
    case Algorithm::slab:
      return detail::slab(speeds, box);
    case Algorithm::grid:
      return detail::grid(speeds, box);
  }
  fail("unknown partition algorithm");
}

}  // namespace

CutTree partition_tree(Algorithm a, const std::vector<double>& speeds, const Extent& cuboid) {
  check_speeds(speeds);
  check_extent(cuboid);
  return tree_of(a, speeds, cuboid);
}

std::vector<Zone> partition_continuous(Algorithm a, const std::vector<double>& speeds,
                                       const Extent& cuboid) {
  return zones_of(partition_tree(a, speeds, cuboid), speeds.size());
}

std::vector<TileZone> discretize(Discretization d, const std::vector<Zone>& zones,
                                 const std::vector<double>& speeds, const TileExtent& tiles) {
  if (d == Discretization::none)
    fail("discretization 'none' keeps the continuous zones: choose rounded, precise or stepped");
  if (d == Discretization::stepped)
    fail(
        "discretization 'stepped' redoes the partition's cuts on whole tiles, so it needs the "
        "algorithm, not just its zones: use partition_tiles");
  check_speeds(speeds);
  check_tiles(speeds.size(), tiles);
  if (zones.size() != speeds.size())
    fail(zones.size(), " zones for ", speeds.size(), " speeds: there must be one per processor");
  // A partition that never splits l stays that way (the engine relies on it for 2D algorithms).
  return discretize_zones(d, zones, speeds, tiles, spans_l(zones, double(tiles[2])));
}

std::vector<TileZone> partition_tiles(Algorithm a, Discretization d,
                                      const std::vector<double>& speeds, const TileExtent& tiles) {
  check_speeds(speeds);
  check_tiles(speeds.size(), tiles);
  if (d == Discretization::none)
    fail("discretization 'none' keeps the continuous zones: choose rounded, precise or stepped");
  if (d != Discretization::stepped) {
    const Extent extent = {double(tiles[0]), double(tiles[1]), double(tiles[2])};
    return discretize_zones(d, partition_continuous(a, speeds, extent), speeds, tiles, is_2d(a));
  }
  // The 2D algorithms are cut on the C face, C tiles as units, and every zone spans l.
  const bool flat = is_2d(a);
  const TileExtent units = {tiles[0], tiles[1], flat ? 1 : tiles[2]};
  const std::int64_t total = units[0] * units[1] * units[2];
  std::vector<TileZone> zones;
  if (a == Algorithm::nrrp3d || a == Algorithm::nrrp3d_2mode) {
    zones = stepped_nrrp3d(exact_counts(speeds, total), units, a == Algorithm::nrrp3d);
  } else {
    const CutTree tree = tree_of(a, speeds, {double(units[0]), double(units[1]), double(units[2])});
    // Processors the algorithm left without a zone (an idle grid slot) get no tiles.
    std::vector<double> weights(speeds.size(), 0.0);
    for (const CutNode& n : tree.nodes)
      if (n.owner >= 0) weights[std::size_t(n.owner)] = speeds[std::size_t(n.owner)];
    zones = stepped_tree(tree, exact_counts(weights, total), units);
  }
  if (flat)
    for (TileZone& z : zones)
      for (TileBox& b : z) b.hi[2] = tiles[2];
  return zones;
}

std::vector<TileZone> processor_zones(Algorithm algorithm, Discretization discretization,
                                      const std::vector<double>& speeds, const TileExtent& tiles) {
  const std::size_t p = speeds.size();
  if (p == 0) throw std::invalid_argument("at least one processor is needed");
  const TileBox whole{{0, 0, 0}, {tiles[0], tiles[1], tiles[2]}};
  if (p == 1) return {TileZone{whole}};
  const double c_tiles = double(tiles[0]) * double(tiles[1]);
  const double units = is_2d(algorithm) ? c_tiles : c_tiles * double(tiles[2]);
  if (units < double(p)) {
    const auto fastest = std::max_element(speeds.begin(), speeds.end()) - speeds.begin();
    std::vector<TileZone> zones(p);
    zones[std::size_t(fastest)] = {whole};
    return zones;
  }
  return partition_tiles(algorithm, discretization, speeds, tiles);
}

}  // namespace cuboid::partition
