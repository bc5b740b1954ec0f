#!/usr/bin/python3
"""RoiAlign and MaxRoiPool (torchvision.ops.roi_align and roi_pool, exported as ONNX RoiAlign and
MaxRoiPool) against torchvision: adaptive and fixed sampling, spatial scales, regions in both
images of a batch, partly or wholly outside the image, smaller than a pixel, reversed;
aligned=False through RoiAlign-10's coordinates and aligned=True through RoiAlign-16's
half_pixel (the same exporter, opset 16: the attribute's default); roi_pool in the opset 11
model. One model per opset computes every case as its own output; one `switchyard run` each.

  roi_pooling_vs_torchvision.py --binary build/bin/switchyard --work DIR [-- RUN ARGS...]
"""
import os
import sys
import warnings

import torch
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from oracle_run import parse_args, run_and_compare  # noqa: E402

# (name, output size, spatial scale, sampling ratio (-1: adaptive), image shape, boxes [K, 5])
BOXES = [[0, 1.0, 2.0, 30.0, 25.0], [1, 10.5, 3.25, 20.0, 40.0], [0, -8.0, -6.0, 12.0, 9.0],
         [1, 50.0, 50.0, 90.0, 70.0], [0, 5.2, 5.4, 5.6, 5.5], [1, 20.0, 20.0, 10.0, 12.0]]
CASES = [
    ("s025_adaptive_7x7", (7, 7), 0.25, -1, (2, 5, 12, 11)),
    ("s1_ratio2_3x5", (3, 5), 1.0, 2, (2, 3, 48, 44)),
    ("s05_ratio1_2x2", (2, 2), 0.5, 1, (2, 4, 24, 20)),
    ("s05_adaptive_4x3", (4, 3), 0.5, 0, (2, 2, 25, 31)),
]


def model(aligned):
    class All(torch.nn.Module):
        def forward(self, boxes, *xs):
            outs = [torchvision.ops.roi_align(x, boxes, size, scale, ratio, aligned)
                    for (_, size, scale, ratio, _), x in zip(CASES, xs)]
            if not aligned:
                outs += [torchvision.ops.roi_pool(x, boxes, size, scale) for (_, size, scale, _, _), x in zip(CASES, xs)]
            return tuple(outs)
    return All()


def main():
    a = parse_args(__doc__)
    gen = torch.Generator().manual_seed(3)
    xs = [torch.randn(s, generator=gen) for *_, s in CASES]
    boxes = torch.tensor(BOXES)
    bad = 0
    for aligned, opset in ((False, 11), (True, 16)):
        tag = "aligned" if aligned else "unaligned"
        work = os.path.join(a.work, tag)
        os.makedirs(work, exist_ok=True)
        names = [f"{n}_{tag}" for n, *_ in CASES] + ([] if aligned else [f"pool_{n}" for n, *_ in CASES])
        with torch.no_grad():
            want = [y.numpy() for y in model(aligned)(boxes, *xs)]
        path = os.path.join(work, "roi_align.onnx")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the exporter's notes on aligned=True and ratio -1
            torch.onnx.export(model(aligned), (boxes, *xs), path, opset_version=opset,
                              input_names=["boxes"] + [f"x_{n}" for n, *_ in CASES], output_names=names)
        feeds = {"boxes": boxes.numpy(), **{f"x_{n}": x.numpy() for (n, *_), x in zip(CASES, xs)}}
        bad |= run_and_compare(a.binary, work, path, feeds, [(n, w, n) for n, w in zip(names, want)], a.run_args,
                               f"RoiAlign ({tag})" + ("" if aligned else " and MaxRoiPool") + " outputs match torchvision")
    return bad


if __name__ == "__main__":
    sys.exit(main())
