// The HIP backend: the one translation unit that calls the HIP runtime. Built only when Kokkos
// has the HIP backend. Kokkos Kernels' rocBLAS TPL (3.6 and later) takes the execution space
// with every gemm, so no BLAS handle is bound here.
#include <KokkosKernels_config.h>
#include <hip/hip_runtime.h>
#include <Kokkos_Core.hpp>

#include <cstddef>
#include <mutex>
#include <string>

#include "kokkos_ext/features.hpp"
#include "platform/device_backend.hpp"
#include "util/error.hpp"

namespace cuboid::platform {

namespace {
[[noreturn]] void hip_failure(const char* what, hipError_t e) {
  throw Error(std::string(what) + " failed: " + hipGetErrorString(e));
}
}  // namespace

int device_count() {
  int n = 0;
  // No driver or no device is not an error here: the build simply has nothing to offer.
  if (hipGetDeviceCount(&n) != hipSuccess) {
    (void)hipGetLastError();
    return 0;
  }
  return n;
}

DeviceInfo device_info(int index) {
  DeviceInfo info;
  info.index = index;
  hipDeviceProp_t prop{};
  if (hipGetDeviceProperties(&prop, index) == hipSuccess) {
    info.name = prop.name;
    info.total_bytes = prop.totalGlobalMem;
    info.compute_major = prop.major;
    info.compute_minor = prop.minor;
    const std::string gcn = prop.gcnArchName;  // "gfx90a:sramecc+:xnack-"
    info.arch = gcn.substr(0, gcn.find(':'));
  }
  int current = -1;
  size_t free_b = 0, total_b = 0;
  if (hipGetDevice(&current) == hipSuccess && current == index &&
      hipMemGetInfo(&free_b, &total_b) == hipSuccess) {
    info.free_bytes = free_b;
  } else {
    (void)hipGetLastError();
    info.free_bytes = info.total_bytes;
  }
  return info;
}

std::string device_backend_name() { return "HIP"; }

int active_device() {
  if (!Kokkos::is_initialized()) return -1;
  return DeviceExecSpace().hip_device();
}

std::vector<DeviceExecSpace> make_device_instances(int n) {
  std::vector<DeviceExecSpace> out;
#if KOKKOS_VERSION >= 40000
  std::vector<int> weights(std::size_t(n), 1);
  out = Kokkos::Experimental::partition_space(DeviceExecSpace(), weights);
#else
  // Kokkos 3.x instances borrow a stream and never destroy it: keep a pool for the process.
  static std::mutex m;
  static std::vector<hipStream_t> streams;
  std::lock_guard<std::mutex> lock(m);
  while (int(streams.size()) < n) {
    hipStream_t s = nullptr;
    const hipError_t e = hipStreamCreateWithFlags(&s, hipStreamNonBlocking);
    if (e != hipSuccess) hip_failure("hipStreamCreateWithFlags", e);
    streams.push_back(s);
  }
  for (int i = 0; i < n; ++i) out.emplace_back(streams[std::size_t(i)]);
#endif
  return out;
}

void make_current(const DeviceExecSpace& space) {
  thread_local int current = -1;
  const int device = space.hip_device();
  if (device == current) return;
  const hipError_t e = hipSetDevice(device);
  if (e != hipSuccess) hip_failure("hipSetDevice", e);
  current = device;
}

bool bind_blas_stream(const DeviceExecSpace& space) {
  (void)space;
#if CUBOID_HAVE_GEMM_WITH_SPACE && defined(KOKKOSKERNELS_ENABLE_TPL_ROCBLAS)
  return true;  // Kokkos Kernels takes the space itself
#else
  return false;  // no rocBLAS TPL: Kokkos Kernels' own kernel on the default instance
#endif
}

DeviceEvent create_event(const DeviceExecSpace& space) {
  make_current(space);
  hipEvent_t e = nullptr;
  const hipError_t err = hipEventCreate(&e);
  if (err != hipSuccess) hip_failure("hipEventCreate", err);
  return static_cast<DeviceEvent>(e);
}

void destroy_event(DeviceEvent event) {
  if (event) (void)hipEventDestroy(static_cast<hipEvent_t>(event));
}

void record_event(DeviceEvent event, const DeviceExecSpace& space) {
  make_current(space);
  const hipError_t e = hipEventRecord(static_cast<hipEvent_t>(event), space.hip_stream());
  if (e != hipSuccess) hip_failure("hipEventRecord", e);
}

void wait_event(const DeviceExecSpace& space, DeviceEvent event) {
  make_current(space);
  const hipError_t e = hipStreamWaitEvent(space.hip_stream(), static_cast<hipEvent_t>(event), 0);
  if (e != hipSuccess) hip_failure("hipStreamWaitEvent", e);
}

void sync_event(DeviceEvent event) {
  const hipError_t e = hipEventSynchronize(static_cast<hipEvent_t>(event));
  if (e != hipSuccess) hip_failure("hipEventSynchronize", e);
}

bool event_done(DeviceEvent event) {
  const hipError_t e = hipEventQuery(static_cast<hipEvent_t>(event));
  if (e == hipErrorNotReady) return false;
  if (e != hipSuccess) hip_failure("hipEventQuery", e);
  return true;
}

double elapsed_seconds(DeviceEvent from, DeviceEvent to) {
  float ms = 0;
  const hipError_t e =
      hipEventElapsedTime(&ms, static_cast<hipEvent_t>(from), static_cast<hipEvent_t>(to));
  if (e != hipSuccess) hip_failure("hipEventElapsedTime", e);
  return double(ms) * 1e-3;
}

bool host_register(void* p, std::size_t bytes) {
  const hipError_t e = hipHostRegister(p, bytes, hipHostRegisterPortable);
  if (e == hipSuccess) return true;
  (void)hipGetLastError();  // a refusal is not sticky: clear it for later calls
  return false;
}

void host_unregister(void* p) {
  if (hipHostUnregister(p) != hipSuccess) (void)hipGetLastError();
}

bool host_pinned(const void* p) {
  unsigned int flags = 0;
  // Succeeds only for page-locked memory (allocated pinned or registered).
  if (hipHostGetFlags(&flags, const_cast<void*>(p)) == hipSuccess) return true;
  (void)hipGetLastError();
  return false;
}

void copy_2d(const DeviceExecSpace& space, void* dst, std::size_t dpitch, const void* src,
             std::size_t spitch, std::size_t width, std::size_t height, bool to_device) {
  make_current(space);
  const hipError_t e = hipMemcpy2DAsync(dst, dpitch, src, spitch, width, height,
                                        to_device ? hipMemcpyHostToDevice : hipMemcpyDeviceToHost,
                                        space.hip_stream());
  if (e != hipSuccess) hip_failure("hipMemcpy2DAsync", e);
}

}  // namespace cuboid::platform
