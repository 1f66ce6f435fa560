#pragma once
// The time model of a plan: what each processor's steps should take at its GEMM rate and, for a
// processor that copies, at its link's rates with the copies overlapping the GEMMs as the staged
// pipeline overlaps them. Pure C++: no Kokkos, testable alone.
#include <cstddef>
#include <vector>

#include "exec/plan.hpp"

namespace cuboid::exec {

// A processor as the model sees it: its GEMM rate on data in its own memory and, for one that
// copies, the rates of its link each way (0: it works in place on the host's matrices).
struct ProcessorRate {
  double gflops = 0;
  double h2d_gbs = 0, d2h_gbs = 0;
  bool copies() const { return h2d_gbs > 0 && d2h_gbs > 0; }
};

struct Prediction {
  std::vector<double> seconds;  // per processor: from the run's start to its last step's end
  double reduction_s = 0;       // adding the partial C buffers into C, after everyone
  double total_s = 0;           // max over processors + reduction
};

// A processor in place runs its steps one after the other at its rate. One that copies runs
// three queues: inputs in (the panels a step does not share with the previous one, and its C
// block when it brings one in), GEMMs, and drains out; a GEMM waits for its inputs and the
// previous GEMM, an input copy for the GEMM two steps back (two panel buffers), a drain for its
// GEMM and the previous drain. So the first panels in and the last block out are the parts no
// GEMM hides. The reduction streams each partial buffer's bytes three times (read C, read the
// partial, write C) at `host_gbs`.
Prediction predict(const Plan& plan, const std::vector<ProcessorRate>& rates,
                   std::size_t element_bytes, double host_gbs = 20.0);

}  // namespace cuboid::exec
