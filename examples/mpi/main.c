/* cuboid's distributed entry from C: C <- alpha A B + beta C on matrices in ScaLAPACK's 2D
 * block-cyclic layout over MPI_COMM_WORLD, each rank holding only its own blocks, checked
 * element by element against a naive loop over the global matrices (every element is a formula
 * of its indices, so any rank can compute any of them).
 *   mpiexec -n P cuboid-example-mpi [PROCESSORS [M N K BLOCK]]
 * Rank 0 prints the result; exits 1 when some element is wrong, 2 on an error. */
#include <cuboid/cuboid_mpi.h>
#include <float.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* Element (i, j) of matrix `id`: a smooth pseudo-random value in (-1, 1). */
static double element(int id, int64_t i, int64_t j) {
  return sin(0.37 * (double)i + 1.13 * (double)j + 2.0 * id) * cos(0.011 * (double)(i * j) + id);
}

/* Global index of local index `l` along an axis in blocks of nb over `procs` coordinates. */
static int64_t global_index(int64_t l, int64_t nb, int coord, int procs) {
  return ((l / nb) * procs + coord) * nb + l % nb;
}

/* This rank's local array of the rows x cols matrix `id` (leading dimension lr). */
static double* local_matrix(int id, int64_t rows, int64_t cols, int64_t nb, int prow, int pcol,
                            int grid_rows, int grid_cols, int64_t* lr, int64_t* lc) {
  *lr = cuboid_local_extent(rows, nb, prow, grid_rows);
  *lc = cuboid_local_extent(cols, nb, pcol, grid_cols);
  double* x = malloc(sizeof(double) * (size_t)(*lr > 0 ? *lr : 1) * (size_t)(*lc > 0 ? *lc : 1));
  for (int64_t j = 0; j < *lc; ++j)
    for (int64_t i = 0; i < *lr; ++i)
      x[i + j * *lr] = element(id, global_index(i, nb, prow, grid_rows),
                               global_index(j, nb, pcol, grid_cols));
  return x;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me = 0, P = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  const char* processors = argc > 1 ? argv[1] : "host";
  const int64_t m = argc > 5 ? atoll(argv[2]) : 300, n = argc > 5 ? atoll(argv[3]) : 260;
  const int64_t k = argc > 5 ? atoll(argv[4]) : 340, nb = argc > 5 ? atoll(argv[5]) : 64;
  const double alpha = 1.5, beta = -0.5;

  cuboid_options options;
  cuboid_options_init(&options);
  options.processors = processors;
  cuboid_context* context = NULL;
  char message[512];
  if (cuboid_create(&options, &context, message, sizeof message) != CUBOID_SUCCESS) {
    fprintf(stderr, "rank %d: cuboid_create: %s\n", me, message);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  /* The grid cuboid chooses for 0 x 0: the most nearly square, rows <= cols. */
  int grid_rows = 1;
  for (int r = 1; r * r <= P; ++r)
    if (P % r == 0) grid_rows = r;
  const int grid_cols = P / grid_rows;
  const int prow = me / grid_cols, pcol = me % grid_cols;
  int64_t ar, ac, br, bc, cr, cc;
  double* A = local_matrix(1, m, k, nb, prow, pcol, grid_rows, grid_cols, &ar, &ac);
  double* B = local_matrix(2, k, n, nb, prow, pcol, grid_rows, grid_cols, &br, &bc);
  double* C = local_matrix(3, m, n, nb, prow, pcol, grid_rows, grid_cols, &cr, &cc);

  /* Every matrix's first block on process (0, 0). */
  const cuboid_block_cyclic layout = {grid_rows, grid_cols, nb, {0, 0}, {0, 0}, {0, 0}};
  const double t0 = MPI_Wtime();
  const cuboid_status s =
      cuboid_dgemm_distributed(context, MPI_COMM_WORLD, &layout, 'N', 'N', m, n, k, alpha, A,
                               ar > 0 ? ar : 1, B, br > 0 ? br : 1, beta, C, cr > 0 ? cr : 1);
  const double seconds = MPI_Wtime() - t0;
  if (s != CUBOID_SUCCESS) {
    fprintf(stderr, "rank %d: cuboid_dgemm_distributed: %s\n", me, cuboid_last_error(context));
    MPI_Abort(MPI_COMM_WORLD, 2);
  }

  /* Each rank checks its own elements within the rounding bound (2k + 2) eps (|alpha| |A||B| +
   * |beta| |C0|). */
  long wrong = 0;
  for (int64_t j = 0; j < cc; ++j)
    for (int64_t i = 0; i < cr; ++i) {
      const int64_t gi = global_index(i, nb, prow, grid_rows);
      const int64_t gj = global_index(j, nb, pcol, grid_cols);
      double ab = 0, ab_abs = 0;
      for (int64_t l = 0; l < k; ++l) {
        const double p = element(1, gi, l) * element(2, l, gj);
        ab += p;
        ab_abs += fabs(p);
      }
      const double c0 = element(3, gi, gj), want = alpha * ab + beta * c0;
      const double bound = (double)(2 * k + 2) * DBL_EPSILON * (fabs(alpha) * ab_abs + fabs(beta * c0));
      if (!(fabs(C[i + j * cr] - want) <= bound)) ++wrong;
    }
  long all_wrong = 0;
  MPI_Reduce(&wrong, &all_wrong, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (me == 0) {
    printf("cuboid distributed %lldx%lldx%lld on %d ranks (%dx%d grid, blocks of %lld, %s): "
           "%.3f s, %s (%ld wrong elements)\n",
           (long long)m, (long long)n, (long long)k, P, grid_rows, grid_cols, (long long)nb,
           processors, seconds, all_wrong ? "WRONG" : "correct", all_wrong);
  }
  free(A);
  free(B);
  free(C);
  cuboid_destroy(context);
  MPI_Finalize();
  return all_wrong ? 1 : 0;
}
