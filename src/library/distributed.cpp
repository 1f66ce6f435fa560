// The distributed entry (include/cuboid/mpi.hpp): the caller's block-cyclic matrices handed to
// the rank runner, which computes them with the context's local multiply on every rank, as a
// distributed `cuboid run` does with generated ones.
#include <cuboid/mpi.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "exec/scalar.hpp"
#include "layout/layout.hpp"
#include "library/context_internals.hpp"
#include "mpi/communicator.hpp"
#include "mpi/duplicate.hpp"
#include "mpi/runner.hpp"
#include "partition/strategy.hpp"
#include "util/trace.hpp"

namespace cuboid {
namespace {

// Products prepared by shape, layout and communicator, most recently used first: a repeated
// call finds its partition, plans and buffers made. At most kPrepared per scalar type, since
// each holds buffers of the size of its panels.
constexpr std::size_t kPrepared = 4;

using Key = std::array<std::int64_t, 18>;

template <class Scalar>
using HostVector = Kokkos::View<Scalar*, Kokkos::HostSpace>;

// A packed copy (of an operand whose leading dimension is not its local rows: a sub-matrix) is
// kept with its product for the next call, at most this large where the rank options set a
// memory limit. A new buffer's pages are faulted in as they are first written: for a 736 x 736
// x 64 update on a 1 x 2 grid that made the call ten times as long as its GEMM, and at
// 3072 x 3072 x 512 1.5 times as long (measured on a 2-core virtual machine).
constexpr std::size_t kKeptPackBytesLimited = std::size_t(32) << 20;

template <class Scalar>
struct Prepared {
  Key key;
  std::unique_ptr<mpi::DistributedProduct<Scalar>> product;
  HostVector<Scalar> packs[3];  // A, B and C's packed copies, where kept
};

template <class Scalar>
using PreparedList = std::list<Prepared<Scalar>>;

struct PreparedProducts {
  RankOptions options;
  exec::PerScalar<PreparedList> lists;
  template <class Scalar>
  PreparedList<Scalar>& of() {
    return lists.of<Scalar>();
  }
  void clear() { lists.f32.clear(), lists.f64.clear(), lists.c32.clear(), lists.c64.clear(); }
};

PreparedProducts& prepared(Context& context) {
  auto& slot = ContextInternals::extension(context, "distributed");
  if (!slot) slot = std::make_shared<PreparedProducts>();
  return *static_cast<PreparedProducts*>(slot.get());
}

std::string str(std::int64_t v) { return std::to_string(v); }

// A setting the rank runner refused, named as a call sets it: RankOptions, the context's
// options, the layout.
std::string rank_option_name(const std::string& id) {
  namespace setting = mpi::setting;
  if (id == setting::memory_limit) return "rank_options.memory_limit_mib";
  if (id == setting::rank_speeds) return "rank_options.speeds";
  if (id == setting::rank_algorithm) return "rank_options.algorithm";
  if (id == setting::grid) return "layout";
  // The local pipeline's ids ("memory_budget_mib", "algorithm", ...), "speeds" and "tile" are
  // the context's options of those names.
  return id;
}

// Every rank's arguments checked, then agreed on: an error on one rank is the same error, of the
// same type, on every rank (the lowest failing rank's), so no rank goes on into traffic the
// others never join.
void agree_on(const mpi::Communicator& comm, std::exception_ptr local) {
  try {
    comm.agree(local);
  } catch (const mpi::CollectiveFailure& e) {
    const std::string msg = e.origin != comm.rank() && comm.size() > 1
                                ? "rank " + str(e.origin) + ": " + e.what()
                                : std::string(e.what());
    if (e.kind == mpi::FailureKind::unsupported) throw Unsupported(e.key, msg);
    if (e.kind == mpi::FailureKind::keyed) throw KeyedError(e.key, msg);
    throw Error(msg);
  }
}

struct Local {
  int prow = 0, pcol = 0, rows = 1, cols = 1;
  std::int64_t a_rows = 0, a_cols = 0, b_rows = 0, b_cols = 0, c_rows = 0, c_cols = 0;
};

// A local array as the runner wants it (lld = local rows): the caller's own memory when its
// leading dimension is that, else a packed copy (into `kept` where that is the size, and kept
// there when small).
template <class Scalar>
HostVector<Scalar> packed(Scalar* data, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                          bool copy_in, const char* label, HostVector<Scalar>& kept,
                          std::size_t keep_bytes) {
  const std::size_t size = std::size_t(rows * cols);
  if (ld == rows || size == 0) return HostVector<Scalar>(data, size);
  HostVector<Scalar> out = kept;
  if (out.size() != size)
    out = HostVector<Scalar>(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)),
                             size);
  kept = size * sizeof(Scalar) <= keep_bytes ? out : HostVector<Scalar>();
  if (copy_in)
    for (std::int64_t j = 0; j < cols; ++j)
      std::copy(data + j * ld, data + j * ld + rows, out.data() + j * rows);
  return out;
}

