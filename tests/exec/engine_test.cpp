// The engine against an independent triple loop: every partition algorithm and
// discretisation, one to three processors with separate memories, odd sizes, alpha/beta cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <vector>

#include "exec/backends.hpp"
#include "exec/calibrate.hpp"
#include "exec/engine.hpp"
#include "exec/validate.hpp"
#include "partition/strategy.hpp"
#include "util/error.hpp"

using namespace cuboid;

namespace {

// The processors with memory of their own run the same tests: "staged" (the staged backend)
// and "emulated" (the device backend over the emulated device runtime), each copying straight
// from and to the registered arrays, and with "_ring" through the staging ring only
// (platform.register_host = false). Test cases name "staged" and "staged:N"; a parameterized
// test runs them with its parameter's kind instead.
std::string g_copying = "staged";
bool g_register = true;

class OnCopying : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    const std::string p = GetParam();
    g_copying = p.substr(0, p.find('_'));
    g_register = p.find("_ring") == std::string::npos;
  }
  void TearDown() override { g_copying = "staged", g_register = true; }
};

std::vector<platform::ProcessorSpec> resolve(std::vector<std::string> names) {
  for (auto& name : names)
    if (name.rfind("staged", 0) == 0) name = g_copying + name.substr(6);
  auto specs = platform::resolve_processors(names, "test");
  for (auto& s : specs) s.register_host = g_register;
  return specs;
}

bool copies(platform::ProcessorKind kind) {
  return kind == platform::ProcessorKind::staged || kind == platform::ProcessorKind::emulated;
}

// The test mode that shakes out missing waits: random copy delays on a staged processor, lazy
// queues (every operation as late as its waits allow) on an emulated one.
void shake(platform::ProcessorSpec& s, double jitter_us) {
  if (s.kind == platform::ProcessorKind::staged) s.copy_jitter_us = jitter_us;
  if (s.kind == platform::ProcessorKind::emulated) s.lazy_queues = jitter_us > 0;
}

struct Case {
  std::int64_t m, n, k, tile;
  double alpha, beta;
  bool nan_c = false;
  std::int64_t budget = 0;  // elements per staged processor; 0: large enough
};

template <class Scalar>
exec::HostMatrix<Scalar> naive(const exec::HostMatrix<Scalar>& A, const exec::HostMatrix<Scalar>& B,
                               const exec::HostMatrix<Scalar>& C0, double alpha, double beta) {
  exec::HostMatrix<Scalar> R("R", C0.extent(0), C0.extent(1));
  for (std::size_t j = 0; j < R.extent(1); ++j)
    for (std::size_t i = 0; i < R.extent(0); ++i) {
      long double acc = 0;
      for (std::size_t l = 0; l < A.extent(1); ++l) acc += (long double)A(i, l) * B(l, j);
      R(i, j) = Scalar(alpha * double(acc) + (beta == 0 ? 0.0 : beta * double(C0(i, j))));
    }
  return R;
}

// Runs the product with the given processors and partition; returns the largest elementwise
// error relative to the naive result and checks the validator agrees.
template <class Scalar>
double run_case(const Case& c, const std::vector<std::string>& names, partition::Algorithm a,
                partition::Discretization d, const std::vector<double>& speeds) {
  auto specs = resolve(names);
  std::vector<std::unique_ptr<exec::Worker<Scalar>>> workers;
  for (const auto& s : specs) workers.push_back(exec::make_worker<Scalar>(s));
  const partition::TileExtent t{(c.m + c.tile - 1) / c.tile, (c.n + c.tile - 1) / c.tile,
                                (c.k + c.tile - 1) / c.tile};
  exec::PlanOptions o;
  o.beta_is_one = c.beta == 1.0;
  o.beta_is_zero = c.beta == 0.0;
  for (const auto& s : specs)
    o.budget_elements.push_back(s.kind == platform::ProcessorKind::host ? 0 : c.budget);
  auto plan =
      exec::make_plan(partition::partition_tiles(a, d, speeds, t), c.m, c.n, c.k, c.tile, o);
  exec::Engine<Scalar> engine(std::move(workers));
  engine.reserve(plan);

  exec::HostMatrix<Scalar> A("A", c.m, c.k), B("B", c.k, c.n), C0("C0", c.m, c.n), C("C", c.m, c.n);
  exec::fill_random(A, 11, exec::MatrixId::A);
  exec::fill_random(B, 11, exec::MatrixId::B);
  if (c.nan_c)
    Kokkos::deep_copy(C0, std::numeric_limits<Scalar>::quiet_NaN());
  else
    exec::fill_random(C0, 11, exec::MatrixId::C);
  const auto ref = naive(A, B, C0, c.alpha, c.beta);
  double worst = 0;
  for (int rep = 0; rep < 2; ++rep) {  // buffers are reused across repetitions
    Kokkos::deep_copy(C, C0);
    engine.run(plan, A, B, C, Scalar(c.alpha), Scalar(c.beta));
    for (std::size_t j = 0; j < C.extent(1); ++j)
      for (std::size_t i = 0; i < C.extent(0); ++i) {
        const double e = std::abs(double(C(i, j)) - double(ref(i, j)));
        worst = std::isnan(e) ? std::numeric_limits<double>::infinity() : std::max(worst, e);
      }
  }
  const auto v = exec::validate(A, B, C0, C, Scalar(c.alpha), Scalar(c.beta), int(specs.size()));
  EXPECT_TRUE(v.passed) << "error " << v.error << " bound " << v.bound;
  return worst;
}

const std::vector<std::vector<std::string>> kProcessorSets = {
    {"host"}, {"host", "staged"}, {"staged", "host", "staged:1"}};

}  // namespace

TEST_P(OnCopying, EveryAlgorithmDiscretizationAndProcessorCount) {
  const Case c{31, 32, 33, 8, 1.0, 0.5};
  for (auto name : partition::algorithm_names()) {
    for (auto d : {partition::Discretization::rounded, partition::Discretization::precise}) {
      for (const auto& names : kProcessorSets) {
        std::vector<double> speeds;
        for (std::size_t q = 0; q < names.size(); ++q) speeds.push_back(1.0 + 2.0 * double(q));
        SCOPED_TRACE(std::string(name) + "/" + std::string(partition::to_string(d)) +
                     "/p=" + std::to_string(names.size()));
        EXPECT_LT(run_case<double>(c, names, *partition::parse_algorithm(name), d, speeds), 1e-12);
      }
    }
  }
}

TEST_P(OnCopying, AlphaBetaCases) {
  const std::vector<std::pair<double, double>> ab = {{1, 0}, {2, -1}, {-0.5, 1}, {0.25, 3}};
  for (auto [alpha, beta] : ab) {
    SCOPED_TRACE("alpha=" + std::to_string(alpha) + " beta=" + std::to_string(beta));
    const Case c{37, 29, 41, 8, alpha, beta};
    EXPECT_LT(run_case<double>(c, {"host", "staged"}, partition::Algorithm::nrrp3d,
                               partition::Discretization::precise, {1, 2}),
              1e-12);
  }
}

