#include "partition/choose.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "partition/metrics.hpp"

namespace cuboid::partition {

Estimate estimate(const std::vector<TileZone>& zones, const ModelProblem& pr,
                  const std::vector<ProcessorModel>& procs, const ModelOptions& options) {
  if (zones.size() != procs.size())
    throw std::invalid_argument("estimate: one processor model per zone is needed");
  const std::vector<Traffic> traffic =
      partition::traffic(zones, pr.m, pr.n, pr.k, pr.tile, pr.element_bytes, pr.beta_nonzero);
  const std::int64_t size[3] = {pr.m, pr.n, pr.k};
  auto elements = [&](const TileBox& b, int d) {
    return double(std::min(b.hi[d] * pr.tile, size[d]) - std::min(b.lo[d] * pr.tile, size[d]));
  };
  Estimate e;
  double slowest = 0.0, partial_bytes = 0.0;
  for (std::size_t p = 0; p < zones.size(); ++p) {
    double flops = 0.0;
    for (const TileBox& b : zones[p])
      if (!b.empty()) flops += 2.0 * elements(b, 0) * elements(b, 1) * elements(b, 2);
    const double compute = flops > 0 ? flops / (procs[p].gflops * 1e9) : 0.0;
    const Traffic& t = traffic[p];
    const double bytes = t.a_bytes + t.b_bytes + t.c_read_bytes + t.c_write_bytes;
    const double link = procs[p].link_gbs;
    const double copy = link > 0 && std::isfinite(link) && bytes > 0 ? bytes / (link * 1e9) : 0.0;
    e.compute_s.push_back(compute);
    e.copy_s.push_back(copy);
    slowest = std::max(slowest, compute + copy);
    partial_bytes += t.reduction_bytes;
    e.max_boxes = std::max(e.max_boxes, int(zones[p].size()));
  }
  e.reduction_s = 3.0 * partial_bytes / (options.host_gbs * 1e9);
  e.seconds = slowest + e.reduction_s;
  return e;
}

std::vector<Estimate> rank_candidates(const ModelProblem& pr,
                                      const std::vector<ProcessorModel>& procs,
                                      const std::vector<Algorithm>& algorithms,
                                      const std::vector<Discretization>& discretizations,
                                      const ModelOptions& options) {
  if (procs.empty()) throw std::invalid_argument("no processors to model");
  if (pr.tile < 1 || pr.m < 1 || pr.n < 1 || pr.k < 1)
    throw std::invalid_argument("matrix sizes and the tile must be positive");
  if (!(options.host_gbs > 0)) throw std::invalid_argument("the host bandwidth must be positive");
  std::vector<double> speeds;
  for (const ProcessorModel& p : procs) {
    if (!(p.gflops > 0) || !std::isfinite(p.gflops))
      throw std::invalid_argument("every processor needs a positive, finite speed");
    if (!(p.link_gbs >= 0)) throw std::invalid_argument("a link bandwidth cannot be negative");
    speeds.push_back(p.gflops);
  }
  const TileExtent tiles = {(pr.m + pr.tile - 1) / pr.tile, (pr.n + pr.tile - 1) / pr.tile,
                            (pr.k + pr.tile - 1) / pr.tile};
  std::vector<Estimate> out;
  for (Discretization d : discretizations)
    for (Algorithm a : algorithms) {
      Estimate e;
      try {
        e = estimate(partition_tiles(a, d, speeds, tiles), pr, procs, options);
      } catch (const std::invalid_argument& err) {
        e.failed = err.what();
      }
      e.algorithm = a;
      e.discretization = d;
      out.push_back(std::move(e));
    }
  // Stable, on estimates rounded to six significant digits: candidates that differ by float
  // noise only (the same partition summed in another order) keep the order of the lists.
  auto key = [](double s) {
    if (!(s > 0) || !std::isfinite(s)) return s;
    const double scale = std::pow(10.0, 5 - std::floor(std::log10(s)));
    return std::round(s * scale) / scale;
  };
  double best = std::numeric_limits<double>::infinity();
  for (const Estimate& e : out)
    if (e.failed.empty()) best = std::min(best, key(e.seconds));
  // Within the model's resolution of the best, the fewest boxes per zone first: the model
  // leaves out what each box costs (a GEMM call, its copies, a smaller GEMM running slower).
  auto near = [&](const Estimate& e) {
    return e.failed.empty() && key(e.seconds) <= best * (1 + options.tie_window);
  };
  std::stable_sort(out.begin(), out.end(), [&](const Estimate& x, const Estimate& y) {
    if (x.failed.empty() != y.failed.empty()) return x.failed.empty();
    if (near(x) != near(y)) return near(x);
    if (near(x) && x.max_boxes != y.max_boxes) return x.max_boxes < y.max_boxes;
    if (near(x)) return false;  // the order of the lists
    return key(x.seconds) < key(y.seconds);
  });
  return out;
}

}  // namespace cuboid::partition
