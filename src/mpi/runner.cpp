#include "mpi/runner.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <numeric>
#include <sstream>

#include <fmt/format.h>

#include "exec/memory_meter.hpp"
#include "kokkos_ext/compat.hpp"
#include "layout/model.hpp"
#include "layout/rank_zones.hpp"
#include "mpi/exchange.hpp"
#include "mpi/local_matrix.hpp"
#include "partition/speeds.hpp"
#include "partition/strategy.hpp"
#include "pipeline/figures.hpp"
#include "util/error.hpp"
#include "util/host_memory.hpp"
#include "util/timer.hpp"
#include "util/trace.hpp"

namespace cuboid::mpi {
namespace {
// The track of a rank's repetitions and pieces in a trace.
const std::string kRankTrack = "pieces";
}  // namespace

using layout::aligned_distribution;
using layout::AxisOrder;
using layout::block_cyclic_distribution;
using layout::c_panel;
using layout::choose_rank_partition;
using layout::describe;
using layout::Distribution;
using layout::grouped_order;
using layout::MatrixDist;
using layout::MemoryLimitTooSmall;
using layout::model_time;
using layout::model_traffic;
using layout::near_square_grid;
using layout::NoCandidateFits;
using layout::Piece;
using layout::predict_rank_memory;
using layout::ProcessGrid;
using layout::RankPartition;
using layout::RankPartitionRequest;
using layout::Streaming;
namespace {

// The rank partition as integers, so that rank 0 can hand it to everyone: the order's three
// permutations, per rank its boxes, then how k is streamed.
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
  v.insert(v.end(), {p.streaming.slabs, p.streaming.window});
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
  p.streaming = Streaming{int(v[at]), int(v[at + 1])};
}

// One rank's part of a distributed run, phase by phase; run() calls them in order.
template <class Scalar>
class RankRun {
 public:
  using Matrix = exec::HostMatrix<Scalar>;
  using Storage = LocalStorage<Scalar>;
  using Locate = std::function<std::string(const std::string&)>;

  RankRun(const DistSettings& s, const Communicator& comm, RankProcessors<Scalar>& procs,
          const Locate& locate)
      : s_(s), comm_(comm), procs_(procs), local_(*procs.local), locate_(locate) {
    me_ = comm.rank(), P_ = comm.size();
    out_.ranks = P_;
  }

  // A product prepared once and run on the caller's matrices many times (DistributedProduct).
  void prepare() {
    share_speeds();
    choose_partition();
    plan_pieces();
    allocate_panels();
  }
  double multiply(const CallerMatrices<Scalar>& x, Scalar alpha, Scalar beta) {
    A_ = x.A, B_ = x.B, C_ = x.C;
    arrays_of_storage();
    Rep rep;
    try {
      rep = repetition(alpha, beta, false);
    } catch (const std::exception& e) {
      throw RankFailure(std::string("during the distributed product: ") + e.what());
    }
    received_ = rep.traffic.recv_mpi;
    progress_ = rep.progress;
    return rep.global_s;
  }
  const RankPartition& partition() const { return out_.partition; }
  double received() const { return received_; }
  RankProgress progress() const { return progress_; }

  DistOutcome run() {
    // What the process holds before the first matrix; metered peaks count from here.
    baseline_bytes_ = double(exec::meter::resident_bytes());
    exec::meter::reset_peaks();
    share_speeds();
    choose_partition();
    if (s_.dry_run) return std::move(out_);
    plan_pieces();
    drop_task_if_asked();
    make_matrices();
    repeat();
    product_peak_bytes_ = double(exec::meter::host().peak);
    data_bytes_ = data_bytes();
    if (s_.fault == exec::Fault::corrupt && dist().c.owner(0, 0) == me_) {
      auto& x = C_(std::size_t(dist().c.offset(0, 0)));
      x = exec::flip_exponent_bit(x);
    }
    validate();
    gather_figures();
    return std::move(out_);
  }

