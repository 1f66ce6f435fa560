#include "platform/device_backend.hpp"

#include <Kokkos_Core.hpp>

#include <stdexcept>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

namespace cuboid::platform {

#if defined(KOKKOS_ENABLE_CUDA)
int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
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
  }
  int current = 0;
  cudaGetDevice(&current);
  if (current == index) {
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) info.free_bytes = free_b;
  } else {
    info.free_bytes = info.total_bytes;
  }
  return info;
}

std::string device_backend_name() { return "Cuda"; }

std::vector<Kokkos::Cuda> make_device_instances(int n) {
  std::vector<Kokkos::Cuda> out;
#if KOKKOS_VERSION >= 40000
  std::vector<int> weights(std::size_t(n), 1);
  out = Kokkos::Experimental::partition_space(Kokkos::Cuda(), weights);
#else
  // Kokkos 3.x instances borrow a stream: create them once and keep them for the process.
  static std::vector<cudaStream_t> streams;
  for (int i = 0; i < n; ++i) {
    cudaStream_t s = nullptr;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess)
      throw std::runtime_error("cudaStreamCreate failed");
    streams.push_back(s);
    out.emplace_back(s);
  }
#endif
  return out;
}
#else
int device_count() { return 0; }
DeviceInfo device_info(int index) {
  DeviceInfo info;
  info.index = index;
  return info;
}
std::string device_backend_name() { return ""; }
#endif

}  // namespace cuboid::platform
