// The distributed checks have teeth: a correct C passes, one wrong element or a NaN on any
// rank fails, on every rank alike. Run under mpirun at several sizes (tests/mpi/CMakeLists.txt).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kokkos_ext/compat.hpp"
#include "layout/model.hpp"
#include "layout/rank_partition.hpp"
#include "mpi/communicator.hpp"
#include "mpi/local_matrix.hpp"
#include "mpi/validate.hpp"

namespace cuboid::mpi {
using layout::aligned_distribution;
using layout::block_cyclic_distribution;
using layout::Distribution;
using layout::natural_order;
using layout::near_square_grid;
using layout::weighted_cuts;
namespace {

const Communicator& world() {
  static Communicator c;
  return c;
}

template <class Scalar>
struct Problem {
  std::int64_t m = 70, n = 45, k = 33;
  std::uint64_t seed = 11;
  Scalar alpha = exec::make_scalar<Scalar>(1.5, 0.5), beta = exec::make_scalar<Scalar>(-0.75, 0.25);
  Distribution L;
  LocalStorage<Scalar> A, B, C0, C;  // C0: what compute() starts from
  exec::InitialC init = exec::InitialC::random;

  // block > 0: block-cyclic; block == 0: aligned to a k-split among the ranks (tiles of 8).
  explicit Problem(std::int64_t block, bool nan_c0 = false) {
    const int me = world().rank(), P = world().size();
    if (block > 0) {
      L = block_cyclic_distribution(m, n, k, block, near_square_grid(P));
    } else {
      const auto o = natural_order(m, n, k, 8);
      auto zones = std::vector<partition::TileZone>(std::size_t(P));
      const auto cuts = weighted_cuts(o.k.size(), std::vector<double>(std::size_t(P), 1.0));
      for (int r = 0; r < P; ++r)
        if (cuts[std::size_t(r)] < cuts[std::size_t(r) + 1])
          zones[std::size_t(r)].push_back(partition::TileBox{
              {0, 0, cuts[std::size_t(r)]}, {o.i.size(), o.j.size(), cuts[std::size_t(r) + 1]}});
      L = aligned_distribution(zones, o, m, n, k, 8);
    }
    A = local_storage<Scalar>(L.a, me, "A");
    B = local_storage<Scalar>(L.b, me, "B");
    C0 = local_storage<Scalar>(L.c, me, "C0");
    C = local_storage<Scalar>(L.c, me, "C");
    fill_local(A, L.a, me, seed, exec::MatrixId::A);
    fill_local(B, L.b, me, seed, exec::MatrixId::B);
    if (nan_c0) {
      init = exec::InitialC::nan;
      Kokkos::deep_copy(C0, exec::quiet_nan<Scalar>());
    } else
      fill_local(C0, L.c, me, seed, exec::MatrixId::C);
  }

  // This rank's elements of the exact product, unit by unit, from generated rows of A and
  // columns of B.
  void compute() {
    const int me = world().rank();
    L.c.for_each_owned(me, [&](const exec::Rect& u) {
      exec::HostMatrix<Scalar> Ar("Ar", u.rows(), k), Bc("Bc", k, u.cols()),
          R("R", u.rows(), u.cols());
      exec::fill_random(Ar, seed, exec::MatrixId::A, u.i0, 0);
      exec::fill_random(Bc, seed, exec::MatrixId::B, 0, u.j0);
      const std::int64_t off = L.c.offset(u.i0, u.j0), ld = L.c.ld(u.i0, u.j0);
      if (beta != Scalar(0))
        for (std::int64_t j = 0; j < u.cols(); ++j)
          for (std::int64_t i = 0; i < u.rows(); ++i) R(i, j) = C0(std::size_t(off + i + j * ld));
      kokkos_ext::gemm(Kokkos::DefaultHostExecutionSpace(), alpha, Ar, Bc, beta, R);
      Kokkos::fence();
      for (std::int64_t j = 0; j < u.cols(); ++j)
        for (std::int64_t i = 0; i < u.rows(); ++i) C(std::size_t(off + i + j * ld)) = R(i, j);
    });
  }

