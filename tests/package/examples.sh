#!/usr/bin/env bash
# package.examples: what an application sees of cuboid, from an installed prefix.
#   examples.sh BUILD_DIR SOURCE_DIR KOKKOS_ROOT [CMAKE_GENERATOR]
# Installs BUILD_DIR into a temporary prefix and checks that it holds the API and nothing else
# (libcuboid.so and its links, include/cuboid/*, the CMake package, the pkg-config file) and
# that the public headers include only each other and the standard library, but kokkos.hpp,
# which includes Kokkos_Core.hpp too. Then configures each of examples/{cpp,c,fortran} with
# find_package(cuboid) against that prefix (and the Kokkos the build used; the C++ examples with
# the build's C++ compiler, which Kokkos' options are for), builds it, and runs it on "host"
# and on "host,staged" (examples/cpp: the pointer API and the Kokkos views program); the C
# example is built once more with pkg-config alone. Every run must say its product is correct. The
# Fortran example is skipped, with a message, where there is no gfortran. Where the library has
# the MPI layer, examples/mpi runs on 2 ranks.
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

prefix=$tmp/prefix
step "$tmp/install.log" cmake --install "$build" --prefix "$prefix"
unexpected=$(cd "$prefix" && find . -type f -o -type l | sed 's|^\./||' | sort |
  grep -Ev '^(lib/libcuboid\.so(\.[0-9]+)*|lib/libcuboid_mpi\.so(\.[0-9]+)*|lib/libcuboid_pxgemm\.so(\.[0-9]+)*|include/cuboid/(cuboid\.h|cuboid\.hpp|error\.hpp|gemm\.hpp|kokkos\.hpp|mpi\.hpp|cuboid_mpi\.h|cuboid_c\.f90)|lib/cmake/cuboid/cuboid(Config|ConfigVersion|Targets|Targets-[a-z]+)\.cmake|lib/pkgconfig/cuboid(_mpi)?\.pc)$' || true)
[ -z "$unexpected" ] || fail "installed beyond the API: $(echo $unexpected)"
for f in lib/libcuboid.so include/cuboid/cuboid.h include/cuboid/cuboid.hpp include/cuboid/kokkos.hpp lib/cmake/cuboid/cuboidConfig.cmake lib/pkgconfig/cuboid.pc; do
  [ -e "$prefix/$f" ] || fail "not installed: $f"
done
# libcuboid_pxgemm.so, where built: ScaLAPACK's four p?gemm_ and their cuboid_ twins and nothing
# else, and libcuboid.so found beside it.
if [ -e "$prefix/lib/libcuboid_pxgemm.so" ]; then
  exported=$(nm -D --defined-only "$prefix/lib/libcuboid_pxgemm.so" | awk '{print $3}' |
    grep -Ev '^(_init|_fini|__bss_start|_edata|_end)$' | grep -v '^$' | sort | tr '\n' ' ')
  want="cuboid_pcgemm cuboid_pdgemm cuboid_psgemm cuboid_pzgemm pcgemm_ pdgemm_ psgemm_ pzgemm_ "
  [ "$exported" = "$want" ] || fail "libcuboid_pxgemm.so exports '$exported', not '$want'"
  # ldd's output is captured first: grep -q leaves a pipe early, and under pipefail the
  # writer's SIGPIPE would fail the check at random.
  deps=$(ldd "$prefix/lib/libcuboid_pxgemm.so")
  grep -q "libcuboid.so.* => $prefix/lib/" <<<"$deps" ||
    fail "the installed libcuboid_pxgemm.so does not find the installed libcuboid.so"
fi
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
cached() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
cxx_args=(-DCMAKE_CXX_COMPILER="$(cached CMAKE_CXX_COMPILER)" -DCMAKE_CXX_FLAGS="$(cached CMAKE_CXX_FLAGS)")
for x in "${languages[@]}"; do
  lang_args=()
  [ "$x" != cpp ] || lang_args=("${cxx_args[@]}")
  step "$tmp/$x-configure.log" cmake -S "$src/examples/$x" -B "$tmp/$x" "${gen_args[@]}" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" -DKokkos_ROOT="$kokkos_root" \
    "${lang_args[@]}"
  step "$tmp/$x-build.log" cmake --build "$tmp/$x"
  run "examples/$x" "$tmp/$x/cuboid-example-$x"
done
run "examples/cpp (Kokkos views)" "$tmp/cpp/cuboid-example-cpp-views"

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
echo "examples: ${languages[*]} and c with pkg-config built against $prefix and correct on host and host,staged"