 private:
  struct Phases {
    double exchange = 0, compute = 0, reduce = 0, total = 0;
  };
  struct Rep {
    double global_s = 0;
    Phases phases;
    TrafficCounters traffic;
    RankProgress progress;
    std::vector<exec::WorkerStats> workers;
  };

  const Distribution& dist() const { return out_.partition.dist; }
  // The depth (elements along k) of a piece.
  std::int64_t depth_of(const Piece& piece) const {
    const AxisOrder& k = out_.partition.order.k;
    return k.first[std::size_t(piece.box.hi[2])] - k.first[std::size_t(piece.box.lo[2])];
  }
  std::exception_ptr keyed(const KeyedError& e) const {
    return std::make_exception_ptr(std::invalid_argument(locate_(e.key) + ": " + e.what()));
  }

  // Every rank's speed (its processors' GFLOP/s times its factor), known to all.
  void share_speeds() {
    std::exception_ptr failure;
    double my_speed = 0;
    try {
      if (!s_.rank_speeds.empty()) {
        if (int(s_.rank_speeds.size()) != P_)
          throw KeyedError(setting::rank_speeds,
                           std::to_string(s_.rank_speeds.size()) + " factors but the job has " +
                               std::to_string(P_) + " ranks (one factor per rank)");
        factor_ = s_.rank_speeds[std::size_t(me_)];
      }
      for (double v : local_.speeds()) my_speed += v;
      my_speed *= factor_;
      grid_ = near_square_grid(P_);
      if (!s_.aligned && !s_.grid.empty()) {
        grid_ = ProcessGrid{s_.grid[0], s_.grid[1]};
        if (grid_.size() != P_)
          throw KeyedError(setting::grid, describe(grid_) + " has " + std::to_string(grid_.size()) +
                                              " processes but the job has " + std::to_string(P_) +
                                              " ranks");
      }
    } catch (const KeyedError& e) {
      failure = keyed(e);
    } catch (...) {
      failure = std::current_exception();
    }
    comm_.agree(failure);
    my_speed_ = my_speed;
    out_.rank_speeds = comm_.allgather(my_speed);
    const double limit =
        s_.memory_limit_bytes > 0 ? s_.memory_limit_bytes : std::numeric_limits<double>::infinity();
    limit_ = comm_.allreduce_min(limit);
    if (!std::isfinite(limit_)) limit_ = 0;
  }

  RankPartitionRequest request() const {
    RankPartitionRequest req;
    req.m = s_.m, req.n = s_.n, req.k = s_.k, req.tile = s_.tile;
    req.speeds = out_.rank_speeds;
    req.aligned = s_.aligned, req.grid = grid_, req.block = s_.block > 0 ? s_.block : s_.tile;
    req.a_transposed = s_.op_a != Op::none, req.b_transposed = s_.op_b != Op::none;
    req.first = s_.first;
    req.automatic = s_.automatic, req.algorithm = s_.algorithm;
    req.discretization = s_.discretization, req.bandwidth_gbs = s_.bandwidth_gbs;
    req.elem = sizeof(Scalar);
    req.allow_idle = s_.allow_idle, req.latency_s = s_.latency_s;
    req.memory_limit_bytes = limit_, req.streaming = Streaming{s_.slabs_per_box, 0};
    return req;
  }

  // Rank 0: refuses speeds that cannot be partitioned, then scores the candidates.
  RankPartition choose_on_root(const RankPartitionRequest& req) const {
    // Speeds that cannot be partitioned are the speeds' fault, not the partition's.
    const char* speed_key = s_.rank_speeds.empty() ? setting::speeds : setting::rank_speeds;
    std::vector<double> working;
    for (double v : out_.rank_speeds)
      if (v > 0) working.push_back(v);
    if (working.empty())
      throw KeyedError(speed_key, "no rank has a positive speed: nobody would compute");
    const double tasks = double((s_.m + s_.tile - 1) / s_.tile) *
                         double((s_.n + s_.tile - 1) / s_.tile) *
                         double((s_.k + s_.tile - 1) / s_.tile);
    if (double(working.size()) > tasks)
      throw KeyedError(setting::tile, std::to_string(working.size()) +
                                          " ranks with work but only " +
                                          std::to_string(std::int64_t(tasks)) +
                                          " tile tasks: use a smaller tile or fewer ranks (or "
                                          "give some a speed factor of 0)");
    if (const auto problem = partition::speed_problem(working))
      throw KeyedError(
          speed_key,
          "the ranks' speeds (their processors' GFLOP/s times their factor): " + *problem);
    return choose_rank_partition(req);
  }

