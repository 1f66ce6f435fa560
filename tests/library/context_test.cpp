// The library's contract: correct products through the C++ and C interfaces (sub-matrices with
// leading dimensions, BLAS's rules for alpha, beta, k, m and n), errors as exceptions and status
// codes, bitwise-identical results with fixed speeds, and two contexts used from two threads.
#include <gtest/gtest.h>

#include <cuboid/cuboid.h>
#include <Kokkos_Core.hpp>

#include <cmath>
#include <complex>
#include <cstring>
#include <cuboid/cuboid.hpp>
#include <limits>
#include <random>
#include <thread>
#include <vector>

using cuboid::Op;

namespace {

// C <- alpha op(A) op(B) + beta C on sub-matrices: A stored (op(A) = A) m x k or (transposed)
// k x m, B k x n or n x k, each with `pad` rows more than it uses.
struct Problem {
  std::int64_t m, n, k, lda, ldb, ldc;
  Op op_a, op_b;
  std::vector<double> A, B, C;
  Problem(std::int64_t m_, std::int64_t n_, std::int64_t k_, std::int64_t pad, unsigned seed,
          Op oa = Op::none, Op ob = Op::none)
      : m(m_),
        n(n_),
        k(k_),
        lda((oa == Op::none ? m_ : k_) + pad),
        ldb((ob == Op::none ? k_ : n_) + pad),
        ldc(m_ + pad),
        op_a(oa),
        op_b(ob) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    A.resize(std::size_t(lda * (oa == Op::none ? k : m)));
    B.resize(std::size_t(ldb * (ob == Op::none ? n : k)));
    C.resize(std::size_t(ldc * n));
    for (auto* v : {&A, &B, &C})
      for (auto& x : *v) x = u(rng);
  }
  double a(std::int64_t i, std::int64_t l) const {
    return op_a == Op::none ? A[std::size_t(i + l * lda)] : A[std::size_t(l + i * lda)];
  }
  double b(std::int64_t l, std::int64_t j) const {
    return op_b == Op::none ? B[std::size_t(l + j * ldb)] : B[std::size_t(j + l * ldb)];
  }
};

// The largest |C - (alpha op(A) op(B) + beta C0)| over the sub-matrix, by a long-double triple
// loop, and whether every element outside the sub-matrix is still what it was.
double error_of(const Problem& p, const std::vector<double>& C0, const std::vector<double>& C,
                double alpha, double beta, bool& outside_kept) {
  double worst = 0;
  outside_kept = true;
  for (std::int64_t j = 0; j < p.n; ++j)
    for (std::int64_t i = 0; i < p.ldc; ++i) {
      const std::size_t at = std::size_t(i + j * p.ldc);
      if (i >= p.m) {
        outside_kept = outside_kept && std::memcmp(&C[at], &C0[at], sizeof(double)) == 0;
        continue;
      }
      long double acc = 0;
      for (std::int64_t l = 0; l < p.k; ++l) acc += (long double)p.a(i, l) * p.b(l, j);
      const double want = double(alpha * acc) + (beta == 0 ? 0.0 : beta * C0[at]);
      worst = std::max(worst, std::abs(C[at] - want));
    }
  return worst;
}

cuboid::ContextOptions two_processors() {
  cuboid::ContextOptions o;
  o.processors = {"host", "staged"};
  o.speeds = {1.0, 1.0};
  o.direct_below_flops = 0;  // always partition
  o.tile = 32;
  return o;
}

TEST(Context, MultipliesSubMatricesThroughThePartition) {
  cuboid::Context ctx(two_processors());
  for (auto [m, n, k, pad] :
       {std::array<std::int64_t, 4>{150, 130, 170, 7}, {64, 64, 64, 0}, {200, 33, 90, 1}}) {
    Problem p(m, n, k, pad, unsigned(m));
    const auto C0 = p.C;
    ctx.gemm(Op::none, Op::none, m, n, k, 1.5, p.A.data(), p.lda, p.B.data(), p.ldb, -0.5,
             p.C.data(), p.ldc);
    EXPECT_FALSE(ctx.last_call().direct);
    bool kept = false;
    EXPECT_LT(error_of(p, C0, p.C, 1.5, -0.5, kept), 1e-12 * double(k));
    EXPECT_TRUE(kept) << "an element outside the sub-matrix was written";
  }
}

