// The stealing strategies without the machine's noise: the real StealScheduler hands out the
// real plan's steps to threads that stand for the host and staged processors, each sleeping a
// step's flops over its true rate, while the partition (and the scheduler's prior) were told
// other speeds. Copies take no time here; their bytes are counted as the staged worker moves
// them (two buffers for A panels and two for B, a panel found in either not copied again; old C
// in where a step needs it, C out where a chain ends). So differences between strategies are
// differences in what they decide, which steal-bench's timings cannot separate from the load.
// Every run checks that each step of the plan was handed out once (exit status 3 otherwise).
//
//   cuboid-steal-sim --speeds 32.7,31.5 [--dims 2560,2560,2560] [--staged 1] [--off 1.5]
//                    [--reps 8] [--scenarios right,staged-fast,staged-slow] [--beta 0.5]
//                    [--algorithm nrrp3d] [--discretization precise]
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <numeric>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "app/setup.hpp"
#include "exec/schedule.hpp"
#include "exec/worker.hpp"
#include "partition/strategy.hpp"

using namespace cuboid;

namespace {

// The staged worker's panel buffers of one kind: which blocks they hold, and the one the last
// step read (a new panel goes to the other).
struct PanelBuffers {
  struct Key {
    std::int64_t r0 = -1, r1 = -1, c0 = -1, c1 = -1;
    bool operator==(const Key& o) const {
      return r0 == o.r0 && r1 == o.r1 && c0 == o.c0 && c1 == o.c1;
    }
  };
  Key held[2];
  int last = 0;
  // Bytes copied to make `k` (of `bytes`) the current panel.
  double place(const Key& k, double bytes) {
    for (int x : {last, last ^ 1})
      if (held[x] == k) {
        last = x;
        return 0;
      }
    last ^= 1;
    held[last] = k;
    return bytes;
  }
};

struct Outcome {
  double seconds = 0, mib = 0, moved_gflop = 0;
  int stolen_units = 0;
  std::string error;  // what went wrong in the hand-out, if anything
};

struct Problem {
  std::int64_t m = 2560, n = 2560, k = 2560, tile = 256, task_tiles = 0;
  double beta = 0.5, link_gbs = 4;
  int staged = 1;
  partition::Algorithm algorithm = partition::Algorithm::nrrp3d;
  partition::Discretization discretization = partition::Discretization::precise;
};

exec::Plan plan_for(const Problem& pr, const std::vector<double>& told, bool stealing) {
  std::vector<platform::ProcessorSpec> specs(std::size_t(pr.staged) + 1);
  for (int q = 1; q <= pr.staged; ++q) specs[std::size_t(q)].kind = platform::ProcessorKind::staged;
  deck::Deck d;  // defaults: the memory budgets a run has without platform.memory_budget_mib
  exec::PlanOptions o = app::plan_options_for(d, specs, sizeof(double));
  o.beta_is_one = pr.beta == 1.0;
  o.beta_is_zero = pr.beta == 0.0;
  const partition::TileExtent t{(pr.m + pr.tile - 1) / pr.tile, (pr.n + pr.tile - 1) / pr.tile,
                                (pr.k + pr.tile - 1) / pr.tile};
  const auto zones = partition::partition_tiles(pr.algorithm, pr.discretization, told, t);
  if (stealing) exec::plan_for_stealing(o, zones, pr.m, pr.n, pr.k, pr.tile, pr.task_tiles);
  return exec::make_plan(zones, pr.m, pr.n, pr.k, pr.tile, o);
}

// One run: processor p runs what it is handed at rate[p] GFLOP/s.
Outcome simulate(const Problem& pr, const exec::Plan& plan, exec::StealPolicy strategy,
                 const std::vector<double>& told, const std::vector<double>& rate,
                 std::uint64_t seed) {
  const std::size_t np = plan.processors.size();
  exec::ScheduleOptions o;
  o.policy = strategy;
  o.speeds = told;
  o.link_gbs.assign(np, pr.link_gbs);
  o.link_gbs[0] = 0;
  o.seed = seed;
  std::vector<bool> copies(np, true);
  copies[0] = false;
  const double t0 = exec::now_seconds();
  exec::StealScheduler s(plan, exec::make_units(plan, sizeof(double)), copies, o, t0);
  std::vector<double> finish(np), bytes(np);
  std::vector<std::vector<exec::StepRef>> ran(np);
  std::vector<std::thread> threads;
  for (std::size_t p = 0; p < np; ++p)
    threads.emplace_back([&, p] {
      PanelBuffers a, b;
      for (exec::StepRef r; s.next(int(p), r);) {
        const exec::Step& st = *r.step;
        ran[p].push_back(r);
        if (copies[p]) {
          const double e = sizeof(double), block = e * double(st.c.rows() * st.c.cols());
          bytes[p] +=
              a.place({st.c.i0, st.c.i1, st.l0, st.l1}, e * double(st.c.rows() * st.depth()));
          bytes[p] +=
              b.place({st.l0, st.l1, st.c.j0, st.c.j1}, e * double(st.depth() * st.c.cols()));
          bytes[p] += (st.c_in ? block : 0.0) + (st.c_out ? block : 0.0);
        }
        std::this_thread::sleep_for(std::chrono::duration<double>(st.flops() / (rate[p] * 1e9)));
        s.done(int(p), st.flops());
      }
      finish[p] = exec::now_seconds() - t0;
    });
  for (auto& t : threads) t.join();
  Outcome out;
  // Every step of the plan handed out once, marked stolen exactly when it ran off its owner.
  std::set<const exec::Step*> seen;
  std::size_t steps = 0;
  for (const auto& pp : plan.processors) steps += pp.steps.size();
  for (std::size_t p = 0; p < np; ++p)
    for (const exec::StepRef& r : ran[p]) {
      if (!seen.insert(r.step).second) out.error = "a step was handed out twice";
      if (r.stolen != (r.owner != int(p)))
        out.error = "a step's stolen mark disagrees with its owner";
    }
  if (out.error.empty() && seen.size() != steps)
    out.error = fmt::format("{} of {} steps were handed out", seen.size(), steps);
  out.seconds = *std::max_element(finish.begin(), finish.end());
  out.mib = std::accumulate(bytes.begin(), bytes.end(), 0.0) / (1024.0 * 1024.0);
  for (std::size_t p = 0; p < np; ++p) {
    const exec::StealCounts c = s.counts(int(p));  // a copy: it holds the steal records too
    out.moved_gflop += c.stolen_flops / 1e9;
    out.stolen_units += c.stolen_units;
  }
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Work-stealing strategies on the real scheduler and plan, with sleeping threads"};
  Problem pr;
  std::vector<double> right;
  std::vector<std::int64_t> dims = {2560, 2560, 2560};
  std::vector<std::string> scenarios = {"right", "staged-fast", "staged-slow"};
  double off = 1.5;
  int reps = 8;
  app.add_option("--speeds", right, "the right speeds: host,staged,... GFLOP/s")
      ->required()
      ->delimiter(',')
      ->check(CLI::Range(1e-3, 1e6));
  app.add_option("--dims", dims, "M,N,K")
      ->delimiter(',')
      ->expected(3)
      ->check(CLI::Range(std::int64_t(1), std::int64_t(1) << 20))
      ->capture_default_str();
  app.add_option("--tile", pr.tile, "tile size")
      ->check(CLI::Range(std::int64_t(1), std::int64_t(1) << 16))
      ->capture_default_str();
  app.add_option("--task-tiles", pr.task_tiles, "run.task_tiles (0: automatic)")
      ->check(CLI::Range(std::int64_t(0), std::int64_t(1) << 16))
      ->capture_default_str();
  app.add_option("--staged", pr.staged, "staged processors beside the host")
      ->check(CLI::Range(1, 8))
      ->capture_default_str();
  app.add_option("--off", off, "how far off the told speeds are in staged-fast/slow")
      ->check(CLI::Range(1.0, 100.0))
      ->capture_default_str();
  app.add_option("--beta", pr.beta, "beta (not 0 or 1: blocks bring their old C in)")
      ->capture_default_str();
  app.add_option("--link-gbs", pr.link_gbs, "platform.staged_link_gbs, as cheapest counts it")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--reps", reps, "runs per stealing cell")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--scenarios", scenarios, "right, staged-fast, staged-slow")
      ->delimiter(',')
      ->check(CLI::IsMember({"right", "staged-fast", "staged-slow"}))
      ->capture_default_str();
  std::string algorithm = "nrrp3d", discretization = "precise";
  app.add_option("--algorithm", algorithm, "partition.algorithm")
      ->check([](const std::string& x) {
        return partition::parse_algorithm(x) ? std::string() : "not a partition algorithm";
      })
      ->capture_default_str();
  app.add_option("--discretization", discretization, "partition.discretization")
      ->check([](const std::string& x) {
        return partition::parse_discretization(x) ? std::string() : "not a discretisation";
      })
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  pr.algorithm = *partition::parse_algorithm(algorithm);
  pr.discretization = *partition::parse_discretization(discretization);
  if (right.size() != std::size_t(pr.staged) + 1) {
    std::fprintf(stderr, "cuboid-steal-sim: --speeds: %d values expected (host, staged...)\n",
                 pr.staged + 1);
    return 2;
  }
  pr.m = dims[0], pr.n = dims[1], pr.k = dims[2];
  std::string speeds_text;
  for (double x : right) speeds_text += (speeds_text.empty() ? "" : ",") + fmt::format("{}", x);

