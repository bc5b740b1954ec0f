"""The Python package against the reference target, PyTorch's outputs and itself across threads."""
import os
import threading

import numpy as np
import pytest

import switchyard as sy


def random_input(model, seed=0):
    rng = np.random.default_rng(seed)
    return {i["name"]: rng.uniform(-1, 1, i["shape"]).astype(i["dtype"]) for i in model.inputs}


def test_compile_and_run_match_the_reference():
    m = sy.compile("zoo:mlp")
    ref = sy.compile("zoo:mlp", target="reference")
    x = random_input(m)
    got, want = m.run(x), ref.run(x)
    assert set(got) == {"logits", "probs"}
    for k in want:
        assert got[k].shape == want[k].shape and got[k].dtype == np.float32
        np.testing.assert_allclose(got[k], want[k], rtol=1e-4, atol=1e-5)


def test_save_and_load(tmp_path):
    m = sy.compile("zoo:mlp")
    path = str(tmp_path / "mlp.sya")
    m.save(path)
    loaded = sy.load(path)
    x = random_input(m, 1)
    for k, v in m.run(x).items():
        np.testing.assert_array_equal(loaded.run(x)[k], v)
    info = loaded.inspect()
    assert info["inputs"][0]["name"] == "input" and info["native_kernels"] > 0


def test_inspect_says_what_runs_where():
    m = sy.compile("zoo:resnet18", backends=["onednn"])
    info = m.inspect()
    assert info["inputs"] == [{"name": "input", "shape": [1, 3, 224, 224], "dtype": "float32"}]
    assert any(r["backend"] == "onednn" and r["offloaded"] for r in info["regions"])
    assert "onednn" in sy.available_backends()


def test_errors_are_switchyard_errors_with_the_cli_message(tmp_path):
    with pytest.raises(sy.Error, match="/nonexistent/model.onnx: no such file"):
        sy.compile("/nonexistent/model.onnx")
    with pytest.raises(sy.Error, match="nosuchlib"):
        sy.compile("zoo:mlp", backends=["nosuchlib"])
    m = sy.compile("zoo:mlp")
    with pytest.raises(sy.Error, match="input 'input' is missing"):
        m.run({})
    with pytest.raises(sy.Error, match="input"):
        m.run({"input": np.zeros((1, 65), np.float32)})
    bad = tmp_path / "bad.sya"
    bad.write_bytes(b"SYA1 not really an artifact")
    with pytest.raises(sy.Error):
        sy.load(str(bad))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_numpy_dtypes(tmp_path, dtype):
    path = tmp_path / f"add_{dtype}.sy"
    path.write_text('#[version = "0.1"]\n'
                    f"def @main(%x: Tensor[(2, 3), {dtype}], %y: Tensor[(2, 3), {dtype}]) -> Tensor[(2, 3), {dtype}] {{\n"
                    "  add(%x, %y)\n}\n")
    m = sy.compile(str(path))
    x = np.arange(6).reshape(2, 3).astype(dtype)
    y = (np.arange(6).reshape(2, 3) * 3).astype(dtype)
    out = list(m.run({"x": x, "y": y}).values())[0]
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out, x + y)
    # A non-contiguous array or another dtype is converted, not misread.
    xt = np.ascontiguousarray(x.T).T
    assert not xt.flags["C_CONTIGUOUS"] or dtype == "never"
    np.testing.assert_array_equal(list(m.run({"x": xt, "y": y.astype(np.float64)}).values())[0], x + y)


def test_four_threads_give_the_sequential_outputs():
    m = sy.compile("zoo:resnet18", backends=["onednn"])
    xs = [random_input(m, 10 + i) for i in range(4)]
    want = [m.run(x, threads=1) for x in xs]
    got = [None] * 4

    def work(i):
        for _ in range(3):
            got[i] = m.run(xs[i], threads=1)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for g, w in zip(got, want):
        for k in w:
            np.testing.assert_array_equal(g[k], w[k])


def test_a_torchvision_model_matches_pytorch():
    d = os.environ.get("SY_TEST_MODEL")
    if not d:
        pytest.skip("SY_TEST_MODEL (an exported model directory) not set")
    m = sy.compile(os.path.join(d, "model.onnx"), backends=["onednn"])
    y = m.run({"input": np.load(os.path.join(d, "input.npy"))})["logits"]
    want = np.load(os.path.join(d, "reference", "logits.npy"))
    assert np.max(np.abs(y - want)) < 1e-4


def test_help_is_there():
    assert "backends" in sy.compile.__doc__ and "threads" in sy.Model.run.__doc__


def test_tune_then_compile_with_the_records(tmp_path):
    records = str(tmp_path / "mlp.jsonl")
    summary = sy.tune("zoo:mlp", records, trials=2, time_budget=120, model_check=False)
    assert summary.startswith("tuned "), summary
    assert os.path.getsize(records) > 0
    # Tuned kernels are skipped the second time (the file is resumed from).
    assert "already in the records" in sy.tune("zoo:mlp", records, trials=2, time_budget=120, model_check=False)
    m = sy.compile("zoo:mlp", records=records)
    ref = sy.compile("zoo:mlp", target="reference")
    x = random_input(m, 5)
    for k, v in ref.run(x).items():
        np.testing.assert_allclose(m.run(x)[k], v, rtol=1e-4, atol=1e-5)
    with pytest.raises(sy.Error, match="/nonexistent/model.onnx"):
        sy.tune("/nonexistent/model.onnx", records)
