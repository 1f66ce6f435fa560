#pragma once
// The pipeline every processor with its own memory runs (host-backed "staged" processors and
// GPUs); Backend supplies the spaces and the three queues (copies in, GEMMs, copies out).
//
// The host only issues work. The caller's arrays that the processor's own steps read and write
// are page-locked for the run (host_registry.hpp): their blocks travel as 2-D copies straight
// from and to them (the leading dimension as the pitch), with no host thread packing or
// unpacking. Whatever is not page-locked (registration refused or turned off, a block of a
// stolen step outside the ranges, a misaligned complex array) goes through a ring of staging
// chunks instead (packing a chunk overlaps the copy of the previous one). Every ordering
// between the queues is an event, so the GEMM queue holds the next step while the current one
// runs. The host waits only
// where it must touch memory a queue still uses: a staging chunk before packing into it again,
// and a drained C block before unpacking it. Each wait below is a CUBOID_WAIT whose tag says
// what it protects; tests/exec/engine_test.cpp (Ordering*) fails when any one of them is
// skipped (exec/waits.hpp).
//
// A and B panels have two buffers each. A step whose panel is already in one (the same block
// of the same matrix, copied earlier in this run: the plan orders steps so that consecutive
// ones share a panel where they can) reads it there instead of copying it again; a new panel
// goes to the buffer the previous step did not read.
#include <algorithm>
#include <cstring>
#include <exception>
#include <type_traits>

#include "exec/backends.hpp"
#include "exec/host_registry.hpp"
#include "exec/worker.hpp"
#include "kokkos_ext/compat.hpp"

namespace cuboid::exec {

template <class Scalar, class Backend>
class StagedWorker final : public Worker<Scalar> {
  using exec_space = typename Backend::exec_space;
  using mem_space = typename Backend::memory_space;
  using staging_space = typename Backend::staging_space;
  using Queues = typename Backend::Queues;
  using Event = typename Queues::Event;
  using Buffer = Kokkos::View<Scalar*, mem_space>;
  using Staging = Kokkos::View<Scalar*, staging_space>;
  // Typed with the space that runs them, so that Kokkos Kernels picks the vendor BLAS for it.
  using Block = Kokkos::View<Scalar**, Kokkos::LayoutLeft, Kokkos::Device<exec_space, mem_space>,
                             Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using ConstBlock =
      Kokkos::View<const Scalar**, Kokkos::LayoutLeft, Kokkos::Device<exec_space, mem_space>,
                   Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  // Input staging: a ring of chunks; each backend says how large (small chunks fill the
  // pipeline sooner, large ones cost fewer copies and events).
  static constexpr int kRing = 8;
  static constexpr std::int64_t kChunkBytes = Backend::chunk_bytes;  // per chunk, at most

 public:
  explicit StagedWorker(const platform::ProcessorSpec& spec)
      : Worker<Scalar>(spec),
        queues_(spec),
        // A device has no cores of its own: it borrows a few for packing.
        copy_threads_(spec.threads > 0 ? spec.threads : platform::device_copy_threads()) {}

  // What its buffers cost against its memory budget (see make_plan): the C staging and the
  // input ring count too when they live in the same memory as the buffers.
  static BufferCost buffer_cost(std::size_t element_bytes) {
    constexpr bool shared = Backend::staging_in_own_memory;
    BufferCost c;
    c.c_blocks = shared ? 4 : 2;
    c.fixed = shared ? kRing * kChunkBytes / std::int64_t(element_bytes) : 0;
    return c;
  }

  void prepare(const ProcessorPlan& plan) override {
    std::int64_t a = 0, b = 0, c = 0, column = 1, upload = 1;
    for (const Step& s : plan.steps) {
      a = std::max(a, s.c.rows() * s.depth());
      b = std::max(b, s.depth() * s.c.cols());
      c = std::max(c, s.c.rows() * s.c.cols());
      column = std::max({column, s.c.rows(), s.depth(), s.c.cols()});  // any op's panels
      upload = std::max({upload, s.c.rows() * s.depth(), s.depth() * s.c.cols(), c});
    }
    // Chunks hold at least one column, and need not be larger than the largest upload.
    const std::int64_t chunk = std::max<std::int64_t>(
        column, std::min<std::int64_t>(kChunkBytes / std::int64_t(sizeof(Scalar)), upload));
    kokkos_ext::ScopedRegion region("cuboid::exec::allocate_buffers");
    grow(panels_[0].buf, a, "cuboid::exec::A_panels");
    grow(panels_[1].buf, b, "cuboid::exec::B_panels");
    grow(c_buf_, c, "cuboid::exec::C_block");
    grow(c_stage_, c, "cuboid::exec::C_staging");
    grow_ring(chunk);
  }