  std::string partition_failure(const std::exception& e) const {
    return locate_(setting::rank_algorithm) + ": the rank partition of " + std::to_string(s_.m) +
           "x" + std::to_string(s_.n) + "x" + std::to_string(s_.k) + " (tiles of " +
           std::to_string(s_.tile) + ") among " + std::to_string(P_) + " ranks: " + e.what();
  }

  // Rank 0 chooses the rank partition and hands it to everyone.
  void choose_partition() {
    clock_.restart();
    const RankPartitionRequest req = request();
    std::exception_ptr failure;
    std::vector<std::int64_t> wire;
    if (me_ == 0) {
      try {
        out_.partition = choose_on_root(req);
        wire = serialize(out_.partition);
      } catch (const KeyedError& e) {
        failure = keyed(e);
      } catch (const MemoryLimitTooSmall& e) {
        failure = std::make_exception_ptr(std::invalid_argument(
            locate_(setting::memory_limit) + ": " + std::to_string(P_) + " ranks: " + e.what()));
      } catch (const NoCandidateFits& e) {
        failure = std::make_exception_ptr(NoCandidateFits(partition_failure(e)));
      } catch (const std::invalid_argument& e) {
        failure = std::make_exception_ptr(std::invalid_argument(partition_failure(e)));
      }
    }
    comm_.agree(failure);
    comm_.broadcast(wire, 0);
    comm_.broadcast(out_.partition.name, 0);
    RankPartition& rank_part = out_.partition;
    if (me_ != 0) {
      deserialize(wire, s_, rank_part);
      rank_part.dist =
          s_.aligned ? aligned_distribution(rank_part.zones, rank_part.order, s_.m, s_.n, s_.k,
                                            s_.tile, req.a_transposed, req.b_transposed)
                     : block_cyclic_distribution(s_.m, s_.n, s_.k, req.block, grid_,
                                                 req.a_transposed, req.b_transposed, req.first);
      rank_part.traffic = model_traffic(rank_part.zones, rank_part.order, rank_part.dist);
      rank_part.predicted_s = model_time(rank_part.traffic, out_.rank_speeds, s_.bandwidth_gbs,
                                         sizeof(Scalar), s_.latency_s);
      rank_part.memory_limit_bytes = limit_;
    }
  }

