#include "exec/schedule.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "util/names.hpp"

namespace cuboid::exec {
namespace {

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool overlap(const Rect& a, const Rect& b) {
  return a.i0 < b.i1 && b.i0 < a.i1 && a.j0 < b.j1 && b.j0 < a.j1;
}

// Until a processor has run for this long, its rate leans on the speed the partition assumed.
constexpr double kPriorSeconds = 0.05;

constexpr Named<StealPolicy> kPolicies[] = {{StealPolicy::static_plan, "static"},
                                            {StealPolicy::random, "random"},
                                            {StealPolicy::cheapest, "cheapest"}};

}  // namespace

std::optional<StealPolicy> parse_steal_policy(std::string_view name) {
  return value_of(name, kPolicies);
}

std::string_view to_string(StealPolicy s) { return name_of(s, kPolicies, "static"); }

std::vector<std::string_view> steal_policy_names() {
  std::vector<std::string_view> names;
  for (const auto& p : kPolicies) names.push_back(p.name);
  return names;
}

namespace {

// Whether `after` reads the same A panel (rows and k range) and the same B panel (columns and k
// range) as `before`.
struct SharedPanels {
  bool a = false, b = false;
};
SharedPanels shared_panels(const Step& before, const Step& after) {
  if (before.l0 != after.l0 || before.l1 != after.l1) return {};
  return {before.c.i0 == after.c.i0 && before.c.i1 == after.c.i1,
          before.c.j0 == after.c.j0 && before.c.j1 == after.c.j1};
}

}  // namespace

double shared_panel_bytes(const Step& before, const Step& after, std::size_t element_bytes) {
  const SharedPanels s = shared_panels(before, after);
  return double(element_bytes) * double(after.depth()) *
         (double(s.a ? after.c.rows() : 0) + double(s.b ? after.c.cols() : 0));
}

std::vector<Unit> make_units(const Plan& plan, std::size_t element_bytes) {
  std::vector<Unit> units;
  const auto starts = chain_starts(plan);
  for (std::size_t q = 0; q < plan.processors.size(); ++q) {
    const auto& steps = plan.processors[q].steps;
    const auto& first = starts[q];
    const std::size_t chains = first.size();
    auto end_of = [&](std::size_t c) { return c + 1 < chains ? first[c + 1] : steps.size(); };
    // Chains that write overlapping elements of one destination join one unit (union-find).
    std::vector<std::size_t> parent(chains);
    std::iota(parent.begin(), parent.end(), 0);
    auto find = [&](std::size_t x) {
      while (parent[x] != x) x = parent[x] = parent[parent[x]];
      return x;
    };
    for (std::size_t a = 0; a < chains; ++a)
      for (std::size_t b = a + 1; b < chains; ++b) {
        bool conflict = false;
        for (std::size_t s = first[a]; s < end_of(a) && !conflict; ++s)
          for (std::size_t t = first[b]; t < end_of(b) && !conflict; ++t)
            conflict = steps[s].dest == steps[t].dest && overlap(steps[s].c, steps[t].c);
        if (conflict) parent[find(b)] = find(a);
      }
    std::vector<int> unit_of_root(chains, -1);
    for (std::size_t c = 0; c < chains; ++c) {
      const std::size_t r = find(c);
      if (unit_of_root[r] < 0) {
        unit_of_root[r] = int(units.size());
        units.push_back(Unit{int(q), {}, 0, 0, false, element_bytes});
      }
      Unit& u = units[std::size_t(unit_of_root[r])];
      for (std::size_t s = first[c]; s < end_of(c); ++s) {
        const Step& st = steps[s];
        if (!u.steps.empty())
          u.bytes -= shared_panel_bytes(steps[u.steps.back()], st, element_bytes);
        u.steps.push_back(s);
        u.flops += st.flops();
        const double block = double(st.c.rows()) * double(st.c.cols());
        u.bytes += double(element_bytes) * (double(st.c.rows() + st.c.cols()) * double(st.depth()) +
                                            (st.c_in ? block : 0.0) + (st.c_out ? block : 0.0));
        u.c_in = u.c_in || st.c_in;
      }
    }
  }
  return units;
}

std::int64_t auto_task_tiles(const std::vector<partition::TileZone>& zones, std::int64_t m,
                             std::int64_t n, std::int64_t k, std::int64_t tile, PlanOptions options,
                             int per_processor, std::int64_t min_side) {
  const std::int64_t side = std::max((m + tile - 1) / tile, (n + tile - 1) / tile);
  const std::int64_t floor =
      std::min(side, std::max<std::int64_t>(1, (min_side + tile - 1) / tile));
  options.coarse_head = false;  // the tail's units, where others steal
  auto small_enough = [&](std::int64_t g) {
    options.block_tiles = g;
    const Plan plan = make_plan(zones, m, n, k, tile, options);
    double total = 0, largest = 0;
    for (const Unit& u : make_units(plan, 1)) {
      total += u.flops;
      largest = std::max(largest, u.flops);
    }
    return largest <=
           total / (double(per_processor) * double(std::max<std::size_t>(1, zones.size())));
  };
  // Units shrink with the blocks: bisect for the largest side that is small enough.
  std::int64_t lo = floor, hi = side;
  if (small_enough(hi)) return hi;
  if (!small_enough(lo)) return lo;
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (small_enough(mid))
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

std::int64_t plan_for_stealing(PlanOptions& options, const std::vector<partition::TileZone>& zones,
                               std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t tile,
                               std::int64_t task_tiles) {
  options.shared_steps = true;
  if (task_tiles == 0) task_tiles = auto_task_tiles(zones, m, n, k, tile, options);
  options.block_tiles = task_tiles;
  options.coarse_head = true;
  return task_tiles;
}

int steal_cost(const Plan& plan, const Unit& u, bool thief_copies, const Step* resident) {
  if (!thief_copies) return 0;
  int missing = u.c_in ? 3 : 2;
  if (resident && !u.steps.empty()) {
    const SharedPanels s =
        shared_panels(*resident, plan.processors[std::size_t(u.owner)].steps[u.steps.front()]);
    missing -= int(s.a) + int(s.b);
  }
  return missing;
}

StealScheduler::StealScheduler(const Plan& plan, std::vector<Unit> units, std::vector<bool> copies,
                               const ScheduleOptions& options, double t0)
    : plan_(plan),
      units_(std::move(units)),
      copies_(std::move(copies)),
      options_(options),
      t0_(t0),
      cursors_(plan.processors.size()),
      moved_(units_.size(), 0),
      taking_(plan.processors.size()) {
  const std::size_t np = plan.processors.size();
  if (copies_.size() != np)
    throw std::invalid_argument("schedule: one copies flag per processor expected");
  if (!options_.speeds.empty() && options_.speeds.size() != np)
    throw std::invalid_argument("schedule: one speed per processor expected");
  for (std::size_t p = 0; p < np; ++p) {
    queues_.push_back(std::make_unique<Queue>());
    rng_.emplace_back(options_.seed * 1000003u + p);
  }
  for (std::size_t u = 0; u < units_.size(); ++u) {
    Queue& q = *queues_[std::size_t(units_[u].owner)];
    q.units.push_back(int(u));
    q.flops += units_[u].flops;
    q.steps += int(units_[u].steps.size());
  }
}

double StealScheduler::link_bytes_per_s(int p) const {
  const double gbs =
      std::size_t(p) < options_.link_gbs.size() ? options_.link_gbs[std::size_t(p)] : 0;
  return gbs > 0 ? gbs * 1e9 : std::numeric_limits<double>::infinity();
}

double StealScheduler::ahead(int p) const {
  // Steps handed out but maybe not done: the current one, and for a copying processor the
  // next one, whose copies it issues while the current GEMM runs.
  const Queue& q = *queues_[std::size_t(p)];
  return q.recent[0] + (copies_[std::size_t(p)] ? q.recent[1] : 0.0);
}

double StealScheduler::rate(int p, double now) const {
  const Queue& q = *queues_[std::size_t(p)];
  // With reports, what it has done up to its last completion; without, what it was handed less
  // what it may still run, up to now (which counts none of the step it runs).
  const bool reported = q.completed_at > 0;
  const double done = reported ? q.completed : std::max(0.0, q.handed - ahead(p));
  const double elapsed = std::max(0.0, (reported ? q.completed_at : now) - t0_);
  const double prior =
      1e9 * (options_.speeds.empty() ? 1.0 : std::max(1e-9, options_.speeds[std::size_t(p)]));
  return (done + prior * kPriorSeconds) / (elapsed + kPriorSeconds);
}

double StealScheduler::in_flight(int p, double now, double p_rate) const {
  const Queue& q = *queues_[std::size_t(p)];
  if (q.completed_at <= 0) return ahead(p);
  // The GEMM running since its last completion has progressed at its rate, by at most a step
  // (a stalled or slowed processor is not credited more).
  const double running =
      std::min(std::max(0.0, now - q.completed_at) * p_rate, std::max(q.recent[0], q.recent[1]));
  return std::max(0.0, q.handed - q.completed - running);
}

double StealScheduler::finish_in(int p, double now, double p_rate) const {
  return (queues_[std::size_t(p)]->flops + in_flight(p, now, p_rate)) / p_rate;
}

double StealScheduler::thief_bytes(const Thief& t, const Unit& u) const {
  if (!copies_[std::size_t(t.p)]) return 0;
  return u.bytes -
         (t.resident ? shared_panel_bytes(*t.resident, first_of(u), u.element_bytes) : 0.0);
}

void StealScheduler::done(int p, double flops) {
  Queue& q = *queues_[std::size_t(p)];
  const double t = seconds_now();
  std::lock_guard<std::mutex> lock(q.m);
  q.completed += flops;
  q.completed_at = t;
}

// Moving u from victim to thief pays when the thief, after what it still has, would finish u
// before the victim would finish all it has (u included): the later of the two finishes comes
// sooner. So a slow processor does not take the last unit of a fast one.
bool StealScheduler::pays(const Thief& t, int victim, const Unit& u, double copy_s,
                          double slack_s) const {
  return t.done_with(u) + copy_s < finish_in(victim, t.now, rate(victim, t.now)) + slack_s;
}

bool StealScheduler::left_to_in_place(const Thief& t, int victim, const Unit& u,
                                      double copy_s) const {
  const double thief_done = t.done_with(u) + copy_s;
  for (const auto& o : t.in_place)
    if (o.p != victim && o.free_s + u.flops / o.rate <= thief_done) return true;
  return false;
}

int StealScheduler::take_from(const Thief& t, int victim, std::deque<int>::iterator it) {
  Queue& v = *queues_[std::size_t(victim)];
  const int id = *it;
  const Unit& u = units_[std::size_t(id)];
  StealRecord& r = taking_[std::size_t(t.p)];
  const double vrate = rate(victim, t.now);
  r.at_s = t.now - t0_;
  r.victim = victim;
  r.steps = int(u.steps.size());
  r.flops = u.flops;
  r.bytes = thief_bytes(t, u);
  r.thief_done_s = t.done_with(u);
  r.victim_done_s = finish_in(victim, t.now, vrate);
  r.thief_gflops = t.rate / 1e9;
  r.victim_gflops = vrate / 1e9;
  r.idle = t.idle;
  v.units.erase(it);
  moved_[std::size_t(id)] = 1;
  v.flops -= u.flops;
  v.steps -= int(u.steps.size());
  v.counts.lost_steps += int(u.steps.size());
  v.counts.lost_units += 1;
  return id;
}

void StealScheduler::append(int p, int id, bool queue) {
  Queue& q = *queues_[std::size_t(p)];
  const Unit& u = units_[std::size_t(id)];
  std::lock_guard<std::mutex> lock(q.m);
  if (queue) q.units.push_back(id);
  q.flops += u.flops;
  q.steps += int(u.steps.size());
  q.counts.stolen_steps += int(u.steps.size());
  q.counts.stolen_units += 1;
  q.counts.stolen_flops += u.flops;
  q.counts.steals.push_back(taking_[std::size_t(p)]);
}

int StealScheduler::steal_random(const Thief& t) {
  const int p = t.p;
  const int np = int(queues_.size());
  const int start = int(rng_[std::size_t(p)]() % std::uint64_t(np));
  for (int i = 0; i < np; ++i) {
    const int v = (start + i) % np;
    if (v == p) continue;
    Queue& q = *queues_[std::size_t(v)];
    std::lock_guard<std::mutex> lock(q.m);
    // Its last unit that has not moved already (a stolen unit stays with its thief).
    auto last = std::find_if(q.units.rbegin(), q.units.rend(),
                             [&](int id) { return !moved_[std::size_t(id)]; });
    if (last == q.units.rend()) continue;
    if (pays(t, v, units_[std::size_t(*last)])) return take_from(t, v, std::prev(last.base()));
  }
  return -1;
}

int StealScheduler::steal_cheapest(const Thief& t) {
  const int p = t.p;
  struct Candidate {
    int victim, unit, cost;
    double net;      // bytes moved per flop: the thief's minus those the victim no longer moves
    double copy_s;   // the thief's copies for it at its link's rate
    double slack_s;  // how near a tie in finishing times it may be (see below)
  };
  // Bytes per flop first: the paper's tiles are alike, so its count of missing tiles orders
  // them by bytes per task; units here differ in size and depth, and a unit sharing one panel
  // with the thief can still bring more per flop than two small panels of a deep one.
  auto better = [](const Candidate& a, const Candidate& b) {
    return a.net != b.net ? a.net < b.net : a.cost < b.cost;
  };
  const int np = int(queues_.size());
  const int start = int(rng_[std::size_t(p)]() % std::uint64_t(np));
  std::vector<Candidate> found;
  // First pass: the best unit of each victim, one victim locked at a time.
  for (int i = 0; i < np; ++i) {
    const int v = (start + i) % np;
    if (v == p) continue;
    Queue& q = *queues_[std::size_t(v)];
    std::lock_guard<std::mutex> lock(q.m);
    std::optional<Candidate> best;
    // Only the back half of its queue (by flops): the plan cuts a processor's last blocks finest
    // for thieves, and units taken from the back, one after another, share panels (the plan's
    // serpentine order) — a cheap unit near the front breaks that chain, and its owner would run
    // it next anyway.
    double behind = 0;
    for (std::size_t i = q.units.size(); i-- > 0;) {
      const int id = q.units[i];
      const Unit& u = units_[std::size_t(id)];
      if (best && behind >= 0.5 * q.flops) break;
      behind += u.flops;
      if (moved_[std::size_t(id)]) continue;
      // A copying processor keeps panels between consecutive steps: the victim saves the
      // unit's bytes less what it shared with its neighbours in the queue, plus what those
      // neighbours will then share with each other; the thief pays them less what its own last
      // step shares.
      const std::size_t eb = u.element_bytes;
      double saved = 0;
      if (copies_[std::size_t(v)]) {
        const Step* before = i > 0 ? &last_of(units_[std::size_t(q.units[i - 1])]) : q.last;
        const Step* after =
            i + 1 < q.units.size() ? &first_of(units_[std::size_t(q.units[i + 1])]) : nullptr;
        saved = u.bytes;
        if (before) saved -= shared_panel_bytes(*before, first_of(u), eb);
        if (after) saved -= shared_panel_bytes(last_of(u), *after, eb);
        if (before && after) saved += shared_panel_bytes(*before, *after, eb);
      }
      const double paid = thief_bytes(t, u);
      // Near the end of a run nothing hides a stolen unit's copies: a unit that pays only in
      // flops (the last ones taken) is left where its data is.
      // Near a tie the finishing times cannot tell whether a move pays (they are estimates,
      // good to about a step), but its bytes are known: within half the unit's time on the
      // thief, a move that saves bytes is made and one that adds bytes is not.
      const double net_bytes = paid - saved;
      const double half = 0.5 * u.flops / t.rate;
      const Candidate c{v,
                        id,
                        steal_cost(plan_, u, copies_[std::size_t(p)], t.resident),
                        u.flops > 0 ? net_bytes / u.flops : 0.0,
                        paid / link_bytes_per_s(p),
                        net_bytes < 0   ? half
                        : net_bytes > 0 ? -half
                                        : 0.0};
      if (!pays(t, v, u, c.copy_s, c.slack_s)) continue;
      // A unit that a processor in host memory (not the victim) would finish no later is left
      // to it: there it moves no bytes, and it pays for that processor too.
      if (net_bytes > 0 && left_to_in_place(t, v, u, c.copy_s)) continue;
      if (!best || better(c, *best)) best = c;
    }
    if (best) found.push_back(*best);
  }
  std::stable_sort(found.begin(), found.end(), better);
  // Second pass: the best still there (another thief may have taken it meanwhile).
  for (const Candidate& c : found) {
    Queue& q = *queues_[std::size_t(c.victim)];
    std::lock_guard<std::mutex> lock(q.m);
    auto it = std::find(q.units.begin(), q.units.end(), c.unit);
    if (it != q.units.end() && pays(t, c.victim, units_[std::size_t(c.unit)], c.copy_s, c.slack_s))
      return take_from(t, c.victim, it);
  }
  // Nothing pays, or what did was taken meanwhile by another thief: then the victims' last.
  return found.empty() ? -1 : steal_random(t);
}

int StealScheduler::steal(int p, bool idle) {
  Thief t;
  t.p = p;
  t.now = seconds_now();
  t.idle = idle;
  {
    Queue& q = *queues_[std::size_t(p)];
    std::lock_guard<std::mutex> lock(q.m);
    // Reported progress says what is not done. Without it: idle, it has finished the last step
    // it took, but a copying processor's GEMM of it may still run; otherwise it has just taken
    // a step, not yet done.
    t.rate = rate(p, t.now);
    const double unfinished = q.completed_at > 0 ? in_flight(p, t.now, t.rate)
                              : idle             ? (copies_[std::size_t(p)] ? q.recent[0] : 0.0)
                                                 : ahead(p);
    t.left = q.flops + unfinished;
    // What runs just before a stolen unit: it goes to the end of the queue, or at once.
    t.resident = q.units.empty() ? q.last : &last_of(units_[std::size_t(q.units.back())]);
  }
  if (options_.policy == StealPolicy::cheapest && copies_[std::size_t(p)])
    for (int o = 0; o < int(queues_.size()); ++o) {
      if (o == p || copies_[std::size_t(o)]) continue;
      const Queue& q = *queues_[std::size_t(o)];
      std::lock_guard<std::mutex> lock(q.m);
      if (q.gone) continue;  // nothing is left to a processor that has stopped
      const double r = rate(o, t.now);
      t.in_place.push_back({o, finish_in(o, t.now, r), r});
    }
  switch (options_.policy) {
    case StealPolicy::random:
      return steal_random(t);
    case StealPolicy::cheapest:
      return steal_cheapest(t);
    case StealPolicy::static_plan:
      break;
  }
  return -1;
}

bool StealScheduler::next(int p, StepRef& out) {
  Queue& q = *queues_[std::size_t(p)];
  Cursor& cur = cursors_[std::size_t(p)];
  const bool stealing = options_.policy != StealPolicy::static_plan;
  for (;;) {
    if (cur.unit >= 0) {
      const Unit& u = units_[std::size_t(cur.unit)];
      if (cur.pos < u.steps.size()) {
        const Step& s = plan_.processors[std::size_t(u.owner)].steps[u.steps[cur.pos++]];
        int ready;
        {
          std::lock_guard<std::mutex> lock(q.m);
          q.flops -= s.flops();
          q.steps -= 1;
          q.handed += s.flops();
          q.recent[1] = q.recent[0];
          q.recent[0] = s.flops();
          q.last = &s;
          ready = q.steps;
        }
        out = StepRef{&s, u.owner, u.owner != p};
        // Stealing in advance: with fewer than two steps ready, take a unit now, so that its
        // copies can start while this step runs.
        if (stealing && ready < 2) {
          const int id = steal(p, false);
          if (id >= 0) append(p, id, true);
        }
        return true;
      }
      cur.unit = -1;
    }
    {
      std::lock_guard<std::mutex> lock(q.m);
      if (!q.units.empty()) {
        cur.unit = q.units.front();
        cur.pos = 0;
        q.units.pop_front();
        continue;
      }
    }
    if (!stealing) return false;
    // Idle: a unit stolen now is started at once, never queued where another could take it.
    const int id = steal(p, true);
    if (id < 0) {
      std::lock_guard<std::mutex> lock(q.m);
      q.gone = true;
      return false;
    }
    append(p, id, false);
    cur.unit = id;
    cur.pos = 0;
  }
}

StealCounts StealScheduler::counts(int p) const {
  const Queue& q = *queues_[std::size_t(p)];
  std::lock_guard<std::mutex> lock(q.m);
  return q.counts;
}

}  // namespace cuboid::exec
