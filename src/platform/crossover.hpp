#pragma once
// Where a call becomes worth taking from the library it would otherwise go to (the BLAS for
// the drop-in, ScaLAPACK for p?gemm_): the smallest square on a ladder of sizes, walked down
// from the top, at which cuboid takes at most 5 % longer than that library. Timed on the
// machine once and kept in the speed cache, so that later processes only read it.
// Inline: libcuboid.so's callers (the BLAS drop-in, p?gemm_) use it, libcuboid.so itself does
// not, and a static library's unreferenced object would not be linked into it.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "platform/calibration.hpp"

namespace cuboid::platform {

// The ladder's sizes, largest first; below its smallest a call is never worth taking.
inline constexpr std::int64_t kCrossoverLadder[] = {1024, 512, 256, 128};
inline constexpr std::int64_t kCrossoverFloor = kCrossoverLadder[3];
// What ladder_crossover returns when cuboid is slower already at the top: above every rung.
inline constexpr std::int64_t kCrossoverAbove = 2 * kCrossoverLadder[0];

// The smallest ladder size n such that ours(n) <= 1.05 theirs(n) at n and at every larger size
// (seconds of one call each); twice the top size when cuboid is slower already at the top.
inline std::int64_t ladder_crossover(const std::function<double(std::int64_t)>& ours,
                                     const std::function<double(std::int64_t)>& theirs) {
  std::int64_t at = kCrossoverAbove;
  for (const std::int64_t n : kCrossoverLadder) {
    if (ours(n) > 1.05 * theirs(n)) break;
    at = n;
  }
  return at;
}

// The median seconds of three timed calls of `f`, after one that warms caches (and, on a
// context's first call, measures its speeds).
inline double median_of_three(const std::function<void()>& f) {
  std::array<double, 3> t{};
  f();
  for (double& s : t) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  std::sort(t.begin(), t.end());
  return t[1];
}

// The cache key of a crossover: `what` (the routine and what else it depends on), the context's
// processors and the OpenMP threads, which the times depend on.
inline std::string crossover_key(const std::string& what,
                                 const std::vector<std::string>& processors) {
  std::string key = what + "|";
  for (const auto& p : processors) key += p + ",";
#if defined(_OPENMP)
  key += "|threads=" + std::to_string(omp_get_max_threads());
#endif
  return key;
}

// A crossover (in flops) kept under `key` in the default speed cache, and storing one there.
// Kept per build, as speeds are: another build may be faster or slower.
inline std::optional<double> cached_crossover(const std::string& key) {
  const SpeedCache cache(default_speed_cache_path());
  if (const auto v = cache.find(build_fingerprint() + "|" + key); v && *v >= 0) return v;
  return std::nullopt;
}
inline void store_crossover(const std::string& key, double flops) {
  SpeedCache cache(default_speed_cache_path());
  cache.store(build_fingerprint() + "|" + key, flops);
  cache.save();
}

}  // namespace cuboid::platform
