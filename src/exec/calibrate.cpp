#include "exec/calibrate.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "exec/engine.hpp"

namespace cuboid::exec {

std::string CalibrationProblem::describe() const {
  std::ostringstream os;
  os << "engine|m=" << m << "|n=" << n << "|k=" << k << "|tile=" << tile
     << "|alg=" << partition::to_string(algorithm)
     << "|disc=" << partition::to_string(discretization) << "|budgets=";
  for (auto b : options.budget_elements) os << b << ",";
  os << "|beta=" << (options.beta_is_zero ? "0" : options.beta_is_one ? "1" : "x");
  return os.str();
}

CalibrationProblem calibration_problem(std::int64_t m, std::int64_t n, std::int64_t k,
                                       std::int64_t tile, partition::Algorithm algorithm,
                                       partition::Discretization discretization,
                                       const PlanOptions& options) {
  constexpr std::int64_t edge = 2048;
  CalibrationProblem p;
  p.m = std::min(m, edge), p.n = std::min(n, edge), p.k = std::min(k, edge), p.tile = tile;
  // A tile as large as the capped edges would leave one task for all the processors: halve it
  // until the capped cuboid has a few to share (the rate of a smaller GEMM, timed all the same).
  auto tasks = [&](std::int64_t t) {
    return ((p.m + t - 1) / t) * ((p.n + t - 1) / t) * ((p.k + t - 1) / t);
  };
  while (p.tile > 64 && tasks(p.tile) < 8) p.tile = (p.tile + 1) / 2;
  p.algorithm = algorithm, p.discretization = discretization;
  p.options = options;
  for (auto& mp : p.options.min_panels) mp = std::max(mp, 4);
  p.options.min_panels.resize(std::max(p.options.min_panels.size(), options.budget_elements.size()),
                              4);
  return p;
}

Plan truncate_plan(const Plan& plan, const std::vector<double>& flops) {
  Plan out = plan;
  out.prescale.clear();
  for (std::size_t q = 0; q < out.processors.size(); ++q) {
    auto& steps = out.processors[q].steps;
    double done = 0;
    std::size_t keep = 0;
    while (keep < steps.size() && (keep == 0 || done < flops[q])) done += steps[keep++].flops();
    steps.resize(keep);
    if (!steps.empty()) steps.back().c_out = true;
    out.processors[q].flops = done;
  }
  return out;
}

template <class Scalar>
std::vector<double> measure_rates(const std::vector<platform::ProcessorSpec>& specs,
                                  const CalibrationProblem& p, double seconds) {
  const std::size_t np = specs.size();
  std::vector<std::unique_ptr<Worker<Scalar>>> workers;
  for (const auto& s : specs) workers.push_back(make_worker<Scalar>(s));
  Engine<Scalar> engine(std::move(workers));

  const partition::TileExtent tiles{(p.m + p.tile - 1) / p.tile, (p.n + p.tile - 1) / p.tile,
                                    (p.k + p.tile - 1) / p.tile};
  const auto zones = partition::partition_tiles(p.algorithm, p.discretization,
                                                std::vector<double>(np, 1.0), tiles);
  const Plan full = make_plan(zones, p.m, p.n, p.k, p.tile, p.options);

  // Values do not change a GEMM's speed (no NaN, no subnormals): constants fill fastest.
  HostMatrix<Scalar> A(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::calibrate::A"), p.m,
                       p.k),
      B(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::calibrate::B"), p.k, p.n),
      C(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::calibrate::C"), p.m, p.n);
  fill_value(A, Scalar(0.5));
  fill_value(B, Scalar(0.25));
  fill_value(C, Scalar(0));

  auto rates_of = [&](const RunResult& r) {
    std::vector<double> g(np, 0.0);
    for (std::size_t q = 0; q < np; ++q) {
      const auto& w = r.workers[q];
      g[q] = w.flops > 0 && w.finish_s > 0 ? w.flops / w.finish_s / 1e9 : 0.0;
    }
    return g;
  };
  // Probe: two steps each. Run twice: the first run pays for first touches and thread start-up,
  // and a copying processor's rate there would give it a timed run much shorter than the
  // others', where filling and draining its pipeline weigh more than in any real run.
  std::vector<double> two(np, 0.0);
  for (std::size_t q = 0; q < np; ++q) {
    const auto& st = full.processors[q].steps;
    if (st.empty())
      throw std::runtime_error("calibration of " + specs[q].name + ": the processor got no work");
    two[q] = st[0].flops() + (st.size() > 1 ? st[1].flops() : 0.0);
  }
  const Plan probe = truncate_plan(full, two);
  engine.reserve(full);
  engine.run(probe, A, B, C, Scalar(1), Scalar(0));
  const auto first = rates_of(engine.run(probe, A, B, C, Scalar(1), Scalar(0)));

  // Timed: each processor gets about `seconds` of steps at its first rate, so that they all
  // work for the whole measurement.
  std::vector<double> target(np);
  for (std::size_t q = 0; q < np; ++q) target[q] = first[q] * 1e9 * seconds;
  const Plan timed = truncate_plan(full, target);
  // Three timed runs, each processor's median rate: one run disturbed by the rest of the machine
  // (a daemon, a page-cache flush) does not become the speed every later run is cut by.
  constexpr int kRuns = 3;
  std::vector<std::vector<double>> runs;
  for (int r = 0; r < kRuns; ++r)
    runs.push_back(rates_of(engine.run(timed, A, B, C, Scalar(1), Scalar(0))));
  std::vector<double> rates(np);
  for (std::size_t q = 0; q < np; ++q) {
    std::vector<double> g;
    for (const auto& run : runs) g.push_back(run[q]);
    std::nth_element(g.begin(), g.begin() + kRuns / 2, g.end());
    rates[q] = g[kRuns / 2];
  }
  for (std::size_t q = 0; q < np; ++q)
    if (!(rates[q] > 0))
      throw std::runtime_error("calibration of " + specs[q].name + " measured no speed");
  return rates;
}

#define CUBOID_MEASURE_RATES(Scalar)                                                              \
  template std::vector<double> measure_rates<Scalar>(const std::vector<platform::ProcessorSpec>&, \
                                                     const CalibrationProblem&, double);
CUBOID_FOR_EACH_SCALAR(CUBOID_MEASURE_RATES)
#undef CUBOID_MEASURE_RATES

}  // namespace cuboid::exec
