#pragma once
// Local-multiply options for the pipeline's tests: nrrp3d, precise, and each processor that is
// not the host given `budget` elements of its memory (0: no limit) and four panels at least.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "pipeline/local_multiply.hpp"

inline cuboid::pipeline::LocalOptions options_for(
    const std::vector<cuboid::platform::ProcessorSpec>& specs, std::int64_t budget,
    std::size_t elem) {
  using namespace cuboid;
  pipeline::LocalOptions o;
  o.algorithm = partition::Algorithm::nrrp3d;
  o.discretization = partition::Discretization::precise;
  for (const auto& s : specs) {
    const bool host = s.kind == platform::ProcessorKind::host;
    o.plan.budget_elements.push_back(host ? 0 : budget);
    o.plan.min_panels.push_back(host ? 1 : 4);
    o.plan.buffer_cost.push_back(exec::buffer_cost(s, elem));
  }
  return o;
}
