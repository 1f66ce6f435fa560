#pragma once
// cuboid::gemm on Kokkos views: C <- alpha op(A) op(B) + beta C with a cuboid::Context, on
// rank-2 views of double, float, Kokkos::complex<double> or Kokkos::complex<float>, none of them
// copied. The one public header that includes
// Kokkos (the others stay usable without it); link cuboid::kokkos, which brings Kokkos' compile
// options, instead of cuboid::cuboid.
//
//   cuboid::gemm(context, space, op_a, op_b, alpha, A, B, beta, C);  // execution space first
//   cuboid::gemm(context, op_a, op_b, alpha, A, B, beta, C);         // after Kokkos::fence()
//
// Host-accessible views (LayoutLeft, LayoutRight, or LayoutStride with one unit stride;
// subviews of larger views included) go to Context::gemm, with the leading dimensions the
// strides give: column-major views as they are, and row-major ones as the same product
// transposed (C^T = op(B)^T op(A)^T). Views in a memory the host cannot address (a GPU's) go to
// Context::gemm_resident: one GEMM on the context's processor with that memory. `space` is
// fenced before the inputs are read (work queued on it may produce them), and C is complete on
// return.
//
// Errors (exceptions, never aborts): KeyedError naming "A", "B" or "C" for extents that do not
// make a product or strides BLAS cannot address; Unsupported naming the view that lies in
// another memory space than C (nothing is copied); KeyedError("processors") for device views
// when the context has no processor with their memory. A view laid out otherwise than C is read
// as it lies, as the transposed operand (the library's op does it, nothing is copied).
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <cuboid/cuboid.hpp>
#include <string>
#include <tuple>
#include <type_traits>

