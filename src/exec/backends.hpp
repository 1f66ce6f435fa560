#pragma once
// Execution/memory space triples for processors with their own memory.
#include <Kokkos_Core.hpp>

#include <array>
#include <string>

#include "platform/device_backend.hpp"
#include "platform/processor.hpp"

namespace cuboid::exec {

// A host-backed processor that behaves like a device: own buffers, explicit copies. Serial
// keeps its copies and kernels off the OpenMP pool the host processor uses.
struct StagedHostBackend {
#if defined(KOKKOS_ENABLE_SERIAL)
  using exec_space = Kokkos::Serial;
#else
  using exec_space = Kokkos::DefaultHostExecutionSpace;
#endif
  using memory_space = Kokkos::HostSpace;
  using staging_space = Kokkos::HostSpace;
  static std::array<exec_space, 3> instances(const platform::ProcessorSpec&) {
    return {exec_space(), exec_space(), exec_space()};
  }
};

#if CUBOID_DEVICE_BACKEND
// A GPU (CUDA or HIP, whichever Kokkos backend this build has): buffers in device memory,
// staging in pinned host memory (so that copies are asynchronous DMA), and three instances on
// streams of their own (copies in, GEMMs, copies out).
struct DeviceBackend {
  using exec_space = platform::DeviceExecSpace;
  using memory_space = platform::DeviceMemorySpace;
  using staging_space = platform::DevicePinnedSpace;
  static std::array<exec_space, 3> instances(const platform::ProcessorSpec& spec) {
    // Kokkos drives one device per process: cuda:N (hip:N) must be that device.
    platform::require_active_device(spec.index, "platform.processors");
    auto v = platform::make_device_instances(3);
    return {v[0], v[1], v[2]};
  }
};
#endif

}  // namespace cuboid::exec
