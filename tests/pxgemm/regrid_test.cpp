// Grids made and freed one after another, each over its own processes in its own order
// (Cblacs_gridmap with a shuffled map): BLACS may name each grid by a communicator of its own,
// freed with the grid, and MPI gives its handle to a later grid's communicator. cuboid's
// p?gemm_ must serve every grid with that grid's processes in that grid's order: each call is
// compared with ScaLAPACK's pdgemm_ on the same arrays.
//   mpirun -np 4 cuboid-pxgemm-regrid [ROUNDS]
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <vector>

#include "scalapack.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me = 0, P = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 60;
  int failures = 0, served = 0;
  for (int t = 0; t < rounds; ++t) {
    // The same draw on every process: the grid's shape and which process sits where.
    std::mt19937 global(1234u + unsigned(t) * 7919u);
    std::vector<int> order(std::size_t(P), 0);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), global);
    // Mostly every process, so that grids share their size and differ only in order; about half
    // the calls return at once (m = 0), which leaves a freed grid's handle free for longer.
    const int size = global() % 4 == 0 ? 1 + int(global() % unsigned(P)) : P;
    const bool quick = global() % 2 == 0;
    int rows = 1;
    for (int r = 1; r <= size; ++r)
      if (size % r == 0 && global() % 2 == 0) rows = r;
    const int cols = size / rows;
    std::vector<int> map(order.begin(), order.begin() + size);  // column-major, rows x cols
    int ctxt = 0;
    Cblacs_get(-1, 0, &ctxt);
    Cblacs_gridmap(&ctxt, map.data(), rows, rows, cols);
    int pr = 0, pc = 0, myrow = -1, mycol = -1;
    Cblacs_gridinfo(ctxt, &pr, &pc, &myrow, &mycol);
    if (myrow < 0 || myrow >= pr || mycol < 0 || mycol >= pc) continue;
    const int m = quick ? 0 : 7 + t % 5, n = 9, k = 6 + t % 3, nb = 2, zero = 0, one = 1;
    auto local = [&](int extent, int procs, int mine) {
      return std::max(1, numroc_(&extent, &nb, &mine, &zero, &procs));
    };
    auto make = [&](int r, int c, int id, std::vector<double>& data, int* desc) {
      r = std::max(r, 1);
      const int lr = local(r, pr, myrow), lc = local(c, pc, mycol);
      int info = 0;
      descinit_(desc, &r, &c, &nb, &nb, &zero, &zero, &ctxt, &lr, &info);
      data.assign(std::size_t(lr) * std::size_t(lc), 0.0);
      // Element (i, j) from its global indices: a misplaced block changes the product.
      for (int j = 0; j < lc; ++j)
        for (int i = 0; i < lr; ++i) {
          const int gi = (i / nb * pr + myrow) * nb + i % nb,
                    gj = (j / nb * pc + mycol) * nb + j % nb;
          data[std::size_t(i + j * lr)] = std::sin(0.37 * gi + 1.1 * gj + id);
        }
    };
    std::vector<double> A, B, C;
    int da[9], db[9], dc[9];
    make(m, k, 1, A, da);
    make(k, n, 2, B, db);
    make(m, n, 3, C, dc);
    std::vector<double> ref = C, got = C;
    const double alpha = 1.5, beta = 0.5;
    pdgemm_("N", "N", &m, &n, &k, &alpha, A.data(), &one, &one, da, B.data(), &one, &one, db, &beta,
            ref.data(), &one, &one, dc);
    cuboid_pdgemm("N", "N", &m, &n, &k, &alpha, A.data(), &one, &one, da, B.data(), &one, &one, db,
                  &beta, got.data(), &one, &one, dc);
    double worst = 0;
    for (std::size_t e = 0; e < ref.size(); ++e) worst = std::max(worst, std::abs(ref[e] - got[e]));
    if (worst > 1e-12 * k) {
      ++failures;
      std::fprintf(stderr, "round %d (rank %d): grid %dx%d, worst difference %.3g\n", t, me, rows,
                   cols, worst);
    }
    served += !quick;
    Cblacs_gridexit(ctxt);
  }
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (me == 0)
    std::printf("pxgemm regrid: %d rounds on %d processes, %d products on rank 0, %d failed\n",
                rounds, P, served, all);
  MPI_Finalize();
  return all ? 1 : 0;
}
