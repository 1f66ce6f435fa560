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

}  // namespace cuboid::partition
