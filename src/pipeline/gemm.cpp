// The public GEMM description's helpers (include/cuboid/gemm.hpp).
#include <cuboid/gemm.hpp>

namespace cuboid {
namespace {

constexpr Op kOps[] = {Op::none, Op::transpose, Op::conjugate_transpose};
constexpr std::string_view kScalarNames[] = {"float", "double", "complex-float", "complex-double"};

}  // namespace

std::optional<Op> parse_op(char c) {
  const char upper = c >= 'a' && c <= 'z' ? char(c - 'a' + 'A') : c;
  for (Op op : kOps)
    if (char(op) == upper) return op;
  return std::nullopt;
}

// The enumerators are BLAS's characters.
std::string_view to_string(Op op) {
  static constexpr char names[] = "NTC";
  for (int i = 0; i < 3; ++i)
    if (kOps[i] == op) return std::string_view(names + i, 1);
  return "?";
}

std::string_view to_string(ScalarType t) {
  const auto i = std::size_t(t);
  return i < std::size(kScalarNames) ? kScalarNames[i] : "?";
}

double gemm_flops(ScalarType t, std::int64_t m, std::int64_t n, std::int64_t k) {
  const bool complex = t == ScalarType::complex_float32 || t == ScalarType::complex_float64;
  return (complex ? 8.0 : 2.0) * double(m) * double(n) * double(k);
}

}  // namespace cuboid
