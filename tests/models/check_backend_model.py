#!/usr/bin/python3
"""Checks one exported model on a BYOC backend, end to end, against PyTorch.

  1. `switchyard partition --json`: the backend takes at least MIN_SHARE of the model's FLOPs;
  2. `switchyard run MODEL --backends B`: outputs match PyTorch's (compare_outputs.py tolerance);
  3. `switchyard compile -o model.sya`, then `switchyard run model.sya` in a new process:
     outputs identical, bit for bit, to step 2's (same inputs, same thread count).

Usage: /usr/bin/python3 check_backend_model.py SWITCHYARD MODEL_DIR WORK_DIR BACKENDS
           [--min-share 0.99] [--tolerance 1e-4] [--threads 2]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd, **kw):
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=True, **kw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("switchyard")
    ap.add_argument("model_dir")
    ap.add_argument("work_dir")
    ap.add_argument("backends")
    ap.add_argument("--min-share", type=float, default=0.99)
    ap.add_argument("--tolerance", type=float, default=1e-4)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()

    sy, model = a.switchyard, os.path.join(a.model_dir, "model.onnx")
    shutil.rmtree(a.work_dir, ignore_errors=True)
    os.makedirs(a.work_dir)
    inputs = ["--input", "input=" + os.path.join(a.model_dir, "input.npy")]
    threads = ["--threads", str(a.threads)]

    summary = json.loads(run([sy, "partition", model, "--backends", a.backends, "--json"],
                             capture_output=True, text=True).stdout)
    total = summary["total_flops"]
    native = summary["flops_by_backend"].get("native", 0)
    share = 1 - native / total
    print(f"offloaded FLOP share: {share:.4%} (native {native} of {total})")
    if share < a.min_share:
        sys.exit(f"FAIL: only {share:.4%} of FLOPs offloaded, expected >= {a.min_share:.2%}")

    direct = os.path.join(a.work_dir, "direct")
    run([sy, "run", model, "--backends", a.backends, "--output-dir", direct, "--repeat", "1"] + inputs + threads)
    run(["/usr/bin/python3", os.path.join(HERE, "compare_outputs.py"), a.model_dir, direct,
         "--tolerance", str(a.tolerance)])

    artifact = os.path.join(a.work_dir, "model.sya")
    run([sy, "compile", model, "--backends", a.backends, "-o", artifact])
    loaded = os.path.join(a.work_dir, "loaded")
    run([sy, "run", artifact, "--output-dir", loaded, "--repeat", "1"] + inputs + threads)
    for f in sorted(os.listdir(direct)):
        x = open(os.path.join(direct, f), "rb").read()
        y = open(os.path.join(loaded, f), "rb").read()
        if x != y:
            sys.exit(f"FAIL: {f} from the artifact differs from the in-process run")
        print(f"{f}: artifact output identical to the in-process run ({len(x)} bytes)")
    os.remove(artifact)  # hundreds of MB for large models
    print("ok")


if __name__ == "__main__":
    main()
