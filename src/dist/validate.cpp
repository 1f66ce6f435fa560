#include "dist/validate.hpp"

#include <cmath>
#include <limits>

#include "exec/validate.hpp"
#include "kokkos_ext/compat.hpp"

namespace cuboid::dist {
namespace {

double gamma(double j, double u) { return j * u / (1.0 - j * u); }

// The check vector: entries in +-[0.5, 1), from the seed, so a wrong element cannot hide
// behind a tiny weight.
double x_entry(std::uint64_t seed, std::int64_t j) {
  const double v = exec::element_value(seed ^ 0x5eed0fc0ffee1234ull, exec::MatrixId(7), j, 0);
  return v >= 0 ? 0.5 + 0.5 * v : -0.5 + 0.5 * v;
}

// y[g_row] += M x[g_col] and yabs += |M||x| over the local blocks of M.
template <class Scalar>
void local_matvec(const exec::HostMatrix<Scalar>& M, const BlockCyclic& L, int rank,
                  const std::vector<double>& x, const std::vector<double>& xabs, double* y,
                  double* yabs) {
  const int prow = L.grid().row_of(rank), pcol = L.grid().col_of(rank);
  for (std::int64_t lj = 0; lj < std::int64_t(M.extent(1)); ++lj) {
    const std::int64_t gj = L.global_col(lj, pcol);
    const double xv = x[std::size_t(gj)], xa = xabs[std::size_t(gj)];
    for (std::int64_t li = 0; li < std::int64_t(M.extent(0)); ++li) {
      const std::int64_t gi = L.global_row(li, prow);
      const double v = double(M(li, lj));
      y[gi] += v * xv;
      yabs[gi] += std::abs(v) * xa;
    }
  }
}

template <class Scalar>
double local_sum_squares(const exec::HostMatrix<Scalar>& M) {
  double s = 0;
  for (std::size_t j = 0; j < M.extent(1); ++j)
    for (std::size_t i = 0; i < M.extent(0); ++i) s += double(M(i, j)) * double(M(i, j));
  return s;
}

}  // namespace

template <class Scalar>
DistValidation validate_distributed(const Communicator& comm, const Layouts& layouts,
                                    const exec::HostMatrix<Scalar>& A_local,
                                    const exec::HostMatrix<Scalar>& B_local,
                                    const exec::HostMatrix<Scalar>& C0_local,
                                    const exec::HostMatrix<Scalar>& C_local, Scalar alpha,
                                    Scalar beta, std::uint64_t seed, std::int64_t full_check_max,
                                    int extra_additions) {
  const int me = comm.rank();
  const std::int64_t m = layouts.c.rows(), n = layouts.c.cols(), k = layouts.a.cols();
  const std::size_t M = std::size_t(m), K = std::size_t(k);
  DistValidation v;

  // --- randomized check --------------------------------------------------------------------
  std::vector<double> x(static_cast<std::size_t>(n)), xabs(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < n; ++j)
    x[std::size_t(j)] = x_entry(seed, j), xabs[std::size_t(j)] = std::abs(x[std::size_t(j)]);
  std::vector<double> z(2 * K, 0.0);  // B x, |B||x|
  local_matvec(B_local, layouts.b, me, x, xabs, z.data(), z.data() + K);
  comm.allreduce_sum(z);
  const std::vector<double> bz(z.begin(), z.begin() + std::ptrdiff_t(K)),
      bzabs(z.begin() + std::ptrdiff_t(K), z.end());
  // C x, |C||x|, A(Bx), |A|(|B||x|), C0 x, |C0||x|
  std::vector<double> r(6 * M, 0.0);
  local_matvec(C_local, layouts.c, me, x, xabs, r.data(), r.data() + M);
  local_matvec(A_local, layouts.a, me, bz, bzabs, r.data() + 2 * M, r.data() + 3 * M);
  // beta = 0 ignores C0 altogether (it may hold NaN on purpose).
  if (beta != Scalar(0))
    local_matvec(C0_local, layouts.c, me, x, xabs, r.data() + 4 * M, r.data() + 5 * M);
  comm.allreduce_sum(r);

  const double us = std::numeric_limits<Scalar>::epsilon() / 2,
               ud = std::numeric_limits<double>::epsilon() / 2;
  const double g_product =
      gamma(double(k + extra_additions + 4), us) + gamma(double(n + k + 4), ud);
  const double g_check = gamma(double(n + 1), ud);
  const double a = double(alpha), b = double(beta);
  bool ok = true;
  double worst = -1;
  for (std::size_t i = 0; i < M; ++i) {
    const double y = r[i], yabs = r[M + i];
    const double ref = a * r[2 * M + i] + (b != 0 ? b * r[4 * M + i] : 0.0);
    const double scale = std::abs(a) * r[3 * M + i] + (b != 0 ? std::abs(b) * r[5 * M + i] : 0.0);
    const double bound = 1.01 * (g_product * scale + g_check * yabs);
    const double err = std::abs(y - ref);
    if (!std::isfinite(y) || !std::isfinite(yabs) || !(err <= bound)) ok = false;
    const double inf = std::numeric_limits<double>::infinity();
    const double ratio = !std::isfinite(y) || !std::isfinite(yabs) ? inf
                         : bound > 0                               ? err / bound
                         : err > 0                                 ? inf
                                                                   : 0.0;
    if (ratio > worst) {
      worst = ratio;
      v.error = std::isfinite(y) ? err : std::numeric_limits<double>::quiet_NaN();
      v.bound = bound;
    }
  }
  v.passed = ok;
  v.method =
      "randomized: C x vs alpha A (B x) + beta C0 x, |x_j| in [0.5,1), every row within its "
      "rounding bound";

  // --- full element-wise check, small problems -----------------------------------------------
  if (double(m) * double(n) <= double(full_check_max)) {
    v.full_performed = true;
    const BlockCyclic& Lc = layouts.c;
    const int prow = Lc.grid().row_of(me), pcol = Lc.grid().col_of(me);
    const std::int64_t lr = std::int64_t(C_local.extent(0)), lc = std::int64_t(C_local.extent(1));
    double err2 = 0;
    if (lr > 0 && lc > 0) {
      exec::HostMatrix<Scalar> Ar(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::dist::A_rows"), lr, k);
      exec::HostMatrix<Scalar> Bc(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::dist::B_cols"), k, lc);
      exec::HostMatrix<Scalar> ref("cuboid::dist::C_ref", lr, lc);
      for (std::int64_t l = 0; l < k; ++l)
        for (std::int64_t i = 0; i < lr; ++i)
          Ar(i, l) =
              Scalar(exec::element_value(seed, exec::MatrixId::A, Lc.global_row(i, prow), l));
      for (std::int64_t j = 0; j < lc; ++j)
        for (std::int64_t l = 0; l < k; ++l)
          Bc(l, j) =
              Scalar(exec::element_value(seed, exec::MatrixId::B, l, Lc.global_col(j, pcol)));
      if (beta != Scalar(0)) Kokkos::deep_copy(ref, C0_local);
      kokkos_ext::gemm(Kokkos::DefaultHostExecutionSpace(), alpha, Ar, Bc, beta, ref);
      Kokkos::DefaultHostExecutionSpace().fence();
      for (std::int64_t j = 0; j < lc; ++j)
        for (std::int64_t i = 0; i < lr; ++i) {
          const double d = double(C_local(i, j)) - double(ref(i, j));
          err2 += std::isfinite(double(C_local(i, j))) ? d * d
                                                       : std::numeric_limits<double>::infinity();
        }
    }
    std::vector<double> sums{err2, local_sum_squares(A_local), local_sum_squares(B_local),
                             beta != Scalar(0) ? local_sum_squares(C0_local) : 0.0};
    comm.allreduce_sum(sums);
    const double eps = std::numeric_limits<Scalar>::epsilon(), rr = double(extra_additions);
    v.full_error = std::sqrt(sums[0]);
    v.full_bound = exec::kValidationConstant * eps *
                   ((double(k) + rr) * std::abs(a) * std::sqrt(sums[1]) * std::sqrt(sums[2]) +
                    (rr + 2) * std::abs(b) * std::sqrt(sums[3]));
    v.full_passed = std::isfinite(v.full_error) && v.full_error <= v.full_bound;
    v.passed = v.passed && v.full_passed;
    v.method += "; full: each rank's C blocks vs a local reference GEMM, normwise bound";
  }
  return v;
}

template DistValidation validate_distributed<double>(const Communicator&, const Layouts&,
                                                     const exec::HostMatrix<double>&,
                                                     const exec::HostMatrix<double>&,
                                                     const exec::HostMatrix<double>&,
                                                     const exec::HostMatrix<double>&, double,
                                                     double, std::uint64_t, std::int64_t, int);
template DistValidation validate_distributed<float>(const Communicator&, const Layouts&,
                                                    const exec::HostMatrix<float>&,
                                                    const exec::HostMatrix<float>&,
                                                    const exec::HostMatrix<float>&,
                                                    const exec::HostMatrix<float>&, float, float,
                                                    std::uint64_t, std::int64_t, int);

}  // namespace cuboid::dist
