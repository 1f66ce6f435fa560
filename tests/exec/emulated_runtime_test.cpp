// exec/emulated_runtime: the host-made device runtime on its own -- streams, events that order
// and time them, copies at the link's rate, timing mode, lazy mode, failures -- and the device
// queues over it. Part of cuboid_engine_tests (one Kokkos process; scripts/remove-waits runs
// its tests with the engine's).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "exec/backends.hpp"
#include "exec/emulated_runtime.hpp"
#include "exec/worker.hpp"
#include "kokkos_ext/compat.hpp"
#include "platform/processor.hpp"
#include "util/error.hpp"

using namespace cuboid;

namespace {

platform::ProcessorSpec emulated_spec(double link_gbs, bool lazy) {
  auto spec = platform::resolve_processors({"emulated:0"}, "test").at(0);
  spec.link_gbs = link_gbs;
  spec.lazy_queues = lazy;
  return spec;
}

}  // namespace

// The calibration of a copying processor's model rates: its GEMM rate on its own memory, and its
// link each way, which on these processors is the link they are given (a copy takes at least
// bytes / link), so the measurement must not exceed it (how near it comes depends on the load).
TEST(EmulatedRuntime, CalibrationMeasuresTheGivenLinkAndAGemmRate) {
  for (const char* kind : {"staged:0", "emulated:0"}) {
    SCOPED_TRACE(kind);
    auto spec = platform::resolve_processors({kind}, "test").at(0);
    spec.link_gbs = 2.0;
    auto w = exec::make_worker<double>(spec);
    const auto link = w->measure_link(std::size_t(32) << 20);
    for (double gbs : {link.h2d_gbs, link.d2h_gbs}) {
      EXPECT_LE(gbs, 2.0 * 1.02);
      EXPECT_GT(gbs, 0.0);
    }
    EXPECT_GT(w->measure_gemm_rate(256, 0.05), 0.0);
  }
}

// Measured together (GemmWindow): each processor runs GEMMs until the window closes, which
// happens only once every one has timed two; a rate comes back from each.
TEST(EmulatedRuntime, GemmRatesMeasuredTogetherWaitForEveryProcessor) {
  std::vector<std::unique_ptr<exec::Worker<double>>> workers;
  for (const char* kind : {"host", "staged:0", "emulated:0"})
    workers.push_back(
        exec::make_worker<double>(platform::resolve_processors({kind}, "test").at(0)));
  exec::GemmWindow window;
  std::vector<double> rate(workers.size(), 0.0);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < workers.size(); ++i)
    threads.emplace_back([&, i] { rate[i] = workers[i]->measure_gemm_rate_in(128, window); });
  while (window.ready.load() < int(workers.size())) std::this_thread::yield();
  EXPECT_EQ(window.ready.load(), 3);
  window.stop = true;
  for (auto& t : threads) t.join();
  for (double r : rate) EXPECT_GT(r, 0.0);
}

TEST(EmulatedRuntime, EventsOrderStreamsAndAreRecordedAgain) {
  using Rt = exec::EmulatedRuntime;
  for (const bool lazy : {false, true}) {
    auto q = Rt::make_instances(2, emulated_spec(0, lazy));
    std::vector<char> a(1 << 16, 'a'), b(1 << 16, 0), c(1 << 16, 0);
    Rt::Event e = Rt::create_event(q[0]);
    EXPECT_TRUE(Rt::event_done(e)) << "an event never recorded counts as done";
    EXPECT_THROW(Rt::elapsed_seconds(e, e), Error);
    for (char round : {'x', 'y'}) {  // the same event recorded again, as the pool reuses it
      std::fill(a.begin(), a.end(), round);
      Rt::upload(q[0], b.data(), a.data(), b.size());
      Rt::record_event(e, q[0]);
      Rt::wait_event(q[1], e);  // q[1] copies b only once q[0] wrote it
      Rt::download(q[1], c.data(), b.data(), c.size());
      Rt::Event f = Rt::create_event(q[1]);
      Rt::record_event(f, q[1]);
      if (lazy) {
        EXPECT_FALSE(Rt::event_done(f)) << "lazy streams run nothing nobody waits for";
      }
      Rt::sync_event(f);
      EXPECT_TRUE(Rt::event_done(e) && Rt::event_done(f));
      EXPECT_EQ(c.front(), round);
      EXPECT_EQ(c.back(), round);
      EXPECT_GE(Rt::elapsed_seconds(e, f), 0.0);
      Rt::destroy_event(f);
    }
    Rt::destroy_event(e);
  }
}

