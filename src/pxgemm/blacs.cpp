#include "pxgemm/blacs.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <memory>
#include <mutex>
#include <vector>

#include <cuboid/error.hpp>

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
// grid's communicator (owned by the cache below). Kept as an attribute of the system
// communicator, not by its handle: BLACS may name a grid by the grid's own communicator, which
// Cblacs_gridexit frees, and MPI hands the same handle to a later communicator with other
// processes. An attribute goes with its communicator.
struct Seen {
  std::vector<int> numbers;
  MPI_Comm comm = MPI_COMM_NULL;
};
int& seen_keyval() {
  static int keyval = MPI_KEYVAL_INVALID;
  return keyval;
}
// Every Seen still attached somewhere, so that those on communicators BLACS never frees are
// deleted when cuboid lets go of its grids. Its own lock: MPI deletes an attribute from inside
// MPI_Comm_set_attr, where the cache's lock is held.
std::mutex& seen_mutex() {
  static std::mutex m;
  return m;
}
std::vector<std::unique_ptr<Seen>>& seen_pool() {
  static std::vector<std::unique_ptr<Seen>> pool;
  return pool;
}
int forget_seen(MPI_Comm, int, void* value, void*) {
  std::lock_guard<std::mutex> lock(seen_mutex());
  auto& pool = seen_pool();
  for (auto& p : pool)
    if (p.get() == value) {
      p = std::move(pool.back());
      pool.pop_back();
      break;
    }
  return MPI_SUCCESS;
}

// Grid communicators by their members (world ranks, row-major in the grid).
std::vector<std::pair<std::vector<int>, MPI_Comm>>& cache() {
  static std::vector<std::pair<std::vector<int>, MPI_Comm>> c;
  return c;
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
  if (seen_keyval() == MPI_KEYVAL_INVALID)
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, forget_seen, &seen_keyval(), nullptr);
  {
    void* value = nullptr;
    int found = 0;
    MPI_Comm_get_attr(system, seen_keyval(), &value, &found);
    if (found && static_cast<Seen*>(value)->numbers == numbers)
      return static_cast<Seen*>(value)->comm;
  }
  auto remember = [&](MPI_Comm comm) {
    Seen* seen = nullptr;
    {
      std::lock_guard<std::mutex> pool_lock(seen_mutex());
      seen_pool().push_back(std::make_unique<Seen>(Seen{numbers, comm}));
      seen = seen_pool().back().get();
    }
    MPI_Comm_set_attr(system, seen_keyval(), seen);
    return comm;
  };
  std::vector<int> members(numbers.size(), MPI_UNDEFINED);
  MPI_Group sys_group = MPI_GROUP_NULL, world_group = MPI_GROUP_NULL;
  MPI_Comm_group(system, &sys_group);
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  MPI_Group_translate_ranks(sys_group, int(numbers.size()), numbers.data(), world_group,
                            members.data());
  MPI_Group_free(&sys_group);
  for (int w : members)
    if (w == MPI_UNDEFINED) {
      MPI_Group_free(&world_group);
      throw Error("p?gemm_: the processes of BLACS context " + std::to_string(ctxt) +
                  " are not all in MPI_COMM_WORLD");
    }
  for (const auto& [key, comm] : cache())
    if (key == members) {
      MPI_Group_free(&world_group);
      return remember(comm);
    }
  MPI_Group grid = MPI_GROUP_NULL;
  MPI_Group_incl(world_group, int(members.size()), members.data(), &grid);
  MPI_Comm comm = MPI_COMM_NULL;
  const int rc = MPI_Comm_create_group(MPI_COMM_WORLD, grid, 0x0c0b, &comm);
  MPI_Group_free(&grid);
  MPI_Group_free(&world_group);
  if (rc != MPI_SUCCESS || comm == MPI_COMM_NULL)
    throw Error("p?gemm_: could not make a communicator for BLACS context " + std::to_string(ctxt));
  int me = -1;
  MPI_Comm_rank(comm, &me);
  if (me != g.myrow * g.cols + g.mycol)
    throw Error("p?gemm_: BLACS placed this process at (" + std::to_string(g.myrow) + ", " +
                std::to_string(g.mycol) + ") but its rank in the grid's processes is " +
                std::to_string(me));
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  cache().push_back({members, comm});
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
  MPI_Abort(MPI_COMM_WORLD, info < 0 ? -info : info);
}

void free_grid_communicators() {
  std::lock_guard<std::mutex> lock(cache_mutex());
  int finalized = 0;
  MPI_Finalized(&finalized);
  for (auto& [members, comm] : cache())
    if (!finalized && comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  cache().clear();
  // A freed key is never looked up again; what attributes still point to goes with the pool
  // (their deletion later finds nothing to free).
  if (!finalized && seen_keyval() != MPI_KEYVAL_INVALID) MPI_Comm_free_keyval(&seen_keyval());
  std::lock_guard<std::mutex> pool_lock(seen_mutex());
  seen_pool().clear();
}

}  // namespace cuboid::pxgemm
