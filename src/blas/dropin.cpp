// libcuboid_blas.so: BLAS level 3's GEMM (sgemm_, dgemm_, cgemm_, zgemm_ and cblas_?gemm) for
// programs that call the BLAS, preloaded or linked before it. A call large enough to gain runs
// through one process-wide cuboid context on every processor it was given; any other call goes
// on to the next BLAS in the search order, the one the program would have called.
#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "blas/crossover.hpp"
#include "deck/context_options.hpp"
#include "kokkos_ext/own_gemm.hpp"

namespace cuboid::blas {
namespace {

// Why a call went on to the next BLAS.
enum class Pass { small, own, busy, openmp, arguments, forked, off_main, unavailable, count };
const char* name_of(Pass p) {
  static const char* names[] = {"small",
                                "cuboid's own GEMM",
                                "context busy",
                                "OpenMP region",
                                "BLAS's to judge",
                                "after fork",
                                "off the main thread before the first call",
                                "unavailable"};
  return names[int(p)];
}

// The process-wide state: the context, made on the first call that it should take, and what the
// report counts.
struct State {
  std::mutex make;  // making the context
  std::mutex busy;  // one call at a time on it
  std::unique_ptr<Context> context;
  std::string unavailable;  // why there is none ("" while it may still be made)
  std::atomic<bool> forked{false};
  std::atomic<long> taken{0};
  std::atomic<long> passed[int(Pass::count)] = {};
  std::mutex report_mutex;
  std::string report_path;
  double min_flops_env = -1;         // CUBOID_BLAS_MIN_FLOPS; -1: measured
  std::map<char, double> min_flops;  // per routine letter, once known
  pid_t pid = ::getpid();
};

void write_summary();

State& state() {
  // Never destroyed by a static destructor: a forked child has none of the context's threads to
  // join; the parent tears it down at exit (finish()).
  static State* s = [] {
    auto* st = new State;
    if (const char* p = std::getenv("CUBOID_BLAS_REPORT"); p && *p) st->report_path = p;
    if (const char* p = std::getenv("CUBOID_BLAS_MIN_FLOPS"); p && *p) {
      char* end = nullptr;
      const double v = std::strtod(p, &end);
      if (end == p || *end || !(v >= 0))
        std::cerr << "cuboid: CUBOID_BLAS_MIN_FLOPS=" << p
                  << " is not a number >= 0: the crossover is measured instead\n";
      else
        st->min_flops_env = v;
    }
    pthread_atfork(nullptr, nullptr, [] { state().forked = true; });
    std::atexit(write_summary);
    return st;
  }();
  return *s;
}

void append_report(const nlohmann::json& j) {
  State& s = state();
  if (s.report_path.empty()) return;
  std::lock_guard<std::mutex> lock(s.report_mutex);
  std::ofstream(s.report_path, std::ios::app) << j.dump() << "\n";
}

// At exit, in the process that loaded the library: the report's summary.
void write_summary() {
  State& s = state();
  if (::getpid() != s.pid || s.report_path.empty()) return;
  nlohmann::json passed = nlohmann::json::object();
  for (int p = 0; p < int(Pass::count); ++p)
    if (s.passed[p] > 0) passed[name_of(Pass(p))] = s.passed[p].load();
  append_report({{"summary", {{"taken", s.taken.load()}, {"passed_on", passed}}}});
}

// At exit, in the process that made it: the context, before Kokkos is finalised (the exit
// handler that finalises it was registered when the context initialised Kokkos, before this
// one, so it runs after it).
void release_context() {
  State& s = state();
  if (::getpid() != s.pid) return;
  std::lock_guard<std::mutex> lock(s.busy);
  s.context.reset();
}

bool on_main_thread() { return ::syscall(SYS_gettid) == ::getpid(); }

// The context, made on first use from the environment (CUBOID_PROCESSORS, CUBOID_DECK); null when
// it cannot be made, with the reason said once on stderr.
Context* context_or_null() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.make);
  if (s.context) return s.context.get();
  if (!s.unavailable.empty()) return nullptr;
  try {
    auto env = deck::options_from_environment();
    if (env.context.processors.empty()) env.context.processors = {"host"};
    s.context = std::make_unique<Context>(env.context);
    std::atexit(release_context);
  } catch (const std::exception& e) {
    // The library names its option; the user set an environment variable.
    const char* listed = std::getenv("CUBOID_PROCESSORS");
    const auto* keyed = dynamic_cast<const KeyedError*>(&e);
    s.unavailable = keyed && keyed->key == "processors" && listed && *listed
                        ? std::string("CUBOID_PROCESSORS=") + listed + ": " + e.what()
                        : std::string(e.what());
    std::cerr << "cuboid: the BLAS drop-in passes every GEMM on to the BLAS: " << s.unavailable
              << "\n";
    return nullptr;
  }
  return s.context.get();
}

