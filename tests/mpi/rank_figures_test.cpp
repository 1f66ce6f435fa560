// A rank's figures survive their trip through JSON (gathered on rank 0 as text): every field,
// each set to a value of its own, comes back as it went. No MPI run.
#include <gtest/gtest.h>

#include "mpi/rank_figures.hpp"

using namespace cuboid;

namespace {

mpi::RankFigures every_field_set() {
  mpi::RankFigures f;
  f.rank = 3, f.host = "node-7", f.speed_gflops = 41.5, f.speed_factor = 0.75;
  f.tasks = 96, f.boxes = 2, f.pieces = 5, f.c_in_place = true, f.engines_created = 1;
  f.phases = {0.01, 0.02, 0.03, 0.4, 0.05, 0.51};
  f.bytes.a_sent = 1, f.bytes.a_recv = 2, f.bytes.b_sent = 3, f.bytes.b_recv = 4;
  f.bytes.c_sent = 5, f.bytes.c_recv = 6, f.bytes.recv_mpi = 7, f.bytes.model_recv = 8;
  f.bytes.model_moved = 9;
  auto& m = f.memory;
  m.local_blocks_bytes = 11, m.projections_bytes = 12, m.data_bytes = 13, m.engine_bytes = 14;
  m.carry_peak_bytes = 15, m.peak_resident_bytes = 16, m.limit_bytes = 17;
  m.predicted_peak_bytes = 18, m.allocated_peak_bytes = 19, m.validation_peak_bytes = 20;
  m.device_peak_bytes = {{"cuda:0", 21}, {"emulated:1", 22}};
  m.baseline_bytes = 23;
  f.progress = {123, 4, 1};
  pipeline::ProcessorFigures p;
  p.name = "3:staged:0", p.kind = "staged", p.space = "OpenMP", p.threads = 2;
  p.speed_gflops = 9.5, p.speed_source = "cache", p.tasks = 40, p.pieces = 3;
  p.planned_flops = 1e9, p.predicted_s = 0.2, p.cut_gflops = 8.5;
  auto& d = p.done;
  d.busy_s = 0.31, d.copy_s = 0.32, d.stall_s = 0.33, d.finish_s = 0.34;
  d.h2d_bytes = 35, d.d2h_bytes = 36, d.flops = 37, d.steps = 38, d.steal_bytes = 39;
  d.stolen_steps = 40, d.lost_steps = 41, d.stolen_flops = 42;
  exec::StealRecord s;
  s.at_s = 0.5, s.victim = 1, s.steps = 2, s.flops = 3, s.bytes = 4, s.thief_done_s = 0.6;
  s.victim_done_s = 0.7, s.thief_gflops = 8, s.victim_gflops = 9, s.idle = true;
  d.steals = {s};
  f.processors = {p};
  f.environment = {{"launcher", "mpirun"}, {"omp_num_threads", 1}};
  return f;
}

}  // namespace

