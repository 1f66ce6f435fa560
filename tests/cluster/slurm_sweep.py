#!/usr/bin/env python3
"""A scaling study through a real SLURM, end to end.

Starts munge and SLURM from Debian's packages (slurm-wlm, munge) with a private configuration
(scripts/scaling_study/local_slurm.py: controller and one node on this machine, state, sockets
and logs in a temporary folder, ports picked free). Then `scripts/scaling-study plan` writes a
strong sweep (srun inside the batch script) and a weak sweep (mpirun inside the batch script) at
P = 1, 2; their job scripts are submitted with sbatch and waited for; `scripts/scaling-study
collect` turns the records into tables and plots, and both are checked against what was asked
and against figures worked out by hand. The daemons and every process they started are stopped
at the end, pass or fail (they also die with this script if it is killed).

Exit status 77 (ctest SKIP_RETURN_CODE) when SLURM cannot run here: not root, packages missing,
or the daemons do not start; the reason is printed. CUBOID_REQUIRE_SLURM=1 turns a skip into a
failure (for CI, where the test must not skip).

  slurm_sweep.py --source ROOT --cuboid BUILD/bin/cuboid --work BUILD/tests/cluster/sweep
"""
import argparse
import csv
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

SKIP = 77


def log(msg):
    print(f"slurm_sweep: {msg}", flush=True)


