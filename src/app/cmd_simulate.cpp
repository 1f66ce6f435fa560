// `cuboid simulate DECK --ranks P`: what the MPI layer would do on P ranks -- rank-level
// partition, block-cyclic layout, elements each rank moves, bounds -- without GEMM or MPI.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <numeric>

#include "app/cmd_simulate.hpp"
#include "deck/deck.hpp"
#include "dist/comm_report.hpp"
#include "dist/model.hpp"
#include "dist/strategy.hpp"
#include "partition/metrics.hpp"
#include "report/run_report.hpp"
#include "util/error.hpp"
#include "util/timer.hpp"

namespace cuboid::app {
namespace {

struct SimulateOptions {
  std::string deck;
  std::vector<std::string> overrides;
  int ranks = 0;
  std::vector<double> speeds;
  double rank_gflops = 100;
  double bandwidth_gbs = 10;
  std::string json;
  bool per_rank = false;
};

void simulate(const deck::Deck& d, const SimulateOptions& o) {
  const auto& pr = d.problem;
  const int P = o.ranks;
  // Per-rank speed factors: --speeds repeated cyclically, else mpi.rank_speeds when it has P
  // entries, else equal.
  std::vector<double> factors(std::size_t(P), 1.0);
  if (!o.speeds.empty()) {
    for (int r = 0; r < P; ++r)
      factors[std::size_t(r)] = o.speeds[std::size_t(r) % o.speeds.size()];
  } else if (!d.mpi.rank_speeds.empty()) {
    if (int(d.mpi.rank_speeds.size()) != P)
      throw Error(d.location("mpi.rank_speeds") + ": mpi.rank_speeds has " +
                  std::to_string(d.mpi.rank_speeds.size()) + " entries but --ranks is " +
                  std::to_string(P) + " (use --speeds to give a pattern instead)");
    factors = d.mpi.rank_speeds;
  }
  dist::ProcessGrid grid = dist::near_square_grid(P);
  if (!d.mpi.grid.empty()) {
    grid = dist::ProcessGrid{d.mpi.grid[0], d.mpi.grid[1]};
    if (grid.size() != P)
      throw Error(d.location("mpi.grid") + ": mpi.grid " + dist::describe(grid) + " has " +
                  std::to_string(grid.size()) + " processes but --ranks is " + std::to_string(P));
  }
  const std::int64_t block = d.mpi.block > 0 ? d.mpi.block : pr.tile;
  const partition::TileExtent tiles{(pr.m + pr.tile - 1) / pr.tile, (pr.n + pr.tile - 1) / pr.tile,
                                    (pr.k + pr.tile - 1) / pr.tile};
  Stopwatch clock;
  std::vector<partition::TileZone> zones;
  try {
    zones =
        dist::partition_ranks(d.partition.algorithm, d.partition.discretization, factors, tiles);
  } catch (const std::invalid_argument& e) {
    throw Error(d.location("partition.algorithm") + ": partition." +
                std::string(partition::to_string(d.partition.algorithm)) + " of " +
                fmt::format("{}x{}x{}", tiles[0], tiles[1], tiles[2]) + " tiles among " +
                std::to_string(P) + " ranks: " + e.what());
  }
  const double partition_s = clock.seconds();
  // Load balance among the ranks that work (ROUNDED trades some of it for rounder zones).
  std::vector<partition::TileZone> working;
  std::vector<double> working_speeds;
  for (int r = 0; r < P; ++r)
    if (factors[std::size_t(r)] > 0)
      working.push_back(zones[std::size_t(r)]), working_speeds.push_back(factors[std::size_t(r)]);
  const double imbalance = partition::measure(working, working_speeds, tiles).imbalance;
  clock.restart();
  const auto layouts = dist::make_layouts(pr.m, pr.n, pr.k, block, grid);
  const auto traffic = dist::model_traffic(zones, pr.m, pr.n, pr.k, pr.tile, layouts);
  const double model_s = clock.seconds();
  const auto summary = dist::summarize(traffic, pr.m, pr.n, pr.k);
  const std::size_t elem = pr.precision == deck::Precision::float64 ? 8 : 4;

  // Time model: rank r computes its flops at rank_gflops * factor_r; the busiest rank's traffic
  // goes at bandwidth_gbs without overlap. Both are assumptions given on the command line.
  double compute_s = 0, comm_s = 0;
  const double mean_factor = std::accumulate(factors.begin(), factors.end(), 0.0) / P;
  for (int r = 0; r < P; ++r) {
    const auto& t = traffic[std::size_t(r)];
    if (t.flops > 0)
      compute_s = std::max(compute_s,
                           t.flops / (o.rank_gflops * 1e9 * factors[std::size_t(r)] / mean_factor));
    comm_s = std::max(comm_s, t.moved() * double(elem) / (o.bandwidth_gbs * 1e9));
  }
  const double flops = 2.0 * double(pr.m) * double(pr.n) * double(pr.k);
  const double time_s = compute_s + comm_s;
  const int idle =
      int(std::count_if(traffic.begin(), traffic.end(), [](auto& t) { return t.tasks == 0; }));

  std::cout << fmt::format(
      "simulate   {} ranks (grid {}, block {}), {} + {} on {}x{}x{} tiles of {}, m={} n={} k={} "
      "{}\n",
      P, dist::describe(grid), block, partition::to_string(d.partition.algorithm),
      partition::to_string(d.partition.discretization), tiles[0], tiles[1], tiles[2], pr.tile, pr.m,
      pr.n, pr.k, deck::to_string(pr.precision));
  std::cout << fmt::format(
      "partition  {:.3f} s among ranks, model {:.3f} s; imbalance {:.2f}%; {} rank(s) without "
      "work\n",
      partition_s, model_s, 100 * imbalance, idle);
  if (o.per_rank) {
    std::cout << fmt::format("{:>6} {:>7} {:>10} {:>12} {:>12} {:>12} {:>12} {:>12}\n", "rank",
                             "speed", "tasks", "A in B", "B in B", "C out B", "moved B",
                             "footprint B");
    for (int r = 0; r < P; ++r) {
      const auto& t = traffic[std::size_t(r)];
      const double e = double(elem);
      std::cout << fmt::format(
          "{:>6} {:>7.3g} {:>10.0f} {:>12.4g} {:>12.4g} {:>12.4g} {:>12.4g} {:>12.4g}\n", r,
          factors[std::size_t(r)], t.tasks, t.a_in * e, t.b_in * e, t.c_out * e, t.moved() * e,
          t.footprint() * e);
    }
  }
  dist::print_communication(std::cout, summary, summary, elem);
  std::cout << fmt::format(
      "model time compute {:.4g} s + communication {:.4g} s = {:.4g} s, {:.4g} GFLOP/s "
      "(assumed {} GFLOP/s per unit-speed rank, {} GB/s per rank, no overlap)\n",
      compute_s, comm_s, time_s, flops / time_s / 1e9, o.rank_gflops, o.bandwidth_gbs);

  if (!o.json.empty()) {
    nlohmann::json j;
    j["format"] = "cuboid simulate record 1";
    j["deck"] = d.path;
    j["problem"] = {{"m", pr.m},
                    {"n", pr.n},
                    {"k", pr.k},
                    {"tile", pr.tile},
                    {"precision", deck::to_string(pr.precision)}};
    j["partition"] = {{"algorithm", partition::to_string(d.partition.algorithm)},
                      {"discretization", partition::to_string(d.partition.discretization)},
                      {"seconds", partition_s},
                      {"imbalance", imbalance}};
    j["ranks"] = P;
    j["grid"] = {grid.rows, grid.cols};
    j["block"] = block;
    j["idle_ranks"] = idle;
    j["speeds"] = factors;
    j["communication"] = dist::communication_json(summary, summary, elem);
    j["model"] = {{"compute_s", compute_s},
                  {"communication_s", comm_s},
                  {"time_s", time_s},
                  {"gflops", flops / time_s / 1e9},
                  {"rank_gflops", o.rank_gflops},
                  {"bandwidth_gbs", o.bandwidth_gbs}};
    report::write_json_file(o.json, j);
  }
}

}  // namespace

void add_simulate_command(CLI::App& app) {
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
  cmd->add_option("--json", opt->json, "Write the figures as JSON to this file");
  cmd->add_flag("--per-rank", opt->per_rank, "Print one line per rank");
  cmd->callback([opt] { simulate(deck::load_deck(opt->deck, opt->overrides), *opt); });
}

}  // namespace cuboid::app
