#pragma once
// What a GEMM call asks for: C <- alpha op(A) op(B) + beta C on column-major matrices, op(A)
// m x k, op(B) k x n, C m x n, each stored with a leading dimension. The names follow BLAS so
// that a caller of dgemm finds its arguments here.
#include <complex>
#include <cstdint>
#include <optional>
#include <string_view>

namespace cuboid {

enum class Op : char {
  none = 'N',                 // op(X) = X
  transpose = 'T',            // op(X) = X^T
  conjugate_transpose = 'C',  // op(X) = X^H (X^T for real scalars)
};

enum class ScalarType { float32, float64, complex_float32, complex_float64 };

struct GemmShape {
  Op op_a = Op::none, op_b = Op::none;
  std::int64_t m = 0, n = 0, k = 0;
  // Leading dimensions of the stored matrices; 0 means the stored rows (no gap between
  // columns). A is stored m x k for Op::none and k x m otherwise, B k x n or n x k.
  std::int64_t lda = 0, ldb = 0, ldc = 0;
};

// 'N', 'T', 'C' in either case, as BLAS accepts them.
std::optional<Op> parse_op(char c);
std::string_view to_string(Op op);
std::string_view to_string(ScalarType t);
// 2mnk for real scalars, 8mnk for complex ones (the LAPACK count: a complex multiply-add is four
// real multiplications and four additions).
double gemm_flops(ScalarType t, std::int64_t m, std::int64_t n, std::int64_t k);

template <class Scalar>
constexpr ScalarType scalar_type_of();
template <>
constexpr ScalarType scalar_type_of<float>() {
  return ScalarType::float32;
}
template <>
constexpr ScalarType scalar_type_of<double>() {
  return ScalarType::float64;
}
template <>
constexpr ScalarType scalar_type_of<std::complex<float>>() {
  return ScalarType::complex_float32;
}
template <>
constexpr ScalarType scalar_type_of<std::complex<double>>() {
  return ScalarType::complex_float64;
}

}  // namespace cuboid
