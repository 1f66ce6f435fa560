// Every op(A), op(B) in every scalar type and both layouts across ranks, in one job: A stored
// k x m when op(A) transposes it (B n x k), laid out as stored. For each case
//   - the product of the rank runner on matrices held here is compared with a reference formed
//     here element by element from the generated stored matrices (independent of the runner's
//     own checks);
//   - a distributed run with its validation passes, and MPI's byte counts equal the model's;
//   - the same run with a dropped tile task, and with a corrupted element, fails its validation.
// Sizes are not multiples of the tile (16) nor of the block (12).
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include <complex>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "exec/matrices.hpp"
#include "exec/scalar.hpp"
#include "mpi/communicator.hpp"
#include "mpi/local_matrix.hpp"
#include "mpi/runner.hpp"
#include "pipeline/local_multiply.hpp"
#include "platform/processor.hpp"

namespace cuboid::mpi {
using layout::Distribution;
namespace {

const Communicator& world() {
  static Communicator c;
  return c;
}

constexpr std::int64_t kM = 67, kN = 45, kK = 53, kTile = 16, kBlock = 12;
constexpr Op kOps[] = {Op::none, Op::transpose, Op::conjugate_transpose};

using Acc = std::complex<double>;
template <class Scalar>
Acc acc(const Scalar& x) {
  return {exec::real_part(x), exec::imag_part(x)};
}

// Element (i, j) of op(X) for the stored matrix `id` as the runner generates it.
template <class Scalar>
Acc op_element(std::uint64_t seed, exec::MatrixId id, Op op, std::int64_t i, std::int64_t j) {
  if (op == Op::none) return acc(exec::element<Scalar>(seed, id, i, j));
  const Acc x = acc(exec::element<Scalar>(seed, id, j, i));
  return op == Op::conjugate_transpose ? std::conj(x) : x;
}

std::string name_of(Op a, Op b, bool aligned) {
  return std::string("op(A)=") + char(a) + " op(B)=" + char(b) +
         (aligned ? " aligned" : " block-cyclic");
}

// One host processor per rank, speed 1.
template <class Scalar>
struct Processors {
  std::unique_ptr<pipeline::LocalMultiply<Scalar>> local;
  RankProcessors<Scalar> procs;
  Processors() {
    const auto specs = platform::resolve_processors({"host"}, "test");
    pipeline::LocalOptions o;
    o.plan = pipeline::plan_options_for(specs, sizeof(Scalar), 0);
    local = std::make_unique<pipeline::LocalMultiply<Scalar>>(specs, std::vector<double>{1.0}, o);
    procs.local = local.get();
    procs.speeds = {platform::Speed{1.0, "deck"}};
  }
};

template <class Scalar>
DistSettings settings(Op op_a, Op op_b, bool aligned) {
  DistSettings s;
  s.m = kM, s.n = kN, s.k = kK, s.tile = kTile;
  s.op_a = op_a, s.op_b = op_b;
  s.alpha = 1.25, s.beta = -0.5;
  if (exec::is_complex<Scalar>) s.alpha_im = 0.75, s.beta_im = 0.25;
  s.seed = 29;
  s.aligned = aligned;
  s.block = aligned ? 0 : kBlock;
  s.repetitions = 1, s.warmup = 0;
  s.full_check_max = kM * kN;
  return s;
}

// This rank's C from the runner on matrices generated here, against a reference formed here:
// the largest |C - ref| over its bound (at most 1 passes), over every rank.
template <class Scalar>
double product_error(const DistSettings& s, RankProcessors<Scalar>& procs) {
  const int me = world().rank();
  DistributedProduct<Scalar> product(s, MPI_COMM_WORLD, procs);
  const Distribution& d = product.partition().dist;
  EXPECT_EQ(d.a.rows(), s.op_a == Op::none ? s.m : s.k);
  EXPECT_EQ(d.b.rows(), s.op_b == Op::none ? s.k : s.n);
  CallerMatrices<Scalar> x{local_storage<Scalar>(d.a, me, "A"), local_storage<Scalar>(d.b, me, "B"),
                           local_storage<Scalar>(d.c, me, "C")};
  fill_local(x.A, d.a, me, s.seed, exec::MatrixId::A);
  fill_local(x.B, d.b, me, s.seed, exec::MatrixId::B);
  fill_local(x.C, d.c, me, s.seed, exec::MatrixId::C);
  const auto alpha = exec::make_scalar<Scalar>(s.alpha, s.alpha_im);
  const auto beta = exec::make_scalar<Scalar>(s.beta, s.beta_im);
  product.multiply(x, alpha, beta);
  const double u = double(std::numeric_limits<exec::RealOf<Scalar>>::epsilon());
  double worst = 0;
  d.c.for_each_owned(me, [&](const exec::Rect& r) {
    for (std::int64_t j = r.j0; j < r.j1; ++j)
      for (std::int64_t i = r.i0; i < r.i1; ++i) {
        Acc sum = 0;
        double scale = 0;
        for (std::int64_t l = 0; l < s.k; ++l) {
          const Acc a = op_element<Scalar>(s.seed, exec::MatrixId::A, s.op_a, i, l);
          const Acc b = op_element<Scalar>(s.seed, exec::MatrixId::B, s.op_b, l, j);
          sum += a * b;
          scale += std::abs(a) * std::abs(b);
        }
        const Acc c0 = acc(exec::element<Scalar>(s.seed, exec::MatrixId::C, i, j));
        const Acc ref = acc(alpha) * sum + acc(beta) * c0;
        const double bound = 8.0 * double(s.k + 4) * u *
                             (std::abs(acc(alpha)) * scale + std::abs(acc(beta)) * std::abs(c0));
        const double err = std::abs(acc(x.C(std::size_t(d.c.offset(i, j)))) - ref);
        worst = std::max(worst, err == err ? err / bound : std::numeric_limits<double>::infinity());
      }
  });
  return world().allreduce_max(worst);
}

template <class Scalar>
void every_op_pair() {
  Processors<Scalar> p;
  const auto locate = [](const std::string& key) { return key; };
  int cases = 0;
  for (bool aligned : {false, true})
    for (Op op_a : kOps)
      for (Op op_b : kOps) {
        SCOPED_TRACE(name_of(op_a, op_b, aligned));
        const DistSettings s = settings<Scalar>(op_a, op_b, aligned);
        EXPECT_LE(product_error<Scalar>(s, p.procs), 1.0);

        const DistOutcome good = run_distributed<Scalar>(s, world(), p.procs, locate);
        EXPECT_TRUE(good.validated && good.validation.passed && good.validation.full_performed &&
                    good.validation.full_passed && good.validation.sampled_passed);
        if (world().rank() == 0) {
          ASSERT_EQ(int(good.per_rank.size()), world().size());
          for (std::size_t r = 0; r < good.per_rank.size(); ++r)
            EXPECT_EQ(good.per_rank[r].bytes.recv_mpi,
                      good.partition.traffic[r].received() * double(sizeof(Scalar)))
                << "rank " << r;
        }

        for (exec::Fault f : {exec::Fault::drop_task, exec::Fault::corrupt}) {
          DistSettings bad = s;
          bad.fault = f;
          // A piece one tile deep has only steps that start its C: whole boxes of a deeper
          // product leave the first rank with work a task to drop.
          if (f == exec::Fault::drop_task) bad.k = 3 * kK, bad.slabs_per_box = 1;
          const DistOutcome out = run_distributed<Scalar>(bad, world(), p.procs, locate);
          EXPECT_TRUE(out.validated) << exec::to_string(f);
          EXPECT_FALSE(out.validation.passed) << exec::to_string(f) << " was not caught";
        }
        ++cases;
      }
  EXPECT_EQ(cases, 18);
}

TEST(OpsAcrossRanks, Float) { every_op_pair<float>(); }
TEST(OpsAcrossRanks, Double) { every_op_pair<double>(); }
TEST(OpsAcrossRanks, ComplexFloat) { every_op_pair<Kokkos::complex<float>>(); }
TEST(OpsAcrossRanks, ComplexDouble) { every_op_pair<Kokkos::complex<double>>(); }

}  // namespace
}  // namespace cuboid::mpi