TEST_P(OnCopying, BetaZeroClearsNaN) {
  for (auto a :
       {partition::Algorithm::nrrp3d, partition::Algorithm::grid, partition::Algorithm::column}) {
    const Case c{33, 35, 40, 8, 1.5, 0.0, true};
    EXPECT_LT(run_case<double>(c, {"host", "staged", "staged:1"}, a,
                               partition::Discretization::precise, {1, 1, 1}),
              1e-12)
        << partition::to_string(a);
  }
}

TEST_P(OnCopying, InnerDimensionSmallerThanOneTile) {
  const Case c{20, 17, 5, 8, 1.0, 1.0};
  EXPECT_LT(run_case<double>(c, {"host", "staged"}, partition::Algorithm::slab,
                             partition::Discretization::rounded, {1, 1}),
            1e-13);
  const Case c3{20, 40, 3, 8, 2.0, 0.0};
  EXPECT_LT(run_case<double>(c3, {"host", "staged"}, partition::Algorithm::nrrp3d,
                             partition::Discretization::precise, {3, 1}),
            1e-13);
}

TEST_P(OnCopying, StreamsPiecesLargerThanTheBudget) {
  // 4000 elements of buffers: every staged piece is cut into several sub-blocks and panels.
  const Case c{64, 48, 120, 8, 1.0, 2.0, false, 4000};
  EXPECT_LT(run_case<double>(c, {"staged", "host"}, partition::Algorithm::nrrp3d,
                             partition::Discretization::precise, {2, 1}),
            1e-12);
}

TEST_P(OnCopying, SinglePrecision) {
  const Case c{31, 32, 33, 8, 1.0, -1.0};
  EXPECT_LT(run_case<float>(c, {"host", "staged"}, partition::Algorithm::nrrp3d,
                            partition::Discretization::precise, {1, 1}),
            1e-4);
}

TEST_P(OnCopying, OneEngineRunsManyPlansWithinItsReservation) {
  // Pieces of different shapes (as the MPI runner has), each with partial buffers, run by one
  // engine: everything is allocated by reserve(), runs allocate nothing and stay correct.
  auto specs = resolve({"staged", "host", "staged:1"});
  std::vector<std::unique_ptr<exec::Worker<double>>> workers;
  for (const auto& s : specs) workers.push_back(exec::make_worker<double>(s));
  exec::Engine<double> engine(std::move(workers));
  struct Shape {
    std::int64_t m, n, k;
    partition::Algorithm a;
  };
  const std::vector<Shape> shapes = {{40, 24, 64, partition::Algorithm::nrrp3d},
                                     {16, 48, 32, partition::Algorithm::grid},
                                     {33, 35, 17, partition::Algorithm::slab}};
  std::vector<exec::Plan> plans;
  std::size_t with_partials = 0;
  for (const auto& sh : shapes) {
    const std::int64_t tile = 8;
    const partition::TileExtent t{(sh.m + tile - 1) / tile, (sh.n + tile - 1) / tile,
                                  (sh.k + tile - 1) / tile};
    exec::PlanOptions o;
    o.budget_elements = {3000, 0, 2000};
    auto zones =
        partition::partition_tiles(sh.a, partition::Discretization::precise, {2, 1, 1.5}, t);
    plans.push_back(exec::make_plan(zones, sh.m, sh.n, sh.k, tile, o));
    with_partials += plans.back().partials.empty() ? 0 : 1;
    engine.reserve(plans.back());
  }
  ASSERT_GT(with_partials, 0u) << "the shapes must exercise partial buffers";
  const double reserved = engine.reserved_bytes();
  EXPECT_GT(reserved, 0);
  for (int round = 0; round < 2; ++round) {
    for (std::size_t p = 0; p < plans.size(); ++p) {
      const auto& sh = shapes[p];
      exec::HostMatrix<double> A("A", sh.m, sh.k), B("B", sh.k, sh.n), C0("C0", sh.m, sh.n),
          C("C", sh.m, sh.n);
      exec::fill_random(A, 5 + p, exec::MatrixId::A);
      exec::fill_random(B, 5 + p, exec::MatrixId::B);
      exec::fill_random(C0, 5 + p, exec::MatrixId::C);
      Kokkos::deep_copy(C, C0);
      int polls = 0;
      engine.run(plans[p], A, B, C, 1.5, -0.5, [&] { return ++polls > 0; });
      EXPECT_GE(polls, 1) << "poll is called while the workers compute";
      const auto ref = naive(A, B, C0, 1.5, -0.5);
      double worst = 0;
      for (std::int64_t j = 0; j < sh.n; ++j)
        for (std::int64_t i = 0; i < sh.m; ++i)
          worst = std::max(worst, std::abs(C(i, j) - ref(i, j)));
      EXPECT_LT(worst, 1e-12) << "plan " << p << " round " << round;
      EXPECT_EQ(engine.reserved_bytes(), reserved) << "a reserved plan allocated during its run";
    }
  }
}

TEST(Engine, StagedBuffersStayWithinTheMemoryBudget) {
  // What the staged worker really allocates (panels, C blocks, C staging, input ring) for
  // plans made with its own buffer cost never exceeds the budget, for several shapes at once.
  auto specs = platform::resolve_processors({"staged", "host"}, "test");
  const exec::BufferCost cost = exec::buffer_cost(specs[0], sizeof(double));
  EXPECT_EQ(cost.c_blocks, 4) << "a staged processor's C staging is in the same memory";
  for (const std::int64_t budget_extra : {20000, 150000}) {
    const std::int64_t budget = cost.fixed + budget_extra;
    auto staged = exec::make_worker<double>(specs[0]);
    for (const auto& [m, n, k] :
         {std::array<std::int64_t, 3>{300, 40, 200}, std::array<std::int64_t, 3>{40, 280, 350},
          std::array<std::int64_t, 3>{200, 200, 64}}) {
      const std::int64_t tile = 16;
      const partition::TileExtent t{(m + tile - 1) / tile, (n + tile - 1) / tile,
                                    (k + tile - 1) / tile};
      exec::PlanOptions o;
      o.budget_elements = {budget, 0};
      o.buffer_cost = {cost, exec::BufferCost{}};
      o.min_panels = {4, 1};
      const auto plan = exec::make_plan(
          partition::partition_tiles(partition::Algorithm::nrrp3d,
                                     partition::Discretization::precise, {1.0, 1.0}, t),
          m, n, k, tile, o);
      staged->prepare(plan.processors[0]);
      EXPECT_LE(exec::buffer_elements(plan.processors[0], cost), budget);
    }
    EXPECT_GT(staged->reserved_bytes(), 0);
    EXPECT_LE(staged->reserved_bytes(), double(budget) * sizeof(double))
        << "budget " << budget << " elements";
  }
}

