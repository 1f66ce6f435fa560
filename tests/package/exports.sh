#!/usr/bin/env bash
# package.exports: libcuboid.so exports its API and nothing of what it is built from.
#   exports.sh LIBRARY
# Every symbol `nm -D --defined-only` lists must be a cuboid_* C function or a member of the C++
# API of include/cuboid/ (Context, gemm_resident included, parse_op, to_string, gemm_flops, the error types with their
# vtables and typeinfo); anything else (fmt, toml++, CLI11, nlohmann::json, cuboid's internal
# namespaces, the standard library's instantiations) is listed and fails the test, and so does
# a missing cuboid_dgemm.
set -euo pipefail
lib=${1:?usage: exports.sh LIBRARY}
[ -f "$lib" ] || { echo "exports: no such file: $lib" >&2; exit 1; }
command -v nm >/dev/null || { echo "exports: nm not found (binutils)" >&2; exit 1; }

# nm prints "address type name"; the demangled name may hold spaces.
names=$(nm -D --defined-only "$lib" | cut -d' ' -f3-)
demangled=$(nm -D --defined-only --demangle "$lib" | cut -d' ' -f3-)
allowed='^(cuboid_[A-Za-z0-9_]+'
allowed+='|cuboid::Context::(Context|~Context|gemm|gemm_resident|speeds|processor_names|last_call)(\[abi:[a-z0-9]+\])?\(.*'
allowed+='|cuboid::(parse_op|to_string|gemm_flops)\(.*'
allowed+='|cuboid::(gemm|local_extent|grid_of|set_rank_options)\(.*'
allowed+='|cuboid::(Error|KeyedError|Unsupported)::~?(Error|KeyedError|Unsupported)\(.*'
allowed+='|(typeinfo|typeinfo name|vtable) for cuboid::(Error|KeyedError|Unsupported))$'
# The linker's own symbols, which every shared library defines.
linker='^(_init|_fini|__bss_start|_edata|_end)$'
offenders=$(grep -Ev "$allowed" <<<"$demangled" | grep -Ev "$linker" || true)
status=0
if [ -n "$offenders" ]; then
  echo "exports: $(wc -l <<<"$offenders") symbol(s) exported by $lib outside the API:"
  sed 's/^/  /' <<<"$offenders"
  status=1
fi
if ! grep -qx cuboid_dgemm <<<"$names"; then
  echo "exports: cuboid_dgemm is not exported by $lib"
  status=1
fi
[ $status -ne 0 ] || echo "exports: $(wc -l <<<"$names") symbols exported, all of the API (cuboid_dgemm among them)"
exit $status
