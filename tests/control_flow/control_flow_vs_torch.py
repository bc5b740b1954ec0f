#!/usr/bin/python3
"""Scripted PyTorch control flow (torch.jit.script, exported to ONNX Loop, If and sequence ops)
against PyTorch: a recurrent loop over time appending to a list then stacked, branches on shapes and on data,
a while loop with a counter and a break, list comprehensions over split chunks, list indexing,
insert, pop and len, nested loops with a branch on the counter. One model computes every case
as its own output; one `switchyard run` per path.

  control_flow_vs_torch.py --binary build/bin/switchyard --work DIR [-- RUN ARGS...]
"""
import os
import sys
from typing import List

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from oracle_run import parse_args, run_and_compare  # noqa: E402

nn = torch.nn


class Flow(nn.Module):
    def __init__(self):
        super().__init__()
        self.wi = nn.Linear(4, 8)
        self.wh = nn.Linear(8, 8)
        self.out = nn.Linear(8, 3)

    def forward(self, x, y):
        # A recurrent cell over time, every step's output appended, then stacked.
        h = torch.zeros(x.size(0), 8)
        outs: List[torch.Tensor] = []
        for t in range(x.size(1)):
            h = torch.tanh(self.wi(x[:, t]) + self.wh(h))
            outs.append(self.out(h))
        rnn = torch.stack(outs, 1)
        # Branches on shapes.
        if y.size(0) > 2:
            branch = y * 2
        else:
            branch = y - 1
        # A while loop with a counter and a break.
        c = y
        i = 0
        while i < 10:
            c = c * 0.5 + 1
            i += 1
            if i == 4:
                break
        # Chunks of a split, each flipped, concatenated; list indexing, insert, pop and len.
        parts = torch.split(y, 2, dim=1)
        chunks = torch.cat([p.flip(1) for p in parts], 1)
        items: List[torch.Tensor] = [y[0], y[1]]
        items.insert(0, y[2] * 3)
        last = items.pop()
        listed = torch.stack(items, 0) + last
        # Nested loops with a branch on the outer counter.
        acc = torch.zeros(y.size(1))
        for a in range(3):
            for b in range(2):
                if a % 2 == 1:
                    acc = acc - y[a]
                elif b == 0:
                    acc = acc + y[a]
                else:
                    acc = acc + y[a] * 2.0
        # Branches on the data (both computed, one picked): one taken, one not.
        if bool(x.sum() > 0):
            pos = y * 3
        else:
            pos = y + 10
        if bool(x.sum() < 0):
            neg = y * 3
        else:
            neg = y + 10
        return rnn, branch, c, chunks, listed, acc, outs[-1] + float(len(outs)), pos, neg


NAMES = ["rnn_list_stack", "branch_on_shape", "while_break", "split_flip_cat", "list_insert_pop", "nested_loops_if",
         "list_index_len", "branch_on_data_sum_positive", "branch_on_data_sum_negative"]


def main():
    a = parse_args(__doc__)
    torch.manual_seed(0)
    model = torch.jit.script(Flow().eval())
    gen = torch.Generator().manual_seed(1)
    x, y = torch.randn(2, 5, 4, generator=gen), torch.randn(3, 6, generator=gen)
    with torch.no_grad():
        want = [w.numpy() for w in model(x, y)]
    path = os.path.join(a.work, "control_flow.onnx")
    torch.onnx.export(model, (x, y), path, opset_version=13, input_names=["x", "y"], output_names=NAMES)
    cases = [(n, w, n) for n, w in zip(NAMES, want)]
    return run_and_compare(a.binary, a.work, path, {"x": x.numpy(), "y": y.numpy()}, cases, a.run_args,
                           "scripted control flow cases match PyTorch")


if __name__ == "__main__":
    sys.exit(main())
