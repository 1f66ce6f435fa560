/* cuboid from C: C <- alpha A B + beta C through cuboid.h, checked against a naive loop.
 *   cuboid-example-c [PROCESSORS [M N K]]     e.g. cuboid-example-c host,staged 512 448 384
 * Prints the time of the first call (which measures the processors' speeds when there is more
 * than one and none are cached) and of a second one; exits 1 when the product is wrong, 2 when
 * cuboid reports an error. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <cuboid/cuboid.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Values in [-1, 1) from a fixed linear congruential sequence: the same matrices every run. */
static double* random_matrix(int64_t rows, int64_t cols, uint64_t seed) {
  double* x = malloc(sizeof(double) * (size_t)(rows * cols));
  if (!x) return NULL;
  for (int64_t i = 0; i < rows * cols; ++i) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    x[i] = (double)(seed >> 11) / (double)(1ULL << 52) - 1.0;
  }
  return x;
}

/* How many elements of C differ from alpha A B + beta C0, computed by a naive loop, by more than
 * the rounding of either computation allows: (2k + 2) eps (|alpha| |A||B| + |beta| |C0|). */
static int64_t wrong_elements(int64_t m, int64_t n, int64_t k, double alpha, const double* A,
                              const double* B, double beta, const double* C0, const double* C) {
  int64_t wrong = 0;
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      double ab = 0, ab_abs = 0;
      for (int64_t l = 0; l < k; ++l) {
        const double p = A[i + l * m] * B[l + j * k];
        ab += p;
        ab_abs += fabs(p);
      }
      const double want = alpha * ab + beta * C0[i + j * m];
      const double bound =
          (double)(2 * k + 2) * DBL_EPSILON * (fabs(alpha) * ab_abs + fabs(beta * C0[i + j * m]));
      if (!(fabs(C[i + j * m] - want) <= bound)) ++wrong;
    }
  return wrong;
}

int main(int argc, char** argv) {
  const char* processors = argc > 1 ? argv[1] : "host";
  const int64_t m = argc > 4 ? atoll(argv[2]) : 512;
  const int64_t n = argc > 4 ? atoll(argv[3]) : 448;
  const int64_t k = argc > 4 ? atoll(argv[4]) : 384;
  if (m <= 0 || n <= 0 || k <= 0) {
    fprintf(stderr, "usage: %s [PROCESSORS [M N K]] (positive sizes)\n", argv[0]);
    return 2;
  }
  const double alpha = 1.5, beta = -0.5;
  double* A = random_matrix(m, k, 1);
  double* B = random_matrix(k, n, 2);
  double* C0 = random_matrix(m, n, 3);
  double* C = malloc(sizeof(double) * (size_t)(m * n));
  if (!A || !B || !C0 || !C) {
    fprintf(stderr, "cuboid-example-c: out of memory\n");
    return 2;
  }

  cuboid_options options;
  cuboid_options_init(&options);
  options.processors = processors;
  cuboid_context* context = NULL;
  char message[512];
  if (cuboid_create(&options, &context, message, sizeof message) != CUBOID_SUCCESS) {
    fprintf(stderr, "cuboid-example-c: %s\n", message);
    return 2;
  }
  double seconds[2];
  int64_t wrong = 0;
  for (int call = 0; call < 2; ++call) {
    memcpy(C, C0, sizeof(double) * (size_t)(m * n));
    const double t0 = now_s();
    if (cuboid_dgemm(context, 'N', 'N', m, n, k, alpha, A, m, B, k, beta, C, m) != CUBOID_SUCCESS) {
      fprintf(stderr, "cuboid-example-c: %s\n", cuboid_last_error(context));
      cuboid_destroy(context);
      return 2;
    }
    seconds[call] = now_s() - t0;
    wrong += wrong_elements(m, n, k, alpha, A, B, beta, C0, C);
  }
  cuboid_destroy(context);
  printf(
      "cuboid-example-c: %lldx%lldx%lld on %s: first call %.4f s, second %.4f s (%.2f GFLOP/s)\n",
      (long long)m, (long long)n, (long long)k, processors, seconds[0], seconds[1],
      2e-9 * (double)m * (double)n * (double)k / seconds[1]);
  free(A);
  free(B);
  free(C0);
  free(C);
  if (wrong > 0) {
    printf("cuboid-example-c: WRONG: %lld elements outside the rounding bound\n", (long long)wrong);
    return 1;
  }
  printf("cuboid-example-c: correct: every element within the rounding bound\n");
  return 0;
}
