#pragma once
// What cuboid holds in memory, counted where it is allocated: every Kokkos view whose label
// starts with "cuboid::" (Kokkos reports each allocation and deallocation to its tools
// callbacks, which the meter installs, chaining those of a tool already loaded), and buffers
// cuboid allocates otherwise (MPI messages in std::vector) through add(). Per memory space
// ("Host", "Cuda", "CudaHostPinned", ...: Kokkos's names): bytes held now and their peak.
// The process's resident set (VmRSS, VmHWM) beside it, for what cuboid does not allocate itself
// (libraries, MPI's own buffers, the allocator's slack).
#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace cuboid::exec::meter {

// Installs the callbacks (once; after Kokkos is initialised). Counting starts then.
void install();
bool installed();

// Bytes cuboid allocated (or freed, negative) in `space` outside Kokkos's views.
void add(const std::string& space, std::int64_t bytes);

struct Space {
  std::int64_t now = 0, peak = 0;
};
// Every space seen since install(), by name.
std::map<std::string, Space> spaces();
// Peaks restart from what is held now (a run's baseline).
void reset_peaks();

// Host spaces (HostSpace, pinned host memory, the emulated device's) together: the bytes now
// and the peak of their sum (not the sum of their peaks).
Space host();

// std::allocator that counts what it allocates in "Host": cuboid's buffers outside Kokkos.
template <class T>
struct Allocator : std::allocator<T> {
  using value_type = T;
  template <class U>
  struct rebind {
    using other = Allocator<U>;
  };
  Allocator() = default;
  template <class U>
  Allocator(const Allocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    T* p = std::allocator<T>::allocate(n);
    add("Host", std::int64_t(n * sizeof(T)));
    return p;
  }
  void deallocate(T* p, std::size_t n) noexcept {
    add("Host", -std::int64_t(n * sizeof(T)));
    std::allocator<T>::deallocate(p, n);
  }
  template <class U>
  bool operator==(const Allocator<U>&) const noexcept {
    return true;
  }
  template <class U>
  bool operator!=(const Allocator<U>&) const noexcept {
    return false;
  }
};

// The process's resident set now (VmRSS) and its peak (VmHWM), bytes; 0 without /proc.
std::int64_t resident_bytes();
std::int64_t peak_resident_bytes();

}  // namespace cuboid::exec::meter
