# Warnings for cuboid's own code only (dependencies come in as SYSTEM includes).
add_library(cuboid_warnings INTERFACE)
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang" AND NOT Kokkos_ENABLE_CUDA)
  target_compile_options(cuboid_warnings INTERFACE -Wall -Wextra $<$<BOOL:${CUBOID_WERROR}>:-Werror>)
endif()

# cuboid_library(NAME SOURCES ... [LIBS ...]): one static library per folder of src/.
function(cuboid_library name)
  cmake_parse_arguments(arg "" "" "SOURCES;LIBS" ${ARGN})
  add_library(${name} STATIC ${arg_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src ${PROJECT_BINARY_DIR}/src)
  target_link_libraries(${name} PUBLIC ${arg_LIBS} PRIVATE cuboid_warnings)
  if(Kokkos_ENABLE_CUDA AND name IN_LIST CUBOID_HOST_ONLY_TARGETS)
    target_compile_options(${name} PRIVATE --host-only)
  endif()
endfunction()

# cuboid_shared_library(NAME MAP version-script [OUTPUT_NAME name] SOURCES ...): one of the shared
# libraries cuboid installs: exports only what its version script lists, resolves every symbol
# when it is linked (not when an application is: a dependency missing from the link fails here;
# the sanitizers' runtime comes with the executable), lands in build/lib with the project's
# version and SONAME (major.minor before 1.0, when a minor version may change the ABI), and finds
# the libraries beside it and those it was linked against without LD_LIBRARY_PATH. Installed
# with its Kokkos (CUBOID_INSTALL_KOKKOS), it finds Kokkos beside it too and names no directory
# of the build machine: its RUNPATH is $ORIGIN only, the system's libraries (OpenBLAS, MPI) come
# from the loader's search path.
include(GNUInstallDirs)
set(CUBOID_INSTALL_RPATH "$ORIGIN")
if(CUBOID_INSTALL_KOKKOS)
  file(RELATIVE_PATH _cuboid_to_kokkos /prefix/${CMAKE_INSTALL_LIBDIR} /prefix/${CUBOID_KOKKOS_LIBDIR})
  if(_cuboid_to_kokkos)
    list(APPEND CUBOID_INSTALL_RPATH "$ORIGIN/${_cuboid_to_kokkos}")
  endif()
endif()
function(cuboid_shared_library name)
  cmake_parse_arguments(arg "" "MAP;OUTPUT_NAME" "SOURCES" ${ARGN})
  add_library(${name} SHARED ${arg_SOURCES})
  target_link_options(${name} PRIVATE "LINKER:--version-script=${arg_MAP}")
  if(NOT CUBOID_SANITIZE)
    target_link_options(${name} PRIVATE "LINKER:--no-undefined")
  endif()
  if(PROJECT_VERSION_MAJOR EQUAL 0)
    set(soversion ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
  else()
    set(soversion ${PROJECT_VERSION_MAJOR})
  endif()
  set_target_properties(${name} PROPERTIES
    VERSION ${PROJECT_VERSION}
    SOVERSION ${soversion}
    LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/lib
    LINK_DEPENDS ${arg_MAP}
    INSTALL_RPATH "${CUBOID_INSTALL_RPATH}")
  if(NOT CUBOID_INSTALL_KOKKOS)
    set_target_properties(${name} PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
  endif()
  if(arg_OUTPUT_NAME)
    set_target_properties(${name} PROPERTIES OUTPUT_NAME ${arg_OUTPUT_NAME} EXPORT_NAME ${arg_OUTPUT_NAME})
  endif()
endfunction()

# cuboid_io_sources(SOURCES...): units that only read input, parse options or write reports,
# never on a path whose speed matters, compiled at -O1 in Release builds: -O3 spends most of
# their compile time (the JSON, TOML and CLI11 templates) for nothing.
function(cuboid_io_sources)
  set_property(SOURCE ${ARGN} DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} APPEND PROPERTY
               COMPILE_OPTIONS $<$<CONFIG:Release>:-O1>)
endfunction()

# cuboid_test(NAME SOURCES ... [LIBS ...] [LABELS ...]): a GoogleTest program registered with
# CTest, one CTest test per GoogleTest test. A test that calls GTEST_SKIP shows as skipped, not
# passed: each runs alone, and GoogleTest prints "[  SKIPPED ]" only for a test that skipped
# without failing.
function(cuboid_test name)
  cmake_parse_arguments(arg "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${arg_SOURCES})
  target_link_libraries(${name} PRIVATE ${arg_LIBS} GTest::gtest_main cuboid_warnings)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
  include(GoogleTest)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "${arg_LABELS}"
                       SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
endfunction()

# cuboid_gtest_run(NAME COMMAND [ARGS...]): a whole GoogleTest program as one CTest test (its
# tests share a process, e.g. one Kokkos initialisation), COMMAND a path such as
# $<TARGET_FILE:...> or mpiexec. It shows as skipped when it passed and some test called
# GTEST_SKIP, and as failed whenever it failed (tests/support/gtest_skip.sh says why not
# SKIP_REGULAR_EXPRESSION).
function(cuboid_gtest_run name)
  add_test(NAME ${name} COMMAND ${PROJECT_SOURCE_DIR}/tests/support/gtest_skip.sh ${ARGN})
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77)
endfunction()
