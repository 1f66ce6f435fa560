#include "exec/validate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "exec/scalar.hpp"
#include "kokkos_ext/compat.hpp"

namespace cuboid::exec {
namespace {
using host = Kokkos::DefaultHostExecutionSpace;
using rank2 = Kokkos::MDRangePolicy<host, Kokkos::Rank<2, Kokkos::Iterate::Left>>;

double gamma(double j, double u) { return j * u / (1.0 - j * u); }
}  // namespace

double componentwise_factor(double k, double r, double u) {
  return kValidationConstant * (gamma(k + r + 2, u) + gamma(k + 2, u)) / (1.0 - gamma(k, u));
}

double componentwise_floor(double k, double r, double alpha, double denorm_min) {
  return (k + r + 2) * (2.0 + std::abs(alpha)) * denorm_min;
}

double validation_bytes(std::int64_t m, std::int64_t n, std::int64_t k, std::size_t element_bytes) {
  const double bm = double(std::min(m, kValidationBlock)),
               bn = double(std::min(n, kValidationBlock));
  return double(element_bytes) * (double(m) * double(n) + (bm + bn) * double(k) + bm * bn);
}

template <class Scalar>
double frobenius_norm(const HostMatrix<Scalar>& M) {
  double sum = 0;
  Kokkos::parallel_reduce(
      "cuboid::exec::frobenius", rank2({0, 0}, {M.extent(0), M.extent(1)}),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t j, double& acc) {
        const double v = magnitude(M(i, j));
        acc += v * v;
      },
      sum);
  return std::sqrt(sum);
}

template <class Scalar>
Validation compare_componentwise(const HostMatrix<Scalar>& A, const HostMatrix<Scalar>& B,
                                 const HostMatrix<Scalar>& C0, const HostMatrix<Scalar>& C,
                                 const HostMatrix<Scalar>& ref, Scalar alpha, Scalar beta,
                                 int extra_additions, kokkos_ext::Ops ops) {
  const bool ta = ops.a != 'N', tb = ops.b != 'N';
  const std::int64_t m = std::int64_t(C.extent(0)), n = std::int64_t(C.extent(1)),
                     k = std::int64_t(ta ? A.extent(0) : A.extent(1));
  Validation v;
  v.performed = true;
  v.method =
      "reference gemm on the host, componentwise: |C - C_ref| <= c gamma (|alpha||A||B| + "
      "|beta||C0|) for every element";
  const double u = validation_roundoff<Scalar>();
  const double factor = componentwise_factor(double(k), double(extra_additions), u);
  const double floor =
      componentwise_floor(double(k), double(extra_additions), magnitude(alpha),
                          double(std::numeric_limits<RealOf<Scalar>>::denorm_min()));
  const double a = magnitude(alpha), b = magnitude(beta);
  const bool use_c0 = beta != Scalar(0);  // beta = 0 ignores C0 (it may hold NaN)
  const std::int64_t bm = std::min(m, kValidationBlock), bn = std::min(n, kValidationBlock);
  // |A| |B| in the real type: the magnitudes of complex elements are real.
  using Real = RealOf<Scalar>;
  HostMatrix<Real> Aabs(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::exec::A_abs"), bm,
                        k);
  HostMatrix<Real> Babs(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::exec::B_abs"), k,
                        bn);
  HostMatrix<Real> W(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::exec::AB_abs"), bm,
                     bn);
  double worst = -1;
  for (std::int64_t j0 = 0; j0 < n; j0 += bn) {
    const std::int64_t j1 = std::min(n, j0 + bn);
    auto Bb = Kokkos::subview(Babs, Kokkos::ALL, std::make_pair(std::int64_t(0), j1 - j0));
    Kokkos::parallel_for(
        "cuboid::exec::abs_B", rank2({0, 0}, {k, j1 - j0}),
        KOKKOS_LAMBDA(std::int64_t l, std::int64_t j) {
          Bb(l, j) = Real(magnitude(tb ? B(j0 + j, l) : B(l, j0 + j)));
        });
    for (std::int64_t i0 = 0; i0 < m; i0 += bm) {
      const std::int64_t i1 = std::min(m, i0 + bm);
      auto Ab = Kokkos::subview(Aabs, std::make_pair(std::int64_t(0), i1 - i0), Kokkos::ALL);
      auto Wb = Kokkos::subview(W, std::make_pair(std::int64_t(0), i1 - i0),
                                std::make_pair(std::int64_t(0), j1 - j0));
      Kokkos::parallel_for(
          "cuboid::exec::abs_A", rank2({0, 0}, {i1 - i0, k}),
          KOKKOS_LAMBDA(std::int64_t i, std::int64_t l) {
            Ab(i, l) = Real(magnitude(ta ? A(l, i0 + i) : A(i0 + i, l)));
          });
      host().fence();
      kokkos_ext::gemm(host(), Real(1), Ab, Bb, Real(0), Wb);
      host().fence();
      // error / bound of each element; Inf where C (or anything else) is not finite.
      auto ratio = [=](std::int64_t i, std::int64_t j, double& err, double& bound) {
        const Scalar c = C(i0 + i, j0 + j);
        const double scale =
            a * double(Wb(i, j)) + (use_c0 ? b * magnitude(C0(i0 + i, j0 + j)) : 0.0);
        bound = factor * scale + floor;
        err = magnitude(Scalar(c - ref(i0 + i, j0 + j)));
        const double r = err / bound;
        return is_finite(c) && r == r ? r : std::numeric_limits<double>::infinity();
      };
      double block_worst = 0;
      std::int64_t block_failed = 0;
      Kokkos::parallel_reduce(
          "cuboid::exec::compare_worst", rank2({0, 0}, {i1 - i0, j1 - j0}),
          // A host lambda: it calls `ratio`, which a device-annotated lambda may not capture.
          [=](std::int64_t i, std::int64_t j, double& w) {
            double err, bound;
            w = std::max(w, ratio(i, j, err, bound));
          },
          Kokkos::Max<double>(block_worst));
      if (block_worst > 1.0)
        Kokkos::parallel_reduce(
            "cuboid::exec::compare_count", rank2({0, 0}, {i1 - i0, j1 - j0}),
            [=](std::int64_t i, std::int64_t j, std::int64_t& f) {
              double err, bound;
              if (ratio(i, j, err, bound) > 1.0) ++f;
            },
            block_failed);
      v.failed += block_failed;
      if (block_worst > worst) {
        // Locate the worst element of this block (once per block that holds a new worst).
        worst = block_worst;
        for (std::int64_t j = 0; j < j1 - j0; ++j)
          for (std::int64_t i = 0; i < i1 - i0; ++i) {
            double err, bound;
            const double r = ratio(i, j, err, bound);
            if (r == block_worst) {
              v.error = std::isinf(r) ? std::numeric_limits<double>::infinity() : err;
              v.bound = bound;
              v.worst_i = i0 + i, v.worst_j = j0 + j;
              i = i1 - i0, j = j1 - j0;  // done
            }
          }
      }
    }
  }
  v.passed = v.failed == 0;
  return v;
}

