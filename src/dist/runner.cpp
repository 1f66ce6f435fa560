#include "dist/runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <limits>
#include <numeric>

#include "dist/comm_report.hpp"
#include "dist/exchange.hpp"
#include "dist/local_matrix.hpp"
#include "dist/model.hpp"
#include "dist/strategy.hpp"
#include "dist/validate.hpp"
#include "exec/engine.hpp"
#include "kokkos_ext/compat.hpp"
#include "partition/metrics.hpp"
#include "report/run_report.hpp"
#include "util/error.hpp"
#include "util/host_memory.hpp"
#include "util/timer.hpp"

namespace cuboid::dist {
namespace {

struct Phases {
  double exchange = 0, compute = 0, reduce = 0, total = 0;
};

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

// The layout of this run: mpi.grid or the near-square grid, mpi.block or the tile.
Layouts layouts_for(const deck::Deck& d, int P) {
  ProcessGrid grid = near_square_grid(P);
  if (!d.mpi.grid.empty()) {
    grid = ProcessGrid{d.mpi.grid[0], d.mpi.grid[1]};
    if (grid.size() != P)
      throw Error(d.location("mpi.grid") + ": mpi.grid " + describe(grid) + " has " +
                  std::to_string(grid.size()) + " processes but the job has " + std::to_string(P) +
                  " ranks");
  }
  const std::int64_t block = d.mpi.block > 0 ? d.mpi.block : d.problem.tile;
  return make_layouts(d.problem.m, d.problem.n, d.problem.k, block, grid);
}

}  // namespace

template <class Scalar>
Outcome run_distributed(const deck::Deck& d, const Communicator& comm, RankResources<Scalar>& res,
                        const RunnerOptions& options) {
  using Matrix = exec::HostMatrix<Scalar>;
  const auto& pr = d.problem;
  const int me = comm.rank(), P = comm.size();
  const bool root = me == 0;
  std::ostream& progress = std::cerr;
  const std::size_t elem = sizeof(Scalar);
  const partition::TileExtent tiles{(pr.m + pr.tile - 1) / pr.tile, (pr.n + pr.tile - 1) / pr.tile,
                                    (pr.k + pr.tile - 1) / pr.tile};

  // --- rank speeds and the two-level partition (agreed: an error anywhere stops everyone) ---
  std::exception_ptr failure;
  double factor = 1, my_speed = 0, partition_s = 0;
  std::vector<double> rank_speeds;
  std::vector<partition::TileZone> zones;
  Layouts layouts;
  try {
    if (!d.mpi.rank_speeds.empty()) {
      if (int(d.mpi.rank_speeds.size()) != P)
        throw Error(d.location("mpi.rank_speeds") + ": mpi.rank_speeds has " +
                    std::to_string(d.mpi.rank_speeds.size()) + " entries but the job has " +
                    std::to_string(P) + " ranks (one factor per rank)");
      factor = d.mpi.rank_speeds[std::size_t(me)];
    }
    for (const auto& s : res.speeds) my_speed += s.gflops;
    my_speed *= factor;
    layouts = layouts_for(d, P);
  } catch (...) {
    failure = std::current_exception();
  }
  comm.agree(failure);
  rank_speeds = comm.allgather(my_speed);

  Stopwatch clock;
  try {
    // Every rank computes the same partition from the same speeds: nothing to broadcast.
    zones = partition_ranks(d.partition.algorithm, d.partition.discretization, rank_speeds, tiles);
  } catch (const std::invalid_argument& e) {
    failure = std::make_exception_ptr(
        Error(d.location("partition.algorithm") + ": partition." +
              std::string(partition::to_string(d.partition.algorithm)) +
              fmt::format(" of {}x{}x{} tiles", tiles[0], tiles[1], tiles[2]) + " among " +
              std::to_string(P) + " ranks: " + e.what()));
  }
  comm.agree(failure);

  // This rank's pieces, each partitioned among its processors and planned as a sub-problem.
  std::vector<double> proc_speeds;
  for (const auto& s : res.speeds) proc_speeds.push_back(s.gflops);
  std::unique_ptr<Exchange<Scalar>> ex;
  std::unique_ptr<exec::Engine<Scalar>> engine;
  std::vector<exec::Plan> plans;  // one per piece
  std::int64_t max_a = 0, max_b = 0;
  std::vector<Matrix> box_c;
  try {
    engine = std::make_unique<exec::Engine<Scalar>>(std::move(res.workers));
    ex = std::make_unique<Exchange<Scalar>>(comm, zones, options.slabs_per_box, layouts, pr.m, pr.n,
                                            pr.k, pr.tile);
    for (const Piece& piece : ex->pieces()) {
      const exec::Rect c = c_rect(piece.box, pr.m, pr.n, pr.tile);
      const std::int64_t depth = a_rect(piece.box, pr.m, pr.k, pr.tile).cols();
      exec::PlanOptions popt = res.plan_options;
      popt.beta_is_zero = piece.first_of_box;
      popt.beta_is_one = !piece.first_of_box;
      auto local =
          local_zones(d.partition.algorithm, d.partition.discretization, proc_speeds, piece.box);
      exec::Plan plan;
      try {
        plan = exec::make_plan(local, c.rows(), c.cols(), depth, pr.tile, popt);
      } catch (const std::runtime_error& e) {
        throw Error(d.location("platform.memory_budget_mib") + ": platform.memory_budget_mib: " +
                    e.what() + " of " + std::to_string(pr.tile) + " (problem.tile)");
      }
      // Buffers for every piece are made here, before the first repetition.
      engine->reserve(plan);
      plans.push_back(std::move(plan));
      max_a = std::max(max_a, c.rows() * depth);
      max_b = std::max(max_b, depth * c.cols());
    }
    for (const auto& b : zones[std::size_t(me)])
      if (!b.empty()) {
        const exec::Rect c = c_rect(b, pr.m, pr.n, pr.tile);
        box_c.emplace_back(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::dist::C_box"),
                           c.rows(), c.cols());
      }
  } catch (...) {
    failure = std::current_exception();
  }
  partition_s = clock.seconds();
  comm.agree(failure);

  // --- the matrices, each rank generating its own blocks --------------------------------
  Matrix A = local_matrix<Scalar>(layouts.a, me, "cuboid::dist::A");
  Matrix B = local_matrix<Scalar>(layouts.b, me, "cuboid::dist::B");
  Matrix C0 = local_matrix<Scalar>(layouts.c, me, "cuboid::dist::C0");
  Matrix C = local_matrix<Scalar>(layouts.c, me, "cuboid::dist::C");
  fill_local(A, layouts.a, me, pr.seed, exec::MatrixId::A);
  fill_local(B, layouts.b, me, pr.seed, exec::MatrixId::B);
  switch (pr.c_init) {
    case deck::CInit::random:
      fill_local(C0, layouts.c, me, pr.seed, exec::MatrixId::C);
      break;
    case deck::CInit::zero:
      Kokkos::deep_copy(C0, Scalar(0));
      break;
    case deck::CInit::nan:
      Kokkos::deep_copy(C0, std::numeric_limits<Scalar>::quiet_NaN());
      break;
  }
  std::vector<Scalar> a_panel(std::size_t(std::max<std::int64_t>(max_a, 1))),
      b_panel(std::size_t(std::max<std::int64_t>(max_b, 1)));

  // --- repetitions ------------------------------------------------------------------------
  const Scalar alpha = Scalar(pr.alpha), beta = Scalar(pr.beta);
  const double flops = 2.0 * double(pr.m) * double(pr.n) * double(pr.k);
  struct Rep {
    double global_s = 0;
    Phases phases;
    TrafficCounters traffic;
    std::vector<exec::WorkerStats> workers;
  };
  std::vector<Rep> reps;
  const int total = d.run.warmup + d.run.repetitions;
  try {
    for (int r = 0; r < total; ++r) {
      Rep rep;
      rep.workers.resize(res.specs.size());
      comm.barrier();
      const double t0 = exec::now_seconds();
      Stopwatch sw;
      ex->start(A, B);
      rep.phases.exchange += sw.seconds();
      for (std::size_t s = 0; s < ex->pieces().size(); ++s) {
        const Piece& piece = ex->pieces()[s];
        const exec::Rect c = c_rect(piece.box, pr.m, pr.n, pr.tile);
        const std::int64_t depth = a_rect(piece.box, pr.m, pr.k, pr.tile).cols();
        // Panels live in two reusable buffers; the views do not own them.
        Matrix Ap(a_panel.data(), c.rows(), depth), Bp(b_panel.data(), depth, c.cols());
        sw.restart();
        ex->inputs_for(int(s), A, B, Ap, Bp);
        rep.phases.exchange += sw.seconds();
        sw.restart();
        auto result = engine->run(plans[s], Ap, Bp, box_c[std::size_t(piece.box_index)], alpha,
                                  piece.first_of_box ? Scalar(0) : Scalar(1));
        rep.phases.compute += sw.seconds();
        for (std::size_t q = 0; q < result.workers.size(); ++q) {
          auto& w = rep.workers[q];
          const auto& x = result.workers[q];
          w.busy_s += x.busy_s, w.copy_s += x.copy_s, w.stall_s += x.stall_s;
          w.h2d_bytes += x.h2d_bytes;
          w.d2h_bytes += x.d2h_bytes, w.flops += x.flops, w.steps += x.steps;
          w.finish_s = std::max(w.finish_s, x.finish_s);
        }
      }
      sw.restart();
      ex->reduce(box_c, C0, beta, C);
      rep.phases.reduce = sw.seconds();
      rep.phases.total = exec::now_seconds() - t0;
      rep.traffic = ex->counters();
      rep.global_s = comm.allreduce_max(rep.phases.total);
      const bool warm = r < d.run.warmup;
      if (root)
        progress << fmt::format(
            "run: {} {}/{}: {:.4f} s, {:.2f} GFLOP/s ({} ranks)\n", warm ? "warm-up" : "repetition",
            warm ? r + 1 : r - d.run.warmup + 1, warm ? d.run.warmup : d.run.repetitions,
            rep.global_s, flops / rep.global_s / 1e9, P);
      if (!warm) reps.push_back(std::move(rep));
    }
  } catch (const std::exception& e) {
    // Other ranks may be blocked in a receive from this one: agreeing is impossible here.
    comm.abort(std::string("during the distributed product: ") + e.what());
  }

  // The median repetition (by the slowest rank's time) is the one reported.
  std::vector<std::size_t> order(reps.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](auto a, auto b) { return reps[a].global_s < reps[b].global_s; });
  const Rep& med = reps[order[order.size() / 2]];

