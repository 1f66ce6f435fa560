/* A program that calls the BLAS's GEMM as any program does, to run with libcuboid_blas.so
   preloaded: sgemm_, dgemm_, zgemm_ and cblas_dgemm (row-major, transposed) and cblas_zgemm on
   sizes above and below a threshold, one call from inside an OpenMP region and one from a
   forked child. Every product is checked against a long-double triple loop; the exit status
   says whether all were right. */
#include <complex.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void sgemm_(const char*, const char*, const int*, const int*, const int*, const float*,
            const float*, const int*, const float*, const int*, const float*, float*, const int*);
void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*,
            const double*, const int*, const double*, const int*, const double*, double*,
            const int*);
void zgemm_(const char*, const char*, const int*, const int*, const int*, const double complex*,
            const double complex*, const int*, const double complex*, const int*,
            const double complex*, double complex*, const int*);
void cblas_dgemm(int, int, int, int, int, int, double, const double*, int, const double*, int,
                 double, double*, int);
void cblas_zgemm(int, int, int, int, int, int, const void*, const void*, int, const void*, int,
                 const void*, void*, int);

static int failures = 0;

static double value(int i, int salt) { return (double)((i * 37 + salt * 11) % 19 - 9) / 8.0; }

/* Element (i, j) of a column-major matrix stored with leading dimension ld, transposed or not. */
static long double complex at(const double complex* X, int ld, int i, int j, char op) {
  if (op == 'N') return X[i + (long)j * ld];
  if (op == 'T') return X[j + (long)i * ld];
  return conj(X[j + (long)i * ld]);
}

static void check(const char* what, int m, int n, int k, char ta, char tb,
                  const double complex* A, int lda, const double complex* B, int ldb,
                  const double complex* C0, const double complex* C, int ldc,
                  double complex alpha, double complex beta, double tol) {
  double worst = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      long double complex acc = 0;
      for (int l = 0; l < k; ++l) acc += at(A, lda, i, l, ta) * at(B, ldb, l, j, tb);
      const long double complex want = alpha * acc + beta * C0[i + (long)j * ldc];
      const double e = cabs((double complex)(C[i + (long)j * ldc] - want));
      if (e > worst) worst = e;
    }
  const int ok = worst <= tol * k;
  if (!ok) ++failures;
  printf("%s %dx%dx%d %c%c: max error %.3g %s\n", what, m, n, k, ta, tb, worst,
         ok ? "correct" : "WRONG");
}

static double complex* filled(long count, int salt, int complex_values) {
  double complex* x = malloc(sizeof(double complex) * count);
  for (long i = 0; i < count; ++i)
    x[i] = value((int)i, salt) + (complex_values ? I * value((int)i, salt + 3) : 0);
  return x;
}

/* C <- alpha op(A) op(B) + beta C through the named routine, column-major (cblas_dgemm:
   row-major, so the matrices are passed as their transposes). */
static void run_d(const char* routine, int m, int n, int k, char ta, char tb) {
  const int lda = (ta == 'N' ? m : k) + 1, ldb = (tb == 'N' ? k : n) + 2, ldc = m + 3;
  const long ca = (long)lda * (ta == 'N' ? k : m), cb = (long)ldb * (tb == 'N' ? n : k);
  double complex *A = filled(ca, 1, 0), *B = filled(cb, 2, 0), *C0 = filled((long)ldc * n, 3, 0);
  double *a = malloc(sizeof(double) * ca), *b = malloc(sizeof(double) * cb),
         *c = malloc(sizeof(double) * ldc * n);
  for (long i = 0; i < ca; ++i) a[i] = creal(A[i]);
  for (long i = 0; i < cb; ++i) b[i] = creal(B[i]);
  for (long i = 0; i < (long)ldc * n; ++i) c[i] = creal(C0[i]);
  const double alpha = 1.5, beta = -0.5;
  if (strcmp(routine, "dgemm_") == 0) {
    dgemm_(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc);
  } else {
    /* Row-major C^T (n x m, leading dimension ldc) = op(B)^T op(A)^T. */
    const int T = 112, N = 111;
    cblas_dgemm(101, tb == 'N' ? N : T, ta == 'N' ? N : T, n, m, k, alpha, b, ldb, a, lda, beta,
                c, ldc);
  }
  double complex* C = malloc(sizeof(double complex) * ldc * n);
  for (long i = 0; i < (long)ldc * n; ++i) C[i] = c[i];
  check(routine, m, n, k, ta, tb, A, lda, B, ldb, C0, C, ldc, alpha, beta, 1e-13);
  free(A), free(B), free(C0), free(C), free(a), free(b), free(c);
}

