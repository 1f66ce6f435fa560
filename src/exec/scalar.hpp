#pragma once
// What the pipeline needs to know of a scalar type beyond its arithmetic: the type of its real
// part, whether it is complex, its magnitude, how a (re, im) pair becomes one, and NaN. The four
// types every layer is built for are float, double, Kokkos::complex<float> and
// Kokkos::complex<double> (the types Kokkos Kernels hands to the vendor BLAS).
#include <Kokkos_Core.hpp>
#include <cuboid/gemm.hpp>

#include <cmath>
#include <complex>
#include <limits>
#include <type_traits>

namespace cuboid {

template <>
constexpr ScalarType scalar_type_of<Kokkos::complex<float>>() {
  return ScalarType::complex_float32;
}
template <>
constexpr ScalarType scalar_type_of<Kokkos::complex<double>>() {
  return ScalarType::complex_float64;
}

namespace exec {

template <class Scalar>
struct ScalarTraits {
  using Real = Scalar;
  static constexpr bool complex = false;
};
template <class T>
struct ScalarTraits<Kokkos::complex<T>> {
  using Real = T;
  static constexpr bool complex = true;
};
// std::complex too: the checks accumulate in it.
template <class T>
struct ScalarTraits<std::complex<T>> {
  using Real = T;
  static constexpr bool complex = true;
};
template <class Scalar>
using RealOf = typename ScalarTraits<Scalar>::Real;
template <class Scalar>
constexpr bool is_complex = ScalarTraits<Scalar>::complex;

// |x| in double: the modulus of a complex number.
template <class Scalar>
KOKKOS_INLINE_FUNCTION double magnitude(const Scalar& x) {
  if constexpr (is_complex<Scalar>) {
    const double r = double(x.real()), i = double(x.imag());
    return std::sqrt(r * r + i * i);
  } else {
    return std::abs(double(x));
  }
}

// re + i im, the imaginary part dropped for a real type.
template <class Scalar>
KOKKOS_INLINE_FUNCTION Scalar make_scalar(double re, double im) {
  if constexpr (is_complex<Scalar>) {
    using R = RealOf<Scalar>;
    return Scalar(R(re), R(im));
  } else {
    (void)im;
    return Scalar(re);
  }
}

template <class Scalar>
KOKKOS_INLINE_FUNCTION bool is_finite(const Scalar& x) {
  if constexpr (is_complex<Scalar>)
    return std::isfinite(double(x.real())) && std::isfinite(double(x.imag()));
  else
    return std::isfinite(double(x));
}

template <class Scalar>
Scalar quiet_nan() {
  const auto q = std::numeric_limits<RealOf<Scalar>>::quiet_NaN();
  return make_scalar<Scalar>(q, q);
}

template <class Scalar>
constexpr double unit_roundoff() {
  return double(std::numeric_limits<RealOf<Scalar>>::epsilon()) / 2;
}

// x as two doubles (the imaginary part 0 for a real type): for reports and records.
template <class Scalar>
double real_part(const Scalar& x) {
  if constexpr (is_complex<Scalar>)
    return double(x.real());
  else
    return double(x);
}
template <class Scalar>
double imag_part(const Scalar& x) {
  if constexpr (is_complex<Scalar>)
    return double(x.imag());
  else
    return (void)x, 0.0;
}

// One Slot<Scalar> for each of the four types, reached by type: what a long-lived object keeps
// per scalar type (a context's speeds and local multiply, its prepared distributed products).
template <template <class> class Slot>
struct PerScalar {
  Slot<float> f32;
  Slot<double> f64;
  Slot<Kokkos::complex<float>> c32;
  Slot<Kokkos::complex<double>> c64;
  template <class Scalar>
  Slot<Scalar>& of() {
    if constexpr (std::is_same_v<Scalar, float>)
      return f32;
    else if constexpr (std::is_same_v<Scalar, double>)
      return f64;
    else if constexpr (std::is_same_v<Scalar, Kokkos::complex<float>>)
      return c32;
    else
      return c64;
  }
};

}  // namespace exec
}  // namespace cuboid

// The scalar types every templated layer is instantiated for (double alone in a build configured
// with CUBOID_PRECISIONS=double).
#if CUBOID_DOUBLE_ONLY
#define CUBOID_FOR_EACH_SCALAR(X) X(double)
#else
#define CUBOID_FOR_EACH_SCALAR(X) \
  X(float)                        \
  X(double)                       \
  X(Kokkos::complex<float>)       \
  X(Kokkos::complex<double>)
#endif
