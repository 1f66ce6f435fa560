// Repair (see repair.hpp): two or three neighbouring zones cut again as one region with the
// same counts, with the recursion's candidates and with cuts anchored on the zones' own boxes.
// Only tiles on the zones' shared boundaries change hands in effect.
#include "partition/stepped/repair.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <utility>

#include "partition/merge.hpp"
#include "partition/stepped/candidates.hpp"
#include "partition/stepped/staircase.hpp"

namespace cuboid::partition::stepped_detail {
namespace {

bool over_budget(std::size_t work) { return work > kRepairWork; }

bool touch(const TileBox& a, const TileBox& b) {
  int face = -1;
  for (int d = 0; d < 3; ++d) {
    const I lo = std::max(a.lo[d], b.lo[d]), hi = std::min(a.hi[d], b.hi[d]);
    if (lo > hi) return false;
    if (lo == hi) {
      if (face >= 0) return false;
      face = d;
    }
  }
  return face >= 0;
}

bool neighbours(const TileZone& a, const TileZone& b) {
  for (const TileBox& x : a)
    for (const TileBox& y : b)
      if (touch(x, y)) return true;
  return false;
}

std::pair<int, double> cost(const Region& a, const Region& b) {
  return {std::max(int(a.size()), int(b.size())), half_surface_of(a) + half_surface_of(b)};
}

// u' = (u + v) inside the box `ib`, made exact with one step in the layer next to any face of
// ib (inside ib when it holds too many): the zone keeps one box and gains a step on the face
// where it fits, instead of the face where the recursion put it.
void anchored_cuts(const Region& region, const TileBox& bb, const TileBox& ib, I want,
                   std::vector<std::pair<Region, Region>>& out) {
  const Region inner = compact(inside(region, ib));
  const I have = cells(inner);
  if (have == 0) return;
  const I m = want - have;
  const Region rest = subtract(region, inner);
  if (m == 0) {
    out.push_back({inner, rest});
    return;
  }
  for (int f = 0; f < 3; ++f)
    for (bool high : {false, true}) {
      I layer;
      if (m > 0) {
        layer = high ? ib.hi[f] : ib.lo[f] - 1;
        if (layer < bb.lo[f] || layer >= bb.hi[f]) continue;
      } else {
        layer = high ? ib.hi[f] - 1 : ib.lo[f];
      }
      TileBox window = ib;
      window.lo[f] = layer;
      window.hi[f] = layer + 1;
      const Region& src = m > 0 ? rest : inner;
      if (cells(inside(src, window)) < std::abs(m)) continue;
      for (const Orientation& o : orientations(f)) {
        const Region step = staircase(src, f, layer, window, std::abs(m), o);
        if (m > 0) {
          out.push_back({join(inner, step), subtract(rest, step, f)});
        } else {
          out.push_back({subtract(inner, step, f), join(rest, step)});
        }
      }
    }
}

// Exact cuts of u + v into (u', v'), u' with u's count: u' (or v') as a corner box shaped like
// the zone's bounds, or a plane with a step along each axis; with `anchored`, also each box of
// u (or v) as it is and with one face moved to the count, made exact by anchored_cuts.
void pair_cuts(const TileZone& u, const TileZone& v, bool anchored,
               std::vector<std::pair<Region, Region>>& out, I count = -1) {
  const I want = count >= 0 ? count : cells(u);
  Task t;
  t.region = join(u, v);
  t.target = cells(t.region);
  const TileBox bb = bounds(t.region);
  auto take = [&](Option& o, bool flip) {
    out.push_back(flip ? std::make_pair(std::move(o.second.region), std::move(o.first.region))
                       : std::make_pair(std::move(o.first.region), std::move(o.second.region)));
  };
  std::vector<Option> opts;
  for (bool flip : {false, true}) {
    Source::Corner c;
    c.inner.target = flip ? t.target - want : want;
    c.dominant.target = t.target - c.inner.target;
    c.dominant.proc = 0;
    const TileBox shape = bounds(flip ? v : u);
    for (int d = 0; d < 3; ++d) c.ideal[d] = double(shape.extent(d));
    opts.clear();
    corner_options(c, t, bb, Effort::wide, opts);
    for (Option& o : opts) take(o, flip);
  }
  for (int d = 0; d < 3; ++d)
    for (bool flip : {false, true}) {
      Source::Split s;
      s.axis = d;
      s.below.target = flip ? t.target - want : want;
      s.above.target = t.target - s.below.target;
      opts.clear();
      split_options(s, t, bb, Effort::wide, opts);
      for (Option& o : opts) take(o, flip);
    }
  if (!anchored) return;
  std::vector<std::pair<Region, Region>> cuts;
  for (bool flip : {false, true}) {
    const I w = flip ? t.target - want : want;
    std::vector<TileBox> boxes;
    for (const TileBox& b : flip ? v : u) {
      boxes.push_back(b);
      for (int f = 0; f < 3; ++f) {
        // The high face moved to where the box holds about w tiles of the union, then the low.
        TileBox up = b;
        up.hi[f] = bb.hi[f];
        const I c = last_cut(inside(t.region, up), f, b.lo[f], bb.hi[f], w);
        for (I x : {c, c + 1})
          if (x > b.lo[f] && x <= bb.hi[f]) {
            up.hi[f] = x;
            boxes.push_back(up);
          }
        TileBox down = b;
        down.lo[f] = bb.lo[f];
        const Region in = inside(t.region, down);
        const I e = last_cut(in, f, bb.lo[f], b.hi[f], cells(in) - w);
        for (I x : {e, e + 1})
          if (x >= bb.lo[f] && x < b.hi[f]) {
            down.lo[f] = x;
            boxes.push_back(down);
          }
      }
    }
    for (const TileBox& ib : boxes) {
      cuts.clear();
      anchored_cuts(t.region, bb, ib, w, cuts);
      for (auto& [a, b] : cuts)
        out.push_back(flip ? std::make_pair(std::move(b), std::move(a))
                           : std::make_pair(std::move(a), std::move(b)));
    }
  }
}

// A re-cut may trade a little surface for fewer boxes, never more than this share.
constexpr double kRepairSurfaceSlack = 1.02;

// The best exact re-cut of u + v (u keeps its count), or nothing better than now.
bool recut(TileZone& u, TileZone& v) {
  auto best = cost(u, v);
  const double surface_cap = kRepairSurfaceSlack * best.second;
  bool improved = false;
  std::vector<std::pair<Region, Region>> cuts;
  pair_cuts(u, v, false, cuts);
  for (auto& [nu, nv] : cuts) {
    const auto k = cost(nu, nv);
    if (k < best && k.second <= surface_cap) {
      best = k;
      u = std::move(nu);
      v = std::move(nv);
      improved = true;
    }
  }
  return improved;
}

// Re-cuts of two neighbouring zones allowed per processor: the repair's work stays
// proportional to the processors whatever the cuboid.
constexpr int kRepairRecutsPerProcessor = 2;

// Boxes of a zone once merged: the sweeps of fewest_boxes for five or six joined boxes (below,
// nothing to gain; above, too dear for every candidate).
int boxes_of(const Region& r) {
  if (r.size() <= 4 || r.size() > 6) return int(r.size());
  return int(fewest_boxes(r).size());
}

// The last resort, for the zones that the repair leaves above four boxes (their extra boxes are
// steps of several ancestor cuts on different faces, each shared with another neighbour, so no
// re-cut with one neighbour removes them). Their surfaces may grow by this share of the zones
// involved (a zone of five boxes costs more than the surface: one GEMM per box)...
constexpr double kChainSurfaceSlack = 1.2;
// ...in this many rounds, and a chain's second re-cut starts from this many distinct first ones
// (the first re-cuts that leave both zones alike are tried once: several orientations of a step
// often give the same cut).
constexpr int kChainRounds = 4;
constexpr std::size_t kChainFirstCuts = 64;
// The most boxes a first re-cut may leave the neighbour with, for the second to bring down.
constexpr int kChainMiddleBoxes = 7;

// Of the cuts that give p its count from the union of p, q and r, the triple pass completes at
// most this many (the least surface first).
constexpr std::size_t kTripleFirstCuts = 16;

}  // namespace

void repair(std::vector<TileZone>& zones) {
  std::size_t active = 0;
  for (const TileZone& z : zones) active += !z.empty();
  long budget = long(kRepairRecutsPerProcessor * active);
  for (int round = 0; round < 2 && budget > 0; ++round) {
    bool changed = false;
    for (std::size_t p = 0; p < zones.size(); ++p) {
      if (zones[p].size() <= 4) continue;
      for (std::size_t q = 0; q < zones.size() && zones[p].size() > 4 && budget > 0; ++q) {
        if (q == p || zones[q].empty() || !neighbours(zones[p], zones[q])) continue;
        --budget;
        changed = recut(zones[p], zones[q]) || changed;
      }
    }
    if (!changed) break;
  }
}

// A zone p above four boxes is re-cut with a neighbour q (anchored cuts too) so that both
// have at most four; failing that, a chain: p with q leaving q above four, then q with one of
// its neighbours r, leaving all three at four or fewer (tiles move p -> q -> r in effect). The
// least total surface wins.
void repair_chains(std::vector<TileZone>& zones, std::size_t& work) {
  struct First {
    std::size_t q;
    Region u, v;
    double growth;  // of the surfaces of p and q
    int v_boxes;
  };
  std::vector<std::pair<Region, Region>> cuts;
  for (int round = 0; round < kChainRounds; ++round) {
    bool changed = false;
    for (std::size_t p = 0; p < zones.size(); ++p) {
      if (zones[p].size() <= 4) continue;
      const double hp = half_surface_of(zones[p]);
      std::vector<First> firsts;
      double best = std::numeric_limits<double>::infinity();
      First pair{};
      for (std::size_t q = 0; q < zones.size(); ++q) {
        if (q == p || zones[q].empty() || !neighbours(zones[p], zones[q])) continue;
        const double before = hp + half_surface_of(zones[q]);
        cuts.clear();
        if (over_budget(work)) return;
        pair_cuts(zones[p], zones[q], true, cuts);
        work += cuts.size() * (zones[p].size() + zones[q].size());
        for (auto& [a, b] : cuts) {
          if (boxes_of(a) > 4) continue;
          const double hs = half_surface_of(a) + half_surface_of(b);
          if (hs > kChainSurfaceSlack * before) continue;
          const int vb = boxes_of(b);
          if (vb <= 4 && hs - before < best) {
            best = hs - before;
            pair = {q, std::move(a), std::move(b), hs - before, vb};
          } else if (vb > 4 && vb <= kChainMiddleBoxes) {
            firsts.push_back(
                {q, merge_boxes(std::move(a)), merge_boxes(std::move(b)), hs - before, vb});
          }
        }
      }
      if (best < std::numeric_limits<double>::infinity()) {
        zones[p] = fewest_boxes(std::move(pair.u));
        zones[pair.q] = fewest_boxes(std::move(pair.v));
        changed = true;
        continue;
      }
      std::stable_sort(firsts.begin(), firsts.end(), [](const First& a, const First& b) {
        return std::make_pair(a.v_boxes, a.growth) < std::make_pair(b.v_boxes, b.growth);
      });
      {
        std::vector<First> unique;
        for (First& f : firsts) {
          bool seen = false;
          for (const First& g : unique)
            if (g.q == f.q && g.u == f.u) {
              seen = true;
              break;
            }
          if (!seen) unique.push_back(std::move(f));
        }
        firsts.swap(unique);
      }
      if (firsts.size() > kChainFirstCuts) firsts.resize(kChainFirstCuts);
      std::size_t chosen = 0, third = 0;
      Region v2, w2;
      for (std::size_t i = 0; i < firsts.size(); ++i) {
        const First& f = firsts[i];
        for (std::size_t r = 0; r < zones.size(); ++r) {
          if (r == p || r == f.q || zones[r].empty() || !neighbours(f.v, zones[r])) continue;
          const double hr = half_surface_of(zones[r]);
          const double before = hp + half_surface_of(zones[f.q]) + hr;
          cuts.clear();
          if (over_budget(work)) return;
          pair_cuts(f.v, zones[r], true, cuts);
          work += cuts.size() * (f.v.size() + zones[r].size());
          for (auto& [a, b] : cuts) {
            if (boxes_of(a) > 4 || boxes_of(b) > 4) continue;
            const double growth =
                f.growth + half_surface_of(a) + half_surface_of(b) - half_surface_of(f.v) - hr;
            if (before + growth > kChainSurfaceSlack * before || growth >= best) continue;
            best = growth;
            chosen = i;
            third = r;
            v2 = std::move(a);
            w2 = std::move(b);
          }
        }
      }
      if (best < std::numeric_limits<double>::infinity()) {
        zones[p] = fewest_boxes(std::move(firsts[chosen].u));
        zones[firsts[chosen].q] = fewest_boxes(std::move(v2));
        zones[third] = fewest_boxes(std::move(w2));
        changed = true;
      }
    }
    if (!changed) break;
  }
}

// The last resort's third pass, for a zone p still above four boxes: p and two of its
// neighbours q and r cut again as one region. p takes its count from the union of the three
// (anchored cuts against q and r together: tiles may come from both), then what is left is cut
// between q and r with q's count; all three must end at four boxes or fewer, and their surfaces
// within the chains' allowance. The least surface wins.
void repair_triples(std::vector<TileZone>& zones, std::size_t& work) {
  std::vector<std::pair<Region, Region>> cuts, seconds;
  for (std::size_t p = 0; p < zones.size(); ++p) {
    if (zones[p].size() <= 4) continue;
    std::vector<std::size_t> near;
    for (std::size_t q = 0; q < zones.size(); ++q)
      if (q != p && !zones[q].empty() && neighbours(zones[p], zones[q])) near.push_back(q);
    const double hp = half_surface_of(zones[p]);
    double best = std::numeric_limits<double>::infinity();
    std::size_t bq = 0, br = 0;
    Region bu, bv, bw;
    for (std::size_t i = 0; i < near.size(); ++i)
      for (std::size_t j = i + 1; j < near.size(); ++j) {
        const std::size_t q = near[i], r = near[j];
        const double before = hp + half_surface_of(zones[q]) + half_surface_of(zones[r]);
        const Region qr = join(zones[q], zones[r]);
        cuts.clear();
        if (over_budget(work)) return;
        pair_cuts(zones[p], qr, true, cuts);
        work += cuts.size() * (zones[p].size() + qr.size());
        struct First {
          Region u, rest;
          double hs;
        };
        std::vector<First> firsts;
        for (auto& [a, b] : cuts) {
          if (boxes_of(a) > 4) continue;
          Region u = merge_boxes(std::move(a));
          bool seen = false;
          for (const First& f : firsts)
            if (f.u == u) {
              seen = true;
              break;
            }
          if (!seen) {
            const double hs = half_surface_of(u);
            firsts.push_back({std::move(u), std::move(b), hs});
          }
        }
        std::stable_sort(firsts.begin(), firsts.end(),
                         [](const First& a, const First& b) { return a.hs < b.hs; });
        if (firsts.size() > kTripleFirstCuts) firsts.resize(kTripleFirstCuts);
        for (const First& f : firsts) {
          if (f.hs >= kChainSurfaceSlack * before) break;
          // What is left, split with q's and r's old tiles as the hints.
          Region hq;
          for (const TileBox& b : zones[q])
            for (const TileBox& x : inside(f.rest, b)) hq.push_back(x);
          hq = compact(std::move(hq));
          const Region hr = subtract(f.rest, hq);
          seconds.clear();
          if (over_budget(work)) return;
          pair_cuts(hq, hr, true, seconds, cells(zones[q]));
          work += seconds.size() * (hq.size() + hr.size());
          for (auto& [a, b] : seconds) {
            if (boxes_of(a) > 4 || boxes_of(b) > 4) continue;
            const double hs = f.hs + half_surface_of(a) + half_surface_of(b);
            if (hs > kChainSurfaceSlack * before || hs - before >= best) continue;
            best = hs - before;
            bq = q;
            br = r;
            bu = f.u;
            bv = std::move(a);
            bw = std::move(b);
          }
        }
      }
    if (best < std::numeric_limits<double>::infinity()) {
      zones[p] = fewest_boxes(std::move(bu));
      zones[bq] = fewest_boxes(std::move(bv));
      zones[br] = fewest_boxes(std::move(bw));
    }
  }
}

void fewest(std::vector<TileZone>& zones) {
  for (TileZone& z : zones)
    if (z.size() > 4) z = fewest_boxes(std::move(z));
}

}  // namespace cuboid::partition::stepped_detail
