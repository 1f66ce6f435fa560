#pragma once
// The pipeline every processor with its own memory runs. Backend supplies the execution space,
// the processor's memory space, the host staging space (pinned memory on a GPU) and three
// instances: copies in, GEMMs, copies out. On a GPU the instances are separate streams, so the
// copies of step s+1 and the drain of step s-1 overlap the GEMM of step s.
#include <cstring>
#include <mutex>
#include <thread>

#include "exec/worker.hpp"
#include "kokkos_ext/compat.hpp"

namespace cuboid::exec {

template <class Scalar, class Backend>
class StagedWorker final : public Worker<Scalar> {
  using exec_space = typename Backend::exec_space;
  using mem_space = typename Backend::memory_space;
  using staging_space = typename Backend::staging_space;
  using Buffer = Kokkos::View<Scalar*, mem_space>;
  using Staging = Kokkos::View<Scalar*, staging_space>;
  using Block = Kokkos::View<Scalar**, Kokkos::LayoutLeft, mem_space,
                             Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using StagingBlock = Kokkos::View<Scalar**, Kokkos::LayoutLeft, staging_space,
                                    Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

 public:
  explicit StagedWorker(const platform::ProcessorSpec& spec)
      : Worker<Scalar>(spec),
        instances_(Backend::instances(spec)),
        // A device has no cores of its own: it borrows a few for packing.
        copy_threads_(spec.threads > 0
                          ? spec.threads
                          : std::max(1, std::min(4, int(std::thread::hardware_concurrency())))) {}

  void prepare(const ProcessorPlan& plan) override {
    kokkos_ext::ScopedRegion region("cuboid::exec::allocate_buffers");
    ensure(plan.max_a, plan.max_b, plan.max_c);
  }

  double reserved_bytes() const override {
    double b = 0;
    for (const auto* set : {&a_buf_, &b_buf_, &c_buf_})
      for (const auto& v : *set) b += double(v.extent(0)) * sizeof(Scalar);
    for (const auto* set : {&a_stage_, &b_stage_, &c_stage_})
      for (const auto& v : *set) b += double(v.extent(0)) * sizeof(Scalar);
    return b;
  }

  WorkerStats execute(const ProcessorPlan& plan, const RunContext<Scalar>& ctx,
                      double t0) override {
    kokkos_ext::ScopedRegion region("cuboid::exec::staged[" + this->spec_.name + "]");
    set_thread_count(this->spec_.threads);
    ensure(plan.max_a, plan.max_b, plan.max_c);
    WorkerStats st;
    const auto& steps = plan.steps;
    if (steps.empty()) {
      st.finish_s = now_seconds() - t0;
      return st;
    }
    auto& in = instances_[0];
    auto& compute = instances_[1];
    auto& out = instances_[2];
    int c_slot = 1;  // flips at the start of each run of steps on one C block
    std::vector<int> slot_of_step(steps.size(), 0);
    for (std::size_t s = 0; s < steps.size(); ++s) {
      const bool new_run = s == 0 || steps[s - 1].c_out;
      if (new_run) c_slot ^= 1;
      slot_of_step[s] = c_slot;
    }

    prepare_inputs(0, steps, ctx, st);
    prepare_c(0, steps, slot_of_step, ctx, st);
    for (std::size_t s = 0; s < steps.size(); ++s) {
      const Step& step = steps[s];
      const int ab = int(s % 2);
      const int cs = slot_of_step[s];
      double t = now_seconds();
      in.fence();
      st.stall_s += now_seconds() - t;

      t = now_seconds();
      const Block a(a_buf_[ab].data(), step.c.rows(), step.depth());
      const Block b(b_buf_[ab].data(), step.depth(), step.c.cols());
      const Block c(c_buf_[cs].data(), step.c.rows(), step.c.cols());
      const Scalar beta = step.beta == BetaUse::one    ? Scalar(1)
                          : step.beta == BetaUse::zero ? Scalar(0)
                                                       : ctx.beta;
      kokkos_ext::gemm(compute, ctx.alpha, a, b, beta, c);
      // The next step's old C may be what this step is about to produce: then it is fetched
      // only after this step's block has been drained.
      const bool next = s + 1 < steps.size();
      const bool c_waits = next && steps[s + 1].c_in && step.c_out && overlaps(step, steps[s + 1]);
      if (next) {
        prepare_inputs(s + 1, steps, ctx, st);
        if (!c_waits) prepare_c(s + 1, steps, slot_of_step, ctx, st);
      }
      compute.fence();
      st.busy_s += now_seconds() - t;
      st.flops += step.flops();
      ++st.steps;

      if (step.c_out) {
        const StagingBlock staged(c_stage_[cs].data(), step.c.rows(), step.c.cols());
        copy(out, staged, c);
        pending_[cs] = Pending{true, step};
        st.d2h_bytes += double(step.c.rows() * step.c.cols()) * sizeof(Scalar);
      }
      if (c_waits) prepare_c(s + 1, steps, slot_of_step, ctx, st);
    }
    complete_drains(ctx);
    st.finish_s = now_seconds() - t0;
    return st;
  }