TEST(EmulatedRuntime, CopiesTakeTheLinkTimeAndFailuresReachTheFence) {
  using Rt = exec::EmulatedRuntime;
  auto q = Rt::make_instances(1, emulated_spec(1.0, false));  // 1 GB/s
  std::vector<char> a(std::size_t(20) << 20, 1), b(a.size(), 0);
  Rt::Event s = Rt::create_event(q[0]), e = Rt::create_event(q[0]);
  Rt::record_event(s, q[0]);
  Rt::upload(q[0], b.data(), a.data(), a.size());
  Rt::record_event(e, q[0]);
  EXPECT_THROW(Rt::elapsed_seconds(s, e), Error) << "not completed yet";
  Rt::fence(q[0]);
  EXPECT_GE(Rt::elapsed_seconds(s, e), 0.95 * double(a.size()) / 1e9);
  EXPECT_EQ(b[12345], 1);
  // A failed GEMM on the stream: later work is skipped, events still complete, fence throws.
  // Views typed with the space that runs the GEMM, as the pipeline types them.
  using V =
      Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::Device<Rt::exec_space, Rt::memory_space>>;
  V A("A", 4, 3), B("B", 2, 4), C("C", 4, 4);  // A's columns do not match B's rows
  Rt::gemm(q[0], 0, kokkos_ext::Ops{}, 1.0, A, B, 0.0, C);
  Rt::record_event(e, q[0]);
  Rt::sync_event(e);
  EXPECT_ANY_THROW(Rt::fence(q[0]));
  Rt::fence(q[0]);  // the failure is reported once
  Rt::destroy_event(s);
  Rt::destroy_event(e);
}

// In timing mode nothing is computed: a copy takes its time at the link and moves no bytes, so
// that the host's cores are left to the packing and unpacking, as a device's copy engine leaves
// them.
TEST(EmulatedRuntime, TimingModeCopiesTakeTheLinkTimeAndMoveNothing) {
  using Rt = exec::EmulatedRuntime;
  auto spec = emulated_spec(1.0, false);  // 1 GB/s
  spec.emulated_gflops = 100;
  auto q = Rt::make_instances(1, spec);
  std::vector<char> a(std::size_t(20) << 20, 1), b(a.size(), 0);
  Rt::Event s = Rt::create_event(q[0]), e = Rt::create_event(q[0]);
  Rt::record_event(s, q[0]);
  Rt::upload(q[0], b.data(), a.data(), a.size());
  Rt::record_event(e, q[0]);
  Rt::fence(q[0]);
  EXPECT_GE(Rt::elapsed_seconds(s, e), 0.95 * double(a.size()) / 1e9);
  EXPECT_EQ(std::count(b.begin(), b.end(), 0), std::ptrdiff_t(b.size()));
  Rt::destroy_event(s);
  Rt::destroy_event(e);
}

TEST(EmulatedRuntime, DeviceQueuesDeliverCallbacksAtPollAndTimeFromEvents) {
  for (const bool lazy : {false, true}) {
    exec::EmulatedBackend::Queues queues(emulated_spec(2.0, lazy));
    std::vector<double> host(1 << 18, 2.0), dev(host.size(), 0), back(host.size(), 0);
    const std::size_t bytes = host.size() * sizeof(double);
    for (int run = 0; run < 2; ++run) {  // the event pool is reused by the second run
      queues.begin_run();
      queues.upload(exec::lane_in, dev.data(), host.data(), bytes);
      const auto in = queues.record(exec::lane_in);
      queues.wait(exec::lane_out, in);
      queues.download(exec::lane_out, back.data(), dev.data(), bytes);
      const auto out = queues.record(exec::lane_out);
      int called = 0;
      queues.then(exec::lane_out, out, [&] { ++called; });
      if (lazy) {
        queues.poll();
        EXPECT_EQ(called, 0) << "a callback waits for its event, which nothing forced yet";
      }
      queues.finish();
      EXPECT_EQ(called, 1);
      EXPECT_EQ(back[4321], 2.0);
      const exec::LaneTimes t = queues.times();
      EXPECT_GE(t.copy_s, 0.95 * 2 * double(bytes) / 2e9) << "two copies at 2 GB/s";
      EXPECT_EQ(t.busy_s, 0.0);
    }
  }
}

