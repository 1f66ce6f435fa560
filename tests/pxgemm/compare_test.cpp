// cuboid's p?gemm_ against ScaLAPACK's own, case by case: random shapes (sizes that are not
// multiples of any block, zeros included), every op pair, offsets IA/JA/IB/JB/IC/JC, blocks that
// differ between rows and columns and between A, B and C, first blocks of their own size (type 2
// descriptors), any source process or a replicated axis (-1), padded LLD, grids
// from 1 x 1 to the whole job in row- and column-major BLACS order (grids over a subset of the
// processes too), alpha and beta including 0 and 1, NaN in C when beta = 0; and a quarter of the
// cases block-aligned (one square block for all, sub-matrices from block boundaries, sources
// anywhere). Cuboid must compute those in place, and any case whose grid axes of one process
// make blocks irrelevant there: with CUBOID_PXGEMM_REPORT set, the report's calls in place are
// counted against the cases that are. This program links
// ScaLAPACK before libcuboid_pxgemm.so, so pdgemm_ is ScaLAPACK's and cuboid_pdgemm cuboid's; both
// run on copies of the same local arrays, and every local element of C must agree: inside the
// sub-matrix within the rounding bound, outside it bit for bit (neither may touch it).
//   mpirun -np 4 cuboid-pxgemm-compare [CASES [SEED]]
#include <mpi.h>

#include <array>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "scalapack.hpp"