  // This rank's pieces, each a product of the local multiply, planned together so that the
  // engine's buffers fit every budget; every buffer is made here, before the first repetition.
  void plan_pieces() {
    std::exception_ptr failure;
    const RankPartition& rank_part = out_.partition;
    try {
      ex_ =
          std::make_unique<Exchange<Scalar>>(comm_, rank_part.zones, rank_part.order, dist(),
                                             rank_part.streaming.slabs, rank_part.streaming.window);
      std::vector<pipeline::Product> products;
      for (std::size_t p = 0; p < ex_->pieces().size(); ++p) {
        const Piece& piece = ex_->pieces()[p];
        const exec::Rect c = c_panel(rank_part.order, piece.box);
        const exec::Rect a = ex_->a_panel_of(int(p)), b = ex_->b_panel_of(int(p));
        pipeline::Product product{c.rows(), c.cols(), depth_of(piece), s_.tile};
        product.op_a = s_.op_a, product.op_b = s_.op_b;
        // A partial box starts from zero; a box written in place starts from beta*C0.
        product.beta_is_zero =
            piece.first_of_box && (!ex_->c_in_place() || (s_.beta == 0 && s_.beta_im == 0));
        product.beta_is_one =
            !piece.first_of_box || (ex_->c_in_place() && s_.beta == 1 && s_.beta_im == 0);
        products.push_back(product);
        if (!ex_->a_at(int(p)).in_place()) max_a_ = std::max(max_a_, a.rows() * a.cols());
        if (!ex_->b_at(int(p)).in_place()) max_b_ = std::max(max_b_, b.rows() * b.cols());
      }
      // The processors' buffers in host memory (a staged or emulated processor's, a device's
      // staging), as the plans reserve them: the rest of the peak is the data's.
      const std::int64_t before = exec::meter::host().now;
      if (!products.empty()) plans_ = local_.plan(products);
      for (const auto& plan : plans_) local_.reserve(plan);
      engine_bytes_ = double(exec::meter::host().now - before);
      const double peak = predicted_peak_bytes();
      if (limit_ > 0 && peak > limit_)
        throw KeyedError(
            setting::memory_limit,
            fmt::format("the processors' buffers ({:.4g} MiB in host memory; "
                        "the processors' memory budget bounds them) on top of the data's predicted "
                        "{:.4g} MiB make {:.4g} MiB, above the limit of {:.4g} MiB per rank",
                        engine_bytes_ / 1048576.0, (peak - engine_bytes_) / 1048576.0,
                        peak / 1048576.0, limit_ / 1048576.0));
      if (!ex_->c_in_place())
        for (int b = 0; b < ex_->boxes(); ++b) {
          const exec::Rect& c = ex_->box_panel(b);
          box_c_.emplace_back(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::mpi::C_box"),
                              c.rows(), c.cols());
        }
    } catch (const KeyedError& e) {
      failure = keyed(e);
    } catch (...) {
      failure = std::current_exception();
    }
    partition_s_ = clock_.seconds();
    comm_.agree(failure);
  }

  void drop_task_if_asked() {
    if (s_.fault != exec::Fault::drop_task) return;
    std::exception_ptr failure;
    const int first = int(comm_.allreduce_min(ex_->pieces().empty() ? double(P_) : double(me_)));
    if (me_ == first) {
      bool dropped = false;
      for (auto& plan : plans_)
        if (exec::drop_one_task(plan.steps)) {
          dropped = true;
          break;
        }
      if (!dropped)
        failure = std::make_exception_ptr(std::invalid_argument(
            "--inject-fault drop-task: no tile task can be left out without also leaving out "
            "beta (the problem is one tile deep): use problem.k > problem.tile or beta = 1"));
    }
    comm_.agree(failure);
  }

  // Each rank generates what the layout gives it.
  void make_matrices() {
    generate_matrices();
    allocate_panels();
    arrays_of_storage();
  }

  // The C a piece writes: its rows and columns of its box's partial C, or of the local C when C
  // is in place (then the zone is one box whose C is the local array).
  Matrix c_of(const Piece& piece) const {
    const Matrix& box = ex_->c_in_place() ? C_array_ : box_c_[std::size_t(piece.box_index)];
    const exec::Rect c = c_panel(out_.partition.order, piece.box),
                     at = ex_->box_panel(piece.box_index);
    if (c == at) return box;
    return Kokkos::subview(box, std::make_pair(c.i0 - at.i0, c.i1 - at.i0),
                           std::make_pair(c.j0 - at.j0, c.j1 - at.j0));
  }

  static Matrix panel_of(LocalBlock at, const Matrix& array, const Storage& buffer,
                         const exec::Rect& r) {
    if (!at.in_place()) return Matrix(buffer.data(), r.rows(), r.cols());
    return Kokkos::subview(array, std::make_pair(at.row, at.row + r.rows()),
                           std::make_pair(at.col, at.col + r.cols()));
  }

  void allocate_panels() {
    a_panel_ = Storage(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::mpi::A_panel"),
                       std::size_t(max_a_));
    b_panel_ = Storage(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::mpi::B_panel"),
                       std::size_t(max_b_));
  }

