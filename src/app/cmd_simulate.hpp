#pragma once
// `cuboid simulate DECK --ranks P`: the MPI layer's partition and communication model, with no
// GEMM and no MPI (src/layout/model.hpp).
namespace CLI {
class App;
}

namespace cuboid::app {

void add_simulate_command(CLI::App& app);

}  // namespace cuboid::app
