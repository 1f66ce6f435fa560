#include "mpi/duplicate.hpp"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "util/error.hpp"

namespace cuboid::mpi {
namespace {

// The duplicates alive, so that the ones whose communicator outlives MPI (MPI_COMM_WORLD's:
// MPI frees only MPI_COMM_SELF's attributes when it finalises) are freed then too.
std::mutex& duplicates_mutex() {
  static std::mutex m;
  return m;
}
std::vector<Duplicate*>& duplicates() {
  static std::vector<Duplicate*> v;
  return v;
}

void free_duplicate(Duplicate* dup) {
  {
    std::lock_guard<std::mutex> lock(duplicates_mutex());
    auto& v = duplicates();
    const auto it = std::find(v.begin(), v.end(), dup);
    if (it == v.end()) return;  // already freed at finalisation
    v.erase(it);
  }
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Comm_free(&dup->comm);
  delete dup;
}

int& duplicate_keyval_slot() {
  static int keyval = MPI_KEYVAL_INVALID;
  return keyval;
}

int duplicate_keyval() {
  static int keyval = duplicate_keyval_slot() = [] {
    int k = MPI_KEYVAL_INVALID;
    auto drop = [](MPI_Comm, int, void* value, void*) -> int {
      free_duplicate(static_cast<Duplicate*>(value));
      return MPI_SUCCESS;
    };
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, drop, &k, nullptr);
    // MPI_Finalize first frees MPI_COMM_SELF's attributes: this one frees every duplicate left.
    int at_finalize = MPI_KEYVAL_INVALID;
    auto finalize = [](MPI_Comm, int, void*, void*) -> int {
      std::vector<Duplicate*> left;
      {
        std::lock_guard<std::mutex> lock(duplicates_mutex());
        left = duplicates();
      }
      for (Duplicate* d : left) free_duplicate(d);
      MPI_Comm_free_keyval(&duplicate_keyval_slot());
      return MPI_SUCCESS;
    };
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalize, &at_finalize, nullptr);
    MPI_Comm_set_attr(MPI_COMM_SELF, at_finalize, nullptr);
    return k;
  }();
  return keyval;
}

const Duplicate& own_duplicate(MPI_Comm comm) {
  static std::atomic<std::uint64_t> next{1};
  const int keyval = duplicate_keyval();
  void* value = nullptr;
  int found = 0;
  MPI_Comm_get_attr(comm, keyval, &value, &found);
  if (found) return *static_cast<Duplicate*>(value);
  auto dup = std::make_unique<Duplicate>();
  if (MPI_Comm_dup(comm, &dup->comm) != MPI_SUCCESS)
    throw Error("MPI_Comm_dup failed on the communicator given");
  dup->id = next++;
  // Errors on cuboid's duplicate come back as codes (then exceptions), never MPI's abort.
  MPI_Comm_set_errhandler(dup->comm, MPI_ERRORS_RETURN);
  {
    std::lock_guard<std::mutex> lock(duplicates_mutex());
    duplicates().push_back(dup.get());
  }
  MPI_Comm_set_attr(comm, keyval, dup.get());
  return *dup.release();
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
