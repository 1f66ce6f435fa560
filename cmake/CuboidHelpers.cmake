# Warnings for cuboid's own code only (dependencies come in as SYSTEM includes).
add_library(cuboid_warnings INTERFACE)
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang" AND NOT Kokkos_ENABLE_CUDA)
  target_compile_options(cuboid_warnings INTERFACE -Wall -Wextra $<$<BOOL:${CUBOID_WERROR}>:-Werror>)
endif()

# cuboid_library(NAME SOURCES ... [LIBS ...]): one static library per folder of src/.
function(cuboid_library name)
  cmake_parse_arguments(arg "" "" "SOURCES;LIBS" ${ARGN})
  add_library(${name} STATIC ${arg_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/src ${PROJECT_BINARY_DIR}/src)
  target_link_libraries(${name} PUBLIC ${arg_LIBS} PRIVATE cuboid_warnings)
  if(Kokkos_ENABLE_CUDA AND name IN_LIST CUBOID_HOST_ONLY_TARGETS)
    target_compile_options(${name} PRIVATE --host-only)
  endif()
endfunction()

# cuboid_test(NAME SOURCES ... [LIBS ...] [LABELS ...]): a GoogleTest program registered with CTest.
function(cuboid_test name)
  cmake_parse_arguments(arg "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${arg_SOURCES})
  target_link_libraries(${name} PRIVATE ${arg_LIBS} GTest::gtest_main cuboid_warnings)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
  include(GoogleTest)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "${arg_LABELS}")
endfunction()