// The same global arguments on every rank, or the ranks would cut different partitions. Lists
// and names compared through sums weighted by position (equal lists agree exactly).
template <class Scalar>
void check_same_everywhere(const mpi::Communicator& comm, const RankOptions& ro,
                           const BlockCyclicLayout& layout, int grid_rows, Op op_a, Op op_b,
                           std::int64_t m, std::int64_t n, std::int64_t k, Scalar alpha,
                           Scalar beta) {
  double speed_sum = 0, speed_moment = 0, name_code = 0;
  for (std::size_t i = 0; i < ro.speeds.size(); ++i)
    speed_sum += ro.speeds[i], speed_moment += double(i + 1) * ro.speeds[i];
  for (std::size_t i = 0; i < ro.algorithm.size(); ++i)
    name_code += double(i + 1) * double(static_cast<unsigned char>(ro.algorithm[i]));
  auto code = [](GridCoord f) { return double(f.row) * 65536 + double(f.col); };
  const std::array<double, 18> mine{double(m),
                                    double(n),
                                    double(k),
                                    double(layout.block),
                                    double(grid_rows),
                                    double(char(op_a)) * 256 + double(char(op_b)),
                                    exec::real_part(alpha),
                                    exec::real_part(beta),
                                    exec::imag_part(alpha),
                                    exec::imag_part(beta),
                                    name_code,
                                    double(ro.speeds.size()) + speed_sum,
                                    speed_moment,
                                    ro.bandwidth_gbs,
                                    ro.memory_limit_mib,
                                    code(layout.first_a),
                                    code(layout.first_b),
                                    code(layout.first_c)};
  static const char* names[] = {"m",
                                "n",
                                "k",
                                "layout",
                                "layout",
                                "op",
                                "alpha",
                                "beta",
                                "alpha",
                                "beta",
                                "rank_options.algorithm",
                                "rank_options.speeds",
                                "rank_options.speeds",
                                "rank_options.bandwidth_gbs",
                                "rank_options.memory_limit_mib",
                                "layout.first_a",
                                "layout.first_b",
                                "layout.first_c"};
  // One reduction for all: the maximum of each value and of its negation (minus the minimum).
  // NaN (a NaN alpha or beta everywhere is the caller's to give) compares as one number.
  std::vector<double> both;
  for (double v : mine) both.push_back(std::isnan(v) ? 1e308 : v);
  for (double v : mine) both.push_back(std::isnan(v) ? -1e308 : -v);
  comm.allreduce_max(both);
  for (std::size_t i = 0; i < mine.size(); ++i)
    if (both[i] != -both[i + mine.size()])
      throw KeyedError(names[i], std::string(names[i]) +
                                     " differs between the ranks: every rank must pass the same "
                                     "global arguments");
}

