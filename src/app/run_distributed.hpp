#pragma once
// `cuboid run` when started by mpirun: MPI, Kokkos, this rank's processors and speeds, then the
// distributed pipeline of src/mpi/runner.hpp. Returns the process exit status; only rank 0
// prints errors.
#include "app/commands.hpp"

namespace cuboid::app {

// The record's and the trace's paths are checked by rank 0 before any work; the trace holds
// every rank's events (gathered on rank 0, one process per rank). `fault`: --inject-fault, for
// testing validation. `dry_run`: stop once the rank partition is chosen and print its prediction.
int run_distributed_command(const RunOptions& options);

}  // namespace cuboid::app
