#!/usr/bin/python3
"""ONNX Einsum against numpy.einsum, an oracle outside Switchyard (the reference executor runs the
importer's lowering too). One model holds every equation as its own node and output; one
`switchyard run` per path computes them all.

  einsum_vs_numpy.py --binary build/bin/switchyard --work DIR [RUN ARGS...]
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper as h

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from oracle_run import parse_args, run_and_compare  # noqa: E402

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
    a = parse_args(__doc__)
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
    cases = [(f"y{k}", want[f"y{k}"], f"{eq}  {shapes}") for k, (eq, shapes) in enumerate(CASES)]
    return run_and_compare(a.binary, a.work, path, feeds, cases, a.run_args, "einsum equations match numpy.einsum")

if __name__ == "__main__":
    sys.exit(main())
