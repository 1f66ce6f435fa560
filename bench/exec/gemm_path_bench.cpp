// The per-processor GEMM path: Kokkos Kernels gemm on contiguous views and on block views of
// a larger matrix, the host engine and the staged pipeline (pack, copy, GEMM, drain) on one
// processor, and a plain OpenBLAS dgemm at the same sizes for comparison.
#include <benchmark/benchmark.h>

#include "exec/engine.hpp"
#include "kokkos_ext/compat.hpp"
#include "partition/strategy.hpp"
#include "pipeline/local_multiply.hpp"

extern "C" void dgemm_(const char* transa, const char* transb, const int* m, const int* n,
                       const int* k, const double* alpha, const double* a, const int* lda,
                       const double* b, const int* ldb, const double* beta, double* c,
                       const int* ldc);

namespace {

using namespace cuboid;
using Matrix = exec::HostMatrix<double>;

void set_flops(benchmark::State& state, double s) {
  state.counters["FLOPS"] =
      benchmark::Counter(2.0 * s * s * s, benchmark::Counter::kIsIterationInvariantRate);
}

Matrix random_matrix(std::int64_t r, std::int64_t c, exec::MatrixId id) {
  Matrix m(Kokkos::view_alloc(Kokkos::WithoutInitializing, "bench"), r, c);
  exec::fill_random(m, 1, id);
  return m;
}

void BM_OpenBLAS_dgemm(benchmark::State& state) {
  const int s = int(state.range(0));
  auto A = random_matrix(s, s, exec::MatrixId::A), B = random_matrix(s, s, exec::MatrixId::B),
       C = random_matrix(s, s, exec::MatrixId::C);
  const double one = 1, zero = 0;
  for (auto _ : state) {
    dgemm_("N", "N", &s, &s, &s, &one, A.data(), &s, B.data(), &s, &zero, C.data(), &s);
    benchmark::DoNotOptimize(C.data());
  }
  set_flops(state, s);
}

void BM_KokkosGemm_Contiguous(benchmark::State& state) {
  const std::int64_t s = state.range(0);
  auto A = random_matrix(s, s, exec::MatrixId::A), B = random_matrix(s, s, exec::MatrixId::B),
       C = random_matrix(s, s, exec::MatrixId::C);
  const Kokkos::DefaultHostExecutionSpace space;
  for (auto _ : state) {
    kokkos_ext::gemm(space, 1.0, A, B, 0.0, C);
    space.fence();
  }
  set_flops(state, double(s));
}

// The block sits inside matrices twice as large, so leading dimensions differ from extents.
void BM_KokkosGemm_BlockView(benchmark::State& state) {
  const std::int64_t s = state.range(0);
  auto A = random_matrix(2 * s, 2 * s, exec::MatrixId::A),
       B = random_matrix(2 * s, 2 * s, exec::MatrixId::B),
       C = random_matrix(2 * s, 2 * s, exec::MatrixId::C);
  const auto r = std::make_pair(s / 2, s / 2 + s);
  auto a = Kokkos::subview(A, r, r), b = Kokkos::subview(B, r, r), c = Kokkos::subview(C, r, r);
  const Kokkos::DefaultHostExecutionSpace space;
  for (auto _ : state) {
    kokkos_ext::gemm(space, 1.0, a, b, 0.0, c);
    space.fence();
  }
  set_flops(state, double(s));
}

// One processor running the whole product through the local multiply, as `cuboid run` does
// (plan, workers, threads).
void engine_bench(benchmark::State& state, const char* processor, std::int64_t budget_mib) {
  const std::int64_t s = state.range(0), tile = 256;
  auto specs = platform::resolve_processors({processor}, "bench");
  pipeline::LocalOptions o;
  o.algorithm = partition::Algorithm::slab;
  o.discretization = partition::Discretization::rounded;
  o.plan.budget_elements = {budget_mib * 1024 * 1024 / 8};
  pipeline::LocalMultiply<double> lm(specs, {1.0}, o);
  const auto plan = lm.plan(pipeline::Product{s, s, s, tile, true, false});
  lm.reserve(plan);
  auto A = random_matrix(s, s, exec::MatrixId::A), B = random_matrix(s, s, exec::MatrixId::B),
       C = random_matrix(s, s, exec::MatrixId::C);
  double copied = 0;
  for (auto _ : state) {
    auto r = lm.multiply(plan, A, B, C, 1.0, 0.0);
    copied = r.workers[0].h2d_bytes + r.workers[0].d2h_bytes;
  }
  set_flops(state, double(s));
  state.counters["bytes_moved"] = copied;
}

void BM_Engine_Host(benchmark::State& state) { engine_bench(state, "host", 0); }
void BM_Engine_Staged(benchmark::State& state) { engine_bench(state, "staged", 512); }

}  // namespace

BENCHMARK(BM_OpenBLAS_dgemm)
    ->Arg(512)
    ->Arg(1024)
    ->Arg(2048)
    ->Arg(3072)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_KokkosGemm_Contiguous)
    ->Arg(512)
    ->Arg(1024)
    ->Arg(2048)
    ->Arg(3072)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_KokkosGemm_BlockView)
    ->Arg(512)
    ->Arg(1024)
    ->Arg(2048)
    ->Arg(3072)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Engine_Host)
    ->Arg(512)
    ->Arg(1024)
    ->Arg(2048)
    ->Arg(3072)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Engine_Staged)
    ->Arg(512)
    ->Arg(1024)
    ->Arg(2048)
    ->Arg(3072)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

int main(int argc, char** argv) {
  cuboid::kokkos_ext::initialize();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  Kokkos::finalize();
  return 0;
}
