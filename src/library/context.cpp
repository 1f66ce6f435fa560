// cuboid::Context: the library's entry. A context resolves its processors once, calibrates each
// scalar type on first use, keeps one local multiply per type (workers, threads, buffers) and a
// plan per shape, and serialises the calls made on it.
#include <cuboid/cuboid.hpp>
#include <limits>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <tuple>

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "exec/matrices.hpp"
#include "kokkos_ext/compat.hpp"
#include "library/context_internals.hpp"
#include "pipeline/local_multiply.hpp"
#include "pipeline/prepare.hpp"
#include "platform/calibration.hpp"
#include "platform/device_calls.hpp"
#include "util/trace.hpp"

namespace cuboid {
namespace {

// A setting the local pipeline refused: its ids are the context's option names, which the
// message is prefixed with.
KeyedError named_option(const KeyedError& e) { return KeyedError(e.key, e.key + ": " + e.what()); }

// Kokkos is initialised by the first context when the application has not done it, and then
// finalised at exit: Kokkos 4 cannot be initialised again once finalised, so finalising with
// the last context would break the next one.
void require_kokkos() {
  static std::mutex m;
  std::lock_guard<std::mutex> lock(m);
  if (Kokkos::is_initialized()) return;
#if defined(__linux__)
  // Kokkos finalises the thread pool of the thread that initialised it: started from another
  // thread, the pool would outlive the process's exit unfreed.
  if (::syscall(SYS_gettid) != ::getpid())
    throw Error(
        "Kokkos is not initialised and this is not the main thread: make the first cuboid "
        "context on the main thread, or initialise Kokkos there first");
#endif
  kokkos_ext::initialize();
  // A child forked after this has no thread pool to finalise (it holds its parent's memory
  // but not its threads): only the process that initialised Kokkos finalises it.
  static const pid_t initialised_in = ::getpid();
  std::atexit([] {
    if (::getpid() == initialised_in && Kokkos::is_initialized()) Kokkos::finalize();
  });
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A matrix the caller stores column-major with leading dimension `ld`, as a view of its
// `rows` x `cols` part in `Space` (a padded LayoutLeft view: no copy).
template <class Space = Kokkos::HostSpace, class Scalar>
Kokkos::View<Scalar**, Kokkos::LayoutLeft, Space> wrap(Scalar* data, std::int64_t rows,
                                                       std::int64_t cols, std::int64_t ld) {
  using Unmanaged =
      Kokkos::View<Scalar**, Kokkos::LayoutLeft, Space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const Unmanaged whole(data, std::size_t(ld), std::size_t(cols));
  return Kokkos::subview(whole, std::make_pair(std::int64_t(0), rows), Kokkos::ALL);
}

// A call shape's plan, and the times of its two trial calls when the context chooses between
// the direct path and the partition by measuring both (see Impl::gemm).
struct ShapeState {
  std::optional<pipeline::LocalPlan> plan;
  double direct_s = -1, partitioned_s = -1;
};

using ShapeKey =
    std::tuple<Op, Op, std::int64_t, std::int64_t, std::int64_t, std::int64_t, bool, bool>;

template <class Scalar>
struct TypeState {
  std::vector<platform::Speed> speeds;
  std::unique_ptr<pipeline::LocalMultiply<Scalar>> local;
  std::map<ShapeKey, ShapeState> shapes;
};

// Below these flops a product always takes the direct path: a partitioned call costs a few
// hundred microseconds of hand-offs, the time of a 2*128^3 product on a host.
constexpr double kAlwaysDirectBelow = 2.0 * 128 * 128 * 128;
// The rule where the choice must not depend on timings (given speeds, reproducible): the size
// from which a host and a device of a few times its speed gain from the partition.
constexpr double kFixedDirectBelow = 2.0 * 384 * 384 * 384;

}  // namespace

struct Context::Impl {
  ContextOptions options;
  std::vector<platform::ProcessorSpec> specs;
  partition::Algorithm algorithm = partition::Algorithm::nrrp3d;
  partition::Discretization discretization = partition::Discretization::rounded;
  std::mutex mutex;  // one call at a time
  CallReport last;
  exec::PerScalar<TypeState> types;
  // What other entries keep with the context (the distributed entry's prepared products), by
  // name; declared last, so destroyed before the local multiplies they use.
  std::map<std::string, std::shared_ptr<void>> extensions;

