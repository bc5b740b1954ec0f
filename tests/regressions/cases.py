#!/usr/bin/python3
"""Wrong answers, failed claims and compile blow-ups found outside the conformance suite, each as
the smallest model that showed it, written in tests/diff's replay format (model.onnx, inputs/).

  cases.py --out DIR [--case NAME]    write every case (or one) to DIR/NAME/
  cases.py --list                     the case names
"""
import argparse
import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper as h, numpy_helper as nh

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def i64(name, values):
    return nh.from_array(np.array(values, np.int64), name)


def f32(name, values):
    return nh.from_array(np.asarray(values, np.float32), name)


def randn(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


# Each case returns (nodes, inputs {name: shape}, outputs [names], initializers).

@case
def concat_reshape(rng):
    """Native read p0[67], past the first input: loop partition rewrote a select proved for one
    occurrence everywhere it was shared (issue 9, case 1)."""
    return ([h.make_node('Concat', ['a', 'b'], ['c'], axis=0), h.make_node('Reshape', ['c', 's'], ['y'])],
            {'a': [2, 17], 'b': [2, 17]}, ['y'], [i64('s', [4, 17])])


@case
def tied_weight_matmul_gemm(rng):
    """One initializer packed once for MatMul (B as [K, N]) and reused by a Gemm with transB=1
    (native prepack cache and oneDNN's weight cache keyed by the constant only; case 2)."""
    return ([h.make_node('MatMul', ['x', 'W'], ['r']), h.make_node('Gemm', ['r', 'W'], ['y'], transB=1)],
            {'x': [8, 64]}, ['y'], [f32('W', randn(rng, 64, 64))])


@case
def pad_constant_3d(rng):
    return ([h.make_node('Pad', ['x', 'p'], ['y'], mode='constant')], {'x': [7, 2, 1]}, ['y'],
            [i64('p', [0, 2, 1, 0, 3, 0])])


@case
def pad_constant_4d(rng):
    return ([h.make_node('Pad', ['x', 'p'], ['y'], mode='constant')], {'x': [9, 33, 3, 5]}, ['y'],
            [i64('p', [2, 0, 2, 1, 3, 0, 3, 2])])


@case
def pad_reflect_5d(rng):
    return ([h.make_node('Pad', ['x', 'p'], ['y'], mode='reflect')], {'x': [1, 1, 16, 33, 15]}, ['y'],
            [i64('p', [0, 0, 2, 3, 1, 0, 0, 1, 2, 3])])


@case
def pad_negative_unsqueeze(rng):
    """Cropping and padding at once, then a reshape-like op (also wrong with oneDNN enabled)."""
    return ([h.make_node('Pad', ['x', 'p'], ['t'], mode='constant'), h.make_node('Unsqueeze', ['t', 'ax'], ['y'])],
            {'x': [33, 5, 2]}, ['y'], [i64('p', [-1, 3, 1, 2, 0, 2]), i64('ax', [3, 4])])


@case
def max3_broadcast(rng):
    """GCC 12 -O3 miscompiled the nested isnan()||isnan() ? NAN : select form in an omp simd loop."""
    return ([h.make_node('Max', ['a', 'b', 'c'], ['y'])], {'a': [5, 4, 8], 'b': [5, 4, 1], 'c': [2, 5, 4, 1]},
            ['y'], [])


@case
def concat_transpose_unsqueeze(rng):
    return ([h.make_node('Concat', ['a', 'b', 'c'], ['t'], axis=-2),
             h.make_node('Transpose', ['t'], ['u'], perm=[1, 0, 2]), h.make_node('Unsqueeze', ['u', 'ax'], ['y'])],
            {'a': [18, 5, 17], 'b': [18, 5, 17], 'c': [18, 5, 17]}, ['y'], [i64('ax', [0])])


@case
def channel_shuffle(rng):
    """concat -> reshape to 5-d -> transpose -> reshape, as in ShuffleNet."""
    return ([h.make_node('Concat', ['a', 'b'], ['c'], axis=1), h.make_node('Reshape', ['c', 's5'], ['r']),
             h.make_node('Transpose', ['r'], ['t'], perm=[0, 2, 1, 3, 4]), h.make_node('Reshape', ['t', 's4'], ['y'])],
            {'a': [1, 6, 5, 17], 'b': [1, 6, 5, 17]}, ['y'], [i64('s5', [1, 2, 6, 5, 17]), i64('s4', [1, 12, 5, 17])])


@case
def concat_avgpool_ceil(rng):
    return ([h.make_node('Concat', ['a', 'b'], ['c'], axis=1),
             h.make_node('AveragePool', ['c'], ['y'], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)],
            {'a': [1, 3, 9, 17], 'b': [1, 2, 9, 17]}, ['y'], [])


@case
def reducemax_extent1_relu(rng):
    """oneDNN claimed a reduction over extent-1 axes, then could not create its descriptor."""
    return ([h.make_node('ReduceMax', ['x'], ['t'], axes=[1]), h.make_node('Relu', ['t'], ['y'])], {'x': [5, 1]},
            ['y'], [])


@case
def slice_step2_flatten_gemm(rng):
    return ([h.make_node('Slice', ['x', 'st', 'en', 'ax', 'sp'], ['t']), h.make_node('Flatten', ['t'], ['f'], axis=1),
             h.make_node('Gemm', ['f', 'W', 'B'], ['g']), h.make_node('Relu', ['g'], ['y'])],
            {'x': [4, 6, 8]}, ['y'],
            [i64('st', [0]), i64('en', [8]), i64('ax', [2]), i64('sp', [2]), f32('W', randn(rng, 24, 10)),
             f32('B', randn(rng, 10))])


@case
def reshape_then_step2_slice(rng):
    """oneDNN claimed the slice and then threw "could not construct a memory descriptor using
    strides" (a dnnl::error, which the fallback did not catch); the region now runs natively."""
    return ([h.make_node('Reshape', ['x', 's'], ['r']), h.make_node('Slice', ['r', 'st', 'en', 'ax', 'sp'], ['y'])],
            {'x': [15, 1, 15]}, ['y'],
            [i64('s', [-1, 3]), i64('st', [0]), i64('en', [4611686018427387904]), i64('ax', [1]), i64('sp', [2])])


@case
def lstm_bidirectional_onednn(rng):
    """merge_regions merged two oneDNN regions that a third connected both ways (a cycle in the
    rebuilt graph: partition failed with unordered_map::at)."""
    return ([h.make_node('LSTM', ['x', 'W', 'R', 'B', '', 'h0'], ['y'], hidden_size=2, direction='bidirectional')],
            {'x': [2, 3, 3], 'h0': [2, 3, 2]}, ['y'],
            [f32('W', randn(rng, 2, 8, 3)), f32('R', randn(rng, 2, 8, 2)), f32('B', randn(rng, 2, 16))])


@case
def maxpool_window_in_padding(rng):
    """A dilated window that covers only padding: oneDNN gave -FLT_MAX where the reference gives -inf."""
    return ([h.make_node('MaxPool', ['x'], ['y'], kernel_shape=[1, 2], strides=[2, 1], dilations=[2, 2],
                         pads=[0, 1, 0, 1])], {'x': [2, 12, 1, 1]}, ['y'], [])


@case
def logsoftmax_one_element_sqrt(rng):
    """oneDNN's log-softmax over one element gave 1.4e-6 instead of 0; sqrt made it 1.2e-3."""
    return ([h.make_node('LogSoftmax', ['x'], ['t'], axis=-2), h.make_node('Sqrt', ['t'], ['y'])],
            {'x': [1, 1]}, ['y'], [])


@case
def where_reduce_sum(rng):
    """GCC 12.2 -O3 loop if-conversion miscompiled sum(where(a >= b, c, a)) over a [28, 3] plane
    (the condition and a branch read the same element); such kernels are built without it."""
    return ([h.make_node('GreaterOrEqual', ['a', 'W'], ['m']), h.make_node('Where', ['m', 'c', 'a'], ['w']),
             h.make_node('ReduceSum', ['w'], ['y'], keepdims=0)],
            {'a': [28, 3], 'c': [28, 3]}, ['y'], [f32('W', randn(rng, 28, 3))])


@case
def uint8_add_wraps_before_max(rng):
    """uint8 255 + 1 was compared as 256 in the generated C (integer promotion) and stored as 0."""
    return ([h.make_node('Add', ['b', 'k'], ['t']), h.make_node('Max', ['a', 't'], ['y'])],
            {'a': ([5, 9], np.uint8), 'b': ([5, 9], np.uint8)}, ['y'], [nh.from_array(np.array(1, np.uint8), 'k')])


@case
def grouped_conv_same_3wide(rng):
    """Every output column of a 3-wide plane is a padding border: loop partition gave each its own
    nest (1,842 loops, the C compiler ran for minutes). Run with a short timeout."""
    return ([h.make_node('Conv', ['x', 'W'], ['c'], group=3, auto_pad='SAME_LOWER'),
             h.make_node('Clip', ['c', 'lo', 'hi'], ['d']), h.make_node('MatMul', ['d', 'M'], ['y'])],
            {'x': [1, 12, 33, 3]}, ['y'],
            [f32('W', randn(rng, 6, 4, 2, 3)), f32('lo', 0.0), f32('hi', 6.0), f32('M', randn(rng, 3, 5))])


@case
def reflect_pad_depthwise(rng):
    return ([h.make_node('Pad', ['x', 'p'], ['t'], mode='reflect'),
             h.make_node('Conv', ['t', 'W'], ['y'], group=8, kernel_shape=[3, 3])],
            {'x': [1, 8, 5, 3]}, ['y'], [i64('p', [0, 0, 1, 1, 0, 0, 1, 1]), f32('W', randn(rng, 8, 1, 3, 3))])


@case
def matmul_left_batch_broadcast(rng):
    """libxsmm claimed a matmul whose left operand broadcasts a batch axis of 1 (same rank as the
    result), then failed at load: "A's batch is not the output's" (an einsum's ellipsis)."""
    return ([h.make_node('MatMul', ['a', 'b'], ['y'])], {'a': [1, 3, 4], 'b': [5, 4, 6]}, ['y'], [])


@case
def resize_cubic_3d_exclude_outside(rng):
    """A 3-D cubic resize (exclude_outside) is two resizes, the planes' and the depths'; fused, the
    first was inlined into every tap of the second, 6 MB of C that GCC did not compile in minutes.
    Run with a short timeout."""
    return ([h.make_node('Resize', ['x', '', '', 'sizes'], ['y'], mode='cubic', exclude_outside=1,
                         coordinate_transformation_mode='pytorch_half_pixel')],
            {'x': [1, 1, 32, 1, 15]}, ['y'], [i64('sizes', [1, 1, 8, 3, 9])])


def write(name, out):
    rng = np.random.default_rng(sorted(CASES).index(name) + 1)
    nodes, inputs, outputs, inits = CASES[name](rng)
    # An input is a shape (float32) or (shape, numpy dtype); outputs take the first input's dtype.
    spec = {n: v if isinstance(v, tuple) else (v, np.float32) for n, v in inputs.items()}
    elem = {np.float32: TensorProto.FLOAT, np.uint8: TensorProto.UINT8}
    out_t = elem[next(iter(spec.values()))[1]]
    g = h.make_graph(nodes, name, [h.make_tensor_value_info(n, elem[t], s) for n, (s, t) in spec.items()],
                     [h.make_tensor_value_info(n, out_t, None) for n in outputs], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid('', 13)])
    m.ir_version = 8
    d = os.path.join(out, name)
    os.makedirs(os.path.join(d, 'inputs'), exist_ok=True)
    onnx.save(m, os.path.join(d, 'model.onnx'))
    for n, (s, t) in spec.items():
        x = rng.uniform(-2, 2, s)
        if t == np.uint8:  # every range, and the top value that wraps when incremented
            x = rng.integers(0, 256, s)
            x.flat[::2] = 255
        np.save(os.path.join(d, 'inputs', n + '.npy'), x.astype(t))
    json.dump(list(inputs), open(os.path.join(d, 'inputs.json'), 'w'))
    json.dump(outputs, open(os.path.join(d, 'outputs.json'), 'w'))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--out')
    ap.add_argument('--case')
    ap.add_argument('--list', action='store_true')
    a = ap.parse_args()
    if a.list:
        print('\n'.join(sorted(CASES)))
        return
    if not a.out:
        ap.error('--out is required')
    for name in [a.case] if a.case else sorted(CASES):
        if name not in CASES:
            ap.error(f'no case {name!r} (see --list)')
        write(name, a.out)


if __name__ == '__main__':
    main()
