// `cuboid run DECK`: deck -> platform -> partition -> discretise -> plan -> execute -> validate
// -> report.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <numeric>

#include "app/auto_partition.hpp"
#include "app/estimates.hpp"
#include "app/kokkos_session.hpp"
#include "app/run_command.hpp"
#include "app/setup.hpp"
#include "exec/engine.hpp"
#include "exec/fault.hpp"
#include "exec/schedule.hpp"
#include "exec/validate.hpp"
#include "partition/metrics.hpp"
#include "report/kokkos_facts.hpp"
#include "report/run_report.hpp"
#include "util/atomic_output.hpp"
#include "util/checked.hpp"
#include "util/error.hpp"
#include "util/host_memory.hpp"
#include "util/timer.hpp"
#if CUBOID_ENABLE_MPI
#include "app/run_distributed.hpp"
#include "dist/communicator.hpp"
#endif

namespace cuboid::app {
namespace {

struct RunOptions {
  std::string deck;
  std::vector<std::string> overrides;
  std::string json;
  bool json_given = false;
  exec::Fault fault = exec::Fault::none;
};

// FNV-1a over the 64-bit words of C: equal hashes across runs mean (up to collisions) bitwise
// equal products, which a fixed plan must give however its copies were timed.
template <class Scalar>
std::string bitwise_hash(const exec::HostMatrix<Scalar>& C) {
  std::uint64_t h = 1469598103934665603ull;
  const auto* bytes = reinterpret_cast<const unsigned char*>(C.data());
  const std::size_t n = C.span() * sizeof(Scalar);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, bytes + i, 8);
    h = (h ^ w) * 1099511628211ull;
  }
  for (; i < n; ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  return fmt::format("{:016x}", h);
}

template <class Scalar>
void run_deck(const deck::Deck& d, const RunOptions& opt) {
  const auto& pr = d.problem;
  std::ostream& progress = std::cerr;
  const std::size_t elem = sizeof(Scalar);

  // Host memory: A, B, C, the original C (for repetitions and validation), the check's own.
  const double matrices =
      double(elem) * (double(pr.m) * double(pr.k) + double(pr.k) * double(pr.n) +
                      2.0 * double(pr.m) * double(pr.n)) +
      (d.run.validate ? exec::validation_bytes(pr.m, pr.n, pr.k, elem) : 0.0);
  const std::string problem = "problem m=" + std::to_string(pr.m) + " n=" + std::to_string(pr.n) +
                              " k=" + std::to_string(pr.k) + " (" + deck::to_string(pr.precision) +
                              ")";
  require_host_memory(matrices, d.at("problem.m"),
                      problem + " with A, B and C" + (d.run.validate ? " and its check" : ""),
                      "use smaller problem.m, problem.n, problem.k");

  auto specs = processors_of(d);
  const partition::TileExtent tiles{ceil_div(pr.m, pr.tile), ceil_div(pr.n, pr.tile),
                                    ceil_div(pr.k, pr.tile)};
  // The deck bounds the task count (at most 10^15), so this product does not overflow.
  const std::int64_t task_count = tiles[0] * tiles[1] * tiles[2];
  if (std::int64_t(specs.size()) > task_count)
    throw Error(d.at("platform.processors") + ": " + std::to_string(specs.size()) +
                " processors but only " + std::to_string(task_count) + " tile task" +
                (task_count == 1 ? "" : "s") + " (" + std::to_string(tiles[0]) + "x" +
                std::to_string(tiles[1]) + "x" + std::to_string(tiles[2]) + " tiles of " +
                std::to_string(pr.tile) + "): list fewer processors or use a smaller problem.tile");

  Stopwatch clock;
  const auto speeds = speeds_for<Scalar>(d, specs, false, progress);
  const double calibration_s = clock.seconds();
  check_speeds(d, speeds);
  std::vector<double> w;
  for (const auto& s : speeds) w.push_back(s.gflops);

  // Partition the tile cuboid, then turn zones into steps.
  clock.restart();
  partition::Algorithm algorithm = d.partition.algorithm;
  partition::Discretization discretization = d.partition.discretization;
  AutoChoice choice;
  if (d.partition.is_auto()) {
    choice = choose_partition(d, specs, w, elem);
    algorithm = choice.algorithm;
    discretization = choice.discretization;
    progress << fmt::format("partition: auto chose {} + {} (model {:.4f} s)\n",
                            partition::to_string(algorithm), partition::to_string(discretization),
                            choice.ranking.front().seconds);
  }
  std::vector<partition::TileZone> zones;
  try {
    zones = partition::partition_tiles(algorithm, discretization, w, tiles);
  } catch (const partition::TooLarge& e) {
    throw Error(d.location("partition.discretization") + ": partition.discretization = \"" +
                std::string(partition::to_string(discretization)) + "\" on " +
                std::to_string(tiles[0]) + "x" + std::to_string(tiles[1]) + "x" +
                std::to_string(tiles[2]) + " tiles: " + e.what());
  } catch (const std::invalid_argument& e) {
    throw Error(d.location("partition.algorithm") + ": partition." +
                std::string(partition::to_string(algorithm)) + " on " + std::to_string(tiles[0]) +
                "x" + std::to_string(tiles[1]) + "x" + std::to_string(tiles[2]) +
                " tiles: " + e.what());
  }
  const double partition_s = clock.seconds();
  const auto metrics = partition::measure(zones, w, tiles);

  exec::PlanOptions popt = plan_options_for(d, specs, elem);
  popt.beta_is_one = pr.beta == 1.0;
  popt.beta_is_zero = pr.beta == 0.0;
  // Stealing needs steps small enough to move and able to run on any processor; run.task_tiles
  // gives a static run the same plan (for comparisons, bit for bit).
  const exec::Strategy strategy = *exec::parse_strategy(deck::to_string(d.run.schedule));
  std::int64_t task_tiles = d.run.task_tiles;
  exec::Plan plan;
  try {
    if (strategy != exec::Strategy::static_plan || task_tiles > 0)
      task_tiles = exec::plan_for_stealing(popt, zones, pr.m, pr.n, pr.k, pr.tile, task_tiles);
    plan = exec::make_plan(zones, pr.m, pr.n, pr.k, pr.tile, popt);
  } catch (const std::runtime_error& e) {
    throw Error(d.location("platform.memory_budget_mib") + ": platform.memory_budget_mib: " +
                e.what() + " of " + std::to_string(pr.tile) + " (problem.tile)");
  }
  if (opt.fault == exec::Fault::drop_task && !exec::drop_one_task(plan))
    throw Error(
        "--inject-fault drop-task: no tile task can be left out without also leaving out "
        "beta (the problem is one tile deep): use problem.k > problem.tile or beta = 1");
  // What the engine allocates on the host: partial C buffers, and for each staged processor its
  // buffers and staging (two of each panel and block), for a device its host staging.
  double partial_bytes = 0, staged_bytes = 0;
  for (const auto& b : plan.partials) partial_bytes += double(b.c.rows()) * double(b.c.cols());
  // With shared steps, each processor's buffers fit the largest steps of any processor.
  exec::ProcessorPlan largest;
  for (const auto& pp : plan.processors) {
    largest.max_a = std::max(largest.max_a, pp.max_a);
    largest.max_b = std::max(largest.max_b, pp.max_b);
    largest.max_c = std::max(largest.max_c, pp.max_c);
  }
  for (std::size_t q = 0; q < specs.size(); ++q) {
    const auto& pp = plan.processors[q];
    const exec::ProcessorPlan& sized = popt.shared_steps ? largest : pp;
    const double panels = 2.0 * (double(sized.max_a) + double(sized.max_b) + double(sized.max_c));
    if (specs[q].kind == platform::ProcessorKind::staged)
      staged_bytes +=
          double(popt.shared_steps ? exec::shared_buffer_elements(plan, popt.buffer_cost[q])
                                   : exec::buffer_elements(pp, popt.buffer_cost[q]));
    if (specs[q].kind == platform::ProcessorKind::device) staged_bytes += panels;
  }
  partial_bytes *= double(elem), staged_bytes *= double(elem);
  if (partial_bytes >= staged_bytes)
    require_host_memory(matrices + partial_bytes + staged_bytes, d.at("partition.algorithm"),
                        problem + " with the partial C buffers of a k-split partition (" +
                            human_bytes(partial_bytes) + ")",
                        "use fewer processors or an algorithm that splits k less");
  else
    require_host_memory(
        matrices + partial_bytes + staged_bytes, d.at("platform.memory_budget_mib"),
        problem + " with the staged processors' buffers (" + human_bytes(staged_bytes) + ")",
        "give a smaller platform.memory_budget_mib");

  // Matrices, generated from the seed.
  exec::HostMatrix<Scalar> A(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::A"), pr.m,
                             pr.k);
  exec::HostMatrix<Scalar> B(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::B"), pr.k,
                             pr.n);
  exec::HostMatrix<Scalar> C0(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::C0"), pr.m,
                              pr.n);
  exec::HostMatrix<Scalar> C(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::C"), pr.m,
                             pr.n);
  exec::fill_random(A, pr.seed, exec::MatrixId::A);
  exec::fill_random(B, pr.seed, exec::MatrixId::B);
  switch (pr.c_init) {
    case deck::CInit::random:
      exec::fill_random(C0, pr.seed, exec::MatrixId::C);
      break;
    case deck::CInit::zero:
      exec::fill_value(C0, Scalar(0));
      break;
    case deck::CInit::nan:
      exec::fill_value(C0, std::numeric_limits<Scalar>::quiet_NaN());
      break;
  }

  // The run's one set of workers (threads, buffers, device queues), made once.
  exec::Engine<Scalar> engine(workers_for<Scalar>(specs));
  exec::ScheduleOptions schedule;
  schedule.strategy = strategy;
  schedule.speeds = w;
  for (const auto& s : specs) schedule.link_gbs.push_back(s.link_gbs);
  schedule.seed = pr.seed;
  engine.set_schedule(schedule);
  engine.reserve(plan);
  const Scalar alpha = Scalar(pr.alpha), beta = Scalar(pr.beta);
  std::vector<exec::RunResult> results;
  std::vector<std::string> c_hashes;
  const int total = d.run.warmup + d.run.repetitions;
  for (int r = 0; r < total; ++r) {
    Kokkos::deep_copy(C, C0);
    auto res = engine.run(plan, A, B, C, alpha, beta);
    if (opt.fault == exec::Fault::corrupt) C(0, 0) = exec::flip_exponent_bit(C(0, 0));
    c_hashes.push_back(bitwise_hash(C));
    const bool warm = r < d.run.warmup;
    progress << fmt::format("run: {} {}/{}: {:.4f} s, {:.2f} GFLOP/s\n",
                            warm ? "warm-up" : "repetition", warm ? r + 1 : r - d.run.warmup + 1,
                            warm ? d.run.warmup : d.run.repetitions, res.seconds,
                            2.0 * double(pr.m) * double(pr.n) * double(pr.k) / res.seconds / 1e9);
    if (!warm) results.push_back(std::move(res));
  }

  report::RunRecord rec;
  report::describe_deck(rec, d);
  rec.algorithm = std::string(partition::to_string(algorithm));
  rec.discretization = std::string(partition::to_string(discretization));
  for (const auto& e : choice.ranking) {
    report::PartitionCandidate c;
    c.algorithm = std::string(partition::to_string(e.algorithm));
    c.discretization = std::string(partition::to_string(e.discretization));
    c.model_s = e.seconds, c.reduction_s = e.reduction_s, c.max_boxes = e.max_boxes;
    c.failed = e.failed;
    // The figures of the processor that finishes last in the model.
    for (std::size_t q = 0; q < e.compute_s.size(); ++q)
      if (e.compute_s[q] + e.copy_s[q] >= c.compute_s + c.copy_s)
        c.compute_s = e.compute_s[q], c.copy_s = e.copy_s[q];
    rec.partition_candidates.push_back(c);
  }
  rec.partition_model = choice.model;
  rec.ratio_to_lower_bound = metrics.ratio;
  rec.ratio_plain = metrics.ratio_plain;
  rec.imbalance = metrics.imbalance;
  rec.k_split = plan.k_split;
  rec.partial_buffers = int(plan.partials.size());
  for (const auto& b : plan.partials) rec.partial_bytes += double(b.c.rows() * b.c.cols()) * elem;
  rec.calibration_s = calibration_s, rec.partition_s = partition_s;
  rec.task_tiles = task_tiles;

  std::vector<std::size_t> order(results.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](auto a, auto b) { return results[a].seconds < results[b].seconds; });
  for (const auto& res : results) rec.times_s.push_back(res.seconds);
  const exec::RunResult& med = results[order[order.size() / 2]];
  rec.min_s = results[order.front()].seconds;
  rec.max_s = results[order.back()].seconds;
  rec.median_s = med.seconds;
  if (order.size() % 2 == 0)
    rec.median_s = 0.5 * (results[order[order.size() / 2 - 1]].seconds + med.seconds);
  rec.gflops = 2.0 * double(pr.m) * double(pr.n) * double(pr.k) / rec.median_s / 1e9;
  rec.prescale_s = med.prescale_s, rec.reduce_s = med.reduce_s;
  rec.units = med.units;

