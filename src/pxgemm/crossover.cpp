#include "pxgemm/crossover.hpp"

#include <algorithm>
#include <complex>
#include <cuboid/mpi.hpp>
#include <vector>

#include "mpi/communicator.hpp"
#include "platform/crossover.hpp"

namespace cuboid::pxgemm {
namespace {

// Seconds of one n^3 product on the grid by `run` (median of three after a warm-up), the
// slowest process's: every process gets the same figure and so takes the same decisions.
template <class F>
double grid_seconds(const mpi::Communicator& comm, const F& run) {
  const double mine = platform::median_of_three([&] {
    comm.barrier();
    run();
    comm.barrier();
  });
  return comm.allreduce_max(mine);
}

template <class Scalar>
double measure(Context& context, const GridCall& g, ScalapackGemm<Scalar> scalapack) {
  const mpi::Communicator comm(g.comm);
  const BlockCyclicLayout layout{g.rows, g.cols, g.block};
  const Scalar one(1), zero(0);
  const int ione = 1;
  struct Square {
    int n, rows, cols, lld, desc[9];
    std::vector<Scalar> a, b, c;
  };
  auto square = [&](std::int64_t size) {
    Square s;
    s.n = int(size);
    s.rows = int(local_extent(size, g.block, g.myrow, g.rows));
    s.cols = int(local_extent(size, g.block, g.mycol, g.cols));
    s.lld = std::max(1, s.rows);
    const int desc[9] = {1, g.ctxt, s.n, s.n, g.block, g.block, 0, 0, s.lld};
    std::copy(desc, desc + 9, s.desc);
    const std::size_t count = std::size_t(s.lld) * std::size_t(std::max(1, s.cols));
    s.a.assign(count, Scalar(0.5));
    s.b.assign(count, Scalar(0.25));
    s.c.assign(count, zero);
    return s;
  };
  const std::int64_t at = platform::ladder_crossover(
      [&](std::int64_t size) {
        Square s = square(size);
        return grid_seconds(comm, [&] {
          gemm(context, g.comm, layout, Op::none, Op::none, s.n, s.n, s.n, one, s.a.data(), s.lld,
               s.b.data(), s.lld, zero, s.c.data(), s.lld);
        });
      },
      [&](std::int64_t size) {
        Square s = square(size);
        return grid_seconds(comm, [&] {
          scalapack("N", "N", &s.n, &s.n, &s.n, &one, s.a.data(), &ione, &ione, s.desc, s.b.data(),
                    &ione, &ione, s.desc, &zero, s.c.data(), &ione, &ione, s.desc);
        });
      });
  return gemm_flops(scalar_type_of<Scalar>(), at, at, at);
}

}  // namespace

template <class Scalar>
GridCrossover grid_crossover(Context& context, const GridCall& g, ScalapackGemm<Scalar> scalapack,
                             const std::string& routine) {
  const mpi::Communicator comm(g.comm);
  const std::string key = platform::crossover_key(
      "pxgemm crossover|" + routine + "|grid=" + std::to_string(g.rows) + "x" +
          std::to_string(g.cols) + "|block=" + std::to_string(g.block),
      context.processor_names());
  const auto cached = platform::cached_crossover(key);
  if (comm.allreduce_min(cached ? 1.0 : 0.0) > 0) return {comm.allreduce_max(*cached), false};
  const double flops = measure<Scalar>(context, g, scalapack);
  platform::store_crossover(key, flops);
  return {flops, true};
}

template GridCrossover grid_crossover<float>(Context&, const GridCall&, ScalapackGemm<float>,
                                             const std::string&);
template GridCrossover grid_crossover<double>(Context&, const GridCall&, ScalapackGemm<double>,
                                              const std::string&);
template GridCrossover grid_crossover<std::complex<float>>(Context&, const GridCall&,
                                                           ScalapackGemm<std::complex<float>>,
                                                           const std::string&);
template GridCrossover grid_crossover<std::complex<double>>(Context&, const GridCall&,
                                                            ScalapackGemm<std::complex<double>>,
                                                            const std::string&);

}  // namespace cuboid::pxgemm
