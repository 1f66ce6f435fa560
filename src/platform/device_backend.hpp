#pragma once
// The only interface to vendor runtimes. Each device kind has one backend file that makes the
// calls (device_backend_cuda.cpp, device_backend_hip.cpp); everything else in cuboid talks to
// devices through Kokkos and the aliases below.
#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#if defined(KOKKOS_ENABLE_CUDA)
#define CUBOID_DEVICE_BACKEND 1
#elif defined(KOKKOS_ENABLE_HIP)
#define CUBOID_DEVICE_BACKEND 1
#else
#define CUBOID_DEVICE_BACKEND 0
#endif

namespace cuboid::platform {

#if defined(KOKKOS_ENABLE_CUDA)
// A GPU processor: its execution space, its memory, and page-locked host memory for staging.
using DeviceExecSpace = Kokkos::Cuda;
using DeviceMemorySpace = Kokkos::CudaSpace;
using DevicePinnedSpace = Kokkos::CudaHostPinnedSpace;
#elif defined(KOKKOS_ENABLE_HIP)
#if KOKKOS_VERSION >= 40000  // HIP left Kokkos::Experimental in 4.0
using DeviceExecSpace = Kokkos::HIP;
using DeviceMemorySpace = Kokkos::HIPSpace;
using DevicePinnedSpace = Kokkos::HIPHostPinnedSpace;
#else
using DeviceExecSpace = Kokkos::Experimental::HIP;
using DeviceMemorySpace = Kokkos::Experimental::HIPSpace;
using DevicePinnedSpace = Kokkos::Experimental::HIPHostPinnedSpace;
#endif
#endif

struct DeviceInfo {
  int index = 0;
  std::string name;
  std::uint64_t total_bytes = 0, free_bytes = 0;
  // CUDA: compute capability; HIP: the gfx architecture's major and minor.
  int compute_major = 0, compute_minor = 0;
  std::string arch;  // "sm_90", "gfx908", ...
};

// Number of devices of the build's device backend visible to this process (0 without one).
int device_count();
DeviceInfo device_info(int index);
// Name of the device backend compiled in ("Cuda", "HIP"), or "" for a host-only build.
std::string device_backend_name();
// Prefix of device processor names: "cuda" (cuda:N), "hip" (hip:N), "" for a host-only build.
std::string device_processor_prefix();

// The device this process's Kokkos drives, or -1 (no device backend, or Kokkos not running).
// Kokkos 3.x and 4.x drive exactly one device per process: the one chosen at initialisation
// (KOKKOS_DEVICE_ID, --kokkos-device-id, or the node-local MPI rank modulo the device count).
int active_device();

// Throws cuboid::Error, naming `where`, unless device `index` is the one this process drives.
void require_active_device(int index, const std::string& where);

#if CUBOID_DEVICE_BACKEND
// `n` execution-space instances on the active device, each on a stream of its own, so that
// copies and GEMMs issued on different instances can overlap. The streams are created once and
// reused by later calls (they live until the process exits).
std::vector<DeviceExecSpace> make_device_instances(int n);

// Makes `space`'s device current on the calling thread. The current device is per thread and
// Kokkos 3.x sets it only on the thread that initialised it, while the engine drives each
// processor from a thread of its own: every copy and GEMM call on a device goes through this.
void make_current(const DeviceExecSpace& space);

// Kokkos Kernels before 3.6 calls the vendor BLAS on one process-wide handle and takes no
// execution space. This points that handle at `space`'s stream, so that the next
// KokkosBlas::gemm on device views is ordered on `space` like any other work issued to it.
// Returns false when this build has no vendor BLAS TPL for the device (gemm then runs Kokkos
// Kernels' own kernel on the default instance).
bool bind_blas_stream(const DeviceExecSpace& space);

// Events order work between the instances of one device without the host: Kokkos offers no
// portable event, so these wrap the runtime's events (cudaEvent_t, hipEvent_t), created with
// timing, so that copy and GEMM times come from the device clock. A DeviceEvent is opaque.
using DeviceEvent = void*;
DeviceEvent create_event(const DeviceExecSpace& space);
void destroy_event(DeviceEvent event);
// Marks the current end of `space`'s queue.
void record_event(DeviceEvent event, const DeviceExecSpace& space);
// Work issued to `space` from now on starts after `event` (the host does not wait).
void wait_event(const DeviceExecSpace& space, DeviceEvent event);
// The host waits for `event`.
void sync_event(DeviceEvent event);
// Whether `event` has completed (the host does not wait).
bool event_done(DeviceEvent event);
// Seconds between two completed events.
double elapsed_seconds(DeviceEvent from, DeviceEvent to);

// Page-locked host memory lets a copy from or to the caller's arrays run as asynchronous DMA,
// with no host thread packing it. host_register page-locks [p, p + bytes) for every device
// (portable); false when the runtime refuses (already registered, out of lockable memory,
// unsupported): the error is cleared and the caller keeps its staging path.
bool host_register(void* p, std::size_t bytes);
// Undoes a host_register of the range starting at `p`; a failure is ignored (nothing to undo).
void host_unregister(void* p);
// Whether `p` lies in page-locked memory (allocated pinned, or registered by anyone).
bool host_pinned(const void* p);
// `height` rows of `width` bytes each, `spitch` and `dpitch` bytes apart (a block of columns of
// a column-major array: width = rows * element, pitch = leading dimension * element), copied
// asynchronously on `space`'s stream; `to_device` says which side is the device's.
void copy_2d(const DeviceExecSpace& space, void* dst, std::size_t dpitch, const void* src,
             std::size_t spitch, std::size_t width, std::size_t height, bool to_device);
#endif

}  // namespace cuboid::platform