// Copying straight from and to the caller's (padded) arrays, or through the staging ring: the
// same product either way, on the staged and the emulated processor.
TEST(Context, RegistrationOnOrOffGivesTheProduct) {
  for (const char* copying : {"staged", "emulated:0"})
    for (const bool registered : {true, false}) {
      SCOPED_TRACE(std::string(copying) + (registered ? " registered" : " staging ring"));
      cuboid::ContextOptions o = two_processors();
      o.processors = {"host", copying};
      o.register_host = registered;
      cuboid::Context ctx(o);
      Problem p(150, 130, 170, 7, 5u, Op::transpose);
      const auto C0 = p.C;
      ctx.gemm(Op::transpose, Op::none, 150, 130, 170, 1.5, p.A.data(), p.lda, p.B.data(), p.ldb,
               -0.5, p.C.data(), p.ldc);
      bool kept = false;
      EXPECT_LT(error_of(p, C0, p.C, 1.5, -0.5, kept), 1e-12 * 170);
      EXPECT_TRUE(kept);
    }
}

// Every op pair, through the partition and the direct path, on padded sub-matrices.
TEST(Context, EveryOpPairOnSubMatrices) {
  cuboid::ContextOptions partitioned = two_processors(), direct = two_processors();
  direct.direct_below_flops = 1e18;
  cuboid::Context through_partition(partitioned), through_direct(direct);
  const Op ops[3] = {Op::none, Op::transpose, Op::conjugate_transpose};
  unsigned seed = 40;
  for (Op oa : ops)
    for (Op ob : ops)
      for (cuboid::Context* ctx : {&through_partition, &through_direct}) {
        Problem p(150, 130, 170, 5, ++seed, oa, ob);
        const auto C0 = p.C;
        ctx->gemm(oa, ob, p.m, p.n, p.k, -0.75, p.A.data(), p.lda, p.B.data(), p.ldb, 0.5,
                  p.C.data(), p.ldc);
        EXPECT_EQ(ctx->last_call().direct, ctx == &through_direct);
        bool kept = false;
        EXPECT_LT(error_of(p, C0, p.C, -0.75, 0.5, kept), 1e-12 * double(p.k))
            << char(oa) << char(ob) << (ctx == &through_direct ? " direct" : " partitioned");
        EXPECT_TRUE(kept) << "an element outside the sub-matrix was written";
      }
}