TEST_P(OnCopying, PollFailureWaitsForWorkersThenPropagates) {
  auto specs = resolve({"host", "staged"});
  std::vector<std::unique_ptr<exec::Worker<double>>> workers;
  for (const auto& s : specs) workers.push_back(exec::make_worker<double>(s));
  exec::Engine<double> engine(std::move(workers));
  const std::int64_t m = 64;
  exec::PlanOptions o;
  o.budget_elements = {0, 1 << 20};
  auto plan = exec::make_plan(
      partition::partition_tiles(partition::Algorithm::nrrp3d, partition::Discretization::precise,
                                 {1, 1}, {8, 8, 8}),
      m, m, m, 8, o);
  exec::HostMatrix<double> A("A", m, m), B("B", m, m), C("C", m, m);
  EXPECT_THROW(
      engine.run(plan, A, B, C, 1.0, 0.0, []() -> bool { throw std::runtime_error("poll"); }),
      std::runtime_error);
  // The engine is still usable: its lanes finished the aborted run.
  exec::fill_random(A, 2, exec::MatrixId::A);
  exec::fill_random(B, 2, exec::MatrixId::B);
  Kokkos::deep_copy(C, 0.0);
  engine.run(plan, A, B, C, 1.0, 0.0);
  const auto ref = naive(A, B, C, 1.0, 0.0);
  double worst = 0;
  for (std::int64_t j = 0; j < m; ++j)
    for (std::int64_t i = 0; i < m; ++i) worst = std::max(worst, std::abs(C(i, j) - ref(i, j)));
  EXPECT_LT(worst, 1e-12);
}

namespace {

// The plan's steps, counting what the worker reports done (from whichever thread).
class CountingSource final : public exec::StepSource {
 public:
  CountingSource(const std::vector<exec::Step>& steps) : steps_(steps, 0) {}
  bool next(exec::StepRef& out) override { return steps_.next(out); }
  void done(double flops) override {
    std::lock_guard<std::mutex> lock(m_);
    ++reports, reported += flops;
  }
  int reports = 0;
  double reported = 0;

 private:
  exec::PlanSteps steps_;
  std::mutex m_;
};

}  // namespace

TEST_P(OnCopying, WorkersReportEveryGemmDoneOnce) {
  // Stealing estimates what a processor has left from these reports: each worker reports each
  // step's GEMM once, all of them by the time it returns (in the test mode that runs the
  // reports as late as it can).
  for (const char* name : {"host", "staged"}) {
    auto specs = resolve({name});
    shake(specs[0], 300);
    auto worker = exec::make_worker<double>(specs[0]);
    const std::int64_t m = 96;
    exec::PlanOptions o;
    const exec::BufferCost cost = exec::buffer_cost(specs[0], sizeof(double));
    // Small buffers for the staged processor: many steps, panels replaced as they go.
    o.budget_elements = {specs[0].kind == platform::ProcessorKind::host ? 0 : cost.fixed + 6000};
    o.buffer_cost = {cost};
    o.min_panels = {4};
    const auto plan = exec::make_plan(
        partition::partition_tiles(partition::Algorithm::nrrp3d, partition::Discretization::precise,
                                   {1}, {6, 6, 6}),
        m, m, m, 16, o);
    worker->prepare(plan.processors[0]);
    exec::RunContext<double> ctx;
    ctx.A = exec::HostMatrix<double>("A", m, m), ctx.B = exec::HostMatrix<double>("B", m, m);
    ctx.C = exec::HostMatrix<double>("C", m, m);
    CountingSource source(plan.processors[0].steps);
    const exec::WorkerStats st = worker->execute(source, ctx, exec::now_seconds());
    ASSERT_GT(st.steps, 1) << name;
    EXPECT_EQ(source.reports, st.steps) << name;
    EXPECT_DOUBLE_EQ(source.reported, st.flops) << name;
    EXPECT_DOUBLE_EQ(source.reported, 2.0 * m * m * m) << name;
  }
}

TEST(Engine, RejectsAPlanForOtherProcessorsOrMatrices) {
  auto specs = platform::resolve_processors({"host"}, "test");
  std::vector<std::unique_ptr<exec::Worker<double>>> workers;
  workers.push_back(exec::make_worker<double>(specs[0]));
  exec::Engine<double> engine(std::move(workers));
  auto two = exec::make_plan(
      partition::partition_tiles(partition::Algorithm::slab, partition::Discretization::rounded,
                                 {1, 1}, {2, 2, 2}),
      16, 16, 16, 8, {});
  EXPECT_THROW(engine.reserve(two), std::invalid_argument);
  auto one = exec::make_plan(
      partition::partition_tiles(partition::Algorithm::slab, partition::Discretization::rounded,
                                 {1}, {2, 2, 2}),
      16, 16, 16, 8, {});
  exec::HostMatrix<double> A("A", 16, 16), B("B", 16, 16), C("C", 16, 8);
  EXPECT_THROW(engine.run(one, A, B, C, 1.0, 0.0), std::invalid_argument);
}

// --- ordering -------------------------------------------------------------------------------
// The staged processor's queues run on threads of their own and, in the jitter test mode, each
// copy starts after a random delay: a missing wait between the queues then lets a GEMM read a
// panel before it arrives, a copy overwrite a buffer still in use, or the host unpack a block
// not yet drained -- and the product comes out wrong or varies from run to run. Each wait of
// src/exec/staged_worker.hpp was removed in turn to check that one of these tests fails
// (scripts/remove-waits).

