/* The cost of a GEMM call that the BLAS drop-in passes on: COUNT calls of dgemm_ on SIZE^3
   (default 64^3, 20000 calls), timed as one batch, repeated REPS times; prints the median
   seconds per call. Run it plain and with libcuboid_blas.so preloaded to compare.
     cuboid-blas-small-calls [SIZE [COUNT [REPS]]] */
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
  const int n = argc > 1 ? atoi(argv[1]) : 64;
  const int count = argc > 2 ? atoi(argv[2]) : 20000;
  const int reps = argc > 3 ? atoi(argv[3]) : 5;
  if (n <= 0 || count <= 0 || reps <= 0 || reps > 99) {
    fprintf(stderr, "usage: %s [SIZE>0 [COUNT>0 [REPS 1..99]]]\n", argv[0]);
    return 2;
  }
  double *a = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n * n),
         *c = malloc(sizeof(double) * n * n);
  if (!a || !b || !c) {
    fprintf(stderr, "%s: no memory for three %d^2 matrices\n", argv[0], n);
    return 1;
  }
  for (long i = 0; i < (long)n * n; ++i) a[i] = b[i] = 1.0 / (1 + i % 7), c[i] = 0;
  const double one = 1, zero = 0;
  for (int i = 0; i < 100; ++i) dgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n);
  double t[99];
  for (int r = 0; r < reps; ++r) {
    const double t0 = now();
    for (int i = 0; i < count; ++i)
      dgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n);
    t[r] = (now() - t0) / count;
  }
  qsort(t, reps, sizeof(double), by_value);
  /* The product's first element, so that the calls are not optimised away and are checked:
     every element of a row of A times a column of B, summed. */
  double want = 0;
  for (int l = 0; l < n; ++l) want += a[(long)l * n] * b[l];
  const int right = c[0] > want * (1 - 1e-12) && c[0] < want * (1 + 1e-12);
  printf("{\"size\": %d, \"calls\": %d, \"seconds_per_call\": %.4g, \"checked\": %s}\n", n, count,
         t[reps / 2], right ? "true" : "false");
  free(a), free(b), free(c);
  return right ? 0 : 1;
}
