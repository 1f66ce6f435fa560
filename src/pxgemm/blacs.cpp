#include "pxgemm/blacs.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <memory>
#include <mutex>
#include <vector>

#include <cuboid/error.hpp>

#include "mpi/attribute.hpp"
#include "mpi/communicator.hpp"

namespace cuboid::pxgemm {
namespace {

template <class F>
F symbol(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
}

using GridInfoFn = void (*)(int, int*, int*, int*, int*);
using GetFn = void (*)(int, int, int*);
using Sys2CommFn = MPI_Comm (*)(int);
using PnumFn = int (*)(int, int, int);
using AbortFn = void (*)(int, const char*, int);

GridInfoFn gridinfo_fn() {
  static const GridInfoFn f = symbol<GridInfoFn>("Cblacs_gridinfo");
  if (!f)
    throw Error(
        "p?gemm_: Cblacs_gridinfo not found: cuboid's p?gemm_ serves applications linked with "
        "ScaLAPACK (BLACS)");
  return f;
}

std::mutex& cache_mutex() {
  static std::mutex m;
  return m;
}
// What a system communicator was last seen to hold: the process numbers of a grid and the
// grid's communicator (owned by the cache below). Kept with the system communicator, not by its
// handle: BLACS may name a grid by the grid's own communicator, which Cblacs_gridexit frees, and
// MPI hands the same handle to a later communicator with other processes.
struct Seen {
  std::vector<int> numbers;
  MPI_Comm comm = MPI_COMM_NULL;
};
mpi::Attached<Seen>& seen() {
  static mpi::Attached<Seen> s;
  return s;
}

// Grid communicators by their members (world ranks, row-major in the grid), freed when MPI
// finalises.
std::vector<std::pair<std::vector<int>, MPI_Comm>>& cache() {
  static std::vector<std::pair<std::vector<int>, MPI_Comm>> c;
  return c;
}

void free_grid_communicators() {
  std::lock_guard<std::mutex> lock(cache_mutex());
  for (auto& [members, comm] : cache()) mpi::free_communicator(comm);
  cache().clear();
}

}  // namespace

GridInfo grid_info(int ctxt) {
  GridInfo g;
  gridinfo_fn()(ctxt, &g.rows, &g.cols, &g.myrow, &g.mycol);
  return g;
}

MPI_Comm grid_communicator(int ctxt, const GridInfo& g) {
  static const GetFn get = symbol<GetFn>("Cblacs_get");
  static const Sys2CommFn sys2comm = symbol<Sys2CommFn>("Cblacs2sys_handle");
  static const PnumFn pnum = symbol<PnumFn>("Cblacs_pnum");
  if (!get || !sys2comm || !pnum)
    throw Error("p?gemm_: this BLACS lacks Cblacs_get, Cblacs2sys_handle or Cblacs_pnum");
  // The grid's processes as ranks of MPI_COMM_WORLD, row-major in the grid. BLACS numbers them
  // in the communicator the grid was made from, which may be the grid's own: translated, they
  // name the grid whatever its context handle (handles come back after Cblacs_gridexit), and
  // every member of a grid finds or misses it alike.
  int sys = 0;
  get(ctxt, 10, &sys);
  const MPI_Comm system = sys2comm(sys);
  std::vector<int> numbers;
  for (int r = 0; r < g.rows; ++r)
    for (int c = 0; c < g.cols; ++c) numbers.push_back(pnum(ctxt, r, c));
  // The grid seen last on this system communicator, with the same process numbers, is the same
  // grid: no group arithmetic on a repeated call.
  std::lock_guard<std::mutex> lock(cache_mutex());
  if (const Seen* last = seen().find(system); last && last->numbers == numbers) return last->comm;
  auto remember = [&](MPI_Comm comm) {
    seen().attach(system, std::make_unique<Seen>(Seen{numbers, comm}));
    return comm;
  };
  std::vector<int> members;
  try {
    members = mpi::world_ranks(system, numbers);
  } catch (const std::exception&) {
    throw Error("p?gemm_: the processes of BLACS context " + std::to_string(ctxt) +
                " are not all in MPI_COMM_WORLD");
  }
  for (const auto& [key, comm] : cache())
    if (key == members) return remember(comm);
  MPI_Comm comm = MPI_COMM_NULL;
  try {
    comm = mpi::communicator_over(members, 0x0c0b);
  } catch (const std::exception&) {
    throw Error("p?gemm_: could not make a communicator for BLACS context " + std::to_string(ctxt));
  }
  if (cache().empty()) mpi::at_finalize(free_grid_communicators);
  cache().push_back({members, comm});
  const int me = mpi::Communicator(comm).rank();
  if (me != g.myrow * g.cols + g.mycol)
    throw Error("p?gemm_: BLACS placed this process at (" + std::to_string(g.myrow) + ", " +
                std::to_string(g.mycol) + ") but its rank in the grid's processes is " +
                std::to_string(me));
  return remember(comm);
}

void pblas_abort(int ctxt, const char* routine, int info) {
  static const AbortFn f = symbol<AbortFn>("PB_Cabort");
  if (f) {
    f(ctxt, routine, info);
    return;
  }
  // PB_Cabort's own behaviour, where the application has none: the message, then the job ends.
  if (info < 0)
    std::fprintf(stderr, "{%s}: parameter number %d had an illegal value\n", routine, -info);
  else
    std::fprintf(stderr, "{%s}: error %d\n", routine, info);
  mpi::end_job(info < 0 ? -info : info);
}

}  // namespace cuboid::pxgemm
