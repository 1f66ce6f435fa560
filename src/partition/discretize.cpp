// From continuous zones to tiles: ROUNDED and PRECISE (Eyraud-Dubois and Lambert, ICPP 2018,
// section 3.3 and its Algorithm 1, extended from 8 to 26 neighbours in 3D).
//
// PRECISE never touches the interior of inner boxes: only the cells that straddle a continuous
// face (the "boundary" cells) are visited, kept in an open-addressing hash table; the owner of
// a neighbouring cell that is not a boundary cell is found by point location among the inner
// boxes (a bounding-volume hierarchy). Work and memory are proportional to the area of the cuts.
//
// Partitions that never split l (2D algorithms) are discretised on the C face only, with C
// tiles as the units, so that every zone still spans [0,K): the exact counts then apply to C
// tiles (each worth K tasks).
#include "partition/discretize.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>

#include "partition/geometry.hpp"
#include "partition/merge.hpp"

namespace cuboid::partition {
namespace {

// Continuous cuts that should fall on a tile edge come out of floating-point arithmetic a few
// ulps off; snapping keeps an integer-aligned box from losing a whole layer of its inner box.
double snap(double x) {
  const double r = std::nearbyint(x);
  return std::abs(x - r) <= 1e-10 * std::max(1.0, std::abs(x)) ? r : x;
}

std::int64_t clamp_to(double x, std::int64_t hi) {
  return std::clamp<std::int64_t>(std::int64_t(x), 0, hi);
}

struct Item {
  Box box;  // continuous, snapped
  int owner;
};

// Open-addressing hash table from cell key to owner (-1: not yet assigned).
class CellTable {
 public:
  explicit CellTable(std::size_t expected) {
    std::size_t cap = 16;
    while (cap < 2 * expected) cap <<= 1;
    keys_.assign(cap, kEmpty);
    values_.assign(cap, -1);
    mask_ = cap - 1;
  }
  // Inserts with value -1 if absent; returns true when inserted.
  bool insert(std::uint64_t key) {
    std::size_t s = slot(key);
    while (keys_[s] != kEmpty) {
      if (keys_[s] == key) return false;
      s = (s + 1) & mask_;
    }
    keys_[s] = key;
    return true;
  }
  // Pointer to the value, or nullptr when absent.
  int* find(std::uint64_t key) {
    std::size_t s = slot(key);
    while (keys_[s] != kEmpty) {
      if (keys_[s] == key) return &values_[s];
      s = (s + 1) & mask_;
    }
    return nullptr;
  }

 private:
  static constexpr std::uint64_t kEmpty = ~std::uint64_t(0);
  std::size_t slot(std::uint64_t key) const {
    std::uint64_t z = key + 0x9e3779b97f4a7c15ULL;  // splitmix64 finaliser
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return std::size_t(z ^ (z >> 31)) & mask_;
  }
  std::vector<std::uint64_t> keys_;
  std::vector<int> values_;
  std::size_t mask_ = 0;
};

// Point location among disjoint integer boxes.
class BoxLocator {
 public:
  BoxLocator(const std::vector<TileBox>& boxes, const std::vector<int>& owners)
      : boxes_(boxes), owners_(owners) {
    if (boxes_.empty()) return;
    std::vector<int> ids(boxes_.size());
    for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = int(i);
    build(ids, 0, ids.size());
    leaf_ids_ = std::move(ids);
  }
  // Owner of the box containing cell c, or -1.
  int owner(const std::array<std::int64_t, 3>& c) {
    if (last_ >= 0 && contains(boxes_[last_], c)) return owners_[last_];
    if (nodes_.empty()) return -1;
    stack_.clear();
    stack_.push_back(0);
    while (!stack_.empty()) {
      const Node& n = nodes_[stack_.back()];
      stack_.pop_back();
      if (!contains(n.bounds, c)) continue;
      if (n.left < 0) {
        for (std::size_t i = n.begin; i < n.end; ++i) {
          const int id = leaf_ids_[i];
          if (contains(boxes_[id], c)) {
            last_ = id;
            return owners_[id];
          }
        }
      } else {
        stack_.push_back(n.left);
        stack_.push_back(n.right);
      }
    }
    return -1;
  }

