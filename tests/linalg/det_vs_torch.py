#!/usr/bin/python3
"""Det (torch.det / torch.linalg.det, exported as ONNX Det) against PyTorch: batches of random
matrices of several sizes and nested batch dims, one that needs a row swap at every step, a
singular one, an ill-conditioned one (Hilbert), integer matrices with known determinants. One
model computes every case as its own output; one `switchyard run` per path.

  det_vs_torch.py --binary build/bin/switchyard --work DIR [-- RUN ARGS...]
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from oracle_run import parse_args, run_and_compare  # noqa: E402


def hilbert(n):
    i = torch.arange(n, dtype=torch.float32)
    return 1.0 / (i[:, None] + i[None, :] + 1.0)


def main():
    a = parse_args(__doc__)
    gen = torch.Generator().manual_seed(5)
    cases = [
        ("batch_4x4", torch.randn(3, 4, 4, generator=gen)),
        ("nested_3x3", torch.randn(2, 3, 3, 3, generator=gen)),
        ("one_2x2", torch.randn(2, 2, generator=gen)),
        ("one_1x1", torch.randn(1, 1, generator=gen)),
        ("eight_8x8", torch.randn(4, 8, 8, generator=gen) * 0.7),
        ("pivoting", torch.tensor([[0.0, 2, 1, 5], [0, 0, 3, 1], [4, 1, 0, 2], [0, 3, 0, 0]])),
        ("singular", torch.tensor([[1.0, 2, 3], [4, 5, 6], [7, 8, 9]])),
        ("hilbert_5", hilbert(5)),
        ("integers", torch.tensor([[[2.0, -1, 0], [-1, 2, -1], [0, -1, 2]], [[1.0, 3, 5], [2, 4, 7], [1, 1, 0]]])),
    ]

    class All(torch.nn.Module):
        def forward(self, *xs):
            return tuple(torch.det(x) for x in xs)

    xs = [x for _, x in cases]
    with torch.no_grad():
        want = [y.numpy() for y in All()(*xs)]
    path = os.path.join(a.work, "det.onnx")
    names = [n for n, _ in cases]
    torch.onnx.export(All(), tuple(xs), path, opset_version=13, input_names=[f"x_{n}" for n in names],
                      output_names=names)
    feeds = {f"x_{n}": x.numpy() for n, x in cases}
    # Errors relative to the largest determinant (or 1), under 1e-5: float32 data, double elimination.
    return run_and_compare(a.binary, a.work, path, feeds, [(n, w, n) for n, w in zip(names, want)],
                           a.run_args, "determinants match PyTorch")


if __name__ == "__main__":
    sys.exit(main())
