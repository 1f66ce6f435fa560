#pragma once
// Page-locked host memory for a run: the caller's arrays are registered with the device runtime
// (cudaHostRegister, or its emulation) for the run, so that copies go straight from and to them
// as asynchronous 2-D DMA instead of through the staging ring. A pointer cannot be recognised as
// "the same array" across calls (the caller may free it and allocate another at the same
// address), so every run registers what it reads and unregisters it at its end.
//
// Runtimes refuse a range that overlaps one already registered: the registry keeps one set of
// disjoint whole-page pieces per runtime, shared by every processor of the process, and a lease
// registers only what no piece holds yet (A, B and C that alias or overlap are registered once),
// holding a reference on each piece it uses. Memory already pinned by someone else (allocated
// pinned, or registered by the caller) is used as it is. A refused registration only means
// that the ranges it would have covered keep the staging path.
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace cuboid::exec {

struct ByteRange {
  std::uintptr_t lo = 0, hi = 0;  // [lo, hi)
};

// The runtime's calls: register (false: refused), unregister (at the registered pointer), and
// whether a byte is page-locked already.
struct PinHooks {
  bool (*register_host)(void*, std::size_t) = nullptr;
  void (*unregister_host)(void*) = nullptr;
  bool (*host_pinned)(const void*) = nullptr;
};

class HostRegistry {
 public:
  explicit HostRegistry(PinHooks hooks) : hooks_(hooks) {}
  HostRegistry(const HostRegistry&) = delete;
  HostRegistry& operator=(const HostRegistry&) = delete;

 private:
  friend class PinLease;
  struct Piece {
    std::uintptr_t hi = 0;
    int refs = 0;
  };
  PinHooks hooks_;
  std::mutex m_;
  std::map<std::uintptr_t, Piece> pieces_;  // by first byte, whole pages, disjoint
};

// What one run of one processor page-locked; everything is unregistered (unless another lease
// still uses it) when the lease goes.
class PinLease {
 public:
  PinLease() = default;  // nothing pinned: every copy takes the staging path
  PinLease(HostRegistry& registry, std::vector<ByteRange> wanted);
  ~PinLease() { release(); }
  PinLease(PinLease&& o) noexcept { *this = std::move(o); }
  PinLease& operator=(PinLease&& o) noexcept;
  PinLease(const PinLease&) = delete;
  PinLease& operator=(const PinLease&) = delete;

  // Whether [first, end) lies in one page-locked range of the lease (one registration: a copy
  // across two is not known to be page-locked to the runtime).
  bool covers(const void* first, const void* end) const;
  int registrations() const { return registrations_; }  // runtime calls that succeeded
  int refused() const { return refused_; }              // runtime calls that failed
  double registered_bytes() const { return registered_bytes_; }
  void release();

 private:
  // A range of whole pages to page-lock, with the first and last bytes wanted in it.
  struct Span {
    std::uintptr_t lo, hi, first, last;
  };
  void acquire(const std::vector<Span>& spans);  // under the registry's lock

  HostRegistry* r_ = nullptr;
  std::vector<std::uintptr_t> held_;  // pieces it holds a reference on
  std::vector<ByteRange> usable_;     // sorted, disjoint
  int registrations_ = 0, refused_ = 0;
  double registered_bytes_ = 0;
};

// The byte range of the block [i0, i1) x [j0, j1) of a column-major array (i1 > i0, j1 > j0).
template <class View>
ByteRange block_bytes(const View& v, std::int64_t i0, std::int64_t i1, std::int64_t j0,
                      std::int64_t j1) {
  using T = typename View::value_type;
  return ByteRange{reinterpret_cast<std::uintptr_t>(&v(i0, j0)),
                   reinterpret_cast<std::uintptr_t>(&v(i1 - 1, j1 - 1)) + sizeof(T)};
}

}  // namespace cuboid::exec
