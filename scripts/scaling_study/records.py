"""Run records into flat rows: cuboid's JSON records (record_version 1 and 2, one per run) and the
pdgemm driver's (bench/pdgemm, "program": "pdgemm"), read leniently: a field a record does not
carry is None, never an error, so records from older and newer builds can be collected together.
"""
import glob
import json
import os

from . import model

PLAN_FORMAT = "cuboid scaling plan 1"
KNOWN_RECORD_VERSIONS = (1, 2)


def dig(j, *path, default=None):
    """j[path[0]][path[1]]..., or default where any step is missing."""
    for key in path:
        if isinstance(j, dict) and key in j:
            j = j[key]
        elif isinstance(j, list) and isinstance(key, int) and -len(j) <= key < len(j):
            j = j[key]
        else:
            return default
    return j


def first(j, *paths):
    """The first of several places a field may live (names differ across record versions)."""
    for p in paths:
        v = dig(j, *p)
        if v is not None:
            return v
    return None


def layout_name(text):
    """mpi.layout as a short name: "block-cyclic" or "aligned" (version 1 wrote a sentence)."""
    if text is None:
        return None
    t = str(text).lower()
    if "aligned" in t:
        return "aligned"
    if "block-cyclic" in t or "block cyclic" in t:
        return "block-cyclic"
    return str(text)


def chosen_algorithm(j):
    """The algorithm `partition.algorithm = "auto"` picked, wherever the record puts it."""
    v = first(j, ("partition", "chosen"), ("partition", "algorithm_chosen"), ("partition", "selected"),
              ("partition", "auto", "chosen"), ("partition", "candidate"))
    if isinstance(v, dict):
        v = v.get("algorithm") or v.get("name")
    return v


def speed_source(j):
    sources = {p.get("speed_source") for p in j.get("processors", []) if isinstance(p, dict)}
    sources.discard(None)
    if not sources:
        return None
    return sources.pop() if len(sources) == 1 else "mixed"


def build_summary(j):
    b = j.get("build")
    if isinstance(b, str):  # version 1
        return b
    if not isinstance(b, dict):
        return None
    k = b.get("kokkos", {})
    tpls = "+".join(b.get("kokkos_kernels_tpls", [])) or "no TPL"
    return f"{b.get('compiler')} {b.get('build_type')}, Kokkos {k.get('version')} {k.get('default_space')}, {tpls}"


def summa(m, n, k, nb, grid, elem):
    if None in (m, n, k, nb, elem) or not grid:
        return None, None
    per_rank = model.summa_bytes_per_rank(m, n, k, nb, grid, elem)
    return max(per_rank), sum(per_rank) / len(per_rank)


def cuboid_row(j):
    p = j.get("problem", {})
    m, n, k, tile = p.get("m"), p.get("n"), p.get("k"), p.get("tile")
    precision = p.get("precision")
    elem = {"double": 8, "float": 4}.get(precision)
    ranks_list = j.get("ranks") if isinstance(j.get("ranks"), list) else []
    ranks = first(j, ("execution", "ranks"), ("mpi", "ranks")) or (len(ranks_list) or 1)
    hosts = dig(j, "execution", "hosts")
    if hosts is None:
        seen = []
        for r in ranks_list:
            if r.get("host") not in seen:
                seen.append(r.get("host"))
        hosts = seen or ([j["host"]] if j.get("host") else [])
    nodes = dig(j, "execution", "nodes") or len(hosts) or None
    grid = dig(j, "mpi", "grid") or list(model.near_square_grid(int(ranks)))
    block = dig(j, "mpi", "block") or tile
    summa_max, summa_mean = summa(m, n, k, block, grid, elem)
    c = j.get("communication", {})
    phases = j.get("phases", {})
    deck = j.get("deck")
    validation = j.get("validation", {})
    git = dig(j, "build", "git") or {}
    return {
        "program": "cuboid",
        "record_version": j.get("record_version", 1),
        "sweep": dig(j, "study", "sweep"),
        "point": dig(j, "study", "point"),
        "algorithm": dig(j, "partition", "algorithm"),
        "algorithm_chosen": chosen_algorithm(j),
        "layout": layout_name(dig(j, "mpi", "layout")),
        "precision": precision,
        "m": m, "n": n, "k": k, "tile": tile, "block": block,
        "grid": "x".join(str(g) for g in grid),
        "deck": deck.get("path") if isinstance(deck, dict) else deck,
        "deck_sha256": deck.get("sha256") if isinstance(deck, dict) else None,
        "ranks": ranks,
        "nodes": nodes,
        "ranks_per_node": dig(j, "execution", "ranks_per_node") or (ranks if nodes == 1 else None),
        "threads_per_rank": first(j, ("execution", "threads_per_rank"), ("processors", 0, "threads")),
        "hosts": ";".join(str(h) for h in hosts),
        "launcher": dig(j, "execution", "launcher"),
        "scheduler": dig(j, "job", "scheduler"),
        "job_id": dig(j, "job", "id"),
        "requested_nodes": dig(j, "study", "nodes"),
        "requested_ranks_per_node": dig(j, "study", "ranks_per_node"),
        "requested_threads": dig(j, "study", "threads"),
        "git_commit": git.get("commit"),
        "git_describe": git.get("describe"),
        "git_dirty": git.get("dirty"),
        "build": build_summary(j),
        "written_at": j.get("written_at"),
        "median_s": dig(j, "timing", "median_s"),
        "min_s": dig(j, "timing", "min_s"),
        "max_s": dig(j, "timing", "max_s"),
        "repetitions": dig(j, "timing", "repetitions"),
        "gflops": j.get("gflops"),
        "exchange_max_s": dig(phases, "exchange_s", "max"),
        "compute_max_s": dig(phases, "compute_s", "max"),
        "reduce_max_s": dig(phases, "reduce_s", "max"),
        "model_compute_s": dig(j, "model", "compute_s"),
        "speed_source": speed_source(j),
        "bytes_per_rank_max": c.get("bytes_per_rank_max", 0.0 if ranks == 1 else None),
        "bytes_per_rank_mean": c.get("bytes_per_rank_mean", 0.0 if ranks == 1 else None),
        "model_bytes_per_rank_max": c.get("model_bytes_per_rank_max", 0.0 if ranks == 1 else None),
        # What MPI itself moved, where the record has it (next to cuboid's own count).
        "mpi_bytes_per_rank_max": first(c, ("mpi_bytes_per_rank_max",), ("measured_mpi_bytes_per_rank_max",),
                                        ("mpi", "bytes_per_rank_max")),
        "lower_bound_bytes_per_rank": c.get("lower_bound_bytes_per_rank") or (
            model.cosma_bound_bytes(m, n, k, ranks, elem) if None not in (m, n, k, elem) else None),
        "shape_bound_bytes_per_rank": c.get("shape_bound_bytes_per_rank"),
        "moved_bound_bytes_per_rank": c.get("moved_bound_bytes_per_rank") or (
            model.moved_bound_bytes(m, n, k, ranks, elem) if None not in (m, n, k, elem) else None),
        "summa_bytes_per_rank_max": summa_max,
        "summa_bytes_per_rank_mean": summa_mean,
        "validated": bool(validation.get("performed")) and bool(validation.get("passed")),
        "validation": ("passed" if validation.get("passed") else "FAILED") if validation.get("performed")
        else "not performed",
        "validation_method": validation.get("method"),
    }