TEST(RankFigures, EveryFieldComesBackFromJson) {
  const mpi::RankFigures in = every_field_set();
  const nlohmann::json j = in;
  const auto out = nlohmann::json::parse(j.dump()).get<mpi::RankFigures>();
  EXPECT_EQ(out.rank, in.rank);
  EXPECT_EQ(out.host, in.host);
  EXPECT_EQ(out.speed_gflops, in.speed_gflops);
  EXPECT_EQ(out.speed_factor, in.speed_factor);
  EXPECT_EQ(out.tasks, in.tasks);
  EXPECT_EQ(out.boxes, in.boxes);
  EXPECT_EQ(out.pieces, in.pieces);
  EXPECT_EQ(out.c_in_place, in.c_in_place);
  EXPECT_EQ(out.engines_created, in.engines_created);
  const auto& ph = out.phases;
  EXPECT_EQ(ph.calibrate_s, 0.01);
  EXPECT_EQ(ph.partition_s, 0.02);
  EXPECT_EQ(ph.exchange_s, 0.03);
  EXPECT_EQ(ph.compute_s, 0.4);
  EXPECT_EQ(ph.reduce_s, 0.05);
  EXPECT_EQ(ph.total_s, 0.51);
  const auto& b = out.bytes;
  EXPECT_EQ(b.a_sent, 1);
  EXPECT_EQ(b.a_recv, 2);
  EXPECT_EQ(b.b_sent, 3);
  EXPECT_EQ(b.b_recv, 4);
  EXPECT_EQ(b.c_sent, 5);
  EXPECT_EQ(b.c_recv, 6);
  EXPECT_EQ(b.recv_mpi, 7);
  EXPECT_EQ(b.model_recv, 8);
  EXPECT_EQ(b.model_moved, 9);
  const auto& m = out.memory;
  EXPECT_EQ(m.local_blocks_bytes, 11);
  EXPECT_EQ(m.projections_bytes, 12);
  EXPECT_EQ(m.data_bytes, 13);
  EXPECT_EQ(m.engine_bytes, 14);
  EXPECT_EQ(m.carry_peak_bytes, 15);
  EXPECT_EQ(m.peak_resident_bytes, 16);
  EXPECT_EQ(m.limit_bytes, 17);
  EXPECT_EQ(m.predicted_peak_bytes, 18);
  EXPECT_EQ(m.allocated_peak_bytes, 19);
  EXPECT_EQ(m.validation_peak_bytes, 20);
  EXPECT_EQ(m.device_peak_bytes, in.memory.device_peak_bytes);
  EXPECT_EQ(m.baseline_bytes, 23);
  EXPECT_EQ(out.progress.polls_while_computing, 123);
  EXPECT_EQ(out.progress.pieces_on_workers, 4);
  EXPECT_EQ(out.progress.pieces_inline, 1);
  EXPECT_EQ(out.environment, in.environment);

  ASSERT_EQ(out.processors.size(), 1u);
  const auto &p = out.processors[0], &q = in.processors[0];
  EXPECT_EQ(p.name, q.name);
  EXPECT_EQ(p.kind, q.kind);
  EXPECT_EQ(p.space, q.space);
  EXPECT_EQ(p.threads, q.threads);
  EXPECT_EQ(p.speed_gflops, q.speed_gflops);
  EXPECT_EQ(p.speed_source, q.speed_source);
  EXPECT_EQ(p.tasks, q.tasks);
  EXPECT_EQ(p.pieces, q.pieces);
  EXPECT_EQ(p.planned_flops, q.planned_flops);
  EXPECT_EQ(p.predicted_s, q.predicted_s);
  EXPECT_EQ(p.cut_gflops, q.cut_gflops);
  const auto &d = p.done, &e = q.done;
  EXPECT_EQ(d.busy_s, e.busy_s);
  EXPECT_EQ(d.copy_s, e.copy_s);
  EXPECT_EQ(d.stall_s, e.stall_s);
  EXPECT_EQ(d.finish_s, e.finish_s);
  EXPECT_EQ(d.h2d_bytes, e.h2d_bytes);
  EXPECT_EQ(d.d2h_bytes, e.d2h_bytes);
  EXPECT_EQ(d.flops, e.flops);
  EXPECT_EQ(d.steps, e.steps);
  EXPECT_EQ(d.steal_bytes, e.steal_bytes);
  EXPECT_EQ(d.stolen_steps, e.stolen_steps);
  EXPECT_EQ(d.lost_steps, e.lost_steps);
  EXPECT_EQ(d.stolen_flops, e.stolen_flops);
  ASSERT_EQ(d.steals.size(), 1u);
  const auto &s = d.steals[0], &t = e.steals[0];
  EXPECT_EQ(s.at_s, t.at_s);
  EXPECT_EQ(s.victim, t.victim);
  EXPECT_EQ(s.steps, t.steps);
  EXPECT_EQ(s.flops, t.flops);
  EXPECT_EQ(s.bytes, t.bytes);
  EXPECT_EQ(s.thief_done_s, t.thief_done_s);
  EXPECT_EQ(s.victim_done_s, t.victim_done_s);
  EXPECT_EQ(s.thief_gflops, t.thief_gflops);
  EXPECT_EQ(s.victim_gflops, t.victim_gflops);
  EXPECT_EQ(s.idle, t.idle);
}

TEST(RankFigures, NoEnvironmentIsLeftOutNotWrittenAsNull) {
  mpi::RankFigures in = every_field_set();
  in.environment = nlohmann::json();
  const nlohmann::json j = in;
  EXPECT_FALSE(j.contains("environment"));
  EXPECT_TRUE(j.get<mpi::RankFigures>().environment.is_null());
}

TEST(RankFigures, AMissingKeyIsAnErrorNotAZero) {
  nlohmann::json j = every_field_set();
  j.at("bytes").erase("b_recv");
  EXPECT_THROW(j.get<mpi::RankFigures>(), nlohmann::json::exception);
  nlohmann::json k = every_field_set();
  k.erase("tasks");
  EXPECT_THROW(k.get<mpi::RankFigures>(), nlohmann::json::exception);
}
