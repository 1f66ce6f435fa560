#pragma once
// A long-lived thread that runs one task at a time. Each processor keeps its own lane for the
// engine's lifetime: OpenMP (and so OpenBLAS) builds a thread team per calling thread, and a
// fresh std::thread per run would pay for a new team every time.
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace cuboid::exec {

class ThreadLane {
 public:
  ThreadLane() : thread_([this] { loop(); }) {}
  ~ThreadLane() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  ThreadLane(const ThreadLane&) = delete;
  ThreadLane& operator=(const ThreadLane&) = delete;

  void start(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(m_);
      task_ = std::move(task);
      done_ = false;
      error_ = nullptr;
    }
    cv_.notify_all();
  }
  // Waits at most `timeout` for the task; true when it has finished (wait() then returns at
  // once and rethrows what it threw).
  bool wait_for(std::chrono::microseconds timeout) {
    std::unique_lock<std::mutex> lock(m_);
    return cv_.wait_for(lock, timeout, [this] { return done_; });
  }
  // Waits for the task; rethrows what it threw.
  void wait() {
    std::unique_lock<std::mutex> lock(m_);
    cv_.wait(lock, [this] { return done_; });
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(m_);
    for (;;) {
      cv_.wait(lock, [this] { return stop_ || task_; });
      if (stop_) return;
      auto task = std::move(task_);
      task_ = nullptr;
      lock.unlock();
      std::exception_ptr err;
      try {
        task();
      } catch (...) {
        err = std::current_exception();
      }
      lock.lock();
      error_ = err;
      done_ = true;
      cv_.notify_all();
    }
  }

  std::mutex m_;
  std::condition_variable cv_;
  std::function<void()> task_;
  bool done_ = true, stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace cuboid::exec
