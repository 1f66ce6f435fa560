#pragma once
// `cuboid run` when started by mpirun: MPI, Kokkos, this rank's processors and speeds, then the
// distributed pipeline of src/mpi/runner.hpp. Returns the process exit status; only rank 0
// prints errors.
#include <string>
#include <vector>

#include "exec/fault.hpp"

namespace cuboid::app {

// `json`: the record's path (null: no record), checked by rank 0 before any work. `fault`:
// --inject-fault, for testing validation. `dry_run`: stop once the rank partition is chosen and
// print its prediction.
int run_distributed_command(const std::string& deck_path, const std::vector<std::string>& overrides,
                            const std::string* json, exec::Fault fault = exec::Fault::none,
                            bool dry_run = false);

}  // namespace cuboid::app
