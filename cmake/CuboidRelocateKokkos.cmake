# Run by `cmake --install` (cmake/CuboidPackage.cmake) after cuboid's libraries and the Kokkos
# and Kokkos Kernels files of CUBOID_KOKKOS_PREFIX are installed: makes the installed prefix
# independent of that prefix and of the build tree, so that it works wherever it is moved.
#   CUBOID_KOKKOS_PREFIXES  the Kokkos prefix as found and as its real path (a path may name either)
#   CUBOID_KOKKOS_LIBDIR    its library folder, relative to it (lib or lib64)
#   CUBOID_LIBDIR           cuboid's library folder in the installed prefix
#   CUBOID_INSTALL_RPATH    the RUNPATH cuboid's libraries are installed with ($ORIGIN...)
set(_root "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}")
set(_libdir "${_root}/${CUBOID_KOKKOS_LIBDIR}")

# cuboid_set_runpath(FILE NEW): the whole RUNPATH replaced. Kokkos' libraries named the Kokkos
# prefix's lib/ and the BLAS folder they were linked against; $ORIGIN finds each other beside
# them, and OpenBLAS comes from the system's search path. cuboid's keep what CMake installed
# them with, less the empty entries CMake pads a build tree's RUNPATH with when the install one
# was longer at link time (an empty entry is the working directory to some loaders).
function(cuboid_set_runpath file new)
  file(READ_ELF "${file}" RUNPATH _old RPATH _old_rpath)
  if(NOT _old)
    set(_old "${_old_rpath}")
  endif()
  string(REPLACE ";" ":" _old "${_old}")
  string(REPLACE ";" ":" new "${new}")
  if(_old AND NOT _old STREQUAL new)
    file(RPATH_CHANGE FILE "${file}" OLD_RPATH "${_old}" NEW_RPATH "${new}")
  endif()
endfunction()
file(GLOB _libs "${_libdir}/libkokkos*.so*")
foreach(_lib IN LISTS _libs)
  if(NOT IS_SYMLINK "${_lib}")
    cuboid_set_runpath("${_lib}" "$ORIGIN")
  endif()
endforeach()
file(GLOB _libs "${_root}/${CUBOID_LIBDIR}/libcuboid*.so*")
foreach(_lib IN LISTS _libs)
  if(NOT IS_SYMLINK "${_lib}")
    cuboid_set_runpath("${_lib}" "${CUBOID_INSTALL_RPATH}")
  endif()
endforeach()

# Paths into the prefix in the packages' files (Kokkos Kernels' hint at Kokkos' package, the
# folder Kokkos looks in for kokkos_launch_compiler) become paths from the file's own place. The
# variable is set at the file's top, not ${CMAKE_CURRENT_LIST_DIR} in place: in a function body
# that would name the caller's folder.
foreach(_package Kokkos KokkosKernels)
  set(_dir "${_libdir}/cmake/${_package}")
  file(RELATIVE_PATH _up "/prefix/${CUBOID_KOKKOS_LIBDIR}/cmake/${_package}" /prefix)
  string(REGEX REPLACE "/$" "" _up "${_up}")
  file(GLOB _files "${_dir}/*.cmake")
  foreach(_file IN LISTS _files)
    file(READ "${_file}" _text)
    set(_new "${_text}")
    foreach(_prefix IN LISTS CUBOID_KOKKOS_PREFIXES)
      string(REPLACE "${_prefix}" "\${_${_package}_relocated_prefix}" _new "${_new}")
    endforeach()
    if(NOT _new STREQUAL _text)
      string(CONCAT _new "# Installed with cuboid: the prefix is found from this file's place.\n"
                    "get_filename_component(_${_package}_relocated_prefix \"\${CMAKE_CURRENT_LIST_DIR}/${_up}\" ABSOLUTE)\n"
                    "${_new}")
      file(WRITE "${_file}" "${_new}")
    endif()
  endforeach()
endforeach()
