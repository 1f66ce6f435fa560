# What `cmake --install` puts under a prefix, all of it for applications that link libcuboid.so
# (src/library): the library with its SONAME links, libcuboid_mpi.so (the distributed entry)
# where MPI is on, the public headers include/cuboid/*, a CMake package giving cuboid::cuboid and
# cuboid::cuboid_mpi (lib/cmake/cuboid) and pkg-config files (lib/pkgconfig).
# Nothing else is installed: the headers under src/ are internal, and the public ones include
# none of them (kokkos.hpp includes Kokkos, which the package's target cuboid::kokkos brings).
# Without libcuboid.so (a static Kokkos) nothing is installed at all.
if(NOT TARGET cuboid_shared)
  return()
endif()
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS cuboid_shared EXPORT cuboidTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
# libcuboid_mpi.so (cuboid::cuboid_mpi) with the MPI layer only: libcuboid.so needs no MPI.
if(TARGET cuboid_mpi_shared)
  install(TARGETS cuboid_mpi_shared EXPORT cuboidTargets
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
install(FILES ${PROJECT_SOURCE_DIR}/include/cuboid/cuboid.h ${PROJECT_SOURCE_DIR}/include/cuboid/cuboid.hpp
              ${PROJECT_SOURCE_DIR}/include/cuboid/error.hpp ${PROJECT_SOURCE_DIR}/include/cuboid/gemm.hpp
              ${PROJECT_SOURCE_DIR}/include/cuboid/kokkos.hpp
              ${PROJECT_SOURCE_DIR}/include/cuboid/cuboid_c.f90
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cuboid)
# The distributed entry's headers, with the MPI layer only; they include the application's
# <mpi.h>, which must be the MPI cuboid was built with.
if(CUBOID_ENABLE_MPI)
  install(FILES ${PROJECT_SOURCE_DIR}/include/cuboid/mpi.hpp
                ${PROJECT_SOURCE_DIR}/include/cuboid/cuboid_mpi.h
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cuboid)
endif()

set(_cuboid_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/cuboid)
install(EXPORT cuboidTargets NAMESPACE cuboid:: DESTINATION ${_cuboid_cmake_dir}
        FILE cuboidTargets.cmake)
# The Kokkos the library was linked against: the package finds that one again and refuses
# another, since a process holds one Kokkos.
get_filename_component(CUBOID_KOKKOS_DIR "${Kokkos_DIR}" REALPATH)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/cuboidConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/package/cuboidConfig.cmake
                              INSTALL_DESTINATION ${_cuboid_cmake_dir})
# Before 1.0 a minor version may change the API, as the SONAME says (src/library).
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(_cuboid_compatibility SameMinorVersion)
else()
  set(_cuboid_compatibility SameMajorVersion)
endif()
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/cuboidConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY ${_cuboid_compatibility})
install(FILES ${PROJECT_BINARY_DIR}/package/cuboidConfig.cmake
              ${PROJECT_BINARY_DIR}/package/cuboidConfigVersion.cmake
        DESTINATION ${_cuboid_cmake_dir})

# The .pc file finds its prefix from where it lies, so that `cmake --install --prefix` anywhere
# gives a working one.
file(RELATIVE_PATH CUBOID_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" CUBOID_PC_TO_PREFIX "${CUBOID_PC_TO_PREFIX}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/cuboid.pc.in ${PROJECT_BINARY_DIR}/package/cuboid.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/package/cuboid.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(TARGET cuboid_mpi_shared)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/cuboid_mpi.pc.in ${PROJECT_BINARY_DIR}/package/cuboid_mpi.pc
                 @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/package/cuboid_mpi.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