namespace {

struct OrderingCase {
  std::string name;
  std::int64_t m, n, k, tile;
  double alpha, beta;
  std::vector<std::string> processors;
  std::vector<partition::TileZone> zones;  // in tile coordinates, one per processor
  std::int64_t budget;                     // elements per staged processor
  std::int64_t block_tiles = 0;            // > 0: small blocks, k-panels as for stealing
};

std::vector<partition::TileZone> zones_of(partition::Algorithm a, const std::vector<double>& speeds,
                                          std::int64_t m, std::int64_t n, std::int64_t k,
                                          std::int64_t tile) {
  const partition::TileExtent t{(m + tile - 1) / tile, (n + tile - 1) / tile,
                                (k + tile - 1) / tile};
  return partition::partition_tiles(a, partition::Discretization::precise, speeds, t);
}

// Runs the case `runs` times with copy jitter; every product must match the naive one, and all
// must be bitwise equal. Returns the number of runs that failed either check.
int jittered_runs(const OrderingCase& c, int runs, double jitter_us) {
  auto specs = resolve(c.processors);
  std::vector<std::unique_ptr<exec::Worker<double>>> workers;
  exec::PlanOptions o;
  o.beta_is_one = c.beta == 1.0;
  o.beta_is_zero = c.beta == 0.0;
  o.block_tiles = c.block_tiles;
  for (auto& s : specs) {
    const bool staged = copies(s.kind);
    shake(s, jitter_us);
    workers.push_back(exec::make_worker<double>(s));
    o.budget_elements.push_back(staged ? c.budget : 0);
    if (c.block_tiles > 0) o.min_panels.push_back(staged ? 4 : 1);
  }
  const auto plan = exec::make_plan(c.zones, c.m, c.n, c.k, c.tile, o);
  exec::Engine<double> engine(std::move(workers));
  engine.reserve(plan);
  exec::HostMatrix<double> A("A", c.m, c.k), B("B", c.k, c.n), C0("C0", c.m, c.n), C("C", c.m, c.n),
      first("first", c.m, c.n);
  exec::fill_random(A, 17, exec::MatrixId::A);
  exec::fill_random(B, 17, exec::MatrixId::B);
  exec::fill_random(C0, 17, exec::MatrixId::C);
  const auto ref = naive(A, B, C0, c.alpha, c.beta);
  int bad = 0;
  for (int r = 0; r < runs; ++r) {
    Kokkos::deep_copy(C, C0);
    engine.run(plan, A, B, C, c.alpha, c.beta);
    double worst = 0;
    bool same = true;
    for (std::int64_t j = 0; j < c.n; ++j)
      for (std::int64_t i = 0; i < c.m; ++i) {
        const double e = std::abs(C(i, j) - ref(i, j));
        worst = std::isnan(e) ? std::numeric_limits<double>::infinity() : std::max(worst, e);
        if (r > 0 && std::memcmp(&C(i, j), &first(i, j), sizeof(double)) != 0) same = false;
      }
    if (r == 0) Kokkos::deep_copy(first, C);
    if (!(worst < 1e-12) || !same) {
      ++bad;
      ADD_FAILURE() << c.name << " run " << r << ": max error " << worst
                    << (same ? "" : ", not bitwise equal to run 0");
    }
  }
  return bad;
}

// Streaming: several C sub-blocks per piece, several k-panels per block, old C brought in
// (beta != 0), so every slot and every staging chunk is reused many times.
OrderingCase streamed_case() {
  OrderingCase c{"streamed", 96, 80, 160, 8, 1.0, 0.75, {"staged"}, {}, 2400};
  c.zones = zones_of(partition::Algorithm::slab, {1}, c.m, c.n, c.k, c.tile);
  return c;
}
// beta = 0: new blocks overwrite their slot without bringing C in.
OrderingCase overwrite_case() {
  OrderingCase c{"overwrite", 96, 80, 64, 8, 1.0, 0.0, {"staged"}, {}, 2400};
  c.zones = zones_of(partition::Algorithm::slab, {1}, c.m, c.n, c.k, c.tile);
  return c;
}
// k of one tile and a small budget: every step is a block of its own, so each slot is
// refilled while the block before last may still be draining from it -- overwritten by the
// GEMM (beta = 0) or by the old C brought in (beta != 0).
OrderingCase one_step_blocks_case(double beta) {
  OrderingCase c{"one-step-blocks", 96, 80, 8, 8, 1.0, beta, {"staged"}, {}, 1200};
  c.zones = zones_of(partition::Algorithm::slab, {1}, c.m, c.n, c.k, c.tile);
  return c;
}
// One C block computed by two pieces in a row (split along k): the second brings in the
// block the first has just drained.
OrderingCase same_block_case() {
  OrderingCase c{"same-block", 32, 24, 64, 8, 1.5, -0.5, {"staged"}, {}, 1 << 20};
  partition::TileZone z;
  for (std::int64_t l = 0; l < 8; l += 2) z.push_back(partition::TileBox{{0, 0, l}, {4, 3, l + 2}});
  c.zones = {z};
  return c;
}
// Small blocks, each one full-depth step: consecutive steps share their B panel (or, where a
// column band turns into the next, their A panel), which stays resident while the other
// panel's buffers are refilled and the C blocks come and go.
OrderingCase shared_panels_case() {
  OrderingCase c{"shared-panels", 96, 80, 48, 8, 1.0, 0.5, {"staged"}, {}, 1 << 20, 2};
  c.zones = zones_of(partition::Algorithm::slab, {1}, c.m, c.n, c.k, c.tile);
  return c;
}
// Two staged processors and the host with k split between them: partial buffers.
OrderingCase k_split_case() {
  OrderingCase c{"k-split", 64, 56, 96, 8, -1.0, 2.0, {"staged", "host", "staged:1"}, {}, 3000};
  c.zones = zones_of(partition::Algorithm::nrrp3d, {2, 1, 1.5}, c.m, c.n, c.k, c.tile);
  return c;
}

}  // namespace

TEST_P(OnCopying, OrderingStreamedBlocksUnderCopyJitter) {
  EXPECT_EQ(jittered_runs(streamed_case(), 4, 300), 0);
}

TEST_P(OnCopying, OrderingOverwrittenBlocksUnderCopyJitter) {
  EXPECT_EQ(jittered_runs(overwrite_case(), 4, 300), 0);
}

TEST_P(OnCopying, OrderingOneStepBlocksOverwrittenUnderCopyJitter) {
  EXPECT_EQ(jittered_runs(one_step_blocks_case(0.0), 6, 1000), 0);
}

TEST_P(OnCopying, OrderingOneStepBlocksBroughtInUnderCopyJitter) {
  EXPECT_EQ(jittered_runs(one_step_blocks_case(0.5), 6, 1000), 0);
}

TEST_P(OnCopying, OrderingSameBlockTwiceUnderCopyJitter) {
  EXPECT_EQ(jittered_runs(same_block_case(), 4, 300), 0);
}

TEST_P(OnCopying, OrderingSharedPanelsUnderCopyJitter) {
  EXPECT_EQ(jittered_runs(shared_panels_case(), 6, 300), 0);
}

TEST_P(OnCopying, OrderingPartialBuffersUnderCopyJitter) {
  EXPECT_EQ(jittered_runs(k_split_case(), 4, 300), 0);
}

TEST_P(OnCopying, OrderingTwentyJitteredRunsOfAFixedPlanAreBitwiseEqual) {
  // The host and a staged processor share the product; only the staged copies are jittered.
  OrderingCase c{"host+staged", 120, 104, 136, 8, 1.0, 1.0, {"host", "staged"}, {}, 4000};
  c.zones = zones_of(partition::Algorithm::nrrp3d, {1, 1}, c.m, c.n, c.k, c.tile);
  EXPECT_EQ(jittered_runs(c, 20, 200), 0);
}