// This rank's checks, in BLAS's order, after the global ones: its place on the grid and its
// local extents, which its leading dimensions and pointers must hold.
template <class Scalar>
Local check_local(const mpi::Communicator& comm, const RankOptions& ro,
                  const BlockCyclicLayout& layout, Op op_a, Op op_b, std::int64_t m, std::int64_t n,
                  std::int64_t k, Scalar alpha, Scalar beta, const Scalar* A, std::int64_t lda,
                  const Scalar* B, std::int64_t ldb, const Scalar* C, std::int64_t ldc) {
  const int P = comm.size(), me = comm.rank();
  Local L;
  if (m < 0) throw KeyedError("m", "m = " + str(m) + " is negative");
  if (n < 0) throw KeyedError("n", "n = " + str(n) + " is negative");
  if (k < 0) throw KeyedError("k", "k = " + str(k) + " is negative");
  if (layout.block <= 0)
    throw KeyedError("layout", "layout.block = " + str(layout.block) + " must be positive");
  grid_of(layout, P, L.rows, L.cols);
  const std::pair<const char*, GridCoord> firsts[] = {{"layout.first_a", layout.first_a},
                                                      {"layout.first_b", layout.first_b},
                                                      {"layout.first_c", layout.first_c}};
  for (const auto& [key, f] : firsts)
    if (f.row < 0 || f.row >= L.rows || f.col < 0 || f.col >= L.cols)
      throw KeyedError(key, std::string(key) + " = (" + str(f.row) + ", " + str(f.col) +
                                ") is not a process of the " + str(L.rows) + "x" + str(L.cols) +
                                " grid");
  check_same_everywhere(comm, ro, layout, L.rows, op_a, op_b, m, n, k, alpha, beta);
  if (!ro.speeds.empty() && std::int64_t(ro.speeds.size()) != P)
    throw KeyedError("rank_options.speeds",
                     "rank_options.speeds has " + str(std::int64_t(ro.speeds.size())) +
                         " factors for a communicator of " + str(P) + " ranks");
  L.prow = me / L.cols, L.pcol = me % L.cols;
  const std::int64_t nb = layout.block;
  auto rows_of = [&](std::int64_t x, GridCoord f) {
    return layout::numroc(x, nb, L.prow, f.row, L.rows);
  };
  auto cols_of = [&](std::int64_t x, GridCoord f) {
    return layout::numroc(x, nb, L.pcol, f.col, L.cols);
  };
  const std::int64_t a_m = op_a == Op::none ? m : k, a_n = op_a == Op::none ? k : m;
  const std::int64_t b_m = op_b == Op::none ? k : n, b_n = op_b == Op::none ? n : k;
  L.a_rows = rows_of(a_m, layout.first_a), L.a_cols = cols_of(a_n, layout.first_a);
  L.b_rows = rows_of(b_m, layout.first_b), L.b_cols = cols_of(b_n, layout.first_b);
  L.c_rows = rows_of(m, layout.first_c), L.c_cols = cols_of(n, layout.first_c);
  auto check_ld = [](const char* key, std::int64_t ld, std::int64_t rows, const char* name) {
    if (ld < std::max<std::int64_t>(1, rows))
      throw KeyedError(key, std::string(key) + " = " + str(ld) +
                                " is below this rank's local rows of " + name + " (" + str(rows) +
                                ")");
  };
  check_ld("lda", lda, L.a_rows, "A");
  check_ld("ldb", ldb, L.b_rows, "B");
  check_ld("ldc", ldc, L.c_rows, "C");
  // BLAS reads A and B only when there is a product to form.
  const bool reads_ab = alpha != Scalar(0) && k > 0 && m > 0 && n > 0;
  if (L.c_rows * L.c_cols > 0 && !C) throw KeyedError("C", "C is a null pointer");
  if (reads_ab && L.a_rows * L.a_cols > 0 && !A) throw KeyedError("A", "A is a null pointer");
  if (reads_ab && L.b_rows * L.b_cols > 0 && !B) throw KeyedError("B", "B is a null pointer");
  if (reads_ab) require_supported_call(GemmShape{op_a, op_b, m, n, k}, scalar_type_of<Scalar>());
  return L;
}

