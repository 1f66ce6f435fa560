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

// A setting the library refuses, with the name of the setting at fault (a deck key such as
// "platform.memory_budget_mib"). The library knows settings by name only; a caller that knows
// where the setting was given (a deck's file, line and column) prefixes the message with it.
struct KeyedError : std::invalid_argument {
  KeyedError(std::string k, const std::string& message)
      : std::invalid_argument(message), key(std::move(k)) {}
  std::string key;
};

}  // namespace cuboid
