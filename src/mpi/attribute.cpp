#include "mpi/attribute.hpp"

#include <algorithm>
#include <mutex>
#include <utility>
#include <vector>

#include "util/error.hpp"

namespace cuboid::mpi {
namespace {

void require_initialized() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized)
    throw Error("MPI is not initialised (or already finalised): no communicator to attach to");
}

struct FinalizeList {
  std::mutex mutex;
  std::vector<std::function<void()>> functions;
  bool hooked = false;
};
FinalizeList& finalize_list() {
  static FinalizeList list;
  return list;
}

// The functions run in reverse order of registration; one registered while they run (by one of
// them) runs too.
int run_at_finalize(MPI_Comm, int keyval, void*, void*) {
  auto& list = finalize_list();
  for (;;) {
    std::function<void()> fn;
    {
      std::lock_guard<std::mutex> lock(list.mutex);
      if (list.functions.empty()) break;
      fn = std::move(list.functions.back());
      list.functions.pop_back();
    }
    fn();
  }
  {
    std::lock_guard<std::mutex> lock(list.mutex);
    list.hooked = false;
  }
  MPI_Comm_free_keyval(&keyval);
  return MPI_SUCCESS;
}

// Which values of one key are still attached somewhere: those whose communicator outlives MPI
// are destroyed when it finalises, and a deletion that comes after that finds nothing to do.
struct Live {
  std::mutex mutex;
  std::vector<std::pair<void*, void (*)(void*)>> values;
};
Live& live() {
  static Live l;
  return l;
}

bool forget(void* value) {
  auto& l = live();
  std::lock_guard<std::mutex> lock(l.mutex);
  const auto it = std::find_if(l.values.begin(), l.values.end(),
                               [&](const auto& v) { return v.first == value; });
  if (it == l.values.end()) return false;
  l.values.erase(it);
  return true;
}

int delete_attribute(MPI_Comm, int, void* value, void* extra) {
  if (forget(value)) reinterpret_cast<void (*)(void*)>(extra)(value);
  return MPI_SUCCESS;
}

std::mutex& keys_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

void at_finalize(std::function<void()> fn) {
  require_initialized();
  auto& list = finalize_list();
  std::lock_guard<std::mutex> lock(list.mutex);
  list.functions.push_back(std::move(fn));
  if (list.hooked) return;
  int keyval = MPI_KEYVAL_INVALID;
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, run_at_finalize, &keyval, nullptr);
  MPI_Comm_set_attr(MPI_COMM_SELF, keyval, nullptr);
  list.hooked = true;
}

int AttributeKey::keyval() {
  std::lock_guard<std::mutex> lock(keys_mutex());
  if (made_) return keyval_;
  require_initialized();
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_attribute, &keyval_,
                         reinterpret_cast<void*>(destroy_));
  made_ = true;
  // At finalisation: every value still attached is destroyed, and the key is freed (an
  // attribute left on MPI_COMM_WORLD is then deleted, if ever, as one already forgotten).
  at_finalize([this] {
    std::vector<std::pair<void*, void (*)(void*)>> left;
    {
      auto& l = live();
      std::lock_guard<std::mutex> lock(l.mutex);
      for (auto it = l.values.begin(); it != l.values.end();)
        if (it->second == destroy_) {
          left.push_back(*it);
          it = l.values.erase(it);
        } else {
          ++it;
        }
    }
    for (auto& [value, destroy] : left) destroy(value);
    std::lock_guard<std::mutex> lock(keys_mutex());
    MPI_Comm_free_keyval(&keyval_);
    made_ = false;
  });
  return keyval_;
}

void* AttributeKey::find(MPI_Comm comm) {
  void* value = nullptr;
  int found = 0;
  MPI_Comm_get_attr(comm, keyval(), &value, &found);
  return found ? value : nullptr;
}

void AttributeKey::attach(MPI_Comm comm, void* value) {
  const int key = keyval();
  {
    auto& l = live();
    std::lock_guard<std::mutex> lock(l.mutex);
    l.values.emplace_back(value, destroy_);
  }
  MPI_Comm_set_attr(comm, key, value);
}

}  // namespace cuboid::mpi
