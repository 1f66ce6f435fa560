#pragma once
// The errors cuboid reports to C++ callers. Nothing in cuboid aborts the application: every
// failure reaches the caller as one of these (or as a status code through the C interface).
#include <stdexcept>
#include <string>

namespace cuboid {

// Every failure the user should read: bad input, an impossible platform, a failed validation.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A setting or argument refused, with its name: a deck key such as
// "platform.memory_budget_mib", or an argument of the library's calls ("lda", "processors").
// A caller that knows where the setting was given (a deck's file, line and column) prefixes the
// message with it.
struct KeyedError : std::invalid_argument {
  KeyedError(std::string k, const std::string& message)
      : std::invalid_argument(message), key(std::move(k)) {}
  std::string key;
};

// A valid request that this version does not compute, with the name of the argument or setting
// that asks for it (today: device views in a memory no processor of the context has, or an
// operand in another memory than C; every op and scalar type is computed).
struct Unsupported : KeyedError {
  using KeyedError::KeyedError;
};

}  // namespace cuboid
