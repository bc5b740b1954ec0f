"""Differential testing driver: generate cases, run every path, compare, shrink failures.

See README.md in this folder. Entry point: tests/diff/run (calls main()).
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen  # noqa: E402

# Tolerance per dtype: |path - reference| <= rtol * max|reference| + atol, over the finite elements of
# one output. Integers and bools must be equal; NaN and +-inf positions must match exactly.
# 'loose': values computed by a formula of the ONNX spec that cancels (MeanVarianceNormalization's
# E[x^2] - E[x]^2), where paths that round differently (FMA contraction) legitimately differ more.
TOL = {'float32': (1e-4, 1e-4), 'float64': (1e-9, 1e-9), 'loose': (1e-2, 1e-3)}

_print_lock = threading.Lock()


def say(*a):
    with _print_lock:
        print(*a, flush=True)


# ------------------------------------------------------------------------------------------ running
class Result:
    def __init__(self, status, msg='', outputs=None, seconds=0.0):
        self.status, self.msg, self.outputs, self.seconds = status, msg, outputs or {}, seconds


# Path measured-B: B's regions placed by measurement (kept, split or native); measured-A+B+...:
# those backends offered together (each region may also go to another of them, and the whole
# model to one of them alone).
MEASURED = 'measured-'


def path_backend(path):
    return path[len(MEASURED):] if path.startswith(MEASURED) else path


def path_args(path):
    if path == 'reference':
        return ['--target', 'reference']
    if path == 'native':
        return ['--target', 'cpu']
    if path.startswith(MEASURED):
        return ['--backends', path_backend(path).replace('+', ','), '--placement', 'measured']
    return ['--backends', path]


def run_cmd(binary, model, inputs, outdir, path, threads):
    cmd = [binary, 'run', model, '--warmup', '0', '--repeat', '1', '--threads', str(threads),
           '--output-dir', outdir] + path_args(path)
    for name, f in inputs:
        cmd += ['--input', f'{name}={f}']
    return cmd


def run_group(cmd, timeout, env):
    """Runs cmd in its own process group; on timeout kills the whole group (the C compiler the
    program started too) and returns None."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True)
    with _children_lock:
        _children.add(p.pid)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.communicate()
        return None
    finally:
        with _children_lock:
            _children.discard(p.pid)
    return subprocess.CompletedProcess(cmd, p.returncode, out, err)


_children = set()  # process groups of the runs in flight, killed when the driver is stopped
_children_lock = threading.Lock()


def _stop(signum, frame):
    with _children_lock:
        for pid in list(_children):
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    os._exit(128 + signum)


def run_path(cfg, case_dir, path, output_names):
    """Runs one path on the model in case_dir; returns a Result with the outputs read back."""
    outdir = os.path.join(case_dir, 'out_' + path)
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(outdir)
    cmd = run_cmd(cfg.binary, os.path.join(case_dir, 'model.onnx'), list_inputs(case_dir), outdir, path, cfg.threads)
    t0 = time.time()
    p = run_group(cmd, cfg.timeout, cfg.env)
    if p is None:
        return Result('hang', f'no answer after {cfg.timeout:g} s', seconds=time.time() - t0)
    dt = time.time() - t0
    err = p.stderr.decode(errors='replace').strip()
    if p.returncode != 0:
        lines = [ln for ln in err.splitlines() if ln.strip()]
        if p.returncode < 0 or p.returncode > 2:
            kind = 'crash'
            msg = f'exit {p.returncode}' + (f': {lines[-1]}' if lines else '')
        else:
            kind = 'error'
            msg = ' | '.join(lines[-3:]) if lines else f'exit {p.returncode}'
        return Result(kind, msg, seconds=dt)
    outs = {}
    for name in output_names:
        f = os.path.join(outdir, re.sub(r'[^A-Za-z0-9_.-]', '_', name) + '.npy')
        if os.path.exists(f):
            outs[name] = np.load(f)
    return Result('ok', err, outs, dt)


def claims(cfg, case_dir, backend):
    """Whether `backend` offloads any region of the model (if not, its run is the native run again)."""
    cmd = [cfg.binary, 'partition', os.path.join(case_dir, 'model.onnx'), '--backends', path_backend(backend).replace('+', ','), '--json']
    try:
        p = run_group(cmd, cfg.timeout, cfg.env)
        j = json.loads(p.stdout)
        return any(r.get('offloaded') for r in j.get('regions', []))
    except Exception:
        return True  # let the run itself report the problem


