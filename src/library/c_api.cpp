// The C interface (include/cuboid/cuboid.h) over cuboid::Context: every exception becomes a
// status and a message kept in the context; nothing escapes into C or Fortran.
#include <cuboid/cuboid.h>

#include <cuboid/cuboid.hpp>

#include <atomic>
#include <cstring>
#include <new>
#include <sstream>
#include <string>
#include <unordered_map>

#include "library/c_api.hpp"

cuboid_context::cuboid_context(const cuboid::ContextOptions& o)
    : context(o), id([] {
        static std::atomic<std::uint64_t> next{1};
        return next++;
      }()) {}

namespace cuboid::capi {
namespace {
std::unordered_map<std::uint64_t, std::string>& thread_errors() {
  thread_local std::unordered_map<std::uint64_t, std::string> errors;
  return errors;
}
}  // namespace

std::string& error_of(const cuboid_context* ctx) { return thread_errors()[ctx->id]; }

void forget_errors_of(const cuboid_context* ctx) { thread_errors().erase(ctx->id); }

}  // namespace cuboid::capi

namespace {

using cuboid::capi::error_of;
using cuboid::capi::guarded;

// `text` into the caller's buffer of `size` bytes (size > 0), cut to fit and always terminated.
void copy_text(char* buffer, std::size_t size, const std::string& text) {
  std::strncpy(buffer, text.c_str(), size - 1);
  buffer[size - 1] = '\0';
}
template <std::size_t N>
void copy_text(char (&field)[N], const std::string& text) {
  copy_text(field, N, text);
}

// "host,staged" as names; NULL: none given (the default processors). An empty list or an empty
// name ("", "host,", "host,,staged") is refused: it is a mistake, not a request for the default.
std::vector<std::string> split_names(const char* list) {
  std::vector<std::string> names;
  if (!list) return names;
  const std::string text = list;
  // getline yields no name after a trailing comma, nor any for "": those are empty names too.
  bool empty_name = text.empty() || text.back() == ',';
  std::stringstream in(text);
  for (std::string name; std::getline(in, name, ',');) {
    empty_name = empty_name || name.empty();
    names.push_back(name);
  }
  if (empty_name)
    throw cuboid::KeyedError("processors", "processors \"" + text +
                                               "\": an empty name (give NULL for the default "
                                               "processors)");
  return names;
}

cuboid::ContextOptions options_of(const cuboid_options* o) {
  cuboid::ContextOptions x;
  if (!o) return x;
  x.processors = split_names(o->processors);
  if (o->speeds && o->speed_count > 0) x.speeds.assign(o->speeds, o->speeds + o->speed_count);
  if (o->speed_cache) x.speed_cache = o->speed_cache;
  if (o->algorithm) x.algorithm = o->algorithm;
  if (o->discretization) x.discretization = o->discretization;
  x.memory_budget_mib = o->memory_budget_mib;
  x.tile = o->tile;
  x.direct_below_flops = o->direct_below_flops;
  x.reproducible = o->reproducible != 0;
  return x;
}

template <class Scalar>
cuboid_status gemm(cuboid_context* ctx, char transa, char transb, int64_t m, int64_t n, int64_t k,
                   Scalar alpha, const Scalar* A, int64_t lda, const Scalar* B, int64_t ldb,
                   Scalar beta, Scalar* C, int64_t ldc) {
  if (!ctx) return CUBOID_INVALID_ARGUMENT;
  return guarded(error_of(ctx), [&] {
    const auto op_a = cuboid::capi::op_argument(transa, "transa");
    const auto op_b = cuboid::capi::op_argument(transb, "transb");
    ctx->context.gemm(op_a, op_b, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  });
}

// A complex call: alpha and beta point to (re, im) pairs, the arrays to std::complex<T>.
template <class T>
cuboid_status complex_gemm(cuboid_context* ctx, char transa, char transb, int64_t m, int64_t n,
                           int64_t k, const void* alpha, const void* A, int64_t lda, const void* B,
                           int64_t ldb, const void* beta, void* C, int64_t ldc) {
  if (!ctx) return CUBOID_INVALID_ARGUMENT;
  return guarded(error_of(ctx), [&] {
    if (!alpha) throw cuboid::KeyedError("alpha", "alpha is a null pointer");
    if (!beta) throw cuboid::KeyedError("beta", "beta is a null pointer");
    using Z = std::complex<T>;
    const auto op_a = cuboid::capi::op_argument(transa, "transa");
    const auto op_b = cuboid::capi::op_argument(transb, "transb");
    ctx->context.gemm(op_a, op_b, m, n, k, *static_cast<const Z*>(alpha), static_cast<const Z*>(A),
                      lda, static_cast<const Z*>(B), ldb, *static_cast<const Z*>(beta),
                      static_cast<Z*>(C), ldc);
  });
}

}  // namespace

extern "C" {

void cuboid_options_init(cuboid_options* options) {
  if (!options) return;
  std::memset(options, 0, sizeof *options);
  options->direct_below_flops = -1;
}

cuboid_status cuboid_create(const cuboid_options* options, cuboid_context** context, char* error,
                            int64_t error_size) {
  std::string message;
  const cuboid_status s = guarded(message, [&] {
    if (!context) throw cuboid::KeyedError("context", "context is a null pointer");
    *context = nullptr;
    *context = new cuboid_context(options_of(options));
  });
  if (s != CUBOID_SUCCESS && error && error_size > 0)
    copy_text(error, std::size_t(error_size), message);
  return s;
}

void cuboid_destroy(cuboid_context* context) {
  if (context) cuboid::capi::forget_errors_of(context);
  delete context;
}

const char* cuboid_last_error(const cuboid_context* context) {
  return context ? error_of(context).c_str() : "no context";
}

cuboid_status cuboid_last_call(cuboid_context* context, cuboid_call_report* report) {
  if (!context) return CUBOID_INVALID_ARGUMENT;
  return guarded(error_of(context), [&] {
    if (!report) throw cuboid::KeyedError("report", "report is a null pointer");
    const cuboid::CallReport r = context->context.last_call();
    *report = cuboid_call_report{};
    report->direct = r.direct ? 1 : 0;
    report->trial = r.trial ? 1 : 0;
    report->seconds = r.seconds;
    report->calibration_s = r.calibration_s;
    report->processors = int(r.speeds.size());
    report->ranks = r.ranks;
    report->received_bytes = r.received_bytes;
    report->mpi_polls_while_computing = r.mpi_polls_while_computing;
    report->pieces_on_calling_thread = r.pieces_on_calling_thread;
    copy_text(report->algorithm, r.algorithm);
    copy_text(report->processor, r.processor);
    copy_text(report->rank_partition, r.rank_partition);
  });
}

cuboid_status cuboid_dgemm(cuboid_context* context, char transa, char transb, int64_t m, int64_t n,
                           int64_t k, double alpha, const double* A, int64_t lda, const double* B,
                           int64_t ldb, double beta, double* C, int64_t ldc) {
  return gemm(context, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

cuboid_status cuboid_sgemm(cuboid_context* context, char transa, char transb, int64_t m, int64_t n,
                           int64_t k, float alpha, const float* A, int64_t lda, const float* B,
                           int64_t ldb, float beta, float* C, int64_t ldc) {
  return gemm(context, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

cuboid_status cuboid_zgemm(cuboid_context* context, char transa, char transb, int64_t m, int64_t n,
                           int64_t k, const void* alpha, const void* A, int64_t lda, const void* B,
                           int64_t ldb, const void* beta, void* C, int64_t ldc) {
  return complex_gemm<double>(context, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C,
                              ldc);
}

cuboid_status cuboid_cgemm(cuboid_context* context, char transa, char transb, int64_t m, int64_t n,
                           int64_t k, const void* alpha, const void* A, int64_t lda, const void* B,
                           int64_t ldb, const void* beta, void* C, int64_t ldc) {
  return complex_gemm<float>(context, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

int cuboid_speeds(cuboid_context* context, char type, double* speeds, int capacity) {
  if (!context) return -1;
  std::vector<double> v;
  const cuboid_status s = guarded(error_of(context), [&] {
    // NULL with capacity 0 asks for the count alone.
    if (capacity < 0 || (capacity > 0 && !speeds))
      throw cuboid::KeyedError("speeds", "speeds: a null pointer, or a negative capacity (" +
                                             std::to_string(capacity) + ")");
    const cuboid::ScalarType t = type == 'd'   ? cuboid::ScalarType::float64
                                 : type == 's' ? cuboid::ScalarType::float32
                                 : type == 'z' ? cuboid::ScalarType::complex_float64
                                               : cuboid::ScalarType::complex_float32;
    if (type != 'd' && type != 's' && type != 'z' && type != 'c')
      throw cuboid::KeyedError("type",
                               std::string("type '") + type + "' is not 'd', 's', 'z' or 'c'");
    v = context->context.speeds(t);
  });
  if (s != CUBOID_SUCCESS) return -1;
  for (int i = 0; i < capacity && std::size_t(i) < v.size(); ++i) speeds[i] = v[std::size_t(i)];
  return int(v.size());
}

}  // extern "C"
