// The solver (see solver.hpp): the recursion, its choice among a node's candidates, and the
// lookahead that completes the best-looking candidates greedily to compare them.
#include "partition/stepped/solver.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <tuple>

#include "partition/merge.hpp"

namespace cuboid::partition::stepped_detail {
namespace {

// Boxes above four once the faces are joined (the final zones may come out with fewer: see
// fewest_boxes; the sweeps cost too much to run on every candidate).
int over_four(const Region& zone) { return std::max(0, int(join_faces(zone).size()) - 4); }

// Fewer boxes may cost surface, never more than this share of the smallest Hs on offer: a flat
// slab of few boxes must not win over a compact zone of one box more.
constexpr double kBoxesSurfaceSlack = 0.05;

// The candidate of rank `rank` in pick's order (within the slack by key, then the rest by key),
// or the last one.
std::size_t ranked(const std::vector<std::array<double, 2>>& keys, std::size_t rank) {
  double least = std::numeric_limits<double>::infinity();
  for (const auto& k : keys) least = std::min(least, k[1]);
  std::vector<std::size_t> order(keys.size());
  std::iota(order.begin(), order.end(), 0);
  auto outside = [&](std::size_t i) { return keys[i][1] > (1 + kBoxesSurfaceSlack) * least; };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::make_pair(outside(a), keys[a]) < std::make_pair(outside(b), keys[b]);
  });
  return order[std::min(rank, order.size() - 1)];
}

// The smallest key (boxes first, then Hs) among those whose Hs is within the slack.
std::size_t pick(const std::vector<std::array<double, 2>>& keys) {
  double least = std::numeric_limits<double>::infinity();
  for (const auto& k : keys) least = std::min(least, k[1]);
  std::size_t best = keys.size();
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (keys[i][1] <= (1 + kBoxesSurfaceSlack) * least &&
        (best == keys.size() || keys[i] < keys[best]))
      best = i;
  return best;
}

// Candidates a lookahead node completes and compares, at most.
constexpr std::size_t kLookaheadCandidates = 32;

// The candidates a lookahead node compares, the ones that look best locally: each family (split
// point, axis, corner) by its key, then the families taken in turns, so that the candidates
// compared are not all variants of one cut.
std::vector<std::size_t> lookahead_order(const std::vector<Option>& opts) {
  std::vector<std::size_t> order(opts.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::make_pair(opts[a].family, opts[a].key) <
           std::make_pair(opts[b].family, opts[b].key);
  });
  std::vector<int> rank(opts.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    rank[order[i]] =
        i > 0 && opts[order[i]].family == opts[order[i - 1]].family ? rank[order[i - 1]] + 1 : 0;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::make_pair(rank[a], opts[a].key) < std::make_pair(rank[b], opts[b].key);
  });
  if (order.size() > kLookaheadCandidates) order.resize(kLookaheadCandidates);
  return order;
}

// Whether a record (Node, Forced, Memo) is of the node of `t`.
template <class A>
bool same(const A& a, const Task& t) {
  return a.lo == t.lo && a.hi == t.hi && a.node == t.node;
}

}  // namespace

std::vector<TileZone> Solver::run(Task root) {
  std::vector<Task> stack;
  stack.push_back(std::move(root));
  while (!stack.empty()) {
    Task t = std::move(stack.back());
    stack.pop_back();
    if (t.proc >= 0) {
      finish(t);
      continue;
    }
    if (t.target == 0) continue;  // only processors without tasks below
    if (!lookahead_ && !compare_ && lean_step(t, stack)) continue;
    std::vector<Option> opts = options(t, lookahead_ ? Effort::wide
                                          : compare_ ? Effort::narrow
                                                     : Effort::minimal);
    const std::size_t best = choose(t, opts);
    stack.push_back(std::move(opts[best].second));
    stack.push_back(std::move(opts[best].first));
  }
  // Zones put in processor order at the end, in one pass: stored as each leaf finished, the
  // writes at random places stalled the recursion (a cache miss a zone with 10^6 of them).
  for (auto& [proc, zone] : finished_) zones_[std::size_t(proc)] = std::move(zone);
  finished_.clear();
  return std::move(zones_);
}

bool Solver::lean_step(Task& t, std::vector<Task>& stack) {
  const TileBox bb = bounds(t.region);
  splits_.clear();
  corners_.clear();
  source_.decide(t, bb, Effort::minimal, splits_, corners_);
  if (splits_.size() != 1 || !corners_.empty()) return false;
  Task below = splits_[0].below, above = splits_[0].above;
  // Buffers of finished regions, reused: one allocation a leaf instead of two a node.
  below.region = spare();
  above.region = spare();
  lean_split(t.region, bb, splits_[0].axis, below.target, below, above);
  t.region.clear();
  spare_.push_back(std::move(t.region));
  stack.push_back(std::move(above));
  stack.push_back(std::move(below));
  return true;
}

std::size_t Solver::choose(const Task& t, const std::vector<Option>& opts) {
  if (!lookahead_ || opts.size() < 2) return pick_option(opts);
  if (const Memo* known = replayed(t)) return known->best;
  return lookahead(t, opts);
}