 private:
  struct Node {
    TileBox bounds;
    int left = -1, right = -1;
    std::size_t begin = 0, end = 0;
  };
  static bool contains(const TileBox& b, const std::array<std::int64_t, 3>& c) {
    return b.lo[0] <= c[0] && c[0] < b.hi[0] && b.lo[1] <= c[1] && c[1] < b.hi[1] &&
           b.lo[2] <= c[2] && c[2] < b.hi[2];
  }
  // Median split on box centres along the widest axis; depth is O(log n).
  int build(std::vector<int>& ids, std::size_t begin, std::size_t end) {
    Node node;
    node.begin = begin;
    node.end = end;
    node.bounds = boxes_[ids[begin]];
    for (std::size_t i = begin; i < end; ++i)
      for (int d = 0; d < 3; ++d) {
        node.bounds.lo[d] = std::min(node.bounds.lo[d], boxes_[ids[i]].lo[d]);
        node.bounds.hi[d] = std::max(node.bounds.hi[d], boxes_[ids[i]].hi[d]);
      }
    const int index = int(nodes_.size());
    nodes_.push_back(node);
    if (end - begin > 4) {
      int axis = 0;
      for (int d = 1; d < 3; ++d)
        if (node.bounds.extent(d) > node.bounds.extent(axis)) axis = d;
      const std::size_t mid = begin + (end - begin) / 2;
      std::nth_element(ids.begin() + std::ptrdiff_t(begin), ids.begin() + std::ptrdiff_t(mid),
                       ids.begin() + std::ptrdiff_t(end), [&](int x, int y) {
                         return boxes_[x].lo[axis] + boxes_[x].hi[axis] <
                                boxes_[y].lo[axis] + boxes_[y].hi[axis];
                       });
      const int l = build(ids, begin, mid);
      const int r = build(ids, mid, end);
      nodes_[index].left = l;
      nodes_[index].right = r;
    }
    return index;
  }
  const std::vector<TileBox>& boxes_;
  const std::vector<int>& owners_;
  std::vector<Node> nodes_;
  std::vector<int> leaf_ids_;
  std::vector<int> stack_;
  int last_ = -1;
};

// Appends the boxes of `outer` minus `inner` (inner inside outer, possibly empty).
void complement(const TileBox& outer, const TileBox& inner, std::vector<TileBox>& out) {
  if (inner.empty()) {
    if (!outer.empty()) out.push_back(outer);
    return;
  }
  TileBox rest = outer;
  for (int d = 0; d < 3; ++d) {
    TileBox below = rest, above = rest;
    below.hi[d] = inner.lo[d];
    above.lo[d] = inner.hi[d];
    if (!below.empty()) out.push_back(below);
    if (!above.empty()) out.push_back(above);
    rest.lo[d] = inner.lo[d];
    rest.hi[d] = inner.hi[d];
  }
}

std::vector<TileZone> rounded(const std::vector<Zone>& zones, const TileExtent& tiles) {
  // Rounding is monotone and every cut coordinate is shared by the boxes on both of its sides,
  // so the rounded boxes still tile the cuboid exactly (a cell belongs to the box whose
  // continuous version holds its centre, with faces taken as (lo, hi]).
  std::vector<TileZone> out(zones.size());
  for (std::size_t p = 0; p < zones.size(); ++p) {
    TileZone z;
    for (const Box& b : zones[p]) {
      TileBox t;
      for (int d = 0; d < 3; ++d) {
        t.lo[d] = clamp_to(std::floor(snap(b.lo[d]) + 0.5), tiles[d]);
        t.hi[d] = clamp_to(std::floor(snap(b.hi[d]) + 0.5), tiles[d]);
      }
      if (!t.empty()) z.push_back(t);
    }
    out[p] = merge_boxes(std::move(z));
  }
  return out;
}

// The zones' boxes with snapped faces, each with its zone; in flat mode l is one cell deep.
std::vector<Item> snapped_items(const std::vector<Zone>& zones, bool flat) {
  std::vector<Item> items;
  for (std::size_t z = 0; z < zones.size(); ++z)
    for (const Box& b : zones[z]) {
      Item it{b, int(z)};
      for (int d = 0; d < 3; ++d) {
        it.box.lo[d] = snap(b.lo[d]);
        it.box.hi[d] = snap(b.hi[d]);
      }
      if (flat) {
        it.box.lo[2] = 0.0;
        it.box.hi[2] = 1.0;
      }
      if (!it.box.empty()) items.push_back(it);
    }
  return items;
}

// Wave 1: each box's inner box (the cells it holds whole), which its zone keeps, and outer box
// (the cells it touches). `remaining` loses every zone's inner cells.
void inner_and_outer(const std::vector<Item>& items, const TileExtent& ext,
                     std::vector<TileBox>& inner, std::vector<TileBox>& outer,
                     std::vector<std::int64_t>& remaining) {
  inner.assign(items.size(), TileBox{});
  outer.assign(items.size(), TileBox{});
  for (std::size_t i = 0; i < items.size(); ++i) {
    for (int d = 0; d < 3; ++d) {
      inner[i].lo[d] = clamp_to(std::ceil(items[i].box.lo[d]), ext[d]);
      inner[i].hi[d] = std::max(inner[i].lo[d], clamp_to(std::floor(items[i].box.hi[d]), ext[d]));
      outer[i].lo[d] = clamp_to(std::floor(items[i].box.lo[d]), ext[d]);
      outer[i].hi[d] = clamp_to(std::ceil(items[i].box.hi[d]), ext[d]);
    }
    remaining[items[i].owner] -= std::int64_t(inner[i].volume());
  }
}

// Inner boxes hold at most floor(v_p) tasks and n_p >= floor(v_p), so this only triggers on
// inputs whose volumes do not match the weights: peel layers off the largest inner box.
void peel_overfull(const std::vector<Item>& items, std::vector<TileBox>& inner,
                   std::vector<std::int64_t>& remaining) {
  for (std::size_t z = 0; z < remaining.size(); ++z) {
    while (remaining[z] < 0) {
      std::size_t big = items.size();
      for (std::size_t i = 0; i < items.size(); ++i)
        if (items[i].owner == int(z) && !inner[i].empty() &&
            (big == items.size() || inner[i].volume() > inner[big].volume()))
          big = i;
      TileBox& b = inner[big];
      int axis = 0;
      for (int d = 1; d < 3; ++d)
        if (b.extent(d) > b.extent(axis)) axis = d;
      remaining[z] += std::int64_t(b.volume() / double(b.extent(axis)));
      --b.hi[axis];
    }
  }
}

// The cells of the shell boxes (neighbouring boxes' shells overlap: an upper bound on the
// boundary cells). Each boundary tile costs about 100 bytes (hash slot, key, its own box) and a
// microsecond: beyond kPreciseMaxBoundaryTiles, refuse up front (TooLarge) rather than spend
// seconds or grow until the allocator gives up.
double boundary_size(const std::vector<TileBox>& shell) {
  double expected = 0.0;
  for (const TileBox& b : shell) expected += b.volume();
  if (expected > kPreciseMaxBoundaryTiles) {
    std::ostringstream msg;
    msg << "the precise discretisation would hand out " << expected
        << " tiles next to the cuts one by one (about " << std::ceil(expected * 1e-6) << " s and "
        << std::ceil(expected * 100.0 / 1e6) << " MB; the limit is " << kPreciseMaxBoundaryTiles
        << " tiles): use the stepped discretisation, which needs no such table, or fewer tiles "
           "(a larger tile size)";
    throw TooLarge(msg.str());
  }
  return expected;
}

// A cell (i, j, l) as one integer, l fastest: keys sort in (i, j, l) order.
struct CellKeys {
  TileExtent ext;
  std::uint64_t of(std::int64_t i, std::int64_t j, std::int64_t l) const {
    return (std::uint64_t(i) * std::uint64_t(ext[1]) + std::uint64_t(j)) * std::uint64_t(ext[2]) +
           std::uint64_t(l);
  }
  std::array<std::int64_t, 3> cell(std::uint64_t key) const {
    const std::int64_t l = std::int64_t(key % std::uint64_t(ext[2]));
    const std::int64_t j = std::int64_t((key / std::uint64_t(ext[2])) % std::uint64_t(ext[1]));
    const std::int64_t i = std::int64_t(key / std::uint64_t(ext[2]) / std::uint64_t(ext[1]));
    return {i, j, l};
  }
};

// The boundary cells (the shell boxes' cells, deduplicated) entered in `table`, unassigned;
// returns their keys in ascending order, the order wave 2 hands them out in.
std::vector<std::uint64_t> boundary_cells(const std::vector<TileBox>& shell, double expected,
                                          const CellKeys& keys, CellTable& table) {
  std::vector<std::uint64_t> boundary;
  boundary.reserve(std::size_t(expected));
  for (const TileBox& b : shell)
    for (std::int64_t i = b.lo[0]; i < b.hi[0]; ++i)
      for (std::int64_t j = b.lo[1]; j < b.hi[1]; ++j)
        for (std::int64_t l = b.lo[2]; l < b.hi[2]; ++l) {
          const std::uint64_t key = keys.of(i, j, l);
          if (table.insert(key)) boundary.push_back(key);
        }
  std::sort(boundary.begin(), boundary.end());
  return boundary;
}

// Among the (up to 26) neighbours of cell c, the owner with the smallest positive remaining
// count (ties: the lowest zone), or -1. A neighbour is a boundary cell (its owner so far, -1
// while unassigned) or lies in an inner box.
int best_neighbour(const std::array<std::int64_t, 3>& c, const CellKeys& keys, CellTable& table,
                   BoxLocator& locator, const std::vector<std::int64_t>& remaining) {
  const TileExtent& ext = keys.ext;
  const auto [i, j, l] = c;
  int best = -1;
  for (int di = -1; di <= 1; ++di)
    for (int dj = -1; dj <= 1; ++dj)
      for (int dl = -1; dl <= 1; ++dl) {
        const std::int64_t ni = i + di, nj = j + dj, nl = l + dl;
        if ((di | dj | dl) == 0 || ni < 0 || nj < 0 || nl < 0 || ni >= ext[0] || nj >= ext[1] ||
            nl >= ext[2])
          continue;
        const int* v = table.find(keys.of(ni, nj, nl));
        const int o = v ? *v : locator.owner({ni, nj, nl});
        if (o < 0 || remaining[o] <= 0) continue;
        if (best < 0 || remaining[o] < remaining[best] ||
            (remaining[o] == remaining[best] && o < best))
          best = o;
      }
  return best;
}

// Wave 2: cells one by one, to the neighbour with the smallest positive remaining count, else
// to the processor with the smallest positive remaining count overall. Returns the cells of each
// of the p zones.
std::vector<std::vector<TileBox>> hand_out(std::size_t p,
                                           const std::vector<std::uint64_t>& boundary,
                                           const CellKeys& keys, CellTable& table,
                                           BoxLocator& locator,
                                           std::vector<std::int64_t>& remaining) {
  std::set<std::pair<std::int64_t, int>> positive;
  for (std::size_t z = 0; z < p; ++z)
    if (remaining[z] > 0) positive.insert({remaining[z], int(z)});
  std::vector<std::vector<TileBox>> cells(p);
  for (const std::uint64_t key : boundary) {
    const std::array<std::int64_t, 3> cell = keys.cell(key);
    const auto [i, j, l] = cell;
    int best = best_neighbour(cell, keys, table, locator, remaining);
    if (best < 0) best = positive.begin()->second;
    positive.erase({remaining[best], best});
    if (--remaining[best] > 0) positive.insert({remaining[best], best});
    *table.find(key) = best;
    cells[best].push_back(TileBox{{i, j, l}, {i + 1, j + 1, l + 1}});
  }
  return cells;
}

std::vector<TileZone> precise(const std::vector<Zone>& zones, const std::vector<double>& weights,
                              const TileExtent& tiles, bool flat) {
  const std::size_t p = zones.size();
  // In flat mode the l axis is collapsed to one cell and stretched back at the end.
  const TileExtent ext = {tiles[0], tiles[1], flat ? 1 : tiles[2]};
  const std::int64_t units = ext[0] * ext[1] * ext[2];
  std::vector<std::int64_t> remaining = exact_counts(weights, units);

  const std::vector<Item> items = snapped_items(zones, flat);
  std::vector<TileBox> inner, outer;
  inner_and_outer(items, ext, inner, outer, remaining);
  peel_overfull(items, inner, remaining);

  // Boundary cells: outer minus inner of every box.
  std::vector<TileBox> shell;
  for (std::size_t i = 0; i < items.size(); ++i) complement(outer[i], inner[i], shell);
  const double expected = boundary_size(shell);
  CellTable table{static_cast<std::size_t>(expected)};
  const CellKeys keys{ext};
  const std::vector<std::uint64_t> boundary = boundary_cells(shell, expected, keys, table);

  std::vector<TileBox> inner_boxes;
  std::vector<int> inner_owner;
  for (std::size_t i = 0; i < items.size(); ++i)
    if (!inner[i].empty()) {
      inner_boxes.push_back(inner[i]);
      inner_owner.push_back(items[i].owner);
    }
  BoxLocator locator(inner_boxes, inner_owner);
  std::vector<std::vector<TileBox>> cells = hand_out(p, boundary, keys, table, locator, remaining);

  std::vector<TileZone> out(p);
  for (std::size_t i = 0; i < inner_boxes.size(); ++i)
    cells[inner_owner[i]].push_back(inner_boxes[i]);
  for (std::size_t z = 0; z < p; ++z) {
    if (flat)
      for (TileBox& b : cells[z]) b.hi[2] = tiles[2];
    out[z] = merge_boxes(std::move(cells[z]));
  }
  return out;
}

}  // namespace

bool spans_l(const std::vector<Zone>& zones, double k) {
  for (const Zone& z : zones)
    for (const Box& b : z)
      if (!b.empty() && !(b.lo[2] == 0.0 && b.hi[2] == k)) return false;
  return true;
}

std::vector<std::int64_t> exact_counts(const std::vector<double>& weights, std::int64_t total) {
  long double sum = 0.0L;
  for (double w : weights) sum += w;
  std::vector<std::int64_t> counts(weights.size());
  long double cumulative = 0.0L;
  std::int64_t assigned = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    cumulative += weights[i];
    // Round half up, as in the paper; the last partial sum is exactly the total.
    const std::int64_t upto =
        i + 1 == weights.size() ? total : std::int64_t(std::floor(cumulative / sum * total + 0.5L));
    counts[i] = std::max<std::int64_t>(0, upto - assigned);
    assigned += counts[i];
  }
  return counts;
}

std::vector<TileZone> discretize_zones(Discretization d, const std::vector<Zone>& zones,
                                       const std::vector<double>& speeds, const TileExtent& tiles,
                                       bool keep_l_whole) {
  // A zone left empty by the continuous algorithm (an idle grid processor) gets no tasks.
  std::vector<double> weights = speeds;
  for (std::size_t p = 0; p < zones.size(); ++p)
    if (volume(zones[p]) <= 0.0) weights[p] = 0.0;
  if (d == Discretization::rounded) return rounded(zones, tiles);
  return precise(zones, weights, tiles, keep_l_whole);
}

}  // namespace cuboid::partition
