// `cuboid run DECK`: deck -> platform -> partition -> discretise -> plan -> execute -> validate
// -> report.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <numeric>

#include "app/auto_partition.hpp"
#include "app/commands.hpp"
#include "app/estimates.hpp"
#include "app/kokkos_session.hpp"
#include "app/records.hpp"
#include "app/run_command.hpp"
#include "app/setup.hpp"
#include "exec/engine.hpp"
#include "exec/fault.hpp"
#include "exec/schedule.hpp"
#include "exec/validate.hpp"
#include "partition/metrics.hpp"
#include "pipeline/figures.hpp"
#include "pipeline/local_multiply.hpp"
#include "report/kokkos_facts.hpp"
#include "report/run_report.hpp"
#include "util/atomic_output.hpp"
#include "util/checked.hpp"
#include "util/error.hpp"
#include "util/host_memory.hpp"
#include "util/timer.hpp"
#include "util/trace.hpp"
#if CUBOID_ENABLE_MPI
#include "app/run_distributed.hpp"
#include "mpi/communicator.hpp"
#endif

namespace cuboid::app {
namespace {

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

std::string describe_problem(const deck::Problem& pr) {
  return "problem m=" + std::to_string(pr.m) + " n=" + std::to_string(pr.n) +
         " k=" + std::to_string(pr.k) + " (" + deck::to_string(pr.precision) + ")";
}

// Host bytes of A, B, C, the original C (for repetitions and validation) and, when validating,
// the check's own.
double matrices_bytes(const deck::Deck& d, std::size_t elem) {
  const auto& pr = d.problem;
  return double(elem) * (double(pr.m) * double(pr.k) + double(pr.k) * double(pr.n) +
                         2.0 * double(pr.m) * double(pr.n)) +
         (d.run.validate ? exec::validation_bytes(pr.m, pr.n, pr.k, elem) : 0.0);
}

// matrices_bytes, refused when it would not fit. Returns the bytes.
double require_matrices_fit(const deck::Deck& d, std::size_t elem) {
  const auto& pr = d.problem;
  const double bytes = matrices_bytes(d, elem);
  require_host_memory(
      bytes, d.at("problem.m"),
      describe_problem(pr) + " with A, B and C" + (d.run.validate ? " and its check" : ""),
      "use smaller problem.m, problem.n, problem.k");
  return bytes;
}

void require_a_task_each(const deck::Deck& d, std::size_t processors,
                         const partition::TileExtent& tiles) {
  // The deck bounds the task count (at most 10^15), so this product does not overflow.
  const std::int64_t tasks = tiles[0] * tiles[1] * tiles[2];
  if (std::int64_t(processors) > tasks)
    throw Error(d.at("platform.processors") + ": " + std::to_string(processors) +
                " processors but only " + std::to_string(tasks) + " tile task" +
                (tasks == 1 ? "" : "s") + " (" + std::to_string(tiles[0]) + "x" +
                std::to_string(tiles[1]) + "x" + std::to_string(tiles[2]) + " tiles of " +
                std::to_string(d.problem.tile) +
                "): list fewer processors or use a smaller problem.tile");
}

// What the engine will allocate beside the matrices, refused (naming the setting that grows
// it most) when it would not fit.
void require_buffers_fit(const deck::Deck& d, double matrices, const pipeline::HostBuffers& b) {
  const std::string problem = describe_problem(d.problem);
  if (b.partial_bytes >= b.copying_bytes)
    require_host_memory(matrices + b.total(), d.at("partition.algorithm"),
                        problem + " with the partial C buffers of a k-split partition (" +
                            human_bytes(b.partial_bytes) + ")",
                        "use fewer processors or an algorithm that splits k less");
  else
    require_host_memory(
        matrices + b.total(), d.at("platform.memory_budget_mib"),
        problem + " with the staged processors' buffers (" + human_bytes(b.copying_bytes) + ")",
        "give a smaller platform.memory_budget_mib");
}

template <class Scalar>
struct Matrices {
  exec::HostMatrix<Scalar> A, B, C0, C;
};

// A, B and C0 generated from the seed; C is filled from C0 before each repetition.
template <class Scalar>
Matrices<Scalar> make_matrices(const deck::Problem& pr) {
  auto uninitialised = [](const char* label, std::int64_t rows, std::int64_t cols) {
    return exec::HostMatrix<Scalar>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), rows, cols);
  };
  // As stored: a transposed A is k x m, a transposed B n x k.
  const bool ta = pr.trans_a != Op::none, tb = pr.trans_b != Op::none;
  Matrices<Scalar> x{uninitialised("cuboid::A", ta ? pr.k : pr.m, ta ? pr.m : pr.k),
                     uninitialised("cuboid::B", tb ? pr.n : pr.k, tb ? pr.k : pr.n),
                     uninitialised("cuboid::C0", pr.m, pr.n),
                     uninitialised("cuboid::C", pr.m, pr.n)};
  exec::fill_random(x.A, pr.seed, exec::MatrixId::A);
  exec::fill_random(x.B, pr.seed, exec::MatrixId::B);
  exec::fill_initial(x.C0, pr.c_init, pr.seed);
  return x;
}

