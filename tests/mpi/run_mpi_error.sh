#!/usr/bin/env bash
# run_mpi_error.sh MPIEXEC CUBOID NP OUTDIR NAME EXPECTED_TEXT cuboid run arguments...
# A bad deck under mpirun: every rank must exit (no hang: CTest's timeout catches that), the
# status must be 1, and the message, naming the key, must be printed once (by rank 0 only).
set -uo pipefail
mpiexec=$1 cuboid=$2 np=$3 out=$4 name=$5 expected=$6
shift 6
mkdir -p "$out"
export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
"$mpiexec" --oversubscribe --allow-run-as-root -np "$np" "$cuboid" run "$@" > "$out/$name.txt" 2> "$out/$name.err"
rc=$?
cat "$out/$name.err"
# Exactly 1, bad input: any other failure (a crash, an abort, a signal, a validation failure)
# that happens to print the same message is not the refusal this test is about.
if [[ $rc -ne 1 ]]; then echo "FAIL: exit status $rc for a bad deck, expected 1 (bad input)"; exit 1; fi
count=$(grep -c -F -- "$expected" "$out/$name.err" || true)
if [[ $count -ne 1 ]]; then echo "FAIL: expected exactly one line with '$expected', got $count"; exit 1; fi
if grep -q 'MPI_ABORT\|MPI_Abort' "$out/$name.err"; then echo "FAIL: an input error should not abort the job"; exit 1; fi
echo "ok: status $rc, one message"
