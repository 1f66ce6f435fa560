// cuboid: heterogeneous dense matrix multiplication, partitioned as a cuboid.
#include <CLI/CLI.hpp>

#include <cstring>
#include <iostream>
#include <memory>
#include <string>

#include "app/commands.hpp"
#include "app/run_command.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace {
using namespace cuboid::app;

void add_run(CLI::App& app) {
  auto opt = std::make_shared<RunOptions>();
  CLI::App* cmd =
      app.add_subcommand("run", "Run the product described by a deck, validate it and report");
  cmd->add_option("deck", opt->deck, "Input deck (TOML), e.g. inputs/quickstart.toml")->required();
  cmd->add_option("--set", opt->overrides,
                  "Override a deck key, e.g. --set problem.m=4096 --set partition.algorithm=grid");
  CLI::Option* json =
      cmd->add_option("--json", opt->json, "Write the run record as JSON to this file");
  auto fault = std::make_shared<std::string>("none");
  cmd->add_option("--inject-fault", *fault,
                  "For testing validation: drop-task (one tile task is not computed) or corrupt "
                  "(one element of C is changed after the GEMMs); the run must then fail "
                  "validation (exit status 3)")
      ->check(CLI::IsMember({"none", "drop-task", "corrupt"}));
  CLI::Option* dry = cmd->add_flag(
      "--dry-run", opt->dry_run,
      "Partition and predict without multiplying: the partition (under mpirun the rank "
      "partition), each processor's or rank's share, the predicted time, bytes and memory; no "
      "matrix is made and no record written");
  dry->excludes(json);
  cmd->add_option("--trace", opt->trace,
                  "Write a trace of the run (Chrome trace-event JSON: open it in Perfetto or "
                  "chrome://tracing): each processor's GEMMs, copies, packing and unpacking, and "
                  "under mpirun each rank's pieces and messages");
  cmd->callback([opt, json, fault] {
    opt->json_given = json->count() > 0;
    opt->fault = *cuboid::exec::parse_fault(*fault);
    if (opt->dry_run && opt->fault != cuboid::exec::Fault::none)
      throw CLI::ValidationError(
          "--inject-fault", "tests the validation of a product, which a --dry-run does not make");
    if (const int rc = run_command(*opt)) throw CLI::RuntimeError(rc);
  });
}

void add_info(CLI::App& app) {
  app.add_subcommand("info", "Show the Kokkos configuration, spaces, TPLs, MPI and threads")
      ->callback(info_command);
}

void add_calibrate(CLI::App& app) {
  auto opt = std::make_shared<CalibrateOptions>();
  CLI::App* cmd =
      app.add_subcommand("calibrate", "Measure each processor's GEMM rate for a deck and cache it");
  cmd->add_option("deck", opt->deck, "Input deck (TOML)")->required();
  cmd->add_option("--set", opt->overrides, "Override a deck key, e.g. --set problem.tile=512");
  cmd->add_flag("--fresh", opt->fresh, "Measure again even when the cache has a value");
  cmd->callback([opt] { calibrate_command(*opt); });
}

void add_simulate(CLI::App& app) {
  auto opt = std::make_shared<SimulateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "simulate",
      "Partition among P MPI ranks and predict each rank's communication (no GEMM, no MPI)");
  cmd->add_option("deck", opt->deck, "Input deck (TOML)")->required();
  cmd->add_option("--ranks", opt->ranks, "Number of ranks P")
      ->required()
      ->check(CLI::Range(1, 10000000));
  cmd->add_option(
         "--speeds", opt->speeds,
         "Per-rank speed factors, repeated cyclically over the ranks (default: mpi.rank_speeds, "
         "else equal); 0 gives a rank no work")
      ->delimiter(',')
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--set", opt->overrides,
                  "Override a deck key, e.g. --set partition.algorithm=grid");
  cmd->add_option("--rank-gflops", opt->rank_gflops, "Time model: GFLOP/s of a rank of mean speed")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--bandwidth-gbs", opt->bandwidth_gbs,
                  "Time model: GB/s each rank sends or receives")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  CLI::Option* json =
      cmd->add_option("--json", opt->json, "Write the figures as JSON to this file");
  cmd->add_flag("--per-rank", opt->per_rank, "Print one line per rank");
  cmd->callback([opt, json] {
    opt->json_given = json->count() > 0;
    simulate_command(*opt);
  });
}

void add_partition(CLI::App& app) {
  auto opts = std::make_shared<PartitionOptions>();
  CLI::App* cmd = app.add_subcommand(
      "partition", "Partition an M x N x K cuboid of tile tasks among processors of given speeds");
  cmd->add_option("--dims", opts->dims, "Tile counts M,N,K")->required();
  cmd->add_option("--speeds", opts->speeds,
                  "Speeds w1,w2,... or @FILE (numbers separated by commas or whitespace)")
      ->required();
  cmd->add_option("--algorithm", opts->algorithm,
                  "nrrp3d, nrrp3d-2mode, nrrp2d, column, slab or grid")
      ->capture_default_str();
  cmd->add_option("--discretize", opts->discretize,
                  "stepped (exact task counts, the algorithm's cuts made exact with one-layer "
                  "steps), precise (exact counts, tiles near cuts handed out one by one), rounded "
                  "(rounded cuts) or none (continuous)")
      ->capture_default_str();
  CLI::Option* json =
      cmd->add_option("--json", opts->json, "Write the partition and its measures as JSON");
  CLI::Option* svg = cmd->add_option("--svg", opts->svg, "Draw the partition as SVG");
  cmd->add_option("--rows", opts->rows, "Processors listed in the table")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t(0), std::int64_t(1) << 40));
  cmd->callback([opts, json, svg] {
    opts->json_given = json->count() > 0;
    opts->svg_given = svg->count() > 0;
    partition_command(*opts);
  });
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "cuboid: C = alpha*A*B + beta*C on every processor of a node (and across nodes), "
      "partitioned as a cuboid in proportion to measured speeds"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Help for every command");
  add_run(app);
  add_info(app);
  add_calibrate(app);
  add_simulate(app);
  add_partition(app);
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
