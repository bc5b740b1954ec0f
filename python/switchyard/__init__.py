"""Switchyard: compile ONNX models for this CPU and run them with NumPy arrays.

    import switchyard as sy
    m = sy.compile("model.onnx", target="cpu", backends=["onednn"])
    y = m.run({"input": x})          # {output name: numpy.ndarray}
    m.save("model.sya"); m2 = sy.load("model.sya")
    m.inspect()                      # inputs, outputs, target, regions offloaded (a dict)
    sy.tune("model.onnx", "records.jsonl"); sy.compile("model.onnx", records="records.jsonl")

Errors are switchyard.Error, with the message the command-line program prints.
"""
from ._switchyard import Error, Model, available_backends, compile, load, tune, __version__  # noqa: F401

__all__ = ["Error", "Model", "available_backends", "compile", "load", "tune", "__version__"]
