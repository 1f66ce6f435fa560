#pragma once
#include <stdexcept>
#include <string>

namespace cuboid {

// Every failure the user should read: bad input, an impossible platform, a failed validation.
// The command line prints what() after "cuboid: error: " and exits non-zero.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace cuboid
