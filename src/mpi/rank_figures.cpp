#include "mpi/rank_figures.hpp"

namespace cuboid::exec {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(StealRecord, at_s, victim, steps, flops, bytes, thief_done_s,
                                   victim_done_s, thief_gflops, victim_gflops, idle)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(WorkerStats, busy_s, copy_s, stall_s, finish_s, h2d_bytes,
                                   d2h_bytes, flops, steps, steal_bytes, stolen_steps, lost_steps,
                                   stolen_flops, steals)

}  // namespace cuboid::exec

namespace cuboid::pipeline {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ProcessorFigures, name, kind, space, threads, speed_gflops,
                                   speed_source, tasks, pieces, planned_flops, predicted_s,
                                   cut_gflops, done)

}  // namespace cuboid::pipeline

namespace cuboid::mpi {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RankPhases, calibrate_s, partition_s, exchange_s, compute_s,
                                   reduce_s, total_s)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RankBytes, a_sent, a_recv, b_sent, b_recv, c_sent, c_recv,
                                   recv_mpi, model_recv, model_moved)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RankMemory, local_blocks_bytes, projections_bytes, data_bytes,
                                   engine_bytes, carry_peak_bytes, peak_resident_bytes, limit_bytes,
                                   predicted_peak_bytes, allocated_peak_bytes,
                                   validation_peak_bytes, device_peak_bytes, baseline_bytes)

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RankProgress, polls_while_computing, pieces_on_workers,
                                   pieces_inline)

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
       {"progress", f.progress},
       {"processors", f.processors}};
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
  j.at("progress").get_to(f.progress);
  j.at("processors").get_to(f.processors);
  f.environment = j.contains("environment") ? j["environment"] : nlohmann::json();
}

}  // namespace cuboid::mpi
