#pragma once
// The processors with memory of their own. A backend names the execution space, the
// processor's memory space and the host staging space (pinned memory on a GPU), and supplies
// Queues: three in-order instances (copies in, GEMMs, copies out), events that order work
// between them without the host, and the times the device clock saw.
//
// Each wait of the queues themselves is written CUBOID_WAIT("staged-TAG", ...) or
// CUBOID_WAIT("device-TAG", ...), like the pipeline's (exec/waits.hpp: scripts/remove-waits
// skips each in turn).
//
// Queues interface (every backend):
//   Event record(Lane)                 marks the current end of a lane
//   void wait(Lane, const Event&)      later work on the lane starts after the event
//   void sync(const Event&)            the host waits for the event
//   void upload(Lane, dst, src, bytes)   staging -> processor memory, asynchronous
//   void download(Lane, dst, src, bytes) processor memory -> staging, asynchronous
//   void upload_2d(Lane, dst, dpitch, src, spitch, width, height)    page-locked host memory ->
//   void download_2d(Lane, dst, dpitch, src, spitch, width, height)  processor memory and back:
//                                      `height` rows of `width` bytes, asynchronous
//   static HostRegistry& host_registry() (Backend)  page-locks the caller's arrays
//   void gemm(team, ops, alpha, A, B, beta, C)  on the compute lane, asynchronous
//   void begin_run(); void finish();   finish waits for every lane
//   chunk_bytes (Backend)              size of the input staging chunks
//   staging_in_own_memory (Backend)    whether staging counts against the memory budget
//   LaneTimes times()                  after finish(): copy, GEMM and stall seconds of the run
#include <Kokkos_Core.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "exec/device_runtime.hpp"
#include "exec/emulated_runtime.hpp"
#include "exec/host_registry.hpp"
#include "exec/waits.hpp"
#include "exec/work_queue.hpp"
#include "exec/worker.hpp"
#include "kokkos_ext/compat.hpp"
#include "platform/processor.hpp"

namespace cuboid::exec {

enum Lane : int { lane_in = 0, lane_compute = 1, lane_out = 2 };

struct LaneTimes {
  double copy_s = 0;   // time copies took (both directions)
  double busy_s = 0;   // time GEMMs ran
  double stall_s = 0;  // time the GEMM lane sat idle before a GEMM, waiting for its inputs
};

// A host-backed processor that behaves like a device: own buffers, and three work queues with
// threads of their own -- two copy engines and a GEMM engine. A copy takes at least
// bytes / platform.staged_link_gbs, like a PCIe transfer, and in the jitter test mode may start
// after a random delay, so that any missing wait shows up as a wrong product.
struct StagedHostBackend {
#if defined(KOKKOS_ENABLE_SERIAL)
  using exec_space = Kokkos::Serial;  // GEMMs go to the BLAS; no Kokkos kernel runs here
#else
  using exec_space = Kokkos::DefaultHostExecutionSpace;
#endif
  using memory_space = Kokkos::HostSpace;
  using staging_space = Kokkos::HostSpace;
  static constexpr std::int64_t chunk_bytes = std::int64_t(1) << 20;  // input staging chunks
  static constexpr bool staging_in_own_memory = true;  // counts against its memory budget
  // Its "device" is host memory: any host array is as good as page-locked, so a registration
  // only books the range (its 2-D copies still take the link's time, on the lane's thread).
  static HostRegistry& host_registry() {
    static HostRegistry r(PinHooks{[](void*, std::size_t) { return true; }, [](void*) {},
                                   [](const void*) { return false; }});
    return r;
  }

  class Queues {
   public:
    using Event = QueueEvent;
    explicit Queues(const platform::ProcessorSpec& spec)
        : spec_(spec),
          bytes_per_s_(spec.link_gbs > 0 ? spec.link_gbs * 1e9 : 0),
          jitter_us_(spec.copy_jitter_us),
          threads_(spec.threads) {
      // OpenMP (and so OpenBLAS) threads are per calling thread: set once on the GEMM lane.
      const int threads = spec.threads;
      q_[lane_compute].submit([threads] { set_thread_count(threads); });
      q_[lane_compute].fence();
    }
    exec_space compute_space() const { return exec_space(); }