  // --- validation ----------------------------------------------------------------------------
  DistValidation val;
  if (d.run.validate) {
    const int extra = P + int(comm.allreduce_max(double(ex->pieces().size())));
    if (root) progress << "validate: distributed check (no rank gathers C) ...\n";
    try {
      val = validate_distributed(comm, layouts, A, B, C0, C, alpha, beta, pr.seed,
                                 d.mpi.full_check_max, extra);
    } catch (const std::exception& e) {
      comm.abort(std::string("during validation: ") + e.what());
    }
  }

  // --- gather per-rank figures to rank 0 -----------------------------------------------------
  const auto& tr = med.traffic;
  double tasks = 0;
  for (const auto& b : zones[std::size_t(me)]) tasks += b.volume();
  nlohmann::json mine = {{"rank", me},
                         {"host", hostname()},
                         {"speed_gflops", my_speed},
                         {"speed_factor", factor},
                         {"tasks", tasks},
                         {"boxes", ex->boxes()},
                         {"pieces", int(ex->pieces().size())},
                         {"phases",
                          {{"calibrate_s", res.calibration_s},
                           {"partition_s", partition_s},
                           {"exchange_s", med.phases.exchange},
                           {"compute_s", med.phases.compute},
                           {"reduce_s", med.phases.reduce},
                           {"total_s", med.phases.total}}},
                         {"bytes",
                          {{"a_sent", tr.a_sent},
                           {"a_recv", tr.a_recv},
                           {"b_sent", tr.b_sent},
                           {"b_recv", tr.b_recv},
                           {"c_sent", tr.c_sent},
                           {"c_recv", tr.c_recv}}}};
  mine["processors"] = nlohmann::json::array();
  for (std::size_t q = 0; q < res.specs.size(); ++q) {
    const auto& w = med.workers[q];
    mine["processors"].push_back({{"name", res.specs[q].name},
                                  {"kind", platform::to_string(res.specs[q].kind)},
                                  {"space", res.specs[q].space},
                                  {"threads", res.specs[q].threads},
                                  {"speed_gflops", res.speeds[q].gflops},
                                  {"speed_source", res.speeds[q].source},
                                  {"busy_s", w.busy_s},
                                  {"copy_s", w.copy_s},
                                  {"stall_s", w.stall_s},
                                  {"finish_s", w.finish_s},
                                  {"h2d_bytes", w.h2d_bytes},
                                  {"d2h_bytes", w.d2h_bytes},
                                  {"flops", w.flops},
                                  {"steps", w.steps}});
  }
  const auto gathered = comm.gather(mine.dump(), 0);
  if (!root)
    return val.passed || !d.run.validate
               ? (d.run.validate ? Outcome::passed : Outcome::not_validated)
               : Outcome::validation_failed;

