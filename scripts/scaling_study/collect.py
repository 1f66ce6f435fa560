"""`scaling-study collect DIR...`: the records of a study into one CSV, Markdown tables and plots,
with the checks a reader needs before trusting them (validation, one build, the placement that
was asked for, model bytes = measured bytes, no missing run)."""
import collections
import os

from . import records, tables


def series_label(row, varying):
    if row["program"] == "pdgemm":
        return "pdgemm (ScaLAPACK)"
    label = row.get("algorithm") or "deck"
    if row.get("algorithm_chosen") and row["algorithm_chosen"] != label:
        label += f" -> {row['algorithm_chosen']}"
    for key, fmt_ in (("layout", "{}"), ("threads_per_rank", "{} thr/rank"), ("precision", "{}"),
                      ("launcher", "{}")):
        if key in varying and row.get(key) is not None:
            label += ", " + fmt_.format(row[key])
    return label


def attach_plans(rows, plans):
    """Sweep, point and the placement asked for, from the plan, for records that lack them (the
    pdgemm driver's records, or cuboid's from before record_version 2). Returns the planned runs
    that left no record."""
    by_file, planned = {}, []
    for plan in plans:
        for sweep, s in plan.get("sweeps", {}).items():
            for p in s.get("points", []):
                for r in p.get("runs", []):
                    by_file[os.path.realpath(r["record"])] = p
                    planned.append((p, r))
    seen = set()
    for row in rows:
        path = os.path.realpath(row["file"])
        seen.add(path)
        p = by_file.get(path)
        if p is None:
            continue
        row["sweep"] = row.get("sweep") or p["sweep"]
        row["point"] = row.get("point") or p["name"]
        row.setdefault("requested_nodes", None)
        for key, src in (("requested_nodes", "nodes"), ("requested_ranks_per_node", "ranks_per_node"),
                         ("requested_threads", "threads")):
            if row.get(key) is None:
                row[key] = p[src]
        if row.get("nodes") is None:
            row["nodes"] = p["nodes"]
            row["ranks_per_node"] = p["ranks_per_node"]
    return [(p, r) for p, r in planned if os.path.realpath(r["record"]) not in seen]


