#!/usr/bin/python3
"""Times one zoo model in PyTorch eager mode and prints the latencies as JSON in the shape of
`switchyard run --json` (latency_ms.median, .runs, ...).

The module is built exactly as tests/models/export_models.py builds it for the ONNX export (same
constructor, seed, randomized parameters, re-estimated BatchNorm), so it has the same weights as
MODEL_DIR/model.onnx; this is checked against MODEL_DIR/reference/*.npy before timing.

Usage: /usr/bin/python3 torch_latency.py --model NAME --model-dir DIR [--threads T] [--warmup W]
                                         [--repeat R]
"""

import argparse
import json
import os
import statistics
import sys
import time


def limit_threads(threads):
    """Before numpy/torch load OpenBLAS: its own pthread pool gets T threads too, and OpenMP
    workers sleep instead of spinning against OpenBLAS's (see bench/README.md)."""
    os.environ["OPENBLAS_NUM_THREADS"] = str(threads)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def import_libraries():
    global np, torch, zoo
    import numpy as np
    import torch
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                    "models"))
    import export_models as zoo  # tests/models/export_models.py


def build_model(name):
    """The module export_models.export_one exports, with the same weights."""
    builder, input_shape, _, _, reestimate_bn = zoo.MODELS[name]
    zoo.seed_everything(zoo.SEED)
    model = builder()
    model.eval()
    zoo.randomize_parameters(model)
    if reestimate_bn:
        zoo.reestimate_batchnorm(model, input_shape)
    return model.eval()


def check_against_export(model, model_dir):
    """Max |torch - exported reference| / reference std: ~1e-6 when the weights are the same."""
    with open(os.path.join(model_dir, "meta.json")) as f:
        meta = json.load(f)
    x = torch.from_numpy(np.load(os.path.join(model_dir, meta["inputs"][0]["file"])))
    ref = np.load(os.path.join(model_dir, meta["outputs"][0]["file"]))
    with torch.inference_mode():
        y = model(x).numpy()
    return x, float(np.abs(y - ref).max() / max(float(ref.std()), 1e-12))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="a name in export_models.MODELS")
    parser.add_argument("--model-dir", required=True, help="where export_models.py wrote it")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    limit_threads(args.threads)
    import_libraries()
    if args.model not in zoo.MODELS:
        parser.error(f"unknown model {args.model}; known: {', '.join(zoo.MODELS)}")

    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    model = build_model(args.model)
    x, rel_err = check_against_export(model, args.model_dir)
    if rel_err > 1e-3:
        print(f"torch_latency: error: {args.model} in PyTorch differs from the exported ONNX "
              f"(max|diff|/std = {rel_err:.3g}); re-export with export_models.py --force",
              file=sys.stderr)
        return 1

    runs = []
    with torch.inference_mode():
        for _ in range(args.warmup):
            model(x)
        for _ in range(args.repeat):
            start = time.perf_counter()
            model(x)
            runs.append((time.perf_counter() - start) * 1e3)
    ordered = sorted(runs)
    print(json.dumps({
        "executor": f"torch {torch.__version__} eager (OPENBLAS_NUM_THREADS="
                    f"{os.environ['OPENBLAS_NUM_THREADS']} OMP_WAIT_POLICY="
                    f"{os.environ['OMP_WAIT_POLICY']})",
        "threads": args.threads, "warmup": args.warmup, "repeat": args.repeat,
        "max_rel_diff_vs_export": rel_err,
        "latency_ms": {"median": statistics.median(runs), "min": ordered[0], "max": ordered[-1],
                       "p90": ordered[min(len(runs) - 1, -(-9 * len(runs) // 10) - 1)],
                       "mean": statistics.fmean(runs), "runs": runs},
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
