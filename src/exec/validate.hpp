#pragma once
// The check every run makes unless told not to: one reference GEMM on the host and a normwise
// comparison against a rigorous bound.
//
// Each computed C (ours and the reference) satisfies, element by element,
//   |C_hat - C| <= gamma_{k+r} * (|alpha| |A||B| + |beta| |C0|),   gamma_n = n u / (1 - n u),
// whatever the summation order, where r counts the extra additions (partial buffers reduced
// into an element, plus alpha and beta) and u = eps/2. Taking Frobenius norms
// (|| |A||B| ||_F <= ||A||_F ||B||_F) and the two computations together, with n u <= 0.01:
//   ||C - C_ref||_F <= c * eps * ((k + r) |alpha| ||A||_F ||B||_F + (r + 2) |beta| ||C0||_F),
// with c = 1.01. A NaN or Inf anywhere fails the check.
#include <string>

#include "exec/matrices.hpp"

namespace cuboid::exec {

struct Validation {
  bool performed = false;
  bool passed = false;
  double error = 0;  // ||C - C_ref||_F
  double bound = 0;
  std::string method;
};

inline constexpr double kValidationConstant = 1.01;

template <class Scalar>
Validation validate(const HostMatrix<Scalar>& A, const HostMatrix<Scalar>& B,
                    const HostMatrix<Scalar>& C0, const HostMatrix<Scalar>& C, Scalar alpha,
                    Scalar beta, int extra_additions);

template <class Scalar>
double frobenius_norm(const HostMatrix<Scalar>& M);

}  // namespace cuboid::exec
