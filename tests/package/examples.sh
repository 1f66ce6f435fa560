#!/usr/bin/env bash
# package.examples: what an application sees of cuboid, from an installed prefix moved elsewhere.
#   examples.sh BUILD_DIR SOURCE_DIR KOKKOS_ROOT [CMAKE_GENERATOR]
# Installs BUILD_DIR into a temporary prefix, moves that prefix (mv) to another folder, and works
# from there only, the first path gone. Checks that it holds the API and nothing else
# (libcuboid.so and its links, include/cuboid/*, the CMake package, the pkg-config files; with
# CUBOID_INSTALL_KOKKOS the Kokkos and Kokkos Kernels of KOKKOS_ROOT too) and that the public
# headers include only each other and the standard library, but kokkos.hpp, which includes
# Kokkos_Core.hpp too. With CUBOID_INSTALL_KOKKOS the prefix must be relocatable: every installed
# library's RUNPATH only $ORIGIN-relative, no text file naming KOKKOS_ROOT, the build tree or the
# source tree, and a program run with LD_DEBUG=libs loading cuboid's and Kokkos' libraries from
# the moved prefix alone (without it those checks are skipped, and the examples get Kokkos_ROOT).
# Then configures each of examples/{cpp,c,fortran} with find_package(cuboid) against the moved
# prefix (the C++ examples with the build's C++ compiler, which Kokkos' options are for), builds
# it, and runs it on "host" and on "host,staged" (examples/cpp: the pointer API and the Kokkos
# views program); the C example is built once more with pkg-config alone (cuboid.pc), and with
# CUBOID_INSTALL_KOKKOS the views program with cuboid_kokkos.pc. Every run must say its product
# is correct. The Fortran example is skipped, with a message, where there is no gfortran. Where
# the library has the MPI layer, examples/mpi runs on 2 ranks.
set -euo pipefail
build=$(cd "${1:?usage: examples.sh BUILD_DIR SOURCE_DIR KOKKOS_ROOT [GENERATOR]}" && pwd)
src=$(cd "${2:?}" && pwd)
kokkos_root=${3:?}
generator=${4:-}
tmp=$(mktemp -d "$build/package-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "examples: $*" >&2; exit 1; }
# Quiet on success; the whole log of a step that failed.
step() {  # step LOG COMMAND...
  local log=$1; shift
  "$@" >"$log" 2>&1 || { cat "$log" >&2; fail "failed: $*"; }
}

cached() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
with_kokkos=$(cached CUBOID_INSTALL_KOKKOS)
case $with_kokkos in ON | TRUE | 1 | YES) with_kokkos=1 ;; *) with_kokkos= ;; esac

step "$tmp/install.log" cmake --install "$build" --prefix "$tmp/installed/prefix"
mkdir "$tmp/moved"
mv "$tmp/installed/prefix" "$tmp/moved/prefix"
rmdir "$tmp/installed"
prefix=$tmp/moved/prefix
# Kokkos' files, where installed beside: its libraries and packages, and what its prefix has
# under include/ and bin/ (include/cuboid/ is cuboid's alone).
api='lib/libcuboid\.so(\.[0-9]+)*|lib/libcuboid_mpi\.so(\.[0-9]+)*|lib/libcuboid_pxgemm\.so(\.[0-9]+)*|lib/libcuboid_blas\.so(\.[0-9]+)*|include/cuboid/(cuboid\.h|cuboid\.hpp|error\.hpp|gemm\.hpp|kokkos\.hpp|mpi\.hpp|cuboid_mpi\.h|cuboid_c\.f90)|lib/cmake/cuboid/cuboid(Config|ConfigVersion|Targets|Targets-[a-z]+)\.cmake|lib/pkgconfig/cuboid(_mpi)?\.pc'
[ -z "$with_kokkos" ] ||
  api+='|lib/libkokkos[a-z]*\.so(\.[0-9]+)*|lib/cmake/(Kokkos|KokkosKernels)/[A-Za-z]+(-[a-z]+)?\.cmake|lib/pkgconfig/cuboid_kokkos\.pc'
unexpected=$(cd "$prefix" && find . -type f -o -type l | sed 's|^\./||' | sort | grep -Ev "^($api)\$" || true)
if [ -n "$with_kokkos" ] && [ -n "$unexpected" ]; then
  from_kokkos=$(cd "$kokkos_root" && find include bin -type f -o -type l 2>/dev/null | grep -v '^include/cuboid/' | sort)
  unexpected=$(comm -23 <(echo "$unexpected") <(echo "$from_kokkos") | grep -v '^$' || true)
fi
[ -z "$unexpected" ] || fail "installed beyond the API: $(echo $unexpected)"
wanted=(lib/libcuboid.so include/cuboid/cuboid.h include/cuboid/cuboid.hpp include/cuboid/kokkos.hpp lib/cmake/cuboid/cuboidConfig.cmake lib/pkgconfig/cuboid.pc)
[ -z "$with_kokkos" ] || wanted+=(lib/libkokkoscore.so lib/libkokkoskernels.so include/Kokkos_Core.hpp
  lib/cmake/Kokkos/KokkosConfig.cmake lib/cmake/KokkosKernels/KokkosKernelsConfig.cmake lib/pkgconfig/cuboid_kokkos.pc)
