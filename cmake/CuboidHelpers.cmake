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
