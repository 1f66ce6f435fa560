#pragma once
// Values kept with MPI communicators as cached attributes, so that each lives exactly as long as
// its communicator: deleted when the communicator is freed, or when MPI finalises for one that
// outlives it (MPI_COMM_WORLD: MPI frees only MPI_COMM_SELF's attributes then). And work to run
// when MPI finalises, before it frees anything of its own. Every cuboid object whose lifetime
// follows MPI's goes through these two.
#include <mpi.h>

#include <functional>
#include <memory>

namespace cuboid::mpi {

// Runs `fn` when MPI finalises, first thing there (an attribute of MPI_COMM_SELF); functions
// registered later run earlier, as objects made later are destroyed first. MPI must be
// initialised. Thread-safe.
void at_finalize(std::function<void()> fn);

// One kind of attached value, through the owner's function that destroys it. Thread-safe; the
// key itself is made on first use (MPI must be initialised then).
class AttributeKey {
 public:
  explicit AttributeKey(void (*destroy)(void*)) : destroy_(destroy) {}
  AttributeKey(const AttributeKey&) = delete;
  AttributeKey& operator=(const AttributeKey&) = delete;
  // The value attached to `comm`, or null.
  void* find(MPI_Comm comm);
  // Attaches `value` (owned from now on) to `comm`; a value attached before is destroyed.
  void attach(MPI_Comm comm, void* value);

 private:
  int keyval();
  void (*destroy_)(void*);
  int keyval_ = MPI_KEYVAL_INVALID;
  bool made_ = false;
};

// A value of type T per communicator.
template <class T>
class Attached {
 public:
  T* find(MPI_Comm comm) { return static_cast<T*>(key_.find(comm)); }
  T& attach(MPI_Comm comm, std::unique_ptr<T> value) {
    T& kept = *value;
    key_.attach(comm, value.release());
    return kept;
  }

 private:
  AttributeKey key_{[](void* p) { delete static_cast<T*>(p); }};
};

}  // namespace cuboid::mpi
