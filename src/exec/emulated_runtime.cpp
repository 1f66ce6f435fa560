#include "exec/emulated_runtime.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <iterator>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "util/error.hpp"
#include "util/trace.hpp"

namespace cuboid::exec {

namespace {

using Clock = std::chrono::steady_clock;

// One lock and one condition for every emulated stream and event: waits cross streams, and
// nothing here is fast enough for contention to matter.
std::mutex g_m;
std::condition_variable g_cv;

// One record of an event: done once its stream ran everything issued before it.
struct Mark {
  EmulatedStream* stream = nullptr;  // alive while !done: a stream drains before it goes
  std::uint64_t seq = 0;             // the record's place in its stream
  bool done = false;
  Clock::time_point at{};
};

// Registered host memory: page ranges [first, last) by start, each with the pointer it was
// registered at (unregistering takes that pointer, as cudaHostUnregister does). Under g_m.
constexpr std::uintptr_t kPage = 4096;
struct Registration {
  std::uintptr_t end = 0;
  std::uintptr_t at = 0;
};
std::map<std::uintptr_t, Registration> g_registered;
int g_fail_registrations = 0;
EmulatedRuntime::Counters g_counters;

// The registration holding byte `a`, or end().
std::map<std::uintptr_t, Registration>::const_iterator registration_of(std::uintptr_t a) {
  auto it = g_registered.upper_bound(a);
  if (it == g_registered.begin()) return g_registered.end();
  --it;
  return a < it->second.end ? it : g_registered.end();
}

bool lazy_from_environment() {
  const char* v = std::getenv("CUBOID_EMULATED_LAZY");
  if (v == nullptr || *v == '\0' || std::string(v) == "0") return false;
  if (std::string(v) == "1") return true;
  throw Error("CUBOID_EMULATED_LAZY=\"" + std::string(v) +
              "\": give 1 (emulated streams run each operation as late as the waits allow) or 0");
}

}  // namespace

struct EmulatedEvent {
  std::shared_ptr<Mark> last;  // the latest record; null: never recorded
};

class EmulatedStream {
 public:
  EmulatedStream(const platform::ProcessorSpec& spec, bool lazy, int index)
      : spec_(spec),
        lazy_(lazy),
        track_(spec.name + " stream " + std::to_string(index)),
        bytes_per_s_(spec.link_gbs > 0 ? spec.link_gbs * 1e9 : 0),
        run_start_(Clock::now()),
        thread_([this] { loop(); }) {}
  ~EmulatedStream() {
    {
      std::lock_guard<std::mutex> lock(g_m);
      stop_ = true;  // what is queued still runs: events recorded on it must complete
    }
    g_cv.notify_all();
    thread_.join();
  }
  EmulatedStream(const EmulatedStream&) = delete;
  EmulatedStream& operator=(const EmulatedStream&) = delete;

  // Under g_m. `always`: runs even after a failure (records, so that no event hangs).
  std::uint64_t push(std::function<void()> task, bool always = false) {
    tasks_.push_back(Task{std::move(task), always});
    g_cv.notify_all();
    return ++submitted_;
  }
  // Under g_m: task `seq` is needed (lazy mode runs nothing else).
  void demand(std::uint64_t seq) {
    if (seq > demand_) {
      demand_ = seq;
      g_cv.notify_all();
    }
  }
  // The host waits for everything issued so far; rethrows the first failure since the last fence.
  void fence() {
    std::unique_lock<std::mutex> lock(g_m);
    const std::uint64_t until = submitted_;
    demand(until);
    g_cv.wait(lock, [&] { return completed_ >= until; });
    // A run starts after the fence that ended the previous one (platform.slowdown_after_s).
    run_start_ = Clock::now();
    if (error_) {
      auto e = error_;
      error_ = nullptr;
      std::rethrow_exception(e);
    }
  }