TEST_P(OnCopying, StagedWorkerCopiesAPanelConsecutiveStepsShareOnce) {
  // Expected bytes in: each step's A and B panels unless one of the two last distinct panels of
  // that kind is the same block, and the old C where a chain brings it in.
  for (const std::int64_t block_tiles : {0, 2}) {
    OrderingCase c = block_tiles ? shared_panels_case() : streamed_case();
    auto specs = resolve(c.processors);
    std::vector<std::unique_ptr<exec::Worker<double>>> workers;
    workers.push_back(exec::make_worker<double>(specs[0]));
    exec::PlanOptions o;
    o.budget_elements.push_back(c.budget);
    o.block_tiles = block_tiles;
    o.min_panels.push_back(4);
    const auto plan = exec::make_plan(c.zones, c.m, c.n, c.k, c.tile, o);
    using Key = std::array<std::int64_t, 4>;
    std::array<std::array<Key, 2>, 2> held{};  // per kind, the two last distinct panels
    double expected = 0, unshared = 0;
    int shared = 0;
    for (const auto& st : plan.processors[0].steps) {
      const std::array<Key, 2> keys = {Key{st.c.i0, st.c.i1, st.l0, st.l1},
                                       Key{st.l0, st.l1, st.c.j0, st.c.j1}};
      const std::array<double, 2> sizes = {double(st.c.rows() * st.depth()),
                                           double(st.depth() * st.c.cols())};
      for (int kind = 0; kind < 2; ++kind) {
        auto& h = held[std::size_t(kind)];
        unshared += sizes[std::size_t(kind)];
        if (h[0] == keys[std::size_t(kind)] || h[1] == keys[std::size_t(kind)]) {
          ++shared;
          if (h[1] == keys[std::size_t(kind)]) std::swap(h[0], h[1]);
          continue;
        }
        expected += sizes[std::size_t(kind)];
        h[1] = h[0];
        h[0] = keys[std::size_t(kind)];
      }
      if (st.c_in) {
        expected += double(st.c.rows() * st.c.cols());
        unshared += double(st.c.rows() * st.c.cols());
      }
    }
    EXPECT_GT(shared, 0) << c.name << ": no two steps share a panel";
    exec::Engine<double> engine(std::move(workers));
    exec::HostMatrix<double> A("A", c.m, c.k), B("B", c.k, c.n), C("C", c.m, c.n);
    exec::fill_random(A, 5, exec::MatrixId::A);
    exec::fill_random(B, 5, exec::MatrixId::B);
    exec::fill_random(C, 5, exec::MatrixId::C);
    for (int rep = 0; rep < 2; ++rep) {  // nothing is kept from one run to the next
      const auto res = engine.run(plan, A, B, C, 1.0, c.beta);
      EXPECT_EQ(res.workers[0].h2d_bytes, expected * sizeof(double)) << c.name << " run " << rep;
      EXPECT_LT(res.workers[0].h2d_bytes, unshared * sizeof(double)) << c.name;
    }
  }
}

// --- work stealing ----------------------------------------------------------------------------
// A stolen unit runs the same GEMMs into the same destination in the same order, so every
// product of a stealing run must equal the static run of the same plan bit for bit (host and
// staged run the same BLAS, each step with its owner's GEMM cut) and pass validation. One
// processor is slowed (platform.slowdown) so that the others find work to steal.

namespace {

struct StealCase {
  std::string name;
  std::int64_t m, n, k, tile;
  double alpha, beta;
  std::vector<std::string> processors;
  std::vector<partition::TileZone> zones;  // in tile coordinates, one per processor
  std::vector<double> slowdown;            // per processor
  std::int64_t budget = 1 << 20;           // elements per staged processor for panels and C blocks
  std::int64_t block_tiles = 2;
  double jitter_us = 0;
  bool coarse_head = false;
};

struct StealTotals {
  std::vector<int> stolen, lost;  // steps, per processor, over all runs
  int bad = 0;                    // runs that differ from static or fail validation
};

StealTotals stealing_runs(const StealCase& c, int runs) {
  auto specs = resolve(c.processors);
  exec::PlanOptions o;
  o.beta_is_one = c.beta == 1.0;
  o.beta_is_zero = c.beta == 0.0;
  o.shared_steps = true;
  o.block_tiles = c.block_tiles;
  o.coarse_head = c.coarse_head;
  // The static reference runs at full speed: a slowdown only sleeps after each GEMM step, so
  // its product is the same, and a processor slowed far does not make the test slow.
  std::vector<std::unique_ptr<exec::Worker<double>>> workers, full_speed;
  for (std::size_t q = 0; q < specs.size(); ++q) {
    auto& s = specs[q];
    const bool staged = copies(s.kind);
    shake(s, c.jitter_us);
    full_speed.push_back(exec::make_worker<double>(s));
    s.slowdown = c.slowdown[q];
    workers.push_back(exec::make_worker<double>(s));
    const exec::BufferCost cost = exec::buffer_cost(s, sizeof(double));
    o.budget_elements.push_back(staged ? cost.fixed + c.budget : 0);  // besides the input ring
    o.min_panels.push_back(staged ? 4 : 1);
    o.buffer_cost.push_back(cost);
  }
  const auto plan = exec::make_plan(c.zones, c.m, c.n, c.k, c.tile, o);
  exec::Engine<double> engine(std::move(workers)), reference(std::move(full_speed));
  exec::HostMatrix<double> A("A", c.m, c.k), B("B", c.k, c.n), C0("C0", c.m, c.n), C("C", c.m, c.n),
      ref("ref", c.m, c.n);
  exec::fill_random(A, 23, exec::MatrixId::A);
  exec::fill_random(B, 23, exec::MatrixId::B);
  exec::fill_random(C0, 23, exec::MatrixId::C);
  Kokkos::deep_copy(ref, C0);
  reference.run(plan, A, B, ref, c.alpha, c.beta);  // static
  StealTotals t;
  t.stolen.assign(specs.size(), 0);
  t.lost.assign(specs.size(), 0);
  for (auto strategy : {exec::StealPolicy::random, exec::StealPolicy::cheapest}) {
    for (int r = 0; r < runs; ++r) {
      exec::ScheduleOptions so;
      so.policy = strategy;
      so.seed = std::uint64_t(r + 1);
      engine.set_schedule(so);
      Kokkos::deep_copy(C, C0);
      const auto res = engine.run(plan, A, B, C, c.alpha, c.beta);
      for (std::size_t q = 0; q < specs.size(); ++q) {
        t.stolen[q] += res.workers[q].stolen_steps;
        t.lost[q] += res.workers[q].lost_steps;
        // The engine passes each steal's record on, one per unit with the steps counted.
        int steps = 0;
        for (const exec::StealRecord& sr : res.workers[q].steals) steps += sr.steps;
        EXPECT_EQ(steps, res.workers[q].stolen_steps) << c.name << " processor " << q;
      }
      const bool same = std::memcmp(C.data(), ref.data(), C.span() * sizeof(double)) == 0;
      const auto v = exec::validate(A, B, C0, C, c.alpha, c.beta, int(specs.size()));
      if (!same || !v.passed) {
        ++t.bad;
        ADD_FAILURE() << c.name << " " << exec::to_string(strategy) << " run " << r
                      << (same ? "" : ": not bitwise equal to the static run")
                      << (v.passed ? "" : ": validation failed");
      }
    }
  }
  return t;
}

// Processor 0 takes the first half of k over all of C, processor 1 the second half: every
// step of processor 1 goes to a partial buffer (processor 0 owns every C tile).
std::vector<partition::TileZone> halves_of_k(std::int64_t m, std::int64_t n, std::int64_t k,
                                             std::int64_t tile) {
  const std::int64_t M = (m + tile - 1) / tile, N = (n + tile - 1) / tile,
                     K = (k + tile - 1) / tile;
  return {{partition::TileBox{{0, 0, 0}, {M, N, K / 2}}},
          {partition::TileBox{{0, 0, K / 2}, {M, N, K}}}};
}

}  // namespace

