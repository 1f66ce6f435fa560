#!/usr/bin/env python3
"""scripts/scaling-study without a scheduler: the closed-form figures against hand counts, plan's
job scripts and its errors, collect on made-up records (old, new, pdgemm's, broken ones) and the
model sweep. The end-to-end run through SLURM is slurm_sweep.py.

  scaling_study_test.py --source ROOT --cuboid BUILD/bin/cuboid
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import unittest

ARGS = None


def script():
    return os.path.join(ARGS.source, "scripts", "scaling-study")


def run(*argv, ok=True):
    r = subprocess.run([sys.executable, script(), *argv], capture_output=True, text=True, timeout=120)
    if ok and r.returncode != 0:
        raise AssertionError(f"scaling-study {' '.join(argv)} failed ({r.returncode}):\n{r.stdout}{r.stderr}")
    return r


class Model(unittest.TestCase):
    def setUp(self):
        sys.dont_write_bytecode = True
        sys.path.insert(0, os.path.join(ARGS.source, "scripts"))
        from scaling_study import model
        self.model = model

    def test_near_square_grid(self):
        grids = {p: self.model.near_square_grid(p) for p in (1, 2, 4, 6, 7, 12, 16)}
        self.assertEqual(grids, {1: (1, 1), 2: (1, 2), 4: (2, 2), 6: (2, 3), 7: (1, 7), 12: (3, 4), 16: (4, 4)})

    def test_summa_bytes_by_hand(self):
        # 1 x 2 grid, blocks of 32, m=192 n=160 k=224: process column c owns 4 (c=0) or 3 (c=1) of
        # the 7 k-blocks of A and receives the other columns of its 192 rows; B needs nothing (one
        # process row). Column 0: 192*96 = 18432 elements, column 1: 192*128 = 24576.
        self.assertEqual(self.model.summa_bytes_per_rank(192, 160, 224, 32, (1, 2), 8), [147456, 196608])
        # 2 x 2 grid of 32 x 32 blocks of a 64^3 product: each rank receives one block of A and one
        # of B: 2 * 1024 elements.
        self.assertEqual(self.model.summa_bytes_per_rank(64, 64, 64, 32, (2, 2), 4), [8192] * 4)
        self.assertEqual(self.model.summa_bytes_per_rank(64, 64, 64, 32, (1, 1), 8), [0])

    def test_cosma_bound(self):
        self.assertAlmostEqual(self.model.cosma_bound_bytes(1000, 1000, 1000, 8, 8), 8 * 3 * 500.0 ** 2)


def record(sweep, algorithm, P, gflops, nodes=1, rpn=None, passed=True, asked_nodes=None, bytes_=None,
           model_bytes=None):
    rpn = rpn or P // nodes
    b = 1000.0 * (P - 1) if bytes_ is None else bytes_
    return {
        "record_version": 2, "format": "cuboid run record 2",
        "deck": {"path": "d.toml", "effective": "x", "sha256": "ab" * 32},
        "problem": {"m": 256, "n": 256, "k": 256, "tile": 64, "precision": "double"},
        "partition": {"algorithm": algorithm},
        "gflops": gflops, "timing": {"median_s": 2 * 256 ** 3 / gflops / 1e9, "min_s": 0.001, "max_s": 1.0,
                                      "repetitions": 3},
        "processors": [{"name": "0:host", "speed_source": "measured", "threads": 2}],
        "communication": {"bytes_per_rank_max": b,
                          "model_bytes_per_rank_max": b if model_bytes is None else model_bytes,
                          "lower_bound_bytes_per_rank": 5e5},
        "mpi": {"ranks": P, "grid": [1, P] if P < 4 else [2, P // 2], "block": 64,
                "layout": "2D block-cyclic, row-major process grid, ScaLAPACK descriptors"},
        "validation": {"performed": True, "passed": passed, "method": "m"},
        "build": {"git": {"commit": "c" * 40, "describe": "v1", "dirty": False}, "compiler": "GNU",
                  "build_type": "Release", "kokkos": {"version": "3.4.01", "default_space": "OpenMP"},
                  "kokkos_kernels_tpls": ["BLAS"]},
        "execution": {"ranks": P, "nodes": nodes, "ranks_per_node": rpn, "hosts": [f"h{i}" for i in range(nodes)],
                      "threads_per_rank": 2, "launcher": "srun"},
        "job": {"scheduler": "slurm", "id": str(100 + P)},
        "study": {"sweep": sweep, "point": f"{sweep}-p{P}", "nodes": str(asked_nodes or nodes),
                  "ranks_per_node": str(rpn), "threads": "2"},
        "model": {"compute_s": 0.001 / P},
    }


class Collect(unittest.TestCase):
    def test_tables_checks_and_plots(self):
        with tempfile.TemporaryDirectory() as d:
            recs = {
                "a1.json": record("strong", "nrrp3d", 1, 10.0),
                "a2.json": record("strong", "nrrp3d", 2, 18.0),
                "a4.json": record("strong", "nrrp3d", 4, 30.0, nodes=2, asked_nodes=4),
                "b1.json": record("strong", "grid", 1, 10.0),
                "b2.json": record("strong", "grid", 2, 16.0, passed=False),
                "b4.json": record("strong", "grid", 4, 20.0, model_bytes=1.0),
                "pd.json": {"program": "pdgemm", "m": 256, "n": 256, "k": 256, "block": 64, "grid": [1, 2],
                            "ranks": 2, "threads_per_rank": 2, "median_s": 0.01, "gflops": 3.3,
                            "validation": {"performed": True, "passed": True}},
                "broken.json": "{not json",
                "other.json": {"format": "something else"},
            }
            # Version 1: no execution, study or job; the hosts come from the ranks.
            v1 = record("strong", "slab", 2, 12.0)
            for key in ("execution", "study", "job", "record_version", "model"):
                del v1[key]
            v1["format"] = "cuboid run record 1"
            v1["deck"] = "d.toml"
            v1["build"] = "Kokkos 3.4.01 (OpenMP), MPI 2 ranks"
            v1["ranks"] = [{"host": "x"}, {"host": "y"}]
            recs["v1.json"] = v1
            for name, j in recs.items():
                with open(os.path.join(d, name), "w") as f:
                    f.write(j if isinstance(j, str) else json.dumps(j))
            r = run("collect", d, "--formats", "png")
            with open(os.path.join(d, "points.csv")) as f:
                pts = {(p["sweep"], p["series"], int(p["ranks"])): p for p in csv.DictReader(f)}
            self.assertAlmostEqual(float(pts[("strong", "nrrp3d", 2)]["efficiency"]), 0.9)
            self.assertAlmostEqual(float(pts[("strong", "nrrp3d", 4)]["efficiency"]), 0.75)
            # model time: compute 0.001/P s plus the bytes at 10 GB/s
            self.assertAlmostEqual(float(pts[("strong", "nrrp3d", 2)]["model_time_s"]), 0.0005 + 1000 / 1e10)
            self.assertEqual(float(pts[("strong", "nrrp3d", 2)]["summa_bytes_per_rank_max"]), 8 * 256 * 128)
            self.assertIn(("runs", "pdgemm (ScaLAPACK)", 2), pts)
            self.assertEqual(pts[("runs", "slab", 2)]["nodes"], "2")  # two hosts among the ranks
            with open(os.path.join(d, "tables.md")) as f:
                md = f.read()
            checks = md.split("## Checks", 1)[1]
            self.assertIn("grid/P=2", checks)
            self.assertIn("validation FAILED", checks)
            self.assertIn("asked for 4 nodes, ran with 2", checks)
            self.assertIn("differ from the model", checks)
            self.assertIn("broken.json: not a JSON record", checks)
            self.assertIn("other.json: not a run record", checks)
            self.assertIn("| nrrp3d | 4 | 2 x 2 |", md)
            self.assertIn("**FAILED**", md)
            with open(os.path.join(d, "strong.png"), "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
            self.assertIn("check: strong/grid/P=2", r.stdout)
            self.assertEqual(run("collect", d, "--no-plots", "--strict", ok=False).returncode, 1)

    def test_no_records_is_an_error(self):
        with tempfile.TemporaryDirectory() as d:
            r = run("collect", d, "--no-plots", ok=False)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("no run records", r.stderr)


class Plan(unittest.TestCase):
    def test_scripts_and_lines(self):
        deck = os.path.join(ARGS.source, "tests", "mpi", "small.toml")
        with tempfile.TemporaryDirectory() as d:
            r = run("plan", "--out", d, "--deck", deck, "--cuboid", ARGS.cuboid, "--nodes", "1,2,4",
                    "--ranks-per-node", "2", "--threads", "4", "--sweep", "strong,weak", "--weak-growth", "mn",
                    "--partition", "batch", "--account", "proj", "--time", "00:10:00", "--exclusive",
                    "--sbatch=--constraint=icelake", "--algorithms", "nrrp3d,grid", "--pdgemm", "/bin/true",
                    "--set", "run.repetitions=5")
            jobs = sorted(os.listdir(os.path.join(d, "jobs")))
            self.assertEqual(jobs, [f"{s}-n{n}-r2.sbatch" for s in ("strong", "weak") for n in (1, 2, 4)])
            with open(os.path.join(d, "jobs", "strong-n4-r2.sbatch")) as f:
                text = f.read()
            for line in ("#SBATCH --nodes=4", "#SBATCH --ntasks-per-node=2", "#SBATCH --cpus-per-task=4",
                         "#SBATCH --partition=batch", "#SBATCH --account=proj", "#SBATCH --time=00:10:00",
                         "#SBATCH --exclusive", "#SBATCH --constraint=icelake", "export OMP_NUM_THREADS=4",
                         "export OMP_PROC_BIND=close", "export CUBOID_STUDY_RANKS=8",
                         "srun --mpi=pmix --nodes=4 --ntasks=8 --ntasks-per-node=2 --cpus-per-task=4"):
                self.assertIn(line, text)
            self.assertEqual(text.count("/cuboid run /"), 2)  # nrrp3d and grid
            self.assertIn("/bin/true --m 192 --n 160 --k 224 --block 32 --threads 4", text)
            with open(os.path.join(d, "plan.json")) as f:
                plan = json.load(f)
            weak = {p["ranks"]: p for p in plan["sweeps"]["weak"]["points"]}
            # m and n grow by sqrt(P/2), rounded to the 32-tile; k stays.
            self.assertEqual([(weak[p]["m"], weak[p]["n"], weak[p]["k"]) for p in (2, 4, 8)],
                             [(192, 160, 224), (256, 224, 224), (384, 320, 224)])
            self.assertIn("mpirun -np 8 --map-by ppr:2:node:PE=4 --bind-to core", r.stdout)
            with open(os.path.join(d, "run-local.sh")) as f:
                self.assertEqual(f.read().count("mpirun -np"), 6 * 3)
            self.assertTrue(os.access(os.path.join(d, "submit.sh"), os.X_OK))
            # A second plan of one sweep replaces that sweep and keeps the other.
            run("plan", "--out", d, "--deck", deck, "--cuboid", ARGS.cuboid, "--nodes", "1", "--sweep", "weak")
            with open(os.path.join(d, "plan.json")) as f:
                plan = json.load(f)
            self.assertEqual(len(plan["sweeps"]["strong"]["points"]), 3)
            self.assertEqual(len(plan["sweeps"]["weak"]["points"]), 1)
            self.assertEqual(len(os.listdir(os.path.join(d, "jobs"))), 4)

    def test_bad_input(self):
        deck = os.path.join(ARGS.source, "tests", "mpi", "small.toml")
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "study")
            cases = [(["--nodes", "0"], "positive integers"), (["--sweep", "sideways"], "--sweep sideways"),
                     (["--weak-growth", "q"], "--weak-growth q"), (["--set", "problem.nope=1"], "problem.nope"),
                     (["--deck", os.path.join(d, "missing.toml")], "no such file")]
            for extra, message in cases:
                r = run("plan", "--out", out, "--deck", deck, "--cuboid", ARGS.cuboid, *extra, ok=False)
                self.assertNotEqual(r.returncode, 0, extra)
                self.assertIn(message, r.stderr, extra)
                self.assertFalse(os.path.exists(os.path.join(out, "plan.json")), extra)


class Simulate(unittest.TestCase):
    def test_model_sweep_plots(self):
        with tempfile.TemporaryDirectory() as d:
            run("simulate", "--cuboid", ARGS.cuboid, "--ranks", "2,8", "--shapes", "square",
                "--algorithms", "nrrp3d,grid", "--out", d, "--formats", "png")
            files = sorted(os.listdir(d))
            self.assertEqual(files, ["simulated.csv", "square-equal.png", "square-heterogeneous.png", "table.md"])
            with open(os.path.join(d, "table.md")) as f:
                md = f.read()
            self.assertIn("| nrrp3d |", md)
            self.assertIn("| pdgemm (SUMMA) |", md)


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--cuboid", required=True)
    ARGS, rest = ap.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
