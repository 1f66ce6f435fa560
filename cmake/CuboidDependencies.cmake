# Kokkos: any version from 3.4 on, found without a version so that 4.x and 5.x are accepted.
find_package(Kokkos REQUIRED)
if(Kokkos_VERSION VERSION_LESS 3.4)
  message(FATAL_ERROR
    "cuboid needs Kokkos 3.4 or newer; found ${Kokkos_VERSION} at ${Kokkos_DIR}. "
    "Run scripts/setup-deps for a private Kokkos 3.4.01, or point Kokkos_ROOT at a newer install.")
endif()
if(Kokkos_VERSION VERSION_GREATER_EQUAL 5.0 AND CMAKE_CXX_STANDARD LESS 20)
  set(CMAKE_CXX_STANDARD 20)
endif()
if(NOT CMAKE_CXX_STANDARD)
  set(CMAKE_CXX_STANDARD 17)
endif()
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)

# Kokkos Kernels names its target differently across versions and packagings.
find_package(KokkosKernels QUIET)
set(CUBOID_KOKKOSKERNELS_TARGET "")
foreach(t Kokkos::kokkoskernels kokkoskernels trilinos_kokkoskernels)
  if(TARGET ${t})
    set(CUBOID_KOKKOSKERNELS_TARGET ${t})
    break()
  endif()
endforeach()
if(NOT CUBOID_KOKKOSKERNELS_TARGET)
  message(FATAL_ERROR
    "Kokkos Kernels not found (looked for the targets Kokkos::kokkoskernels, kokkoskernels and "
    "trilinos_kokkoskernels). Install it next to Kokkos or add its prefix to CMAKE_PREFIX_PATH.")
endif()
message(STATUS "cuboid: Kokkos ${Kokkos_VERSION} (${Kokkos_DEVICES}), Kokkos Kernels target ${CUBOID_KOKKOSKERNELS_TARGET}")

# Feature checks instead of version arithmetic.
include(CheckCXXSourceCompiles)
set(CMAKE_REQUIRED_LIBRARIES ${CUBOID_KOKKOSKERNELS_TARGET} Kokkos::kokkos)
check_cxx_source_compiles("
#include <KokkosBlas3_gemm.hpp>
int main() {
  Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace> a(\"a\", 1, 1);
  KokkosBlas::gemm(Kokkos::DefaultHostExecutionSpace(), \"N\", \"N\", 1.0, a, a, 0.0, a);
}" CUBOID_HAVE_GEMM_WITH_SPACE)
check_cxx_source_compiles("
#include <Kokkos_Core.hpp>
int main() {
  Kokkos::View<double*, Kokkos::HostSpace> a(\"a\", 1), b(\"b\", 1);
  Kokkos::deep_copy(Kokkos::DefaultHostExecutionSpace(), a, b);
}" CUBOID_HAVE_ASYNC_DEEP_COPY)
unset(CMAKE_REQUIRED_LIBRARIES)
include(${CMAKE_CURRENT_LIST_DIR}/CuboidGitRevision.cmake)

find_package(fmt REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(CLI11 QUIET CONFIG)
if(NOT CLI11_FOUND)
  find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp REQUIRED)
  add_library(CLI11::CLI11 INTERFACE IMPORTED)
  target_include_directories(CLI11::CLI11 INTERFACE ${CLI11_INCLUDE_DIR})
endif()
find_package(tomlplusplus QUIET CONFIG)
if(NOT TARGET tomlplusplus::tomlplusplus)
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(TOMLPP REQUIRED IMPORTED_TARGET tomlplusplus)
  add_library(tomlplusplus::tomlplusplus ALIAS PkgConfig::TOMLPP)
endif()
if(CUBOID_ENABLE_MPI)
  find_package(MPI REQUIRED COMPONENTS CXX)
endif()
if(CUBOID_ENABLE_TESTS)
  find_package(GTest REQUIRED)
endif()
if(CUBOID_ENABLE_BENCH)
  find_package(benchmark REQUIRED)
endif()

# The CUDA variant (scripts/build-cuda): Kokkos with the CUDA backend compiles everything with
# its nvcc_wrapper (or Clang), and the architecture comes in through CMAKE_CXX_FLAGS.
if(Kokkos_ENABLE_CUDA)
  set(CUBOID_CUDA_ARCH "" CACHE STRING "Compute capability of the CUDA variant, e.g. 90 (set by scripts/build-cuda)")
  get_filename_component(_cuboid_cxx_name "${CMAKE_CXX_COMPILER}" NAME)
  if(NOT _cuboid_cxx_name STREQUAL "nvcc_wrapper" AND NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR
      "This Kokkos has the CUDA backend: configure cuboid with CMAKE_CXX_COMPILER set to the "
      "nvcc_wrapper next to it (scripts/build-cuda does that), not ${CMAKE_CXX_COMPILER}.")
  endif()
  if(NOT CMAKE_CXX_FLAGS MATCHES "-arch=sm_|--cuda-gpu-arch")
    message(WARNING "No -arch=sm_XX in CMAKE_CXX_FLAGS: nvcc_wrapper falls back to its default architecture.")
  endif()
  message(STATUS "cuboid: CUDA variant for sm_${CUBOID_CUDA_ARCH} (CMAKE_CXX_FLAGS: ${CMAKE_CXX_FLAGS})")
  # Libraries that never see Kokkos skip nvcc: nvcc's front end rejects some host-only headers
  # (toml++'s `if constexpr` in generic lambdas), and the host compiler is faster anyway.
  set(CUBOID_HOST_ONLY_TARGETS cuboid_deck CACHE STRING "Targets nvcc_wrapper hands to the host compiler")
  function(_cuboid_host_only_targets)
    foreach(t ${CUBOID_HOST_ONLY_TARGETS})
      if(TARGET ${t})
        target_compile_options(${t} PRIVATE --host-only)
      endif()
    endforeach()
  endfunction()
  cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL _cuboid_host_only_targets)
endif()
