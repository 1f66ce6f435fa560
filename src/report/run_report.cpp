#include "report/run_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <stdexcept>

#include "report/provenance.hpp"
#include "report/sha256.hpp"

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

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

void describe_deck(RunRecord& rec, const deck::Deck& d) {
  const auto& pr = d.problem;
  rec.deck = d.path;
  rec.deck_effective = effective_deck_text(d);
  rec.deck_sha256 = sha256_hex(rec.deck_effective);
  rec.m = pr.m, rec.n = pr.n, rec.k = pr.k, rec.tile = pr.tile;
  rec.precision = deck::to_string(pr.precision);
  rec.trans_a = std::string(1, char(pr.trans_a)), rec.trans_b = std::string(1, char(pr.trans_b));
  rec.alpha = pr.alpha, rec.beta = pr.beta, rec.seed = pr.seed;
  rec.alpha_im = pr.alpha_im, rec.beta_im = pr.beta_im;
  rec.c_init = deck::to_string(pr.c_init);
  rec.algorithm = std::string(partition::to_string(d.partition.algorithm));
  rec.discretization = std::string(partition::to_string(d.partition.discretization));
  rec.repetitions = d.run.repetitions, rec.warmup = d.run.warmup;
  rec.schedule = std::string(exec::to_string(d.run.schedule));
  rec.task_tiles = d.run.task_tiles;
}

namespace {
bool complex_precision(const RunRecord& r) { return r.precision.rfind("complex", 0) == 0; }
// alpha or beta as the summary writes it: a real number, or (re+im i) in a complex precision.
std::string scalar_text(const RunRecord& r, double re, double im) {
  if (!complex_precision(r)) return fmt::format("{}", re);
  return fmt::format("({}{}{}i)", re, im < 0 ? "-" : "+", std::abs(im));
}
// A JSON number, or [re, im] in a complex precision.
nlohmann::json scalar_json(const RunRecord& r, double re, double im) {
  if (!complex_precision(r)) return re;
  return nlohmann::json::array({re, im});
}
}  // namespace

void print_summary(std::ostream& os, const RunRecord& r) {
  auto op = [](const std::string& x, const char* name) {
    return std::string(name) + (x == "T" ? "^T" : x == "C" ? "^H" : "");
  };
  os << fmt::format("problem    C = {}*{}*{} + {}*C, m={} n={} k={}, tile {}, {} ({}), seed {}\n",
                    scalar_text(r, r.alpha, r.alpha_im), op(r.trans_a, "A"), op(r.trans_b, "B"),
                    scalar_text(r, r.beta, r.beta_im), r.m, r.n, r.k, r.tile, r.precision, r.deck,
                    r.seed);
  os << fmt::format(
      "partition  {} + {}: Hs / lower bound = {:.4f} (plain 3V^(2/3) bound: {:.4f}), "
      "imbalance {:.2f}%, {}\n",
      r.algorithm, r.discretization, r.ratio_to_lower_bound, r.ratio_plain, 100 * r.imbalance,
      r.k_split ? fmt::format("k split: {} partial C buffers ({})", r.partial_buffers,
                              bytes(r.partial_bytes))
                : std::string("k not split"));
  if (!r.partition_candidates.empty()) {
    const auto& c = r.partition_candidates;
    os << fmt::format("auto       chose {} + {}: model {:.4f} s of {} candidates ({})\n",
                      c[0].algorithm, c[0].discretization, c[0].model_s, c.size(),
                      r.partition_model);
    const std::size_t shown = std::min<std::size_t>(c.size(), 6);
    for (std::size_t i = 1; i < shown; ++i)
      os << fmt::format(
          "           then {} + {}: model {:.4f} s (compute {:.4f}, copies {:.4f}, reduction "
          "{:.4f}, up to {} boxes)\n",
          c[i].algorithm, c[i].discretization, c[i].model_s, c[i].compute_s, c[i].copy_s,
          c[i].reduction_s, c[i].max_boxes);
    if (c.size() > shown)
      os << fmt::format("           ... {} more candidates in the JSON record\n", c.size() - shown);
  }
  os << fmt::format(
      "{:<10} {:>7} {:>9} {:>7} {:>7} {:>7} {:>6} {:>8} {:>8} {:>8} {:>10} {:>10} {:>8} {:>8} "
      "{:>6}\n",
      "processor", "threads", "GFLOP/s", "target", "share", "pieces", "steps", "busy s", "finish s",
      "model s", "in", "out", "copy s", "stall s", "hidden");
  for (const auto& p : r.processors) {
    os << fmt::format(
        "{:<10} {:>7} {:>9.2f} {:>6.1f}% {:>6.1f}% {:>7} {:>6} {:>8.3f} {:>8.3f} {:>8.3f} {:>10} "
        "{:>10} {:>8} {:>8} {:>6}\n",
        p.name, p.threads ? std::to_string(p.threads) : "-", p.speed_gflops, 100 * p.target_share,
        100 * p.volume_share, p.pieces, p.steps, p.busy_s, p.finish_s, p.predicted_s,
        bytes(p.h2d_bytes), bytes(p.d2h_bytes), p.copies() ? fmt::format("{:.3f}", p.copy_s) : "-",
        p.copies() ? fmt::format("{:.3f}", p.stall_s) : "-",
        p.copies() ? fmt::format("{:.0f}%", 100 * p.hidden_copy_fraction()) : "-");
  }
  if (r.schedule != "static" || r.task_tiles > 0) {
    os << fmt::format("schedule   {}: steps cut to C blocks of at most {}x{} tiles{}\n", r.schedule,
                      r.task_tiles, r.task_tiles,
                      r.units > 0 ? fmt::format(", {} units that can move", r.units) : "");
    if (r.schedule != "static")
      for (const auto& p : r.processors)
        os << fmt::format(
            "           {:<10} stole {} steps ({:.2f} GFLOP, {} copied for them), lost {} "
            "steps\n",
            p.name, p.stolen_steps, p.stolen_flops / 1e9, bytes(p.steal_bytes), p.lost_steps);
  }
  os << fmt::format(
      "time       median {:.4f} s (min {:.4f}, max {:.4f}) over {} repetitions after {} warm-up; "
      "beta pre-pass {:.4f} s, reduction {:.4f} s\n",
      r.median_s, r.min_s, r.max_s, r.repetitions, r.warmup, r.prescale_s, r.reduce_s);
  os << fmt::format("rate       {:.2f} GFLOP/s ({}mnk / median time)\n", r.gflops,
                    complex_precision(r) ? 8 : 2);
  if (r.predicted_s > 0)
    os << fmt::format("model      {:.4f} s predicted ({} speed model), measured/predicted {:.2f}\n",
                      r.predicted_s, r.speed_model, r.median_s / r.predicted_s);
  if (!r.c_hashes.empty()) {
    const bool same = std::all_of(r.c_hashes.begin(), r.c_hashes.end(),
                                  [&](const std::string& h) { return h == r.c_hashes.front(); });
    os << fmt::format("result     C hash {} {} ({} runs, warm-up included)\n", r.c_hashes.back(),
                      same ? "identical in every run" : "DIFFERS between runs", r.c_hashes.size());
  }
  if (!r.validation_performed)
    os << "validation SKIPPED (run.validate = false): the product was not checked\n";
  else
    os << fmt::format(
        "validation {}: error {:.3e} against its bound {:.3e}, where it is largest "
        "relative to the bound ({})\n",
        r.validation_passed ? "PASSED" : "FAILED", r.validation_error, r.validation_bound,
        r.validation_method);
}