    Event record(Lane l) const { return q_[l].record(); }
    void wait(Lane l, const Event& e) {
      if (e.queue == nullptr || e.queue == &q_[l]) return;  // a lane is in order by itself
      q_[l].submit([this, l, e] {
        CUBOID_WAIT("staged-lane-event", e.wait());
        waited_until_[l] = std::chrono::steady_clock::now();
      });
    }
    static void sync(const Event& e) { CUBOID_WAIT("staged-host-event", e.wait()); }
    void upload(Lane l, void* dst, const void* src, std::size_t bytes) {
      copy(l, bytes, [dst, src, bytes] { std::memcpy(dst, src, bytes); });
    }
    void download(Lane l, void* dst, const void* src, std::size_t bytes) {
      copy(l, bytes, [dst, src, bytes] { std::memcpy(dst, src, bytes); });
    }
    void upload_2d(Lane l, void* dst, std::size_t dpitch, const void* src, std::size_t spitch,
                   std::size_t width, std::size_t height) {
      copy(l, width * height, [=] { copy_rows(dst, dpitch, src, spitch, width, height); });
    }
    void download_2d(Lane l, void* dst, std::size_t dpitch, const void* src, std::size_t spitch,
                     std::size_t width, std::size_t height) {
      copy(l, width * height, [=] { copy_rows(dst, dpitch, src, spitch, width, height); });
    }
    // `team`: how the step's owner cuts its GEMMs (gemm_team), kept wherever the step runs.
    template <class A, class B, class C>
    void gemm(int team, kokkos_ext::Ops ops, typename C::const_value_type alpha, const A& a,
              const B& b, typename C::const_value_type beta, const C& c) {
      q_[lane_compute].submit([this, team, ops, alpha, a, b, beta, c] {
        const double t = now_seconds();
        stall_s_ += t - last_gemm_end_;
        const auto traced_from = trace::on() ? trace::Clock::now() : trace::Clock::time_point{};
        team_gemm(exec_space(), team, threads_, ops, alpha, a, b, beta, c);
        if (trace::on())
          trace::complete(
              spec_.name + " gemm", "gemm", traced_from, trace::Clock::now(),
              "\"m\": " + std::to_string(c.extent(0)) + ", \"n\": " + std::to_string(c.extent(1)));
        const double e = now_seconds();
        slow_down(spec_, e - t, e - run_start_);
        const double d = now_seconds();
        busy_s_ += d - t;
        last_gemm_end_ = d;
      });
    }
    // Runs `f` on the host once `e`, just recorded on lane `l`, has completed: here on the
    // lane's own thread, at once. poll() has nothing to do. In the jitter test mode `f` runs
    // jitter_us late, after the copies that follow: a run that returns before its lanes
    // finished then misses its last reports.
    void then(Lane l, const Event& /*e*/, std::function<void()> f) {
      if (jitter_us_ > 0)
        f = [f = std::move(f), us = jitter_us_] {
          std::this_thread::sleep_for(std::chrono::duration<double, std::micro>(us));
          f();
        };
      q_[l].submit(std::move(f));
    }
    void poll() {}
    void begin_run() {
      copy_ns_[lane_in] = copy_ns_[lane_out] = 0;
      link_free_ = {};
      waited_until_ = {};
      busy_s_ = stall_s_ = 0;
      last_gemm_end_ = run_start_ = now_seconds();
    }
    void finish() {
      std::exception_ptr first;
      for (auto& q : q_) {
        try {
          CUBOID_WAIT("staged-finish", q.fence());
        } catch (...) {
          if (!first) first = std::current_exception();
        }
      }
      if (first) std::rethrow_exception(first);
    }
    LaneTimes times() const {
      return LaneTimes{double(copy_ns_[lane_in] + copy_ns_[lane_out]) * 1e-9, busy_s_, stall_s_};
    }

