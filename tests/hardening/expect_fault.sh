#!/usr/bin/env bash
# Fault injection must make validation fail.
#   expect_fault.sh CUBOID WORKDIR NAME FAULT [--mpi MPIEXEC NP] -- cuboid run arguments...
# First the run without the fault: it must pass (exit 0) and write its record. Then with
# --inject-fault FAULT: exit status 3, "validation failed" naming the fault, and no record.
set -uo pipefail
cuboid=$1 work=$2 name=$3 fault=$4
shift 4
launch=()
if [ "$1" = "--mpi" ]; then launch=("$2" --oversubscribe --allow-run-as-root -np "$3"); shift 3; fi
shift  # --
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} OMP_PROC_BIND=false
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
dir=$work/$name
rm -rf "$dir" && mkdir -p "$dir"
out=$(timeout 200 "${launch[@]}" "$cuboid" run "$@" --json "$dir/clean.json" 2>&1)
rc=$?
if [ $rc -ne 0 ] || [ ! -s "$dir/clean.json" ]; then
  echo "FAIL $name: the run without a fault did not pass (status $rc)"; tail -n 20 <<<"$out"; exit 1
fi
out=$(timeout 200 "${launch[@]}" "$cuboid" run "$@" --json "$dir/faulty.json" --inject-fault "$fault" 2>&1)
rc=$?
fail() { echo "FAIL $name: $*"; tail -n 25 <<<"$out" | cut -c1-300; exit 1; }
[ $rc -eq 3 ] || fail "exit status $rc with --inject-fault $fault, expected 3"
grep -q "validation failed.*fault injected: $fault" <<<"$out" || fail "no 'validation failed ... fault injected: $fault'"
[ ! -e "$dir/faulty.json" ] || fail "a record was written for a run that failed validation"
if grep -qi "MPI_ABORT\|Segmentation\|terminate called" <<<"$out"; then fail "aborted"; fi
echo "ok $name: $(grep -m1 'validation failed' <<<"$out" | cut -c1-250)"
