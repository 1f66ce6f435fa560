// What an application pays for multiplying through libcuboid.so instead of calling the BLAS
// itself: warm calls of cuboid::Context::gemm and of cuboid_dgemm on one host processor against
// a plain OpenBLAS dgemm of the same size, and the first call of a new context (creation, and
// the calibration of the processors' speeds when none are given or cached). It links the
// shared library and its public headers only, as an application does.
//
// The warm calls, median of 5 rounds run in random interleaved order (docs/library.md):
//   cuboid-bench-library --benchmark_filter='/(64|3072)$' --benchmark_repetitions=5
//                        --benchmark_enable_random_interleaving=true
//                        --benchmark_report_aggregates_only=true
// The first call: cuboid-bench-library --benchmark_filter=FirstCall --benchmark_repetitions=3
#include <benchmark/benchmark.h>

#include <cuboid/cuboid.h>
#include <chrono>
#include <complex>
#include <cstdint>
#include <cuboid/cuboid.hpp>
#include <stdexcept>
#include <string>
#include <vector>

// OpenBLAS' Fortran interface, the call Kokkos Kernels' BLAS path makes too.
extern "C" void dgemm_(const char* transa, const char* transb, const int* m, const int* n,
                       const int* k, const double* alpha, const double* a, const int* lda,
                       const double* b, const int* ldb, const double* beta, double* c,
                       const int* ldc);
extern "C" void zgemm_(const char* transa, const char* transb, const int* m, const int* n,
                       const int* k, const std::complex<double>* alpha,
                       const std::complex<double>* a, const int* lda, const std::complex<double>* b,
                       const int* ldb, const std::complex<double>* beta, std::complex<double>* c,
                       const int* ldc);

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Values in [-1, 1) from a fixed linear congruential sequence.
std::vector<double> random_matrix(std::int64_t n, std::uint64_t seed) {
  std::vector<double> x(std::size_t(n * n));
  for (auto& v : x) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    v = double(seed >> 11) / double(1ULL << 52) - 1.0;
  }
  return x;
}

struct Square {
  explicit Square(std::int64_t n_)
      : n(n_), A(random_matrix(n_, 1)), B(random_matrix(n_, 2)), C(random_matrix(n_, 3)) {}
  std::int64_t n;
  std::vector<double> A, B, C;
};

void set_flops(benchmark::State& state, std::int64_t n) {
  state.counters["FLOPS"] = benchmark::Counter(2.0 * double(n) * double(n) * double(n),
                                               benchmark::Counter::kIsIterationInvariantRate);
}

cuboid::ContextOptions host_only() {
  cuboid::ContextOptions o;
  o.processors = {"host"};
  return o;
}

// One context for every warm call, made before the first one is timed: what an application
// keeps for its whole run.
cuboid::Context& host_context() {
  static cuboid::Context context(host_only());
  return context;
}

cuboid_context* host_c_context() {
  static cuboid_context* context = [] {
    cuboid_options o;
    cuboid_options_init(&o);
    o.processors = "host";
    cuboid_context* c = nullptr;
    char message[256];
    if (cuboid_create(&o, &c, message, sizeof message) != CUBOID_SUCCESS)
      throw std::runtime_error(message);
    return c;
  }();
  return context;
}

void BM_OpenBLAS_dgemm(benchmark::State& state) {
  Square s(state.range(0));
  const int n = int(s.n);
  const double one = 1, zero = 0;
  dgemm_("N", "N", &n, &n, &n, &one, s.A.data(), &n, s.B.data(), &n, &zero, s.C.data(), &n);
  for (auto _ : state) {
    dgemm_("N", "N", &n, &n, &n, &one, s.A.data(), &n, s.B.data(), &n, &zero, s.C.data(), &n);
    benchmark::DoNotOptimize(s.C.data());
  }
  set_flops(state, s.n);
}

// The op pairs N/T/C x N/T/C, numbered 3 * op(A) + op(B) in the benchmarks' second argument.
constexpr char kOps[3] = {'N', 'T', 'C'};

void set_op_label(benchmark::State& state) {
  const char pair[3] = {kOps[state.range(1) / 3], kOps[state.range(1) % 3], '\0'};
  state.SetLabel(pair);
}

// OpenBLAS' dgemm with the same transposes: the peer of every op pair (square matrices, so A
// and B are stored alike whatever the op).
void BM_OpenBLAS_dgemm_ops(benchmark::State& state) {
  Square s(state.range(0));
  const int n = int(s.n);
  const double one = 1, zero = 0;
  const char ta = kOps[state.range(1) / 3], tb = kOps[state.range(1) % 3];
  dgemm_(&ta, &tb, &n, &n, &n, &one, s.A.data(), &n, s.B.data(), &n, &zero, s.C.data(), &n);
  for (auto _ : state) {
    dgemm_(&ta, &tb, &n, &n, &n, &one, s.A.data(), &n, s.B.data(), &n, &zero, s.C.data(), &n);
    benchmark::DoNotOptimize(s.C.data());
  }
  set_flops(state, s.n);
  set_op_label(state);
}

