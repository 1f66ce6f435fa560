// Prints the partition quality tables (markdown; docs/measurements/ keeps dated copies): for
// every algorithm, instance family and cuboid shape, the mean and worst of sum Hs / sum L(V) over
// seeded random instances, plus the one-dominant-plus-twenty case and the STEPPED tables (every
// discretisation on cubes, STEPPED on random families).
// Usage: cuboid-partition-quality [--instances N] [--max-p P] [--stepped-instances N]
#include <CLI/CLI.hpp>
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
      "| algorithm | continuous sum Hs / sum L | precise | rounded (imbalance) | stepped | "
      "dominant zone Hs / L | small zone Hs / L |\n|---|---|---|---|---|---|---|\n");
  for (cp::Algorithm a : kAlgorithms) {
    const auto c = cp::measure(cp::partition_continuous(a, speeds, e), speeds, e);
    auto tiled = [&](cp::Discretization d) {
      return cp::measure(cp::partition_tiles(a, d, speeds, tiles), speeds, tiles);
    };
    const auto d = tiled(cp::Discretization::precise);
    const auto rd = tiled(cp::Discretization::rounded);
    const auto st = tiled(cp::Discretization::stepped);
    std::printf("| %s | %.3f | %.3f | %.3f (%.2f) | %.3f | %.3f | %.3f |\n",
                std::string(cp::to_string(a)).c_str(), c.ratio, d.ratio, rd.ratio, rd.imbalance,
                st.ratio, c.zones[0].hs / c.zones[0].lower_bound,
                c.zones[1].hs / c.zones[1].lower_bound);
  }
}

std::string speeds_name(const std::vector<double>& s) {
  if (s.size() == 5) return "4 x 30 + 8";
  if (s.size() == 8) return "8 equal";
  return "100 + 20 x 1";
}

int most_boxes(const std::vector<cp::TileZone>& zones) {
  std::size_t m = 0;
  for (const auto& z : zones) m = std::max(m, z.size());
  return int(m);
}

// nrrp3d on cubes of 8, 16 and 32 tiles per edge, every discretisation.
void discretisation_table() {
  std::vector<double> dominant(21, 1.0);
  dominant[0] = 100.0;
  const std::vector<std::vector<double>> families = {
      {30, 30, 30, 30, 8}, std::vector<double>(8, 1.0), dominant};
  std::printf(
      "\n**nrrp3d on cubes, every discretisation**: sum Hs / sum L(V); imbalance (max V_p / v_p "
      "- 1); most boxes of one zone\n\n"
      "| tiles/edge | speeds | none | rounded: Hs/L, imbalance, boxes | precise: Hs/L, boxes | "
      "stepped: Hs/L, boxes |\n|---|---|---|---|---|---|\n");
  for (std::int64_t m : {8, 16, 32})
    for (const auto& speeds : families) {
      const cp::TileExtent t = {m, m, m};
      const cp::Extent e = {double(m), double(m), double(m)};
      const auto none =
          cp::measure(cp::partition_continuous(cp::Algorithm::nrrp3d, speeds, e), speeds, e);
      auto run = [&](cp::Discretization d) {
        const auto zones = cp::partition_tiles(cp::Algorithm::nrrp3d, d, speeds, t);
        return std::make_pair(cp::measure(zones, speeds, t), most_boxes(zones));
      };
      const auto [rounded, rb] = run(cp::Discretization::rounded);
      const auto [precise, pb] = run(cp::Discretization::precise);
      const auto [stepped, sb] = run(cp::Discretization::stepped);
      std::printf("| %lld | %s | %.3f | %.3f, %.1f %%, %d | %.3f, %d | %.3f, %d |\n", (long long)m,
                  speeds_name(speeds).c_str(), none.ratio, rounded.ratio, 100.0 * rounded.imbalance,
                  rb, precise.ratio, pb, stepped.ratio, sb);
    }
}

// STEPPED's acceptance instances, as in stepped_test.cpp: every family of instances.hpp, p
// uniform in [2, 64], on cubes: mean and worst sum Hs / sum L(V), and the zones above four boxes.
void stepped_families(int instances) {
  std::printf(
      "\n**stepped, random families** (nrrp3d; every family above, p uniform in [2, 64], %d "
      "instances per family and cube)\n\n| tiles/edge | mean Hs/L | worst Hs/L | instances "
      "with a zone above 4 boxes | zones above 4 boxes | most boxes |\n|---|---|---|---|---|---|\n",
      instances);
  for (std::int64_t m : {8, 16, 32}) {
    std::mt19937_64 rng(4242 + std::uint64_t(m));
    std::uniform_int_distribution<int> p_of(2, 64);
    Stat s;
    int above = 0, most = 0, n = 0;
    long zones = 0, zones_above = 0;
    for (ct::Family f : ct::all_families())
      for (int r = 0; r < instances; ++r) {
        const auto speeds = ct::speeds(f, p_of(rng), rng);
        const cp::TileExtent t = {m, m, m};
        const auto result =
            cp::partition_tiles(cp::Algorithm::nrrp3d, cp::Discretization::stepped, speeds, t);
        s.add(cp::measure(result, speeds, t).ratio);
        const int b = most_boxes(result);
        above += b > 4;
        most = std::max(most, b);
        for (const auto& z : result) {
          zones += !z.empty();
          zones_above += z.size() > 4;
        }
        ++n;
      }
    std::printf("| %lld | %.3f | %.3f | %d of %d | %ld of %ld (%.1f %%) | %d |\n", (long long)m,
                s.sum / s.n, s.worst, above, n, zones_above, zones,
                100.0 * double(zones_above) / double(zones), most);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int instances = 200, max_p = 1000, stepped_instances = 10;
  CLI::App app{"Partition quality tables (Markdown on stdout)"};
  app.add_option("--instances", instances, "random instances per family and shape")
      ->check(CLI::Range(1, 100000));
  app.add_option("--max-p", max_p, "processors drawn log-uniform in [1, max-p]")
      ->check(CLI::Range(1, 100000));
  app.add_option("--stepped-instances", stepped_instances,
                 "instances per family of the stepped acceptance table")
      ->check(CLI::Range(1, 100000));
  CLI11_PARSE(app, argc, argv);
  std::printf("Instances per cell: %d, p log-uniform in [1, %d].\n", instances, max_p);
  family_tables(instances, max_p);
  worst_zone_on_cubes(instances, max_p);
  dominant_plus_twenty();
  discretisation_table();
  stepped_families(stepped_instances);
  return 0;
}