// The next BLAS's entry `name`, or null. libcuboid_blas.so needs a BLAS itself (through Kokkos
// Kernels), so one follows it in every search order the loader makes; should none provide
// `name`, every call is taken by cuboid whatever its size (see gemm()).
template <class F>
F next_symbol(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  if (!f) std::cerr << "cuboid: no BLAS after libcuboid_blas.so provides " << name << "\n";
  return reinterpret_cast<F>(f);
}

template <class T>
FortranGemm<T> next_gemm() {
  static const auto f = next_symbol<FortranGemm<T>>(letter<T>() == 's'   ? "sgemm_"
                                                    : letter<T>() == 'd' ? "dgemm_"
                                                    : letter<T>() == 'c' ? "cgemm_"
                                                                         : "zgemm_");
  return f;
}

// BLAS's own argument rules; a call that breaks one goes to the BLAS, which reports it as
// programs expect (xerbla).
bool valid(char ta, char tb, blas_int m, blas_int n, blas_int k, blas_int lda, blas_int ldb,
           blas_int ldc) {
  auto op_ok = [](char t) { return t == 'N' || t == 'T' || t == 'C'; };
  if (!op_ok(ta) || !op_ok(tb) || m < 0 || n < 0 || k < 0) return false;
  const blas_int rows_a = ta == 'N' ? m : k, rows_b = tb == 'N' ? k : n;
  return lda >= std::max(1, rows_a) && ldb >= std::max(1, rows_b) && ldc >= std::max(1, m);
}

Op op_of(char t) {
  return t == 'N' ? Op::none : t == 'T' ? Op::transpose : Op::conjugate_transpose;
}

// Whether cuboid takes the call, and why not.
template <class T>
bool decide(char ta, char tb, blas_int m, blas_int n, blas_int k, blas_int lda, blas_int ldb,
            blas_int ldc, Pass& why) {
  State& s = state();
  if (kokkos_ext::in_own_gemm()) return why = Pass::own, false;
  if (s.forked) return why = Pass::forked, false;
#if defined(_OPENMP)
  if (omp_in_parallel()) return why = Pass::openmp, false;
#endif
  if (!valid(ta, tb, m, n, k, lda, ldb, ldc) || m == 0 || n == 0)
    return why = Pass::arguments, false;
  const double flops = gemm_flops<T>(m, n, k);
  if (s.min_flops_env >= 0) {
    if (flops < s.min_flops_env) return why = Pass::small, false;
  } else if (flops < kLadderFloorFlops<T>) {
    return why = Pass::small, false;  // below every size the crossover is measured at
  }
  if (!s.context && !on_main_thread()) return why = Pass::off_main, false;
  return true;
}

// C's m x n elements (leading dimension ldc), copied out or back.
template <class T>
void copy_columns(const T* from, blas_int ld_from, T* to, blas_int ld_to, blas_int m, blas_int n) {
  for (blas_int j = 0; j < n; ++j)
    std::memcpy(to + std::size_t(j) * ld_to, from + std::size_t(j) * ld_from, sizeof(T) * m);
}