void BM_Library_Host_ops(benchmark::State& state) {
  Square s(state.range(0));
  auto& context = host_context();
  const auto oa = cuboid::Op(kOps[state.range(1) / 3]), ob = cuboid::Op(kOps[state.range(1) % 3]);
  const auto call = [&] {
    context.gemm(oa, ob, s.n, s.n, s.n, 1.0, s.A.data(), s.n, s.B.data(), s.n, 0.0, s.C.data(),
                 s.n);
  };
  call();
  for (auto _ : state) {
    call();
    benchmark::DoNotOptimize(s.C.data());
  }
  set_flops(state, s.n);
  set_op_label(state);
}

// Complex double: OpenBLAS' zgemm and the library with the same ops, rates counted 8mnk.
struct ComplexSquare {
  explicit ComplexSquare(std::int64_t n_) : n(n_) {
    for (auto* m : {&A, &B, &C}) {
      const auto re = random_matrix(n, std::uint64_t(m == &A ? 1 : m == &B ? 2 : 3));
      const auto im = random_matrix(n, std::uint64_t(m == &A ? 4 : m == &B ? 5 : 6));
      m->resize(re.size());
      for (std::size_t i = 0; i < re.size(); ++i) (*m)[i] = {re[i], im[i]};
    }
  }
  std::int64_t n;
  std::vector<std::complex<double>> A, B, C;
};

void set_complex_flops(benchmark::State& state, std::int64_t n) {
  state.counters["FLOPS"] = benchmark::Counter(8.0 * double(n) * double(n) * double(n),
                                               benchmark::Counter::kIsIterationInvariantRate);
}

void BM_OpenBLAS_zgemm_ops(benchmark::State& state) {
  ComplexSquare s(state.range(0));
  const int n = int(s.n);
  const std::complex<double> alpha(1, 0.5), beta(0);
  const char ta = kOps[state.range(1) / 3], tb = kOps[state.range(1) % 3];
  zgemm_(&ta, &tb, &n, &n, &n, &alpha, s.A.data(), &n, s.B.data(), &n, &beta, s.C.data(), &n);
  for (auto _ : state) {
    zgemm_(&ta, &tb, &n, &n, &n, &alpha, s.A.data(), &n, s.B.data(), &n, &beta, s.C.data(), &n);
    benchmark::DoNotOptimize(s.C.data());
  }
  set_complex_flops(state, s.n);
  set_op_label(state);
}

void BM_Library_Host_zgemm_ops(benchmark::State& state) {
  ComplexSquare s(state.range(0));
  auto& context = host_context();
  const auto oa = cuboid::Op(kOps[state.range(1) / 3]), ob = cuboid::Op(kOps[state.range(1) % 3]);
  const std::complex<double> alpha(1, 0.5), beta(0);
  const auto call = [&] {
    context.gemm(oa, ob, s.n, s.n, s.n, alpha, s.A.data(), s.n, s.B.data(), s.n, beta, s.C.data(),
                 s.n);
  };
  call();
  for (auto _ : state) {
    call();
    benchmark::DoNotOptimize(s.C.data());
  }
  set_complex_flops(state, s.n);
  set_op_label(state);
}

void BM_Library_Host(benchmark::State& state) {
  Square s(state.range(0));
  auto& context = host_context();
  const auto call = [&] {
    context.gemm(cuboid::Op::none, cuboid::Op::none, s.n, s.n, s.n, 1.0, s.A.data(), s.n,
                 s.B.data(), s.n, 0.0, s.C.data(), s.n);
  };
  call();
  for (auto _ : state) {
    call();
    benchmark::DoNotOptimize(s.C.data());
  }
  set_flops(state, s.n);
}

void BM_Library_C_Host(benchmark::State& state) {
  Square s(state.range(0));
  cuboid_context* context = host_c_context();
  const auto call = [&] {
    if (cuboid_dgemm(context, 'N', 'N', s.n, s.n, s.n, 1.0, s.A.data(), s.n, s.B.data(), s.n, 0.0,
                     s.C.data(), s.n) != CUBOID_SUCCESS)
      throw std::runtime_error(cuboid_last_error(context));
  };
  call();
  for (auto _ : state) {
    call();
    benchmark::DoNotOptimize(s.C.data());
  }
  set_flops(state, s.n);
}

