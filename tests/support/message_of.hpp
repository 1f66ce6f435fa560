#pragma once
// The message of the exception `f` throws, or "(no exception)": tests compare what a refusal
// says.
#include <exception>
#include <functional>
#include <string>

namespace cuboid::testing {

inline std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no exception)";
}

}  // namespace cuboid::testing
