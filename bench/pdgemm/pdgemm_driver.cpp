// ScaLAPACK's pdgemm (or, with --type z, pzgemm) on cuboid's problem: the same A, B and C0
// (generated element by element from the seed, exec/matrices.hpp), the same 2D block-cyclic layout
// (dist/layout.hpp: the near-square row-major grid, blocks mb = nb, sources 0), timed like cuboid
// (warm-up, then repetitions, each between two barriers, so its time is the slowest rank's; the
// median is reported) and checked. One line of JSON on standard output says what happened.
//
//   mpirun -np 4 build/bin/cuboid-pdgemm --m 4096 --n 4096 --k 4096 --block 256 [--panel 256]
//
// --engine door, with libcuboid_pxgemm.so preloaded, times the program's pdgemm_ (cuboid's door)
// and ScaLAPACK's own routine (taken from the library that defines its pilaenv_) alternately in
// one program, each on its own C and each validated: the cost of the door itself, free of the
// placement that makes separate runs bimodal.
//
// PBLAS cuts k into panels of pilaenv_() columns (32 in Debian's ScaLAPACK: PBLAS/SRC/pilaenv.f
// returns 32 for every precision). This program defines pilaenv_ itself, so the library's calls
// land here (it is called through the PLT); --panel W returns W, otherwise the library's own
// value. Every call is counted, which is how the run proves the override reached pdgemm.
//
// Validation: with a random x, y1 = C·x and y2 = alpha·A·(B·x) + beta·C0·x are formed with
// pdgemv, and ||y1 - y2||_inf must be at most
//   1.01·u·[(2k+n+4)·(|alpha|·||A||·||B|| + |beta|·||C0||) + n·||C||]·||x||   (inf-norms, u =
//   2^-53)
// which bounds the rounding errors of the product (gamma_{k+2}, any summation order) and of the
// three products of the check (gamma_n, gamma_n, gamma_{k+2}) to first order; the factor 1.01
// covers gamma_j = j·u/(1 - j·u) and the second-order terms. A wrong block changes y1 by about
// its own size, far above the bound. Exit status 3 when the check fails, 1 on bad input.
#include <dlfcn.h>
#include <mpi.h>
#include <omp.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <new>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "exec/matrices.hpp"
#include "layout/layout.hpp"

#if CUBOID_PDGEMM_WITH_LIBRARY
#include <cuboid/mpi.hpp>
#endif

extern "C" {
void Cblacs_get(int context, int what, int* value);
void Cblacs_gridinit(int* context, const char* order, int nprow, int npcol);
void Cblacs_gridinfo(int context, int* nprow, int* npcol, int* myrow, int* mycol);
void Cblacs_gridexit(int context);
void Cblacs_exit(int keep_mpi);
int numroc_(const int* n, const int* nb, const int* iproc, const int* isrcproc, const int* nprocs);
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb,
               const int* irsrc, const int* icsrc, const int* ictxt, const int* lld, int* info);
void pdgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
             const double* alpha, const double* a, const int* ia, const int* ja, const int* desca,
             const double* b, const int* ib, const int* jb, const int* descb, const double* beta,
             double* c, const int* ic, const int* jc, const int* descc);
void pdgemv_(const char* trans, const int* m, const int* n, const double* alpha, const double* a,
             const int* ia, const int* ja, const int* desca, const double* x, const int* ix,
             const int* jx, const int* descx, const int* incx, const double* beta, double* y,
             const int* iy, const int* jy, const int* descy, const int* incy);
double pdlange_(const char* norm, const int* m, const int* n, const double* a, const int* ia,
                const int* ja, const int* desca, double* work, std::size_t norm_len);
using zcomplex = std::complex<double>;
void pzgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
             const zcomplex* alpha, const zcomplex* a, const int* ia, const int* ja,
             const int* desca, const zcomplex* b, const int* ib, const int* jb, const int* descb,
             const zcomplex* beta, zcomplex* c, const int* ic, const int* jc, const int* descc);
void pzgemv_(const char* trans, const int* m, const int* n, const zcomplex* alpha,
             const zcomplex* a, const int* ia, const int* ja, const int* desca, const zcomplex* x,
             const int* ix, const int* jx, const int* descx, const int* incx, const zcomplex* beta,
             zcomplex* y, const int* iy, const int* jy, const int* descy, const int* incy);
double pzlange_(const char* norm, const int* m, const int* n, const zcomplex* a, const int* ia,
                const int* ja, const int* desca, double* work, std::size_t norm_len);
}