namespace {

using nlohmann::json;

json problem_json(const RunRecord& r) {
  return {{"m", r.m},
          {"n", r.n},
          {"k", r.k},
          {"tile", r.tile},
          {"precision", r.precision},
          {"trans_a", r.trans_a},
          {"trans_b", r.trans_b},
          {"alpha", scalar_json(r, r.alpha, r.alpha_im)},
          {"beta", scalar_json(r, r.beta, r.beta_im)},
          {"seed", r.seed},
          {"c_init", r.c_init}};
}

json timing_json(const RunRecord& r) {
  return {{"min_s", r.min_s},
          {"median_s", r.median_s},
          {"max_s", r.max_s},
          {"repetitions", r.repetitions},
          {"warmup", r.warmup},
          {"times_s", r.times_s},
          {"prescale_s", r.prescale_s},
          {"reduce_s", r.reduce_s},
          {"calibration_s", r.calibration_s},
          {"partition_s", r.partition_s}};
}

// One steal; the victim by name when it is one of the run's processors.
json steal_json(const ProcessorRecord::Steal& s, const std::vector<ProcessorRecord>& processors) {
  return {{"at_s", s.at_s},
          {"victim", s.victim >= 0 && std::size_t(s.victim) < processors.size()
                         ? json(processors[std::size_t(s.victim)].name)
                         : json(s.victim)},
          {"steps", s.steps},
          {"flops", s.flops},
          {"bytes", s.bytes},
          {"thief_done_s", s.thief_done_s},
          {"victim_done_s", s.victim_done_s},
          {"thief_gflops", s.thief_gflops},
          {"victim_gflops", s.victim_gflops},
          {"idle", s.idle}};
}

json processor_json(const ProcessorRecord& p, const std::vector<ProcessorRecord>& processors) {
  json steals = json::array();
  for (const auto& s : p.steals) steals.push_back(steal_json(s, processors));
  return {{"name", p.name},
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
          {"copy_s", p.copy_s},
          {"stall_s", p.stall_s},
          // null where nothing was copied (the host works in place)
          {"hidden_copy_fraction", p.copies() ? json(p.hidden_copy_fraction()) : json(nullptr)},
          {"finish_s", p.finish_s},
          {"predicted_s", p.predicted_s},
          {"h2d_bytes", p.h2d_bytes},
          {"d2h_bytes", p.d2h_bytes},
          {"flops", p.flops},
          {"stolen_steps", p.stolen_steps},
          {"lost_steps", p.lost_steps},
          {"stolen_flops", p.stolen_flops},
          {"steal_bytes", p.steal_bytes},
          {"steals", steals}};
}

// partition.algorithm = "auto": the choice and every candidate, with its model time or why it
// could not be built.
json auto_partition_json(const RunRecord& r) {
  json candidates = json::array();
  for (const auto& c : r.partition_candidates) {
    json e = {{"algorithm", c.algorithm},     {"discretization", c.discretization},
              {"compute_s", c.compute_s},     {"copy_s", c.copy_s},
              {"reduction_s", c.reduction_s}, {"max_boxes", c.max_boxes}};
    if (c.failed.empty()) {
      e["model_s"] = c.model_s;
    } else {
      e["failed"] = c.failed;
    }
    candidates.push_back(std::move(e));
  }
  return {{"chosen",
           {{"algorithm", r.partition_candidates[0].algorithm},
            {"discretization", r.partition_candidates[0].discretization}}},
          {"model", r.partition_model},
          {"candidates", std::move(candidates)}};
}

json partition_json(const RunRecord& r) {
  json j = {{"algorithm", r.algorithm},
            {"discretization", r.discretization},
            {"ratio_to_lower_bound", r.ratio_to_lower_bound},
            {"ratio_plain", r.ratio_plain},
            {"imbalance", r.imbalance},
            {"k_split", r.k_split},
            {"partial_buffers", r.partial_buffers},
            {"partial_bytes", r.partial_bytes}};
  if (!r.partition_candidates.empty()) j["auto"] = auto_partition_json(r);
  return j;
}

json validation_json(const RunRecord& r) {
  return {{"performed", r.validation_performed},
          {"passed", r.validation_passed},
          {"error", r.validation_error},
          {"bound", r.validation_bound},
          {"method", r.validation_method}};
}

// One process; a distributed run replaces this from its ranks (add_execution).
json execution_json(const RunRecord& r) {
  const ProcessEnvironment& e = r.environment;
  json j = {{"ranks", 1},
            {"nodes", 1},
            {"hosts", {r.host}},
            {"ranks_per_node", 1},
            {"ranks_per_node_min", 1},
            {"threads_per_rank", e.kokkos_host_concurrency},
            {"threads_per_rank_min", e.kokkos_host_concurrency},
            {"cpus_allowed_per_rank", e.cpus_allowed}};
  const auto env = to_json(e);
  for (const char* key : {"launcher", "omp_num_threads", "omp_proc_bind", "omp_places"})
    j[key] = env[key];
  return j;
}

// The time model: every processor runs its steps at its speed (a device: at its GEMM rate, its
// copies at its link's, overlapped as its pipeline overlaps them), all at once; the slowest one
// and the split-k reduction set the time. Communication is not in it (its bytes are, under
// "communication").
json model_json(const RunRecord& r) {
  double compute_s = 0;
  for (const auto& p : r.processors) compute_s = std::max(compute_s, p.predicted_s);
  json j = {{"compute_s", compute_s}, {"speed_model", r.speed_model}};
  j["basis"] = r.speed_model == "flops+link"
                   ? "max over processors of the plan's steps: flops at the GEMM rate; a device's "
                     "copies at its measured link, overlapping its GEMMs; plus the reduction"
                   : "max over processors of flops / measured (or given) speed";
  if (r.predicted_s > 0) j["predicted_s"] = r.predicted_s;
  return j;
}

}  // namespace

