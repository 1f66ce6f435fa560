// The distributed C interface (include/cuboid/cuboid_mpi.h) over cuboid/mpi.hpp.
#include <cuboid/cuboid_mpi.h>

#include <cuboid/mpi.hpp>

#include <complex>

#include "library/c_api.hpp"
#include "mpi/communicator.hpp"

namespace {

cuboid::BlockCyclicLayout layout_of(const cuboid_block_cyclic& l) {
  cuboid::BlockCyclicLayout L{l.grid_rows, l.grid_cols, l.block};
  L.first_a = {l.first_a[0], l.first_a[1]};
  L.first_b = {l.first_b[0], l.first_b[1]};
  L.first_c = {l.first_c[0], l.first_c[1]};
  return L;
}

template <class Scalar>
cuboid_status gemm(cuboid_context* ctx, MPI_Comm comm, const cuboid_block_cyclic* layout,
                   char transa, char transb, int64_t m, int64_t n, int64_t k, Scalar alpha,
                   const Scalar* A, int64_t lda, const Scalar* B, int64_t ldb, Scalar beta,
                   Scalar* C, int64_t ldc) {
  if (!ctx) return CUBOID_INVALID_ARGUMENT;
  return cuboid::capi::guarded(cuboid::capi::error_of(ctx), [&] {
    if (!layout) throw cuboid::KeyedError("layout", "layout is a null pointer");
    const auto op_a = cuboid::capi::op_argument(transa, "transa");
    const auto op_b = cuboid::capi::op_argument(transb, "transb");
    cuboid::gemm(ctx->context, comm, layout_of(*layout), op_a, op_b, m, n, k, alpha, A, lda, B, ldb,
                 beta, C, ldc);
  });
}

// alpha, beta and the arrays as CBLAS passes complex numbers: pointers to (re, im) pairs.
template <class T>
cuboid_status complex_gemm(cuboid_context* ctx, MPI_Comm comm, const cuboid_block_cyclic* layout,
                           char transa, char transb, int64_t m, int64_t n, int64_t k,
                           const void* alpha, const void* A, int64_t lda, const void* B,
                           int64_t ldb, const void* beta, void* C, int64_t ldc) {
  if (!ctx) return CUBOID_INVALID_ARGUMENT;
  return cuboid::capi::guarded(cuboid::capi::error_of(ctx), [&] {
    if (!alpha) throw cuboid::KeyedError("alpha", "alpha is a null pointer");
    if (!beta) throw cuboid::KeyedError("beta", "beta is a null pointer");
    if (!layout) throw cuboid::KeyedError("layout", "layout is a null pointer");
    using Z = std::complex<T>;
    const auto op_a = cuboid::capi::op_argument(transa, "transa");
    const auto op_b = cuboid::capi::op_argument(transb, "transb");
    cuboid::gemm(ctx->context, comm, layout_of(*layout), op_a, op_b, m, n, k,
                 *static_cast<const Z*>(alpha), static_cast<const Z*>(A), lda,
                 static_cast<const Z*>(B), ldb, *static_cast<const Z*>(beta), static_cast<Z*>(C),
                 ldc);
  });
}

}  // namespace

extern "C" {

int64_t cuboid_local_extent(int64_t n, int64_t block, int coord, int procs) {
  try {
    return cuboid::local_extent(n, block, coord, procs);
  } catch (...) {
    return -1;
  }
}

int64_t cuboid_local_extent_from(int64_t n, int64_t block, int coord, int first, int procs) {
  try {
    return cuboid::local_extent(n, block, coord, procs, first);
  } catch (...) {
    return -1;
  }
}

cuboid_status cuboid_set_rank_options(cuboid_context* context, const char* algorithm,
                                      const double* speeds, int nspeeds, double bandwidth_gbs,
                                      double memory_limit_mib) {
  if (!context) return CUBOID_INVALID_ARGUMENT;
  return cuboid::capi::guarded(cuboid::capi::error_of(context), [&] {
    if (nspeeds < 0 || (nspeeds > 0 && !speeds))
      throw cuboid::KeyedError("speeds", "speeds: a null pointer or a negative count");
    cuboid::RankOptions o;
    if (algorithm) o.algorithm = algorithm;
    if (nspeeds > 0) o.speeds.assign(speeds, speeds + nspeeds);
    o.bandwidth_gbs = bandwidth_gbs, o.memory_limit_mib = memory_limit_mib;
    cuboid::set_rank_options(context->context, o);
  });
}

cuboid_status cuboid_dgemm_distributed(cuboid_context* context, MPI_Comm comm,
                                       const cuboid_block_cyclic* layout, char transa, char transb,
                                       int64_t m, int64_t n, int64_t k, double alpha,
                                       const double* A, int64_t lda, const double* B, int64_t ldb,
                                       double beta, double* C, int64_t ldc) {
  return gemm(context, comm, layout, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

cuboid_status cuboid_sgemm_distributed(cuboid_context* context, MPI_Comm comm,
                                       const cuboid_block_cyclic* layout, char transa, char transb,
                                       int64_t m, int64_t n, int64_t k, float alpha, const float* A,
                                       int64_t lda, const float* B, int64_t ldb, float beta,
                                       float* C, int64_t ldc) {
  return gemm(context, comm, layout, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

cuboid_status cuboid_zgemm_distributed(cuboid_context* context, MPI_Comm comm,
                                       const cuboid_block_cyclic* layout, char transa, char transb,
                                       int64_t m, int64_t n, int64_t k, const void* alpha,
                                       const void* A, int64_t lda, const void* B, int64_t ldb,
                                       const void* beta, void* C, int64_t ldc) {
  return complex_gemm<double>(context, comm, layout, transa, transb, m, n, k, alpha, A, lda, B, ldb,
                              beta, C, ldc);
}

cuboid_status cuboid_cgemm_distributed(cuboid_context* context, MPI_Comm comm,
                                       const cuboid_block_cyclic* layout, char transa, char transb,
                                       int64_t m, int64_t n, int64_t k, const void* alpha,
                                       const void* A, int64_t lda, const void* B, int64_t ldb,
                                       const void* beta, void* C, int64_t ldc) {
  return complex_gemm<float>(context, comm, layout, transa, transb, m, n, k, alpha, A, lda, B, ldb,
                             beta, C, ldc);
}

cuboid_status cuboid_dgemm_distributed_f(cuboid_context* context, MPI_Fint comm,
                                         const cuboid_block_cyclic* layout, char transa,
                                         char transb, int64_t m, int64_t n, int64_t k, double alpha,
                                         const double* A, int64_t lda, const double* B, int64_t ldb,
                                         double beta, double* C, int64_t ldc) {
  return gemm(context, cuboid::mpi::from_fortran(comm), layout, transa, transb, m, n, k, alpha, A,
              lda, B, ldb, beta, C, ldc);
}

}  // extern "C"
