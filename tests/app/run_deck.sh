#!/usr/bin/env bash
# End to end: `cuboid run DECK` must exit 0, print a validated result and write a JSON record
# whose validation passed.   run_deck.sh CUBOID DECK WORKDIR [--set ...]
set -uo pipefail
cuboid=$1 deck=$2 work=$3
shift 3
mkdir -p "$work"
json="$work/$(basename "$deck" .toml).json"
rm -f "$json"
out=$("$cuboid" run "$deck" --set run.repetitions=1 --set run.warmup=0 "$@" --json "$json" 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || { echo "FAIL: exit status $rc"; exit 1; }
grep -q "^validation PASSED" <<<"$out" || { echo "FAIL: no 'validation PASSED' line"; exit 1; }
[ -s "$json" ] || { echo "FAIL: no JSON record at $json"; exit 1; }
grep -q '"validation":{[^}]*"passed":true' <<<"$(tr -d ' \n' <"$json")" || { echo "FAIL: JSON validation.passed is not true"; exit 1; }
echo "ok: $deck"