  // --- rank 0: report ------------------------------------------------------------------------
  std::vector<nlohmann::json> ranks;
  for (const auto& s : gathered) ranks.push_back(nlohmann::json::parse(s));
  const double total_tasks = double(tiles[0]) * double(tiles[1]) * double(tiles[2]);
  const double total_speed = std::accumulate(rank_speeds.begin(), rank_speeds.end(), 0.0);

  std::vector<RankTraffic> measured(static_cast<std::size_t>(P));
  for (int r = 0; r < P; ++r) {
    const auto& b = ranks[std::size_t(r)]["bytes"];
    auto& t = measured[std::size_t(r)];
    t.a_in = b["a_recv"].get<double>() / double(elem),
    t.b_in = b["b_recv"].get<double>() / double(elem);
    t.c_out = b["c_sent"].get<double>() / double(elem);
    t.a_out = b["a_sent"].get<double>() / double(elem),
    t.b_out = b["b_sent"].get<double>() / double(elem);
    t.c_in = b["c_recv"].get<double>() / double(elem);
  }
  const auto model = model_traffic(zones, pr.m, pr.n, pr.k, pr.tile, layouts);
  for (int r = 0; r < P; ++r) {
    auto& t = measured[std::size_t(r)];
    t.a_foot = model[std::size_t(r)].a_foot, t.b_foot = model[std::size_t(r)].b_foot;
    t.c_foot = model[std::size_t(r)].c_foot, t.tasks = model[std::size_t(r)].tasks;
    t.flops = model[std::size_t(r)].flops;
  }
  const auto msum = summarize(measured, pr.m, pr.n, pr.k),
             model_sum = summarize(model, pr.m, pr.n, pr.k);

