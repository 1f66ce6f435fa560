#!/usr/bin/env bash
# run_mpi.sh MPIEXEC CUBOID NP OUTDIR NAME [check options --] cuboid run arguments...
# Runs `cuboid run` on NP ranks, then checks its JSON record with check_record.py.
set -euo pipefail
mpiexec=$1 cuboid=$2 np=$3 out=$4 name=$5
shift 5
checks=()
while [[ $# -gt 0 && $1 != -- ]]; do checks+=("$1"); shift; done
[[ $# -gt 0 ]] && shift
mkdir -p "$out"
json="$out/$name.json"
rm -f "$json"
here=$(cd "$(dirname "$0")" && pwd)
export OMP_NUM_THREADS=1 OMP_PROC_BIND=false OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# --simulate: `cuboid simulate` of the same arguments and ranks (no MPI) first, its record checked
# against the run's; its ranks run at 1 GFLOP/s, as small.toml's processor does.
with_sim=()
for c in "${checks[@]}"; do
  with_sim+=("$c")
  if [[ $c == --simulate ]]; then
    "$cuboid" simulate "$@" --ranks "$np" --rank-gflops 1 --json "$out/$name.simulate.json" > /dev/null
    with_sim+=("$out/$name.simulate.json")
  fi
done
checks=("${with_sim[@]}")
# --dry-run: `cuboid run --dry-run` of the same arguments first (it must make nothing and exit
# 0); check_record.py compares its prediction with what the run measured.
for i in "${!checks[@]}"; do
  if [[ ${checks[$i]} == --dry-run ]]; then
    "$mpiexec" --oversubscribe --allow-run-as-root -np "$np" "$cuboid" run "$@" --dry-run > "$out/$name.dry.txt" 2>&1 || {
      echo "cuboid run --dry-run failed"; cat "$out/$name.dry.txt"; exit 1
    }
    checks[$i]="--dry-run=$out/$name.dry.txt"
  fi
done
"$mpiexec" --oversubscribe --allow-run-as-root -np "$np" "$cuboid" run "$@" --json "$json" > "$out/$name.txt" 2> "$out/$name.err" || {
  rc=$?
  echo "cuboid run failed with status $rc"; cat "$out/$name.txt" "$out/$name.err"; exit 1
}
cat "$out/$name.txt"
python3 "$here/check_record.py" "$json" --ranks "$np" "${checks[@]}"
