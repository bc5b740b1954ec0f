#!/usr/bin/python3
"""Throughput of one loaded model through the Python API: one caller running with all threads
against as many callers as cores each running with one thread (the API allows concurrent runs).

    PYTHONPATH=build/python bench/api_throughput.py [MODEL] [--backends onednn] [--seconds 10]
"""
import argparse
import os
import threading
import time

import numpy as np

import switchyard as sy


def throughput(model, feeds, callers, threads, seconds):
    done = [0] * callers
    stop = time.perf_counter() + seconds

    def work(i):
        while time.perf_counter() < stop:
            model.run(feeds, threads=threads)
            done[i] += 1

    start = time.perf_counter()
    if callers == 1:
        work(0)  # in the thread that warmed the model up (OpenMP keeps a team per calling thread)
    else:
        ts = [threading.Thread(target=work, args=(i,)) for i in range(callers)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    return sum(done) / (time.perf_counter() - start)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", nargs="?", default="zoo:resnet50")
    ap.add_argument("--backends", default="")
    ap.add_argument("--seconds", type=float, default=10)
    a = ap.parse_args()
    cores = os.cpu_count() or 2
    m = sy.compile(a.model, backends=[b for b in a.backends.split(",") if b])
    rng = np.random.default_rng(0)
    feeds = {i["name"]: rng.uniform(-1, 1, i["shape"]).astype(i["dtype"]) for i in m.inputs}
    for _ in range(3):
        m.run(feeds, threads=cores)
        m.run(feeds, threads=1)
    one = throughput(m, feeds, 1, cores, a.seconds)
    many = throughput(m, feeds, cores, 1, a.seconds)
    print(f"{a.model} ({a.backends or 'native'}), {cores} cores:")
    print(f"  1 caller x {cores}-thread runs: {one:7.2f} runs/s ({1e3 / one:.2f} ms per run)")
    print(f"  {cores} callers x 1-thread runs: {many:7.2f} runs/s ({many / one:.2f}x)")


if __name__ == "__main__":
    main()
