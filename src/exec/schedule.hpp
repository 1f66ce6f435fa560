#pragma once
// Work stealing on top of the static plan (Eyraud-Dubois and Lambert, "Using Static Allocation
// Algorithms for Matrix Matrix Multiplication on Multicores and GPUs", ICPP 2018): each processor
// works through its own queue of units in the plan's order; one whose queue holds fewer than
// two ready steps steals a unit that no processor has started from another's queue.
//
// A unit is what can move without changing the result: the chains of one processor (steps from
// the one that starts a C block to the one that drains it) whose C blocks overlap in the same
// destination, in plan order. Chains on one block must run in order on one processor (they
// accumulate into it, and a copying processor keeps it resident between them); chains of
// different units write disjoint elements. A stolen unit runs the same GEMMs in the same order
// into the same destination (C, or its owner's partial buffer, reduced in the fixed order after
// the run), so the product is the static plan's, bit for bit where the processors run the same
// BLAS with the same call shapes (docs/scheduling.md).
//
// Pure C++ (threads, no Kokkos): tests drive it without an engine.
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "exec/plan.hpp"
#include "exec/steal_policy.hpp"

namespace cuboid::exec {

struct Unit {
  int owner = 0;                   // the processor the plan gave it to
  std::vector<std::size_t> steps;  // indices into the owner's steps, in plan order
  double flops = 0;
  // Bytes a copying processor moves to run it after an unrelated step: A and B panels in
  // (a panel its previous step already brought counts once), old C in where a chain brings it
  // in, C out; the same for whichever copying processor runs it.
  double bytes = 0;
  bool c_in = false;  // a chain of it brings its old C in
  std::size_t element_bytes = 8;
};

// The units of every processor, each processor's in plan order (of their first steps).
std::vector<Unit> make_units(const Plan& plan, std::size_t element_bytes);

// What it costs processor `thief` to run a unit, in the paper's terms: how many of its A, B
// and C data are not in the thief's memory already. A processor that computes in host memory
// has them all (0); a copying processor keeps only the panels of its last steps, so A and B
// cross its link unless the unit's first step shares one with the thief's last (2, or 1), and
// C too when the unit brings its old C in (+1).
// `resident`: the last step the thief was handed (its panels are in its memory), or null.
int steal_cost(const Plan& plan, const Unit& u, bool thief_copies, const Step* resident);

// Bytes of the A and B panels `after` can reuse from `before` on a copying processor, which
// keeps the panels of its last steps (same rows or columns and the same k range).
double shared_panel_bytes(const Step& before, const Step& after, std::size_t element_bytes);

// The largest PlanOptions::block_tiles for which no unit of the plan holds more than
// 1 / (per_processor * processors) of its flops, so that what a processor lacking work takes is
// small against the whole run -- but blocks no smaller than min_side elements a side where
// tiles allow (smaller GEMMs lose rate, and every step costs a few queue hand-offs).
// `options` as make_plan takes them (shared_steps included); the units counted are those of the
// tail, cut to block_tiles (coarse_head is left out).
std::int64_t auto_task_tiles(const std::vector<partition::TileZone>& zones, std::int64_t m,
                             std::int64_t n, std::int64_t k, std::int64_t tile, PlanOptions options,
                             int per_processor = 16, std::int64_t min_side = 512);

// Sets `options` for a plan that stealing can use: steps small enough to move (blocks of
// task_tiles a side, auto_task_tiles' choice when 0; coarser at the head of each queue) and
// able to run on any processor. Returns the task tiles used.
std::int64_t plan_for_stealing(PlanOptions& options, const std::vector<partition::TileZone>& zones,
                               std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t tile,
                               std::int64_t task_tiles);

struct ScheduleOptions {
  StealPolicy policy = StealPolicy::static_plan;
  // Per processor: its speed (GFLOP/s) as the partition assumed it, the rate a steal decision
  // uses until the processor's own progress says otherwise. Empty: all equal.
  std::vector<double> speeds;
  // Per processor: the GB/s of its copies (a staged processor's link), with which `cheapest`
  // adds a copying thief's copies of a unit to when it would finish it. 0 or empty: not counted.
  std::vector<double> link_gbs;
  std::uint64_t seed = 1;  // random victims
};

// A step handed to a processor: the step, the processor the plan gave it to (whose partial
// buffers and GEMM shapes it keeps), and whether it was stolen.
struct StepRef {
  const Step* step = nullptr;
  int owner = 0;
  bool stolen = false;
};

// Where a worker takes its steps from, one at a time, as it is about to start each one (for
// a copying processor: about to issue its copies). Once taken, a step is the taker's.
class StepSource {
 public:
  virtual ~StepSource() = default;
  virtual bool next(StepRef& out) = 0;
  // The GEMM of a step taken from it has ended (from any thread; must not throw): stealing
  // then knows what a processor has done, not only what it was handed.
  virtual void done(double /*flops*/) {}
  // The steps planned for this processor (what it may register for the run), or nullptr.
  virtual const std::vector<Step>* planned() const { return nullptr; }
};

// The plan's own steps of one processor, in order: the static schedule.
class PlanSteps final : public StepSource {
 public:
  PlanSteps(const std::vector<Step>& steps, int owner) : steps_(steps), owner_(owner) {}
  bool next(StepRef& out) override {
    if (i_ >= steps_.size()) return false;
    out = StepRef{&steps_[i_++], owner_, false};
    return true;
  }
  const std::vector<Step>* planned() const override { return &steps_; }

