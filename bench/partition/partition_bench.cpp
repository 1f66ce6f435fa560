// Cost of the partition algorithms (continuous) in p, and of the discretisations in the tile
// count. Complexity fits: --benchmark_filter=Continuous shows O(N log N) in p.
#include <benchmark/benchmark.h>

#include <random>

#include "partition/metrics.hpp"
#include "partition/strategy.hpp"

namespace {

using cuboid::partition::Algorithm;
using cuboid::partition::Discretization;

std::vector<double> random_speeds(std::size_t p, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.5, 8.0);
  std::vector<double> w(p);
  for (double& x : w) x = u(rng);
  return w;
}

void Continuous(benchmark::State& state, Algorithm a) {
  const auto speeds = random_speeds(std::size_t(state.range(0)), 1);
  const cuboid::partition::Extent cube = {1.0, 1.0, 1.0};
  for (auto _ : state) {
    auto zones = cuboid::partition::partition_continuous(a, speeds, cube);
    benchmark::DoNotOptimize(zones.data());
  }
  state.SetComplexityN(state.range(0));
  state.counters["processors_per_s"] =
      benchmark::Counter(double(state.range(0)), benchmark::Counter::kIsIterationInvariantRate);
}

void Discretize(benchmark::State& state, Algorithm a, Discretization d) {
  const std::int64_t m = state.range(0);
  const auto speeds = random_speeds(16, 2);
  const cuboid::partition::Extent extent = {double(m), double(m), double(m)};
  const auto zones = cuboid::partition::partition_continuous(a, speeds, extent);
  for (auto _ : state) {
    auto tiles = cuboid::partition::discretize(d, zones, speeds, {m, m, m});
    benchmark::DoNotOptimize(tiles.data());
  }
  // Work grows with the area of the cuts (M^2), not with the M^3 tasks.
  state.SetComplexityN(m);
  state.counters["tasks"] = double(m) * double(m) * double(m);
}

// The million-processor size test (docs/measurements/2026-11-21-partition-cost.md) without the
// command line around it: STEPPED on 4096^3 tiles with 10^6 processors (each node takes one
// step, no comparison), then measure() of its zones.
const cuboid::partition::TileExtent kLarge = {4096, 4096, 4096};

void SteppedMillion(benchmark::State& state) {
  const auto speeds = random_speeds(1000000, 3);
  for (auto _ : state) {
    auto zones = cuboid::partition::partition_tiles(Algorithm::nrrp3d, Discretization::stepped,
                                                    speeds, kLarge);
    benchmark::DoNotOptimize(zones.data());
    state.PauseTiming();  // freeing 10^6 zones is not the partition's work
    zones = {};
    state.ResumeTiming();
  }
}

void MeasureMillion(benchmark::State& state) {
  const auto speeds = random_speeds(1000000, 3);
  const auto zones = cuboid::partition::partition_tiles(Algorithm::nrrp3d, Discretization::stepped,
                                                        speeds, kLarge);
  for (auto _ : state) {
    auto metrics = cuboid::partition::measure(zones, speeds, kLarge);
    benchmark::DoNotOptimize(metrics.ratio);
  }
}

BENCHMARK(SteppedMillion)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(MeasureMillion)->Unit(benchmark::kMillisecond)->Iterations(3);

#define CONTINUOUS(name, alg)              \
  BENCHMARK_CAPTURE(Continuous, name, alg) \
      ->RangeMultiplier(10)                \
      ->Range(10, 1000000)                 \
      ->Unit(benchmark::kMillisecond)      \
      ->Complexity(benchmark::oNLogN)

CONTINUOUS(nrrp3d, Algorithm::nrrp3d);
CONTINUOUS(nrrp3d_2mode, Algorithm::nrrp3d_2mode);
CONTINUOUS(nrrp2d, Algorithm::nrrp2d);
CONTINUOUS(column, Algorithm::column);
CONTINUOUS(slab, Algorithm::slab);
CONTINUOUS(grid, Algorithm::grid);

#define DISCRETIZE(name, alg, disc)              \
  BENCHMARK_CAPTURE(Discretize, name, alg, disc) \
      ->RangeMultiplier(2)                       \
      ->Range(32, 1024)                          \
      ->Unit(benchmark::kMillisecond)            \
      ->Complexity(benchmark::oNSquared)

DISCRETIZE(nrrp3d_rounded, Algorithm::nrrp3d, Discretization::rounded);
DISCRETIZE(nrrp3d_precise, Algorithm::nrrp3d, Discretization::precise);

}  // namespace

BENCHMARK_MAIN();
