// The local multiply: planning several products within every budget, the errors it names by
// setting, the GEMM options it refuses for now, and products that validate whatever the schedule
// and the ops.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <string>
#include <vector>

#include "exec/fault.hpp"
#include "exec/validate.hpp"
#include "local_options.hpp"
#include "pipeline/local_multiply.hpp"
#include "util/error.hpp"

using namespace cuboid;

namespace {

// The processors with memory of their own: the staged backend, and the device backend over
// the emulated device runtime.
class OnCopying : public ::testing::TestWithParam<const char*> {
 protected:
  std::vector<platform::ProcessorSpec> host_and_copying() const {
    return platform::resolve_processors({"host", GetParam()}, "test");
  }
};

std::string key_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const KeyedError& e) {
    return e.key;
  }
  return "<no KeyedError>";
}

TEST_P(OnCopying, PlansSeveralProductsWithinEveryBudget) {
  const auto specs = host_and_copying();
  // Elements: the staging ring where it counts (staged), and well below what the largest piece
  // would want beside it.
  const std::int64_t budget = exec::buffer_cost(specs[1], 8).fixed + 40000;
  pipeline::LocalMultiply<double> lm(specs, {1.0, 1.0}, options_for(specs, budget, 8));
  const std::vector<pipeline::Product> products = {
      {160, 96, 128, 16, true, false}, {64, 200, 48, 16, false, true}, {30, 30, 300, 16}};
  const auto plans = lm.plan(products);
  ASSERT_EQ(plans.size(), products.size());
  exec::ProcessorPlan all;
  for (const auto& p : plans) {
    EXPECT_EQ(p.steps.m, p.product.m);
    EXPECT_EQ(p.steps.k, p.product.k);
    exec::widen_needs(all, p.steps.processors[1]);
  }
  // The copying processor's buffers, sized for the largest steps of all products, fit its budget.
  EXPECT_LE(exec::buffer_elements(all, exec::buffer_cost(specs[1], 8)), budget);
  EXPECT_GT(lm.host_buffers(plans).copying_bytes, 0.0);
}

TEST_P(OnCopying, NamesTheSettingAtFault) {
  const auto specs = host_and_copying();
  pipeline::LocalMultiply<double> tiny(specs, {1.0, 1.0}, options_for(specs, 10, 8));
  EXPECT_EQ(key_of([&] {
              tiny.plan(pipeline::Product{256, 256, 256, 64});
            }),
            pipeline::setting::memory_budget);
  EXPECT_NO_THROW(pipeline::require_supported({Op::transpose, Op::conjugate_transpose, 4, 4, 4},
                                              ScalarType::float32));
  EXPECT_NO_THROW(
      pipeline::require_supported({Op::none, Op::none, 4, 4, 4}, ScalarType::complex_float64));
  EXPECT_THROW(pipeline::require_supported({Op::none, Op::none, -1, 4, 4}, ScalarType::float64),
               std::invalid_argument);
  EXPECT_NO_THROW(pipeline::require_supported({Op::none, Op::none, 4, 5, 6}, ScalarType::float64));
}

TEST(LocalMultiply, RefusesMatricesOfAnotherShapeThanTheirOps) {
  const auto specs = platform::resolve_processors({"host"}, "test");
  pipeline::LocalMultiply<double> lm(specs, {1.0}, options_for(specs, 0, 8));
  const auto plan = lm.plan(pipeline::Product{32, 24, 16, 16});
  exec::HostMatrix<double> A("A", 32, 16), B("B", 16, 24), C("C", 32, 24), Bt("Bt", 24, 16);
  EXPECT_NO_THROW(lm.multiply(plan, A, B, C, 1.0, 0.0));
  EXPECT_THROW(lm.multiply(plan, A, Bt, C, 1.0, 0.0), std::invalid_argument);
  pipeline::Product t{32, 24, 16, 16};
  t.op_b = Op::transpose;
  const auto transposed = lm.plan(t);
  EXPECT_NO_THROW(lm.multiply(transposed, A, Bt, C, 1.0, 0.0));
  EXPECT_THROW(lm.multiply(transposed, A, B, C, 1.0, 0.0), std::invalid_argument);
}