// Complex products: sub-matrices padded in their leading dimensions, held in arrays of std::complex
// that sit either at an address aligned for Kokkos::complex or half an element off (as a Fortran
// COMPLEX*16 array may), every op pair ('C' conjugates), complex alpha and beta, through the
// partition and the direct path; and BLAS's rules (beta 0 with NaN in C, alpha 0, k 0, m 0).
template <class T>
struct ComplexProblem {
  using Z = std::complex<T>;
  std::int64_t m, n, k, lda, ldb, ldc;
  Op op_a, op_b;
  // The arrays' storage: reals, so that an array can start one real past an aligned address.
  std::vector<T> a_store, b_store, c_store;
  Z *A, *B, *C;
  ComplexProblem(std::int64_t m_, std::int64_t n_, std::int64_t k_, std::int64_t pad, unsigned seed,
                 Op oa, Op ob, bool misaligned)
      : m(m_),
        n(n_),
        k(k_),
        lda((oa == Op::none ? m_ : k_) + pad),
        ldb((ob == Op::none ? k_ : n_) + pad),
        ldc(m_ + pad),
        op_a(oa),
        op_b(ob) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    const std::size_t off = misaligned ? 1 : 0;
    auto make = [&](std::vector<T>& store, std::size_t elements) {
      store.resize(2 * elements + 2);
      for (auto& x : store) x = T(u(rng));
      return reinterpret_cast<Z*>(store.data() + off);
    };
    A = make(a_store, std::size_t(lda * (oa == Op::none ? k : m)));
    B = make(b_store, std::size_t(ldb * (ob == Op::none ? n : k)));
    C = make(c_store, std::size_t(ldc * n));
  }
  static std::complex<long double> wide(Z x) { return {x.real(), x.imag()}; }
  std::complex<long double> op(Op o, Z x) const {
    return o == Op::conjugate_transpose ? std::conj(wide(x)) : wide(x);
  }
  std::complex<long double> a(std::int64_t i, std::int64_t l) const {
    return op(op_a, op_a == Op::none ? A[i + l * lda] : A[l + i * lda]);
  }
  std::complex<long double> b(std::int64_t l, std::int64_t j) const {
    return op(op_b, op_b == Op::none ? B[l + j * ldb] : B[j + l * ldb]);
  }
  std::vector<Z> c_copy() const { return std::vector<Z>(C, C + ldc * n); }
  // Largest |C - (alpha op(A) op(B) + beta C0)|, and whether the padding rows kept their bits.
  double error(const std::vector<Z>& C0, Z alpha, Z beta, bool& kept) const {
    double worst = 0;
    kept = true;
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < ldc; ++i) {
        const std::int64_t at = i + j * ldc;
        if (i >= m) {
          kept = kept && std::memcmp(&C[at], &C0[std::size_t(at)], sizeof(Z)) == 0;
          continue;
        }
        std::complex<long double> acc = 0;
        for (std::int64_t l = 0; l < k; ++l) acc += a(i, l) * b(l, j);
        const std::complex<long double> want =
            wide(alpha) * acc +
            (beta == Z(0) ? std::complex<long double>(0) : wide(beta) * wide(C0[std::size_t(at)]));
        worst = std::max(worst, double(std::abs(wide(C[at]) - want)));
      }
    return worst;
  }
};

template <class T>
void complex_every_op_pair() {
  using Z = std::complex<T>;
  cuboid::ContextOptions partitioned = two_processors(), direct = two_processors();
  direct.direct_below_flops = 1e18;
  cuboid::Context through_partition(partitioned), through_direct(direct);
  const Op ops[3] = {Op::none, Op::transpose, Op::conjugate_transpose};
  const Z alpha(-0.75, 0.5), beta(0.5, -1.25);
  const double tolerance = 64 * 170 * double(std::numeric_limits<T>::epsilon());
  unsigned seed = 70;
  for (bool misaligned : {false, true})
    for (Op oa : ops)
      for (Op ob : ops)
        for (cuboid::Context* ctx : {&through_partition, &through_direct}) {
          ComplexProblem<T> p(150, 130, 170, 5, ++seed, oa, ob, misaligned);
          const auto C0 = p.c_copy();
          ctx->gemm(oa, ob, p.m, p.n, p.k, alpha, p.A, p.lda, p.B, p.ldb, beta, p.C, p.ldc);
          EXPECT_EQ(ctx->last_call().direct, ctx == &through_direct);
          bool kept = false;
          EXPECT_LT(p.error(C0, alpha, beta, kept), tolerance)
              << char(oa) << char(ob) << (ctx == &through_direct ? " direct" : " partitioned")
              << (misaligned ? " misaligned" : "");
          EXPECT_TRUE(kept) << "an element outside the sub-matrix was written";
        }
}

TEST(Context, ComplexEveryOpPairOnSubMatricesAlignedOrNot) {
  complex_every_op_pair<double>();
  complex_every_op_pair<float>();
}

