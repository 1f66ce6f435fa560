#pragma once
// The GPU runtime DeviceBackend's Queues run on in a CUDA or HIP build: the platform's vendor
// calls (device_backend_<kind>.cpp) under the names EmulatedRuntime gives the same operations.
#include <Kokkos_Core.hpp>

#include <cstddef>
#include <vector>

#include "platform/device_backend.hpp"
#include "platform/device_calls.hpp"
#include "platform/processor.hpp"

#if CUBOID_DEVICE_BACKEND
namespace cuboid::exec {

struct VendorRuntime {
  using exec_space = platform::DeviceExecSpace;
  using memory_space = platform::DeviceMemorySpace;
  using staging_space = platform::DevicePinnedSpace;  // so that copies are asynchronous DMA
  using Instance = platform::DeviceExecSpace;         // one stream each
  using Event = platform::DeviceEvent;

  static std::vector<Instance> make_instances(int n, const platform::ProcessorSpec& spec) {
    // Kokkos drives one device per process: cuda:N (hip:N) must be that device.
    platform::require_active_device(spec.index, "platform.processors");
    return platform::make_device_instances(n);
  }
  static exec_space space(const Instance& stream) { return stream; }
  static void fence(const Instance& stream) { stream.fence(); }

  static Event create_event(const Instance& stream) { return platform::create_event(stream); }
  static void destroy_event(Event event) { platform::destroy_event(event); }
  static void record_event(Event event, const Instance& stream) {
    platform::record_event(event, stream);
  }
  static void wait_event(const Instance& stream, Event event) {
    platform::wait_event(stream, event);
  }
  static void sync_event(Event event) { platform::sync_event(event); }
  static bool event_done(Event event) { return platform::event_done(event); }
  static double elapsed_seconds(Event from, Event to) {
    return platform::elapsed_seconds(from, to);
  }

  static void upload(const Instance& stream, void* dst, const void* src, std::size_t bytes) {
    platform::deep_copy(stream, bytes_in<memory_space>(dst, bytes),
                        bytes_in<staging_space>(const_cast<void*>(src), bytes));
  }
  static void download(const Instance& stream, void* dst, const void* src, std::size_t bytes) {
    platform::deep_copy(stream, bytes_in<staging_space>(dst, bytes),
                        bytes_in<memory_space>(const_cast<void*>(src), bytes));
  }
  static void upload_2d(const Instance& stream, void* dst, std::size_t dpitch, const void* src,
                        std::size_t spitch, std::size_t width, std::size_t height) {
    platform::copy_2d(stream, dst, dpitch, src, spitch, width, height, true);
  }
  static void download_2d(const Instance& stream, void* dst, std::size_t dpitch, const void* src,
                          std::size_t spitch, std::size_t width, std::size_t height) {
    platform::copy_2d(stream, dst, dpitch, src, spitch, width, height, false);
  }
  static bool register_host(void* p, std::size_t bytes) {
    return platform::host_register(p, bytes);
  }
  static void unregister_host(void* p) { platform::host_unregister(p); }
  static bool host_pinned(const void* p) { return platform::host_pinned(p); }
  // `team` (how the step's owner cuts its GEMMs on the host) does not apply to the vendor BLAS.
  template <class A, class B, class C>
  static void gemm(const Instance& stream, int /*team*/, kokkos_ext::Ops ops,
                   typename C::const_value_type alpha, const A& a, const B& b,
                   typename C::const_value_type beta, const C& c) {
    platform::gemm(stream, ops, alpha, a, b, beta, c);
  }

 private:
  template <class Space>
  using Bytes = Kokkos::View<unsigned char*, Space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  template <class Space>
  static Bytes<Space> bytes_in(void* p, std::size_t bytes) {
    return Bytes<Space>(static_cast<unsigned char*>(p), bytes);
  }
};

}  // namespace cuboid::exec
#endif