TEST(LocalMultiply, ParsesOpsAsBlasDoesAndCountsFlopsTheLapackWay) {
  EXPECT_EQ(parse_op('n'), Op::none);
  EXPECT_EQ(parse_op('T'), Op::transpose);
  EXPECT_EQ(parse_op('c'), Op::conjugate_transpose);
  EXPECT_FALSE(parse_op('x').has_value());
  EXPECT_EQ(gemm_flops(ScalarType::float64, 2, 3, 4), 48.0);
  EXPECT_EQ(gemm_flops(ScalarType::complex_float32, 2, 3, 4), 192.0);
}

// Every schedule gives a product within the validation bound, and stealing plans cut steps.
TEST_P(OnCopying, MultipliesWithEverySchedule) {
  const auto specs = host_and_copying();
  const std::int64_t m = 150, n = 130, k = 170, tile = 16;
  exec::HostMatrix<double> A("A", m, k), B("B", k, n), C0("C0", m, n), C("C", m, n);
  exec::fill_random(A, 3, exec::MatrixId::A);
  exec::fill_random(B, 3, exec::MatrixId::B);
  exec::fill_random(C0, 3, exec::MatrixId::C);
  for (exec::StealPolicy s :
       {exec::StealPolicy::static_plan, exec::StealPolicy::random, exec::StealPolicy::cheapest}) {
    auto o = options_for(specs, exec::buffer_cost(specs[1], 8).fixed + (1 << 20), 8);
    o.schedule = s;
    pipeline::LocalMultiply<double> lm(specs, {1.0, 1.0}, o);
    const auto plan = lm.plan(pipeline::Product{m, n, k, tile});
    EXPECT_EQ(plan.steps.shared_steps, s != exec::StealPolicy::static_plan);
    EXPECT_EQ(plan.task_tiles > 0, s != exec::StealPolicy::static_plan);
    lm.reserve(plan);
    Kokkos::deep_copy(C, C0);
    const auto res = lm.multiply(plan, A, B, C, 1.5, -0.5);
    ASSERT_EQ(res.workers.size(), 2u);
    EXPECT_EQ(res.workers[0].flops + res.workers[1].flops, 2.0 * m * n * k);
    const auto v = exec::validate(A, B, C0, C, 1.5, -0.5, 2);
    EXPECT_TRUE(v.passed) << exec::to_string(s) << ": error " << v.error << " bound " << v.bound;
  }
}

// Every op pair, in every scalar type, on the host and a processor that copies panels: the
// product matches a reference summed in long double from the stored elements (conjugated for
// 'C'), and validates with the ops; a dropped task is seen. Complex types take complex alpha and
// beta.
template <class Scalar>
std::complex<long double> wide(const Scalar& x) {
  return {(long double)exec::real_part(x), (long double)exec::imag_part(x)};
}

