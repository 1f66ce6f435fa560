#!/usr/bin/env python3
"""A run's trace (cuboid run --trace) read back: it must follow the plan.

    trace_check.py CUBOID DECK OUTDIR [--mpirun MPIEXEC NP] [-- cuboid run arguments]

Runs the deck with --trace and --json, then checks:
  - the file is Chrome trace-event JSON: every event has a phase, a process and a track, every
    track is named, and complete events have a duration;
  - a queue runs in order: on each track of a processor's queue (gemm, copy in, copy out, a
    stream) no two events overlap;
  - one process: each timed repetition holds as many GEMMs as the record's steps of its
    processors (the plan's), and a copying processor's first GEMM starts after its first copy
    in has ended;
  - under mpirun, one process per rank: each rank's pieces follow the plan's order, each after
    the wait for its inputs, and the trace says how many receives had completed before their
    piece's wait began (printed, not judged).
"""
import json
import os
import subprocess
import sys

EPS_US = 1.0  # timestamps are rounded to nanoseconds; a queue's next task may start the same µs


def fail(msg):
    print(f"trace_check: FAILED: {msg}")
    sys.exit(1)


def main():
    args = sys.argv[1:]
    if len(args) < 3:
        sys.exit(__doc__)
    cuboid, deck, out = args[:3]
    rest = args[3:]
    launcher = []
    if rest[:1] == ["--mpirun"]:
        launcher = [rest[1], "--oversubscribe", "--allow-run-as-root", "-np", rest[2]]
        rest = rest[3:]
    if rest[:1] == ["--"]:
        rest = rest[1:]
    os.makedirs(out, exist_ok=True)
    trace_path, record_path = os.path.join(out, "trace.json"), os.path.join(out, "record.json")
    for p in (trace_path, record_path):
        if os.path.exists(p):
            os.remove(p)
    cmd = launcher + [cuboid, "run", deck, "--trace", trace_path, "--json", record_path] + rest
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        print(run.stdout, run.stderr)
        fail(f"exit status {run.returncode}: {' '.join(cmd)}")
    with open(trace_path) as f:
        trace = json.load(f)
    with open(record_path) as f:
        record = json.load(f)

    events = trace["traceEvents"]
    names = {}
    for e in events:
        for key in ("ph", "pid", "name"):
            if key not in e:
                fail(f"an event without '{key}': {e}")
        if e["ph"] == "M" and e["name"] == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
    timed = [e for e in events if e["ph"] in ("X", "i")]
    for e in timed:
        if (e["pid"], e["tid"]) not in names:
            fail(f"an event on an unnamed track: {e}")
        if e["ph"] == "X" and e["dur"] < 0:
            fail(f"a negative duration: {e}")
        e["track"] = names[(e["pid"], e["tid"])]
        e["end"] = e["ts"] + e.get("dur", 0)
    if not timed:
        fail("no events")

    # A queue runs its tasks one after the other.
    queues = {}
    for e in timed:
        if e["ph"] == "X" and e["track"].split(" ")[-1] in ("gemm", "in", "out") or " stream " in e["track"]:
            queues.setdefault((e["pid"], e["track"]), []).append(e)
    for (pid, track), evs in queues.items():
        evs.sort(key=lambda e: e["ts"])
        for a, b in zip(evs, evs[1:]):
            if b["ts"] < a["end"] - EPS_US:
                fail(f"rank {pid}, {track}: '{b['name']}' at {b['ts']:.1f} µs starts before "
                     f"'{a['name']}' ends at {a['end']:.1f} µs")
    print(f"trace_check: {len(timed)} events on {len(names)} tracks; "
          f"{len(queues)} queues, each in order")

    if launcher:
        check_ranks(timed, int(launcher[-1]))
    else:
        check_repetitions(timed, record)
    print("trace_check: passed")


def within(e, span):
    return e["ts"] >= span["ts"] - EPS_US and e["end"] <= span["end"] + EPS_US


def check_repetitions(timed, record):
    reps = [e for e in timed if e["track"] == "run" and e["name"] == "repetition"]
    if not reps:
        fail("no repetition on the 'run' track")
    steps = sum(p["steps"] for p in record["processors"])
    processors = [p["name"] for p in record["processors"]]
    for i, rep in enumerate(reps):
        gemms = [e for e in timed if e["name"] == "gemm" and within(e, rep)]
        if len(gemms) != steps:
            fail(f"repetition {i}: {len(gemms)} GEMMs in the trace, the plan has {steps} steps")
        for p in processors:
            ins = sorted((e for e in timed if e["track"] == f"{p} copy in" and within(e, rep)),
                         key=lambda e: e["ts"])
            own = sorted((e for e in gemms if e["track"].startswith(p + " ")),
                         key=lambda e: e["ts"])
            if ins and own and own[0]["ts"] < ins[0]["end"] - EPS_US:
                fail(f"repetition {i}: {p}'s first GEMM starts before its first copy in ends")
    print(f"trace_check: {len(reps)} repetitions of {steps} GEMMs each, as planned "
          f"({', '.join(processors)})")


def check_ranks(timed, ranks):
    pids = sorted({e["pid"] for e in timed})
    if pids != list(range(ranks)):
        fail(f"processes {pids} in the trace, expected ranks 0..{ranks - 1}")
    before = total = 0
    for r in pids:
        pieces = sorted((e for e in timed if e["pid"] == r and e["track"] == "pieces"
                         and e["name"] == "piece"), key=lambda e: e["ts"])
        if not any(e["pid"] == r and e["track"] == "run" and e["name"] == "repetition"
                   for e in timed):
            fail(f"rank {r}: no repetition on the 'run' track")
        waits = {e["args"]["piece"]: e for e in timed if e["pid"] == r
                 and e["name"] == "wait for inputs"}
        if [p["args"]["piece"] for p in pieces] != sorted(p["args"]["piece"] for p in pieces):
            fail(f"rank {r}: pieces out of the plan's order")
        for p in pieces:
            w = waits.get(p["args"]["piece"])
            if w is None:
                fail(f"rank {r}: piece {p['args']['piece']} without its wait for inputs")
            if p["ts"] < w["end"] - EPS_US:
                fail(f"rank {r}: piece {p['args']['piece']} starts before its inputs arrived")
            total += 1
            before += w["dur"] < 10.0  # the receives had completed: the wait only checked
        if not pieces:
            fail(f"rank {r}: no pieces")
    print(f"trace_check: {total} pieces on {len(pids)} ranks, each after its inputs; "
          f"{before} of them found their inputs already received (wait under 10 µs)")


if __name__ == "__main__":
    main()
