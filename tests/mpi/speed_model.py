#!/usr/bin/env python3
"""platform.speed_model reaches the ranks' plans: `mpirun -np 2 cuboid run` on the host and an
emulated device in timing mode (GEMMs that sleep at a given rate) behind a slow link, once with
"flops" and once with "flops+link". Each record must name the model it was asked for, and the
work the emulated devices were given must differ: the link model charges the device for the
bytes it moves over 1 GB/s, the flops model does not.

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
    return sum(p["flops"] for p in devices) / sum(p["flops"] for p in r["processors"])


flops = run("flops")
link = run("flops+link")
print(f"the emulated devices' share of the flops: {flops:.4f} under \"flops\", "
      f"{link:.4f} under \"flops+link\"")
if abs(flops - link) < 1e-9:
    sys.exit("FAIL: both models gave the devices the same work: the rates did not reach the plans")
print("ok")
