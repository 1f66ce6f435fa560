#pragma once
// Checked integer arithmetic for sizes, grids and counts: a product that does not fit is an
// error the caller names (the key or flag it came from), never a wrapped value.
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>

namespace cuboid {

// a * b, or nothing when it leaves [lo, hi] of int64 (overflow included).
inline std::optional<std::int64_t> checked_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<std::int64_t> checked_add(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// The product of all factors, or nothing when any partial product overflows int64 or the
// result exceeds `limit`.
inline std::optional<std::int64_t> checked_product(
    std::initializer_list<std::int64_t> factors,
    std::int64_t limit = std::numeric_limits<std::int64_t>::max()) {
  std::int64_t r = 1;
  for (std::int64_t f : factors) {
    const auto p = checked_mul(r, f);
    if (!p) return std::nullopt;
    r = *p;
  }
  if (r > limit) return std::nullopt;
  return r;
}

// ceil(a / b) for a >= 0, b > 0, without the a + b - 1 that can overflow.
inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return a / b + (a % b != 0); }

// A double converted to int64 only when it is finite and in range (the conversion of anything
// else is undefined behaviour); nothing otherwise.
inline std::optional<std::int64_t> to_int64(double v) {
  // 2^63 is exactly representable; every double below it converts.
  if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) return std::nullopt;
  return std::int64_t(v);
}

}  // namespace cuboid