template <class Scalar>
void every_op_pair(const std::vector<platform::ProcessorSpec>& specs) {
  const std::int64_t m = 70, n = 50, k = 90, tile = 16;
  const Op ops[3] = {Op::none, Op::transpose, Op::conjugate_transpose};
  const Scalar alpha = exec::make_scalar<Scalar>(1.5, -0.75),
               beta = exec::make_scalar<Scalar>(-0.5, 0.25);
  for (Op oa : ops)
    for (Op ob : ops) {
      const bool ta = oa != Op::none, tb = ob != Op::none;
      exec::HostMatrix<Scalar> A("A", ta ? k : m, ta ? m : k), B("B", tb ? n : k, tb ? k : n),
          C0("C0", m, n), C("C", m, n);
      exec::fill_random(A, 5, exec::MatrixId::A);
      exec::fill_random(B, 5, exec::MatrixId::B);
      exec::fill_random(C0, 5, exec::MatrixId::C);
      auto o = options_for(specs, exec::buffer_cost(specs[1], sizeof(Scalar)).fixed + (1 << 20),
                           sizeof(Scalar));
      pipeline::LocalMultiply<Scalar> lm(specs, {1.0, 1.0}, o);
      pipeline::Product product{m, n, k, tile};
      product.op_a = oa, product.op_b = ob;
      auto plan = lm.plan(product);
      Kokkos::deep_copy(C, C0);
      lm.multiply(plan, A, B, C, alpha, beta);
      const std::string what = std::string(to_string(scalar_type_of<Scalar>())) + " " +
                               std::string(to_string(oa)) + std::string(to_string(ob));
      auto op = [](Op o, std::complex<long double> x) {
        return o == Op::conjugate_transpose ? std::conj(x) : x;
      };
      double worst = 0;
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < m; ++i) {
          std::complex<long double> sum = 0;
          for (std::int64_t l = 0; l < k; ++l)
            sum += op(oa, wide(ta ? A(l, i) : A(i, l))) * op(ob, wide(tb ? B(j, l) : B(l, j)));
          const std::complex<long double> want = wide(alpha) * sum + wide(beta) * wide(C0(i, j));
          worst = std::max(worst, double(std::abs(want - wide(C(i, j)))));
        }
      EXPECT_LT(worst, 64 * k * std::numeric_limits<exec::RealOf<Scalar>>::epsilon()) << what;
      const kokkos_ext::Ops kops{char(oa), char(ob)};
      const auto v = exec::validate(A, B, C0, C, alpha, beta, 2, kops);
      EXPECT_TRUE(v.passed) << what << ": error " << v.error << " bound " << v.bound;
      // One task left out: the check must see it.
      ASSERT_TRUE(exec::drop_one_task(plan.steps).has_value()) << what;
      Kokkos::deep_copy(C, C0);
      lm.multiply(plan, A, B, C, alpha, beta);
      EXPECT_FALSE(exec::validate(A, B, C0, C, alpha, beta, 2, kops).passed) << what;
    }
}

TEST_P(OnCopying, EveryOpPairInEveryType) {
  every_op_pair<double>(host_and_copying());
  every_op_pair<float>(host_and_copying());
  every_op_pair<Kokkos::complex<double>>(host_and_copying());
  every_op_pair<Kokkos::complex<float>>(host_and_copying());
}