namespace cuboid {
namespace kokkos_detail {

// How BLAS sees a rank-2 view: column-major with `ld` between columns, or row-major with `ld`
// between rows (read column-major, a row-major matrix is its own transpose).
struct Storage {
  bool row_major = false;
  std::int64_t ld = 1;
};

template <class View>
Storage storage_of(const View& v, const char* name) {
  using Layout = typename View::array_layout;
  const auto rows = std::int64_t(v.extent(0)), cols = std::int64_t(v.extent(1));
  const auto s0 = std::int64_t(v.stride(0)), s1 = std::int64_t(v.stride(1));
  Storage s;
  if constexpr (std::is_same_v<Layout, Kokkos::LayoutLeft>) {
    s = {false, s1};
  } else if constexpr (std::is_same_v<Layout, Kokkos::LayoutRight>) {
    s = {true, s0};
  } else {
    // A single row or column has one stride that addresses nothing.
    if (s0 == 1 || rows <= 1)
      s = {false, s1};
    else if (s1 == 1 || cols <= 1)
      s = {true, s0};
    else
      throw Unsupported(name, std::string(name) + ": a LayoutStride view with strides (" +
                                  std::to_string(s0) + ", " + std::to_string(s1) +
                                  "): BLAS needs unit stride along its rows or its columns");
  }
  const std::int64_t inner = s.row_major ? cols : rows, outer = s.row_major ? rows : cols;
  if (outer <= 1 || inner == 0)
    s.ld = std::max({s.ld, inner, std::int64_t(1)});  // addresses nothing beyond one line
  else if (s.ld < inner)
    throw KeyedError(name, std::string(name) + ": a stride of " + std::to_string(s.ld) +
                               " between " + (s.row_major ? "rows" : "columns") + " of " +
                               std::to_string(inner) + " elements: the view overlaps itself");
  return s;
}

// op as read from storage that is (`same` = true) or is not laid out like C.
inline Op effective(Op op, bool same) {
  if (same) return op;
  return op == Op::none ? Op::transpose : Op::none;
}

inline std::string shape(std::int64_t rows, std::int64_t cols) {
  return std::to_string(rows) + " x " + std::to_string(cols);
}

template <class View>
constexpr bool host_accessible() {
  return Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename View::memory_space>::accessible;
}

template <class View>
constexpr void check_view_type() {
  static_assert(Kokkos::is_view<View>::value, "cuboid::gemm takes Kokkos views");
  static_assert(static_cast<int>(View::rank) == 2, "cuboid::gemm takes rank-2 views");
  using Layout = typename View::array_layout;
  static_assert(std::is_same_v<Layout, Kokkos::LayoutLeft> ||
                    std::is_same_v<Layout, Kokkos::LayoutRight> ||
                    std::is_same_v<Layout, Kokkos::LayoutStride>,
                "cuboid::gemm takes LayoutLeft, LayoutRight and LayoutStride views");
  using Scalar = typename View::non_const_value_type;
  static_assert(std::is_same_v<Scalar, double> || std::is_same_v<Scalar, float> ||
                    std::is_same_v<Scalar, Kokkos::complex<double>> ||
                    std::is_same_v<Scalar, Kokkos::complex<float>>,
                "cuboid::gemm computes double, float, Kokkos::complex<double> and "
                "Kokkos::complex<float>");
}

// The context's pointer interface takes std::complex, which holds the same two reals as
// Kokkos::complex.
template <class Scalar>
struct PublicScalar {
  using type = Scalar;
};
template <class T>
struct PublicScalar<Kokkos::complex<T>> {
  using type = std::complex<T>;
};
template <class Scalar>
auto to_public(Scalar* p) {
  using P = typename PublicScalar<std::remove_const_t<Scalar>>::type;
  if constexpr (std::is_const_v<Scalar>)
    return reinterpret_cast<const P*>(p);
  else
    return reinterpret_cast<P*>(p);
}
template <class Scalar>
auto to_public_value(const Scalar& x) {
  return typename PublicScalar<Scalar>::type(x.real(), x.imag());
}
inline double to_public_value(double x) { return x; }
inline float to_public_value(float x) { return x; }

}  // namespace kokkos_detail

template <class ExecSpace, class AV, class BV, class CV>
void gemm(Context& context, const ExecSpace& space, Op op_a, Op op_b,
          typename CV::const_value_type alpha, const AV& A, const BV& B,
          typename CV::const_value_type beta, const CV& C) {
  namespace d = kokkos_detail;
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "cuboid::gemm: the second argument is a Kokkos execution space instance");
  d::check_view_type<AV>();
  d::check_view_type<BV>();
  d::check_view_type<CV>();
  using Scalar = typename CV::non_const_value_type;
  static_assert(std::is_same_v<typename AV::non_const_value_type, Scalar> &&
                    std::is_same_v<typename BV::non_const_value_type, Scalar>,
                "cuboid::gemm: A, B and C hold one scalar type");
  static_assert(!std::is_const_v<typename CV::value_type>, "cuboid::gemm writes C");

  const auto m = std::int64_t(C.extent(0)), n = std::int64_t(C.extent(1));
  const bool ta = op_a != Op::none, tb = op_b != Op::none;
  const auto a_rows = std::int64_t(A.extent(ta ? 1 : 0)), k = std::int64_t(A.extent(ta ? 0 : 1));
  const auto b_rows = std::int64_t(B.extent(tb ? 1 : 0)),
             b_cols = std::int64_t(B.extent(tb ? 0 : 1));
  if (a_rows != m)
    throw KeyedError("A", "A: op(A) is " + d::shape(a_rows, k) + " but C is " + d::shape(m, n) +
                              ": their rows differ");
  if (b_rows != k || b_cols != n)
    throw KeyedError("B", "B: op(B) is " + d::shape(b_rows, b_cols) + ", op(A) " + d::shape(m, k) +
                              " and C " + d::shape(m, n) + ": op(B) must be " + d::shape(k, n));
  const d::Storage sa = d::storage_of(A, "A"), sb = d::storage_of(B, "B"),
                   sc = d::storage_of(C, "C");