TEST(Context, ComplexFollowsBlasRules) {
  using Z = std::complex<double>;
  cuboid::Context ctx(two_processors());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // beta = 0: C is written, never read (NaN there stays out).
  ComplexProblem<double> p(90, 70, 110, 3, 5, Op::conjugate_transpose, Op::none, true);
  for (std::int64_t j = 0; j < p.n; ++j)
    for (std::int64_t i = 0; i < p.m; ++i) p.C[i + j * p.ldc] = Z(nan, nan);
  const auto C0 = p.c_copy();
  ctx.gemm(p.op_a, p.op_b, p.m, p.n, p.k, Z(1, 1), p.A, p.lda, p.B, p.ldb, Z(0), p.C, p.ldc);
  bool kept = false;
  EXPECT_LT(p.error(C0, Z(1, 1), Z(0), kept), 1e-12 * 110);
  EXPECT_TRUE(kept);
  // alpha = 0 and k = 0: C <- beta C, with A and B never read (null here).
  for (std::int64_t k : {std::int64_t(0), std::int64_t(20)}) {
    ComplexProblem<double> q(40, 30, 20, 2, 6, Op::none, Op::none, false);
    const auto Cq = q.c_copy();
    const Z alpha = k == 0 ? Z(1, 0) : Z(0);
    ctx.gemm(Op::none, Op::none, q.m, q.n, k, alpha, nullptr, q.lda, nullptr, q.ldb, Z(0.5, 2), q.C,
             q.ldc);
    for (std::int64_t j = 0; j < q.n; ++j)
      for (std::int64_t i = 0; i < q.m; ++i)
        EXPECT_EQ(q.C[i + j * q.ldc], Z(0.5, 2) * Cq[std::size_t(i + j * q.ldc)]);
  }
  // m = 0: nothing happens, whatever the pointers.
  EXPECT_NO_THROW(ctx.gemm(Op::none, Op::none, 0, 5, 5, Z(1), nullptr, 1, nullptr, 5, Z(0),
                           static_cast<Z*>(nullptr), 1));
}

// A budget not above a copying processor's staging ring is refused, naming the context's option.
TEST(Context, ABudgetBelowTheStagingRingIsRefusedByItsOptionName) {
  cuboid::ContextOptions o = two_processors();
  o.memory_budget_mib = 4;
  cuboid::Context ctx(o);
  std::vector<double> A(64 * 64, 1.0), B(64 * 64, 1.0), C(64 * 64, 0.0);
  try {
    ctx.gemm(Op::none, Op::none, 64, 64, 64, 1.0, A.data(), 64, B.data(), 64, 0.0, C.data(), 64);
    ADD_FAILURE() << "no error";
  } catch (const cuboid::KeyedError& e) {
    EXPECT_EQ(e.key, "memory_budget_mib");
    EXPECT_EQ(std::string(e.what()).rfind("memory_budget_mib: 4.00 MiB is not above the staging "
                                          "ring of staged",
                                          0),
              0u)
        << e.what();
  }
}

TEST(Context, SmallProductsTakeTheDirectPath) {
  cuboid::ContextOptions o = two_processors();
  o.direct_below_flops = -1;
  cuboid::Context ctx(o);
  Problem p(64, 64, 64, 3, 5);
  const auto C0 = p.C;
  ctx.gemm(Op::none, Op::none, 64, 64, 64, 1.0, p.A.data(), p.lda, p.B.data(), p.ldb, 1.0,
           p.C.data(), p.ldc);
  EXPECT_TRUE(ctx.last_call().direct);
  bool kept = false;
  EXPECT_LT(error_of(p, C0, p.C, 1.0, 1.0, kept), 1e-12);
  EXPECT_TRUE(kept);
}

// With measured speeds the first two calls of a shape time the direct path and the partition;
// later calls of the shape take the faster one, and every call is right.
TEST(Context, MeasuredSpeedsChooseThePathPerShape) {
  cuboid::ContextOptions o;
  o.processors = {"host", "staged"};
  cuboid::Context ctx(o);
  Problem p(256, 200, 230, 1, 21);
  const auto C0 = p.C;
  std::vector<bool> direct, trial;
  for (int call = 0; call < 4; ++call) {
    p.C = C0;
    ctx.gemm(Op::none, Op::none, p.m, p.n, p.k, 1.0, p.A.data(), p.lda, p.B.data(), p.ldb, 0.5,
             p.C.data(), p.ldc);
    direct.push_back(ctx.last_call().direct);
    trial.push_back(ctx.last_call().trial);
    bool kept = false;
    EXPECT_LT(error_of(p, C0, p.C, 1.0, 0.5, kept), 1e-12 * double(p.k)) << "call " << call;
    EXPECT_TRUE(kept);
  }
  EXPECT_TRUE(direct[0] && trial[0]);
  EXPECT_TRUE(!direct[1] && trial[1]);
  EXPECT_FALSE(trial[2] || trial[3]);
  EXPECT_EQ(direct[2], direct[3]);
  // Tiny products never try the partition.
  Problem q(40, 40, 40, 0, 22);
  ctx.gemm(Op::none, Op::none, q.m, q.n, q.k, 1.0, q.A.data(), q.lda, q.B.data(), q.ldb, 0.0,
           q.C.data(), q.ldc);
  EXPECT_TRUE(ctx.last_call().direct);
  EXPECT_FALSE(ctx.last_call().trial);
}

