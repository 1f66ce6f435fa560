// The componentwise check (exec/validate.hpp) has teeth and no false alarms: products computed
// by the engine in every way it can (host and staged processors, k split, beta 0/1/other,
// float and double) pass; a product with one tile task left out by the plan, or one task done
// twice, fails -- in float at a size where the old normwise bound let hundreds of lost tasks
// pass.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>

#include "exec/engine.hpp"
#include "exec/fault.hpp"
#include "exec/validate.hpp"
#include "kokkos_ext/compat.hpp"
#include "partition/strategy.hpp"
#include "platform/processor.hpp"

namespace cuboid::exec {
namespace {

using host = Kokkos::DefaultHostExecutionSpace;

template <class Scalar>
struct Product {
  std::int64_t m, n, k, tile;
  Scalar alpha, beta;
  HostMatrix<Scalar> A, B, C0, C;
  Product(std::int64_t m_, std::int64_t n_, std::int64_t k_, std::int64_t tile_, double a, double b)
      : m(m_),
        n(n_),
        k(k_),
        tile(tile_),
        // Complex types get an imaginary part too (none where the real part is 0 or 1, so that
        // beta = 0 and beta = 1 keep their meaning).
        alpha(make_scalar<Scalar>(a, a == 0 || a == 1 ? 0 : -0.5 * a)),
        beta(make_scalar<Scalar>(b, b == 0 || b == 1 ? 0 : 0.25 * b)),
        A("A", m_, k_),
        B("B", k_, n_),
        C0("C0", m_, n_),
        C("C", m_, n_) {
    fill_random(A, 5, MatrixId::A);
    fill_random(B, 5, MatrixId::B);
    fill_random(C0, 5, MatrixId::C);
  }