  // Partition quality among the ranks that work.
  std::vector<partition::TileZone> working;
  std::vector<double> working_speeds;
  for (int r = 0; r < P; ++r)
    if (rank_speeds[std::size_t(r)] > 0)
      working.push_back(zones[std::size_t(r)]),
          working_speeds.push_back(rank_speeds[std::size_t(r)]);
  const auto metrics = partition::measure(working, working_speeds, tiles);

  report::RunRecord rec;
  report::describe_deck(rec, d);
  rec.ratio_to_lower_bound = metrics.ratio, rec.ratio_plain = metrics.ratio_plain,
  rec.imbalance = metrics.imbalance;
  for (const auto& z : zones)
    for (const auto& b : z)
      if (!b.empty() && (b.lo[2] != 0 || b.hi[2] != tiles[2])) rec.k_split = true;
  for (const auto& r : reps) rec.times_s.push_back(r.global_s);
  rec.min_s = reps[order.front()].global_s, rec.max_s = reps[order.back()].global_s;
  rec.median_s = med.global_s;
  if (order.size() % 2 == 0)
    rec.median_s = 0.5 * (reps[order[order.size() / 2 - 1]].global_s + med.global_s);
  rec.gflops = flops / rec.median_s / 1e9;

  auto column = [&](const char* group, const char* key) {
    std::vector<double> v;
    for (const auto& r : ranks) v.push_back(r[group][key].get<double>());
    return v;
  };
  rec.calibration_s = stats_of(column("phases", "calibrate_s")).max;
  rec.partition_s = stats_of(column("phases", "partition_s")).max;
  rec.reduce_s = stats_of(column("phases", "reduce_s")).max;
  for (const auto& r : ranks) {
    const double rank_tasks = r["tasks"].get<double>(), f = r["speed_factor"].get<double>();
    double rank_flops = 0;
    for (const auto& p : r["processors"]) rank_flops += p["flops"].get<double>();
    for (const auto& p : r["processors"]) {
      report::ProcessorRecord q;
      q.name = fmt::format("{}:{}", r["rank"].get<int>(), p["name"].get<std::string>());
      q.kind = p["kind"], q.space = p["space"], q.threads = p["threads"];
      q.speed_gflops = p["speed_gflops"], q.speed_source = p["speed_source"];
      q.target_share = total_speed > 0 ? q.speed_gflops * f / total_speed : 0;
      q.flops = p["flops"], q.busy_s = p["busy_s"], q.copy_s = p["copy_s"],
      q.stall_s = p["stall_s"], q.finish_s = p["finish_s"];
      q.h2d_bytes = p["h2d_bytes"], q.d2h_bytes = p["d2h_bytes"], q.steps = p["steps"];
      // Tasks are known per rank; a processor's share of them follows its share of the flops.
      q.volume = rank_flops > 0 ? rank_tasks * q.flops / rank_flops : 0;
      q.volume_share = q.volume / total_tasks;
      q.pieces = r["pieces"];
      q.predicted_s = q.speed_gflops > 0 ? q.flops / (q.speed_gflops * 1e9) : 0;
      rec.processors.push_back(q);
    }
  }
  rec.build = "Kokkos " + kokkos_ext::kokkos_version_string() + " (" +
              Kokkos::DefaultExecutionSpace::name() + "), MPI " + std::to_string(P) + " ranks";
  rec.host = hostname();
  rec.validation_performed = d.run.validate;
  rec.validation_passed = val.passed;
  rec.validation_error = val.error;
  rec.validation_bound = val.bound;
  rec.validation_method = val.method;

