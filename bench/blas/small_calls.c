/* The cost of a GEMM call that the BLAS drop-in passes on: COUNT calls of dgemm_ on SIZE^3
   (default 64^3, 20000 calls), timed as one batch, repeated REPS times; prints the median
   seconds per call. Run it plain and with libcuboid_blas.so preloaded to compare. SIZE may also
   be MxNxK (scripts/compare-pxgemm's compute floor: one large call per batch).
     cuboid-blas-small-calls [SIZE|MxNxK [COUNT [REPS]]] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*,
            const double*, const int*, const double*, const int*, const double*, double*,
            const int*);

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  int m = 64, n = 64, k = 64;
  if (argc > 1) {
    char extra;
    if (sscanf(argv[1], "%dx%dx%d%c", &m, &n, &k, &extra) != 3) {
      if (sscanf(argv[1], "%d%c", &n, &extra) != 1) n = 0;
      m = k = n;
    }
  }
  const int count = argc > 2 ? atoi(argv[2]) : 20000;
  const int reps = argc > 3 ? atoi(argv[3]) : 5;
  if (m <= 0 || n <= 0 || k <= 0 || count <= 0 || reps <= 0 || reps > 99) {
    fprintf(stderr, "usage: %s [SIZE|MxNxK (each >0) [COUNT>0 [REPS 1..99]]]\n", argv[0]);
    return 2;
  }
  double *a = malloc(sizeof(double) * m * (size_t)k), *b = malloc(sizeof(double) * k * (size_t)n),
         *c = malloc(sizeof(double) * m * (size_t)n);
  if (!a || !b || !c) {
    fprintf(stderr, "%s: no memory for %dx%dx%d matrices\n", argv[0], m, n, k);
    return 1;
  }
  for (long i = 0; i < (long)m * k; ++i) a[i] = 1.0 / (1 + i % 7);
  for (long i = 0; i < (long)k * n; ++i) b[i] = 1.0 / (1 + i % 7);
  for (long i = 0; i < (long)m * n; ++i) c[i] = 0;
  const double one = 1, zero = 0;
  /* Warm: the calls' own buffers and the pages of the matrices. */
  const int warm = count < 100 ? 1 : 100;
  for (int i = 0; i < warm; ++i) dgemm_("N", "N", &m, &n, &k, &one, a, &m, b, &k, &zero, c, &m);
  double t[99];
  for (int r = 0; r < reps; ++r) {
    const double t0 = now();
    for (int i = 0; i < count; ++i)
      dgemm_("N", "N", &m, &n, &k, &one, a, &m, b, &k, &zero, c, &m);
    t[r] = (now() - t0) / count;
  }
  qsort(t, reps, sizeof(double), by_value);
  /* The product's first element, so that the calls are not optimised away and are checked:
     every element of a row of A times a column of B, summed. */
  double want = 0;
  for (int l = 0; l < k; ++l) want += a[(long)l * m] * b[l];
  const int right = c[0] > want * (1 - 1e-12) && c[0] < want * (1 + 1e-12);
  printf("{\"size\": %d, \"m\": %d, \"n\": %d, \"k\": %d, \"calls\": %d, "
         "\"seconds_per_call\": %.4g, \"checked\": %s}\n",
         n, m, n, k, count, t[reps / 2], right ? "true" : "false");
  free(a), free(b), free(c);
  return right ? 0 : 1;
}