TEST_P(OnCopying, StealingPartialBuffersStolenFromASlowStagedProcessorAreBitwiseStatic) {
  // The staged processor is slowed: the host takes its partial-buffer units.
  StealCase c{"split-k, staged slowed", 96, 80, 128, 8, 1.0, 0.5, {"host", "staged"}, {}, {1, 4}};
  c.zones = halves_of_k(c.m, c.n, c.k, c.tile);
  c.budget = 3000;  // chains of several steps
  const auto t = stealing_runs(c, 3);
  EXPECT_EQ(t.bad, 0);
  EXPECT_GT(t.lost[1], 0) << "no partial-buffer step was stolen";
}

TEST_P(OnCopying, StealingDirectStepsStolenFromASlowHostAreBitwiseStatic) {
  // The host is slowed: the staged processor takes units that write C directly, bringing the
  // old C in (beta != 0) and draining it.
  // Slowed far beyond the staged processor's own overheads, which grow under sanitizers.
  StealCase c{"split-k, host slowed", 96, 80, 128, 8, -1.5, 0.75, {"host", "staged"}, {}, {500, 1}};
  c.zones = halves_of_k(c.m, c.n, c.k, c.tile);
  const auto t = stealing_runs(c, 3);
  EXPECT_EQ(t.bad, 0);
  EXPECT_GT(t.stolen[1], 0) << "the staged processor stole nothing";
}

TEST_P(OnCopying, StealingThreeProcessorsUnderCopyJitterAreBitwiseStatic) {
  // nrrp3d splits k between the three, budgets stream along k, copies are jittered, and one
  // staged processor is slowed.
  StealCase c{"3 processors, jitter",         64, 56,       96, 8, 1.0, 2.0,
              {"staged", "host", "staged:1"}, {}, {1, 1, 4}};
  c.zones = zones_of(partition::Algorithm::nrrp3d, {2, 1, 1.5}, c.m, c.n, c.k, c.tile);
  c.budget = 3000;
  c.jitter_us = 300;
  c.coarse_head = true;  // as cuboid run plans it
  const auto t = stealing_runs(c, 3);
  EXPECT_EQ(t.bad, 0);
  EXPECT_GT(t.lost[2], 0) << "nothing was stolen from the slowed processor";
  // The host slowed instead: the staged processors steal, under jitter. Its whole zone takes
  // well under a millisecond at full speed while the jitter alone costs the staged processors
  // tens, so it is slowed far enough to still be busy when they finish on a loaded machine.
  c.name = "3 processors, jitter, host slowed";
  c.slowdown = {1, 2000, 1};
  const auto h = stealing_runs(c, 3);
  EXPECT_EQ(h.bad, 0);
  EXPECT_GT(h.stolen[0] + h.stolen[2], 0) << "the staged processors stole nothing";
}

TEST(Calibration, TruncatedPlansKeepWholeDrainedPrefixes) {
  exec::PlanOptions o;
  o.budget_elements = {0, 3000};
  o.min_panels = {4, 4};
  const auto plan = exec::make_plan(zones_of(partition::Algorithm::nrrp3d, {1, 1}, 64, 64, 64, 8),
                                    64, 64, 64, 8, o);
  const auto one = exec::truncate_plan(plan, {0, 0});
  for (std::size_t q = 0; q < 2; ++q) {
    ASSERT_EQ(one.processors[q].steps.size(), 1u);
    EXPECT_TRUE(one.processors[q].steps.back().c_out);
    EXPECT_EQ(one.processors[q].steps.front().c, plan.processors[q].steps.front().c);
    EXPECT_EQ(one.processors[q].steps.front().l1, plan.processors[q].steps.front().l1);
  }
  const auto all = exec::truncate_plan(plan, {1e30, 1e30});
  for (std::size_t q = 0; q < 2; ++q)
    EXPECT_EQ(all.processors[q].steps.size(), plan.processors[q].steps.size());
  EXPECT_TRUE(all.prescale.empty());
}

TEST_P(OnCopying, CalibrationMeasuresEveryProcessorThroughTheEngine) {
  auto specs = resolve({"host", "staged"});
  exec::PlanOptions o;
  o.budget_elements = {0, 1 << 16};
  const auto problem = exec::calibration_problem(192, 160, 4096, 32, partition::Algorithm::nrrp3d,
                                                 partition::Discretization::precise, o);
  EXPECT_EQ(problem.k, 2048) << "edges are capped";
  EXPECT_EQ(problem.options.min_panels, (std::vector<int>{4, 4}));
  const auto rates = exec::measure_rates<double>(specs, problem, 0.02);
  ASSERT_EQ(rates.size(), 2u);
  for (double r : rates) EXPECT_GT(r, 0.0);
}

TEST(TeamGemm, MatchesOneCallOnEveryGridAndRepeatsBitwise) {
  // Blocks of a near-square grid over C, one single-threaded BLAS call each. The BLAS may round
  // a block's edge differently than the same columns inside a larger call, but a given grid
  // gives the same bits every time.
  const std::int64_t m = 37, n = 29, k = 41;
  exec::HostMatrix<double> A("A", m, k), B("B", k, n), C0("C0", m, n), R("R", m, n), T("T", m, n),
      U("U", m, n);
  exec::fill_random(A, 4, exec::MatrixId::A);
  exec::fill_random(B, 4, exec::MatrixId::B);
  exec::fill_random(C0, 4, exec::MatrixId::C);
  const Kokkos::DefaultHostExecutionSpace space;
  Kokkos::deep_copy(R, C0);
  exec::set_thread_count(1);
  kokkos_ext::gemm(space, 1.5, A, B, -0.5, R);
  for (int threads : {1, 2, 3, 4, 6}) {
    Kokkos::deep_copy(T, C0);
    Kokkos::deep_copy(U, C0);
    exec::team_gemm(space, threads, 1.5, A, B, -0.5, T);
    exec::team_gemm(space, threads, 1.5, A, B, -0.5, U);
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < m; ++i) {
        ASSERT_NEAR(T(i, j), R(i, j), 1e-13) << threads << " threads, element " << i << "," << j;
        ASSERT_EQ(std::memcmp(&T(i, j), &U(i, j), sizeof(double)), 0) << threads << " threads";
      }
  }
  exec::set_thread_count(2);
}