const Solver::Memo* Solver::replayed(const Task& t) const {
  if (memo_ == nullptr) return nullptr;
  for (const Forced& f : forced_)
    if (same(f, t)) return nullptr;
  const Memo* known = nullptr;
  for (const Memo& m : *memo_)
    if (same(m, t) && m.region == t.region) known = &m;
  return known;
}

std::size_t Solver::lookahead(const Task& t, const std::vector<Option>& opts) {
  const std::vector<std::size_t> order = lookahead_order(opts);
  std::vector<std::array<double, 2>> scores;
  for (std::size_t i : order) {
    std::array<double, 2> score{};
    complete(opts[i].first, score);
    complete(opts[i].second, score);
    scores.push_back(score);
  }
  std::size_t best = order[pick(scores)];
  if (scores.size() > 1) {
    decided_.push_back({t.lo, t.hi, t.node, scores.size()});
    for (const Forced& f : forced_)
      if (same(f, t)) best = order[ranked(scores, f.rank)];
  }
  if (record_ != nullptr) record_->push_back({t.lo, t.hi, t.node, t.region, best});
  return best;
}

void Solver::finish(Task& t) {
  if (cells(t.region) != t.target)
    throw std::logic_error("stepped: processor " + std::to_string(t.proc) + " got " +
                           std::to_string(cells(t.region)) + " tiles instead of " +
                           std::to_string(t.target));
  if (t.region.size() <= kFewBoxes) {
    // compact() joins few boxes to a fixed point; merge_boxes's canonical order.
    // A copy, not the buffer: the zone keeps no spare capacity (10^6 zones), the buffer is
    // reused.
    Region z = t.region;
    t.region.clear();
    spare_.push_back(std::move(t.region));
    if (!t.settled) compact_in_place(z);
    std::sort(z.begin(), z.end(), [](const TileBox& a, const TileBox& b) {
      return std::tie(a.lo, a.hi) < std::tie(b.lo, b.hi);
    });
    finished_.emplace_back(t.proc, std::move(z));
  } else {
    finished_.emplace_back(t.proc, merge_boxes(t.region));
  }
}

void Solver::complete(const Task& t, std::array<double, 2>& score) const {
  if (t.proc >= 0) {
    score[0] += over_four(t.region);
    score[1] += half_surface_of(t.region);
    return;
  }
  if (t.target == 0) return;
  std::vector<Option> opts = options(t, Effort::narrow);
  const std::size_t best = pick_option(opts);
  complete(opts[best].first, score);
  complete(opts[best].second, score);
}

std::size_t Solver::pick_option(const std::vector<Option>& opts) {
  std::vector<std::array<double, 2>> keys;
  for (const Option& o : opts) keys.push_back(o.key);
  return pick(keys);
}

std::vector<Option> Solver::options(const Task& t, Effort effort) const {
  const TileBox bb = bounds(t.region);
  std::vector<Source::Split> splits;
  std::vector<Source::Corner> corners;
  source_.decide(t, bb, effort, splits, corners);
  std::vector<Option> out;
  int family = 0;
  for (const auto& s : splits) {
    const std::size_t from = out.size();
    split_options(s, t, bb, effort, out);
    for (std::size_t i = from; i < out.size(); ++i) out[i].family = family;
    ++family;
  }
  for (const auto& c : corners) {
    const std::size_t from = out.size();
    corner_options(c, t, bb, effort, out);
    for (std::size_t i = from; i < out.size(); ++i) out[i].family = family;
    ++family;
  }
  if (out.empty()) {
    // The one step the minimal effort tries may not fit (a few tiles a processor: the corner
    // box misses its count by more than the layer next to it holds); the wider efforts try
    // more shapes, orientations and windows.
    if (effort == Effort::minimal) return options(t, Effort::narrow);
    if (effort == Effort::narrow) return options(t, Effort::wide);
    throw std::logic_error("stepped: no way to cut a region");
  }
  if (out.size() == 1) return out;
  if (effort == Effort::minimal) {
    // No time for surfaces: the dominant with the fewest boxes, then the inner region.
    for (Option& o : out)
      o.key = {double(o.second.region.size()) * 1e3 + double(o.first.region.size()), 0};
    return out;
  }
  // Different orientations often give the same step (a whole layer, say): keep one of each.
  std::vector<Option> unique;
  for (Option& o : out) {
    bool seen = false;
    for (const Option& u : unique)
      if (u.first.lo == o.first.lo && u.first.hi == o.first.hi && u.first.node == o.first.node &&
          u.first.region == o.first.region) {
        seen = true;
        break;
      }
    if (!seen) unique.push_back(std::move(o));
  }
  out.swap(unique);
  for (Option& o : out) {
    // A final zone's boxes count now; the regions' surfaces stand for their zones' surfaces.
    double over = 0;
    if (o.first.proc >= 0) over += over_four(o.first.region);
    if (o.second.proc >= 0) over += over_four(o.second.region);
    o.key = {over * 1e9 + 1e6 * double(o.first.region.size() + o.second.region.size()),
             half_surface_of(o.first.region) + half_surface_of(o.second.region)};
  }
  return out;
}

Region Solver::spare() {
  if (spare_.empty()) return {};
  Region r = std::move(spare_.back());
  spare_.pop_back();
  return r;
}

}  // namespace cuboid::partition::stepped_detail