  // The block-cyclic local arrays as matrices, for pieces that read or write them in place.
  void arrays_of_storage() {
    const Distribution& d = dist();
    if (d.a.kind() == MatrixDist::Kind::block_cyclic) {
      A_array_ = local_array(A_, d.a, me_);
      B_array_ = local_array(B_, d.b, me_);
    }
    if (d.c.kind() == MatrixDist::Kind::block_cyclic || d.c.panel_rows(me_) > 0)
      C_array_ = local_array(C_, d.c, me_);
  }

  void generate_matrices() {
    const Distribution& d = dist();
    A_ = local_storage<Scalar>(d.a, me_, "cuboid::mpi::A");
    B_ = local_storage<Scalar>(d.b, me_, "cuboid::mpi::B");
    C_ = local_storage<Scalar>(d.c, me_, "cuboid::mpi::C");
    fill_local(A_, d.a, me_, s_.seed, exec::MatrixId::A);
    fill_local(B_, d.b, me_, s_.seed, exec::MatrixId::B);
    // No copy of C0 is kept: C is regenerated from the seed before each repetition (C0 is read
    // in place, as a caller's C is), and validation regenerates the elements it checks.
    regenerate_c_ = true;
  }

  // C as it stands before the product, from the seed and the initial-C mode.
  void regenerate_c() {
    switch (s_.c_init) {
      case exec::InitialC::random:
        fill_local(C_, dist().c, me_, s_.seed, exec::MatrixId::C);
        break;
      case exec::InitialC::zero:
        Kokkos::deep_copy(C_, Scalar(0));
        break;
      case exec::InitialC::nan:
        Kokkos::deep_copy(C_, exec::quiet_nan<Scalar>());
        break;
    }
  }

  // One repetition: inputs exchanged while pieces compute as they arrive, then the reduction.
  // `global`: the repetition starts together (a barrier) and its time is the slowest rank's (a
  // reduction); a library call needs neither, and at small sizes they would cost more than it.
  Rep repetition(Scalar alpha, Scalar beta, bool global = true) {
    Rep rep;
    rep.workers.resize(local_.processors().size());
    // Every repetition starts from C0, like the single-process run (not timed). The caller's
    // C is its own C0.
    if (regenerate_c_) regenerate_c();
    if (global) {
      comm_.barrier();
      // The ranks' clocks line up at the first barrier (they may be on several nodes).
      if (trace::on() && !traced_origin_) trace::set_origin(trace::Clock::now());
      traced_origin_ = true;
    }
    trace::Span traced("run", "repetition");
    const double t0 = exec::now_seconds();
    Stopwatch sw;
    ex_->start(A_, B_);
    rep.phases.exchange += sw.seconds();
    for (std::size_t p = 0; p < ex_->pieces().size(); ++p) {
      const Piece& piece = ex_->pieces()[p];
      const exec::Rect a = ex_->a_panel_of(int(p)), b = ex_->b_panel_of(int(p));
      // Panels live in two reusable buffers unless the panel is a block of the local array (read
      // there, with the array's leading dimension); either way they hold the stored operands (a
      // transposed A's panel is depth x rows), and the GEMM applies the ops.
      const Matrix Ap = panel_of(ex_->a_at(int(p)), A_array_, a_panel_, a);
      const Matrix Bp = panel_of(ex_->b_at(int(p)), B_array_, b_panel_, b);
      const Matrix Cp = c_of(piece);
      sw.restart();
      ex_->inputs_for(int(p), A_, B_, Ap, Bp);
      rep.phases.exchange += sw.seconds();
      sw.restart();
      const Scalar piece_beta = !piece.first_of_box ? Scalar(1)
                                : ex_->c_in_place() ? beta
                                                    : Scalar(0);
      if (!global && inline_gemm(piece)) {
        // A small piece of a library call on one host processor: one GEMM on this thread. The
        // engine's hand-off to its worker costs microseconds, as much as a small product (no
        // figures are kept).
        const Kokkos::DefaultHostExecutionSpace space;
        const auto traced_from = trace::Clock::now();
        kokkos_ext::gemm(space, kokkos_ext::Ops{char(s_.op_a), char(s_.op_b)}, alpha, Ap, Bp,
                         piece_beta, Cp);
        space.fence();
        if (trace::on())
          trace::complete(local_.processors()[0].name + " gemm", "gemm", traced_from,
                          trace::Clock::now(), "\"piece\": " + std::to_string(p));
        ex_->progress();
        ++rep.progress.pieces_inline;
        rep.phases.compute += sw.seconds();
        continue;
      }
      trace::Span traced_piece(kRankTrack, "piece", "\"piece\": " + std::to_string(p));
      ++rep.progress.pieces_on_workers;
      auto result = local_.multiply(plans_[p], Ap, Bp, Cp, alpha, piece_beta, [&] {
        ++rep.progress.polls_while_computing;
        return ex_->progress();
      });
      rep.phases.compute += sw.seconds();
      for (std::size_t q = 0; q < result.workers.size(); ++q)
        pipeline::add_product(rep.workers[q], result.workers[q]);
    }
    sw.restart();
    ex_->reduce(box_c_, beta, C_);
    rep.phases.reduce = sw.seconds();
    rep.phases.total = exec::now_seconds() - t0;
    rep.traffic = ex_->counters();
    rep.global_s = global ? comm_.allreduce_max(rep.phases.total) : rep.phases.total;
    return rep;
  }

