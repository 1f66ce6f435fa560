#include "blas/crossover.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "platform/calibration.hpp"

namespace cuboid::blas {
namespace {

std::string cache_key(Context& context, char routine) {
  std::string key = std::string("blas crossover|") + routine + "gemm|";
  for (const auto& p : context.processor_names()) key += p + ",";
#if defined(_OPENMP)
  key += "|threads=" + std::to_string(omp_get_max_threads());
#else
  key += "|threads=" + std::to_string(std::thread::hardware_concurrency());
#endif
  return key;
}

// The median of three timed calls of `f`, after one that warms caches (and, on the context's
// first call, measures its speeds).
template <class F>
double median_seconds(const F& f) {
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

template <class T>
double measure(Context& context, FortranGemm<T> next) {
  const blas_int top = blas_int(kLadder[0]);
  std::vector<T> A(std::size_t(top) * top, T(0.5)), B(A.size(), T(0.25)), C(A.size(), T(0));
  const T one(1), zero(0);
  double at = gemm_flops<T>(2 * top, 2 * top, 2 * top);  // cuboid slower everywhere
  for (const std::int64_t size : kLadder) {
    const blas_int n = blas_int(size);
    const double ours = median_seconds([&] {
      context.gemm(Op::none, Op::none, n, n, n, one, A.data(), n, B.data(), n, zero, C.data(), n);
    });
    const double theirs = median_seconds([&] {
      next("N", "N", &n, &n, &n, &one, A.data(), &n, B.data(), &n, &zero, C.data(), &n, 1, 1);
    });
    if (ours > 1.05 * theirs) break;
    at = gemm_flops<T>(n, n, n);
  }
  return at;
}

}  // namespace

template <class T>
Crossover crossover(Context& context, FortranGemm<T> next) {
  platform::SpeedCache cache(platform::default_speed_cache_path());
  const std::string key = cache_key(context, letter<T>());
  if (const auto v = cache.find(key); v && *v >= 0) return {*v, false};
  const double at = measure<T>(context, next);
  cache.store(key, at);
  cache.save();
  return {at, true};
}

template Crossover crossover<float>(Context&, FortranGemm<float>);
template Crossover crossover<double>(Context&, FortranGemm<double>);
template Crossover crossover<std::complex<float>>(Context&, FortranGemm<std::complex<float>>);
template Crossover crossover<std::complex<double>>(Context&, FortranGemm<std::complex<double>>);

}  // namespace cuboid::blas
