#!/usr/bin/python3
"""MaxPool's Indices output (PyTorch's max_pool2d/max_pool1d with return_indices=True, exported as
ONNX MaxPool's second output) against PyTorch: windows with ties (the first maximum wins), padding,
strides, ceil_mode, dilation, 1-D. One model computes every case as its own output; one
`switchyard run` per path.

  pool_indices_vs_torch.py --binary build/bin/switchyard --work DIR [-- RUN ARGS...]
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from oracle_run import parse_args, run_and_compare  # noqa: E402

F = torch.nn.functional

# (name, pooling of x returning (values, indices), input shape)
CASES = [
    ("k2", lambda x: F.max_pool2d(x, 2, return_indices=True), (2, 3, 9, 11)),
    ("k3_s2_p1", lambda x: F.max_pool2d(x, 3, 2, 1, return_indices=True), (2, 3, 9, 11)),
    ("k3_s2_ceil", lambda x: F.max_pool2d(x, 3, 2, 0, ceil_mode=True, return_indices=True), (1, 4, 10, 7)),
    ("k2_dilated", lambda x: F.max_pool2d(x, 2, 1, 0, dilation=2, return_indices=True), (1, 2, 7, 8)),
    ("k2x3_s12", lambda x: F.max_pool2d(x, (2, 3), (1, 2), (1, 1), return_indices=True), (1, 3, 6, 9)),
    ("1d_k3_s2_p1", lambda x: F.max_pool1d(x, 3, 2, 1, return_indices=True), (2, 4, 13)),
]


class All(torch.nn.Module):
    def forward(self, *xs):
        outs = []
        for (_, pool, _), x in zip(CASES, xs):
            values, indices = pool(x)
            outs += [values, indices.float()]
        return tuple(outs)


def main():
    a = parse_args(__doc__)
    gen = torch.Generator().manual_seed(1)
    xs = [torch.randn(s, generator=gen) for _, _, s in CASES]
    # Ties: equal values across whole windows (the first in row-major order is the index), and
    # rounded values so that windows often hold several maxima.
    xs[0][0, 0, :4, :4] = 1.5
    xs[1] = torch.round(xs[1])
    names = []
    for n, _, _ in CASES:
        names += [f"{n}_values", f"{n}_indices"]
    with torch.no_grad():
        want = [y.numpy() for y in All()(*xs)]
    path = os.path.join(a.work, "pool_indices.onnx")
    torch.onnx.export(All(), tuple(xs), path, opset_version=13, input_names=[f"x_{n}" for n, _, _ in CASES],
                      output_names=names)
    feeds = {f"x_{n}": x.numpy() for (n, _, _), x in zip(CASES, xs)}
    cases = [(n, w, n) for n, w in zip(names, want)]
    return run_and_compare(a.binary, a.work, path, feeds, cases, a.run_args, "max pools and their indices match PyTorch")


if __name__ == "__main__":
    sys.exit(main())