TEST(Context, FollowsBlasRulesForAlphaBetaAndEmptyDimensions) {
  cuboid::Context ctx(two_processors());
  Problem p(96, 80, 64, 2, 9);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // beta = 0 never reads C: NaN in C must not reach the product.
  std::fill(p.C.begin(), p.C.end(), nan);
  const auto C0 = p.C;
  ctx.gemm(Op::none, Op::none, p.m, p.n, p.k, 2.0, p.A.data(), p.lda, p.B.data(), p.ldb, 0.0,
           p.C.data(), p.ldc);
  bool kept = false;
  EXPECT_LT(error_of(p, C0, p.C, 2.0, 0.0, kept), 1e-12 * 64);
  EXPECT_TRUE(kept);
  // alpha = 0 does not touch A or B (null pointers accepted) and scales C by beta.
  Problem q(40, 30, 20, 1, 3);
  const auto Q0 = q.C;
  ctx.gemm(Op::none, Op::none, q.m, q.n, q.k, 0.0, nullptr, q.lda, nullptr, q.ldb, 3.0, q.C.data(),
           q.ldc);
  for (std::int64_t j = 0; j < q.n; ++j)
    for (std::int64_t i = 0; i < q.m; ++i)
      EXPECT_EQ(q.C[std::size_t(i + j * q.ldc)], 3.0 * Q0[std::size_t(i + j * q.ldc)]);
  // k = 0: C <- beta C; m = 0 or n = 0: nothing at all, C may be null.
  ctx.gemm(Op::none, Op::none, q.m, q.n, 0, 1.0, nullptr, q.lda, nullptr, 1, 0.0, q.C.data(),
           q.ldc);
  EXPECT_EQ(q.C[0], 0.0);
  EXPECT_NO_THROW(
      ctx.gemm(Op::none, Op::none, 0, 5, 5, 1.0, nullptr, 1, nullptr, 5, 1.0, nullptr, 1));
}

TEST(Context, RefusesBadArgumentsNamingThem) {
  cuboid::Context ctx(two_processors());
  std::vector<double> x(100, 1.0);
  auto key_of = [&](auto&& call) -> std::string {
    try {
      call();
    } catch (const cuboid::KeyedError& e) {
      return e.key;
    }
    return "<none>";
  };
  EXPECT_EQ(key_of([&] {
              ctx.gemm(Op::none, Op::none, 10, 5, 5, 1.0, x.data(), 9, x.data(), 5, 0.0, x.data(),
                       10);
            }),
            "lda");
  EXPECT_EQ(key_of([&] {
              ctx.gemm(Op::none, Op::none, -1, 5, 5, 1.0, x.data(), 1, x.data(), 5, 0.0, x.data(),
                       1);
            }),
            "m");
  EXPECT_EQ(key_of([&] {
              ctx.gemm(Op::transpose, Op::none, 10, 5, 5, 1.0, x.data(), 4, x.data(), 5, 0.0,
                       x.data(), 10);
            }),
            "lda");  // A^T is stored 5 x 10: lda counts its 5 rows
  EXPECT_EQ(key_of([&] {
              ctx.gemm(Op::none, Op::transpose, 5, 10, 5, 1.0, x.data(), 5, x.data(), 9, 0.0,
                       x.data(), 5);
            }),
            "ldb");  // B^T is stored 10 x 5
  EXPECT_EQ(key_of([] {
              cuboid::ContextOptions o;
              o.algorithm = "nope";
              cuboid::Context bad(o);
            }),
            "algorithm");
  EXPECT_THROW(
      {
        cuboid::ContextOptions o;
        o.processors = {"gpu:7"};
        cuboid::Context bad(o);
      },
      cuboid::KeyedError);
}

