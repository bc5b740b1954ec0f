#!/usr/bin/python3
"""Compares Switchyard's output .npy files with PyTorch's reference outputs for one exported model.

The model directory is one written by export_models.py (meta.json lists the ONNX outputs and their
reference files); the actual directory holds one <output name>.npy per ONNX output, as written by
`switchyard run --output-dir`. For each output it checks shape, dtype and

    relative error = max|actual - reference| / max|reference|

(one scale for the whole tensor, so tiny reference entries do not inflate the error), against the
tolerance. Prints one line per output; exits 1 on any mismatch or missing file, 2 on bad usage.

Usage: /usr/bin/python3 compare_outputs.py MODEL_DIR ACTUAL_DIR [--tolerance 1e-4]
"""

import argparse
import json
import os
import sys

import numpy as np


def compare(name, actual_path, reference_path, tolerance):
    """Returns (ok, message) for one output."""
    if not os.path.exists(actual_path):
        return False, f"missing output file {actual_path}"
    try:
        actual = np.load(actual_path, allow_pickle=False)
    except (OSError, ValueError) as e:
        return False, f"cannot read {actual_path}: {e}"
    reference = np.load(reference_path, allow_pickle=False)
    if actual.shape != reference.shape:
        return False, f"shape {list(actual.shape)} != reference {list(reference.shape)}"
    if actual.dtype != reference.dtype:
        return False, f"dtype {actual.dtype} != reference {reference.dtype}"
    if actual.size == 0:
        return True, "empty tensors, shape and dtype match"
    a = actual.astype(np.float64)
    b = reference.astype(np.float64)
    non_finite = int(np.count_nonzero(~np.isfinite(a)))
    if non_finite:
        return False, f"{non_finite} non-finite values in the output"
    diff = np.abs(a - b)
    scale = float(np.abs(b).max())
    worst = np.unravel_index(int(diff.argmax()), diff.shape)
    max_diff = float(diff.max())
    rel = max_diff / scale if scale > 0 else max_diff
    detail = (f"rel error {rel:.3e} (max|a-b| {max_diff:.3e} at {list(map(int, worst))}: "
              f"{a[worst]:.6g} vs {b[worst]:.6g}; max|b| {scale:.4g}), tolerance {tolerance:.1e}")
    return rel < tolerance, detail


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model_dir", help="directory written by export_models.py (has meta.json)")
    parser.add_argument("actual_dir", help="directory with one <output>.npy per ONNX output")
    parser.add_argument("--tolerance", type=float, default=1e-4,
                        help="bound on max|a-b|/max|b| (default 1e-4)")
    args = parser.parse_args()

    meta_path = os.path.join(args.model_dir, "meta.json")
    try:
        with open(meta_path) as f:
            meta = json.load(f)
    except (OSError, ValueError) as e:
        print(f"error: cannot read {meta_path}: {e}", file=sys.stderr)
        return 2

    print(f"{meta.get('model', args.model_dir)}: relative error = max|actual - reference| / "
          f"max|reference| per output")
    failures = 0
    for out in meta["outputs"]:
        name = out["name"]
        ok, message = compare(name, os.path.join(args.actual_dir, name + ".npy"),
                              os.path.join(args.model_dir, out["file"]), args.tolerance)
        print(f"  {'PASS' if ok else 'FAIL'} {name}: {message}")
        failures += not ok
    print(f"{len(meta['outputs']) - failures} of {len(meta['outputs'])} outputs within tolerance")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
