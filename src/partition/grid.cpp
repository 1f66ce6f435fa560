// A p_m x p_n x p_k processor grid, the layout of 2.5D/COSMA-style algorithms.
//
// Grid fitting (COSMA, Kwasniewski et al. SC'19, section 7.1): a prime p would force a 1 x 1 x p
// grid of slabs, so up to kMaxIdleShare of the processors (the slowest) may be left idle, with
// an empty zone, when a smaller count q factors into a grid whose boxes have a smaller
// half-surface. Among q in [p - idle_max, p] and all factorisations q = a b c, the choice
// minimises the Hs of one box (M/a) x (N/b) x (K/c), the per-processor traffic COSMA minimises.
//
// With unequal speeds the grid lines bend: the i axis is cut into a slabs proportional to the
// total speed of the processors in each, each slab is cut along j into b columns proportional to
// theirs, each column along l proportional to each processor's speed. Processors are dealt to
// slabs and columns in serpentine order of decreasing speed so that slab totals stay close.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "partition/algorithms.hpp"

namespace cuboid::partition::detail {
namespace {

constexpr double kMaxIdleShare = 0.05;

struct Shape {
  std::size_t q = 0, a = 1, b = 1, c = 1;
  double cost = std::numeric_limits<double>::infinity();
};

// Deals `items` (sorted by decreasing weight) into `groups` groups in serpentine order.
std::vector<std::vector<int>> deal(const std::vector<int>& items, std::size_t groups) {
  std::vector<std::vector<int>> out(groups);
  for (std::size_t r = 0; r < items.size(); ++r) {
    const std::size_t round = r / groups, pos = r % groups;
    out[round % 2 == 0 ? pos : groups - 1 - pos].push_back(items[r]);
  }
  return out;
}

// Cuts `box` along axis d into consecutive parts proportional to `parts` weights.
std::vector<Box> proportional_cuts(const Box& box, int d, const std::vector<double>& parts) {
  const double total = std::accumulate(parts.begin(), parts.end(), 0.0);
  std::vector<Box> out;
  double acc = 0.0, start = box.lo[d];
  for (std::size_t i = 0; i < parts.size(); ++i) {
    acc += parts[i];
    const double end = i + 1 == parts.size()
                           ? box.hi[d]
                           : std::min(box.hi[d], box.lo[d] + acc / total * box.extent(d));
    out.push_back(with_axis(box, d, start, end));
    start = end;
  }
  return out;
}

Shape choose_shape(std::size_t p, const Box& cuboid) {
  const std::size_t idle_max = std::size_t(std::floor(kMaxIdleShare * double(p)));
  const double m = cuboid.extent(0), n = cuboid.extent(1), k = cuboid.extent(2);
  Shape best;
  std::vector<std::size_t> divisors;
  for (std::size_t q = p; q >= 1 && q + idle_max >= p; --q) {
    divisors.clear();
    for (std::size_t d = 1; d * d <= q; ++d) {
      if (q % d) continue;
      divisors.push_back(d);
      if (d * d != q) divisors.push_back(q / d);
    }
    // Largest first: on ties the grid cuts i and j before l (cutting l means reductions).
    std::sort(divisors.rbegin(), divisors.rend());
    for (std::size_t a : divisors) {
      for (std::size_t b : divisors) {
        if ((q / a) % b) continue;
        const std::size_t c = q / a / b;
        const double bm = m / double(a), bn = n / double(b), bk = k / double(c);
        const double cost = bm * bk + bn * bk + bm * bn;
        // Strict improvement needed to prefer fewer processors or another shape: deterministic.
        if (cost < best.cost * (1 - 1e-12)) best = {q, a, b, c, cost};
      }
    }
  }
  return best;
}

}  // namespace

CutTree grid(const std::vector<double>& weights, const Box& cuboid) {
  const std::size_t p = weights.size();
  const Shape shape = choose_shape(p, cuboid);
  // Fastest first; the slowest p - q stay idle.
  std::vector<int> order(p);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int x, int y) { return weights[x] > weights[y]; });
  order.resize(shape.q);

  CutTree tree;
  auto weight_of = [&](const std::vector<int>& ids) {
    double s = 0.0;
    for (int id : ids) s += weights[id];
    return s;
  };
  const auto slabs = deal(order, shape.a);
  std::vector<double> slab_w;
  for (const auto& s : slabs) slab_w.push_back(weight_of(s));
  const auto slab_boxes = proportional_cuts(cuboid, 0, slab_w);
  std::vector<int> slab_nodes;
  for (std::size_t si = 0; si < shape.a; ++si) {
    const auto cols = deal(slabs[si], shape.b);
    std::vector<double> col_w;
    for (const auto& c : cols) col_w.push_back(weight_of(c));
    const auto col_boxes = proportional_cuts(slab_boxes[si], 1, col_w);
    std::vector<int> col_nodes;
    for (std::size_t ci = 0; ci < shape.b; ++ci) {
      std::vector<double> w;
      for (int id : cols[ci]) w.push_back(weights[id]);
      const auto cells = proportional_cuts(col_boxes[ci], 2, w);
      std::vector<int> cell_nodes;
      for (std::size_t li = 0; li < cells.size(); ++li)
        cell_nodes.push_back(leaf(tree, cols[ci][li], cells[li]));
      col_nodes.push_back(join_along(tree, cell_nodes, 2));
    }
    slab_nodes.push_back(join_along(tree, col_nodes, 1));
  }
  tree.root = join_along(tree, slab_nodes, 0);
  return tree;
}

}  // namespace cuboid::partition::detail
