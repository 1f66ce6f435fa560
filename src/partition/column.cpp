// Column-based 2D partition (Beaumont, Boudet, Rastello, Robert 2001): the C face is cut into
// columns, each column into rectangles stacked along it. With the areas sorted, an optimal
// column-based partition uses contiguous groups, and the sum of half-perimeters of a column of q
// rectangles of total area S and height Y is q S / Y + Y. The grouping is the dynamic program
//   f(j) = min_{i<j} f(i) + (j - i)(A_j - A_i) / Y + Y,   A = prefix sums of sorted areas,
// whose cost satisfies the quadrangle inequality ((j - i) and (A_j - A_i) both grow with j), so
// the best i is monotone in j and a queue of candidates with binary search solves it in
// O(p log p) instead of O(p^2). Both orientations are tried; the cheaper one is kept.
#include <algorithm>
#include <deque>

#include "partition/algorithms.hpp"

namespace cuboid::partition::detail {
namespace {

struct Plan {
  double cost;
  std::vector<std::size_t> starts;  // first sorted index of each column, plus n at the end
};

Plan plan_columns(const std::vector<double>& area_prefix, double height) {
  const std::size_t n = area_prefix.size() - 1;
  std::vector<double> f(n + 1, 0.0);
  std::vector<std::size_t> arg(n + 1, 0);
  auto value = [&](std::size_t i, std::size_t j) {
    return f[i] + double(j - i) * (area_prefix[j] - area_prefix[i]) / height + height;
  };
  struct Candidate {
    std::size_t i, from;
  };
  std::deque<Candidate> queue{{0, 1}};
  for (std::size_t j = 1; j <= n; ++j) {
    while (queue.size() > 1 && queue[1].from <= j) queue.pop_front();
    arg[j] = queue.front().i;
    f[j] = value(arg[j], j);
    if (j == n) break;
    // Candidate j takes over a suffix of the positions j+1..n, if any.
    while (!queue.empty()) {
      const Candidate c = queue.back();
      const std::size_t start = std::max(c.from, j + 1);
      if (value(j, start) <= value(c.i, start)) {
        queue.pop_back();
        continue;
      }
      std::size_t lo = start + 1, hi = n + 1;  // first position where j wins, n + 1 if none
      while (lo < hi) {
        const std::size_t mid = lo + (hi - lo) / 2;
        if (value(j, mid) <= value(c.i, mid)) {
          hi = mid;
        } else {
          lo = mid + 1;
        }
      }
      if (lo <= n) queue.push_back({j, lo});
      break;
    }
    if (queue.empty()) queue.push_back({j, j + 1});
  }
  Plan plan{f[n], {}};
  for (std::size_t j = n; j > 0; j = arg[j]) plan.starts.push_back(arg[j]);
  std::reverse(plan.starts.begin(), plan.starts.end());
  plan.starts.push_back(n);
  return plan;
}

}  // namespace

CutTree column(const std::vector<double>& weights, const Box& cuboid) {
  const std::size_t n = weights.size();
  const std::vector<int> order = sorted_order(weights);
  std::vector<double> prefix(n + 1, 0.0);
  for (std::size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + weights[order[i]];
  const double total = prefix[n];
  const double face = cuboid.extent(0) * cuboid.extent(1);
  std::vector<double> area_prefix(n + 1);
  for (std::size_t i = 0; i <= n; ++i) area_prefix[i] = prefix[i] / total * face;

  // across = axis along which columns sit side by side; along = the columns' own axis.
  Plan best{0.0, {}};
  int across = 1;
  for (int a : {1, 0}) {
    Plan plan = plan_columns(area_prefix, cuboid.extent(1 - a));
    if (best.starts.empty() || plan.cost < best.cost) {
      best = std::move(plan);
      across = a;
    }
  }
  const int along = 1 - across;

  CutTree tree;
  std::vector<int> columns;
  double x = cuboid.lo[across];
  for (std::size_t c = 0; c + 1 < best.starts.size(); ++c) {
    const std::size_t first = best.starts[c], last = best.starts[c + 1];
    const double x_end =
        last == n ? cuboid.hi[across]
                  : std::min(cuboid.hi[across],
                             cuboid.lo[across] + prefix[last] / total * cuboid.extent(across));
    const Box col = with_axis(cuboid, across, x, x_end);
    const double col_weight = prefix[last] - prefix[first];
    double y = cuboid.lo[along];
    std::vector<int> cells;
    for (std::size_t i = first; i < last; ++i) {
      const double y_end = i + 1 == last
                               ? cuboid.hi[along]
                               : std::min(cuboid.hi[along],
                                          cuboid.lo[along] + (prefix[i + 1] - prefix[first]) /
                                                                 col_weight * cuboid.extent(along));
      cells.push_back(leaf(tree, order[i], with_axis(col, along, y, y_end)));
      y = y_end;
    }
    columns.push_back(join_along(tree, cells, along));
    x = x_end;
  }
  tree.root = join_along(tree, columns, across);
  return tree;
}

}  // namespace cuboid::partition::detail
