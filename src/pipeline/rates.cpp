#include "pipeline/rates.hpp"

#include <fmt/format.h>
#include <cuboid/gemm.hpp>

#include <algorithm>
#include <chrono>
#include <exception>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <thread>

#include "exec/worker.hpp"
#include "kokkos_ext/host.hpp"
#include "util/error.hpp"

namespace cuboid::pipeline {

namespace {

// The GEMM rates of the processors whose GEMMs run on the host's cores (host, staged, emulated
// computing for real), measured together: each on its own threads and matrices (2048^3), all at
// once, so that the rate each reaches is the one it has beside the others (shared cores and
// memory bandwidth) without their copies, which the model prices on the link. Each counts only
// the GEMMs that ended while all still ran (exec::GemmWindow): a best of its own few timed the
// staged processor partly alone once the host's had stopped, 19 % above what its GEMMs reached
// in a 4096^3 run beside the host.
template <class Scalar>
std::vector<double> host_gemm_rates(const std::vector<platform::ProcessorSpec>& specs,
                                    const std::vector<std::size_t>& which,
                                    platform::SpeedCache* cache, bool remeasure,
                                    const std::string& precision, bool& measured) {
  std::string with = "gemm-window|with=";
  for (std::size_t q : which) with += specs[q].name + ",";
  with += "|s=2048";
  std::vector<double> g(which.size(), 0.0);
  bool all = cache && !remeasure;
  for (std::size_t i = 0; all && i < which.size(); ++i) {
    const auto v = cache->find(platform::SpeedCache::key(specs[which[i]], precision, with));
    if (v && *v > 0)
      g[i] = *v;
    else
      all = false;
  }
  measured = !all;
  if (all) return g;
  std::vector<std::unique_ptr<exec::Worker<Scalar>>> workers;
  for (std::size_t q : which) workers.push_back(exec::make_worker<Scalar>(specs[q]));
  std::vector<std::exception_ptr> failed(which.size());
  std::vector<std::thread> threads;
  exec::GemmWindow window;
  for (std::size_t i = 0; i < which.size(); ++i)
    threads.emplace_back([&, i] {
      try {
        g[i] = workers[i]->measure_gemm_rate_in(2048, window);
      } catch (...) {
        failed[i] = std::current_exception();
        ++window.ready;  // nothing more to wait for from it
      }
    });
  // Open for a second at least, until every one has timed two GEMMs.
  const auto opened = std::chrono::steady_clock::now();
  while (window.ready.load() < int(which.size()) ||
         std::chrono::steady_clock::now() - opened < std::chrono::seconds(1))
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  window.stop = true;
  for (auto& t : threads) t.join();
  for (const auto& e : failed)
    if (e) std::rethrow_exception(e);
  if (cache)
    for (std::size_t i = 0; i < which.size(); ++i)
      if (g[i] > 0) cache->store(platform::SpeedCache::key(specs[which[i]], precision, with), g[i]);
  return g;
}

bool copies(const platform::ProcessorSpec& s) { return s.kind != platform::ProcessorKind::host; }
// An emulated processor in timing mode: its GEMMs sleep for the given rate.
bool timing(const platform::ProcessorSpec& s) {
  return s.kind == platform::ProcessorKind::emulated && s.emulated_gflops > 0;
}
// The rate is kept in the plan's unit (2mnk per second) and shown as LAPACK counts it.
template <class Scalar>
double shown_factor() {
  return gemm_flops(scalar_type_of<Scalar>(), 1, 1, 1) / 2;
}

// The GEMM rate of each processor whose GEMMs run on the host's cores (0 for the others), measured
// together and scaled by the slowdown the copying processors' packing threads cause.
template <class Scalar>
std::vector<double> rates_on_host_cores(const std::vector<platform::ProcessorSpec>& specs,
                                        const std::vector<double>& speeds,
                                        platform::SpeedCache* cache, bool remeasure,
                                        const std::string& precision, std::ostream& progress) {
  std::vector<std::size_t> on_host;
  for (std::size_t q = 0; q < specs.size(); ++q)
    if (specs[q].kind != platform::ProcessorKind::device && !timing(specs[q])) on_host.push_back(q);
  std::vector<double> gemm(specs.size(), 0.0);
  if (on_host.empty()) return gemm;
  bool measured = false;
  const auto g = host_gemm_rates<Scalar>(specs, on_host, cache, remeasure, precision, measured);
  // Those GEMMs also share the cores with the copying processors' packing threads, which the
  // measurement above leaves out. A host processor's speed, timed in place beside the others'
  // whole pipelines, shows that slowdown: every GEMM on the host's cores is taken to suffer it.
  double slowdown = 1;
  for (std::size_t i = 0; i < on_host.size(); ++i)
    if (specs[on_host[i]].kind == platform::ProcessorKind::host && speeds[on_host[i]] > 0 &&
        g[i] > 0)
      slowdown = std::min(slowdown, speeds[on_host[i]] / g[i]);
  std::string line = "calibrate: GEMM rates on the host's cores, measured together (2048^3):";
  for (std::size_t i = 0; i < on_host.size(); ++i) {
    gemm[on_host[i]] = g[i] * slowdown;
    line += fmt::format(" {} {:.1f}", specs[on_host[i]].name, g[i] * shown_factor<Scalar>());
  }
  progress << line << fmt::format(" GFLOP/s ({})", measured ? "measured" : "cache");
  if (slowdown < 1)
    progress << fmt::format(
        ", x {:.3f} beside the copying processors' pipelines (the host's speed timed with them)",
        slowdown);
  progress << "\n";
  return gemm;
}

// A copying processor's GEMM rate and link: `on_host_rate` where its GEMMs run on the host's
// cores, the setting in timing mode, else its own memory's rate (cached or measured).
template <class Scalar>
exec::ProcessorRate copying_rate(const platform::ProcessorSpec& spec, double on_host_rate,
                                 platform::SpeedCache* cache, bool remeasure,
                                 const std::string& precision, std::ostream& progress) {
  const bool device = spec.kind == platform::ProcessorKind::device;
  // Large enough for the GEMM to reach its rate and the copies theirs, small enough to fit.
  std::int64_t s = 8192;
  while (s > 1024 && 3.0 * double(s) * double(s) * sizeof(Scalar) > 0.25 * spec.memory_bytes)
    s /= 2;
  // A host-backed processor's copies are host memcpys, throttled to its link: 64 MiB will do.
  const std::size_t bytes = std::size_t(device ? 256 : 64) << 20;
  const std::string at = "resident|s=" + std::to_string(s) + "|upload=" + std::to_string(bytes);
  const std::string kg = platform::SpeedCache::key(spec, precision, at + "|gemm");
  const std::string ki = platform::SpeedCache::key(spec, precision, at + "|h2d");
  const std::string ko = platform::SpeedCache::key(spec, precision, at + "|d2h");
  std::optional<double> g, i, o;
  if (cache && !remeasure) i = cache->find(ki), o = cache->find(ko);
  // The link is always measured, the way a run copies: straight from and to a registered
  // matrix, or through the staging ring (packing is real host work) when registration is off.
  if (timing(spec))
    g = spec.emulated_gflops;
  else if (!device)
    g = on_host_rate;
  else if (cache && !remeasure)
    g = cache->find(kg);
  const char* source = "cache";
  if (!g || !i || !o) {
    auto w = exec::make_worker<Scalar>(spec);
    if (!g) {
      g = w->measure_gemm_rate(s, 1.0);
      if (cache) cache->store(kg, *g);
    }
    const auto link = w->measure_link(bytes);
    i = link.h2d_gbs, o = link.d2h_gbs;
    source = "measured";
    if (cache) cache->store(ki, *i), cache->store(ko, *o);
  }
  if (!(*g > 0) || !(*i > 0) || !(*o > 0))
    throw Error(spec.name + ": calibration measured no GEMM rate or link (" +
                fmt::format("{:g} GFLOP/s, {:g} and {:g} GB/s", *g, *i, *o) + ")");
  const char* path =
      spec.register_host ? "straight from a registered matrix" : "through the staging ring";
  if (timing(spec))
    progress << fmt::format(
        "calibrate: {} in timing mode: GEMM {:g} GFLOP/s (given), link {:.1f} GB/s in, {:.1f} "
        "GB/s out {} at {:g} GB/s ({})\n",
        spec.name, spec.emulated_gflops, *i, *o, path, spec.link_gbs, source);
  else if (device)
    progress << fmt::format(
        "calibrate: {} on its own memory: GEMM {:.0f} GFLOP/s ({}^3), link {:.1f} GB/s in, "
        "{:.1f} GB/s out ({})\n",
        spec.name, *g * shown_factor<Scalar>(), s, *i, *o, source);
  else
    progress << fmt::format("calibrate: {} link {:.1f} GB/s in, {:.1f} GB/s out {} ({})\n",
                            spec.name, *i, *o, path, source);
  return exec::ProcessorRate{*g, *i, *o};
}

}  // namespace

template <class Scalar>
std::vector<exec::ProcessorRate> model_rates(const std::vector<platform::ProcessorSpec>& specs,
                                             const std::vector<double>& speeds,
                                             platform::SpeedCache* cache, bool remeasure,
                                             std::ostream& progress, double* reduce_gbs) {
  // Every processor that copies: a device, and the host-backed ones with a memory of their own
  // (staged, emulated). Each runs the same pipeline, so each is priced by its GEMM rate and its
  // link apart: a single effective rate, copies included, misplaces the cut whenever the link
  // rather than the arithmetic bounds a zone.
  if (!std::any_of(specs.begin(), specs.end(), copies)) return {};
  if (reduce_gbs) *reduce_gbs = reduce_rate<Scalar>(cache, remeasure, progress);
  const std::string precision(to_string(scalar_type_of<Scalar>()));
  const std::vector<double> gemm =
      rates_on_host_cores<Scalar>(specs, speeds, cache, remeasure, precision, progress);
  std::vector<exec::ProcessorRate> rates;
  for (std::size_t q = 0; q < specs.size(); ++q) {
    if (copies(specs[q]))
      rates.push_back(
          copying_rate<Scalar>(specs[q], gemm[q], cache, remeasure, precision, progress));
    else
      rates.push_back(exec::ProcessorRate{gemm[q] > 0 ? gemm[q] : speeds[q], 0, 0});
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
  const auto C = kokkos_ext::host_zeros<exec::HostMatrix<Scalar>>("cuboid::reduce_rate::C", rows,
                                                                  cols),
             P = kokkos_ext::host_zeros<exec::HostMatrix<Scalar>>("cuboid::reduce_rate::P", rows,
                                                                  cols);
  double best = 1e300;
  for (int r = 0; r < 4; ++r) {  // the first warms the pages
    const auto t0 = std::chrono::steady_clock::now();
    kokkos_ext::host_for(
        "cuboid::reduce_rate", rows, cols,
        KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { C(i, j) += P(i, j); });
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
