#!/usr/bin/env bash
# Bad input through the real command line: non-zero exit, a message naming file:line:column
# and key, and no JSON record left behind.   cli_errors.sh CUBOID WORKDIR
set -uo pipefail
cuboid=$1 work=$2
mkdir -p "$work"
failures=0
expect_error() {  # expect_error NAME EXPECTED_STATUS EXPECTED_TEXT -- ARGS...
  local name=$1 status=$2 text=$3
  shift 4
  rm -f "$work/out.json"
  local out rc
  out=$("$cuboid" "$@" 2>&1)
  rc=$?
  if [ $rc -ne "$status" ]; then echo "FAIL $name: exit $rc, expected $status"; echo "$out"; failures=$((failures + 1)); return; fi
  if ! grep -qF -- "$text" <<<"$out"; then echo "FAIL $name: message lacks '$text'"; echo "$out"; failures=$((failures + 1)); return; fi
  if [ -e "$work/out.json" ]; then echo "FAIL $name: a JSON record was written"; failures=$((failures + 1)); return; fi
  if grep -q "^rate\|GFLOP/s (2mnk" <<<"$out"; then echo "FAIL $name: printed something that looks like a result"; failures=$((failures + 1)); return; fi
  echo "ok $name"
}
printf '[problem]\nm = 64\nn = "wide"\n' >"$work/bad-type.toml"
printf '[problem]\nm = 64\n[platform]\nprocessors = ["host", "cuda:7"]\n' >"$work/no-device.toml"
printf '[problem]\nm = 64\nn = 64\nk = 64\ntile = 8\n[platform]\nprocessors = ["host", "staged"]\nspeeds = [1.0, 1.0]\nmemory_budget_mib = 0.0001\n' >"$work/tiny-budget.toml"
printf '[problem]\nm = 4000000\nn = 4000000\nk = 8\n' >"$work/too-big.toml"
printf '[problem]\nm = 8\nn = 8\nk = 8\ntile = 8\n[platform]\nprocessors = ["host", "staged"]\nspeeds = [1.0, 1.0]\n' >"$work/one-tile.toml"
expect_error type 1 "bad-type.toml:3:5: problem.n: expected an integer" -- run "$work/bad-type.toml" --json "$work/out.json"
expect_error device 1 "no-device.toml:4:14: platform.processors: processor \"cuda:7\" is not available" -- run "$work/no-device.toml" --json "$work/out.json"
expect_error budget 1 "platform.memory_budget_mib" -- run "$work/tiny-budget.toml" --json "$work/out.json"
expect_error memory 1 "too-big.toml:2:5: problem.m: problem m=4000000 n=4000000 k=8 (double) with A, B and C and its check needs" -- run "$work/too-big.toml" --json "$work/out.json"
expect_error tasks 1 "2 processors but only 1 tile" -- run "$work/one-tile.toml" --json "$work/out.json"
expect_error missing 1 "cannot open the deck" -- run "$work/absent.toml" --json "$work/out.json"
expect_error override 1 "--set problem.tile=0: problem.tile: 0 is out of range" -- run "$work/one-tile.toml" --set problem.n=4 --set problem.tile=0 --json "$work/out.json"
expect_error flag 109 "The following argument was not expected" -- run "$work/bad-type.toml" --bogus
expect_error dry_json 108 "--json excludes --dry-run" -- run "$work/one-tile.toml" --dry-run --json "$work/out.json"
expect_error dry_fault 105 "--inject-fault: tests the validation of a product, which a --dry-run does not make" -- run "$work/one-tile.toml" --dry-run --inject-fault corrupt
expect_error trace_dir 1 "--trace '$work/absent/trace.json': its directory" -- run "$work/one-tile.toml" --trace "$work/absent/trace.json" --json "$work/out.json"
# A dry run of a deck too large for this machine predicts it, says a run would be refused, and
# makes nothing: exit 0, no record, no result.
out=$("$cuboid" run "$work/too-big.toml" --dry-run 2>&1)
rc=$?
if [ $rc -ne 0 ] || ! grep -q "^dry run " <<<"$out" || ! grep -q "^memory .*a run here would be refused" <<<"$out" ||
  grep -q "^rate\|^validation" <<<"$out"; then
  echo "FAIL dry_run_too_big: exit $rc"; echo "$out"; failures=$((failures + 1))
else
  echo "ok dry_run_too_big"
fi
# A tile as large as calibration's capped edges (2048) with two processors to time: calibration
# cuts smaller tiles for itself instead of stopping at "only 1 tile tasks".
printf '[problem]\nm = 4096\nn = 4096\nk = 4096\ntile = 2048\n[platform]\nprocessors = ["host", "staged"]\n' >"$work/big-tile.toml"
out=$("$cuboid" run "$work/big-tile.toml" --dry-run 2>&1)
rc=$?
if [ $rc -ne 0 ] || ! grep -q "^processor  staged" <<<"$out"; then
  echo "FAIL calibrate_big_tile: exit $rc"; echo "$out"; failures=$((failures + 1))
else
  echo "ok calibrate_big_tile"
fi
echo "$failures failed"
[ $failures -eq 0 ]
