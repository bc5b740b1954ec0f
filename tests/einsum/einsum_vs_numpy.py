#!/usr/bin/python3
"""ONNX Einsum against numpy.einsum, an oracle outside Switchyard (the reference executor runs the
importer's lowering too). One model holds every equation as its own node and output; one
`switchyard run` per path computes them all.

  einsum_vs_numpy.py --binary build/bin/switchyard --work DIR [RUN ARGS...]
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper as h

# (equation, operand shapes): matmuls and attention as models write them, transposes, sums,
# diagonals, outer products, broadcasting through the ellipsis, three operands, implicit outputs,
# upper-case letters, letters summed before a contraction, size-1 axes.
CASES = [
    ("ij,jk->ik", [(5, 7), (7, 3)]),
    ("bij,bjk->bik", [(2, 5, 7), (2, 7, 3)]),
    ("bhid,bhjd->bhij", [(1, 3, 6, 8), (1, 3, 5, 8)]),
    ("bhij,bhjd->bhid", [(1, 3, 6, 5), (1, 3, 5, 8)]),
    ("bqhd,bkhd->bhqk", [(2, 4, 3, 8), (2, 6, 3, 8)]),
    ("bhqk,bkhd->bqhd", [(2, 3, 4, 6), (2, 6, 3, 8)]),
    ("nchw,oc->nohw", [(1, 6, 4, 5), (7, 6)]),
    ("ij->ji", [(4, 6)]),
    ("abc->cab", [(2, 3, 4)]),
    ("ijkl->ljki", [(2, 3, 1, 4)]),
    ("ij->", [(4, 6)]),
    ("abc->b", [(2, 3, 4)]),
    ("ii->i", [(5, 5)]),
    ("ii->", [(5, 5)]),
    ("iij->j", [(4, 4, 3)]),
    ("...ii->...i", [(2, 3, 4, 4)]),
    ("i,i->", [(9,), (9,)]),
    ("i,j->ij", [(4,), (5,)]),
    ("ij,j->i", [(4, 6), (6,)]),
    ("bij,jk->bik", [(3, 4, 5), (5, 2)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 6)]),
    ("...i,...i->...", [(3, 1, 7), (4, 7)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("ij,ij->", [(3, 4), (3, 4)]),
    ("ij,kj->ik", [(3, 4), (5, 4)]),
    ("abc,abd->cd", [(2, 3, 4), (2, 3, 5)]),
    ("ijk,ikl->ijl", [(3, 2, 4), (3, 4, 5)]),
    ("abcd,cd->ab", [(2, 3, 4, 5), (4, 5)]),
    ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("ba", [(3, 4)]),
    ("Ab,bC->AC", [(3, 4), (4, 2)]),
    ("ijk,jl->il", [(3, 4, 5), (4, 2)]),
    ("b...c,bc->b...", [(2, 3, 4, 5), (2, 5)]),
    ("i j , j k -> i k", [(2, 3), (3, 4)]),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("run_args", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    rng = np.random.default_rng(0)
    nodes, inputs, outputs, feeds, want = [], [], [], {}, {}
    for k, (eq, shapes) in enumerate(CASES):
        names = []
        for j, s in enumerate(shapes):
            n = f"x{k}_{j}"
            feeds[n] = rng.uniform(-1, 1, s).astype(np.float32)
            inputs.append(h.make_tensor_value_info(n, TensorProto.FLOAT, list(s)))
            names.append(n)
        nodes.append(h.make_node("Einsum", names, [f"y{k}"], equation=eq))
        outputs.append(h.make_tensor_value_info(f"y{k}", TensorProto.FLOAT, None))
        want[f"y{k}"] = np.einsum(eq.replace(" ", ""), *[feeds[n].astype(np.float64) for n in names])
    model = h.make_model(h.make_graph(nodes, "einsum", inputs, outputs), opset_imports=[h.make_opsetid("", 13)])
    model.ir_version = 8
    path = os.path.join(a.work, "einsum.onnx")
    onnx.save(model, path)
    cmd = [a.binary, "run", path, "--output-dir", os.path.join(a.work, "out"), "--warmup", "0", "--repeat", "1"]
    for n, x in feeds.items():
        np.save(os.path.join(a.work, n + ".npy"), x)
        cmd += ["--input", f"{n}={os.path.join(a.work, n + '.npy')}"]
    cmd += [x for x in a.run_args if x != "--"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout[-2000:], r.stderr[-2000:])
        return 1
    bad = 0
    for k, (eq, shapes) in enumerate(CASES):
        got = np.load(os.path.join(a.work, "out", f"y{k}.npy"))
        w = want[f"y{k}"]
        err = np.abs(got - w).max() / max(1.0, np.abs(w).max()) if w.size else 0.0
        ok = got.shape == w.shape and err < 1e-5
        bad += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {eq:24s} {str(shapes):40s} -> {str(got.shape):16s} rel err {err:.1e}"
              + ("" if got.shape == w.shape else f" (numpy: {w.shape})"))
    print(f"einsum: {len(CASES) - bad} of {len(CASES)} equations match numpy.einsum")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