namespace {

struct Matrix {
  int desc[11] = {};         // 9 entries for type 1, 11 for type 2 (first blocks of their own size)
  std::vector<double> data;  // the local array, as doubles (cast per precision)
};

// One axis of a matrix: `n` indices in blocks of `nb`, the first `first` long, dealt from `src`
// over `procs` (src = -1: every process holds them all). Local extent and global index of a
// local index, written out independently of the library's own.
struct AxisOf {
  int n, nb, first, src, procs;
  int extent(int p) const {
    if (src < 0) return n;
    int count = 0;
    for (int g = 0, b = 0; g < n; ++b) {
      const int len = std::min(n - g, b == 0 ? first : nb);
      if ((src + b) % procs == p) count += len;
      g += len;
    }
    return count;
  }
  int global(int l, int p) const {
    if (src < 0) return l;
    for (int g = 0, b = 0, seen = 0; g < n; ++b) {
      const int len = std::min(n - g, b == 0 ? first : nb);
      if ((src + b) % procs == p) {
        if (l < seen + len) return g + (l - seen);
        seen += len;
      }
      g += len;
    }
    return -1;
  }
};

// A matrix of the case: its descriptor drawn from the case's stream (the same on every process),
// its padding from this process's; element (i, j) a formula of the indices, so that replicated
// copies agree.
Matrix make(std::mt19937& shared, std::mt19937& local, int ctxt, int id, int rows, int cols,
            int prows, int pcols, int myrow, int mycol, int mb, int nb, bool aligned) {
  std::uniform_int_distribution<int> coin(0, 9);
  // Aligned: whole first blocks (type 2 with IMB = MB now and then) and sources on the grid.
  const bool inb_type = coin(shared) < 3;
  const int imb = inb_type && !aligned ? 1 + int(shared() % unsigned(mb)) : mb;
  const int inb = inb_type && !aligned ? 1 + int(shared() % unsigned(nb)) : nb;
  const int rsrc = coin(shared) == 0 && !aligned ? -1 : int(shared() % unsigned(prows));
  const int csrc = coin(shared) == 0 && !aligned ? -1 : int(shared() % unsigned(pcols));
  const AxisOf R{rows, mb, imb, rsrc, prows}, Cl{cols, nb, inb, csrc, pcols};
  const int lr = R.extent(myrow), lc = Cl.extent(mycol);
  const int lld = std::max(1, lr) + int(local() % 4u);
  Matrix x;
  if (inb_type) {
    const int d[11] = {2, ctxt, rows, cols, imb, inb, mb, nb, rsrc, csrc, lld};
    std::memcpy(x.desc, d, sizeof d);
  } else {
    const int d[9] = {1, ctxt, rows, cols, mb, nb, rsrc, csrc, lld};
    std::memcpy(x.desc, d, sizeof d);
  }
  x.data.assign(std::size_t(lld) * std::size_t(std::max(1, lc)), 0.0);
  std::uniform_real_distribution<double> u(-1, 1);
  for (auto& v : x.data) v = u(local);  // the padding
  for (int j = 0; j < lc; ++j)
    for (int i = 0; i < lr; ++i) {
      const double gi = R.global(i, myrow), gj = Cl.global(j, mycol);
      x.data[std::size_t(i + j * lld)] =
          std::sin(0.61 * gi + 1.37 * gj + 2.1 * id) * std::cos(0.013 * gi * gj + 0.7 * id);
    }
  return x;
}

// Whether cuboid can compute on the caller's arrays: along each grid axis of more than one
// process, every matrix's blocks (the first one too) of one size, square where both axes have
// several, sub-matrices from block boundaries, and no replicated matrix.
bool in_place_layout(std::array<const int*, 3> desc, std::array<int, 3> first_rows,
                     std::array<int, 3> first_cols, int prows, int pcols) {
  auto mb = [](const int* d) { return d[0] == 1 ? d[4] : d[6]; };
  auto nb = [](const int* d) { return d[0] == 1 ? d[5] : d[7]; };
  // The first block's edges sit where a type 1 descriptor has its blocks'.
  auto imb = [](const int* d) { return d[4]; };
  auto inb = [](const int* d) { return d[5]; };
  auto src = [](const int* d, int axis) { return d[0] == 1 ? d[6 + axis] : d[8 + axis]; };
  const int block = prows > 1 ? mb(desc[2]) : nb(desc[2]);
  for (int x = 0; x < 3; ++x) {
    const int* d = desc[std::size_t(x)];
    if (src(d, 0) < 0 || src(d, 1) < 0) return false;
    if (prows > 1 &&
        (mb(d) != block || imb(d) != block || (first_rows[std::size_t(x)] - 1) % block))
      return false;
    if (pcols > 1 &&
        (nb(d) != block || inb(d) != block || (first_cols[std::size_t(x)] - 1) % block))
      return false;
  }
  return true;
}

// The local array in the case's precision; complex ones take an imaginary part made from each
// element's own value (so that replicated copies still agree).
template <class T>
std::vector<T> as(const std::vector<double>& v) {
  std::vector<T> out(v.size());
  for (std::size_t e = 0; e < v.size(); ++e) {
    if constexpr (std::is_floating_point_v<T>)
      out[e] = T(v[e]);
    else
      out[e] = T(typename T::value_type(v[e]), typename T::value_type(std::sin(3 * v[e] + 1)));
  }
  return out;
}

template <class T>
double magnitude_difference(const T& x, const T& y) {
  return double(std::abs(x - y));
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me = 0, P = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  const int cases = argc > 1 ? std::atoi(argv[1]) : 200;
  const unsigned seed = argc > 2 ? unsigned(std::atoi(argv[2])) : 2026u;
  // The grids: every r x c with r * c <= P, in both orders.
  std::vector<std::pair<int, int>> grids;
  for (int r = 1; r <= P; ++r)
    for (int c = 1; r * c <= P; ++c) grids.push_back({r, c});
  int failures = 0, run = 0, in_place = 0;
  const char* report = std::getenv("CUBOID_PXGEMM_REPORT");
  if (report && me == 0) std::remove(report);
  MPI_Barrier(MPI_COMM_WORLD);
  for (int t = 0; t < cases; ++t) {
    // Every rank draws the same global choices (same seed); local arrays differ by rank.
    std::mt19937 global(seed + unsigned(t) * 7919u);
    std::uniform_int_distribution<int> grid_pick(0, int(grids.size()) - 1), size(0, 37),
        block(1, 9), off(1, 4), op(0, 2), coin(0, 3);
    const auto [gr, gc] = grids[std::size_t(grid_pick(global))];
    const bool col_major = coin(global) == 0;
    const int type = coin(global);  // s, d, c, z
    const char type_name = "sdcz"[type];
    const int m = size(global), n = size(global), k = size(global);
    const char ops[3] = {'N', 'T', 'C'};
    const char ta = ops[op(global)], tb = ops[op(global)];
    int ia = off(global), ja = off(global), ib = off(global), jb = off(global), ic = off(global),
        jc = off(global);
    int amb = block(global), anb = block(global), bmb = block(global), bnb = block(global),
        cmb = block(global), cnb = block(global);
    const double alphas[4] = {1.0, 0.0, -0.75, 2.5}, betas[4] = {0.0, 1.0, 0.5, -1.25};
    const double alpha = alphas[coin(global)], beta = betas[coin(global)];
    const bool aligned = coin(global) == 0;
    if (aligned) {
      amb = anb = bmb = bnb = cmb = cnb;
      for (int* x : {&ia, &ja, &ib, &jb, &ic, &jc}) *x = 1 + (*x - 1) * cnb;
    }
    // A product to form (alpha = 0 or k = 0 only scales C, and with beta = 1 too returns at once).
    const bool product = m > 0 && n > 0 && k > 0 && alpha != 0.0;
    bool expect_in_place = false;
    int ctxt = 0;
    Cblacs_get(-1, 0, &ctxt);
    Cblacs_gridinit(&ctxt, col_major ? "Col" : "Row", gr, gc);
    int pr = 0, pc = 0, myrow = -1, mycol = -1;
    Cblacs_gridinfo(ctxt, &pr, &pc, &myrow, &mycol);
    if (std::getenv("CUBOID_COMPARE_VERBOSE") && me == 0)
      std::fprintf(stderr,
                   "case %d: %c%c m=%d n=%d k=%d grid %dx%d %s ia=%d,%d ib=%d,%d ic=%d,%d "
                   "blocks A %dx%d B %dx%d C %dx%d alpha=%g beta=%g %s\n",
                   t, ta, tb, m, n, k, gr, gc, col_major ? "col" : "row", ia, ja, ib, jb, ic, jc,
                   amb, anb, bmb, bnb, cmb, cnb, alpha, beta, std::string(1, type_name).c_str());
    if (myrow >= 0 && myrow < pr && mycol >= 0 && mycol < pc) {
      // The same descriptors everywhere: draw their sources from the global stream.
      std::mt19937 shared = global;
      const int ar = (ta == 'N' ? m : k) + ia - 1, acl = (ta == 'N' ? k : m) + ja - 1;
      const int br = (tb == 'N' ? k : n) + ib - 1, bcl = (tb == 'N' ? n : k) + jb - 1;
      const int cr = m + ic - 1, ccl = n + jc - 1;
      std::mt19937 mine(seed + unsigned(t) * 104729u + unsigned(me) * 31u);
      int id = 0;
      auto build = [&](int rows, int cols, int mb, int nb) {
        return make(shared, mine, ctxt, ++id + t * 3, std::max(rows, 1), std::max(cols, 1), pr, pc,
                    myrow, mycol, mb, nb, aligned);
      };
      Matrix A = build(ar, acl, amb, anb), B = build(br, bcl, bmb, bnb),
             C = build(cr, ccl, cmb, cnb);
      expect_in_place =
          product && in_place_layout({A.desc, B.desc, C.desc}, {ia, ib, ic}, {ja, jb, jc}, pr, pc);
      if (beta == 0.0)
        for (auto& v : C.data) v = std::numeric_limits<double>::quiet_NaN();
      std::vector<double> ref = C.data, got = C.data;
      double worst = 0;
      bool outside_ok = true;
      auto compare = [&](const auto& r, const auto& g, double eps) {
        for (std::size_t e = 0; e < r.size(); ++e) {
          const bool rn = std::isnan(std::abs(r[e])), gn = std::isnan(std::abs(g[e]));
          if (rn && gn) continue;
          if (rn != gn) {
            outside_ok = false;
            continue;
          }
          worst = std::max(worst, magnitude_difference(r[e], g[e]) / (eps * double(k + 2)));
        }
      };
      // ScaLAPACK's and cuboid's p?gemm on copies of the same arrays, in the case's precision.
      auto both = [&](auto zero, auto scalapack, auto mine, double eps) {
        using T = decltype(zero);
        auto At = as<T>(A.data), Bt = as<T>(B.data), R = as<T>(ref), G = as<T>(got);
        if (beta == 0.0)
          for (std::size_t e = 0; e < R.size(); ++e) R[e] = G[e] = T(std::nan(""));
        T al = T(alpha), be = T(beta);
        if constexpr (!std::is_floating_point_v<T>)
          if (alpha != 0.0) al = T(typename T::value_type(alpha), typename T::value_type(0.5));
        scalapack(&ta, &tb, &m, &n, &k, &al, At.data(), &ia, &ja, A.desc, Bt.data(), &ib, &jb,
                  B.desc, &be, R.data(), &ic, &jc, C.desc);
        mine(&ta, &tb, &m, &n, &k, &al, At.data(), &ia, &ja, A.desc, Bt.data(), &ib, &jb, B.desc,
             &be, G.data(), &ic, &jc, C.desc);
        compare(R, G, eps);
      };
      const double fe = std::numeric_limits<float>::epsilon(),
                   de = std::numeric_limits<double>::epsilon();
      if (type == 0) both(0.0f, psgemm_, cuboid_psgemm, 4 * fe);
      if (type == 1) both(0.0, pdgemm_, cuboid_pdgemm, 4 * de);
      if (type == 2) both(std::complex<float>(0), pcgemm_, cuboid_pcgemm, 8 * fe);
      if (type == 3) both(std::complex<double>(0), pzgemm_, cuboid_pzgemm, 8 * de);
      const int bad = worst > 1.0 || !outside_ok;
      if (bad)
        std::fprintf(stderr,
                     "case %d (rank %d): %s %c%c m=%d n=%d k=%d grid %dx%d %s ia=%d,%d ib=%d,%d "
                     "ic=%d,%d blocks A %dx%d B %dx%d C %dx%d alpha=%g beta=%g: worst %.3g of the "
                     "bound%s\n",
                     t, me,
                     type == 0   ? "psgemm"
                     : type == 1 ? "pdgemm"
                     : type == 2 ? "pcgemm"
                                 : "pzgemm",
                     ta, tb, m, n, k, gr, gc, col_major ? "col-major" : "row-major", ia, ja, ib, jb,
                     ic, jc, amb, anb, bmb, bnb, cmb, cnb, alpha, beta, worst,
                     outside_ok ? "" : ", NaN differs");
      failures += bad;
      Cblacs_gridexit(ctxt);
    }
    // Each case on a grid is reported once, by the grid's first process (the job's rank 0's
    // grid always includes it).
    in_place += expect_in_place && me == 0;
    ++run;
  }
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (report && me == 0) {
    // The report's calls in place against the cases that are: each once, none more.
    std::FILE* f = std::fopen(report, "r");
    int reported = 0;
    char line[8192];
    while (f && std::fgets(line, sizeof line, f))
      reported += std::strstr(line, "\"path\":\"in place\"") != nullptr;
    if (f) std::fclose(f);
    std::printf("pxgemm compare: %d cases with a product in place, %d calls in place\n", in_place,
                reported);
    if (reported != in_place || in_place == 0) ++all;
  }
  if (me == 0) std::printf("pxgemm compare: %d cases on %d processes, %d failed\n", run, P, all);
  MPI_Finalize();
  return all ? 1 : 0;
}