  double reserved_bytes() const override {
    double b = double(ring_.extent(0));
    for (const auto& p : panels_)
      for (const auto& v : p.buf) b += double(v.extent(0));
    for (const auto& v : c_buf_) b += double(v.extent(0));
    for (const auto& v : c_stage_) b += double(v.extent(0));
    return b * sizeof(Scalar);
  }

  // The step's GEMM on the compute lane, on the last panels and C slot `cs`; the event it
  // records, after which the panels may be refilled and the source hears of the flops.
  Event issue_gemm(StepSource& source, const StepRef& cur, int cs, const RunContext<Scalar>& ctx) {
    const Step& step = *cur.step;
    const Scalar beta = step.beta == BetaUse::one    ? Scalar(1)
                        : step.beta == BetaUse::zero ? Scalar(0)
                                                     : ctx.beta;
    Panels &pa = panels_[0], &pb = panels_[1];
    // The panels as stored: a transposed A arrives depth x rows, a transposed B cols x depth.
    const bool ta = ctx.ops.a != 'N', tb = ctx.ops.b != 'N';
    const ConstBlock a(pa.buf[pa.last].data(), ta ? step.depth() : step.c.rows(),
                       ta ? step.c.rows() : step.depth());
    const ConstBlock b(pb.buf[pb.last].data(), tb ? step.c.cols() : step.depth(),
                       tb ? step.depth() : step.c.cols());
    const Block c(c_buf_[cs].data(), step.c.rows(), step.c.cols());
    const int team = ctx.teams.empty() ? gemm_team(this->spec_) : ctx.teams[std::size_t(cur.owner)];
    queues_.gemm(team, ctx.ops, ctx.alpha, a, b, beta, c);
    const Event done = queues_.record(lane_compute);
    pa.read[pa.last] = pb.read[pb.last] = done;
    queues_.then(lane_compute, done, [&source, f = step.flops()] { source.done(f); });
    return done;
  }

  // A step that ends its C block: once its GEMM is done, C slot `cs` drains to its home, straight
  // where the home is page-locked, else through the staging chunks the host unpacks.
  void issue_c_out(const Step& step, int cs, Event done, bool stolen, const RunContext<Scalar>& ctx,
                   WorkerStats& st) {
    CUBOID_WAIT("restage-after-unpack", complete_drain(cs, ctx));
    CUBOID_WAIT("drain-after-gemm", queues_.wait(lane_out, done));
    const std::int64_t rows = step.c.rows(), cols = step.c.cols();
    Pending& pd = pending_[cs];
    pd = Pending{true, step, {}, 0, false};
    const auto [home, i_off, j_off] = c_home(step, ctx);
    const std::int64_t hi0 = step.c.i0 - i_off, hj0 = step.c.j0 - j_off;
    if (direct(home, hi0, hi0 + rows, hj0, hj0 + cols)) {
      // Straight into its home: nothing to unpack.
      queues_.download_2d(lane_out, &home(hi0, hj0), pitch_of(home), c_buf_[cs].data(),
                          std::size_t(rows) * sizeof(Scalar), std::size_t(rows) * sizeof(Scalar),
                          std::size_t(cols));
      pd.direct = true;
      pd.n = 1;
      pd.chunks[0] = Chunk{queues_.record(lane_out), 0, cols};
      ++st.direct_copies;
    } else {
      pd.n = issue_drain(c_stage_[cs].data(), c_buf_[cs].data(), rows, cols, pd.chunks);
      st.staged_copies += pd.n;
    }
    drained_[cs] = pd.chunks[std::size_t(pd.n - 1)].done;  // the lane is in order
    const std::size_t bytes = std::size_t(rows * cols) * sizeof(Scalar);
    st.d2h_bytes += double(bytes);
    if (stolen) st.steal_bytes += double(bytes);
  }