def pdgemm_row(j):
    m, n, k, nb = j.get("m"), j.get("n"), j.get("k"), j.get("block")
    ranks = j.get("ranks") or 1
    grid = j.get("grid") or list(model.near_square_grid(int(ranks)))
    summa_max, summa_mean = summa(m, n, k, nb, grid, 8)
    validation = j.get("validation", {})
    return {
        "program": "pdgemm", "record_version": None, "sweep": None, "point": None,
        "algorithm": "pdgemm", "algorithm_chosen": None, "layout": "block-cyclic", "precision": "double",
        "m": m, "n": n, "k": k, "tile": None, "block": nb, "grid": "x".join(str(g) for g in grid),
        "ranks": ranks, "threads_per_rank": j.get("threads_per_rank"),
        "median_s": j.get("median_s"), "min_s": j.get("min_s"), "max_s": j.get("max_s"),
        "gflops": j.get("gflops"), "blas": j.get("blas"),
        "bytes_per_rank_max": dig(j, "bytes", "per_rank_max"),
        "lower_bound_bytes_per_rank": model.cosma_bound_bytes(m, n, k, ranks, 8) if None not in (m, n, k) else None,
        "moved_bound_bytes_per_rank": model.moved_bound_bytes(m, n, k, ranks, 8) if None not in (m, n, k) else None,
        "summa_bytes_per_rank_max": summa_max, "summa_bytes_per_rank_mean": summa_mean,
        "validated": bool(validation.get("performed")) and bool(validation.get("passed")),
        "validation": ("passed" if validation.get("passed") else "FAILED") if validation.get("performed")
        else "not performed",
    }


def load(paths):
    """Every JSON file under `paths` (files or folders, recursively). Returns (rows, plans, notes):
    rows as above with "file" added, the plans (scripts/scaling-study plan) found, and one note per
    file that is neither."""
    files = []
    for p in paths:
        if os.path.isdir(p):
            files += glob.glob(os.path.join(p, "**", "*.json"), recursive=True)
        else:
            files.append(p)
    rows, plans, notes = [], [], []
    for f in sorted(set(files)):
        try:
            with open(f) as fh:
                j = json.load(fh)
        except (OSError, ValueError) as e:
            notes.append(f"{f}: not a JSON record ({e})")
            continue
        if not isinstance(j, dict):
            notes.append(f"{f}: not a JSON record")
            continue
        if j.get("format") == PLAN_FORMAT:
            j["_file"] = f
            plans.append(j)
            continue
        fmt = str(j.get("format", ""))
        if fmt.startswith("cuboid run record") or "record_version" in j:
            version = j.get("record_version", 1)
            if version not in KNOWN_RECORD_VERSIONS:
                notes.append(f"{f}: record_version {version} is newer than this script knows "
                             f"({', '.join(map(str, KNOWN_RECORD_VERSIONS))}); read as far as it goes")
            row = cuboid_row(j)
        elif j.get("program") == "pdgemm":
            row = pdgemm_row(j)
        else:
            notes.append(f"{f}: not a run record (format {fmt or 'unknown'}); skipped")
            continue
        row["file"] = os.path.relpath(f)
        rows.append(row)
    return rows, plans, notes
