#pragma once
// The decisions STEPPED makes exact: a task is a node of the recursion (its processors' count
// and region), and a source says how to cut it: the integer nrrp3d rule or a continuous cut tree.
#include <array>
#include <utility>
#include <vector>

#include "partition/cut_tree.hpp"
#include "partition/stepped/region.hpp"

namespace cuboid::partition::stepped_detail {

// How many candidates a node tries: minimal (the one cut the rule asks for, with one step),
// narrow (every orientation of the step), wide (also nearby split points, axes, windows and
// corners: what the lookahead compares).
enum class Effort { minimal, narrow, wide };

// A node of the recursion: the processors below it, their count and their region.
struct Task {
  int lo = 0, hi = 0;  // nrrp3d: range of processors in ascending target order
  int node = -1;       // cut tree: the node
  int proc = -1;       // >= 0: a leaf of this processor
  I target = 0;
  Region region;
  bool settled = false;  // region a fixed point of compact_in_place
};

// Where the decisions come from: the integer nrrp3d rule, or a continuous cut tree.
class Source {
 public:
  virtual ~Source() = default;
  // A split of `t`: the two child tasks (targets set, regions empty) and the axis.
  struct Split {
    Task below, above;
    int axis;
  };
  struct Corner {
    Task inner, dominant;
    std::array<double, 3> ideal;  // edges of the inner box, before rounding
  };
  virtual void decide(const Task& t, const TileBox& bounds, Effort e, std::vector<Split>& splits,
                      std::vector<Corner>& corners) const = 0;
};

// nrrp3d on integer regions: processors in ascending target order, a task is a range of them.
class NrrpSource : public Source {
 public:
  NrrpSource(std::vector<int> order, std::vector<I> prefix, bool three_modes)
      : order_(std::move(order)), prefix_(std::move(prefix)), three_modes_(three_modes) {}

  Task task(int lo, int hi) const;
  void decide(const Task& t, const TileBox& bb, Effort effort, std::vector<Split>& splits,
              std::vector<Corner>& corners) const override;

 private:
  std::vector<int> order_;
  std::vector<I> prefix_;
  bool three_modes_;
};

// A continuous cut tree, followed split by split.
class TreeSource : public Source {
 public:
  TreeSource(const CutTree& tree, const std::vector<I>& targets);

  Task task(int node) const;
  void decide(const Task& t, const TileBox& bb, Effort, std::vector<Split>& splits,
              std::vector<Corner>& corners) const override;

 private:
  const CutTree& tree_;
  std::vector<I> target_;
  std::vector<I> dominant_target_;
};

}  // namespace cuboid::partition::stepped_detail
