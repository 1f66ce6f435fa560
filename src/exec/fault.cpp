#include "exec/fault.hpp"

#include <algorithm>
#include <vector>

#include "util/names.hpp"

namespace cuboid::exec {

namespace {
constexpr Named<Fault> kFaults[] = {
    {Fault::none, "none"}, {Fault::drop_task, "drop-task"}, {Fault::corrupt, "corrupt"}};
}  // namespace

std::optional<Fault> parse_fault(std::string_view name) { return value_of(name, kFaults); }

std::string_view to_string(Fault f) { return name_of(f, kFaults, "none"); }

std::optional<DroppedTask> drop_one_task(Plan& plan) {
  const std::int64_t tile = plan.tile;
  for (std::size_t q = 0; q < plan.processors.size(); ++q) {
    auto& steps = plan.processors[q].steps;
    for (std::size_t s = 0; s < steps.size(); ++s) {
      const Step st = steps[s];
      if (st.c.rows() <= 0 || st.c.cols() <= 0 || st.depth() <= 0) continue;
      // The task: the first tile of the C block times the last tile-deep slab of k.
      const std::int64_t lt = std::max(st.l0, ((st.l1 - 1) / tile) * tile);
      const bool front = lt > st.l0;  // k left in front of the slab carries beta
      if (!front && st.beta != BetaUse::one) continue;
      const Rect t{st.c.i0, std::min(st.c.i0 + tile, st.c.i1), st.c.j0,
                   std::min(st.c.j0 + tile, st.c.j1)};

      std::vector<Step> out;
      if (front) {
        Step head = st;
        head.l1 = lt;
        head.c_out = true;  // drained, so the rest of the block can be brought back in
        out.push_back(head);
      }
      // The slab for the C block without the tile: below it, then right of it.
      const Rect rest[2] = {{t.i1, st.c.i1, st.c.j0, st.c.j1}, {st.c.i0, t.i1, t.j1, st.c.j1}};
      for (const Rect& r : rest) {
        if (r.rows() <= 0 || r.cols() <= 0) continue;
        Step x = st;
        x.c = r, x.l0 = lt, x.l1 = st.l1;
        x.beta = BetaUse::one;
        x.c_in = true, x.c_out = true;
        out.push_back(x);
      }
      // Neighbours on the same block: what was resident across this step is drained before it
      // and brought back after it.
      if (!front && !st.c_in && s > 0) steps[s - 1].c_out = true;
      if (!st.c_out && s + 1 < steps.size()) steps[s + 1].c_in = true;

      steps.erase(steps.begin() + std::ptrdiff_t(s));
      steps.insert(steps.begin() + std::ptrdiff_t(s), out.begin(), out.end());
      plan.processors[q].flops -= 2.0 * double(t.rows()) * double(t.cols()) * double(st.l1 - lt);
      return DroppedTask{int(q), t, lt, st.l1};
    }
  }
  return std::nullopt;
}

}  // namespace cuboid::exec