  WorkerStats execute(StepSource& source, const RunContext<Scalar>& ctx, double t0) override {
    kokkos_ext::ScopedRegion region("cuboid::exec::staged[" + this->spec_.name + "]");
    WorkerStats st;
    // Steps come one at a time: a step is taken from the source when its copies are issued,
    // one step ahead of its GEMM. A C block's chain (from its first step to the one that
    // drains it) always comes whole and in order.
    StepRef cur;
    if (!source.next(cur)) {
      st.finish_s = now_seconds() - t0;
      return st;
    }
    in_ready_ = drained_ = {};
    panels_[0].reset(), panels_[1].reset();  // A and B may hold other values than last run
    ring_free_ = {};
    ring_next_ = 0;
    pending_ = {};
    // Page-locked for the run, its cost inside the run's time as a call pays it; unregistered
    // once the queues have drained (declared before the drain below, so destroyed after it).
    pin_arrays(source, ctx, st);
    struct Unpin {
      PinLease& lease;
      ~Unpin() { lease.release(); }
    } unpin{lease_};

    queues_.begin_run();
    // Queued work refers to `source` (and to this run's matrices): if anything below throws,
    // the queues still drain before the exception leaves.
    struct DrainOnThrow {
      Queues& q;
      int uncaught = std::uncaught_exceptions();
      ~DrainOnThrow() {
        if (std::uncaught_exceptions() > uncaught) try {
            q.finish();
          } catch (...) {
          }
      }
    } drain_on_throw{queues_};
    int c_slot = 0;         // flips at the start of each chain of steps on one C block
    bool new_block = true;  // the current step starts a C block
    std::size_t s = 0;      // steps so far: step s records its inputs in in_ready_[s % 2]
    issue_inputs(cur, s, c_slot, ctx, st);
    for (;;) {
      const Step& step = *cur.step;
      const int cs = c_slot;
      CUBOID_WAIT("gemm-after-inputs", queues_.wait(lane_compute, in_ready_[s % 2]));
      // A block the GEMM overwrites (no old C) must first have left the slot.
      const bool overwrites = new_block && !step.c_in;
      if (overwrites) CUBOID_WAIT("gemm-after-drain", queues_.wait(lane_compute, drained_[cs]));
      const Event done = issue_gemm(source, cur, cs, ctx);
      st.flops += step.flops();
      ++st.steps;

      if (step.c_out) issue_c_out(step, cs, done, cur.stolen, ctx, st);
      StepRef next;
      queues_.poll();  // what stealing knows of this processor's progress
      if (!source.next(next)) break;
      new_block = step.c_out;
      if (new_block) c_slot ^= 1;
      cur = next;
      issue_inputs(cur, ++s, c_slot, ctx, st);
    }
    CUBOID_WAIT("final-unpack", complete_drain(0, ctx));
    CUBOID_WAIT("final-unpack", complete_drain(1, ctx));
    queues_.finish();
    const LaneTimes t = queues_.times();
    st.copy_s = t.copy_s, st.busy_s = t.busy_s, st.stall_s = t.stall_s;
    st.finish_s = now_seconds() - t0;
    return st;
  }

  // On the calling thread with the processor's threads (given back afterwards).
  double measure_gemm_rate(std::int64_t s, double max_seconds) override {
    return with_operands(s, [&](const Block& A, const Block& B, const Block& C) {
      return best_gemm_rate(queues_.compute_space(), A, B, C, s, max_seconds);
    });
  }
  double measure_gemm_rate_in(std::int64_t s, GemmWindow& window) override {
    return with_operands(s, [&](const Block& A, const Block& B, const Block& C) {
      return window_gemm_rate(queues_.compute_space(), A, B, C, s, window);
    });
  }

  // `measure` on s x s operands in its own memory, with the processor's threads.
  template <class Measure>
  double with_operands(std::int64_t s, const Measure& measure) {
    const ThreadCountScope threads(this->spec_.threads);
    auto operand = [s](const char* name, Scalar value) {
      Buffer b(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(name)),
               std::size_t(s * s));
      fill_operand(b, value);
      return b;
    };
    const Buffer a = operand("cuboid::calibrate::A", Scalar(0.5)),
                 b = operand("cuboid::calibrate::B", Scalar(0.25)),
                 c = operand("cuboid::calibrate::C", Scalar(0));
    const Block A(a.data(), s, s), B(b.data(), s, s), C(c.data(), s, s);
    return measure(A, B, C);
  }

