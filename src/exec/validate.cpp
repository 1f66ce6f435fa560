#include "exec/validate.hpp"

#include <cmath>
#include <limits>

#include "kokkos_ext/compat.hpp"

namespace cuboid::exec {
namespace {
using host = Kokkos::DefaultHostExecutionSpace;
using rank2 = Kokkos::MDRangePolicy<host, Kokkos::Rank<2, Kokkos::Iterate::Left>>;
}  // namespace

template <class Scalar>
double frobenius_norm(const HostMatrix<Scalar>& M) {
  double sum = 0;
  Kokkos::parallel_reduce(
      "cuboid::exec::frobenius", rank2({0, 0}, {M.extent(0), M.extent(1)}),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t j, double& acc) {
        const double v = double(M(i, j));
        acc += v * v;
      },
      sum);
  return std::sqrt(sum);
}

template <class Scalar>
Validation validate(const HostMatrix<Scalar>& A, const HostMatrix<Scalar>& B,
                    const HostMatrix<Scalar>& C0, const HostMatrix<Scalar>& C, Scalar alpha,
                    Scalar beta, int extra_additions) {
  kokkos_ext::ScopedRegion region("cuboid::exec::validate");
  Validation v;
  v.performed = true;
  v.method = "reference gemm on the host, normwise bound";
  HostMatrix<Scalar> ref(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::exec::C_reference"), C.extent(0),
      C.extent(1));
  if (beta == Scalar(0))
    Kokkos::deep_copy(ref, Scalar(0));  // the old C may hold NaN; beta = 0 ignores it
  else
    Kokkos::deep_copy(ref, C0);
  kokkos_ext::gemm(host(), alpha, A, B, beta, ref);
  host().fence();

  double diff = 0;
  Kokkos::parallel_reduce(
      "cuboid::exec::difference", rank2({0, 0}, {C.extent(0), C.extent(1)}),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t j, double& acc) {
        const double d = double(C(i, j)) - double(ref(i, j));
        acc += d * d;
      },
      diff);
  v.error = std::sqrt(diff);
  const double eps = std::numeric_limits<Scalar>::epsilon();
  const double k = double(A.extent(1));
  const double r = double(extra_additions) + 2.0;
  const double c0_term = beta == Scalar(0) ? 0.0 : std::abs(double(beta)) * frobenius_norm(C0);
  v.bound = kValidationConstant * eps *
            ((k + r) * std::abs(double(alpha)) * frobenius_norm(A) * frobenius_norm(B) +
             (r + 2.0) * c0_term);
  v.passed = std::isfinite(v.error) && v.error <= v.bound;
  return v;
}

template Validation validate<double>(const HostMatrix<double>&, const HostMatrix<double>&,
                                     const HostMatrix<double>&, const HostMatrix<double>&, double,
                                     double, int);
template Validation validate<float>(const HostMatrix<float>&, const HostMatrix<float>&,
                                    const HostMatrix<float>&, const HostMatrix<float>&, float,
                                    float, int);
template double frobenius_norm<double>(const HostMatrix<double>&);
template double frobenius_norm<float>(const HostMatrix<float>&);

}  // namespace cuboid::exec
