#!/usr/bin/env python3
"""Runs every deck in inputs/ (one process) with partition.algorithm = "auto" and with every fixed
algorithm x discretisation, and prints the median run times as a Markdown table.

Usage: bench/partition/auto_vs_fixed.py [--cuboid build/bin/cuboid] [--rounds N]
                                        [--set KEY=VALUE ...] [deck ...]

Each round runs every choice once, in an order that rotates from round to round, so that a load
spike on a shared machine does not always hit the same choice. A choice's time is the median over
rounds of each run's own median (timing.median_s). Fixed choices that give the same partition
(the same pieces, volume and copied bytes on every processor) are one candidate whose rounds are
pooled: otherwise the best of several copies of one partition would be the luckiest draw of its
noise. The table gives, per deck, the best fixed candidate, what auto chose, auto's own median and
its ratio to the best, and the median of the candidate auto's partition belongs to. Speeds come
from the speed cache, so every run partitions with the same speeds; the load (uptime) before and
after is printed.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ALGORITHMS = ["nrrp3d", "nrrp3d-2mode", "nrrp2d", "column", "slab", "grid"]
DISCRETIZATIONS = ["stepped", "precise", "rounded"]


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def run(cuboid, deck, overrides, json_path):
    cmd = [cuboid, "run", deck, "--json", json_path]
    for o in overrides:
        cmd += ["--set", o]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines()
        return None, lines[-1] if lines else "failed"
    with open(json_path) as f:
        return json.load(f), None


def fingerprint(rec):
    """What identifies a partition in the run record: per processor its pieces, volume and
    copied bytes."""
    return tuple((p["pieces"], p["volume"], p.get("h2d_bytes", 0), p.get("d2h_bytes", 0))
                 for p in rec["processors"])


def name(choice):
    return f"{choice[0]} + {choice[1]}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cuboid", default="build/bin/cuboid")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--set", action="append", default=[], dest="sets",
                    help="extra deck override for every run, e.g. run.validate=false")
    ap.add_argument("decks", nargs="*")
    args = ap.parse_args()
    decks = args.decks or sorted(
        os.path.join("inputs", f) for f in os.listdir("inputs") if f.endswith(".toml"))
    auto = ("auto", "auto")
    choices = [auto] + [(a, d) for d in DISCRETIZATIONS for a in ALGORITHMS]
    path = os.path.join(tempfile.mkdtemp(prefix="cuboid-auto-"), "rec.json")
    print(f"load before: {load()}", file=sys.stderr, flush=True)
    rows = []
    for deck in decks:
        rec, err = run(args.cuboid, deck, args.sets, path)
        if rec is None:
            print(f"{deck}: {err}", file=sys.stderr)
            continue
        speeds = "platform.speeds=[" + ", ".join(
            f"{p['speed_gflops']:.6g}" for p in rec["processors"]) + "]"
        print(f"{deck}: {speeds}", file=sys.stderr, flush=True)
        times = {c: [] for c in choices}
        prints = {}
        chosen = set()
        errors = {}
        for r in range(args.rounds):
            shift = (r * 7) % len(choices)
            for c in choices[shift:] + choices[:shift]:
                overrides = [f"partition.algorithm={c[0]}", f"partition.discretization={c[1]}"]
                rec, err = run(args.cuboid, deck, overrides + [speeds] + args.sets, path)
                if rec is None:
                    errors[c] = err
                    continue
                t = rec["timing"]["median_s"]
                times[c].append(t)
                prints[c] = fingerprint(rec)
                if c == auto:
                    chosen.add((rec["partition"]["algorithm"], rec["partition"]["discretization"]))
                print(f"{deck} {name(c)} round {r + 1}: {t:.4f} s (load {load()})",
                      file=sys.stderr, flush=True)
        groups = {}  # fingerprint -> fixed choices giving that partition
        for c in choices[1:]:
            if times[c]:
                groups.setdefault(prints[c], []).append(c)
        pooled = {fp: statistics.median([t for c in cs for t in times[c]])
                  for fp, cs in groups.items()}
        best = min(pooled, key=pooled.get)
        auto_t = statistics.median(times[auto]) if times[auto] else None
        auto_group = pooled.get(prints.get(auto))
        rows.append((deck, groups[best], pooled[best], sorted(chosen), auto_t, auto_group,
                     len(groups), errors))
    print(f"load after: {load()}", file=sys.stderr, flush=True)
    print("| deck | partitions | best fixed (same partition) | its median (s) | auto chose | "
          "auto median (s) | auto / best | auto's partition, pooled (s) |")
    print("|---|---|---|---|---|---|---|---|")
    for deck, best, tb, chosen, at, ag, n, errors in rows:
        shown = ", ".join(name(c) for c in best[:3]) + (f" (+{len(best) - 3})" if len(best) > 3
                                                       else "")
        ch = ", ".join(name(c) for c in chosen)
        print(f"| {os.path.basename(deck)} | {n} | {shown} | {tb:.4f} | {ch} | "
              + (f"{at:.4f} | {at / tb:.3f} | " if at else "- | - | ")
              + (f"{ag:.4f} |" if ag else "- |"))
    for deck, best, tb, chosen, at, ag, n, errors in rows:
        for c, e in errors.items():
            print(f"{os.path.basename(deck)} {name(c)}: {e}", file=sys.stderr)


if __name__ == "__main__":
    main()