  const double total_speed = std::accumulate(w.begin(), w.end(), 0.0);
  const double total_tasks = double(tiles[0]) * double(tiles[1]) * double(tiles[2]);
  for (std::size_t q = 0; q < specs.size(); ++q) {
    report::ProcessorRecord p;
    const auto& pp = plan.processors[q];
    const auto& ws = med.workers[q];
    p.name = specs[q].name, p.kind = platform::to_string(specs[q].kind), p.space = specs[q].space;
    p.threads = specs[q].threads;
    p.speed_gflops = w[q], p.speed_source = speeds[q].source;
    p.target_share = w[q] / total_speed;
    p.volume = pp.tasks, p.volume_share = pp.tasks / total_tasks;
    p.pieces = pp.pieces, p.steps = ws.steps;
    p.busy_s = ws.busy_s, p.copy_s = ws.copy_s, p.stall_s = ws.stall_s, p.finish_s = ws.finish_s;
    p.h2d_bytes = ws.h2d_bytes, p.d2h_bytes = ws.d2h_bytes, p.flops = ws.flops;
    p.predicted_s = pp.flops / (w[q] * 1e9);
    p.stolen_steps = ws.stolen_steps, p.lost_steps = ws.lost_steps;
    p.stolen_flops = ws.stolen_flops, p.steal_bytes = ws.steal_bytes;
    for (const exec::StealRecord& r : ws.steals)
      p.steals.push_back({r.at_s, r.victim, r.steps, r.flops, r.bytes, r.thief_done_s,
                          r.victim_done_s, r.thief_gflops, r.victim_gflops, r.idle});
    rec.processors.push_back(p);
  }
  report::describe_process(rec);
  rec.c_hashes = c_hashes;