namespace {

// pdgemm_/pzgemm_, pdgemv_/pzgemv_ and pdlange_/pzlange_ by the scalar type.
void pgemm(const char* ta, const char* tb, const int* m, const int* n, const int* k,
           const double* alpha, const double* a, const int* ia, const int* ja, const int* desca,
           const double* b, const int* ib, const int* jb, const int* descb, const double* beta,
           double* c, const int* ic, const int* jc, const int* descc) {
  pdgemm_(ta, tb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb, beta, c, ic, jc, descc);
}
void pgemm(const char* ta, const char* tb, const int* m, const int* n, const int* k,
           const zcomplex* alpha, const zcomplex* a, const int* ia, const int* ja, const int* desca,
           const zcomplex* b, const int* ib, const int* jb, const int* descb, const zcomplex* beta,
           zcomplex* c, const int* ic, const int* jc, const int* descc) {
  pzgemm_(ta, tb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb, beta, c, ic, jc, descc);
}
// On the sub-matrix of `a` from (ia, ja) (1-based).
template <class T>
void pgemv(const char* trans, const int* m, const int* n, const T* alpha, const T* a, int ia,
           int ja, const int* desca, const T* x, const int* descx, const T* beta, T* y,
           const int* descy) {
  const int one = 1;
  if constexpr (std::is_same_v<T, double>)
    pdgemv_(trans, m, n, alpha, a, &ia, &ja, desca, x, &one, &one, descx, &one, beta, y, &one, &one,
            descy, &one);
  else
    pzgemv_(trans, m, n, alpha, a, &ia, &ja, desca, x, &one, &one, descx, &one, beta, y, &one, &one,
            descy, &one);
}
template <class T>
double plange(const char* norm, const int* m, const int* n, const T* a, int ia, int ja,
              const int* desca, double* work) {
  if constexpr (std::is_same_v<T, double>)
    return pdlange_(norm, m, n, a, &ia, &ja, desca, work, 1);
  else
    return pzlange_(norm, m, n, a, &ia, &ja, desca, work, 1);
}

}  // namespace

namespace {

std::atomic<int> g_panel{0};  // 0: the library's own panel width
std::atomic<long> g_pilaenv_calls{0};

using Pilaenv = int (*)(int*, char*);

// The library's pilaenv_: the next definition after this program's.
Pilaenv library_pilaenv() {
  static const Pilaenv f = reinterpret_cast<Pilaenv>(dlsym(RTLD_NEXT, "pilaenv_"));
  return f;
}

// ScaLAPACK's own p?gemm_, from the library that defines its pilaenv_, whatever a preloaded
// library puts in front of it under the same name (--engine door); null when not found.
template <class T>
using Pgemm = void (*)(const char*, const char*, const int*, const int*, const int*, const T*,
                       const T*, const int*, const int*, const int*, const T*, const int*,
                       const int*, const int*, const T*, T*, const int*, const int*, const int*);
template <class T>
Pgemm<T> scalapack_own_pgemm() {
  Dl_info info{};
  if (!library_pilaenv() || !dladdr(reinterpret_cast<void*>(library_pilaenv()), &info) ||
      !info.dli_fname)
    return nullptr;
  void* lib = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (!lib) return nullptr;
  void* f = dlsym(lib, std::is_same_v<T, double> ? "pdgemm_" : "pzgemm_");
  dlclose(lib);  // RTLD_NOLOAD took a reference to a library the program keeps loaded
  return reinterpret_cast<Pgemm<T>>(f);
}

}  // namespace

// PBLAS asks this for its k-panel width (the logical block size of its algorithms).
extern "C" int pilaenv_(int* ictxt, char* prec) {
  g_pilaenv_calls.fetch_add(1, std::memory_order_relaxed);
  if (const int w = g_panel.load(std::memory_order_relaxed); w > 0) return w;
  const Pilaenv f = library_pilaenv();
  return f ? f(ictxt, prec) : 32;
}

