#pragma once
// Independent work over many items, shared by the cores: `fn(begin, end)` is called on
// contiguous ranges of [0, n), one per thread, the first on the calling thread. Below 65536
// items (a few milliseconds of the work it is used for) it runs on the calling thread alone.
#include <algorithm>
#include <cstddef>
#include <thread>
#include <vector>

namespace cuboid::partition {

template <class Fn>
void for_each_range(std::size_t n, const Fn& fn) {
  const std::size_t threads =
      n < (std::size_t(1) << 16)
          ? 1
          : std::max<std::size_t>(1, std::min<std::size_t>(8, std::thread::hardware_concurrency()));
  const std::size_t share = (n + threads - 1) / threads;
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t)
    pool.emplace_back(
        [&fn, n, share, t] { fn(std::min(n, t * share), std::min(n, (t + 1) * share)); });
  fn(0, std::min(n, share));
  for (auto& th : pool) th.join();
}

// A hint that the elements of `v` are wanted soon (GCC and Clang; elsewhere nothing). A loop
// over many small vectors in an order other than the one they were allocated in (zones read by
// processor, made by target) waits on memory at each one otherwise: call it this many ahead.
constexpr std::size_t kPrefetchAhead = 8;
template <class T>
void prefetch(const std::vector<T>& v) {
#if defined(__GNUC__)
  const char* at = reinterpret_cast<const char*>(v.data());
  const std::size_t bytes = v.size() * sizeof(T);
  for (std::size_t i = 0; i < bytes; i += 64) __builtin_prefetch(at + i);
#else
  (void)v;
#endif
}

// fn(i) for every i of `items` (vectors: zones), shared by the cores as for_each_range does,
// each items[i] fetched a few ahead of its turn.
template <class T, class Fn>
void for_each_item(const std::vector<std::vector<T>>& items, const Fn& fn) {
  for_each_range(items.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      if (i + kPrefetchAhead < end) prefetch(items[i + kPrefetchAhead]);
      fn(i);
    }
  });
}

}  // namespace cuboid::partition
