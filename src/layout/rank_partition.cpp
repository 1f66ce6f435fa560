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

namespace cuboid::layout {

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

// The candidates for block-cyclic operands: built in steps that share who owns what.
class BlockCyclicCandidates {
 public:
  using Owner = std::function<std::int64_t(std::int64_t)>;

  BlockCyclicCandidates(const RankPartitionRequest& req, int P)
      : req_(req), g_(req.grid), P_(P), ta_(req.a_transposed), tb_(req.b_transposed) {
    // Who owns a tile along an axis: its block's distance from the matrix's first block, dealt
    // over the process rows (columns).
    auto rows_from = [this](int first) {
      return Owner([this, first](std::int64_t x) { return (block(x) + first) % g_.rows; });
    };
    auto cols_from = [this](int first) {
      return Owner([this, first](std::int64_t x) { return (block(x) + first) % g_.cols; });
    };
    const FirstProcesses& f = req.first;
    c_i_ = rows_from(f.c.row), c_j_ = cols_from(f.c.col);
    a_i_ = ta_ ? cols_from(f.a.col) : rows_from(f.a.row);
    a_k_ = ta_ ? rows_from(f.a.row) : cols_from(f.a.col);
    b_k_ = tb_ ? cols_from(f.b.col) : rows_from(f.b.row);
    b_j_ = tb_ ? rows_from(f.b.row) : cols_from(f.b.col);
    a_follows_c_ = !ta_ && f.a.row == f.c.row;
    b_follows_c_ = !tb_ && f.b.col == f.c.col;
    make_orders();
    for (int p = 0; p < g_.rows; ++p)
      for (int q = 0; q < g_.cols; ++q) {
        rows_of_[std::size_t(p)].push_back(g_.rank_of(p, q));
        cols_of_[std::size_t(q)].push_back(g_.rank_of(p, q));
      }
  }

  std::vector<Candidate> build() {
    if (!req_.automatic) {
      out_.push_back(
          {std::string(partition::to_string(req_.algorithm)) + " in layout order", c_major_,
           partition_ranks(req_.algorithm, req_.discretization, req_.speeds, extents(c_major_))});
      return std::move(out_);
    }
    add_stationary();
    add_bands();
    for (auto alg : {partition::Algorithm::nrrp3d, partition::Algorithm::grid}) try {
        out_.push_back({std::string(partition::to_string(alg)) + " in layout order", c_major_,
                        partition_ranks(alg, req_.discretization, req_.speeds, extents(c_major_))});
      } catch (const std::invalid_argument&) {
        // Too few tiles for this algorithm: the structured candidates remain.
      }
    return std::move(out_);
  }

 private:
  std::int64_t block(std::int64_t tile) const { return (tile * req_.tile) / req_.block; }
  static std::array<std::int64_t, 3> extents(const TileOrder& o) {
    return {o.i.size(), o.j.size(), o.k.size()};
  }
  // How many process coordinates own op(A)'s tiles along i and k, and op(B)'s along k and j (the
  // owners are a_i_ ... b_j_): the stored operand's rows go by process row, its columns by
  // process column, and a transposed operand's rows are op's columns.
  int n_ai() const { return ta_ ? g_.cols : g_.rows; }
  int n_ak() const { return ta_ ? g_.rows : g_.cols; }
  int n_bk() const { return tb_ ? g_.cols : g_.rows; }
  int n_bj() const { return tb_ ? g_.rows : g_.cols; }

  void make_orders() {
    const std::int64_t t = req_.tile;
    auto side = [](bool col) { return std::string(col ? "column" : "row"); };
    // C's own order (rows by process row, columns by process column), inner by A's owner.
    const auto inner_by_a =
        grouped_order(req_.k, t, [&](std::int64_t x) { return a_k_(x) * n_bk() + b_k_(x); });
    c_major_ = TileOrder{
        grouped_order(req_.m, t, c_i_), grouped_order(req_.n, t, c_j_), inner_by_a,
        "rows by process row, columns by process column, inner by A's owner " + side(!ta_)};
    // A's own order: rows by A's owner along i (the same as C's unless A is transposed or its
    // first block is on another process row than C's).
    a_major_ = c_major_;
    if (!a_follows_c_) {
      a_major_.i = grouped_order(req_.m, t, a_i_);
      a_major_.name = "rows by A's owner " + side(ta_) +
                      ", columns by process column, inner by A's owner " + side(!ta_);
    }
    b_major_ = c_major_;
    b_major_.k =
        grouped_order(req_.k, t, [&](std::int64_t x) { return b_k_(x) * n_ak() + a_k_(x); });
    b_major_.name =
        "rows by process row, columns by process column, inner by B's owner " + side(tb_);
    if (!b_follows_c_) {
      b_major_.j = grouped_order(req_.n, t, b_j_);
      b_major_.name = "rows by process row, columns by B's owner " + side(!tb_) +
                      ", inner by B's owner " + side(tb_);
    }
  }