// Every rank's checks, agreed on: an error on one rank is the same error on every rank.
template <class Scalar>
Local check_call(const mpi::Communicator& comm, const RankOptions& ro,
                 const BlockCyclicLayout& layout, Op op_a, Op op_b, std::int64_t m, std::int64_t n,
                 std::int64_t k, Scalar alpha, Scalar beta, const Scalar* A, std::int64_t lda,
                 const Scalar* B, std::int64_t ldb, const Scalar* C, std::int64_t ldc) {
  std::exception_ptr failure;
  Local L;
  try {
    L = check_local(comm, ro, layout, op_a, op_b, m, n, k, alpha, beta, A, lda, B, ldb, C, ldc);
  } catch (const Unsupported& e) {
    failure = std::make_exception_ptr(Unsupported(e.key.empty() ? "layout" : e.key, e.what()));
  } catch (const KeyedError& e) {
    failure = std::make_exception_ptr(KeyedError(e.key.empty() ? "layout" : e.key, e.what()));
  }
  agree_on(comm, failure);
  return L;
}

// C <- beta*C on this rank's blocks (k = 0 or alpha = 0): beta = 0 writes zeros without reading C.
template <class Scalar>
void scale_local_c(const Local& L, Scalar beta, Scalar* C, std::int64_t ldc) {
  for (std::int64_t j = 0; j < L.c_cols; ++j)
    for (std::int64_t i = 0; i < L.c_rows; ++i) {
      Scalar& c = C[i + j * ldc];
      c = beta == Scalar(0) ? Scalar(0) : beta * c;
    }
}

// The rank runner's settings for a call.
template <class Scalar>
mpi::DistSettings call_settings(const ContextOptions& options, const RankOptions& ro,
                                const BlockCyclicLayout& layout, const Local& L, int P, Op op_a,
                                Op op_b, std::int64_t m, std::int64_t n, std::int64_t k,
                                Scalar alpha, Scalar beta) {
  mpi::DistSettings s;
  s.m = m, s.n = n, s.k = k;
  // A and B travel and are multiplied as stored: the ops only change who owns what.
  s.op_a = op_a, s.op_b = op_b;
  // The tile: the block where it is a sensible GEMM edge (a box of tiles is then a set of whole
  // blocks), else about a twelfth of the largest edge.
  if (options.tile > 0) {
    s.tile = options.tile;
  } else if (layout.block >= 64 && layout.block <= 1024) {
    s.tile = layout.block;
  } else {
    s.tile = tile_for(m, n, k);
  }
  // Every rank needs a tile task: smaller tiles for small products, and where even tiles of one
  // element are fewer than the ranks, the ranks beyond them sit this product out.
  auto tasks = [&](std::int64_t t) {
    return double((m + t - 1) / t) * double((n + t - 1) / t) * double((k + t - 1) / t);
  };
  mpi::set_rank_partition(s, ro.algorithm, ro.speeds, ro.bandwidth_gbs);
  while (s.tile > 1 && tasks(s.tile) < double(P)) s.tile = (s.tile + 1) / 2;
  if (tasks(s.tile) < double(P)) {
    s.rank_speeds.resize(std::size_t(P), 1.0);
    for (int r = 0; r < P; ++r)
      if (double(r) >= tasks(s.tile)) s.rank_speeds[std::size_t(r)] = 0;
  }
  s.alpha = exec::real_part(alpha), s.beta = exec::real_part(beta);
  s.alpha_im = exec::imag_part(alpha), s.beta_im = exec::imag_part(beta);
  s.memory_limit_bytes = ro.memory_limit_mib * 1024.0 * 1024.0;
  s.memory_limit_origin = "memory_limit_mib";
  s.aligned = false;
  // A call may be small: the partition may then keep the work where the data lies, each rank
  // that receives paying a message's latency (tens of microseconds between processes).
  s.allow_idle = true, s.latency_s = 2e-5;
  s.grid = {L.rows, L.cols};
  s.block = layout.block;
  s.first = {{layout.first_a.row, layout.first_a.col},
             {layout.first_b.row, layout.first_b.col},
             {layout.first_c.row, layout.first_c.col}};
  s.repetitions = 1, s.warmup = 0, s.validate = false;
  return s;
}

