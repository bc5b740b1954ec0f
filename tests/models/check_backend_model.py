#!/usr/bin/python3
"""Checks one exported model on a BYOC backend, end to end, against PyTorch.

  1. `switchyard partition --json`: the backend takes at least MIN_SHARE of the model's FLOPs;
  2. `switchyard run MODEL --backends B`: outputs match PyTorch's (compare_outputs.py tolerance);
     with oneDNN, no primitive runs oneDNN's reference implementation (ONEDNN_VERBOSE's "ref:*",
     10-100x slower than its JIT kernels);
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
    verbose = dict(os.environ, ONEDNN_VERBOSE="1")
    out = run([sy, "run", model, "--backends", a.backends, "--output-dir", direct, "--repeat", "1"] + inputs + threads,
              capture_output=True, text=True, env=verbose)
    print("\n".join(l for l in out.stdout.splitlines() if not l.startswith("onednn_verbose")))
    if "onednn" in a.backends.split(","):
        execs = [l.split(",") for l in out.stdout.splitlines() if l.startswith("onednn_verbose,exec,")]
        slow = sorted({",".join(f[3:]) for f in execs if len(f) > 4 and f[4].startswith("ref")})
        isa = os.environ.get("ONEDNN_MAX_CPU_ISA", "the host's ISA")
        print(f"oneDNN primitives executed: {len(execs)}; on its reference kernels: {len(slow)} ({isa})")
        if slow or "reference kernel" in out.stderr:
            sys.exit("FAIL: oneDNN primitives on the reference implementation:\n  " + "\n  ".join(slow) + out.stderr)
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
