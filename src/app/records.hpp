#pragma once
// The parts of a run's record that the single-process and the distributed run share, built
// from the pipeline's figures in one place.
#include <string>
#include <vector>

#include "pipeline/figures.hpp"
#include "report/run_record.hpp"

namespace cuboid::app {

// `total_speed`: the speeds of every processor of the run (all ranks), after the rank's speed
// `factor`; `total_tasks`: the tile tasks of the whole product.
report::ProcessorRecord processor_record(const pipeline::ProcessorFigures& f, double total_speed,
                                         double total_tasks, double factor = 1);

// times_s, min, median, max and the rate of the median, for a product of `flops`.
void record_times(report::RunRecord& rec, const std::vector<double>& seconds, double flops);

}  // namespace cuboid::app