  double measure_gemm_rate(std::int64_t s, double max_seconds) override {
    set_thread_count(this->spec_.threads);
    Buffer a("cuboid::calibrate::A", std::size_t(s * s)),
        b("cuboid::calibrate::B", std::size_t(s * s)),
        c("cuboid::calibrate::C", std::size_t(s * s));
    Kokkos::deep_copy(a, Scalar(0.5));
    Kokkos::deep_copy(b, Scalar(0.25));
    const Block A(a.data(), s, s), B(b.data(), s, s), C(c.data(), s, s);
    auto& compute = instances_[1];
    return best_gemm_rate(compute, A, B, C, s, max_seconds);
  }

 private:
  struct Pending {
    bool active = false;
    Step step;
  };

  void ensure(std::int64_t a, std::int64_t b, std::int64_t c) {
    auto grow = [](auto& views, std::int64_t n, const char* label) {
      for (auto& v : views)
        if (std::int64_t(v.extent(0)) < n)
          v = std::decay_t<decltype(v)>(
              Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), std::size_t(n));
    };
    grow(a_buf_, a, "cuboid::exec::A_panel");
    grow(b_buf_, b, "cuboid::exec::B_panel");
    grow(c_buf_, c, "cuboid::exec::C_block");
    grow(a_stage_, a, "cuboid::exec::A_staging");
    grow(b_stage_, b, "cuboid::exec::B_staging");
    grow(c_stage_, c, "cuboid::exec::C_staging");
  }

  template <class Dst, class Src>
  static void copy(const exec_space& space, const Dst& dst, const Src& src) {
    // Host-to-host copies of large buffers run a parallel kernel on the default host space;
    // Kokkos' host backends are not re-entrant from several threads, so those are serialised.
    if constexpr (std::is_same_v<mem_space, Kokkos::HostSpace>) {
      static std::mutex m;
      std::lock_guard<std::mutex> lock(m);
      kokkos_ext::deep_copy(space, dst, src);
    } else {
      kokkos_ext::deep_copy(space, dst, src);
    }
  }

  // Packs a block of a LayoutLeft host matrix (columns are contiguous) into a dense buffer.
  // Packs a block of a LayoutLeft host matrix (columns are contiguous) into a dense buffer.
  // Large blocks are copied by several threads: one thread's memcpy is far slower than a
  // PCIe link, and the host-resident pipeline is only as fast as its packing.
  template <class View>
  void pack(const View& src, std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1,
            Scalar* dst) const {
    const std::int64_t rows = i1 - i0;
    const bool large = double(rows) * double(j1 - j0) * sizeof(Scalar) > double(1 << 22);
#pragma omp parallel for num_threads(copy_threads_) if (large) schedule(static)
    for (std::int64_t j = j0; j < j1; ++j)
      std::memcpy(dst + (j - j0) * rows, &src(i0, j), std::size_t(rows) * sizeof(Scalar));
  }
  template <class View>
  void unpack(const Scalar* src, const View& dst, std::int64_t i0, std::int64_t i1, std::int64_t j0,
              std::int64_t j1) const {
    const std::int64_t rows = i1 - i0;
    const bool large = double(rows) * double(j1 - j0) * sizeof(Scalar) > double(1 << 22);
#pragma omp parallel for num_threads(copy_threads_) if (large) schedule(static)
    for (std::int64_t j = j0; j < j1; ++j)
      std::memcpy(&dst(i0, j), src + (j - j0) * rows, std::size_t(rows) * sizeof(Scalar));
  }

