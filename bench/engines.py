"""The engines the benchmark compares: one line each in ENGINES. Every engine is a command that
times one model and prints JSON in the shape of `switchyard run --json` (latency_ms.median, ...)."""

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from typing import Callable, Optional

import ort_setup
from ort_setup import Unavailable

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
PYTHON = "/usr/bin/python3"  # Debian's interpreter: python3-torch, python3-onnx


@dataclass
class Context:
    """Paths and settings every engine may need."""
    repo: str
    build_dir: str
    switchyard: str
    log: Callable[[str], None]
    child_env: dict
    node_modules: Optional[str] = None


@dataclass
class Case:
    """One exported model: build/tests/models/<name>/{model.onnx, input.npy, meta.json}."""
    name: str
    dir: str

    @property
    def onnx(self):
        return os.path.join(self.dir, "model.onnx")

    def inputs(self):
        with open(os.path.join(self.dir, "meta.json")) as f:
            meta = json.load(f)
        return [(i["name"], os.path.join(self.dir, i["file"])) for i in meta["inputs"]]


def switchyard(target, backends=None, placement=None):
    """`switchyard run --target T [--backends B] [--placement P]`: reference (interpreted) or cpu
    (native kernels); with placement "measured", each region the backends claim stays offloaded
    only where it was measured faster than native (the time spent placing is not in the latency)."""
    def prepare(ctx):
        if not os.access(ctx.switchyard, os.X_OK):
            raise Unavailable(f"{ctx.switchyard} missing (ninja -C {ctx.build_dir} switchyard)")

    def command(ctx, case, threads, warmup, repeat):
        argv = [ctx.switchyard, "run", case.onnx, "--json", "--threads", str(threads),
                "--warmup", str(warmup), "--repeat", str(repeat)]
        argv += [a for name, path in case.inputs() for a in ("--input", f"{name}={path}")]
        return argv + ["--target", target] + (["--backends", backends] if backends else []) + \
            (["--placement", placement] if placement else [])
    return prepare, command


def switchyard_measured(backends):
    """`switchyard run --placement measured --records R`: every backend offered, each region where
    it was measured fastest, the whole checked against each backend alone. The native side of every
    comparison is the tuned one, externs allowed (as sy-tuned-ext): R starts as a copy of
    BUILD/bench/records/<model>.externs.jsonl (tuned on first use) when the bench starts, and the
    placement made in the first round is added to it, so that every round runs the same placement,
    as a deployed model would; the first round's log line says how long placing took."""
    prepare_plain, plain = switchyard("cpu", backends, "measured")
    _, tuned = switchyard_tuned("cpu", externs=True)
    started = set()

    def prepare(ctx):
        prepare_plain(ctx)
        folder = os.path.join(ctx.build_dir, "bench", "records")
        os.makedirs(folder, exist_ok=True)
        for f in os.listdir(folder):
            if f.endswith(".placement.jsonl"):
                os.remove(os.path.join(folder, f))

    def command(ctx, case, threads, warmup, repeat):
        folder = os.path.join(ctx.build_dir, "bench", "records")
        records = os.path.join(folder, f"{case.name}.placement.jsonl")
        if case.name not in started:
            tuned(ctx, case, threads, warmup, repeat)  # the tuning records, made or resumed
            shutil.copyfile(os.path.join(folder, f"{case.name}.externs.jsonl"), records)
            started.add(case.name)
        return plain(ctx, case, threads, warmup, repeat) + ["--records", records]
    return prepare, command


def switchyard_tuned(target="cpu", externs=False):
    """`switchyard run --records R`: the kernels chosen by tuning records, among Switchyard's own
    implementations only (`tune --no-externs`) or with the libraries' extern implementations too.
    The records are made on first use by `switchyard tune` into
    BUILD/bench/records/<model>[.externs].jsonl (minutes per model; a later run resumes, i.e. takes
    seconds when every workload of this target is there)."""
    prepare, plain = switchyard(target)

    def command(ctx, case, threads, warmup, repeat):
        name = case.name + (".externs" if externs else "")
        records = os.path.join(ctx.build_dir, "bench", "records", f"{name}.jsonl")
        os.makedirs(os.path.dirname(records), exist_ok=True)
        ctx.log(f"  tuning records for {case.name} (resumed from {records}) ...")
        proc = subprocess.run([ctx.switchyard, "tune", case.onnx, "--target", target, "-o", records] +
                              ([] if externs else ["--no-externs"]),
                              capture_output=True, text=True, env=ctx.child_env)
        if proc.returncode != 0:
            raise Unavailable(f"switchyard tune failed: {proc.stderr.strip()[-300:]}")
        summary = [l for l in proc.stdout.splitlines() if l.startswith("tuned ")]
        ctx.log(f"    {summary[0] if summary else 'tuned'}")
        return plain(ctx, case, threads, warmup, repeat) + ["--records", records]
    return prepare, command


