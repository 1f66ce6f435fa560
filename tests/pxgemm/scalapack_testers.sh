#!/usr/bin/env bash
# ScaLAPACK's own testers (Debian's scalapack-mpi-test), unchanged, on their own data files, with
# libcuboid_pxgemm.so preloaded and every p?gemm_ call computed by cuboid
# (CUBOID_PXGEMM_MIN_FLOPS=0): PBLAS's level-3 testers in real and complex double (their PDGEMM
# and PZGEMM rows check the arguments' error exits and the products) and the programs whose
# routines call pdgemm_ on sub-matrices: LU, inverse, Hessenberg, tridiagonal and bidiagonal
# reduction, least squares. Every tester must pass, cuboid must have served calls, none handed
# back, and of the routines' calls at least 90 % must have run in place (on the caller's arrays,
# not redistributed).
#   scalapack_testers.sh TESTS_DIR LIBRARY WORK_DIR MPIEXEC
set -uo pipefail
tests=$1 lib=$2 work=$3 mpiexec=$4
fail() { echo "scalapack_testers: $*" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work" && cd "$work" || fail "cannot make $work"
cp "$tests"/*.dat "$tests"/PBLAS/*.dat . || fail "no data files in $tests"
routine_calls=0 routine_in_place=0
for prog in PBLAS/dpb3tst PBLAS/zpb3tst xdlu xdinv xdhrd xdtrd xdbrd xdls; do
  name=$(basename "$prog")
  rm -f report.jsonl report.jsonl.*
  "$mpiexec" --oversubscribe --allow-run-as-root -np 8 -x OMP_NUM_THREADS=1 -x OMP_PROC_BIND=false \
    -x CUBOID_PXGEMM_MIN_FLOPS=0 -x CUBOID_PROCESSORS=host -x CUBOID_CACHE_DIR \
    -x LD_PRELOAD="$lib" -x CUBOID_PXGEMM_REPORT="$work/report.jsonl" "$tests/$prog" >"$name.out" 2>&1
  status=$?
  [ "$status" -eq 0 ] || { tail -n 20 "$name.out" >&2; fail "$name exited with $status"; }
  case "$name" in
    *pb3tst)
      # The summary's rows: |  PDGEMM  TOTAL  PASSED  FAILED  SKIPPED
      rows=$(grep -E '^ *\| +P[DZ][A-Z0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+' "$name.out")
      [ -n "$rows" ] || { tail -n 20 "$name.out" >&2; fail "$name printed no summary"; }
      grep -Eq '^ *\| +P[DZ]GEMM +[1-9]' <<<"$rows" || fail "$name tested no p?gemm_"
      bad=$(awk '$5 != 0' <<<"$rows")
      [ -z "$bad" ] || fail "$name: failures: $bad" ;;
    *)
      grep -q ' 0 tests completed and failed residual checks' "$name.out" &&
        grep -Eq '^ +[1-9][0-9]* tests completed and passed residual checks' "$name.out" ||
        { tail -n 20 "$name.out" >&2; fail "$name: not every test passed"; } ;;
  esac
  [ -s report.jsonl ] || fail "$name: no p?gemm_ call reached cuboid"
  if grep -q '"fallback":"' report.jsonl || ls report.jsonl.* >/dev/null 2>&1; then
    fail "$name: calls were handed back to ScaLAPACK"
  fi
  echo "scalapack_testers: $name passed, $(wc -l <report.jsonl) p?gemm_ call(s) by cuboid:" \
    "$(grep -o '"path":"[a-z ]*"' report.jsonl | sort | uniq -c | tr -s ' \n' ' ')"
  case "$name" in
    *pb3tst) ;;
    *)
      routine_calls=$((routine_calls + $(grep -c '"path":"\(in place\|redistributed\)"' report.jsonl)))
      routine_in_place=$((routine_in_place + $(grep -c '"path":"in place"' report.jsonl)))
      grep -o '"redistributed_because":"[^"]*"' report.jsonl | sort | uniq -c ;;
  esac
done
echo "scalapack_testers: the routines' products: $routine_in_place of $routine_calls in place"
[ "$routine_calls" -gt 0 ] || fail "the routines made no product through cuboid"
[ $((routine_in_place * 10)) -ge $((routine_calls * 9)) ] ||
  fail "only $routine_in_place of $routine_calls of the routines' products ran in place (90 % needed)"

