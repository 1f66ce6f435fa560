// The distributed entry (cuboid/mpi.hpp, cuboid_mpi.h), run under mpirun at 1 to 4 ranks: the
// caller's block-cyclic matrices, with padded leading dimensions, sizes that are not multiples
// of the block, several grids, sub-communicators, BLAS's rules, and argument errors that every
// rank sees alike. MPI is initialised with a plain MPI_Init, as a Fortran code's MPI_INIT does.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cuboid/cuboid_mpi.h>
#include <cmath>
#include <complex>
#include <cstring>
#include <cuboid/mpi.hpp>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

int rank_of(MPI_Comm comm) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}
int size_of(MPI_Comm comm) {
  int p = 0;
  MPI_Comm_size(comm, &p);
  return p;
}

// A global matrix, the same on every rank (from a seed), and this rank's block-cyclic share of
// it in a local array with leading dimension local rows + pad.
template <class Scalar>
struct Distributed {
  std::int64_t rows = 0, cols = 0, lr = 0, lc = 0, ld = 1;
  std::vector<Scalar> global, local;
  int prow = 0, pcol = 0, grid_rows = 1, grid_cols = 1;
  std::int64_t block = 1;

  Distributed(std::int64_t r, std::int64_t c, std::int64_t nb, int gr, int gc, int me,
              std::int64_t pad, unsigned seed, Scalar fill = Scalar(0), bool random = true)
      : rows(r), cols(c), grid_rows(gr), grid_cols(gc), block(nb) {
    prow = me / gc, pcol = me % gc;
    lr = cuboid::local_extent(rows, nb, prow, gr), lc = cuboid::local_extent(cols, nb, pcol, gc);
    ld = std::max<std::int64_t>(1, lr + pad);
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    global.resize(std::size_t(rows * cols));
    for (auto& x : global) x = random ? Scalar(u(rng)) : fill;
    // Sentinels in the padding: the call must leave them alone.
    local.assign(std::size_t(ld * std::max<std::int64_t>(lc, 1)), Scalar(-777));
    for (std::int64_t j = 0; j < lc; ++j)
      for (std::int64_t i = 0; i < lr; ++i) local[std::size_t(i + j * ld)] = at(i, j);
  }
  std::int64_t gi(std::int64_t i) const {
    return ((i / block) * grid_rows + prow) * block + i % block;
  }
  std::int64_t gj(std::int64_t j) const {
    return ((j / block) * grid_cols + pcol) * block + j % block;
  }
  Scalar at(std::int64_t i, std::int64_t j) const {
    return global[std::size_t(gi(i) + gj(j) * rows)];
  }
  Scalar* data() { return local.data(); }
};

// The largest |C - (alpha A B + beta C0)| / (k + 1) over this rank's elements, by a long-double
// loop, the padding's sentinels checked; the worst over all ranks. -1 when a sentinel changed.
template <class Scalar>
double worst_error(MPI_Comm comm, const Distributed<Scalar>& A, const Distributed<Scalar>& B,
                   const Distributed<Scalar>& C0, const std::vector<Scalar>& C, double alpha,
                   double beta) {
  double worst = 0;
  const std::int64_t k = A.cols;
  for (std::int64_t j = 0; j < C0.lc; ++j)
    for (std::int64_t i = 0; i < C0.ld; ++i) {
      const Scalar got = C[std::size_t(i + j * C0.ld)];
      if (i >= C0.lr) {
        if (got != Scalar(-777)) worst = std::max(worst, 1e300);
        continue;
      }
      const std::int64_t gi = C0.gi(i), gj = C0.gj(j);
      long double acc = 0;
      for (std::int64_t l = 0; l < k; ++l)
        acc += (long double)A.global[std::size_t(gi + l * A.rows)] *
               B.global[std::size_t(l + gj * B.rows)];
      const double old = double(C0.global[std::size_t(gi + gj * C0.rows)]);
      const double want = double(alpha * acc) + (beta == 0 ? 0.0 : beta * old);
      const double e = std::abs(double(got) - want);
      worst = std::max(worst, std::isnan(e) ? 1e300 : e / double(k + 1));
    }
  double all = 0;
  MPI_Allreduce(&worst, &all, 1, MPI_DOUBLE, MPI_MAX, comm);
  return all;
}

cuboid::ContextOptions host_only() {
  cuboid::ContextOptions o;
  o.processors = {"host"};
  o.speeds = {1.0};
  o.speed_cache = "";
  return o;
}

