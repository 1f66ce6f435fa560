#pragma once
// The BLACS, ScaLAPACK and p?gemm prototypes the p?gemm_ tests call (Debian's ScaLAPACK ships no
// C header for them), and cuboid's prefixed twins from libcuboid_pxgemm.so.
#include <complex>

extern "C" {
void Cblacs_get(int ctxt, int what, int* value);
void Cblacs_gridinit(int* ctxt, const char* order, int rows, int cols);
void Cblacs_gridmap(int* ctxt, int* usermap, int ldumap, int rows, int cols);
void Cblacs_gridinfo(int ctxt, int* rows, int* cols, int* myrow, int* mycol);
void Cblacs_gridexit(int ctxt);
int numroc_(const int* n, const int* nb, const int* p, const int* src, const int* procs);
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb,
               const int* irsrc, const int* icsrc, const int* ictxt, const int* lld, int* info);
void pdgetrf_(const int* m, const int* n, double* a, const int* ia, const int* ja, const int* desca,
              int* ipiv, int* info);
void pdgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* ia,
              const int* ja, const int* desca, const int* ipiv, double* b, const int* ib,
              const int* jb, const int* descb, int* info);
#define CUBOID_PXGEMM_ARGS(T)                                                                 \
  const char *transa, const char *transb, const int *m, const int *n, const int *k,           \
      const T *alpha, const T *a, const int *ia, const int *ja, const int *desca, const T *b, \
      const int *ib, const int *jb, const int *descb, const T *beta, T *c, const int *ic,     \
      const int *jc, const int *descc
void psgemm_(CUBOID_PXGEMM_ARGS(float));
void pdgemm_(CUBOID_PXGEMM_ARGS(double));
void pcgemm_(CUBOID_PXGEMM_ARGS(std::complex<float>));
void pzgemm_(CUBOID_PXGEMM_ARGS(std::complex<double>));
void cuboid_psgemm(CUBOID_PXGEMM_ARGS(float));
void cuboid_pdgemm(CUBOID_PXGEMM_ARGS(double));
void cuboid_pcgemm(CUBOID_PXGEMM_ARGS(std::complex<float>));
void cuboid_pzgemm(CUBOID_PXGEMM_ARGS(std::complex<double>));
#undef CUBOID_PXGEMM_ARGS
}
