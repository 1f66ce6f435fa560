#pragma once
// The BLACS and PBLAS functions p?gemm_ needs, found at run time in the application's ScaLAPACK
// (cuboid does not link it: the library sits in front of it), and the MPI communicator of a
// BLACS grid, made once per grid.
#include <mpi.h>

#include <string>

namespace cuboid::pxgemm {

struct GridInfo {
  int rows = -1, cols = -1, myrow = -1, mycol = -1;
};

// Cblacs_gridinfo; rows = -1 when the context is not a grid this process belongs to.
GridInfo grid_info(int ctxt);

// A communicator over the grid's processes, ranks row-major in the grid (prow * cols + pcol)
// whatever the grid's own order; made on the first call for a grid (collective over its
// processes) and freed when MPI finalises. Throws cuboid::Error when BLACS cannot say.
MPI_Comm grid_communicator(int ctxt, const GridInfo& g);

// PBLAS's error exit (PB_Cabort, which an application or test harness may replace), INFO < 0
// for an illegal argument, > 0 for a failure; when the application has none, prints the message
// and ends the job. Returns only where a replacement returns.
void pblas_abort(int ctxt, const char* routine, int info);

}  // namespace cuboid::pxgemm
