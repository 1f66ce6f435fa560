#!/usr/bin/env python3
"""platform.speed_model reaches the ranks' plans: `mpirun -np 2 cuboid run` on the host and an
emulated device in timing mode (GEMMs that sleep at a given rate) behind a slow link, once with
"flops" and once with "flops+link". Each record must name the model it was asked for, and
each processor's predicted time must come from that model: under "flops" its flops over its
measured speed; under "flops+link", for an emulated device, another figure, no less than its
copies take over the 1 GB/s link (the flops model does not see them) nor its flops at the
400 GFLOP/s GEMM rate (the host's figure there comes from its GEMM rate, not its engine speed,
so it is not checked). The two cuts themselves may coincide: the speeds are measured in the
engine, links included, so both models can give the devices the same number of tiles.

    speed_model.py MPIEXEC CUBOID DECK WORKDIR
"""
import json
import os
import subprocess
import sys

mpiexec, cuboid, deck, work = sys.argv[1:5]
os.makedirs(work, exist_ok=True)


def run(model):
    record = os.path.join(work, f"{model.replace('+', '-')}.json")
    if os.path.exists(record):
        os.remove(record)
    args = [mpiexec, "--oversubscribe", "--allow-run-as-root", "-np", "2", cuboid, "run", deck,
            "--set", 'platform.processors=["host","emulated:0"]',
            "--set", "problem.m=768", "--set", "problem.n=768", "--set", "problem.k=768",
            "--set", "problem.tile=128", "--set", "platform.emulated_gflops=400",
            "--set", "platform.emulated_link_gbs=1", "--set", f'platform.speed_model="{model}"',
            "--set", "run.validate=false", "--set", "run.repetitions=1", "--set", "run.warmup=0",
            "--json", record]
    out = subprocess.run(args, capture_output=True, text=True, timeout=240)
    if out.returncode != 0 or not os.path.exists(record):
        print(out.stdout + out.stderr)
        sys.exit(f"FAIL: {model}: exit status {out.returncode}")
    r = json.load(open(record))
    if r["model"]["speed_model"] != model:
        sys.exit(f"FAIL: asked for {model}, the record says {r['model']['speed_model']}")
    devices = [p for p in r["processors"] if p["name"].endswith(":emulated:0")]
    if len(devices) != 2:
        sys.exit(f"FAIL: {model}: {len(devices)} emulated processors in the record, not one per rank")
    for p in r["processors"]:
        if p["flops"] <= 0:
            continue
        by_speed = p["flops"] / (p["speed_gflops"] * 1e9)
        if p in devices and model == "flops+link":
            floor = max(max(p["h2d_bytes"], p["d2h_bytes"]) / 1e9, p["flops"] / 400e9)
            if abs(p["predicted_s"] - by_speed) <= 1e-6 * by_speed:
                sys.exit(f"FAIL: {model}: {p['name']} predicted its flops over its speed "
                         f"({by_speed:.6f} s): the rates did not reach the plan")
            if p["predicted_s"] < floor * (1 - 1e-6):
                sys.exit(f"FAIL: {model}: {p['name']} predicted {p['predicted_s']:.6f} s, less than "
                         f"its copies over the link or its GEMMs at their rate ({floor:.6f} s)")
        elif model == "flops" and abs(p["predicted_s"] - by_speed) > 1e-6 * by_speed:
            sys.exit(f"FAIL: {model}: {p['name']} predicted {p['predicted_s']:.6f} s, not its flops "
                     f"over its speed ({by_speed:.6f} s)")
    if model == "flops+link" and not any(p["flops"] > 0 for p in devices):
        sys.exit(f"FAIL: {model}: no emulated device was given work")
    share = sum(p["flops"] for p in devices) / sum(p["flops"] for p in r["processors"])
    print(f"{model}: the emulated devices' share of the flops {share:.4f}; their predicted times "
          + ", ".join(f"{p['predicted_s']:.6f} s" for p in devices))


run("flops")
run("flops+link")
print("ok")
