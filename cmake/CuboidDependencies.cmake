# Kokkos: any version from 3.4 on, found without a version so that 4.x and 5.x are accepted.
# A build tree given a Kokkos_ROOT (variable or environment) whose prefix does not hold the
# Kokkos it found before forgets that Kokkos and its Kokkos Kernels, whichever way they were
# found (Kokkos_ROOT, CMAKE_PREFIX_PATH); the feature checks below then run again. Without a
# Kokkos_ROOT the cached Kokkos stays (a rebuild from another shell): scripts/check always
# passes the prefix it chose.
set(_cuboid_root "${Kokkos_ROOT}")
if(NOT _cuboid_root)
  set(_cuboid_root "$ENV{Kokkos_ROOT}")
endif()
if(_cuboid_root AND Kokkos_DIR)
  get_filename_component(_cuboid_root_real "${_cuboid_root}" REALPATH)
  get_filename_component(_cuboid_dir_real "${Kokkos_DIR}" REALPATH)
  string(FIND "${_cuboid_dir_real}/" "${_cuboid_root_real}/" _cuboid_at)
  if(NOT _cuboid_at EQUAL 0)
    message(STATUS "cuboid: Kokkos_ROOT ${_cuboid_root} does not hold the Kokkos found before "
                   "(${Kokkos_DIR}): finding Kokkos and Kokkos Kernels again")
    unset(Kokkos_DIR CACHE)
    unset(KokkosKernels_DIR CACHE)
  endif()
endif()
find_package(Kokkos REQUIRED)
if(Kokkos_VERSION VERSION_LESS 3.4)
  message(FATAL_ERROR
    "cuboid needs Kokkos 3.4 or newer; found ${Kokkos_VERSION} at ${Kokkos_DIR}. "
    "Run scripts/setup-deps for a private Kokkos 3.4.01, or point Kokkos_ROOT at a newer install.")
endif()
# The language standard: at least C++17, at least what Kokkos was built with (4.x records it),
# and C++20 for Kokkos 5, whether or not the user set CMAKE_CXX_STANDARD.
set(_cuboid_std 17)
if(Kokkos_CXX_STANDARD MATCHES "^[0-9]+$" AND Kokkos_CXX_STANDARD GREATER _cuboid_std)
  set(_cuboid_std ${Kokkos_CXX_STANDARD})
endif()
if(Kokkos_VERSION VERSION_GREATER_EQUAL 5.0 AND _cuboid_std LESS 20)
  set(_cuboid_std 20)
endif()
if(NOT CMAKE_CXX_STANDARD OR CMAKE_CXX_STANDARD LESS _cuboid_std)
  set(CMAKE_CXX_STANDARD ${_cuboid_std})
endif()
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)

# Kokkos Kernels usually sits in Kokkos' prefix: look there first and only there (HINTS would
# come after CMAKE_PREFIX_PATH, which may name another Kokkos' prefix), so that Kokkos_ROOT
# (which guides only find_package(Kokkos)) is enough. Then KokkosKernels_ROOT and
# CMAKE_PREFIX_PATH, as usual.
get_filename_component(_cuboid_kokkos_prefix "${Kokkos_DIR}/../../.." ABSOLUTE)
find_package(KokkosKernels QUIET PATHS "${_cuboid_kokkos_prefix}" NO_DEFAULT_PATH)
if(NOT KokkosKernels_FOUND)
  find_package(KokkosKernels QUIET)
endif()
# Kokkos Kernels names its target differently across versions and packagings.
set(CUBOID_KOKKOSKERNELS_TARGET "")
foreach(t Kokkos::kokkoskernels kokkoskernels trilinos_kokkoskernels)
  if(TARGET ${t})
    set(CUBOID_KOKKOSKERNELS_TARGET ${t})
    break()
  endif()
endforeach()
if(NOT CUBOID_KOKKOSKERNELS_TARGET)
  message(FATAL_ERROR
    "Kokkos Kernels not found in ${_cuboid_kokkos_prefix} (Kokkos' prefix) nor on CMAKE_PREFIX_PATH "
    "(looked for the targets Kokkos::kokkoskernels, kokkoskernels and trilinos_kokkoskernels). "
    "Install it next to Kokkos, or set KokkosKernels_ROOT to its prefix.")
endif()
message(STATUS "cuboid: Kokkos ${Kokkos_VERSION} (${Kokkos_DEVICES}) at ${Kokkos_DIR}, "
               "Kokkos Kernels target ${CUBOID_KOKKOSKERNELS_TARGET}, C++${CMAKE_CXX_STANDARD}")

