// `cuboid simulate DECK --ranks P`: what the MPI layer would do on P ranks -- rank-level
// partition, block-cyclic layout, elements each rank moves, bounds -- without GEMM or MPI.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <numeric>

#include "app/cmd_simulate.hpp"
#include "app/estimates.hpp"
#include "deck/deck.hpp"
#include "dist/comm_report.hpp"
#include "dist/model.hpp"
#include "dist/rank_partition.hpp"
#include "dist/strategy.hpp"
#include "partition/metrics.hpp"
#include "partition/speeds.hpp"
#include "report/run_report.hpp"
#include "util/atomic_output.hpp"
#include "util/checked.hpp"
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
  bool json_given = false;
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
  if (!d.mpi.aligned && !d.mpi.grid.empty()) {
    grid = dist::ProcessGrid{d.mpi.grid[0], d.mpi.grid[1]};
    if (grid.size() != P)
      throw Error(d.location("mpi.grid") + ": mpi.grid " + dist::describe(grid) + " has " +
                  std::to_string(grid.size()) + " processes but --ranks is " + std::to_string(P));
  }
  const std::int64_t block = d.mpi.block > 0 ? d.mpi.block : pr.tile;
  {
    const bool automatic = d.partition.auto_algorithm || !d.where.count("partition.algorithm");
    const std::int64_t M = ceil_div(pr.m, pr.tile), N = ceil_div(pr.n, pr.tile),
                       K = ceil_div(pr.k, pr.tile);
    require_host_memory(
        rank_partition_bytes(P, M, N, K, d.mpi.aligned, automatic), "--ranks " + std::to_string(P),
        std::to_string(P) + " ranks on " + std::to_string(M) + "x" + std::to_string(N) + "x" +
            std::to_string(K) + " tiles: the rank partition",
        "use fewer --ranks or a larger problem.tile");
  }
  const std::size_t elem = pr.precision == deck::Precision::float64 ? 8 : 4;
  // The rank partition exactly as `run` under mpirun chooses it: rank r runs at rank_gflops
  // times its factor (relative to the mean), data arrives at bandwidth_gbs.
  // Factors that cannot be partitioned are the fault of where they came from.
  {
    const std::string from = !o.speeds.empty()           ? std::string("--speeds")
                             : d.mpi.rank_speeds.empty() ? std::string("--ranks")
                                                         : d.at("mpi.rank_speeds");
    std::vector<double> working;
    for (double f : factors)
      if (f > 0) working.push_back(f);
    if (working.empty())
      throw Error(from + ": every rank's speed factor is 0: no rank has a positive speed");
    if (const auto problem = partition::speed_problem(working))
      throw Error(from + ": " + *problem + " (the nonzero speed factors)");
    const auto tasks = checked_product(
        {ceil_div(pr.m, pr.tile), ceil_div(pr.n, pr.tile), ceil_div(pr.k, pr.tile)});
    if (std::int64_t(working.size()) > *tasks)
      throw Error("--ranks " + std::to_string(P) + ": " + std::to_string(working.size()) +
                  " ranks with work but only " + std::to_string(*tasks) + " tile tasks (" +
                  d.at("problem.tile") + "): use a smaller problem.tile or fewer ranks");
  }
  const double mean_factor = std::accumulate(factors.begin(), factors.end(), 0.0) / P;
  dist::RankPartitionRequest req;
  req.m = pr.m, req.n = pr.n, req.k = pr.k, req.tile = pr.tile;
  for (double f : factors) req.speeds.push_back(o.rank_gflops * f / mean_factor);
  req.aligned = d.mpi.aligned, req.grid = grid, req.block = block;
  req.automatic = d.partition.auto_algorithm || !d.where.count("partition.algorithm");
  req.algorithm = d.partition.algorithm, req.discretization = d.partition.discretization;
  req.bandwidth_gbs = o.bandwidth_gbs, req.elem = elem;
  Stopwatch clock;
  dist::RankPartition rp;
  try {
    rp = dist::choose_rank_partition(req);
  } catch (const std::invalid_argument& e) {
    throw Error(d.location("partition.algorithm") + ": the rank partition of " +
                fmt::format("{}x{}x{}", pr.m, pr.n, pr.k) + " among " + std::to_string(P) +
                " ranks: " + e.what());
  }
  const double partition_s = clock.seconds();
  const partition::TileExtent tiles{rp.order.i.size(), rp.order.j.size(), rp.order.k.size()};
  std::vector<partition::TileZone> working;
  std::vector<double> working_speeds;
  for (int r = 0; r < P; ++r)
    if (factors[std::size_t(r)] > 0)
      working.push_back(rp.zones[std::size_t(r)]),
          working_speeds.push_back(factors[std::size_t(r)]);
  const double imbalance = partition::measure(working, working_speeds, tiles).imbalance;
  const auto& traffic = rp.traffic;
  const auto summary = dist::summarize(traffic, pr.m, pr.n, pr.k);
  const double model_s = rp.predicted_s;
  double compute_s = 0, comm_s = 0;
  for (int r = 0; r < P; ++r) {
    const auto& t = traffic[std::size_t(r)];
    if (t.flops > 0) compute_s = std::max(compute_s, t.flops / (req.speeds[std::size_t(r)] * 1e9));
    comm_s = std::max(comm_s, t.received() * double(elem) / (o.bandwidth_gbs * 1e9));
  }
  const double flops = 2.0 * double(pr.m) * double(pr.n) * double(pr.k);
  const double time_s = model_s;
  const int idle =
      int(std::count_if(traffic.begin(), traffic.end(), [](auto& t) { return t.tasks == 0; }));

  std::cout << fmt::format(
      "simulate   {} ranks, {}, {} on {}x{}x{} tiles of {}, m={} n={} k={} {}\n", P,
      d.mpi.aligned ? std::string("aligned layout")
                    : fmt::format("block-cyclic grid {}, block {}", dist::describe(grid), block),
      rp.name, tiles[0], tiles[1], tiles[2], pr.tile, pr.m, pr.n, pr.k,
      deck::to_string(pr.precision));
  for (std::size_t c = 0; c < std::min<std::size_t>(rp.candidates.size(), 6); ++c)
    std::cout << fmt::format("{}  {:<48} model {:.4g} s, most received {:.4g} B\n",
                             c == 0 ? "candidate" : "         ", rp.candidates[c].name,
                             rp.candidates[c].predicted_s,
                             rp.candidates[c].received_max * double(elem));
  std::cout << fmt::format(
      "partition  {:.3f} s among ranks (candidates and model); imbalance {:.2f}%; {} rank(s) "
      "without work\n",
      partition_s, 100 * imbalance, idle);
  if (o.per_rank) {
    std::cout << fmt::format("{:>6} {:>7} {:>10} {:>12} {:>12} {:>12} {:>12} {:>12}\n", "rank",
                             "speed", "tasks", "A in B", "B in B", "C in B", "received B",
                             "footprint B");
    for (int r = 0; r < P; ++r) {
      const auto& t = traffic[std::size_t(r)];
      const double e = double(elem);
      std::cout << fmt::format(
          "{:>6} {:>7.3g} {:>10.0f} {:>12.4g} {:>12.4g} {:>12.4g} {:>12.4g} {:>12.4g}\n", r,
          factors[std::size_t(r)], t.tasks, t.a_in * e, t.b_in * e, t.c_in * e, t.received() * e,
          t.footprint() * e);
    }
  }
  dist::print_communication(std::cout, summary, summary, elem);
  std::cout << fmt::format(
      "model time {:.4g} s (slowest rank: compute then receive; compute at most {:.4g} s, "
      "receive at most {:.4g} s), {:.4g} GFLOP/s (assumed {} GFLOP/s per unit-speed rank, {} GB/s "
      "per rank, no overlap)\n",
      time_s, compute_s, comm_s, flops / time_s / 1e9, o.rank_gflops, o.bandwidth_gbs);

  if (!o.json.empty()) {
    nlohmann::json j;
    j["format"] = "cuboid simulate record 1";
    j["deck"] = d.path;
    j["problem"] = {{"m", pr.m},
                    {"n", pr.n},
                    {"k", pr.k},
                    {"tile", pr.tile},
                    {"precision", deck::to_string(pr.precision)}};
    nlohmann::json cands = nlohmann::json::array();
    for (const auto& c : rp.candidates)
      cands.push_back({{"name", c.name},
                       {"model_s", c.predicted_s},
                       {"received_max_bytes", c.received_max * double(elem)}});
    j["partition"] = {
        {"algorithm",
         req.automatic ? std::string("auto") : std::string(partition::to_string(req.algorithm))},
        {"chosen", rp.name},
        {"candidates", cands},
        {"discretization", partition::to_string(d.partition.discretization)},
        {"seconds", partition_s},
        {"imbalance", imbalance}};
    j["ranks"] = P;
    j["layout"] = d.mpi.aligned ? "aligned" : "block-cyclic";
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
  CLI::Option* json =
      cmd->add_option("--json", opt->json, "Write the figures as JSON to this file");
  cmd->add_flag("--per-rank", opt->per_rank, "Print one line per rank");
  cmd->callback([opt, json] {
    const deck::Deck d = deck::load_deck(opt->deck, opt->overrides);
    opt->json_given = json->count() > 0;
    if (opt->json_given) check_output_path("--json", opt->json);
    simulate(d, *opt);
  });
}

}  // namespace cuboid::app
