// cuboid's p?gemm_ reports bad arguments exactly as PBLAS does: for each case below, ScaLAPACK's
// pdgemm_ and cuboid_pdgemm are called with the same arguments, and the routine name and the
// `info` each hands to PB_Cabort must be the same. This program defines PB_Cabort itself (as a
// test harness may), so neither aborts; both must also leave C untouched.
//   mpirun -np 2 cuboid-pxgemm-argcheck
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "scalapack.hpp"

extern "C" {
// Replaces PBLAS's: records the call instead of aborting.
std::string g_routine;
int g_info = 0, g_calls = 0;
void PB_Cabort(int, const char* routine, int info) {
  g_routine = routine;
  g_info = info;
  ++g_calls;
}
}

namespace {

struct Args {
  char ta = 'N', tb = 'N';
  int m = 20, n = 18, k = 22, ia = 1, ja = 1, ib = 1, jb = 1, ic = 1, jc = 1;
  int da[9], db[9], dc[9];
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me = 0, P = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  int ctxt = 0, pr = 0, pc = 0, myrow = 0, mycol = 0;
  Cblacs_get(-1, 0, &ctxt);
  Cblacs_gridinit(&ctxt, "Row", 1, P);
  Cblacs_gridinfo(ctxt, &pr, &pc, &myrow, &mycol);
  const int zero = 0, nb = 4;
  auto desc = [&](int* d, int rows, int cols) {
    const int lr = numroc_(&rows, &nb, &myrow, &zero, &pr);
    const int dd[9] = {1, ctxt, rows, cols, nb, nb, 0, 0, std::max(1, lr)};
    std::memcpy(d, dd, sizeof dd);
  };
  std::vector<double> A(4096, 1.0), B(4096, 1.0), C(4096, 7.0);
  const double alpha = 1.0, beta = 0.5;
  // Each case changes one or two things of a valid call.
  const std::vector<std::pair<const char*, std::function<void(Args&)>>> cases = {
      {"TRANSA", [](Args& x) { x.ta = 'X'; }},
      {"TRANSB", [](Args& x) { x.tb = 'q'; }},
      {"M < 0", [](Args& x) { x.m = -1; }},
      {"N < 0", [](Args& x) { x.n = -3; }},
      {"K < 0", [](Args& x) { x.k = -2; }},
      {"IA < 1", [](Args& x) { x.ia = 0; }},
      {"JB < 1", [](Args& x) { x.jb = 0; }},
      {"IA + M beyond A", [](Args& x) { x.ia = 5; }},
      {"JC + N beyond C", [](Args& x) { x.jc = 3; }},
      {"DESCA type", [](Args& x) { x.da[0] = 7; }},
      {"DESCB context", [](Args& x) { x.db[1] = x.db[1] + 99; }},
      {"DESCC MB", [](Args& x) { x.dc[4] = 0; }},
      {"DESCA NB", [](Args& x) { x.da[5] = -4; }},
      {"DESCB RSRC", [](Args& x) { x.db[6] = 5; }},
      {"DESCC CSRC", [](Args& x) { x.dc[7] = -2; }},
      {"DESCA LLD", [](Args& x) { x.da[8] = 1; }},
      {"DESCB M", [](Args& x) { x.db[2] = 0; }},
      {"two errors: TRANSA and DESCC LLD", [](Args& x) { x.ta = 'Z', x.dc[8] = 0; }},
      {"two errors: M < 0 and IB < 1", [](Args& x) { x.m = -1, x.ib = 0; }},
      {"transposed A too small", [](Args& x) { x.ta = 'T'; }},
  };
  int failures = 0;
  for (const auto& [name, change] : cases) {
    Args x;
    desc(x.da, 20, 22), desc(x.db, 22, 18), desc(x.dc, 20, 18);
    change(x);
    std::vector<double> c1 = C, c2 = C;
    g_calls = 0;
    pdgemm_(&x.ta, &x.tb, &x.m, &x.n, &x.k, &alpha, A.data(), &x.ia, &x.ja, x.da, B.data(), &x.ib,
            &x.jb, x.db, &beta, c1.data(), &x.ic, &x.jc, x.dc);
    const std::string r1 = g_routine;
    const int i1 = g_info, n1 = g_calls;
    g_calls = 0;
    g_routine.clear();
    cuboid_pdgemm(&x.ta, &x.tb, &x.m, &x.n, &x.k, &alpha, A.data(), &x.ia, &x.ja, x.da, B.data(),
                  &x.ib, &x.jb, x.db, &beta, c2.data(), &x.ic, &x.jc, x.dc);
    const std::string r2 = g_routine;
    const int i2 = g_info, n2 = g_calls;
    const bool same = n1 == 1 && n2 == 1 && r1 == r2 && i1 == i2 && c2 == C;
    if (!same) ++failures;
    if (me == 0 || !same)
      std::printf("%-36s ScaLAPACK: %s info %d; cuboid: %s info %d%s\n", name,
                  n1 ? r1.c_str() : "(no abort)", n1 ? i1 : 0, n2 ? r2.c_str() : "(no abort)",
                  n2 ? i2 : 0, same ? "" : "   <-- differs");
  }
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (me == 0) std::printf("argument checks: %zu cases, %d differ\n", cases.size(), all);
  Cblacs_gridexit(ctxt);
  MPI_Finalize();
  return all ? 1 : 0;
}