# Whether `cmake --install` ships this Kokkos and Kokkos Kernels beside cuboid
# (cmake/CuboidPackage.cmake), so that the installed prefix needs nothing of the machine that
# built it. By default only where both are shared libraries in one prefix of their own, as
# scripts/setup-deps builds them (its lib/cmake holds their two packages and nothing else): the
# prefix's include/ and bin/ are installed whole, which a /usr or a prefix shared with other
# packages must not be.
get_filename_component(CUBOID_KOKKOS_PREFIX "${Kokkos_DIR}/../../.." REALPATH)
get_filename_component(_cuboid_kokkos_libdir "${Kokkos_DIR}/../.." REALPATH)
file(RELATIVE_PATH CUBOID_KOKKOS_LIBDIR "${CUBOID_KOKKOS_PREFIX}" "${_cuboid_kokkos_libdir}")
get_filename_component(_cuboid_kk_prefix "${KokkosKernels_DIR}/../../.." REALPATH)
get_target_property(_cuboid_kokkos_type Kokkos::kokkoscore TYPE)
file(GLOB _cuboid_kokkos_packages RELATIVE "${_cuboid_kokkos_libdir}/cmake" "${_cuboid_kokkos_libdir}/cmake/*")
list(REMOVE_ITEM _cuboid_kokkos_packages Kokkos KokkosKernels)
set(_cuboid_install_kokkos OFF)
if(_cuboid_kokkos_type STREQUAL "SHARED_LIBRARY" AND _cuboid_kk_prefix STREQUAL CUBOID_KOKKOS_PREFIX
   AND CUBOID_KOKKOS_LIBDIR MATCHES "^lib(64)?$" AND NOT _cuboid_kokkos_packages)
  set(_cuboid_install_kokkos ON)
endif()
option(CUBOID_INSTALL_KOKKOS
       "cmake --install also installs the Kokkos and Kokkos Kernels prefix this build uses (a shared build in a prefix of its own: libraries, include/, bin/, CMake packages) beside cuboid, with every installed library's RUNPATH $ORIGIN only, so that the prefix can be moved or copied as a whole; default ON where Kokkos is such a build. OFF: cuboid's libraries find Kokkos in the directories they were linked against and the application brings that Kokkos (Kokkos_ROOT)"
       ${_cuboid_install_kokkos})
if(CUBOID_INSTALL_KOKKOS AND NOT _cuboid_kk_prefix STREQUAL CUBOID_KOKKOS_PREFIX)
  message(FATAL_ERROR "CUBOID_INSTALL_KOKKOS: Kokkos Kernels (${KokkosKernels_DIR}) is not in Kokkos' "
                      "prefix ${CUBOID_KOKKOS_PREFIX}; configure with -DCUBOID_INSTALL_KOKKOS=OFF")
endif()

# Feature checks instead of version arithmetic. Each compiles the calls cuboid makes, with the
# view types it passes (cmake/checks/*.cpp). Their cached results belong to one Kokkos, one
# compiler and one set of check sources: when any of those changes they run again.
include(CheckCXXSourceCompiles)
include(CheckCXXSymbolExists)
set(_cuboid_checks GEMM_WITH_SPACE gemm_with_space GEMM_TPL_TRAIT_WITH_SPACE gemm_tpl_trait_with_space
                   ASYNC_DEEP_COPY async_deep_copy INITIALIZATION_SETTINGS initialization_settings)
