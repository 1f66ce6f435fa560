#pragma once
#include "exec/worker.hpp"
#include "kokkos_ext/compat.hpp"

namespace cuboid::exec {

// The host processor: GEMMs on block views of A, B and C where they are, no copies.
template <class Scalar>
class HostWorker final : public Worker<Scalar> {
  using space = Kokkos::DefaultHostExecutionSpace;

 public:
  explicit HostWorker(const platform::ProcessorSpec& spec) : Worker<Scalar>(spec) {}

  void prepare(const ProcessorPlan&) override {}  // works in place: no buffers

  WorkerStats execute(StepSource& source, const RunContext<Scalar>& ctx, double t0) override {
    kokkos_ext::ScopedRegion region("cuboid::exec::host[" + this->spec_.name + "]");
    set_thread_count(this->spec_.threads);
    WorkerStats st;
    const space exec;
    StepRef ref;
    while (source.next(ref)) {
      const Step& step = *ref.step;
      const auto rows = std::make_pair(step.c.i0, step.c.i1);
      const auto cols = std::make_pair(step.c.j0, step.c.j1);
      const auto inner = std::make_pair(step.l0, step.l1);
      auto a = ctx.ops.a == 'N' ? Kokkos::subview(ctx.A, rows, inner)
                                : Kokkos::subview(ctx.A, inner, rows);
      auto b = ctx.ops.b == 'N' ? Kokkos::subview(ctx.B, inner, cols)
                                : Kokkos::subview(ctx.B, cols, inner);
      const Scalar beta = step.beta == BetaUse::one    ? Scalar(1)
                          : step.beta == BetaUse::zero ? Scalar(0)
                                                       : ctx.beta;
      const int team =
          ctx.teams.empty() ? gemm_team(this->spec_) : ctx.teams[std::size_t(ref.owner)];
      const double t = now_seconds();
      const auto traced_from = trace::on() ? trace::Clock::now() : trace::Clock::time_point{};
      if (step.dest < 0) {
        gemm(exec, team, ctx.ops, ctx.alpha, a, b, beta, Kokkos::subview(ctx.C, rows, cols));
      } else {
        const Rect& r = ctx.partial_rects[std::size_t(step.dest)];
        auto c = Kokkos::subview(ctx.partials[std::size_t(step.dest)],
                                 std::make_pair(step.c.i0 - r.i0, step.c.i1 - r.i0),
                                 std::make_pair(step.c.j0 - r.j0, step.c.j1 - r.j0));
        gemm(exec, team, ctx.ops, ctx.alpha, a, b, beta, c);
      }
      exec.fence();
      if (trace::on())
        trace::complete(this->spec_.name + " gemm", "gemm", traced_from, trace::Clock::now(),
                        step_args(step));
      const double e = now_seconds();
      slow_down(this->spec_, e - t, e - t0);
      st.busy_s += now_seconds() - t;
      source.done(step.flops());
      st.flops += step.flops();
      ++st.steps;
    }
    st.finish_s = now_seconds() - t0;
    return st;
  }

  // On the calling thread with the processor's threads (given back afterwards).
  double measure_gemm_rate(std::int64_t s, double max_seconds) override {
    return with_operands(s, [&](const auto& A, const auto& B, const auto& C) {
      return best_gemm_rate(space(), A, B, C, s, max_seconds);
    });
  }
  double measure_gemm_rate_in(std::int64_t s, GemmWindow& window) override {
    return with_operands(s, [&](const auto& A, const auto& B, const auto& C) {
      return window_gemm_rate(space(), A, B, C, s, window);
    });
  }

 private:
  // `measure` on s x s operands, with the processor's threads.
  template <class Measure>
  double with_operands(std::int64_t s, const Measure& measure) {
    const ThreadCountScope threads(this->spec_.threads);
    auto operand = [s](const char* name, Scalar value) {
      HostMatrix<Scalar> M(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(name)), s,
                           s);
      fill_operand(M, value);
      return M;
    };
    const auto A = operand("cuboid::calibrate::A", Scalar(0.5)),
               B = operand("cuboid::calibrate::B", Scalar(0.25)),
               C = operand("cuboid::calibrate::C", Scalar(0));
    return measure(A, B, C);
  }

  template <class A, class B, class C>
  void gemm(const space& exec, int team, kokkos_ext::Ops ops, Scalar alpha, const A& a, const B& b,
            Scalar beta, const C& c) {
    team_gemm(exec, team, this->spec_.threads, ops, alpha, a, b, beta, c);
  }
};

}  // namespace cuboid::exec
