#!/bin/sh
# run_and_check.sh PYTHON JSON COMMAND...
# Runs COMMAND --json JSON (a `cuboid run`, under mpiexec or not), then checks the record it
# wrote against docs/record.schema.json with check_record_schema.py.
set -eu
python=$1 json=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$(dirname "$json")"
rm -f "$json"
log=$json.log
if ! "$@" --json "$json" >"$log" 2>&1; then
  echo "run_and_check.sh: the run failed: $* --json $json"
  cat "$log"
  exit 1
fi
"$python" "$here/check_record_schema.py" "$json"
