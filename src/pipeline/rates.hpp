#pragma once
// The rates of the "flops+link" speed model: what the partition needs to know of a processor
// that copies, measured apart from the speeds timed together.
#include <iosfwd>
#include <vector>

#include "exec/model.hpp"
#include "platform/calibration.hpp"
#include "platform/processor.hpp"

namespace cuboid::pipeline {

// Per processor, when any processor copies (a device, staged, emulated): a GEMM rate and, for
// one that copies, its link each way. The GEMM rate is a device's on its own memory (8192^3, or
// the largest power of two whose three matrices take a quarter of its memory), the setting in
// timing mode, and for the processors on the host's cores (host, staged, emulated) the one each
// reaches with all of them measured at once (2048^3, each on its threads). The link goes through
// the staging ring (256 MiB on a device, 64 MiB on a host-backed processor): in from a host
// matrix, packing included, as panels travel; out as a C block drains, unpacking overlapped.
// From `cache` unless `remeasure` (stored there when measured). Empty when no processor copies:
// then the speeds alone cut the zones (the "flops" model). `progress` gets a line per measured
// group. Throws cuboid::Error when a processor that copies measures no rate. With `reduce_gbs`,
// also the host's rate for the split-k reduction (reduce_rate), through the same cache.
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
