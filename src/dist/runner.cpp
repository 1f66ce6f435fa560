#include "dist/runner.hpp"

#include <algorithm>
#include <fstream>
#include <limits>
#include <numeric>
#include <sstream>

#include "dist/exchange.hpp"
#include "dist/local_matrix.hpp"
#include "dist/model.hpp"
#include "dist/strategy.hpp"
#include "kokkos_ext/compat.hpp"
#include "partition/speeds.hpp"
#include "util/host_memory.hpp"
#include "util/timer.hpp"

namespace cuboid::dist {
namespace {

struct Phases {
  double exchange = 0, compute = 0, reduce = 0, total = 0;
};

// Peak resident memory of this process (VmHWM), bytes; 0 where /proc is not there.
double peak_resident_bytes() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) {
      std::istringstream in(line.substr(6));
      double kib = 0;
      in >> kib;
      return kib * 1024;
    }
  return 0;
}

// The rank partition as integers, so that rank 0 can hand it to everyone: the order's three
// permutations, then per rank its boxes.
std::vector<std::int64_t> serialize(const RankPartition& p) {
  std::vector<std::int64_t> v;
  for (const AxisOrder* a : {&p.order.i, &p.order.j, &p.order.k}) {
    v.push_back(a->size());
    v.insert(v.end(), a->tiles.begin(), a->tiles.end());
  }
  v.push_back(std::int64_t(p.zones.size()));
  for (const auto& z : p.zones) {
    v.push_back(std::int64_t(z.size()));
    for (const auto& b : z)
      v.insert(v.end(), {b.lo[0], b.lo[1], b.lo[2], b.hi[0], b.hi[1], b.hi[2]});
  }
  return v;
}

void deserialize(const std::vector<std::int64_t>& v, const DistSettings& s, RankPartition& p) {
  std::size_t at = 0;
  const std::int64_t extents[3] = {s.m, s.n, s.k};
  AxisOrder* axes[3] = {&p.order.i, &p.order.j, &p.order.k};
  for (int d = 0; d < 3; ++d) {
    const std::int64_t n = v[at++];
    std::vector<std::int64_t> tiles(v.begin() + std::ptrdiff_t(at),
                                    v.begin() + std::ptrdiff_t(at + std::size_t(n)));
    at += std::size_t(n);
    // Rebuild through grouped_order with the permutation's rank as the key.
    std::vector<std::int64_t> rank_of(tiles.size());
    for (std::size_t x = 0; x < tiles.size(); ++x) rank_of[std::size_t(tiles[x])] = std::int64_t(x);
    *axes[d] =
        grouped_order(extents[d], s.tile, [&](std::int64_t t) { return rank_of[std::size_t(t)]; });
  }
  p.zones.assign(std::size_t(v[at++]), {});
  for (auto& z : p.zones) {
    z.resize(std::size_t(v[at++]));
    for (auto& b : z) {
      b.lo = {v[at], v[at + 1], v[at + 2]};
      b.hi = {v[at + 3], v[at + 4], v[at + 5]};
      at += 6;
    }
  }
}

}  // namespace

