// cuboid: heterogeneous dense matrix multiplication, partitioned as a cuboid.
#include <CLI/CLI.hpp>

#include <iostream>

#include "app/cmd_partition.hpp"
#include "app/cmd_simulate.hpp"
#include "app/run_command.hpp"
#include "util/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "cuboid: C = alpha*A*B + beta*C on every processor of a node (and across nodes), "
      "partitioned as a cuboid in proportion to measured speeds"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Help for every command");
  cuboid::app::add_run_command(app);
  cuboid::app::add_info_command(app);
  cuboid::app::add_calibrate_command(app);
  cuboid::app::add_simulate_command(app);
  cuboid::app::add_partition_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const cuboid::app::ValidationFailure& f) {
    std::cerr << "cuboid: error: " << f.message << "\n";
    return cuboid::app::kValidationFailed;
  } catch (const std::exception& e) {
    std::cerr << "cuboid: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
