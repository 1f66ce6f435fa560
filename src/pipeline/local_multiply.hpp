#pragma once
// The local multiply: one process's processors computing products C += A B that lie in host
// memory, through partition -> discretise -> plan -> execute. Everything that multiplies goes
// through LocalMultiply::multiply: `cuboid run` once per repetition, a rank of a distributed run
// once per piece of its share, the benchmarks alike. It knows no deck and no MPI: settings are
// plain values, and a setting it refuses is a KeyedError naming the setting.
#include <cuboid/gemm.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "exec/engine.hpp"
#include "exec/model.hpp"
#include "exec/plan.hpp"
#include "exec/schedule.hpp"
#include "partition/box.hpp"
#include "partition/strategy.hpp"
#include "platform/calibration.hpp"
#include "platform/processor.hpp"

namespace cuboid::pipeline {

// The settings the local pipeline refuses, by the ids it throws (KeyedError::key; the library's
// option names): each caller names them in its own terms (a deck's keys and where they were
// given). The messages do not repeat the name.
namespace setting {
inline constexpr char memory_budget[] = "memory_budget_mib";  // LocalOptions' budgets
inline constexpr char algorithm[] = "algorithm";              // LocalOptions::algorithm
inline constexpr char discretization[] = "discretization";    // LocalOptions::discretization
inline constexpr char speeds[] = "speeds";                    // the processors' speeds
}  // namespace setting

// How products are shared among the processors.
struct LocalOptions {
  partition::Algorithm algorithm = partition::Algorithm::nrrp3d;
  partition::Discretization discretization = partition::Discretization::rounded;
  exec::StealPolicy schedule = exec::StealPolicy::static_plan;
  // Steps cut to C blocks of at most this many tiles a side so that they can move between
  // processors; 0 chooses it when the schedule steals and leaves pieces whole when it does not.
  // Given with the static schedule, it makes the plan a stealing run would make (to compare the
  // two bit for bit).
  std::int64_t task_tiles = 0;
  std::uint64_t seed = 1;  // the random steal victims
  // Per processor: memory budgets, fewest k-panels per piece, buffer costs. The beta flags are
  // set per product.
  exec::PlanOptions plan;
  // The "flops+link" speed model: per processor, its GEMM rate on its own memory and its link.
  // When a processor copies, the partition is not cut by the speeds as given but by the rates
  // each processor reaches on its zone under the model (found by re-cutting until the
  // predicted finishing times agree). Empty: the speeds as given, each zone's time its flops at
  // its speed (the "flops" model).
  std::vector<exec::ProcessorRate> rates;
  // GB/s at which the host adds partial C buffers after the processors finish (the model's
  // reduction term); 0: the model's default.
  double reduce_gbs = 0;
};

// One product of the local multiply: C (m x n) <- alpha op(A) op(B) + beta C, op(A) m x k and
// op(B) k x n, cut into tiles of `tile`. The beta flags let the plan skip scaling (one) or
// reading (zero) C. The partition and plan are those of op(A) op(B) whatever the ops: only
// which stored block a step reads changes.
struct Product {
  std::int64_t m = 0, n = 0, k = 0, tile = 0;
  bool beta_is_zero = false, beta_is_one = false;
  Op op_a = Op::none, op_b = Op::none;
  partition::TileExtent tiles() const {
    return {(m + tile - 1) / tile, (n + tile - 1) / tile, (k + tile - 1) / tile};
  }
};

// A product's plan: its tile cuboid's zones among the processors and their steps.
struct LocalPlan {
  Product product;
  std::vector<partition::TileZone> zones;  // one per processor, in the product's tiles
  exec::Plan steps;
  std::int64_t task_tiles = 0;  // as chosen (0: pieces whole)
  std::vector<double> speeds;   // what the zones were cut by (GFLOP/s)
  exec::Prediction prediction;  // the model's times for these steps
};

// What the engine allocates on the host for a set of plans, beyond the matrices: partial C
// buffers of k-split zones, and the buffers and staging of the processors that copy.
struct HostBuffers {
  double partial_bytes = 0, copying_bytes = 0;
  double total() const { return partial_bytes + copying_bytes; }
};

// The processors of this process, their speeds, and the engine that drives them: threads and
// buffers made once and kept for every product. One multiply at a time per object.
template <class Scalar>
class LocalMultiply {
 public:
  // Speeds in GFLOP/s, one per processor; the workers come from exec::make_worker unless given.
  LocalMultiply(std::vector<platform::ProcessorSpec> processors, std::vector<double> speeds,
                LocalOptions options);
  LocalMultiply(std::vector<platform::ProcessorSpec> processors, std::vector<double> speeds,
                LocalOptions options, std::vector<std::unique_ptr<exec::Worker<Scalar>>> workers);