  void repeat() {
    try {
      for (int r = 0; r < s_.warmup + s_.repetitions; ++r) {
        Rep rep = repetition(exec::make_scalar<Scalar>(s_.alpha, s_.alpha_im),
                             exec::make_scalar<Scalar>(s_.beta, s_.beta_im));
        if (r >= s_.warmup) reps_.push_back(std::move(rep));
      }
    } catch (const std::exception& e) {
      throw RankFailure(std::string("during the distributed product: ") + e.what());
    }
    for (const auto& r : reps_) out_.times_s.push_back(r.global_s);
  }

  const Rep& median_rep() const {
    std::vector<double> times;
    for (const auto& r : reps_) times.push_back(r.global_s);
    return reps_[pipeline::summarize_times(times).median_index];
  }

  // This rank's predicted peak: the model's for its data, and its processors' buffers.
  double predicted_peak_bytes() const {
    const RankPartition& p = out_.partition;
    return predict_rank_memory(p.traffic[std::size_t(me_)], dist(), me_, p.zones[std::size_t(me_)],
                               p.order, p.streaming)
                   .total() *
               double(sizeof(Scalar)) +
           engine_bytes_;
  }

  // Memory the run holds for data: local blocks, panels, partial boxes, carried tiles, message
  // buffers, the engine's buffers.
  double data_bytes() const {
    const double elem = double(sizeof(Scalar));
    double data =
        double(A_.size() + B_.size() + C_.size() + a_panel_.size() + b_panel_.size()) * elem +
        local_.reserved_bytes() + ex_->carry_peak_bytes() + ex_->buffer_bytes();
    for (const auto& b : box_c_) data += double(b.size()) * elem;
    return data;
  }

  void validate() {
    if (!s_.validate) return;
    const int extra = P_ + int(comm_.allreduce_max(double(ex_->pieces().size())));
    // The product is done: its panels, partial boxes and message buffers make room for the
    // check's blocks, which are cut to what the limit leaves beside the blocks of A, B and C and
    // the check's vectors (a few of length m, n and k).
    a_panel_ = Storage(), b_panel_ = Storage();
    box_c_.clear();
    ex_->release();
    double budget = 0;
    if (limit_ > 0) {
      const double vectors = 16.0 * double(s_.m + s_.n + s_.k) * double(sizeof(double));
      budget = std::max(1.0, limit_ - double(exec::meter::host().now) - vectors);
    }
    try {
      const InitialCElements<Scalar> C0{s_.seed, s_.c_init};
      out_.validation = validate_distributed(
          comm_, dist(), A_, B_, C0, C_, exec::make_scalar<Scalar>(s_.alpha, s_.alpha_im),
          exec::make_scalar<Scalar>(s_.beta, s_.beta_im), s_.seed, s_.full_check_max, extra,
          s_.tile, s_.op_a, s_.op_b, budget);
      out_.validated = true;
    } catch (const std::exception& e) {
      throw RankFailure(std::string("during validation: ") + e.what());
    }
  }