TEST(Validate, RejectsACorruptedProduct) {
  const std::int64_t m = 40, n = 30, k = 50;
  exec::HostMatrix<double> A("A", m, k), B("B", k, n), C0("C0", m, n), C("C", m, n);
  exec::fill_random(A, 3, exec::MatrixId::A);
  exec::fill_random(B, 3, exec::MatrixId::B);
  exec::fill_random(C0, 3, exec::MatrixId::C);
  auto ref = naive(A, B, C0, 1.0, 0.5);
  Kokkos::deep_copy(C, ref);
  EXPECT_TRUE(exec::validate(A, B, C0, C, 1.0, 0.5, 1).passed);
  C(7, 3) += 1e-6;  // one element off by far more than rounding
  const auto bad = exec::validate(A, B, C0, C, 1.0, 0.5, 1);
  EXPECT_FALSE(bad.passed);
  EXPECT_GT(bad.error, bad.bound);
  C(7, 3) = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(exec::validate(A, B, C0, C, 1.0, 0.5, 1).passed);
}

namespace {

// op(X)(i, j) as stored.
double op_at(const exec::HostMatrix<double>& X, char op, std::int64_t i, std::int64_t j) {
  return op == 'N' ? X(i, j) : X(j, i);
}

// Runs C = 1.5 op(A) op(B) - 0.5 C on the host and one copying processor (`kind`, its
// registration as `register_host` says; `alone`: without the host, so that no partial buffer
// is needed) and checks C against a triple loop; returns the copying processor's figures,
// summed over two runs.
exec::WorkerStats run_direct(const std::string& kind, bool register_host,
                             const exec::HostMatrix<double>& A, const exec::HostMatrix<double>& B,
                             const exec::HostMatrix<double>& C, kokkos_ext::Ops ops,
                             bool alone = false) {
  const std::int64_t m = std::int64_t(C.extent(0)), n = std::int64_t(C.extent(1));
  const std::int64_t k = std::int64_t(ops.a == 'N' ? A.extent(1) : A.extent(0));
  auto specs = platform::resolve_processors({"host", kind}, "test");
  if (alone) specs.erase(specs.begin());
  specs.back().register_host = register_host;
  std::vector<std::unique_ptr<exec::Worker<double>>> workers;
  for (const auto& s : specs) workers.push_back(exec::make_worker<double>(s));
  const std::int64_t tile = 16;
  exec::PlanOptions o;
  for (const auto& s : specs) {
    o.buffer_cost.push_back(exec::buffer_cost(s, sizeof(double)));
    // Streamed: several C blocks and k-panels.
    o.budget_elements.push_back(s.kind == platform::ProcessorKind::host
                                    ? 0
                                    : 3 * tile * tile * 4 + o.buffer_cost.back().fixed);
  }
  const std::vector<double> speeds = alone ? std::vector<double>{1} : std::vector<double>{1, 2};
  const auto plan =
      exec::make_plan(partition::partition_tiles(
                          partition::Algorithm::nrrp3d, partition::Discretization::precise, speeds,
                          {(m + tile - 1) / tile, (n + tile - 1) / tile, (k + tile - 1) / tile}),
                      m, n, k, tile, o);
  exec::Engine<double> engine(std::move(workers));
  engine.reserve(plan);
  exec::HostMatrix<double> C0("C0", m, n);
  Kokkos::deep_copy(C0, C);
  exec::WorkerStats sum;
  for (int run = 0; run < 2; ++run) {
    Kokkos::deep_copy(C, C0);
    const auto r = engine.run(plan, A, B, C, 1.5, -0.5, {}, ops);
    const exec::WorkerStats& st = r.workers.back();
    EXPECT_GT(st.steps, 0);
    sum.direct_copies += st.direct_copies, sum.staged_copies += st.staged_copies;
    sum.registrations += st.registrations;
    sum.refused_registrations += st.refused_registrations;
  }
  double worst = 0;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) {
      long double acc = 0;
      for (std::int64_t l = 0; l < k; ++l)
        acc += (long double)op_at(A, ops.a, i, l) * op_at(B, ops.b, l, j);
      const double want = 1.5 * double(acc) - 0.5 * C0(i, j);
      worst = std::max(worst, std::abs(C(i, j) - want));
    }
  EXPECT_LT(worst, 1e-12);
  return sum;
}

exec::HostMatrix<double> random_matrix(const char* name, std::int64_t rows, std::int64_t cols,
                                       exec::MatrixId id) {
  exec::HostMatrix<double> M(std::string(name), rows, cols);
  exec::fill_random(M, 23, id);
  return M;
}

// A, B and C carved out of one buffer, pages apart: each is a registration of its own.
struct Carved {
  std::vector<double> buffer;
  exec::HostMatrix<double> A, B, C;
  Carved(std::int64_t m, std::int64_t n, std::int64_t k)
      : buffer(std::size_t(m * k + k * n + m * n + 4 * 1024)) {
    double* p = buffer.data() + 512;  // 4 KiB in: the allocation's first page stays apart
    auto next = [&](const char* name, std::int64_t rows, std::int64_t cols, exec::MatrixId id) {
      exec::HostMatrix<double> M(p, rows, cols);
      exec::fill_random(M, 23, id);
      p += rows * cols + 1024;  // two pages apart at least
      (void)name;
      return M;
    };
    A = next("A", m, k, exec::MatrixId::A);
    B = next("B", k, n, exec::MatrixId::B);
    C = next("C", m, n, exec::MatrixId::C);
  }
};

}  // namespace

// Every block travels as a 2-D copy straight from and to the caller's arrays (transposed
// operands as stored, A with a leading dimension larger than its rows); nothing is staged, and
// the emulated runtime saw only registered host memory and has nothing left registered after.
TEST(Engine, CopyingProcessorsCopyStraightFromAndToRegisteredArrays) {
  using Rt = exec::EmulatedRuntime;
  const std::int64_t m = 72, n = 56, k = 88;
  for (const char* kind : {"staged", "emulated"})
    for (const kokkos_ext::Ops ops : {kokkos_ext::Ops{'N', 'N'}, kokkos_ext::Ops{'T', 'N'},
                                      kokkos_ext::Ops{'N', 'T'}, kokkos_ext::Ops{'T', 'T'}}) {
      SCOPED_TRACE(std::string(kind) + " " + ops.a + ops.b);
      const std::int64_t ar = ops.a == 'N' ? m : k, ac = ops.a == 'N' ? k : m;
      const auto Y = random_matrix("Y", ar + 5, ac, exec::MatrixId::A);
      const exec::HostMatrix<double> A =
          Kokkos::subview(Y, std::make_pair(std::int64_t(2), 2 + ar), Kokkos::ALL);
      ASSERT_EQ(A.stride(1), ar + 5);
      const auto B =
          random_matrix("B", ops.b == 'N' ? k : n, ops.b == 'N' ? n : k, exec::MatrixId::B);
      const auto C = random_matrix("C", m, n, exec::MatrixId::C);
      const auto before = Rt::counters();
      const exec::WorkerStats st = run_direct(kind, true, A, B, C, ops);
      const auto after = Rt::counters();
      EXPECT_GT(st.direct_copies, 0);
      EXPECT_EQ(st.staged_copies, 0);
      EXPECT_GT(st.registrations, 0);
      EXPECT_EQ(st.refused_registrations, 0);
      if (std::string(kind) == "emulated") {
        EXPECT_EQ(after.copies_2d - before.copies_2d, st.direct_copies);
        EXPECT_EQ(after.pageable_copies_2d, before.pageable_copies_2d);
        EXPECT_EQ(after.registrations - before.registrations, st.registrations);
        EXPECT_EQ(after.unregistrations - before.unregistrations, st.registrations);
        EXPECT_EQ(after.registered_bytes, before.registered_bytes);
      }
    }
}