// Timing mode: a GEMM sleeps for its flops at the given rate and computes nothing.
TEST(EmulatedRuntime, TimingModeGemmsSleepForTheirFlopsAndComputeNothing) {
  using Rt = exec::EmulatedRuntime;
  auto spec = emulated_spec(0, false);
  spec.emulated_gflops = 1;  // 1 GFLOP/s: 2*200^3 flops take 16 ms
  auto q = Rt::make_instances(1, spec);
  using V =
      Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::Device<Rt::exec_space, Rt::memory_space>>;
  V A("A", 200, 200), B("B", 200, 200), C("C", 200, 200);
  Kokkos::deep_copy(A, 1.0);
  Kokkos::deep_copy(B, 1.0);
  Kokkos::deep_copy(C, 7.0);
  Rt::Event s = Rt::create_event(q[0]), e = Rt::create_event(q[0]);
  Rt::record_event(s, q[0]);
  Rt::gemm(q[0], 0, kokkos_ext::Ops{}, 1.0, A, B, 0.0, C);
  Rt::record_event(e, q[0]);
  Rt::fence(q[0]);
  EXPECT_GE(Rt::elapsed_seconds(s, e), 0.95 * 2.0 * 200 * 200 * 200 / 1e9);
  EXPECT_EQ(C(17, 42), 7.0) << "timing mode computes nothing";
  Rt::destroy_event(s);
  Rt::destroy_event(e);
}

// Lazy mode: nothing runs until something needs it; a wait on another stream pulls the work
// it waits for, and a stream is usable again after a failure was reported.
TEST(EmulatedRuntime, LazyStreamsRunWhatIsWaitedForAndRecoverAfterAFailure) {
  using Rt = exec::EmulatedRuntime;
  auto q = Rt::make_instances(2, emulated_spec(0, true));
  std::vector<char> a(4096, 'a'), b(4096, 0), c(4096, 0);
  Rt::Event e = Rt::create_event(q[0]), f = Rt::create_event(q[1]);
  Rt::upload(q[0], b.data(), a.data(), b.size());
  Rt::record_event(e, q[0]);
  EXPECT_FALSE(Rt::event_done(e)) << "polling forces nothing";
  EXPECT_EQ(b[0], 0);
  Rt::wait_event(q[1], e);
  Rt::download(q[1], c.data(), b.data(), c.size());
  Rt::record_event(f, q[1]);
  Rt::sync_event(f);  // forces q[1], whose wait forces q[0]
  EXPECT_TRUE(Rt::event_done(e));
  EXPECT_EQ(c[4095], 'a');
  using V =
      Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::Device<Rt::exec_space, Rt::memory_space>>;
  V A("A", 4, 3), B("B", 2, 4), C("C", 4, 4);  // shapes that do not match: the GEMM fails
  Rt::gemm(q[0], 0, kokkos_ext::Ops{}, 1.0, A, B, 0.0, C);
  EXPECT_ANY_THROW(Rt::fence(q[0]));
  std::fill(a.begin(), a.end(), 'z');
  Rt::upload(q[0], b.data(), a.data(), b.size());
  Rt::fence(q[0]);
  EXPECT_EQ(b[100], 'z') << "work issued after the failure was reported runs";
  Rt::destroy_event(e);
  Rt::destroy_event(f);
}

