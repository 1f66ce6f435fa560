#include "app/auto_partition.hpp"

#include <fmt/format.h>

#include <limits>

#include "util/error.hpp"

namespace cuboid::app {
namespace {

// Assumed figures (stated in every report that uses them): a device's link is PCIe 4.0 x16 as
// it delivers in practice; the split-k reduction streams host memory at about this rate. A
// staged processor copies within host memory and is modelled as unlimited until the deck can
// say otherwise.
constexpr double kDeviceLinkGBs = 25.0;
constexpr double kHostReductionGBs = 20.0;

}  // namespace

AutoChoice choose_partition(const deck::Deck& d, const std::vector<platform::ProcessorSpec>& specs,
                            const std::vector<double>& gflops, std::size_t element_bytes) {
  using platform::ProcessorKind;
  std::vector<partition::ProcessorModel> procs;
  std::string links;
  for (std::size_t p = 0; p < specs.size(); ++p) {
    partition::ProcessorModel m;
    m.gflops = gflops[p];
    std::string how;
    switch (specs[p].kind) {
      case ProcessorKind::host:
        m.link_gbs = 0.0;
        how = "in place";
        break;
      case ProcessorKind::staged:
        m.link_gbs = std::numeric_limits<double>::infinity();
        how = "unlimited";
        break;
      case ProcessorKind::emulated:
        m.link_gbs =
            specs[p].link_gbs > 0 ? specs[p].link_gbs : std::numeric_limits<double>::infinity();
        how = specs[p].link_gbs > 0 ? fmt::format("{:g} GB/s", specs[p].link_gbs) : "unlimited";
        break;
      case ProcessorKind::device:
        m.link_gbs = kDeviceLinkGBs;
        how = fmt::format("{:g} GB/s (assumed PCIe)", kDeviceLinkGBs);
        break;
    }
    links += (links.empty() ? "" : ", ") + specs[p].name + " " + how;
    procs.push_back(m);
  }
  partition::ModelProblem pr;
  pr.m = d.problem.m;
  pr.n = d.problem.n;
  pr.k = d.problem.k;
  pr.tile = d.problem.tile;
  pr.element_bytes = element_bytes;
  pr.beta_nonzero = d.problem.beta != 0.0 || d.problem.beta_im != 0.0;
  partition::ModelOptions options;
  options.host_gbs = kHostReductionGBs;

  // Preferred first: equal estimates keep this order (the default choice leads).
  std::vector<partition::Algorithm> algorithms{d.partition.algorithm};
  if (d.partition.auto_algorithm)
    for (auto name : partition::algorithm_names())
      if (*partition::parse_algorithm(name) != d.partition.algorithm)
        algorithms.push_back(*partition::parse_algorithm(name));
  std::vector<partition::Discretization> discretizations{d.partition.discretization};
  if (d.partition.auto_discretization)
    for (auto dz : {partition::Discretization::stepped, partition::Discretization::precise,
                    partition::Discretization::rounded})
      if (dz != d.partition.discretization) discretizations.push_back(dz);

  AutoChoice c;
  try {
    c.ranking = partition::rank_candidates(pr, procs, algorithms, discretizations, options);
  } catch (const std::invalid_argument& e) {
    throw Error(d.location("partition.algorithm") +
                ": partition.algorithm = \"auto\": " + e.what());
  }
  if (c.ranking.empty() || !c.ranking.front().failed.empty())
    throw Error(d.location("partition.algorithm") +
                ": partition.algorithm = \"auto\": no candidate could be built (" +
                (c.ranking.empty() ? std::string("none") : c.ranking.front().failed) + ")");
  c.algorithm = c.ranking.front().algorithm;
  c.discretization = c.ranking.front().discretization;
  c.model = fmt::format(
      "compute at each speed + copies of the zone's projections at its link ({}) + split-k "
      "reduction at {:g} GB/s on the host (assumed)",
      links, kHostReductionGBs);
  return c;
}

}  // namespace cuboid::app
