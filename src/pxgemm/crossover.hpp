#pragma once
// Where p?gemm_ calls become worth taking from ScaLAPACK on a grid: the crossover ladder
// (platform/crossover.hpp) timed with every process of the grid taking part, ScaLAPACK's routine
// against the distributed entry on square matrices in the call's block size.
#include <mpi.h>

#include <cuboid/cuboid.hpp>
#include <string>

namespace cuboid::pxgemm {

// ScaLAPACK's p?gemm_, every argument by reference.
template <class Scalar>
using ScalapackGemm = void (*)(const char*, const char*, const int*, const int*, const int*,
                               const Scalar*, const Scalar*, const int*, const int*, const int*,
                               const Scalar*, const int*, const int*, const int*, const Scalar*,
                               Scalar*, const int*, const int*, const int*);

// The grid a call runs on: its BLACS context, shape, this process's place and the block size.
struct GridCall {
  MPI_Comm comm;
  int ctxt, rows, cols, myrow, mycol, block;
};

// The crossover in flops of `routine` (pdgemm_, ...) on this grid and block, and whether it was
// timed now. From the speed cache when every process of the grid finds it there (the largest
// value when their caches differ), otherwise timed on the grid and stored; every process returns
// the same value. Collective over g.comm.
struct GridCrossover {
  double flops = 0;
  bool measured = false;
};
template <class Scalar>
GridCrossover grid_crossover(Context& context, const GridCall& g, ScalapackGemm<Scalar> scalapack,
                             const std::string& routine);

}  // namespace cuboid::pxgemm