nlohmann::json to_json(const RunRecord& r) {
  json j;
  j["record_version"] = kRecordVersion;
  j["format"] = "cuboid run record " + std::to_string(kRecordVersion);
  j["written_at"] = utc_now();
  j["deck"] = {{"path", r.deck}, {"effective", r.deck_effective}, {"sha256", r.deck_sha256}};
  j["problem"] = problem_json(r);
  j["gflops"] = r.gflops;
  j["timing"] = timing_json(r);
  j["processors"] = json::array();
  for (const auto& p : r.processors) j["processors"].push_back(processor_json(p, r.processors));
  j["partition"] = partition_json(r);
  j["schedule"] = {{"strategy", r.schedule}, {"task_tiles", r.task_tiles}, {"units", r.units}};
  j["validation"] = validation_json(r);
  if (!r.c_hashes.empty()) j["c_hashes"] = r.c_hashes;
  j["build"] = build_json(r.kokkos);
  j["host"] = r.host;
  j["execution"] = execution_json(r);
  j["job"] = job_json();
  if (auto study = study_json(); !study.empty()) j["study"] = study;
  j["model"] = model_json(r);
  return j;
}

void write_json_file(const std::string& path, const nlohmann::json& j) {
  write_outputs({{"--json", path, j.dump(2) + "\n"}});
}

}  // namespace cuboid::report
