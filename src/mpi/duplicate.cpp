#include "mpi/duplicate.hpp"

#include <atomic>
#include <memory>

#include "mpi/attribute.hpp"
#include "mpi/communicator.hpp"
#include "util/error.hpp"

namespace cuboid::mpi {
namespace {

// A duplicate owns its communicator: freed with the attribute that holds it.
struct OwnedDuplicate : Duplicate {
  OwnedDuplicate() = default;
  OwnedDuplicate(const OwnedDuplicate&) = delete;
  OwnedDuplicate& operator=(const OwnedDuplicate&) = delete;
  ~OwnedDuplicate() { free_communicator(comm); }
};

const Duplicate& own_duplicate(MPI_Comm comm) {
  static std::atomic<std::uint64_t> next{1};
  static Attached<OwnedDuplicate> duplicates;
  if (const Duplicate* found = duplicates.find(comm)) return *found;
  auto dup = std::make_unique<OwnedDuplicate>();
  if (MPI_Comm_dup(comm, &dup->comm) != MPI_SUCCESS)
    throw Error("MPI_Comm_dup failed on the communicator given");
  dup->id = next++;
  // Errors on cuboid's duplicate come back as codes (then exceptions), never MPI's abort.
  MPI_Comm_set_errhandler(dup->comm, MPI_ERRORS_RETURN);
  return duplicates.attach(comm, std::move(dup));
}

}  // namespace

const Duplicate& open_duplicate(MPI_Comm user_comm) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized)
    throw KeyedError("comm",
                     "MPI is not initialised (or already finalised): the application "
                     "initialises MPI before a distributed call");
  if (user_comm == MPI_COMM_NULL) throw KeyedError("comm", "the communicator is MPI_COMM_NULL");
  int inter = 0;
  MPI_Comm_test_inter(user_comm, &inter);
  if (inter) throw KeyedError("comm", "an intercommunicator: give an intracommunicator");
  return own_duplicate(user_comm);
}

}  // namespace cuboid::mpi
