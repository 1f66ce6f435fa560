#pragma once
// An in-order work queue with a thread of its own: what a device stream is, on the host. Work
// submitted to one queue runs in submission order; events mark a point in a queue, and another
// queue (or the host) can wait for that point. The host-backed staged processor runs its copy
// engines and its GEMMs on three of these, so that its pipeline is as asynchronous as a GPU's.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace cuboid::exec {

class WorkQueue;

// A point in a queue: done once every task submitted before it has run. A default event is
// always done.
struct QueueEvent {
  const WorkQueue* queue = nullptr;
  std::uint64_t seq = 0;
  inline void wait() const;
};

class WorkQueue {
 public:
  WorkQueue() : thread_([this] { loop(); }) {}
  ~WorkQueue() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // Runs `task` on the queue's thread after everything submitted before it.
  void submit(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(m_);
      tasks_.push_back(std::move(task));
      ++submitted_;
    }
    cv_.notify_all();
  }
  QueueEvent record() const {
    std::lock_guard<std::mutex> lock(m_);
    return QueueEvent{this, submitted_};
  }
  // Blocks the calling thread until task number `seq` has run.
  void wait_until(std::uint64_t seq) const {
    std::unique_lock<std::mutex> lock(m_);
    cv_.wait(lock, [&] { return completed_ >= seq; });
  }
  // Waits for everything submitted so far; rethrows the first failure of a task since the last
  // fence (the tasks after a failure are skipped).
  void fence() {
    std::unique_lock<std::mutex> lock(m_);
    cv_.wait(lock, [&] { return completed_ >= submitted_; });
    if (error_) {
      auto e = error_;
      error_ = nullptr;
      std::rethrow_exception(e);
    }
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(m_);
    for (;;) {
      cv_.wait(lock, [this] { return stop_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stopping, nothing left
      auto task = std::move(tasks_.front());
      tasks_.pop_front();
      const bool skip = error_ != nullptr;
      lock.unlock();
      std::exception_ptr err;
      if (!skip) {
        try {
          task();
        } catch (...) {
          err = std::current_exception();
        }
      }
      lock.lock();
      if (err && !error_) error_ = err;
      ++completed_;
      cv_.notify_all();
    }
  }

  mutable std::mutex m_;
  mutable std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  std::uint64_t submitted_ = 0, completed_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

inline void QueueEvent::wait() const {
  if (queue) queue->wait_until(seq);
}

}  // namespace cuboid::exec
