#include "blas/crossover.hpp"

#include <string>
#include <vector>

#include "platform/crossover.hpp"

namespace cuboid::blas {
namespace {

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
  const std::string key = platform::crossover_key(
      std::string("blas crossover|") + letter<T>() + "gemm", context.processor_names());
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
