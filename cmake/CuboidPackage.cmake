# What `cmake --install` puts under a prefix, all of it for applications that link libcuboid.so
# (src/library): the library with its SONAME links, libcuboid_mpi.so (the distributed entry)
# where MPI is on, the public headers include/cuboid/*, a CMake package giving cuboid::cuboid and
# cuboid::cuboid_mpi (lib/cmake/cuboid) and pkg-config files (lib/pkgconfig).
# Nothing else of cuboid is installed: the headers under src/ are internal, and the public ones
# include none of them (kokkos.hpp includes Kokkos, which the package's target cuboid::kokkos
# brings). With CUBOID_INSTALL_KOKKOS the Kokkos and Kokkos Kernels prefix the build used is
# installed beside them (and lib/pkgconfig/cuboid_kokkos.pc for C++ with Kokkos), and no
# installed file names a folder of the build machine: the prefix can be moved whole.
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

# Kokkos' prefix as it lies, in Kokkos' own layout (its packages find the prefix three folders
# up), then made independent of where it came from, and cuboid's libraries' RUNPATH checked
# (cmake/CuboidRelocateKokkos.cmake; after the libraries above and src/pxgemm's).
if(CUBOID_INSTALL_KOKKOS)
  set(_k ${CUBOID_KOKKOS_PREFIX})
  file(GLOB _cuboid_kokkos_libs ${_k}/${CUBOID_KOKKOS_LIBDIR}/libkokkos*.so*)
  install(FILES ${_cuboid_kokkos_libs} DESTINATION ${CUBOID_KOKKOS_LIBDIR})
  install(DIRECTORY ${_k}/${CUBOID_KOKKOS_LIBDIR}/cmake/Kokkos ${_k}/${CUBOID_KOKKOS_LIBDIR}/cmake/KokkosKernels
          DESTINATION ${CUBOID_KOKKOS_LIBDIR}/cmake)
  install(DIRECTORY ${_k}/include/ DESTINATION include)
  # nvcc_wrapper and kokkos_launch_compiler, which a CUDA Kokkos' package compiles with.
  if(IS_DIRECTORY ${_k}/bin)
    install(DIRECTORY ${_k}/bin/ DESTINATION bin USE_SOURCE_PERMISSIONS)
  endif()
  get_filename_component(_k_given "${Kokkos_DIR}/../../.." ABSOLUTE)
  set(_k_prefixes ${_k_given} ${_k})
  list(REMOVE_DUPLICATES _k_prefixes)
  install(CODE "set(CUBOID_KOKKOS_PREFIXES [[${_k_prefixes}]])
                set(CUBOID_KOKKOS_LIBDIR [[${CUBOID_KOKKOS_LIBDIR}]])
                set(CUBOID_LIBDIR [[${CMAKE_INSTALL_LIBDIR}]])
                set(CUBOID_INSTALL_RPATH [[${CUBOID_INSTALL_RPATH}]])
                include([[${CMAKE_CURRENT_LIST_DIR}/CuboidRelocateKokkos.cmake]])")
endif()

set(_cuboid_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/cuboid)
install(EXPORT cuboidTargets NAMESPACE cuboid:: DESTINATION ${_cuboid_cmake_dir}
        FILE cuboidTargets.cmake)
# The Kokkos the library was linked against: the package finds that one again and refuses
# another, since a process holds one Kokkos. Installed beside, it is named from the package's
# place; otherwise by its path on this machine.
if(CUBOID_INSTALL_KOKKOS)
  set(CUBOID_KOKKOS_BESIDE 1)
  set(CUBOID_KOKKOS_DIR "")
else()
  set(CUBOID_KOKKOS_BESIDE 0)
  get_filename_component(CUBOID_KOKKOS_DIR "${Kokkos_DIR}" REALPATH)
endif()
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
# cuboid_kokkos.pc, for C++ with <cuboid/kokkos.hpp>, with the Kokkos installed beside: the
# options Kokkos' target gives its users (-fopenmp with OpenMP), taken out of their
# $<$<COMPILE_LANGUAGE:CXX>:...> and $<$<LINK_LANGUAGE:CXX>:...> wrappers; any other generator
# expression is dropped. Kokkos 3.4 asks for C++17 through a compile feature, which the standard
# cuboid is built with gives.
if(CUBOID_INSTALL_KOKKOS)
  set(_cflags "-std=c++${CMAKE_CXX_STANDARD}")
  set(_libs "")
  foreach(_kind COMPILE LINK)
    get_target_property(_opts Kokkos::kokkoscore INTERFACE_${_kind}_OPTIONS)
    if(NOT _opts)
      continue()
    endif()
    string(REGEX REPLACE "\\$<\\$<${_kind}_LANGUAGE:CXX>:([^>]*)>" "\\1" _opts "${_opts}")
    foreach(_o IN LISTS _opts)
      if(_o MATCHES "\\$<|>$" OR (_kind STREQUAL "LINK" AND _o MATCHES "^-D"))
        continue()
      endif()
      if(_kind STREQUAL "COMPILE")
        list(APPEND _cflags ${_o})
      else()
        list(APPEND _libs ${_o})
      endif()
    endforeach()
  endforeach()
  foreach(_l ${CMAKE_DL_LIBS})
    list(APPEND _libs -l${_l})
  endforeach()
  list(REMOVE_DUPLICATES _cflags)
  list(REMOVE_DUPLICATES _libs)
  string(REPLACE ";" " " CUBOID_KOKKOS_PC_CFLAGS "${_cflags}")
  string(REPLACE ";" " " CUBOID_KOKKOS_PC_LIBS "${_libs}")
  configure_file(${CMAKE_CURRENT_LIST_DIR}/cuboid_kokkos.pc.in ${PROJECT_BINARY_DIR}/package/cuboid_kokkos.pc
                 @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/package/cuboid_kokkos.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
if(TARGET cuboid_mpi_shared)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/cuboid_mpi.pc.in ${PROJECT_BINARY_DIR}/package/cuboid_mpi.pc
                 @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/package/cuboid_mpi.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
