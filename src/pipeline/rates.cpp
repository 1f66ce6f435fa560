#include "pipeline/rates.hpp"

#include <fmt/format.h>
#include <cuboid/gemm.hpp>

#include <algorithm>
#include <chrono>
#include <optional>
#include <ostream>
#include <string>

#include "exec/worker.hpp"
#include "util/error.hpp"

namespace cuboid::pipeline {

template <class Scalar>
std::vector<exec::ProcessorRate> model_rates(const std::vector<platform::ProcessorSpec>& specs,
                                             const std::vector<double>& speeds,
                                             platform::SpeedCache* cache, bool remeasure,
                                             std::ostream& progress, double* reduce_gbs) {
  using platform::ProcessorKind;
  std::vector<exec::ProcessorRate> rates;
  // A device, or an emulated one in timing mode, whose GEMM rate and link are its settings.
  auto modelled = [](const platform::ProcessorSpec& s) {
    return s.kind == ProcessorKind::device ||
           (s.kind == ProcessorKind::emulated && s.emulated_gflops > 0);
  };
  if (!std::any_of(specs.begin(), specs.end(), modelled)) return rates;
  if (reduce_gbs) *reduce_gbs = reduce_rate<Scalar>(cache, remeasure, progress);
  const std::string precision(to_string(scalar_type_of<Scalar>()));
  for (std::size_t q = 0; q < specs.size(); ++q) {
    const auto& spec = specs[q];
    exec::ProcessorRate r{speeds[q], 0, 0};
    if (!modelled(spec)) {
      rates.push_back(r);
      continue;
    }
    if (spec.kind == ProcessorKind::emulated && spec.link_gbs > 0) {
      progress << fmt::format(
          "calibrate: {} in timing mode: GEMM {:g} GFLOP/s, link {:g} GB/s each way (given)\n",
          spec.name, spec.emulated_gflops, spec.link_gbs);
      rates.push_back(exec::ProcessorRate{spec.emulated_gflops, spec.link_gbs, spec.link_gbs});
      continue;
    }
    // Large enough for the GEMM to reach its rate and the copies theirs, small enough to fit.
    std::int64_t s = 8192;
    while (s > 1024 && 3.0 * double(s) * double(s) * sizeof(Scalar) > 0.25 * spec.memory_bytes)
      s /= 2;
    const std::size_t bytes = std::size_t(256) << 20;
    const std::string at = "resident|s=" + std::to_string(s) + "|upload=" + std::to_string(bytes);
    const std::string kg = platform::SpeedCache::key(spec, precision, at + "|gemm");
    const std::string ki = platform::SpeedCache::key(spec, precision, at + "|h2d");
    const std::string ko = platform::SpeedCache::key(spec, precision, at + "|d2h");
    std::optional<double> g, i, o;
    if (cache && !remeasure) g = cache->find(kg), i = cache->find(ki), o = cache->find(ko);
    const char* source = "cache";
    if (!g || !i || !o) {
      auto w = exec::make_worker<Scalar>(spec);
      g = w->measure_gemm_rate(s, 1.0);
      const auto link = w->measure_link(bytes);
      i = link.h2d_gbs, o = link.d2h_gbs;
      source = "measured";
      if (cache) cache->store(kg, *g), cache->store(ki, *i), cache->store(ko, *o);
    }
    if (!(*g > 0) || !(*i > 0) || !(*o > 0))
      throw Error(spec.name + ": calibration measured no GEMM rate or link (" +
                  fmt::format("{:g} GFLOP/s, {:g} and {:g} GB/s", *g, *i, *o) + ")");
    // The rate is kept in the plan's unit (2mnk per second) and shown as LAPACK counts it.
    progress << fmt::format(
        "calibrate: {} on its own memory: GEMM {:.0f} GFLOP/s ({}^3), link {:.1f} GB/s in, {:.1f} "
        "GB/s out ({})\n",
        spec.name, *g * gemm_flops(scalar_type_of<Scalar>(), 1, 1, 1) / 2, s, *i, *o, source);
    rates.push_back(exec::ProcessorRate{*g, *i, *o});
  }
  return rates;
}

template <class Scalar>
double reduce_rate(platform::SpeedCache* cache, bool remeasure, std::ostream& progress) {
  const std::string precision(to_string(scalar_type_of<Scalar>()));
  platform::ProcessorSpec host;
  host.name = "host";
  const std::string key = platform::SpeedCache::key(host, precision, "reduce|64MiB");
  if (cache && !remeasure)
    if (auto v = cache->find(key); v && *v > 0) return *v;
  const std::int64_t rows = 4096,
                     cols = (std::int64_t(64) << 20) / std::int64_t(sizeof(Scalar)) / rows;
  exec::HostMatrix<Scalar> C("cuboid::reduce_rate::C", rows, cols),
      P("cuboid::reduce_rate::P", rows, cols);
  using host_space = Kokkos::DefaultHostExecutionSpace;
  using rank2 = Kokkos::MDRangePolicy<host_space, Kokkos::Rank<2, Kokkos::Iterate::Left>>;
  double best = 1e300;
  for (int r = 0; r < 4; ++r) {  // the first warms the pages
    const auto t0 = std::chrono::steady_clock::now();
    Kokkos::parallel_for(
        "cuboid::reduce_rate", rank2({0, 0}, {rows, cols}),
        KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { C(i, j) += P(i, j); });
    host_space().fence();
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r > 0) best = std::min(best, t);
  }
  const double gbs = 3.0 * double(rows * cols) * double(sizeof(Scalar)) / best / 1e9;
  progress << fmt::format("calibrate: host adds partial C buffers at {:.1f} GB/s (measured)\n",
                          gbs);
  if (cache) cache->store(key, gbs);
  return gbs;
}

#define CUBOID_REDUCE_RATE(Scalar) \
  template double reduce_rate<Scalar>(platform::SpeedCache*, bool, std::ostream&);
CUBOID_FOR_EACH_SCALAR(CUBOID_REDUCE_RATE)
#undef CUBOID_REDUCE_RATE

#define CUBOID_MODEL_RATES(Scalar)                                             \
  template std::vector<exec::ProcessorRate> model_rates<Scalar>(               \
      const std::vector<platform::ProcessorSpec>&, const std::vector<double>&, \
      platform::SpeedCache*, bool, std::ostream&, double*);
CUBOID_FOR_EACH_SCALAR(CUBOID_MODEL_RATES)
#undef CUBOID_MODEL_RATES

}  // namespace cuboid::pipeline
