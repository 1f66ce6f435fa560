#pragma once
#include <string>
#include <vector>

#include "deck/deck.hpp"
#include "exec/fault.hpp"

namespace cuboid::app {

// --inject-fault with run.validate = false would pass a wrong product off as a result: refused.
void require_validation_for_fault(const deck::Deck& d, exec::Fault fault);

// Exit status of a run whose product failed validation (distinct from input errors, 1).
inline constexpr int kValidationFailed = 3;

// Thrown when a run completed but its product failed validation.
struct ValidationFailure {
  std::string message;
};

}  // namespace cuboid::app
