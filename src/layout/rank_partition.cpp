#include "layout/rank_partition.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "layout/rank_zones.hpp"
#include "util/checked.hpp"

namespace cuboid::dist {

std::vector<std::int64_t> weighted_cuts(std::int64_t count, const std::vector<double>& weights) {
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  std::vector<std::int64_t> cuts{0};
  double acc = 0;
  for (std::size_t g = 0; g < weights.size(); ++g) {
    acc += weights[g];
    const std::int64_t c =
        g + 1 == weights.size() || total <= 0
            ? count
            : std::min<std::int64_t>(count, std::llround(acc / total * double(count)));
    cuts.push_back(std::max(c, cuts.back()));
  }
  return cuts;
}

namespace {

// The traffic model's cost per operation model_traffic_cost() counts (an upper estimate),
// measured on 2500 to 100000 ranks on 2 cores with margin: a block-cyclic owner count is a few
// additions, a tile-owned one a lookup per tile. Choosing among candidates may spend
// kModelSeconds on their models.
constexpr double kSecondsPerBlockCount = 3e-10;
constexpr double kSecondsPerTileCount = 8e-9;
constexpr double kModelSeconds = 4.0;

using partition::TileBox;
using partition::TileZone;

// Position boundaries of the groups of an axis order whose tiles are grouped by `group(tile)`
// into `groups` consecutive runs (ascending group, as grouped_order sorts them).
std::vector<std::int64_t> group_cuts(const AxisOrder& a, int groups,
                                     const std::function<int(std::int64_t)>& group) {
  std::vector<std::int64_t> cuts(std::size_t(groups) + 1, a.size());
  cuts[0] = 0;
  for (int g = 1; g < groups; ++g) {
    std::int64_t x = 0;
    while (x < a.size() && group(a.tiles[std::size_t(x)]) < g) ++x;
    cuts[std::size_t(g)] = x;
  }
  return cuts;
}

struct Candidate {
  std::string name;
  TileOrder order;
  std::vector<TileZone> zones;
};

// A two-level cut of positions: `outer` axis into groups, then each group's range of the
// `inner` axis among its members; the third axis whole. members[g] lists the ranks of group g
// in inner order; cuts are either given (owner boundaries) or balanced by speed.
std::vector<TileZone> two_level(const TileOrder& o, int outer_axis, int inner_axis,
                                const std::vector<std::vector<int>>& members,
                                const std::vector<std::int64_t>& outer_cuts,
                                const std::vector<std::vector<std::int64_t>>& inner_cuts, int P) {
  const std::array<std::int64_t, 3> ext{o.i.size(), o.j.size(), o.k.size()};
  auto zones = std::vector<TileZone>(std::size_t(P));
  for (std::size_t g = 0; g < members.size(); ++g)
    for (std::size_t q = 0; q < members[g].size(); ++q) {
      TileBox b{{0, 0, 0}, {ext[0], ext[1], ext[2]}};
      b.lo[outer_axis] = outer_cuts[g], b.hi[outer_axis] = outer_cuts[g + 1];
      b.lo[inner_axis] = inner_cuts[g][q], b.hi[inner_axis] = inner_cuts[g][q + 1];
      if (!b.empty()) zones[std::size_t(members[g][q])].push_back(b);
    }
  return zones;
}

std::vector<Candidate> block_cyclic_candidates(const RankPartitionRequest& req, int P) {
  const ProcessGrid g = req.grid;
  const std::int64_t t = req.tile, nb = req.block;
  auto blk = [&](std::int64_t tile) { return (tile * t) / nb; };
  const std::function<std::int64_t(std::int64_t)> by_row = [&](std::int64_t x) {
    return blk(x) % g.rows;
  };
  const std::function<std::int64_t(std::int64_t)> by_col = [&](std::int64_t x) {
    return blk(x) % g.cols;
  };
  // The process coordinate that owns a tile of op(A) along i and along k, and of op(B) along k
  // and j, with how many there are: the stored operand's rows go by process row, its columns by
  // process column, and a transposed operand's rows are op's columns.
  const bool ta = req.a_transposed, tb = req.b_transposed;
  const auto& a_i = ta ? by_col : by_row;
  const auto& a_k = ta ? by_row : by_col;
  const auto& b_k = tb ? by_col : by_row;
  const auto& b_j = tb ? by_row : by_col;
  const int n_ai = ta ? g.cols : g.rows, n_ak = ta ? g.rows : g.cols;
  const int n_bk = tb ? g.cols : g.rows, n_bj = tb ? g.rows : g.cols;
  const auto a_side = [&](bool col) { return std::string(col ? "column" : "row"); };
  // C's own order (rows by process row, columns by process column), inner by A's owner.
  const auto inner_by_a =
      grouped_order(req.k, t, [&](std::int64_t x) { return a_k(x) * n_bk + b_k(x); });
  TileOrder c_major{
      grouped_order(req.m, t, by_row), grouped_order(req.n, t, by_col), inner_by_a,
      "rows by process row, columns by process column, inner by A's owner " + a_side(!ta)};
  // A's own order: rows by A's owner along i (the same as C's unless A is transposed).
  TileOrder a_major = c_major;
  if (ta) {
    a_major.i = grouped_order(req.m, t, a_i);
    a_major.name = "rows by A's owner column, columns by process column, inner by A's owner row";
  }
  TileOrder b_major = c_major;
  b_major.k = grouped_order(req.k, t, [&](std::int64_t x) { return b_k(x) * n_ak + a_k(x); });
  b_major.name = "rows by process row, columns by process column, inner by B's owner " + a_side(tb);
  if (tb) {
    b_major.j = grouped_order(req.n, t, b_j);
    b_major.name = "rows by process row, columns by B's owner row, inner by B's owner column";
  }

  std::vector<Candidate> out;
  if (!req.automatic) {
    out.push_back({std::string(partition::to_string(req.algorithm)) + " in layout order", c_major,
                   partition_ranks(req.algorithm, req.discretization, req.speeds,
                                   {c_major.i.size(), c_major.j.size(), c_major.k.size()})});
    return out;
  }

  // Ranks by process row and by process column, and their speeds.
  std::vector<std::vector<int>> rows_of(std::size_t(g.rows)), cols_of(std::size_t(g.cols));
  for (int p = 0; p < g.rows; ++p)
    for (int q = 0; q < g.cols; ++q) {
      rows_of[std::size_t(p)].push_back(g.rank_of(p, q));
      cols_of[std::size_t(q)].push_back(g.rank_of(p, q));
    }
  auto speeds_of = [&](const std::vector<int>& ranks) {
    std::vector<double> w;
    for (int r : ranks) w.push_back(req.speeds[std::size_t(r)]);
    return w;
  };
  auto sums = [&](const std::vector<std::vector<int>>& groups) {
    std::vector<double> w;
    for (const auto& grp : groups) {
      const auto s = speeds_of(grp);
      w.push_back(std::accumulate(s.begin(), s.end(), 0.0));
    }
    return w;
  };
  // One structured candidate in both flavours: cuts on owner boundaries, cuts by speed.
  auto structured = [&](const std::string& name, const TileOrder& o, int outer_axis, int inner_axis,
                        const std::vector<std::vector<int>>& members,
                        const std::vector<std::int64_t>& owner_outer,
                        const std::vector<std::int64_t>& owner_inner) {
    const AxisOrder* axes[3] = {&o.i, &o.j, &o.k};
    std::vector<std::vector<std::int64_t>> owner_in(members.size(), owner_inner), speed_in;
    for (const auto& grp : members)
      speed_in.push_back(weighted_cuts(axes[inner_axis]->size(), speeds_of(grp)));
    out.push_back({name + ", owner cuts", o,
                   two_level(o, outer_axis, inner_axis, members, owner_outer, owner_in, P)});
    out.push_back({name + ", speed cuts", o,
                   two_level(o, outer_axis, inner_axis, members,
                             weighted_cuts(axes[outer_axis]->size(), sums(members)), speed_in, P)});
  };
  auto cuts = [](const AxisOrder& a, int groups,
                 const std::function<std::int64_t(std::int64_t)>& f) {
    return group_cuts(a, groups, [&](std::int64_t x) { return int(f(x)); });
  };
  const auto i_cuts = cuts(c_major.i, g.rows, by_row);
  const auto j_cuts = cuts(c_major.j, g.cols, by_col);
  // A-stationary: rank (p,q) takes the op(A) tiles it stores. Untransposed, the groups along i
  // are process rows and each row's ranks split k by process column; transposed, the groups
  // along i are process columns and each column's ranks split k by process row (B alike).
  structured("process grid (C stays)", c_major, 0, 1, rows_of, i_cuts, j_cuts);
  structured("A-stationary", a_major, 0, 2, ta ? cols_of : rows_of, cuts(a_major.i, n_ai, a_i),
             cuts(a_major.k, n_ak, a_k));
  structured("B-stationary", b_major, 1, 2, tb ? rows_of : cols_of, cuts(b_major.j, n_bj, b_j),
             cuts(b_major.k, n_bk, b_k));
  // 2.5D on the process grid: bands of c1 process rows by c2 process columns (owner cuts), the
  // inner dimension split among the c1*c2 ranks of a band by speed. c1 = c2 = 1 is the process
  // grid itself; larger c1*c2 trade A and B traffic for partial C, which pays at many ranks.
  // Each candidate holds a zone list per rank: at many ranks only the bands whose replication
  // c1*c2 is nearest to P^(1/3) (where 2.5D pays most) are built, within kCandidateRankZones.
  std::vector<std::pair<int, int>> bands;
  for (int c1 = 1; c1 <= g.rows; ++c1)
    for (int c2 = 1; c2 <= g.cols; ++c2)
      if (g.rows % c1 == 0 && g.cols % c2 == 0 && c1 * c2 > 1 && c1 * c2 <= c_major.k.size())
        bands.emplace_back(c1, c2);
  const double ideal = std::log(std::cbrt(double(P)));
  std::stable_sort(bands.begin(), bands.end(), [&](const auto& x, const auto& y) {
    return std::abs(std::log(double(x.first * x.second)) - ideal) <
           std::abs(std::log(double(y.first * y.second)) - ideal);
  });
  const double room = std::max(0.0, kCandidateRankZones / double(P) - double(out.size()) - 2);
  if (double(bands.size()) > room) bands.resize(std::size_t(room));
  std::sort(bands.begin(), bands.end());
  for (const auto& [c1, c2] : bands) {
    auto zones = std::vector<TileZone>(std::size_t(P));
    for (int a = 0; a < g.rows / c1; ++a)
      for (int b = 0; b < g.cols / c2; ++b) {
        std::vector<int> band;  // ranks of the band, k parts in this order
        for (int v = 0; v < c2; ++v)
          for (int u = 0; u < c1; ++u) band.push_back(g.rank_of(a * c1 + u, b * c2 + v));
        const auto kc = weighted_cuts(c_major.k.size(), speeds_of(band));
        for (std::size_t q = 0; q < band.size(); ++q) {
          const TileBox box{
              {i_cuts[std::size_t(a * c1)], j_cuts[std::size_t(b * c2)], kc[q]},
              {i_cuts[std::size_t((a + 1) * c1)], j_cuts[std::size_t((b + 1) * c2)], kc[q + 1]}};
          if (!box.empty()) zones[std::size_t(band[q])].push_back(box);
        }
      }
    out.push_back({"2.5D bands of " + std::to_string(c1) + "x" + std::to_string(c2) +
                       " process rows x columns",
                   c_major, std::move(zones)});
  }
  for (auto alg : {partition::Algorithm::nrrp3d, partition::Algorithm::grid}) try {
      out.push_back({std::string(partition::to_string(alg)) + " in layout order", c_major,
                     partition_ranks(alg, req.discretization, req.speeds,
                                     {c_major.i.size(), c_major.j.size(), c_major.k.size()})});
    } catch (const std::invalid_argument&) {
      // Too few tiles for this algorithm: the structured candidates remain.
    }
  return out;
}

std::vector<Candidate> aligned_candidates(const RankPartitionRequest& req, int P) {
  const TileOrder o = natural_order(req.m, req.n, req.k, req.tile);
  const std::array<std::int64_t, 3> ext{o.i.size(), o.j.size(), o.k.size()};
  std::vector<Candidate> out;
  if (!req.automatic) {
    out.push_back({std::string(partition::to_string(req.algorithm)), o,
                   partition_ranks(req.algorithm, req.discretization, req.speeds, ext)});
    return out;
  }
  // Every factorisation P = a b c (when each axis has enough tiles), ranks in row-major
  // (x, y, z) order, cut along i by the speed of each slab, j by column, l by rank.
  for (int a = 1; a <= P; ++a) {
    if (P % a || a > ext[0]) continue;
    for (int b = 1; b <= P / a; ++b) {
      if ((P / a) % b || b > ext[1]) continue;
      const int c = P / a / b;
      if (c > ext[2]) continue;
      auto rank = [&](int x, int y, int z) { return (x * b + y) * c + z; };
      std::vector<double> wx(std::size_t(a), 0.0);
      for (int x = 0; x < a; ++x)
        for (int y = 0; y < b; ++y)
          for (int z = 0; z < c; ++z) wx[std::size_t(x)] += req.speeds[std::size_t(rank(x, y, z))];
      const auto cx = weighted_cuts(ext[0], wx);
      auto zones = std::vector<TileZone>(std::size_t(P));
      for (int x = 0; x < a; ++x) {
        std::vector<double> wy(std::size_t(b), 0.0);
        for (int y = 0; y < b; ++y)
          for (int z = 0; z < c; ++z) wy[std::size_t(y)] += req.speeds[std::size_t(rank(x, y, z))];
        const auto cy = weighted_cuts(ext[1], wy);
        for (int y = 0; y < b; ++y) {
          std::vector<double> wz;
          for (int z = 0; z < c; ++z) wz.push_back(req.speeds[std::size_t(rank(x, y, z))]);
          const auto cz = weighted_cuts(ext[2], wz);
          for (int z = 0; z < c; ++z) {
            const TileBox box{
                {cx[std::size_t(x)], cy[std::size_t(y)], cz[std::size_t(z)]},
                {cx[std::size_t(x) + 1], cy[std::size_t(y) + 1], cz[std::size_t(z) + 1]}};
            if (!box.empty()) zones[std::size_t(rank(x, y, z))].push_back(box);
          }
        }
      }
      out.push_back(
          {"grid " + std::to_string(a) + "x" + std::to_string(b) + "x" + std::to_string(c), o,
           std::move(zones)});
    }
  }
  try {
    out.push_back(
        {"nrrp3d", o,
         partition_ranks(partition::Algorithm::nrrp3d, req.discretization, req.speeds, ext)});
  } catch (const std::invalid_argument&) {
    // Too few tiles for it: the grids remain.
  }
  return out;
}

// A candidate must give every working rank's speed some work and idle ranks none.
bool usable(const Candidate& c, const std::vector<double>& speeds) {
  for (std::size_t r = 0; r < speeds.size(); ++r) {
    double v = 0;
    for (const auto& b : c.zones[r]) v += b.volume();
    if ((speeds[r] > 0) != (v > 0)) return false;
  }
  return true;
}

}  // namespace

RankPartition choose_rank_partition(const RankPartitionRequest& req) {
  const int P = int(req.speeds.size());
  if (P == 0) throw std::invalid_argument("no ranks");
  for (std::size_t r = 0; r < req.speeds.size(); ++r)
    if (!std::isfinite(req.speeds[r]) || req.speeds[r] < 0)
      throw std::invalid_argument("rank " + std::to_string(r) + " has speed " +
                                  std::to_string(req.speeds[r]) +
                                  " (speeds must be finite and non-negative)");
  if (std::none_of(req.speeds.begin(), req.speeds.end(), [](double s) { return s > 0; }))
    throw std::invalid_argument("no rank has a positive speed: nobody would compute");

  // Per-process prefix counts outgrow the caches as ranks grow: each count is slower. A
  // block-cyclic model visits at least every process row for the three projections of each
  // rank's zone: when even that exceeds the time, nothing is built.
  const double slower = std::max(1.0, std::sqrt(double(P) / 1e4));
  {
    // Aligned: the start is placed by visiting every tile of every zone's projections, and the
    // model visits them again; a zone of v tiles projects onto at least 3 v^(2/3) of them (the
    // cube's), whatever algorithm cuts it. Building the zones costs less than these visits.
    double floor_s = 0;
    if (req.aligned) {
      const double tiles = double(ceil_div(req.m, req.tile)) * double(ceil_div(req.n, req.tile)) *
                           double(ceil_div(req.k, req.tile));
      const double total = std::accumulate(req.speeds.begin(), req.speeds.end(), 0.0);
      double visits = 0;
      for (double s : req.speeds)
        if (s > 0) visits += 3.0 * std::pow(std::max(1.0, tiles * s / total), 2.0 / 3.0);
      floor_s = 2.0 * visits * kSecondsPerTileCount * slower;
    } else {
      floor_s = 3.0 * double(P) * double(req.grid.rows) * kSecondsPerBlockCount * slower;
    }
    if (floor_s > kModelSeconds)
      throw TooCostly("modelling the traffic of any candidate for " + std::to_string(P) +
                      " ranks would take at least " + fmt::format("{:.0f}", floor_s) +
                      " s (at most " + fmt::format("{:.0f}", kModelSeconds) + " s)");
  }
  std::vector<Candidate> cands;
  if (req.aligned) {
    cands = aligned_candidates(req, P);
  } else {
    if (req.grid.size() != P) throw std::invalid_argument("process grid and ranks disagree");
    cands = block_cyclic_candidates(req, P);
  }

  RankPartition best;
  best.predicted_s = std::numeric_limits<double>::infinity();
  double modelled_s = 0;  // the estimated time of the traffic models made so far
  double best_received = std::numeric_limits<double>::infinity();
  double smallest_peak = std::numeric_limits<double>::infinity();
  std::string smallest_name;
  const Distribution bc = req.aligned
                              ? Distribution{}
                              : block_cyclic_distribution(req.m, req.n, req.k, req.block, req.grid,
                                                          req.a_transposed, req.b_transposed);
  const std::int64_t k_tiles = (req.k + req.tile - 1) / req.tile;
  for (auto& c : cands) {
    // Structured candidates that leave a working rank idle (or feed an idle one) are skipped;
    // a fixed algorithm is always taken.
    if (req.automatic && !req.allow_idle && !usable(c, req.speeds)) continue;
    Distribution d = req.aligned
                         ? aligned_distribution(c.zones, c.order, req.m, req.n, req.k, req.tile,
                                                req.a_transposed, req.b_transposed)
                         : bc;
    // Modelling each candidate's traffic is the costly part of choosing among many ranks:
    // candidates whose model would not fit in the time left are left out (and said so), and a
    // fixed choice that alone would not fit is refused before the work.
    const double seconds = model_traffic_cost(c.zones, c.order, d) *
                           (req.aligned ? kSecondsPerTileCount : kSecondsPerBlockCount) * slower;
    if (modelled_s + seconds > kModelSeconds) {
      if (!req.automatic)
        throw TooCostly("modelling the traffic of " + c.name + " for " + std::to_string(P) +
                        " ranks would take about " + fmt::format("{:.0f}", seconds) +
                        " s (at most " + fmt::format("{:.0f}", kModelSeconds) + " s)");
      best.skipped.push_back(c.name);
      continue;
    }
    modelled_s += seconds;
    auto traffic = model_traffic(c.zones, c.order, d);
    const double s = model_time(traffic, req.speeds, req.bandwidth_gbs, req.elem, req.latency_s);
    const auto sum = summarize(traffic, req.m, req.n, req.k);
    std::vector<double> peaks(static_cast<std::size_t>(P), 0.0);
    Streaming streaming = req.streaming;
    double peak = 0;
    bool fits = false;
    // The request's way first; then k streamed ever finer until the peak fits.
    for (;;) {
      for (int r = 0; r < P; ++r)
        peaks[std::size_t(r)] = predict_rank_memory(traffic[std::size_t(r)], d, r,
                                                    c.zones[std::size_t(r)], c.order, streaming)
                                    .total() *
                                double(req.elem);
      peak = *std::max_element(peaks.begin(), peaks.end());
      fits = req.memory_limit_bytes <= 0 || peak <= req.memory_limit_bytes;
      if (fits || (streaming.window == 1 && streaming.slabs >= k_tiles)) break;
      if (streaming.window != 1)
        streaming.window = 1;
      else
        streaming.slabs = int(std::min<std::int64_t>(2 * std::int64_t(streaming.slabs), k_tiles));
    }
    best.candidates.push_back({c.name, s, sum.received_max, sum.moved_max, peak, fits, streaming});
    if (peak < smallest_peak) smallest_peak = peak, smallest_name = c.name;
    // A candidate over the memory limit is scored and reported, never chosen.
    if (!fits) continue;
    // The model's time is an estimate, and measured speeds of alike ranks differ by a few
    // percent: within kTimeBand of the best, fewer bytes win (then the earlier candidate).
    const bool better =
        s < best.predicted_s * (1 - kTimeBand) ||
        (s <= best.predicted_s * (1 + kTimeBand) && sum.received_max < best_received);
    if (better) {
      best.name = c.name;
      best.order = c.order;
      best.zones = std::move(c.zones);
      best.dist = std::move(d);
      best.traffic = std::move(traffic);
      best.predicted_s = s;
      best_received = sum.received_max;
      best.peak_bytes = std::move(peaks);
      best.streaming = streaming;
    }
  }
  best.memory_limit_bytes = req.memory_limit_bytes;
  if (best.name.empty() && !best.candidates.empty() && req.memory_limit_bytes > 0)
    throw MemoryLimitTooSmall(
        fmt::format("every candidate's predicted peak exceeds the limit of {:.4g} MiB per rank; "
                    "the smallest, {:.4g} MiB ({}), would do",
                    req.memory_limit_bytes / 1048576.0, smallest_peak / 1048576.0, smallest_name),
        smallest_peak);
  if (best.name.empty() && !best.skipped.empty())
    throw TooCostly("modelling the traffic of every candidate for " + std::to_string(P) +
                    " ranks would take more than " + fmt::format("{:.0f}", kModelSeconds) + " s");
  if (best.name.empty()) throw std::invalid_argument(kNoCandidateFits);
  std::stable_sort(best.candidates.begin(), best.candidates.end(),
                   [](const RankCandidate& x, const RankCandidate& y) {
                     return x.predicted_s < y.predicted_s ||
                            (x.predicted_s == y.predicted_s && x.received_max < y.received_max);
                   });
  return best;
}

}  // namespace cuboid::dist
