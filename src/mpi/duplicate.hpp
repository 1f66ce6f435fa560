#pragma once
// cuboid's own duplicate of a caller's communicator (the library's distributed entry): made on
// first use and kept with the caller's communicator (mpi/attribute.hpp), so that it is freed
// with that communicator or when MPI finalises, and so that cuboid's tags never meet the
// caller's. Each duplicate has a number never reused, which names it where products are cached
// (a freed communicator's handle may come back for another one).
#include <mpi.h>

#include <cstdint>

namespace cuboid::mpi {

struct Duplicate {
  MPI_Comm comm = MPI_COMM_NULL;
  std::uint64_t id = 0;
};

// The duplicate of `user_comm`, made on first use (thread-safe). KeyedError "comm" when MPI is
// not initialised or already finalised, or the communicator is MPI_COMM_NULL or an
// intercommunicator; Error when MPI cannot duplicate it.
const Duplicate& open_duplicate(MPI_Comm user_comm);

}  // namespace cuboid::mpi
