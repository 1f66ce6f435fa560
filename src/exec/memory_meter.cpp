#include "exec/memory_meter.hpp"

#include <Kokkos_Core.hpp>

#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>

namespace cuboid::exec::meter {
namespace {

struct State {
  std::mutex mutex;
  bool installed = false;
  std::map<std::string, Space> spaces;
  Space host;  // the host spaces' sum
  Kokkos::Tools::Experimental::EventSet chained;
};

State& state() {
  static State s;
  return s;
}

// Kokkos names its host-resident spaces "Host", "CudaHostPinned", "HIPHostPinned",
// "SYCLHostUSM"...: every name with "Host" in it lives in the host's memory.
bool is_host(const std::string& space) { return space.find("Host") != std::string::npos; }

void count(State& s, const std::string& space, std::int64_t bytes) {
  Space& x = s.spaces[space];
  x.now += bytes;
  x.peak = std::max(x.peak, x.now);
  if (is_host(space)) {
    s.host.now += bytes;
    s.host.peak = std::max(s.host.peak, s.host.now);
  }
}

bool ours(const char* label) { return label && std::strncmp(label, "cuboid::", 8) == 0; }

void on_allocate(const Kokkos_Profiling_SpaceHandle handle, const char* label, const void* ptr,
                 const uint64_t size) {
  State& s = state();
  if (ours(label)) {
    std::lock_guard<std::mutex> lock(s.mutex);
    count(s, handle.name, std::int64_t(size));
  }
  if (s.chained.allocate_data) s.chained.allocate_data(handle, label, ptr, size);
}

void on_deallocate(const Kokkos_Profiling_SpaceHandle handle, const char* label, const void* ptr,
                   const uint64_t size) {
  State& s = state();
  if (ours(label)) {
    std::lock_guard<std::mutex> lock(s.mutex);
    count(s, handle.name, -std::int64_t(size));
  }
  if (s.chained.deallocate_data) s.chained.deallocate_data(handle, label, ptr, size);
}

std::int64_t status_bytes(const char* field) {
  std::ifstream f("/proc/self/status");
  const std::size_t n = std::strlen(field);
  for (std::string line; std::getline(f, line);)
    if (line.compare(0, n, field) == 0) {
      std::istringstream in(line.substr(n));
      std::int64_t kib = 0;
      in >> kib;
      return kib * 1024;
    }
  return 0;
}

}  // namespace

void install() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.installed) return;
  s.chained = Kokkos::Tools::Experimental::get_callbacks();
  Kokkos::Tools::Experimental::set_allocate_data_callback(on_allocate);
  Kokkos::Tools::Experimental::set_deallocate_data_callback(on_deallocate);
  s.installed = true;
}

bool installed() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.installed;
}

void add(const std::string& space, std::int64_t bytes) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.installed) count(s, space, bytes);
}

std::map<std::string, Space> spaces() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.spaces;
}

void reset_peaks() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  for (auto& [name, x] : s.spaces) x.peak = x.now;
  s.host.peak = s.host.now;
}

Space host() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.host;
}

std::int64_t resident_bytes() { return status_bytes("VmRSS:"); }
std::int64_t peak_resident_bytes() { return status_bytes("VmHWM:"); }

}  // namespace cuboid::exec::meter