template <class Scalar>
Validation validate(const HostMatrix<Scalar>& A, const HostMatrix<Scalar>& B,
                    const HostMatrix<Scalar>& C0, const HostMatrix<Scalar>& C, Scalar alpha,
                    Scalar beta, int extra_additions, kokkos_ext::Ops ops) {
  kokkos_ext::ScopedRegion region("cuboid::exec::validate");
  HostMatrix<Scalar> ref(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::exec::C_reference"), C.extent(0),
      C.extent(1));
  if (beta == Scalar(0))
    Kokkos::deep_copy(ref, Scalar(0));  // the old C may hold NaN; beta = 0 ignores it
  else
    Kokkos::deep_copy(ref, C0);
  kokkos_ext::gemm(host(), ops, alpha, A, B, beta, ref);
  host().fence();
  return compare_componentwise(A, B, C0, C, ref, alpha, beta, extra_additions, ops);
}

#define CUBOID_VALIDATE(Scalar)                                                                    \
  template Validation validate<Scalar>(const HostMatrix<Scalar>&, const HostMatrix<Scalar>&,       \
                                       const HostMatrix<Scalar>&, const HostMatrix<Scalar>&,       \
                                       Scalar, Scalar, int, kokkos_ext::Ops);                      \
  template Validation compare_componentwise<Scalar>(                                               \
      const HostMatrix<Scalar>&, const HostMatrix<Scalar>&, const HostMatrix<Scalar>&,             \
      const HostMatrix<Scalar>&, const HostMatrix<Scalar>&, Scalar, Scalar, int, kokkos_ext::Ops); \
  template double frobenius_norm<Scalar>(const HostMatrix<Scalar>&);
CUBOID_FOR_EACH_SCALAR(CUBOID_VALIDATE)
#undef CUBOID_VALIDATE

}  // namespace cuboid::exec