// The prepared product of this shape, layout and communicator, or a new one (collective: every
// rank misses or hits alike, since the key is made of agreed arguments).
template <class Scalar>
Prepared<Scalar>& prepared_product(Context& context, const mpi::Duplicate& dup, mpi::DistSettings s,
                                   const mpi::RankProcessors<Scalar>& procs, Scalar beta, int me) {
  auto& cache = prepared(context).of<Scalar>();
  const Key key{std::int64_t(dup.id),
                s.m,
                s.n,
                s.k,
                s.block,
                std::int64_t(s.grid[0]),
                std::int64_t(s.grid[1]),
                s.tile,
                beta == Scalar(0),
                beta == Scalar(1),
                std::int64_t(char(s.op_a)),
                std::int64_t(char(s.op_b)),
                s.first.a.row,
                s.first.a.col,
                s.first.b.row,
                s.first.b.col,
                s.first.c.row,
                s.first.c.col};
  auto it = std::find_if(cache.begin(), cache.end(), [&](const auto& p) { return p.key == key; });
  if (it != cache.end()) {
    cache.splice(cache.begin(), cache, it);
    return cache.front();
  }
  if (cache.size() >= kPrepared) cache.pop_back();
  // Few tiles on a grid of many ranks can leave every candidate of the automatic choice with a
  // rank that has no work (each working rank must have some): the fixed algorithm then cuts
  // the tiles by the speeds alone, and smaller tiles give more to share. Every rank sees the
  // same failure (agreed) and retries alike.
  for (;;) {
    try {
      cache.push_front(
          {key,
           std::make_unique<mpi::DistributedProduct<Scalar>>(s, dup.comm, procs, rank_option_name),
           {}});
      return cache.front();
    } catch (const mpi::CollectiveFailure& e) {
      const bool too_few = e.kind == mpi::FailureKind::no_candidate;
      if (too_few && s.automatic) {
        s.automatic = false;
        continue;
      }
      if (too_few && s.tile > 1) {
        s.tile = (s.tile + 1) / 2;
        continue;
      }
      throw Error(e.origin == me
                      ? e.what()
                      : "rank " + std::to_string(e.origin) + ": " + std::string(e.what()));
    }
  }
}

// The product on the caller's arrays. The runner's local arrays have lld = local rows: the
// caller's when they are, copies else (C copied back).
template <class Scalar>
double multiply_on(Prepared<Scalar>& prep, const Local& L, bool memory_limited, Scalar alpha,
                   const Scalar* A, std::int64_t lda, const Scalar* B, std::int64_t ldb,
                   Scalar beta, Scalar* C, std::int64_t ldc) {
  const bool c_reads = beta != Scalar(0);
  const std::size_t keep = memory_limited ? kKeptPackBytesLimited : SIZE_MAX;
  mpi::CallerMatrices<Scalar> mats;
  mats.A = packed(const_cast<Scalar*>(A), L.a_rows, L.a_cols, lda, true, "cuboid::A_packed",
                  prep.packs[0], keep);
  mats.B = packed(const_cast<Scalar*>(B), L.b_rows, L.b_cols, ldb, true, "cuboid::B_packed",
                  prep.packs[1], keep);
  mats.C = packed(C, L.c_rows, L.c_cols, ldc, c_reads, "cuboid::C_packed", prep.packs[2], keep);
  double seconds = 0;
  try {
    seconds = prep.product->multiply(mats, alpha, beta);
  } catch (const mpi::RankFailure& e) {
    throw Error(e.what());
  }
  if (mats.C.data() != C)
    for (std::int64_t j = 0; j < L.c_cols; ++j)
      std::copy(mats.C.data() + j * L.c_rows, mats.C.data() + (j + 1) * L.c_rows, C + j * ldc);
  return seconds;
}

