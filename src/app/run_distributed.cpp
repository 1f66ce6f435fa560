#include "app/run_distributed.hpp"

#include <fmt/format.h>

#include <iostream>
#include <sstream>

#include "app/kokkos_session.hpp"
#include "app/run_command.hpp"
#include "app/setup.hpp"
#include "dist/communicator.hpp"
#include "dist/runner.hpp"
#include "util/error.hpp"
#include "util/timer.hpp"

namespace cuboid::app {
namespace {

template <class Scalar>
dist::Outcome run_rank(const deck::Deck& d, const dist::Communicator& comm,
                       const std::string& json) {
  dist::RankResources<Scalar> res;
  std::exception_ptr failure;
  // Calibration messages from every rank would interleave: only rank 0 speaks.
  std::ostringstream quiet;
  std::ostream& progress = comm.rank() == 0 ? std::cerr : quiet;
  try {
    res.specs = processors_of(d);
    Stopwatch clock;
    res.speeds = speeds_for<Scalar>(d, res.specs, false, progress);
    res.calibration_s = clock.seconds();
    res.workers = workers_for<Scalar>(res.specs);
    res.plan_options = plan_options_for(d, res.specs, sizeof(Scalar));
  } catch (...) {
    failure = std::current_exception();
  }
  comm.agree(failure);
  dist::RunnerOptions opt;
  opt.json = json;
  return dist::run_distributed<Scalar>(d, comm, res, opt);
}

}  // namespace

int run_distributed_command(const std::string& deck_path, const std::vector<std::string>& overrides,
                            const std::string& json) {
  dist::MpiSession mpi;
  dist::Communicator comm;
  try {
    deck::Deck d;
    std::exception_ptr failure;
    try {
      d = deck::load_deck(deck_path, overrides);
    } catch (...) {
      failure = std::current_exception();
    }
    comm.agree(failure);
    KokkosSession kokkos;
    const dist::Outcome out = d.problem.precision == deck::Precision::float64
                                  ? run_rank<double>(d, comm, json)
                                  : run_rank<float>(d, comm, json);
    return out == dist::Outcome::validation_failed ? kValidationFailed : 0;
  } catch (const dist::CollectiveFailure& f) {
    if (comm.rank() == 0)
      std::cerr << "cuboid: error" << (f.origin != 0 ? fmt::format(" (rank {})", f.origin) : "")
                << ": " << f.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    // Past the agreed steps the others may be waiting on this rank.
    comm.abort(e.what());
  }
}

}  // namespace cuboid::app