 private:
  const std::vector<Step>& steps_;
  int owner_;
  std::size_t i_ = 0;
};

// One steal as its thief decided it: what the run's JSON lists, so that a run that moved more
// (or less) than balances can be read back.
struct StealRecord {
  double at_s = 0;  // when, from the run's start
  int victim = 0, steps = 0;
  double flops = 0;
  double bytes = 0;  // what the thief expected to copy for it (0: it computes in host memory)
  // The estimates compared (seconds from the decision): when the thief would finish the unit
  // after what it had (its copies not counted), and when the victim would finish all it had,
  // the unit included; and the rates (GFLOP/s) behind them.
  double thief_done_s = 0, victim_done_s = 0;
  double thief_gflops = 0, victim_gflops = 0;
  bool idle = false;  // taken with nothing left to run (otherwise in advance)
};

struct StealCounts {
  int stolen_steps = 0, lost_steps = 0;  // taken from others' queues, taken from its queue
  int stolen_units = 0, lost_units = 0;
  double stolen_flops = 0;
  std::vector<StealRecord> steals;  // those it took, in order
};

// The queues of one run. next(p, ...) is called by processor p's lane only; queues are locked
// one at a time.
class StealScheduler {
 public:
  // `copies[p]`: processor p copies its data (staged, device) rather than computing in host
  // memory. `t0` is the run's start (now_seconds() clock), for the processors' rates.
  StealScheduler(const Plan& plan, std::vector<Unit> units, std::vector<bool> copies,
                 const ScheduleOptions& options, double t0);
  bool next(int p, StepRef& out);
  // Processor p's GEMM of `flops` ended (any thread).
  void done(int p, double flops);
  StealCounts counts(int p) const;
  const std::vector<Unit>& units() const { return units_; }

 private:
  struct Queue {
    mutable std::mutex m;
    std::deque<int> units;       // not started, in order
    double flops = 0;            // of those units and of the rest of the current one
    int steps = 0;               // steps not handed out, same scope
    double handed = 0;           // flops handed out so far (started)
    double recent[2] = {0, 0};   // the last two steps handed out, maybe not done yet
    double completed = 0;        // flops of its GEMMs that have ended, as its worker reports
    double completed_at = 0;     // when the last of them ended (0: none yet)
    const Step* last = nullptr;  // the last step handed out (its panels are resident)
    bool gone = false;           // its lane has stopped asking: it takes nothing more
    StealCounts counts;
  };
  struct Cursor {  // lane-local: the unit being run
    int unit = -1;
    std::size_t pos = 0;
  };

  struct Thief {
    int p = 0;
    double left = 0;  // flops it has not done (queued, and handed out but maybe not done)
    double rate = 1;  // flops per second
    double now = 0;
    bool idle = false;
    const Step* resident = nullptr;  // the step it runs just before a unit it steals now
    // For a copying thief: when each processor that computes in host memory would be done with
    // what it has (seconds from now), and at what rate (flops per second); empty otherwise.
    struct InPlace {
      int p = 0;
      double free_s = 0, rate = 1;
    };
    std::vector<InPlace> in_place;
    // Seconds from now until it would finish u after what it has (its copies not counted).
    double done_with(const Unit& u) const { return (left + u.flops) / rate; }
  };
  const Step& first_of(const Unit& u) const {
    return plan_.processors[std::size_t(u.owner)].steps[u.steps.front()];
  }
  const Step& last_of(const Unit& u) const {
    return plan_.processors[std::size_t(u.owner)].steps[u.steps.back()];
  }

  // Call with p's queue locked: flops handed out to p and not done yet (at `now`); p's rate
  // (flops per second). What p has left is its queue's flops and these. Until p's worker has
  // reported a GEMM done, every step it was handed and may still run counts as not done.
  double ahead(int p) const;
  double in_flight(int p, double now, double p_rate) const;  // p_rate: rate(p, now)
  // p locked: seconds from `now` until p is done with all it has, at p_rate (rate(p, now)).
  double finish_in(int p, double now, double p_rate) const;
  double link_bytes_per_s(int p) const;  // infinite when its copies are not counted
  double rate(int p, double now) const;
  // victim locked; `copy_s`: what the thief's copies for u add to its finish; `slack_s`: how
  // much later than the victim the thief may finish (negative: how much sooner it must)
  bool pays(const Thief& t, int victim, const Unit& u, double copy_s = 0, double slack_s = 0) const;
  // Whether a processor in host memory other than the victim would finish u no later than the
  // copying thief t would (its copies `copy_s` included).
  bool left_to_in_place(const Thief& t, int victim, const Unit& u, double copy_s) const;
  // Bytes thief t copies to run u after the step it holds (0 for a thief in host memory).
  double thief_bytes(const Thief& t, const Unit& u) const;
  // A unit taken from another queue for p, or -1; `idle`: p has no step left at all.
  int steal(int p, bool idle);
  int steal_random(const Thief& t);
  int steal_cheapest(const Thief& t);
  // victim locked; records the decision for t's append()
  int take_from(const Thief& t, int victim, std::deque<int>::iterator it);
  // Counts a stolen unit as p's; `queue`: appended to p's queue (else p starts it at once).
  void append(int p, int unit, bool queue);

  const Plan& plan_;
  std::vector<Unit> units_;
  std::vector<bool> copies_;
  ScheduleOptions options_;
  double t0_;
  std::vector<std::unique_ptr<Queue>> queues_;
  std::vector<Cursor> cursors_;
  // Units stolen once (written and read with their queue locked): they stay with their thief,
  // or work stolen in advance could pass from thief to thief.
  std::vector<char> moved_;
  std::vector<std::mt19937_64> rng_;
  std::vector<StealRecord> taking_;  // per processor, lane-local: the steal append() counts
};

}  // namespace cuboid::exec