def pick(rows):
    """One row per (series, P): the run with the median time when a point ran several times."""
    rows = sorted(rows, key=lambda r: r.get("median_s") or float("inf"))
    chosen = dict(rows[(len(rows) - 1) // 2])
    chosen["runs"] = len(rows)
    return chosen


def derive(points, bandwidth_gbs):
    """Efficiency against the smallest P of the series, the time model with its bandwidth."""
    points.sort(key=lambda r: r["ranks"])
    for r in points:
        flops = 2.0 * r["m"] * r["n"] * r["k"] if None not in (r.get("m"), r.get("n"), r.get("k")) else None
        comp = r.get("model_compute_s") if r.get("speed_source") in ("measured", "cache") else None
        comm = r.get("model_bytes_per_rank_max")
        r["model_time_s"] = comp + comm / (bandwidth_gbs * 1e9) if comp is not None and comm is not None else None
        r["model_gflops"] = flops / r["model_time_s"] / 1e9 if flops and r["model_time_s"] else None
        ex = r.get("exchange_max_s")
        r["effective_gbs"] = (r["bytes_per_rank_max"] / ex / 1e9 if ex and r.get("bytes_per_rank_max")
                              else None)
        r["work_per_rank"] = flops / 2 / r["ranks"] if flops else None
    base = next((r for r in points if r.get("gflops")), None)
    mbase = next((r for r in points if r.get("model_gflops")), None)
    for r in points:
        r["efficiency"] = (r["gflops"] / r["ranks"]) / (base["gflops"] / base["ranks"]) \
            if base and r.get("gflops") else None
        r["model_efficiency"] = (r["model_gflops"] / r["ranks"]) / (mbase["model_gflops"] / mbase["ranks"]) \
            if mbase and r.get("model_gflops") else None
        r["work_vs_base"] = r["work_per_rank"] / points[0]["work_per_rank"] \
            if r.get("work_per_rank") and points[0].get("work_per_rank") else None


def checks(sweep, kind, series, all_rows):
    problems = []
    for label, pts in series.items():
        for r in pts:
            where = f"{sweep}/{label}/P={r['ranks']} ({r['file']})"
            if not r.get("validated"):
                problems.append(f"{where}: validation {r.get('validation')}")
            for want, got, what in (("requested_nodes", "nodes", "nodes"),
                                    ("requested_ranks_per_node", "ranks_per_node", "ranks per node"),
                                    ("requested_threads", "threads_per_rank", "threads per rank")):
                if r.get(want) is not None and r.get(got) is not None and int(r[want]) != int(r[got]):
                    problems.append(f"{where}: asked for {r[want]} {what}, ran with {r[got]}")
            b, mb = r.get("bytes_per_rank_max"), r.get("model_bytes_per_rank_max")
            if r["program"] == "cuboid" and b is not None and mb is not None and abs(b - mb) > 1e-6 * max(1, b):
                problems.append(f"{where}: measured bytes {r['bytes_per_rank_max']:.6g} differ from the model "
                                f"{r['model_bytes_per_rank_max']:.6g}")
            if r.get("runs", 1) > 1:
                problems.append(f"{where}: {r['runs']} records for this point; the one with the median time is shown")
        if kind == "strong" and all(p["program"] == "cuboid" for p in pts):
            hashes = {p.get("deck_sha256") for p in pts}
            problems += [f"{sweep}/{label}: the effective deck differs between ranks counts in a strong sweep "
                         f"({len(hashes)} deck hashes)"] if len(hashes) > 1 else []
        if kind == "strong":
            shapes = {(p.get("m"), p.get("n"), p.get("k")) for p in pts}
            if len(shapes) > 1:
                problems.append(f"{sweep}/{label}: a strong sweep with {len(shapes)} problem sizes")
    commits = {r.get("git_commit") for r in all_rows if r["program"] == "cuboid"}
    if len(commits) > 1:
        problems.append(f"{sweep}: records from {len(commits)} builds (git {', '.join(sorted(map(str, commits)))})")
    if any(r.get("git_dirty") for r in all_rows):
        problems.append(f"{sweep}: built from a tree with uncommitted changes (git describe "
                        f"{', '.join(sorted({str(r.get('git_describe')) for r in all_rows if r.get('git_dirty')}))})")
    return problems


def sweep_title(sweep, kind, rows, plan_sweep):
    r0 = rows[0]
    if kind == "weak":
        growth = plan_sweep.get("growth") if plan_sweep else "work per rank fixed"
        prob = f"weak scaling from m={r0['m']} n={r0['n']} k={r0['k']} at P={r0['ranks']} ({growth})"
    elif kind == "strong":
        prob = f"strong scaling, m={r0['m']} n={r0['n']} k={r0['k']}"
    else:
        prob = f"runs '{sweep}'"
    threads = sorted({r.get("threads_per_rank") for r in rows if r.get("threads_per_rank") is not None})
    nodes = sorted({h for r in rows for h in str(r.get("hosts") or "").split(";") if h})
    return (f"{prob}, {r0.get('precision')}, tile {r0.get('tile')}; "
            f"{'/'.join(map(str, threads)) or '?'} thread(s) per rank, {len(nodes)} host(s)")


def run(args):
    rows, plans, notes = records.load(args.dirs)
    missing = attach_plans(rows, plans)
    if not rows:
        raise SystemExit(f"scaling-study collect: no run records under {', '.join(args.dirs)}"
                         + ("".join(f"\n  {n}" for n in notes)))
    out = os.path.abspath(args.out or (args.dirs[0] if os.path.isdir(args.dirs[0]) else "."))
    os.makedirs(out, exist_ok=True)
    plan_sweeps = {name: s for p in plans for name, s in p.get("sweeps", {}).items()}

    for r in rows:
        r["sweep"] = r.get("sweep") or "runs"
    # A series is what stays the same along P: its label names only what differs within the sweep.
    for sweep in {r["sweep"] for r in rows}:
        srows = [r for r in rows if r["sweep"] == sweep]
        varying = {key for key in ("layout", "threads_per_rank", "precision", "launcher")
                   if len({r.get(key) for r in srows if r["program"] == "cuboid"}) > 1}
        for r in srows:
            r["series"] = series_label(r, varying)

    md = ["# Scaling study", "",
          f"Collected by `scripts/scaling-study collect` from {len(rows)} record(s). Times are the median "
          "over repetitions of the slowest rank; the model time is the slowest processor's flops at its measured "
          f"speed plus the busiest rank's bytes at {args.bandwidth_gbs:g} GB/s (no overlap); efficiency is the "
          "rate per rank over that of the smallest P of the series. Bytes are per rank, max over ranks: "
          "what cuboid received (A, B and partial C; its own blocks never travel), the model's, COSMA's lower bound 3(mnk/P)^(2/3) "
          "and what ScaLAPACK's pdgemm receives on the same grid and blocks (SUMMA).", ""]
    all_points, all_problems, written = [], [], []
    for sweep in sorted({r["sweep"] for r in rows}, key=lambda s: (s not in ("strong", "weak"), s)):
        srows = [r for r in rows if r["sweep"] == sweep]
        kind = sweep if sweep in ("strong", "weak") else None
        groups = collections.defaultdict(list)
        for r in srows:
            groups[(r["series"], r["ranks"])].append(r)
        series = collections.defaultdict(list)
        for (label, _), rs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1])):
            series[label].append(pick(rs))
        for pts in series.values():
            derive(pts, args.bandwidth_gbs)
            all_points += pts
        problems = checks(sweep, kind, series, srows)
        all_problems += problems
        title = sweep_title(sweep, kind, srows, plan_sweeps.get(sweep))
        md += [f"## {sweep}", "", title + ".", ""]
        header = ["series", "P", "nodes x ranks/node", "time [s]", "GFLOP/s", "efficiency", "model time [s]",
                  "bytes/rank", "model bytes", "MPI bytes", "lower bound", "pdgemm (SUMMA)", "validated"]
        if kind == "weak":
            header[3:3] = ["m x n x k", "work/rank vs P0"]
        body = []
        for label, pts in series.items():
            for r in pts:
                cells = [label, r["ranks"], f"{r.get('nodes') or '?'} x {r.get('ranks_per_node') or '?'}",
                         tables.fmt(r.get("median_s"), ".4g"), tables.fmt(r.get("gflops"), ".3g"),
                         tables.fmt(r.get("efficiency"), ".2f"), tables.fmt(r.get("model_time_s"), ".4g"),
                         tables.human_bytes(r.get("bytes_per_rank_max")),
                         tables.human_bytes(r.get("model_bytes_per_rank_max")),
                         tables.human_bytes(r.get("mpi_bytes_per_rank_max")),
                         tables.human_bytes(r.get("lower_bound_bytes_per_rank")),
                         tables.human_bytes(r.get("summa_bytes_per_rank_max")),
                         "yes" if r.get("validated") else f"**{r.get('validation')}**"]
                if kind == "weak":
                    cells[3:3] = [f"{r['m']} x {r['n']} x {r['k']}", tables.fmt(r.get("work_vs_base"), ".3f")]
                body.append(cells)
        md += [tables.markdown_table(header, body), ""]
        builds = sorted({f"{r.get('git_describe')} ({r.get('build')})" for r in srows if r["program"] == "cuboid"})
        jobs = sorted({f"{r.get('scheduler')} {r.get('job_id')}" for r in srows if r.get("job_id")})
        launchers = sorted({str(r.get("launcher")) for r in srows if r.get("launcher")})
        md += [f"Build: {'; '.join(builds) or 'n/a'}. Launcher: {', '.join(launchers) or 'n/a'}."
               + (f" Jobs: {', '.join(jobs)}." if jobs else ""), ""]
        if not args.no_plots:
            from . import plots  # matplotlib only when plotting
            plot_series = {label: [{"P": r["ranks"], "time_s": r.get("median_s"), "time_min_s": r.get("min_s"),
                                    "time_max_s": r.get("max_s"), "model_time_s": r.get("model_time_s"),
                                    "gflops": r.get("gflops"), "model_gflops": r.get("model_gflops"),
                                    "efficiency": r.get("efficiency"), "model_efficiency": r.get("model_efficiency"),
                                    "bytes_max": r.get("bytes_per_rank_max"),
                                    "model_bytes_max": r.get("model_bytes_per_rank_max"),
                                    "mpi_bytes_max": r.get("mpi_bytes_per_rank_max")} for r in pts]
                           for label, pts in series.items()}
            refs = {}
            for pts in series.values():
                for r in pts:
                    refs.setdefault(r["ranks"], {"P": r["ranks"], "bound_bytes": r.get("moved_bound_bytes_per_rank"),
                                                 "summa_bytes": r.get("summa_bytes_per_rank_max")})
            notes_ = [f"model time: measured speeds, {args.bandwidth_gbs:g} GB/s per rank, no overlap"]
            if not any(r.get("model_time_s") for pts in series.values() for r in pts):
                notes_ = ["no model time: the speeds were given in the deck, not measured"]
            files = plots.scaling_figure(plot_series, list(refs.values()), title, os.path.join(out, sweep),
                                         formats=args.formats, kind=kind, notes=notes_)
            written += files
            md += [f"![{sweep}]({os.path.basename(files[0])})", ""]
    md += ["## Checks", ""]
    for p, r in missing:
        all_problems.append(f"{p['name']}: no record {r['record']} ({r['program']} {r.get('algorithm') or ''}); "
                            f"see {p.get('script')} and its log under logs/")
    md += [f"- {p}" for p in all_problems] or ["- none: every run validated, ran where it was asked to, and "
                                                "moved the bytes the model predicts"]
    md += [f"- note: {n}" for n in notes]
    md.append("")
    with open(os.path.join(out, "tables.md"), "w") as f:
        f.write("\n".join(md))
    first = ["sweep", "series", "program", "algorithm", "ranks", "nodes", "ranks_per_node", "threads_per_rank",
             "m", "n", "k", "median_s", "gflops", "efficiency", "model_time_s", "bytes_per_rank_max",
             "model_bytes_per_rank_max", "lower_bound_bytes_per_rank", "summa_bytes_per_rank_max", "validated"]
    rows.sort(key=lambda r: (r["sweep"], r["series"], r["ranks"]))
    tables.write_csv(os.path.join(out, "records.csv"), rows, first)
    tables.write_csv(os.path.join(out, "points.csv"), all_points, first)
    print(f"scaling-study collect: {len(rows)} record(s) -> {out}/records.csv, points.csv, tables.md"
          + (", " + ", ".join(os.path.basename(w) for w in written) if written else ""))
    for p in all_problems:
        print(f"  check: {p}")
    for n in notes:
        print(f"  note: {n}")
    return 1 if args.strict and all_problems else 0