  report::print_summary(std::cout, rec);
  const int idle = int(std::count(rank_speeds.begin(), rank_speeds.end(), 0.0));
  std::cout << fmt::format(
      "mpi        {} ranks on a {} grid, block-cyclic blocks of {} (ScaLAPACK DESC_C on rank 0: "
      "[{}]); {} rank(s) without work\n",
      P, describe(layouts.c.grid()), layouts.c.row_block(), fmt::join(layouts.c.descriptor(0), ","),
      idle);
  std::cout << fmt::format(
      "{:>5} {:>9} {:>7} {:>7} {:>6} {:>9} {:>9} {:>9} {:>10} {:>10} {:>10} {:>10}\n", "rank",
      "GFLOP/s", "target", "share", "pieces", "exch s", "comp s", "red s", "A in", "B in", "C out",
      "model");
  for (int r = 0; r < P; ++r) {
    const auto& j = ranks[std::size_t(r)];
    std::cout << fmt::format(
        "{:>5} {:>9.2f} {:>6.1f}% {:>6.1f}% {:>6} {:>9.4f} {:>9.4f} {:>9.4f} {:>10.4g} {:>10.4g} "
        "{:>10.4g} {:>10.4g}\n",
        r, j["speed_gflops"].get<double>(),
        total_speed > 0 ? 100 * j["speed_gflops"].get<double>() / total_speed : 0.0,
        100 * j["tasks"].get<double>() / total_tasks, j["pieces"].get<int>(),
        j["phases"]["exchange_s"].get<double>(), j["phases"]["compute_s"].get<double>(),
        j["phases"]["reduce_s"].get<double>(), j["bytes"]["a_recv"].get<double>(),
        j["bytes"]["b_recv"].get<double>(), j["bytes"]["c_sent"].get<double>(),
        model[std::size_t(r)].moved() * double(elem));
  }
  nlohmann::json phases;
  std::string line = "phases     per rank min/mean/max s:";
  for (const char* key :
       {"calibrate_s", "partition_s", "exchange_s", "compute_s", "reduce_s", "total_s"}) {
    const Stats s = stats_of(column("phases", key));
    phases[key] = to_json(s);
    line +=
        fmt::format(" {} {:.4f}/{:.4f}/{:.4f}",
                    std::string(key).substr(0, std::string(key).size() - 2), s.min, s.mean, s.max);
  }
  std::cout << line << "\n";
  print_communication(std::cout, msum, model_sum, elem);
  if (d.run.validate && val.full_performed)
    std::cout << fmt::format("           full check: ||C - C_ref||_F = {:.3e} <= {:.3e}? {}\n",
                             val.full_error, val.full_bound, val.full_passed ? "yes" : "NO");