def list_inputs(case_dir):
    d = os.path.join(case_dir, 'inputs')
    if not os.path.isdir(d):
        return []
    order = []
    spec = os.path.join(case_dir, 'inputs.json')
    if os.path.exists(spec):
        order = json.load(open(spec))
    else:
        order = sorted(f[:-4] for f in os.listdir(d) if f.endswith('.npy'))
    return [(n, os.path.join(d, n + '.npy')) for n in order]


def write_case(g, case_dir, model=None):
    os.makedirs(os.path.join(case_dir, 'inputs'), exist_ok=True)
    m = model if model is not None else g.to_onnx()
    onnx.save(m, os.path.join(case_dir, 'model.onnx'))
    for name in g.inputs:
        np.save(os.path.join(case_dir, 'inputs', name + '.npy'), g.data[name])
    json.dump(list(g.inputs), open(os.path.join(case_dir, 'inputs.json'), 'w'))
    json.dump(list(g.outputs), open(os.path.join(case_dir, 'outputs.json'), 'w'))
    json.dump(g.precision(), open(os.path.join(case_dir, 'precision.json'), 'w'))
    with open(os.path.join(case_dir, 'graph.txt'), 'w') as f:
        f.write(g.describe() + '\n')


# ------------------------------------------------------------------------------------------ comparing
def compare(ref, got, names, prec=None):
    """Mismatches of got against ref: list of (output, what, detail, rel_error). prec: output -> the dtype
    whose tolerance applies (float64 values computed through float32 get float32's)."""
    prec = prec or {}
    bad = []
    for n in names:
        r = ref.get(n)
        a = got.get(n)
        if r is None:
            continue
        if a is None:
            bad.append((n, 'missing', 'no output file', float('inf')))
            continue
        if r.shape != a.shape:
            bad.append((n, 'shape', f'{list(a.shape)} vs reference {list(r.shape)}', float('inf')))
            continue
        if r.dtype != a.dtype:
            bad.append((n, 'dtype', f'{a.dtype} vs reference {r.dtype}', float('inf')))
            continue
        if r.size == 0:
            continue
        if r.dtype.kind in 'fc':
            rn, an = np.isnan(r), np.isnan(a)
            if (rn != an).any():
                i = np.unravel_index(np.argmax(rn != an), r.shape)
                bad.append((n, 'nan', f'NaN positions differ ({int((rn != an).sum())} elements), '
                            f'e.g. [{",".join(map(str, i))}]: {a[i]} vs reference {r[i]}', float('inf')))
                continue
            ri, ai = np.isinf(r), np.isinf(a)
            if (ri != ai).any() or (r[ri] != a[ri]).any():
                d = (ri != ai) | (ri & (r != a))
                i = np.unravel_index(np.argmax(d), r.shape)
                bad.append((n, 'inf', f'inf positions differ, e.g. [{",".join(map(str, i))}]: {a[i]} vs reference {r[i]}',
                            float('inf')))
                continue
            fin = ~(rn | ri)
            if not fin.any():
                continue
            rtol, atol = TOL.get(prec.get(n, str(r.dtype)), TOL['float32'])
            r64, a64 = r.astype(np.float64), a.astype(np.float64)
            diff = np.where(fin, np.abs(r64 - a64), 0.0)
            scale = float(np.max(np.abs(r64[fin])))
            err = float(diff.max())
            if err > rtol * scale + atol:
                i = np.unravel_index(np.argmax(diff), r.shape)
                rel = err / max(scale, 1e-30)
                nbad = int((diff > rtol * scale + atol).sum())
                bad.append((n, 'value', f'max abs error {err:.3g} at [{",".join(map(str, i))}] ({a[i]!r} vs reference '
                            f'{r[i]!r}), max|ref| {scale:.3g}, rel {rel:.3g}, {nbad}/{r.size} elements off', rel))
        else:
            if (r != a).any():
                d = r != a
                i = np.unravel_index(np.argmax(d), r.shape)
                bad.append((n, 'value', f'{int(d.sum())}/{r.size} elements differ, e.g. [{",".join(map(str, i))}]: '
                            f'{a[i]!r} vs reference {r[i]!r}', float('inf')))
    return bad


