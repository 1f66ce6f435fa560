#pragma once
// SHA-256 (FIPS 180-4), for the deck hash of run records: any machine, and Python's hashlib,
// computes the same digest of the same text.
#include <string>
#include <string_view>

namespace cuboid::report {

// Lower-case hexadecimal digest of `data`.
std::string sha256_hex(std::string_view data);

}  // namespace cuboid::report
