#pragma once
// Fills the Kokkos and process parts of a run record. Header-only on purpose: it needs Kokkos,
// which the report library does not link; the runners that include it do.
#include <KokkosKernels_config.h>
#include <Kokkos_Core.hpp>

#include "kokkos_ext/compat.hpp"
#include "report/provenance.hpp"
#include "report/run_record.hpp"
#include "util/host_memory.hpp"

namespace cuboid::report {

inline KokkosFacts kokkos_facts() {
  KokkosFacts k;
  k.version = kokkos_ext::kokkos_version_string();
  k.default_space = Kokkos::DefaultExecutionSpace::name();
  k.default_host_space = Kokkos::DefaultHostExecutionSpace::name();
  k.host_concurrency = Kokkos::DefaultHostExecutionSpace().concurrency();
#if defined(KOKKOS_ENABLE_SERIAL)
  k.spaces.push_back("Serial");
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
  k.spaces.push_back("OpenMP");
#endif
#if defined(KOKKOS_ENABLE_THREADS)
  k.spaces.push_back("Threads");
#endif
#if defined(KOKKOS_ENABLE_CUDA)
  k.spaces.push_back("Cuda");
#endif
#if defined(KOKKOS_ENABLE_HIP)
  k.spaces.push_back("HIP");
#endif
#if defined(KOKKOS_ENABLE_SYCL)
  k.spaces.push_back("SYCL");
#endif
#if defined(KOKKOSKERNELS_ENABLE_TPL_BLAS)
  k.kernels_tpls.push_back("BLAS");
#endif
#if defined(KOKKOSKERNELS_ENABLE_TPL_MKL)
  k.kernels_tpls.push_back("MKL");
#endif
#if defined(KOKKOSKERNELS_ENABLE_TPL_CUBLAS)
  k.kernels_tpls.push_back("cuBLAS");
#endif
#if defined(KOKKOSKERNELS_ENABLE_TPL_ROCBLAS)
  k.kernels_tpls.push_back("rocBLAS");
#endif
  return k;
}

inline ProcessEnvironment this_process() {
  return process_environment(Kokkos::DefaultHostExecutionSpace().concurrency());
}

// The build, Kokkos and placement of this process (rank 0 under MPI) into `rec`.
inline void describe_process(RunRecord& rec) {
  rec.kokkos = kokkos_facts();
  rec.environment = this_process();
  rec.host = rec.environment.host;
}

}  // namespace cuboid::report