  // Runs the product on `names` with `alg` (fault applied to the plan when asked); returns the
  // task left out, if any.
  std::optional<DroppedTask> run(const std::vector<std::string>& names, partition::Algorithm alg,
                                 bool drop, std::int64_t budget = 0) {
    const auto specs = platform::resolve_processors(names, "test");
    std::vector<std::unique_ptr<Worker<Scalar>>> workers;
    PlanOptions o;
    for (const auto& s : specs) {
      workers.push_back(make_worker<Scalar>(s));
      o.budget_elements.push_back(s.kind == platform::ProcessorKind::host ? 0 : budget);
      o.min_panels.push_back(s.kind == platform::ProcessorKind::host ? 1 : 2);
    }
    o.beta_is_one = beta == Scalar(1), o.beta_is_zero = beta == Scalar(0);
    const partition::TileExtent t{(m + tile - 1) / tile, (n + tile - 1) / tile,
                                  (k + tile - 1) / tile};
    std::vector<double> w(specs.size(), 1.0);
    w[0] = 2.0;
    auto plan = make_plan(partition::partition_tiles(alg, partition::Discretization::precise, w, t),
                          m, n, k, tile, o);
    std::optional<DroppedTask> task;
    if (drop) task = drop_one_task(plan);
    Engine<Scalar> engine(std::move(workers));
    Kokkos::deep_copy(C, C0);
    engine.run(plan, A, B, C, alpha, beta);
    return task;
  }
  Validation check(int procs) { return validate(A, B, C0, C, alpha, beta, procs); }
};

template <class Scalar>
class Componentwise : public ::testing::Test {};
using Scalars = ::testing::Types<double, float, Kokkos::complex<double>, Kokkos::complex<float>>;
TYPED_TEST_SUITE(Componentwise, Scalars);

TYPED_TEST(Componentwise, EveryWayTheEngineComputesPasses) {
  for (double beta : {0.0, 1.0, -0.75})
    for (auto alg : {partition::Algorithm::nrrp3d, partition::Algorithm::slab})
      for (std::int64_t budget : {0, 3000}) {
        Product<TypeParam> p(97, 83, 301, 16, 1.5, beta);
        const std::vector<std::string> names{"host", "staged", "staged:1"};
        p.run(names, alg, false, budget);
        const auto v = p.check(int(names.size()));
        EXPECT_TRUE(v.passed) << "beta " << beta << " budget " << budget << ": " << v.failed
                              << " elements, worst " << v.error << " > " << v.bound;
        EXPECT_LE(v.error, v.bound);
        EXPECT_EQ(v.failed, 0);
      }
}

TYPED_TEST(Componentwise, ALostTileTaskFailsOnEveryProcessorKind) {
  for (const auto& names :
       {std::vector<std::string>{"host"}, std::vector<std::string>{"staged", "host"},
        std::vector<std::string>{"staged", "staged:1"}}) {
    Product<TypeParam> p(130, 70, 200, 32, 1.0, 0.5);
    const auto task = p.run(names, partition::Algorithm::nrrp3d, true, 5000);
    ASSERT_TRUE(task);
    const auto v = p.check(int(names.size()));
    EXPECT_FALSE(v.passed) << names[0];
    // Exactly the dropped task's elements are wrong, and not all by luck of rounding.
    EXPECT_GT(v.failed, task->c.rows() * task->c.cols() / 2) << names[0];
    EXPECT_LE(v.failed, task->c.rows() * task->c.cols());
    EXPECT_GE(v.worst_i, task->c.i0);
    EXPECT_LT(v.worst_i, task->c.i1);
  }
}

TYPED_TEST(Componentwise, NanInC0IsIgnoredWhenBetaIsZeroAndCaughtOtherwise) {
  Product<TypeParam> p(40, 30, 50, 8, 1.0, 0.0);
  Kokkos::deep_copy(p.C0, quiet_nan<TypeParam>());
  p.run({"host", "staged"}, partition::Algorithm::nrrp3d, false);
  EXPECT_TRUE(p.check(2).passed);
  p.C(3, 4) = make_scalar<TypeParam>(std::numeric_limits<double>::infinity(), 0);
  const auto v = p.check(2);
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.worst_i, 3);
  EXPECT_EQ(v.worst_j, 4);
}

// In a complex type the check tells op 'C' from 'T': a product computed with A^T where A^H was
// asked fails, and one element changed by twice its bound (in its imaginary part) fails alone.
template <class Scalar>
void conjugation_and_one_element() {
  const std::int64_t m = 60, n = 40, k = 70;
  HostMatrix<Scalar> A("A", k, m), B("B", k, n), C0("C0", m, n), C("C", m, n);
  fill_random(A, 9, MatrixId::A);
  fill_random(B, 9, MatrixId::B);
  fill_random(C0, 9, MatrixId::C);
  const Scalar alpha = make_scalar<Scalar>(0.75, 0.5), beta = make_scalar<Scalar>(-1, 0.25);
  Kokkos::deep_copy(C, C0);
  kokkos_ext::gemm(host(), kokkos_ext::Ops{'T', 'N'}, alpha, A, B, beta, C);
  host().fence();
  EXPECT_TRUE(validate(A, B, C0, C, alpha, beta, 1, kokkos_ext::Ops{'T', 'N'}).passed);
  const auto wrong_op = validate(A, B, C0, C, alpha, beta, 1, kokkos_ext::Ops{'C', 'N'});
  EXPECT_FALSE(wrong_op.passed);
  EXPECT_GT(wrong_op.failed, m * n / 2);
  const auto ok = validate(A, B, C0, C, alpha, beta, 1, kokkos_ext::Ops{'T', 'N'});
  C(7, 9) += make_scalar<Scalar>(0, 2 * ok.bound);
  const auto one = validate(A, B, C0, C, alpha, beta, 1, kokkos_ext::Ops{'T', 'N'});
  EXPECT_FALSE(one.passed);
  EXPECT_EQ(one.failed, 1);
  EXPECT_EQ(one.worst_i, 7);
  EXPECT_EQ(one.worst_j, 9);
}

TEST(ComponentwiseComplex, ConjugationAndOneElementAreSeen) {
  conjugation_and_one_element<Kokkos::complex<double>>();
  conjugation_and_one_element<Kokkos::complex<float>>();
}

// One lost or doubled 256^3 tile task must fail the check in float at m = n = k = 8192; here at
// a size a unit test affords. The bound of an element depends on k only (about k^2 u / 2 for
// data in [-1, 1): 2 at k = 8192 in float), so m = n = 1024 with k = 8192 and tiles of 256 is
// the m = n = k = 8192 case for each element checked; the normwise bound (about 2.7e3 here,
// 2.2e4 there) is above the change a lost task makes (about 1.4e3).
TEST(ComponentwiseFloat, OneLostOrDoubledTileTaskOf256CubedFailsAtK8192) {
  const std::int64_t s = 1024, k = 8192, b = 256;
  Product<float> p(s, s, k, b, 1.0, 0.0);
  p.run({"host"}, partition::Algorithm::nrrp3d, false);
  const auto ok = p.check(1);
  ASSERT_TRUE(ok.passed) << ok.error << " > " << ok.bound;
  // The old normwise check, for comparison: ||C - C_ref||_F against its bound.
  const double normwise = kValidationConstant * std::numeric_limits<float>::epsilon() *
                          (double(k) + 3) * frobenius_norm(p.A) * frobenius_norm(p.B);
  // One tile task (rows and columns [256, 512), k [1024, 1280)) undone, then done twice.
  auto task = [&](float sign) {
    auto c = Kokkos::subview(p.C, std::make_pair(b, 2 * b), std::make_pair(b, 2 * b));
    auto a = Kokkos::subview(p.A, std::make_pair(b, 2 * b), std::make_pair(4 * b, 5 * b));
    auto bb = Kokkos::subview(p.B, std::make_pair(4 * b, 5 * b), std::make_pair(b, 2 * b));
    kokkos_ext::gemm(host(), sign, a, bb, 1.0f, c);
    host().fence();
  };
  HostMatrix<float> saved("saved", s, s);
  Kokkos::deep_copy(saved, p.C);
  task(-1.0f);
  // The change it makes, normwise: far below the normwise bound, so that check passed it.
  double change = 0;
  for (std::int64_t j = b; j < 2 * b; ++j)
    for (std::int64_t i = b; i < 2 * b; ++i)
      change += std::pow(double(p.C(i, j)) - double(saved(i, j)), 2);
  change = std::sqrt(change);
  EXPECT_LT(change, normwise);
  const auto lost = p.check(1);
  EXPECT_FALSE(lost.passed);
  EXPECT_GT(lost.failed, b * b / 2) << "bound " << lost.bound;
  task(2.0f);  // now done twice
  const auto doubled = p.check(1);
  EXPECT_FALSE(doubled.passed);
  EXPECT_GT(doubled.failed, b * b / 2);
  std::printf(
      "normwise bound %.3e, change of one task %.3e; componentwise: correct product worst error "
      "%.3e vs bound %.3e; lost task %lld of %lld elements fail; doubled %lld\n",
      normwise, change, ok.error, ok.bound, (long long)lost.failed, (long long)(b * b),
      (long long)doubled.failed);
}

}  // namespace
}  // namespace cuboid::exec
