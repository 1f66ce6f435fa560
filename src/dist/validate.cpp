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

// y[g_row] += M x[g_col] and yabs += |M||x| over the elements `rank` owns.
template <class Scalar>
void local_matvec(const LocalStorage<Scalar>& M, const MatrixDist& L, int rank,
                  const std::vector<double>& x, const std::vector<double>& xabs, double* y,
                  double* yabs) {
  L.for_each_owned(rank, [&](const exec::Rect& u) {
    const Scalar* base = M.data() + L.offset(u.i0, u.j0);
    const std::int64_t ld = L.ld(u.i0, u.j0);
    for (std::int64_t j = 0; j < u.cols(); ++j) {
      const double xv = x[std::size_t(u.j0 + j)], xa = xabs[std::size_t(u.j0 + j)];
      for (std::int64_t i = 0; i < u.rows(); ++i) {
        const double v = double(base[i + j * ld]);
        y[u.i0 + i] += v * xv;
        yabs[u.i0 + i] += std::abs(v) * xa;
      }
    }
  });
}

template <class Scalar>
double local_sum_squares(const LocalStorage<Scalar>& M) {
  double s = 0;
  for (std::size_t e = 0; e < M.extent(0); ++e) s += double(M(e)) * double(M(e));
  return s;
}

}  // namespace

template <class Scalar>
DistValidation validate_distributed(const Communicator& comm, const Distribution& dist,
                                    const LocalStorage<Scalar>& A_local,
                                    const LocalStorage<Scalar>& B_local,
                                    const LocalStorage<Scalar>& C0_local,
                                    const LocalStorage<Scalar>& C_local, Scalar alpha, Scalar beta,
                                    std::uint64_t seed, std::int64_t full_check_max,
                                    int extra_additions) {
  const int me = comm.rank();
  const std::int64_t m = dist.c.rows(), n = dist.c.cols(), k = dist.a.cols();
  const std::size_t M = std::size_t(m), K = std::size_t(k);
  DistValidation v;

  // --- randomized check --------------------------------------------------------------------
  std::vector<double> x(static_cast<std::size_t>(n)), xabs(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < n; ++j)
    x[std::size_t(j)] = x_entry(seed, j), xabs[std::size_t(j)] = std::abs(x[std::size_t(j)]);
  std::vector<double> z(2 * K, 0.0);  // B x, |B||x|
  local_matvec(B_local, dist.b, me, x, xabs, z.data(), z.data() + K);
  comm.allreduce_sum(z);
  const std::vector<double> bz(z.begin(), z.begin() + std::ptrdiff_t(K)),
      bzabs(z.begin() + std::ptrdiff_t(K), z.end());
  // C x, |C||x|, A(Bx), |A|(|B||x|), C0 x, |C0||x|
  std::vector<double> r(6 * M, 0.0);
  local_matvec(C_local, dist.c, me, x, xabs, r.data(), r.data() + M);
  local_matvec(A_local, dist.a, me, bz, bzabs, r.data() + 2 * M, r.data() + 3 * M);
  // beta = 0 ignores C0 altogether (it may hold NaN on purpose).
  if (beta != Scalar(0))
    local_matvec(C0_local, dist.c, me, x, xabs, r.data() + 4 * M, r.data() + 5 * M);
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
    const MatrixDist& Lc = dist.c;
    double err2 = 0;
    // One reference GEMM for the rows x cols (global indices) C elements at index(i, j) of the
    // local storage: per rank for a block-cyclic array, per tile for tile owners.
    auto check = [&](const std::vector<std::int64_t>& rows, const std::vector<std::int64_t>& cols,
                     auto index) {
      const std::int64_t lr = std::int64_t(rows.size()), lc = std::int64_t(cols.size());
      if (lr == 0 || lc == 0) return;
      exec::HostMatrix<Scalar> Ar(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::dist::A_rows"), lr, k);
      exec::HostMatrix<Scalar> Bc(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::dist::B_cols"), k, lc);
      exec::HostMatrix<Scalar> ref("cuboid::dist::C_ref", lr, lc);
      for (std::int64_t l = 0; l < k; ++l)
        for (std::int64_t i = 0; i < lr; ++i)
          Ar(i, l) = Scalar(exec::element_value(seed, exec::MatrixId::A, rows[std::size_t(i)], l));
      for (std::int64_t j = 0; j < lc; ++j)
        for (std::int64_t l = 0; l < k; ++l)
          Bc(l, j) = Scalar(exec::element_value(seed, exec::MatrixId::B, l, cols[std::size_t(j)]));
      if (beta != Scalar(0))
        for (std::int64_t j = 0; j < lc; ++j)
          for (std::int64_t i = 0; i < lr; ++i) ref(i, j) = C0_local(index(i, j));
      kokkos_ext::gemm(Kokkos::DefaultHostExecutionSpace(), alpha, Ar, Bc, beta, ref);
      Kokkos::DefaultHostExecutionSpace().fence();
      for (std::int64_t j = 0; j < lc; ++j)
        for (std::int64_t i = 0; i < lr; ++i) {
          const double v = double(C_local(index(i, j)));
          const double d = v - double(ref(i, j));
          err2 += std::isfinite(v) ? d * d : std::numeric_limits<double>::infinity();
        }
    };
    if (Lc.kind() == MatrixDist::Kind::block_cyclic) {
      const BlockCyclic& L = Lc.block_cyclic();
      const int prow = L.grid().row_of(me), pcol = L.grid().col_of(me);
      std::vector<std::int64_t> rows, cols;
      for (std::int64_t i = 0; i < L.local_rows(me); ++i) rows.push_back(L.global_row(i, prow));
      for (std::int64_t j = 0; j < L.local_cols(me); ++j) cols.push_back(L.global_col(j, pcol));
      const std::int64_t ld = std::max<std::int64_t>(1, L.local_rows(me));
      check(rows, cols, [&](std::int64_t i, std::int64_t j) { return std::size_t(i + j * ld); });
    } else {
      Lc.for_each_owned(me, [&](const exec::Rect& u) {
        std::vector<std::int64_t> rows, cols;
        for (std::int64_t i = u.i0; i < u.i1; ++i) rows.push_back(i);
        for (std::int64_t j = u.j0; j < u.j1; ++j) cols.push_back(j);
        const std::int64_t off = Lc.offset(u.i0, u.j0), ld = Lc.ld(u.i0, u.j0);
        check(rows, cols,
              [&](std::int64_t i, std::int64_t j) { return std::size_t(off + i + j * ld); });
      });
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

template DistValidation validate_distributed<double>(const Communicator&, const Distribution&,
                                                     const LocalStorage<double>&,
                                                     const LocalStorage<double>&,
                                                     const LocalStorage<double>&,
                                                     const LocalStorage<double>&, double, double,
                                                     std::uint64_t, std::int64_t, int);
template DistValidation validate_distributed<float>(const Communicator&, const Distribution&,
                                                    const LocalStorage<float>&,
                                                    const LocalStorage<float>&,
                                                    const LocalStorage<float>&,
                                                    const LocalStorage<float>&, float, float,
                                                    std::uint64_t, std::int64_t, int);

}  // namespace cuboid::dist