   private:
    static void copy_rows(void* dst, std::size_t dpitch, const void* src, std::size_t spitch,
                          std::size_t width, std::size_t height) {
      for (std::size_t r = 0; r < height; ++r)
        std::memcpy(static_cast<char*>(dst) + r * dpitch,
                    static_cast<const char*>(src) + r * spitch, width);
    }
    // A copy of `bytes` that `move` makes, on lane `l`'s thread.
    template <class Move>
    void copy(Lane l, std::size_t bytes, Move move) {
      using clock = std::chrono::steady_clock;
      const auto submitted = clock::now();
      q_[l].submit([this, l, bytes, submitted, move] {
        const auto t0 = clock::now();
        // Ready once submitted and past the lane's waits before it (measured once per wait, so
        // a late wake-up is not charged to every copy after it).
        auto ready = std::max(submitted, waited_until_[l]);
        if (jitter_us_ > 0) {
          // One copy in four is held back, by up to jitter_us: rare long delays reorder the
          // queues far more often than a small delay on every copy would.
          // Seeded per lane, not from random_device: the same delays in every run, so that a
          // failure can be rerun (the threads' timing still varies).
          thread_local std::mt19937_64 rng{0x9e3779b97f4a7c15ull + std::uint64_t(l)};
          std::uniform_real_distribution<double> u(0, 1);
          if (u(rng) < 0.25) {
            std::this_thread::sleep_for(
                std::chrono::duration<double, std::micro>(u(rng) * jitter_us_));
            ready = clock::now();
          }
        }
        move();
        if (bytes_per_s_ > 0) {
          // The link moves a lane's copies one after another: a copy ends bytes/bandwidth after
          // the later of its being ready and the end of the previous one. A lane thread that
          // wakes late (a busy host) then catches up instead of adding its lateness to every
          // copy.
          auto& free_at = link_free_[l];
          const auto begin = std::max(free_at, ready);
          free_at = begin + std::chrono::duration_cast<clock::duration>(
                                std::chrono::duration<double>(double(bytes) / bytes_per_s_));
          std::this_thread::sleep_until(free_at);
          traced_copy(l, begin, std::max(free_at, clock::now()), bytes);
          // The copy's time is the link's: from its begin to its end.
          copy_ns_[l] += std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::max(free_at, clock::now()) - begin)
                             .count();
          return;
        }
        traced_copy(l, t0, clock::now(), bytes);
        copy_ns_[l] +=
            std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - t0).count();
      });
    }
    void traced_copy(Lane l, trace::Clock::time_point begin, trace::Clock::time_point end,
                     std::size_t bytes) const {
      if (trace::on())
        trace::complete(spec_.name + (l == lane_in ? " copy in" : " copy out"), "copy", begin, end,
                        "\"bytes\": " + std::to_string(bytes));
    }

    platform::ProcessorSpec spec_;
    double bytes_per_s_ = 0, jitter_us_ = 0;
    int threads_ = 1;
    // Written by one lane's thread each, read after finish().
    std::array<std::int64_t, 3> copy_ns_{};
    std::array<std::chrono::steady_clock::time_point, 3> link_free_{}, waited_until_{};
    double busy_s_ = 0, stall_s_ = 0, last_gemm_end_ = 0, run_start_ = 0;
    mutable std::array<WorkQueue, 3> q_;
  };
};

// A GPU, or its emulation on the host: the one pipeline backend over a device runtime
// (VendorRuntime: CUDA or HIP, whichever Kokkos backend this build has; EmulatedRuntime: host
// threads and memory). Buffers in device memory, staging in pinned host memory (so that copies
// are asynchronous DMA), three streams, device events between them; host callbacks wait for
// poll(), copy and GEMM times come from the events.
template <class Runtime>
struct DeviceBackendOn {
  using exec_space = typename Runtime::exec_space;
  using memory_space = typename Runtime::memory_space;
  using staging_space = typename Runtime::staging_space;
  // Input staging chunks: large enough for PCIe's peak and few events (two per copy, for its
  // time, kept until the end of the run), small enough that packing overlaps the transfer.
  static constexpr std::int64_t chunk_bytes = std::int64_t(8) << 20;
  // Staging is pinned host memory, outside the device's budget (emulated too, as on a GPU).
  static constexpr bool staging_in_own_memory = false;
  static HostRegistry& host_registry() {
    static HostRegistry r(
        PinHooks{&Runtime::register_host, &Runtime::unregister_host, &Runtime::host_pinned});
    return r;
  }

  class Queues {
   public:
    using Event = typename Runtime::Event;
    explicit Queues(const platform::ProcessorSpec& spec) {
      auto v = Runtime::make_instances(3, spec);
      inst_ = {v[0], v[1], v[2]};
    }
    ~Queues() {
      for (auto e : pool_) Runtime::destroy_event(e);
    }
    Queues(const Queues&) = delete;
    Queues& operator=(const Queues&) = delete;
    exec_space compute_space() const { return Runtime::space(inst_[lane_compute]); }