def err_class(msg):
    """An error message without the numbers and value names that change as a case shrinks."""
    m = re.sub(r"'[^']*'", "''", msg)
    m = re.sub(r'\b(v|in|w|k|c)\d+\b', 'X', m)
    m = re.sub(r'[-+]?\d+(\.\d+)?', 'N', m)
    m = re.sub(r'\[[^\]]*\]', '[]', m)
    m = re.sub(r'\([^)]*\)', '()', m)
    return m[:160]


class Failure:
    def __init__(self, path, kind, detail, mism=None):
        self.path, self.kind, self.detail, self.mism = path, kind, detail, mism or []

    def signature(self):
        if self.kind == 'error':
            return (self.path, self.kind, err_class(self.detail))
        return (self.path, self.kind)

    def line(self):
        if self.kind == 'mismatch':
            return f'{self.path}: wrong result: ' + '; '.join(f'{n}: {what} {d}' for n, what, d, _ in self.mism[:3])
        return f'{self.path}: {self.kind}: {self.detail}'


def check(cfg, g, case_dir, paths, model=None, force=False):
    """Runs the reference and `paths`. Returns (('invalid', msg) | ('ok', []) | ('fail', [Failure])), seconds per run."""
    write_case(g, case_dir, model)
    ref = run_path(cfg, case_dir, 'reference', g.outputs)
    times = {'reference': ref.seconds}
    if ref.status != 'ok':
        return ('invalid', f'reference {ref.status}: {ref.msg}'), times
    fails = []
    for p in paths:
        if p != 'native' and not (cfg.all_runs or force) and not claims(cfg, case_dir, p):
            times.setdefault('unclaimed', []).append(p)
            continue
        r = run_path(cfg, case_dir, p, g.outputs)
        times[p] = r.seconds
        if r.status != 'ok':
            fails.append(Failure(p, r.status, r.msg))
            continue
        mm = compare(ref.outputs, r.outputs, g.outputs, g.precision())
        if mm:
            fails.append(Failure(p, 'mismatch', '', mm))
    return ('fail' if fails else 'ok', fails), times


