#!/usr/bin/env bash
# expect_output.sh STATUS PATTERN... -- COMMAND [ARGS...]
# Passes when COMMAND exits with exactly STATUS and its output (stdout and stderr together) has
# a line matching each PATTERN (grep -E). CTest's PASS_REGULAR_EXPRESSION alone would ignore
# the exit status, so that a crash after printing the right text would pass.
set -uo pipefail
want=${1:?"usage: expect_output.sh STATUS PATTERN... -- COMMAND [ARGS...]"}
shift
patterns=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  patterns+=("$1")
  shift
done
[ $# -ge 2 ] && [ ${#patterns[@]} -gt 0 ] || {
  echo "expect_output: usage: expect_output.sh STATUS PATTERN... -- COMMAND [ARGS...]" >&2
  exit 2
}
shift
out=$("$@" 2>&1)
got=$?
printf '%s\n' "$out"
status=0
if [ "$got" -ne "$want" ]; then
  echo "expect_output: exit status $got, expected $want" >&2
  status=1
fi
for p in "${patterns[@]}"; do
  grep -qE -e "$p" <<<"$out" || { echo "expect_output: no line matches: $p" >&2; status=1; }
done
exit $status
