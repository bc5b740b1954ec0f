#!/usr/bin/python3
"""How well a records file predicts the kernels' times inside the model.

    bench/records_fidelity.py MODEL RECORDS [--threads 2] [--repeat 30] [--binary build/bin/switchyard]

Compiles MODEL with RECORDS (`compile --explain`), runs the artifact with `--profile` and prints,
per kernel chosen by a record, its mean time per call in the model against the record's time
(the chosen candidate's median, or its time with the layout kept), then the median ratio and its
spread. A ratio far from 1 means the tuner ranked its candidates on times the model does not see.
Workloads the records leave to the defaults (tune's end-to-end check) are not compared; drop their
`model_default` lines from a copy of the records to compare the records' own choices.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("records")
    ap.add_argument("--threads", default="2")
    ap.add_argument("--repeat", default="30")
    ap.add_argument("--binary", default=os.path.join(os.path.dirname(__file__), "..", "build", "bin", "switchyard"))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        art = os.path.join(tmp, "model.sya")
        c = subprocess.run([a.binary, "compile", a.model, "--records", a.records, "--explain", "-o", art],
                           capture_output=True, text=True)
        if c.returncode != 0:
            sys.exit("records_fidelity: compile failed: " + (c.stderr.strip().splitlines() or ["?"])[-1])
        recorded, kernel = {}, None
        for line in c.stdout.splitlines():
            m = re.match(r"(k\d+_\S+) x\d+", line)
            if m:
                kernel = m.group(1)
                continue
            if kernel and "chosen" in line:
                m = re.search(r"record: ([0-9.]+) ms", line) or re.search(r"([0-9.]+) ms kept", line)
                if m:
                    recorded[kernel] = float(m.group(1))
                kernel = None
        r = subprocess.run([a.binary, "run", art, "--threads", a.threads, "--repeat", a.repeat, "--profile", "0"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("records_fidelity: run failed: " + (r.stderr.strip().splitlines() or ["?"])[-1])
    ratios = []
    print(f"{'kernel':18s} {'model ms':>9s} {'record ms':>9s} {'ratio':>6s}  ops (shapes)")
    for line in r.stdout.splitlines():
        m = re.match(r"\s*([0-9.]+)\s+[0-9.]+%\s+(\d+)\s+\S+\s+(k\d+_\S+)\s+(.*)", line)
        if m and m.group(3) in recorded:
            per_call = float(m.group(1)) / int(m.group(2))
            ratio = per_call / recorded[m.group(3)]
            ratios.append(ratio)
            print(f"{m.group(3):18s} {per_call:9.3f} {recorded[m.group(3)]:9.3f} {ratio:6.2f}  {m.group(4)[:90]}")
    if not ratios:
        sys.exit("records_fidelity: no kernel of the model was chosen by a record")
    q = sorted(ratios)
    print(f"{len(ratios)} kernels: model / record median {statistics.median(q):.2f}, "
          f"p10-p90 {q[len(q) // 10]:.2f}-{q[len(q) * 9 // 10]:.2f} ({a.threads} threads)")


if __name__ == "__main__":
    main()