# ------------------------------------------------------------------------------------------ shrinking
class Shrinker:
    """Greedy shrinking of a failing graph to a small subgraph failing the same way (same path and kind;
    errors: the same message up to numbers and names)."""

    def __init__(self, cfg, g, failure, work):
        self.cfg, self.best, self.failure, self.work = cfg, g, failure, work
        if failure.kind == 'hang':
            # a candidate still running after a third of the timeout (normal runs take about a
            # second) is taken as hanging the same way: shrinking a compile blow-up stays affordable
            self.cfg = argparse.Namespace(**vars(cfg))
            self.cfg.timeout = max(10.0, cfg.timeout / 3)
        self.sig = failure.signature()
        self.attempts = 0
        self.t0 = time.time()
        self.values = None  # reference values of every value of self.best
        self.rng = np.random.default_rng(12345)
        self.last = failure

    def out_of_budget(self):
        return time.time() - self.t0 > self.cfg.shrink_budget or self.attempts >= self.cfg.shrink_attempts

    def fails(self, g):
        if self.out_of_budget():
            return False
        self.attempts += 1
        g.prune()
        if not g.outputs or not g.nodes:
            return False
        d = os.path.join(self.work, 'try')
        shutil.rmtree(d, ignore_errors=True)
        try:
            m = g.to_onnx()
            onnx.checker.check_model(m)
        except Exception:
            return False
        (status, fails), _ = check(self.cfg, g, d, [self.sig[0]], m)
        if status != 'fail':
            return False
        for f in fails:
            if f.signature() == self.sig:
                self.last = f
                return True
        return False

    def dump_values(self):
        """Reference values of every node output of the current best graph (for exact cuts)."""
        g = self.best.copy()
        produced = [o for n in g.nodes for o in n.outputs if o]
        g.outputs = list(dict.fromkeys(produced))
        d = os.path.join(self.work, 'dump')
        shutil.rmtree(d, ignore_errors=True)
        write_case(g, d)
        r = run_path(self.cfg, d, 'reference', g.outputs)
        self.values = r.outputs if r.status == 'ok' else {}

    def cut(self, g, node_indices):
        """g with these nodes removed and their used outputs turned into graph inputs."""
        if self.values is None:
            self.dump_values()
        h = g.copy()
        drop = set(node_indices)
        used = set(h.outputs)
        for i, n in enumerate(h.nodes):
            if i not in drop:
                used.update(n.inputs)
        new_inputs = []
        for i in sorted(drop):
            for o in h.nodes[i].outputs:
                if o and o in used:
                    v = h.vals[o]
                    data = self.values.get(o)
                    if data is None or data.shape != v.shape:
                        data = gen.make_data(self.rng, v.shape, v.dtype, v.dom, v.mag, v.n)
                    h.vals[o] = gen.V(o, v.shape, v.dtype, 'input', v.dom, v.mag, True)
                    h.vals[o].lowp = getattr(v, 'lowp', False)
                    h.vals[o].loose = getattr(v, 'loose', False)
                    h.data[o] = data
                    new_inputs.append(o)
        h.nodes = [n for i, n in enumerate(h.nodes) if i not in drop]
        h.inputs = h.inputs + new_inputs
        return h

    def accept(self, g, values_changed=False):
        self.best = g
        if values_changed:
            self.values = None

    def run(self):
        g = self.best
        # 1. one failing output
        names = [n for n, *_ in self.failure.mism] if self.failure.kind == 'mismatch' else list(g.outputs)
        for n in names[:8]:
            if len(self.best.outputs) == 1:
                break
            h = self.best.copy()
            h.outputs = [n]
            if self.fails(h):
                self.accept(h)
                break
        changed = True
        while changed and not self.out_of_budget():
            changed = False
            # 2. cut a prefix of the nodes (binary search for the longest prefix that may go)
            n = len(self.best.nodes)
            lo, hi = 0, n - 1  # cut nodes [0, k) with k in [lo, hi]
            while lo < hi and not self.out_of_budget():
                k = (lo + hi + 1) // 2
                h = self.cut(self.best, range(k))
                if self.fails(h):
                    self.accept(h)
                    changed = True
                    n = len(self.best.nodes)
                    lo, hi = 0, n - 1
                else:
                    hi = k - 1
            # 3. one node at a time: cut it (it becomes an input), bypass it, or end the graph before it
            i = 0
            while i < len(self.best.nodes) and not self.out_of_budget():
                node = self.best.nodes[i]
                before = len(self.best.nodes)
                tried = False
                # end earlier: an output of this node's consumer chain replaced by this node's inputs
                if any(o in self.best.outputs for o in node.outputs):
                    for x in node.inputs:
                        if not x or x in self.best.params or x in self.best.inits:
                            continue
                        h = self.best.copy()
                        outs = []
                        for o in h.outputs:
                            outs += [x] if o in node.outputs else [o]
                        h.outputs = list(dict.fromkeys(outs))
                        tried = True
                        if self.fails(h):
                            self.accept(h)
                            changed = True
                            break
                if len(self.best.nodes) < before:
                    continue
                # bypass: uses of the output read an input of the same shape and dtype instead
                live = [o for o in node.outputs if o]
                if len(live) == 1:
                    o = live[0]
                    for x in node.inputs:
                        if not x or x in self.best.params:
                            continue
                        xv, ov = self.best.vals[x], self.best.vals[o]
                        if xv.shape != ov.shape or xv.dtype != ov.dtype:
                            continue
                        h = self.best.copy()
                        for nd in h.nodes:
                            nd.inputs = [x if y == o else y for y in nd.inputs]
                        h.outputs = list(dict.fromkeys(x if y == o else y for y in h.outputs))
                        if x in h.inits and x in h.outputs:
                            continue
                        h.nodes = [nd for nd in h.nodes if o not in nd.outputs]
                        if self.fails(h):
                            self.accept(h, values_changed=True)
                            changed = True
                            break
                if len(self.best.nodes) < before:
                    continue
                h = self.cut(self.best, [i])
                if self.fails(h):
                    self.accept(h)
                    changed = True
                    continue
                i += 1
            # 4. fewer outputs
            for o in list(self.best.outputs):
                if len(self.best.outputs) == 1 or self.out_of_budget():
                    break
                h = self.best.copy()
                h.outputs = [x for x in h.outputs if x != o]
                if self.fails(h):
                    self.accept(h)
                    changed = True
            # 5. weights -> inputs, so that the repro is all in the graph description (only if still failing)
        return self.best


# ------------------------------------------------------------------------------------------ cases
class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.cases = self.ok = self.invalid = self.failed = 0
        self.fail_by = {}
        self.invalid_msgs = {}
        self.reports = []
        self.shrunk = 0
        self.runs = 0
        self.run_seconds = {}
        self.run_count = {}
        self.unclaimed = {}
        self.slow = []