template <class Scalar>
void gemm_distributed(Context& context, MPI_Comm user_comm, const BlockCyclicLayout& layout,
                      Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k,
                      Scalar alpha, const Scalar* A, std::int64_t lda, const Scalar* B,
                      std::int64_t ldb, Scalar beta, Scalar* C, std::int64_t ldc) {
  std::lock_guard<std::mutex> lock(ContextInternals::mutex(context));
  CallReport& report = ContextInternals::report(context);
  report = CallReport{};
  const mpi::Duplicate& dup = mpi::open_duplicate(user_comm);
  const mpi::Communicator comm(dup.comm);
  report.ranks = comm.size();
  if (trace::on()) {
    // Each rank traces to a file of its own, numbered by its rank in the job.
    const int rank = mpi::Communicator(MPI_COMM_WORLD).rank();
    trace::set_process(rank, "rank " + std::to_string(rank), true);
  }
  trace::Span traced("calls", "distributed gemm",
                     trace::on() ? "\"m\": " + std::to_string(m) + ", \"n\": " + std::to_string(n) +
                                       ", \"k\": " + std::to_string(k)
                                 : std::string());
  const RankOptions& ro = prepared(context).options;
  const Local L =
      check_call(comm, ro, layout, op_a, op_b, m, n, k, alpha, beta, A, lda, B, ldb, C, ldc);
  if (m == 0 || n == 0) return;
  if (k == 0 || alpha == Scalar(0)) {
    const auto t0 = std::chrono::steady_clock::now();
    scale_local_c(L, beta, C, ldc);
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return;
  }
  mpi::RankProcessors<Scalar> procs;
  procs.engines_before = exec::Engine<Scalar>::created();
  procs.local = &ContextInternals::local<Scalar>(context, m, n, k, procs.calibration_s);
  procs.speeds = ContextInternals::speeds<Scalar>(context);
  report.calibration_s = procs.calibration_s;
  const mpi::DistSettings s = call_settings(ContextInternals::options(context), ro, layout, L,
                                            comm.size(), op_a, op_b, m, n, k, alpha, beta);
  Prepared<Scalar>& prep = prepared_product(context, dup, s, procs, beta, comm.rank());
  const mpi::DistributedProduct<Scalar>& product = *prep.product;
  report.seconds =
      multiply_on(prep, L, ro.memory_limit_mib > 0, alpha, A, lda, B, ldb, beta, C, ldc);
  report.rank_partition = product.partition().name;
  report.received_bytes = product.received_bytes();
  report.mpi_polls_while_computing = product.progress().polls_while_computing;
  report.pieces_on_calling_thread = product.progress().pieces_inline;
  report.speeds = procs.local->speeds();
}

// A complex call: the caller's arrays hold std::complex, aligned as their reals; the runner's are
// Kokkos::complex, aligned as the pair. Aligned arrays are used as they are (leading dimensions
// permitting), others through aligned packed copies made with memcpy (C copied back).
template <class T>
void gemm_complex(Context& context, MPI_Comm comm, const BlockCyclicLayout& layout, Op op_a,
                  Op op_b, std::int64_t m, std::int64_t n, std::int64_t k, std::complex<T> alpha,
                  const std::complex<T>* A, std::int64_t lda, const std::complex<T>* B,
                  std::int64_t ldb, std::complex<T> beta, std::complex<T>* C, std::int64_t ldc) {
  using K = Kokkos::complex<T>;
  // This rank's local extents, to size any copy (the call itself checks the arguments).
  int rows = 1, cols = 1;
  const mpi::Communicator world(comm);
  const int P = world.size(), me = world.rank();
  grid_of(layout, P, rows, cols);
  const int prow = me / cols, pcol = me % cols;
  auto matrix = [&](const std::complex<T>* p, std::int64_t r, std::int64_t c, std::int64_t ld,
                    GridCoord first) {
    return KokkosComplexMatrix<T>(p, layout::numroc(r, layout.block, prow, first.row, rows),
                                  layout::numroc(c, layout.block, pcol, first.col, cols), ld, true);
  };
  const bool ta = op_a != Op::none, tb = op_b != Op::none;
  const auto a = matrix(A, ta ? k : m, ta ? m : k, lda, layout.first_a),
             b = matrix(B, tb ? n : k, tb ? k : n, ldb, layout.first_b),
             c = matrix(C, m, n, ldc, layout.first_c);
  gemm_distributed(context, comm, layout, op_a, op_b, m, n, k, K(alpha.real(), alpha.imag()),
                   a.data(), a.ld(), b.data(), b.ld(), K(beta.real(), beta.imag()), c.data(),
                   c.ld());
  c.write_back(C, ldc);
}

}  // namespace

