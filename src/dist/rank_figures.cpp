#include "dist/rank_figures.hpp"

namespace cuboid::exec {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(StealRecord, at_s, victim, steps, flops, bytes, thief_done_s,
                                   victim_done_s, thief_gflops, victim_gflops, idle)

}  // namespace cuboid::exec

namespace cuboid::dist {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RankPhases, calibrate_s, partition_s, exchange_s, compute_s,
                                   reduce_s, total_s)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RankBytes, a_sent, a_recv, b_sent, b_recv, c_sent, c_recv,
                                   recv_mpi, model_recv, model_moved)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RankMemory, local_blocks_bytes, projections_bytes, data_bytes,
                                   engine_bytes, carry_peak_bytes, peak_resident_bytes)

namespace {

// A processor's entry is flat (what it is, then what it did), as in the single-process record.
nlohmann::json processor_json(const pipeline::ProcessorFigures& p) {
  const exec::WorkerStats& w = p.done;
  return {{"name", p.name},
          {"kind", p.kind},
          {"space", p.space},
          {"threads", p.threads},
          {"speed_gflops", p.speed_gflops},
          {"speed_source", p.speed_source},
          {"tasks", p.tasks},
          {"pieces", p.pieces},
          {"planned_flops", p.planned_flops},
          {"busy_s", w.busy_s},
          {"copy_s", w.copy_s},
          {"stall_s", w.stall_s},
          {"finish_s", w.finish_s},
          {"h2d_bytes", w.h2d_bytes},
          {"d2h_bytes", w.d2h_bytes},
          {"flops", w.flops},
          {"steps", w.steps},
          {"steal_bytes", w.steal_bytes},
          {"stolen_steps", w.stolen_steps},
          {"lost_steps", w.lost_steps},
          {"stolen_flops", w.stolen_flops},
          {"steals", w.steals}};
}

pipeline::ProcessorFigures processor_of(const nlohmann::json& j) {
  pipeline::ProcessorFigures p;
  exec::WorkerStats& w = p.done;
  j.at("name").get_to(p.name), j.at("kind").get_to(p.kind), j.at("space").get_to(p.space);
  j.at("threads").get_to(p.threads), j.at("speed_gflops").get_to(p.speed_gflops);
  j.at("speed_source").get_to(p.speed_source), j.at("tasks").get_to(p.tasks);
  j.at("pieces").get_to(p.pieces), j.at("planned_flops").get_to(p.planned_flops);
  j.at("busy_s").get_to(w.busy_s), j.at("copy_s").get_to(w.copy_s);
  j.at("stall_s").get_to(w.stall_s), j.at("finish_s").get_to(w.finish_s);
  j.at("h2d_bytes").get_to(w.h2d_bytes), j.at("d2h_bytes").get_to(w.d2h_bytes);
  j.at("flops").get_to(w.flops), j.at("steps").get_to(w.steps);
  j.at("steal_bytes").get_to(w.steal_bytes), j.at("stolen_steps").get_to(w.stolen_steps);
  j.at("lost_steps").get_to(w.lost_steps), j.at("stolen_flops").get_to(w.stolen_flops);
  j.at("steals").get_to(w.steals);
  return p;
}

}  // namespace

void to_json(nlohmann::json& j, const RankFigures& f) {
  j = {{"rank", f.rank},
       {"host", f.host},
       {"speed_gflops", f.speed_gflops},
       {"speed_factor", f.speed_factor},
       {"tasks", f.tasks},
       {"boxes", f.boxes},
       {"pieces", f.pieces},
       {"in_place", {{"c", f.c_in_place}}},
       {"engines_created", f.engines_created},
       {"phases", f.phases},
       {"bytes", f.bytes},
       {"memory", f.memory},
       {"processors", nlohmann::json::array()}};
  for (const auto& p : f.processors) j["processors"].push_back(processor_json(p));
  if (!f.environment.is_null()) j["environment"] = f.environment;
}

void from_json(const nlohmann::json& j, RankFigures& f) {
  j.at("rank").get_to(f.rank), j.at("host").get_to(f.host);
  j.at("speed_gflops").get_to(f.speed_gflops), j.at("speed_factor").get_to(f.speed_factor);
  j.at("tasks").get_to(f.tasks), j.at("boxes").get_to(f.boxes), j.at("pieces").get_to(f.pieces);
  j.at("in_place").at("c").get_to(f.c_in_place);
  j.at("engines_created").get_to(f.engines_created);
  j.at("phases").get_to(f.phases), j.at("bytes").get_to(f.bytes);
  j.at("memory").get_to(f.memory);
  f.processors.clear();
  for (const auto& p : j.at("processors")) f.processors.push_back(processor_of(p));
  f.environment = j.contains("environment") ? j["environment"] : nlohmann::json();
}

}  // namespace cuboid::dist
