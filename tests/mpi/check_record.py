#!/usr/bin/env python3
"""Checks the JSON record of a distributed `cuboid run` (tests/mpi/run_mpi.sh)."""
import argparse
import json
import math
import re
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("record")
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--idle", type=int, default=0, help="ranks expected to have no work")
    ap.add_argument("--max-ratio", type=float, help="bytes_per_rank_max / lower bound at most this")
    ap.add_argument("--full", action="store_true", help="the element-wise check must have run")
    ap.add_argument("--no-full", action="store_true",
                    help="the full check must not have run, and the record must say what is missed")
    ap.add_argument("--chosen", help="the rank partition must be this candidate (prefix)")
    ap.add_argument("--layout", choices=["block-cyclic", "aligned"], default="block-cyclic")
    ap.add_argument("--in-place", action="store_true", help="every rank writes C in place")
    ap.add_argument("--proportional", action="store_true",
                    help="each rank's tasks match its speed share to one tile column")
    ap.add_argument("--stolen", action="store_true",
                    help="some processor ran steps stolen from another's queue")
    ap.add_argument("--metered-within", type=float,
                    help="each rank's metered peak within this fraction of its predicted peak")
    ap.add_argument("--ops", help="op(A) and op(B) the record must name, e.g. TC")
    ap.add_argument("--streamed", action="store_true",
                    help="k was streamed to fit the memory limit, and every rank's metered peak fits it")
    ap.add_argument("--dry-run", metavar="DRY_RUN_TEXT",
                    help="the output of `cuboid run --dry-run` of the same problem: it chose the same "
                         "rank partition, predicted the bytes the run received, and made nothing")
    ap.add_argument("--simulate", metavar="SIMULATE_JSON",
                    help="`cuboid simulate`'s record of the same problem: same ops, same choice, "
                         "and its predicted bytes per rank are what the run measured")
    a = ap.parse_args()
    j = json.load(open(a.record))
    errors = []

    def expect(cond, msg):
        if not cond:
            errors.append(msg)

    if a.dry_run:
        text = open(a.dry_run).read()
        chosen = re.search(r"^rank part\. (.*) \((auto|given)", text, re.M)
        traffic = re.search(r"^traffic +received per rank: (\S+) B at most", text, re.M)
        expect(chosen and chosen.group(1) == j["rank_partition"]["chosen"],
               f"the dry run chose {chosen and chosen.group(1)}, the run {j['rank_partition']['chosen']}")
        got = j["communication"]["bytes_per_rank_max"]
        expect(traffic and math.isclose(float(traffic.group(1)), got, rel_tol=1e-3, abs_tol=1e-9),
               f"the dry run predicted {traffic and traffic.group(1)} B per rank at most, the run received {got}")
        expect(re.search(r"^(rate|validation|time) ", text, re.M) is None,
               "the dry run printed something that looks like a result")
    if a.ops:
        got = j["problem"]["trans_a"] + j["problem"]["trans_b"]
        expect(got == a.ops, f"the record's op(A) op(B) are {got}, not {a.ops}")
    if a.simulate:
        s = json.load(open(a.simulate))
        for key in ("trans_a", "trans_b"):
            expect(s["problem"].get(key) == j["problem"][key],
                   f"simulate's {key} {s['problem'].get(key)} != the run's {j['problem'][key]}")
        expect(s["partition"]["chosen"] == j["rank_partition"]["chosen"],
               f"simulate chose {s['partition']['chosen']}, the run {j['rank_partition']['chosen']}")
        for key in ("max", "mean"):
            sim, got = s["communication"][f"bytes_per_rank_{key}"], j["communication"][f"bytes_per_rank_{key}"]
            expect(math.isclose(sim, got, rel_tol=1e-12, abs_tol=1e-9),
                   f"simulate predicts {sim} B per rank ({key}), the run measured {got}")

    v = j["validation"]
    expect(v["performed"] and v["passed"], f"validation did not pass: {v}")
    full = v.get("full", {})
    if a.full:
        expect(full.get("performed") and full.get("passed"),
               "the full element-wise check did not run or pass")
        # Every element of C checked once, by its owner.
        expect(full.get("elements") == j["problem"]["m"] * j["problem"]["n"],
               f"the full check saw {full.get('elements')} elements, not m*n")
        expect("full:" in v["method"], f"validation.method does not name the full check: {v['method']}")
    if a.no_full:
        expect(full.get("performed") is False and "mpi.full_check_max" in full.get("misses", ""),
               f"validation.full should say the full check did not run and why: {full}")
        expect("full:" not in v["method"], f"validation.method names a full check: {v['method']}")
    ranks = j["ranks"]
    expect(len(ranks) == a.ranks and j["mpi"]["ranks"] == a.ranks, "wrong number of ranks")
    expect(j["gflops"] > 0, "no rate")

    # Measured traffic is exactly what the model predicts, and every byte sent is received.
    c = j["communication"]
    for key in ("max", "mean"):
        m, p = c[f"bytes_per_rank_{key}"], c[f"model_bytes_per_rank_{key}"]
        expect(math.isclose(m, p, rel_tol=1e-12, abs_tol=1e-9), f"measured {key} {m} != model {p}")
    for cat in "abc":
        sent = sum(r["bytes"][f"{cat}_sent"] for r in ranks)
        recv = sum(r["bytes"][f"{cat}_recv"] for r in ranks)
        expect(sent == recv, f"{cat.upper()}: {sent} bytes sent but {recv} received")
    # What MPI delivered (MPI_Get_count of every receive) is what the exchange counted and what
    # the model predicted, rank by rank.
    for r in ranks:
        b = r["bytes"]
        counted = b["a_recv"] + b["b_recv"] + b["c_recv"]
        expect(b["recv_mpi"] == counted == b["model_recv"],
               f"rank {r['rank']}: MPI delivered {b['recv_mpi']} B, counted {counted}, model {b['model_recv']}")
    expect(c["model_agrees_with_mpi"], "the record says MPI and the model disagree")
    # One set of workers (one engine) per rank for the whole run, whatever the pieces.
    for r in ranks:
        expect(r["engines_created"] == 1, f"rank {r['rank']} created {r['engines_created']} engines")
    expect(j["mpi"]["layout"] == a.layout, f"layout {j['mpi']['layout']}, expected {a.layout}")
    rp = j["rank_partition"]
    # The best scored among those whose predicted peak fits the memory limit.
    fitting = [c for c in rp["candidates"] if c.get("fits", True)]
    expect(fitting and rp["chosen"] == fitting[0]["name"], "the chosen candidate is not the best scored that fits")
    if a.chosen:
        expect(rp["chosen"].startswith(a.chosen), f"chose {rp['chosen']}, expected {a.chosen}")
    if a.in_place:
        expect(all(r["in_place"]["c"] for r in ranks), "some rank did not write C in place")
    expect(c["bytes_per_rank_max"] <= c["footprint_bytes_per_rank_max"] + 1e-9,
           "a rank moved more than its zone touches")
    expect(c["lower_bound_bytes_per_rank"] > 0, "no lower bound")
    if a.ranks == 1:
        expect(c["bytes_per_rank_max"] == 0, "one rank should move nothing")

    # Every processor's steps, its own and stolen ones, add up to the rank's: nothing lost or
    # run twice by stealing.
    for r in ranks:
        stolen = sum(p["done"]["stolen_steps"] for p in r["processors"])
        lost = sum(p["done"]["lost_steps"] for p in r["processors"])
        expect(stolen == lost, f"rank {r['rank']}: {stolen} steps stolen but {lost} taken")
    # A steal's victim is another processor of the thief's own rank.
    for p in j["processors"]:
        for steal in p.get("steals", []):
            victim = steal["victim"]
            rank = p["name"].split(":")[0]
            expect(isinstance(victim, str) and victim.split(":")[0] == rank and victim != p["name"],
                   f"{p['name']} stole from {victim}, not another processor of its rank")
    if a.stolen:
        expect(any(p["done"]["stolen_steps"] > 0 for r in ranks for p in r["processors"]),
               "nothing was stolen")

    # The metered memory: the program counts every block it holds, validation adds to it.
    for r in ranks:
        m = r["memory"]
        expect(m["allocated_peak_bytes"] >= m["local_blocks_bytes"] > 0 or m["local_blocks_bytes"] == 0,
               f"rank {r['rank']}: metered peak {m['allocated_peak_bytes']} below its blocks {m['local_blocks_bytes']}")
        expect(m["validation_peak_bytes"] >= m["allocated_peak_bytes"] > 0,
               f"rank {r['rank']}: metered peaks {m['allocated_peak_bytes']}, {m['validation_peak_bytes']}")
        expect(m["peak_resident_bytes"] >= m["baseline_bytes"] > 0,
               f"rank {r['rank']}: resident {m['baseline_bytes']} at the start, {m['peak_resident_bytes']} at peak")
        if a.metered_within is not None:
            ratio = m["allocated_peak_bytes"] / m["predicted_peak_bytes"]
            expect(abs(ratio - 1) <= a.metered_within,
                   f"rank {r['rank']}: metered peak / predicted = {ratio:.3f}")

    if a.streamed:
        expect(rp["receive_window"] == 1, f"receives posted {rp['receive_window']} stages ahead, not 1")
        # The bound with finite memory is never below the one with unlimited memory.
        at_limit = c.get("moved_bound_at_limit_bytes_per_rank", 0)
        expect(at_limit >= c["moved_bound_bytes_per_rank"] > 0,
               f"bound at the limit {at_limit}, without one {c['moved_bound_bytes_per_rank']}")
        expect(j["mpi"]["slabs_per_box"] > 4, f"k in {j['mpi']['slabs_per_box']} slabs, not finer than 4")
        for r in ranks:
            m = r["memory"]
            expect(0 < m["allocated_peak_bytes"] <= m["limit_bytes"],
                   f"rank {r['rank']}: metered peak {m['allocated_peak_bytes']} over the limit {m['limit_bytes']}")
            # The check's blocks are cut to what the limit leaves once the product's buffers are freed.
            expect(m["validation_peak_bytes"] <= m["limit_bytes"],
                   f"rank {r['rank']}: validation's metered peak {m['validation_peak_bytes']} over the limit")

    idle = [r for r in ranks if r["tasks"] == 0]
    expect(len(idle) == a.idle and j["mpi"]["idle_ranks"] == a.idle,
           f"{len(idle)} ranks without work, expected {a.idle}")
    for r in idle:
        b = r["bytes"]
        expect(b["a_recv"] == 0 and b["b_recv"] == 0 and b["c_sent"] == 0,
               f"rank {r['rank']} has no work but received inputs or sent partials")

    if a.max_ratio is not None:
        ratio = c["bytes_per_rank_max"] / c["lower_bound_bytes_per_rank"]
        expect(ratio <= a.max_ratio, f"bytes per rank max / lower bound = {ratio:.3f} > {a.max_ratio}")

    if a.proportional:
        p = j["problem"]
        t = p["tile"]
        tiles = [math.ceil(p[d] / t) for d in "mnk"]
        total = tiles[0] * tiles[1] * tiles[2]
        speed = sum(r["speed_gflops"] for r in ranks)
        for r in ranks:
            target = r["speed_gflops"] / speed * total
            expect(abs(r["tasks"] - target) <= tiles[2],
                   f"rank {r['rank']}: {r['tasks']} tasks for a target of {target:.1f}")

    phases = j["phases"]
    for key in ("calibrate_s", "partition_s", "exchange_s", "compute_s", "reduce_s"):
        s = phases[key]
        expect(s["min"] <= s["mean"] <= s["max"] + 1e-15, f"phase {key} min/mean/max out of order")

    if errors:
        print("FAILED:\n  " + "\n  ".join(errors))
        return 1
    print(f"ok: {a.ranks} ranks, {c['bytes_per_rank_max']:.4g} B per rank max "
          f"({c['bytes_per_rank_max'] / c['lower_bound_bytes_per_rank']:.3f} x bound), validation passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
