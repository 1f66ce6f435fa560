// What every build has: the device checks that need no vendor call, and the answers of a
// build without a device backend. The vendor calls live in device_backend_<kind>.cpp.
#include "platform/device_backend.hpp"

#include <cctype>
#include <string>

#include "util/error.hpp"

namespace cuboid::platform {

#if !CUBOID_DEVICE_BACKEND
int device_count() { return 0; }
DeviceInfo device_info(int index) {
  DeviceInfo info;
  info.index = index;
  return info;
}
std::string device_backend_name() { return ""; }
int active_device() { return -1; }
#endif

std::string device_processor_prefix() {
  std::string lower;
  for (char ch : device_backend_name()) lower += char(std::tolower(static_cast<unsigned char>(ch)));
  return lower;
}

void require_active_device(int index, const std::string& where) {
  const int active = active_device();
  if (active < 0 || index == active) return;
  const std::string p = device_processor_prefix();
  throw Error(where + ": processor \"" + p + ":" + std::to_string(index) +
              "\" is not the device this process drives (" + p + ":" + std::to_string(active) +
              "). Kokkos drives one device per process: run one MPI rank per GPU (Kokkos gives "
              "each rank the device numbered by its node-local rank modulo the device count), or "
              "choose the device with KOKKOS_DEVICE_ID=" +
              std::to_string(index) + " and name it as " + p + ":" + std::to_string(index) + ".");
}

}  // namespace cuboid::platform
