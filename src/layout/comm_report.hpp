#pragma once
// The communication figures `run` (under mpirun) and `simulate` both print and record, so the
// two can be compared line by line. No MPI here.
#include <cstddef>
#include <iosfwd>

#include <nlohmann/json.hpp>

#include "layout/model.hpp"

namespace cuboid::layout {

// `measured` and `model` in elements; `elem` bytes per element. The JSON object holds
// bytes_per_rank_max/mean (measured), lower_bound_bytes_per_rank (COSMA, S infinite),
// shape_bound_bytes_per_rank, model_bytes_per_rank_max/mean, footprint_bytes_per_rank_max and
// the ratios to the lower bound.
nlohmann::json communication_json(const CommSummary& measured, const CommSummary& model,
                                  std::size_t elem);
void print_communication(std::ostream& os, const CommSummary& measured, const CommSummary& model,
                         std::size_t elem);

}  // namespace cuboid::layout
