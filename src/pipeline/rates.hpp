#pragma once
// The rates of the "flops+link" speed model: what the partition needs to know of a processor
// that copies, measured apart from the speeds timed together.
#include <iosfwd>
#include <vector>

#include "exec/model.hpp"
#include "platform/calibration.hpp"
#include "platform/processor.hpp"

namespace cuboid::pipeline {

// Per processor: a device's GEMM rate on its own memory (at 8192^3, or the largest power of two
// whose three matrices take a quarter of its memory) and its link each way (256 MiB: in from a
// host matrix through its staging ring, packing included, as its panels travel; out as plain
// copies), from `cache` unless `remeasure` (stored there when measured); any other processor's
// rate is its speed, in place. Empty when no processor is a device: then the speeds alone cut
// the zones (the "flops" model). `progress` gets one line per device. Throws cuboid::Error when
// a device measures no rate. With `reduce_gbs` and a device, also the host's rate for the split-k
// reduction (reduce_rate), through the same cache.
template <class Scalar>
std::vector<exec::ProcessorRate> model_rates(const std::vector<platform::ProcessorSpec>& processors,
                                             const std::vector<double>& speeds,
                                             platform::SpeedCache* cache, bool remeasure,
                                             std::ostream& progress, double* reduce_gbs = nullptr);

// The rate, GB/s of C read, partial read and C written, at which the host adds a partial C buffer
// into C as the engine does after the processors finish (a 64 MiB buffer, the best of three).
template <class Scalar>
double reduce_rate(platform::SpeedCache* cache, bool remeasure, std::ostream& progress);

}  // namespace cuboid::pipeline