set(_cuboid_check_key "${Kokkos_DIR};${KokkosKernels_DIR};${CMAKE_CXX_COMPILER};${CMAKE_CXX_FLAGS};${CMAKE_CXX_STANDARD}")
file(GLOB _cuboid_check_sources ${PROJECT_SOURCE_DIR}/cmake/checks/*.cpp)
foreach(f ${_cuboid_check_sources})
  file(SHA1 ${f} _h)
  string(APPEND _cuboid_check_key ";${_h}")
endforeach()
string(SHA1 _cuboid_check_key "${_cuboid_check_key}")
set(_cuboid_tpl_vars CUBOID_KK_TPL_BLAS CUBOID_KK_TPL_CUBLAS CUBOID_KK_TPL_ROCBLAS)
if(NOT "${_cuboid_check_key}" STREQUAL "${CUBOID_FEATURE_KEY}")
  set(_vars ${_cuboid_tpl_vars})
  list(LENGTH _cuboid_checks _n)
  math(EXPR _last "${_n} - 1")
  foreach(i RANGE 0 ${_last} 2)
    list(GET _cuboid_checks ${i} _name)
    list(APPEND _vars CUBOID_HAVE_${_name})
  endforeach()
  foreach(v ${_vars})
    unset(${v} CACHE)
  endforeach()
  set(CUBOID_FEATURE_KEY "${_cuboid_check_key}" CACHE INTERNAL "Kokkos, compiler and check sources of the cached feature checks")
endif()
set(CMAKE_REQUIRED_LIBRARIES ${CUBOID_KOKKOSKERNELS_TARGET} Kokkos::kokkos)
set(CMAKE_REQUIRED_QUIET ON)
list(LENGTH _cuboid_checks _n)
math(EXPR _last "${_n} - 1")
foreach(i RANGE 0 ${_last} 2)
  math(EXPR j "${i} + 1")
  list(GET _cuboid_checks ${i} _name)
  list(GET _cuboid_checks ${j} _file)
  file(READ ${PROJECT_SOURCE_DIR}/cmake/checks/${_file}.cpp _src)
  check_cxx_source_compiles("${_src}" CUBOID_HAVE_${_name})
endforeach()
# Which vendor GEMM Kokkos Kernels was built with, for host and for device memory.
check_cxx_symbol_exists(KOKKOSKERNELS_ENABLE_TPL_BLAS KokkosKernels_config.h CUBOID_KK_TPL_BLAS)
check_cxx_symbol_exists(KOKKOSKERNELS_ENABLE_TPL_CUBLAS KokkosKernels_config.h CUBOID_KK_TPL_CUBLAS)
check_cxx_symbol_exists(KOKKOSKERNELS_ENABLE_TPL_ROCBLAS KokkosKernels_config.h CUBOID_KK_TPL_ROCBLAS)
unset(CMAKE_REQUIRED_LIBRARIES)
unset(CMAKE_REQUIRED_QUIET)
foreach(i RANGE 0 ${_last} 2)
  list(GET _cuboid_checks ${i} _name)
  if(CUBOID_HAVE_${_name})
    list(APPEND _have ${_name})
  else()
    list(APPEND _lack ${_name})
  endif()
endforeach()
message(STATUS "cuboid: Kokkos features present: ${_have}; absent: ${_lack}")

# Every GEMM must reach the vendor BLAS wherever Kokkos Kernels has one for that memory space:
# kokkos_ext::gemm asserts it at compile time (Kokkos Kernels' own kernel is several times
# slower and would pass every test silently). OFF only to measure that slower path.
option(CUBOID_REQUIRE_VENDOR_GEMM "Fail the build when a GEMM would bypass Kokkos Kernels' vendor BLAS" ON)
if(NOT CUBOID_KK_TPL_BLAS)
  message(WARNING "Kokkos Kernels has no BLAS TPL: host GEMMs run its own kernel, far below OpenBLAS. "
                  "Rebuild it with -DKokkosKernels_ENABLE_TPL_BLAS=ON (scripts/setup-deps does).")
endif()
if(Kokkos_ENABLE_CUDA AND NOT CUBOID_KK_TPL_CUBLAS)
  message(WARNING "Kokkos Kernels has no cuBLAS TPL: device GEMMs run its own kernel.")
endif()
if(Kokkos_ENABLE_HIP)
  if(CUBOID_KK_TPL_ROCBLAS)
    message(STATUS "cuboid: HIP GEMMs call rocBLAS (Kokkos Kernels' rocBLAS TPL)")
  else()
    message(STATUS "cuboid: no rocBLAS TPL in this Kokkos Kernels: HIP GEMMs run Kokkos Kernels' own kernel")
  endif()
endif()
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
  # cuboid_library() applies it (CuboidHelpers.cmake).
  # These libraries are free of Kokkos: their code cannot differ between backends, and nvcc
  # takes about three times as long as the host compiler over them.
  set(CUBOID_HOST_ONLY_TARGETS cuboid_deck cuboid_partition cuboid_layout cuboid_util
      cuboid_report cuboid_exec_plan cuboid_app_model
      CACHE STRING "Targets nvcc_wrapper hands to the host compiler")
endif()

# The HIP variant (scripts/build-hip): everything goes through hipcc (Clang with HIP), which
# accepts every header cuboid uses; the GPU architecture comes in through CMAKE_CXX_FLAGS.
if(Kokkos_ENABLE_HIP)
  set(CUBOID_HIP_ARCH "" CACHE STRING "AMD GPU architecture of the HIP variant, e.g. gfx908 (set by scripts/build-hip)")
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR
      "This Kokkos has the HIP backend: configure cuboid with CMAKE_CXX_COMPILER=hipcc "
      "(scripts/build-hip does that), not ${CMAKE_CXX_COMPILER}.")
  endif()
  message(STATUS "cuboid: HIP variant for ${CUBOID_HIP_ARCH} (CMAKE_CXX_FLAGS: ${CMAKE_CXX_FLAGS})")
endif()
