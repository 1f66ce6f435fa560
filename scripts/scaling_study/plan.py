"""`scaling-study plan`: SLURM batch scripts (and plain mpirun lines) for strong and weak scaling
sweeps, every run writing its JSON record into one folder."""
import datetime
import hashlib
import json
import os
import shlex
import subprocess
import sys
import tempfile

from .records import PLAN_FORMAT

WEAK_GROWTH = {
    "mnk": "m, n and k each grow by (P/P0)^(1/3)",
    "mn": "m and n each grow by (P/P0)^(1/2); k stays",
    "m": "m grows by P/P0; n and k stay",
    "n": "n grows by P/P0; m and k stay",
    "k": "k grows by P/P0; m and n stay",
}


def int_list(text):
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise SystemExit(f"scaling-study plan: expected a comma-separated list of integers, got '{text}'")
    if not values or min(values) < 1:
        raise SystemExit(f"scaling-study plan: expected positive integers, got '{text}'")
    return sorted(set(values))


def effective_problem(args):
    """m, n, k, tile and precision of the deck after --set, as cuboid itself reads them (the deck is
    checked here, before anything is submitted)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "problem.json")
        cmd = [args.cuboid, "simulate", args.deck, "--ranks", "1", "--json", out]
        for s in args.set:
            cmd += ["--set", s]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            msg = (r.stderr.strip() or r.stdout.strip() or f"exit status {r.returncode}").splitlines()[-1]
            raise SystemExit(f"scaling-study plan: the deck does not load: {msg}")
        with open(out) as f:
            j = json.load(f)
        return dict(j["problem"], algorithm=j["partition"]["algorithm"])


def grow(problem, factor, dims):
    """The weak-scaling problem for `factor` = P/P0: the dimensions in `dims` grow together so that
    m*n*k grows by `factor`, each rounded to a multiple of the tile (at least one tile)."""
    tile = problem["tile"]
    out = {d: problem[d] for d in "mnk"}
    if factor == 1:
        return out
    per_dim = factor ** (1.0 / len(dims))
    for d in dims:
        out[d] = max(tile, int(round(problem[d] * per_dim / tile)) * tile)
    return out


def point_env(args, sweep, name, nodes, rpn, plan_id):
    env = {"OMP_NUM_THREADS": str(args.threads)}
    if args.omp_proc_bind:
        env["OMP_PROC_BIND"] = args.omp_proc_bind
    if args.omp_places:
        env["OMP_PLACES"] = args.omp_places
    env.update(CUBOID_STUDY_SWEEP=sweep, CUBOID_STUDY_POINT=name, CUBOID_STUDY_NODES=str(nodes),
               CUBOID_STUDY_RANKS_PER_NODE=str(rpn), CUBOID_STUDY_RANKS=str(nodes * rpn),
               CUBOID_STUDY_THREADS=str(args.threads), CUBOID_STUDY_PLAN=plan_id)
    for kv in args.env:
        if "=" not in kv:
            raise SystemExit(f"scaling-study plan: --env {kv}: expected NAME=VALUE")
        k, v = kv.split("=", 1)
        env[k] = v
    return env


def program_lines(args, dims, records_dir, name):
    """(record file, program argv) for every run of one point: cuboid per algorithm, then pdgemm."""
    out = []
    sets = list(args.set) + [f"problem.{d}={dims[d]}" for d in "mnk"]
    for algorithm in args.algorithms or [None]:
        tag = algorithm or args.problem["algorithm"]
        record = os.path.join(records_dir, f"{name}-{tag}.json")
        argv = [args.cuboid, "run", args.deck]
        for s in sets + ([f"partition.algorithm={algorithm}"] if algorithm else []):
            argv += ["--set", s]
        out.append({"program": "cuboid", "algorithm": algorithm, "record": record, "argv": argv + ["--json", record]})
    if args.pdgemm:
        record = os.path.join(records_dir, f"{name}-pdgemm.json")
        p = args.problem
        argv = [args.pdgemm, "--m", str(dims["m"]), "--n", str(dims["n"]), "--k", str(dims["k"]),
                "--block", str(p["tile"]), "--threads", str(args.threads), "--json", record]
        out.append({"program": "pdgemm", "algorithm": "pdgemm", "record": record, "argv": argv})
    return out


def srun_argv(args, nodes, rpn):
    argv = ["srun", f"--mpi={args.srun_mpi}", f"--nodes={nodes}", f"--ntasks={nodes * rpn}",
            f"--ntasks-per-node={rpn}", f"--cpus-per-task={args.threads}", f"--cpu-bind={args.bind}"]
    return argv + shlex.split(args.srun_args)


def mpirun_argv(args, nodes, rpn, env):
    argv = ["mpirun", "-np", str(nodes * rpn), "--map-by", f"ppr:{rpn}:node:PE={args.threads}",
            "--bind-to", "core" if args.bind == "cores" else "none"]
    for k, v in env.items():
        argv += ["-x", f"{k}={v}"]
    return argv + shlex.split(args.mpirun_args)


def quote(argv):
    return " ".join(shlex.quote(a) for a in argv)


def batch_script(args, point, out_dir):
    nodes, rpn = point["nodes"], point["ranks_per_node"]
    lines = ["#!/bin/bash",
             f"#SBATCH --job-name=cuboid-{point['name']}",
             f"#SBATCH --nodes={nodes}",
             f"#SBATCH --ntasks-per-node={rpn}",
             f"#SBATCH --cpus-per-task={args.threads}",
             f"#SBATCH --output={os.path.join(out_dir, 'logs', '%x-%j.out')}"]
    for flag, value in (("time", args.time), ("partition", args.partition), ("account", args.account),
                        ("gpus-per-task", args.gpus_per_rank)):
        if value:
            lines.append(f"#SBATCH --{flag}={value}")
    if args.exclusive:
        lines.append("#SBATCH --exclusive")
    lines += [f"#SBATCH {s}" for s in args.sbatch]
    lines += ["",
              f"# {point['sweep']} scaling, P = {nodes * rpn} ({nodes} node(s) x {rpn} rank(s)), "
              f"{args.threads} thread(s) per rank; m={point['m']} n={point['n']} k={point['k']}.",
              "# Generated by scripts/scaling-study plan; each run writes one JSON record.",
              "set -u",
              "status=0"]
    lines += [f"export {k}={shlex.quote(v)}" for k, v in point["env"].items()]
    lines += ['echo "cuboid scaling study: $CUBOID_STUDY_POINT, job ${SLURM_JOB_ID:-?} on '
              '${SLURM_JOB_NODELIST:-$(hostname)}"']
    for run in point["runs"]:
        launcher = srun_argv(args, nodes, rpn) if args.launcher == "srun" else point["mpirun_prefix"]
        lines += [f"{quote(launcher + run['argv'])} || {{ echo \"run failed: {run['program']} "
                  f"{run['algorithm'] or ''} (status $?)\" >&2; status=1; }}"]
    lines += ["exit $status", ""]
    return "\n".join(lines)


def write(path, text, mode=0o644):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


def run(args):
    args.cuboid = os.path.abspath(args.cuboid)
    args.deck = os.path.abspath(args.deck)
    if not os.access(args.cuboid, os.X_OK):
        raise SystemExit(f"scaling-study plan: {args.cuboid} is not built (cmake --build build --target cuboid)")
    if not os.path.isfile(args.deck):
        raise SystemExit(f"scaling-study plan: --deck {args.deck}: no such file")
    if args.pdgemm:
        args.pdgemm = os.path.abspath(args.pdgemm)
    sweeps = [s for s in args.sweep.split(",") if s]
    for s in sweeps:
        if s not in ("strong", "weak"):
            raise SystemExit(f"scaling-study plan: --sweep {s}: expected strong, weak or strong,weak")
    if args.weak_growth not in WEAK_GROWTH:
        raise SystemExit(f"scaling-study plan: --weak-growth {args.weak_growth}: expected one of "
                         f"{', '.join(WEAK_GROWTH)}")
    nodes_list, rpn_list = int_list(args.nodes), int_list(args.ranks_per_node)
    if args.threads < 1:
        raise SystemExit("scaling-study plan: --threads must be at least 1")
    args.algorithms = [a for a in args.algorithms.split(",") if a] if args.algorithms else []
    args.problem = effective_problem(args)

    out = os.path.abspath(args.out)
    records_dir, jobs_dir = os.path.join(out, "records"), os.path.join(out, "jobs")
    for d in (out, records_dir, jobs_dir, os.path.join(out, "logs")):
        os.makedirs(d, exist_ok=True)
    plan_path = os.path.join(out, "plan.json")
    plan = {"format": PLAN_FORMAT, "sweeps": {}}
    if os.path.exists(plan_path):
        with open(plan_path) as f:
            old = json.load(f)
        if old.get("format") == PLAN_FORMAT:
            plan["sweeps"] = old.get("sweeps", {})
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    plan_id = hashlib.sha256(f"{now} {out} {sys.argv}".encode()).hexdigest()[:12]

    pairs = sorted(((n, r) for n in nodes_list for r in rpn_list), key=lambda nr: (nr[0] * nr[1], nr[0]))
    p0 = pairs[0][0] * pairs[0][1]
    for sweep in sweeps:
        for f in os.listdir(jobs_dir):
            if f.startswith(f"{sweep}-") and f.endswith(".sbatch"):
                os.unlink(os.path.join(jobs_dir, f))
        points = []
        for nodes, rpn in pairs:
            P = nodes * rpn
            dims = grow(args.problem, P / p0, args.weak_growth) if sweep == "weak" else \
                {d: args.problem[d] for d in "mnk"}
            name = f"{sweep}-n{nodes}-r{rpn}"
            env = point_env(args, sweep, name, nodes, rpn, plan_id)
            point = {"sweep": sweep, "name": name, "nodes": nodes, "ranks_per_node": rpn, "ranks": P,
                     "threads": args.threads, **dims, "work_per_rank": dims["m"] * dims["n"] * dims["k"] / P,
                     "env": env, "runs": program_lines(args, dims, records_dir, name),
                     "mpirun_prefix": mpirun_argv(args, nodes, rpn, env)}
            point["script"] = os.path.join(jobs_dir, f"{name}.sbatch")
            write(point["script"], batch_script(args, point, out), 0o755)
            points.append(point)
        plan["sweeps"][sweep] = {
            "created": now, "plan_id": plan_id, "deck": args.deck, "sets": args.set, "cuboid": args.cuboid,
            "launcher": args.launcher, "threads": args.threads, "base_problem": args.problem,
            "growth": WEAK_GROWTH[args.weak_growth] if sweep == "weak" else "fixed problem",
            "points": points}
    write(plan_path, json.dumps(plan, indent=2) + "\n")

    all_points = [p for s in plan["sweeps"].values() for p in s["points"]]
    local = ["#!/bin/bash",
             "# Every run of the plan with plain mpirun, one after another: for machines without a",
             "# scheduler (add a --hostfile to the lines for several nodes). Generated by scaling-study plan.",
             "set -u", "status=0"]
    for p in all_points:
        # mpirun itself sees the exports too (e.g. OMPI_ALLOW_RUN_AS_ROOT given with --env).
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in p["env"].items())
        local.append(f"# {p['name']}: P={p['ranks']} m={p['m']} n={p['n']} k={p['k']}")
        for r in p["runs"]:
            local.append(f"env {exports} {quote(p['mpirun_prefix'] + r['argv'])} || status=1")
    local += ["exit $status", ""]
    write(os.path.join(out, "run-local.sh"), "\n".join(local), 0o755)
    write(os.path.join(out, "submit.sh"), "\n".join([
        "#!/bin/bash",
        "# Submits every job of the plan; prints and appends '<job id> <script>' to submitted.txt.",
        "set -euo pipefail",
        'cd "$(dirname "$0")"',
        "for s in jobs/*.sbatch; do",
        '  id=$(sbatch --parsable "$@" "$s")',
        '  echo "${id%%;*} $s" | tee -a submitted.txt',
        "done", ""]), 0o755)

    print(f"scaling-study plan: {sum(len(s['points']) for s in plan['sweeps'].values())} job scripts in {jobs_dir}")
    for sweep in sweeps:
        s = plan["sweeps"][sweep]
        print(f"  {sweep}: {s['growth']}; P = {', '.join(str(p['ranks']) for p in s['points'])}")
        for p in s["points"]:
            print(f"    {p['name']}: P={p['ranks']} m={p['m']} n={p['n']} k={p['k']} "
                  f"({len(p['runs'])} run(s), work per rank {p['work_per_rank']:.4g} multiply-adds)")
    print(f"submit:  {os.path.join(out, 'submit.sh')}   (sbatch every job; records go to {records_dir})")
    print(f"collect: scripts/scaling-study collect {out}")
    print("without a scheduler, the same runs with mpirun (also in run-local.sh):")
    for sweep in sweeps:
        for p in plan["sweeps"][sweep]["points"]:
            for r in p["runs"]:
                print(quote(p["mpirun_prefix"] + r["argv"]))
