"""`scaling-study simulate`: the traffic and time model (`cuboid simulate`) over P, shapes, speeds
and algorithms, without MPI or GEMM: CSV, Markdown and the plots `collect` draws."""
import concurrent.futures as cf
import json
import os
import subprocess
import tempfile

from . import model, plots, tables

# m, n, k, tile: each has at least 2^18 tile tasks so 4096 ranks get ~64+ tasks each.
SHAPES = {
    "square": (32768, 32768, 32768, 256),
    "largeK": (4096, 4096, 524288, 256),
    "flat": (131072, 131072, 1024, 256),
}
ALGORITHMS = ["nrrp3d", "nrrp3d-2mode", "grid", "nrrp2d", "column", "slab"]


def simulate_one(args, shape, speeds_name, speeds, algorithm, P):
    m, n, k, tile = SHAPES[shape]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "sim.json")
        cmd = [args.cuboid, "simulate", args.deck, "--ranks", str(P),
               "--set", f"problem.m={m}", "--set", f"problem.n={n}", "--set", f"problem.k={k}",
               "--set", f"problem.tile={tile}", "--set", f"partition.algorithm={algorithm}",
               "--set", f"partition.discretization={args.discretization}",
               "--rank-gflops", str(args.rank_gflops), "--bandwidth-gbs", str(args.bandwidth_gbs), "--json", out]
        if speeds:
            cmd += ["--speeds", speeds]
        row = {"shape": shape, "m": m, "n": n, "k": k, "tile": tile, "speeds": speeds_name, "algorithm": algorithm,
               "P": P, "discretization": args.discretization}
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            row["status"] = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit {r.returncode}"
            return row
        with open(out) as f:
            j = json.load(f)
    c, mo = j["communication"], j["model"]
    elem = 8 if j["problem"]["precision"] == "double" else 4
    summa = model.summa_bytes_per_rank(m, n, k, j.get("block", tile), j.get("grid") or model.near_square_grid(P),
                                       elem)
    row.update(status="ok", bytes_per_rank_max=c["bytes_per_rank_max"], bytes_per_rank_mean=c["bytes_per_rank_mean"],
               lower_bound_bytes_per_rank=c["lower_bound_bytes_per_rank"],
               moved_bound_bytes_per_rank=c["moved_bound_bytes_per_rank"],
               shape_bound_bytes_per_rank=c["shape_bound_bytes_per_rank"],
               summa_bytes_per_rank_max=max(summa),
               max_over_bound=c["max_over_lower_bound"],
               max_over_shape_bound=c["bytes_per_rank_max"] / c["shape_bound_bytes_per_rank"],
               footprint_over_bound=c["footprint_max_over_lower_bound"],
               worst_rank_over_own_bound=c["worst_rank_over_own_bound"], imbalance=j["partition"]["imbalance"],
               partition_s=j["partition"]["seconds"], time_s=mo["time_s"], gflops=mo["gflops"],
               rank_gflops=mo["rank_gflops"], bandwidth_gbs=mo["bandwidth_gbs"])
    return row


def markdown(rows, args, speeds_sets):
    lines = []
    for shape in args.shapes:
        m, n, k, tile = SHAPES[shape]
        for sname, _ in speeds_sets:
            lines += [f"#### {shape} (m={m} n={n} k={k}, tile {tile}), {sname} speeds, {args.discretization}", "",
                      "Cells: bytes per rank (max) / 3(mnk/P)^(2/3), then the worst rank / the shape-aware bound "
                      "of its own volume; pdgemm (SUMMA) / 3(mnk/P)^(2/3) in the last row.", ""]
            body = []
            for a in args.algorithms:
                cells = [a]
                for p in args.ranks:
                    r = next((x for x in rows if x["shape"] == shape and x["speeds"] == sname
                              and x["algorithm"] == a and x["P"] == p), None)
                    cells.append("n/a" if r is None or r["status"] != "ok"
                                 else f"{r['max_over_bound']:.2f} / {r['worst_rank_over_own_bound']:.2f}")
                body.append(cells)
            summa = ["pdgemm (SUMMA)"]
            for p in args.ranks:
                r = next((x for x in rows if x["shape"] == shape and x["speeds"] == sname and x["P"] == p
                          and x["status"] == "ok"), None)
                summa.append("n/a" if r is None else
                             f"{r['summa_bytes_per_rank_max'] / r['lower_bound_bytes_per_rank']:.2f}")
            body.append(summa)
            lines += [tables.markdown_table(["algorithm"] + [f"P={p}" for p in args.ranks], body), ""]
    return "\n".join(lines)


def run(args):
    for s in args.shapes:
        if s not in SHAPES:
            raise SystemExit(f"scaling-study simulate: unknown shape {s}; known: {', '.join(SHAPES)}")
    if not os.access(args.cuboid, os.X_OK):
        raise SystemExit(f"scaling-study simulate: {args.cuboid} is not built (cmake --build build --target cuboid)")
    os.makedirs(args.out, exist_ok=True)
    speeds_sets = [("equal", ""), (f"heterogeneous {args.hetero_speeds}", args.hetero_speeds)]
    jobs = [(s, sn, sp, a, p) for s in args.shapes for sn, sp in speeds_sets for a in args.algorithms
            for p in args.ranks]
    with cf.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        rows = list(pool.map(lambda j: simulate_one(args, *j), jobs))
    tables.write_csv(os.path.join(args.out, "simulated.csv"), rows)
    written = []
    for s in args.shapes:
        m, n, k, tile = SHAPES[s]
        for sn, _ in speeds_sets:
            sel = [r for r in rows if r["shape"] == s and r["speeds"] == sn and r["status"] == "ok"]
            series = {}
            for a in args.algorithms:
                pts = sorted((r for r in sel if r["algorithm"] == a), key=lambda r: r["P"])
                base = pts[0] if pts else None
                series[a] = [{"P": r["P"], "model_time_s": r["time_s"], "model_gflops": r["gflops"],
                              "model_efficiency": (r["gflops"] / r["P"]) / (base["gflops"] / base["P"]),
                              "model_bytes_max": r["bytes_per_rank_max"]} for r in pts]
            refs = {r["P"]: {"P": r["P"], "bound_bytes": r["moved_bound_bytes_per_rank"],
                             "summa_bytes": r["summa_bytes_per_rank_max"]} for r in sel}
            title = (f"{s} m={m} n={n} k={k} (tile {tile}), {sn} speeds, {args.discretization}: model only")
            notes = [f"time model: {args.rank_gflops:g} GFLOP/s per rank of mean speed, {args.bandwidth_gbs:g} GB/s "
                     "per rank, no overlap"]
            written += plots.scaling_figure(series, list(refs.values()), title,
                                            os.path.join(args.out, f"{s}-{sn.split()[0]}"), formats=args.formats,
                                            kind="strong", notes=notes)
    with open(os.path.join(args.out, "table.md"), "w") as f:
        f.write(markdown(rows, args, speeds_sets) + "\n")
    failed = [r for r in rows if r["status"] != "ok"]
    print(f"scaling-study simulate: {len(rows)} simulations ({len(failed)} not possible), results in {args.out}: "
          f"simulated.csv, table.md, {len(written)} plot file(s)")
