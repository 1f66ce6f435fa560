#!/usr/bin/env bash
# libcuboid_blas.so preloaded into unchanged programs: a C program calling sgemm_, dgemm_,
# zgemm_ and cblas_?gemm (from an OpenMP region and a forked child too), and numpy's `@`.
# Every product is checked by the program itself; the report says which calls cuboid took.
#   dropin.sh LIBRARY CALLER PYTHON NUMPY_SCRIPT WORK_DIR
set -uo pipefail
lib=$1 caller=$2 python=$3 script=$4 work=$5
rm -rf "$work"
mkdir -p "$work"
fail() { echo "dropin: $*" >&2; exit 1; }
# field REPORT EXPRESSION: a Python expression over `summary` (the report's last line's summary)
# and `lines` (all other lines), printed.
field() {
  /usr/bin/python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
summary = rows[-1]["summary"] if rows and "summary" in rows[-1] else None
lines = rows[:-1]
print(eval(sys.argv[2]))' "$1" "$2"
}
expect() {  # expect REPORT EXPRESSION WHAT
  [ "$(field "$1" "$2")" = True ] || { echo "report $1:" >&2; cat "$1" >&2; fail "$3"; }
}
run() {  # run NAME ENV... -- COMMAND...: preloaded, report in $work/NAME.jsonl
  local name=$1
  shift
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  echo "dropin: $name"
  env "${envs[@]}" CUBOID_BLAS_REPORT="$work/$name.jsonl" LD_PRELOAD="$lib" "$@" ||
    fail "$name: the program failed"
  [ -s "$work/$name.jsonl" ] || fail "$name: no report"
}

echo "dropin: the program alone"
"$caller" || fail "the program fails without the drop-in"

# A threshold from the environment: the 16^3 call is small, the two from the OpenMP region are
# the BLAS's, the six others cuboid's.
run threshold CUBOID_BLAS_MIN_FLOPS=2e6 CUBOID_PROCESSORS=host -- "$caller"
r=$work/threshold.jsonl
expect "$r" 'summary["taken"] == 6' "six calls taken"
expect "$r" 'summary["passed_on"].get("small") == 1' "one small call passed on"
expect "$r" 'summary["passed_on"].get("OpenMP region") == 2' "two OpenMP-region calls passed on"
expect "$r" 'sorted({l["routine"] for l in lines}) == ["cblas_dgemm", "cblas_zgemm", "dgemm_", "sgemm_", "zgemm_"]' \
  "every routine reached cuboid"

# Two processors, the second a device with its own memory (emulated). Each product twice: the
# context runs a shape's first call as one GEMM and its second through the partition.
run staged CUBOID_BLAS_MIN_FLOPS=2e6 CUBOID_PROCESSORS=host,staged -- "$caller" 2
expect "$work/staged.jsonl" 'summary["taken"] == 12 and all(l["processors"] == ["host", "staged"] for l in lines)' \
  "twelve calls on host and staged"
expect "$work/staged.jsonl" 'sum(l["path"] == "partitioned" for l in lines) == 6' \
  "each shape's second call partitioned between host and staged"

# The crossover measured on first use, per routine, then found in the cache.
cache=$work/cache
run measured CUBOID_CACHE_DIR="$cache" CUBOID_PROCESSORS=host -- "$caller"
expect "$work/measured.jsonl" 'sorted(l["crossover"] for l in lines if "crossover" in l and l["measured"]) == ["dgemm", "sgemm", "zgemm"]' \
  "a crossover measured for each routine called"
run cached CUBOID_CACHE_DIR="$cache" CUBOID_PROCESSORS=host -- "$caller"
expect "$work/cached.jsonl" 'all(not l["measured"] for l in lines if "crossover" in l) and sum("crossover" in l for l in lines) == 3' \
  "the crossovers found in the cache"

# A processor list that makes no context: every call is the BLAS's, said once on stderr.
run unusable CUBOID_BLAS_MIN_FLOPS=0 CUBOID_PROCESSORS=no_such_processor -- "$caller" 2>"$work/unusable.err"
grep -q "passes every GEMM on to the BLAS" "$work/unusable.err" || fail "no reason said for an unusable context"
expect "$work/unusable.jsonl" 'summary["taken"] == 0 and summary["passed_on"].get("unavailable", 0) >= 6' \
  "every call passed on without a context"

# numpy's `@`, real and complex, as numpy calls the BLAS (cblas_?gemm).
if "$python" -c 'import numpy' 2>/dev/null; then
  run numpy CUBOID_BLAS_MIN_FLOPS=2e6 CUBOID_PROCESSORS=host -- "$python" "$script"
  expect "$work/numpy.jsonl" 'summary["taken"] >= 5 and {"cblas_dgemm", "cblas_zgemm", "cblas_sgemm"} <= {l["routine"] for l in lines}' \
    "numpy's products taken by cuboid"
else
  echo "dropin: no numpy for $python: its case not run"
fi
echo "dropin: all cases passed"
