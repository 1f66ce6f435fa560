// The entry points of stepped.hpp: check the counts, run the solver from the whole cuboid, then
// the repair passes and, for a zone left above four boxes, retries of its ancestors' choices.
#include "partition/stepped.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "partition/stepped/repair.hpp"
#include "partition/stepped/solver.hpp"
#include "partition/stepped/sources.hpp"

namespace cuboid::partition {

using stepped_detail::fewest;
using stepped_detail::half_surface_of;
using stepped_detail::I;
using stepped_detail::NrrpSource;
using stepped_detail::Region;
using stepped_detail::repair;
using stepped_detail::repair_chains;
using stepped_detail::repair_triples;
using stepped_detail::Solver;
using stepped_detail::Task;
using stepped_detail::TreeSource;

namespace {

double total_half_surface(const std::vector<TileZone>& zones) {
  double s = 0;
  for (const TileZone& z : zones) s += half_surface_of(z);
  return s;
}

// The retries of a result that keeps a zone above four boxes (lookahead only): at most this many
// passes more, each with one ancestor of such a zone on a candidate of rank 1..kRetryRanks, and
// a result kept when its total half-surface is within this share of the first one's.
constexpr int kRetries = 8;
constexpr std::size_t kRetryRanks = 2;
constexpr double kRetrySurfaceSlack = 1.02;

Region whole(const TileExtent& tiles) {
  TileBox b;
  b.hi = tiles;
  return {b};
}

void check_total(const std::vector<I>& targets, const TileExtent& tiles) {
  I total = 0;
  for (I t : targets) {
    if (t < 0) throw std::invalid_argument("stepped: negative tile count");
    total += t;
  }
  if (total != tiles[0] * tiles[1] * tiles[2])
    throw std::invalid_argument("stepped: the counts do not add up to the cuboid");
}

}  // namespace

std::vector<TileZone> stepped_nrrp3d(const std::vector<I>& targets, const TileExtent& tiles,
                                     bool three_modes) {
  check_total(targets, tiles);
  std::vector<int> order;
  for (std::size_t p = 0; p < targets.size(); ++p)
    if (targets[p] > 0) order.push_back(int(p));
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return targets[std::size_t(a)] < targets[std::size_t(b)]; });
  std::vector<I> prefix(order.size() + 1, 0);
  for (std::size_t i = 0; i < order.size(); ++i)
    prefix[i + 1] = prefix[i] + targets[std::size_t(order[i])];
  const std::size_t active = order.size();
  // Each processor's place in `order`: read only by the retries, which only lookahead runs have.
  std::vector<int> position;
  if (active <= kSteppedLookaheadProcessors) {
    position.assign(targets.size(), -1);
    for (std::size_t i = 0; i < order.size(); ++i) position[std::size_t(order[i])] = int(i);
  }
  NrrpSource source(std::move(order), std::move(prefix), three_modes);
  const bool lookahead = active <= kSteppedLookaheadProcessors;
  std::vector<Solver::Node> decided;
  std::vector<Solver::Memo> memo;
  std::size_t repair_work = 0;
  auto solve = [&](const std::vector<Solver::Forced>& forced) {
    Solver solver(source, targets.size(), lookahead, active <= kSteppedCompareProcessors);
    solver.forced_ = forced;
    if (forced.empty())
      solver.record_ = &memo;
    else
      solver.memo_ = &memo;
    Task root = source.task(0, int(active));
    root.region = whole(tiles);
    auto zones = solver.run(std::move(root));
    if (lookahead) repair(zones);
    if (active <= kSteppedCompareProcessors) fewest(zones);
    if (lookahead) {
      std::size_t work = 0;  // each pass's own budget
      repair_chains(zones, work);
      repair_triples(zones, work);
      repair_work += work;
    }
    decided = std::move(solver.decided_);
    return zones;
  };
  auto zones = solve({});
  if (!lookahead) return zones;
  // A zone still above four boxes: its steps come from the cuts of its ancestors. Each ancestor
  // that chose among several candidates, deepest first, takes its next candidate instead, and
  // the first result with no zone above four boxes is kept, when its surface is within the
  // allowance; at most kRetries passes more.
  std::vector<std::size_t> bad;
  for (std::size_t p = 0; p < zones.size(); ++p)
    if (zones[p].size() > 4) bad.push_back(p);
  if (bad.empty()) return zones;
  std::vector<Solver::Node> ancestors;
  for (const Solver::Node& n : decided)
    for (std::size_t p : bad)
      if (n.lo <= position[p] && position[p] < n.hi) {
        ancestors.push_back(n);
        break;
      }
  std::stable_sort(ancestors.begin(), ancestors.end(),
                   [](const auto& a, const auto& b) { return a.hi - a.lo < b.hi - b.lo; });
  const double limit = kRetrySurfaceSlack * total_half_surface(zones);
  int tries = 0;
  for (std::size_t rank = 1; rank <= kRetryRanks && tries < kRetries; ++rank)
    for (const Solver::Node& n : ancestors) {
      if (rank >= n.candidates) continue;
      if (tries++ >= kRetries) break;
      // Retries stop once the repairs of all passes have done five passes' worth of work (a
      // retry that helps needs about as much as the first pass): the best so far stands.
      if (repair_work > 5 * stepped_detail::kRepairWork) return zones;
      auto other = solve({{n.lo, n.hi, n.node, rank}});
      bool ok = true;
      for (const TileZone& z : other) ok = ok && z.size() <= 4;
      if (ok && total_half_surface(other) <= limit) return other;
    }
  return zones;
}

std::vector<TileZone> stepped_tree(const CutTree& tree, const std::vector<I>& targets,
                                   const TileExtent& tiles) {
  check_total(targets, tiles);
  std::size_t active = 0;
  for (I t : targets) active += t > 0;
  TreeSource source(tree, targets);
  Solver solver(source, targets.size(), active <= kSteppedLookaheadProcessors,
                active <= kSteppedCompareProcessors);
  Task root = source.task(tree.root);
  root.region = whole(tiles);
  auto zones = solver.run(std::move(root));
  if (active <= kSteppedCompareProcessors) fewest(zones);
  return zones;
}

}  // namespace cuboid::partition
