#include "blas/crossover.hpp"

#include <string>
#include <thread>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "platform/crossover.hpp"

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

template <class T>
double measure(Context& context, FortranGemm<T> next) {
  const blas_int top = blas_int(platform::kCrossoverLadder[0]);
  std::vector<T> A(std::size_t(top) * top, T(0.5)), B(A.size(), T(0.25)), C(A.size(), T(0));
  const T one(1), zero(0);
  const std::int64_t at = platform::ladder_crossover(
      [&](std::int64_t size) {
        const blas_int n = blas_int(size);
        return platform::median_of_three([&] {
          context.gemm(Op::none, Op::none, n, n, n, one, A.data(), n, B.data(), n, zero, C.data(),
                       n);
        });
      },
      [&](std::int64_t size) {
        const blas_int n = blas_int(size);
        return platform::median_of_three([&] {
          next("N", "N", &n, &n, &n, &one, A.data(), &n, B.data(), &n, &zero, C.data(), &n, 1, 1);
        });
      });
  return gemm_flops<T>(at, at, at);
}

}  // namespace

template <class T>
Crossover crossover(Context& context, FortranGemm<T> next) {
  const std::string key = cache_key(context, letter<T>());
  if (const auto v = platform::cached_crossover(key)) return {*v, false};
  const double at = measure<T>(context, next);
  platform::store_crossover(key, at);
  return {at, true};
}

template Crossover crossover<float>(Context&, FortranGemm<float>);
template Crossover crossover<double>(Context&, FortranGemm<double>);
template Crossover crossover<std::complex<float>>(Context&, FortranGemm<std::complex<float>>);
template Crossover crossover<std::complex<double>>(Context&, FortranGemm<std::complex<double>>);

}  // namespace cuboid::blas
