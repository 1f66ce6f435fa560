#pragma once
// A device runtime on the host, for the "emulated" processor: what DeviceBackend's Queues need
// from CUDA or HIP (in-order streams, events that order streams and time them, asynchronous
// copies, GEMMs on a stream), implemented with threads and host memory, so that the device
// pipeline itself runs and is tested in a build without a GPU.
//
// Like a GPU runtime and unlike the staged processor's queues:
//   - a stream is a handle (Instance) with its own thread; work is issued to it, never run by
//     the caller;
//   - events are created once, recorded again and again (a wait takes the record it is issued
//     after, as cudaStreamWaitEvent does), and are only done once the stream got there;
//   - elapsed_seconds reads the times the streams stamped, and refuses events that have not
//     completed or were never recorded, as cudaEventElapsedTime does;
//   - copies take bytes / link_gbs at least (ProcessorSpec::link_gbs; 0: memcpy speed); in
//     timing mode (ProcessorSpec::emulated_gflops > 0) exactly that, and move no bytes;
//   - host memory is registered (page-locked) as cudaHostRegister does it: whole pages, a range
//     overlapping a registered one is refused, and a 2-D copy whose host side is not registered
//     is pageable and takes twice the link time (a driver bounces it through pinned buffers).
//     Staging (staging_space) counts as pinned, as on a GPU. fail_registrations() makes the
//     next registrations fail, so that the fallback to the staging ring is tested.
//
// Lazy mode (ProcessorSpec::lazy_queues, CUBOID_EMULATED_LAZY=1): a stream runs an operation
// only once something needs it done -- the host synchronising on an event after it or fencing
// the stream, or another stream reaching a wait for it -- so every operation runs as late as the
// waits allow and an event polled by the host (event_done) completes only when something else
// forced it. Which stream runs what, in which order, then follows from the program alone: a
// missing wait shows in one run, the same way every time.
#include <Kokkos_Core.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "exec/worker.hpp"
#include "kokkos_ext/compat.hpp"
#include "platform/processor.hpp"

namespace cuboid::exec {

class EmulatedStream;
struct EmulatedEvent;

struct EmulatedRuntime {
#if defined(KOKKOS_ENABLE_SERIAL)
  using exec_space = Kokkos::Serial;  // GEMMs go to the BLAS on the stream's thread
#else
  using exec_space = Kokkos::DefaultHostExecutionSpace;
#endif
  using memory_space = Kokkos::HostSpace;   // "device" memory
  using staging_space = Kokkos::HostSpace;  // "pinned" memory
  using Instance = std::shared_ptr<EmulatedStream>;
  using Event = EmulatedEvent*;  // nullptr: no event (always done)

  // `n` streams of processor `spec` (its threads, link speed, slowdown and lazy mode).
  static std::vector<Instance> make_instances(int n, const platform::ProcessorSpec& spec);
  // The Kokkos space that runs a stream's work: the host's.
  static exec_space space(const Instance&) { return exec_space(); }
  static void fence(const Instance& stream);

  static Event create_event(const Instance& stream);
  static void destroy_event(Event event);
  static void record_event(Event event, const Instance& stream);
  static void wait_event(const Instance& stream, Event event);
  static void sync_event(Event event);
  static bool event_done(Event event);
  static double elapsed_seconds(Event from, Event to);

  static void upload(const Instance& stream, void* dst, const void* src, std::size_t bytes) {
    copy(stream, dst, src, bytes);
  }
  static void download(const Instance& stream, void* dst, const void* src, std::size_t bytes) {
    copy(stream, dst, src, bytes);
  }
  // `height` rows of `width` bytes, `spitch` / `dpitch` bytes apart (cudaMemcpy2DAsync); the
  // host side is src for an upload, dst for a download.
  static void upload_2d(const Instance& stream, void* dst, std::size_t dpitch, const void* src,
                        std::size_t spitch, std::size_t width, std::size_t height) {
    copy_2d(stream, dst, dpitch, src, spitch, width, height, src);
  }
  static void download_2d(const Instance& stream, void* dst, std::size_t dpitch, const void* src,
                          std::size_t spitch, std::size_t width, std::size_t height) {
    copy_2d(stream, dst, dpitch, src, spitch, width, height, dst);
  }

  // Registration of host memory (process-wide, as the vendor's): false when refused.
  static bool register_host(void* p, std::size_t bytes);
  static void unregister_host(void* p);
  static bool host_pinned(const void* p);
  // The next `count` registrations fail (-1: every one until fail_registrations(0)).
  static void fail_registrations(int count);
  // What the runtime did since the process started, for tests.
  struct Counters {
    long registrations = 0, refused_registrations = 0, unregistrations = 0;
    long copies_2d = 0, pageable_copies_2d = 0;
    std::size_t registered_bytes = 0;  // registered now (whole pages)
  };
  static Counters counters();
  // C = alpha op(A) op(B) + beta C on the stream's thread with the host BLAS, cut as `team` says
  // (gemm_team), as the host and staged processors cut theirs: a stolen step gives the same
  // bits on any of them.
  template <class A, class B, class C>
  static void gemm(const Instance& stream, int team, kokkos_ext::Ops ops,
                   typename C::const_value_type alpha, const A& a, const B& b,
                   typename C::const_value_type beta, const C& c) {
    const int threads = stream_threads(stream);
    const double flops = 2.0 * double(c.extent(0)) * double(c.extent(1)) *
                         double(ops.a == 'N' ? a.extent(1) : a.extent(0));
    submit(stream, flops, [team, threads, ops, alpha, a, b, beta, c] {
      team_gemm(exec_space(), team, threads, ops, alpha, a, b, beta, c);
    });
  }

 private:
  static void copy(const Instance& stream, void* dst, const void* src, std::size_t bytes);
  static void copy_2d(const Instance& stream, void* dst, std::size_t dpitch, const void* src,
                      std::size_t spitch, std::size_t width, std::size_t height, const void* host);
  static int stream_threads(const Instance& stream);
  // Queues a GEMM of `flops` on the stream, slowed as platform.slowdown asks (in timing mode, a
  // sleep for the flops in its place).
  static void submit(const Instance& stream, double flops, std::function<void()> task);
};

}  // namespace cuboid::exec
