#pragma once
// Candidates: a source's split or corner made exact on the integer region of a task, the cut or
// the corner box completed with a staircase in a choice of layers, orientations and windows.
#include <array>
#include <vector>

#include "partition/stepped/sources.hpp"

namespace cuboid::partition::stepped_detail {

// One way to cut a task's region: the two child tasks with their regions.
struct Option {
  Task first, second;
  std::array<double, 2> key{};  // smaller is better: (boxes above four of a final zone, Hs)
  int family = 0;               // which split or corner of the rule it realises
};

// Exact cuts for the split `s` of task `t` (`bb` the bounds of its region): at the plane where the
// count falls and at nearby ones, each made exact with a step, appended to `out`.
void split_options(const Source::Split& s, const Task& t, const TileBox& bb, Effort effort,
                   std::vector<Option>& out);

// The minimal split without candidate lists: the cut on the side of the count that needs the
// smaller step, the step in whole rows stacked along the larger side's likely next cut.
void lean_split(const Region& region, const TileBox& bb, int d, I want, Task& lo, Task& hi);

// Inner regions for a corner: boxes at a corner of the region's bounds, near the ideal edges,
// as prisms (one edge full) and as slabs (two edges full), each made exact with one step on one
// of its inner faces.
void corner_options(const Source::Corner& c, const Task& t, const TileBox& bb, Effort effort,
                    std::vector<Option>& out);

}  // namespace cuboid::partition::stepped_detail
