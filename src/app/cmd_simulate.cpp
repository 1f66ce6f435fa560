// `cuboid simulate DECK --ranks P`: what the MPI layer would do on P ranks -- rank-level
// partition, block-cyclic layout, elements each rank moves, bounds -- without GEMM or MPI.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <numeric>

#include "app/commands.hpp"
#include "app/estimates.hpp"
#include "deck/deck.hpp"
#include "layout/comm_report.hpp"
#include "layout/model.hpp"
#include "layout/rank_partition.hpp"
#include "layout/rank_zones.hpp"
#include "partition/metrics.hpp"
#include "partition/speeds.hpp"
#include "report/run_report.hpp"
#include "util/atomic_output.hpp"
#include "util/checked.hpp"
#include "util/error.hpp"
#include "util/host_memory.hpp"
#include "util/timer.hpp"

namespace cuboid::app {
namespace {

// Per-rank speed factors: --speeds repeated cyclically, else mpi.rank_speeds when it has P
// entries, else equal.
std::vector<double> rank_factors(const deck::Deck& d, const SimulateOptions& o) {
  const int P = o.ranks;
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
  return factors;
}

// The block-cyclic process grid: the deck's mpi.grid if it gives one, else the squarest of P.
layout::ProcessGrid process_grid(const deck::Deck& d, int P) {
  layout::ProcessGrid grid = layout::near_square_grid(P);
  if (!d.mpi.aligned && !d.mpi.grid.empty()) {
    grid = layout::ProcessGrid{d.mpi.grid[0], d.mpi.grid[1]};
    if (grid.size() != P)
      throw Error(d.location("mpi.grid") + ": mpi.grid " + layout::describe(grid) + " has " +
                  std::to_string(grid.size()) + " processes but --ranks is " + std::to_string(P));
  }
  return grid;
}

// Whether every candidate partition is tried (the deck names no algorithm, or asks for auto).
bool automatic_algorithm(const deck::Deck& d) {
  return d.partition.auto_algorithm || !d.where.count("partition.algorithm");
}

// Refuses, before building it, a rank partition larger than this host's memory.
void require_partition_memory(const deck::Deck& d, int P) {
  const auto& pr = d.problem;
  const std::int64_t M = ceil_div(pr.m, pr.tile), N = ceil_div(pr.n, pr.tile),
                     K = ceil_div(pr.k, pr.tile);
  require_host_memory(rank_partition_bytes(P, M, N, K, d.mpi.aligned, automatic_algorithm(d)),
                      "--ranks " + std::to_string(P),
                      std::to_string(P) + " ranks on " + std::to_string(M) + "x" +
                          std::to_string(N) + "x" + std::to_string(K) +
                          " tiles: the rank partition",
                      "use fewer --ranks or a larger problem.tile");
}

// Factors that cannot be partitioned are the fault of where they came from: --speeds,
// mpi.rank_speeds or (equal factors) --ranks.
void check_factors(const deck::Deck& d, const SimulateOptions& o,
                   const std::vector<double>& factors) {
  const auto& pr = d.problem;
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
  const auto tasks =
      checked_product({ceil_div(pr.m, pr.tile), ceil_div(pr.n, pr.tile), ceil_div(pr.k, pr.tile)});
  if (std::int64_t(working.size()) > *tasks)
    throw Error("--ranks " + std::to_string(o.ranks) + ": " + std::to_string(working.size()) +
                " ranks with work but only " + std::to_string(*tasks) + " tile tasks (" +
                d.at("problem.tile") + "): use a smaller problem.tile or fewer ranks");
}

// What one simulation chose and predicted: the figures its summary and its record show.
struct Simulation {
  std::vector<double> factors;  // per-rank speed factors, as given
  layout::ProcessGrid grid;
  std::int64_t block = 0;
  std::size_t elem = 0;  // bytes per element
  layout::RankPartitionRequest req;
  layout::RankPartition rp;
  partition::TileExtent tiles{};
  double partition_s = 0, imbalance = 0;
  int idle = 0;  // ranks without work
  layout::CommSummary summary;
  // The time model: the longest any rank computes and receives, its run time, the flops.
  double compute_s = 0, comm_s = 0, time_s = 0, flops = 0;
};

// The rank partition exactly as `run` under mpirun chooses it: rank r runs at rank_gflops
// times its factor (relative to the mean), data arrives at bandwidth_gbs.
layout::RankPartitionRequest rank_request(const deck::Deck& d, const SimulateOptions& o,
                                          const Simulation& s) {
  const auto& pr = d.problem;
  const double mean_factor = std::accumulate(s.factors.begin(), s.factors.end(), 0.0) / o.ranks;
  layout::RankPartitionRequest req;
  req.m = pr.m, req.n = pr.n, req.k = pr.k, req.tile = pr.tile;
  for (double f : s.factors) req.speeds.push_back(o.rank_gflops * f / mean_factor);
  req.aligned = d.mpi.aligned, req.grid = s.grid, req.block = s.block;
  // Traffic is counted on the stored operands, whose owners change with the ops.
  req.a_transposed = pr.trans_a != Op::none, req.b_transposed = pr.trans_b != Op::none;
  req.automatic = automatic_algorithm(d);
  req.algorithm = d.partition.algorithm, req.discretization = d.partition.discretization;
  req.bandwidth_gbs = o.bandwidth_gbs, req.elem = s.elem;
  // The node is not this host: a limit applies only where the deck gives one.
  req.memory_limit_bytes = d.mpi.memory_limit_mib * 1048576.0;
  return req;
}

layout::RankPartition choose_partition(const deck::Deck& d, const layout::RankPartitionRequest& req,
                                       int P) {
  try {
    return layout::choose_rank_partition(req);
  } catch (const layout::MemoryLimitTooSmall& e) {
    throw Error(d.location("mpi.memory_limit_mib") + ": " + std::to_string(P) +
                " ranks: " + e.what());
  } catch (const layout::TooCostly& e) {
    throw Error("--ranks " + std::to_string(P) + ": " + e.what() +
                ": use fewer ranks or a larger problem.tile (" + d.at("problem.tile") + ")");
  } catch (const std::invalid_argument& e) {
    const auto& pr = d.problem;
    throw Error(d.location("partition.algorithm") + ": the rank partition of " +
                fmt::format("{}x{}x{}", pr.m, pr.n, pr.k) + " among " + std::to_string(P) +
                " ranks: " + e.what());
  }
}

// The imbalance among the ranks with work, the traffic summary and the time model.
void predict(const deck::Deck& d, const SimulateOptions& o, Simulation& s) {
  const auto& pr = d.problem;
  const int P = o.ranks;
  const auto& rp = s.rp;
  s.tiles = partition::TileExtent{rp.order.i.size(), rp.order.j.size(), rp.order.k.size()};
  std::vector<partition::TileZone> working;
  std::vector<double> working_speeds;
  for (int r = 0; r < P; ++r)
    if (s.factors[std::size_t(r)] > 0)
      working.push_back(rp.zones[std::size_t(r)]),
          working_speeds.push_back(s.factors[std::size_t(r)]);
  s.imbalance = partition::measure(working, working_speeds, s.tiles).imbalance;
  const auto& traffic = rp.traffic;
  s.summary = layout::summarize(traffic, pr.m, pr.n, pr.k);
  for (int r = 0; r < P; ++r) {
    const auto& t = traffic[std::size_t(r)];
    if (t.flops > 0)
      s.compute_s = std::max(s.compute_s, t.flops / (s.req.speeds[std::size_t(r)] * 1e9));
    s.comm_s = std::max(s.comm_s, t.received() * double(s.elem) / (o.bandwidth_gbs * 1e9));
  }
  s.flops = 2.0 * double(pr.m) * double(pr.n) * double(pr.k);
  s.time_s = rp.predicted_s;
  s.idle = int(std::count_if(traffic.begin(), traffic.end(), [](auto& t) { return t.tasks == 0; }));
}

// The memory limit and the candidates it refused that would have received fewer bytes.
void print_memory(std::ostream& os, const layout::RankPartition& rp, std::size_t elem,
                  const deck::Problem& pr) {
  const double peak =
      rp.peak_bytes.empty() ? 0.0 : *std::max_element(rp.peak_bytes.begin(), rp.peak_bytes.end());
  os << fmt::format("memory     predicted peak {} per rank at most ({}), limit {}\n",
                    human_bytes(peak), rp.name,
                    rp.memory_limit_bytes > 0 ? human_bytes(rp.memory_limit_bytes) + " per rank"
                                              : std::string("none"));
  double chosen_received = 0;
  for (const auto& c : rp.candidates)
    if (c.name == rp.name) chosen_received = c.received_max;
  for (const auto& c : rp.candidates)
    if (!c.fits && c.received_max < chosen_received)
      os << fmt::format(
          "refused    {}: would receive {:.4g} B at most (chosen: {:.4g} B) but its predicted "
          "peak {} exceeds the limit {}\n",
          c.name, c.received_max * double(elem), chosen_received * double(elem),
          human_bytes(c.peak_bytes), human_bytes(rp.memory_limit_bytes));
  if (rp.memory_limit_bytes > 0) {
    const double bound = layout::moved_bound_at_limit_bytes(double(pr.m), double(pr.n),
                                                            double(pr.k), double(rp.zones.size()),
                                                            rp.memory_limit_bytes, double(elem));
    os << fmt::format(
        "bound      with {} per rank a rank must receive at least {:.4g} B; the chosen receives "
        "{:.4g} B at most ({:.2f}x)\n",
        human_bytes(rp.memory_limit_bytes), bound, chosen_received * double(elem),
        bound > 0 ? chosen_received * double(elem) / bound : 0.0);
  }
}

// --per-rank: one line per rank, its factor, tasks and the bytes it receives.
void print_per_rank(std::ostream& os, const Simulation& s) {
  os << fmt::format("{:>6} {:>7} {:>10} {:>12} {:>12} {:>12} {:>12} {:>12}\n", "rank", "speed",
                    "tasks", "A in B", "B in B", "C in B", "received B", "footprint B");
  for (std::size_t r = 0; r < s.factors.size(); ++r) {
    const auto& t = s.rp.traffic[r];
    const double e = double(s.elem);
    os << fmt::format(
        "{:>6} {:>7.3g} {:>10.0f} {:>12.4g} {:>12.4g} {:>12.4g} {:>12.4g} {:>12.4g}\n", r,
        s.factors[r], t.tasks, t.a_in * e, t.b_in * e, t.c_in * e, t.received() * e,
        t.footprint() * e);
  }
}

void print_simulation(std::ostream& os, const deck::Deck& d, const SimulateOptions& o,
                      const Simulation& s) {
  const auto& pr = d.problem;
  const auto& rp = s.rp;
  os << fmt::format(
      "simulate   {} ranks, {}, {} on {}x{}x{} tiles of {}, m={} n={} k={} {}{}\n", o.ranks,
      d.mpi.aligned
          ? std::string("aligned layout")
          : fmt::format("block-cyclic grid {}, block {}", layout::describe(s.grid), s.block),
      rp.name, s.tiles[0], s.tiles[1], s.tiles[2], pr.tile, pr.m, pr.n, pr.k,
      deck::to_string(pr.precision),
      pr.trans_a == Op::none && pr.trans_b == Op::none
          ? std::string()
          : fmt::format(", op(A)={} op(B)={}", char(pr.trans_a), char(pr.trans_b)));
  if (!rp.skipped.empty())
    os << fmt::format("skipped    {} candidate(s) too costly to model for {} ranks (first: {})\n",
                      rp.skipped.size(), o.ranks, rp.skipped.front());
  for (std::size_t c = 0; c < std::min<std::size_t>(rp.candidates.size(), 6); ++c)
    os << fmt::format("{}  {:<48} model {:.4g} s, most received {:.4g} B, peak {:.4g} B{}\n",
                      c == 0 ? "candidate" : "         ", rp.candidates[c].name,
                      rp.candidates[c].predicted_s, rp.candidates[c].received_max * double(s.elem),
                      rp.candidates[c].peak_bytes,
                      rp.candidates[c].fits ? "" : " (over the limit)");
  print_memory(os, rp, s.elem, pr);
  os << fmt::format(
      "partition  {:.3f} s among ranks (candidates and model); imbalance {:.2f}%; {} rank(s) "
      "without work\n",
      s.partition_s, 100 * s.imbalance, s.idle);
  if (o.per_rank) print_per_rank(os, s);
  layout::print_communication(os, s.summary, s.summary, s.elem);
  os << fmt::format(
      "model time {:.4g} s (slowest rank: compute then receive; compute at most {:.4g} s, "
      "receive at most {:.4g} s), {:.4g} GFLOP/s (assumed {} GFLOP/s per unit-speed rank, {} GB/s "
      "per rank, no overlap)\n",
      s.time_s, s.compute_s, s.comm_s, s.flops / s.time_s / 1e9, o.rank_gflops, o.bandwidth_gbs);
}

nlohmann::json simulation_json(const deck::Deck& d, const SimulateOptions& o, const Simulation& s) {
  const auto& pr = d.problem;
  nlohmann::json j;
  j["format"] = "cuboid simulate record 1";
  j["deck"] = d.path;
  j["problem"] = {{"m", pr.m},
                  {"n", pr.n},
                  {"k", pr.k},
                  {"tile", pr.tile},
                  {"precision", deck::to_string(pr.precision)},
                  {"trans_a", std::string(1, char(pr.trans_a))},
                  {"trans_b", std::string(1, char(pr.trans_b))}};
  nlohmann::json cands = nlohmann::json::array();
  for (const auto& c : s.rp.candidates)
    cands.push_back({{"name", c.name},
                     {"model_s", c.predicted_s},
                     {"received_max_bytes", c.received_max * double(s.elem)},
                     {"predicted_peak_bytes", c.peak_bytes},
                     {"fits", c.fits},
                     {"slabs_per_box", c.streaming.slabs},
                     {"receive_window", c.streaming.window}});
  j["partition"] = {
      {"algorithm",
       s.req.automatic ? std::string("auto") : std::string(partition::to_string(s.req.algorithm))},
      {"chosen", s.rp.name},
      {"slabs_per_box", s.rp.streaming.slabs},
      {"receive_window", s.rp.streaming.window},
      {"candidates", cands},
      {"discretization", partition::to_string(d.partition.discretization)},
      {"seconds", s.partition_s},
      {"imbalance", s.imbalance}};
  j["ranks"] = o.ranks;
  j["layout"] = d.mpi.aligned ? "aligned" : "block-cyclic";
  j["grid"] = {s.grid.rows, s.grid.cols};
  j["block"] = s.block;
  j["idle_ranks"] = s.idle;
  j["speeds"] = s.factors;
  j["communication"] = layout::communication_json(s.summary, s.summary, s.elem);
  if (s.rp.memory_limit_bytes > 0)
    j["communication"]["moved_bound_at_limit_bytes_per_rank"] = layout::moved_bound_at_limit_bytes(
        double(pr.m), double(pr.n), double(pr.k), double(s.rp.zones.size()),
        s.rp.memory_limit_bytes, double(s.elem));
  j["memory"] = {{"limit_bytes", s.rp.memory_limit_bytes},
                 {"predicted_peak_bytes",
                  s.rp.peak_bytes.empty()
                      ? 0.0
                      : *std::max_element(s.rp.peak_bytes.begin(), s.rp.peak_bytes.end())}};
  j["model"] = {{"compute_s", s.compute_s},     {"communication_s", s.comm_s},
                {"time_s", s.time_s},           {"gflops", s.flops / s.time_s / 1e9},
                {"rank_gflops", o.rank_gflops}, {"bandwidth_gbs", o.bandwidth_gbs}};
  return j;
}

void simulate(const deck::Deck& d, const SimulateOptions& o) {
  const int P = o.ranks;
  Simulation s;
  s.factors = rank_factors(d, o);
  s.grid = process_grid(d, P);
  s.block = d.mpi.block > 0 ? d.mpi.block : d.problem.tile;
  require_partition_memory(d, P);
  s.elem = deck::element_bytes(d.problem.precision);
  check_factors(d, o, s.factors);
  s.req = rank_request(d, o, s);
  Stopwatch clock;
  s.rp = choose_partition(d, s.req, P);
  s.partition_s = clock.seconds();
  predict(d, o, s);
  print_simulation(std::cout, d, o, s);
  if (!o.json.empty()) report::write_json_file(o.json, simulation_json(d, o, s));
}

}  // namespace

void simulate_command(const SimulateOptions& options) {
  const deck::Deck d = deck::load_deck(options.deck, options.overrides);
  if (options.json_given) check_output_path("--json", options.json);
  simulate(d, options);
}

}  // namespace cuboid::app
