#include "mpi/validate.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "exec/scalar.hpp"
#include "exec/validate.hpp"
#include "kokkos_ext/compat.hpp"

namespace cuboid::mpi {
using layout::BlockCyclic;
using layout::Distribution;
using layout::MatrixDist;
namespace {

double gamma(double j, double u) { return j * u / (1.0 - j * u); }

// Every check computes in complex double: a real scalar is its real part.
using Acc = std::complex<double>;
template <class Scalar>
Acc acc(const Scalar& x) {
  return {exec::real_part(x), exec::imag_part(x)};
}
// A length-n vector of Acc inside a vector of doubles (std::complex<double> is two doubles), so
// that one MPI sum of doubles adds it.
inline Acc* as_acc(double* p) { return reinterpret_cast<Acc*>(p); }

// The check vector: entries in +-[0.5, 1), from the seed, so a wrong element cannot hide
// behind a tiny weight.
double x_entry(std::uint64_t seed, std::int64_t j) {
  const double v = exec::element_value(seed ^ 0x5eed0fc0ffee1234ull, exec::MatrixId(7), j, 0);
  return v >= 0 ? 0.5 + 0.5 * v : -0.5 + 0.5 * v;
}

// Element (i, j) of op(X), X the global matrix `id` as stored (j, i when op transposes).
template <class Scalar>
Scalar op_element(std::uint64_t seed, exec::MatrixId id, Op op, std::int64_t i, std::int64_t j) {
  if (op == Op::none) return exec::element<Scalar>(seed, id, i, j);
  const Scalar x = exec::element<Scalar>(seed, id, j, i);
  if (op == Op::transpose) return x;
  return exec::make_scalar<Scalar>(exec::real_part(x), -exec::imag_part(x));
}

// y += op(M) x and yabs += |op(M)||x| over the stored elements `rank` owns: y[g_row] += M x[g_col]
// untransposed, y[g_col] += op(M) x[g_row] (conjugated for Op::conjugate_transpose) else.
// `value(at, i, j)`: the element at offset `at` of the rank's share, global (i, j).
template <class Value>
void local_matvec(const Value& value, const MatrixDist& L, int rank, const Acc* x,
                  const double* xabs, Acc* y, double* yabs, Op op = Op::none) {
  L.for_each_owned(rank, [&](const exec::Rect& u) {
    const std::int64_t off = L.offset(u.i0, u.j0), ld = L.ld(u.i0, u.j0);
    auto at = [&](std::int64_t i, std::int64_t j) {
      return value(std::size_t(off + i + j * ld), u.i0 + i, u.j0 + j);
    };
    if (op != Op::none) {
      const bool conj = op == Op::conjugate_transpose;
      for (std::int64_t j = 0; j < u.cols(); ++j) {
        Acc sum = 0;
        double sum_abs = 0;
        for (std::int64_t i = 0; i < u.rows(); ++i) {
          const auto v = at(i, j);
          sum += (conj ? std::conj(acc(v)) : acc(v)) * x[u.i0 + i];
          sum_abs += exec::magnitude(v) * xabs[u.i0 + i];
        }
        y[u.j0 + j] += sum;
        yabs[u.j0 + j] += sum_abs;
      }
      return;
    }
    for (std::int64_t j = 0; j < u.cols(); ++j) {
      const Acc xv = x[u.j0 + j];
      const double xa = xabs[u.j0 + j];
      for (std::int64_t i = 0; i < u.rows(); ++i) {
        const auto v = at(i, j);
        y[u.i0 + i] += acc(v) * xv;
        yabs[u.i0 + i] += exec::magnitude(v) * xa;
      }
    }
  });
}

// A stored share as local_matvec reads it.
template <class Scalar>
auto stored(const LocalStorage<Scalar>& M) {
  return [&M](std::size_t at, std::int64_t, std::int64_t) { return M(at); };
}

// The elements of the sampled rows this rank owns, by unit column range: for each range
// [j0, j1), the sampled rows whose elements in it are ours.
std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::int64_t>> sampled_elements(
    const MatrixDist& L, int rank, std::uint64_t seed, std::int64_t tile) {
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::int64_t>> out;
  L.for_each_owned(rank, [&](const exec::Rect& u) {
    for (std::int64_t I = u.i0 / tile; I * tile < u.i1; ++I) {
      const std::int64_t i = sampled_row(seed, I, tile, L.rows());
      if (i >= u.i0 && i < u.i1) out[{u.j0, u.j1}].push_back(i);
    }
  });
  for (auto& [range, rows] : out) {
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  }
  return out;
}

struct Worst {
  double ratio = -1, error = 0, bound = 0, failed = 0, checked = 0;
  void add(double r, double err, double bnd) { merge(r, err, bnd, 1, r <= 1.0 ? 0 : 1); }
  // A group of `n` elements, `bad` of them beyond their bounds, whose worst is (r, err, bnd).
  void merge(double r, double err, double bnd, double n, double bad) {
    checked += n, failed += bad;
    if (r > ratio) ratio = r, error = err, bound = bnd;
  }
};

// Every rank's worst (ratio, error, bound) and the sums of failed and checked elements; the
// worst error and bound are the lowest such rank's.
Worst combine(const Communicator& comm, const Worst& mine) {
  Worst all;
  all.ratio = comm.allreduce_max(mine.ratio);
  const double mine_is_worst = mine.ratio == all.ratio ? double(comm.rank()) : 1e300;
  const double owner = comm.allreduce_min(mine_is_worst);
  std::vector<double> v{mine.failed, mine.checked, 0, 0};
  if (double(comm.rank()) == owner) v[2] = mine.error, v[3] = mine.bound;
  comm.allreduce_sum(v);
  all.failed = v[0], all.checked = v[1], all.error = v[2], all.bound = v[3];
  return all;
}

}  // namespace

std::int64_t sampled_row(std::uint64_t seed, std::int64_t I, std::int64_t tile, std::int64_t m) {
  const std::int64_t lo = I * tile, rows = std::min(m, lo + tile) - lo;
  const double v = exec::element_value(seed ^ 0x5a3b1ed0c0ffeeull, exec::MatrixId(8), I, 0);
  return lo + std::min(rows - 1, std::int64_t((v + 1.0) * 0.5 * double(rows)));
}

namespace {

// What every check reads: this rank's blocks of A, B, C0 and C, and the run's parameters.
template <class Scalar>
struct CheckInput {
  const Communicator& comm;
  const Distribution& dist;
  const LocalStorage<Scalar>& A;
  const LocalStorage<Scalar>& B;
  const InitialCElements<Scalar>& C0;
  const LocalStorage<Scalar>& C;
  Scalar alpha, beta;
  std::uint64_t seed;
  int extra_additions;
  Op op_a, op_b;
  double buffer_bytes;  // what a check's block buffers may hold (0: no limit)
};

// Randomized check, its sums, summed over the ranks: the complex vectors C x, A(Bx), C0 x (2m
// doubles each), then the real |C||x|, |A|(|B||x|), |C0||x| (m each).
template <class Scalar>
std::vector<double> randomized_products(const CheckInput<Scalar>& in) {
  const Distribution& dist = in.dist;
  const int me = in.comm.rank();
  const std::int64_t n = dist.c.cols();
  const std::size_t M = std::size_t(dist.c.rows()), K = std::size_t(dist.depth());
  std::vector<Acc> x(static_cast<std::size_t>(n));
  std::vector<double> xabs(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < n; ++j)
    x[std::size_t(j)] = x_entry(in.seed, j), xabs[std::size_t(j)] = std::abs(x[std::size_t(j)]);
  std::vector<double> z(3 * K, 0.0);  // op(B) x (complex), |op(B)||x|
  local_matvec(stored(in.B), dist.b, me, x.data(), xabs.data(), as_acc(z.data()), z.data() + 2 * K,
               in.op_b);
  in.comm.allreduce_sum(z);
  std::vector<double> r(9 * M, 0.0);
  local_matvec(stored(in.C), dist.c, me, x.data(), xabs.data(), as_acc(r.data()), r.data() + 6 * M);
  local_matvec(stored(in.A), dist.a, me, as_acc(z.data()), z.data() + 2 * K,
               as_acc(r.data() + 2 * M), r.data() + 7 * M, in.op_a);
  // beta = 0 ignores C0 altogether (it may hold NaN on purpose).
  if (in.beta != Scalar(0))
    local_matvec([&](std::size_t, std::int64_t i, std::int64_t j) { return in.C0(i, j); }, dist.c,
                 me, x.data(), xabs.data(), as_acc(r.data() + 4 * M), r.data() + 8 * M);
  in.comm.allreduce_sum(r);
  return r;
}

// Randomized check: every row of C x within its rounding bound of alpha A (B x) + beta C0 x.
template <class Scalar>
void randomized_check(const CheckInput<Scalar>& in, DistValidation& v) {
  const std::int64_t n = in.dist.c.cols(), k = in.dist.depth();
  const std::size_t M = std::size_t(in.dist.c.rows());
  std::vector<double> r = randomized_products(in);
  const Acc* rc = as_acc(r.data());
  // The check's own sums run in complex double for every type: each rounding bounded as a
  // complex multiplication's.
  const double us = exec::validation_roundoff<Scalar>(),
               ud = exec::validation_roundoff<Kokkos::complex<double>>();
  const double g_product =
      gamma(double(k + in.extra_additions + 4), us) + gamma(double(n + k + 4), ud);
  const double g_check = gamma(double(n + 1), ud);
  const Acc a = acc(in.alpha), b = acc(in.beta);
  const bool use_c0 = b != 0.0;
  bool ok = true;
  double worst = -1;
  for (std::size_t i = 0; i < M; ++i) {
    const Acc y = rc[i];
    const double yabs = r[6 * M + i];
    const Acc ref = a * rc[M + i] + (use_c0 ? b * rc[2 * M + i] : 0.0);
    const double scale = std::abs(a) * r[7 * M + i] + (use_c0 ? std::abs(b) * r[8 * M + i] : 0.0);
    const double bound = 1.01 * (g_product * scale + g_check * yabs);
    const double err = std::abs(y - ref);
    const bool finite = exec::is_finite(y) && std::isfinite(yabs);
    if (!finite || !(err <= bound)) ok = false;
    const double inf = std::numeric_limits<double>::infinity();
    const double ratio = !finite ? inf : bound > 0 ? err / bound : err > 0 ? inf : 0.0;
    if (ratio > worst) {
      worst = ratio;
      v.error = exec::is_finite(y) ? err : std::numeric_limits<double>::quiet_NaN();
      v.bound = bound;
    }
  }
  v.passed = ok;
  v.method =
      "randomized: C x vs alpha A (B x) + beta C0 x, |x_j| in [0.5,1), every row within its "
      "rounding bound";
}

// Blocks of at most 512 sampled rows, 1024 columns and 4096 of k at a time: the sampled check's
// memory stays small whatever the problem, the tile or the block.
constexpr std::int64_t kSampledRows = 512, kSampledCols = 1024, kSampledDepth = 4096;
// The full check's blocks: 512 rows, 1024 columns, 2048 of k (at most 7.3 M elements of the
// run's scalar), each slab of A and B generated once per block of C.
constexpr std::int64_t kFullRows = 512, kFullCols = 1024, kFullDepth = 2048;

// A check's blocks: rows and columns of C, and the depth of the k slabs.
struct BlockShape {
  std::int64_t rows = 0, cols = 0, depth = 0;
};

// `shape` made smaller until the buffers of T it needs fit `budget` bytes (0: as it is): the
// depth is halved first (more passes over k, the same arithmetic), then the wider of columns and
// rows, down to 16 x 16 x 16.
template <class T>
BlockShape fit_shape(BlockShape b, double budget) {
  const double per = double(sizeof(T) + sizeof(exec::RealOf<T>));
  auto bytes = [&] {
    return (double(b.rows) * double(b.depth) + double(b.depth) * double(b.cols) +
            double(b.rows) * double(b.cols)) *
           per;
  };
  while (budget > 0 && bytes() > budget) {
    if (b.depth > 16 && b.depth >= std::max(b.rows, b.cols))
      b.depth = (b.depth + 1) / 2;
    else if (b.cols > 16 && b.cols >= b.rows)
      b.cols = (b.cols + 1) / 2;
    else if (b.rows > 16)
      b.rows = (b.rows + 1) / 2;
    else
      break;
  }
  return b;
}

// A check's buffers, allocated once: slabs of rows of A and of columns of B (values and
// absolute values), and the products D = A B and W = |A||B|, in T (the absolute values in its
// real type).
template <class T>
struct ProductBuffers {
  using R = exec::RealOf<T>;
  exec::HostMatrix<T> Ar;
  exec::HostMatrix<R> Aa;
  exec::HostMatrix<T> Bc;
  exec::HostMatrix<R> Ba;
  exec::HostMatrix<T> D;
  exec::HostMatrix<R> W;
  ProductBuffers(std::int64_t rows, std::int64_t cols, std::int64_t kd)
      : Ar(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::mpi::A_rows"), rows, kd),
        Aa(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::mpi::A_rows_abs"), rows, kd),
        Bc(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::mpi::B_cols"), kd, cols),
        Ba(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::mpi::B_cols_abs"), kd, cols),
        D("cuboid::mpi::AB", rows, cols),
        W("cuboid::mpi::AB_abs", rows, cols) {}
};

// D = op(A)(rows, :) op(B)(:, cols) and W = |op(A)||op(B)| for the nr rows `row` and the nc
// columns `col`, over k slabs of depth kd, from A and B as the run saw them (rounded to Scalar),
// computed in T by the host BLAS.
template <class Scalar, class T>
void block_products(ProductBuffers<T>& buf, std::uint64_t seed, const std::int64_t* row,
                    std::int64_t nr, const std::int64_t* col, std::int64_t nc, std::int64_t k,
                    std::int64_t kd, Op op_a, Op op_b) {
  using policy = Kokkos::MDRangePolicy<Kokkos::DefaultHostExecutionSpace,
                                       Kokkos::Rank<2, Kokkos::Iterate::Left>>;
  using R = exec::RealOf<T>;
  const auto host = Kokkos::DefaultHostExecutionSpace();
  const auto rows = std::make_pair(std::int64_t(0), nr);
  const auto cols = std::make_pair(std::int64_t(0), nc);
  auto d = Kokkos::subview(buf.D, rows, cols);
  auto w = Kokkos::subview(buf.W, rows, cols);
  for (std::int64_t l0 = 0; l0 < k; l0 += kd) {
    const std::int64_t nl = std::min(kd, k - l0);
    const auto slab = std::make_pair(std::int64_t(0), nl);
    auto ar = Kokkos::subview(buf.Ar, rows, slab);
    auto aa = Kokkos::subview(buf.Aa, rows, slab);
    auto bc = Kokkos::subview(buf.Bc, slab, cols);
    auto ba = Kokkos::subview(buf.Ba, slab, cols);
    Kokkos::parallel_for("cuboid::mpi::rows_of_A", policy({0, 0}, {nr, nl}),
                         // Host lambdas (host policy): they read std::vectors of indices.
                         [=](std::int64_t i, std::int64_t l) {
                           const Scalar x =
                               op_element<Scalar>(seed, exec::MatrixId::A, op_a, row[i], l0 + l);
                           ar(i, l) = exec::make_scalar<T>(exec::real_part(x), exec::imag_part(x));
                           aa(i, l) = R(exec::magnitude(x));
                         });
    Kokkos::parallel_for(
        "cuboid::mpi::columns_of_B", policy({0, 0}, {nl, nc}), [=](std::int64_t l, std::int64_t j) {
          const Scalar x = op_element<Scalar>(seed, exec::MatrixId::B, op_b, l0 + l, col[j]);
          bc(l, j) = exec::make_scalar<T>(exec::real_part(x), exec::imag_part(x));
          ba(l, j) = R(exec::magnitude(x));
        });
    host.fence();
    kokkos_ext::gemm(host, T(1), ar, bc, l0 == 0 ? T(0) : T(1), d);
    kokkos_ext::gemm(host, R(1), aa, ba, l0 == 0 ? R(0) : R(1), w);
    host.fence();
  }
}

// The componentwise bound of an element: factor (|alpha| (|op(A)||op(B)|)_ij + |beta| |C0_ij|)
// + floor.
struct ElementBound {
  Acc alpha, beta;
  double factor, floor;
};

// Each element of C in rows `row` x columns `col` against alpha D + beta C0 (D and W from
// block_products), its error and bound added to `worst`.
template <class Scalar, class T>
void compare_block(const CheckInput<Scalar>& in, const ProductBuffers<T>& buf,
                   const ElementBound& eb, const std::int64_t* row, std::int64_t nr,
                   const std::int64_t* col, std::int64_t nc, Worst& worst) {
  const bool use_c0 = eb.beta != 0.0;
  constexpr double inf = std::numeric_limits<double>::infinity();
  for (std::int64_t j = 0; j < nc; ++j)
    for (std::int64_t i = 0; i < nr; ++i) {
      const Acc c = acc(in.C(std::size_t(in.dist.c.offset(row[i], col[j]))));
      const Acc c0 = use_c0 ? acc(in.C0(row[i], col[j])) : 0.0;
      const Acc ref = eb.alpha * acc(buf.D(i, j)) + (use_c0 ? eb.beta * c0 : 0.0);
      const double bound = eb.factor * (std::abs(eb.alpha) * double(buf.W(i, j)) +
                                        std::abs(eb.beta) * std::abs(c0)) +
                           eb.floor;
      const double err = std::abs(c - ref);
      const double ratio = err / bound;
      const bool finite = exec::is_finite(c);
      worst.add(finite && ratio == ratio ? ratio : inf, finite ? err : inf, bound);
    }
}

// The sampled check proper: one row per tile row (period `tile`) recomputed in double, every
// element this rank owns within its componentwise bound.
template <class Scalar>
void sampled_check(const CheckInput<Scalar>& in, std::int64_t tile, DistValidation& v) {
  const MatrixDist& Lc = in.dist.c;
  const std::int64_t k = in.dist.depth();
  const std::int64_t period = tile > 0 ? tile : Lc.unit_rows();
  const double us = exec::validation_roundoff<Scalar>(),
               ud = exec::validation_roundoff<Kokkos::complex<double>>();
  const Acc a = acc(in.alpha), b = acc(in.beta);
  const double r_add = double(in.extra_additions);
  const double factor = exec::kValidationConstant *
                        (gamma(double(k) + r_add + 2, us) + gamma(double(k) + 2, ud)) /
                        (1.0 - gamma(double(k), ud));
  const double floor =
      exec::componentwise_floor(double(k), r_add, std::abs(a),
                                double(std::numeric_limits<exec::RealOf<Scalar>>::denorm_min()));
  Worst worst;
  // The reference in double (complex double for a complex run).
  using T = std::conditional_t<exec::is_complex<Scalar>, Kokkos::complex<double>, double>;
  const BlockShape shape =
      fit_shape<T>({kSampledRows, std::min(kSampledCols, Lc.cols()), std::min(k, kSampledDepth)},
                   in.buffer_bytes);
  const std::int64_t kd = shape.depth;
  ProductBuffers<T> buf(shape.rows, shape.cols, kd);
  std::vector<std::int64_t> col;
  for (const auto& [range, all_rows] : sampled_elements(Lc, in.comm.rank(), in.seed, period)) {
    for (std::size_t r0 = 0; r0 < all_rows.size(); r0 += std::size_t(shape.rows))
      for (std::int64_t j0 = range.first; j0 < range.second; j0 += shape.cols) {
        const std::int64_t nr =
            std::min<std::int64_t>(shape.rows, std::int64_t(all_rows.size() - r0));
        const std::int64_t nc = std::min(shape.cols, range.second - j0);
        const std::int64_t* row = all_rows.data() + r0;
        col.resize(std::size_t(nc));
        for (std::int64_t j = 0; j < nc; ++j) col[std::size_t(j)] = j0 + j;
        block_products<Scalar>(buf, in.seed, row, nr, col.data(), nc, k, kd, in.op_a, in.op_b);
        compare_block(in, buf, {a, b, factor, floor}, row, nr, col.data(), nc, worst);
      }
  }
  const Worst all = combine(in.comm, worst);
  v.sampled_rows = double((Lc.rows() + period - 1) / period);
  v.sampled_elements = all.checked, v.sampled_failed = all.failed;
  v.sampled_error = all.error, v.sampled_bound = all.bound;
  v.sampled_passed = all.failed == 0;
  v.passed = v.passed && v.sampled_passed;
  v.method +=
      "; sampled: one row per tile row recomputed in double, every element within its "
      "componentwise bound";
}

// The C elements a rank owns as panels, rows x cols (global indices) each: its local array for
// a block-cyclic layout, its tiles grouped by tile row otherwise (one panel's rows of A are
// generated once for all its columns).
struct Panel {
  std::vector<std::int64_t> rows, cols;
};
std::vector<Panel> owned_panels(const MatrixDist& L, int rank) {
  std::vector<Panel> out;
  if (L.kind() == MatrixDist::Kind::block_cyclic) {
    const BlockCyclic& bc = L.block_cyclic();
    const int prow = bc.grid().row_of(rank), pcol = bc.grid().col_of(rank);
    Panel p;
    for (std::int64_t i = 0; i < bc.local_rows(rank); ++i) p.rows.push_back(bc.global_row(i, prow));
    for (std::int64_t j = 0; j < bc.local_cols(rank); ++j) p.cols.push_back(bc.global_col(j, pcol));
    if (!p.rows.empty() && !p.cols.empty()) out.push_back(std::move(p));
    return out;
  }
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::int64_t>> cols_of_band;
  L.for_each_owned(rank, [&](const exec::Rect& u) {
    auto& cols = cols_of_band[{u.i0, u.i1}];
    for (std::int64_t j = u.j0; j < u.j1; ++j) cols.push_back(j);
  });
  for (auto& [band, cols] : cols_of_band) {
    Panel p;
    for (std::int64_t i = band.first; i < band.second; ++i) p.rows.push_back(i);
    p.cols = std::move(cols);
    if (!p.rows.empty() && !p.cols.empty()) out.push_back(std::move(p));
  }
  return out;
}

// The full check: every C element this rank owns against a reference computed here in the
// run's precision by the host BLAS (A B and |A||B| from rows of A and columns of B generated
// from the seed), with the single-process componentwise bound (exec/validate.hpp).
template <class Scalar>
void full_check(const CheckInput<Scalar>& in, DistValidation& v) {
  v.full_performed = true;
  const MatrixDist& Lc = in.dist.c;
  const std::int64_t k = in.dist.depth();
  const Acc a = acc(in.alpha), b = acc(in.beta);
  const double r_add = double(in.extra_additions);
  // The reference A B in Scalar and alpha A B + beta C0 formed in double: its error is within
  // gamma_s(k + 2) of the scale, as a reference GEMM's (exec/validate.hpp).
  const double factor =
      exec::componentwise_factor(double(k), r_add, exec::validation_roundoff<Scalar>());
  const double floor =
      exec::componentwise_floor(double(k), r_add, std::abs(a),
                                double(std::numeric_limits<exec::RealOf<Scalar>>::denorm_min()));
  Worst worst;
  const std::vector<Panel> panels = owned_panels(Lc, in.comm.rank());
  if (!panels.empty()) {
    const BlockShape shape = fit_shape<Scalar>(
        {std::min(kFullRows, Lc.rows()), std::min(kFullCols, Lc.cols()), std::min(k, kFullDepth)},
        in.buffer_bytes);
    const std::int64_t kd = shape.depth;
    ProductBuffers<Scalar> buf(shape.rows, shape.cols, kd);
    for (const Panel& p : panels)
      for (std::size_t r0 = 0; r0 < p.rows.size(); r0 += std::size_t(shape.rows))
        for (std::size_t c0 = 0; c0 < p.cols.size(); c0 += std::size_t(shape.cols)) {
          const std::int64_t nr =
              std::min<std::int64_t>(shape.rows, std::int64_t(p.rows.size() - r0));
          const std::int64_t nc =
              std::min<std::int64_t>(shape.cols, std::int64_t(p.cols.size() - c0));
          const std::int64_t* row = p.rows.data() + r0;
          const std::int64_t* col = p.cols.data() + c0;
          block_products<Scalar>(buf, in.seed, row, nr, col, nc, k, kd, in.op_a, in.op_b);
          compare_block(in, buf, {a, b, factor, floor}, row, nr, col, nc, worst);
        }
  }
  const Worst all = combine(in.comm, worst);
  v.full_elements = all.checked, v.full_failed = all.failed;
  v.full_error = all.error, v.full_bound = all.bound;
  v.full_passed = all.failed == 0;
  v.passed = v.passed && v.full_passed;
  v.method +=
      "; full: every element of C vs a reference product in the run's precision (host BLAS, "
      "each rank its own blocks), componentwise bound";
}

}  // namespace

template <class Scalar>
DistValidation validate_distributed(const Communicator& comm, const Distribution& dist,
                                    const LocalStorage<Scalar>& A_local,
                                    const LocalStorage<Scalar>& B_local,
                                    const InitialCElements<Scalar>& C0,
                                    const LocalStorage<Scalar>& C_local, Scalar alpha, Scalar beta,
                                    std::uint64_t seed, std::int64_t full_check_max,
                                    int extra_additions, std::int64_t tile, Op op_a, Op op_b,
                                    double buffer_bytes) {
  const CheckInput<Scalar> in{comm, dist, A_local,         B_local, C0,   C_local,     alpha,
                              beta, seed, extra_additions, op_a,    op_b, buffer_bytes};
  const double m = double(dist.c.rows()), n = double(dist.c.cols());
  DistValidation v;
  randomized_check(in, v);
  sampled_check(in, tile, v);
  // Up to the size limit: the full check costs each rank two products of its share of C.
  if (m * n <= double(full_check_max)) {
    full_check(in, v);
  } else {
    v.full_skipped = fmt::format(
        "full check not run (m*n = {:.0f} > mpi.full_check_max = {}): the row checksum misses "
        "an element changed by less than about twice its row's bound (some n = {:.0f} times an "
        "element's), and the sampled rows check {:.0f} of the {:.0f} rows",
        m * n, full_check_max, n, v.sampled_rows, m);
  }
  return v;
}

#define CUBOID_VALIDATE_DISTRIBUTED(Scalar)                                                      \
  template DistValidation validate_distributed<Scalar>(                                          \
      const Communicator&, const Distribution&, const LocalStorage<Scalar>&,                     \
      const LocalStorage<Scalar>&, const InitialCElements<Scalar>&, const LocalStorage<Scalar>&, \
      Scalar, Scalar, std::uint64_t, std::int64_t, int, std::int64_t, Op, Op, double);
CUBOID_FOR_EACH_SCALAR(CUBOID_VALIDATE_DISTRIBUTED)
#undef CUBOID_VALIDATE_DISTRIBUTED

}  // namespace cuboid::mpi
