#include "app/records.hpp"

namespace cuboid::app {

report::ProcessorRecord processor_record(const pipeline::ProcessorFigures& f, double total_speed,
                                         double total_tasks, double factor) {
  report::ProcessorRecord p;
  const exec::WorkerStats& w = f.done;
  p.name = f.name, p.kind = f.kind, p.space = f.space, p.threads = f.threads;
  p.speed_gflops = f.speed_gflops, p.speed_source = f.speed_source;
  p.target_share = total_speed > 0 ? f.cut_gflops * factor / total_speed : 0;
  p.volume = f.tasks, p.volume_share = total_tasks > 0 ? f.tasks / total_tasks : 0;
  p.pieces = f.pieces, p.steps = w.steps;
  p.busy_s = w.busy_s, p.copy_s = w.copy_s, p.stall_s = w.stall_s, p.finish_s = w.finish_s;
  p.h2d_bytes = w.h2d_bytes, p.d2h_bytes = w.d2h_bytes, p.flops = w.flops;
  p.predicted_s = f.predicted_s;
  p.stolen_steps = w.stolen_steps, p.lost_steps = w.lost_steps;
  p.stolen_flops = w.stolen_flops, p.steal_bytes = w.steal_bytes;
  for (const exec::StealRecord& r : w.steals)
    p.steals.push_back({r.at_s, r.victim, r.steps, r.flops, r.bytes, r.thief_done_s,
                        r.victim_done_s, r.thief_gflops, r.victim_gflops, r.idle});
  return p;
}

void record_times(report::RunRecord& rec, const std::vector<double>& seconds, double flops) {
  const pipeline::TimeSummary t = pipeline::summarize_times(seconds);
  rec.times_s = seconds;
  rec.min_s = t.min_s, rec.median_s = t.median_s, rec.max_s = t.max_s;
  rec.gflops = rec.median_s > 0 ? flops / rec.median_s / 1e9 : 0;
}

}  // namespace cuboid::app
