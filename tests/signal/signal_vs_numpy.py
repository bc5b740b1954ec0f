#!/usr/bin/python3
"""ONNX DFT, STFT and MelWeightMatrix against numpy's FFT, an oracle outside Switchyard: real and
complex signals, inverse and one-sided transforms, padding and cutting to dft_length, an axis in
the middle, audio-sized frames, windows given as constants and as runtime inputs, and a log-mel
front-end as speech models compute it. One model holds every case as its own output; one
`switchyard run` per path computes them all.

  signal_vs_numpy.py --binary build/bin/switchyard --work DIR [RUN ARGS...]
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper as h, numpy_helper as nh

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from oracle_run import parse_args, run_and_compare  # noqa: E402


def as_pairs(z):
    return np.stack((z.real, z.imag), axis=-1)


def frames_of(x, n, step):
    count = (x.shape[1] - n) // step + 1
    return np.stack([x[:, f * step:f * step + n] for f in range(count)], axis=1)


def mel_weights(mels, dft_length, rate, lower, upper):
    """The operator's definition (ONNX's MelWeightMatrix), in float64."""
    mel = lambda hz: 2595 * np.log10(1 + hz / 700)  # noqa: E731
    step = (mel(upper) - mel(lower)) / (mels + 2)
    hz = 700 * (10 ** ((np.arange(mels + 2) * step + mel(lower)) / 2595) - 1)
    edges = np.floor((dft_length + 1) * hz / rate).astype(int)
    w = np.zeros((dft_length // 2 + 1, mels))
    for i in range(mels):
        lo, mid, hi = edges[i], edges[i + 1], edges[i + 2]
        if mid == lo:
            w[mid, i] = 1
        for j in range(lo, mid + 1 if mid > lo else lo):
            w[j, i] = (j - lo) / (mid - lo)
        for j in range(mid, hi):
            w[j, i] = (hi - j) / (hi - mid)
    return w


class Model:
    def __init__(self):
        self.nodes, self.inputs, self.inits, self.outputs = [], [], [], []
        self.feeds, self.cases = {}, []

    def input(self, name, x):
        self.feeds[name] = x.astype(np.float32)
        self.inputs.append(h.make_tensor_value_info(name, TensorProto.FLOAT, list(x.shape)))
        return name

    def const(self, name, x):
        self.inits.append(nh.from_array(np.asarray(x), name))
        return name

    def case(self, op, ins, want, label, tol=1e-5, **attrs):
        out = f"y{len(self.cases)}"
        self.nodes.append(h.make_node(op, ins, [out], **attrs))
        self.outputs.append(h.make_tensor_value_info(out, TensorProto.FLOAT, None))
        self.cases.append((out, want, label, tol))
        return out


def main():
    a = parse_args(__doc__)
    rng = np.random.default_rng(0)
    m = Model()
    i64 = lambda v: np.array(v, dtype=np.int64)  # noqa: E731

    u = lambda lo, hi, shape: rng.uniform(lo, hi, shape).astype(np.float32).astype(np.float64)  # noqa: E731
    x = u(-1, 1, (2, 16, 1))
    m.case("DFT", [m.input("real", x)], as_pairs(np.fft.fft(x[..., 0], axis=1)), "DFT real, axis 1, 16 points")
    z = u(-1, 1, (2, 12, 2))
    zc = z[..., 0] + 1j * z[..., 1]
    m.input("cplx", z)
    m.case("DFT", ["cplx"], as_pairs(np.fft.fft(zc, axis=1)), "DFT complex, 12 points")
    m.case("DFT", ["cplx"], as_pairs(np.fft.ifft(zc, axis=1)), "DFT complex inverse", inverse=1)
    x3 = u(-1, 1, (3, 20, 1))
    m.input("real20", x3)
    m.case("DFT", ["real20"], as_pairs(np.fft.rfft(x3[..., 0], axis=1)), "DFT real one-sided (rfft), 20 points", onesided=1)
    m.case("DFT", ["real20", m.const("len24", i64(24))], as_pairs(np.fft.fft(x3[..., 0], n=24, axis=1)),
           "DFT dft_length 24 > 20: zero-padded")
    m.case("DFT", ["real20", m.const("len8", i64(8))], as_pairs(np.fft.rfft(x3[..., 0], n=8, axis=1)),
           "DFT dft_length 8 < 20: cut, one-sided", onesided=1)
    w4 = u(-1, 1, (2, 3, 10, 2))
    wc = w4[..., 0] + 1j * w4[..., 1]
    m.case("DFT", [m.input("mid", w4)], as_pairs(np.fft.fft(wc, axis=2)), "DFT complex along axis 2 of 4", axis=2)
    m.case("DFT", ["mid"], as_pairs(np.fft.ifft(wc, axis=1)), "DFT complex inverse along axis 1 of 4", axis=1, inverse=1)
    big = u(-1, 1, (1, 512, 1))
    m.case("DFT", [m.input("big", big)], as_pairs(np.fft.rfft(big[..., 0], axis=1)), "DFT real one-sided, 512 points",
           onesided=1)

    # STFT: a second of 8 kHz audio in 25 ms frames every 10 ms, as speech front-ends take it.
    audio = u(-1, 1, (2, 8000, 1))
    hann = np.hanning(201)[:200].astype(np.float32).astype(np.float64)  # periodic Hann of 200
    m.input("audio", audio)
    fr = frames_of(audio[..., 0], 200, 80) * hann
    spec = m.case("STFT", ["audio", m.const("step80", i64(80)), m.const("hann", hann.astype(np.float32))],
           as_pairs(np.fft.rfft(fr, axis=-1)), "STFT 200-sample Hann frames every 80 (constant window)")
    m.case("STFT", ["audio", m.const("step50", i64(50)), "", m.const("len64", i64(64))],
           as_pairs(np.fft.rfft(frames_of(audio[..., 0], 64, 50), axis=-1)), "STFT 64-sample frames, no window")
    sig = u(-1, 1, (1, 300, 2))
    sc = sig[..., 0] + 1j * sig[..., 1]
    win = u(0, 1, (32,))
    m.case("STFT", [m.input("csig", sig), m.const("step16", i64(16)), m.input("win", win), m.const("len32", i64(32))],
           as_pairs(np.fft.fft(frames_of(sc, 32, 16) * win, axis=-1)),
           "STFT complex signal, two-sided, runtime window", onesided=0)

    # A log-mel spectrogram: |STFT|^2 times the mel weights, log.
    weights = mel_weights(40, 200, 8000, 20.0, 4000.0)
    mw = m.case("MelWeightMatrix", [m.const("mels", np.int32(40)), m.const("dftlen", np.int32(200)), m.const("rate", np.int32(8000)),
                               m.const("lo", np.float32(20.0)), m.const("hi", np.float32(4000.0))],
           weights, "MelWeightMatrix 40 bands of a 200-point DFT, 20-4000 Hz at 8 kHz")
    m.nodes.append(h.make_node("ReduceSumSquare", [spec, m.const("last", i64([-1]))], ["power"], keepdims=0))
    m.nodes.append(h.make_node("MatMul", ["power", mw], ["melpow"]))
    m.nodes.append(h.make_node("Add", ["melpow", m.const("eps", np.float32(1e-6))], ["melpow_eps"]))
    want = np.log((np.abs(np.fft.rfft(fr, axis=-1)) ** 2) @ weights + 1e-6)
    # The log turns the float32 spectrum's error, ~1e-6 of a frame's largest bin, into a relative
    # error of the weak bands' power: 1e-4 is float32's, 2e-5 was seen on every path.
    m.case("Log", ["melpow_eps"], want, "log-mel spectrogram (STFT, power, mel weights, log)", tol=1e-4)

    graph = h.make_graph(m.nodes, "signal", m.inputs, m.outputs, m.inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 18)])
    model.ir_version = 8
    path = os.path.join(a.work, "signal.onnx")
    onnx.save(model, path)
    return run_and_compare(a.binary, a.work, path, m.feeds, m.cases, a.run_args, "signal transforms match numpy")


if __name__ == "__main__":
    sys.exit(main())
