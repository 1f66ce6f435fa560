#include "report/run_report.hpp"

#include <fmt/format.h>

#include <ostream>
#include <stdexcept>

#include "util/atomic_output.hpp"

namespace cuboid::report {
namespace {

std::string bytes(double b) {
  if (b <= 0) return "0";
  const char* unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) b /= 1024, ++u;
  return fmt::format(u ? "{:.1f} {}" : "{:.0f} {}", b, unit[u]);
}

}  // namespace

void describe_deck(RunRecord& rec, const deck::Deck& d) {
  const auto& pr = d.problem;
  rec.deck = d.path;
  rec.m = pr.m, rec.n = pr.n, rec.k = pr.k, rec.tile = pr.tile;
  rec.precision = deck::to_string(pr.precision);
  rec.alpha = pr.alpha, rec.beta = pr.beta, rec.seed = pr.seed;
  rec.c_init = deck::to_string(pr.c_init);
  rec.algorithm = std::string(partition::to_string(d.partition.algorithm));
  rec.discretization = std::string(partition::to_string(d.partition.discretization));
  rec.repetitions = d.run.repetitions, rec.warmup = d.run.warmup;
}

void print_summary(std::ostream& os, const RunRecord& r) {
  os << fmt::format("problem    C = {}*A*B + {}*C, m={} n={} k={}, tile {}, {} ({}), seed {}\n",
                    r.alpha, r.beta, r.m, r.n, r.k, r.tile, r.precision, r.deck, r.seed);
  os << fmt::format(
      "partition  {} + {}: Hs / lower bound = {:.4f} (plain 3V^(2/3) bound: {:.4f}), "
      "imbalance {:.2f}%, {}\n",
      r.algorithm, r.discretization, r.ratio_to_lower_bound, r.ratio_plain, 100 * r.imbalance,
      r.k_split ? fmt::format("k split: {} partial C buffers ({})", r.partial_buffers,
                              bytes(r.partial_bytes))
                : std::string("k not split"));
  os << fmt::format("{:<10} {:>7} {:>9} {:>7} {:>7} {:>7} {:>6} {:>8} {:>8} {:>8} {:>10} {:>10}\n",
                    "processor", "threads", "GFLOP/s", "target", "share", "pieces", "steps",
                    "busy s", "finish s", "model s", "in", "out");
  for (const auto& p : r.processors) {
    os << fmt::format(
        "{:<10} {:>7} {:>9.2f} {:>6.1f}% {:>6.1f}% {:>7} {:>6} {:>8.3f} {:>8.3f} {:>8.3f} {:>10} "
        "{:>10}\n",
        p.name, p.threads ? std::to_string(p.threads) : "-", p.speed_gflops, 100 * p.target_share,
        100 * p.volume_share, p.pieces, p.steps, p.busy_s, p.finish_s, p.predicted_s,
        bytes(p.h2d_bytes), bytes(p.d2h_bytes));
  }
  os << fmt::format(
      "time       median {:.4f} s (min {:.4f}, max {:.4f}) over {} repetitions after {} warm-up; "
      "beta pre-pass {:.4f} s, reduction {:.4f} s\n",
      r.median_s, r.min_s, r.max_s, r.repetitions, r.warmup, r.prescale_s, r.reduce_s);
  os << fmt::format("rate       {:.2f} GFLOP/s (2mnk / median time)\n", r.gflops);
  if (!r.validation_performed)
    os << "validation SKIPPED (run.validate = false): the product was not checked\n";
  else
    os << fmt::format(
        "validation {}: error {:.3e} against its bound {:.3e}, where it is largest "
        "relative to the bound ({})\n",
        r.validation_passed ? "PASSED" : "FAILED", r.validation_error, r.validation_bound,
        r.validation_method);
}

nlohmann::json to_json(const RunRecord& r) {
  using nlohmann::json;
  json j;
  j["format"] = "cuboid run record 1";
  j["deck"] = r.deck;
  j["problem"] = {{"m", r.m},
                  {"n", r.n},
                  {"k", r.k},
                  {"tile", r.tile},
                  {"precision", r.precision},
                  {"alpha", r.alpha},
                  {"beta", r.beta},
                  {"seed", r.seed},
                  {"c_init", r.c_init}};
  j["gflops"] = r.gflops;
  j["timing"] = {{"min_s", r.min_s},
                 {"median_s", r.median_s},
                 {"max_s", r.max_s},
                 {"repetitions", r.repetitions},
                 {"warmup", r.warmup},
                 {"times_s", r.times_s},
                 {"prescale_s", r.prescale_s},
                 {"reduce_s", r.reduce_s},
                 {"calibration_s", r.calibration_s},
                 {"partition_s", r.partition_s}};
  j["processors"] = json::array();
  for (const auto& p : r.processors) {
    j["processors"].push_back({{"name", p.name},
                               {"kind", p.kind},
                               {"space", p.space},
                               {"threads", p.threads},
                               {"speed_gflops", p.speed_gflops},
                               {"speed_source", p.speed_source},
                               {"target_share", p.target_share},
                               {"volume", p.volume},
                               {"volume_share", p.volume_share},
                               {"pieces", p.pieces},
                               {"steps", p.steps},
                               {"busy_s", p.busy_s},
                               {"stall_s", p.stall_s},
                               {"finish_s", p.finish_s},
                               {"predicted_s", p.predicted_s},
                               {"h2d_bytes", p.h2d_bytes},
                               {"d2h_bytes", p.d2h_bytes},
                               {"flops", p.flops}});
  }
  j["partition"] = {{"algorithm", r.algorithm},
                    {"discretization", r.discretization},
                    {"ratio_to_lower_bound", r.ratio_to_lower_bound},
                    {"ratio_plain", r.ratio_plain},
                    {"imbalance", r.imbalance},
                    {"k_split", r.k_split},
                    {"partial_buffers", r.partial_buffers},
                    {"partial_bytes", r.partial_bytes}};
  j["validation"] = {{"performed", r.validation_performed},
                     {"passed", r.validation_passed},
                     {"error", r.validation_error},
                     {"bound", r.validation_bound},
                     {"method", r.validation_method}};
  j["build"] = r.build;
  j["host"] = r.host;
  return j;
}

void write_json_file(const std::string& path, const nlohmann::json& j) {
  write_outputs({{"--json", path, j.dump(2) + "\n"}});
}

}  // namespace cuboid::report
