#include "layout/comm_report.hpp"

#include <fmt/format.h>

#include <ostream>

namespace cuboid::layout {

nlohmann::json communication_json(const CommSummary& measured, const CommSummary& model,
                                  std::size_t elem) {
  const double e = double(elem);
  const double lb = measured.lower_bound * e, mb = measured.moved_bound * e;
  return nlohmann::json{
      {"ranks", measured.ranks},
      {"bytes_per_rank_max", measured.received_max * e},
      {"bytes_per_rank_mean", measured.received_mean * e},
      {"moved_bytes_per_rank_max", measured.moved_max * e},
      {"lower_bound_bytes_per_rank", lb},
      {"shape_bound_bytes_per_rank", measured.shape_bound * e},
      {"model_bytes_per_rank_max", model.received_max * e},
      {"model_bytes_per_rank_mean", model.received_mean * e},
      {"footprint_bytes_per_rank_max", measured.footprint_max * e},
      {"max_over_lower_bound", lb > 0 ? measured.received_max * e / lb : 0.0},
      {"moved_bound_bytes_per_rank", mb},
      {"moved_max_over_moved_bound", mb > 0 ? measured.moved_max * e / mb : 0.0},
      {"moved_shape_bound_bytes_per_rank", measured.moved_shape_bound * e},
      {"footprint_max_over_lower_bound", lb > 0 ? measured.footprint_max * e / lb : 0.0},
      {"worst_rank_over_own_bound", measured.worst_rank_ratio},
      {"counted",
       "bytes a rank receives from other ranks: A, B and partial C (bytes_per_rank_*); a rank's "
       "own blocks never travel and are not counted, the footprint counts everything a zone "
       "touches; moved_* charges A and B received plus partial C sent"},
      {"lower_bound", "COSMA eq. 33 with p = all ranks and S = infinity: 3 (mnk/p)^(2/3) elements"},
      {"moved_bound",
       "what a rank must move (A and B received plus partial C sent) when it starts with its "
       "share: "
       "3 (mnk/p)^(2/3) - (mn + mk + nk)/p elements (S = infinity); moved_shape_bound_* the same "
       "from the shape-aware bound, which stays positive where the cube of volume mnk/p does not "
       "fit"}};
}

void print_communication(std::ostream& os, const CommSummary& measured, const CommSummary& model,
                         std::size_t elem) {
  const double e = double(elem);
  const double lb = measured.lower_bound * e, mb = measured.moved_bound * e;
  os << fmt::format(
      "traffic    received per rank: max {:.4g} B, mean {:.4g} B (model: max {:.4g} B, mean {:.4g} "
      "B); lower bound 3(mnk/p)^(2/3) = {:.4g} B, shape-aware {:.4g} B\n",
      measured.received_max * e, measured.received_mean * e, model.received_max * e,
      model.received_mean * e, lb, measured.shape_bound * e);
  os << fmt::format(
      "           max received / lower bound = {:.3f} (the bound counts all a rank touches, its "
      "own blocks too); footprint max {:.4g} B = {:.3f} x bound\n",
      lb > 0 ? measured.received_max * e / lb : 0.0, measured.footprint_max * e,
      lb > 0 ? measured.footprint_max * e / lb : 0.0);
  os << fmt::format(
      "           moved per rank (A, B received + partial C sent): max {:.4g} B against the bound "
      "for a rank that starts with its share, 3(mnk/p)^(2/3) - (mn+mk+nk)/p = {:.4g} B "
      "(ratio {:.3f}), shape-aware {:.4g} B\n",
      measured.moved_max * e, mb, mb > 0 ? measured.moved_max * e / mb : 0.0,
      measured.moved_shape_bound * e);
  os << fmt::format(
      "           worst rank / the shape-aware bound of its own volume = {:.3f} (fair when speeds "
      "differ)\n",
      measured.worst_rank_ratio);
}

}  // namespace cuboid::layout
