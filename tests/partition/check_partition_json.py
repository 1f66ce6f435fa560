#!/usr/bin/env python3
"""Independent check of `cuboid partition --json` output.

Recomputes, from the pieces alone, that the processors' pieces tile [0,M)x[0,N)x[0,K) exactly
(each cell once), each processor's volume, and its Hs as the number of distinct cells of its
three projections; compares them with the numbers the JSON reports, and the totals.
Usage: check_partition_json.py FILE.json [FILE.json ...]   (exit status 1 on any mismatch)
"""
import json
import sys


def check(path):
    with open(path) as f:
        doc = json.load(f)
    m, n, k = doc["dims"]
    owner = {}
    errors = []
    hs_total = 0.0
    for proc in doc["processors"]:
        pid = proc["id"]
        volume = 0
        pa, pb, pc = set(), set(), set()
        for x0, x1, y0, y1, z0, z1 in proc["pieces"]:
            if not (0 <= x0 < x1 <= m and 0 <= y0 < y1 <= n and 0 <= z0 < z1 <= k):
                errors.append(f"processor {pid}: piece {[x0, x1, y0, y1, z0, z1]} outside")
                continue
            volume += (x1 - x0) * (y1 - y0) * (z1 - z0)
            for i in range(x0, x1):
                for j in range(y0, y1):
                    pc.add((i, j))
                    for l in range(z0, z1):
                        if (i, j, l) in owner:
                            errors.append(f"cell {(i, j, l)} in {owner[(i, j, l)]} and {pid}")
                        owner[(i, j, l)] = pid
            for i in range(x0, x1):
                for l in range(z0, z1):
                    pa.add((i, l))
            for l in range(z0, z1):
                for j in range(y0, y1):
                    pb.add((l, j))
        hs = len(pa) + len(pb) + len(pc)
        hs_total += hs
        if volume != proc["volume"]:
            errors.append(f"processor {pid}: volume {volume} but JSON says {proc['volume']}")
        if hs != proc["hs"]:
            errors.append(f"processor {pid}: Hs {hs} but JSON says {proc['hs']}")
    if len(owner) != m * n * k:
        errors.append(f"{m * n * k - len(owner)} cells not covered")
    if abs(hs_total - doc["hs_total"]) > 1e-9 * max(1.0, hs_total):
        errors.append(f"Hs total {hs_total} but JSON says {doc['hs_total']}")
    bound = sum(p["lower_bound"] for p in doc["processors"])
    if abs(doc["ratio"] - hs_total / bound) > 1e-9:
        errors.append(f"ratio {doc['ratio']} is not Hs total / bound total {hs_total / bound}")
    for e in errors[:20]:
        print(f"{path}: {e}")
    return not errors


if __name__ == "__main__":
    ok = all([check(p) for p in sys.argv[1:]])
    print("ok" if ok else "MISMATCH")
    sys.exit(0 if ok else 1)
