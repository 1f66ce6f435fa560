#include "partition/merge.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <tuple>
#include <utility>

namespace cuboid::partition {

bool join_along(TileZone& boxes, int d) {
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

TileZone join_faces(TileZone boxes) {
  // l first: runs along the inner dimension make the longest GEMMs. A pass that joins nothing
  // on any axis means a fixed point.
  for (int round = 0; round < 64; ++round) {
    bool changed = false;
    for (int d : {2, 1, 0}) changed = join_along(boxes, d) || changed;
    if (!changed) break;
  }
  return boxes;
}

namespace {

// The union cut again by a sweep: slabs across ax[0] between consecutive faces, each slab's
// section cut into strips across ax[1], each strip's runs along ax[2] whole. Joining faces
// afterwards can find fewer boxes than joining the given ones: the pieces are cut the same way.
TileZone sweep(const TileZone& boxes, const std::array<int, 3>& ax) {
  using I = std::int64_t;
  auto marks = [](std::vector<I>& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  };
  std::vector<I> xs;
  for (const TileBox& b : boxes) {
    xs.push_back(b.lo[ax[0]]);
    xs.push_back(b.hi[ax[0]]);
  }
  marks(xs);
  TileZone out;
  std::vector<const TileBox*> slab;
  std::vector<I> ys;
  std::vector<std::pair<I, I>> runs;
  for (std::size_t i = 0; i + 1 < xs.size(); ++i) {
    slab.clear();
    ys.clear();
    for (const TileBox& b : boxes)
      if (b.lo[ax[0]] <= xs[i] && xs[i + 1] <= b.hi[ax[0]]) {
        slab.push_back(&b);
        ys.push_back(b.lo[ax[1]]);
        ys.push_back(b.hi[ax[1]]);
      }
    marks(ys);
    for (std::size_t j = 0; j + 1 < ys.size(); ++j) {
      runs.clear();
      for (const TileBox* b : slab)
        if (b->lo[ax[1]] <= ys[j] && ys[j + 1] <= b->hi[ax[1]])
          runs.push_back({b->lo[ax[2]], b->hi[ax[2]]});
      std::sort(runs.begin(), runs.end());
      for (std::size_t k = 0; k < runs.size();) {
        I lo = runs[k].first, hi = runs[k].second;
        for (++k; k < runs.size() && runs[k].first == hi; ++k) hi = runs[k].second;
        TileBox t;
        t.lo[ax[0]] = xs[i];
        t.hi[ax[0]] = xs[i + 1];
        t.lo[ax[1]] = ys[j];
        t.hi[ax[1]] = ys[j + 1];
        t.lo[ax[2]] = lo;
        t.hi[ax[2]] = hi;
        out.push_back(t);
      }
    }
  }
  return out;
}

// Zones with more boxes than this keep the faces joined as given (the sweeps cost up to the
// cube of the count).
constexpr std::size_t kSweepBoxes = 48;

void canonical(TileZone& boxes) {
  // Canonical order for determinism and readable output.
  std::sort(boxes.begin(), boxes.end(), [](const TileBox& x, const TileBox& y) {
    return std::tie(x.lo, x.hi) < std::tie(y.lo, y.hi);
  });
}

}  // namespace

TileZone merge_boxes(TileZone boxes) {
  boxes.erase(
      std::remove_if(boxes.begin(), boxes.end(), [](const TileBox& x) { return x.empty(); }),
      boxes.end());
  if (boxes.size() < 2) return boxes;
  boxes = join_faces(std::move(boxes));
  canonical(boxes);
  return boxes;
}

TileZone fewest_boxes(TileZone boxes) {
  boxes = merge_boxes(std::move(boxes));
  if (boxes.size() <= 2 || boxes.size() > kSweepBoxes) return boxes;
  // The six sweep orders; the fewest boxes win, the faces joined as given on a tie.
  static constexpr std::array<std::array<int, 3>, 6> kOrders = {
      {{2, 1, 0}, {2, 0, 1}, {1, 2, 0}, {1, 0, 2}, {0, 2, 1}, {0, 1, 2}}};
  bool changed = false;
  for (const auto& ax : kOrders) {
    TileZone cut = join_faces(sweep(boxes, ax));
    if (cut.size() < boxes.size()) {
      boxes = std::move(cut);
      changed = true;
    }
  }
  if (changed) canonical(boxes);
  return boxes;
}

}  // namespace cuboid::partition
