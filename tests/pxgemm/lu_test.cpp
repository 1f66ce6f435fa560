// An unchanged ScaLAPACK routine over cuboid's pdgemm_: pdgetrf_ factors a random matrix and
// pdgetrs_ solves A x = b for b = A x_true; the LU's trailing updates call pdgemm_, which the
// test expects cuboid to have served (CUBOID_PXGEMM_REPORT lines counted by the caller). Exit 0
// when x agrees with x_true within the backward-error bound, 1 otherwise.
//   mpirun -np 4 cuboid-pxgemm-lu [N [NB]]     (run with libcuboid_pxgemm.so preloaded)
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "scalapack.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me = 0, P = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  const int n = argc > 1 ? std::atoi(argv[1]) : 300, nb = argc > 2 ? std::atoi(argv[2]) : 24;
  int rows = 1;
  for (int r = 1; r * r <= P; ++r)
    if (P % r == 0) rows = r;
  const int cols = P / rows, zero = 0, one = 1;
  int ctxt = 0;
  Cblacs_get(-1, 0, &ctxt);
  Cblacs_gridinit(&ctxt, "Row", rows, cols);
  int pr, pc, myrow, mycol;
  Cblacs_gridinfo(ctxt, &pr, &pc, &myrow, &mycol);
  const int lr = numroc_(&n, &nb, &myrow, &zero, &pr), lc = numroc_(&n, &nb, &mycol, &zero, &pc);
  const int lcb = numroc_(&one, &nb, &mycol, &zero, &pc), lld = std::max(1, lr);
  int desca[9], descb[9], info = 0;
  descinit_(desca, &n, &n, &nb, &nb, &zero, &zero, &ctxt, &lld, &info);
  descinit_(descb, &n, &one, &nb, &nb, &zero, &zero, &ctxt, &lld, &info);
  // A(i, j) and x_true(i) are formulas of the global indices, so every rank knows b = A x_true.
  auto a_of = [&](int i, int j) {
    return std::sin(0.7 * i + 1.3 * j) + (i == j ? 2.0 : 0.0) + 0.01 * ((i * 7 + j * 3) % 11);
  };
  auto x_of = [](int i) { return std::cos(0.3 * i); };
  auto global = [&](int l, int p, int procs) { return ((l / nb) * procs + p) * nb + l % nb; };
  std::vector<double> A(std::size_t(lld) * std::size_t(std::max(1, lc))),
      B(std::size_t(lld) * std::size_t(std::max(1, lcb)));
  for (int j = 0; j < lc; ++j)
    for (int i = 0; i < lr; ++i)
      A[std::size_t(i + j * lld)] = a_of(global(i, myrow, pr), global(j, mycol, pc));
  double a_norm = 0;
  for (int i = 0; i < lr; ++i) {
    const int gi = global(i, myrow, pr);
    double s = 0, row = 0;
    for (int j = 0; j < n; ++j) s += a_of(gi, j) * x_of(j), row += std::abs(a_of(gi, j));
    a_norm = std::max(a_norm, row);
    if (lcb > 0) B[std::size_t(i)] = s;
  }
  MPI_Allreduce(MPI_IN_PLACE, &a_norm, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  std::vector<int> ipiv(std::size_t(lr + nb));
  pdgetrf_(&n, &n, A.data(), &one, &one, desca, ipiv.data(), &info);
  if (info != 0) {
    std::fprintf(stderr, "pdgetrf_: info %d\n", info);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  pdgetrs_("N", &n, &one, A.data(), &one, &one, desca, ipiv.data(), B.data(), &one, &one, descb,
           &info);
  double err = 0;
  if (lcb > 0)
    for (int i = 0; i < lr; ++i)
      err = std::max(err, std::abs(B[std::size_t(i)] - x_of(global(i, myrow, pr))));
  MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  // Generous against a well-conditioned matrix (diagonally weighted): 1e-8.
  const bool ok = err < 1e-8;
  if (me == 0)
    std::printf(
        "pdgetrf_ + pdgetrs_ on %dx%d (blocks of %d, %dx%d grid): max |x - x_true| = %.3g: %s\n", n,
        n, nb, pr, pc, err, ok ? "correct" : "WRONG");
  Cblacs_gridexit(ctxt);
  MPI_Finalize();
  return ok ? 0 : 1;
}