struct Case {
  std::int64_t m, n, k, block;
  int grid_rows, grid_cols;  // 0, 0: the default grid; -1, -1: P x 1; -2, -2: 1 x P
  std::int64_t pad;
  double alpha, beta;
};

template <class Scalar>
double run_case(cuboid::Context& context, MPI_Comm comm, const Case& c, double eps) {
  const int P = size_of(comm), me = rank_of(comm);
  cuboid::BlockCyclicLayout layout{c.grid_rows, c.grid_cols, c.block};
  if (c.grid_rows == -1) layout.grid_rows = P, layout.grid_cols = 1;
  if (c.grid_rows == -2) layout.grid_rows = 1, layout.grid_cols = P;
  int gr = 0, gc = 0;
  cuboid::grid_of(layout, P, gr, gc);
  Distributed<Scalar> A(c.m, c.k, c.block, gr, gc, me, c.pad, 1);
  Distributed<Scalar> B(c.k, c.n, c.block, gr, gc, me, c.pad + 1, 2);
  Distributed<Scalar> C(c.m, c.n, c.block, gr, gc, me, c.pad, 3);
  std::vector<Scalar> out = C.local;
  cuboid::gemm(context, comm, layout, cuboid::Op::none, cuboid::Op::none, c.m, c.n, c.k,
               Scalar(c.alpha), A.data(), A.ld, B.data(), B.ld, Scalar(c.beta), out.data(), C.ld);
  return worst_error(comm, A, B, C, out, c.alpha, c.beta) / eps;
}

