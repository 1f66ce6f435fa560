#pragma once
#include <cstdint>
#include <string>

namespace cuboid {

// Bytes the kernel reports as available (MemAvailable), or physical memory when unknown.
std::uint64_t host_memory_available();
std::string hostname();
// "1.50 GiB", "12.0 MiB": for messages.
std::string human_bytes(double bytes);

}  // namespace cuboid
