#pragma once
// The check every run makes unless told not to: one reference GEMM on the host, one GEMM of
// absolute values, and an element-by-element comparison against a rigorous bound.
//
// The bound. Let u be the unit roundoff of the run's scalar (eps/2) and gamma_j = j u / (1 - j u).
// Every element of a computed C = fl(alpha A B + beta C0) is a sum of k products
// alpha a_il b_lj and the term beta c0_ij, in whatever order and grouping the partition, the
// BLAS and the split-k reduction chose; each term passes through at most k + r + 2 roundings
// (its product, alpha, beta, the additions of the summation tree and r extra additions that add
// partial C buffers), so whatever the order (Higham, Accuracy and Stability of Numerical
// Algorithms, 2nd ed., sec. 3.1 and 3.5):
//   |C_hat - C|_ij <= gamma_{k+r+2} (|alpha| (|A||B|)_ij + |beta| |C0_ij|)      (1)
// The reference obeys (1) with r = 0, so by the triangle inequality
//   |C_hat - C_ref|_ij <= (gamma_{k+r+2} + gamma_{k+2}) (|alpha| W_ij + |beta| |C0_ij|),
// W = |A||B|. W is computed (a GEMM of non-negative numbers, in the scalar type) as W_hat with
// |W_hat - W| <= gamma_k W, so W <= W_hat / (1 - gamma_k). Products that underflow add at most
// half the smallest subnormal each (absolute), for which (k + r + 2) (2 + |alpha|) denorm_min
// is added. The check passes when every element satisfies
//   |C_ij - C_ref,ij| <= 1.01 (gamma_{k+r+2} + gamma_{k+2}) (|alpha| W_hat_ij + |beta| |C0_ij|)
//                        / (1 - gamma_k) + (k + r + 2)(2 + |alpha|) denorm_min,
// the differences and the right-hand side evaluated in double (1.01 covers their roundings).
// A correct run cannot fail it; NaN or Inf anywhere in C fails it (with beta = 0, C0 is ignored
// and may hold NaN).
//
// Complex scalars. The same count of roundings holds with every operation's relative error
// bounded by sqrt(2) gamma_2 = 2 sqrt(2) u / (1 - 2u), the bound of a complex multiplication (an
// addition's is u; Higham, sec. 3.6), so validation_roundoff() returns that in place of u; the
// absolute values are moduli and W = |A||B| is computed in the real type.
//
// What it catches. For data in [-1, 1) W_ij is about k/4, so the bound of an element is about
// k^2 u / 2 whatever m and n, while one lost or doubled tile task of depth b changes every
// element of its b x b tile of C by a sum of b products, about sqrt(b/9) (5.3 for b = 256). At
// m = n = k = 8192, b = 256 in float the bound is about 2: some 70 % of the 65536 elements of
// the tile fail, where the normwise bound (about 2.2e4 against a change of 1.4e3) let some 260
// lost tasks pass. The margin shrinks as k grows: in float with b = 256 a lost task is still
// seen by tens of elements at k = 25000, and may pass unseen beyond about k = 28000 (in
// double, beyond k = 7e8). A changed element is caught when its change exceeds its bound.
//
// Cost: the reference GEMM and the GEMM of absolute values; |A| and |B| are taken block by
// block (at most kBlock rows of A and columns of B at a time), so the check needs, beyond the
// reference C, 2 kBlock k + kBlock^2 elements (validation_bytes()).
#include <cstdint>
#include <string>

#include "exec/matrices.hpp"
#include "exec/scalar.hpp"
#include "kokkos_ext/compat.hpp"

namespace cuboid::exec {

struct Validation {
  bool performed = false;
  bool passed = false;
  // The element with the largest error relative to its bound: its error and bound (Inf error
  // for NaN or Inf), and where it is.
  double error = 0;
  double bound = 0;
  std::int64_t worst_i = -1, worst_j = -1;
  std::int64_t failed = 0;  // elements beyond their bound
  std::string method;
};

inline constexpr double kValidationConstant = 1.01;
// Rows of A and columns of B made absolute at a time.
inline constexpr std::int64_t kValidationBlock = 1024;

// Host memory the check needs beyond A, B, C0 and C (the reference and the blocks), bytes.
double validation_bytes(std::int64_t m, std::int64_t n, std::int64_t k, std::size_t element_bytes);

// Reference GEMM, then compare(). `extra_additions` is r above (the number of processors bounds
// the partial buffers added into any element). A and B as stored: `ops` says how the product
// reads them (W is then |op(A)||op(B)|).
template <class Scalar>
Validation validate(const HostMatrix<Scalar>& A, const HostMatrix<Scalar>& B,
                    const HostMatrix<Scalar>& C0, const HostMatrix<Scalar>& C, Scalar alpha,
                    Scalar beta, int extra_additions, kokkos_ext::Ops ops = {});

// The componentwise comparison of C with a reference computed as alpha A B + beta C0 (by one
// GEMM on the host), given that reference: what validate() does after its GEMM, and what the
// distributed full check does per block.
template <class Scalar>
Validation compare_componentwise(const HostMatrix<Scalar>& A, const HostMatrix<Scalar>& B,
                                 const HostMatrix<Scalar>& C0, const HostMatrix<Scalar>& C,
                                 const HostMatrix<Scalar>& reference, Scalar alpha, Scalar beta,
                                 int extra_additions, kokkos_ext::Ops ops = {});

// The factor of (|alpha| W + |beta| |C0|) in the bound above, and its absolute term, for a
// product of depth k with r extra additions in a scalar of unit roundoff u (exposed for the
// distributed check and the tests).
double componentwise_factor(double k, double r, double u);
double componentwise_floor(double k, double r, double alpha, double denorm_min);

// The u of the bound: the unit roundoff for a real scalar, the bound of one complex
// multiplication's relative error for a complex one.
template <class Scalar>
constexpr double validation_roundoff() {
  const double u = unit_roundoff<Scalar>();
  return is_complex<Scalar> ? 2.0 * 1.4142135623730951 * u / (1.0 - 2.0 * u) : u;
}

template <class Scalar>
double frobenius_norm(const HostMatrix<Scalar>& M);

}  // namespace cuboid::exec
