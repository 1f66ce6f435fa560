// The public GEMM description's helpers (include/cuboid/gemm.hpp).
#include <cuboid/gemm.hpp>

namespace cuboid {

std::optional<Op> parse_op(char c) {
  switch (c) {
    case 'N':
    case 'n':
      return Op::none;
    case 'T':
    case 't':
      return Op::transpose;
    case 'C':
    case 'c':
      return Op::conjugate_transpose;
    default:
      return std::nullopt;
  }
}

std::string_view to_string(Op op) {
  switch (op) {
    case Op::none:
      return "N";
    case Op::transpose:
      return "T";
    case Op::conjugate_transpose:
      return "C";
  }
  return "?";
}

std::string_view to_string(ScalarType t) {
  switch (t) {
    case ScalarType::float32:
      return "float";
    case ScalarType::float64:
      return "double";
    case ScalarType::complex_float32:
      return "complex-float";
    case ScalarType::complex_float64:
      return "complex-double";
  }
  return "?";
}

double gemm_flops(ScalarType t, std::int64_t m, std::int64_t n, std::int64_t k) {
  const bool complex = t == ScalarType::complex_float32 || t == ScalarType::complex_float64;
  return (complex ? 8.0 : 2.0) * double(m) * double(n) * double(k);
}

}  // namespace cuboid