  template <class Scalar>
  TypeState<Scalar>& state() {
    return types.of<Scalar>();
  }

  // Speeds given, cached or measured (on the first call's shape, each edge capped at 2048).
  template <class Scalar>
  void calibrate(std::int64_t m, std::int64_t n, std::int64_t k) {
    auto& st = state<Scalar>();
    if (!st.speeds.empty()) return;
    const auto t0 = std::chrono::steady_clock::now();
    exec::PlanOptions plan_options;
    try {
      plan_options = pipeline::plan_options_for(specs, sizeof(Scalar), options.memory_budget_mib);
    } catch (const KeyedError& e) {
      throw named_option(e);
    }
    pipeline::SpeedSource source;
    source.given = options.speeds;
    if (options.speeds.empty() && !options.speed_cache.empty())
      source.cache_path = options.speed_cache == "default" ? platform::default_speed_cache_path()
                                                           : options.speed_cache;
    else if (options.speeds.empty() && options.reproducible)
      throw KeyedError("reproducible",
                       "reproducible: needs given speeds or a speed cache to record them in");
    pipeline::CalibrationShape shape;
    shape.m = m, shape.n = n, shape.k = k;
    shape.tile = options.tile > 0 ? options.tile : tile_for(m, n, k);
    shape.algorithm = algorithm;
    std::ostringstream quiet;
    pipeline::Calibration calibration;
    try {
      calibration = pipeline::calibrate<Scalar>(specs, plan_options, shape, source, quiet);
    } catch (const pipeline::SpeedsRefused& e) {
      // The library's names: the context's speeds, given or measured.
      throw KeyedError("speeds", std::string("the processors' speeds: ") + e.what());
    } catch (const pipeline::CalibrationRefused& e) {
      // The calibration's partition refused the tile: the context's option.
      throw KeyedError("tile", "tile = " + std::to_string(shape.tile) + " (calibration on " +
                                   e.problem + "): " + e.why);
    }
    pipeline::LocalOptions lo;
    lo.algorithm = algorithm, lo.discretization = discretization;
    lo.plan = plan_options;
    // Built before the speeds are kept: a failure in between leaves nothing half-made.
    st.local = pipeline::make_local<Scalar>(specs, calibration, lo);
    st.speeds = std::move(calibration.speeds);
    last.calibration_s = seconds_since(t0);
  }

  // The first processor that computes in host memory, for the direct path; -1 when none does.
  int host_processor() const {
    for (std::size_t q = 0; q < specs.size(); ++q)
      if (specs[q].kind == platform::ProcessorKind::host) return int(q);
    return -1;
  }