    Event record(Lane l) {
      Event e = next_event();
      Runtime::record_event(e, inst_[l]);
      return e;
    }
    void wait(Lane l, const Event& e) {
      if (e) CUBOID_WAIT("device-lane-event", Runtime::wait_event(inst_[l], e));
    }
    static void sync(const Event& e) {
      if (e) CUBOID_WAIT("device-host-event", Runtime::sync_event(e));
    }
    void upload(Lane l, void* dst, const void* src, std::size_t bytes) {
      const Event a = record(l);
      Runtime::upload(inst_[l], dst, src, bytes);
      copies_.push_back({a, record(l)});
    }
    void download(Lane l, void* dst, const void* src, std::size_t bytes) {
      const Event a = record(l);
      Runtime::download(inst_[l], dst, src, bytes);
      copies_.push_back({a, record(l)});
    }
    void upload_2d(Lane l, void* dst, std::size_t dpitch, const void* src, std::size_t spitch,
                   std::size_t width, std::size_t height) {
      const Event a = record(l);
      Runtime::upload_2d(inst_[l], dst, dpitch, src, spitch, width, height);
      copies_.push_back({a, record(l)});
    }
    void download_2d(Lane l, void* dst, std::size_t dpitch, const void* src, std::size_t spitch,
                     std::size_t width, std::size_t height) {
      const Event a = record(l);
      Runtime::download_2d(inst_[l], dst, dpitch, src, spitch, width, height);
      copies_.push_back({a, record(l)});
    }
    template <class A, class B, class C>
    void gemm(int team, kokkos_ext::Ops ops, typename C::const_value_type alpha, const A& a,
              const B& b, typename C::const_value_type beta, const C& c) {
      const Event s = record(lane_compute);
      Runtime::gemm(inst_[lane_compute], team, ops, alpha, a, b, beta, c);
      gemms_.push_back({s, record(lane_compute)});
    }
    // Runs `f` on the host once `e`, just recorded on lane `l`, has completed: at the first
    // poll() (or finish()) that finds it done. A host function on the stream would be exact,
    // but would hold the stream while it runs.
    void then(Lane /*l*/, const Event& e, std::function<void()> f) {
      then_.emplace_back(e, std::move(f));
    }
    void poll() {
      while (!then_.empty()) {
        CUBOID_WAIT("device-then-after-event",
                    if (!Runtime::event_done(then_.front().first)) return );
        then_.front().second();
        then_.pop_front();
      }
    }
    void begin_run() {
      used_ = 0;
      copies_.clear(), gemms_.clear(), then_.clear();
      start_ = record(lane_compute);
    }
    void finish() {
      CUBOID_WAIT("device-finish", for (auto& i : inst_) Runtime::fence(i));
      poll();
    }
    LaneTimes times() const {
      LaneTimes t;
      for (const auto& [a, b] : copies_) t.copy_s += Runtime::elapsed_seconds(a, b);
      Event last = start_;
      for (const auto& [a, b] : gemms_) {
        t.stall_s += Runtime::elapsed_seconds(last, a);
        t.busy_s += Runtime::elapsed_seconds(a, b);
        last = b;
      }
      return t;
    }

   private:
    // Events are reused run after run (begin_run follows a finish, so all have completed).
    Event next_event() {
      if (used_ == pool_.size()) pool_.push_back(Runtime::create_event(inst_[lane_compute]));
      return pool_[used_++];
    }
    std::array<typename Runtime::Instance, 3> inst_;
    std::vector<Event> pool_;
    std::size_t used_ = 0;
    std::vector<std::pair<Event, Event>> copies_, gemms_;
    std::deque<std::pair<Event, std::function<void()>>> then_;
    Event start_ = nullptr;
  };
};

// The emulated processor (emulated:N): the device pipeline on the host.
using EmulatedBackend = DeviceBackendOn<EmulatedRuntime>;
#if CUBOID_DEVICE_BACKEND
using DeviceBackend = DeviceBackendOn<VendorRuntime>;
#endif

}  // namespace cuboid::exec
