#include "dist/comm_report.hpp"

#include <fmt/format.h>

#include <ostream>

namespace cuboid::dist {

nlohmann::json communication_json(const CommSummary& measured, const CommSummary& model,
                                  std::size_t elem) {
  const double e = double(elem);
  const double lb = measured.lower_bound * e;
  return nlohmann::json{
      {"ranks", measured.ranks},
      {"bytes_per_rank_max", measured.moved_max * e},
      {"bytes_per_rank_mean", measured.moved_mean * e},
      {"lower_bound_bytes_per_rank", lb},
      {"shape_bound_bytes_per_rank", measured.shape_bound * e},
      {"model_bytes_per_rank_max", model.moved_max * e},
      {"model_bytes_per_rank_mean", model.moved_mean * e},
      {"footprint_bytes_per_rank_max", measured.footprint_max * e},
      {"max_over_lower_bound", lb > 0 ? measured.moved_max * e / lb : 0.0},
      {"footprint_max_over_lower_bound", lb > 0 ? measured.footprint_max * e / lb : 0.0},
      {"worst_rank_over_own_bound", measured.worst_rank_ratio},
      {"counted",
       "elements crossing ranks: A and B received plus partial C sent; a rank's own "
       "block-cyclic blocks are not counted (footprint counts them)"},
      {"lower_bound",
       "COSMA eq. 33 with p = all ranks and S = infinity: 3 (mnk/p)^(2/3) elements"}};
}

void print_communication(std::ostream& os, const CommSummary& measured, const CommSummary& model,
                         std::size_t elem) {
  const double e = double(elem);
  const double lb = measured.lower_bound * e;
  os << fmt::format(
      "traffic    per rank: max {:.4g} B, mean {:.4g} B (model: max {:.4g} B, mean {:.4g} B); "
      "lower bound 3(mnk/p)^(2/3) = {:.4g} B, shape-aware {:.4g} B\n",
      measured.moved_max * e, measured.moved_mean * e, model.moved_max * e, model.moved_mean * e,
      lb, measured.shape_bound * e);
  os << fmt::format(
      "           max / lower bound = {:.3f} (own blocks not counted); footprint max {:.4g} B = "
      "{:.3f} x bound (everything a zone touches, as if nothing started local)\n",
      lb > 0 ? measured.moved_max * e / lb : 0.0, measured.footprint_max * e,
      lb > 0 ? measured.footprint_max * e / lb : 0.0);
  os << fmt::format(
      "           worst rank / the shape-aware bound of its own volume = {:.3f} (fair when speeds "
      "differ)\n",
      measured.worst_rank_ratio);
}

}  // namespace cuboid::dist