  void copy(void* dst, const void* src, std::size_t bytes) {
    std::lock_guard<std::mutex> lock(g_m);
    push([this, dst, src, bytes] {
      const auto t0 = Clock::now();
      // In timing mode nothing is computed, so the bytes need not move: the copy only takes
      // its time at the link, as a device's copy engine does, and leaves the host's cores and
      // memory to the packing and unpacking, the host's real share of a copy.
      if (!timing()) std::memcpy(dst, src, bytes);
      if (bytes_per_s_ > 0)
        std::this_thread::sleep_until(
            t0 + std::chrono::duration_cast<Clock::duration>(
                     std::chrono::duration<double>(double(bytes) / bytes_per_s_)));
      if (trace::on())
        trace::complete(track_, "copy", t0, Clock::now(), "\"bytes\": " + std::to_string(bytes));
    });
  }
  // Rows of `width` bytes; a pageable host side takes twice the link time.
  void copy_2d(void* dst, std::size_t dpitch, const void* src, std::size_t spitch,
               std::size_t width, std::size_t height, bool pageable) {
    std::lock_guard<std::mutex> lock(g_m);
    ++g_counters.copies_2d;
    if (pageable) ++g_counters.pageable_copies_2d;
    push([this, dst, dpitch, src, spitch, width, height, pageable] {
      const auto t0 = Clock::now();
      if (!timing())
        for (std::size_t r = 0; r < height; ++r)
          std::memcpy(static_cast<char*>(dst) + r * dpitch,
                      static_cast<const char*>(src) + r * spitch, width);
      const double bytes = double(width) * double(height);
      if (bytes_per_s_ > 0)
        std::this_thread::sleep_until(
            t0 + std::chrono::duration_cast<Clock::duration>(
                     std::chrono::duration<double>((pageable ? 2.0 : 1.0) * bytes / bytes_per_s_)));
      if (trace::on())
        trace::complete(track_, pageable ? "pageable 2-D copy" : "2-D copy", t0, Clock::now(),
                        "\"bytes\": " + std::to_string(width * height));
    });
  }
  void gemm(double flops, std::function<void()> task) {
    std::lock_guard<std::mutex> lock(g_m);
    push([this, flops, task = std::move(task)] {
      const auto t0 = Clock::now();
      if (timing())
        std::this_thread::sleep_until(
            t0 + std::chrono::duration_cast<Clock::duration>(
                     std::chrono::duration<double>(flops / (spec_.emulated_gflops * 1e9))));
      else
        task();
      const auto t1 = Clock::now();
      trace::complete(track_, "gemm", t0, t1);
      Clock::time_point start;
      {
        std::lock_guard<std::mutex> l(g_m);
        start = run_start_;
      }
      slow_down(spec_, std::chrono::duration<double>(t1 - t0).count(),
                std::chrono::duration<double>(t1 - start).count());
    });
  }
  int threads() const { return spec_.threads; }
  // Timing mode: GEMMs and copies only take their time.
  bool timing() const { return spec_.emulated_gflops > 0; }

 private:
  struct Task {
    std::function<void()> run;
    bool always = false;
  };
  bool runnable() const { return !tasks_.empty() && (!lazy_ || stop_ || completed_ < demand_); }
  void loop() {
    // OpenMP (and so OpenBLAS) threads are per calling thread: set once, here.
    set_thread_count(spec_.threads);
    std::unique_lock<std::mutex> lock(g_m);
    for (;;) {
      g_cv.wait(lock, [this] { return runnable() || (stop_ && tasks_.empty()); });
      if (tasks_.empty()) return;
      Task task = std::move(tasks_.front());
      tasks_.pop_front();
      const bool skip = error_ != nullptr && !task.always;
      lock.unlock();
      std::exception_ptr err;
      if (!skip) {
        try {
          task.run();
        } catch (...) {
          err = std::current_exception();
        }
      }
      lock.lock();
      if (err && !error_) error_ = err;
      ++completed_;
      g_cv.notify_all();
    }
  }