namespace {

namespace layout = cuboid::layout;
namespace exec = cuboid::exec;

constexpr int kBadInput = 1, kValidationFailed = 3;

struct Options {
  int m = 1024, n = 1024, k = 1024, block = 256;
  // op(A), op(B) as BLAS spells them; a transposed A is stored k x m, a transposed B n x k, as
  // cuboid's problem.trans_a and trans_b store them ('C' is 'T' for real matrices).
  char trans_a = 'N', trans_b = 'N';
  std::string grid;  // "RxC"; empty: the near-square grid
  double alpha = 1.0, beta = 0.0;
  std::uint64_t seed = 2016;
  int warmup = 1, repetitions = 3, threads = 1, panel = 0;
  bool validate = true;
  double perturb = 0;
  std::string json;
  // "pdgemm"; with the library, "cuboid" (its distributed entry on the same local arrays) or
  // "both" (each repetition runs the two, in alternating order); "door": the program's pdgemm_
  // (libcuboid_pxgemm.so's, preloaded) alternating with ScaLAPACK's own routine.
  std::string engine = "pdgemm";
  std::string processors = "host";  // the cuboid context's processors, comma-separated
  char type = 'd';                  // d: pdgemm_ on doubles, z: pzgemm_ on complex doubles
  // The sub-matrices' first rows and columns, in blocks: IA, JA, IB, JB, IC, JC are 1 + that
  // many blocks, and each matrix is stored that much larger (as a factorisation's trailing
  // update calls pdgemm_: A, B and C each with its first block on its own process).
  std::array<int, 6> offsets{};
};

struct BadInput : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Every rank reaches the same verdict on the same arguments, so each can stop on its own.
layout::ProcessGrid grid_for(const Options& o, int P) {
  if (o.grid.empty()) return layout::near_square_grid(P);
  int r = 0, c = 0;
  char x = 0, extra = 0;
  if (std::sscanf(o.grid.c_str(), "%d%c%d%c", &r, &x, &c, &extra) != 3 || x != 'x' || r < 1 ||
      c < 1)
    throw BadInput("--grid " + o.grid + ": expected ROWSxCOLS, e.g. 2x4");
  if (r * c != P)
    throw BadInput("--grid " + o.grid + " has " + std::to_string(r * c) +
                   " processes but the job has " + std::to_string(P) + " ranks");
  return layout::ProcessGrid{r, c};
}

// A distributed matrix: local array, descriptor, and the layout that places its elements; the
// product uses its sub-matrix from (ia, ja) (1-based).
template <class T>
struct Local {
  layout::BlockCyclic layout;
  int rows = 0, cols = 0, lld = 1;
  int desc[9] = {};
  std::vector<T> data;
  int ia = 1, ja = 1;
};

template <class T>
Local<T> make_local(int m, int n, int mb, int nb, const layout::ProcessGrid& g, int ctxt, int rank,
                    const char* name) {
  Local<T> L;
  L.layout = layout::BlockCyclic(m, n, mb, nb, g);
  L.rows = int(L.layout.local_rows(rank));
  L.cols = int(L.layout.local_cols(rank));
  // cuboid's layout must be ScaLAPACK's: the local extents agree with NUMROC.
  const int prow = g.row_of(rank), pcol = g.col_of(rank), zero = 0;
  if (numroc_(&m, &mb, &prow, &zero, &g.rows) != L.rows ||
      numroc_(&n, &nb, &pcol, &zero, &g.cols) != L.cols)
    throw std::logic_error(std::string(name) + ": cuboid's local extents differ from NUMROC");
  L.lld = std::max(1, L.rows);
  int info = 0;
  descinit_(L.desc, &m, &n, &mb, &nb, &zero, &zero, &ctxt, &L.lld, &info);
  if (info != 0)
    throw BadInput(std::string(name) + ": DESCINIT rejected the descriptor (info " +
                   std::to_string(info) + ")");
  L.data.assign(std::size_t(L.lld) * std::size_t(std::max(1, L.cols)), T(0));
  return L;
}

#if CUBOID_PDGEMM_WITH_LIBRARY
// Where the library's entry finds a block-aligned sub-matrix: the process of its first block
// and this rank's first element of it (the global index of a local one is the layout's).
struct Origin {
  cuboid::GridCoord first;
  std::size_t offset = 0;
};
template <class T>
Origin origin(const Local<T>& L, const layout::ProcessGrid& g, int rank) {
  const std::int64_t nb = L.layout.row_block(), bi = (L.ia - 1) / nb, bj = (L.ja - 1) / nb;
  Origin o;
  o.first = {int(bi % g.rows), int(bj % g.cols)};
  // The sub-matrix's local rows: this rank's rows of the matrix from global row ia - 1 on.
  std::int64_t row = 0, col = 0;
  while (row < L.rows && L.layout.global_row(row, g.row_of(rank)) < L.ia - 1) ++row;
  while (col < L.cols && L.layout.global_col(col, g.col_of(rank)) < L.ja - 1) ++col;
  o.offset = std::size_t(row + col * L.lld);
  return o;
}
#endif

template <class T>
void fill(Local<T>& L, std::uint64_t seed, exec::MatrixId id, int rank) {
  const auto& g = L.layout.grid();
  const int prow = g.row_of(rank), pcol = g.col_of(rank);
  for (int lj = 0; lj < L.cols; ++lj) {
    const std::int64_t gj = L.layout.global_col(lj, pcol);
    for (int li = 0; li < L.rows; ++li)
      L.data[std::size_t(lj) * std::size_t(L.lld) + std::size_t(li)] =
          exec::element<T>(seed, id, L.layout.global_row(li, prow), gj);
  }
}

// The infinity norm of op(L) for the stored m x n matrix L: its one norm when op transposes.
template <class T>
double norm_inf(const Local<T>& L, int m, int n, char op = 'N') {
  std::vector<double> work(std::size_t(L.rows) + std::size_t(L.cols) + 64);
  return plange(op == 'N' ? "I" : "1", &m, &n, L.data.data(), L.ia, L.ja, L.desc, work.data());
}

// The local largest |value| of a distributed vector, agreed over all ranks.
template <class T>
double max_abs(const std::vector<T>& v) {
  double m = 0, out = 0;
  for (const T& x : v)
    m = std::isnan(std::abs(x)) ? std::numeric_limits<double>::infinity()
                                : std::max(m, std::abs(x));
  MPI_Allreduce(&m, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

struct Check {
  bool passed = false;
  double error = 0, bound = 0;
};

template <class T>
Check validate(const Options& o, const Local<T>& A, const Local<T>& B, const Local<T>& C0,
               const Local<T>& C, const layout::ProcessGrid& g, int ctxt, int rank) {
  const int m = o.m, n = o.n, k = o.k, nb = o.block;
  const T zero(0), unit(1), alpha(o.alpha), beta(o.beta);
  // x (n), t = B·x (k), y1 = C·x (m), u = C0·x then alpha·A·t + beta·u (m): column vectors
  // block-cyclic over the process rows, held by process column 0.
  Local<T> x = make_local<T>(n, 1, nb, 1, g, ctxt, rank, "x");
  Local<T> t = make_local<T>(k, 1, nb, 1, g, ctxt, rank, "t");
  Local<T> y1 = make_local<T>(m, 1, nb, 1, g, ctxt, rank, "y1");
  Local<T> u = make_local<T>(m, 1, nb, 1, g, ctxt, rank, "u");
  fill(x, o.seed, static_cast<exec::MatrixId>(4), rank);
  // op(B) x and op(A) t on the stored matrices (pdgemv transposes as pdgemm does).
  const bool ta = o.trans_a != 'N', tb = o.trans_b != 'N';
  const int am = ta ? k : m, an = ta ? m : k, bm = tb ? n : k, bn = tb ? k : n;
  // The op letters as given: 'C' conjugates the complex operands, as in the product.
  const char opa[2] = {o.trans_a, 0}, opb[2] = {o.trans_b, 0};
  pgemv(opb, &bm, &bn, &unit, B.data.data(), B.ia, B.ja, B.desc, x.data.data(), x.desc, &zero,
        t.data.data(), t.desc);
  pgemv("N", &m, &n, &unit, C.data.data(), C.ia, C.ja, C.desc, x.data.data(), x.desc, &zero,
        y1.data.data(), y1.desc);
  pgemv("N", &m, &n, &unit, C0.data.data(), C0.ia, C0.ja, C0.desc, x.data.data(), x.desc, &zero,
        u.data.data(), u.desc);
  pgemv(opa, &am, &an, &alpha, A.data.data(), A.ia, A.ja, A.desc, t.data.data(), t.desc, &beta,
        u.data.data(), u.desc);
  std::vector<T> diff;
  if (g.col_of(rank) == 0)
    for (int i = 0; i < y1.rows; ++i)
      diff.push_back(y1.data[std::size_t(i)] - u.data[std::size_t(i)]);
  Check c;
  c.error = max_abs(diff);
  const double x_norm = max_abs(g.col_of(rank) == 0 ? x.data : std::vector<T>{});
  const double a = norm_inf(A, am, an, o.trans_a), b = norm_inf(B, bm, bn, o.trans_b),
               c0 = norm_inf(C0, m, n), cn = norm_inf(C, m, n);
  // A complex multiply-add rounds each part of a product of sums: the real bound's u becomes
  // sqrt(2) 2u (Higham, Accuracy and Stability of Numerical Algorithms, lemma 3.5), 4u here.
  const double ulp = std::ldexp(1.0, -53) * (std::is_same_v<T, double> ? 1.0 : 4.0);
  c.bound =
      1.01 * ulp *
      ((2.0 * k + n + 4) * (std::abs(o.alpha) * a * b + std::abs(o.beta) * c0) + double(n) * cn) *
      x_norm;
  c.passed = c.error <= c.bound;  // false for NaN
  return c;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

std::string blas_library() {
  void* f = dlsym(RTLD_DEFAULT, "dgemm_");
  Dl_info info;
  if (f == nullptr || dladdr(f, &info) == 0 || info.dli_fname == nullptr) return "unknown";
  // Debian's libblas.so.3 is an alternatives link: name the library behind it.
  char* real = realpath(info.dli_fname, nullptr);
  const std::string name = real ? real : info.dli_fname;
  std::free(real);
  return name;
}

void check_options(const Options& o) {
  if (o.m < 1 || o.n < 1 || o.k < 1) throw BadInput("--m, --n and --k must be at least 1");
  if (o.block < 1) throw BadInput("--block must be at least 1");
  if (o.repetitions < 1 || o.warmup < 0)
    throw BadInput("--repetitions must be at least 1 and --warmup at least 0");
  if (o.threads < 1) throw BadInput("--threads must be at least 1");
  if (o.panel < 0) throw BadInput("--panel must be 0 (the library's) or a width >= 1");
  if (!std::isfinite(o.alpha) || !std::isfinite(o.beta))
    throw BadInput("--alpha and --beta must be finite");
}

struct Blacs {
  int ctxt = 0;
  int default_panel = 0;  // the library's pilaenv_ on this grid
};

// The BLACS grid on MPI_COMM_WORLD, which must place each rank where cuboid's layout does.
Blacs open_grid(const layout::ProcessGrid& g, int rank, bool complex) {
  Blacs b;
  Cblacs_get(-1, 0, &b.ctxt);  // the system context: MPI_COMM_WORLD
  Cblacs_gridinit(&b.ctxt, "Row", g.rows, g.cols);
  int nprow = 0, npcol = 0, myrow = -1, mycol = -1;
  Cblacs_gridinfo(b.ctxt, &nprow, &npcol, &myrow, &mycol);
  if (nprow != g.rows || npcol != g.cols || myrow != g.row_of(rank) || mycol != g.col_of(rank))
    throw std::logic_error("BLACS placed this rank at (" + std::to_string(myrow) + "," +
                           std::to_string(mycol) + ") of " + std::to_string(nprow) + "x" +
                           std::to_string(npcol) + ", not where cuboid's layout puts it");
  char prec = complex ? 'Z' : 'D';
  int ctxt = b.ctxt;
  b.default_panel = library_pilaenv()(&ctxt, &prec);
  return b;
}

template <class T>
struct Operands {
  Local<T> A, B, C0, C;
};

// A, B, C0 and C as the options store them, filled from the seed. Allocation can fail on one
// rank only: the ranks agree before anyone enters pdgemm.
template <class T>
Operands<T> make_operands(const Options& o, const layout::ProcessGrid& g, const Blacs& blacs,
                          int rank, int P) {
  Operands<T> x;
  int failed = 0, any = 0;
  std::string why;
  try {
    const bool ta = o.trans_a != 'N', tb = o.trans_b != 'N';
    const auto& f = o.offsets;
    const int nb = o.block;
    auto sub = [&](int rows, int cols, int fi, int fj, const char* name) {
      Local<T> L = make_local<T>(rows + fi * nb, cols + fj * nb, nb, nb, g, blacs.ctxt, rank, name);
      L.ia = 1 + fi * nb, L.ja = 1 + fj * nb;
      return L;
    };
    x.A = sub(ta ? o.k : o.m, ta ? o.m : o.k, f[0], f[1], "A");
    x.B = sub(tb ? o.n : o.k, tb ? o.k : o.n, f[2], f[3], "B");
    x.C0 = sub(o.m, o.n, f[4], f[5], "C0");
    x.C = sub(o.m, o.n, f[4], f[5], "C");
  } catch (const std::bad_alloc&) {
    const double mib = double(sizeof(T)) *
                       (double(o.m) * o.k + double(o.k) * o.n + 2.0 * double(o.m) * o.n) / P /
                       (1 << 20);
    failed = 1, why = "not enough memory for the local matrices (about " +
                      std::to_string(int(mib)) + " MiB per rank)";
  } catch (const std::exception& e) {
    failed = 1, why = e.what();
  }
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any) throw BadInput(failed ? why : "another rank could not set up its matrices");
  fill(x.A, o.seed, exec::MatrixId::A, rank);
  fill(x.B, o.seed, exec::MatrixId::B, rank);
  fill(x.C0, o.seed, exec::MatrixId::C, rank);
  return x;
}

// What runs and what it found, per rank: each product's time is the slowest rank's, warm-ups
// included.
struct Timings {
  std::vector<double> scalapack, second;  // second: the door or the library's entry
  long pilaenv_calls = 0;                 // by ScaLAPACK's last product on this rank
  double received = 0, speed = 0;         // the library's last call
  std::string partition;
};

// The routine timed beside ScaLAPACK's (--engine door, cuboid or both), with its own C.
template <class T>
struct Second {
  bool door = false, library = false;
  Pgemm<T> own = nullptr;  // door: ScaLAPACK's own routine (the program's p?gemm_ is the door)
  Local<T> C;
#if CUBOID_PDGEMM_WITH_LIBRARY
  std::unique_ptr<cuboid::Context> context;
#endif
};

template <class T>
Second<T> make_second(const Options& o, const Local<T>& C, const char* routine) {
  Second<T> s;
  s.door = o.engine == "door", s.library = o.engine == "cuboid" || o.engine == "both";
  if (s.door) {
    const char* entry = std::is_same_v<T, double> ? "cuboid_pdgemm" : "cuboid_pzgemm";
    if (!dlsym(RTLD_DEFAULT, entry))
      throw BadInput("--engine door: " + std::string(entry) +
                     " is not in the program: preload libcuboid_pxgemm.so (mpirun -x "
                     "LD_PRELOAD=.../libcuboid_pxgemm.so)");
    s.own = scalapack_own_pgemm<T>();
    if (!s.own)
      throw BadInput("--engine door: ScaLAPACK's own " + std::string(routine) + "_ was not found");
    s.C = C;
  }
  if (s.library) {
#if CUBOID_PDGEMM_WITH_LIBRARY
    cuboid::ContextOptions co;
    std::stringstream list(o.processors);
    for (std::string name; std::getline(list, name, ',');) co.processors.push_back(name);
    s.context = std::make_unique<cuboid::Context>(co);
    s.C = C;
#else
    throw BadInput("--engine " + o.engine + ": built without libcuboid");
#endif
  }
  return s;
}

// Warm-ups and repetitions; with a second routine, the two alternate which goes first.
template <class T>
Timings time_products(const Options& o, Operands<T>& x, Second<T>& second,
                      const layout::ProcessGrid& g, int rank) {
  Timings t;
  const T alpha(o.alpha), beta(o.beta);
  // One product of `f` into `out` from C0, between two barriers. The second barrier waits for
  // the slowest rank, so rank 0's clock gives the slowest rank's time without a reduction:
  // nothing but pdgemm moves bytes in a repetition (a barrier moves none), which keeps the byte
  // counts per product exact.
  auto one_product = [&](Pgemm<T> f, Local<T>& out) {
    out.data = x.C0.data;
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    f(&o.trans_a, &o.trans_b, &o.m, &o.n, &o.k, &alpha, x.A.data.data(), &x.A.ia, &x.A.ja, x.A.desc,
      x.B.data.data(), &x.B.ia, &x.B.ja, x.B.desc, &beta, out.data.data(), &out.ia, &out.ja,
      out.desc);
    MPI_Barrier(MPI_COMM_WORLD);
    return MPI_Wtime() - t0;
  };
  // The program's p?gemm_ (cuboid's door where libcuboid_pxgemm.so is preloaded), and the routine
  // timed as ScaLAPACK's: the same, or with --engine door ScaLAPACK's own.
  const Pgemm<T> program = static_cast<Pgemm<T>>(pgemm);
  const Pgemm<T> scalapack = second.own ? second.own : program;
  auto one_scalapack = [&] {
    const long before = g_pilaenv_calls.load();
    t.scalapack.push_back(one_product(scalapack, x.C));
    t.pilaenv_calls = g_pilaenv_calls.load() - before;
  };
#if CUBOID_PDGEMM_WITH_LIBRARY
  // Where the sub-matrices start, found once: outside the timed products.
  const Origin a = origin(x.A, g, rank), b = origin(x.B, g, rank), c = origin(x.C, g, rank);
#else
  (void)g, (void)rank;
#endif
  auto one_library = [&] {
#if CUBOID_PDGEMM_WITH_LIBRARY
    Local<T>& C = second.C;
    C.data = x.C0.data;
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    cuboid::gemm(*second.context, MPI_COMM_WORLD,
                 cuboid::BlockCyclicLayout{g.rows, g.cols, o.block, a.first, b.first, c.first},
                 cuboid::Op(o.trans_a), cuboid::Op(o.trans_b), o.m, o.n, o.k, alpha,
                 x.A.data.data() + a.offset, x.A.lld, x.B.data.data() + b.offset, x.B.lld, beta,
                 C.data.data() + c.offset, C.lld);
    MPI_Barrier(MPI_COMM_WORLD);
    t.second.push_back(MPI_Wtime() - t0);
    const auto& call = second.context->last_call();
    t.received = call.received_bytes;
    t.partition = call.rank_partition;
    t.speed = std::accumulate(call.speeds.begin(), call.speeds.end(), 0.0);
#endif
  };
  const bool run_scalapack = o.engine != "cuboid", paired = second.door || second.library;
  for (int r = 0; r < o.warmup + o.repetitions; ++r) {
    if (run_scalapack && (r % 2 == 0 || !paired)) one_scalapack();
    if (second.library) one_library();
    if (second.door) t.second.push_back(one_product(program, second.C));
    if (run_scalapack && paired && r % 2 == 1) one_scalapack();
  }
  return t;
}

struct Checks {
  Check scalapack, second;
};

// Each product checked (after --perturb, which must make a check fail).
template <class T>
Checks check_products(const Options& o, Operands<T>& x, Second<T>& second,
                      const layout::ProcessGrid& g, const Blacs& blacs, int rank) {
  Checks c;
  if (!o.validate) return c;
  // The sub-matrix's first element, on the rank that holds it.
  const Local<T>& C = x.C;
  const std::int64_t pi = C.ia - 1, pj = C.ja - 1;
  const bool holds_first = C.layout.owner(pi, pj) == rank;
  const std::size_t first_at = std::size_t(C.layout.local_row(pi) + C.layout.local_col(pj) * C.lld);
  auto check = [&](Local<T>& out) {
    if (o.perturb != 0 && holds_first) out.data[first_at] += T(o.perturb);
    return validate(o, x.A, x.B, x.C0, out, g, blacs.ctxt, rank);
  };
  const bool run_scalapack = o.engine != "cuboid";
  if (run_scalapack) c.scalapack = check(x.C);
  if (second.door || second.library) c.second = check(second.C);
  if (!run_scalapack) c.scalapack = c.second;
  return c;
}

std::string verdict(const Options& o, const Check& c) {
  return o.validate ? (c.passed ? "passed" : "FAILED") : "not performed";
}

nlohmann::json check_json(const Check& c) {
  return {{"passed", c.passed}, {"error", c.error}, {"bound", c.bound}};
}

// Rank 0's record: one JSON line on standard output (and in --json), a summary on stderr.
void report(const Options& o, const layout::ProcessGrid& g, int P, const char* routine,
            bool second_is_door, const Blacs& blacs, long calls_min, const Timings& t,
            const Checks& checks, double received_max, const std::vector<double>& rank_speeds) {
  const bool run_scalapack = o.engine != "cuboid",
             library = o.engine == "cuboid" || o.engine == "both";
  const bool complex = o.type == 'z';
  const std::vector<double>& main_times = run_scalapack ? t.scalapack : t.second;
  const std::vector<double> timed(main_times.begin() + o.warmup, main_times.end());
  const double med = median(timed);
  const double flops = (complex ? 8.0 : 2.0) * double(o.m) * double(o.n) * double(o.k);
  const int panel = o.panel > 0 ? o.panel : blacs.default_panel;
  nlohmann::json j = {
      {"program", routine},
      {"m", o.m},
      {"n", o.n},
      {"k", o.k},
      {"block", o.block},
      {"offsets_blocks", o.offsets},
      {"trans_a", std::string(1, o.trans_a)},
      {"trans_b", std::string(1, o.trans_b)},
      {"grid", {g.rows, g.cols}},
      {"ranks", P},
      {"threads_per_rank", o.threads},
      {"alpha", o.alpha},
      {"beta", o.beta},
      {"seed", o.seed},
      {"panel",
       {{"default", blacs.default_panel},
        {"used", panel},
        {"overridden", o.panel > 0},
        {"pilaenv_calls_per_product", calls_min}}},
      {"warmup", o.warmup},
      {"times_s", timed},
      {"median_s", med},
      {"min_s", *std::min_element(timed.begin(), timed.end())},
      {"max_s", *std::max_element(timed.begin(), timed.end())},
      {"gflops", flops / med / 1e9},
      {"blas", blas_library()},
      {"validation",
       {{"performed", o.validate},
        {"passed", checks.scalapack.passed},
        {"error", checks.scalapack.error},
        {"bound", checks.scalapack.bound},
        {"method", o.validate ? "randomized: ||C x - (alpha A (B x) + beta C0 x)||_inf <= "
                                "1.01 u [(2k+n+4)(|alpha| |A| |B| + |beta| |C0|) + n |C|] |x| "
                                "(inf-norms, pdgemv and pdlange)"
                              : "not validated"}}}};
  j["engine"] = o.engine;
  const std::vector<double> ct(
      t.second.begin() + std::min<std::ptrdiff_t>(o.warmup, std::ptrdiff_t(t.second.size())),
      t.second.end());
  const double second_med = ct.empty() ? 0.0 : median(ct);
  if (second_is_door)
    j["door"] = {{"symbol", std::string(routine) + "_ as the program resolves it"},
                 {"times_s", ct},
                 {"median_s", second_med},
                 {"min_s", *std::min_element(ct.begin(), ct.end())},
                 {"gflops", flops / second_med / 1e9},
                 {"ratio_to_scalapack", second_med / med},
                 {"validation", check_json(checks.second)}};
  if (library) {
    j["cuboid"] = {{"processors", o.processors},
                   {"times_s", ct},
                   {"median_s", second_med},
                   {"min_s", *std::min_element(ct.begin(), ct.end())},
                   {"gflops", flops / second_med / 1e9},
                   {"rank_partition", t.partition},
                   {"rank_gflops", rank_speeds},
                   {"received_bytes_max", received_max},
                   {"validation", check_json(checks.second)}};
    if (!run_scalapack) j["program"] = "cuboid::gemm (distributed)";
  }
  const std::string line = j.dump();
  std::cout << line << std::endl;
  if (!o.json.empty()) {
    std::ofstream f(o.json);
    f << line << "\n";
    if (!f) throw BadInput("--json " + o.json + ": cannot write the file");
  }
  // One write: std::cerr is unbuffered, and mpirun would otherwise interleave the JSON line
  // of stdout between the pieces of this one (a test looks for "validation FAILED").
  std::ostringstream summary;
  summary << "cuboid-pdgemm: " << j["program"].get<std::string>() << " " << o.m << "x" << o.n << "x"
          << o.k << " op(A)=" << o.trans_a << " op(B)=" << o.trans_b << " block " << o.block
          << " on a " << g.rows << "x" << g.cols << " grid, panel " << panel << " (library default "
          << blacs.default_panel << "): median " << med << " s, " << flops / med / 1e9
          << " GFLOP/s; validation " << verdict(o, checks.scalapack) << " ("
          << checks.scalapack.error << " <= " << checks.scalapack.bound << ")\n";
  if (second_is_door)
    summary << "cuboid-pdgemm: the program's " << routine << "_ (the preloaded door): median "
            << second_med << " s, " << second_med / med << "x ScaLAPACK's own " << routine
            << "_ called alternately; validation " << verdict(o, checks.second) << "\n";
  if (library && run_scalapack)
    summary << "cuboid-pdgemm: cuboid::gemm on " << o.processors << " (" << t.partition
            << "): median " << second_med << " s, " << flops / second_med / 1e9 << " GFLOP/s, "
            << second_med / med << "x " << routine << "'s time; validation "
            << verdict(o, checks.second) << "\n";
  std::cerr << summary.str() << std::flush;
}

template <class T>
int run(const Options& o, int rank, int P) {
  const bool complex = !std::is_same_v<T, double>;
  const char* routine = complex ? "pzgemm" : "pdgemm";
  check_options(o);
  const layout::ProcessGrid g = grid_for(o, P);
  if (!library_pilaenv())
    throw std::runtime_error("the library's pilaenv_ was not found (is this ScaLAPACK's PBLAS?)");
  omp_set_num_threads(o.threads);  // OpenBLAS' OpenMP build follows omp_get_max_threads()
  const Blacs blacs = open_grid(g, rank, complex);
  g_panel = o.panel;
  Operands<T> x;
  try {
    x = make_operands<T>(o, g, blacs, rank, P);
  } catch (...) {
    Cblacs_gridexit(blacs.ctxt);
    throw;
  }
  Second<T> second = make_second<T>(o, x.C, routine);
  const Timings t = time_products(o, x, second, g, rank);

  long calls_min = 0;
  MPI_Allreduce(&t.pilaenv_calls, &calls_min, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
  if (o.engine != "cuboid" && o.panel > 0 && calls_min == 0)
    throw std::runtime_error(
        "--panel: pdgemm never called this program's pilaenv_, so the "
        "panel width could not be set (is PBLAS linked with -Bsymbolic?)");
  const Checks checks = check_products(o, x, second, g, blacs, rank);
  Cblacs_gridexit(blacs.ctxt);
  double received_max = 0, speed = t.speed;
  MPI_Reduce(&t.received, &received_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  std::vector<double> rank_speeds(static_cast<std::size_t>(P), 0.0);
  MPI_Gather(&speed, 1, MPI_DOUBLE, rank_speeds.data(), 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (rank == 0)
    report(o, g, P, routine, second.door, blacs, calls_min, t, checks, received_max, rank_speeds);
  const bool paired = second.door || second.library;
  return o.validate && (!checks.scalapack.passed || (paired && !checks.second.passed))
             ? kValidationFailed
             : 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, P = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);

  Options o;
  CLI::App app{"ScaLAPACK pdgemm (or pzgemm) on cuboid's problem and block-cyclic layout",
               "cuboid-pdgemm"};
  app.add_option("--m", o.m, "rows of op(A) and C")->capture_default_str();
  app.add_option("--n", o.n, "columns of op(B) and C")->capture_default_str();
  app.add_option("--k", o.k, "columns of op(A), rows of op(B)")->capture_default_str();
  std::string trans_a = "N", trans_b = "N";
  app.add_option("--trans-a", trans_a, "op(A): N, T or C (A stored k x m unless N)")
      ->check(CLI::IsMember({"N", "T", "C", "n", "t", "c"}))
      ->capture_default_str();
  app.add_option("--trans-b", trans_b, "op(B): N, T or C (B stored n x k unless N)")
      ->check(CLI::IsMember({"N", "T", "C", "n", "t", "c"}))
      ->capture_default_str();
  app.add_option("--block,-b", o.block, "block-cyclic block size (mb = nb)")->capture_default_str();
  app.add_option("--grid", o.grid, "process grid ROWSxCOLS (default: near-square, rows <= cols)");
  app.add_option("--alpha", o.alpha)->capture_default_str();
  app.add_option("--beta", o.beta)->capture_default_str();
  app.add_option("--seed", o.seed, "seed of A, B and C0 (as cuboid's problem.seed)")
      ->capture_default_str();
  app.add_option("--warmup", o.warmup, "untimed products first")->capture_default_str();
  app.add_option("--repetitions,-r", o.repetitions, "timed products")->capture_default_str();
  app.add_option("--threads", o.threads, "OpenMP (BLAS) threads per rank")->capture_default_str();
  app.add_option("--panel", o.panel, "PBLAS k-panel width (0: the library's pilaenv_)")
      ->capture_default_str();
  app.add_flag("!--no-validate", o.validate, "skip the check of C");
  app.add_option("--perturb", o.perturb,
                 "add this to one element of C before the check (tests that the check fails)");
  app.add_option("--json", o.json, "also write the JSON line to this file");
  app.add_option("--offsets", o.offsets,
                 "IA JA IB JB IC JC of the sub-matrices, in blocks from the first (matrices "
                 "stored that much larger); default 0 0 0 0 0 0")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--engine", o.engine,
                 "pdgemm, cuboid (the library's distributed entry on the same arrays), both "
                 "(interleaved) or door (the program's pdgemm_, libcuboid_pxgemm.so preloaded, "
                 "interleaved with ScaLAPACK's own)")
      ->check(CLI::IsMember({"pdgemm", "cuboid", "both", "door"}))
      ->capture_default_str();
  app.add_option("--processors", o.processors, "the cuboid context's processors (--engine)")
      ->capture_default_str();
  std::string type = "d";
  app.add_option("--type", type, "d: pdgemm on doubles, z: pzgemm on complex doubles")
      ->check(CLI::IsMember({"d", "z"}))
      ->capture_default_str();

  int status = 0;
  try {
    app.parse(argc, argv);
    o.trans_a = char(std::toupper(static_cast<unsigned char>(trans_a[0])));
    o.trans_b = char(std::toupper(static_cast<unsigned char>(trans_b[0])));
    o.type = type[0];
    status = o.type == 'z' ? run<std::complex<double>>(o, rank, P) : run<double>(o, rank, P);
  } catch (const CLI::ParseError& e) {
    if (rank == 0)
      status = app.exit(e);
    else
      status = e.get_exit_code();
    if (status != 0) status = kBadInput;
  } catch (const BadInput& e) {
    if (rank == 0) std::cerr << "cuboid-pdgemm: error: " << e.what() << "\n";
    status = kBadInput;
  } catch (const std::exception& e) {
    std::cerr << "cuboid-pdgemm: error (rank " << rank << "): " << e.what() << "\n";
    status = kBadInput;
  }
  MPI_Finalize();
  return status;
}