def onnxruntime():
    """onnxruntime-node from npm, installed into BUILD/bench/node_modules on first use."""
    def prepare(ctx):
        ctx.node_modules = ort_setup.ensure(ctx.build_dir, ctx.log)

    def command(ctx, case, threads, warmup, repeat):
        argv = ["node", os.path.join(BENCH_DIR, "ort_latency.mjs"), "--node-modules",
                ctx.node_modules, "--model", case.onnx, "--threads", str(threads),
                "--warmup", str(warmup), "--repeat", str(repeat)]
        return argv + [a for name, path in case.inputs() for a in ("--input", f"{name}={path}")]
    return prepare, command


def pytorch():
    """Debian's python3-torch, eager mode, the module export_models.py exported."""
    def prepare(ctx):
        proc = subprocess.run([PYTHON, "-c", "import torch, torchvision"], capture_output=True,
                              text=True)
        if proc.returncode != 0:
            raise Unavailable("python3-torch / python3-torchvision missing "
                              "(apt-get install python3-torch python3-torchvision)")

    def command(ctx, case, threads, warmup, repeat):
        return [PYTHON, os.path.join(BENCH_DIR, "torch_latency.py"), "--model", case.name,
                "--model-dir", case.dir, "--threads", str(threads), "--warmup", str(warmup),
                "--repeat", str(repeat)]
    return prepare, command


@dataclass
class Engine:
    key: str     # name for --engines and in the CSV
    label: str   # column header in the table
    impl: tuple  # (prepare(ctx) raising Unavailable, command(ctx, case, threads, warmup, repeat))


def byoc_backends():
    """The BYOC backends built into build/bin/switchyard (`switchyard backends --json`)."""
    exe = os.path.join(os.path.dirname(BENCH_DIR), "build", "bin", "switchyard")
    try:
        out = subprocess.run([exe, "backends", "--json"], capture_output=True, text=True, timeout=60)
        return [b["name"] for b in json.loads(out.stdout)] if out.returncode == 0 else []
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return []


def code_generators():
    """The codegen hooks built into build/bin/switchyard besides C (`switchyard target --json`)."""
    exe = os.path.join(os.path.dirname(BENCH_DIR), "build", "bin", "switchyard")
    try:
        out = subprocess.run([exe, "target", "--json"], capture_output=True, text=True, timeout=60)
        if out.returncode != 0:
            return []
        return [c["name"] for c in json.loads(out.stdout).get("code_generators", []) if c["name"] != "c"]
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return []


# Table columns in this order. A new engine is one line here; every built-in BYOC backend gets a
# column of its own (offloading to it, the rest native).
ENGINES = [
    Engine("sy-ref", "Switchyard ref", switchyard("reference")),
    Engine("sy-native", "Switchyard native", switchyard("cpu")),
    # The portable AVX2 build (what an artifact for any AVX2 CPU runs); on an AVX2 host the same as
    # sy-native. An AVX-512 build cannot be timed on an AVX2 host (its kernels are refused there).
    Engine("sy-native-avx2", "Switchyard native -isa=avx2", switchyard("cpu -isa=avx2")),
] + [
    # The native kernels through each codegen hook built in (e.g. sy-native-llvm).
    Engine(f"sy-native-{cg}", f"Switchyard native -codegen={cg}", switchyard(f"cpu -codegen={cg}")) for cg in code_generators()
] + [
    # Native kernels chosen by tuning records (`switchyard tune`, made on first use).
    Engine("sy-tuned", "Switchyard native+tuned", switchyard_tuned("cpu")),
    Engine("sy-tuned-ext", "Switchyard native+tuned+externs", switchyard_tuned("cpu", externs=True)),
] + [Engine(f"sy-{b}", f"Switchyard {b}", switchyard("cpu", b)) for b in byoc_backends()] + [
    # Every built-in backend offered (oneDNN first: it claims whole conv/dense regions, the
    # others what is left), each region where it was measured fastest.
    Engine("sy-measured", "Switchyard measured",
           switchyard_measured(",".join(sorted(byoc_backends(), key=lambda b: b != "onednn")))),
] + [
    Engine("ort", "ONNX Runtime", onnxruntime()),
    Engine("torch", "PyTorch", pytorch()),
]
BASELINE = "ort"  # ratios in the table are engine median / this engine's median