def repro_line(cfg, d):
    return f'{os.path.join(HERE, "run")} --binary {cfg.binary} --replay {d}'


def write_repro_sh(cfg, d, paths):
    lines = ['#!/bin/sh', '# Reference and failing paths on this model; outputs in out_<path>/ (compare with',
             f'# {os.path.join(HERE, "run")} --replay {d})', 'cd "$(dirname "$0")"']
    ins = [(n, f) for n, f in list_inputs(d)]
    for p in ['reference'] + list(paths):
        cmd = run_cmd(cfg.binary, 'model.onnx', [(n, os.path.relpath(f, d)) for n, f in ins], 'out_' + p, p, cfg.threads)
        lines.append('mkdir -p out_%s && %s' % (p, ' '.join(cmd)))
    with open(os.path.join(d, 'repro.sh'), 'w') as f:
        f.write('\n'.join(lines) + '\n')
    os.chmod(os.path.join(d, 'repro.sh'), 0o755)


def write_report(d, seed, fails, g, note=''):
    with open(os.path.join(d, 'report.txt'), 'w') as f:
        f.write(f'seed {seed}{note}\n')
        for fl in fails:
            f.write(fl.line() + '\n')
        f.write('\n' + g.describe() + '\n')


def run_case(cfg, seed, stats):
    g = gen.generate(seed, cfg.specials, cfg.max_ops)
    case_dir = os.path.join(cfg.keep, 'work', f'seed-{seed}')
    shutil.rmtree(case_dir, ignore_errors=True)
    m = g.to_onnx()
    try:
        onnx.checker.check_model(m)
        inferred = onnx.shape_inference.infer_shapes(m, check_type=True, strict_mode=True)
        want = {o.name: [d.dim_value for d in o.type.tensor_type.shape.dim] for o in m.graph.output}
        allv = {v.name: v for v in list(inferred.graph.value_info) + list(inferred.graph.output)}
        for n in g.outputs:
            v = allv.get(n)
            if v is not None and v.type.tensor_type.HasField('shape'):
                got = [d.dim_value if d.HasField('dim_value') else None for d in v.type.tensor_type.shape.dim]
                if None not in got and got != want[n]:
                    raise ValueError(f'generator shape {want[n]} of {n} but ONNX infers {got}')
    except Exception as e:  # a generator bug: counted with the invalid cases
        msg = ' '.join(str(e).split())[:300] if str(e) else type(e).__name__
        with stats.lock:
            stats.cases += 1
            stats.invalid += 1
            stats.invalid_msgs.setdefault('onnx: ' + err_class(msg), []).append(seed)
        if cfg.verbose:
            say(f'seed {seed}: invalid model: {msg}')
        return
    t_case = time.time()
    (status, info), times = check(cfg, g, case_dir, cfg.paths, m)
    with stats.lock:
        stats.cases += 1
        for p in times.pop('unclaimed', []):
            stats.unclaimed[p] = stats.unclaimed.get(p, 0) + 1
        for p, t in times.items():
            stats.run_seconds[p] = stats.run_seconds.get(p, 0.0) + t
            stats.run_count[p] = stats.run_count.get(p, 0) + 1
        slow = max(times.items(), key=lambda kv: kv[1])
        if slow[1] > 10:
            stats.slow.append((seed, slow[0], slow[1]))
    if status == 'invalid':
        with stats.lock:
            stats.invalid += 1
            stats.invalid_msgs.setdefault(err_class(info), []).append(seed)
        if cfg.verbose:
            say(f'seed {seed}: reference refused: {info}')
        if not cfg.keep_passing:
            shutil.rmtree(case_dir, ignore_errors=True)
        return
    if status == 'ok':
        with stats.lock:
            stats.ok += 1
        if cfg.verbose:
            say(f'seed {seed}: ok ({len(g.nodes)} nodes, {g.tags[0]}, {time.time() - t_case:.1f} s: ' +
                ', '.join(f'{p} {t:.1f}' for p, t in times.items()) + ')')
        if not cfg.keep_passing:
            shutil.rmtree(case_dir, ignore_errors=True)
        return
    fails = info
    keep_dir = os.path.join(cfg.keep, f'seed-{seed}')
    shutil.rmtree(keep_dir, ignore_errors=True)
    shutil.copytree(case_dir, keep_dir)
    shutil.rmtree(case_dir, ignore_errors=True)
    write_repro_sh(cfg, keep_dir, sorted(set(f.path for f in fails)))
    write_report(keep_dir, seed, fails, g)
    with stats.lock:
        stats.failed += 1
        for f in fails:
            stats.fail_by.setdefault((f.path, f.kind), []).append(seed)
        do_shrink = cfg.shrink and stats.shrunk < cfg.shrink_max
        if do_shrink:
            stats.shrunk += 1
    lines = [f'FAIL seed {seed} ({len(g.nodes)} nodes): ' + f.line() for f in fails]
    lines.append(f'  kept: {keep_dir}   repro: {repro_line(cfg, keep_dir)}')
    lines.append(f'  again: {os.path.join(HERE, "run")} --binary {cfg.binary} --seed {seed} --cases 1')
    say('\n'.join(lines))
    report = {'seed': seed, 'fails': [f.line() for f in fails], 'kept': keep_dir, 'nodes': len(g.nodes)}
    if do_shrink:
        done = set()
        smalls = []  # (shrunk graph, its dir) of this case, tried first on the other failures
        for f in fails:
            key = f.signature()
            if key in done:
                continue
            done.add(key)
            reused = False
            for small, sdir in smalls:
                # the same bug seen through another path: the shrunk graph may fail there too
                (status, fl), _ = check(cfg, small, os.path.join(cfg.keep, 'work', f'reuse-{seed}'), [f.path], force=True)
                if status == 'fail' and any(x.signature() == key for x in fl):
                    last = [x for x in fl if x.signature() == key][0]
                    say(f'  shrunk seed {seed} [{f.path} {f.kind}]: the shrunk graph of {sdir} fails the same way: '
                        f'{last.line()[:300]}')
                    report.setdefault('shrunk', []).append({'dir': sdir, 'path': f.path, 'kind': f.kind,
                                                            'fail': last.line(), 'graph': small.describe()})
                    with open(os.path.join(sdir, 'report.txt'), 'a') as fh:
                        fh.write(f'also: {last.line()}\n')
                    reused = True
                    break
            shutil.rmtree(os.path.join(cfg.keep, 'work', f'reuse-{seed}'), ignore_errors=True)
            if reused:
                continue
            sh_dir = os.path.join(keep_dir, 'shrunk' if len(done) == 1 else f'shrunk-{f.path}-{f.kind}')
            work = os.path.join(cfg.keep, 'work', f'shrink-{seed}-{len(done)}')
            s = Shrinker(cfg, g.copy(), f, work)
            small = s.run()
            shutil.rmtree(sh_dir, ignore_errors=True)
            write_case(small, sh_dir)
            write_repro_sh(cfg, sh_dir, [f.path])
            write_report(sh_dir, seed, [s.last], small, f' (shrunk from {len(g.nodes)} to {len(small.nodes)} nodes, '
                                                        f'{s.attempts} attempts, {time.time() - s.t0:.0f} s)')
            shutil.rmtree(work, ignore_errors=True)
            smalls.append((small, sh_dir))
            desc = small.describe()
            say(f'  shrunk seed {seed} [{f.path} {f.kind}] to {len(small.nodes)} nodes ({s.attempts} tries): '
                f'{s.last.line()[:300]}\n    ' + desc.replace('\n', '\n    ') +
                f'\n    repro: {repro_line(cfg, sh_dir)}')
            report.setdefault('shrunk', []).append({'dir': sh_dir, 'path': f.path, 'kind': f.kind,
                                                    'fail': s.last.line(), 'graph': desc})
    with stats.lock:
        stats.reports.append(report)