// A new context and its first call, speeds neither given nor cached (no speed cache): with more
// than one processor the call measures their speeds first. Counters: create_s (the
// constructor), calibration_s (within the first call), first_call_s (the whole first call) and
// warm_call_s (the second call, for comparison); the time is create_s + first_call_s.
void first_call(benchmark::State& state, const std::vector<std::string>& processors) {
  Square s(state.range(0));
  cuboid::ContextOptions o;
  o.processors = processors;
  o.speed_cache = "";
  double create_s = 0, calibration_s = 0, first_s = 0, warm_s = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    cuboid::Context context(o);
    const double created = seconds_since(t0);
    const auto call = [&] {
      const auto t = std::chrono::steady_clock::now();
      context.gemm(cuboid::Op::none, cuboid::Op::none, s.n, s.n, s.n, 1.0, s.A.data(), s.n,
                   s.B.data(), s.n, 0.0, s.C.data(), s.n);
      return seconds_since(t);
    };
    const double first = call();
    calibration_s += context.last_call().calibration_s;
    warm_s += call();
    create_s += created;
    first_s += first;
    state.SetIterationTime(created + first);
  }
  const auto avg = benchmark::Counter::kAvgIterations;
  state.counters["create_s"] = benchmark::Counter(create_s, avg);
  state.counters["calibration_s"] = benchmark::Counter(calibration_s, avg);
  state.counters["first_call_s"] = benchmark::Counter(first_s, avg);
  state.counters["warm_call_s"] = benchmark::Counter(warm_s, avg);
}

// The direct path's crossover: the same warm call on a "host,staged" context, forced direct (one
// GEMM on the host processor: direct_below_flops = infinity) or forced through the partition
// (direct_below_flops = 0). Speeds come from the speed cache (measured once, outside the timing).
// The partition pays from the size where the second is faster.
cuboid::Context& crossover_context(bool direct) {
  auto make = [](double below) {
    cuboid::ContextOptions o;
    o.processors = {"host", "staged"};
    o.direct_below_flops = below;
    return o;
  };
  static cuboid::Context forced_direct(make(1e300)), partitioned(make(0));
  return direct ? forced_direct : partitioned;
}

void crossover(benchmark::State& state, bool direct) {
  Square s(state.range(0));
  auto& context = crossover_context(direct);
  context.speeds(cuboid::ScalarType::float64);
  const auto call = [&] {
    context.gemm(cuboid::Op::none, cuboid::Op::none, s.n, s.n, s.n, 1.0, s.A.data(), s.n,
                 s.B.data(), s.n, 0.0, s.C.data(), s.n);
  };
  call();
  if (context.last_call().direct != direct)
    throw std::logic_error("the crossover bench did not take the path it forces");
  for (auto _ : state) {
    call();
    benchmark::DoNotOptimize(s.C.data());
  }
  set_flops(state, s.n);
}
void BM_Crossover_Direct(benchmark::State& state) { crossover(state, true); }
void BM_Crossover_Partitioned(benchmark::State& state) { crossover(state, false); }

void BM_FirstCall_Host(benchmark::State& state) { first_call(state, {"host"}); }
void BM_FirstCall_HostStaged(benchmark::State& state) { first_call(state, {"host", "staged"}); }

}  // namespace

BENCHMARK(BM_OpenBLAS_dgemm)
    ->Arg(64)
    ->Arg(256)
    ->Arg(1024)
    ->Arg(3072)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Library_Host)->Arg(64)->Arg(256)->Arg(1024)->Arg(3072)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Library_C_Host)
    ->Arg(64)
    ->Arg(256)
    ->Arg(1024)
    ->Arg(3072)
    ->Unit(benchmark::kMicrosecond);
// Every op pair at 3072: cuboid-bench-library --benchmark_filter=_ops --benchmark_repetitions=5
//   --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true
BENCHMARK(BM_OpenBLAS_dgemm_ops)
    ->ArgsProduct({{3072}, {0, 1, 2, 3, 4, 5, 6, 7, 8}})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Library_Host_ops)
    ->ArgsProduct({{3072}, {0, 1, 2, 3, 4, 5, 6, 7, 8}})
    ->Unit(benchmark::kMillisecond);
// Complex double, N/N and C/N at 3072: cuboid-bench-library --benchmark_filter=zgemm_ops
//   --benchmark_repetitions=5 --benchmark_enable_random_interleaving=true
//   --benchmark_report_aggregates_only=true
BENCHMARK(BM_OpenBLAS_zgemm_ops)->ArgsProduct({{3072}, {0, 6}})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Library_Host_zgemm_ops)->ArgsProduct({{3072}, {0, 6}})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Crossover_Direct)
    ->RangeMultiplier(2)
    ->Range(128, 2048)
    ->Arg(384)
    ->Arg(768)
    ->Arg(1536)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Crossover_Partitioned)
    ->RangeMultiplier(2)
    ->Range(128, 2048)
    ->Arg(384)
    ->Arg(768)
    ->Arg(1536)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FirstCall_Host)
    ->Arg(1024)
    ->Arg(3072)
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FirstCall_HostStaged)
    ->Arg(1024)
    ->Arg(3072)
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

// The first context of the process also initialises Kokkos: timed here, once, before any
// benchmark, and reported in the context block of the output.
int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  const auto t0 = std::chrono::steady_clock::now();
  host_context();
  benchmark::AddCustomContext("first_context_s (Kokkos initialised)",
                              std::to_string(seconds_since(t0)));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