  // In: a host matrix of `bytes` through upload() -- packing into the staging ring included, as
  // every panel travels. Out: as a C block drains, in chunks with an event each, each unpacked
  // into the host matrix while the next is in flight -- so that the rate is the one the run's
  // last drain, which no GEMM hides, has.
  typename Worker<Scalar>::Link measure_link(std::size_t bytes) override {
    const std::int64_t rows = 4096;
    const std::int64_t cols =
        std::max<std::int64_t>(1, std::int64_t(bytes / sizeof(Scalar)) / rows);
    HostMatrix<Scalar> M(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::calibrate::M"),
                         rows, cols);
    fill_operand(M, Scalar(0.5));
    const std::size_t moved = std::size_t(rows * cols) * sizeof(Scalar);
    // Uninitialised: the copies write both before anything reads them.
    Buffer d(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::calibrate::memory"),
             std::size_t(rows * cols));
    Kokkos::View<unsigned char*, staging_space> h(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::calibrate::staging"), moved);
    grow_ring(kChunkBytes / std::int64_t(sizeof(Scalar)));
    // The path a run takes: straight from and to the page-locked matrix where registration is
    // on (registered once: runs register per call, but the link is the subject here).
    lease_.release();
    if (this->spec_.register_host)
      lease_ = PinLease(Backend::host_registry(), {block_bytes(M, 0, rows, 0, cols)});
    struct Unpin {
      PinLease& lease;
      ~Unpin() { lease.release(); }
    } unpin{lease_};
    queues_.begin_run();  // the copies' events come from the run's pool
    ring_free_ = {};
    WorkerStats st;
    // The median of five, not the best: the model predicts a run's median time, and on a host
    // whose cores and memory the copies share, the best of a few is an outlier the run's own
    // copies seldom reach.
    auto typical = [&](Lane lane) {
      std::array<double, 5> t{};
      for (int r = 0; r <= int(t.size()); ++r) {  // the first pays for first touches: not counted
        const double t0 = now_seconds();
        if (lane == lane_in) {
          upload(d.data(), M, 0, rows, 0, cols, st);
          queues_.sync(queues_.record(lane));
        } else if (direct(M, 0, rows, 0, cols)) {
          queues_.download_2d(lane_out, M.data(), pitch_of(M), d.data(),
                              std::size_t(rows) * sizeof(Scalar),
                              std::size_t(rows) * sizeof(Scalar), std::size_t(cols));
          queues_.sync(queues_.record(lane_out));
        } else {
          std::array<Chunk, kDrainChunks> chunks{};
          Scalar* stage = reinterpret_cast<Scalar*>(h.data());
          const int n = issue_drain(stage, d.data(), rows, cols, chunks);
          unpack_drain(chunks, n, rows, stage, [&](std::int64_t j) { return &M(0, j); });
        }
        if (r > 0) t[std::size_t(r - 1)] = now_seconds() - t0;
      }
      const auto mid = t.begin() + std::ptrdiff_t(t.size() / 2);
      std::nth_element(t.begin(), mid, t.end());
      return double(moved) / *mid / 1e9;
    };
    typename Worker<Scalar>::Link link;
    link.h2d_gbs = typical(lane_in);
    link.d2h_gbs = typical(lane_out);
    queues_.finish();
    ring_free_ = {};
    return link;
  }

 private:
  // The staging ring, kRing chunks of at least `chunk` elements.
  void grow_ring(std::int64_t chunk) {
    if (std::int64_t(ring_.extent(0)) < kRing * chunk || chunk_ < chunk) {
      chunk_ = std::max(chunk_, chunk);
      ring_ = Staging(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::exec::ring"),
                      std::size_t(kRing * chunk_));
    }
  }

  // A drain's chunk of columns [j0, j1) of the C block, and the copy's event.
  struct Chunk {
    Event done{};
    std::int64_t j0 = 0, j1 = 0;
  };
  static constexpr int kDrainChunks = 8;  // at most, per C block
  struct Pending {
    bool active = false;
    Step step;
    std::array<Chunk, kDrainChunks> chunks{};
    int n = 0;
    bool direct = false;  // copied straight to its home: waited for, not unpacked
  };

  // A drain: the rows x cols block `src` copied out to `stage` in column chunks, each with its
  // event, so that unpacking one overlaps the copy of the next (which shortens the drain no GEMM
  // hides, the run's last). Returns the number of chunks.
  int issue_drain(Scalar* stage, const Scalar* src, std::int64_t rows, std::int64_t cols,
                  std::array<Chunk, kDrainChunks>& chunks) {
    const std::int64_t per =
        std::max<std::int64_t>({1, (cols + kDrainChunks - 1) / kDrainChunks,
                                kChunkBytes / std::int64_t(sizeof(Scalar)) / rows});
    int n = 0;
    for (std::int64_t j = 0; j < cols; j += per) {
      const std::int64_t je = std::min(cols, j + per);
      const std::size_t off = std::size_t(j * rows);
      queues_.download(lane_out, stage + off, src + off,
                       std::size_t((je - j) * rows) * sizeof(Scalar));
      chunks[std::size_t(n++)] = Chunk{queues_.record(lane_out), j, je};
    }
    return n;
  }

  // Unpacks the drained chunks from `stage` (rows per column), each once its copy is done;
  // column j goes to `column(j)`.
  template <class Column>
  void unpack_drain(const std::array<Chunk, kDrainChunks>& chunks, int n, std::int64_t rows,
                    const Scalar* stage, const Column& column) {
    for (int x = 0; x < n; ++x) {
      const Chunk& ch = chunks[std::size_t(x)];
      {
        trace::Span waited({this->spec_.name, "host"}, "wait for drained chunk");
        CUBOID_WAIT("unpack-after-drain", Queues::sync(ch.done));
      }
      trace::Span span({this->spec_.name, "host"}, "unpack");
      // Read only by the OpenMP pragma: unused in a build without OpenMP (the HIP variant).
      [[maybe_unused]] const bool large =
          double(rows) * double(ch.j1 - ch.j0) * sizeof(Scalar) > double(1 << 22);
#pragma omp parallel for num_threads(copy_threads_) if (large) schedule(static)
      for (std::int64_t j = ch.j0; j < ch.j1; ++j)
        std::memcpy(column(j), stage + j * rows, std::size_t(rows) * sizeof(Scalar));
    }
  }

  // Which block of which matrix a panel buffer holds.
  struct PanelKey {
    const Scalar* matrix = nullptr;  // nullptr: nothing
    std::int64_t i0 = 0, i1 = 0, j0 = 0, j1 = 0;
    bool operator==(const PanelKey& o) const {
      return matrix == o.matrix && i0 == o.i0 && i1 == o.i1 && j0 == o.j0 && j1 == o.j1;
    }
  };

  // The two buffers of one kind of panel (A or B).
  struct Panels {
    std::array<Buffer, 2> buf;
    std::array<PanelKey, 2> key{};  // what each holds
    std::array<Event, 2> read{};    // the last GEMM that read each
    int last = 0;                   // the buffer of the step last issued
    void reset() {
      key = {};
      read = {};
      last = 0;
    }
  };

  template <class Views>
  static void grow(Views& views, std::int64_t n, const char* label) {
    for (auto& v : views)
      if (std::int64_t(v.extent(0)) < n)
        v = std::decay_t<decltype(v)>(
            Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), std::size_t(n));
  }

