#pragma once
// The only interface to vendor runtimes (CUDA today; HIP and SYCL would add their own file).
// Everything else in cuboid talks to devices through Kokkos.
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace cuboid::platform {

struct DeviceInfo {
  int index = 0;
  std::string name;
  std::uint64_t total_bytes = 0, free_bytes = 0;
  int compute_major = 0, compute_minor = 0;
};

// Number of devices of the build's device backend visible to this process (0 without one).
int device_count();
DeviceInfo device_info(int index);
// Name of the device backend compiled in ("Cuda"), or "" for a host-only build.
std::string device_backend_name();

#if defined(KOKKOS_ENABLE_CUDA)
// `n` execution-space instances, each on a stream of its own (kept alive until exit), so that
// copies and GEMMs issued on different instances can overlap.
std::vector<Kokkos::Cuda> make_device_instances(int n);
#endif

}  // namespace cuboid::platform