  // Plans the products that will run one after the other on this object (a rank's pieces, or
  // one product). The engine's buffers fit the largest panels and blocks over all of them:
  // while that exceeds a processor's budget, all are planned again with a smaller one. Throws
  // KeyedError naming the setting at fault (setting::algorithm, setting::discretization,
  // setting::memory_budget).
  std::vector<LocalPlan> plan(const std::vector<Product>& products) const;
  LocalPlan plan(const Product& product) const { return std::move(plan(std::vector{product})[0]); }

  // Makes every buffer the plan needs; after it, multiply() allocates nothing.
  void reserve(const LocalPlan& plan) { engine_.reserve(plan.steps); }

  // C <- alpha op(A) op(B) + beta C with the plan: A, B, C are the product's whole host matrices
  // as stored (A k x m when op(A) transposes). Throws std::invalid_argument when their extents
  // do not match the plan's product. `poll` runs on the calling thread while the processors
  // compute (e.g. to progress MPI).
  exec::RunResult multiply(const LocalPlan& plan, const exec::HostMatrix<Scalar>& A,
                           const exec::HostMatrix<Scalar>& B, const exec::HostMatrix<Scalar>& C,
                           Scalar alpha, Scalar beta, const std::function<bool()>& poll = {});

  // What the plans will make the engine allocate on the host (estimate them before allocating).
  HostBuffers host_buffers(const std::vector<LocalPlan>& plans) const;
  double reserved_bytes() const { return engine_.reserved_bytes(); }

  const std::vector<platform::ProcessorSpec>& processors() const { return processors_; }
  const std::vector<double>& speeds() const { return speeds_; }
  const LocalOptions& options() const { return options_; }

 private:
  std::vector<LocalPlan> plan_with(const std::vector<Product>& products,
                                   const std::vector<std::int64_t>& budgets) const;
  LocalPlan plan_one(const Product& product, const std::vector<double>& speeds,
                     const std::vector<std::int64_t>& budgets) const;
  std::vector<platform::ProcessorSpec> processors_;
  std::vector<double> speeds_;
  LocalOptions options_;
  exec::Engine<Scalar> engine_;
};

// What the planner needs to know of each processor: its memory budget (devices: 80 % of free
// memory, staged: 512 MiB, unless `budget_mib` > 0; host: none, it works in place), the fewest
// k-panels per piece (4 for processors that copy, so that copies overlap GEMMs) and what its
// buffers cost. Throws KeyedError (setting::memory_budget) for a budget above a device's
// free memory.
exec::PlanOptions plan_options_for(const std::vector<platform::ProcessorSpec>& processors,
                                   std::size_t element_bytes, double budget_mib);

// Refuses a shape the local multiply cannot compute (negative extents). Every scalar type and op
// is computed; the type stays in the signature for a backend that lacks one.
// Leading dimensions are the views' own (a padded LayoutLeft view is a sub-matrix).
void require_supported(const GemmShape& shape, ScalarType type);

}  // namespace cuboid::pipeline