void set_rank_options(Context& context, const RankOptions& options) {
  if (options.algorithm != "auto" && !partition::parse_algorithm(options.algorithm))
    throw KeyedError("algorithm", "unknown algorithm \"" + options.algorithm +
                                      "\" (\"auto\" or a partition algorithm)");
  bool any = options.speeds.empty();
  for (double v : options.speeds) {
    if (!std::isfinite(v) || v < 0)
      throw KeyedError("speeds", "a rank's speed factor must be finite and not negative");
    any = any || v > 0;
  }
  if (!any) throw KeyedError("speeds", "every rank's speed factor is 0: no rank would compute");
  if (!std::isfinite(options.bandwidth_gbs) || options.bandwidth_gbs <= 0)
    throw KeyedError("bandwidth_gbs", "bandwidth_gbs must be a positive number of GB/s");
  if (!std::isfinite(options.memory_limit_mib) || options.memory_limit_mib < 0)
    throw KeyedError("memory_limit_mib",
                     "memory_limit_mib must be 0 (no limit) or a positive "
                     "number of MiB");
  std::lock_guard<std::mutex> lock(ContextInternals::mutex(context));
  PreparedProducts& p = prepared(context);
  p.options = options;
  p.clear();
}

std::int64_t local_extent(std::int64_t n, std::int64_t block, int coord, int procs, int first) {
  if (n < 0 || block <= 0 || procs <= 0 || coord < 0 || coord >= procs || first < 0 ||
      first >= procs)
    throw KeyedError("layout",
                     "local_extent: needs n >= 0, block > 0 and 0 <= coord, first < procs");
  return layout::numroc(n, block, coord, first, procs);
}

void grid_of(const BlockCyclicLayout& layout, int ranks, int& grid_rows, int& grid_cols) {
  if (layout.grid_rows == 0 && layout.grid_cols == 0) {
    const layout::ProcessGrid g = layout::near_square_grid(ranks);
    grid_rows = g.rows, grid_cols = g.cols;
    return;
  }
  if (layout.grid_rows <= 0 || layout.grid_cols <= 0 ||
      std::int64_t(layout.grid_rows) * layout.grid_cols != ranks)
    throw KeyedError("layout", "layout grid " + std::to_string(layout.grid_rows) + "x" +
                                   std::to_string(layout.grid_cols) +
                                   " is not a grid of the communicator's " + std::to_string(ranks) +
                                   " ranks");
  grid_rows = layout.grid_rows, grid_cols = layout.grid_cols;
}

void gemm(Context& context, MPI_Comm comm, const BlockCyclicLayout& layout, Op op_a, Op op_b,
          std::int64_t m, std::int64_t n, std::int64_t k, double alpha, const double* A,
          std::int64_t lda, const double* B, std::int64_t ldb, double beta, double* C,
          std::int64_t ldc) {
  gemm_distributed(context, comm, layout, op_a, op_b, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

void gemm(Context& context, MPI_Comm comm, const BlockCyclicLayout& layout, Op op_a, Op op_b,
          std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* A,
          std::int64_t lda, const float* B, std::int64_t ldb, float beta, float* C,
          std::int64_t ldc) {
  gemm_distributed(context, comm, layout, op_a, op_b, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

void gemm(Context& context, MPI_Comm comm, const BlockCyclicLayout& layout, Op op_a, Op op_b,
          std::int64_t m, std::int64_t n, std::int64_t k, std::complex<double> alpha,
          const std::complex<double>* A, std::int64_t lda, const std::complex<double>* B,
          std::int64_t ldb, std::complex<double> beta, std::complex<double>* C, std::int64_t ldc) {
  gemm_complex(context, comm, layout, op_a, op_b, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

void gemm(Context& context, MPI_Comm comm, const BlockCyclicLayout& layout, Op op_a, Op op_b,
          std::int64_t m, std::int64_t n, std::int64_t k, std::complex<float> alpha,
          const std::complex<float>* A, std::int64_t lda, const std::complex<float>* B,
          std::int64_t ldb, std::complex<float> beta, std::complex<float>* C, std::int64_t ldc) {
  gemm_complex(context, comm, layout, op_a, op_b, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

}  // namespace cuboid
