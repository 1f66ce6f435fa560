#!/usr/bin/env bash
# package.exports: libcuboid.so and libcuboid_mpi.so export their API and nothing of what they
# are built from, and libcuboid.so needs no MPI.
#   exports.sh LIBRARY [MPI_LIBRARY]
# Every symbol `nm -D --defined-only` lists must be a cuboid_* C function or a member of the C++
# API of include/cuboid/ (Context, gemm_resident included, parse_op, to_string, gemm_flops, the
# error types with their vtables and typeinfo), or lie in one of the internal namespaces the
# library exports for its sibling (libcuboid.so for libcuboid_mpi.so: the pipeline and what it is
# built of; libcuboid_mpi.so for libcuboid_pxgemm.so: cuboid::mpi). Anything else (fmt, toml++,
# CLI11, nlohmann::json, the other internal namespaces, the standard library's instantiations
# over other types) is listed and fails the test, and so does a missing cuboid_dgemm (or
# cuboid_dgemm_distributed).
set -euo pipefail
lib=${1:?usage: exports.sh LIBRARY [MPI_LIBRARY]}
mpi_lib=${2:-}
[ -f "$lib" ] || { echo "exports: no such file: $lib" >&2; exit 1; }
command -v nm >/dev/null || { echo "exports: nm not found (binutils)" >&2; exit 1; }
status=0

# check LIBRARY INTERNAL REQUIRED_SYMBOL: INTERNAL, a pattern of what may follow 'cuboid::'
check() {
  local lib=$1 internal=$2 required=$3
  # nm prints "address type name"; the demangled name may hold spaces.
  local names demangled allowed linker offenders
  names=$(nm -D --defined-only "$lib" | cut -d' ' -f3-)
  demangled=$(nm -D --defined-only --demangle "$lib" | cut -d' ' -f3-)
  allowed='^(cuboid_[A-Za-z0-9_]+'
  allowed+='|cuboid::Context::(Context|~Context|gemm|gemm_resident|speeds|processor_names|last_call)(\[abi:[a-z0-9]+\])?\(.*'
  allowed+='|cuboid::(parse_op|to_string|gemm_flops)\(.*'
  allowed+='|cuboid::(gemm|local_extent|grid_of|set_rank_options)\(.*'
  allowed+='|cuboid::(Error|KeyedError|Unsupported)::~?(Error|KeyedError|Unsupported)\(.*'
  allowed+='|(typeinfo|typeinfo name|vtable) for cuboid::(Error|KeyedError|Unsupported)'
  allowed+="|.*cuboid::($internal).*)\$"
  # The linker's own symbols, which every shared library defines.
  linker='^(_init|_fini|__bss_start|_edata|_end)$'
  offenders=$(grep -Ev "$allowed" <<<"$demangled" | grep -Ev "$linker" || true)
  if [ -n "$offenders" ]; then
    echo "exports: $(wc -l <<<"$offenders") symbol(s) exported by $lib outside the API:"
    sed 's/^/  /' <<<"$offenders" | head -n 40
    status=1
  fi
  if ! grep -qx "$required" <<<"$names"; then
    echo "exports: $required is not exported by $lib"
    status=1
  fi
  [ $status -ne 0 ] || echo "exports: $(wc -l <<<"$names") symbols exported by $lib, all allowed ($required among them)"
}

check "$lib" 'ContextInternals::|require_supported_call\(|tile_for\(|(capi|pipeline|exec|platform|partition|kokkos_ext|trace)::' \
  cuboid_dgemm
# libcuboid.so must load without MPI: no libmpi among what it needs.
if readelf -d "$lib" | grep -q 'NEEDED.*libmpi'; then
  echo "exports: $lib needs MPI: $(readelf -d "$lib" | grep 'NEEDED.*libmpi' | tr -s ' ')"
  status=1
fi
if [ -n "$mpi_lib" ]; then
  [ -f "$mpi_lib" ] || { echo "exports: no such file: $mpi_lib" >&2; exit 1; }
  check "$mpi_lib" 'mpi::' cuboid_dgemm_distributed
fi
exit $status