  // Packs and sends step s's A and B panels.
  void prepare_inputs(std::size_t s, const std::vector<Step>& steps, const RunContext<Scalar>& ctx,
                      WorkerStats& st) {
    const Step& step = steps[s];
    const int ab = int(s % 2);
    auto& in = instances_[0];
    const std::int64_t rows = step.c.rows(), cols = step.c.cols(), depth = step.depth();
    pack(ctx.A, step.c.i0, step.c.i1, step.l0, step.l1, a_stage_[ab].data());
    pack(ctx.B, step.l0, step.l1, step.c.j0, step.c.j1, b_stage_[ab].data());
    copy(in, Block(a_buf_[ab].data(), rows, depth), StagingBlock(a_stage_[ab].data(), rows, depth));
    copy(in, Block(b_buf_[ab].data(), depth, cols), StagingBlock(b_stage_[ab].data(), depth, cols));
    st.h2d_bytes += double(rows * depth + depth * cols) * sizeof(Scalar);
  }

  // Brings step s's old C block in, or frees its slot when the block will be overwritten.
  void prepare_c(std::size_t s, const std::vector<Step>& steps,
                 const std::vector<int>& slot_of_step, const RunContext<Scalar>& ctx,
                 WorkerStats& st) {
    const Step& step = steps[s];
    const int cs = slot_of_step[s];
    if (step.c_in) {
      // The old C may be the result of a drain still in flight: finish drains first.
      complete_drains(ctx);
      const std::int64_t rows = step.c.rows(), cols = step.c.cols();
      const auto [host, i_off, j_off] = c_home(step, ctx);
      pack(host, step.c.i0 - i_off, step.c.i1 - i_off, step.c.j0 - j_off, step.c.j1 - j_off,
           c_stage_[cs].data());
      copy(instances_[0], Block(c_buf_[cs].data(), rows, cols),
           StagingBlock(c_stage_[cs].data(), rows, cols));
      st.h2d_bytes += double(rows * cols) * sizeof(Scalar);
    } else if (s == 0 || steps[s - 1].c_out) {
      // A new block that is overwritten: its slot must not still be draining.
      complete_drain(cs, ctx);
    }
  }

  static bool overlaps(const Step& a, const Step& b) {
    return a.dest == b.dest && a.c.i0 < b.c.i1 && b.c.i0 < a.c.i1 && a.c.j0 < b.c.j1 &&
           b.c.j0 < a.c.j1;
  }

  std::tuple<HostMatrix<Scalar>, std::int64_t, std::int64_t> c_home(
      const Step& step, const RunContext<Scalar>& ctx) const {
    if (step.dest < 0) return {ctx.C, 0, 0};
    const Rect& r = ctx.partial_rects[std::size_t(step.dest)];
    return {ctx.partials[std::size_t(step.dest)], r.i0, r.j0};
  }

  void complete_drain(int cs, const RunContext<Scalar>& ctx) {
    if (!pending_[cs].active) return;
    instances_[2].fence();
    const Step& step = pending_[cs].step;
    const auto [host, i_off, j_off] = c_home(step, ctx);
    unpack(c_stage_[cs].data(), host, step.c.i0 - i_off, step.c.i1 - i_off, step.c.j0 - j_off,
           step.c.j1 - j_off);
    pending_[cs].active = false;
  }
  void complete_drains(const RunContext<Scalar>& ctx) {
    complete_drain(0, ctx);
    complete_drain(1, ctx);
  }

 private:
  std::array<exec_space, 3> instances_;
  std::array<Buffer, 2> a_buf_, b_buf_, c_buf_;
  std::array<Staging, 2> a_stage_, b_stage_, c_stage_;
  std::array<Pending, 2> pending_;
  int copy_threads_ = 1;
};

}  // namespace cuboid::exec