  // This rank's figures of the median repetition (by the slowest rank's time).
  RankFigures figures() const {
    const Rep& med = median_rep();
    const auto& tr = med.traffic;
    const auto& model = out_.partition.traffic[std::size_t(me_)];
    const double elem = double(sizeof(Scalar));
    RankFigures f;
    f.rank = me_, f.host = hostname(), f.speed_gflops = my_speed_, f.speed_factor = factor_;
    for (const auto& b : out_.partition.zones[std::size_t(me_)]) f.tasks += b.volume();
    f.boxes = ex_->boxes(), f.pieces = int(ex_->pieces().size());
    f.c_in_place = ex_->c_in_place();
    f.engines_created = exec::Engine<Scalar>::created() - procs_.engines_before;
    f.phases = {procs_.calibration_s, partition_s_,      med.phases.exchange,
                med.phases.compute,   med.phases.reduce, med.phases.total};
    f.bytes = {tr.a_sent,           tr.a_recv, tr.b_sent,   tr.b_recv,
               tr.c_sent,           tr.c_recv, tr.recv_mpi, model.received() * elem,
               model.moved() * elem};
    const double blocks = double(A_.size() + B_.size() + C_.size()) * elem;
    f.memory.local_blocks_bytes = blocks;
    f.memory.projections_bytes = model.footprint() * elem;
    f.memory.data_bytes = data_bytes_;
    f.memory.engine_bytes = local_.reserved_bytes();
    f.memory.carry_peak_bytes = ex_->carry_peak_bytes();
    f.memory.peak_resident_bytes = double(exec::meter::peak_resident_bytes());
    f.memory.limit_bytes = limit_;
    f.memory.predicted_peak_bytes = predicted_peak_bytes();
    if (exec::meter::installed()) {
      f.memory.allocated_peak_bytes = product_peak_bytes_;
      f.memory.validation_peak_bytes = double(exec::meter::host().peak);
      for (const auto& [space, x] : exec::meter::spaces())
        if (space.find("Host") == std::string::npos)
          f.memory.device_peak_bytes[space] = double(x.peak);
      f.memory.baseline_bytes = baseline_bytes_;
    }
    f.progress = med.progress;
    f.processors = pipeline::processor_figures(local_, procs_.speeds, plans_, med.workers);
    f.environment = s_.rank_info;
    return f;
  }

  void gather_figures() {
    nlohmann::json mine = figures();
    const auto gathered = comm_.gather(mine.dump(), 0);
    if (me_ == 0)
      for (const auto& g : gathered) out_.per_rank.push_back(nlohmann::json::parse(g));
  }

  // A GEMM on the calling thread drives no MPI while it runs: a transfer this rank owns waits
  // for it, and with one thread per rank the ranks fall into lock-step. So only a piece whose
  // GEMM takes about as long as the engine's hand-off (tens of microseconds) runs inline; larger
  // ones go to the engine's worker while this thread polls MPI.
  static constexpr double inline_max_flops = 2.0 * 96 * 96 * 96;

  bool inline_gemm(const Piece& piece) const {
    const bool single_host = local_.processors().size() == 1 &&
                             local_.processors()[0].kind == platform::ProcessorKind::host;
    if (!single_host) return false;
    const exec::Rect c = c_panel(out_.partition.order, piece.box);
    return 2.0 * double(c.rows()) * double(c.cols()) * double(depth_of(piece)) <= inline_max_flops;
  }

