"""Seeded generator of random, valid ONNX graphs for differential testing.

A case is a function of one integer seed: `generate(seed)` returns a Graph (the generator's own
small representation: values with static shapes, dtypes and value facts, nodes, initializers, input
data) that `Graph.to_onnx()` turns into a model. The shrinker in driver.py edits Graphs, so every
node output carries what is needed to replace it by a graph input (shape, dtype, domain).

Value facts used to keep graphs valid and comparisons meaningful:
  dom      'any' | 'nonneg' | 'pos' (>= 0.5) | 'ge1' (>= 1.1) | 'unit' (|x| <= 0.9) | 'idx' (ints in [-n, n))
  mag      an upper bound of |x| (keeps Exp, Pow, products and int arithmetic finite)
  exact    computed only by ops every path must compute bit-exactly (data movement, min/max, abs...),
           so discontinuous ops (Floor, comparisons, ArgMax, Cast to int) may consume it
  distinct values are pairwise distinct (TopK indices are then unambiguous)
"""
import copy
import math
import random

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
MAX_NUMEL = 10000
F32, F64, I32, I64, BOOL = 'float32', 'float64', 'int32', 'int64', 'bool'
I8, U8, I16 = 'int8', 'uint8', 'int16'
ONNX_TYPE = {F32: TensorProto.FLOAT, F64: TensorProto.DOUBLE, I32: TensorProto.INT32, I64: TensorProto.INT64,
             BOOL: TensorProto.BOOL, I8: TensorProto.INT8, U8: TensorProto.UINT8, I16: TensorProto.INT16}
FLOATS = (F32, F64)
INTS = (I32, I64, I8, U8, I16)
INT_LIMIT = {I8: 100, U8: 200, I16: 30000, I32: 1 << 30, I64: 1 << 40}
BIG = 1 << 62  # "to the end" in Slice


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def broadcast(*shapes):
    r = max(len(s) for s in shapes)
    out = []
    for i in range(r):
        dims = [s[len(s) - r + i] for s in shapes if len(s) - r + i >= 0]
        e = max(dims)
        if any(d != 1 and d != e for d in dims):
            return None
        out.append(e)
    return tuple(out)


class V:
    """A value: a graph input, an initializer, or a node output."""

    def __init__(self, name, shape, dtype, kind, dom='any', mag=1.0, exact=False, distinct=False, n=0):
        self.name, self.shape, self.dtype, self.kind = name, tuple(shape), dtype, kind
        self.dom, self.mag, self.exact, self.distinct, self.n = dom, float(mag), exact, distinct, n
        self.lowp = False  # a float64 value computed (inexactly) through float32: compared at float32 tolerance
        self.loose = False  # computed by an ill-conditioned formula of the spec (MVN's E[x^2] - E[x]^2)

    @property
    def rank(self):
        return len(self.shape)

    @property
    def numel(self):
        return numel(self.shape)


class Node:
    def __init__(self, op, inputs, outputs, attrs):
        self.op, self.inputs, self.outputs, self.attrs = op, list(inputs), list(outputs), dict(attrs)


def make_data(rng, shape, dtype, dom, mag=1.0, n=0, quantize=False):
    """Random data of a value with these facts (also used for inputs the shrinker creates)."""
    shape = tuple(shape)
    if dtype == BOOL:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype in INTS:
        if dom == 'idx':
            return rng.integers(-n, n, size=shape).astype(dtype)
        b = int(max(1, min(mag, 10)))
        lo = {'pos': 1, 'nonneg': 0}.get(dom, 0 if dtype == U8 else -b)
        return rng.integers(lo, b + 1, size=shape).astype(dtype)
    lo, hi = {'pos': (0.5, 1.5), 'ge1': (1.1, 2.1), 'nonneg': (0.0, 1.0), 'unit': (-0.9, 0.9)}.get(dom, (-1.0, 1.0))
    if dom == 'any' and mag < 1:
        lo, hi = -mag, mag
    x = rng.uniform(lo, hi, size=shape)
    if quantize:  # exact halves: ties for Round, equal elements for comparisons and ArgMax
        x = np.clip(np.round(x * 2) / 2, lo, hi)
    return x.astype(dtype)


class Graph:
    def __init__(self):
        self.inputs = []      # names of graph inputs, in order
        self.data = {}        # graph input name -> np.ndarray
        self.inits = {}       # initializer name -> np.ndarray
        self.params = set()   # initializers that are op parameters (shapes, axes, pads ...), never cut
        self.nodes = []
        self.outputs = []
        self.vals = {}        # name -> V
        self.opset = OPSET
        self.seed = None
        self.tags = []        # what the generator aimed at (for statistics only)

    def copy(self):
        g = Graph()
        g.inputs = list(self.inputs)
        g.data = dict(self.data)
        g.inits = dict(self.inits)
        g.params = set(self.params)
        g.nodes = [Node(n.op, n.inputs, n.outputs, n.attrs) for n in self.nodes]
        g.outputs = list(self.outputs)
        g.vals = {k: copy.copy(v) for k, v in self.vals.items()}
        g.opset, g.seed, g.tags = self.opset, self.seed, list(self.tags)
        return g

    def producer(self):
        p = {}
        for i, n in enumerate(self.nodes):
            for o in n.outputs:
                if o:
                    p[o] = i
        return p

    def consumers(self):
        c = {}
        for i, n in enumerate(self.nodes):
            for x in n.inputs:
                if x:
                    c.setdefault(x, []).append(i)
        return c

    def prune(self):
        """Drops nodes, inputs and initializers no output depends on."""
        live = set(self.outputs)
        keep = [False] * len(self.nodes)
        for i in range(len(self.nodes) - 1, -1, -1):
            n = self.nodes[i]
            if any(o in live for o in n.outputs if o):
                keep[i] = True
                live.update(x for x in n.inputs if x)
        self.nodes = [n for i, n in enumerate(self.nodes) if keep[i]]
        # Outputs of kept multi-output nodes that nothing uses are left unnamed.
        for n in self.nodes:
            if len(n.outputs) > 1:
                for k, o in enumerate(n.outputs):
                    pass
        self.inputs = [x for x in self.inputs if x in live]
        self.data = {k: v for k, v in self.data.items() if k in live}
        self.inits = {k: v for k, v in self.inits.items() if k in live}
        self.params &= set(self.inits)

    def to_onnx(self):
        def vi(name):
            v = self.vals[name]
            return helper.make_tensor_value_info(name, ONNX_TYPE[v.dtype], list(v.shape))
        nodes = [helper.make_node(n.op, n.inputs, n.outputs, name=f'n{i}_{n.op}', **n.attrs)
                 for i, n in enumerate(self.nodes)]
        inits = [numpy_helper.from_array(np.asarray(a), k) for k, a in self.inits.items()]
        g = helper.make_graph(nodes, f'diff_{self.seed}', [vi(x) for x in self.inputs],
                              [vi(x) for x in self.outputs], inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid('', self.opset)],
                              producer_name='switchyard-diff')
        m.ir_version = 8
        return m

    def precision(self):
        """Output name -> the dtype whose tolerance applies."""
        p = {}
        for o in self.outputs:
            v = self.vals[o]
            p[o] = F32 if v.dtype == F64 and getattr(v, 'lowp', False) else v.dtype
            if getattr(v, 'loose', False) and v.dtype in FLOATS:
                p[o] = 'loose'
        return p

    def describe(self):
        lines = []
        for x in self.inputs:
            v = self.vals[x]
            lines.append(f'input {x}: {v.dtype}{list(v.shape)}')
        for k, a in self.inits.items():
            if k not in self.params:
                lines.append(f'weight {k}: {a.dtype}{list(a.shape)}')
        for n in self.nodes:
            ins = []
            for x in n.inputs:
                if x in self.params or (x in self.inits and self.inits[x].size == 1):
                    a = self.inits[x]
                    ins.append(str(a.tolist()) if x in self.params else f'{x}={a.tolist()}')
                elif x:
                    ins.append(f'{x}{list(self.vals[x].shape)}')
                else:
                    ins.append("''")
            attrs = ''.join(f' {k}={v}' for k, v in n.attrs.items())
            outs = ', '.join(f'{o}{list(self.vals[o].shape)}' if o else "''" for o in n.outputs)
            lines.append(f'{outs} = {n.op}({", ".join(ins)}){attrs}')
        lines.append('outputs: ' + ', '.join(self.outputs))
        return '\n'.join(lines)


# Extents that break vector and tile loops: primes, odd, 1, one off powers of two.
EXTENTS = [1, 1, 1, 2, 3, 4, 5, 6, 7, 7, 8, 9, 9, 11, 12, 13, 15, 15, 16, 17, 17, 18, 20, 23, 24, 31, 32, 33]
SMALL = [1, 1, 2, 3, 4, 5, 7, 8, 9]