INSTANTIATE_TEST_SUITE_P(Kinds, OnCopying, ::testing::Values("staged", "emulated"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace

// With a processor that copies over a slow link, cutting by the GEMM rates alone floods it; the
// flops+link model re-cuts by the rates each processor reaches and keeps the cut that finishes
// first. (Times need not end equal: a smaller zone of another shape can cost as many copies.)
TEST(LocalMultiply, TheLinkModelCutsByWhatEachProcessorReaches) {
  const auto specs = platform::resolve_processors({"host", "staged"}, "test");
  const std::int64_t budget = exec::buffer_cost(specs[1], 8).fixed + (std::int64_t(1) << 24);
  const std::vector<exec::ProcessorRate> rates = {{100, 0, 0}, {2000, 4, 4}};
  const pipeline::Product product{4096, 4096, 4096, 256, true, false};

  pipeline::LocalOptions flops = options_for(specs, budget, 8);
  const pipeline::LocalMultiply<double> by_flops(specs, {100, 2000}, flops);
  const auto a = by_flops.plan(product);
  const auto flops_model = exec::predict(a.steps, rates, 8);
  // The flops model's own prediction is each zone at its speed: it agrees with itself.
  EXPECT_NEAR(a.prediction.seconds[0], a.prediction.seconds[1], 0.05 * a.prediction.total_s);

  pipeline::LocalOptions linked = flops;
  linked.rates = rates;
  const pipeline::LocalMultiply<double> by_link(specs, {100, 2000}, linked);
  const auto b = by_link.plan(product);
  ASSERT_EQ(b.prediction.seconds.size(), 2u);
  EXPECT_LT(b.prediction.total_s, 0.9 * flops_model.total_s);
  // The copying processor was given less than its GEMM rate would say.
  EXPECT_LT(b.speeds[1] / b.speeds[0], 0.9 * 20.0);
  EXPECT_LT(b.steps.processors[1].flops, a.steps.processors[1].flops);
  // The prediction is the model's own for the steps it keeps.
  EXPECT_DOUBLE_EQ(exec::predict(b.steps, rates, 8).total_s, b.prediction.total_s);
}

// A processor that would slow the rest is left out: beside a copying processor 600 times faster
// whose link bounds it, the host's sliver only cuts the other's zone into more steps; the model
// predicts the fast one alone finishes sooner, and the plan gives the host nothing. With rates
// that make the host worth it, it keeps its share.
TEST(LocalMultiply, AProcessorThatSlowsTheRestIsLeftOut) {
  const auto specs = platform::resolve_processors({"host", "staged"}, "test");
  const std::int64_t budget = exec::buffer_cost(specs[1], 8).fixed + (std::int64_t(1) << 27);
  const pipeline::Product product{8192, 8192, 8192, 1024, false, false};
  pipeline::LocalOptions o = options_for(specs, budget, 8);
  o.rates = {{100, 0, 0}, {60000, 30, 55}};
  const pipeline::LocalMultiply<double> lm(specs, {100, 60000}, o);
  const auto lp = lm.plan(product);
  EXPECT_EQ(lp.steps.processors[0].flops, 0.0);
  EXPECT_TRUE(lp.zones[0].empty());
  EXPECT_EQ(lp.speeds[0], 0.0);
  EXPECT_DOUBLE_EQ(lp.steps.processors[1].flops, 2.0 * 8192.0 * 8192.0 * 8192.0);
  // Both kept, as a flops cut would: the model says slower.
  pipeline::LocalOptions flops = options_for(specs, budget, 8);
  const auto both = pipeline::LocalMultiply<double>(specs, {100, 60000}, flops).plan(product);
  ASSERT_GT(both.steps.processors[0].flops, 0.0);
  EXPECT_LT(lp.prediction.total_s, exec::predict(both.steps, o.rates, 8).total_s);

  // A plan with a processor left out runs: the other computes everything, and it validates.
  {
    const pipeline::Product small{300, 260, 280, 32, false, false};
    pipeline::LocalOptions so = options_for(specs, budget, 8);
    so.rates = {{0.01, 0, 0}, {60000, 30, 55}};
    pipeline::LocalMultiply<double> run(specs, {0.01, 60000}, so);
    const auto plan = run.plan(small);
    ASSERT_EQ(plan.steps.processors[0].flops, 0.0);
    exec::HostMatrix<double> A("A", 300, 280), B("B", 280, 260), C0("C0", 300, 260),
        C("C", 300, 260);
    exec::fill_random(A, 4, exec::MatrixId::A);
    exec::fill_random(B, 4, exec::MatrixId::B);
    exec::fill_random(C0, 4, exec::MatrixId::C);
    Kokkos::deep_copy(C, C0);
    const auto res = run.multiply(plan, A, B, C, 1.5, -0.5);
    EXPECT_EQ(res.workers[0].steps, 0);
    EXPECT_TRUE(exec::validate(A, B, C0, C, 1.5, -0.5, 2).passed);
  }

  // A host a third of the copying one's speed, over a slow link: it keeps a share.
  o.rates = {{20000, 0, 0}, {60000, 30, 55}};
  const auto kept = pipeline::LocalMultiply<double>(specs, {20000, 60000}, o).plan(product);
  EXPECT_GT(kept.steps.processors[0].flops, 0.0);
  EXPECT_GT(kept.steps.processors[1].flops, 0.0);
}
