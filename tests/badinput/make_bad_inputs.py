"""Writes the bad inputs the CLI must reject cleanly (one error line, non-zero exit, no crash).

Run with Debian's /usr/bin/python3 (python3-onnx, python3-numpy). Usage: make_bad_inputs.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def small_model(symbolic=False):
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
    dims = ["batch", 3, 16, 16] if symbolic else [1, 3, 16, 16]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv0", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["y"], name="relu0"),
    ]
    graph = helper.make_graph(nodes, "small", [x], [y], initializer=[w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def unknown_ops_model():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="relu0"),
        helper.make_node("FrobnicateXYZ", ["a"], ["b"], name="frob0"),
        helper.make_node("FrobnicateXYZ", ["b"], ["c"], name="frob1"),
        helper.make_node("WarpDrive", ["c"], ["y"], name="warp0"),
    ]
    graph = helper.make_graph(nodes, "unknown", [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    good = small_model().SerializeToString()
    with open(os.path.join(out, "good.onnx"), "wb") as f:
        f.write(good)
    with open(os.path.join(out, "truncated.onnx"), "wb") as f:
        f.write(good[: len(good) // 2])
    with open(os.path.join(out, "random.onnx"), "wb") as f:
        f.write(np.random.default_rng(1234).integers(0, 256, 4096, dtype=np.uint8).tobytes())
    with open(os.path.join(out, "empty.onnx"), "wb") as f:
        pass
    onnx.save(unknown_ops_model(), os.path.join(out, "unknown_op.onnx"))
    onnx.save(small_model(symbolic=True), os.path.join(out, "symbolic.onnx"))
    np.save(os.path.join(out, "x_good.npy"), np.zeros((1, 3, 16, 16), np.float32))
    np.save(os.path.join(out, "x_wrong_shape.npy"), np.zeros((1, 3, 8, 8), np.float32))
    np.save(os.path.join(out, "x_wrong_dtype.npy"), np.zeros((1, 3, 16, 16), np.int64))
    with open(os.path.join(out, "garbage.npy"), "wb") as f:
        f.write(b"\x93NUMPY\x01\x00this is not a header")
    np.save(os.path.join(out, "truncated_data.npy"), np.zeros((1, 3, 16, 16), np.float32))
    with open(os.path.join(out, "truncated_data.npy"), "r+b") as f:
        f.truncate(200)
    with open(os.path.join(out, "bad_ir.sy"), "w") as f:
        f.write('def @main(%x: Tensor[(1, 4), float32]) -> Tensor[(1, 4), float32] {\n'
                '  %0 = nn.relu(%x;\n  %0\n}\n')
    # Integer division by a zero read at run time: generated code must not trap (SIGFPE).
    with open(os.path.join(out, "int_div.sy"), "w") as f:
        f.write('def @main(%a: Tensor[(2, 4), int32], %b: Tensor[(2, 4), int32]) -> Tensor[(2, 4), int32] {\n'
                '  %0 = divide(%a, %b);\n  %0\n}\n')
    np.save(os.path.join(out, "int_a.npy"), np.arange(8, dtype=np.int32).reshape(2, 4))
    np.save(os.path.join(out, "int_b_zero.npy"), np.array([[1, 2, 0, 3], [1, 1, 1, 1]], np.int32))
    # A gather index read at run time that is out of range: an error, not a clamped read.
    with open(os.path.join(out, "take.sy"), "w") as f:
        f.write('def @main(%a: Tensor[(5, 3), float32], %i: Tensor[(2), int64]) -> Tensor[(2, 3), float32] {\n'
                '  %0 = take(%a, %i);\n  %0\n}\n')
    np.save(os.path.join(out, "take_a.npy"), np.arange(15, dtype=np.float32).reshape(5, 3))
    np.save(os.path.join(out, "take_i_bad.npy"), np.array([1, 7], np.int64))
    # Scatter indices read at run time that are out of range: an error (the reference's), never
    # a clamped write.
    with open(os.path.join(out, "scatter.sy"), "w") as f:
        f.write('def @main(%a: Tensor[(5, 3), float32], %i: Tensor[(2, 3), int64], %u: Tensor[(2, 3), float32])'
                ' -> Tensor[(5, 3), float32] {\n  %0 = scatter_elements(%a, %i, %u, axis=0, reduction="none");\n  %0\n}\n')
    with open(os.path.join(out, "scatter_nd.sy"), "w") as f:
        f.write('def @main(%a: Tensor[(5, 3), float32], %i: Tensor[(2, 1), int64], %u: Tensor[(2, 3), float32])'
                ' -> Tensor[(5, 3), float32] {\n  %0 = scatter_nd(%a, %i, %u, reduction="add");\n  %0\n}\n')
    np.save(os.path.join(out, "scatter_i_bad.npy"), np.array([[0, 1, 2], [4, 5, 0]], np.int64))
    np.save(os.path.join(out, "scatter_nd_i_bad.npy"), np.array([[1], [-6]], np.int64))
    np.save(os.path.join(out, "scatter_u.npy"), np.ones((2, 3), np.float32))


if __name__ == "__main__":
    main()
