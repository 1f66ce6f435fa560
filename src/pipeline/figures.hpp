#pragma once
// The figures a run reports, made in one place for every caller: the repetitions' times and
// each processor's part, summed over the products (pieces) it computed.
#include <cstddef>
#include <string>
#include <vector>

#include "exec/worker.hpp"
#include "pipeline/local_multiply.hpp"

namespace cuboid::pipeline {

// The repetitions' times: the median is the middle one (the mean of the two middle ones for
// an even count); `median_index` is the repetition whose figures stand for the run (the upper
// middle one).
struct TimeSummary {
  double min_s = 0, median_s = 0, max_s = 0;
  std::size_t median_index = 0;
};
TimeSummary summarize_times(const std::vector<double>& seconds);

// Adds one product's figures of a processor to its totals: every count and time summed (each
// product page-locks and releases its own arrays, so registrations add up too), the finish the
// latest, the steals appended.
void add_product(exec::WorkerStats& total, const exec::WorkerStats& product);

// One processor's part in a run.
struct ProcessorFigures {
  std::string name, kind, space;
  int threads = 0;
  double speed_gflops = 0;
  std::string speed_source;
  double tasks = 0;  // tile tasks of its zones, over the products
  int pieces = 0;    // boxes of its zones, over the products
  double planned_flops = 0;
  double predicted_s = 0;  // the model's time for its steps, over the products
  double cut_gflops = 0;   // the speed its zone was cut by (the first product's)
  exec::WorkerStats done;  // what it did (the median repetition)
};

// Per processor of `lm`: its figures over `plans`, with `done` per processor of the run.
template <class Scalar>
std::vector<ProcessorFigures> processor_figures(const LocalMultiply<Scalar>& lm,
                                                const std::vector<platform::Speed>& speeds,
                                                const std::vector<LocalPlan>& plans,
                                                const std::vector<exec::WorkerStats>& done);

}  // namespace cuboid::pipeline
