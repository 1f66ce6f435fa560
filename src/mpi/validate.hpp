#pragma once
// Checking a distributed C without gathering it: a randomized checksum of every row, an
// element-by-element check of one sampled row per tile row, and (up to a size) a full one.
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
// Sampled rows (any size). The randomized check sums a row's n errors against a worst-case
// bound that grows n times faster than a typical error: in float at m = n = k = 8192 it cannot
// see one lost 256^3 tile task (a change of about 65 in a row whose bound is about 6000). So
// in every tile row of C (rows [I b, (I+1) b), b the run's tile) one row, chosen from the seed,
// is recomputed in double, element by element, by the ranks that own its elements: rows of A
// and columns of B are generated from the seed (block by block, one GEMM of values and one of
// absolute values), and every element must satisfy the componentwise bound of
// exec/validate.hpp:
//   |C_ij - ref_ij| <= 1.01 (gamma_s(k+r+2) + gamma_d(k+2)) (|alpha| (|A||B|)_ij + |beta||C0_ij|)
//                      / (1 - gamma_d(k)) + floor,
// the reference's own error being gamma_d(k+2) of the same scale. A lost or doubled tile task
// changes every element of its C tile by about sqrt(b/9), including the b elements of the
// sampled row that cross it, whose bounds are about k^2 u / 2 (2 in float at k = 8192): it
// fails. Cost: 1/b of the product's flops, in double, spread over the ranks that own C.
//
// Neither sees a single wrong element in general: the checksum sums n elements' bounds, and
// the sampled rows hold one row in b. The full check does.
//
// Full check (m*n <= mpi.full_check_max; by default every problem up to 8192 x 8192 of C). Each
// rank recomputes every C element it owns, as the single-process check does, in the run's
// precision with the host BLAS: rows of A and columns of B are generated from the seed (no
// communication) in blocks of at most 512 rows, 1024 columns and 2048 of k, one GEMM of values
// and one of absolute values per block, and every element must satisfy the componentwise bound
// of exec/validate.hpp with the reference in the run's precision:
//   |C_ij - ref_ij| <= 1.01 (gamma_s(k+r+2) + gamma_s(k+2)) (|alpha| (|A||B|)_ij + |beta||C0_ij|)
//                      / (1 - gamma_s(k)) + floor.
// (ref = alpha (A B) + beta C0, the product in the run's precision, the rest in double.)
// Cost: two products of the rank's share of C on its host, beside the run's.
#include <cstdint>
#include <string>

#include <cuboid/gemm.hpp>

#include "exec/matrices.hpp"
#include "layout/distribution.hpp"
#include "mpi/communicator.hpp"
#include "mpi/local_matrix.hpp"

namespace cuboid::mpi {
using layout::Distribution;

struct DistValidation {
  bool passed = false;
  // Randomized check: the row with the largest error / bound.
  double error = 0, bound = 0;
  // Sampled rows: elements checked, elements beyond their bound, the worst one's error and bound.
  bool sampled_passed = false;
  double sampled_rows = 0, sampled_elements = 0, sampled_failed = 0;
  double sampled_error = 0, sampled_bound = 0;
  // Full check: elements checked, elements beyond their bound, the worst one's error and bound.
  bool full_performed = false, full_passed = false;
  double full_elements = 0, full_failed = 0;
  double full_error = 0, full_bound = 0;
  // Without the full check (above mpi.full_check_max): what the other checks can miss.
  std::string full_skipped;
  std::string method;
};

// C before the product, as the checks read it: each element regenerated from the seed and the
// initial-C mode when a check needs it (runs keep no copy of C0), so that checking costs no
// memory of the size of C.
template <class Scalar>
struct InitialCElements {
  std::uint64_t seed = 0;
  exec::InitialC init = exec::InitialC::random;
  Scalar operator()(std::int64_t i, std::int64_t j) const {
    return exec::initial_element<Scalar>(init, seed, i, j);
  }
};

// `tile`: the period of the sampled rows (the run's tile; 0: the rows of a unit of C). A and B
// are as stored (dist.a k x m when op_a transposes): every check reads op(A) and op(B), the
// conjugate for Op::conjugate_transpose, and |op(A)||op(B)| for its bounds.
template <class Scalar>
DistValidation validate_distributed(const Communicator& comm, const Distribution& dist,
                                    const LocalStorage<Scalar>& A_local,
                                    const LocalStorage<Scalar>& B_local,
                                    const InitialCElements<Scalar>& C0,
                                    const LocalStorage<Scalar>& C_local, Scalar alpha, Scalar beta,
                                    std::uint64_t seed, std::int64_t full_check_max,
                                    int extra_additions, std::int64_t tile = 0, Op op_a = Op::none,
                                    Op op_b = Op::none, double buffer_bytes = 0);

// The row of C checked in tile row `I` (rows [I tile, min((I+1) tile, m))), from the seed.
std::int64_t sampled_row(std::uint64_t seed, std::int64_t I, std::int64_t tile, std::int64_t m);

}  // namespace cuboid::mpi
