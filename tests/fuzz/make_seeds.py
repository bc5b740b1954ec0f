#!/usr/bin/python3
"""Writes the seed corpora of the ONNX and .npy fuzz targets (tests/fuzz/corpus/{onnx,npy}).

Run with Debian's python3 (python3-onnx, python3-numpy): /usr/bin/python3 tests/fuzz/make_seeds.py
The .sy seeds are copies of tests/golden texts; the .sya seeds are compiled from corpus/onnx by
`switchyard compile` (see tests/fuzz/README.md).
"""
import io
import os
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def model(nodes, inputs, outputs, inits=(), opset=13, name="g"):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="sy-fuzz-seed")
    m.ir_version = 8
    return m


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def onnx_seeds():
    f32 = TensorProto.FLOAT
    r = np.random.default_rng(0)
    yield "conv_relu_pool", model(
        [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[1, 1]),
         helper.make_node("Relu", ["c"], ["r"]),
         helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
         helper.make_node("GlobalAveragePool", ["p"], ["y"])],
        [vi("x", f32, [1, 2, 4, 4])], [vi("y", f32, [1, 3, 1, 1])],
        [init("w", r.standard_normal((3, 2, 3, 3)).astype(np.float32)), init("b", np.float32([0.5, -1, 2]))])
    yield "matmul_gemm_tied", model(
        [helper.make_node("MatMul", ["x", "W"], ["m"]),
         helper.make_node("Gemm", ["m", "W"], ["g"], transB=1, alpha=0.5),
         helper.make_node("Add", ["g", "x"], ["y"])],
        [vi("x", f32, [2, 4])], [vi("y", f32, [2, 4])],
        [init("W", r.standard_normal((4, 4)).astype(np.float32))])
    yield "concat_reshape_transpose", model(
        [helper.make_node("Concat", ["a", "b"], ["c"], axis=0),
         helper.make_node("Reshape", ["c", "shape"], ["r"]),
         helper.make_node("Transpose", ["r"], ["t"], perm=[1, 0]),
         helper.make_node("Slice", ["t", "starts", "ends", "axes", "steps"], ["y"])],
        [vi("a", f32, [2, 3]), vi("b", f32, [2, 3])], [vi("y", f32, [2, 4])],
        [init("shape", np.int64([4, 3])), init("starts", np.int64([0])), init("ends", np.int64([3])),
         init("axes", np.int64([0])), init("steps", np.int64([2]))])
    yield "gather_reduce_softmax_int", model(
        [helper.make_node("Gather", ["x", "idx"], ["g"], axis=1),
         helper.make_node("ReduceMean", ["g"], ["m"], axes=[1], keepdims=1),
         helper.make_node("Softmax", ["m"], ["s"], axis=-1),
         helper.make_node("Cast", ["s"], ["y"], to=TensorProto.INT32),
         helper.make_node("Shape", ["x"], ["shp"])],
        [vi("x", f32, ["N", 5, 2])], [vi("y", TensorProto.INT32, ["N", 1, 1]), vi("shp", TensorProto.INT64, [3])],
        [init("idx", np.int64([[0, 4], [1, -1]]))], opset=11)
    yield "norm_pad_split", model(
        [helper.make_node("BatchNormalization", ["x", "s", "bb", "mu", "var"], ["n"], epsilon=1e-5),
         helper.make_node("Pad", ["n", "pads"], ["p"], mode="reflect"),
         helper.make_node("Split", ["p"], ["y0", "y1"], axis=1),
         helper.make_node("Where", ["cond", "y0", "y1"], ["y"])],
        [vi("x", f32, [1, 2, 3, 3]), vi("cond", TensorProto.BOOL, [1, 1, 5, 5])], [vi("y", f32, [1, 1, 5, 5])],
        [init("s", np.float32([1, 2])), init("bb", np.float32([0, 1])), init("mu", np.float32([0, 0])),
         init("var", np.float32([1, 4])), init("pads", np.int64([0, 0, 1, 1, 0, 0, 1, 1]))])


def npy_v3(arr):
    b = io.BytesIO()
    np.save(b, arr)
    data = b.getvalue()
    hlen = struct.unpack("<H", data[8:10])[0]
    header = data[10:10 + hlen]
    return b"\x93NUMPY\x03\x00" + struct.pack("<I", len(header)) + header + data[10 + hlen:]


def npy_seeds():
    def save(arr):
        b = io.BytesIO()
        np.save(b, arr)
        return b.getvalue()
    yield "f32_2x3", save(np.arange(6, dtype=np.float32).reshape(2, 3))
    yield "f64_scalar", save(np.float64(2.5))
    yield "i64_empty", save(np.zeros((0, 4), dtype=np.int64))
    yield "bool_1d", save(np.array([True, False, True]))
    yield "u1_fortran_1d", save(np.asfortranarray(np.arange(5, dtype=np.uint8)))
    yield "i8_i16_i32", save(np.arange(24, dtype=np.int32).reshape(2, 3, 4))
    yield "v3_i16", npy_v3(np.arange(4, dtype=np.int16))


def main():
    out = os.path.join(HERE, "corpus")
    for sub in ("onnx", "npy"):
        os.makedirs(os.path.join(out, sub), exist_ok=True)
    for name, m in onnx_seeds():
        onnx.checker.check_model(m)
        with open(os.path.join(out, "onnx", name + ".onnx"), "wb") as f:
            f.write(m.SerializeToString())
    for name, data in npy_seeds():
        with open(os.path.join(out, "npy", name + ".npy"), "wb") as f:
            f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