TEST(Context, GivenSpeedsRepeatBitForBit) {
  Problem p(300, 260, 280, 0, 11);
  std::vector<double> first;
  for (int r = 0; r < 10; ++r) {
    cuboid::ContextOptions o = two_processors();
    o.reproducible = true;
    o.speeds = {1.0, 3.0};
    cuboid::Context ctx(o);
    auto C = p.C;
    ctx.gemm(Op::none, Op::none, p.m, p.n, p.k, 1.0, p.A.data(), p.lda, p.B.data(), p.ldb, 1.0,
             C.data(), p.ldc);
    if (r == 0)
      first = C;
    else
      EXPECT_EQ(std::memcmp(C.data(), first.data(), C.size() * sizeof(double)), 0) << "run " << r;
  }
}

// Kokkos started from a worker thread would leave that thread's pool behind at exit: the first
// context refuses to start it there. Each test runs in a process of its own under ctest; run
// after another test in one process, Kokkos is already up and there is nothing to refuse.
TEST(Context, FirstContextOffTheMainThreadIsRefused) {
  if (Kokkos::is_initialized()) GTEST_SKIP() << "Kokkos is already initialised in this process";
  std::string message = "<no error>";
  std::thread t([&] {
    try {
      cuboid::Context ctx(two_processors());
    } catch (const cuboid::Error& e) {
      message = e.what();
    }
  });
  t.join();
  EXPECT_NE(message.find("main thread"), std::string::npos) << message;
  EXPECT_FALSE(Kokkos::is_initialized());
}

// Two contexts, each made and driven by its own thread at the same time, both correct. Kokkos
// is initialised on the main thread (by a first context there), as the contract asks: Kokkos
// finalises the thread pool of the thread that initialised it.
TEST(Context, TwoContextsFromTwoThreads) {
  const cuboid::Context main_thread(two_processors());
  std::vector<double> errors(2, 1.0);
  std::vector<int> kept(2, 0);
  auto work = [&](int t) {
    cuboid::ContextOptions o;
    o.processors = {t == 0 ? "host" : "staged"};
    o.speeds = {1.0};
    o.direct_below_flops = 0;
    o.tile = 32;
    cuboid::Context ctx(o);
    for (int r = 0; r < 3; ++r) {
      Problem p(120 + 10 * t, 100, 90, 1, unsigned(t * 10 + r));
      const auto C0 = p.C;
      ctx.gemm(Op::none, Op::none, p.m, p.n, p.k, 1.0, p.A.data(), p.lda, p.B.data(), p.ldb, 0.5,
               p.C.data(), p.ldc);
      bool ok = false;
      errors[std::size_t(t)] = error_of(p, C0, p.C, 1.0, 0.5, ok);
      kept[std::size_t(t)] = ok;
    }
  };
  std::thread a(work, 0), b(work, 1);
  a.join();
  b.join();
  for (int t = 0; t < 2; ++t) {
    EXPECT_LT(errors[std::size_t(t)], 1e-12 * 90) << "context " << t;
    EXPECT_TRUE(kept[std::size_t(t)]);
  }
}

// Two processors whose speeds the first call measures (no cache to find them in).
cuboid::ContextOptions two_processors_measured() {
  cuboid::ContextOptions o = two_processors();
  o.speeds.clear();
  o.speed_cache = "";
  return o;
}

// Runs `calls` products on `ctx` and returns the largest error seen (infinity when an element
// outside a sub-matrix changed).
double products_error(cuboid::Context& ctx, int calls, unsigned seed) {
  double worst = 0;
  for (int r = 0; r < calls; ++r) {
    Problem p(140 + 10 * r, 120, 110, 2, seed + unsigned(r));
    const auto C0 = p.C;
    ctx.gemm(Op::none, Op::none, p.m, p.n, p.k, 1.0, p.A.data(), p.lda, p.B.data(), p.ldb, 0.5,
             p.C.data(), p.ldc);
    bool kept = false;
    worst = std::max(worst, error_of(p, C0, p.C, 1.0, 0.5, kept));
    if (!kept) worst = std::numeric_limits<double>::infinity();
  }
  return worst;
}