  std::vector<double> speeds_of(const std::vector<int>& ranks) const {
    std::vector<double> w;
    for (int r : ranks) w.push_back(req_.speeds[std::size_t(r)]);
    return w;
  }
  std::vector<double> sums(const std::vector<std::vector<int>>& groups) const {
    std::vector<double> w;
    for (const auto& grp : groups) {
      const auto s = speeds_of(grp);
      w.push_back(std::accumulate(s.begin(), s.end(), 0.0));
    }
    return w;
  }
  static std::vector<std::int64_t> cuts(const AxisOrder& a, int groups, const Owner& f) {
    return group_cuts(a, groups, [&](std::int64_t x) { return int(f(x)); });
  }

  // One structured candidate in both flavours: cuts on owner boundaries, cuts by speed.
  void structured(const std::string& name, const TileOrder& o, int outer_axis, int inner_axis,
                  const std::vector<std::vector<int>>& members,
                  const std::vector<std::int64_t>& owner_outer,
                  const std::vector<std::int64_t>& owner_inner) {
    const AxisOrder* axes[3] = {&o.i, &o.j, &o.k};
    std::vector<std::vector<std::int64_t>> owner_in(members.size(), owner_inner), speed_in;
    for (const auto& grp : members)
      speed_in.push_back(weighted_cuts(axes[inner_axis]->size(), speeds_of(grp)));
    out_.push_back({name + ", owner cuts", o,
                    two_level(o, outer_axis, inner_axis, members, owner_outer, owner_in, P_)});
    out_.push_back(
        {name + ", speed cuts", o,
         two_level(o, outer_axis, inner_axis, members,
                   weighted_cuts(axes[outer_axis]->size(), sums(members)), speed_in, P_)});
  }

  // The process grid, A-stationary and B-stationary. A-stationary: rank (p,q) takes the op(A)
  // tiles it stores. Untransposed, the groups along i are process rows and each row's ranks split
  // k by process column; transposed, the groups along i are process columns and each column's
  // ranks split k by process row (B alike).
  void add_stationary() {
    i_cuts_ = cuts(c_major_.i, g_.rows, c_i_);
    j_cuts_ = cuts(c_major_.j, g_.cols, c_j_);
    structured("process grid (C stays)", c_major_, 0, 1, rows_of_, i_cuts_, j_cuts_);
    structured("A-stationary", a_major_, 0, 2, ta_ ? cols_of_ : rows_of_,
               cuts(a_major_.i, n_ai(), a_i_), cuts(a_major_.k, n_ak(), a_k_));
    structured("B-stationary", b_major_, 1, 2, tb_ ? rows_of_ : cols_of_,
               cuts(b_major_.j, n_bj(), b_j_), cuts(b_major_.k, n_bk(), b_k_));
  }

  // 2.5D on the process grid: bands of c1 process rows by c2 process columns (owner cuts), the
  // inner dimension split among the c1*c2 ranks of a band by speed. c1 = c2 = 1 is the process
  // grid itself; larger c1*c2 trade A and B traffic for partial C, which pays at many ranks.
  // Each candidate holds a zone list per rank: at many ranks only the bands whose replication
  // c1*c2 is nearest to P^(1/3) (where 2.5D pays most) are built, within kCandidateRankZones.
  void add_bands() {
    std::vector<std::pair<int, int>> bands;
    for (int c1 = 1; c1 <= g_.rows; ++c1)
      for (int c2 = 1; c2 <= g_.cols; ++c2)
        if (g_.rows % c1 == 0 && g_.cols % c2 == 0 && c1 * c2 > 1 && c1 * c2 <= c_major_.k.size())
          bands.emplace_back(c1, c2);
    const double ideal = std::log(std::cbrt(double(P_)));
    std::stable_sort(bands.begin(), bands.end(), [&](const auto& x, const auto& y) {
      return std::abs(std::log(double(x.first * x.second)) - ideal) <
             std::abs(std::log(double(y.first * y.second)) - ideal);
    });
    const double room = std::max(0.0, kCandidateRankZones / double(P_) - double(out_.size()) - 2);
    if (double(bands.size()) > room) bands.resize(std::size_t(room));
    std::sort(bands.begin(), bands.end());
    for (const auto& [c1, c2] : bands)
      out_.push_back({"2.5D bands of " + std::to_string(c1) + "x" + std::to_string(c2) +
                          " process rows x columns",
                      c_major_, band_zones(c1, c2)});
  }

