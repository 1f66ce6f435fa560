#pragma once
// The settings a distributed product (mpi/runner.hpp) refuses, by the ids it throws
// (KeyedError::key) and hands to its caller's `locate`: each caller names them in its own terms
// (a deck's keys and where they were given, the library's options). Free of MPI, so that a
// caller built without it can name them too.
namespace cuboid::mpi::setting {
inline constexpr char rank_speeds[] = "rank_speeds";        // DistSettings::rank_speeds
inline constexpr char grid[] = "grid";                      // DistSettings::grid
inline constexpr char speeds[] = "speeds";                  // the processors' speeds
inline constexpr char tile[] = "tile";                      // DistSettings::tile
inline constexpr char rank_algorithm[] = "rank_algorithm";  // DistSettings::algorithm
inline constexpr char memory_limit[] = "memory_limit";      // DistSettings::memory_limit_bytes
}  // namespace cuboid::mpi::setting
