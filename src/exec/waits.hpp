#pragma once
// Every wait that orders a copying processor's work -- a queue waiting for an event, the host
// waiting for a copy -- is written CUBOID_WAIT("TAG", statement). The ordering proof
// (scripts/remove-waits) names one tag at a time in the environment variable CUBOID_SKIP_WAIT:
// the statements of that tag are then skipped, as if deleted, and some test must fail. Unset,
// as in every real run, each wait runs; the check costs a comparison with an empty string.
// One build serves every removal, where deleting the statements would rebuild the worker each
// time.
#include <string_view>

namespace cuboid::exec {

// The tag named by CUBOID_SKIP_WAIT (read once per process), or empty.
std::string_view skipped_wait();

}  // namespace cuboid::exec

// The statement may hold commas (template arguments), hence the variadic form.
#define CUBOID_WAIT(tag, ...)                                                                \
  do {                                                                                       \
    if (::cuboid::exec::skipped_wait().empty() || ::cuboid::exec::skipped_wait() != (tag)) { \
      __VA_ARGS__;                                                                           \
    }                                                                                        \
  } while (0)
