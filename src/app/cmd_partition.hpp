#pragma once
// `cuboid partition`: compute, print and optionally save a partition of the tile cuboid.
#include <CLI/CLI.hpp>

namespace cuboid::app {

void add_partition_command(CLI::App& app);

}  // namespace cuboid::app