def tail(path, lines=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return "(no log)\n"


def source_state(source):
    """Untracked and modified files of the source tree (build folders aside), if it is a checkout."""
    r = subprocess.run(["git", "-C", source, "status", "--porcelain", "--untracked-files=all"], capture_output=True,
                       text=True)
    if r.returncode != 0:
        return None
    return sorted(line for line in r.stdout.splitlines() if not re.match(r"^.. build[^/]*/", line))


def study(args, cluster, errors, partition):
    def expect(cond, msg):
        if not cond:
            errors.append(msg)
        return cond

    out = args.work
    shutil.rmtree(out, ignore_errors=True)
    script = os.path.join(args.source, "scripts", "scaling-study")
    deck = os.path.join(args.source, "tests", "mpi", "small.toml")
    common = ["--out", out, "--deck", deck, "--nodes", "1", "--ranks-per-node", "1,2", "--threads", "1",
              "--omp-proc-bind", "false", "--omp-places", "", "--bind", "none", "--partition", partition,
              "--time", "5", "--cuboid", args.cuboid, "--set", "run.repetitions=3", "--set", "platform.speeds=measure",
              "--env", f"CUBOID_CACHE_DIR={os.path.join(cluster.root, 'cache')}",
              "--env", "OMPI_ALLOW_RUN_AS_ROOT=1", "--env", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"]
    plans = [common + ["--sweep", "strong", "--launcher", "srun", "--algorithms", "nrrp3d,grid"],
             common + ["--sweep", "weak", "--launcher", "mpirun", "--weak-growth", "mnk"]]
    for argv in plans:
        r = cluster.run([sys.executable, script, "plan"] + argv)
        expect("mpirun -np 2" in r.stdout, f"plan did not print the mpirun lines:\n{r.stdout}")
    jobs = sorted(os.listdir(os.path.join(out, "jobs")))
    expect(jobs == ["strong-n1-r1.sbatch", "strong-n1-r2.sbatch", "weak-n1-r1.sbatch", "weak-n1-r2.sbatch"],
           f"job scripts: {jobs}")
    with open(os.path.join(out, "jobs", "strong-n1-r2.sbatch")) as f:
        text = f.read()
    expect("#SBATCH --nodes=1" in text and "#SBATCH --ntasks-per-node=2" in text and "srun --mpi=pmix" in text,
           f"strong P=2 batch script:\n{text}")

    t0 = time.time()
    r = cluster.run([os.path.join(out, "submit.sh")])
    ids = {}
    for line in r.stdout.splitlines():
        job_id, path = line.split()
        ids[os.path.basename(path)[: -len(".sbatch")]] = job_id
    expect(len(ids) == 4, f"submit.sh printed {r.stdout!r}")
    log(f"submitted {len(ids)} jobs: {', '.join(f'{k}={v}' for k, v in sorted(ids.items()))}")
    while time.time() - t0 < args.timeout:
        r = cluster.run(["squeue", "-h", "-o", "%i %T"])
        if not r.stdout.strip():
            break
        time.sleep(0.5)
    else:
        raise AssertionError(f"jobs still queued or running after {args.timeout} s:\n{r.stdout}")
    log(f"all jobs finished in {time.time() - t0:.1f} s")
    for point, job_id in sorted(ids.items()):
        r = cluster.run(["scontrol", "show", "job", "-o", job_id])
        state = re.search(r"JobState=(\S+)", r.stdout)
        code = re.search(r"ExitCode=(\S+)", r.stdout)
        if not expect(state and state.group(1) == "COMPLETED" and code and code.group(1) == "0:0",
                      f"job {job_id} ({point}): {state and state.group(1)}, exit {code and code.group(1)}"):
            for f in os.listdir(os.path.join(out, "logs")):
                if f.endswith(f"-{job_id}.out"):
                    errors.append(tail(os.path.join(out, "logs", f), 30))

    # The records: what was asked, where it ran, and a deck hash anyone can recompute.
    hostname = socket.gethostname()
    recs = {}
    for sweep, point, algorithm, P, launcher in [("strong", "strong-n1-r1", "nrrp3d", 1, "srun"),
                                                 ("strong", "strong-n1-r2", "nrrp3d", 2, "srun"),
                                                 ("strong", "strong-n1-r1", "grid", 1, "srun"),
                                                 ("strong", "strong-n1-r2", "grid", 2, "srun"),
                                                 ("weak", "weak-n1-r1", "nrrp3d", 1, "mpirun"),
                                                 ("weak", "weak-n1-r2", "nrrp3d", 2, "mpirun")]:
            path = os.path.join(out, "records", f"{point}-{algorithm}.json")
            if not expect(os.path.exists(path), f"no record {path}"):
                continue
            with open(path) as f:
                j = json.load(f)
            recs[(point, algorithm)] = j
            where = os.path.basename(path)
            expect(j.get("record_version") == 2, f"{where}: record_version {j.get('record_version')}")
            deck_ = j.get("deck", {})
            expect(hashlib.sha256(deck_.get("effective", "").encode()).hexdigest() == deck_.get("sha256"),
                   f"{where}: deck sha256 does not match its effective text")
            expect("run.repetitions = 3" in deck_.get("effective", ""), f"{where}: effective deck lacks the --set")
            x = j.get("execution", {})
            expect(x.get("ranks") == P and x.get("nodes") == 1 and x.get("ranks_per_node") == P
                   and x.get("hosts") == [hostname] and x.get("threads_per_rank") == 1,
                   f"{where}: execution {x}")
            expect(x.get("launcher") == launcher, f"{where}: launcher {x.get('launcher')}, expected {launcher}")
            job = j.get("job", {})
            expect(job.get("scheduler") == "slurm" and job.get("id") == ids.get(point),
                   f"{where}: job {job}, expected SLURM job {ids.get(point)}")
            st = j.get("study", {})
            expect(st.get("sweep") == sweep and st.get("point") == point and st.get("ranks") == str(P),
                   f"{where}: study {st}")
            expect(j.get("validation", {}).get("passed") is True, f"{where}: validation {j.get('validation')}")
            git = j.get("build", {}).get("git", {})
            expect(git.get("commit") == "unknown" or re.fullmatch(r"[0-9a-f]{40}", str(git.get("commit"))),
                   f"{where}: git {git}")
            expect(j.get("model", {}).get("compute_s", 0) > 0, f"{where}: no model time")
    if len(recs) == 6:
        s1, s2 = recs[("strong-n1-r1", "nrrp3d")], recs[("strong-n1-r2", "nrrp3d")]
        expect(s1["deck"]["sha256"] == s2["deck"]["sha256"], "strong: the deck hash changed with P")
        w1, w2 = recs[("weak-n1-r1", "nrrp3d")], recs[("weak-n1-r2", "nrrp3d")]
        v1 = w1["problem"]["m"] * w1["problem"]["n"] * w1["problem"]["k"]
        v2 = w2["problem"]["m"] * w2["problem"]["n"] * w2["problem"]["k"]
        expect(w2["problem"]["m"] > w1["problem"]["m"] and abs(v2 / 2 / v1 - 1) < 0.1,
               f"weak: work per rank {v1} at P=1 and {v2 / 2} at P=2")

    # The collected tables and plots.
    r = cluster.run([sys.executable, script, "collect", out], check=False)
    log(r.stdout.strip())
    if not expect(r.returncode == 0, f"collect failed ({r.returncode}): {r.stdout}{r.stderr}"):
        return
    with open(os.path.join(out, "points.csv")) as f:
        points = {(p["sweep"], p["series"], int(p["ranks"])): p for p in csv.DictReader(f)}
    want = {("strong", "nrrp3d", 1), ("strong", "nrrp3d", 2), ("strong", "grid", 1), ("strong", "grid", 2),
            ("weak", "nrrp3d", 1), ("weak", "nrrp3d", 2)}
    expect(set(points) == want, f"points.csv has {sorted(points)}, expected {sorted(want)}")
    elem = 8
    for key, p in points.items():
        sweep, series, P = key
        num = {k: float(v) for k, v in p.items() if re.fullmatch(r"-?[0-9.e+-]+", v or "")}
        expect(num.get("median_s", 0) > 0 and num.get("gflops", 0) > 0, f"{key}: no time or rate")
        expect(num.get("model_time_s", 0) > 0, f"{key}: no model time (speeds were measured)")
        m, n, k = int(p["m"]), int(p["n"]), int(p["k"])
        bound = elem * 3 * (m * n * k / P) ** (2 / 3)
        expect(abs(num.get("lower_bound_bytes_per_rank", 0) - bound) < 1e-6 * bound, f"{key}: bound {p}")
        if P == 1:
            expect(num.get("efficiency") == 1.0, f"{key}: efficiency at the smallest P is {p['efficiency']}")
            expect(num.get("bytes_per_rank_max") == 0 and num.get("summa_bytes_per_rank_max") == 0,
                   f"{key}: one rank moved bytes")
        else:
            expect(num.get("efficiency", 0) > 0, f"{key}: no efficiency")
            expect(num.get("bytes_per_rank_max", 0) > 0
                   and num.get("bytes_per_rank_max") == num.get("model_bytes_per_rank_max"),
                   f"{key}: bytes {p['bytes_per_rank_max']} vs model {p['model_bytes_per_rank_max']}")
    # pdgemm on the 1 x 2 grid, blocks of 32, m=192 n=160 k=224: process column 1 owns 3 of the 7
    # k-blocks of A (96 columns) and 2 of the 5 n-blocks of B; it receives A's other 128 columns of
    # its 192 rows: 192 * 128 = 24576 elements, 196608 bytes (column 0: 192 * 96, less).
    if ("strong", "nrrp3d", 2) in points:
        expect(float(points[("strong", "nrrp3d", 2)]["summa_bytes_per_rank_max"]) == 196608,
               f"SUMMA bytes at P=2: {points[('strong', 'nrrp3d', 2)]['summa_bytes_per_rank_max']}")
    with open(os.path.join(out, "tables.md")) as f:
        md = f.read()
    for needle in ("## strong", "## weak", "| nrrp3d | 2 | 1 x 2 |", "| grid | 2 | 1 x 2 |", "![strong](strong.png)",
                   "Jobs: slurm"):
        expect(needle in md, f"tables.md lacks '{needle}'")
    checks = md.split("## Checks", 1)[-1]
    bad = [line for line in checks.splitlines() if line.startswith("- ") and "uncommitted changes" not in line
           and not line.startswith("- none")]
    expect(not bad, "collect found problems:\n" + "\n".join(bad))
    for name in ("strong.png", "weak.png"):
        path = os.path.join(out, name)
        ok = os.path.exists(path)
        if ok:
            with open(path, "rb") as f:
                ok = f.read(8) == b"\x89PNG\r\n\x1a\n" and os.path.getsize(path) > 10000
        expect(ok, f"{name}: missing or not a PNG plot")
        svg = path[:-4] + ".svg"
        expect(os.path.exists(svg) and "<svg" in open(svg).read(2000), f"{svg}: missing or not SVG")


def load_local_slurm(source):
    sys.dont_write_bytecode = True  # nothing left in the source tree
    sys.path.insert(0, os.path.join(source, "scripts"))
    from scaling_study import local_slurm
    return local_slurm


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", required=True)
    ap.add_argument("--cuboid", required=True)
    ap.add_argument("--work", required=True, help="the study folder (in the build tree)")
    ap.add_argument("--timeout", type=float, default=120, help="seconds the jobs may take")
    args = ap.parse_args()
    required = os.environ.get("CUBOID_REQUIRE_SLURM") == "1"
    local_slurm = load_local_slurm(args.source)
    # A timeout's SIGTERM takes the same way out as a failure: the daemons are stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    before = source_state(args.source)
    errors, leftover = [], []
    t0 = time.time()
    try:
        cluster = local_slurm.Cluster()
        try:
            cluster.start()
            log(f"SLURM up in {time.time() - t0:.1f} s (controller and node {local_slurm.NODE} on localhost, "
                f"{cluster.root})")
            study(args, cluster, errors, local_slurm.PARTITION)
        finally:
            leftover = cluster.stop()
    except local_slurm.Unavailable as e:
        print(f"SKIPPED: cannot run SLURM here: {e}", flush=True)
        if required:
            print("slurm_sweep: FAILED: CUBOID_REQUIRE_SLURM=1 and the test could not run", flush=True)
            return 1
        return SKIP
    except (AssertionError, RuntimeError, OSError, subprocess.SubprocessError) as e:
        errors.append(f"{type(e).__name__}: {e}")
    if leftover:
        errors.append(f"processes left running after the daemons stopped: {leftover}")
    after = source_state(args.source)
    if before is not None and after != before:
        errors.append(f"the source tree changed: {sorted(set(after) - set(before))}")
    if errors:
        print("slurm_sweep: FAILED:\n  " + "\n  ".join(errors), flush=True)
        return 1
    log(f"passed in {time.time() - t0:.1f} s; tables and plots in {args.work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
