// cuboid: heterogeneous dense matrix multiplication, partitioned as a cuboid.
#include <CLI/CLI.hpp>

#include <cstring>
#include <iostream>
#include <string>

#include "app/cmd_partition.hpp"
#include "app/cmd_simulate.hpp"
#include "app/run_command.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

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
  // The first word that is not an option must name a command.
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    std::string commands;
    for (const CLI::App* sub : app.get_subcommands({})) {
      known = known || sub->check_name(argv[1]);
      commands += (commands.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      std::cerr << "cuboid: error: unknown command '" << cuboid::clip(argv[1])
                << "' (commands: " << commands << "; cuboid --help)\n";
      return static_cast<int>(CLI::ExitCodes::ExtrasError);
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // the command printed its own message
  } catch (const CLI::ParseError& e) {
    // CLI11 echoes the offending argument: cut it, so a huge value cannot flood the terminal.
    std::cerr << "cuboid: error: " << cuboid::clip(e.what(), 300) << "\n"
              << "Run with --help for more information.\n";
    return e.get_exit_code();
  } catch (const cuboid::app::ValidationFailure& f) {
    std::cerr << "cuboid: error: " << f.message << "\n";
    return cuboid::app::kValidationFailed;
  } catch (const std::bad_alloc&) {
    std::cerr << "cuboid: error: out of memory (a size or count in the input is too large for "
                 "this machine)\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "cuboid: error: " << cuboid::clip(e.what(), 2000) << "\n";
    return 1;
  }
  return 0;
}