static void run_z(const char* routine, int m, int n, int k, char ta, char tb) {
  const int lda = (ta == 'N' ? m : k) + 1, ldb = (tb == 'N' ? k : n), ldc = m + 2;
  const long ca = (long)lda * (ta == 'N' ? k : m), cb = (long)ldb * (tb == 'N' ? n : k);
  double complex *A = filled(ca, 4, 1), *B = filled(cb, 5, 1), *C0 = filled((long)ldc * n, 6, 1);
  double complex* C = malloc(sizeof(double complex) * ldc * n);
  memcpy(C, C0, sizeof(double complex) * ldc * n);
  const double complex alpha = 0.5 - 1.0 * I, beta = 0.25 + 0.5 * I;
  if (strcmp(routine, "zgemm_") == 0)
    zgemm_(&ta, &tb, &m, &n, &k, &alpha, A, &lda, B, &ldb, &beta, C, &ldc);
  else
    cblas_zgemm(102, ta == 'N' ? 111 : ta == 'T' ? 112 : 113, tb == 'N' ? 111 : tb == 'T' ? 112 : 113,
                m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc);
  check(routine, m, n, k, ta, tb, A, lda, B, ldb, C0, C, ldc, alpha, beta, 1e-13);
  free(A), free(B), free(C0), free(C);
}

static void run_s(int m, int n, int k) {
  const int ld = m;
  float *a = malloc(sizeof(float) * m * k), *b = malloc(sizeof(float) * k * n),
        *c = malloc(sizeof(float) * m * n);
  double complex *A = filled((long)m * k, 7, 0), *B = filled((long)k * n, 8, 0),
                 *C0 = calloc((size_t)m * n, sizeof(double complex)),
                 *C = malloc(sizeof(double complex) * m * n);
  for (long i = 0; i < (long)m * k; ++i) a[i] = (float)creal(A[i]);
  for (long i = 0; i < (long)k * n; ++i) b[i] = (float)creal(B[i]);
  const float one = 1, zero = 0;
  sgemm_("N", "N", &m, &n, &k, &one, a, &ld, b, &k, &zero, c, &ld);
  for (long i = 0; i < (long)m * n; ++i) C[i] = c[i];
  check("sgemm_", m, n, k, 'N', 'N', A, ld, B, k, C0, C, ld, 1, 0, 1e-5);
  free(a), free(b), free(c), free(A), free(B), free(C0), free(C);
}

/* cuboid-blas-caller [REPEAT]: each product REPEAT times (default 1); cuboid runs the first call of
   a shape as one GEMM and a later one through its partition. */
int main(int argc, char** argv) {
  const int repeat = argc > 1 ? atoi(argv[1]) : 1;
  for (int r = 0; r < repeat; ++r) {
    run_d("dgemm_", 300, 280, 260, 'N', 'N');
    run_d("dgemm_", 250, 270, 290, 'T', 'N');
    run_d("dgemm_", 16, 16, 16, 'N', 'N'); /* below any threshold: passed on */
    run_d("cblas_dgemm", 260, 240, 280, 'N', 'T');
    run_z("zgemm_", 200, 180, 160, 'C', 'N');
    run_z("cblas_zgemm", 180, 200, 170, 'N', 'T');
    run_s(256, 256, 256);
  }
  /* From inside an OpenMP region: passed on, each thread's product its own. */
#pragma omp parallel num_threads(2)
  {
#pragma omp critical
    run_d("dgemm_", 200, 200, 200, 'N', 'N');
  }
  /* A forked child: its call is passed on, and it exits without waiting for threads it lacks.
     The product is below the size at which OpenBLAS starts threads: GNU OpenMP's threads do not
     survive a fork, and a threaded BLAS call in the child of a process that ran an OpenMP region
     waits forever, whoever computes it. */
  fflush(stdout);
  const pid_t child = fork();
  if (child == 0) {
    run_d("dgemm_", 40, 36, 32, 'N', 'N');
    fflush(stdout);
    _exit(failures ? 1 : 0);
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    printf("forked child failed\n");
    ++failures;
  }
  printf("%s\n", failures ? "FAILED" : "all products correct");
  return failures ? 1 : 0;
}