// The partition: the deck's, or the model's choice among every candidate ("auto").
struct PartitionChoice {
  partition::Algorithm algorithm;
  partition::Discretization discretization;
  AutoChoice automatic;  // empty ranking when the deck fixed it
};

PartitionChoice choose(const deck::Deck& d, const std::vector<platform::ProcessorSpec>& specs,
                       const std::vector<double>& speeds, std::size_t elem) {
  PartitionChoice c{d.partition.algorithm, d.partition.discretization, {}};
  if (!d.partition.is_auto()) return c;
  c.automatic = choose_partition(d, specs, speeds, elem);
  c.algorithm = c.automatic.algorithm, c.discretization = c.automatic.discretization;
  std::cerr << fmt::format(
      "partition: auto chose {} + {} (model {:.4f} s)\n", partition::to_string(c.algorithm),
      partition::to_string(c.discretization), c.automatic.ranking.front().seconds);
  return c;
}

void record_partition(report::RunRecord& rec, const PartitionChoice& choice,
                      const pipeline::LocalPlan& plan, const std::vector<double>& speeds,
                      std::size_t elem) {
  rec.algorithm = std::string(partition::to_string(choice.algorithm));
  rec.discretization = std::string(partition::to_string(choice.discretization));
  for (const auto& e : choice.automatic.ranking) {
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
  rec.partition_model = choice.automatic.model;
  const auto metrics = partition::measure(plan.zones, speeds, plan.product.tiles());
  rec.ratio_to_lower_bound = metrics.ratio;
  rec.ratio_plain = metrics.ratio_plain;
  rec.imbalance = metrics.imbalance;
  rec.k_split = plan.steps.k_split;
  rec.partial_buffers = int(plan.steps.partials.size());
  for (const auto& b : plan.steps.partials)
    rec.partial_bytes += double(b.c.rows() * b.c.cols()) * double(elem);
  rec.task_tiles = plan.task_tiles;
}

// Warm-up and timed repetitions, each from C0; the timed ones' results, and every product's hash.
template <class Scalar>
std::vector<exec::RunResult> repeat(const deck::Deck& d, pipeline::LocalMultiply<Scalar>& lm,
                                    const pipeline::LocalPlan& plan, Matrices<Scalar>& x,
                                    exec::Fault fault, std::vector<std::string>& hashes) {
  const auto& pr = d.problem;
  const double flops = gemm_flops(scalar_type_of<Scalar>(), pr.m, pr.n, pr.k);
  std::vector<exec::RunResult> results;
  const int total = d.run.warmup + d.run.repetitions;
  for (int r = 0; r < total; ++r) {
    Kokkos::deep_copy(x.C, x.C0);
    const auto traced_from = trace::Clock::now();
    auto res = lm.multiply(plan, x.A, x.B, x.C, exec::make_scalar<Scalar>(pr.alpha, pr.alpha_im),
                           exec::make_scalar<Scalar>(pr.beta, pr.beta_im));
    trace::complete("run", r < d.run.warmup ? "warm-up" : "repetition", traced_from,
                    trace::Clock::now(), "\"index\": " + std::to_string(r));
    if (fault == exec::Fault::corrupt) x.C(0, 0) = exec::flip_exponent_bit(x.C(0, 0));
    hashes.push_back(bitwise_hash(x.C));
    const bool warm = r < d.run.warmup;
    std::cerr << fmt::format("run: {} {}/{}: {:.4f} s, {:.2f} GFLOP/s\n",
                             warm ? "warm-up" : "repetition", warm ? r + 1 : r - d.run.warmup + 1,
                             warm ? d.run.warmup : d.run.repetitions, res.seconds,
                             flops / res.seconds / 1e9);
    if (!warm) results.push_back(std::move(res));
  }
  return results;
}

template <class Scalar>
void validate_into(report::RunRecord& rec, const Matrices<Scalar>& x, const deck::Problem& pr,
                   int processors) {
  std::cerr << "validate: reference gemm on the host ...\n";
  const auto v =
      exec::validate(x.A, x.B, x.C0, x.C, exec::make_scalar<Scalar>(pr.alpha, pr.alpha_im),
                     exec::make_scalar<Scalar>(pr.beta, pr.beta_im), processors,
                     kokkos_ext::Ops{char(pr.trans_a), char(pr.trans_b)});
  rec.validation_performed = true;
  rec.validation_passed = v.passed;
  rec.validation_error = v.error;
  rec.validation_bound = v.bound;
  rec.validation_method = v.method;
  if (!v.passed)
    std::cerr << fmt::format(
        "validate: {} element(s) beyond their bounds; the worst, C({},{}), is off by {:.3e} "
        "against its bound {:.3e}\n",
        v.failed, v.worst_i, v.worst_j, v.error, v.bound);
}

// A dry run's report: the partition, each processor's share and predicted time, and the memory
// the run would take.
template <class Scalar>
void print_dry_run(const deck::Deck& d, const PartitionChoice& choice,
                   const pipeline::LocalMultiply<Scalar>& lm, const pipeline::LocalPlan& plan,
                   const std::vector<platform::Speed>& speeds, double matrices) {
  const auto& pr = d.problem;
  std::cout << fmt::format(
      "dry run    {}: the partition and its prediction; no matrix made, nothing multiplied\n",
      describe_problem(pr));
  std::cout << fmt::format(
      "partition  {} + {}{}\n", partition::to_string(choice.algorithm),
      partition::to_string(choice.discretization),
      d.partition.is_auto() ? " (chosen by partition.algorithm = \"auto\")" : "");
  const double total = std::accumulate(plan.speeds.begin(), plan.speeds.end(), 0.0);
  const auto& procs = lm.processors();
  for (std::size_t q = 0; q < procs.size(); ++q)
    std::cout << fmt::format(
        "processor  {:<12} {:>9.2f} GFLOP/s ({}), {:5.1f}% of the speed, "
        "model {:.4g} s\n",
        procs[q].name, speeds[q].gflops, speeds[q].source,
        total > 0 ? 100 * plan.speeds[q] / total : 0.0,
        q < plan.prediction.seconds.size() ? plan.prediction.seconds[q] : 0.0);
  std::cout << fmt::format("time       {:.4g} s predicted ({} speed model), reduction {:.4g} s\n",
                           plan.prediction.total_s,
                           lm.options().rates.empty() ? "flops" : "flops+link",
                           plan.prediction.reduction_s);
  const auto buffers = lm.host_buffers({plan});
  const double available = double(host_memory_available());
  // The same 90 % rule the run applies before it allocates.
  const bool fits = matrices + buffers.total() <= 0.9 * available;
  std::cout << fmt::format(
      "memory     {} of host memory: A, B, C and C0{} {}, partial C {}, staging and copying "
      "processors' buffers {}; {} available here{}\n",
      human_bytes(matrices + buffers.total()), d.run.validate ? " with the check's" : "",
      human_bytes(matrices), human_bytes(buffers.partial_bytes), human_bytes(buffers.copying_bytes),
      human_bytes(available), fits ? "" : ": a run here would be refused");
}

template <class Scalar>
void run_deck(const deck::Deck& d, const RunOptions& opt) {
  const auto& pr = d.problem;
  const std::size_t elem = sizeof(Scalar);
  // A dry run makes no matrix: it predicts for a machine that may not be this one.
  const double matrices = opt.dry_run ? matrices_bytes(d, elem) : require_matrices_fit(d, elem);
  const auto specs = processors_of(d);
  pipeline::Product product{pr.m,
                            pr.n,
                            pr.k,
                            pr.tile,
                            pr.beta == 0.0 && pr.beta_im == 0.0,
                            pr.beta == 1.0 && pr.beta_im == 0.0,
                            pr.trans_a,
                            pr.trans_b};
  require_a_task_each(d, specs.size(), product.tiles());

  Stopwatch clock;
  pipeline::Calibration calibration = calibration_for<Scalar>(d, specs, false, std::cerr);
  const double calibration_s = clock.seconds();
  const auto& speeds = calibration.speeds;
  const std::vector<double> gflops = calibration.gflops();

  // Partition the tile cuboid, then turn zones into steps, on the run's one set of workers.
  clock.restart();
  const PartitionChoice choice = choose(d, specs, gflops, elem);
  pipeline::LocalOptions options = local_options_for(d, specs, elem);
  options.algorithm = choice.algorithm, options.discretization = choice.discretization;
  options.rates = std::move(calibration.rates);
  options.reduce_gbs = calibration.reduce_gbs;
  pipeline::LocalMultiply<Scalar> lm(specs, gflops, options);
  pipeline::LocalPlan plan;
  try {
    plan = lm.plan(product);
  } catch (const KeyedError& e) {
    throw Error(d.at(deck_key(e.key)) + ": " + e.what());
  }
  const double partition_s = clock.seconds();
  if (opt.fault == exec::Fault::drop_task && !exec::drop_one_task(plan.steps))
    throw Error(
        "--inject-fault drop-task: no tile task can be left out without also leaving out "
        "beta (the problem is one tile deep): use problem.k > problem.tile or beta = 1");
  if (opt.dry_run) {
    print_dry_run(d, choice, lm, plan, speeds, matrices);
    return;
  }
  require_buffers_fit(d, matrices, lm.host_buffers({plan}));

  Matrices<Scalar> x = make_matrices<Scalar>(pr);
  lm.reserve(plan);
  std::vector<std::string> hashes;
  const auto results = repeat(d, lm, plan, x, opt.fault, hashes);

  report::RunRecord rec;
  report::describe_deck(rec, d);
  record_partition(rec, choice, plan, gflops, elem);
  rec.calibration_s = calibration_s, rec.partition_s = partition_s;
  rec.predicted_s = plan.prediction.total_s;
  rec.speed_model = lm.options().rates.empty() ? "flops" : "flops+link";
  std::vector<double> times;
  for (const auto& r : results) times.push_back(r.seconds);
  record_times(rec, times, gemm_flops(scalar_type_of<Scalar>(), pr.m, pr.n, pr.k));
  const exec::RunResult& med = results[pipeline::summarize_times(times).median_index];
  rec.prescale_s = med.prescale_s, rec.reduce_s = med.reduce_s;
  rec.units = med.units;
  const double total_speed = std::accumulate(plan.speeds.begin(), plan.speeds.end(), 0.0);
  const auto tiles = product.tiles();
  // Speeds are in the plan's unit (2mnk per second); the record counts a complex GEMM's flops
  // as LAPACK does (8mnk).
  const double shown = gemm_flops(scalar_type_of<Scalar>(), 1, 1, 1) / 2;
  for (const auto& f : pipeline::processor_figures(lm, speeds, {plan}, med.workers)) {
    rec.processors.push_back(
        processor_record(f, total_speed, double(tiles[0]) * double(tiles[1]) * double(tiles[2])));
    rec.processors.back().speed_gflops *= shown;
    rec.processors.back().flops *= shown;
  }
  report::describe_process(rec);
  rec.c_hashes = hashes;

  if (d.run.validate) validate_into(rec, x, pr, int(specs.size()));
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

int run_command(const RunOptions& options) {
#if CUBOID_ENABLE_MPI
  // Started by mpirun: the distributed pipeline (src/mpi), which loads the deck itself so that
  // only rank 0 reports a bad one.
  if (mpi::launched_by_mpi()) return run_distributed_command(options);
#endif
  const deck::Deck d = deck::load_deck(options.deck, options.overrides);
  require_validation_for_fault(d, options.fault);
  // The record's and the trace's paths are checked before any work, not after the whole run.
  if (options.json_given) check_output_path("--json", options.json);
  if (!options.trace.empty()) {
    check_output_path("--trace", options.trace);
    trace::enable();
  }
  KokkosSession kokkos;
  with_scalar(d, [&](auto zero) { run_deck<decltype(zero)>(d, options); });
  if (!options.trace.empty()) trace::write("--trace", options.trace, {trace::take_events()});
  return 0;
}

}  // namespace cuboid::app