  // The reference: the static plan made with the right speeds.
  std::vector<double> ref;
  const exec::Plan ref_plan = plan_for(pr, right, false);
  for (int i = 0; i < 3; ++i) {
    const Outcome o = simulate(pr, ref_plan, exec::StealPolicy::static_plan, right, right, 1);
    if (!o.error.empty()) {
      std::fprintf(stderr, "cuboid-steal-sim: static, right speeds: %s\n", o.error.c_str());
      return 3;
    }
    ref.push_back(o.seconds);
  }
  const double reference = median(ref);
  std::printf(
      "host + %d staged, %lldx%lldx%lld, %s %s, right speeds %s GFLOP/s, off by %.2fx, %d runs "
      "per stealing cell; static with the right speeds: %.3f s\n\n",
      pr.staged, (long long)pr.m, (long long)pr.n, (long long)pr.k, algorithm.c_str(),
      discretization.c_str(), speeds_text.c_str(), off, reps, reference);
  std::printf(
      "| scenario | schedule | time / static, right speeds | MiB copied (mean) | GFLOP "
      "moved | units stolen |\n|---|---|---|---|---|---|\n");
  for (const std::string& scen : scenarios) {
    std::vector<double> told = right;
    if (scen != "right")
      for (std::size_t q = 1; q < told.size(); ++q)
        told[q] = scen == "staged-fast" ? right[q] * off : right[q] / off;
    const exec::Plan plan = plan_for(pr, told, true);
    for (auto strategy :
         {exec::StealPolicy::static_plan, exec::StealPolicy::random, exec::StealPolicy::cheapest}) {
      // The static schedule decides nothing: two runs show its time.
      const int n = strategy == exec::StealPolicy::static_plan ? 2 : reps;
      std::vector<double> t, mib, moved, units;
      for (int r = 0; r < n; ++r) {
        const Outcome o = simulate(pr, plan, strategy, told, right, std::uint64_t(r) + 1);
        if (!o.error.empty()) {
          std::fprintf(stderr, "cuboid-steal-sim: %s, %s: %s\n", scen.c_str(),
                       std::string(exec::to_string(strategy)).c_str(), o.error.c_str());
          return 3;
        }
        t.push_back(o.seconds / reference);
        mib.push_back(o.mib);
        moved.push_back(o.moved_gflop);
        units.push_back(o.stolen_units);
      }
      const std::string name = strategy == exec::StealPolicy::static_plan
                                   ? "static-tiles"
                                   : std::string(exec::to_string(strategy));
      std::printf("| %s | %s | %.3f | %.1f (%.1f) | %.2f | %.0f |\n", scen.c_str(), name.c_str(),
                  median(t), median(mib),
                  std::accumulate(mib.begin(), mib.end(), 0.0) / double(mib.size()), median(moved),
                  median(units));
    }
  }
  return 0;
}
