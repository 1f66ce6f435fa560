#!/usr/bin/env python3
"""The work-stealing benchmark at a small size, and proof that work was stolen.

  steal_smoke.py STEAL_BENCH CUBOID OUT

Runs STEAL_BENCH (scripts/steal-bench) at 768^3, one repetition and one round, with given
speeds: every schedule and scenario runs, validates, and gives the static-tiles run's product
bit for bit (steal-bench fails otherwise). A stealing scheduler that never steals would pass
all of that, so this also reads the records back and requires:
  - each stealing schedule (random, cheapest) stole steps in at least one scenario (a single
    run may well steal nothing: whether a processor runs dry first depends on timing);
  - in every run, the steps thieves took equal the steps victims lost and the steps of the
    steals the thieves recorded;
  - the static schedules stole nothing.
"""
import glob
import json
import os
import shutil
import subprocess
import sys

STEALING = ("random", "cheapest")


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    steal_bench, cuboid, out = sys.argv[1:]
    # Records left by an earlier run must not count.
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run([steal_bench, "--size", "768", "--reps", "1", "--rounds", "1", "--speeds", "1,1",
                    "--cuboid", cuboid, "--out", out], check=True)

    errors = []
    with open(os.path.join(out, "results.json")) as f:
        rows = json.load(f)["rows"]
    for sched in STEALING:
        stolen = {r["scenario"]: r["stolen_steps"] for r in rows if r["schedule"] == sched}
        if not stolen:
            errors.append(f"no {sched} run in results.json")
        elif sum(stolen.values()) <= 0:
            errors.append(f"{sched}: no steps stolen in any scenario ({stolen})")
        else:
            print(f"steal_smoke: {sched} stole steps: {stolen}")

    records = sorted(glob.glob(os.path.join(out, "*-*-0.json")))
    checked = 0
    for path in records:
        name = os.path.basename(path)[: -len("-0.json")]
        with open(path) as f:
            procs = json.load(f)["processors"]
        stolen = sum(p.get("stolen_steps", 0) for p in procs)
        lost = sum(p.get("lost_steps", 0) for p in procs)
        recorded = sum(s["steps"] for p in procs for s in p.get("steals", []))
        if not (stolen == lost == recorded):
            errors.append(f"{name}: {stolen} steps stolen, {lost} lost, {recorded} in the steals")
        if not name.endswith(STEALING) and stolen:
            errors.append(f"{name}: a static schedule stole {stolen} steps")
        checked += 1
    if checked != len(rows):
        errors.append(f"{checked} run records for {len(rows)} rows of results.json")

    for e in errors:
        print(f"steal_smoke: FAIL: {e}", file=sys.stderr)
    if errors:
        sys.exit(1)
    print(f"steal_smoke: ok ({checked} runs checked)")


if __name__ == "__main__":
    main()