// C <- alpha op(A) op(B) + beta C, column-major, by cuboid or by the next BLAS (`next`, which
// `has_next` says exists).
template <class T, class Next>
void gemm(char ta, char tb, blas_int m, blas_int n, blas_int k, T alpha, const T* A, blas_int lda,
          const T* B, blas_int ldb, T beta, T* C, blas_int ldc, const char* routine, bool has_next,
          const Next& next) {
  State& s = state();
  ta = char(std::toupper(static_cast<unsigned char>(ta)));
  tb = char(std::toupper(static_cast<unsigned char>(tb)));
  Pass why = Pass::small;
  std::unique_lock<std::mutex> lock(s.busy, std::defer_lock);
  if (has_next) {
    if (!decide<T>(ta, tb, m, n, k, lda, ldb, ldc, why)) {
      ++s.passed[int(why)];
      return next();
    }
    if (!lock.try_lock()) {
      ++s.passed[int(Pass::busy)];
      return next();
    }
  } else if (kokkos_ext::in_own_gemm()) {
    std::cerr << "cuboid: " << routine << " not computed: no BLAS for cuboid's own GEMM\n";
    return;
  } else {
    lock.lock();
  }
  Context* ctx = context_or_null();
  if (!ctx) {
    ++s.passed[int(Pass::unavailable)];
    if (has_next) return next();
    std::cerr << "cuboid: " << routine << " not computed: no context and no BLAS to pass it to\n";
    return;
  }
  if (has_next && s.min_flops_env < 0) {
    auto known = s.min_flops.find(letter<T>());
    if (known == s.min_flops.end()) {
      const Crossover c = crossover<T>(*ctx, next_gemm<T>());
      append_report({{"crossover", std::string(1, letter<T>()) + "gemm"},
                     {"flops", c.flops},
                     {"measured", c.measured}});
      known = s.min_flops.emplace(letter<T>(), c.flops).first;
    }
    if (gemm_flops<T>(m, n, k) < known->second) {
      ++s.passed[int(Pass::small)];
      return next();
    }
  }
  // With beta != 0 a failure midway would leave C neither old nor new: C is kept, so that the
  // BLAS can compute the call from it. That costs a copy of m n elements against the product's
  // m n k multiply-adds: felt only where k is small.
  std::vector<T> kept;
  if (has_next && beta != T(0)) {
    try {
      kept.resize(std::size_t(m) * std::size_t(n));
    } catch (const std::bad_alloc&) {
      ++s.passed[int(Pass::unavailable)];
      return next();
    }
    copy_columns(C, ldc, kept.data(), m, m, n);
  }
  const auto t0 = std::chrono::steady_clock::now();
  try {
    ctx->gemm(op_of(ta), op_of(tb), m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  } catch (const std::exception& e) {
    std::cerr << "cuboid: " << routine << (has_next ? " passed on to the BLAS: " : " failed: ")
              << e.what() << "\n";
    ++s.passed[int(Pass::unavailable)];
    if (!kept.empty()) copy_columns(kept.data(), m, C, ldc, m, n);
    if (has_next) next();
    return;
  }
  ++s.taken;
  if (!s.report_path.empty()) {
    const auto& r = ctx->last_call();
    append_report({{"routine", routine},
                   {"m", m},
                   {"n", n},
                   {"k", k},
                   {"op_a", std::string(1, ta)},
                   {"op_b", std::string(1, tb)},
                   {"processors", ctx->processor_names()},
                   {"path", r.direct ? "direct" : "partitioned"},
                   {"seconds",
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()}});
  }
}

}  // namespace
}  // namespace cuboid::blas

using cuboid::blas::blas_int;

// The Fortran entries: sgemm_, dgemm_, cgemm_ and zgemm_, with gfortran's hidden lengths of the
// two character arguments passed on as received.
#define CUBOID_BLAS_FORTRAN(T, name)                                                              \
  extern "C" void name(const char* ta, const char* tb, const blas_int* m, const blas_int* n,      \
                       const blas_int* k, const T* alpha, const T* A, const blas_int* lda,        \
                       const T* B, const blas_int* ldb, const T* beta, T* C, const blas_int* ldc, \
                       std::size_t la, std::size_t lb) {                                          \
    const auto next = cuboid::blas::next_gemm<T>();                                               \
    cuboid::blas::gemm<T>(                                                                        \
        *ta, *tb, *m, *n, *k, *alpha, A, *lda, B, *ldb, *beta, C, *ldc, #name, next != nullptr,   \
        [&] { next(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, la, lb); });             \
  }
