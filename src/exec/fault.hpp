#pragma once
// Fault injection, for testing that validation has teeth (`cuboid run --inject-fault`):
//   drop-task  one tile task (a tile of C times one tile-deep panel of k) is never computed;
//   corrupt    one element of C (the first) has the top bit of its exponent flipped after the
//              GEMMs, which changes it by at least 2: to a huge value or Inf when |x| < 2, to
//              nearly 0 otherwise.
// Both must make the run fail validation (exit status 3). Pure C++: no Kokkos.
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "exec/plan.hpp"

namespace cuboid::exec {

enum class Fault { none, drop_task, corrupt };

std::optional<Fault> parse_fault(std::string_view name);  // "none", "drop-task", "corrupt"
std::string_view to_string(Fault f);

// What drop_one_task() left out: the C rectangle and the k range of the task.
struct DroppedTask {
  int processor = -1;
  Rect c;
  std::int64_t l0 = 0, l1 = 0;
};

// Rewrites `plan` so that one tile task is not computed and everything else is: a step of the
// first processor that has one (deeper than a tile, or with beta already applied) is split into
// steps that cover its C block and k range except one tile of C times one tile of k. The new
// steps keep the plan's rules (beta applied once, each C block brought in and drained around
// its steps), so every worker runs them unchanged. Returns nothing when no step can lose a task
// without also losing its beta (a problem one tile deep with beta != 1).
std::optional<DroppedTask> drop_one_task(Plan& plan);

// Flips the most significant bit of the exponent of `x` (of its real part for a complex x).
template <class Scalar>
Scalar flip_exponent_bit(Scalar x) {
  if constexpr (!std::is_floating_point_v<Scalar>) {  // a complex type
    return Scalar(flip_exponent_bit(x.real()), x.imag());
  } else {
    static_assert(std::is_floating_point_v<Scalar>);
    using Bits = std::conditional_t<sizeof(Scalar) == 8, std::uint64_t, std::uint32_t>;
    Bits b;
    std::memcpy(&b, &x, sizeof b);
    b ^= Bits(1) << (sizeof(Scalar) * 8 - 2);
    std::memcpy(&x, &b, sizeof b);
    return x;
  }
}

}  // namespace cuboid::exec
