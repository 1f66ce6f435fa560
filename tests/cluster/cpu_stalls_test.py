#!/usr/bin/env python3
"""scripts/cpu-stalls on its own: one line per core it may run on, shares between 0 and 100 %;
on a core shared with a busy process it sees the time that process took; bad arguments fail
with a message and print no figures.

    cpu_stalls_test.py SCRIPT"""
import os
import re
import subprocess
import sys
import time

LINE = re.compile(r"core (\d+): (\d+) stalls over 2 ms in [\d.]+ s \((\d+) of 50 ms or more\), "
                  r"(\d+) ms in all \(longest (\d+) ms\), ran ([\d.]+) % of the time")


def run(script, *args, cores=None):
    pre = ["taskset", "-c", cores] if cores is not None else []
    return subprocess.run(pre + [script, *args], capture_output=True, text=True, timeout=60)


def shares(out):
    found = {int(m.group(1)): float(m.group(6)) for m in map(LINE.match, out.splitlines()) if m}
    assert out.splitlines()[-1].startswith(f"all {len(found)} cores busy: "), out
    return found


def main():
    script = sys.argv[1]
    r = run(script, "0.3")
    assert r.returncode == 0, r.stderr
    got = shares(r.stdout)
    assert sorted(got) == sorted(os.sched_getaffinity(0)), r.stdout
    assert all(0 <= v <= 100 for v in got.values()), r.stdout

    # A busy process pinned to the same core takes about half of it.
    core = str(min(os.sched_getaffinity(0)))
    hog = subprocess.Popen(["taskset", "-c", core, sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.2)
        r = run(script, "1", cores=core)
    finally:
        hog.kill()
        hog.wait()
    assert r.returncode == 0, r.stderr
    got = shares(r.stdout)
    assert list(got) == [int(core)], r.stdout
    assert got[int(core)] < 90, f"a shared core should lose time:\n{r.stdout}"

    for bad in (["x"], ["0"], ["1", "2"]):
        r = run(script, *bad)
        assert r.returncode != 0 and r.stdout == "", (bad, r)
        assert "cpu-stalls" in r.stderr or "SECONDS" in r.stderr, (bad, r.stderr)
    print("cpu-stalls: shares, a shared core's loss and bad arguments checked")


if __name__ == "__main__":
    main()
