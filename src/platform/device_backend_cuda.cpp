// The CUDA backend: the one translation unit that calls the CUDA runtime (and, for Kokkos
// Kernels before 3.6, cuBLAS). Built only when Kokkos has the CUDA backend.
#include <KokkosKernels_config.h>
#include <cuda_runtime.h>
#include <Kokkos_Core.hpp>

#include <cstddef>
#include <mutex>
#include <string>

#include "kokkos_ext/features.hpp"
#include "platform/device_backend.hpp"
#include "util/error.hpp"

#if defined(KOKKOSKERNELS_ENABLE_TPL_CUBLAS) && !CUBOID_HAVE_GEMM_WITH_SPACE
#include <KokkosBlas_tpl_spec.hpp>  // KokkosBlas::Impl::CudaBlasSingleton, cuBLAS
#endif

namespace cuboid::platform {

namespace {
[[noreturn]] void cuda_failure(const char* what, cudaError_t e) {
  throw Error(std::string(what) + " failed: " + cudaGetErrorString(e));
}
}  // namespace

int device_count() {
  int n = 0;
  // No driver or no device is not an error here: the build simply has nothing to offer.
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

DeviceInfo device_info(int index) {
  DeviceInfo info;
  info.index = index;
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, index) == cudaSuccess) {
    info.name = prop.name;
    info.total_bytes = prop.totalGlobalMem;
    info.compute_major = prop.major;
    info.compute_minor = prop.minor;
    info.arch = "sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
  }
  int current = -1;
  size_t free_b = 0, total_b = 0;
  if (cudaGetDevice(&current) == cudaSuccess && current == index &&
      cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) {
    info.free_bytes = free_b;
  } else {
    // Asking another device would create a context on it; its total is the honest upper bound.
    (void)cudaGetLastError();
    info.free_bytes = info.total_bytes;
  }
  return info;
}

std::string device_backend_name() { return "Cuda"; }

int active_device() {
  if (!Kokkos::is_initialized()) return -1;
  return Kokkos::Cuda().cuda_device();
}

std::vector<Kokkos::Cuda> make_device_instances(int n) {
  std::vector<Kokkos::Cuda> out;
#if KOKKOS_VERSION >= 40000
  std::vector<int> weights(std::size_t(n), 1);
  out = Kokkos::Experimental::partition_space(Kokkos::Cuda(), weights);
#else
  // Kokkos 3.x instances borrow a stream and never destroy it: keep a pool for the process, on
  // the device Kokkos made current at initialisation.
  static std::mutex m;
  static std::vector<cudaStream_t> streams;
  std::lock_guard<std::mutex> lock(m);
  while (int(streams.size()) < n) {
    cudaStream_t s = nullptr;
    const cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    if (e != cudaSuccess) cuda_failure("cudaStreamCreateWithFlags", e);
    streams.push_back(s);
  }
  for (int i = 0; i < n; ++i) out.emplace_back(streams[std::size_t(i)]);
#endif
  return out;
}

void make_current(const Kokkos::Cuda& space) {
  thread_local int current = -1;
  const int device = space.cuda_device();
  if (device == current) return;
  const cudaError_t e = cudaSetDevice(device);
  if (e != cudaSuccess) cuda_failure("cudaSetDevice", e);
  current = device;
}

bool bind_blas_stream(const Kokkos::Cuda& space) {
#if CUBOID_HAVE_GEMM_WITH_SPACE
  (void)space;  // Kokkos Kernels takes the space itself
  return true;
#elif defined(KOKKOSKERNELS_ENABLE_TPL_CUBLAS)
  auto& blas = KokkosBlas::Impl::CudaBlasSingleton::singleton();
  if (cublasSetStream(blas.handle, space.cuda_stream()) != CUBLAS_STATUS_SUCCESS)
    throw Error("cublasSetStream failed on Kokkos Kernels' cuBLAS handle");
  return true;
#else
  (void)space;
  return false;
#endif
}

DeviceEvent create_event(const DeviceExecSpace& space) {
  make_current(space);
  cudaEvent_t e = nullptr;
  const cudaError_t err = cudaEventCreate(&e);
  if (err != cudaSuccess) cuda_failure("cudaEventCreate", err);
  return static_cast<DeviceEvent>(e);
}

void destroy_event(DeviceEvent event) {
  if (event) (void)cudaEventDestroy(static_cast<cudaEvent_t>(event));
}

void record_event(DeviceEvent event, const DeviceExecSpace& space) {
  make_current(space);
  const cudaError_t e = cudaEventRecord(static_cast<cudaEvent_t>(event), space.cuda_stream());
  if (e != cudaSuccess) cuda_failure("cudaEventRecord", e);
}

void wait_event(const DeviceExecSpace& space, DeviceEvent event) {
  make_current(space);
  const cudaError_t e =
      cudaStreamWaitEvent(space.cuda_stream(), static_cast<cudaEvent_t>(event), 0);
  if (e != cudaSuccess) cuda_failure("cudaStreamWaitEvent", e);
}

void sync_event(DeviceEvent event) {
  const cudaError_t e = cudaEventSynchronize(static_cast<cudaEvent_t>(event));
  if (e != cudaSuccess) cuda_failure("cudaEventSynchronize", e);
}

bool event_done(DeviceEvent event) {
  const cudaError_t e = cudaEventQuery(static_cast<cudaEvent_t>(event));
  if (e == cudaErrorNotReady) return false;
  if (e != cudaSuccess) cuda_failure("cudaEventQuery", e);
  return true;
}

double elapsed_seconds(DeviceEvent from, DeviceEvent to) {
  float ms = 0;
  const cudaError_t e =
      cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(from), static_cast<cudaEvent_t>(to));
  if (e != cudaSuccess) cuda_failure("cudaEventElapsedTime", e);
  return double(ms) * 1e-3;
}

bool host_register(void* p, std::size_t bytes) {
  const cudaError_t e = cudaHostRegister(p, bytes, cudaHostRegisterPortable);
  if (e == cudaSuccess) return true;
  (void)cudaGetLastError();  // a refusal is not sticky: clear it for later calls
  return false;
}

void host_unregister(void* p) {
  if (cudaHostUnregister(p) != cudaSuccess) (void)cudaGetLastError();
}

bool host_pinned(const void* p) {
  unsigned int flags = 0;
  // Succeeds only for page-locked memory (allocated pinned or registered).
  if (cudaHostGetFlags(&flags, const_cast<void*>(p)) == cudaSuccess) return true;
  (void)cudaGetLastError();
  return false;
}

void copy_2d(const DeviceExecSpace& space, void* dst, std::size_t dpitch, const void* src,
             std::size_t spitch, std::size_t width, std::size_t height, bool to_device) {
  make_current(space);
  const cudaError_t e = cudaMemcpy2DAsync(
      dst, dpitch, src, spitch, width, height,
      to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, space.cuda_stream());
  if (e != cudaSuccess) cuda_failure("cudaMemcpy2DAsync", e);
}

}  // namespace cuboid::platform