class Gen:
    def __init__(self, seed, max_ops=16):
        self.seed = seed
        self.max_ops = max_ops
        self.r = random.Random(seed)
        self.np = np.random.default_rng(seed & 0xFFFFFFFF)
        self.g = Graph()
        self.g.seed = seed
        self.pool = []          # dataflow values that later ops may consume
        self.counter = 0
        self.consts = {}        # (dtype, value) -> shared scalar initializer
        self.quantize = self.r.random() < 0.25
        self.max_numel = self.r.choice([2000, 4000, MAX_NUMEL, MAX_NUMEL])
        self.fdt = F64 if self.r.random() < 0.1 else F32  # the float type of the inputs and weights

    # ---------------------------------------------------------------- naming and values
    def name(self, p):
        self.counter += 1
        return f'{p}{self.counter}'

    def add_val(self, v, pool=True):
        self.g.vals[v.name] = v
        if pool:
            self.pool.append(v.name)
        return v

    def val(self, name):
        return self.g.vals[name]

    def input(self, shape, dtype=None, dom='any', mag=None, n=0):
        dtype = dtype or self.fdt
        if mag is None:
            mag = {'pos': 1.5, 'ge1': 2.1, 'unit': 0.9}.get(dom, 1.0) if dtype in FLOATS else 10
        v = V(self.name('in'), shape, dtype, 'input', dom, mag, exact=True,
              distinct=dtype in FLOATS and not self.quantize, n=n)
        self.g.inputs.append(v.name)
        self.g.data[v.name] = make_data(self.np, shape, dtype, dom, mag, n, self.quantize and dtype in FLOATS)
        return self.add_val(v)

    def weight(self, shape, dtype=None, dom='any', scale=1.0, pool=False):
        """A dataflow initializer (a weight); shared with earlier consumers now and then."""
        dtype = dtype or self.fdt
        if self.r.random() < 0.3:
            for k, a in self.g.inits.items():
                if k not in self.g.params and tuple(a.shape) == tuple(shape) and str(a.dtype) == dtype \
                        and self.val(k).dom == dom:
                    return self.val(k)
        a = make_data(self.np, shape, dtype, dom)
        if dtype in FLOATS:
            a = (a * scale).astype(dtype)
        mag = float(np.max(np.abs(a))) if a.size else 0.0
        v = V(self.name('w'), shape, dtype, 'init', dom, max(mag, 1e-3), exact=True, distinct=False)
        self.g.inits[v.name] = a
        return self.add_val(v, pool=pool)

    def param(self, values, dtype=I64):
        """A constant operand that is an op parameter (shape, axes, pads, ...), as an initializer."""
        a = np.array(values, dtype=dtype)
        name = self.name('c')
        self.g.inits[name] = a
        self.g.params.add(name)
        self.g.vals[name] = V(name, a.shape, dtype, 'param', exact=True)
        return name

    def scalar(self, value, dtype=F32, shape=()):
        key = (dtype, float(value), tuple(shape))
        if key in self.consts and self.r.random() < 0.7:
            return self.val(self.consts[key])
        a = np.full(shape, value, dtype=dtype)
        name = self.name('k')
        self.g.inits[name] = a
        v = V(name, shape, dtype, 'init', 'pos' if value >= 0.5 else 'any', abs(value), exact=True)
        self.consts[key] = name
        return self.add_val(v, pool=False)

    def node(self, op, inputs, outs, **attrs):
        """outs: list of V (already named) or None for an unused optional output."""
        names = [o.name if o is not None else '' for o in outs]
        ins = [x if isinstance(x, str) else x.name for x in inputs]
        self.g.nodes.append(Node(op, ins, names, attrs))
        src = [self.val(x) for x in ins if x]
        lowp = any(v.lowp or (v.dtype == F32 and not v.exact) for v in src)
        loose = op == 'MeanVarianceNormalization' or any(getattr(v, 'loose', False) for v in src)
        for o in outs:
            if o is not None:
                o.lowp = lowp
                o.loose = loose
                self.add_val(o)
        return outs[0] if len(outs) == 1 else outs

    def out(self, shape, dtype, dom='any', mag=1.0, exact=False, distinct=False, n=0):
        return V(self.name('v'), shape, dtype, 'node', dom, mag, exact, distinct, n)

    # ---------------------------------------------------------------- shapes
    def extent(self, small=False):
        return self.r.choice(SMALL if small else EXTENTS)

    def shape(self, rank=None, limit=None):
        limit = limit or self.max_numel
        if rank is None:
            rank = self.r.choice([1, 2, 2, 3, 3, 3, 4, 4, 5])
        s = [self.extent(small=rank >= 4 and self.r.random() < 0.5) for _ in range(rank)]
        while numel(s) > limit:
            i = max(range(rank), key=lambda k: s[k])
            s[i] = max(1, s[i] // 2)
        return tuple(s)

    def factor(self, n, rank):
        """A random shape of `rank` with `n` elements."""
        f = []
        m, p = n, 2
        while p * p <= m:
            while m % p == 0:
                f.append(p)
                m //= p
            p += 1
        if m > 1:
            f.append(m)
        dims = [1] * rank
        for p in f:
            dims[self.r.randrange(rank)] *= p
        self.r.shuffle(dims)
        return tuple(dims)

    # ---------------------------------------------------------------- picking operands
    def pick(self, pred=lambda v: True, recent=True):
        cands = [x for x in self.pool if pred(self.val(x))]
        if not cands:
            return None
        if recent and self.r.random() < 0.7:
            return self.val(cands[-1] if self.r.random() < 0.6 else self.r.choice(cands[-3:]))
        return self.val(self.r.choice(cands))

    def pick_float(self, pred=lambda v: True):
        return self.pick(lambda v: v.dtype in FLOATS and pred(v))

    def fresh(self, shape, dtype=None, dom='any', const_p=0.4):
        if self.r.random() < const_p:
            return self.weight(shape, dtype, dom)
        return self.input(shape, dtype, dom)

    def operand(self, shape, dtype, dom='any'):
        """A value of exactly this shape: an existing one (reuse) or a fresh leaf."""
        if self.r.random() < 0.4:
            v = self.pick(lambda v: v.shape == tuple(shape) and v.dtype == dtype and dom_ok(v, dom), recent=False)
            if v is not None:
                return v
        return self.fresh(shape, dtype, dom)

    def partner_shape(self, out, base, cover=True):
        """A shape that broadcasts with `base` to `out` (when cover, it supplies what base lacks)."""
        r = len(out)
        need = [False] * r
        for i in range(r):
            j = i - (r - len(base))
            if j < 0 or base[j] != out[i]:
                need[i] = cover
        k_min = r - next((i for i in range(r) if need[i]), r)
        k = self.r.randint(k_min, r) if self.r.random() < 0.5 else r
        if k == 0 and self.r.random() < 0.7:
            k = min(r, 1)
        s = []
        for i in range(r - k, r):
            if need[i] or self.r.random() > 0.35:
                s.append(out[i])
            else:
                s.append(1)
        return tuple(s)

    def out_shape_for(self, base):
        """The broadcast result of a binary op on `base`: base itself, or wider."""
        u = self.r.random()
        s = list(base)
        if u < 0.6 or not base:
            return tuple(s)
        if u < 0.8 and 1 in s:
            for i, d in enumerate(s):
                if d == 1 and self.r.random() < 0.6:
                    s[i] = self.r.choice([2, 3, 4, 5, 7, 8])
        elif len(s) < 5:
            s = [self.r.choice([2, 3, 5])] + s
        if numel(s) > self.max_numel:
            return tuple(base)
        return tuple(s)

    def partner(self, out, base, dtype, dom='any', cover=True):
        s = self.partner_shape(out, base, cover)
        if self.r.random() < 0.3:
            # an existing value that broadcasts into `out` without widening it
            v = self.pick(lambda v: v.dtype == dtype and dom_ok(v, dom) and broadcast(v.shape, out) == tuple(out),
                          recent=False)
            if v is not None:
                return v
        return self.operand(s, dtype, dom)

    # ---------------------------------------------------------------- domains
    def ensure(self, x, dom):
        if dom_ok(x, dom):
            return x
        if x.dtype in INTS:
            if dom in ('pos', 'nonneg'):
                a = self.node('Abs', [x], [self.out(x.shape, x.dtype, 'nonneg', x.mag, x.exact)])
                if dom == 'nonneg':
                    return a
                return self.node('Add', [a, self.scalar(1, x.dtype)], [self.out(x.shape, x.dtype, 'pos', x.mag + 1, x.exact)])
            return x
        dt = x.dtype
        if dom == 'nonneg':
            op = self.r.choice(['Abs', 'Relu', 'Sq'])
            if op == 'Sq':
                return self.node('Mul', [x, x], [self.out(x.shape, dt, 'nonneg', x.mag * x.mag)])
            return self.node(op, [x], [self.out(x.shape, dt, 'nonneg', x.mag, x.exact)])
        if dom in ('pos', 'ge1'):
            c = 1.1 if dom == 'ge1' else self.r.choice([0.5, 0.75, 1.0])
            if self.r.random() < 0.3 and dom == 'pos':
                s = self.node('Sigmoid', [x], [self.out(x.shape, dt, 'nonneg', 1.0)])
            else:
                s = self.node('Abs', [x], [self.out(x.shape, dt, 'nonneg', x.mag, x.exact)])
            return self.node('Add', [s, self.scalar(c, dt)], [self.out(x.shape, dt, dom, s.mag + c)])
        if dom == 'unit':
            if self.r.random() < 0.5:
                return self.node('Clip', [x, self.scalar(-0.9, dt), self.scalar(0.9, dt)],
                                 [self.out(x.shape, dt, 'unit', min(x.mag, 0.9), x.exact, x.distinct)])
            t = self.node('Tanh', [x], [self.out(x.shape, dt, 'any', 1.0)])
            return self.node('Mul', [t, self.scalar(0.9, dt)], [self.out(x.shape, dt, 'unit', 0.9)])
        return x

    def bounded(self, x, limit):
        """x, or a clipped copy when its magnitude bound exceeds `limit`."""
        if x.mag <= limit:
            return x
        if x.dtype in FLOATS:
            return self.node('Clip', [x, self.scalar(-limit, x.dtype), self.scalar(limit, x.dtype)],
                             [self.out(x.shape, x.dtype, 'any', limit, x.exact)])
        return self.node('Clip', [x, self.scalar(-limit, x.dtype), self.scalar(limit, x.dtype)],
                         [self.out(x.shape, x.dtype, 'any', limit, x.exact)])

    def as_rank(self, x, lo, hi):
        """x reshaped (if needed) to a rank in [lo, hi]."""
        if lo <= x.rank <= hi:
            return x
        rank = self.r.randint(lo, hi)
        return self.reshape_to(x, self.factor(x.numel, rank))

    def reshape_to(self, x, shape):
        return self.node('Reshape', [x, self.param(list(shape))], [self.out(shape, x.dtype, x.dom, x.mag, x.exact, x.distinct, x.n)])

    # ---------------------------------------------------------------- generation
    def run(self):
        themes = ['elementwise', 'injective', 'mixed', 'conv', 'dense', 'reduce', 'int']
        w = [3, 4, 4, 3, 3, 2, 1]
        self.theme = self.r.choices(themes, w)[0]
        self.g.tags.append(self.theme)
        n_in = self.r.choice([1, 1, 2, 2, 3])
        for _ in range(n_in):
            if self.theme == 'conv':
                shp = (self.r.choice([1, 1, 2]), self.r.choice([1, 2, 3, 4, 6, 8, 12, 16]), self.extent(), self.extent())
                if self.r.random() < 0.2:
                    shp = shp[:3]
                while numel(shp) > 4000:
                    shp = shp[:2] + tuple(max(1, d // 2) for d in shp[2:])
                self.input(shp)
            elif self.theme == 'dense':
                self.input(self.shape(self.r.choice([2, 2, 3]), limit=3000))
            elif self.theme == 'int':
                self.input(self.shape(), self.r.choice([I32, I64, I64]))
            else:
                self.input(self.shape())
        n_ops = self.r.randint(min(3, self.max_ops), self.max_ops)
        fams = FAMILY_WEIGHTS[self.theme]
        names = list(fams)
        weights = [fams[k] for k in names]
        made = 0
        tries = 0
        while made < n_ops and tries < n_ops * 6:
            tries += 1
            fam = self.r.choices(names, weights)[0]
            before = len(self.g.nodes)
            ok = getattr(self, 'f_' + fam)()
            if ok is not False and len(self.g.nodes) > before:
                made += 1
                self.g.tags.append(fam)
        self.finish()
        return self.g

    def finish(self):
        g = self.g
        used = set()
        for n in g.nodes:
            used.update(n.inputs)
        produced = [o for n in g.nodes for o in n.outputs if o]
        outs = [o for o in produced if o not in used]
        # a few intermediate values as extra outputs: nodes with several consumers
        inter = [o for o in produced if o in used]
        for o in inter:
            if self.r.random() < 0.12:
                outs.append(o)
        if not outs and produced:
            outs.append(produced[-1])
        if not produced or self.r.random() < 0.02:
            outs.append(g.inputs[0])  # an input passed straight through
        order = {o: i for i, o in enumerate(produced)}
        g.outputs = sorted(set(outs), key=lambda o: order.get(o, -1))
        g.prune()

    # ================================================================ op families
    def f_unary(self):
        op = self.r.choice(UNARY_OPS)
        x = self.pick_float(lambda v: v.exact) if op in ('Floor', 'Ceil', 'Round', 'Sign') else None
        x = x if x is not None else self.pick_float()
        if x is None:
            return False
        dt = x.dtype
        if op == 'Celu' and x.dtype != F32:
            op = 'Elu'  # ONNX Celu takes float32 only
        if op in ('Floor', 'Ceil', 'Round', 'Sign') and not x.exact:
            op = self.r.choice(['Relu', 'Abs', 'Neg'])
        if op in ('IsNaN', 'IsInf'):
            attrs = {}
            if op == 'IsInf' and self.r.random() < 0.3:
                attrs = {'detect_negative': self.r.randint(0, 1)}
            return self.node(op, [x], [self.out(x.shape, BOOL, exact=True)], **attrs)
        if op in ('Exp', 'Sinh', 'Cosh'):
            x = self.bounded(x, 8.0)
            return self.node(op, [x], [self.out(x.shape, dt, 'pos' if op != 'Sinh' else 'any', math.exp(x.mag) + 1)])
        if op == 'Log':
            x = self.ensure(x, 'pos')
            return self.node(op, [x], [self.out(x.shape, dt, 'any', max(0.7, math.log(max(x.mag, 1.0))))])
        if op == 'Sqrt':
            x = self.ensure(x, self.r.choice(['nonneg', 'pos']))
            return self.node(op, [x], [self.out(x.shape, dt, 'nonneg', math.sqrt(x.mag) + 1e-3)])
        if op == 'Reciprocal':
            x = self.ensure(x, 'pos')
            y = self.node(op, [x], [self.out(x.shape, dt, 'pos' if x.mag <= 2 else 'nonneg', 2.0)])
            return y
        if op in ('Asin', 'Acos', 'Atanh', 'Tan'):
            x = self.ensure(x, 'unit')
            return self.node(op, [x], [self.out(x.shape, dt, 'any', 3.2)])
        if op == 'Acosh':
            x = self.ensure(x, 'ge1')
            return self.node(op, [x], [self.out(x.shape, dt, 'nonneg', math.acosh(max(x.mag, 1.1)) + 1)])
        if op == 'Clip':
            lo = self.r.choice([-1.0, -0.5, 0.0, None])
            hi = self.r.choice([0.5, 1.0, 6.0, None])
            ins = [x, self.scalar(lo, dt) if lo is not None else '', self.scalar(hi, dt) if hi is not None else '']
            while ins and ins[-1] == '':
                ins.pop()
            return self.node('Clip', ins, [self.out(x.shape, dt, 'any', x.mag, x.exact, False)])
        attrs = {}
        mag = x.mag
        exact = False
        dom = 'any'
        if op in ('Neg', 'Abs', 'Relu', 'Identity', 'Floor', 'Ceil', 'Round', 'Sign', 'Dropout'):
            exact = x.exact
            mag = x.mag + (1 if op in ('Floor', 'Ceil', 'Round', 'Sign') else 0)
            dom = 'nonneg' if op in ('Abs', 'Relu') else ('any' if op != 'Identity' and op != 'Dropout' else x.dom)
        elif op in ('Sin', 'Cos', 'Tanh', 'Sigmoid', 'Erf', 'Softsign', 'Atan', 'HardSigmoid'):
            mag = 1.6
        elif op == 'Softplus':
            x = self.bounded(x, 30.0)
            mag = x.mag + 0.7
        elif op in ('LeakyRelu', 'Elu', 'Celu', 'ThresholdedRelu', 'Selu', 'Shrink'):
            alpha = self.r.choice([0.01, 0.1, 0.5, 1.0, 1.5])
            if op == 'Selu':
                attrs = {'alpha': 1.67, 'gamma': 1.05} if self.r.random() < 0.5 else {}
            elif op == 'Shrink':
                attrs = {'lambd': self.r.choice([0.2, 0.5]), 'bias': self.r.choice([0.0, 0.1])}
            else:
                attrs = {'alpha': alpha} if self.r.random() < 0.7 else {}
            mag = 2 * x.mag + 2
        elif op == 'HardSwish':
            mag = x.mag * (x.mag + 3) / 6 + 1
        elif op == 'Asinh':
            mag = math.asinh(x.mag) + 1
        if op == 'HardSigmoid' and self.r.random() < 0.5:
            attrs = {'alpha': 0.3, 'beta': 0.4}
        distinct = x.distinct and op in ('Neg', 'Identity', 'Dropout')
        return self.node(op, [x], [self.out(x.shape, dt, dom, mag, exact, distinct)], **attrs)

    def f_binary(self):
        x = self.pick(lambda v: v.dtype != BOOL)
        if x is None:
            return False
        dt = x.dtype
        if dt in FLOATS:
            op = self.r.choice(['Add', 'Add', 'Sub', 'Mul', 'Mul', 'Div', 'Pow', 'Mod', 'PRelu', 'Max', 'Min'])
        else:
            op = self.r.choice(['Add', 'Sub', 'Mul', 'Max', 'Min', 'Div', 'Mod'])
        out = self.out_shape_for(x.shape)
        if op == 'PRelu':
            out = x.shape
        dom = {'Div': 'pos', 'Mod': 'pos', 'Pow': 'unit'}.get(op, 'any')
        if dt in INTS and op in ('Div', 'Mod'):
            x = self.ensure(x, 'nonneg')
        if op == 'Pow':
            x = self.ensure(x, 'pos')
        y = self.partner(out, x.shape, dt, 'any', cover=op != 'PRelu')
        if op == 'PRelu' and broadcast(y.shape, x.shape) != x.shape:
            y = self.operand(self.partner_shape(x.shape, x.shape, cover=False), dt)
        if dom != 'any':
            y = self.ensure(y, dom)
        if self.r.random() < 0.3 and op in ('Add', 'Sub', 'Mul', 'Max', 'Min'):
            x, y = y, x
        out = broadcast(x.shape, y.shape)
        if dt in INTS:
            lim = INT_LIMIT[dt]
            mag = {'Add': x.mag + y.mag, 'Sub': x.mag + y.mag, 'Mul': x.mag * y.mag}.get(op, max(x.mag, y.mag))
            if mag > lim:
                op, mag = 'Max', max(x.mag, y.mag)
            attrs = {'fmod': 0} if op == 'Mod' else {}
            return self.node(op, [x, y], [self.out(out, dt, 'any', mag, True)], **attrs)
        if op == 'Mul' and x.mag * y.mag > 1e4:
            op = 'Add'
        if op == 'Mod' and not x.exact:
            op = 'Sub'  # fmod jumps at multiples of the divisor: only on values every path computes exactly
        mag = {'Add': x.mag + y.mag, 'Sub': x.mag + y.mag, 'Mul': x.mag * y.mag, 'Div': x.mag * 2,
               'Pow': max(x.mag, 2.0) ** 0.9 + 2, 'Mod': y.mag, 'PRelu': x.mag * max(1, y.mag)}.get(op, max(x.mag, y.mag))
        exact = op in ('Max', 'Min') and x.exact and y.exact
        attrs = {'fmod': 1} if op == 'Mod' else {}
        return self.node(op, [x, y], [self.out(out, dt, 'any', mag, exact)], **attrs)

    def f_variadic(self):
        x = self.pick(lambda v: v.dtype != BOOL)
        if x is None:
            return False
        op = self.r.choice(['Max', 'Min', 'Sum', 'Mean', 'Max'])
        if x.dtype in INTS and op in ('Mean', 'Sum'):
            op = self.r.choice(['Max', 'Min'])  # ONNX Sum and Mean take floats only
        k = self.r.choice([1, 2, 3, 3, 3, 4])
        out = self.out_shape_for(x.shape)
        if self.r.random() < 0.3 and len(out) < 5 and numel(out) * 2 <= self.max_numel:
            out = (2,) + tuple(out)
        ins = [x]
        for i in range(k - 1):
            ins.append(self.partner(out, x.shape if i == 0 else broadcast(*[v.shape for v in ins]), x.dtype,
                                    cover=(i == k - 2)))
        self.r.shuffle(ins)
        shp = broadcast(*[v.shape for v in ins])
        mag = sum(v.mag for v in ins) if op == 'Sum' else max(v.mag for v in ins)
        exact = op in ('Max', 'Min') and all(v.exact for v in ins) or x.dtype in INTS
        return self.node(op, ins, [self.out(shp, x.dtype, 'any', mag, exact)])

    def bool_value(self, shape=None):
        if self.r.random() < 0.5:
            v = self.pick(lambda v: v.dtype == BOOL and (shape is None or broadcast(v.shape, shape) == tuple(shape)))
            if v is not None:
                return v
        x = self.pick(lambda v: v.exact and v.dtype != BOOL and (shape is None or broadcast(v.shape, shape) == tuple(shape)))
        if x is None or self.r.random() < 0.2:
            return self.operand(shape if shape is not None else self.shape(), BOOL)
        op = self.r.choice(['Less', 'Greater', 'LessOrEqual', 'GreaterOrEqual', 'Equal'])
        if x.dtype in FLOATS:
            c = self.scalar(self.r.choice([0.0, 0.5, -0.25]), x.dtype)
        else:
            c = self.scalar(self.r.choice([0, 1, 3]), x.dtype)
        if self.r.random() < 0.4:
            c = self.partner(x.shape, x.shape, x.dtype, cover=False)
            if not c.exact:
                c = self.scalar(0, x.dtype)
        return self.node(op, [x, c], [self.out(broadcast(x.shape, c.shape), BOOL, exact=True)])

    def f_logic(self):
        a = self.bool_value()
        op = self.r.choice(['And', 'Or', 'Xor', 'Not', 'Where', 'Where', 'Cast'])
        if op == 'Not':
            return self.node('Not', [a], [self.out(a.shape, BOOL, exact=True)])
        if op == 'Cast':
            to = self.r.choice([F32, I32, I64, F64])
            return self.node('Cast', [a], [self.out(a.shape, to, 'nonneg', 1, True)], to=ONNX_TYPE[to])
        if op == 'Where':
            return self.f_where(a)
        b = self.partner(self.out_shape_for(a.shape), a.shape, BOOL)
        return self.node(op, [a, b], [self.out(broadcast(a.shape, b.shape), BOOL, exact=True)])

    def f_where(self, cond=None):
        x = self.pick()
        if x is None:
            return False
        if x.dtype == BOOL:
            x = self.node('Cast', [x], [self.out(x.shape, F32, 'nonneg', 1, True)], to=TensorProto.FLOAT)
        out = self.out_shape_for(x.shape)
        y = self.partner(out, x.shape, x.dtype, cover=False)
        if cond is None or broadcast(cond.shape, out) is None or numel(broadcast(cond.shape, out)) > self.max_numel:
            cond = self.bool_value(self.partner_shape(out, broadcast(x.shape, y.shape)))
        ins = [cond, x, y] if self.r.random() < 0.5 else [cond, y, x]
        shp = broadcast(cond.shape, x.shape, y.shape)
        return self.node('Where', ins, [self.out(shp, x.dtype, 'any', max(x.mag, y.mag), x.exact and y.exact)])

    def f_cast(self):
        x = self.pick()
        if x is None:
            return False
        if x.dtype in FLOATS:
            if x.exact and x.mag < 1e5 and self.r.random() < 0.7:
                to = self.r.choice([I32, I64, BOOL, I8] if x.mag < 100 else [I32, I64, BOOL])
            else:
                to = F64 if x.dtype == F32 else F32
        elif x.dtype == BOOL:
            to = self.r.choice([F32, I64, I32])
        else:
            to = self.r.choice([F32, F64, I64 if x.dtype != I64 else I32])
        if self.r.random() < 0.15:
            like = self.scalar(0, to)
            return self.node('CastLike', [x, like], [self.out(x.shape, to, 'any', 1 if to == BOOL else x.mag + 1,
                                                               x.exact or x.dtype not in FLOATS)])
        exact = x.exact or x.dtype not in FLOATS
        mag = 1 if to == BOOL else x.mag + 1
        return self.node('Cast', [x], [self.out(x.shape, to, 'any', mag, exact)], to=ONNX_TYPE[to])

    # ---------------------------------------------------------------- injective
    def f_reshape(self):
        x = self.pick()
        if x is None:
            return False
        rank = self.r.choice([1, 2, 2, 3, 3, 4, 5])
        if self.r.random() < 0.15:
            shp = x.shape  # identity reshape
        else:
            shp = self.factor(x.numel, rank)
        spec = list(shp)
        if len(spec) > 0 and self.r.random() < 0.3:
            spec[self.r.randrange(len(spec))] = -1
        if self.r.random() < 0.2:
            for i in range(min(len(spec), x.rank)):
                if spec[i] == x.shape[i] and self.r.random() < 0.5:
                    spec[i] = 0
        if spec.count(-1) == 1 and 0 in spec:
            # -1 with a zero dim next to it is still well defined; keep
            pass
        return self.node('Reshape', [x, self.param(spec)], [self.out(shp, x.dtype, x.dom, x.mag, x.exact, x.distinct, x.n)])

    def f_flatten(self):
        x = self.pick()
        if x is None:
            return False
        ax = self.r.randint(0, x.rank)
        shp = (numel(x.shape[:ax]), numel(x.shape[ax:]))
        if self.r.random() < 0.3 and 0 < ax < x.rank:
            ax -= x.rank
        return self.node('Flatten', [x], [self.out(shp, x.dtype, x.dom, x.mag, x.exact, x.distinct, x.n)], axis=ax)

    def f_transpose(self):
        x = self.pick(lambda v: v.rank >= 2)
        if x is None:
            return False
        perm = list(range(x.rank))
        self.r.shuffle(perm)
        attrs = {'perm': perm}
        if self.r.random() < 0.15:
            perm = list(reversed(range(x.rank)))
            attrs = {}
        shp = tuple(x.shape[p] for p in perm)
        return self.node('Transpose', [x], [self.out(shp, x.dtype, x.dom, x.mag, x.exact, x.distinct, x.n)], **attrs)

    def f_concat(self):
        x = self.pick(lambda v: v.rank >= 1)
        if x is None:
            return False
        ax = self.r.randrange(x.rank)
        k = self.r.choice([2, 2, 3, 4])
        ins = [x]
        for _ in range(k - 1):
            u = self.r.random()
            if u < 0.2:
                ins.append(x)  # the same value twice
                continue
            shp = list(x.shape)
            if u < 0.6:
                shp[ax] = self.r.choice([1, 2, 3, 5, 7, 8, 9, 16, 17])
            v = self.pick(lambda v: v.dtype == x.dtype and v.rank == x.rank and v.name != x.name and
                          all(v.shape[i] == x.shape[i] for i in range(x.rank) if i != ax), recent=False)
            if v is not None and self.r.random() < 0.5:
                ins.append(v)
            else:
                ins.append(self.fresh(tuple(shp), x.dtype))
        self.r.shuffle(ins)
        shp = list(x.shape)
        shp[ax] = sum(v.shape[ax] for v in ins)
        if numel(shp) > self.max_numel:
            ins = ins[:2]
            shp[ax] = sum(v.shape[ax] for v in ins)
            if numel(shp) > self.max_numel:
                return False
        axis = ax - x.rank if self.r.random() < 0.4 else ax
        return self.node('Concat', ins, [self.out(shp, x.dtype, 'any', max(v.mag for v in ins),
                                                   all(v.exact for v in ins))], axis=axis)

    def f_slice(self):
        x = self.pick(lambda v: v.rank >= 1 and v.numel > 1)
        if x is None:
            return False
        axes = self.r.sample(range(x.rank), self.r.randint(1, x.rank))
        starts, ends, steps, shp = [], [], [], list(x.shape)
        for ax in axes:
            d = x.shape[ax]
            for _ in range(20):
                st = self.r.choice([1, 1, 1, 2, 3, -1, -2])
                b = self.r.choice([0, 1, 2, -1, -2, -3, d - 1, d, BIG, -BIG])
                e = self.r.choice([d, d - 1, 1, 2, -1, -2, BIG, -BIG, d // 2])
                n = onnx_slice_len(b, e, st, d)
                if n >= 1:
                    break
            else:
                b, e, st, n = 0, d, 1, d
            starts.append(b)
            ends.append(e)
            steps.append(st)
            shp[ax] = n
        ins = [x, self.param(starts), self.param(ends)]
        with_axes = self.r.random() < 0.8 or axes != list(range(len(axes)))
        if with_axes:
            ins.append(self.param([a - x.rank if self.r.random() < 0.3 else a for a in axes]))
        if any(s != 1 for s in steps) or self.r.random() < 0.3:
            if not with_axes:
                ins.append(self.param(list(range(len(axes)))))
            ins.append(self.param(steps))
        distinct = x.distinct
        return self.node('Slice', ins, [self.out(shp, x.dtype, x.dom, x.mag, x.exact, distinct, x.n)])

    def f_split(self):
        x = self.pick(lambda v: v.rank >= 1 and max(v.shape) >= 2)
        if x is None:
            return False
        axes = [i for i in range(x.rank) if x.shape[i] >= 2]
        ax = self.r.choice(axes)
        d = x.shape[ax]
        k = self.r.randint(2, min(4, d))
        ins = [x]
        if d % k == 0 and self.r.random() < 0.4:
            sizes = [d // k] * k
        else:
            cuts = sorted(self.r.sample(range(1, d), k - 1))
            sizes = [b - a for a, b in zip([0] + cuts, cuts + [d])]
            ins.append(self.param(sizes))
        outs = []
        for s in sizes:
            shp = list(x.shape)
            shp[ax] = s
            outs.append(self.out(shp, x.dtype, x.dom, x.mag, x.exact, x.distinct, x.n))
        axis = ax - x.rank if self.r.random() < 0.3 else ax
        self.node('Split', ins, outs, axis=axis)
        return True

    def f_gather(self):
        x = self.pick(lambda v: v.rank >= 1)
        if x is None:
            return False
        ax = self.r.randrange(x.rank)
        d = x.shape[ax]
        if self.r.random() < 0.2:
            op = 'GatherElements'
            ishp = list(x.shape)
            ishp[ax] = self.r.choice([1, 2, 3, d, d + 2])
            if numel(ishp) > self.max_numel:
                ishp[ax] = 1
            idx = self.np.integers(-d, d, size=ishp)
            oshp = tuple(ishp)
        else:
            op = 'Gather'
            irank = self.r.choice([0, 1, 1, 2])
            ishp = [self.r.choice([1, 2, 3, 4, 5]) for _ in range(irank)]
            idx = self.np.integers(-d, d, size=ishp)
            oshp = x.shape[:ax] + tuple(ishp) + x.shape[ax + 1:]
            if len(oshp) > 5 or numel(oshp) > self.max_numel:
                return False
        it = self.r.choice([I64, I64, I32])
        if self.r.random() < 0.25:
            iv = V(self.name('in'), ishp, it, 'input', 'idx', d, exact=True, n=d)
            self.g.inputs.append(iv.name)
            self.g.data[iv.name] = idx.astype(it)
            self.add_val(iv, pool=False)
            iname = iv.name
        else:
            iname = self.param(idx.tolist() if ishp else int(idx), it)
            if not ishp:
                self.g.inits[iname] = np.array(int(idx), dtype=it)
        return self.node(op, [x, iname], [self.out(oshp, x.dtype, x.dom, x.mag, x.exact)],
                         axis=ax - x.rank if self.r.random() < 0.3 else ax)

    def f_squeeze(self):
        x = self.pick()
        if x is None:
            return False
        ones = [i for i in range(x.rank) if x.shape[i] == 1]
        if self.r.random() < 0.5 or not ones:
            # Unsqueeze
            if x.rank >= 5:
                return False
            k = self.r.randint(1, min(2, 5 - x.rank))
            r2 = x.rank + k
            axes = sorted(self.r.sample(range(r2), k))
            shp = list(x.shape)
            for a in axes:
                shp.insert(a, 1)
            ax = [a - r2 if self.r.random() < 0.3 else a for a in axes]
            return self.node('Unsqueeze', [x, self.param(ax)], [self.out(shp, x.dtype, x.dom, x.mag, x.exact, x.distinct, x.n)])
        if self.r.random() < 0.25:
            shp = [d for d in x.shape if d != 1]
            return self.node('Squeeze', [x], [self.out(shp, x.dtype, x.dom, x.mag, x.exact, x.distinct, x.n)])
        axes = self.r.sample(ones, self.r.randint(1, len(ones)))
        shp = [d for i, d in enumerate(x.shape) if i not in axes]
        ax = [a - x.rank if self.r.random() < 0.3 else a for a in axes]
        return self.node('Squeeze', [x, self.param(ax)], [self.out(shp, x.dtype, x.dom, x.mag, x.exact, x.distinct, x.n)])

    def f_pad(self):
        x = self.pick(lambda v: v.rank >= 1)
        if x is None:
            return False
        mode = self.r.choice(['constant', 'constant', 'reflect', 'edge', 'wrap'] if self.r.random() < 0.1 else
                             ['constant', 'constant', 'reflect', 'edge'])
        r = x.rank
        pads = [0] * (2 * r)
        shp = list(x.shape)
        axes = [i for i in range(r) if self.r.random() < 0.6] or [self.r.randrange(r)]
        for a in axes:
            d = x.shape[a]
            for _ in range(10):
                if mode == 'reflect':
                    lo, hi = self.r.randint(0, min(d - 1, 4)), self.r.randint(0, min(d - 1, 4))
                    if self.r.random() < 0.2 and d > 2:
                        lo = -self.r.randint(1, d // 2)
                elif mode == 'wrap':
                    lo, hi = self.r.randint(0, min(d, 3)), self.r.randint(0, min(d, 3))
                else:
                    lo, hi = self.r.randint(-2, 4), self.r.randint(-2, 4)
                    if self.r.random() < 0.5:
                        lo, hi = max(lo, 0), max(hi, 0)
                n = d + lo + hi
                if n >= 1 and lo > -d and hi > -d:
                    break
            else:
                lo = hi = 0
            pads[a], pads[a + r] = lo, hi
            shp[a] = d + lo + hi
        if numel(shp) > self.max_numel:
            return False
        ins = [x, self.param(pads)]
        cv = 0.0
        if mode == 'constant' and self.r.random() < 0.5:
            cv = self.r.choice([0.0, 1.0, -1.5, 2.0])
            if x.dtype == BOOL:
                ins.append(self.scalar(True, BOOL))
                cv = 1
            else:
                ins.append(self.scalar(cv, x.dtype))
        attrs = {'mode': mode} if mode != 'constant' or self.r.random() < 0.5 else {}
        return self.node('Pad', ins, [self.out(shp, x.dtype, 'any' if cv else x.dom, max(x.mag, abs(cv)), x.exact)], **attrs)

    def f_expand(self):
        x = self.pick()
        if x is None:
            return False
        out = list(x.shape)
        for i, d in enumerate(out):
            if d == 1 and self.r.random() < 0.7:
                out[i] = self.r.choice([2, 3, 4, 5, 7, 8, 9, 16, 17])
        if len(out) < 5 and self.r.random() < 0.4:
            out = [self.r.choice([2, 3])] + out
        if numel(out) > self.max_numel:
            return False
        spec = list(out)
        # a 1 in the target keeps the input's extent
        for i in range(len(spec)):
            j = i - (len(spec) - x.rank)
            if j >= 0 and x.shape[j] != 1 and self.r.random() < 0.3:
                spec[i] = 1
        return self.node('Expand', [x, self.param(spec)], [self.out(out, x.dtype, x.dom, x.mag, x.exact)])

    def f_tile(self):
        x = self.pick(lambda v: v.rank >= 1)
        if x is None:
            return False
        reps = [self.r.choice([1, 1, 2, 3]) for _ in range(x.rank)]
        shp = [d * k for d, k in zip(x.shape, reps)]
        if numel(shp) > self.max_numel:
            return False
        return self.node('Tile', [x, self.param(reps)], [self.out(shp, x.dtype, x.dom, x.mag, x.exact)])

    def f_shuffle(self):
        """Channel shuffle: concat -> reshape to 5-d -> transpose -> reshape (as CNNs do)."""
        x = self.pick(lambda v: v.rank == 4 and v.dtype in FLOATS)
        if x is None:
            x = self.input((1, self.r.choice([2, 4, 6]), self.extent(small=True), self.r.choice([5, 7, 17, 9])))
        y = self.operand(x.shape, x.dtype)
        n, c, h, w = x.shape
        cat = self.node('Concat', [x, y], [self.out((n, 2 * c, h, w), x.dtype, 'any', max(x.mag, y.mag))], axis=1)
        r5 = self.reshape_to(cat, (n, 2, c, h, w))
        t = self.node('Transpose', [r5], [self.out((n, c, 2, h, w), x.dtype, 'any', cat.mag)], perm=[0, 2, 1, 3, 4])
        return self.reshape_to(t, (n, 2 * c, h, w))

    def f_misc(self):
        op = self.r.choice(['Trilu', 'CumSum', 'DepthToSpace', 'SpaceToDepth', 'Shape', 'Size', 'EyeLike',
                            'Constant', 'Range', 'ConstantOfShape', 'OneHot', 'Compress', 'Window'])
        if op == 'Window':
            w = self.r.choice(['HannWindow', 'HammingWindow', 'BlackmanWindow'])
            n = self.r.choice([1, 2, 7, 16, 17])
            return self.node(w, [self.scalar(n, I64)], [self.out((n,), F32, 'any', 1.1, False)],
                             periodic=self.r.randint(0, 1))
        if op == 'Trilu':
            x = self.pick(lambda v: v.rank >= 2)
            if x is None:
                return False
            ins = [x]
            if self.r.random() < 0.6:
                ins.append(self.param(self.r.choice([0, 1, -1, 2, -3])))
            return self.node('Trilu', ins, [self.out(x.shape, x.dtype, 'any', x.mag, x.exact)], upper=self.r.randint(0, 1))
        if op == 'CumSum':
            x = self.pick(lambda v: v.rank >= 1 and v.dtype in FLOATS + (I32, I64))
            if x is None:
                return False
            ax = self.r.randrange(x.rank)
            mag = x.mag * x.shape[ax]
            if x.dtype in INTS and mag > INT_LIMIT[x.dtype]:
                return False
            return self.node('CumSum', [x, self.param(ax - x.rank if self.r.random() < 0.3 else ax, self.r.choice([I64, I32]))],
                             [self.out(x.shape, x.dtype, 'any', mag, x.dtype in INTS)],
                             exclusive=self.r.randint(0, 1), reverse=self.r.randint(0, 1))
        if op in ('DepthToSpace', 'SpaceToDepth'):
            x = self.pick(lambda v: v.rank == 4)
            if x is None:
                return False
            n, c, h, w = x.shape
            b = self.r.choice([2, 3])
            if op == 'DepthToSpace':
                if c % (b * b):
                    return False
                mode = self.r.choice(['DCR', 'CRD'])
                return self.node(op, [x], [self.out((n, c // (b * b), h * b, w * b), x.dtype, x.dom, x.mag, x.exact)],
                                 blocksize=b, mode=mode)
            if h % b or w % b:
                return False
            return self.node(op, [x], [self.out((n, c * b * b, h // b, w // b), x.dtype, x.dom, x.mag, x.exact)], blocksize=b)
        if op in ('Shape', 'Size'):
            x = self.pick()
            if x is None:
                return False
            if op == 'Size':
                return self.node('Size', [x], [self.out((), I64, 'pos', x.numel, True)])
            attrs = {}
            shp = (x.rank,)
            if self.r.random() < 0.3 and x.rank > 1:
                s, e = self.r.randint(-x.rank, 0), None
                attrs = {'start': s}
                shp = (len(range(x.rank)[s:]),)
            return self.node('Shape', [x], [self.out(shp, I64, 'nonneg', max(x.shape) if x.shape else 1, True)], **attrs)
        if op == 'EyeLike':
            x = self.pick(lambda v: v.rank == 2)
            if x is None:
                return False
            attrs = {'k': self.r.choice([0, 1, -2])}
            if self.r.random() < 0.5:
                attrs['dtype'] = TensorProto.FLOAT
                dt = F32
            else:
                dt = x.dtype
            return self.node('EyeLike', [x], [self.out(x.shape, dt, 'nonneg', 1, True)], **attrs)
        if op == 'Constant':
            shp = self.shape(self.r.randint(1, 3), limit=200)
            a = make_data(self.np, shp, F32, 'any')
            return self.node('Constant', [], [self.out(shp, F32, 'any', 1, True)], value=numpy_helper.from_array(a))
        if op == 'Range':
            n = self.r.choice([1, 5, 16, 17])
            start = self.r.choice([0, 2, -3])
            delta = self.r.choice([1, 2, -1])
            ins = [self.scalar(start, I64), self.scalar(start + n * delta, I64), self.scalar(delta, I64)]
            return self.node('Range', ins, [self.out((n,), I64, 'any', abs(start) + abs(n * delta) + 1, True)])
        if op == 'ConstantOfShape':
            shp = self.shape(self.r.randint(1, 3), limit=500)
            val = numpy_helper.from_array(np.array([self.r.choice([0.0, 1.5, -2.0])], dtype=np.float32))
            return self.node('ConstantOfShape', [self.param(list(shp))], [self.out(shp, F32, 'any', 2, True)], value=val)
        if op == 'OneHot':
            x = self.pick(lambda v: v.dtype in INTS and 1 <= v.rank <= 3)
            depth = self.r.choice([3, 5, 8])
            if x is None or x.numel * depth > self.max_numel:
                return False
            ax = self.r.choice([-1, 0])
            shp = list(x.shape)
            shp.insert(ax if ax >= 0 else len(shp), depth)
            vals = self.param([0.0, 1.0] if self.r.random() < 0.5 else [-1.0, 2.0], F32)
            return self.node('OneHot', [x, self.param(depth), vals], [self.out(shp, F32, 'any', 2, True)], axis=ax)
        if op == 'Compress':
            x = self.pick(lambda v: v.rank >= 1)
            if x is None:
                return False
            ax = self.r.randrange(x.rank)
            d = x.shape[ax]
            cond = [self.r.random() < 0.6 for _ in range(d)]
            if not any(cond):
                cond[0] = True
            shp = list(x.shape)
            shp[ax] = sum(cond)
            return self.node('Compress', [x, self.param(cond, BOOL)], [self.out(shp, x.dtype, x.dom, x.mag, x.exact)], axis=ax)
        return False

    # ---------------------------------------------------------------- reductions
    def f_reduce(self):
        x = self.pick(lambda v: v.dtype != BOOL and v.rank >= 1)
        if x is None:
            return False
        if x.dtype in INTS:
            op = self.r.choice(['ReduceSum', 'ReduceMax', 'ReduceMin', 'ArgMax', 'ArgMin'] if x.dtype in (I32, I64)
                               else ['ReduceMax', 'ReduceMin', 'ArgMax', 'ArgMin'])  # ONNX ReduceSum: no int8
        else:
            op = self.r.choice(['ReduceSum', 'ReduceMean', 'ReduceMax', 'ReduceMin', 'ReduceProd', 'ReduceL1',
                                'ReduceL2', 'ReduceSumSquare', 'ReduceLogSum', 'ReduceLogSumExp', 'ReduceMean',
                                'ReduceMax', 'ArgMax', 'ArgMin', 'TopK'])
        if op in ('ArgMax', 'ArgMin'):
            if not x.exact:
                op = 'ReduceMax'
            else:
                ax = self.r.randrange(x.rank)
                kd = self.r.randint(0, 1)
                shp = list(x.shape)
                if kd:
                    shp[ax] = 1
                else:
                    del shp[ax]
                attrs = {'axis': ax - x.rank if self.r.random() < 0.3 else ax, 'keepdims': kd}
                if self.r.random() < 0.3:
                    attrs['select_last_index'] = 1
                return self.node(op, [x], [self.out(shp, I64, 'nonneg', x.shape[ax], True)], **attrs)
        if op == 'TopK':
            if not x.distinct:
                op = 'ReduceMean'
            else:
                ax = self.r.randrange(x.rank)
                k = self.r.randint(1, min(x.shape[ax], 5))
                shp = list(x.shape)
                shp[ax] = k
                attrs = {'axis': ax - x.rank if self.r.random() < 0.5 else ax}
                if self.r.random() < 0.3:
                    attrs['largest'] = 0
                self.node('TopK', [x, self.param([k])], [self.out(shp, x.dtype, 'any', x.mag, True),
                                                          self.out(shp, I64, 'nonneg', x.shape[ax], True)], **attrs)
                return True
        ones = [i for i in range(x.rank) if x.shape[i] == 1]
        u = self.r.random()
        if ones and u < 0.3:
            axes = self.r.sample(ones, self.r.randint(1, len(ones)))  # only extent-1 axes
        elif u < 0.4:
            axes = None  # all
        else:
            axes = self.r.sample(range(x.rank), self.r.randint(1, x.rank))
        kd = self.r.randint(0, 1)
        red = set(range(x.rank)) if axes is None else set(axes)
        n = numel([x.shape[i] for i in red])
        shp = [1 if i in red else d for i, d in enumerate(x.shape)] if kd else [d for i, d in enumerate(x.shape) if i not in red]
        if op == 'ReduceLogSum':
            x = self.ensure(x, 'pos')
        if op == 'ReduceLogSumExp':
            x = self.bounded(x, 20)
        if op == 'ReduceProd':
            x = self.bounded(x, 1.0) if x.dtype in FLOATS else x
            if n > 40:
                op = 'ReduceMax'
        mag = {'ReduceSum': x.mag * n, 'ReduceL1': x.mag * n, 'ReduceSumSquare': x.mag * x.mag * n,
               'ReduceL2': x.mag * math.sqrt(n), 'ReduceLogSum': math.log(max(x.mag * n, 2)) + 1,
               'ReduceLogSumExp': x.mag + math.log(n) + 1}.get(op, x.mag)
        if x.dtype in INTS and mag > INT_LIMIT[x.dtype]:
            op, mag = 'ReduceMax', x.mag
        exact = op in ('ReduceMax', 'ReduceMin') and x.exact or x.dtype in INTS
        attrs = {} if (kd == 1 and self.r.random() < 0.3) else {'keepdims': kd}
        ins = [x]
        ax_list = None if axes is None else [a - x.rank if self.r.random() < 0.3 else a for a in axes]
        if op == 'ReduceSum':
            if ax_list is not None:
                ins.append(self.param(ax_list))
        elif ax_list is not None:
            attrs['axes'] = ax_list
        return self.node(op, ins, [self.out(shp, x.dtype, 'nonneg' if op in ('ReduceL1', 'ReduceL2', 'ReduceSumSquare') else 'any',
                                            mag, exact)], **attrs)

    # ---------------------------------------------------------------- nn
    def image(self, rank=(4,)):
        x = self.pick_float(lambda v: v.rank in rank and v.numel >= 2)
        if x is None and self.r.random() < 0.5:
            x = self.pick_float(lambda v: v.numel >= 8 and v.rank <= 5)
            if x is not None:
                r = self.r.choice(rank)
                n = x.numel
                shp = self.factor(n, r)
                x = self.reshape_to(x, shp)
        if x is None:
            r = self.r.choice(rank)
            shp = (self.r.choice([1, 1, 2]), self.r.choice([1, 2, 3, 4, 6, 8])) + tuple(self.extent() for _ in range(r - 2))
            x = self.input(shp)
        return x

    def window(self, spatial, allow_same=True, max_k=5):
        """kernel, strides, dilations, pads / auto_pad for spatial extents; None if impossible."""
        n = len(spatial)
        for _ in range(20):
            k = [self.r.randint(1, min(max_k, d + 2)) for d in spatial]
            s = [self.r.choice([1, 1, 1, 2, 2, 3]) for _ in range(n)]
            dl = [self.r.choice([1, 1, 1, 2]) for _ in range(n)]
            eff = [(ki - 1) * di + 1 for ki, di in zip(k, dl)]
            ap = self.r.choice(['NOTSET', 'NOTSET', 'NOTSET', 'SAME_UPPER', 'SAME_LOWER', 'VALID']) if allow_same else 'NOTSET'
            if ap in ('SAME_UPPER', 'SAME_LOWER'):
                out = [(d + si - 1) // si for d, si in zip(spatial, s)]
                pads = None
            elif ap == 'VALID':
                out = [(d - e) // si + 1 for d, e, si in zip(spatial, eff, s)]
                pads = None
            else:
                pads = [self.r.randint(0, min(ki - 1, 2)) if self.r.random() < 0.6 else 0 for ki in k] + \
                       [self.r.randint(0, min(ki - 1, 2)) if self.r.random() < 0.6 else 0 for ki in k]
                out = [(d + pads[i] + pads[i + n] - eff[i]) // s[i] + 1 for i, d in enumerate(spatial)]
            if all(o >= 1 for o in out):
                return k, s, dl, pads, ap, out
        return None

    def win_attrs(self, k, s, dl, pads, ap, dil=True):
        a = {'kernel_shape': k}
        if any(x != 1 for x in s) or self.r.random() < 0.3:
            a['strides'] = s
        if dil and (any(x != 1 for x in dl) or self.r.random() < 0.2):
            a['dilations'] = dl
        if ap != 'NOTSET':
            a['auto_pad'] = ap
        elif pads is not None and (any(pads) or self.r.random() < 0.3):
            a['pads'] = pads
        return a

    def epilogue(self, y):
        for _ in range(self.r.choice([0, 1, 1, 2])):
            op = self.r.choice(['Relu', 'Clip', 'AddBias', 'LeakyRelu', 'SiLU', 'HardSwish', 'Tanh', 'Sigmoid'])
            dt = y.dtype
            if op == 'Clip':
                y = self.node('Clip', [y, self.scalar(0.0, dt), self.scalar(6.0, dt)], [self.out(y.shape, dt, 'nonneg', 6.0)])
            elif op == 'AddBias':
                if y.rank == 4 or y.rank == 3:
                    b = self.weight((y.shape[1],) + (1,) * (y.rank - 2), dt)
                else:
                    b = self.weight((y.shape[-1],), dt)
                y = self.node('Add', [y, b], [self.out(y.shape, dt, 'any', y.mag + b.mag)])
            elif op == 'SiLU':
                s = self.node('Sigmoid', [y], [self.out(y.shape, dt, 'nonneg', 1.0)])
                y = self.node('Mul', [y, s], [self.out(y.shape, dt, 'any', y.mag)])
            elif op == 'LeakyRelu':
                y = self.node('LeakyRelu', [y], [self.out(y.shape, dt, 'any', y.mag)], alpha=0.1)
            elif op == 'HardSwish':
                y = self.node('HardSwish', [y], [self.out(y.shape, dt, 'any', y.mag * (y.mag + 3) / 6 + 1)])
            else:
                y = self.node(op, [y], [self.out(y.shape, dt, 'nonneg' if op == 'Relu' else 'any',
                                                  y.mag if op == 'Relu' else 1.0)])
        return y

    def f_conv(self):
        x = self.image(rank=(3, 4, 4, 4))
        n, c = x.shape[0], x.shape[1]
        spatial = list(x.shape[2:])
        transpose = self.r.random() < 0.15
        u = self.r.random()
        divs = [d for d in range(1, c + 1) if c % d == 0]
        g = 1 if u < 0.5 else (c if u < 0.75 else self.r.choice(divs))
        if transpose:
            mult = self.r.randint(1, 3)
            m = g * mult
            w = self.window(spatial, allow_same=False, max_k=4)
            if w is None:
                return False
            k, s, dl, pads, ap, _ = w
            eff = [(ki - 1) * di + 1 for ki, di in zip(k, dl)]
            nsp = len(spatial)
            op_ = [self.r.randint(0, max(s[i], dl[i]) - 1) if self.r.random() < 0.3 else 0 for i in range(nsp)]
            out = [(spatial[i] - 1) * s[i] + eff[i] - pads[i] - pads[i + nsp] + op_[i] for i in range(nsp)]
            if any(o < 1 for o in out) or numel([n, m] + out) > self.max_numel:
                return False
            wv = self.weight((c, m // g) + tuple(k), x.dtype, scale=1.0 / math.sqrt(c * numel(k) / g))
            attrs = self.win_attrs(k, s, dl, pads, ap)
            if any(op_):
                attrs['output_padding'] = op_
            if g > 1:
                attrs['group'] = g
            ins = [x, wv]
            if self.r.random() < 0.5:
                ins.append(self.weight((m,), x.dtype))
            y = self.node('ConvTranspose', ins, [self.out([n, m] + out, x.dtype, 'any', x.mag * 4 + 1)], **attrs)
            return self.epilogue(y)
        # Grouped: 1-4 outputs a group, or whole vectors of them (8, 16: conv2d.grouped_blocked).
        m = g * (self.r.choice([1, 2, 3, 4, 8, 16]) if g > 1 else self.r.choice([1, 2, 3, 4, 5, 8, 16]))
        w = self.window(spatial)
        if w is None:
            return False
        k, s, dl, pads, ap, out = w
        if numel([n, m] + out) > self.max_numel or numel([n, m] + out) * (c // g) * numel(k) > 3e6:
            return False
        wv = self.weight((m, c // g) + tuple(k), x.dtype, scale=1.0 / math.sqrt(max(1, c // g * numel(k))))
        attrs = self.win_attrs(k, s, dl, pads, ap)
        if g > 1 or self.r.random() < 0.1:
            attrs['group'] = g
        ins = [x, wv]
        if self.r.random() < 0.6:
            ins.append(self.weight((m,), x.dtype))
        y = self.node('Conv', ins, [self.out([n, m] + out, x.dtype, 'any', x.mag * 3 + 1)], **attrs)
        self.g.tags.append('conv_g%s' % ('1' if g == 1 else ('dw' if g == c else 'n')))
        return self.epilogue(y)

    def f_mbconv(self):
        """An inverted residual block (MobileNetV2, EfficientNet): 1x1 expansion, depthwise KxK
        (strided or dilated), 1x1 projection, the block's input added where the shapes allow.
        Channels in whole 8- or 16-lane vectors, so that the native path keeps NHWC from conv
        to conv along it (conv2d.nhwc chains); a squeeze-and-excitation scale sometimes."""
        x = self.image(rank=(4,))
        n, c, h, wd = x.shape
        e = self.r.choice([16, 24, 32, 48])
        k = self.r.choice([3, 3, 5])
        s = self.r.choice([1, 1, 2])
        dl = self.r.choice([1, 1, 2]) if s == 1 else 1
        p = k // 2 * dl
        oh, ow = (h + 2 * p - dl * (k - 1) - 1) // s + 1, (wd + 2 * p - dl * (k - 1) - 1) // s + 1
        if oh < 1 or ow < 1 or numel([n, e, h, wd]) > self.max_numel:
            return False

        def conv(v, m, kk, group, **attrs):
            ins = [v, self.weight((m, v.shape[1] // group, kk, kk), v.dtype,
                                  scale=1.0 / math.sqrt(max(1, v.shape[1] // group * kk * kk)))]
            if self.r.random() < 0.7:
                ins.append(self.weight((m,), v.dtype))
            out = [v.shape[0], m] + ([oh, ow] if kk > 1 else list(v.shape[2:]))
            if group > 1:
                attrs['group'] = group
            return self.node('Conv', ins, [self.out(out, v.dtype, 'any', v.mag * 3 + 1)], kernel_shape=[kk, kk], **attrs)

        y = self.epilogue(conv(x, e, 1, 1))
        y = self.epilogue(conv(y, e, k, e, strides=[s, s], dilations=[dl, dl], pads=[p, p, p, p]))
        if self.r.random() < 0.3:
            pooled = self.node('GlobalAveragePool', [y], [self.out((n, e, 1, 1), y.dtype, 'any', y.mag)])
            squeezed = self.node('Sigmoid', [conv(pooled, e, 1, 1)], [self.out((n, e, 1, 1), y.dtype, 'nonneg', 1.0)])
            y = self.node('Mul', [y, squeezed], [self.out(y.shape, y.dtype, 'any', y.mag)])
        o = c if s == 1 and c % 8 == 0 and self.r.random() < 0.6 else self.r.choice([8, 16, 24])
        y = conv(y, o, 1, 1)
        if tuple(y.shape) == tuple(x.shape):
            y = self.node('Add', [y, x], [self.out(y.shape, y.dtype, 'any', y.mag + x.mag)])
        self.g.tags.append('mbconv')
        return y

    def f_denseblock(self):
        """A dense block (DenseNet): each layer concatenates the block's features, scales and
        shifts them per channel (a folded batch norm) with a ReLU, and adds a 1x1 then a 3x3 conv's
        result to them; the block's result concatenates them all. Channels in whole 8- or 16-lane
        vectors, so that concatenate.nhwc applies: kept NHWC between neighbours that took NHWC
        implementations (records choose them; the random-choices path draws them, e.g. seed 646
        with SWITCHYARD_CHOICES=random:2 keeps three concatenations' inputs), else plain."""
        x = self.image(rank=(4,))
        n, c, h, wd = x.shape
        k = self.r.choice([8, 16])
        layers = self.r.choice([2, 3])
        if numel([n, c + layers * k + 4 * k, h, wd]) > self.max_numel:
            return False

        def conv(v, m, kk):
            ins = [v, self.weight((m, v.shape[1], kk, kk), v.dtype, scale=1.0 / math.sqrt(max(1, v.shape[1] * kk * kk)))]
            p = kk // 2
            return self.node('Conv', ins, [self.out((n, m, h, wd), v.dtype, 'any', v.mag * 3 + 1)], kernel_shape=[kk, kk],
                             pads=[p, p, p, p])

        def concat(vs):
            return self.node('Concat', vs, [self.out((n, sum(v.shape[1] for v in vs), h, wd), x.dtype, 'any',
                                                     max(v.mag for v in vs))], axis=1)

        def norm_relu(v):
            ch = v.shape[1]
            y = self.node('Mul', [v, self.weight((1, ch, 1, 1), v.dtype)], [self.out(v.shape, v.dtype, 'any', v.mag)])
            y = self.node('Add', [y, self.weight((1, ch, 1, 1), v.dtype)], [self.out(v.shape, v.dtype, 'any', v.mag + 1)])
            return self.node('Relu', [y], [self.out(v.shape, v.dtype, 'nonneg', y.mag)])

        features = [x if c % 8 == 0 else self.epilogue(conv(x, self.r.choice([8, 16, 32]), 1))]
        for _ in range(layers):
            y = conv(norm_relu(concat(features)), 4 * k, 1)
            features.append(conv(self.epilogue(y), k, 3))
        self.g.tags.append('denseblock')
        return norm_relu(concat(features))

    def f_pool(self):
        x = self.image(rank=(3, 4, 4))
        spatial = list(x.shape[2:])
        op = self.r.choice(['MaxPool', 'AveragePool', 'AveragePool', 'MaxPool', 'GlobalAveragePool',
                            'GlobalMaxPool', 'LpPool'])
        if op.startswith('Global'):
            return self.node(op, [x], [self.out(x.shape[:2] + (1,) * len(spatial), x.dtype, 'any', x.mag,
                                                 x.exact and op == 'GlobalMaxPool')])
        ceil = self.r.random() < 0.35 and op != 'LpPool'
        w = self.window(spatial, allow_same=not ceil)
        if w is None:
            return False
        k, s, dl, pads, ap, out = w
        if op != 'MaxPool':
            dl = [1] * len(k)
            if ap == 'VALID':
                out = [(d - ki) // si + 1 for d, ki, si in zip(spatial, k, s)]
            elif pads is not None:
                out = [(d + pads[i] + pads[i + len(k)] - k[i]) // s[i] + 1 for i, d in enumerate(spatial)]
            if any(o < 1 for o in out):
                return False
        if ceil:
            if pads is None:
                pads = [0] * (2 * len(k))
                ap = 'NOTSET'
            eff = [(ki - 1) * di + 1 for ki, di in zip(k, dl)]
            out = []
            for i, d in enumerate(spatial):
                num = d + pads[i] + pads[i + len(k)] - eff[i]
                o = -(-num // s[i]) + 1
                if (o - 1) * s[i] >= d + pads[i]:
                    return False  # last window would start in the padding: conventions differ, avoid
                out.append(o)
        attrs = self.win_attrs(k, s, dl, pads, ap, dil=op == 'MaxPool')
        if ceil:
            attrs['ceil_mode'] = 1
        if op == 'AveragePool' and self.r.random() < 0.4:
            attrs['count_include_pad'] = 1
        if op == 'LpPool':
            attrs['p'] = self.r.choice([1, 2])
        return self.node(op, [x], [self.out(x.shape[:2] + tuple(out), x.dtype, 'any', x.mag * numel(k),
                                             x.exact and op == 'MaxPool')], **attrs)

    def dense_b(self, k, n, dtype, prefer_t=False):
        """A (k, n) weight for MatMul, or an existing initializer tied to it."""
        return self.weight((k, n), dtype, scale=1.0 / math.sqrt(k))

    def f_matmul(self):
        x = self.pick_float(lambda v: v.rank >= 1)
        if x is None:
            x = self.input(self.shape(2))
        if x.rank > 4:
            x = self.as_rank(x, 2, 3)
        dt = x.dtype
        K = x.shape[-1]
        N = self.r.choice([1, 3, 7, 8, 9, 15, 16, 17, 32, 33, 64])
        u = self.r.random()
        tied = [k for k, a in self.g.inits.items() if k not in self.g.params and a.ndim == 2 and a.shape[0] == K
                and str(a.dtype) == dt]
        if tied and self.r.random() < 0.15:
            b = self.val(self.r.choice(tied))
        elif u < 0.15 and x.rank >= 2:
            b = self.operand((K,), dt)  # matrix-vector
        elif u < 0.3 and x.rank >= 2:
            batch = x.shape[:-2]
            bb = tuple(d if self.r.random() < 0.6 else 1 for d in batch)
            b = self.operand(bb + (K, N), dt)
        else:
            b = self.weight((K, N), dt, scale=1.0 / math.sqrt(K)) if self.r.random() < 0.8 else self.operand((K, N), dt)
        if b.rank == 1:
            shp = x.shape[:-1]
        elif x.rank == 1:
            shp = b.shape[:-2] + b.shape[-1:]
        else:
            batch = broadcast(x.shape[:-2], b.shape[:-2])
            shp = batch + (x.shape[-2], b.shape[-1])
        if numel(shp) > self.max_numel or numel(shp) * K > 4e6:
            return False
        y = self.node('MatMul', [x, b], [self.out(shp, dt, 'any', x.mag * b.mag * K)])
        if self.r.random() < 0.4 and len(shp) >= 1:
            y = self.epilogue(y)
        return y

    def f_gemm(self, a=None):
        if a is None:
            a = self.pick_float(lambda v: v.rank >= 1)
            if a is None:
                a = self.input(self.shape(2))
        if a.rank != 2:
            if a.rank == 1 or self.r.random() < 0.6:
                ax = self.r.randint(1, a.rank) if a.rank > 1 else 0
                shp = (numel(a.shape[:ax]), numel(a.shape[ax:]))
                a = self.node('Flatten', [a], [self.out(shp, a.dtype, a.dom, a.mag, a.exact)], axis=ax)
            else:
                a = self.reshape_to(a, self.factor(a.numel, 2))
        dt = a.dtype
        trans_a = self.r.random() < 0.2
        M, K = (a.shape[1], a.shape[0]) if trans_a else a.shape
        trans_b = self.r.random() < 0.5
        cands = [k for k, arr in self.g.inits.items() if k not in self.g.params and arr.ndim == 2 and K in arr.shape
                 and str(arr.dtype) == dt]
        if cands and self.r.random() < 0.2:
            b = self.val(self.r.choice(cands))
            trans_b = b.shape[1] == K and (b.shape[0] != K or self.r.random() < 0.7)
            self.g.tags.append('tied')
        else:
            N = self.r.choice([1, 3, 7, 8, 9, 15, 16, 17, 32, 33])
            b = self.weight((N, K) if trans_b else (K, N), dt, scale=1.0 / math.sqrt(K)) if self.r.random() < 0.85 \
                else self.operand((N, K) if trans_b else (K, N), dt)
        N = b.shape[0] if trans_b else b.shape[1]
        if M * N > self.max_numel:
            return False
        attrs = {}
        if trans_a:
            attrs['transA'] = 1
        if trans_b:
            attrs['transB'] = 1
        alpha = self.r.choice([1.0, 1.0, 1.0, 0.5, 2.0])
        beta = self.r.choice([1.0, 1.0, 1.0, 0.5, -1.0])
        if alpha != 1.0:
            attrs['alpha'] = alpha
        ins = [a, b]
        if self.r.random() < 0.7:
            cs = self.r.choice([(N,), (N,), (1, N), (M, 1), (M, N), ()])
            ins.append(self.weight(cs, dt) if self.r.random() < 0.8 else self.operand(cs, dt))
            if beta != 1.0:
                attrs['beta'] = beta
        y = self.node('Gemm', ins, [self.out((M, N), dt, 'any', a.mag * b.mag * K * 2 + 2)], **attrs)
        return self.epilogue(y)

    def f_tied(self):
        """One weight W used by MatMul(x, W) and by Gemm(r, W, transB=1) (tied embeddings and heads)."""
        x = self.pick_float(lambda v: v.rank == 2)
        if x is None:
            x = self.input((self.r.choice([1, 2, 3, 4, 5, 8]), self.r.choice([8, 15, 16, 17, 32, 64])))
        M, K = x.shape
        N = self.r.choice([K, K, 8, 16, 17, 32, 64])
        w = self.weight((K, N), x.dtype, scale=1.0 / math.sqrt(K))
        h = self.node('MatMul', [x, w], [self.out((M, N), x.dtype, 'any', x.mag * w.mag * K)])
        h = self.epilogue(h)
        ins = [h, w]
        if self.r.random() < 0.5:
            ins.append(self.weight((K,), x.dtype))
        self.g.tags.append('tied')
        y = self.node('Gemm', ins, [self.out((M, K), x.dtype, 'any', h.mag * w.mag * N + 1)], transB=1)
        return y

    def f_norm(self):
        op = self.r.choice(['BatchNormalization', 'BatchNormalization', 'Softmax', 'LogSoftmax', 'LayerNormalization',
                            'LayerNormalization', 'InstanceNormalization', 'Hardmax', 'LRN',
                            'MeanVarianceNormalization', 'Softmax'])
        if op in ('BatchNormalization', 'InstanceNormalization', 'LRN'):
            x = self.image(rank=(3, 4, 4) if op != 'LRN' else (4,))
        elif op == 'MeanVarianceNormalization':
            x = self.image(rank=(4,))
            if x.dtype != F32:
                return False  # onnx's function body of MVN is float32 only
        else:
            x = self.pick_float(lambda v: v.rank >= 1)
            if x is None:
                return False
        dt = x.dtype
        if op == 'BatchNormalization':
            c = x.shape[1]
            ins = [x, self.weight((c,), dt), self.weight((c,), dt), self.weight((c,), dt),
                   self.weight((c,), dt, 'pos')]
            attrs = {'epsilon': self.r.choice([1e-5, 1e-3])} if self.r.random() < 0.5 else {}
            y = self.node(op, ins, [self.out(x.shape, dt, 'any', (x.mag + 1) * 3)], **attrs)
            return self.epilogue(y)
        if op == 'InstanceNormalization':
            c = x.shape[1]
            if numel(x.shape[2:]) < 2:
                return False
            return self.node(op, [x, self.weight((c,), dt), self.weight((c,), dt)],
                             [self.out(x.shape, dt, 'any', 10)], epsilon=1e-3)
        if op == 'LRN':
            return self.node(op, [x], [self.out(x.shape, dt, 'any', x.mag * 2)], size=self.r.choice([1, 3, 5]),
                             alpha=1e-2, beta=0.75, bias=1.0)
        if op == 'MeanVarianceNormalization':
            attrs = {}
            if self.r.random() < 0.4:
                attrs['axes'] = sorted(self.r.sample(range(4), self.r.randint(1, 3)))
            axes = attrs.get('axes', [0, 2, 3])
            if numel([x.shape[a] for a in axes]) < 8:
                return False  # the spec's E[x^2] - E[x]^2 cancels on few elements: paths differ by rounding
            # ... and where the spread is small beside the mean (a sigmoid of inputs within
            # +-0.005: a variance of 5e-7 beside a mean square of 0.25, 15% apart between paths;
            # seed 58229): the data gets a spread of its own, its mean bounded.
            x = self.bounded(x, 10)
            x = self.node('Add', [x, self.input(x.shape, dt)], [self.out(x.shape, dt, 'any', x.mag + 1)])
            return self.node(op, [x], [self.out(x.shape, dt, 'any', 100)], **attrs)
        ax = self.r.randrange(x.rank)
        axis = ax - x.rank if self.r.random() < 0.5 else ax
        if op == 'LayerNormalization':
            ns = x.shape[ax:]
            if numel(ns) < 2:
                return False
            ins = [x, self.weight(ns, dt)]
            if self.r.random() < 0.7:
                ins.append(self.weight(ns, dt))
            y = self.node(op, ins, [self.out(x.shape, dt, 'any', numel(ns) ** 0.5 * 2 + 2)], axis=axis,
                          epsilon=self.r.choice([1e-5, 1e-3]))
            return y
        if op == 'Hardmax':
            if not x.exact:
                op = 'Softmax'
            else:
                return self.node(op, [x], [self.out(x.shape, dt, 'nonneg', 1, True)], axis=axis)
        attrs = {'axis': axis} if self.r.random() < 0.8 else {}
        x = self.bounded(x, 30)
        return self.node(op, [x], [self.out(x.shape, dt, 'any' if op == 'LogSoftmax' else 'nonneg',
                                             1 if op == 'Softmax' else x.mag * 2 + math.log(x.numel + 1) + 1)], **attrs)

    def f_resize(self):
        x = self.image(rank=(4,))
        n, c, h, w = x.shape
        if self.r.random() < 0.3:
            # GridSample: sampling points from any value of the grid's shape (points beyond the
            # edges, NaN and inf included).
            ho, wo = self.r.choice([1, 2, 3, 5, 8]), self.r.choice([1, 3, 4, 7])
            if numel((n, c, ho, wo)) > self.max_numel:
                return False
            grid = self.operand((n, ho, wo, 2), x.dtype)
            return self.node('GridSample', [x, grid], [self.out((n, c, ho, wo), x.dtype, 'any', x.mag * 2, False)],
                             mode=self.r.choice(['bilinear', 'nearest', 'bicubic']),
                             padding_mode=self.r.choice(['zeros', 'border', 'reflection']),
                             align_corners=self.r.choice([0, 1]))
        if self.r.random() < 0.3:
            # 1-D and 3-D resizes (composed of 2-D ones by the importer).
            x = self.image(rank=(self.r.choice([3, 5]),))
        n, c, spatial = x.shape[0], x.shape[1], x.shape[2:]
        mode = self.r.choice(['nearest', 'nearest', 'linear', 'cubic'])
        ctm = self.r.choice(['half_pixel', 'asymmetric', 'align_corners', 'pytorch_half_pixel', 'tf_half_pixel_for_nn'])
        if self.r.random() < 0.5:
            sc = [self.r.choice([1, 2, 3]) for _ in spatial]
            if ctm != 'align_corners' and self.r.random() < 0.4:
                # Scales the sizes do not divide (interpolate(scale_factor=0.5) of an odd size):
                # the output is floor(size * scale), the coordinates divide by the scale.
                sc = [self.r.choice([0.5, 0.6, 0.75, 1.25, 1.5, 2.5]) for _ in spatial]
            f32 = lambda v: float(np.float32(v))  # the scales as the model stores them
            shp = (n, c) + tuple(int(math.floor(d * f32(s))) for d, s in zip(spatial, sc))
            if numel(shp) > self.max_numel or min(shp) < 1:
                return False
            ins = [x, '', self.param([1.0, 1.0] + [float(s) for s in sc], F32)]
        else:
            shp = (n, c) + tuple(self.r.choice([1, 2, 3, 5, 7, 8, 9, 16, 17]) for _ in spatial)
            if ctm == 'align_corners':
                shp = shp[:2] + tuple(max(d, 2) for d in shp[2:])
            if numel(shp) > self.max_numel:
                return False
            ins = [x, '', '', self.param(list(shp))]
        attrs = {'mode': mode, 'coordinate_transformation_mode': ctm}
        if mode == 'nearest':
            attrs['nearest_mode'] = self.r.choice(['round_prefer_floor', 'round_prefer_ceil', 'floor', 'ceil'])
        elif self.r.random() < 0.3:
            attrs['exclude_outside'] = 1  # TensorFlow's resize: the taps outside weigh 0
        return self.node('Resize', ins, [self.out(shp, x.dtype, 'any', x.mag * 2, False)], **attrs)

    # ---------------------------------------------------------------- quantization
    def f_quant(self):
        op = self.r.choice(['QuantizeLinear', 'QuantizeLinear', 'DequantizeLinear', 'MatMulInteger', 'ConvInteger',
                            'QLinearMatMul', 'QLinearConv', 'DynamicQuantizeLinear'])
        qt = self.r.choice([U8, I8])
        lo, hi = (0, 255) if qt == U8 else (-128, 127)

        def qdata(shape, t=qt):
            a, b = (0, 255) if t == U8 else (-128, 127)
            return self.np.integers(a, b + 1, size=shape).astype(t)

        def qweight(shape, t=qt):
            name = self.name('w')
            self.g.inits[name] = qdata(shape, t)
            return self.add_val(V(name, shape, t, 'init', 'any', 255, True), pool=False)

        def qinput(shape, t=qt):
            v = V(self.name('in'), shape, t, 'input', 'any', 255, exact=True)
            self.g.inputs.append(v.name)
            self.g.data[v.name] = qdata(shape, t)
            return self.add_val(v, pool=False)

        def zp(t=qt):
            return self.param(self.r.choice([0, 3, 128 if t == U8 else -5]), t)

        def sc():
            return self.param(self.r.choice([0.02, 0.05, 0.1, 0.0078125]), F32)

        if op == 'QuantizeLinear':
            x = self.pick(lambda v: v.dtype == F32 and v.exact)
            if x is None:
                return False
            ins = [x, sc()]
            if self.r.random() < 0.8:
                ins.append(zp())
            # rounds x / scale to even: only exact inputs (every path then divides the same numbers)
            return self.node(op, ins, [self.out(x.shape, qt if len(ins) == 3 else U8, 'any', 255, True)])
        if op == 'DequantizeLinear':
            x = self.pick(lambda v: v.dtype in (U8, I8))
            x = x if x is not None else qinput(self.shape())
            ins = [x, sc()]
            if self.r.random() < 0.7:
                ins.append(zp(x.dtype))
            return self.node(op, ins, [self.out(x.shape, F32, 'any', 300, False)])
        if op == 'DynamicQuantizeLinear':
            x = self.pick(lambda v: v.dtype == F32 and v.exact and v.numel >= 2)
            if x is None:
                return False
            self.node(op, [x], [self.out(x.shape, U8, 'any', 255, True), self.out((), F32, 'pos', 1, True),
                                self.out((), U8, 'any', 255, True)])
            return True
        if op in ('MatMulInteger', 'QLinearMatMul'):
            m, k, n = self.r.choice([1, 2, 3, 5, 8]), self.r.choice([1, 3, 8, 15, 16, 17]), self.r.choice([1, 7, 8, 9, 16])
            a = self.pick(lambda v: v.dtype == qt and v.rank == 2)
            a = a if a is not None else qinput((m, k))
            m, k = a.shape
            bt = qt if op == 'QLinearMatMul' else self.r.choice([U8, I8])
            b = qweight((k, n), bt)
            if op == 'MatMulInteger':
                ins = [a, b]
                if self.r.random() < 0.7:
                    ins += [zp(qt), zp(bt)]
                return self.node(op, ins, [self.out((m, n), I32, 'any', 1 << 20, True)])
            ins = [a, sc(), zp(qt), b, sc(), zp(bt), sc(), zp(qt)]
            return self.node(op, ins, [self.out((m, n), qt, 'any', 255, False)])
        # ConvInteger / QLinearConv
        n, c = self.r.choice([1, 2]), self.r.choice([1, 2, 3, 4])
        h, w = self.extent(small=True) + 2, self.extent(small=True) + 2
        x = qinput((n, c, h, w))
        g = self.r.choice([1, c]) if op == 'ConvInteger' else 1
        m = g * self.r.randint(1, 3)
        win = self.window([h, w], allow_same=False, max_k=3)
        if win is None:
            return False
        k, st, dl, pads, ap, out = win
        wt = self.r.choice([U8, I8]) if op == 'ConvInteger' else qt
        wv = qweight((m, c // g) + tuple(k), wt)
        attrs = self.win_attrs(k, st, dl, pads, ap)
        if g > 1:
            attrs['group'] = g
        if op == 'ConvInteger':
            ins = [x, wv]
            if self.r.random() < 0.7:
                ins += [zp(qt), zp(wt)]
            return self.node(op, ins, [self.out((n, m) + tuple(out), I32, 'any', 1 << 20, True)], **attrs)
        ins = [x, sc(), zp(qt), wv, sc(), zp(wt), sc(), zp(qt)]
        if self.r.random() < 0.5:
            name = self.name('w')
            self.g.inits[name] = self.np.integers(-100, 100, size=(m,)).astype(I32)
            self.add_val(V(name, (m,), I32, 'init', 'any', 100, True), pool=False)
            ins.append(name)
        return self.node(op, ins, [self.out((n, m) + tuple(out), qt, 'any', 255, False)], **attrs)

    # ---------------------------------------------------------------- recurrent
    def f_rnn(self):
        op = self.r.choice(['RNN', 'GRU', 'LSTM'])
        gates = {'RNN': 1, 'GRU': 3, 'LSTM': 4}[op]
        x = self.pick_float(lambda v: v.rank == 3 and v.dtype == F32 and v.shape[0] <= 12 and v.shape[2] <= 33)
        if x is None:
            x = self.input((self.r.choice([1, 2, 5, 7]), self.r.choice([1, 2, 3]), self.r.choice([1, 3, 4, 8, 9])), F32)
        seq, batch, inp = x.shape
        hid = self.r.choice([1, 2, 4, 5, 8, 16])
        direction = self.r.choice(['forward', 'forward', 'reverse', 'bidirectional'])
        nd = 2 if direction == 'bidirectional' else 1
        sc = 1.0 / math.sqrt(hid)
        ins = [x, self.weight((nd, gates * hid, inp), F32, scale=sc), self.weight((nd, gates * hid, hid), F32, scale=sc)]
        opt = []
        if self.r.random() < 0.7:
            opt.append(('B', self.weight((nd, 2 * gates * hid), F32, scale=sc)))
        if self.r.random() < 0.3:
            opt.append(('seq', self.param([seq] * batch, I32)))
        if self.r.random() < 0.4:
            opt.append(('h0', self.operand((nd, batch, hid), F32)))
        if op == 'LSTM' and self.r.random() < 0.3:
            opt.append(('c0', self.operand((nd, batch, hid), F32)))
        if op == 'LSTM' and self.r.random() < 0.2:
            opt.append(('P', self.weight((nd, 3 * hid), F32, scale=sc)))
        order = ['B', 'seq', 'h0', 'c0', 'P']
        have = dict(opt)
        last = max([order.index(k) for k in have] + [-1])
        for k in order[:last + 1]:
            v = have.get(k)
            ins.append(v if v is not None else '')
        attrs = {'hidden_size': hid}
        if direction != 'forward' or self.r.random() < 0.2:
            attrs['direction'] = direction
        if op == 'GRU' and self.r.random() < 0.5:
            attrs['linear_before_reset'] = 1
        if self.r.random() < 0.15:
            attrs['clip'] = 2.0
        if op == 'RNN' and self.r.random() < 0.3:
            attrs['activations'] = [self.r.choice(['Tanh', 'Relu', 'Sigmoid'])] * nd
        outs = [self.out((seq, nd, batch, hid), F32, 'any', 50) if self.r.random() < 0.8 else None,
                self.out((nd, batch, hid), F32, 'any', 50)]
        if op == 'LSTM' and self.r.random() < 0.5:
            outs.append(self.out((nd, batch, hid), F32, 'any', 50))
        if outs[0] is None and len(outs) == 2 and self.r.random() < 0.5:
            outs = [outs[1], None][::-1]
        self.node(op, ins, outs, **attrs)
        return True

    # ---------------------------------------------------------------- losses
    def f_loss(self):
        x = self.pick_float(lambda v: v.rank >= 2 and v.dtype == F32 and v.shape[1] >= 2)
        if x is None:
            x = self.input((self.r.choice([1, 2, 3, 5]), self.r.choice([2, 3, 5, 10]), self.extent(small=True)), F32)
        n, c = x.shape[0], x.shape[1]
        op = self.r.choice(['NegativeLogLikelihoodLoss', 'SoftmaxCrossEntropyLoss'])
        tshape = (n,) + x.shape[2:]
        tdata = self.np.integers(0, c, size=tshape)
        attrs = {}
        if self.r.random() < 0.3:
            attrs['ignore_index'] = int(self.r.randrange(c))
        red = self.r.choice(['mean', 'sum', 'none'])
        if red != 'mean' or self.r.random() < 0.3:
            attrs['reduction'] = red
        t = self.param(tdata.tolist(), I64)
        ins = [x, t]
        if self.r.random() < 0.4:
            ins.append(self.weight((c,), F32, 'pos'))
        oshape = tshape if red == 'none' else ()
        if op == 'SoftmaxCrossEntropyLoss':
            x = self.bounded(x, 30)
            ins[0] = x
            outs = [self.out(oshape, F32, 'any', 100)]
            if self.r.random() < 0.3:
                outs.append(self.out(x.shape, F32, 'any', 100))
            self.node(op, ins, outs, **attrs)
            return True
        return self.node(op, ins, [self.out(oshape, F32, 'any', x.mag * 10 + 10)], **attrs)

    def f_scatter(self):
        x = self.pick(lambda v: v.rank >= 1 and v.dtype != BOOL)
        if x is None:
            return False
        op = self.r.choice(['ScatterElements', 'ScatterND', 'GatherND', 'ScatterElements'])
        red = self.r.choice(['none', 'none', 'add', 'mul', 'max', 'min'])
        if op == 'GatherND':
            b = self.r.choice([0, 0, 1]) if x.rank >= 2 else 0
            k = self.r.randint(1, x.rank - b)
            lead = x.shape[:b] + tuple(self.r.choice([1, 2, 3]) for _ in range(self.r.randint(0, 2)))
            idx = np.stack([self.np.integers(-x.shape[b + j], x.shape[b + j], size=lead) for j in range(k)], -1)
            oshape = lead + x.shape[b + k:]
            if len(oshape) > 5 or numel(oshape) > self.max_numel or len(oshape) == 0:
                return False
            attrs = {'batch_dims': b} if b else {}
            return self.node(op, [x, self.param(idx.tolist(), I64)], [self.out(oshape, x.dtype, x.dom, x.mag, x.exact)], **attrs)
        attrs = {'reduction': red} if red != 'none' or self.r.random() < 0.3 else {}
        if red == 'mul' and x.dtype in FLOATS:
            x = self.bounded(x, 1.0)
        if op == 'ScatterElements':
            ax = self.r.randrange(x.rank)
            d = x.shape[ax]
            ishp = [self.r.randint(1, e) for e in x.shape]
            ishp[ax] = self.r.randint(1, d)
            # unique targets along the axis (duplicates are undefined with reduction none)
            idx = np.zeros(ishp, dtype=np.int64)
            for pos in np.ndindex(*[ishp[i] for i in range(x.rank) if i != ax]):
                perm = self.np.permutation(d)[:ishp[ax]]
                sl = list(pos)
                sl.insert(ax, slice(None))
                idx[tuple(sl)] = perm - (d if self.r.random() < 0.3 else 0)
            upd = self.operand(tuple(ishp), x.dtype)
            mag = x.mag + upd.mag if red == 'add' else (x.mag * upd.mag if red == 'mul' else max(x.mag, upd.mag))
            if x.dtype in INTS and mag > INT_LIMIT[x.dtype]:
                return False
            return self.node(op, [x, self.param(idx.tolist(), I64), upd], [self.out(x.shape, x.dtype, 'any', mag, x.exact and upd.exact and red in ('none', 'max', 'min'))],
                             axis=ax - x.rank if self.r.random() < 0.3 else ax, **attrs)
        # ScatterND: unique index tuples
        k = self.r.randint(1, x.rank)
        space = numel(x.shape[:k])
        cnt = self.r.randint(1, min(space, 6))
        flat = self.np.permutation(space)[:cnt]
        idx = np.stack(np.unravel_index(flat, x.shape[:k]), -1)
        lead = (cnt,) if self.r.random() < 0.7 or cnt < 2 else None
        if lead is None:
            idx = idx[:(cnt // 2) * 2].reshape(2, cnt // 2, k)
            lead = (2, cnt // 2)
        ushape = lead + x.shape[k:]
        upd = self.operand(ushape, x.dtype)
        mag = x.mag + upd.mag if red == 'add' else (x.mag * upd.mag if red == 'mul' else max(x.mag, upd.mag))
        if x.dtype in INTS and mag > INT_LIMIT[x.dtype]:
            return False
        return self.node(op, [x, self.param(idx.tolist(), I64), upd], [self.out(x.shape, x.dtype, 'any', mag, x.exact and upd.exact)], **attrs)


def onnx_slice_len(b, e, st, d):
    """Extent of an ONNX Slice along one axis (the clamping of the spec, not Python's)."""
    if b < 0:
        b += d
    if e < 0:
        e += d
    if st > 0:
        b, e = min(max(b, 0), d), min(max(e, 0), d)
        return max(0, -(-(e - b) // st))
    b, e = min(max(b, 0), d - 1), min(max(e, -1), d - 1)
    return max(0, -(-(b - e) // -st))


def dom_ok(v, dom):
    if dom == 'any':
        return True
    if dom == 'unit':
        return v.dom == 'unit' or v.mag <= 0.9
    order = {'any': 0, 'unit': 0, 'idx': 0, 'nonneg': 1, 'pos': 2, 'ge1': 3}
    return order.get(v.dom, 0) >= order[dom]


UNARY_OPS = ['Neg', 'Abs', 'Exp', 'Log', 'Sqrt', 'Reciprocal', 'Sin', 'Cos', 'Tan', 'Asin', 'Acos', 'Atan', 'Sinh',
             'Cosh', 'Asinh', 'Acosh', 'Atanh', 'Tanh', 'Sigmoid', 'Relu', 'Relu', 'Erf', 'Floor', 'Ceil', 'Round',
             'Sign', 'IsNaN', 'IsInf', 'Identity', 'Softplus', 'Softsign', 'HardSwish', 'HardSigmoid', 'LeakyRelu',
             'Elu', 'Celu', 'ThresholdedRelu', 'Selu', 'Clip', 'Clip', 'Shrink', 'Dropout', 'Tanh', 'Sigmoid']

_BASE = dict(unary=3, binary=4, variadic=2, logic=1, where=1, cast=1, reshape=2, flatten=1, transpose=2, concat=3,
             slice=2, split=1, gather=1, squeeze=1.5, pad=2.5, expand=1, tile=1, shuffle=0.3, misc=1, reduce=2,
             conv=1, pool=1, matmul=1, gemm=1, tied=0.15, norm=1, resize=0.3, quant=0.3, rnn=0.2, loss=0.2,
             scatter=0.5)


def _theme(**over):
    d = dict(_BASE)
    d.update(over)
    return d


FAMILY_WEIGHTS = {
    'elementwise': _theme(unary=6, binary=6, variadic=3, logic=1.5, where=1.5, conv=0.3, pool=0.3, matmul=0.3, gemm=0.3),
    'injective': _theme(reshape=4, transpose=4, concat=4, slice=4, split=2, gather=2, squeeze=3, pad=4, expand=2,
                        tile=1.5, shuffle=1, unary=1.5, binary=2),
    'mixed': _theme(),
    'conv': _theme(conv=5, mbconv=2, denseblock=1, pool=3, norm=2, pad=3, concat=3, resize=1, shuffle=1, binary=2, unary=2, reduce=1),
    'dense': _theme(matmul=4, gemm=4, tied=1.5, norm=2, binary=2, unary=2, reshape=2, transpose=2, slice=2, flatten=2),
    'reduce': _theme(reduce=6, norm=2, unary=2, binary=2, squeeze=2),
    'int': _theme(unary=0, binary=5, variadic=3, logic=2, where=2, cast=3, conv=0, pool=0, matmul=0, gemm=0, tied=0,
                  norm=0, resize=0, reduce=3, misc=2, shuffle=0),
}


def sprinkle_specials(g, seed):
    """NaN, +-inf and -0.0 in some elements of some float inputs of unrestricted domain."""
    rng = np.random.default_rng((seed * 7919 + 1) & 0xFFFFFFFF)
    for name in g.inputs:
        v = g.vals[name]
        if v.dtype not in FLOATS or v.dom != 'any' or rng.random() < 0.5:
            continue
        a = np.array(g.data[name], copy=True)
        flat = a.reshape(-1)
        k = max(1, flat.size // 100)
        idx = rng.choice(flat.size, size=min(k, flat.size), replace=False)
        flat[idx] = rng.choice(np.array([np.nan, np.inf, -np.inf, -0.0], dtype=a.dtype), size=idx.size)
        g.data[name] = a
    g.tags.append('specials')
    return g


def generate(seed, specials=False, max_ops=16):
    g = Gen(seed, max_ops).run()
    return sprinkle_specials(g, seed) if specials else g