  std::vector<TileZone> band_zones(int c1, int c2) const {
    auto zones = std::vector<TileZone>(std::size_t(P_));
    for (int a = 0; a < g_.rows / c1; ++a)
      for (int b = 0; b < g_.cols / c2; ++b) {
        std::vector<int> band;  // ranks of the band, k parts in this order
        for (int v = 0; v < c2; ++v)
          for (int u = 0; u < c1; ++u) band.push_back(g_.rank_of(a * c1 + u, b * c2 + v));
        const auto kc = weighted_cuts(c_major_.k.size(), speeds_of(band));
        for (std::size_t q = 0; q < band.size(); ++q) {
          const TileBox box{
              {i_cuts_[std::size_t(a * c1)], j_cuts_[std::size_t(b * c2)], kc[q]},
              {i_cuts_[std::size_t((a + 1) * c1)], j_cuts_[std::size_t((b + 1) * c2)], kc[q + 1]}};
          if (!box.empty()) zones[std::size_t(band[q])].push_back(box);
        }
      }
    return zones;
  }

  const RankPartitionRequest& req_;
  const ProcessGrid g_;
  const int P_;
  const bool ta_, tb_;
  // The process coordinate owning a tile along an axis: C's along i and j, op(A)'s along i and k,
  // op(B)'s along k and j.
  Owner c_i_, c_j_, a_i_, a_k_, b_k_, b_j_;
  bool a_follows_c_ = true, b_follows_c_ = true;  // op(A)'s rows owned as C's (op(B)'s columns)
  TileOrder c_major_, a_major_, b_major_;
  std::vector<std::vector<int>> rows_of_{std::size_t(g_.rows)}, cols_of_{std::size_t(g_.cols)};
  std::vector<std::int64_t> i_cuts_, j_cuts_;
  std::vector<Candidate> out_;
};

std::vector<Candidate> block_cyclic_candidates(const RankPartitionRequest& req, int P) {
  return BlockCyclicCandidates(req, P).build();
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

namespace {

void check_speeds(const std::vector<double>& speeds) {
  if (speeds.empty()) throw std::invalid_argument("no ranks");
  for (std::size_t r = 0; r < speeds.size(); ++r)
    if (!std::isfinite(speeds[r]) || speeds[r] < 0)
      throw std::invalid_argument("rank " + std::to_string(r) + " has speed " +
                                  std::to_string(speeds[r]) +
                                  " (speeds must be finite and non-negative)");
  if (std::none_of(speeds.begin(), speeds.end(), [](double s) { return s > 0; }))
    throw std::invalid_argument("no rank has a positive speed: nobody would compute");
}

// Refuses, before any candidate is built, a request whose cheapest traffic model would already
// take longer than kModelSeconds. `slower`: per-process prefix counts outgrow the caches as
// ranks grow, and each count is slower.
void guard_model_cost(const RankPartitionRequest& req, int P, double slower) {
  double floor_s = 0;
  if (req.aligned) {
    // Aligned: the start is placed by visiting every tile of every zone's projections, and the
    // model visits them again; a zone of v tiles projects onto at least 3 v^(2/3) of them (the
    // cube's), whatever algorithm cuts it. Building the zones costs less than these visits.
    const double tiles = double(ceil_div(req.m, req.tile)) * double(ceil_div(req.n, req.tile)) *
                         double(ceil_div(req.k, req.tile));
    const double total = std::accumulate(req.speeds.begin(), req.speeds.end(), 0.0);
    double visits = 0;
    for (double s : req.speeds)
      if (s > 0) visits += 3.0 * std::pow(std::max(1.0, tiles * s / total), 2.0 / 3.0);
    floor_s = 2.0 * visits * kSecondsPerTileCount * slower;
  } else {
    // A block-cyclic model visits at least every process row for the three projections of each
    // rank's zone.
    floor_s = 3.0 * double(P) * double(req.grid.rows) * kSecondsPerBlockCount * slower;
  }
  if (floor_s > kModelSeconds)
    throw TooCostly("modelling the traffic of any candidate for " + std::to_string(P) +
                    " ranks would take at least " + fmt::format("{:.0f}", floor_s) +
                    " s (at most " + fmt::format("{:.0f}", kModelSeconds) + " s)");
}

// Each rank's predicted peak with the request's streaming first, then k streamed ever finer
// until the largest fits the limit (or cannot be streamed finer).
struct PeakFit {
  std::vector<double> peaks;
  double peak = 0;
  bool fits = false;
  Streaming streaming;
};
PeakFit fit_peak(const RankPartitionRequest& req, const Candidate& c, const Distribution& d,
                 const std::vector<RankTraffic>& traffic) {
  const int P = int(req.speeds.size());
  const std::int64_t k_tiles = (req.k + req.tile - 1) / req.tile;
  PeakFit f{std::vector<double>(std::size_t(P), 0.0), 0, false, req.streaming};
  for (;;) {
    for (int r = 0; r < P; ++r)
      f.peaks[std::size_t(r)] = predict_rank_memory(traffic[std::size_t(r)], d, r,
                                                    c.zones[std::size_t(r)], c.order, f.streaming)
                                    .total() *
                                double(req.elem);
    f.peak = *std::max_element(f.peaks.begin(), f.peaks.end());
    f.fits = req.memory_limit_bytes <= 0 || f.peak <= req.memory_limit_bytes;
    if (f.fits || (f.streaming.window == 1 && f.streaming.slabs >= k_tiles)) return f;
    if (f.streaming.window != 1)
      f.streaming.window = 1;
    else
      f.streaming.slabs = int(std::min<std::int64_t>(2 * std::int64_t(f.streaming.slabs), k_tiles));
  }
}

// Why nothing was chosen, as the error the caller can act on.
[[noreturn]] void refuse_none_chosen(const RankPartitionRequest& req, const RankPartition& best,
                                     double smallest_peak, const std::string& smallest_name) {
  if (!best.candidates.empty() && req.memory_limit_bytes > 0)
    throw MemoryLimitTooSmall(
        fmt::format("every candidate's predicted peak exceeds the limit of {:.4g} MiB per rank; "
                    "the smallest, {:.4g} MiB ({}), would do",
                    req.memory_limit_bytes / 1048576.0, smallest_peak / 1048576.0, smallest_name),
        smallest_peak);
  if (!best.skipped.empty())
    throw TooCostly("modelling the traffic of every candidate for " +
                    std::to_string(req.speeds.size()) + " ranks would take more than " +
                    fmt::format("{:.0f}", kModelSeconds) + " s");
  throw NoCandidateFits(kNoCandidateFits);
}

}  // namespace

RankPartition choose_rank_partition(const RankPartitionRequest& req) {
  check_speeds(req.speeds);
  const int P = int(req.speeds.size());
  const double slower = std::max(1.0, std::sqrt(double(P) / 1e4));
  guard_model_cost(req, P, slower);
  if (!req.aligned && req.grid.size() != P)
    throw std::invalid_argument("process grid and ranks disagree");
  std::vector<Candidate> cands =
      req.aligned ? aligned_candidates(req, P) : block_cyclic_candidates(req, P);

  RankPartition best;
  best.predicted_s = std::numeric_limits<double>::infinity();
  double modelled_s = 0;  // the estimated time of the traffic models made so far
  double best_received = std::numeric_limits<double>::infinity();
  double smallest_peak = std::numeric_limits<double>::infinity();
  std::string smallest_name;
  const Distribution bc =
      req.aligned ? Distribution{}
                  : block_cyclic_distribution(req.m, req.n, req.k, req.block, req.grid,
                                              req.a_transposed, req.b_transposed, req.first);
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
    PeakFit f = fit_peak(req, c, d, traffic);
    best.candidates.push_back(
        {c.name, s, sum.received_max, sum.moved_max, f.peak, f.fits, f.streaming});
    if (f.peak < smallest_peak) smallest_peak = f.peak, smallest_name = c.name;
    // A candidate over the memory limit is scored and reported, never chosen.
    if (!f.fits) continue;
    // The model's time is an estimate, and measured speeds of alike ranks differ by a few
    // percent: within kTimeBand of the best, fewer bytes win (then the earlier candidate).
    const bool better =
        s < best.predicted_s * (1 - kTimeBand) ||
        (s <= best.predicted_s * (1 + kTimeBand) && sum.received_max < best_received);
    if (!better) continue;
    best.name = c.name;
    best.order = c.order;
    best.zones = std::move(c.zones);
    best.dist = std::move(d);
    best.traffic = std::move(traffic);
    best.predicted_s = s;
    best_received = sum.received_max;
    best.peak_bytes = std::move(f.peaks);
    best.streaming = f.streaming;
  }
  best.memory_limit_bytes = req.memory_limit_bytes;
  if (best.name.empty()) refuse_none_chosen(req, best, smallest_peak, smallest_name);
  std::stable_sort(best.candidates.begin(), best.candidates.end(),
                   [](const RankCandidate& x, const RankCandidate& y) {
                     return x.predicted_s < y.predicted_s ||
                            (x.predicted_s == y.predicted_s && x.received_max < y.received_max);
                   });
  return best;
}

}  // namespace cuboid::layout
