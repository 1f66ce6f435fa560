#!/usr/bin/env bash
# One hostile input through the real command line.
#   expect_error.sh CUBOID WORKDIR NAME TEXT [--status N] [--setup NAME] [--mpi MPIEXEC NP]
#                   -- cuboid arguments...   (@HUGE@ in them: 100000 letters;
#                   @EMPTY@: an empty argument)
# Runs in an empty scratch directory WORKDIR/NAME (arguments may name files there; decks are in
# tests/hardening/decks), after `setup.sh NAME` when given. Passes when:
#   - the exit status is non-zero (exactly N with --status), and not a crash (signal, abort);
#   - the output names the culprit: it contains TEXT (the key, flag or file);
#   - no message line is longer than 1000 characters (huge values are not echoed back);
#   - nothing looks like a result, and under mpirun nothing aborts the job;
#   - the scratch directory holds exactly what it held before: no record, no partial or
#     temporary file left behind.
set -uo pipefail
cuboid=$1 work=$2 name=$3 text=$4
shift 4
status="" setup="" mpiexec="" np=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  case "$1" in
    --status) status=$2; shift 2 ;;
    --setup) setup=$2; shift 2 ;;
    --mpi) mpiexec=$2 np=$3; shift 3 ;;
    *) echo "expect_error.sh: unknown option $1"; exit 2 ;;
  esac
done
shift
# @HUGE@ in an argument stands for 100000 letters: a value no message may echo back whole.
huge=$(head -c 100000 /dev/zero | tr '\0' 'a')
args=()
for a in "$@"; do
  a=${a//@HUGE@/$huge}
  args+=("${a//@EMPTY@/}")  # CTest drops empty arguments: @EMPTY@ stands for one
done
set -- "${args[@]}"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export DECKS=$here/decks
dir=$work/$name
rm -rf "$dir" "$dir.cache" && mkdir -p "$dir" "$dir.cache"
# Calibration results of failing runs go here, outside the directory that must stay unchanged.
export CUBOID_CACHE_DIR=${CUBOID_TEST_CACHE_DIR:-$dir.cache} OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
export OMP_PROC_BIND=false OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$dir" || exit 2
if [ -n "$setup" ]; then
  CUBOID=$cuboid "$here/setup.sh" "$setup" || { echo "FAIL $name: setup '$setup' failed"; exit 1; }
fi
before=$(find . -mindepth 1 -printf '%p %s\n' | sort)
if [ -n "$mpiexec" ]; then
  out=$(timeout 120 "$mpiexec" --oversubscribe --allow-run-as-root -np "$np" "$cuboid" "$@" 2>&1)
else
  out=$(timeout 120 "$cuboid" "$@" 2>&1)
fi
rc=$?
after=$(find . -mindepth 1 -printf '%p %s\n' | sort)
fail() { echo "FAIL $name: $*"; echo "--- output (cut):"; cut -c1-400 <<<"$out" | head -n 40; exit 1; }
[ $rc -ne 0 ] || fail "exit status 0 for bad input"
[ $rc -ne 124 ] || fail "timed out (a hang)"
[ $rc -lt 128 ] || fail "killed by a signal (status $rc): a crash"
[ -z "$status" ] || [ $rc -eq "$status" ] || fail "exit status $rc, expected $status"
grep -qF -- "$text" <<<"$out" || fail "the message does not name '$text'"
long=$(awk 'length > 1000' <<<"$out" | wc -l)
[ "$long" -eq 0 ] || fail "$long output line(s) longer than 1000 characters"
if grep -q "^rate \|GFLOP/s (2mnk" <<<"$out"; then fail "printed something that looks like a result"; fi
if grep -qi "MPI_ABORT\|MPI_Abort\|Segmentation\|core dumped\|bad_alloc\|terminate called" <<<"$out"; then
  fail "aborted or crashed"
fi
[ "$before" == "$after" ] || fail "files changed in the scratch directory: $(diff <(echo "$before") <(echo "$after") | tail -n +2 | head -5 | tr '\n' ' ')"
echo "ok $name (status $rc): $(grep -m1 -F -- "$text" <<<"$out" | cut -c1-200)"