// A context made on another thread than the one that initialised Kokkos measures its speeds on
// its first call there: Kokkos 3's OpenMP back end refuses kernels and initialised views on any
// other thread, so none may run on the caller's.
TEST(Context, FirstCallOffTheMainThreadMeasuresSpeeds) {
  const cuboid::Context main_thread(two_processors());  // Kokkos starts on this thread
  std::string error;
  double worst = 1;
  std::vector<double> speeds;
  std::thread t([&] {
    try {
      cuboid::Context ctx(two_processors_measured());
      worst = products_error(ctx, 2, 70);
      speeds = ctx.speeds(cuboid::ScalarType::float64);
    } catch (const std::exception& e) {
      error = e.what();
    }
  });
  t.join();
  ASSERT_EQ(error, "");
  EXPECT_LT(worst, 1e-12 * 110);
  ASSERT_EQ(speeds.size(), 2u);
  for (double s : speeds) EXPECT_GT(s, 0);
}

// Two contexts measured at the same time, each from a thread of its own.
TEST(Context, TwoContextsMeasuredConcurrently) {
  const cuboid::Context main_thread(two_processors());
  std::vector<std::string> errors(2);
  std::vector<double> worst(2, 1.0);
  auto work = [&](int t) {
    try {
      cuboid::Context ctx(two_processors_measured());
      worst[std::size_t(t)] = products_error(ctx, 2, 80 + unsigned(t) * 10);
    } catch (const std::exception& e) {
      errors[std::size_t(t)] = e.what();
    }
  };
  std::thread a(work, 0), b(work, 1);
  a.join();
  b.join();
  for (int t = 0; t < 2; ++t) {
    EXPECT_EQ(errors[std::size_t(t)], "") << "context " << t;
    EXPECT_LT(worst[std::size_t(t)], 1e-12 * 110) << "context " << t;
  }
}

// A call that fails (here on its leading dimension, before anything is measured) leaves the
// context as it was: the next call measures and multiplies.
TEST(Context, AFailedCallLeavesTheContextUsable) {
  cuboid::Context ctx(two_processors_measured());
  Problem p(100, 90, 80, 0, 5);
  EXPECT_THROW(ctx.gemm(Op::none, Op::none, p.m, p.n, p.k, 1.0, p.A.data(), p.m - 1, p.B.data(),
                        p.ldb, 0.0, p.C.data(), p.ldc),
               cuboid::KeyedError);
  EXPECT_LT(products_error(ctx, 2, 90), 1e-12 * 110);
  EXPECT_EQ(ctx.speeds(cuboid::ScalarType::float64).size(), 2u);
}

TEST(CInterface, ComplexCallsAsCblasPassesThem) {
  cuboid_options o;
  cuboid_options_init(&o);
  o.processors = "host,staged";
  const double speeds[2] = {1.0, 1.0};
  o.speeds = speeds, o.speed_count = 2, o.direct_below_flops = 0;
  cuboid_context* ctx = nullptr;
  ASSERT_EQ(cuboid_create(&o, &ctx, nullptr, 0), CUBOID_SUCCESS);
  {
    ComplexProblem<double> p(100, 80, 120, 2, 9, Op::conjugate_transpose, Op::transpose, true);
    const auto C0 = p.c_copy();
    const double alpha[2] = {0.5, -1}, beta[2] = {-0.25, 0.75};
    EXPECT_EQ(
        cuboid_zgemm(ctx, 'c', 'T', p.m, p.n, p.k, alpha, p.A, p.lda, p.B, p.ldb, beta, p.C, p.ldc),
        CUBOID_SUCCESS)
        << cuboid_last_error(ctx);
    bool kept = false;
    EXPECT_LT(p.error(C0, {0.5, -1}, {-0.25, 0.75}, kept), 1e-12 * 120);
    EXPECT_TRUE(kept);
  }
  {
    ComplexProblem<float> p(100, 80, 120, 2, 10, Op::none, Op::conjugate_transpose, false);
    const auto C0 = p.c_copy();
    const float alpha[2] = {1, 0.5f}, beta[2] = {0, 0};
    EXPECT_EQ(
        cuboid_cgemm(ctx, 'N', 'C', p.m, p.n, p.k, alpha, p.A, p.lda, p.B, p.ldb, beta, p.C, p.ldc),
        CUBOID_SUCCESS)
        << cuboid_last_error(ctx);
    bool kept = false;
    EXPECT_LT(p.error(C0, {1, 0.5f}, {0, 0}, kept), 1e-4);
    EXPECT_TRUE(kept);
  }
  // A null alpha is named; a bad op too.
  std::complex<double> z[4] = {};
  const double one[2] = {1, 0};
  EXPECT_EQ(cuboid_zgemm(ctx, 'N', 'N', 2, 2, 2, nullptr, z, 2, z, 2, one, z, 2),
            CUBOID_INVALID_ARGUMENT);
  EXPECT_NE(std::string(cuboid_last_error(ctx)).find("alpha"), std::string::npos);
  EXPECT_EQ(cuboid_zgemm(ctx, 'Q', 'N', 2, 2, 2, one, z, 2, z, 2, one, z, 2),
            CUBOID_INVALID_ARGUMENT);
  EXPECT_NE(std::string(cuboid_last_error(ctx)).find("transa"), std::string::npos);
  double sp[2] = {0, 0};
  EXPECT_EQ(cuboid_speeds(ctx, 'z', sp, 2), 2);
  EXPECT_EQ(cuboid_speeds(ctx, 'q', sp, 2), -1);
  cuboid_destroy(ctx);
}

