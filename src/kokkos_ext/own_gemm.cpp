#include "kokkos_ext/own_gemm.hpp"

namespace cuboid::kokkos_ext {
namespace {
// A depth, not a flag: GEMMs nest where a team of single-threaded calls runs inside one.
thread_local int depth = 0;
}  // namespace

OwnGemm::OwnGemm() { ++depth; }
OwnGemm::~OwnGemm() { --depth; }
bool in_own_gemm() { return depth > 0; }

}  // namespace cuboid::kokkos_ext
