#pragma once
// cuboid's C++ interface: a Context owns a set of processors (the host's cores, staged
// processors, GPUs), their speeds and their long-lived workers; Context::gemm computes
// C <- alpha op(A) op(B) + beta C on column-major host matrices with all of them, on a partition
// that follows their speeds. The contract (threads, Kokkos, errors, repeatability) is that of
// the C interface in cuboid.h; here errors are exceptions: cuboid::Error, or KeyedError naming
// the option at fault.
#include <cuboid/error.hpp>
#include <cuboid/gemm.hpp>

#include <complex>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cuboid {

struct ContextOptions {
  std::vector<std::string> processors;  // empty: every execution space of the build
  std::vector<double> speeds;           // GFLOP/s per processor; empty: cache, else measured
  std::string speed_cache = "default";  // a path, "default" or "" (none)
  std::string algorithm = "nrrp3d", discretization = "rounded";
  double memory_budget_mib = 0;  // per staged processor or device; 0: the default
  std::int64_t tile = 0;         // 0: chosen per call
  // Products of fewer flops take the direct path (one GEMM on the host processor), others the
  // partition. < 0: measured per call shape (speeds measured) or 2*384^3 (speeds given, or
  // reproducible), and always direct below 2*128^3.
  double direct_below_flops = -1;
  bool reproducible = false;  // keep the first calibration's speeds for the context's life
  // Processors that copy (staged, GPUs) page-lock the blocks of A, B and C they read and write
  // for each call and copy straight from and to them; false: through a staging ring instead.
  bool register_host = true;
};

// What the context did for its last call, for callers that report it.
struct CallReport {
  bool direct = false;         // one GEMM on one processor, no partition
  double seconds = 0;          // the product (not calibration)
  double calibration_s = 0;    // spent calibrating within this call (first call of a type)
  std::string algorithm;       // the partition used ("" for a direct call)
  std::vector<double> speeds;  // GFLOP/s per processor, as partitioned with
  std::string processor;       // the processor of a direct call ("" when partitioned)
  // A trial: with measured speeds the first two calls of a shape time the direct path and the
  // partition, and later calls of that shape take the faster (ContextOptions::direct_below_flops).
  bool trial = false;
  // A distributed call (cuboid/mpi.hpp): the ranks, the rank partition chosen and the bytes of
  // A, B and C this rank received (as MPI counted them); 1, "" and 0 otherwise.
  int ranks = 1;
  std::string rank_partition;
  double received_bytes = 0;
  // How this rank drove MPI while it computed (a distributed call; 0 otherwise): the calls that
  // progressed MPI while its processors ran, and the pieces computed on the calling thread, which
  // drive none while they run. With one thread per rank, a rank that never polls while computing
  // holds up the transfers others wait for.
  double mpi_polls_while_computing = 0;
  int pieces_on_calling_thread = 0;
};

struct ContextInternals;

class Context {
 public:
  explicit Context(const ContextOptions& options = {});
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // C (m x n, leading dimension ldc) <- alpha op(A) op(B) + beta C, with BLAS's argument rules.
  void gemm(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
            const double* A, std::int64_t lda, const double* B, std::int64_t ldb, double beta,
            double* C, std::int64_t ldc);
  void gemm(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
            const float* A, std::int64_t lda, const float* B, std::int64_t ldb, float beta,
            float* C, std::int64_t ldc);
  // Complex: zgemm and cgemm. Arrays need only their elements' alignment (that of std::complex,
  // as Fortran's COMPLEX*16 has); a matrix not aligned to twice that is multiplied through an
  // aligned copy.
  void gemm(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k,
            std::complex<double> alpha, const std::complex<double>* A, std::int64_t lda,
            const std::complex<double>* B, std::int64_t ldb, std::complex<double> beta,
            std::complex<double>* C, std::int64_t ldc);
  void gemm(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k,
            std::complex<float> alpha, const std::complex<float>* A, std::int64_t lda,
            const std::complex<float>* B, std::int64_t ldb, std::complex<float> beta,
            std::complex<float>* C, std::int64_t ldc);

  // The same product on matrices that lie in the memory of one of the context's processors the
  // host cannot address (a GPU's), named by the Kokkos memory space's name() ("Cuda", "HIP"):
  // one GEMM on that processor, on the matrices where they are (nothing is copied), complete on
  // return. A, B and C are that memory's pointers; the arguments follow gemm's rules. Throws
  // KeyedError("processors") when no processor of the context has that memory. The Kokkos view
  // overloads (<cuboid/kokkos.hpp>) call it for device views; it takes pointers so that this
  // header needs no Kokkos.
  void gemm_resident(std::string_view memory_space, Op op_a, Op op_b, std::int64_t m,
                     std::int64_t n, std::int64_t k, double alpha, const double* A,
                     std::int64_t lda, const double* B, std::int64_t ldb, double beta, double* C,
                     std::int64_t ldc);
  void gemm_resident(std::string_view memory_space, Op op_a, Op op_b, std::int64_t m,
                     std::int64_t n, std::int64_t k, float alpha, const float* A, std::int64_t lda,
                     const float* B, std::int64_t ldb, float beta, float* C, std::int64_t ldc);
  void gemm_resident(std::string_view memory_space, Op op_a, Op op_b, std::int64_t m,
                     std::int64_t n, std::int64_t k, std::complex<double> alpha,
                     const std::complex<double>* A, std::int64_t lda, const std::complex<double>* B,
                     std::int64_t ldb, std::complex<double> beta, std::complex<double>* C,
                     std::int64_t ldc);
  void gemm_resident(std::string_view memory_space, Op op_a, Op op_b, std::int64_t m,
                     std::int64_t n, std::int64_t k, std::complex<float> alpha,
                     const std::complex<float>* A, std::int64_t lda, const std::complex<float>* B,
                     std::int64_t ldb, std::complex<float> beta, std::complex<float>* C,
                     std::int64_t ldc);

  // The speeds for a scalar type (calibrating on first use), GFLOP/s per processor.
  std::vector<double> speeds(ScalarType type);
  std::vector<std::string> processor_names() const;
  const CallReport& last_call() const;

 private:
  friend struct ContextInternals;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cuboid