  const platform::ProcessorSpec spec_;
  const bool lazy_;
  const std::string track_;  // in a trace
  const double bytes_per_s_;
  // Under g_m.
  std::deque<Task> tasks_;
  std::uint64_t submitted_ = 0, completed_ = 0, demand_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
  Clock::time_point run_start_;
  std::thread thread_;  // last: starts once the rest is set
};

std::vector<EmulatedRuntime::Instance> EmulatedRuntime::make_instances(
    int n, const platform::ProcessorSpec& spec) {
  const bool lazy = spec.lazy_queues || lazy_from_environment();
  std::vector<Instance> out;
  for (int i = 0; i < n; ++i) out.push_back(std::make_shared<EmulatedStream>(spec, lazy, i));
  return out;
}

void EmulatedRuntime::fence(const Instance& stream) { stream->fence(); }

EmulatedRuntime::Event EmulatedRuntime::create_event(const Instance& /*stream*/) {
  return new EmulatedEvent();
}

void EmulatedRuntime::destroy_event(Event event) {
  std::lock_guard<std::mutex> lock(g_m);  // a stream may still complete its record
  delete event;
}

void EmulatedRuntime::record_event(Event event, const Instance& stream) {
  std::lock_guard<std::mutex> lock(g_m);
  auto mark = std::make_shared<Mark>();
  mark->stream = stream.get();
  mark->seq = stream->push(
      [mark] {
        std::lock_guard<std::mutex> l(g_m);
        mark->at = Clock::now();
        mark->done = true;
      },
      true);
  event->last = std::move(mark);
}

void EmulatedRuntime::wait_event(const Instance& stream, Event event) {
  std::lock_guard<std::mutex> lock(g_m);
  const std::shared_ptr<Mark> mark = event->last;
  if (!mark || mark->stream == stream.get()) return;  // never recorded, or in order already
  stream->push([mark] {
    std::unique_lock<std::mutex> l(g_m);
    if (!mark->done) mark->stream->demand(mark->seq);
    g_cv.wait(l, [&] { return mark->done; });
  });
}

void EmulatedRuntime::sync_event(Event event) {
  std::unique_lock<std::mutex> lock(g_m);
  const std::shared_ptr<Mark> mark = event->last;
  if (!mark) return;
  if (!mark->done) mark->stream->demand(mark->seq);
  g_cv.wait(lock, [&] { return mark->done; });
}

bool EmulatedRuntime::event_done(Event event) {
  std::lock_guard<std::mutex> lock(g_m);
  return !event->last || event->last->done;
}

double EmulatedRuntime::elapsed_seconds(Event from, Event to) {
  std::lock_guard<std::mutex> lock(g_m);
  for (const Event e : {from, to}) {
    if (e == nullptr || !e->last)
      throw Error("emulated device: elapsed time asked of an event never recorded");
    if (!e->last->done)
      throw Error("emulated device: elapsed time asked of an event not completed");
  }
  return std::chrono::duration<double>(to->last->at - from->last->at).count();
}

void EmulatedRuntime::copy(const Instance& stream, void* dst, const void* src, std::size_t bytes) {
  stream->copy(dst, src, bytes);
}

void EmulatedRuntime::copy_2d(const Instance& stream, void* dst, std::size_t dpitch,
                              const void* src, std::size_t spitch, std::size_t width,
                              std::size_t height, const void* host) {
  if (width == 0 || height == 0) return;
  // The driver decides at the call whether the host side is page-locked: all of it must be.
  const auto first = reinterpret_cast<std::uintptr_t>(host);
  const std::size_t pitch = host == src ? spitch : dpitch;
  bool pageable;
  {
    std::lock_guard<std::mutex> lock(g_m);
    const auto it = registration_of(first);
    pageable = it == g_registered.end() || first + (height - 1) * pitch + width > it->second.end;
  }
  stream->copy_2d(dst, dpitch, src, spitch, width, height, pageable);
}

bool EmulatedRuntime::register_host(void* p, std::size_t bytes) {
  std::lock_guard<std::mutex> lock(g_m);
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t first = a / kPage * kPage, last = (a + bytes + kPage - 1) / kPage * kPage;
  bool refused = bytes == 0;
  if (g_fail_registrations != 0) {
    refused = true;
    if (g_fail_registrations > 0) --g_fail_registrations;
  }
  // A page already registered refuses the whole range (cudaErrorHostMemoryAlreadyRegistered).
  const auto next = g_registered.lower_bound(first);
  if (next != g_registered.end() && next->first < last) refused = true;
  if (next != g_registered.begin() && std::prev(next)->second.end > first) refused = true;
  if (refused) {
    ++g_counters.refused_registrations;
    return false;
  }
  g_registered[first] = Registration{last, a};
  ++g_counters.registrations;
  g_counters.registered_bytes += last - first;
  return true;
}

void EmulatedRuntime::unregister_host(void* p) {
  std::lock_guard<std::mutex> lock(g_m);
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  const auto it = registration_of(a);
  if (it == g_registered.end() || it->second.at != a) return;  // not registered here: ignored
  g_counters.registered_bytes -= it->second.end - it->first;
  ++g_counters.unregistrations;
  g_registered.erase(it);
}

bool EmulatedRuntime::host_pinned(const void* p) {
  std::lock_guard<std::mutex> lock(g_m);
  return registration_of(reinterpret_cast<std::uintptr_t>(p)) != g_registered.end();
}

void EmulatedRuntime::fail_registrations(int count) {
  std::lock_guard<std::mutex> lock(g_m);
  g_fail_registrations = count;
}

EmulatedRuntime::Counters EmulatedRuntime::counters() {
  std::lock_guard<std::mutex> lock(g_m);
  return g_counters;
}

int EmulatedRuntime::stream_threads(const Instance& stream) { return stream->threads(); }

void EmulatedRuntime::submit(const Instance& stream, double flops, std::function<void()> task) {
  stream->gemm(flops, std::move(task));
}

}  // namespace cuboid::exec