// A registration the runtime refuses leaves its ranges to the staging ring: every one refused,
// or only the first (the other arrays then go straight); registration turned off stages all.
TEST(Engine, RefusedOrDisabledRegistrationFallsBackToTheStagingRing) {
  using Rt = exec::EmulatedRuntime;
  const Carved x(64, 48, 80);
  const auto &A = x.A, &B = x.B, &C = x.C;
  Rt::fail_registrations(-1);
  exec::WorkerStats st = run_direct("emulated", true, A, B, C, {});
  Rt::fail_registrations(0);
  EXPECT_GT(st.refused_registrations, 0);
  EXPECT_EQ(st.registrations, 0);
  EXPECT_EQ(st.direct_copies, 0);
  EXPECT_GT(st.staged_copies, 0);
  const auto before = Rt::counters();
  Rt::fail_registrations(1);
  st = run_direct("emulated", true, A, B, C, {});
  Rt::fail_registrations(0);
  EXPECT_EQ(st.refused_registrations, 1);
  EXPECT_GT(st.registrations, 0);
  EXPECT_GT(st.direct_copies, 0);
  EXPECT_GT(st.staged_copies, 0);
  EXPECT_EQ(Rt::counters().pageable_copies_2d, before.pageable_copies_2d);
  for (const char* kind : {"staged", "emulated"}) {
    st = run_direct(kind, false, A, B, C, {});
    EXPECT_EQ(st.registrations + st.refused_registrations + st.direct_copies, 0) << kind;
    EXPECT_GT(st.staged_copies, 0) << kind;
  }
}

// A and B the same array, or overlapping column ranges of one array: the union is registered
// once (a second registration of a page would be refused), and every copy goes straight.
TEST(Engine, AliasedAndOverlappingOperandsAreRegisteredOnce) {
  const std::int64_t k = 64, n = 48;
  const auto X = random_matrix("X", k, k + n, exec::MatrixId::A);
  const exec::HostMatrix<double> square = Kokkos::subview(X, Kokkos::ALL, std::make_pair(0L, k));
  const exec::HostMatrix<double> shifted =
      Kokkos::subview(X, Kokkos::ALL, std::make_pair(k / 2, k / 2 + n));
  for (const bool same : {true, false}) {
    SCOPED_TRACE(same ? "A = B" : "B overlaps A");
    const auto C = random_matrix("C", k, same ? k : n, exec::MatrixId::C);
    const auto st = run_direct("emulated", true, square, same ? square : shifted, C, {});
    EXPECT_EQ(st.refused_registrations, 0);
    EXPECT_GT(st.direct_copies, 0);
    EXPECT_EQ(st.staged_copies, 0);
  }
}

// Arrays the caller page-locked are used as they are: nothing registered or unregistered.
TEST(Engine, ArraysPinnedAlreadyAreUsedAsTheyAre) {
  using Rt = exec::EmulatedRuntime;
  const Carved x(64, 48, 80);
  ASSERT_TRUE(
      Rt::register_host(const_cast<double*>(x.buffer.data()), x.buffer.size() * sizeof(double)));
  const auto st = run_direct("emulated", true, x.A, x.B, x.C, {}, true);
  EXPECT_EQ(st.registrations + st.refused_registrations, 0);
  EXPECT_GT(st.direct_copies, 0);
  EXPECT_EQ(st.staged_copies, 0);
  EXPECT_TRUE(Rt::host_pinned(x.C.data())) << "still the caller's";
  Rt::unregister_host(const_cast<double*>(x.buffer.data()));
}

// Complex operands transposed or conjugated travel as stored, straight from the registered
// arrays; the GEMM applies the op.
TEST(Engine, ConjugatedComplexOperandsTravelAsStoredStraightFromTheirArrays) {
  using Z = Kokkos::complex<double>;
  const std::int64_t m = 40, n = 36, k = 44, tile = 16;
  for (const kokkos_ext::Ops ops :
       {kokkos_ext::Ops{'C', 'N'}, kokkos_ext::Ops{'N', 'C'}, kokkos_ext::Ops{'C', 'T'}}) {
    SCOPED_TRACE(std::string(1, ops.a) + ops.b);
    auto specs = platform::resolve_processors({"emulated:0"}, "test");
    std::vector<std::unique_ptr<exec::Worker<Z>>> workers;
    workers.push_back(exec::make_worker<Z>(specs[0]));
    exec::PlanOptions o;
    o.buffer_cost = {exec::buffer_cost(specs[0], sizeof(Z))};
    o.budget_elements = {3 * tile * tile * 4 + o.buffer_cost[0].fixed};
    const auto plan =
        exec::make_plan(partition::partition_tiles(
                            partition::Algorithm::nrrp3d, partition::Discretization::precise, {1},
                            {(m + tile - 1) / tile, (n + tile - 1) / tile, (k + tile - 1) / tile}),
                        m, n, k, tile, o);
    exec::Engine<Z> engine(std::move(workers));
    engine.reserve(plan);
    exec::HostMatrix<Z> A("A", ops.a == 'N' ? m : k, ops.a == 'N' ? k : m),
        B("B", ops.b == 'N' ? k : n, ops.b == 'N' ? n : k), C("C", m, n), C0("C0", m, n);
    exec::fill_random(A, 5, exec::MatrixId::A);
    exec::fill_random(B, 5, exec::MatrixId::B);
    exec::fill_random(C0, 5, exec::MatrixId::C);
    Kokkos::deep_copy(C, C0);
    const Z alpha(1.5, -0.5), beta(0.5, 0.25);
    const auto r = engine.run(plan, A, B, C, alpha, beta, {}, ops);
    auto at = [](const exec::HostMatrix<Z>& X, char op, std::int64_t i, std::int64_t j) {
      return op == 'N' ? X(i, j) : op == 'T' ? X(j, i) : Kokkos::conj(X(j, i));
    };
    double worst = 0;
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < m; ++i) {
        Z acc(0);
        for (std::int64_t l = 0; l < k; ++l) acc += at(A, ops.a, i, l) * at(B, ops.b, l, j);
        worst = std::max(worst, Kokkos::abs(C(i, j) - (alpha * acc + beta * C0(i, j))));
      }
    EXPECT_LT(worst, 1e-12);
    EXPECT_GT(r.workers[0].direct_copies, 0);
    EXPECT_EQ(r.workers[0].staged_copies, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, OnCopying,
                         ::testing::Values("staged", "emulated", "staged_ring", "emulated_ring"),
                         [](const auto& info) { return std::string(info.param); });