for f in "${wanted[@]}"; do
  [ -e "$prefix/$f" ] || fail "not installed: $f"
done
[ ! -e "$tmp/installed" ] || fail "the prefix was not moved"

# Relocatable: the libraries find each other from where they lie (the system's libraries, libc,
# libgomp, OpenBLAS, MPI, through the loader's search path), and no text names a folder of the
# build machine. An empty RUNPATH entry would be the working directory.
if [ -n "$with_kokkos" ]; then
  for f in "$prefix"/lib/*.so*; do
    [ ! -L "$f" ] || continue
    runpath=$(readelf -d "$f" | sed -n 's/.*(\(RUNPATH\|RPATH\)).*\[\(.*\)\]$/\2/p')
    IFS=: read -ra entries <<<"$runpath:"
    for e in "${entries[@]}"; do
      # shellcheck disable=SC2016  # $ORIGIN is the loader's, literal here
      [[ $e == '$ORIGIN' || $e == '$ORIGIN/'* ]] || fail "$(basename "$f") has RUNPATH '$runpath'"
    done
  done
  named=$(grep -rlIF -e "$kokkos_root" -e "$(realpath "$kokkos_root")" -e "$build" -e "$src" -e "$tmp/installed" \
    "$prefix" || true)
  [ -z "$named" ] || fail "installed files name the build machine's folders: $(echo $named)"
else
  echo "examples: CUBOID_INSTALL_KOKKOS is OFF: the prefix needs the Kokkos in $kokkos_root; the relocation checks are skipped"
fi
# A drop-in library, where built: exactly the entries `want` exported, and libcuboid.so found
# beside it.
#   drop_in NAME WANT
drop_in() {
  local lib=$prefix/lib/$1 want=$2 exported deps
  [ -e "$lib" ] || return 0
  exported=$(nm -D --defined-only "$lib" | awk '{print $3}' |
    grep -Ev '^(_init|_fini|__bss_start|_edata|_end)$' | grep -v '^$' | sort | tr '\n' ' ')
  [ "$exported" = "$want" ] || fail "$1 exports '$exported', not '$want'"
  # ldd's output is captured first: grep -q leaves a pipe early, and under pipefail the
  # writer's SIGPIPE would fail the check at random.
  deps=$(ldd "$lib")
  grep -q "libcuboid.so.* => $prefix/lib/" <<<"$deps" ||
    fail "the installed $1 does not find the installed libcuboid.so"
}
# ScaLAPACK's four p?gemm_ and their cuboid_ twins; the BLAS's eight GEMM entries (the rest of
# the BLAS stays the program's).
drop_in libcuboid_pxgemm.so "cuboid_pcgemm cuboid_pdgemm cuboid_psgemm cuboid_pzgemm pcgemm_ pdgemm_ psgemm_ pzgemm_ "
drop_in libcuboid_blas.so "cblas_cgemm cblas_dgemm cblas_sgemm cblas_zgemm cgemm_ dgemm_ sgemm_ zgemm_ "
# An include of anything but another public header or a standard one (<cstdint>, <stdint.h>)
# would need a header that is not installed; Kokkos' only in kokkos.hpp, so that the others
# stay usable without it.
bad_includes=$(grep -H '^[[:space:]]*#[[:space:]]*include' "$prefix"/include/cuboid/* |
  grep -Ev '/kokkos\.hpp:#include <Kokkos_Core\.hpp>$' |
  grep -Ev '#[[:space:]]*include[[:space:]]*<(cuboid/[a-z_]+\.hp?p?|[a-z_]+|[a-z_]+\.h)>' || true)
[ -z "$bad_includes" ] || fail "public headers include what is not installed:"$'\n'"$bad_includes"

# Never the user's speed cache.
export CUBOID_CACHE_DIR=$tmp/cache OMP_PROC_BIND=${OMP_PROC_BIND:-false}
run() {  # run NAME PROGRAM: on each processor set, the product must be correct
  for processors in host host,staged; do
    local out
    out=$("$2" "$processors" 2>&1) || { echo "$out" >&2; fail "$1 on $processors exited with $?"; }
    grep -q "correct" <<<"$out" || { echo "$out" >&2; fail "$1 on $processors did not say correct"; }
    echo "$out" | head -n 1
  done
}

languages=(cpp c)
if command -v gfortran >/dev/null; then
  languages+=(fortran)
else
  echo "examples: no gfortran: the Fortran example is skipped"
fi
gen_args=()
[ -z "$generator" ] || gen_args=(-G "$generator")
# The build's C++ compiler and flags (nvcc_wrapper and -arch in a CUDA build), which Kokkos'
# interface options, on the views example's compile line, are made for.
cxx=$(cached CMAKE_CXX_COMPILER) cxx_flags=$(cached CMAKE_CXX_FLAGS)
cxx_args=(-DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_FLAGS="$cxx_flags")
# The Kokkos installed beside is found in the prefix, and a Kokkos_ROOT of the caller's (the
# build's) would be refused; without it the examples need the build's.
if [ -n "$with_kokkos" ]; then
  unset Kokkos_ROOT KokkosKernels_ROOT
  kokkos_args=()
else
  kokkos_args=(-DKokkos_ROOT="$kokkos_root")
fi
for x in "${languages[@]}"; do
  lang_args=()
  [ "$x" != cpp ] || lang_args=("${cxx_args[@]}")
  step "$tmp/$x-configure.log" cmake -S "$src/examples/$x" -B "$tmp/$x" "${gen_args[@]}" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" "${kokkos_args[@]}" "${lang_args[@]}"
  step "$tmp/$x-build.log" cmake --build "$tmp/$x"
  run "examples/$x" "$tmp/$x/cuboid-example-$x"
done
run "examples/cpp (Kokkos views)" "$tmp/cpp/cuboid-example-cpp-views"
if [ -n "$with_kokkos" ]; then
  kokkos_dir=$(sed -n 's/^Kokkos_DIR:[A-Z]*=//p' "$tmp/cpp/CMakeCache.txt")
  [[ $kokkos_dir == "$prefix/"* ]] || fail "examples/cpp found Kokkos in $kokkos_dir, not in the prefix"
  # Every cuboid or Kokkos library the views program loads (ld.so's "calling init" lines), from
  # the moved prefix.
  LD_DEBUG=libs "$tmp/cpp/cuboid-example-cpp-views" host >"$tmp/ld-debug.log" 2>&1 ||
    { cat "$tmp/ld-debug.log" >&2; fail "examples/cpp (Kokkos views) under LD_DEBUG=libs failed"; }
  loaded=$(sed -n 's/.*calling init: //p' "$tmp/ld-debug.log" | grep -E '/lib(cuboid|kokkos)[^/]*$' | sort -u)
  for l in libcuboid.so libkokkoscore.so libkokkoskernels.so; do
    grep -q "/$l" <<<"$loaded" || fail "examples/cpp (Kokkos views) did not load $l"
  done
  elsewhere=$(grep -v "^$prefix/lib/" <<<"$loaded" || true)
  [ -z "$elsewhere" ] || fail "examples/cpp (Kokkos views) loaded from outside the prefix: $(echo $elsewhere)"
  echo "examples: loaded from the moved prefix: $(echo "$loaded" | xargs -n1 basename | tr '\n' ' ')"
fi

# The distributed entry from C under mpiexec, where the library was built with MPI.
if [ -e "$prefix/include/cuboid/cuboid_mpi.h" ]; then
  mpiexec=$(command -v mpiexec || command -v mpirun) || fail "cuboid_mpi.h installed but no mpiexec"
  step "$tmp/mpi-configure.log" cmake -S "$src/examples/mpi" -B "$tmp/mpi" "${gen_args[@]}" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix"
  step "$tmp/mpi-build.log" cmake --build "$tmp/mpi"
  mpi_run() {  # two ranks, one thread each
    OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
      "$mpiexec" --oversubscribe -n 2 "$tmp/mpi/cuboid-example-mpi" "$@"
  }
  run "examples/mpi (2 ranks)" mpi_run
  languages+=(mpi)
fi

# The C example without CMake: the flags come from cuboid.pc; the run path is the caller's.
command -v pkg-config >/dev/null || fail "pkg-config not found"
flags=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs cuboid) \
  || fail "pkg-config --cflags --libs cuboid failed"
# shellcheck disable=SC2086  # the flags are words
step "$tmp/c-pkgconfig.log" "${CC:-cc}" -std=c11 -O2 "$src/examples/c/main.c" $flags \
  -Wl,-rpath,"$prefix/lib" -lm -o "$tmp/c-pkgconfig"
run "examples/c (pkg-config: $flags)" "$tmp/c-pkgconfig"
with_pc="c with pkg-config"
# The views program without CMake: cuboid_kokkos.pc gives Kokkos' headers and options too.
if [ -n "$with_kokkos" ]; then
  flags=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs cuboid_kokkos) \
    || fail "pkg-config --cflags --libs cuboid_kokkos failed"
  # shellcheck disable=SC2086  # the flags are words
  step "$tmp/cpp-pkgconfig.log" "$cxx" $cxx_flags -O2 "$src/examples/cpp/views.cpp" $flags \
    -Wl,-rpath,"$prefix/lib" -o "$tmp/cpp-views-pkgconfig"
  run "examples/cpp views (pkg-config: $flags)" "$tmp/cpp-views-pkgconfig"
  with_pc="c and cpp views with pkg-config"
fi
echo "examples: ${languages[*]} and $with_pc built against $prefix (moved after install) and correct on host and host,staged"