CUBOID_BLAS_FORTRAN(float, sgemm_)
CUBOID_BLAS_FORTRAN(double, dgemm_)
CUBOID_BLAS_FORTRAN(std::complex<float>, cgemm_)
CUBOID_BLAS_FORTRAN(std::complex<double>, zgemm_)
#undef CUBOID_BLAS_FORTRAN

namespace cuboid::blas {
namespace {

// CBLAS's enumerations, as its header numbers them.
enum : int { kRowMajor = 101, kColMajor = 102, kNoTrans = 111, kTrans = 112, kConjTrans = 113 };

char op_letter(int t) {
  return t == kNoTrans ? 'N' : t == kTrans ? 'T' : t == kConjTrans ? 'C' : '?';
}

// A CBLAS call as the column-major one it is: row-major C = op(A) op(B) is column-major
// C^T = op(B)^T op(A)^T, so A and B trade places, and m and n. An unknown layout or op goes
// to the BLAS, which reports it.
template <class T, class Next>
void cblas_gemm(int layout, int ta, int tb, blas_int m, blas_int n, blas_int k, T alpha, const T* A,
                blas_int lda, const T* B, blas_int ldb, T beta, T* C, blas_int ldc,
                const char* routine, bool has_next, const Next& next) {
  const char a = layout == kRowMajor || layout == kColMajor ? op_letter(ta) : '?';
  const char b = op_letter(tb);
  if (layout == kRowMajor)
    gemm<T>(b, a, n, m, k, alpha, B, ldb, A, lda, beta, C, ldc, routine, has_next, next);
  else
    gemm<T>(a, b, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, routine, has_next, next);
}

template <class T>
using CblasReal = void (*)(int, int, int, blas_int, blas_int, blas_int, T, const T*, blas_int,
                           const T*, blas_int, T, T*, blas_int);
using CblasComplex = void (*)(int, int, int, blas_int, blas_int, blas_int, const void*, const void*,
                              blas_int, const void*, blas_int, const void*, void*, blas_int);

}  // namespace
}  // namespace cuboid::blas

#define CUBOID_BLAS_CBLAS_REAL(T, name)                                                         \
  extern "C" void name(int layout, int ta, int tb, blas_int m, blas_int n, blas_int k, T alpha, \
                       const T* A, blas_int lda, const T* B, blas_int ldb, T beta, T* C,        \
                       blas_int ldc) {                                                          \
    static const auto next = cuboid::blas::next_symbol<cuboid::blas::CblasReal<T>>(#name);      \
    cuboid::blas::cblas_gemm<T>(                                                                \
        layout, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, #name, next != nullptr,   \
        [&] { next(layout, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc); });           \
  }
CUBOID_BLAS_CBLAS_REAL(float, cblas_sgemm)
CUBOID_BLAS_CBLAS_REAL(double, cblas_dgemm)
#undef CUBOID_BLAS_CBLAS_REAL

// Complex CBLAS takes alpha, beta and the matrices by untyped pointers.
#define CUBOID_BLAS_CBLAS_COMPLEX(T, name)                                                     \
  extern "C" void name(int layout, int ta, int tb, blas_int m, blas_int n, blas_int k,         \
                       const void* alpha, const void* A, blas_int lda, const void* B,          \
                       blas_int ldb, const void* beta, void* C, blas_int ldc) {                \
    static const auto next = cuboid::blas::next_symbol<cuboid::blas::CblasComplex>(#name);     \
    cuboid::blas::cblas_gemm<T>(                                                               \
        layout, ta, tb, m, n, k, *static_cast<const T*>(alpha), static_cast<const T*>(A), lda, \
        static_cast<const T*>(B), ldb, *static_cast<const T*>(beta), static_cast<T*>(C), ldc,  \
        #name, next != nullptr,                                                                \
        [&] { next(layout, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc); });          \
  }
CUBOID_BLAS_CBLAS_COMPLEX(std::complex<float>, cblas_cgemm)
CUBOID_BLAS_CBLAS_COMPLEX(std::complex<double>, cblas_zgemm)
#undef CUBOID_BLAS_CBLAS_COMPLEX