  // The checks regenerate C0 from the seed, as a run that keeps no copy does.
  DistValidation check(std::int64_t full_check_max) {
    const InitialCElements<Scalar> c0{seed, init};
    return validate_distributed(world(), L, A, B, c0, C, alpha, beta, seed, full_check_max,
                                world().size() + 4);
  }
};

template <class Scalar>
class DistValidate : public ::testing::Test {};
using Scalars = ::testing::Types<double, float, Kokkos::complex<double>, Kokkos::complex<float>>;
TYPED_TEST_SUITE(DistValidate, Scalars);

TYPED_TEST(DistValidate, CorrectProductPasses) {
  for (std::int64_t block : {4, 16, 100, 0}) {  // 0: aligned tile owners
    Problem<TypeParam> p(block);
    p.compute();
    const auto v = p.check(1 << 20);
    EXPECT_TRUE(v.passed) << "block " << block << ": error " << v.error << " bound " << v.bound;
    EXPECT_TRUE(v.full_performed);
    EXPECT_TRUE(v.full_passed) << v.full_error << " > " << v.full_bound;
    EXPECT_LE(v.error, v.bound);
  }
}

TYPED_TEST(DistValidate, OneWrongElementOnTheLastRankFailsEverywhere) {
  Problem<TypeParam> p(8);
  p.compute();
  const int last = world().size() - 1;
  if (world().rank() == last && p.C.extent(0) > 0) {
    // A relative error of 1e-3 in one element: far above rounding, far below a gross bug.
    // (In the imaginary part for a complex type: the checks must see it there too.)
    auto& x = p.C(p.C.extent(0) / 2);
    // A complex row's bound is about 4 times a real one's (the complex multiplication's rounding
    // bound, and moduli near sqrt(2) larger): the change grows alike, still far from a gross bug.
    const double change = (exec::is_complex<TypeParam> ? 1e-2 : 1e-3) * (exec::magnitude(x) + 1);
    x += exec::make_scalar<TypeParam>(exec::is_complex<TypeParam> ? 0 : change, change);
  }
  // Randomized check alone (no full check): it must catch it by itself.
  const auto v = p.check(0);
  EXPECT_FALSE(v.full_performed);
  EXPECT_FALSE(v.passed);
  EXPECT_GT(v.error, v.bound);
  // The normwise full check is blunter (a float bound of ~eps k ||A|| ||B|| can hide 1e-3):
  // give it an error of order one.
  if (world().rank() == last && p.C.extent(0) > 0) p.C(0) += TypeParam(1);
  const auto full = p.check(1 << 20);
  EXPECT_FALSE(full.full_passed);
}

// The checks regenerate C0 from the seed: the correct product passes every check, and a product
// that started from another C0 fails them.
TYPED_TEST(DistValidate, RegeneratedInitialCChecksAsTheStoredOne) {
  for (std::int64_t block : {16, 0}) {
    Problem<TypeParam> p(block);
    p.compute();
    const auto v = p.check(1 << 20);
    EXPECT_TRUE(v.passed && v.full_passed)
        << "block " << block << ": " << v.error << " > " << v.bound;
    fill_local(p.C0, p.L.c, world().rank(), p.seed + 1, exec::MatrixId::C);
    p.compute();
    const auto w = p.check(1 << 20);
    EXPECT_FALSE(w.passed);
    EXPECT_FALSE(w.full_passed);
  }
}

TYPED_TEST(DistValidate, NaNFails) {
  Problem<TypeParam> p(16);
  p.compute();
  if (world().rank() == 0 && p.C.extent(0) > 0) p.C(0) = exec::quiet_nan<TypeParam>();
  EXPECT_FALSE(p.check(0).passed);
}

TYPED_TEST(DistValidate, BetaZeroIgnoresANaNStartingC) {
  Problem<TypeParam> p(8, /*nan_c0=*/true);
  p.beta = TypeParam(0);
  p.compute();
  const auto v = p.check(1 << 20);
  EXPECT_TRUE(v.passed) << v.error << " " << v.bound << " full " << v.full_error << " "
                        << v.full_bound;
}

}  // namespace
}  // namespace cuboid::mpi