  if (d.run.validate) {
    progress << "validate: reference gemm on the host ...\n";
    const auto v = exec::validate(A, B, C0, C, alpha, beta, int(specs.size()));
    rec.validation_performed = true;
    rec.validation_passed = v.passed;
    rec.validation_error = v.error;
    rec.validation_bound = v.bound;
    rec.validation_method = v.method;
    if (!v.passed)
      progress << fmt::format(
          "validate: {} element(s) beyond their bounds; the worst, C({},{}), is off by {:.3e} "
          "against its bound {:.3e}\n",
          v.failed, v.worst_i, v.worst_j, v.error, v.bound);
  }
  report::print_summary(std::cout, rec);
  if (rec.validation_performed && !rec.validation_passed) {
    throw ValidationFailure{fmt::format(
        "validation failed: an element of C is off by {:.3e}, beyond its bound {:.3e}{}; no JSON "
        "record written",
        rec.validation_error, rec.validation_bound,
        opt.fault != exec::Fault::none
            ? fmt::format(" (fault injected: {})", exec::to_string(opt.fault))
            : "")};
  }
  if (opt.json_given) report::write_json_file(opt.json, report::to_json(rec));
}

}  // namespace

void require_validation_for_fault(const deck::Deck& d, exec::Fault fault) {
  if (fault != exec::Fault::none && !d.run.validate)
    throw Error(d.at("run.validate") + ": --inject-fault " + std::string(exec::to_string(fault)) +
                " tests the validation, which run.validate = false turns off");
}

void add_run_command(CLI::App& app) {
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
  cmd->callback([opt, json, fault] {
    opt->json_given = json->count() > 0;
    opt->fault = *exec::parse_fault(*fault);
#if CUBOID_ENABLE_MPI
    // Started by mpirun: the distributed pipeline (src/dist), which loads the deck itself so
    // that only rank 0 reports a bad one.
    if (dist::launched_by_mpi()) {
      if (const int rc = run_distributed_command(
              opt->deck, opt->overrides, opt->json_given ? &opt->json : nullptr, opt->fault))
        throw CLI::RuntimeError(rc);
      return;
    }
#endif
    const deck::Deck d = deck::load_deck(opt->deck, opt->overrides);
    require_validation_for_fault(d, opt->fault);
    // The record's path is checked before any work, not after the whole run.
    if (opt->json_given) check_output_path("--json", opt->json);
    KokkosSession kokkos;
    if (d.problem.precision == deck::Precision::float64)
      run_deck<double>(d, *opt);
    else
      run_deck<float>(d, *opt);
  });
}

}  // namespace cuboid::app
