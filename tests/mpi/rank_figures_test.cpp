// A rank's figures survive their trip through JSON (gathered on rank 0 as text): every field,
// each set to a value of its own, comes back as it went. No MPI run.
#include <gtest/gtest.h>

#include "../support/expect_same.hpp"
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
  using F = mpi::RankFigures;
  const F in = every_field_set();
  const nlohmann::json j = in;
  const auto out = nlohmann::json::parse(j.dump()).get<F>();
  expect_same(out, in, &F::rank, &F::host, &F::speed_gflops, &F::speed_factor, &F::tasks, &F::boxes,
              &F::pieces, &F::c_in_place, &F::engines_created, &F::environment);
  using Ph = mpi::RankPhases;
  expect_same(out.phases, in.phases, &Ph::calibrate_s, &Ph::partition_s, &Ph::exchange_s,
              &Ph::compute_s, &Ph::reduce_s, &Ph::total_s);
  using B = mpi::RankBytes;
  expect_same(out.bytes, in.bytes, &B::a_sent, &B::a_recv, &B::b_sent, &B::b_recv, &B::c_sent,
              &B::c_recv, &B::recv_mpi, &B::model_recv, &B::model_moved);
  using M = mpi::RankMemory;
  expect_same(out.memory, in.memory, &M::local_blocks_bytes, &M::projections_bytes, &M::data_bytes,
              &M::engine_bytes, &M::carry_peak_bytes, &M::peak_resident_bytes, &M::limit_bytes,
              &M::predicted_peak_bytes, &M::allocated_peak_bytes, &M::validation_peak_bytes,
              &M::device_peak_bytes, &M::baseline_bytes);
  using Pr = mpi::RankProgress;
  expect_same(out.progress, in.progress, &Pr::polls_while_computing, &Pr::pieces_on_workers,
              &Pr::pieces_inline);

  ASSERT_EQ(out.processors.size(), 1u);
  using P = pipeline::ProcessorFigures;
  const P &p = out.processors[0], &q = in.processors[0];
  expect_same(p, q, &P::name, &P::kind, &P::space, &P::threads, &P::speed_gflops, &P::speed_source,
              &P::tasks, &P::pieces, &P::planned_flops, &P::predicted_s, &P::cut_gflops);
  using W = exec::WorkerStats;
  expect_same(p.done, q.done, &W::busy_s, &W::copy_s, &W::stall_s, &W::finish_s, &W::h2d_bytes,
              &W::d2h_bytes, &W::flops, &W::steps, &W::steal_bytes, &W::stolen_steps,
              &W::lost_steps, &W::stolen_flops);
  ASSERT_EQ(p.done.steals.size(), 1u);
  using S = exec::StealRecord;
  expect_same(p.done.steals[0], q.done.steals[0], &S::at_s, &S::victim, &S::steps, &S::flops,
              &S::bytes, &S::thief_done_s, &S::victim_done_s, &S::thief_gflops, &S::victim_gflops,
              &S::idle);
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