TEST(CInterface, StatusCodesAndMessages) {
  cuboid_options o;
  cuboid_options_init(&o);
  o.processors = "host,staged";
  const double speeds[2] = {1.0, 1.0};
  o.speeds = speeds;
  o.speed_count = 2;
  o.direct_below_flops = 0;
  o.tile = 32;
  cuboid_context* ctx = nullptr;
  char error[256] = "";
  ASSERT_EQ(cuboid_create(&o, &ctx, error, sizeof error), CUBOID_SUCCESS) << error;
  Problem p(70, 60, 50, 2, 4);
  const auto C0 = p.C;
  EXPECT_EQ(cuboid_dgemm(ctx, 'n', 'N', p.m, p.n, p.k, 1.0, p.A.data(), p.lda, p.B.data(), p.ldb,
                         1.0, p.C.data(), p.ldc),
            CUBOID_SUCCESS);
  bool kept = false;
  EXPECT_LT(error_of(p, C0, p.C, 1.0, 1.0, kept), 1e-12 * 50);
  EXPECT_EQ(std::string(cuboid_last_error(ctx)), "");
  EXPECT_EQ(
      cuboid_dgemm(ctx, 'x', 'N', 4, 4, 4, 1.0, p.A.data(), 4, p.B.data(), 4, 0.0, p.C.data(), 4),
      CUBOID_INVALID_ARGUMENT);
  EXPECT_NE(std::string(cuboid_last_error(ctx)).find("transa"), std::string::npos);
  {
    Problem t(40, 30, 20, 2, 8, Op::transpose, Op::conjugate_transpose);
    const auto T0 = t.C;
    EXPECT_EQ(cuboid_dgemm(ctx, 't', 'C', t.m, t.n, t.k, 1.0, t.A.data(), t.lda, t.B.data(), t.ldb,
                           0.0, t.C.data(), t.ldc),
              CUBOID_SUCCESS)
        << cuboid_last_error(ctx);
    bool t_kept = false;
    EXPECT_LT(error_of(t, T0, t.C, 1.0, 0.0, t_kept), 1e-12 * 20);
    EXPECT_TRUE(t_kept);
  }
  double got[4] = {0, 0, 0, 0};
  EXPECT_EQ(cuboid_speeds(ctx, 'd', got, 4), 2);
  EXPECT_EQ(got[1], 1.0);
  cuboid_destroy(ctx);
  o.processors = "host,nope";
  EXPECT_EQ(cuboid_create(&o, &ctx, error, sizeof error), CUBOID_INVALID_ARGUMENT);
  EXPECT_EQ(ctx, nullptr);
  EXPECT_NE(std::string(error).find("nope"), std::string::npos) << error;
}

}  // namespace