template <class Scalar>
DistOutcome run_distributed(const DistSettings& s, const Communicator& comm,
                            RankResources<Scalar>& res,
                            const std::function<std::string(const std::string&)>& locate) {
  using Matrix = exec::HostMatrix<Scalar>;
  using Storage = LocalStorage<Scalar>;
  const int me = comm.rank(), P = comm.size();
  const bool root = me == 0;
  DistOutcome out;
  out.ranks = P;
  auto keyed = [&](const KeyedError& e) {
    return std::make_exception_ptr(std::invalid_argument(locate(e.key) + ": " + e.what()));
  };

  // --- rank speeds; rank 0 chooses the partition and broadcasts it ----------------------------
  std::exception_ptr failure;
  double factor = 1, my_speed = 0;
  ProcessGrid grid;
  try {
    if (!s.rank_speeds.empty()) {
      if (int(s.rank_speeds.size()) != P)
        throw KeyedError("mpi.rank_speeds", "mpi.rank_speeds has " +
                                                std::to_string(s.rank_speeds.size()) +
                                                " entries but the job has " + std::to_string(P) +
                                                " ranks (one factor per rank)");
      factor = s.rank_speeds[std::size_t(me)];
    }
    for (const auto& sp : res.speeds) my_speed += sp.gflops;
    my_speed *= factor;
    grid = near_square_grid(P);
    if (!s.aligned && !s.grid.empty()) {
      grid = ProcessGrid{s.grid[0], s.grid[1]};
      if (grid.size() != P)
        throw KeyedError("mpi.grid",
                         "mpi.grid " + describe(grid) + " has " + std::to_string(grid.size()) +
                             " processes but the job has " + std::to_string(P) + " ranks");
    }
  } catch (const KeyedError& e) {
    failure = keyed(e);
  } catch (...) {
    failure = std::current_exception();
  }
  comm.agree(failure);
  out.rank_speeds = comm.allgather(my_speed);

  Stopwatch clock;
  RankPartitionRequest req;
  req.m = s.m, req.n = s.n, req.k = s.k, req.tile = s.tile;
  req.speeds = out.rank_speeds;
  req.aligned = s.aligned, req.grid = grid, req.block = s.block > 0 ? s.block : s.tile;
  req.automatic = s.automatic, req.algorithm = s.algorithm;
  req.discretization = s.discretization, req.bandwidth_gbs = s.bandwidth_gbs;
  req.elem = sizeof(Scalar);
  std::vector<std::int64_t> wire;
  if (root) {
    try {
      // Speeds that cannot be partitioned are the speeds' fault, not the partition's.
      const std::string speed_key = s.rank_speeds.empty() ? "platform.speeds" : "mpi.rank_speeds";
      std::vector<double> working;
      for (double v : out.rank_speeds)
        if (v > 0) working.push_back(v);
      if (working.empty())
        throw KeyedError(speed_key, "no rank has a positive speed: nobody would compute");
      const double tasks = double((s.m + s.tile - 1) / s.tile) *
                           double((s.n + s.tile - 1) / s.tile) *
                           double((s.k + s.tile - 1) / s.tile);
      if (double(working.size()) > tasks)
        throw KeyedError("problem.tile", std::to_string(working.size()) +
                                             " ranks with work but only " +
                                             std::to_string(std::int64_t(tasks)) +
                                             " tile tasks: use a smaller problem.tile or fewer "
                                             "ranks (or give some a speed factor of 0)");
      if (const auto problem = partition::speed_problem(working))
        throw KeyedError(speed_key,
                         "the ranks' speeds (their processors' GFLOP/s times their "
                         "factor): " +
                             *problem);
      out.partition = choose_rank_partition(req);
      wire = serialize(out.partition);
    } catch (const KeyedError& e) {
      failure = keyed(e);
    } catch (const std::invalid_argument& e) {
      failure = std::make_exception_ptr(std::invalid_argument(
          locate("partition.algorithm") + ": the rank partition of " + std::to_string(s.m) + "x" +
          std::to_string(s.n) + "x" + std::to_string(s.k) + " (tiles of " + std::to_string(s.tile) +
          ") among " + std::to_string(P) + " ranks: " + e.what()));
    }
  }
  comm.agree(failure);
  comm.broadcast(wire, 0);
  comm.broadcast(out.partition.name, 0);
  RankPartition& rp = out.partition;
  if (!root) {
    deserialize(wire, s, rp);
    rp.dist = s.aligned ? aligned_distribution(rp.zones, rp.order, s.m, s.n, s.k, s.tile)
                        : block_cyclic_distribution(s.m, s.n, s.k, req.block, grid);
    rp.traffic = model_traffic(rp.zones, rp.order, rp.dist);
    rp.predicted_s = model_time(rp.traffic, out.rank_speeds, s.bandwidth_gbs, sizeof(Scalar));
  }
  const Distribution& dist = rp.dist;

  // --- this rank's pieces, planned among its processors, on one engine -------------------------
  std::vector<double> proc_speeds;
  for (const auto& sp : res.speeds) proc_speeds.push_back(sp.gflops);
  std::unique_ptr<Exchange<Scalar>> ex;
  std::unique_ptr<exec::Engine<Scalar>> engine;
  std::vector<exec::Plan> plans;  // one per piece
  std::int64_t max_a = 0, max_b = 0;
  std::vector<Matrix> box_c;
  // Engines (worker sets) this run makes: calibration may have made its own before.
  const int engines_before = exec::Engine<Scalar>::created();
  try {
    engine = std::make_unique<exec::Engine<Scalar>>(std::move(res.workers));
    ex = std::make_unique<Exchange<Scalar>>(comm, rp.zones, rp.order, dist, s.slabs_per_box);
    // The engine's buffers fit the largest panels and blocks over all pieces' plans: when that
    // exceeds a processor's budget, its pieces are planned again with a smaller one.
    std::vector<std::int64_t> budgets = res.plan_options.budget_elements;
    for (int attempt = 0;; ++attempt) {
      plans.clear();
      for (std::size_t p = 0; p < ex->pieces().size(); ++p) {
        const Piece& piece = ex->pieces()[p];
        const exec::Rect c = c_panel(rp.order, piece.box), a = ex->a_panel_of(int(p));
        exec::PlanOptions popt = res.plan_options;
        popt.budget_elements = budgets;
        // A partial box starts from zero; a box written in place starts from beta*C0.
        popt.beta_is_zero = piece.first_of_box && (!ex->c_in_place() || s.beta == 0);
        popt.beta_is_one = !piece.first_of_box || (ex->c_in_place() && s.beta == 1);
        // Local zones: the piece among this rank's processors, in the piece's own coordinates.
        partition::TileBox local_box = piece.box;
        const auto local = local_zones(s.algorithm, s.discretization, proc_speeds, local_box);
        exec::Plan plan;
        try {
          plan = exec::make_plan(local, c.rows(), c.cols(), a.cols(), s.tile, popt);
        } catch (const std::runtime_error& e) {
          throw KeyedError("platform.memory_budget_mib",
                           std::string("platform.memory_budget_mib: ") + e.what() + " of " +
                               std::to_string(s.tile) + " (problem.tile)");
        }
        plans.push_back(std::move(plan));
        if (!ex->a_in_place(int(p))) max_a = std::max(max_a, c.rows() * a.cols());
        if (!ex->b_in_place(int(p))) max_b = std::max(max_b, a.cols() * c.cols());
      }
      bool fits = true;
      for (std::size_t q = 0; q < budgets.size(); ++q) {
        const std::int64_t budget = res.plan_options.budget_elements[q];
        if (budget <= 0) continue;
        const exec::BufferCost cost = q < res.plan_options.buffer_cost.size()
                                          ? res.plan_options.buffer_cost[q]
                                          : exec::BufferCost{};
        exec::ProcessorPlan all;  // the largest needs over the pieces
        for (const auto& plan : plans)
          if (q < plan.processors.size()) exec::widen_needs(all, plan.processors[q]);
        const std::int64_t need = exec::buffer_elements(all, cost);
        if (need <= budget) continue;
        fits = false;
        budgets[q] = std::min(budgets[q] - 1,
                              std::int64_t(double(budgets[q]) * double(budget) / double(need)));
        if (budgets[q] <= cost.fixed || attempt == 32)
          throw KeyedError("platform.memory_budget_mib",
                           "platform.memory_budget_mib: memory budget too small for the pieces of "
                           "this rank at " +
                               std::to_string(s.tile) + " (problem.tile)");
      }
      if (fits) break;
    }
    // Every buffer is made here, before the first repetition.
    for (const auto& plan : plans) engine->reserve(plan);
    if (!ex->c_in_place())
      for (int b = 0; b < ex->boxes(); ++b) {
        const exec::Rect& c = ex->box_panel(b);
        box_c.emplace_back(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::dist::C_box"),
                           c.rows(), c.cols());
      }
  } catch (const KeyedError& e) {
    failure = keyed(e);
  } catch (...) {
    failure = std::current_exception();
  }
  const double partition_s = clock.seconds();
  comm.agree(failure);
  if (s.fault == exec::Fault::drop_task) {
    const int first = int(comm.allreduce_min(ex->pieces().empty() ? double(P) : double(me)));
    if (me == first) {
      bool dropped = false;
      for (auto& plan : plans)
        if (exec::drop_one_task(plan)) {
          dropped = true;
          break;
        }
      if (!dropped)
        failure = std::make_exception_ptr(std::invalid_argument(
            "--inject-fault drop-task: no tile task can be left out without also leaving out "
            "beta (the problem is one tile deep): use problem.k > problem.tile or beta = 1"));
    }
    comm.agree(failure);
  }

  // --- the matrices, each rank generating what the layout gives it -----------------------------
  Storage A = local_storage<Scalar>(dist.a, me, "cuboid::dist::A");
  Storage B = local_storage<Scalar>(dist.b, me, "cuboid::dist::B");
  Storage C0 = local_storage<Scalar>(dist.c, me, "cuboid::dist::C0");
  Storage C = local_storage<Scalar>(dist.c, me, "cuboid::dist::C");
  fill_local(A, dist.a, me, s.seed, exec::MatrixId::A);
  fill_local(B, dist.b, me, s.seed, exec::MatrixId::B);
  switch (s.c_init) {
    case InitialC::random:
      fill_local(C0, dist.c, me, s.seed, exec::MatrixId::C);
      break;
    case InitialC::zero:
      Kokkos::deep_copy(C0, Scalar(0));
      break;
    case InitialC::nan:
      Kokkos::deep_copy(C0, std::numeric_limits<Scalar>::quiet_NaN());
      break;
  }
  Storage a_panel(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::dist::A_panel"),
                  std::size_t(max_a)),
      b_panel(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::dist::B_panel"),
              std::size_t(max_b));
  const bool bc = dist.a.kind() == MatrixDist::Kind::block_cyclic;
  const Matrix A_array = bc ? local_array(A, dist.a, me) : Matrix();
  const Matrix B_array = bc ? local_array(B, dist.b, me) : Matrix();
  const Matrix C_array = bc ? local_array(C, dist.c, me) : Matrix();

  // --- repetitions ------------------------------------------------------------------------
  const Scalar alpha = Scalar(s.alpha), beta = Scalar(s.beta);
  struct Rep {
    double global_s = 0;
    Phases phases;
    TrafficCounters traffic;
    std::vector<exec::WorkerStats> workers;
  };
  std::vector<Rep> reps;
  const int total = s.warmup + s.repetitions;
  try {
    for (int r = 0; r < total; ++r) {
      Rep rep;
      rep.workers.resize(res.specs.size());
      // C written in place starts as C0, like the single-process run (not timed).
      if (ex->c_in_place()) Kokkos::deep_copy(C, C0);
      comm.barrier();
      const double t0 = exec::now_seconds();
      Stopwatch sw;
      ex->start(A, B);
      rep.phases.exchange += sw.seconds();
      for (std::size_t p = 0; p < ex->pieces().size(); ++p) {
        const Piece& piece = ex->pieces()[p];
        const exec::Rect c = c_panel(rp.order, piece.box), a = ex->a_panel_of(int(p));
        // Panels live in two reusable buffers unless the local array is the panel.
        const Matrix Ap =
            ex->a_in_place(int(p)) ? A_array : Matrix(a_panel.data(), c.rows(), a.cols());
        const Matrix Bp =
            ex->b_in_place(int(p)) ? B_array : Matrix(b_panel.data(), a.cols(), c.cols());
        const Matrix Cp = ex->c_in_place() ? C_array : box_c[std::size_t(piece.box_index)];
        sw.restart();
        ex->inputs_for(int(p), A, B, Ap, Bp);
        rep.phases.exchange += sw.seconds();
        sw.restart();
        const Scalar piece_beta = !piece.first_of_box ? Scalar(1)
                                  : ex->c_in_place()  ? beta
                                                      : Scalar(0);
        auto result =
            engine->run(plans[p], Ap, Bp, Cp, alpha, piece_beta, [&] { return ex->progress(); });
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
      if (r >= s.warmup) reps.push_back(std::move(rep));
    }
  } catch (const std::exception& e) {
    // Other ranks may be blocked in a receive from this one: agreeing is impossible here.
    comm.abort(std::string("during the distributed product: ") + e.what());
  }
  for (const auto& r : reps) out.times_s.push_back(r.global_s);
  if (s.fault == exec::Fault::corrupt && dist.c.owner(0, 0) == me) {
    auto& x = C(std::size_t(dist.c.offset(0, 0)));
    x = exec::flip_exponent_bit(x);
  }

  // The median repetition (by the slowest rank's time) is the one reported.
  std::vector<std::size_t> order(reps.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](auto a, auto b) { return reps[a].global_s < reps[b].global_s; });
  const Rep& med = reps[order[order.size() / 2]];

  // --- validation ----------------------------------------------------------------------------
  if (s.validate) {
    const int extra = P + int(comm.allreduce_max(double(ex->pieces().size())));
    try {
      out.validation = validate_distributed(comm, dist, A, B, C0, C, alpha, beta, s.seed,
                                            s.full_check_max, extra, s.tile);
      out.validated = true;
    } catch (const std::exception& e) {
      comm.abort(std::string("during validation: ") + e.what());
    }
  }

  // --- every rank's figures to rank 0 --------------------------------------------------------
  const auto& tr = med.traffic;
  const auto& model = rp.traffic[std::size_t(me)];
  const double elem = double(sizeof(Scalar));
  double tasks = 0;
  for (const auto& b : rp.zones[std::size_t(me)]) tasks += b.volume();
  // Memory the run holds for data: local blocks, panels, partial boxes, carried tiles, message
  // buffers (every receive is posted at once), the engine's buffers.
  double data_bytes =
      double(A.size() + B.size() + C0.size() + C.size() + a_panel.size() + b_panel.size()) * elem +
      engine->reserved_bytes() + ex->carry_peak_bytes() + tr.a_recv + tr.b_recv + tr.c_recv +
      tr.a_sent + tr.b_sent + tr.c_sent;
  for (const auto& b : box_c) data_bytes += double(b.size()) * elem;
  nlohmann::json mine = {
      {"rank", me},
      {"host", hostname()},
      {"speed_gflops", my_speed},
      {"speed_factor", factor},
      {"tasks", tasks},
      {"boxes", ex->boxes()},
      {"pieces", int(ex->pieces().size())},
      {"in_place", {{"c", ex->c_in_place()}}},
      {"engines_created", exec::Engine<Scalar>::created() - engines_before},
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
        {"c_recv", tr.c_recv},
        {"recv_mpi", tr.recv_mpi},
        {"model_recv", model.received() * elem},
        {"model_moved", model.moved() * elem}}},
      {"memory",
       {{"local_blocks_bytes", double(A.size() + B.size() + C0.size() + C.size()) * elem},
        {"projections_bytes", model.footprint() * elem},
        {"data_bytes", data_bytes},
        {"engine_bytes", engine->reserved_bytes()},
        {"carry_peak_bytes", ex->carry_peak_bytes()},
        {"peak_resident_bytes", peak_resident_bytes()}}}};
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
  if (!s.rank_info.is_null()) mine["environment"] = s.rank_info;
  const auto gathered = comm.gather(mine.dump(), 0);
  if (root)
    for (const auto& g : gathered) out.per_rank.push_back(nlohmann::json::parse(g));
  return out;
}

template DistOutcome run_distributed<double>(const DistSettings&, const Communicator&,
                                             RankResources<double>&,
                                             const std::function<std::string(const std::string&)>&);
template DistOutcome run_distributed<float>(const DistSettings&, const Communicator&,
                                            RankResources<float>&,
                                            const std::function<std::string(const std::string&)>&);

}  // namespace cuboid::dist
