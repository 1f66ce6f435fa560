#!/usr/bin/env python3
"""Timing mode: `cuboid run` with an emulated device whose GEMMs sleep for their flops at
platform.emulated_gflops. The run must finish, say that it was not validated, use the flops+link
model with the given rates, and each GEMM must have slept at least its flops at that rate (a
sleep never ends early, so the emulated processor's busy time is at least its flops / rate).

    timing_mode.py CUBOID DECK WORKDIR
"""
import json
import re
import os
import subprocess
import sys

cuboid, deck, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
record = os.path.join(work, "timing.json")
rate = 500.0  # GFLOP/s: well above the host's, so that the emulated device gets work
args = [cuboid, "run", deck, "--set", 'platform.processors=["host","emulated:0"]',
        "--set", "problem.m=512", "--set", "problem.n=384", "--set", "problem.k=640",
        "--set", "problem.tile=128", "--set", f"platform.emulated_gflops={rate}",
        "--set", "platform.emulated_link_gbs=8", "--set", "run.validate=false",
        "--set", "run.repetitions=1", "--set", "run.warmup=0", "--json", record]
out = subprocess.run(args, capture_output=True, text=True, timeout=240)
text = out.stdout + out.stderr
def fail(why):
    print(text)
    print("FAIL:", why)
    sys.exit(1)
if out.returncode != 0:
    fail(f"exit status {out.returncode}")
if "validation SKIPPED" not in text:
    fail("no 'validation SKIPPED' line")
# The GEMM rate is the setting; the link is measured as a run copies (straight from a registered
# matrix by default), so it can only come out at or under the emulated link's 8 GB/s.
m = re.search(r"emulated:0 in timing mode: GEMM 500 GFLOP/s \(given\), link ([0-9.]+) GB/s in, "
              r"([0-9.]+) GB/s out straight from a registered matrix at 8 GB/s", text)
if not m:
    fail("the model's GEMM rate was not the given one, or its link was not measured")
if not all(0 < float(g) <= 8 * 1.05 for g in m.groups()):
    fail(f"link {m.groups()} GB/s: above the emulated link's 8 GB/s")
r = json.load(open(record))
if r["model"]["speed_model"] != "flops+link":
    fail(f"speed model {r['model']['speed_model']}")
emulated = [p for p in r["processors"] if p["name"] == "emulated:0"][0]
need = emulated["flops"] / (rate * 1e9)
if emulated["flops"] <= 0:
    fail("the emulated processor got no work")
if emulated["busy_s"] < 0.999 * need:
    fail(f"busy {emulated['busy_s']} s < {need} s: a GEMM did not sleep its flops at {rate} GFLOP/s")
print(f"ok: emulated:0 busy {emulated['busy_s']:.4f} s >= {need:.4f} s for its flops at {rate} GFLOP/s; "
      f"measured {r['timing']['median_s']:.4f} s, predicted {r['model']['predicted_s']:.4f} s")