  const DistSettings& s_;
  const Communicator& comm_;
  RankProcessors<Scalar>& procs_;
  pipeline::LocalMultiply<Scalar>& local_;
  Locate locate_;
  double received_ = 0;
  RankProgress progress_;
  int me_ = 0, P_ = 1;
  DistOutcome out_;
  double factor_ = 1, my_speed_ = 0, partition_s_ = 0, limit_ = 0, baseline_bytes_ = 0;
  double product_peak_bytes_ = 0;  // metered, before validation
  double data_bytes_ = 0;          // data_bytes() once the product is done
  double engine_bytes_ = 0;        // the processors' buffers in host memory, as reserved
  ProcessGrid grid_;
  Stopwatch clock_;
  std::unique_ptr<Exchange<Scalar>> ex_;
  std::vector<pipeline::LocalPlan> plans_;  // one per piece
  std::int64_t max_a_ = 0, max_b_ = 0;
  std::vector<Matrix> box_c_;
  Storage A_, B_, C_, a_panel_, b_panel_;
  bool traced_origin_ = false;
  bool regenerate_c_ = false;  // C0 is not kept: C is regenerated before each repetition
  Matrix A_array_, B_array_, C_array_;
  std::vector<Rep> reps_;
};

}  // namespace

template <class Scalar>
struct DistributedProduct<Scalar>::Impl {
  Impl(const DistSettings& settings, MPI_Comm comm, RankProcessors<Scalar> processors,
       std::function<std::string(const std::string&)> locate)
      : s(settings), c(comm), procs(processors), run(s, c, procs, std::move(locate)) {}
  DistSettings s;
  Communicator c;
  RankProcessors<Scalar> procs;
  RankRun<Scalar> run;
};

template <class Scalar>
DistributedProduct<Scalar>::DistributedProduct(
    const DistSettings& s, MPI_Comm comm, RankProcessors<Scalar> processors,
    std::function<std::string(const std::string&)> locate)
    : impl_(std::make_unique<Impl>(s, comm, processors, std::move(locate))) {
  impl_->run.prepare();
}

template <class Scalar>
DistributedProduct<Scalar>::~DistributedProduct() = default;

template <class Scalar>
double DistributedProduct<Scalar>::multiply(const CallerMatrices<Scalar>& m, Scalar alpha,
                                            Scalar beta) {
  return impl_->run.multiply(m, alpha, beta);
}

template <class Scalar>
const RankPartition& DistributedProduct<Scalar>::partition() const {
  return impl_->run.partition();
}

template <class Scalar>
double DistributedProduct<Scalar>::received_bytes() const {
  return impl_->run.received();
}

template <class Scalar>
RankProgress DistributedProduct<Scalar>::progress() const {
  return impl_->run.progress();
}

void set_rank_partition(DistSettings& s, const std::string& algorithm,
                        const std::vector<double>& rank_speeds, double bandwidth_gbs) {
  s.automatic = algorithm == "auto";
  if (!s.automatic) {
    const auto parsed = partition::parse_algorithm(algorithm);
    if (!parsed)
      throw KeyedError(setting::rank_algorithm, "unknown algorithm \"" + algorithm + "\"");
    s.algorithm = *parsed;
  }
  s.rank_speeds = rank_speeds;
  s.bandwidth_gbs = bandwidth_gbs;
}

#define CUBOID_DISTRIBUTED_PRODUCT(Scalar) template class DistributedProduct<Scalar>;
CUBOID_FOR_EACH_SCALAR(CUBOID_DISTRIBUTED_PRODUCT)
#undef CUBOID_DISTRIBUTED_PRODUCT

template <class Scalar>
DistOutcome run_distributed(const DistSettings& s, const Communicator& comm,
                            RankProcessors<Scalar>& processors,
                            const std::function<std::string(const std::string&)>& locate) {
  return RankRun<Scalar>(s, comm, processors, locate).run();
}

#define CUBOID_RUN_DISTRIBUTED(Scalar)                                   \
  template DistOutcome run_distributed<Scalar>(                          \
      const DistSettings&, const Communicator&, RankProcessors<Scalar>&, \
      const std::function<std::string(const std::string&)>&);
CUBOID_FOR_EACH_SCALAR(CUBOID_RUN_DISTRIBUTED)
#undef CUBOID_RUN_DISTRIBUTED

}  // namespace cuboid::mpi
