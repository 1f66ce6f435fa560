#include "partition/merge.hpp"

#include <algorithm>
#include <tuple>

namespace cuboid::partition {
namespace {

// One pass along axis d; returns true when something was joined.
bool merge_along(TileZone& boxes, int d) {
  const int a = (d + 1) % 3, b = (d + 2) % 3;
  auto key = [&](const TileBox& x) {
    return std::make_tuple(x.lo[a], x.hi[a], x.lo[b], x.hi[b], x.lo[d]);
  };
  std::sort(boxes.begin(), boxes.end(),
            [&](const TileBox& x, const TileBox& y) { return key(x) < key(y); });
  std::size_t out = 0;
  bool changed = false;
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    if (out > 0) {
      TileBox& last = boxes[out - 1];
      const TileBox& cur = boxes[i];
      if (last.lo[a] == cur.lo[a] && last.hi[a] == cur.hi[a] && last.lo[b] == cur.lo[b] &&
          last.hi[b] == cur.hi[b] && last.hi[d] == cur.lo[d]) {
        last.hi[d] = cur.hi[d];
        changed = true;
        continue;
      }
    }
    boxes[out++] = boxes[i];
  }
  boxes.resize(out);
  return changed;
}

}  // namespace

TileZone merge_boxes(TileZone boxes) {
  boxes.erase(
      std::remove_if(boxes.begin(), boxes.end(), [](const TileBox& x) { return x.empty(); }),
      boxes.end());
  if (boxes.size() < 2) return boxes;
  // l first: runs along the inner dimension make the longest GEMMs. A pass that joins nothing
  // on any axis means a fixed point.
  for (int round = 0; round < 64; ++round) {
    bool changed = false;
    for (int d : {2, 1, 0}) changed = merge_along(boxes, d) || changed;
    if (!changed) break;
  }
  // Canonical order for determinism and readable output.
  std::sort(boxes.begin(), boxes.end(), [](const TileBox& x, const TileBox& y) {
    return std::tie(x.lo, x.hi) < std::tie(y.lo, y.hi);
  });
  return boxes;
}

}  // namespace cuboid::partition