TEST(Distributed, DoubleProductsOnSeveralGridsAndBlocks) {
  cuboid::Context context(host_only());
  const std::vector<Case> cases = {
      {190, 157, 221, 32, 0, 0, 0, 1.0, 0.0},   {190, 157, 221, 32, 0, 0, 3, -0.5, 1.5},
      {64, 64, 700, 16, -1, -1, 2, 1.0, 1.0},   {300, 20, 100, 48, -2, -2, 0, 2.0, -1.0},
      {77, 301, 45, 100, 0, 0, 1, 1.0, 0.25},   {1, 1, 1, 1, 0, 0, 0, 1.0, 1.0},
      {256, 256, 256, 64, -1, -1, 0, 1.0, 0.0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("m n k block = " + std::to_string(c.m) + " " + std::to_string(c.n) + " " +
                 std::to_string(c.k) + " " + std::to_string(c.block) + " grid " +
                 std::to_string(c.grid_rows));
    EXPECT_LT(run_case<double>(context, MPI_COMM_WORLD, c, 1e-16), 8.0);
    EXPECT_EQ(context.last_call().ranks, size_of(MPI_COMM_WORLD));
    EXPECT_FALSE(context.last_call().rank_partition.empty());
  }
}

TEST(Distributed, FloatAndTwoProcessorsPerRank) {
  cuboid::ContextOptions o;
  o.processors = {"host", "staged"};
  o.speeds = {1.0, 1.5};
  o.speed_cache = "";
  cuboid::Context context(o);
  EXPECT_LT(run_case<float>(context, MPI_COMM_WORLD, {203, 190, 260, 32, 0, 0, 2, 1.0, -1.0}, 1e-7),
            8.0);
  EXPECT_LT(
      run_case<double>(context, MPI_COMM_WORLD, {203, 190, 260, 64, 0, 0, 0, 1.0, 0.5}, 1e-16),
      8.0);
}

TEST(Distributed, BlasRules) {
  cuboid::Context context(host_only());
  const int P = size_of(MPI_COMM_WORLD), me = rank_of(MPI_COMM_WORLD);
  const cuboid::BlockCyclicLayout layout{0, 0, 16};
  int gr = 0, gc = 0;
  cuboid::grid_of(layout, P, gr, gc);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // beta = 0 never reads C: NaN there does not reach the product.
  {
    Distributed<double> A(70, 50, 16, gr, gc, me, 0, 1), B(50, 60, 16, gr, gc, me, 0, 2);
    Distributed<double> C(70, 60, 16, gr, gc, me, 0, 3, nan, false);
    std::vector<double> out = C.local;
    cuboid::gemm(context, MPI_COMM_WORLD, layout, cuboid::Op::none, cuboid::Op::none, 70, 60, 50,
                 1.0, A.data(), A.ld, B.data(), B.ld, 0.0, out.data(), C.ld);
    EXPECT_LT(worst_error(MPI_COMM_WORLD, A, B, C, out, 1.0, 0.0), 1e-15);
  }
  // alpha = 0 does not read A or B (NaN there, and null pointers are allowed): C = beta C.
  {
    Distributed<double> A(70, 50, 16, gr, gc, me, 0, 1, nan, false);
    Distributed<double> B(50, 60, 16, gr, gc, me, 0, 2, nan, false);
    Distributed<double> C(70, 60, 16, gr, gc, me, 0, 3);
    std::vector<double> out = C.local;
    cuboid::gemm(context, MPI_COMM_WORLD, layout, cuboid::Op::none, cuboid::Op::none, 70, 60, 50,
                 0.0, A.data(), A.ld, nullptr, B.ld, 2.0, out.data(), C.ld);
    for (std::int64_t j = 0; j < C.lc; ++j)
      for (std::int64_t i = 0; i < C.lr; ++i)
        EXPECT_EQ(out[std::size_t(i + j * C.ld)], 2.0 * C.local[std::size_t(i + j * C.ld)]);
  }
  // k = 0: C = beta C; m = 0: nothing happens.
  {
    Distributed<double> C(70, 60, 16, gr, gc, me, 0, 3);
    std::vector<double> out = C.local;
    cuboid::gemm(context, MPI_COMM_WORLD, layout, cuboid::Op::none, cuboid::Op::none, 70, 60, 0,
                 1.0, nullptr, std::max<std::int64_t>(1, C.lr), nullptr, 1, -1.0, out.data(), C.ld);
    for (std::size_t e = 0; e < out.size(); ++e)
      EXPECT_EQ(out[e], C.local[e] == -777 ? -777 : -C.local[e]);
    std::vector<double> before = out;
    cuboid::gemm(context, MPI_COMM_WORLD, layout, cuboid::Op::none, cuboid::Op::none, 0, 60, 50,
                 1.0, nullptr, 1, nullptr, 50, 0.0, out.data(), 1);
    EXPECT_EQ(out, before);
  }
}

// An argument wrong on one rank only is the same KeyedError on every rank, before any traffic.
TEST(Distributed, ArgumentErrorsOnEveryRank) {
  cuboid::Context context(host_only());
  const int P = size_of(MPI_COMM_WORLD), me = rank_of(MPI_COMM_WORLD);
  const cuboid::BlockCyclicLayout layout{0, 0, 8};
  int gr = 0, gc = 0;
  cuboid::grid_of(layout, P, gr, gc);
  Distributed<double> A(40, 40, 8, gr, gc, me, 0, 1), B(40, 40, 8, gr, gc, me, 0, 2),
      C(40, 40, 8, gr, gc, me, 0, 3);
  auto key_of = [&](auto&& call) -> std::string {
    try {
      call();
    } catch (const cuboid::Unsupported& e) {
      return "unsupported:" + e.key;
    } catch (const cuboid::KeyedError& e) {
      return e.key;
    }
    return "";
  };
  const int last = P - 1;
  EXPECT_EQ(key_of([&] {
              cuboid::gemm(context, MPI_COMM_WORLD, layout, cuboid::Op::none, cuboid::Op::none, 40,
                           40, 40, 1.0, A.data(), me == last ? 0 : A.ld, B.data(), B.ld, 0.0,
                           C.data(), C.ld);
            }),
            "lda");
  EXPECT_EQ(key_of([&] {
              cuboid::gemm(context, MPI_COMM_WORLD, layout, cuboid::Op::none, cuboid::Op::none,
                           me == last ? 39 : 40, 40, 40, 1.0, A.data(), A.ld, B.data(), B.ld, 0.0,
                           C.data(), C.ld);
            }),
            P > 1 ? "m" : "");
  EXPECT_EQ(key_of([&] {
              cuboid::gemm(context, MPI_COMM_WORLD, cuboid::BlockCyclicLayout{P + 1, 1, 8},
                           cuboid::Op::none, cuboid::Op::none, 40, 40, 40, 1.0, A.data(), A.ld,
                           B.data(), B.ld, 0.0, C.data(), C.ld);
            }),
            "layout");
  // Every op is computed across ranks (a square A is the same size stored either way).
  EXPECT_EQ(key_of([&] {
              cuboid::gemm(context, MPI_COMM_WORLD, layout, cuboid::Op::transpose,
                           cuboid::Op::conjugate_transpose, 40, 40, 40, 1.0, A.data(), A.ld,
                           B.data(), B.ld, 0.0, C.data(), C.ld);
            }),
            "");
  EXPECT_EQ(key_of([&] {
              cuboid::gemm(context, MPI_COMM_NULL, layout, cuboid::Op::none, cuboid::Op::none, 40,
                           40, 40, 1.0, A.data(), A.ld, B.data(), B.ld, 0.0, C.data(), C.ld);
            }),
            "comm");
  // After the errors the context and the communicator still work.
  EXPECT_LT(run_case<double>(context, MPI_COMM_WORLD, {40, 40, 40, 8, 0, 0, 0, 1.0, 1.0}, 1e-16),
            8.0);
}

// The rank options: refused values name their field; a fixed algorithm, speed factors and a
// memory limit reach the rank partition; options that differ between ranks, or speeds for
// another number of ranks, are the same KeyedError on every rank.
TEST(Distributed, RankOptionsReachTheRankPartition) {
  cuboid::Context context(host_only());
  const int P = size_of(MPI_COMM_WORLD), me = rank_of(MPI_COMM_WORLD);
  auto key_of = [&](auto&& call) -> std::string {
    try {
      call();
    } catch (const cuboid::KeyedError& e) {
      return e.key;
    } catch (const cuboid::Error& e) {
      return std::string("error:") + e.what();
    }
    return "";
  };
  auto options = [](std::string algorithm, std::vector<double> speeds, double gbs, double mib) {
    cuboid::RankOptions o;
    o.algorithm = std::move(algorithm), o.speeds = std::move(speeds);
    o.bandwidth_gbs = gbs, o.memory_limit_mib = mib;
    return o;
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(key_of([&] { cuboid::set_rank_options(context, options("fast", {}, 10, 0)); }),
            "algorithm");
  EXPECT_EQ(key_of([&] {
              cuboid::set_rank_options(context, options("auto", {1, -1}, 10, 0));
            }),
            "speeds");
  EXPECT_EQ(key_of([&] {
              cuboid::set_rank_options(context, options("auto", {0, 0}, 10, 0));
            }),
            "speeds");
  EXPECT_EQ(key_of([&] { cuboid::set_rank_options(context, options("auto", {}, 0, 0)); }),
            "bandwidth_gbs");
  EXPECT_EQ(key_of([&] { cuboid::set_rank_options(context, options("auto", {}, 10, nan)); }),
            "memory_limit_mib");

  const Case c{150, 130, 170, 16, 0, 0, 1, 1.0, 0.5};
  // A fixed algorithm cuts by the speeds alone.
  cuboid::set_rank_options(context, options("nrrp2d", {}, 10, 0));
  EXPECT_LT(run_case<double>(context, MPI_COMM_WORLD, c, 1e-16), 8.0);
  EXPECT_NE(context.last_call().rank_partition.find("nrrp2d"), std::string::npos)
      << context.last_call().rank_partition;
  // Speed factors: a rank of factor 0 computes nothing, so no A or B comes to it, only the
  // others' partial sums of the C it owns.
  std::vector<double> speeds(std::size_t(P), 1.0);
  if (P > 1) speeds[1] = 0;
  cuboid::set_rank_options(context, options("nrrp2d", speeds, 10, 0));
  EXPECT_LT(run_case<double>(context, MPI_COMM_WORLD, c, 1e-16), 8.0);
  if (P > 1 && me == 1) {
    int gr = 0, gc = 0;
    cuboid::grid_of(cuboid::BlockCyclicLayout{0, 0, c.block}, P, gr, gc);
    const double own_c = double(cuboid::local_extent(c.m, c.block, me / gc, gr) *
                                cuboid::local_extent(c.n, c.block, me % gc, gc) * 8);
    EXPECT_LE(context.last_call().received_bytes, own_c);
  }
  // Speeds for another number of ranks, refused on every rank before any traffic.
  cuboid::set_rank_options(context,
                           options("auto", std::vector<double>(std::size_t(P + 1), 1.0), 10, 0));
  EXPECT_EQ(key_of([&] { run_case<double>(context, MPI_COMM_WORLD, c, 1e-16); }),
            "rank_options.speeds");
  // A memory limit below every candidate: refused on every rank, naming the option.
  cuboid::set_rank_options(context, options("auto", {}, 10, 0.001));
  const std::string refused = key_of([&] { run_case<double>(context, MPI_COMM_WORLD, c, 1e-16); });
  EXPECT_NE(refused.find("rank_options.memory_limit_mib"), std::string::npos) << refused;
  if (P > 1) {
    // Ranks that disagree.
    cuboid::set_rank_options(context, options("auto", {}, me == P - 1 ? 5 : 10, 0));
    EXPECT_EQ(key_of([&] { run_case<double>(context, MPI_COMM_WORLD, c, 1e-16); }),
              "rank_options.bandwidth_gbs");
  }
  // Back to the defaults, the context still works.
  cuboid::set_rank_options(context, cuboid::RankOptions{});
  EXPECT_LT(run_case<double>(context, MPI_COMM_WORLD, c, 1e-16), 8.0);
}

// Two halves of the job multiply apart on communicators split from the world, each with its
// own grid; results are bitwise the same call after call with the speeds fixed.
TEST(Distributed, SubCommunicatorsAndRepeatedCalls) {
  cuboid::Context context(host_only());
  const int me = rank_of(MPI_COMM_WORLD);
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
  const int P = size_of(half), hme = rank_of(half);
  const cuboid::BlockCyclicLayout layout{0, 0, 24};
  int gr = 0, gc = 0;
  cuboid::grid_of(layout, P, gr, gc);
  Distributed<double> A(150, 130, 24, gr, gc, hme, 1, 10u + unsigned(me % 2)),
      B(130, 110, 24, gr, gc, hme, 0, 20), C(150, 110, 24, gr, gc, hme, 2, 30);
  std::vector<double> first;
  for (int call = 0; call < 3; ++call) {
    std::vector<double> out = C.local;
    cuboid::gemm(context, half, layout, cuboid::Op::none, cuboid::Op::none, 150, 110, 130, 1.0,
                 A.data(), A.ld, B.data(), B.ld, 1.0, out.data(), C.ld);
    EXPECT_LT(worst_error(half, A, B, C, out, 1.0, 1.0) / 1e-16, 8.0);
    if (call == 0)
      first = out;
    else
      EXPECT_EQ(std::memcmp(first.data(), out.data(), out.size() * sizeof(double)), 0);
    if (P > 1) {
      EXPECT_GT(context.last_call().received_bytes, 0);
    }
  }
  MPI_Comm_free(&half);
}

// A C context on the host at a given speed (no calibration); null, with the reason printed, if
// it cannot be made.
cuboid_context* c_context() {
  cuboid_options o;
  cuboid_options_init(&o);
  o.processors = "host";
  const double speed = 1;
  o.speeds = &speed, o.speed_count = 1, o.speed_cache = "";
  cuboid_context* context = nullptr;
  char message[256];
  if (cuboid_create(&o, &context, message, sizeof message) != CUBOID_SUCCESS)
    ADD_FAILURE() << message;
  return context;
}

TEST(Distributed, CInterface) {
  cuboid_context* context = c_context();
  ASSERT_NE(context, nullptr);
  const int P = size_of(MPI_COMM_WORLD), me = rank_of(MPI_COMM_WORLD);
  const cuboid_block_cyclic layout{0, 0, 20, {0, 0}, {0, 0}, {0, 0}};
  cuboid::BlockCyclicLayout same{0, 0, 20};
  int gr = 0, gc = 0;
  cuboid::grid_of(same, P, gr, gc);
  Distributed<double> A(90, 70, 20, gr, gc, me, 0, 1), B(70, 80, 20, gr, gc, me, 0, 2),
      C(90, 80, 20, gr, gc, me, 1, 3);
  std::vector<double> out = C.local;
  EXPECT_EQ(
      cuboid_dgemm_distributed_f(context, MPI_Comm_c2f(MPI_COMM_WORLD), &layout, 'n', 'N', 90, 80,
                                 70, 1.0, A.data(), A.ld, B.data(), B.ld, 0.5, out.data(), C.ld),
      CUBOID_SUCCESS)
      << cuboid_last_error(context);
  EXPECT_LT(worst_error(MPI_COMM_WORLD, A, B, C, out, 1.0, 0.5) / 1e-16, 8.0);
  EXPECT_EQ(cuboid_dgemm_distributed(context, MPI_COMM_WORLD, &layout, 'x', 'N', 90, 80, 70, 1.0,
                                     A.data(), A.ld, B.data(), B.ld, 0.5, out.data(), C.ld),
            CUBOID_INVALID_ARGUMENT);
  EXPECT_NE(std::string(cuboid_last_error(context)).find("transa"), std::string::npos);
  EXPECT_EQ(cuboid_dgemm_distributed(context, MPI_COMM_WORLD, nullptr, 'N', 'N', 90, 80, 70, 1.0,
                                     A.data(), A.ld, B.data(), B.ld, 0.5, out.data(), C.ld),
            CUBOID_INVALID_ARGUMENT);
  // Rank options: a bad one names its field; a fixed algorithm reaches the rank partition.
  EXPECT_EQ(cuboid_set_rank_options(context, "fastest", nullptr, 0, 10, 0),
            CUBOID_INVALID_ARGUMENT);
  EXPECT_NE(std::string(cuboid_last_error(context)).find("algorithm"), std::string::npos);
  EXPECT_EQ(cuboid_set_rank_options(context, nullptr, nullptr, 2, 10, 0), CUBOID_INVALID_ARGUMENT);
  EXPECT_EQ(cuboid_set_rank_options(context, "nrrp2d", nullptr, 0, 10, 0), CUBOID_SUCCESS)
      << cuboid_last_error(context);
  out = C.local;
  EXPECT_EQ(cuboid_dgemm_distributed(context, MPI_COMM_WORLD, &layout, 'N', 'N', 90, 80, 70, 1.0,
                                     A.data(), A.ld, B.data(), B.ld, 0.5, out.data(), C.ld),
            CUBOID_SUCCESS)
      << cuboid_last_error(context);
  EXPECT_LT(worst_error(MPI_COMM_WORLD, A, B, C, out, 1.0, 0.5) / 1e-16, 8.0);
  EXPECT_EQ(cuboid_local_extent(10, 0, 0, 1), -1);
  EXPECT_EQ(cuboid_local_extent(10, 3, 1, 2), 4);  // blocks 0-2 | 3-5 | 6-8 | 9: rows 3-5 and 9
  // The first block on coordinate 1: it holds blocks 0-2 and 6-8.
  EXPECT_EQ(cuboid_local_extent_from(10, 3, 1, 1, 2), 6);
  EXPECT_EQ(cuboid_local_extent_from(10, 3, 0, 1, 2), 4);
  EXPECT_EQ(cuboid_local_extent_from(10, 3, 0, 2, 2), -1);
  // The call report in C: the distributed fields as the C++ report has them.
  cuboid_call_report report;
  ASSERT_EQ(cuboid_last_call(context, &report), CUBOID_SUCCESS);
  EXPECT_EQ(report.ranks, P);
  EXPECT_EQ(std::string(report.rank_partition).rfind("nrrp2d", 0), 0u) << report.rank_partition;
  if (P > 1) {
    EXPECT_GT(report.received_bytes, 0);
  }
  EXPECT_GE(report.pieces_on_calling_thread, 0);
  cuboid_destroy(context);
}

// The progress counters reach C: with pieces above the inline size every rank polls MPI while
// its processors compute (as the C++ report says in EveryRankDrivesMpiWhileItComputes).
TEST(Distributed, CReportsProgressWhileComputing) {
  cuboid_context* context = c_context();
  ASSERT_NE(context, nullptr);
  const int P = size_of(MPI_COMM_WORLD), me = rank_of(MPI_COMM_WORLD);
  const cuboid_block_cyclic layout{0, 0, 64, {0, 0}, {0, 0}, {0, 0}};
  int gr = 0, gc = 0;
  cuboid::grid_of(cuboid::BlockCyclicLayout{0, 0, 64}, P, gr, gc);
  Distributed<double> A(384, 416, 64, gr, gc, me, 0, 1), B(416, 352, 64, gr, gc, me, 0, 2),
      C(384, 352, 64, gr, gc, me, 1, 3);
  std::vector<double> out = C.local;
  ASSERT_EQ(cuboid_dgemm_distributed(context, MPI_COMM_WORLD, &layout, 'N', 'N', 384, 352, 416, 1.0,
                                     A.data(), A.ld, B.data(), B.ld, 0.0, out.data(), C.ld),
            CUBOID_SUCCESS)
      << cuboid_last_error(context);
  EXPECT_LT(worst_error(MPI_COMM_WORLD, A, B, C, out, 1.0, 0.0) / 1e-16, 8.0);
  cuboid_call_report report;
  ASSERT_EQ(cuboid_last_call(context, &report), CUBOID_SUCCESS);
  double least = report.mpi_polls_while_computing;
  MPI_Allreduce(MPI_IN_PLACE, &least, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  if (P > 1) {
    EXPECT_GT(least, 0.0) << "some rank's C report shows no MPI progress while computing";
  }
  cuboid_destroy(context);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  // Every rank runs every test (they are collective) and prints its own failures.
  int failed = RUN_ALL_TESTS();
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}

// Complex: pzgemm's and pcgemm's types through the C++ and C entries, complex alpha and beta,
// local arrays padded and held either aligned for Kokkos::complex or half an element off (as
// Fortran COMPLEX*16 arrays may be).
template <class T>
double complex_case(cuboid::Context& context, std::int64_t m, std::int64_t n, std::int64_t k,
                    std::int64_t nb, bool misaligned, bool through_c, char op_a = 'N',
                    char op_b = 'N') {
  using Z = std::complex<T>;
  MPI_Comm comm = MPI_COMM_WORLD;
  const int P = size_of(comm), me = rank_of(comm);
  const cuboid::BlockCyclicLayout layout{0, 0, nb};
  int gr = 0, gc = 0;
  cuboid::grid_of(layout, P, gr, gc);
  const int prow = me / gc, pcol = me % gc;
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> u(-1, 1);
  auto global = [&](std::int64_t r, std::int64_t c) {
    std::vector<Z> g(std::size_t(r * c));
    for (auto& x : g) x = Z(T(u(rng)), T(u(rng)));
    return g;
  };
  // As stored: A is k x m when op(A) transposes it, B n x k when op(B) does.
  const bool ta = op_a != 'N', tb = op_b != 'N';
  const std::int64_t am = ta ? k : m, an = ta ? m : k, bm = tb ? n : k, bn = tb ? k : n;
  const auto Ag = global(am, an), Bg = global(bm, bn), Cg = global(m, n);
  auto gidx = [&](std::int64_t i, int p, int procs) {
    return ((i / nb) * procs + p) * nb + i % nb;
  };
  // The local share in storage of reals, one real past an aligned address when misaligned.
  struct Local {
    std::vector<T> store;
    Z* data;
    std::int64_t lr, lc, ld;
  };
  auto share = [&](const std::vector<Z>& g, std::int64_t r, std::int64_t c) {
    Local L;
    L.lr = cuboid::local_extent(r, nb, prow, gr), L.lc = cuboid::local_extent(c, nb, pcol, gc);
    L.ld = std::max<std::int64_t>(1, L.lr + 2);
    L.store.assign(std::size_t(2 * L.ld * std::max<std::int64_t>(L.lc, 1) + 2), T(0));
    L.data = reinterpret_cast<Z*>(L.store.data() + (misaligned ? 1 : 0));
    for (std::int64_t j = 0; j < L.lc; ++j)
      for (std::int64_t i = 0; i < L.lr; ++i)
        L.data[i + j * L.ld] = g[std::size_t(gidx(i, prow, gr) + gidx(j, pcol, gc) * r)];
    return L;
  };
  Local A = share(Ag, am, an), B = share(Bg, bm, bn), C = share(Cg, m, n);
  const Z alpha(T(0.5), T(-1)), beta(T(0.25), T(0.75));
  if (through_c) {
    cuboid_options o;
    cuboid_options_init(&o);
    o.processors = "host";
    const double speed = 1.0;
    o.speeds = &speed, o.speed_count = 1, o.speed_cache = "";
    cuboid_context* ctx = nullptr;
    EXPECT_EQ(cuboid_create(&o, &ctx, nullptr, 0), CUBOID_SUCCESS);
    const cuboid_block_cyclic l{0, 0, nb, {0, 0}, {0, 0}, {0, 0}};
    const auto status =
        std::is_same_v<T, double>
            ? cuboid_zgemm_distributed(ctx, comm, &l, op_a, op_b, m, n, k, &alpha, A.data, A.ld,
                                       B.data, B.ld, &beta, C.data, C.ld)
            : cuboid_cgemm_distributed(ctx, comm, &l, op_a, op_b, m, n, k, &alpha, A.data, A.ld,
                                       B.data, B.ld, &beta, C.data, C.ld);
    EXPECT_EQ(status, CUBOID_SUCCESS) << cuboid_last_error(ctx);
    cuboid_destroy(ctx);
  } else {
    cuboid::gemm(context, comm, layout, cuboid::Op(op_a), cuboid::Op(op_b), m, n, k, alpha, A.data,
                 A.ld, B.data, B.ld, beta, C.data, C.ld);
  }
  double worst = 0;
  for (std::int64_t j = 0; j < C.lc; ++j)
    for (std::int64_t i = 0; i < C.lr; ++i) {
      const std::int64_t gi = gidx(i, prow, gr), gj = gidx(j, pcol, gc);
      std::complex<long double> acc = 0;
      for (std::int64_t l = 0; l < k; ++l) {
        Z a = ta ? Ag[std::size_t(l + gi * k)] : Ag[std::size_t(gi + l * m)];
        Z b = tb ? Bg[std::size_t(gj + l * n)] : Bg[std::size_t(l + gj * k)];
        if (op_a == 'C') a = std::conj(a);
        if (op_b == 'C') b = std::conj(b);
        acc += std::complex<long double>(a.real(), a.imag()) *
               std::complex<long double>(b.real(), b.imag());
      }
      const Z c0 = Cg[std::size_t(gi + gj * m)], got = C.data[i + j * C.ld];
      const std::complex<long double> want =
          std::complex<long double>(alpha.real(), alpha.imag()) * acc +
          std::complex<long double>(beta.real(), beta.imag()) *
              std::complex<long double>(c0.real(), c0.imag());
      const double e =
          double(std::abs(want - std::complex<long double>(got.real(), got.imag()))) / double(k);
      worst = std::max(worst, std::isnan(e) ? 1e300 : e);
    }
  double all = 0;
  MPI_Allreduce(&worst, &all, 1, MPI_DOUBLE, MPI_MAX, comm);
  return all / double(std::numeric_limits<T>::epsilon());
}

TEST(Distributed, ComplexThroughBothEntriesAlignedOrNot) {
  cuboid::Context context(host_only());
  for (bool misaligned : {false, true}) {
    EXPECT_LT(complex_case<double>(context, 150, 130, 170, 32, misaligned, false), 16.0)
        << "misaligned " << misaligned;
    EXPECT_LT(complex_case<float>(context, 97, 61, 83, 16, misaligned, false), 16.0)
        << "misaligned " << misaligned;
  }
  EXPECT_LT(complex_case<double>(context, 64, 90, 50, 16, true, true), 16.0);
  EXPECT_LT(complex_case<float>(context, 64, 90, 50, 16, false, true), 16.0);
}

// Every op(A), op(B): A and B passed as stored (k x m, n x k when transposed), their local
// extents and leading dimensions those of the stored matrices; the conjugate for 'C'.
TEST(Distributed, EveryOpPairThroughBothEntries) {
  cuboid::Context context(host_only());
  for (char op_a : {'N', 'T', 'C'})
    for (char op_b : {'N', 'T', 'C'}) {
      EXPECT_LT(complex_case<double>(context, 37, 29, 41, 8, false, false, op_a, op_b), 16.0)
          << op_a << op_b;
      EXPECT_LT(complex_case<float>(context, 37, 29, 41, 8, true, true, op_a, op_b), 16.0)
          << op_a << op_b;
    }
}

// One thread per rank and one host processor: a rank that ran its pieces' GEMMs on the calling
// thread drove no MPI while computing, and the ranks waited for each other's transfers in
// lock-step. Pieces above the inline size go to the engine's workers while the calling thread
// polls MPI: every rank must have polled while its processors computed, whatever the timings.
TEST(Distributed, EveryRankDrivesMpiWhileItComputes) {
  cuboid::Context context(host_only());
  const Case c{384, 352, 416, 64, 0, 0, 0, 1.0, 0.0};
  EXPECT_LT(run_case<double>(context, MPI_COMM_WORLD, c, 1e-16), 8.0);
  const cuboid::CallReport& r = context.last_call();
  double least = r.mpi_polls_while_computing;
  MPI_Allreduce(MPI_IN_PLACE, &least, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  EXPECT_GT(r.mpi_polls_while_computing, 0.0)
      << "rank " << rank_of(MPI_COMM_WORLD) << ": " << r.pieces_on_calling_thread
      << " piece(s) on the calling thread, no MPI progress while computing";
  EXPECT_GT(least, 0.0) << "some rank never progressed MPI while it computed";
}
