#!/usr/bin/env bash
# Runs an unchanged MPI program with libcuboid_pxgemm.so preloaded and checks that it succeeded
# and that cuboid served its p?gemm_ calls: the report has at least one line, none a fallback.
# CUBOID_DECK and CUBOID_PROCESSORS are handed to the ranks when set; EXPECT_IN_REPORT, when set,
# must appear in every line of the report; EXPECT_CALLS, when set, is the number of lines it must have.
#   preload.sh LIBRARY REPORT MPIEXEC ARGS...
set -uo pipefail
lib=$1 report=$2
shift 2
rm -f "$report" "$report".*
mpiexec=$1
shift
forward=()
for v in CUBOID_DECK CUBOID_PROCESSORS; do [ -z "${!v:-}" ] || forward+=(-x "$v"); done
"$mpiexec" --oversubscribe --allow-run-as-root -x LD_PRELOAD="$lib" -x CUBOID_PXGEMM_REPORT="$report" \
  "${forward[@]}" "$@"
status=$?
[ "$status" -eq 0 ] || { echo "preload: the program exited with $status" >&2; exit 1; }
[ -s "$report" ] || { echo "preload: no p?gemm_ call reached cuboid (empty $report)" >&2; exit 1; }
calls=$(wc -l <"$report")
if grep -q '"fallback":"' "$report" || ls "$report".* >/dev/null 2>&1; then
  echo "preload: some calls fell back to ScaLAPACK" >&2
  exit 1
fi
if [ -n "${EXPECT_IN_REPORT:-}" ] && grep -vqF "$EXPECT_IN_REPORT" "$report"; then
  echo "preload: a report line lacks $EXPECT_IN_REPORT:" >&2
  head -n 2 "$report" >&2
  exit 1
fi
if [ -n "${EXPECT_CALLS:-}" ] && [ "$calls" -ne "$EXPECT_CALLS" ]; then
  echo "preload: $calls report line(s), $EXPECT_CALLS expected" >&2
  exit 1
fi
echo "preload: $calls p?gemm_ call(s) served by cuboid: $(grep -o '"path":"[a-z ]*"' "$report" | sort | uniq -c | tr '\n' ' ')"