def replay(cfg, d):
    names = json.load(open(os.path.join(d, 'outputs.json')))
    paths = cfg.paths
    ref = run_path(cfg, d, 'reference', names)
    if ref.status != 'ok':
        say(f'reference {ref.status}: {ref.msg}')
        return 2
    bad = 0
    for p in paths:
        r = run_path(cfg, d, p, names)
        if r.status != 'ok':
            say(f'{p}: {r.status}: {r.msg}')
            bad += 1
            continue
        pf = os.path.join(d, 'precision.json')
        mm = compare(ref.outputs, r.outputs, names, json.load(open(pf)) if os.path.exists(pf) else None)
        if mm:
            bad += 1
            for n, what, det, _ in mm:
                say(f'{p}: {n}: {what}: {det}')
        else:
            say(f'{p}: matches the reference')
    return 1 if bad else 0


def detect_backends(binary):
    try:
        p = subprocess.run([binary, 'backends', '--json'], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        return [b['name'] for b in json.loads(p.stdout)]
    except Exception as e:
        sys.exit(f'run: cannot list the backends of {binary}: {e}')


def default_binary():
    for c in [os.path.join(HERE, '..', '..', 'build', 'bin', 'switchyard')]:
        if os.path.exists(c):
            return os.path.abspath(c)
    return shutil.which('switchyard') or 'switchyard'


def main(argv=None):
    ap = argparse.ArgumentParser(prog='tests/diff/run', description=__doc__.splitlines()[0])
    ap.add_argument('--seed', type=int, default=0, help='first case seed (cases are seeds S, S+1, ...)')
    ap.add_argument('--cases', type=int, default=100, help='number of cases')
    ap.add_argument('--seeds', default=None, help='comma-separated case seeds to run (instead of --seed/--cases)')
    ap.add_argument('--binary', default=None, help='the switchyard program (default: build/bin/switchyard)')
    ap.add_argument('--keep', default=None, help='where failing cases (and shrunk ones) are kept '
                    '(default: a new directory under build/diff-<time>)')
    ap.add_argument('--jobs', type=int, default=1, help='cases run in parallel')
    ap.add_argument('--paths', default=None, help='comma-separated paths to compare with the reference: native, '
                    'backend names, and measured-BACKEND (its regions placed by measurement: kept, split or '
                    'native) (default: native and every backend the binary lists)')
    ap.add_argument('--threads', type=int, default=1, help='executor threads of each run (default 1)')
    ap.add_argument('--timeout', type=float, default=60, help='seconds a run may take before it counts as a hang')
    ap.add_argument('--no-shrink', dest='shrink', action='store_false', help='keep failing cases unshrunk')
    ap.add_argument('--shrink-budget', type=float, default=240, help='seconds spent shrinking one failure')
    ap.add_argument('--shrink-attempts', type=int, default=200, help='candidate graphs tried per failure')
    ap.add_argument('--shrink-max', type=int, default=30, help='failing cases shrunk per run (later ones are kept whole)')
    ap.add_argument('--specials', action='store_true', help='put NaN, +-inf and -0.0 into some elements of some '
                    'float inputs (where semantics are less settled: expect findings to need judgement)')
    ap.add_argument('--max-ops', type=int, default=16, help='op choices per case: 3..N (default 16; '
                    'other values give other graphs for the same seed)')
    ap.add_argument('--all-runs', action='store_true', help='run every backend even on cases where it claims no region')
    ap.add_argument('--keep-passing', action='store_true', help='also keep the cases that pass')
    ap.add_argument('--replay', default=None, help='run a kept case directory (model.onnx, inputs/) on the paths')
    ap.add_argument('--print', dest='print_only', action='store_true', help='print the generated graphs, run nothing')
    ap.add_argument('--save', default=None, help='write the generated models to this directory, run nothing')
    ap.add_argument('--summary-json', default=None, help='write a JSON summary of the run here')
    ap.add_argument('-v', '--verbose', action='store_true', help='one line per case')
    cfg = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)

    seeds = [int(x) for x in cfg.seeds.split(',')] if cfg.seeds else list(range(cfg.seed, cfg.seed + cfg.cases))
    cfg.cases = len(seeds)
    if cfg.print_only or cfg.save:
        for s in seeds:
            g = gen.generate(s, cfg.specials, cfg.max_ops)
            if cfg.save:
                write_case(g, os.path.join(cfg.save, f'seed-{s}'))
            if cfg.print_only:
                print(f'# seed {s} ({g.tags[0]}, {len(g.nodes)} nodes)\n{g.describe()}\n')
        return 0

    cfg.binary = os.path.abspath(cfg.binary) if cfg.binary else default_binary()
    if not os.path.exists(cfg.binary):
        sys.exit(f'run: no switchyard binary at {cfg.binary} (build it, or pass --binary)')
    backends = detect_backends(cfg.binary)
    cfg.paths = cfg.paths.split(',') if cfg.paths else ['native'] + backends
    for p in cfg.paths:
        if p not in ['native'] + backends and not (
                p.startswith(MEASURED) and all(b in backends for b in path_backend(p).split('+'))):
            sys.exit(f"run: unknown path '{p}' (native, {', '.join(backends)}, measured-BACKEND[+BACKEND...])")
    cfg.env = dict(os.environ)
    cfg.env.setdefault('OMP_NUM_THREADS', str(cfg.threads))
    if cfg.replay:  # runs in the case directory itself (out_<path>/); nothing else is written
        return replay(cfg, os.path.abspath(cfg.replay))
    if cfg.keep is None:
        base = os.path.join(HERE, '..', '..', 'build')
        base = base if os.path.isdir(base) else tempfile.gettempdir()
        cfg.keep = tempfile.mkdtemp(prefix='diff-' + time.strftime('%Y%m%d-%H%M%S-'), dir=os.path.abspath(base))
    cfg.keep = os.path.abspath(cfg.keep)
    os.makedirs(cfg.keep, exist_ok=True)
    # results of an earlier run in the same directory would mix with this one's
    for old in os.listdir(cfg.keep):
        if old.startswith('seed-') or old == 'work':
            shutil.rmtree(os.path.join(cfg.keep, old), ignore_errors=True)
        elif old == 'summary.json':
            os.remove(os.path.join(cfg.keep, old))
    if not cfg.env.get('SWITCHYARD_CACHE_DIR'):
        cfg.env['SWITCHYARD_CACHE_DIR'] = os.path.join(cfg.keep, 'cache')

    stats = Stats()
    say(f'diff: {len(seeds)} cases (seeds {seeds[0]}..{seeds[-1]}), paths: reference vs {", ".join(cfg.paths)}; '
        f'binary {cfg.binary}; kept in {cfg.keep}')
    t0 = time.time()
    last_note = [t0]

    def one(s):
        try:
            run_case(cfg, s, stats)
        except Exception as e:  # a driver bug must not hide the rest of the run
            import traceback
            say(f'seed {s}: driver error: {e}\n{traceback.format_exc()}')
            with stats.lock:
                stats.failed += 1
                stats.fail_by.setdefault(('driver', 'error'), []).append(s)
        if time.time() - last_note[0] > 30 and not cfg.verbose:
            last_note[0] = time.time()
            say(f'  ... {stats.cases}/{cfg.cases} cases, {stats.failed} failing, {stats.invalid} invalid, '
                f'{stats.cases / (time.time() - t0):.2f} cases/s')

    if cfg.jobs <= 1:
        for s in seeds:
            one(s)
    else:
        with ThreadPoolExecutor(cfg.jobs) as ex:
            list(ex.map(one, seeds))
    dt = time.time() - t0
    shutil.rmtree(os.path.join(cfg.keep, 'work'), ignore_errors=True)
    say(f'\ndiff: {stats.cases} cases in {dt:.0f} s ({stats.cases / max(dt, 1e-9):.2f} cases/s, jobs {cfg.jobs}): '
        f'{stats.ok} agree, {stats.failed} failing, {stats.invalid} refused by the reference (generator problems)')
    for (p, k), ss in sorted(stats.fail_by.items()):
        say(f'  {p} {k}: {len(ss)} cases, seeds {" ".join(map(str, ss[:12]))}{" ..." if len(ss) > 12 else ""}')
    say('  runs per path (total seconds): ' + ', '.join(f'{p} {stats.run_count[p]} ({t:.0f} s)' for p, t in stats.run_seconds.items()) +
        ''.join(f'; {p} claimed nothing in {n} cases (not run)' for p, n in stats.unclaimed.items()))
    if stats.slow:
        say('  slow runs (> 10 s): ' + ', '.join(f'seed {s} {p} {t:.0f} s' for s, p, t in stats.slow[:10]))
    for m, ss in sorted(stats.invalid_msgs.items(), key=lambda kv: -len(kv[1])):
        say(f'  invalid ({len(ss)}): {m}  seeds {" ".join(map(str, ss[:6]))}')
    if stats.failed:
        say(f'failing cases kept in {cfg.keep}')
    summary_json = cfg.summary_json or os.path.join(cfg.keep, 'summary.json')
    if summary_json:
        json.dump({'cases': stats.cases, 'ok': stats.ok, 'failed': stats.failed, 'invalid': stats.invalid,
                   'seconds': dt, 'fail_by': {f'{p} {k}': v for (p, k), v in stats.fail_by.items()},
                   'invalid_msgs': stats.invalid_msgs, 'reports': stats.reports},
                  open(summary_json, 'w'), indent=1)
    return 1 if stats.failed else 0