  // Copies the block [i0,i1) x [j0,j1) of a LayoutLeft host matrix to `dst` (dense, columns of
  // i1-i0), through the staging ring: each chunk of columns is packed, then its copy is issued
  // while the next chunk is packed.
  template <class View>
  void upload(Scalar* dst, const View& src, std::int64_t i0, std::int64_t i1, std::int64_t j0,
              std::int64_t j1, WorkerStats& st) {
    const std::int64_t rows = i1 - i0;
    if (rows <= 0 || j1 <= j0) return;
    if (direct(src, i0, i1, j0, j1)) {
      const std::size_t width = std::size_t(rows) * sizeof(Scalar);
      queues_.upload_2d(lane_in, dst, width, &src(i0, j0), pitch_of(src), width,
                        std::size_t(j1 - j0));
      st.h2d_bytes += double(width) * double(j1 - j0);
      ++st.direct_copies;
      return;
    }
    const std::int64_t per_chunk = std::max<std::int64_t>(1, chunk_ / rows);
    for (std::int64_t jc = j0; jc < j1; jc += per_chunk) {
      const std::int64_t je = std::min(j1, jc + per_chunk);
      const int r = ring_next_;
      ring_next_ = (ring_next_ + 1) % kRing;
      {
        trace::Span waited({this->spec_.name, "host"}, "wait for staging chunk");
        CUBOID_WAIT("pack-after-copy",
                    Queues::sync(ring_free_[r]));  // the chunk's last copy has read it
      }
      trace::Span span({this->spec_.name, "host"}, "pack");
      Scalar* chunk = ring_.data() + r * chunk_;
      // Read only by the OpenMP pragma: unused in a build without OpenMP (the HIP variant).
      [[maybe_unused]] const bool large =
          double(rows) * double(je - jc) * sizeof(Scalar) > double(1 << 19);
#pragma omp parallel for num_threads(copy_threads_) if (large) schedule(static)
      for (std::int64_t j = jc; j < je; ++j)
        std::memcpy(chunk + (j - jc) * rows, &src(i0, j), std::size_t(rows) * sizeof(Scalar));
      const std::size_t bytes = std::size_t(rows * (je - jc)) * sizeof(Scalar);
      queues_.upload(lane_in, dst + (jc - j0) * rows, chunk, bytes);
      ring_free_[r] = queues_.record(lane_in);
      st.h2d_bytes += double(bytes);
      ++st.staged_copies;
    }
  }

