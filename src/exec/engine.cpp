#include "exec/engine.hpp"

#include <exception>
#include <stdexcept>

#include "kokkos_ext/compat.hpp"

namespace cuboid::exec {

template <class Scalar>
Engine<Scalar>::Engine(Plan plan, std::vector<std::unique_ptr<Worker<Scalar>>> workers,
                       std::int64_t m, std::int64_t n)
    : plan_(std::move(plan)), workers_(std::move(workers)) {
  if (workers_.size() != plan_.processors.size())
    throw std::invalid_argument("engine: one worker per processor plan is needed");
  if (plan_.m != m || plan_.n != n)
    throw std::invalid_argument("engine: plan and matrices disagree");
  kokkos_ext::ScopedRegion region("cuboid::exec::setup");
  for (const auto& p : plan_.partials) {
    partials_.emplace_back(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::exec::C_partial"), p.c.rows(),
        p.c.cols());
    partial_rects_.push_back(p.c);
  }
  for (std::size_t q = 0; q < workers_.size(); ++q) {
    workers_[q]->prepare(plan_.processors[q]);
    lanes_.push_back(std::make_unique<ThreadLane>());
  }
}

template <class Scalar>
double Engine<Scalar>::partial_bytes() const {
  double b = 0;
  for (const auto& r : partial_rects_) b += double(r.rows()) * double(r.cols()) * sizeof(Scalar);
  return b;
}

template <class Scalar>
RunResult Engine<Scalar>::run(const HostMatrix<Scalar>& A, const HostMatrix<Scalar>& B,
                              const HostMatrix<Scalar>& C, Scalar alpha, Scalar beta) {
  using host = Kokkos::DefaultHostExecutionSpace;
  using rank2 = Kokkos::MDRangePolicy<host, Kokkos::Rank<2, Kokkos::Iterate::Left>>;
  RunResult result;
  const double t0 = now_seconds();
  {
    kokkos_ext::ScopedRegion region("cuboid::exec::prescale");
    for (const Rect& r : plan_.prescale) {
      auto c = Kokkos::subview(C, std::make_pair(r.i0, r.i1), std::make_pair(r.j0, r.j1));
      // beta = 0 must clear NaN and Inf in the old C, which multiplying by zero would keep.
      if (beta == Scalar(0)) {
        Kokkos::parallel_for(
            "cuboid::exec::prescale_zero", rank2({0, 0}, {c.extent(0), c.extent(1)}),
            KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { c(i, j) = Scalar(0); });
      } else {
        Kokkos::parallel_for(
            "cuboid::exec::prescale_beta", rank2({0, 0}, {c.extent(0), c.extent(1)}),
            KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { c(i, j) *= beta; });
      }
    }
    host().fence();
  }
  result.prescale_s = now_seconds() - t0;

  RunContext<Scalar> ctx{A, B, C, partials_, partial_rects_, alpha, beta};
  result.workers.resize(workers_.size());
  {
    kokkos_ext::ScopedRegion region("cuboid::exec::compute");
    for (std::size_t q = 0; q < workers_.size(); ++q) {
      lanes_[q]->start(
          [&, q] { result.workers[q] = workers_[q]->execute(plan_.processors[q], ctx, t0); });
    }
    // Wait for every lane before reporting the first failure: none may still use the buffers.
    std::exception_ptr first;
    for (auto& lane : lanes_) {
      try {
        lane->wait();
      } catch (...) {
        if (!first) first = std::current_exception();
      }
    }
    if (first) std::rethrow_exception(first);
  }

  const double t1 = now_seconds();
  {
    kokkos_ext::ScopedRegion region("cuboid::exec::reduce");
    // Fixed order: the result depends on the partition only through reassociation.
    for (std::size_t b = 0; b < partials_.size(); ++b) {
      const Rect& r = partial_rects_[b];
      auto c = Kokkos::subview(C, std::make_pair(r.i0, r.i1), std::make_pair(r.j0, r.j1));
      auto p = partials_[b];
      Kokkos::parallel_for(
          "cuboid::exec::reduce_partial", rank2({0, 0}, {c.extent(0), c.extent(1)}),
          KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { c(i, j) += p(i, j); });
    }
    host().fence();
  }
  const double t2 = now_seconds();
  result.reduce_s = t2 - t1;
  result.seconds = t2 - t0;
  return result;
}

template class Engine<double>;
template class Engine<float>;

}  // namespace cuboid::exec