  template <class Scalar>
  void gemm(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k, Scalar alpha,
            const Scalar* A, std::int64_t lda, const Scalar* B, std::int64_t ldb, Scalar beta,
            Scalar* C, std::int64_t ldc);
  template <class Scalar>
  void scale(std::int64_t m, std::int64_t n, Scalar beta, Scalar* C, std::int64_t ldc);
  template <class Scalar>
  void gemm_resident(std::string_view memory_space, Op op_a, Op op_b, std::int64_t m,
                     std::int64_t n, std::int64_t k, Scalar alpha, const Scalar* A,
                     std::int64_t lda, const Scalar* B, std::int64_t ldb, Scalar beta, Scalar* C,
                     std::int64_t ldc);
  template <class T>
  void gemm_complex(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k,
                    std::complex<T> alpha, const std::complex<T>* A, std::int64_t lda,
                    const std::complex<T>* B, std::int64_t ldb, std::complex<T> beta,
                    std::complex<T>* C, std::int64_t ldc);
  template <class T>
  void gemm_resident_complex(std::string_view memory_space, Op op_a, Op op_b, std::int64_t m,
                             std::int64_t n, std::int64_t k, std::complex<T> alpha,
                             const std::complex<T>* A, std::int64_t lda, const std::complex<T>* B,
                             std::int64_t ldb, std::complex<T> beta, std::complex<T>* C,
                             std::int64_t ldc);
  // The processor whose own memory is the Kokkos memory space named `memory_space`.
  int resident_processor(std::string_view memory_space) const;
};

namespace {

void check_arguments(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k,
                     std::int64_t lda, std::int64_t ldb, std::int64_t ldc, bool reads_ab,
                     bool have_a, bool have_b, bool have_c) {
  // The order of BLAS's own checks: dimensions, then leading dimensions.
  if (m < 0) throw KeyedError("m", "m = " + std::to_string(m) + " is negative");
  if (n < 0) throw KeyedError("n", "n = " + std::to_string(n) + " is negative");
  if (k < 0) throw KeyedError("k", "k = " + std::to_string(k) + " is negative");
  const std::int64_t a_rows = op_a == Op::none ? m : k, b_rows = op_b == Op::none ? k : n;
  if (lda < std::max<std::int64_t>(1, a_rows))
    throw KeyedError("lda", "lda = " + std::to_string(lda) + " is below the rows of A (" +
                                std::to_string(a_rows) + ")");
  if (ldb < std::max<std::int64_t>(1, b_rows))
    throw KeyedError("ldb", "ldb = " + std::to_string(ldb) + " is below the rows of B (" +
                                std::to_string(b_rows) + ")");
  if (ldc < std::max<std::int64_t>(1, m))
    throw KeyedError("ldc", "ldc = " + std::to_string(ldc) + " is below the rows of C (" +
                                std::to_string(m) + ")");
  if (m > 0 && n > 0 && !have_c) throw KeyedError("C", "C is a null pointer");
  if (m > 0 && n > 0 && k > 0 && reads_ab && (!have_a || !have_b))
    throw KeyedError(!have_a ? "A" : "B", std::string(!have_a ? "A" : "B") + " is a null pointer");
  // The BLAS underneath takes 32-bit sizes: a larger one is refused, never wrapped around (its
  // GEMM would then refuse the call and leave C as it was). Scaling C needs no BLAS.
  if (m > 0 && n > 0 && k > 0 && reads_ab) {
    constexpr std::int64_t blas_max = std::numeric_limits<std::int32_t>::max();
    const std::pair<const char*, std::int64_t> sizes[] = {{"m", m},     {"n", n},     {"k", k},
                                                          {"lda", lda}, {"ldb", ldb}, {"ldc", ldc}};
    for (const auto& [name, v] : sizes)
      if (v > blas_max)
        throw Unsupported(name, std::string(name) + " = " + std::to_string(v) +
                                    " exceeds the 32-bit sizes of the BLAS this library calls "
                                    "(at most 2147483647)");
  }
}

}  // namespace

// C <- beta C on the m x n sub-matrix; beta = 0 writes zeros without reading C.
template <class Scalar>
void Context::Impl::scale(std::int64_t m, std::int64_t n, Scalar beta, Scalar* C,
                          std::int64_t ldc) {
  if (beta == Scalar(1)) return;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) {
      Scalar& c = C[i + j * ldc];
      c = beta == Scalar(0) ? Scalar(0) : beta * c;
    }
}

template <class Scalar>
void Context::Impl::gemm(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k,
                         Scalar alpha, const Scalar* A, std::int64_t lda, const Scalar* B,
                         std::int64_t ldb, Scalar beta, Scalar* C, std::int64_t ldc) {
  last = CallReport{};
  trace::Span traced("calls", "gemm",
                     trace::on() ? "\"m\": " + std::to_string(m) + ", \"n\": " + std::to_string(n) +
                                       ", \"k\": " + std::to_string(k)
                                 : std::string());
  // With alpha = 0, A and B are not read (BLAS lets them be anything).
  check_arguments(op_a, op_b, m, n, k, lda, ldb, ldc, alpha != Scalar(0), A, B, C);
  if (m == 0 || n == 0) return;
  if (k == 0 || alpha == Scalar(0)) {
    scale(m, n, beta, C, ldc);
    return;
  }
  require_supported_call(GemmShape{op_a, op_b, m, n, k}, scalar_type_of<Scalar>());
  // A and B as stored: the GEMMs apply the ops.
  const bool ta = op_a != Op::none, tb = op_b != Op::none;
  const auto a = wrap(const_cast<Scalar*>(A), ta ? k : m, ta ? m : k, lda);
  const auto b = wrap(const_cast<Scalar*>(B), tb ? n : k, tb ? k : n, ldb);
  const auto c = wrap(C, m, n, ldc);
  const kokkos_ext::Ops ops{char(op_a), char(op_b)};
  const double flops = gemm_flops(scalar_type_of<Scalar>(), m, n, k);
  const int host = host_processor();
  const std::int64_t tile = options.tile > 0 ? options.tile : tile_for(m, n, k);
  const bool zero = beta == Scalar(0), one = beta == Scalar(1);
  auto& st = state<Scalar>();
  ShapeState& shape = st.shapes[ShapeKey{op_a, op_b, m, n, k, tile, zero, one}];
  // The direct path (one GEMM on the host processor) or the partition. Where the results must
  // repeat bit for bit (given speeds, reproducible) a fixed rule decides; with measured speeds,
  // the first two calls of a shape try both and the faster is kept for it.
  bool direct = host >= 0;
  bool trial = false;
  if (host >= 0 && specs.size() > 1) {
    if (options.direct_below_flops >= 0)
      direct = flops < options.direct_below_flops;
    else if (!options.speeds.empty() || options.reproducible)
      direct = flops < kFixedDirectBelow;
    else if (flops < kAlwaysDirectBelow)
      direct = true;
    else if (shape.direct_s < 0 || shape.partitioned_s < 0)
      direct = shape.direct_s < 0, trial = true;
    else
      direct = shape.direct_s <= shape.partitioned_s;
  }
  if (direct) {
    const auto t0 = std::chrono::steady_clock::now();
    const Kokkos::DefaultHostExecutionSpace space;
    kokkos_ext::gemm(space, ops, alpha, a, b, beta, c);
    space.fence();
    if (trace::on())  // small calls take this path: nothing is built when off
      trace::complete(specs[std::size_t(host)].name + " gemm", "gemm", t0,
                      std::chrono::steady_clock::now(), "\"direct\": true");
    last.direct = true;
    last.seconds = seconds_since(t0);
    last.processor = specs[std::size_t(host)].name;
    if (trial) shape.direct_s = last.seconds, last.trial = true;
    return;
  }
  calibrate<Scalar>(m, n, k);
  if (!shape.plan) {
    pipeline::Product product{m, n, k, tile, zero, one, op_a, op_b};
    try {
      shape.plan = st.local->plan(product);
    } catch (const KeyedError& e) {
      throw named_option(e);
    }
    st.local->reserve(*shape.plan);
  }
  const auto res = st.local->multiply(*shape.plan, a, b, c, alpha, beta);
  last.seconds = res.seconds;
  last.algorithm = std::string(partition::to_string(algorithm));
  last.speeds = st.local->speeds();
  if (trial) shape.partitioned_s = res.seconds, last.trial = true;
}

int Context::Impl::resident_processor(std::string_view memory_space) const {
#if CUBOID_DEVICE_BACKEND
  // Kokkos drives one device per process, so its memory space names one processor.
  if (memory_space == platform::DeviceMemorySpace::name())
    for (std::size_t q = 0; q < specs.size(); ++q)
      if (specs[q].kind == platform::ProcessorKind::device) return int(q);
#endif
  std::string names;
  for (const auto& s : specs) names += (names.empty() ? "" : ", ") + s.name;
  throw KeyedError("processors", "no processor of this context computes in the memory space \"" +
                                     std::string(memory_space) + "\" (the context's processors: " +
                                     names + "): add its device to the processors");
}

// One GEMM where the matrices lie, on the processor that owns that memory: copying them to the
// host and back would cost more than the product it saves.
template <class Scalar>
void Context::Impl::gemm_resident(std::string_view memory_space, Op op_a, Op op_b, std::int64_t m,
                                  std::int64_t n, std::int64_t k, Scalar alpha, const Scalar* A,
                                  std::int64_t lda, const Scalar* B, std::int64_t ldb, Scalar beta,
                                  Scalar* C, std::int64_t ldc) {
  last = CallReport{};
  check_arguments(op_a, op_b, m, n, k, lda, ldb, ldc, alpha != Scalar(0), A, B, C);
  const int q = resident_processor(memory_space);
  if (m == 0 || n == 0) return;
  const bool product = k > 0 && alpha != Scalar(0);
  if (product)
    pipeline::require_supported(GemmShape{op_a, op_b, m, n, k}, scalar_type_of<Scalar>());
#if CUBOID_DEVICE_BACKEND
  using Space = Kokkos::Device<platform::DeviceExecSpace, platform::DeviceMemorySpace>;
  const auto t0 = std::chrono::steady_clock::now();
  const platform::DeviceExecSpace space;
  const auto c = wrap<Space>(C, m, n, ldc);
  if (product) {
    const bool ta = op_a != Op::none, tb = op_b != Op::none;
    platform::gemm(space, kokkos_ext::Ops{char(op_a), char(op_b)}, alpha,
                   wrap<Space>(const_cast<Scalar*>(A), ta ? k : m, ta ? m : k, lda),
                   wrap<Space>(const_cast<Scalar*>(B), tb ? n : k, tb ? k : n, ldb), beta, c);
  } else if (beta != Scalar(1)) {
    platform::scale(space, beta, c);
  }
  space.fence();
  last.direct = true;
  last.seconds = seconds_since(t0);
  last.processor = specs[std::size_t(q)].name;
#else
  // resident_processor has thrown: a host-only build has no memory but the host's.
  (void)q, (void)product, (void)beta;
#endif
}

Context::Context(const ContextOptions& options) : impl_(std::make_unique<Impl>()) {
  Impl& x = *impl_;
  x.options = options;
  const auto algorithm = partition::parse_algorithm(options.algorithm);
  if (!algorithm) throw KeyedError("algorithm", "unknown algorithm \"" + options.algorithm + "\"");
  const auto discretization = partition::parse_discretization(options.discretization);
  if (!discretization || *discretization == partition::Discretization::none)
    throw KeyedError("discretization", "unknown discretization \"" + options.discretization + "\"");
  x.algorithm = *algorithm, x.discretization = *discretization;
  if (options.tile < 0) throw KeyedError("tile", "tile must not be negative");
  // CUBOID_TRACE=FILE: this process's trace, written when it exits.
  if (const char* path = std::getenv("CUBOID_TRACE"); path && *path) {
    try {
      trace::record_until_exit("CUBOID_TRACE", path);
    } catch (const Error& e) {
      throw KeyedError("CUBOID_TRACE", e.what());
    }
  }
  require_kokkos();
  try {
    x.specs = platform::resolve_processors(
        options.processors.empty() ? platform::default_processor_names() : options.processors,
        "processors");
  } catch (const Error& e) {
    throw KeyedError("processors", e.what());
  }
  for (auto& s : x.specs) s.register_host = options.register_host;
  if (!options.speeds.empty() && options.speeds.size() != x.specs.size())
    throw KeyedError("speeds", std::to_string(options.speeds.size()) + " speeds for " +
                                   std::to_string(x.specs.size()) + " processors");
}

Context::~Context() = default;

void Context::gemm(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
                   const double* A, std::int64_t lda, const double* B, std::int64_t ldb,
                   double beta, double* C, std::int64_t ldc) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->gemm(op_a, op_b, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

void Context::gemm(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                   const float* A, std::int64_t lda, const float* B, std::int64_t ldb, float beta,
                   float* C, std::int64_t ldc) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->gemm(op_a, op_b, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

namespace {

// std::complex<T> and Kokkos::complex<T> hold the same two T.
template <class T>
Kokkos::complex<T> kokkos_scalar(std::complex<T> x) {
  return {x.real(), x.imag()};
}
}  // namespace

// The complex entries, the same for both precisions.
template <class T>
void Context::Impl::gemm_complex(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k,
                                 std::complex<T> alpha, const std::complex<T>* A, std::int64_t lda,
                                 const std::complex<T>* B, std::int64_t ldb, std::complex<T> beta,
                                 std::complex<T>* C, std::int64_t ldc) {
  std::lock_guard<std::mutex> lock(mutex);
  // The arguments are checked before any copy (a bad leading dimension must not be read with).
  check_arguments(op_a, op_b, m, n, k, lda, ldb, ldc, alpha != T(0), A, B, C);
  const bool ta = op_a != Op::none, tb = op_b != Op::none, any = m > 0 && n > 0;
  const KokkosComplexMatrix<T> a(A, ta ? k : m, ta ? m : k, lda, any && k > 0),
      b(B, tb ? n : k, tb ? k : n, ldb, any && k > 0), c(C, m, n, ldc, any);
  gemm(op_a, op_b, m, n, k, kokkos_scalar(alpha), a.data(), a.ld(), b.data(), b.ld(),
       kokkos_scalar(beta), c.data(), c.ld());
  c.write_back(C, ldc);
}

// Device memory comes from the device's allocator, aligned far beyond a complex number.
template <class T>
void Context::Impl::gemm_resident_complex(std::string_view memory_space, Op op_a, Op op_b,
                                          std::int64_t m, std::int64_t n, std::int64_t k,
                                          std::complex<T> alpha, const std::complex<T>* A,
                                          std::int64_t lda, const std::complex<T>* B,
                                          std::int64_t ldb, std::complex<T> beta,
                                          std::complex<T>* C, std::int64_t ldc) {
  using K = Kokkos::complex<T>;
  std::lock_guard<std::mutex> lock(mutex);
  gemm_resident(memory_space, op_a, op_b, m, n, k, kokkos_scalar(alpha),
                reinterpret_cast<const K*>(A), lda, reinterpret_cast<const K*>(B), ldb,
                kokkos_scalar(beta), reinterpret_cast<K*>(C), ldc);
}

void Context::gemm(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k,
                   std::complex<double> alpha, const std::complex<double>* A, std::int64_t lda,
                   const std::complex<double>* B, std::int64_t ldb, std::complex<double> beta,
                   std::complex<double>* C, std::int64_t ldc) {
  impl_->gemm_complex(op_a, op_b, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

void Context::gemm(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k,
                   std::complex<float> alpha, const std::complex<float>* A, std::int64_t lda,
                   const std::complex<float>* B, std::int64_t ldb, std::complex<float> beta,
                   std::complex<float>* C, std::int64_t ldc) {
  impl_->gemm_complex(op_a, op_b, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

void Context::gemm_resident(std::string_view memory_space, Op op_a, Op op_b, std::int64_t m,
                            std::int64_t n, std::int64_t k, std::complex<double> alpha,
                            const std::complex<double>* A, std::int64_t lda,
                            const std::complex<double>* B, std::int64_t ldb,
                            std::complex<double> beta, std::complex<double>* C, std::int64_t ldc) {
  impl_->gemm_resident_complex(memory_space, op_a, op_b, m, n, k, alpha, A, lda, B, ldb, beta, C,
                               ldc);
}

void Context::gemm_resident(std::string_view memory_space, Op op_a, Op op_b, std::int64_t m,
                            std::int64_t n, std::int64_t k, std::complex<float> alpha,
                            const std::complex<float>* A, std::int64_t lda,
                            const std::complex<float>* B, std::int64_t ldb,
                            std::complex<float> beta, std::complex<float>* C, std::int64_t ldc) {
  impl_->gemm_resident_complex(memory_space, op_a, op_b, m, n, k, alpha, A, lda, B, ldb, beta, C,
                               ldc);
}

void Context::gemm_resident(std::string_view memory_space, Op op_a, Op op_b, std::int64_t m,
                            std::int64_t n, std::int64_t k, double alpha, const double* A,
                            std::int64_t lda, const double* B, std::int64_t ldb, double beta,
                            double* C, std::int64_t ldc) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->gemm_resident(memory_space, op_a, op_b, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

void Context::gemm_resident(std::string_view memory_space, Op op_a, Op op_b, std::int64_t m,
                            std::int64_t n, std::int64_t k, float alpha, const float* A,
                            std::int64_t lda, const float* B, std::int64_t ldb, float beta,
                            float* C, std::int64_t ldc) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->gemm_resident(memory_space, op_a, op_b, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

std::vector<double> Context::speeds(ScalarType type) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  std::vector<double> out;
  auto collect = [&](const auto& st) {
    for (const auto& s : st.speeds) out.push_back(s.gflops);
  };
  if (type == ScalarType::float32) {
    impl_->calibrate<float>(2048, 2048, 2048);
    collect(impl_->types.f32);
  } else if (type == ScalarType::float64) {
    impl_->calibrate<double>(2048, 2048, 2048);
    collect(impl_->types.f64);
  } else if (type == ScalarType::complex_float32) {
    impl_->calibrate<Kokkos::complex<float>>(2048, 2048, 2048);
    collect(impl_->types.c32);
  } else {
    impl_->calibrate<Kokkos::complex<double>>(2048, 2048, 2048);
    collect(impl_->types.c64);
  }
  return out;
}

std::vector<std::string> Context::processor_names() const {
  std::vector<std::string> names;
  for (const auto& s : impl_->specs) names.push_back(s.name);
  return names;
}

const CallReport& Context::last_call() const { return impl_->last; }

}  // namespace cuboid

namespace cuboid {

std::int64_t tile_for(std::int64_t m, std::int64_t n, std::int64_t k) {
  const std::int64_t target = std::max({m, n, k}) / 12;
  std::int64_t t = 32;
  while (t * 2 <= target && t < 512) t *= 2;
  return t;
}

void require_supported_call(const GemmShape& shape, ScalarType type) {
  pipeline::require_supported(shape, type);
}

std::mutex& ContextInternals::mutex(Context& c) { return c.impl_->mutex; }
CallReport& ContextInternals::report(Context& c) { return c.impl_->last; }
const ContextOptions& ContextInternals::options(const Context& c) { return c.impl_->options; }
std::shared_ptr<void>& ContextInternals::extension(Context& c, const std::string& name) {
  return c.impl_->extensions[name];
}

template <class Scalar>
pipeline::LocalMultiply<Scalar>& ContextInternals::local(Context& c, std::int64_t m, std::int64_t n,
                                                         std::int64_t k, double& calibration_s) {
  Context::Impl& x = *c.impl_;
  const bool first = !x.state<Scalar>().local;
  x.last.calibration_s = 0;
  x.calibrate<Scalar>(m, n, k);
  calibration_s = first ? x.last.calibration_s : 0;
  return *x.state<Scalar>().local;
}

template <class Scalar>
const std::vector<platform::Speed>& ContextInternals::speeds(Context& c) {
  return c.impl_->state<Scalar>().speeds;
}

#define CUBOID_CONTEXT_INTERNALS(Scalar)                                     \
  template pipeline::LocalMultiply<Scalar>& ContextInternals::local<Scalar>( \
      Context&, std::int64_t, std::int64_t, std::int64_t, double&);          \
  template const std::vector<platform::Speed>& ContextInternals::speeds<Scalar>(Context&);
CUBOID_FOR_EACH_SCALAR(CUBOID_CONTEXT_INTERNALS)
#undef CUBOID_CONTEXT_INTERNALS

}  // namespace cuboid
