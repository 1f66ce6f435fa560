#!/usr/bin/env python3
"""CUBOID_TRACE through the library: the traced program's process (or each rank) leaves a
Chrome trace-event file with its calls and what they ran.

    trace_files.py PATH RANKS -- COMMAND...

Runs COMMAND with CUBOID_TRACE=PATH. RANKS = 0: one file, PATH, from a process that made no
distributed call; RANKS = N > 0: N files PATH.0 .. PATH.N-1, each with its rank as process id
and at least one distributed call.
"""
import glob
import json
import os
import subprocess
import sys


def fail(msg):
    print(f"trace_files: FAILED: {msg}")
    sys.exit(1)


def main():
    if len(sys.argv) < 5 or sys.argv[3] != "--":
        sys.exit(__doc__)
    path, ranks, command = sys.argv[1], int(sys.argv[2]), sys.argv[4:]
    for old in glob.glob(path + "*"):
        os.remove(old)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    run = subprocess.run(command, env=dict(os.environ, CUBOID_TRACE=path), capture_output=True,
                         text=True)
    if run.returncode != 0:
        print(run.stdout[-4000:], run.stderr[-4000:])
        fail(f"exit status {run.returncode}")
    files = [path] if ranks == 0 else [f"{path}.{r}" for r in range(ranks)]
    for r, f in enumerate(files):
        if not os.path.exists(f):
            fail(f"no trace file {f} (found: {sorted(glob.glob(path + '*'))})")
        with open(f) as fh:
            events = json.load(fh)["traceEvents"]
        tracks = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
                  if e["ph"] == "M" and e["name"] == "thread_name"}
        calls = [e for e in events if e["ph"] == "X" and tracks.get((e["pid"], e["tid"])) == "calls"]
        want = "distributed gemm" if ranks else "gemm"
        if not any(e["name"] == want for e in calls):
            fail(f"{f}: no '{want}' call on the 'calls' track")
        if ranks and any(e["pid"] != r for e in events):
            fail(f"{f}: events of another process than rank {r}")
        work = [e for e in events if e["ph"] == "X" and e["name"] == "gemm"
                and tracks.get((e["pid"], e["tid"])) != "calls"]
        if not work:
            fail(f"{f}: the calls ran no GEMM on any processor's track")
        print(f"trace_files: {f}: {len(calls)} calls, {len(work)} processor GEMMs")
    if ranks and os.path.exists(path):
        fail(f"{path} written besides the ranks' own files")
    print("trace_files: passed")


if __name__ == "__main__":
    main()