  nlohmann::json j = report::to_json(rec);
  j["ranks"] = ranks;
  j["phases"] = phases;
  nlohmann::json bytes;
  for (const char* key : {"a_sent", "a_recv", "b_sent", "b_recv", "c_sent", "c_recv"})
    bytes[key] = to_json(stats_of(column("bytes", key)));
  j["bytes"] = bytes;
  j["communication"] = communication_json(msum, model_sum, elem);
  j["mpi"] = {{"ranks", P},
              {"grid", {layouts.c.grid().rows, layouts.c.grid().cols}},
              {"block", layouts.c.row_block()},
              {"idle_ranks", idle},
              {"slabs_per_box", options.slabs_per_box},
              {"layout", "2D block-cyclic, row-major process grid, ScaLAPACK descriptors"}};
  j["validation"]["randomized"] = {{"error", val.error}, {"bound", val.bound}};
  if (val.full_performed)
    j["validation"]["full"] = {
        {"passed", val.full_passed}, {"error", val.full_error}, {"bound", val.full_bound}};

  if (d.run.validate && !val.passed) {
    std::cerr << fmt::format(
        "cuboid: error: validation failed: max row error {:.3e} against its bound {:.3e}{}; no "
        "JSON record written\n",
        val.error, val.bound,
        val.full_performed
            ? fmt::format(", full check {:.3e} against {:.3e}", val.full_error, val.full_bound)
            : "");
    return Outcome::validation_failed;
  }
  if (!options.json.empty()) report::write_json_file(options.json, j);
  return d.run.validate ? Outcome::passed : Outcome::not_validated;
}

template Outcome run_distributed<double>(const deck::Deck&, const Communicator&,
                                         RankResources<double>&, const RunnerOptions&);
template Outcome run_distributed<float>(const deck::Deck&, const Communicator&,
                                        RankResources<float>&, const RunnerOptions&);

}  // namespace cuboid::dist