  // Nothing is copied: device views are multiplied where they lie, so all three must be there.
  constexpr bool on_host =
      d::host_accessible<AV>() && d::host_accessible<BV>() && d::host_accessible<CV>();
  using CSpace = typename CV::memory_space;
  if constexpr (!on_host) {
    if (!std::is_same_v<typename AV::memory_space, CSpace> ||
        !std::is_same_v<typename BV::memory_space, CSpace>) {
      const bool a_apart = !std::is_same_v<typename AV::memory_space, CSpace>;
      const char* name = a_apart ? "A" : "B";
      throw Unsupported(name, std::string(name) + " lies in " +
                                  (a_apart ? AV::memory_space::name() : BV::memory_space::name()) +
                                  " memory and C in " + CSpace::name() +
                                  ": cuboid multiplies views where they lie and copies none");
    }
  }

  // Column-major C: C = op(A) op(B). Row-major C, read column-major, is C^T = op(B)^T op(A)^T:
  // the operands swap, and each one laid out like C is read as it lies.
  const bool same_a = sa.row_major == sc.row_major, same_b = sb.row_major == sc.row_major;
  // A complex operand laid out unlike C, read as it lies, is the transpose of the matrix meant:
  // its conjugate transpose is then its conjugate alone, which BLAS has no op for.
  constexpr bool complex = !std::is_floating_point_v<Scalar>;
  for (auto [op, same, name] : {std::tuple{op_a, same_a, "A"}, std::tuple{op_b, same_b, "B"}})
    if (complex && !same && op == Op::conjugate_transpose)
      throw Unsupported(
          name, std::string(name) + ": a " + (sc.row_major ? "column-major" : "row-major") +
                    " complex view with C " + (sc.row_major ? "row-major" : "column-major") +
                    " and op 'C' would need its conjugate without a transpose, "
                    "which BLAS has no op for: lay it out like C");
  const Op ea = d::effective(op_a, same_a), eb = d::effective(op_b, same_b);
  struct Operand {
    const Scalar* data;
    std::int64_t ld;
    Op op;
    const char *view, *op_name;
    bool same;
  };
  const Operand a{A.data(), sa.ld, ea, "A", "op_a", same_a};
  const Operand b{B.data(), sb.ld, eb, "B", "op_b", same_b};
  const Operand& first = sc.row_major ? b : a;
  const Operand& second = sc.row_major ? a : b;
  const std::int64_t rows = sc.row_major ? n : m, cols = sc.row_major ? m : n;

  space.fence();
  try {
    const auto pa = d::to_public(first.data), pb = d::to_public(second.data);
    const auto pc = d::to_public(C.data());
    const auto al = d::to_public_value(Scalar(alpha)), be = d::to_public_value(Scalar(beta));
    if constexpr (on_host) {
      context.gemm(first.op, second.op, rows, cols, k, al, pa, first.ld, pb, second.ld, be, pc,
                   sc.ld);
    } else {
      context.gemm_resident(CSpace::name(), first.op, second.op, rows, cols, k, al, pa, first.ld,
                            pb, second.ld, be, pc, sc.ld);
    }
  } catch (const Unsupported& e) {
    // The library refuses op != N for its first or second operand: name the view argument.
    const Operand* x = e.key == "op_a" ? &first : e.key == "op_b" ? &second : nullptr;
    if (!x) throw;
    if (x->same) throw Unsupported(x->op_name, std::string(x->op_name) + ": " + e.what());
    throw Unsupported(x->view, std::string(x->view) + ": a " +
                                   (sc.row_major ? "column-major" : "row-major") + " view with C " +
                                   (sc.row_major ? "row-major" : "column-major") +
                                   " would be read transposed, which this version does not "
                                   "compute (" +
                                   e.what() + ")");
  }
}

// The same after Kokkos::fence(): whatever produced the inputs has finished.
template <class AV, class BV, class CV>
void gemm(Context& context, Op op_a, Op op_b, typename CV::const_value_type alpha, const AV& A,
          const BV& B, typename CV::const_value_type beta, const CV& C) {
  Kokkos::fence();
  cuboid::gemm(context, typename CV::execution_space(), op_a, op_b, alpha, A, B, beta, C);
}

}  // namespace cuboid
