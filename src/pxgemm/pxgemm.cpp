// ScaLAPACK's p?gemm_ served by cuboid: libcuboid_pxgemm.so, linked before ScaLAPACK or preloaded
// into an unchanged program, takes psgemm_, pdgemm_, pcgemm_ and pzgemm_ (and the prefixed
// cuboid_p?gemm) with PBLAS's arguments, checks them as PBLAS does, and computes the product with
// the library's distributed entry over the BLACS grid's processes: in place when the operands are
// already in the layout it computes in, else moved into it (transposed where asked) and C back.
// Calls below a crossover (measured on the grid, or CUBOID_PXGEMM_MIN_FLOPS) go to the
// application's ScaLAPACK routine instead, and the report says so.
#include <dlfcn.h>
#include <mpi.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cuboid/mpi.hpp>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "deck/context_options.hpp"
#include "mpi/attribute.hpp"
#include "mpi/communicator.hpp"
#include "platform/crossover.hpp"
#include "pxgemm/blacs.hpp"
#include "pxgemm/crossover.hpp"
#include "pxgemm/redistribute.hpp"

namespace cuboid::pxgemm {
namespace {

// PBLAS's internal descriptor (a Fortran descriptor of type 1 gains IMB = MB and INB = NB), and
// its error encoding: a descriptor entry's error is -(position * 100 + entry + 1).
enum { DTYPE_, CTXT_, M_, N_, IMB_, INB_, MB_, NB_, RSRC_, CSRC_, LLD_, DLEN_ };
constexpr int kDescMult = 100, kBigNum = 10000, kBlockCyclic = 1, kBlockCyclicInb = 2;

struct Desc {
  int d[DLEN_] = {};
  int operator[](int i) const { return d[i]; }
};

// Fortran (1-based, type 1, or type 2 with IMB and INB) to PBLAS's internal form, as PB_CargFtoC
// does.
Desc internal(const int* f) {
  Desc x;
  if (f[0] == kBlockCyclic) {
    x.d[DTYPE_] = kBlockCyclicInb, x.d[CTXT_] = f[1], x.d[M_] = f[2], x.d[N_] = f[3];
    x.d[IMB_] = f[4], x.d[INB_] = f[5], x.d[MB_] = f[4], x.d[NB_] = f[5];
    x.d[RSRC_] = f[6], x.d[CSRC_] = f[7], x.d[LLD_] = f[8];
  } else if (f[0] == kBlockCyclicInb) {
    for (int i = 0; i < DLEN_; ++i) x.d[i] = f[i];
  } else {
    x.d[DTYPE_] = f[0], x.d[CTXT_] = f[1];
  }
  return x;
}

// ScaLAPACK's NUMROC with a source process.
std::int64_t numroc(std::int64_t n, std::int64_t nb, int p, int src, int procs) {
  return local_extent(n, nb, p, procs, src);
}

// NUMROC for an axis whose first block is `first` long (PBLAS's IMB): the axis lengthened by what
// the first block lacks has whole blocks, and the source gives that back.
std::int64_t numroc_first(std::int64_t n, std::int64_t first, std::int64_t nb, int p, int src,
                          int procs) {
  if (n <= 0) return 0;
  const std::int64_t lack = nb - std::min(first, nb);
  return numroc(n + lack, nb, p, src, procs) - (p == src ? std::min(lack, n + lack) : 0);
}

// The layout's row and column axes of a matrix with descriptor d, from (offset) on.
Axis row_axis(const Desc& d, int offset, const GridInfo& g) {
  return Axis{offset, d[MB_], d[RSRC_], g.rows, d[IMB_] != d[MB_] ? d[IMB_] : 0};
}
Axis col_axis(const Desc& d, int offset, const GridInfo& g) {
  return Axis{offset, d[NB_], d[CSRC_], g.cols, d[INB_] != d[NB_] ? d[INB_] : 0};
}

// PBLAS's check of one matrix operand (PB_Cchkmat): m x n at (ia, ja) (0-based) of descriptor
// `d`, m at argument position mpos0, n at npos0, the descriptor at dpos0 (IA, JA just before).
void check_matrix(int ctxt, const GridInfo& g, int m, int mpos0, int n, int npos0, int ia, int ja,
                  const Desc& d, int dpos0, int& info) {
  if (info >= 0)
    info = kBigNum;
  else if (info < -kDescMult)
    info = -info;
  else
    info = -info * kDescMult;
  const int mpos = mpos0 * kDescMult, npos = npos0 * kDescMult;
  const int iapos = (dpos0 - 2) * kDescMult, japos = (dpos0 - 1) * kDescMult;
  const int dpos = dpos0 * kDescMult + 1;
  auto finish = [&] {
    if (info == kBigNum)
      info = 0;
    else if (info % kDescMult == 0)
      info = -(info / kDescMult);
    else
      info = -info;
  };
  if (m < 0) info = std::min(info, mpos);
  if (n < 0) info = std::min(info, npos);
  if (ia < 0) info = std::min(info, iapos);
  if (ja < 0) info = std::min(info, japos);
  if (d[DTYPE_] != kBlockCyclicInb) {
    info = std::min(info, dpos + DTYPE_);
    finish();
    return;
  }
  if (d[CTXT_] != ctxt) {
    info = std::min(info, dpos + CTXT_);
    finish();
    return;
  }
  if (d[IMB_] < 1) info = std::min(info, dpos + IMB_);
  if (d[INB_] < 1) info = std::min(info, dpos + INB_);
  if (d[MB_] < 1) info = std::min(info, dpos + MB_);
  if (d[NB_] < 1) info = std::min(info, dpos + NB_);
  if (d[RSRC_] < -1 || d[RSRC_] >= g.rows) info = std::min(info, dpos + RSRC_);
  if (d[CSRC_] < -1 || d[CSRC_] >= g.cols) info = std::min(info, dpos + CSRC_);
  if (m == 0 || n == 0) {
    if (d[M_] < 0) info = std::min(info, dpos + M_);
    if (d[N_] < 0) info = std::min(info, dpos + N_);
    if (d[LLD_] < 1) info = std::min(info, dpos + LLD_);
  } else {
    if (d[M_] < 1) info = std::min(info, dpos + M_);
    if (d[N_] < 1) info = std::min(info, dpos + N_);
    if (d[M_] >= 1 && d[N_] >= 1) {
      if (ia + m > d[M_]) info = std::min(info, iapos);
      if (ja + n > d[N_]) info = std::min(info, japos);
    }
    if (info == kBigNum) {
      // The first block may be smaller (IMB); a replicated axis is held whole.
      const std::int64_t np =
          d[RSRC_] < 0 ? d[M_] : numroc_first(d[M_], d[IMB_], d[MB_], g.myrow, d[RSRC_], g.rows);
      if (d[LLD_] < std::max<std::int64_t>(1, np)) {
        const std::int64_t nq =
            d[CSRC_] < 0 ? d[N_] : numroc_first(d[N_], d[INB_], d[NB_], g.mycol, d[CSRC_], g.cols);
        if (d[LLD_] < 1 || nq > 0) info = std::min(info, dpos + LLD_);
      }
    }
  }
  finish();
}

template <class Scalar>
struct Traits;
template <>
struct Traits<float> {
  static constexpr const char* routine = "PSGEMM";
  static constexpr const char* lower = "psgemm_";
  using Real = float;
};
template <>
struct Traits<double> {
  static constexpr const char* routine = "PDGEMM";
  static constexpr const char* lower = "pdgemm_";
  using Real = double;
};
// Fortran's COMPLEX and COMPLEX*16 are two reals aligned as one, like std::complex (not
// Kokkos::complex, which asks twice that): the caller's arrays are read as std::complex.
template <>
struct Traits<std::complex<float>> {
  static constexpr const char* routine = "PCGEMM";
  static constexpr const char* lower = "pcgemm_";
  using Real = float;
};
template <>
struct Traits<std::complex<double>> {
  static constexpr const char* routine = "PZGEMM";
  static constexpr const char* lower = "pzgemm_";
  using Real = double;
};
template <class Scalar>
constexpr bool is_complex = !std::is_same_v<Scalar, typename Traits<Scalar>::Real>;

// What the process keeps across calls: the context (processors, speeds, prepared products), the
// settings from the environment; destroyed when MPI finalises.
struct Runtime {
  // The context, made on the first call cuboid computes (or times a crossover for): a program
  // whose calls all go to ScaLAPACK never starts Kokkos or cuboid's threads.
  ContextOptions options;
  RankOptions ranks;
  std::unique_ptr<Context> made;
  Context& context() {
    if (!made) {
      made = std::make_unique<Context>(options);
      set_rank_options(*made, ranks);
    }
    return *made;
  }
  std::string report_path;
  bool check = false, fallback = false;
  double min_flops = -1;  // CUBOID_PXGEMM_MIN_FLOPS; -1: the crossover measured per grid
  std::map<std::string, double> crossovers;  // per routine, grid and block, once known
  std::size_t rank_speeds = 0;               // CUBOID_DECK's mpi.rank_speeds: how many, and where
  std::string rank_speeds_at;
};

std::mutex& runtime_mutex() {
  static std::mutex m;
  return m;
}
std::unique_ptr<Runtime>& runtime_slot() {
  static std::unique_ptr<Runtime> r;
  return r;
}

Runtime& runtime() {
  std::lock_guard<std::mutex> lock(runtime_mutex());
  auto& slot = runtime_slot();
  if (slot) return *slot;
  auto r = std::make_unique<Runtime>();
  if (const char* p = std::getenv("CUBOID_PXGEMM_REPORT")) r->report_path = p;
  if (const char* p = std::getenv("CUBOID_PXGEMM_CHECK")) r->check = std::string(p) == "1";
  if (const char* p = std::getenv("CUBOID_PXGEMM_FALLBACK")) {
    if (std::string(p) == "scalapack")
      r->fallback = true;
    else if (*p && std::string(p) != "none")
      throw KeyedError("CUBOID_PXGEMM_FALLBACK",
                       "CUBOID_PXGEMM_FALLBACK=" + std::string(p) + ": expected scalapack or none");
  }
  if (const char* p = std::getenv("CUBOID_PXGEMM_MIN_FLOPS"); p && *p) {
    char* end = nullptr;
    r->min_flops = std::strtod(p, &end);
    if (end == p || *end || !(r->min_flops >= 0))
      throw KeyedError("CUBOID_PXGEMM_MIN_FLOPS", "CUBOID_PXGEMM_MIN_FLOPS=" + std::string(p) +
                                                      ": expected a number of flops >= 0");
  }
  RankOptions ranks;
  // A deck's [platform] and [partition] set the context as they set `cuboid run`'s processors,
  // and its [mpi] the rank partition as under mpirun: rank speed factors, the model's bandwidth,
  // the per-rank memory limit, and partition.algorithm where the deck names one. The layout keys
  // (mpi.layout, grid, block) are the descriptors' to give, and the problem and run sections
  // describe a run, not a call: those are not used.
  const deck::EnvironmentOptions env = deck::options_from_environment();
  const ContextOptions& o = env.context;
  if (env.settings) {
    const deck::ProductSettings& s = *env.settings;
    ranks.algorithm = s.rank_algorithm;
    ranks.speeds = s.rank_speeds;
    ranks.bandwidth_gbs = s.bandwidth_gbs;
    ranks.memory_limit_mib = s.memory_limit_mib;
    r->rank_speeds = s.rank_speeds.size();
    if (r->rank_speeds) r->rank_speeds_at = env.deck->at("mpi.rank_speeds");
  }
  r->options = o;
  r->ranks = ranks;
  // Torn down before MPI finalises, with what it holds of MPI.
  mpi::at_finalize([] {
    std::lock_guard<std::mutex> lock(runtime_mutex());
    runtime_slot().reset();
  });
  slot = std::move(r);
  return *slot;
}

char upper(const char* c) { return char(std::toupper(static_cast<unsigned char>(c[0]))); }

// A descriptor as given: 9 entries for type 1, 11 for type 2.
nlohmann::json json_desc(const int* d) {
  return std::vector<int>(d, d + (d[0] == kBlockCyclicInb ? 11 : 9));
}

// One line of JSON appended to `path`.
void append_line(const std::string& path, const nlohmann::json& j) {
  std::ofstream f(path, std::ios::app);
  f << j.dump() << "\n";
}

// The randomized check of one product in the layout it was computed in: with x of length n,
// y = C x against alpha A (B x) + beta C0 x, row by row within its rounding bound.
template <class Scalar>
bool check_product(MPI_Comm comm, const Grid& grid, std::int64_t m, std::int64_t n, std::int64_t k,
                   std::int64_t nb, Scalar alpha, const std::vector<Scalar>& A,
                   const std::vector<Scalar>& B, Scalar beta, const std::vector<Scalar>& C0,
                   const std::vector<Scalar>& C, std::string& why) {
  using Z = std::complex<double>;
  const int prow = grid.me / grid.cols, pcol = grid.me % grid.cols;
  const std::int64_t lm = local_extent(m, nb, prow, grid.rows),
                     lk_r = local_extent(k, nb, prow, grid.rows);
  const std::int64_t ln = local_extent(n, nb, pcol, grid.cols),
                     lk_c = local_extent(k, nb, pcol, grid.cols);
  std::vector<Z> x(static_cast<std::size_t>(n));
  std::mt19937_64 rng(20261126);
  std::uniform_real_distribution<double> u(0.5, 1.0);
  for (auto& v : x) v = (rng() & 1 ? -1 : 1) * u(rng);
  // Local matrix-vector products over this rank's blocks (of |M| and |v| where asked), summed
  // over the grid.
  auto matvec = [&](const std::vector<Scalar>& M, std::int64_t lr, std::int64_t lc,
                    std::int64_t out_len, const std::vector<Z>& v, bool absolute) {
    std::vector<Z> y(std::size_t(out_len), Z(0));
    const std::int64_t ld = std::max<std::int64_t>(1, lr);
    for (std::int64_t lj = 0; lj < lc; ++lj) {
      const std::int64_t gj = ((lj / nb) * grid.cols + pcol) * nb + lj % nb;
      for (std::int64_t li = 0; li < lr; ++li) {
        const std::int64_t gi = ((li / nb) * grid.rows + prow) * nb + li % nb;
        const Z a = Z(M[std::size_t(li + lj * ld)]);
        y[std::size_t(gi)] +=
            absolute ? Z(std::abs(a)) * v[std::size_t(gj)] : a * v[std::size_t(gj)];
      }
    }
    // std::complex<double> is an array of two doubles.
    mpi::Communicator(comm).allreduce_sum(reinterpret_cast<double*>(y.data()),
                                          2 * std::size_t(out_len));
    return y;
  };
  std::vector<Z> xa(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) xa[i] = std::abs(x[i]);
  const std::vector<Z> zeros(std::size_t(m), Z(0));
  const auto y = matvec(C, lm, ln, m, x, false);
  const auto abx = matvec(A, lm, lk_c, m, matvec(B, lk_r, ln, k, x, false), false);
  const auto c0x = beta == Scalar(0) ? zeros : matvec(C0, lm, ln, m, x, false);
  const auto abxa = matvec(A, lm, lk_c, m, matvec(B, lk_r, ln, k, xa, true), true);
  const auto c0xa = beta == Scalar(0) ? zeros : matvec(C0, lm, ln, m, xa, true);
  const auto cxa = matvec(C, lm, ln, m, xa, true);
  // A complex multiply-add rounds more often than a real one: twice the real bound covers it.
  const double u_s = std::numeric_limits<typename Traits<Scalar>::Real>::epsilon() / 2 *
                     (is_complex<Scalar> ? 2.0 : 1.0);
  const Z al = Z(alpha), be = Z(beta);
  for (std::int64_t i = 0; i < m; ++i) {
    const std::size_t r = std::size_t(i);
    const double error = std::abs(y[r] - (al * abx[r] + be * c0x[r]));
    const double bound =
        1.01 * u_s *
        (double(k + n + 4) * (std::abs(al) * abxa[r].real() + std::abs(be) * c0xa[r].real()) +
         double(n) * cxa[r].real());
    if (!(error <= bound)) {
      why = "row " + std::to_string(i) +
            ": |C x - (alpha A B x + beta C0 x)| = " + std::to_string(error) +
            " exceeds its bound " + std::to_string(bound);
      return false;
    }
  }
  return true;
}

// C <- alpha op(A) op(B) + beta C through the distributed entry, on operands in its layout (the
// caller's arrays, or moved ones), in the caller's scalar type: a complex product travels as
// complex elements, the bytes pzgemm itself moves. Returns what the entry received and chose.
template <class Scalar>
void multiply(Context& context, MPI_Comm comm, const BlockCyclicLayout& layout, Op op_a, Op op_b,
              std::int64_t m, std::int64_t n, std::int64_t k, Scalar alpha, const Scalar* A,
              std::int64_t lda, const Scalar* B, std::int64_t ldb, Scalar beta, Scalar* C,
              std::int64_t ldc, double& received, std::string& partition) {
  gemm(context, comm, layout, op_a, op_b, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  received = context.last_call().received_bytes;
  partition = context.last_call().rank_partition;
}

template <class Scalar>
using Fn = ScalapackGemm<Scalar>;

// The application's own p?gemm_, after cuboid's in the search order; null without one.
template <class Scalar>
Fn<Scalar> next_scalapack() {
  static const Fn<Scalar> f = reinterpret_cast<Fn<Scalar>>(dlsym(RTLD_NEXT, Traits<Scalar>::lower));
  return f;
}

// One call's arguments as PBLAS gives them, and read once: the ops, the internal descriptors and
// the sub-matrices' 0-based first rows and columns.
template <class Scalar>
struct Call {
  const char *transa, *transb;
  const int *M, *N, *K;
  const Scalar* alpha;
  const Scalar* a;
  const int *IA, *JA, *desca;
  const Scalar* b;
  const int *IB, *JB, *descb;
  const Scalar* beta;
  Scalar* c;
  const int *IC, *JC, *descc;

  char ta = upper(transa), tb = upper(transb);
  bool nota = ta == 'N', notb = tb == 'N';
  Desc Ad = internal(desca), Bd = internal(descb), Cd = internal(descc);
  int ai = *IA - 1, aj = *JA - 1, bi = *IB - 1, bj = *JB - 1, ci = *IC - 1, cj = *JC - 1;
  int m = *M, n = *N, k = *K;
};

// The product failed CUBOID_PXGEMM_CHECK: the job ends with its own code.
struct CheckFailed : Error {
  using Error::Error;
};

// What cuboid cannot go on from: the message, then PBLAS's error exit (PB_Cabort with `code` as
// its INFO), which ends the job as PBLAS does for an error it cannot return -- or returns, where
// a test harness replaced it, and the call then returns too.
template <class Scalar>
void give_up(const Call<Scalar>& x, const std::string& message, int code) {
  std::fprintf(stderr, "cuboid %s: %s\n", Traits<Scalar>::lower, message.c_str());
  pblas_abort(x.Ad[CTXT_], Traits<Scalar>::routine, code);
}

// PBLAS's checks, in its order and with its encoding: 0 or the INFO PBLAS would report.
template <class Scalar>
int pblas_info(const Call<Scalar>& x, const GridInfo& g) {
  const int ctxt = x.Ad[CTXT_];
  if (g.rows == -1) return -(10 * kDescMult + CTXT_ + 1);
  int info = 0;
  if (!x.nota && x.ta != 'T' && x.ta != 'C')
    info = -1;
  else if (!x.notb && x.tb != 'T' && x.tb != 'C')
    info = -2;
  if (x.nota)
    check_matrix(ctxt, g, x.m, 3, x.k, 5, x.ai, x.aj, x.Ad, 10, info);
  else
    check_matrix(ctxt, g, x.k, 5, x.m, 3, x.ai, x.aj, x.Ad, 10, info);
  if (x.notb)
    check_matrix(ctxt, g, x.k, 5, x.n, 4, x.bi, x.bj, x.Bd, 14, info);
  else
    check_matrix(ctxt, g, x.n, 4, x.k, 5, x.bi, x.bj, x.Bd, 14, info);
  check_matrix(ctxt, g, x.m, 3, x.n, 4, x.ci, x.cj, x.Cd, 19, info);
  return info;
}

// A call cuboid cannot serve (`why`), handed to the application's ScaLAPACK where asked, and
// said so in the report.
template <class Scalar>
void hand_on(const Runtime& rt, const Call<Scalar>& x, const std::string& why) {
  const Fn<Scalar> scalapack = next_scalapack<Scalar>();
  if (!rt.fallback || !scalapack) {
    give_up(x,
            why + "; set CUBOID_PXGEMM_FALLBACK=scalapack to hand such calls to ScaLAPACK" +
                (scalapack ? "" : " (none was found after cuboid)"),
            1);
    return;
  }
  scalapack(x.transa, x.transb, x.M, x.N, x.K, x.alpha, x.a, x.IA, x.JA, x.desca, x.b, x.IB, x.JB,
            x.descb, x.beta, x.c, x.IC, x.JC, x.descc);
  if (rt.report_path.empty()) return;
  const int me = mpi::Communicator(MPI_COMM_WORLD).rank();
  append_line(
      rt.report_path + "." + std::to_string(me),
      {{"routine", Traits<Scalar>::lower}, {"m", x.m}, {"n", x.n}, {"k", x.k}, {"fallback", why}});
}

// The block edge the distributed entry computes a call with: that of the axes dealt over more
// than one process (along an axis of one process, blocks and offsets change no ownership, and a
// local index is the global one), C's larger one on a 1 x 1 grid.
template <class Scalar>
int entry_block(const Call<Scalar>& x, const GridInfo& g) {
  if (g.rows > 1) return x.Cd[MB_];
  if (g.cols > 1) return x.Cd[NB_];
  return std::max(x.Cd[MB_], x.Cd[NB_]);
}

// Why a call's operands are not in a layout the distributed entry computes in, or empty when
// they are: along each grid axis of more than one process, whole blocks of one size for A, B and
// C (square where both axes are), each sub-matrix starting on a block boundary, on a matrix that
// is not replicated. The first block of each may lie on any process: the entry takes each
// matrix's. A transposed operand is read as stored.
template <class Scalar>
std::string not_in_place(const Call<Scalar>& x, const GridInfo& g, int nb) {
  const Desc* descs[] = {&x.Ad, &x.Bd, &x.Cd};
  for (const Desc* d : descs) {
    if (g.rows > 1 && ((*d)[MB_] != nb || (*d)[IMB_] != nb))
      return "row blocks differ (MB, IMB of A, B and C are not one size, square with NB)";
    if (g.cols > 1 && ((*d)[NB_] != nb || (*d)[INB_] != nb))
      return "column blocks differ (NB, INB of A, B and C are not one size, square with MB)";
  }
  const std::pair<const char*, int> rows[] = {{"IA", x.ai}, {"IB", x.bi}, {"IC", x.ci}};
  const std::pair<const char*, int> cols[] = {{"JA", x.aj}, {"JB", x.bj}, {"JC", x.cj}};
  auto unaligned = [&](const char* name, int at) {
    return std::string(name) + " - 1 = " + std::to_string(at) + " is not a multiple of the block " +
           std::to_string(nb);
  };
  for (const auto& [name, at] : rows)
    if (g.rows > 1 && at % nb != 0) return unaligned(name, at);
  for (const auto& [name, at] : cols)
    if (g.cols > 1 && at % nb != 0) return unaligned(name, at);
  for (const Desc* d : descs)
    if ((*d)[RSRC_] < 0 || (*d)[CSRC_] < 0) return "a replicated matrix (RSRC or CSRC = -1)";
  return std::string();
}

// A sub-matrix at (i, j) (0-based, block-aligned along axes of several processes) of a matrix
// with descriptor d, in place, as the entry takes it: the process holding its first block, and
// where this process's part of it starts in its local array, after the elements of the matrix's
// rows [0, i) and columns [0, j) that this process holds (NUMROC's count).
struct SubMatrix {
  GridCoord first;
  std::int64_t offset = 0;  // elements into the local array
};
SubMatrix sub_matrix(const Desc& d, int i, int j, int nb, const GridInfo& g) {
  SubMatrix s;
  auto axis = [nb](int at, int src, int mine, int procs, int& first) -> std::int64_t {
    if (procs == 1) return at;
    first = (at / nb + src) % procs;
    return numroc(at, nb, mine, src, procs);
  };
  const std::int64_t row = axis(i, d[RSRC_], g.myrow, g.rows, s.first.row);
  const std::int64_t col = axis(j, d[CSRC_], g.mycol, g.cols, s.first.col);
  s.offset = row + col * std::int64_t(d[LLD_]);
  return s;
}

// sub(C) <- beta sub(C) where it lies; beta = 0 writes zeros without reading C.
template <class Scalar>
void scale_sub_c(const Call<Scalar>& x, const Grid& grid, const GridInfo& g) {
  const Scalar be = *x.beta;
  Scalar* c = x.c;
  const Side<Scalar> cs{row_axis(x.Cd, x.ci, g), col_axis(x.Cd, x.cj, g), c, x.Cd[LLD_]};
  for_each_owned(
      grid, x.m, x.n, cs, [&](std::int64_t x0, std::int64_t x1, std::int64_t y0, std::int64_t y1) {
        for (std::int64_t y = y0; y < y1; ++y)
          for (std::int64_t i = x0; i < x1; ++i) {
            Scalar& v = c[cs.rows.local(x0) + (i - x0) + (cs.cols.local(y0) + (y - y0)) * cs.ld];
            v = be == Scalar(0) ? Scalar(0) : be * v;
          }
      });
}

// The operands moved into the entry's layout (op applied), the product there, C moved back.
// Returns the bytes this rank moved; `received` and `partition` are the entry's.
template <class Scalar>
double redistributed(Runtime& rt, const Call<Scalar>& x, MPI_Comm comm, const Grid& grid,
                     const GridInfo& g, const BlockCyclicLayout& layout, double& received,
                     std::string& partition) {
  const int m = x.m, n = x.n, k = x.k;
  const Scalar al = *x.alpha, be = *x.beta;
  const std::int64_t t = layout.block;
  const std::int64_t am = local_extent(m, t, g.myrow, g.rows),
                     ak = local_extent(k, t, g.mycol, g.cols);
  const std::int64_t bk = local_extent(k, t, g.myrow, g.rows),
                     bn = local_extent(n, t, g.mycol, g.cols);
  const std::int64_t cm = am, cn = bn;
  std::vector<Scalar> At(std::size_t(std::max<std::int64_t>(1, am * ak))),
      Bt(std::size_t(std::max<std::int64_t>(1, bk * bn))),
      Ct(std::size_t(std::max<std::int64_t>(1, cm * cn)), Scalar(0));
  const Axis tr{0, t, 0, g.rows}, tc{0, t, 0, g.cols};
  auto map_of = [](char op) {
    return op == 'N' ? Map::same : op == 'T' ? Map::transpose : Map::conjugate_transpose;
  };
  double moved = 0;
  // A stored (nota ? m x k : k x m) at (ai, aj); its target is op(A), m x k.
  moved += redistribute<Scalar>(
      grid, x.nota ? m : k, x.nota ? k : m,
      Side<const Scalar>{row_axis(x.Ad, x.ai, g), col_axis(x.Ad, x.aj, g), x.a, x.Ad[LLD_]},
      Side<Scalar>{tr, tc, At.data(), std::max<std::int64_t>(1, am)}, map_of(x.ta));
  moved += redistribute<Scalar>(
      grid, x.notb ? k : n, x.notb ? n : k,
      Side<const Scalar>{row_axis(x.Bd, x.bi, g), col_axis(x.Bd, x.bj, g), x.b, x.Bd[LLD_]},
      Side<Scalar>{tr, tc, Bt.data(), std::max<std::int64_t>(1, bk)}, map_of(x.tb));
  const Side<Scalar> c_side{row_axis(x.Cd, x.ci, g), col_axis(x.Cd, x.cj, g), x.c, x.Cd[LLD_]};
  // beta = 0 never reads C: the target starts as zeros.
  if (be != Scalar(0))
    moved += redistribute<Scalar>(
        grid, m, n, Side<const Scalar>{c_side.rows, c_side.cols, x.c, c_side.ld},
        Side<Scalar>{tr, tc, Ct.data(), std::max<std::int64_t>(1, cm)}, Map::same);
  std::vector<Scalar> C0;
  if (rt.check) C0 = Ct;
  multiply<Scalar>(rt.context(), comm, layout, Op::none, Op::none, m, n, k, al, At.data(),
                   std::max<std::int64_t>(1, am), Bt.data(), std::max<std::int64_t>(1, bk), be,
                   Ct.data(), std::max<std::int64_t>(1, cm), received, partition);
  std::string why;
  if (rt.check && !check_product<Scalar>(comm, grid, m, n, k, t, al, At, Bt, be, C0, Ct, why))
    throw CheckFailed("CUBOID_PXGEMM_CHECK: the product failed its check: " + why);
  moved += redistribute<Scalar>(
      grid, m, n, Side<const Scalar>{tr, tc, Ct.data(), std::max<std::int64_t>(1, cm)}, c_side,
      Map::same);
  return moved;
}

// The call's line in CUBOID_PXGEMM_REPORT, written by rank 0 of the grid with the largest
// figures of all ranks.
template <class Scalar>
void report_call(Runtime& rt, const Call<Scalar>& x, MPI_Comm comm, const GridInfo& g,
                 const std::string& path, const std::string& why_moved,
                 const std::string& partition, double received, double moved, double seconds) {
  const mpi::Communicator grid_comm(comm);
  std::vector<double> most{received, moved, seconds};
  grid_comm.allreduce_max(most);
  if (grid_comm.rank() != 0) return;
  append_line(rt.report_path,
              {{"routine", Traits<Scalar>::lower},
               {"m", x.m},
               {"n", x.n},
               {"k", x.k},
               {"trans_a", std::string(1, x.ta)},
               {"trans_b", std::string(1, x.tb)},
               {"ia", {*x.IA, *x.JA}},
               {"ib", {*x.IB, *x.JB}},
               {"ic", {*x.IC, *x.JC}},
               {"desc_a", json_desc(x.desca)},
               {"desc_b", json_desc(x.descb)},
               {"desc_c", json_desc(x.descc)},
               {"grid", {g.rows, g.cols}},
               {"processors", rt.context().processor_names()},
               {"path", path},
               {"redistributed_because",
                why_moved.empty() ? nlohmann::json(nullptr) : nlohmann::json(why_moved)},
               {"rank_partition", partition},
               {"received_bytes_max", most[0]},
               {"redistributed_bytes_max", most[1]},
               {"seconds", most[2]},
               {"checked", rt.check},
               {"fallback", nullptr}});
}

// A call below the crossover (CUBOID_PXGEMM_MIN_FLOPS, or the one measured on this grid and
// block) computed by the application's ScaLAPACK, and said so in the report. The measured
// crossover is that of calls in place (`in_place`: the operands are where the entry computes,
// in blocks of `nb`); a call whose operands must first be moved into the entry's layout and C
// back costs those moves on top (with its trailing updates, 736x736x64
// and smaller, redistributed, an LU factorisation on a 1x2 grid took 7 times as long as with
// ScaLAPACK's own), and goes to ScaLAPACK below the ladder's top. Every process of the grid decides
// alike: the sizes are the call's, the crossover agreed over the grid.
template <class Scalar>
bool passed_on_as_small(Runtime& rt, const Call<Scalar>& x, MPI_Comm comm, const GridInfo& g,
                        int nb, bool in_place) {
  const Fn<Scalar> scalapack = next_scalapack<Scalar>();
  if (!scalapack) return false;
  const auto cube_flops = [](std::int64_t n) {
    return gemm_flops(scalar_type_of<Scalar>(), n, n, n);
  };
  const double flops = gemm_flops(scalar_type_of<Scalar>(), x.m, x.n, x.k);
  const double floor = cube_flops(platform::kCrossoverFloor);
  const double top = cube_flops(platform::kCrossoverAbove);
  double at = rt.min_flops;
  const char* why = "small";
  if (at < 0 && !in_place) {
    at = top;
    if (flops >= floor) why = "redistribution";
  } else if (at < 0) {
    if (flops >= top) return false;  // above every crossover the ladder can find
    const std::string key = std::string(Traits<Scalar>::lower) + "|" + std::to_string(g.rows) +
                            "x" + std::to_string(g.cols) + "|" + std::to_string(nb);
    auto known = rt.crossovers.find(key);
    if (flops >= floor && known == rt.crossovers.end()) {
      const GridCall grid{comm, x.Ad[CTXT_], g.rows, g.cols, g.myrow, g.mycol, nb};
      const GridCrossover c =
          grid_crossover<Scalar>(rt.context(), grid, scalapack, Traits<Scalar>::lower);
      known = rt.crossovers.emplace(key, c.flops).first;
      if (!rt.report_path.empty() && mpi::Communicator(comm).rank() == 0)
        append_line(rt.report_path, {{"crossover", Traits<Scalar>::lower},
                                     {"grid", {g.rows, g.cols}},
                                     {"block", nb},
                                     {"flops", c.flops},
                                     {"measured", c.measured}});
    }
    at = known == rt.crossovers.end() ? floor : known->second;
  }
  if (flops >= at) return false;
  const auto t0 = std::chrono::steady_clock::now();
  scalapack(x.transa, x.transb, x.M, x.N, x.K, x.alpha, x.a, x.IA, x.JA, x.desca, x.b, x.IB, x.JB,
            x.descb, x.beta, x.c, x.IC, x.JC, x.descc);
  if (!rt.report_path.empty() && mpi::Communicator(comm).rank() == 0)
    append_line(
        rt.report_path,
        {{"routine", Traits<Scalar>::lower},
         {"m", x.m},
         {"n", x.n},
         {"k", x.k},
         {"grid", {g.rows, g.cols}},
         {"path", "passed on"},
         {"passed_on", why},
         {"min_flops", at},
         {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()},
         {"fallback", nullptr}});
  return true;
}

template <class Scalar>
void pxgemm(const Call<Scalar>& x) {
  const int ctxt = x.Ad[CTXT_];
  const GridInfo g = grid_info(ctxt);
  if (const int info = pblas_info(x, g)) {
    pblas_abort(ctxt, Traits<Scalar>::routine, info);
    return;
  }
  const Scalar al = *x.alpha, be = *x.beta;
  if (x.m == 0 || x.n == 0 || ((al == Scalar(0) || x.k == 0) && be == Scalar(1))) return;
  Runtime* rt = nullptr;
  try {
    rt = &runtime();
  } catch (const std::exception& e) {
    give_up(x, e.what(), 1);
    return;
  }
  const auto t0 = std::chrono::steady_clock::now();
  // What cuboid cannot serve (no communicator for the grid) is handed on only if asked.
  MPI_Comm comm = MPI_COMM_NULL;
  try {
    comm = grid_communicator(ctxt, g);
  } catch (const std::exception& e) {
    hand_on(*rt, x, e.what());
    return;
  }
  const Grid grid{g.rows, g.cols, g.myrow * g.cols + g.mycol, comm};
  // The block the entry computes in, and why the operands must move first (empty when the call
  // can run on the caller's arrays).
  const int nb = entry_block(x, g);
  const std::string not_there = not_in_place(x, g, nb);
  try {
    if (passed_on_as_small(*rt, x, comm, g, nb, not_there.empty())) return;
  } catch (const std::exception& e) {
    give_up(x, e.what(), 1);
    return;
  }
  std::string path, partition, why_moved;
  double moved = 0, received = 0;
  try {
    if (rt->rank_speeds && rt->rank_speeds != std::size_t(g.rows) * std::size_t(g.cols))
      throw KeyedError("mpi.rank_speeds", rt->rank_speeds_at + " has " +
                                              std::to_string(rt->rank_speeds) +
                                              " factors (CUBOID_DECK) for a call on a grid of " +
                                              std::to_string(g.rows * g.cols) + " processes");
    why_moved = rt->check ? "CUBOID_PXGEMM_CHECK (the check works on copies)" : not_there;
    BlockCyclicLayout layout{g.rows, g.cols,
                             why_moved.empty() ? nb : std::max(x.Cd[MB_], x.Cd[NB_])};
    if (al == Scalar(0) || x.k == 0) {
      path = "scaled";
      why_moved.clear();
      scale_sub_c(x, grid, g);
    } else if (why_moved.empty()) {
      path = "in place";
      const SubMatrix a = sub_matrix(x.Ad, x.ai, x.aj, nb, g),
                      b = sub_matrix(x.Bd, x.bi, x.bj, nb, g),
                      c = sub_matrix(x.Cd, x.ci, x.cj, nb, g);
      layout.first_a = a.first, layout.first_b = b.first, layout.first_c = c.first;
      multiply<Scalar>(rt->context(), comm, layout, Op(x.ta), Op(x.tb), x.m, x.n, x.k, al,
                       x.a + a.offset, x.Ad[LLD_], x.b + b.offset, x.Bd[LLD_], be, x.c + c.offset,
                       x.Cd[LLD_], received, partition);
    } else {
      path = "redistributed";
      moved = redistributed(*rt, x, comm, grid, g, layout, received, partition);
    }
  } catch (const CheckFailed& e) {
    give_up(x, e.what(), 3);
    return;
  } catch (const std::exception& e) {
    give_up(x, e.what(), 1);
    return;
  }
  if (!rt->report_path.empty())
    report_call(*rt, x, comm, g, path, why_moved, partition, received, moved,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

}  // namespace
}  // namespace cuboid::pxgemm

extern "C" {

#define CUBOID_PXGEMM_ARGS(T)                                                                 \
  const char *transa, const char *transb, const int *m, const int *n, const int *k,           \
      const T *alpha, const T *a, const int *ia, const int *ja, const int *desca, const T *b, \
      const int *ib, const int *jb, const int *descb, const T *beta, T *c, const int *ic,     \
      const int *jc, const int *descc
#define CUBOID_PXGEMM_CALL \
  { transa, transb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb, beta, c, ic, jc, descc }

void pdgemm_(CUBOID_PXGEMM_ARGS(double)) { cuboid::pxgemm::pxgemm<double>(CUBOID_PXGEMM_CALL); }
void psgemm_(CUBOID_PXGEMM_ARGS(float)) { cuboid::pxgemm::pxgemm<float>(CUBOID_PXGEMM_CALL); }
void cuboid_pdgemm(CUBOID_PXGEMM_ARGS(double)) {
  cuboid::pxgemm::pxgemm<double>(CUBOID_PXGEMM_CALL);
}
void cuboid_psgemm(CUBOID_PXGEMM_ARGS(float)) { cuboid::pxgemm::pxgemm<float>(CUBOID_PXGEMM_CALL); }
void pzgemm_(CUBOID_PXGEMM_ARGS(std::complex<double>)) {
  cuboid::pxgemm::pxgemm<std::complex<double>>(CUBOID_PXGEMM_CALL);
}
void pcgemm_(CUBOID_PXGEMM_ARGS(std::complex<float>)) {
  cuboid::pxgemm::pxgemm<std::complex<float>>(CUBOID_PXGEMM_CALL);
}
void cuboid_pzgemm(CUBOID_PXGEMM_ARGS(std::complex<double>)) {
  cuboid::pxgemm::pxgemm<std::complex<double>>(CUBOID_PXGEMM_CALL);
}
void cuboid_pcgemm(CUBOID_PXGEMM_ARGS(std::complex<float>)) {
  cuboid::pxgemm::pxgemm<std::complex<float>>(CUBOID_PXGEMM_CALL);
}

}  // extern "C"
