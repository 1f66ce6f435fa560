# The git revision of the source tree, read at configure time into
#   CUBOID_GIT_COMMIT    full hash, or "unknown"
#   CUBOID_GIT_DESCRIBE  `git describe --always --dirty`, or "unknown"
#   CUBOID_GIT_DIRTY     1 if tracked files differed from the commit when CMake ran, 0 if not,
#                        -1 when unknown
# Only a checkout whose top level is this project counts: a source tarball unpacked inside some
# other repository, a missing git, or a repository git refuses to read (owned by another user)
# all give "unknown" instead of someone else's revision or a failed configure.
# A commit or checkout re-runs CMake (the HEAD and branch files are configure dependencies), so
# `cmake --build` alone keeps the revision current; edits without a commit do not re-run it, hence
# "dirty" means dirty at configure time.
set(CUBOID_GIT_COMMIT unknown)
set(CUBOID_GIT_DESCRIBE unknown)
set(CUBOID_GIT_DIRTY -1)
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${PROJECT_SOURCE_DIR} rev-parse --show-toplevel
                  OUTPUT_VARIABLE _cuboid_git_top OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE _cuboid_git_rc ERROR_QUIET)
  set(_cuboid_is_ours FALSE)
  if(_cuboid_git_rc EQUAL 0 AND _cuboid_git_top)
    get_filename_component(_cuboid_top_real "${_cuboid_git_top}" REALPATH)
    get_filename_component(_cuboid_src_real "${PROJECT_SOURCE_DIR}" REALPATH)
    if(_cuboid_top_real STREQUAL _cuboid_src_real)
      set(_cuboid_is_ours TRUE)
    endif()
  endif()
  if(_cuboid_is_ours)
    execute_process(COMMAND ${GIT_EXECUTABLE} -C ${PROJECT_SOURCE_DIR} rev-parse --verify -q HEAD
                    OUTPUT_VARIABLE _cuboid_commit OUTPUT_STRIP_TRAILING_WHITESPACE
                    RESULT_VARIABLE _cuboid_rc ERROR_QUIET)
    if(_cuboid_rc EQUAL 0 AND _cuboid_commit MATCHES "^[0-9a-f]+$")
      set(CUBOID_GIT_COMMIT ${_cuboid_commit})
      execute_process(COMMAND ${GIT_EXECUTABLE} -C ${PROJECT_SOURCE_DIR} describe --always --dirty --abbrev=10
                      OUTPUT_VARIABLE _cuboid_describe OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      if(_cuboid_describe)
        set(CUBOID_GIT_DESCRIBE ${_cuboid_describe})
        if(_cuboid_describe MATCHES "-dirty$")
          set(CUBOID_GIT_DIRTY 1)
        else()
          set(CUBOID_GIT_DIRTY 0)
        endif()
      endif()
    endif()
    # Re-configure when HEAD moves: HEAD itself (checkout), the branch it names (commit), and
    # packed-refs (a ref that git gc packed away).
    foreach(_cuboid_ref HEAD packed-refs)
      execute_process(COMMAND ${GIT_EXECUTABLE} -C ${PROJECT_SOURCE_DIR} rev-parse --git-path ${_cuboid_ref}
                      OUTPUT_VARIABLE _cuboid_path OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      list(APPEND _cuboid_git_files ${_cuboid_path})
    endforeach()
    execute_process(COMMAND ${GIT_EXECUTABLE} -C ${PROJECT_SOURCE_DIR} symbolic-ref -q HEAD
                    OUTPUT_VARIABLE _cuboid_branch OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(_cuboid_branch)
      execute_process(COMMAND ${GIT_EXECUTABLE} -C ${PROJECT_SOURCE_DIR} rev-parse --git-path ${_cuboid_branch}
                      OUTPUT_VARIABLE _cuboid_path OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      list(APPEND _cuboid_git_files ${_cuboid_path})
    endif()
    foreach(_cuboid_file ${_cuboid_git_files})
      if(NOT IS_ABSOLUTE "${_cuboid_file}")
        set(_cuboid_file "${PROJECT_SOURCE_DIR}/${_cuboid_file}")
      endif()
      if(EXISTS "${_cuboid_file}")
        set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_cuboid_file}")
      endif()
    endforeach()
  endif()
endif()
# The short form other code shows next to the version.
if(CUBOID_GIT_DESCRIBE STREQUAL "unknown")
  set(CUBOID_GIT_REVISION unknown)
else()
  set(CUBOID_GIT_REVISION ${CUBOID_GIT_DESCRIBE})
endif()
message(STATUS "cuboid: git revision ${CUBOID_GIT_REVISION} (commit ${CUBOID_GIT_COMMIT})")