  // Makes the block [i0,i1) x [j0,j1) of `src` the current panel of `p`: the buffer that holds
  // it already, or else the one the previous step did not read, once no GEMM reads it any more.
  template <class View>
  void place(Panels& p, const View& src, std::int64_t i0, std::int64_t i1, std::int64_t j0,
             std::int64_t j1, WorkerStats& st) {
    const PanelKey key{src.data(), i0, i1, j0, j1};
    // (A plain loop: nvcc rejects a range-for over a braced list here.)
    for (int t = 0; t < 2; ++t) {
      const int x = t == 0 ? p.last : p.last ^ 1;
      if (p.key[std::size_t(x)] == key) {
        p.last = x;
        return;
      }
    }
    // A GEMM may still read the other buffer (the panel of the step before the previous).
    const std::size_t x = std::size_t(p.last ^ 1);
    CUBOID_WAIT("inputs-after-gemm", queues_.wait(lane_in, p.read[x]));
    p.key[x] = key;
    p.last = int(x);
    upload(p.buf[x].data(), src, i0, i1, j0, j1, st);
  }

  // Issues the A and B panels of step number s (those not already there) and, when it needs
  // one, its old C block (into C slot cs).
  void issue_inputs(const StepRef& ref, std::size_t s, int cs, const RunContext<Scalar>& ctx,
                    WorkerStats& st) {
    const Step& step = *ref.step;
    const double before = st.h2d_bytes;
    if (ctx.ops.a == 'N')
      place(panels_[0], ctx.A, step.c.i0, step.c.i1, step.l0, step.l1, st);
    else
      place(panels_[0], ctx.A, step.l0, step.l1, step.c.i0, step.c.i1, st);
    if (ctx.ops.b == 'N')
      place(panels_[1], ctx.B, step.l0, step.l1, step.c.j0, step.c.j1, st);
    else
      place(panels_[1], ctx.B, step.c.j0, step.c.j1, step.l0, step.l1, st);
    if (step.c_in) {
      // The old C may be a block drained earlier and not yet unpacked.
      for (int p = 0; p < 2; ++p)
        if (pending_[p].active && overlaps(pending_[p].step, step))
          CUBOID_WAIT("c-in-after-unpack", complete_drain(p, ctx));
      CUBOID_WAIT("c-in-after-drain",
                  queues_.wait(lane_in, drained_[cs]));  // the slot's last block left
      const auto [home, i_off, j_off] = c_home(step, ctx);
      upload(c_buf_[cs].data(), home, step.c.i0 - i_off, step.c.i1 - i_off, step.c.j0 - j_off,
             step.c.j1 - j_off, st);
    }
    in_ready_[s % 2] = queues_.record(lane_in);
    if (ref.stolen) st.steal_bytes += st.h2d_bytes - before;
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

  // Unpacks the drain of C slot `cs` into its home (C or a partial buffer), chunk by chunk as
  // each arrives.
  void complete_drain(int cs, const RunContext<Scalar>& ctx) {
    Pending& pd = pending_[cs];
    if (!pd.active) return;
    if (pd.direct) {
      // Already in its home once its copy is done: the host waits for that only (its slot, or
      // the old C a later step brings in, may be touched next).
      trace::Span waited({this->spec_.name, "host"}, "wait for direct drain");
      CUBOID_WAIT("c-after-direct-drain", Queues::sync(pd.chunks[0].done));
      pd.active = false;
      return;
    }
    const Step& step = pd.step;
    // Named apart from the binding: C++17 lambdas may not capture a structured binding.
    const auto [home, i_off, j_off] = c_home(step, ctx);
    const HostMatrix<Scalar> host = home;
    const std::int64_t rows = step.c.rows(), i0 = step.c.i0 - i_off, j0 = step.c.j0 - j_off;
    unpack_drain(pd.chunks, pd.n, rows, c_stage_[cs].data(),
                 [&](std::int64_t j) { return &host(i0, j0 + j); });
    pd.active = false;
  }

  // A block of `v` goes straight from or to it: page-locked for the run (lease_), aligned for
  // its elements (a complex array aligned only as its reals keeps the staging path), and a
  // pitch the runtimes take.
  template <class View>
  bool direct(const View& v, std::int64_t i0, std::int64_t i1, std::int64_t j0,
              std::int64_t j1) const {
    if (i1 <= i0 || j1 <= j0) return false;
    const ByteRange b = block_bytes(v, i0, i1, j0, j1);
    return b.lo % alignof(Scalar) == 0 && pitch_of(v) <= kMaxPitch &&
           lease_.covers(reinterpret_cast<const void*>(b.lo), reinterpret_cast<const void*>(b.hi));
  }
  template <class View>
  static std::size_t pitch_of(const View& v) {
    return std::size_t(v.stride(1)) * sizeof(Scalar);
  }
  static constexpr std::size_t kMaxPitch = (std::size_t(1) << 31) - 1;  // cudaDevAttrMaxPitch

  // Registers the blocks of A, B and C (or its partial buffers) the processor's own steps read
  // and write, as one lease: overlapping ranges (aliased A, B and C included) once.
  void pin_arrays(StepSource& source, const RunContext<Scalar>& ctx, WorkerStats& st) {
    lease_.release();
    const std::vector<Step>* steps = source.planned();
    if (!this->spec_.register_host || steps == nullptr) return;
    std::vector<ByteRange> want;
    auto add = [&](const HostMatrix<Scalar>& v, std::int64_t i0, std::int64_t i1, std::int64_t j0,
                   std::int64_t j1) {
      if (i1 > i0 && j1 > j0) want.push_back(block_bytes(v, i0, i1, j0, j1));
    };
    const bool ta = ctx.ops.a != 'N', tb = ctx.ops.b != 'N';
    for (const Step& step : *steps) {
      if (ta)
        add(ctx.A, step.l0, step.l1, step.c.i0, step.c.i1);
      else
        add(ctx.A, step.c.i0, step.c.i1, step.l0, step.l1);
      if (tb)
        add(ctx.B, step.c.j0, step.c.j1, step.l0, step.l1);
      else
        add(ctx.B, step.l0, step.l1, step.c.j0, step.c.j1);
      if (step.c_in || step.c_out) {
        const auto [home, i_off, j_off] = c_home(step, ctx);
        add(home, step.c.i0 - i_off, step.c.i1 - i_off, step.c.j0 - j_off, step.c.j1 - j_off);
      }
    }
    const double t = now_seconds();
    lease_ = PinLease(Backend::host_registry(), std::move(want));
    st.register_s = now_seconds() - t;
    st.registrations = lease_.registrations();
    st.refused_registrations = lease_.refused();
    st.registered_bytes = lease_.registered_bytes();
  }

  Queues queues_;
  PinLease lease_;                  // what this run page-locked
  std::array<Panels, 2> panels_;    // A, B
  std::array<Buffer, 2> c_buf_;     // C blocks
  std::array<Staging, 2> c_stage_;  // drained C blocks, unpacked by the host
  Staging ring_;                    // kRing chunks of chunk_ elements, for inputs
  std::int64_t chunk_ = 0;
  std::array<Event, kRing> ring_free_{};
  int ring_next_ = 0;
  std::array<Event, 2> in_ready_{}, drained_{};
  std::array<Pending, 2> pending_;
  int copy_threads_ = 1;
};

}  // namespace cuboid::exec