// Registration as cudaHostRegister does it: whole pages, a range overlapping one registered
// refused, unregistering at the registered pointer; an injected failure refuses the next ones.
TEST(EmulatedRuntime, RegistrationLocksWholePagesOnceAndCanBeMadeToFail) {
  using Rt = exec::EmulatedRuntime;
  std::vector<char> mem(std::size_t(64) << 10);
  char* base = mem.data() + (4096 - reinterpret_cast<std::uintptr_t>(mem.data()) % 4096);
  const auto before = Rt::counters();
  EXPECT_FALSE(Rt::host_pinned(base + 100));
  ASSERT_TRUE(Rt::register_host(base + 100, 5000));  // pages 0 and 1
  EXPECT_TRUE(Rt::host_pinned(base));
  EXPECT_TRUE(Rt::host_pinned(base + 8191));
  EXPECT_FALSE(Rt::host_pinned(base + 8192));
  EXPECT_FALSE(Rt::register_host(base + 8000, 100)) << "page 1 is registered already";
  EXPECT_TRUE(Rt::register_host(base + 8192, 4096));
  Rt::unregister_host(base);  // not the registered pointer: ignored, as the runtime refuses it
  EXPECT_TRUE(Rt::host_pinned(base + 100));
  Rt::unregister_host(base + 100);
  Rt::unregister_host(base + 8192);
  EXPECT_FALSE(Rt::host_pinned(base + 100));
  Rt::fail_registrations(1);
  EXPECT_FALSE(Rt::register_host(base, 4096));
  EXPECT_TRUE(Rt::register_host(base, 4096));
  Rt::unregister_host(base);
  const auto after = Rt::counters();
  EXPECT_EQ(after.registrations - before.registrations, 3);
  EXPECT_EQ(after.refused_registrations - before.refused_registrations, 2);
  EXPECT_EQ(after.unregistrations - before.unregistrations, 3);
  EXPECT_EQ(after.registered_bytes, before.registered_bytes);
}

// A 2-D copy moves `height` rows of `width` bytes between pitches; from registered memory it
// takes the link's time, from pageable memory twice that (and is counted as pageable).
TEST(EmulatedRuntime, TwoDimensionalCopiesMoveBlocksAndPageableOnesTakeTwiceTheLinkTime) {
  using Rt = exec::EmulatedRuntime;
  auto q = Rt::make_instances(1, emulated_spec(1.0, false));  // 1 GB/s
  const std::size_t ld = 1000, rows = 600, cols = 2000;       // 9.6 MB moved
  std::vector<double> host(ld * cols), dev(rows * cols, 0), back(ld * cols, -1);
  for (std::size_t x = 0; x < host.size(); ++x) host[x] = double(x);
  Rt::Event s = Rt::create_event(q[0]), e = Rt::create_event(q[0]);
  for (const bool registered : {true, false}) {
    SCOPED_TRACE(registered ? "registered" : "pageable");
    if (registered) {
      ASSERT_TRUE(Rt::register_host(host.data(), host.size() * sizeof(double)));
      ASSERT_TRUE(Rt::register_host(back.data(), back.size() * sizeof(double)));
    }
    const auto before = Rt::counters();
    Rt::record_event(s, q[0]);
    Rt::upload_2d(q[0], dev.data(), rows * sizeof(double), host.data() + 7, ld * sizeof(double),
                  rows * sizeof(double), cols);
    Rt::record_event(e, q[0]);
    Rt::fence(q[0]);
    const double bytes = double(rows * cols * sizeof(double));
    EXPECT_GE(Rt::elapsed_seconds(s, e), (registered ? 1 : 2) * 0.95 * bytes / 1e9);
    Rt::download_2d(q[0], back.data() + 3, ld * sizeof(double), dev.data(), rows * sizeof(double),
                    rows * sizeof(double), cols);
    Rt::fence(q[0]);
    const auto after = Rt::counters();
    EXPECT_EQ(after.copies_2d - before.copies_2d, 2);
    EXPECT_EQ(after.pageable_copies_2d - before.pageable_copies_2d, registered ? 0 : 2);
    for (std::size_t j : {std::size_t(0), std::size_t(1), cols - 1})
      for (std::size_t i : {std::size_t(0), rows - 1}) {
        EXPECT_EQ(dev[j * rows + i], double(j * ld + i + 7));
        EXPECT_EQ(back[j * ld + i + 3], double(j * ld + i + 7));
      }
    EXPECT_EQ(back[2], -1.0) << "before the block";
    EXPECT_EQ(back[rows + 3], -1.0) << "past a column of the block";
    if (registered) {
      Rt::unregister_host(host.data());
      Rt::unregister_host(back.data());
    }
  }
  Rt::destroy_event(s);
  Rt::destroy_event(e);
}
