// Prints the quality tables of docs/partition.md (markdown): for every algorithm, instance
// family and cuboid shape, the mean and worst of sum Hs / sum L(V) over seeded random instances,
// plus the one-dominant-plus-twenty case. Usage: cuboid-partition-quality [instances] [max_p]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "../../tests/partition/instances.hpp"
#include "partition/geometry.hpp"
#include "partition/metrics.hpp"
#include "partition/strategy.hpp"

namespace cp = cuboid::partition;
namespace ct = cuboid::partition::testing;

namespace {

const cp::Algorithm kAlgorithms[] = {cp::Algorithm::nrrp3d, cp::Algorithm::nrrp3d_2mode,
                                     cp::Algorithm::nrrp2d, cp::Algorithm::column,
                                     cp::Algorithm::slab,   cp::Algorithm::grid};

struct Stat {
  double sum = 0, worst = 0;
  int n = 0;
  void add(double x) {
    sum += x;
    worst = std::max(worst, x);
    ++n;
  }
};

void family_tables(int instances, int max_p) {
  for (ct::Shape shape : ct::all_shapes()) {
    const auto t = ct::extent(shape, 64);
    const cp::Extent e = {double(t[0]), double(t[1]), double(t[2])};
    std::printf("\n**%s** (%g x %g x %g), continuous, mean / worst of sum Hs / sum L(V):\n\n",
                ct::name(shape).c_str(), e[0], e[1], e[2]);
    std::printf("| algorithm |");
    for (ct::Family f : ct::all_families()) std::printf(" %s |", ct::name(f).c_str());
    std::printf("\n|---|");
    for (std::size_t i = 0; i < ct::all_families().size(); ++i) std::printf("---|");
    std::printf("\n");
    for (cp::Algorithm a : kAlgorithms) {
      std::printf("| %s |", std::string(cp::to_string(a)).c_str());
      for (ct::Family f : ct::all_families()) {
        // Same seed per (family, shape) for every algorithm: the same instances.
        std::mt19937_64 rng(1000 + 17 * int(f) + int(shape));
        Stat s;
        for (int r = 0; r < instances; ++r) {
          const auto speeds = ct::speeds(f, ct::draw_p(rng, max_p), rng);
          s.add(cp::measure(cp::partition_continuous(a, speeds, e), speeds, e).ratio);
        }
        std::printf(" %.3f / %.3f |", s.sum / s.n, s.worst);
      }
      std::printf("\n");
    }
  }
}

void worst_zone_on_cubes(int instances, int max_p) {
  double worst = 0.0;
  std::mt19937_64 rng(5);
  for (ct::Family f : ct::all_families())
    for (int r = 0; r < instances; ++r) {
      const auto speeds = ct::speeds(f, ct::draw_p(rng, max_p), rng);
      for (const cp::Zone& z : cp::partition_continuous(cp::Algorithm::nrrp3d, speeds, {1, 1, 1}))
        worst = std::max(worst, cp::half_surface(z) / cp::lower_bound_plain(cp::volume(z)));
    }
  std::printf("\nWorst nrrp3d zone on cubes, Hs / 3V^(2/3): %.4f (guarantee 5/6^(2/3) = %.4f)\n",
              worst, 5.0 / std::pow(6.0, 2.0 / 3.0));
}

void dominant_plus_twenty() {
  std::vector<double> speeds(21, 1.0);
  speeds[0] = 100.0;
  const cp::TileExtent tiles = {48, 48, 48};
  const cp::Extent e = {48, 48, 48};
  std::printf("\n**One processor x100 plus 20 equal ones**, cube 48^3 tiles, 3D Hs:\n\n");
  std::printf(
      "| algorithm | continuous sum Hs / sum L | precise | rounded (imbalance) | dominant zone Hs "
      "/ L | "
      "small zone Hs / L |\n|---|---|---|---|---|---|\n");
  for (cp::Algorithm a : kAlgorithms) {
    const auto c = cp::measure(cp::partition_continuous(a, speeds, e), speeds, e);
    const auto d = cp::measure(cp::partition_tiles(a, cp::Discretization::precise, speeds, tiles),
                               speeds, tiles);
    const auto rd = cp::measure(cp::partition_tiles(a, cp::Discretization::rounded, speeds, tiles),
                                speeds, tiles);
    std::printf("| %s | %.3f | %.3f | %.3f (%.2f) | %.3f | %.3f |\n",
                std::string(cp::to_string(a)).c_str(), c.ratio, d.ratio, rd.ratio, rd.imbalance,
                c.zones[0].hs / c.zones[0].lower_bound, c.zones[1].hs / c.zones[1].lower_bound);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int instances = argc > 1 ? std::atoi(argv[1]) : 200;
  const int max_p = argc > 2 ? std::atoi(argv[2]) : 1000;
  std::printf("Instances per cell: %d, p log-uniform in [1, %d].\n", instances, max_p);
  family_tables(instances, max_p);
  worst_zone_on_cubes(instances, max_p);
  dominant_plus_twenty();
  return 0;
}
