#include "app/run_distributed.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <numeric>
#include <sstream>

#include "app/estimates.hpp"
#include "app/kokkos_session.hpp"
#include "app/records.hpp"
#include "app/run_command.hpp"
#include "app/setup.hpp"
#include "layout/comm_report.hpp"
#include "mpi/communicator.hpp"
#include "mpi/runner.hpp"
#include "partition/metrics.hpp"
#include "report/kokkos_facts.hpp"
#include "report/provenance.hpp"
#include "report/run_report.hpp"
#include "util/atomic_output.hpp"
#include "util/checked.hpp"
#include "util/error.hpp"
#include "util/host_memory.hpp"
#include "util/timer.hpp"
#include "util/trace.hpp"

namespace cuboid::app {
namespace {

struct Stats {
  double min = 0, mean = 0, max = 0;
};

Stats stats_of(const std::vector<double>& v) {
  Stats s;
  if (v.empty()) return s;
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
  return s;
}

nlohmann::json to_json(const Stats& s) {
  return {{"min", s.min}, {"mean", s.mean}, {"max", s.max}};
}

// Ranks of this job on this node, as the launcher says (1 when it does not).
double ranks_on_this_node() {
  for (const char* v : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"})
    if (const char* s = std::getenv(v); s && std::atoi(s) > 0) return std::atoi(s);
  return 1;
}

// mpi.memory_limit_mib, else this rank's share of what its node has available.
double memory_limit_bytes(const deck::Deck& d) {
  if (d.mpi.memory_limit_mib > 0) return d.mpi.memory_limit_mib * 1048576.0;
  return double(host_memory_available()) / ranks_on_this_node();
}

mpi::DistSettings settings_of(const deck::Deck& d, exec::Fault fault) {
  const auto& pr = d.problem;
  mpi::DistSettings s;
  s.m = pr.m, s.n = pr.n, s.k = pr.k, s.tile = pr.tile;
  s.op_a = pr.trans_a, s.op_b = pr.trans_b;
  s.alpha = pr.alpha, s.beta = pr.beta, s.seed = pr.seed;
  s.alpha_im = pr.alpha_im, s.beta_im = pr.beta_im;
  s.c_init = pr.c_init;
  const deck::ProductSettings set = deck::product_settings(d);
  mpi::set_rank_partition(s, set.rank_algorithm, set.rank_speeds, set.bandwidth_gbs);
  s.discretization = d.partition.discretization;
  s.aligned = d.mpi.aligned;
  s.grid = d.mpi.grid;
  s.block = d.mpi.block;
  s.repetitions = d.run.repetitions, s.warmup = d.run.warmup, s.validate = d.run.validate;
  s.full_check_max = d.mpi.full_check_max;
  s.memory_limit_bytes = memory_limit_bytes(d);
  s.memory_limit_origin = d.mpi.memory_limit_mib > 0
                              ? "mpi.memory_limit_mib"
                              : "default: the node's available memory over its ranks";
  s.fault = fault;
  return s;
}

// What MPI delivered, per rank, beside the model; `agrees`: MPI, the exchange's counts and the
// model say the same everywhere.
std::vector<layout::RankTraffic> measured_traffic(const mpi::DistOutcome& out, double elem,
                                                  bool& agrees) {
  std::vector<layout::RankTraffic> measured;
  agrees = true;
  for (std::size_t r = 0; r < out.per_rank.size(); ++r) {
    const mpi::RankBytes& b = out.per_rank[r].bytes;
    const auto& m = out.partition.traffic[r];
    layout::RankTraffic t = m;  // footprint, tasks and flops are the model's
    t.a_in = b.a_recv / elem, t.b_in = b.b_recv / elem;
    t.c_in = b.c_recv / elem, t.c_out = b.c_sent / elem;
    t.a_out = b.a_sent / elem, t.b_out = b.b_sent / elem;
    if (b.recv_mpi != m.received() * elem || b.recv_mpi != t.received() * elem) agrees = false;
    measured.push_back(t);
  }
  return measured;
}

// One column of the ranks' figures, e.g. column(out, &RankFigures::phases, &RankPhases::total_s).
template <class Group, class Field>
std::vector<double> column(const mpi::DistOutcome& out, Group mpi::RankFigures::*group,
                           Field field) {
  std::vector<double> v;
  for (const auto& r : out.per_rank) v.push_back(r.*group.*field);
  return v;
}

void record_validation(report::RunRecord& rec, const mpi::DistOutcome& out) {
  const auto& val = out.validation;
  rec.validation_performed = out.validated;
  rec.validation_passed = val.passed;
  // The summary line shows the check whose worst error is largest relative to its bound.
  auto ratio = [](double error, double bound) {
    return std::isfinite(error) && bound > 0 ? error / bound
                                             : std::numeric_limits<double>::infinity();
  };
  rec.validation_error = val.error;
  rec.validation_bound = val.bound;
  if (out.validated) {
    double worst = ratio(val.error, val.bound);
    if (ratio(val.sampled_error, val.sampled_bound) > worst)
      worst = ratio(val.sampled_error, val.sampled_bound), rec.validation_error = val.sampled_error,
      rec.validation_bound = val.sampled_bound;
    if (val.full_performed && ratio(val.full_error, val.full_bound) > worst)
      rec.validation_error = val.full_error, rec.validation_bound = val.full_bound;
  }
  rec.validation_method = val.method;
}

// The record's common part: the deck, the partition's quality, times, every rank's processors.
report::RunRecord record_of(const deck::Deck& d, const mpi::DistSettings& s,
                            const mpi::DistOutcome& out, ScalarType type) {
  const auto& rank_part = out.partition;
  const partition::TileExtent tiles{rank_part.order.i.size(), rank_part.order.j.size(),
                                    rank_part.order.k.size()};
  const double total_tasks = double(tiles[0]) * double(tiles[1]) * double(tiles[2]);
  const double total_speed = std::accumulate(out.rank_speeds.begin(), out.rank_speeds.end(), 0.0);
  std::vector<partition::TileZone> working;
  std::vector<double> working_speeds;
  for (std::size_t r = 0; r < out.rank_speeds.size(); ++r)
    if (out.rank_speeds[r] > 0)
      working.push_back(rank_part.zones[r]), working_speeds.push_back(out.rank_speeds[r]);
  const auto metrics = partition::measure(working, working_speeds, tiles);

  report::RunRecord rec;
  report::describe_deck(rec, d);
  rec.algorithm = s.automatic ? "auto" : std::string(partition::to_string(s.algorithm));
  rec.ratio_to_lower_bound = metrics.ratio, rec.ratio_plain = metrics.ratio_plain,
  rec.imbalance = metrics.imbalance;
  for (const auto& z : rank_part.zones)
    for (const auto& b : z)
      if (!b.empty() && (b.lo[2] != 0 || b.hi[2] != tiles[2])) rec.k_split = true;
  record_times(rec, out.times_s, gemm_flops(type, s.m, s.n, s.k));
  rec.calibration_s =
      stats_of(column(out, &mpi::RankFigures::phases, &mpi::RankPhases::calibrate_s)).max;
  rec.partition_s =
      stats_of(column(out, &mpi::RankFigures::phases, &mpi::RankPhases::partition_s)).max;
  rec.reduce_s = stats_of(column(out, &mpi::RankFigures::phases, &mpi::RankPhases::reduce_s)).max;
  for (const auto& r : out.per_rank) {
    // A steal's victim is a processor of the same rank: its index in the record's list of every
    // rank's processors starts after the earlier ranks' ones.
    const int first = int(rec.processors.size());
    for (const auto& p : r.processors) {
      report::ProcessorRecord q = processor_record(p, total_speed, total_tasks, r.speed_factor);
      q.name = fmt::format("{}:{}", r.rank, p.name);
      for (auto& steal : q.steals) steal.victim += first;
      rec.processors.push_back(q);
    }
  }
  report::describe_process(rec);
  record_validation(rec, out);
  return rec;
}

// The layout and the rank partition: what was chosen, the runners-up, and the candidates the
// memory limit refused although they would have received less.
void print_partition(const mpi::DistSettings& s, const mpi::DistOutcome& out,
                     const layout::CommSummary& model_sum, double elem) {
  const auto& rank_part = out.partition;
  const int P = out.ranks;
  const int idle = int(std::count(out.rank_speeds.begin(), out.rank_speeds.end(), 0.0));
  const std::string layout =
      s.aligned
          ? "aligned (each tile starts on a rank whose zone uses it)"
          : fmt::format("block-cyclic {} grid, blocks of {} (ScaLAPACK DESC_C on rank 0: [{}])",
                        layout::describe(rank_part.dist.grid),
                        rank_part.dist.c.block_cyclic().row_block(),
                        fmt::join(rank_part.dist.c.block_cyclic().descriptor(0), ","));
  std::cout << fmt::format("mpi        {} ranks, {}; {} rank(s) without work\n", P, layout, idle);
  std::cout << fmt::format(
      "rank part. {} ({}): model {:.4g} s, most received {:.4g} B{}\n", rank_part.name,
      s.automatic ? "auto, " + std::to_string(rank_part.candidates.size()) + " candidates"
                  : "given",
      rank_part.predicted_s, model_sum.received_max * elem,
      rank_part.order.name == "natural" ? "" : "; tiles ordered " + rank_part.order.name);
  std::cout << "inputs     " << layout::describe(rank_part.streaming) << "\n";
  for (std::size_t c = 1; c < std::min<std::size_t>(rank_part.candidates.size(), 4); ++c)
    std::cout << fmt::format(
        "           runner-up {}: model {:.4g} s, most received {:.4g} B, peak {:.4g} B{}\n",
        rank_part.candidates[c].name, rank_part.candidates[c].predicted_s,
        rank_part.candidates[c].received_max * elem, rank_part.candidates[c].peak_bytes,
        rank_part.candidates[c].fits ? "" : " (over the limit)");
}

void print_refused(const layout::RankPartition& rank_part, const layout::CommSummary& model_sum,
                   double elem) {
  for (const auto& c : rank_part.candidates)
    if (!c.fits && c.received_max < model_sum.received_max)
      std::cout << fmt::format(
          "refused    {}: would receive {:.4g} B at most, but its predicted peak {} exceeds the "
          "limit\n",
          c.name, c.received_max * elem, human_bytes(c.peak_bytes));
}

// What a rank that starts with its share must receive with the limit's memory (the bound of
// "Red-blue pebbling revisited" at S = the limit); 0 without a limit.
double bound_at_limit(const mpi::DistSettings& s, const mpi::DistOutcome& out, double elem) {
  return layout::moved_bound_at_limit_bytes(double(s.m), double(s.n), double(s.k),
                                            double(out.ranks), out.partition.memory_limit_bytes,
                                            elem);
}

// With a memory limit, that bound beside what the partition receives.
void print_bound_at_limit(const mpi::DistSettings& s, const mpi::DistOutcome& out,
                          const layout::CommSummary& model_sum, double elem) {
  const double limit = out.partition.memory_limit_bytes;
  if (limit <= 0) return;
  const double bound = bound_at_limit(s, out, elem);
  std::cout << fmt::format(
      "bound      with {} per rank a rank must receive at least {:.4g} B; this partition's most: "
      "{:.4g} B ({:.2f}x)\n",
      human_bytes(limit), bound, model_sum.received_max * elem,
      bound > 0 ? model_sum.received_max * elem / bound : 0.0);
}

// The lines the distributed run adds to the summary: layout, rank partition, a row per rank.
void print_ranks(const mpi::DistSettings& s, const mpi::DistOutcome& out,
                 const layout::CommSummary& model_sum, bool model_agrees, double elem) {
  const auto& rank_part = out.partition;
  const double total_tasks = double(rank_part.order.i.size()) * double(rank_part.order.j.size()) *
                             double(rank_part.order.k.size());
  const double total_speed = std::accumulate(out.rank_speeds.begin(), out.rank_speeds.end(), 0.0);
  print_partition(s, out, model_sum, elem);
  double peak = 0, metered = 0, validating = 0, resident = 0;
  for (const auto& r : out.per_rank) {
    peak = std::max(peak, r.memory.predicted_peak_bytes);
    metered = std::max(metered, r.memory.allocated_peak_bytes);
    validating = std::max(validating, r.memory.validation_peak_bytes);
    resident = std::max(resident, r.memory.peak_resident_bytes - r.memory.baseline_bytes);
  }
  std::cout << fmt::format(
      "memory     limit {} per rank ({}); predicted peak {} at most, metered {} ({} with "
      "validation); resident peak {} above the start\n",
      human_bytes(rank_part.memory_limit_bytes), s.memory_limit_origin, human_bytes(peak),
      human_bytes(metered), human_bytes(validating), human_bytes(resident));
  print_refused(rank_part, model_sum, elem);
  print_bound_at_limit(s, out, model_sum, elem);
  std::cout << fmt::format(
      "{:>5} {:>9} {:>7} {:>7} {:>6} {:>9} {:>9} {:>9} {:>10} {:>10} {:>10} {:>10}\n", "rank",
      "GFLOP/s", "target", "share", "pieces", "exch s", "comp s", "red s", "recv (MPI)", "model",
      "sent", "peak RSS");
  for (const auto& r : out.per_rank)
    std::cout << fmt::format(
        "{:>5} {:>9.2f} {:>6.1f}% {:>6.1f}% {:>6} {:>9.4f} {:>9.4f} {:>9.4f} {:>10.4g} {:>10.4g} "
        "{:>10.4g} {:>10.4g}\n",
        r.rank, r.speed_gflops, total_speed > 0 ? 100 * r.speed_gflops / total_speed : 0.0,
        100 * r.tasks / total_tasks, r.pieces, r.phases.exchange_s, r.phases.compute_s,
        r.phases.reduce_s, r.bytes.recv_mpi, r.bytes.model_recv, r.bytes.sent(),
        r.memory.peak_resident_bytes);
  if (!model_agrees)
    std::cout << "WARNING    the bytes MPI delivered differ from the traffic model's on some rank "
                 "(columns 'recv (MPI)' and 'model')\n";
}

// Per-rank phase statistics, printed as one line and returned for the record.
nlohmann::json print_phases(const mpi::DistOutcome& out) {
  using mpi::RankPhases;
  const std::pair<const char*, double RankPhases::*> fields[] = {
      {"calibrate_s", &RankPhases::calibrate_s}, {"partition_s", &RankPhases::partition_s},
      {"exchange_s", &RankPhases::exchange_s},   {"compute_s", &RankPhases::compute_s},
      {"reduce_s", &RankPhases::reduce_s},       {"total_s", &RankPhases::total_s}};
  nlohmann::json phases;
  std::string line = "phases     per rank min/mean/max s:";
  for (const auto& [key, field] : fields) {
    const Stats st = stats_of(column(out, &mpi::RankFigures::phases, field));
    phases[key] = to_json(st);
    line += fmt::format(" {} {:.4f}/{:.4f}/{:.4f}",
                        std::string(key).substr(0, std::string(key).size() - 2), st.min, st.mean,
                        st.max);
  }
  std::cout << line << "\n";
  return phases;
}

void print_checks(const mpi::DistValidation& val) {
  std::cout << fmt::format(
      "           sampled rows: {:.0f} elements, {:.0f} beyond their bounds; worst |C - C_ref| = "
      "{:.3e} against its bound {:.3e}\n",
      val.sampled_elements, val.sampled_failed, val.sampled_error, val.sampled_bound);
  if (val.full_performed)
    std::cout << fmt::format(
        "           full check: {:.0f} elements, {:.0f} beyond their bounds; worst |C - C_ref| = "
        "{:.3e} against its bound {:.3e}\n",
        val.full_elements, val.full_failed, val.full_error, val.full_bound);
  else
    std::cout << "           " << val.full_skipped << "\n";
}

// The record's distributed sections: ranks, bytes, communication, rank partition, mpi, checks.
void add_distributed(nlohmann::json& j, const mpi::DistSettings& s, const mpi::DistOutcome& out,
                     const layout::CommSummary& msum, const layout::CommSummary& model_sum,
                     bool model_agrees, double elem) {
  const auto& rank_part = out.partition;
  j["ranks"] = out.per_rank;
  using mpi::RankBytes;
  const std::pair<const char*, double RankBytes::*> fields[] = {
      {"a_sent", &RankBytes::a_sent},     {"a_recv", &RankBytes::a_recv},
      {"b_sent", &RankBytes::b_sent},     {"b_recv", &RankBytes::b_recv},
      {"c_sent", &RankBytes::c_sent},     {"c_recv", &RankBytes::c_recv},
      {"recv_mpi", &RankBytes::recv_mpi}, {"model_recv", &RankBytes::model_recv}};
  for (const auto& [key, field] : fields)
    j["bytes"][key] = to_json(stats_of(column(out, &mpi::RankFigures::bytes, field)));
  j["communication"] = layout::communication_json(msum, model_sum, std::size_t(elem));
  j["communication"]["model_agrees_with_mpi"] = model_agrees;
  if (rank_part.memory_limit_bytes > 0)
    j["communication"]["moved_bound_at_limit_bytes_per_rank"] = bound_at_limit(s, out, elem);
  j["communication"]["mpi_bytes_per_rank_max"] =
      stats_of(column(out, &mpi::RankFigures::bytes, &RankBytes::recv_mpi)).max;
  nlohmann::json cands = nlohmann::json::array();
  for (const auto& c : rank_part.candidates)
    cands.push_back({{"name", c.name},
                     {"model_s", c.predicted_s},
                     {"received_max_bytes", c.received_max * elem},
                     {"moved_max_bytes", c.moved_max * elem},
                     {"predicted_peak_bytes", c.peak_bytes},
                     {"fits", c.fits},
                     {"slabs_per_box", c.streaming.slabs},
                     {"receive_window", c.streaming.window}});
  j["rank_partition"] = {{"chosen", rank_part.name},
                         {"receive_window", rank_part.streaming.window},
                         {"automatic", s.automatic},
                         {"model_s", rank_part.predicted_s},
                         {"received_max_bytes", model_sum.received_max * elem},
                         {"tile_order", rank_part.order.name},
                         {"bandwidth_gbs", s.bandwidth_gbs},
                         {"memory_limit_bytes", rank_part.memory_limit_bytes},
                         {"memory_limit_origin", s.memory_limit_origin},
                         {"candidates", cands}};
  j["mpi"] = {{"ranks", out.ranks},
              {"layout", s.aligned ? "aligned" : "block-cyclic"},
              {"idle_ranks", int(std::count(out.rank_speeds.begin(), out.rank_speeds.end(), 0.0))},
              {"slabs_per_box", rank_part.streaming.slabs}};
  if (!s.aligned) {
    j["mpi"]["grid"] = {rank_part.dist.grid.rows, rank_part.dist.grid.cols};
    j["mpi"]["block"] = rank_part.dist.c.block_cyclic().row_block();
  }
  const auto& val = out.validation;
  j["validation"]["randomized"] = {{"error", val.error}, {"bound", val.bound}};
  j["validation"]["sampled"] = {{"passed", val.sampled_passed},
                                {"elements", val.sampled_elements},
                                {"failed", val.sampled_failed},
                                {"error", val.sampled_error},
                                {"bound", val.sampled_bound}};
  if (val.full_performed)
    j["validation"]["full"] = {
        {"performed", true},         {"passed", val.full_passed}, {"elements", val.full_elements},
        {"failed", val.full_failed}, {"error", val.full_error},   {"bound", val.full_bound}};
  else
    j["validation"]["full"] = {{"performed", false}, {"misses", val.full_skipped}};
}

void print_validation_failure(const mpi::DistValidation& val, exec::Fault fault) {
  std::cerr << fmt::format(
      "cuboid: error: validation failed: max row error {:.3e} against its bound {:.3e}; "
      "sampled rows: {:.0f} of {:.0f} elements beyond their bounds (worst {:.3e} against "
      "{:.3e}){}{}; no JSON record written\n",
      val.error, val.bound, val.sampled_failed, val.sampled_elements, val.sampled_error,
      val.sampled_bound,
      val.full_performed
          ? fmt::format(", full check: {:.0f} of {:.0f} elements beyond their bounds (worst "
                        "{:.3e} against {:.3e})",
                        val.full_failed, val.full_elements, val.full_error, val.full_bound)
          : ", no full check",
      fault != exec::Fault::none ? fmt::format(" (fault injected: {})", exec::to_string(fault))
                                 : "");
}

// Rank 0: the summary, the per-rank table and the JSON record.
template <class Scalar>
int report(const deck::Deck& d, const mpi::DistSettings& s, const mpi::DistOutcome& out,
           const std::string* json, const std::string& speed_model) {
  const auto& pr = d.problem;
  const double elem = double(sizeof(Scalar));
  bool model_agrees = true;
  const auto measured = measured_traffic(out, elem, model_agrees);
  const auto msum = layout::summarize(measured, pr.m, pr.n, pr.k),
             model_sum = layout::summarize(out.partition.traffic, pr.m, pr.n, pr.k);
  report::RunRecord rec = record_of(d, s, out, scalar_type_of<Scalar>());
  rec.speed_model = speed_model;
  report::print_summary(std::cout, rec);
  print_ranks(s, out, model_sum, model_agrees, elem);
  const nlohmann::json phases = print_phases(out);
  layout::print_communication(std::cout, msum, model_sum, std::size_t(elem));
  if (out.validated) print_checks(out.validation);

  nlohmann::json j = report::to_json(rec);
  j["phases"] = phases;
  add_distributed(j, s, out, msum, model_sum, model_agrees, elem);
  report::add_execution(j);  // ranks, nodes, hosts, threads from the ranks' entries

  if (out.validated && !out.validation.passed) {
    print_validation_failure(out.validation, s.fault);
    return kValidationFailed;
  }
  if (json) {
    // Every rank is past its last collective: a failure here is this rank's alone.
    try {
      report::write_json_file(*json, j);
    } catch (const std::exception& e) {
      std::cerr << "cuboid: error: " << e.what() << "\n";
      return 1;
    }
  }
  return 0;
}

// Refuses, before anything is allocated, what would not fit: on rank 0 the rank partition, on
// every rank its share of A, B and C (ranks on one node share its memory).
void check_rank_memory(const deck::Deck& d, const mpi::Communicator& comm, std::size_t elem,
                       bool dry_run) {
  const auto& pr = d.problem;
  const int P = comm.size();
  const std::int64_t M = ceil_div(pr.m, pr.tile), N = ceil_div(pr.n, pr.tile),
                     K = ceil_div(pr.k, pr.tile);
  if (comm.rank() == 0) {
    const bool automatic = d.partition.auto_algorithm || !d.where.count("partition.algorithm");
    require_host_memory(
        rank_partition_bytes(P, M, N, K, d.mpi.aligned, automatic), d.at("problem.tile"),
        std::to_string(P) + " ranks on " + std::to_string(M) + "x" + std::to_string(N) + "x" +
            std::to_string(K) + " tiles: the rank partition",
        "use fewer ranks or a larger problem.tile");
  }
  const double local = ranks_on_this_node();
  const double share =
      double(elem) *
      (double(pr.m) * double(pr.k) + double(pr.k) * double(pr.n) + double(pr.m) * double(pr.n)) /
      double(P);
  // A dry run makes no matrix: it predicts for a machine that may not be this one.
  if (!dry_run)
    require_host_memory(share * local, d.at("problem.m"),
                        "m=" + std::to_string(pr.m) + " n=" + std::to_string(pr.n) +
                            " k=" + std::to_string(pr.k) + " (" + deck::to_string(pr.precision) +
                            ") over " + std::to_string(P) + " ranks, " +
                            std::to_string(int(local)) + " of them on this node, with A, B and C",
                        "use smaller problem.m, problem.n, problem.k or more nodes");
  // Every candidate holds at least the rank's blocks: a smaller limit is refused before
  // calibration (the rank partition names the exact minimum once the speeds are known).
  if (d.mpi.memory_limit_mib > 0 && d.mpi.memory_limit_mib * 1048576.0 < share)
    throw Error(d.location("mpi.memory_limit_mib") + ": " +
                fmt::format("{:g} MiB per rank is less than the rank's share of A, B and C "
                            "alone ({:.1f} MiB for m={} n={} k={} over {} ranks): at least that",
                            d.mpi.memory_limit_mib, share / 1048576.0, pr.m, pr.n, pr.k, P));
}

// A dry run's report: the rank partition and each rank's predicted traffic and memory.
void print_dry_run(const deck::Deck& d, const mpi::DistSettings& s, const mpi::DistOutcome& out,
                   double elem) {
  const auto& pr = d.problem;
  const auto& rank_part = out.partition;
  const auto model_sum = layout::summarize(rank_part.traffic, pr.m, pr.n, pr.k);
  std::cout << fmt::format(
      "dry run    m={} n={} k={}, tile {}, {}, op(A) {} op(B) {}, {} ranks: the rank partition "
      "and its prediction; no matrix made, nothing multiplied\n",
      pr.m, pr.n, pr.k, pr.tile, deck::to_string(pr.precision), char(pr.trans_a), char(pr.trans_b),
      out.ranks);
  print_partition(s, out, model_sum, elem);
  const auto& peaks = rank_part.peak_bytes;
  const auto most = std::max_element(peaks.begin(), peaks.end());
  const auto least = std::min_element(peaks.begin(), peaks.end());
  std::cout << fmt::format(
      "memory     limit {} per rank ({}); predicted peak {} at most (rank {}), {} at least "
      "(rank {}), with the engines' buffers on top\n",
      rank_part.memory_limit_bytes > 0 ? human_bytes(rank_part.memory_limit_bytes) : "none",
      s.memory_limit_origin, human_bytes(most == peaks.end() ? 0.0 : *most), most - peaks.begin(),
      human_bytes(least == peaks.end() ? 0.0 : *least), least - peaks.begin());
  print_refused(rank_part, model_sum, elem);
  print_bound_at_limit(s, out, model_sum, elem);
  std::cout << fmt::format(
      "traffic    received per rank: {:.4g} B at most, {:.4g} B on average (the model's, exact "
      "for a run)\n",
      model_sum.received_max * elem, model_sum.received_mean * elem);
}

// A setting the rank runner refused, named as the deck gives it: the key and where it was set.
template <class Scalar>
std::string deck_name_of(const deck::Deck& d, const mpi::RankProcessors<Scalar>& procs,
                         const std::string& id) {
  namespace setting = mpi::setting;
  if (id == setting::speeds) return speeds_origin(d, procs.speeds);
  // Where the message does not name the key itself, the place alone.
  if (id == setting::rank_algorithm || id == setting::memory_limit) return d.location(deck_key(id));
  return d.at(deck_key(id));
}

template <class Scalar>
int run_rank(const deck::Deck& d, const mpi::Communicator& comm, const std::string* json,
             exec::Fault fault, bool dry_run) {
  mpi::RankProcessors<Scalar> procs;
  std::unique_ptr<pipeline::LocalMultiply<Scalar>> local;
  std::exception_ptr failure;
  // Calibration messages from every rank would interleave: only rank 0 speaks.
  std::ostringstream quiet;
  std::ostream& progress = comm.rank() == 0 ? std::cerr : quiet;
  try {
    check_rank_memory(d, comm, sizeof(Scalar), dry_run);
    const auto specs = processors_of(d);
    Stopwatch clock;
    // With the flops+link model's rates (none under platform.speed_model = "flops"), so that
    // each rank's local plan weighs its copying processors' links as a single run does.
    const pipeline::Calibration calibration = calibration_for<Scalar>(d, specs, false, progress);
    procs.speeds = calibration.speeds;
    procs.calibration_s = clock.seconds();
    procs.engines_before = exec::Engine<Scalar>::created();
    local = pipeline::make_local<Scalar>(specs, calibration,
                                         local_options_for(d, specs, sizeof(Scalar)));
    procs.local = local.get();
  } catch (...) {
    failure = std::current_exception();
  }
  comm.agree(failure);
  mpi::DistSettings s = settings_of(d, fault);
  s.dry_run = dry_run;
  s.rank_info = report::to_json(report::this_process());
  const auto out = mpi::run_distributed<Scalar>(
      s, comm, procs, [&](const std::string& id) { return deck_name_of(d, procs, id); });
  if (dry_run) {
    if (comm.rank() == 0) print_dry_run(d, s, out, double(sizeof(Scalar)));
    return 0;
  }
  if (comm.rank() == 0) {
    const double flops = gemm_flops(scalar_type_of<Scalar>(), s.m, s.n, s.k);
    for (std::size_t r = 0; r < out.times_s.size(); ++r)
      progress << fmt::format("run: repetition {}/{}: {:.4f} s, {:.2f} GFLOP/s ({} ranks)\n", r + 1,
                              out.times_s.size(), out.times_s[r], flops / out.times_s[r] / 1e9,
                              out.ranks);
    return report<Scalar>(d, s, out, json, local->options().rates.empty() ? "flops" : "flops+link");
  }
  return out.validated && !out.validation.passed ? kValidationFailed : 0;
}

// Every rank's events of the run, in one file written by rank 0 (collective).
int write_trace(const mpi::Communicator& comm, const std::string& path) {
  const std::vector<std::string> events = comm.gather(trace::take_events(), 0);
  if (comm.rank() != 0) return 0;
  try {
    trace::write("--trace", path, events);
  } catch (const std::exception& e) {
    std::cerr << "cuboid: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

int run_distributed_command(const RunOptions& o) {
  mpi::MpiSession mpi;
  mpi::Communicator comm;
  const std::string* json = o.json_given ? &o.json : nullptr;
  try {
    deck::Deck d;
    std::exception_ptr failure;
    try {
      d = deck::load_deck(o.deck, o.overrides);
      require_validation_for_fault(d, o.fault);
      with_scalar(d, [](auto) {});  // a precision this build lacks is refused by every rank
      // Only rank 0 writes the record and the trace; their paths are checked before any work.
      if (json && comm.rank() == 0) check_output_path("--json", *json);
      if (!o.trace.empty() && comm.rank() == 0) check_output_path("--trace", o.trace);
    } catch (...) {
      failure = std::current_exception();
    }
    comm.agree(failure);
    if (!o.trace.empty()) {
      trace::set_process(comm.rank(), "rank " + std::to_string(comm.rank()));
      trace::enable();
    }
    KokkosSession kokkos;
    const int status = with_scalar(
        d, [&](auto zero) { return run_rank<decltype(zero)>(d, comm, json, o.fault, o.dry_run); });
    if (o.trace.empty()) return status;
    const int traced = write_trace(comm, o.trace);
    return status != 0 ? status : traced;
  } catch (const mpi::CollectiveFailure& f) {
    if (comm.rank() == 0)
      std::cerr << "cuboid: error" << (f.origin != 0 ? fmt::format(" (rank {})", f.origin) : "")
                << ": " << f.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    // Past the agreed steps the others may be waiting on this rank (mpi::RankFailure): only
    // ending the job releases them.
    comm.abort(e.what());
  }
}

}  // namespace cuboid::app
