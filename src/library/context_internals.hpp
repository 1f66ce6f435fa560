#pragma once
// What the library's other entries (the distributed call) need of a Context beyond its public
// members: its lock, its report and its local multiply per scalar type. Internal: not installed.
#include <cuboid/cuboid.hpp>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "pipeline/local_multiply.hpp"
#include "platform/calibration.hpp"

namespace cuboid {

// What the library computes, refused with the names of the call's arguments (op_a, op_b,
// type) rather than the deck keys the pipeline names.
void require_supported_call(const GemmShape& shape, ScalarType type);

// The tile of a call: about a twelfth of its largest edge, a power of two in [32, 512], so that
// the partition has room to follow the speeds without making GEMMs too small to run at rate.
std::int64_t tile_for(std::int64_t m, std::int64_t n, std::int64_t k);

struct ContextInternals {
  static std::mutex& mutex(Context& c);
  static CallReport& report(Context& c);
  static const ContextOptions& options(const Context& c);
  // A slot the context keeps for another entry of the library, created empty on first use.
  static std::shared_ptr<void>& extension(Context& c, const std::string& name);
  // The context's local multiply for Scalar, its processors calibrated (on m x n x k, each edge
  // capped, when nothing is given or cached) on first use; `calibration_s` is what that took.
  template <class Scalar>
  static pipeline::LocalMultiply<Scalar>& local(Context& c, std::int64_t m, std::int64_t n,
                                                std::int64_t k, double& calibration_s);
  template <class Scalar>
  static const std::vector<platform::Speed>& speeds(Context& c);
};

}  // namespace cuboid
