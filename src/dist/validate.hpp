#pragma once
// Checking a distributed C without gathering it.
//
// Randomized check (any size). With x in R^n, |x_j| in [0.5, 1) and random signs (generated
// from the seed, identical on every rank), every rank multiplies its own blocks and vectors of
// length m, k are summed over ranks (MPI_Allreduce), all in double:
//   y = C x,   r = alpha A (B x) + beta C0 x,   and the absolute products |C||x|, |A|(|B||x|),
//   |C0||x| for the bound. The check passes when for every row i
//     |y_i - r_i| <= 1.01 (gamma_s(k+P+4) + gamma_d(n+k+4)) (|alpha| (|A||B||x|)_i + |beta|
//     (|C0||x|)_i)
//                    + 1.01 gamma_d(n+1) (|C||x|)_i,
// gamma_s/gamma_d(j) = j u / (1 - j u) with u half the machine epsilon of the run's scalar /
// of double. The first term is the rounding of the product itself: any summation order of the
// k products, the P partials and beta C0 (the partition only reassociates); the others are the
// check's own double rounding. It is rigorous: a correct product never fails it. It catches any
// single wrong element whose error exceeds twice its row's bound (|x_j| >= 1/2); several wrong
// elements of one row escape only if their errors cancel against random signs.
// NaN or Inf anywhere fails it.
//
// Full check (m*n <= mpi.full_check_max). Each rank recomputes each C unit (block or tile) it
// owns from locally generated rows of A and columns of B (alpha A(I,:) B(:,J) + beta C0(I,J),
// one host GEMM per unit) and compares with the normwise bound of exec/validate.hpp, norms
// summed over ranks.
#include <cstdint>
#include <string>

#include "dist/communicator.hpp"
#include "dist/distribution.hpp"
#include "dist/local_matrix.hpp"

namespace cuboid::dist {

struct DistValidation {
  bool passed = false;
  // Randomized check: the row with the largest error / bound.
  double error = 0, bound = 0;
  bool full_performed = false, full_passed = false;
  double full_error = 0, full_bound = 0;  // ||C - C_ref||_F and its bound
  std::string method;
};

template <class Scalar>
DistValidation validate_distributed(const Communicator& comm, const Distribution& dist,
                                    const LocalStorage<Scalar>& A_local,
                                    const LocalStorage<Scalar>& B_local,
                                    const LocalStorage<Scalar>& C0_local,
                                    const LocalStorage<Scalar>& C_local, Scalar alpha, Scalar beta,
                                    std::uint64_t seed, std::int64_t full_check_max,
                                    int extra_additions);

}  // namespace cuboid::dist
