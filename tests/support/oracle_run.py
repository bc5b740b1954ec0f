"""One `switchyard run` of a model of many outputs, each compared with an oracle's value (numpy,
PyTorch): the shared half of tests/einsum and tests/nn3d."""
import argparse
import os
import subprocess

import numpy as np


def parse_args(doc):
    """--binary, --work (made if missing) and the run's own arguments after --."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--binary", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("run_args", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    return a


def run_and_compare(binary, work, model_path, feeds, cases, run_args, summary, tol=1e-5):
    """feeds: input name -> array. cases: (output name, expected array, label[, tolerance]) in order.
    Prints a line per case and the summary ("N of M <summary>"); returns the exit code."""
    cmd = [binary, "run", model_path, "--output-dir", os.path.join(work, "out"), "--warmup", "0", "--repeat", "1"]
    for n, x in feeds.items():
        np.save(os.path.join(work, n + ".npy"), x)
        cmd += ["--input", f"{n}={os.path.join(work, n + '.npy')}"]
    cmd += [x for x in run_args if x != "--"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout[-2000:], r.stderr[-2000:])
        return 1
    bad = 0
    for name, want, label, *case_tol in cases:
        got = np.load(os.path.join(work, "out", name + ".npy"))
        same = got.shape == want.shape
        err = np.abs(got - want).max() / max(1.0, np.abs(want).max()) if same and want.size else (0.0 if same else float("inf"))
        ok = same and err < (case_tol[0] if case_tol else tol)
        bad += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {label:64s} -> {str(tuple(got.shape)):18s} rel err {err:.1e}"
              + ("" if same else f" (expected shape {tuple(want.shape)})"))
    print(f"{len(cases) - bad} of {len(cases)} {summary}")
    return 1 if bad else 0
