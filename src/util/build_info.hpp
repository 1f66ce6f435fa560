#pragma once
// How this binary was built: configure-time facts from CMake (cmake/CuboidGitRevision.cmake and
// src/util/build_info.cpp.in). They live in one generated source file, not in a header, so that
// a new commit recompiles that file only.
#include <string>

namespace cuboid {

struct BuildInfo {
  std::string version;       // project version
  std::string git_commit;    // full hash, or "unknown" (not a git checkout)
  std::string git_describe;  // `git describe --always --dirty`, or "unknown"
  int git_dirty = -1;        // tracked files modified when CMake ran: 1, 0, or -1 unknown
  std::string compiler;      // id and version
  std::string build_type;
  std::string cxx_flags;                    // CMAKE_CXX_FLAGS and those of the build type
  std::string kokkos_devices, kokkos_arch;  // as Kokkos's CMake package exported them
  std::string mpi;                          // MPI library at configure time; empty without MPI
};

const BuildInfo& build_info();

}  // namespace cuboid
