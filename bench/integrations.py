#!/usr/bin/python3
"""One library, three integrations, measured side by side: oneDNN as extern implementations (the
strategy's conv2d.onednn[_blocked], dense.onednn, matmul.onednn on every kernel they apply to), as
a BYOC backend (`--backends onednn`, its own runtime module) and through a target hook
(`--backends onednn_hook`, lowered into the native kernels), beside the native kernels alone and
ONNX Runtime. Per model and way: end-to-end latency (median of every run of every round, the ways
in turn each round), the activation memory planned (the native arena, plus what a backend module
plans for itself), the artifact's size, the cold compile time (a fresh kernel cache), and per
integration the lines of its code and the files outside its folder that name it.

    bench/integrations.py [--models resnet50,encoder] [--threads 2] [--rounds 4] [--repeat 10]

Writes the table (Markdown) to stdout and BUILD/bench/integrations.md."""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)
import ort_setup  # noqa: E402

# way -> (label, extra compile arguments, environment, integration folders)
EXTERNS = "conv2d.onednn_blocked,dense.onednn,matmul.onednn"
WAYS = {
    "native": ("native kernels only", [], {}, []),
    "extern": ("extern (strategy)", [], {"SWITCHYARD_CHOICES": "impls:" + EXTERNS}, ["src/externs/onednn"]),
    "extern_plain": ("extern, NCHW in oneDNN", [], {"SWITCHYARD_CHOICES": "impls:conv2d.onednn,dense.onednn,matmul.onednn"},
                     ["src/externs/onednn"]),
    "byoc": ("BYOC region", ["--backends", "onednn"], {}, ["src/backends/onednn"]),
    "hook": ("target hook", ["--backends", "onednn_hook"], {}, ["src/backends/onednn_hook", "src/externs/onednn"]),
}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def code_lines(folders):
    """Lines of C++ and CMake in the folders, tests and tools excluded."""
    n = 0
    for folder in folders:
        for root, dirs, files in os.walk(os.path.join(REPO, folder)):
            dirs[:] = [d for d in dirs if d not in ("tests", "tools")]
            for f in files:
                if f.endswith((".cpp", ".h", ".txt")):
                    with open(os.path.join(root, f)) as fh:
                        n += sum(1 for _ in fh)
    return n


def files_outside(names):
    """Files of the core (not of any integration's folder) that name the integration: what adding
    it touched outside its own folder (git grep of its registration and option)."""
    outside = set()
    for name in names:
        out = subprocess.run(["git", "grep", "-l", "-F", name, "--", "src", "include", "tools", "CMakeLists.txt", "cmake"],
                             cwd=REPO, capture_output=True, text=True).stdout.split()
        outside |= {f for f in out if not f.startswith(("src/backends/", "src/externs/", "src/codegens/"))}
    return sorted(outside)


def compile_cold(sy, model, way, out):
    label, args, env, _ = WAYS[way]
    cache = tempfile.mkdtemp(prefix="sy-cache-")
    e = dict(os.environ, SWITCHYARD_CACHE_DIR=cache, **env)
    t0 = time.monotonic()
    p = subprocess.run([sy, "compile", model, "-o", out, "-q"] + args, env=e, capture_output=True, text=True)
    seconds = time.monotonic() - t0
    shutil.rmtree(cache, ignore_errors=True)
    if p.returncode != 0:
        raise RuntimeError(f"{way}: compile failed: {p.stderr.strip()[-400:]}")
    return seconds, os.path.getsize(out)


def run_artifact(sy, art, inputs, threads, warmup, repeat):
    argv = [sy, "run", art, "--json", "--threads", str(threads), "--warmup", str(warmup), "--repeat", str(repeat)]
    argv += [a for name, path in inputs for a in ("--input", f"{name}={path}")]
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"run {art}: {p.stderr.strip()[-400:]}")
    return json.loads(p.stdout)


def run_ort(node_modules, model, inputs, threads, warmup, repeat):
    argv = ["node", os.path.join(BENCH, "ort_latency.mjs"), "--node-modules", node_modules, "--model", model,
            "--threads", str(threads), "--warmup", str(warmup), "--repeat", str(repeat)]
    argv += [a for name, path in inputs for a in ("--input", f"{name}={path}")]
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"onnxruntime: {p.stderr.strip()[-400:]}")
    return json.loads(p.stdout)


def mb(b):
    return f"{b / 1e6:.1f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="resnet50,encoder")
    ap.add_argument("--ways", default="native,extern,extern_plain,byoc,hook")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--build-dir", default=os.path.join(REPO, "build"))
    ap.add_argument("--no-ort", action="store_true")
    a = ap.parse_args()
    sy = os.path.join(a.build_dir, "bin", "switchyard")
    ways = a.ways.split(",")
    for w in ways:
        if w not in WAYS:
            sys.exit(f"integrations.py: unknown way '{w}' (known: {', '.join(WAYS)})")
    node_modules = None
    if not a.no_ort:
        try:
            node_modules = ort_setup.ensure(a.build_dir, log)
        except ort_setup.Unavailable as e:
            log(f"ONNX Runtime unavailable: {e}")
    work = os.path.join(a.build_dir, "bench", "integrations")
    os.makedirs(work, exist_ok=True)
    lines = []
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    lines.append(f"CPU: {cpu}; {a.threads} threads; latency = median of {a.rounds} rounds x {a.repeat} runs "
                 f"(after {a.warmup} warm-up), the ways in turn each round.\n")
    for model in a.models.split(","):
        mdir = os.path.join(a.build_dir, "tests", "models", model)
        onnx = os.path.join(mdir, "model.onnx")
        with open(os.path.join(mdir, "meta.json")) as f:
            inputs = [(i["name"], os.path.join(mdir, i["file"])) for i in json.load(f)["inputs"]]
        built = {}
        for w in ways:
            art = os.path.join(work, f"{model}.{w}.sya")
            log(f"{model}: compiling the {w} way (cold cache) ...")
            built[w] = compile_cold(sy, onnx, w, art) + (art,)
        runs = {w: [] for w in ways}
        per_round = {w: [] for w in ways}  # each round's median: the ways compared round by round
        ort_runs = []
        memory = {}
        for r in range(a.rounds):
            for w in ways:
                log(f"{model}: round {r + 1}/{a.rounds}, {w}")
                j = run_artifact(sy, built[w][2], inputs, a.threads, a.warmup, a.repeat)
                runs[w] += j["latency_ms"]["runs"]
                per_round[w].append(statistics.median(j["latency_ms"]["runs"]))
                memory[w] = j["activation_bytes"]
            if node_modules:
                j = run_ort(node_modules, onnx, inputs, a.threads, a.warmup, a.repeat)
                ort_runs += j["latency_ms"]["runs"]
        ort = statistics.median(ort_runs) if ort_runs else None
        lines.append(f"\n### {model}\n")
        lines.append("| way | latency ms | xORT | activation memory MB (native + module) | artifact MB | cold compile s |")
        lines.append("|---|---|---|---|---|---|")
        for w in ways:
            med = statistics.median(runs[w])
            mem = memory[w]
            mod = mem.get("backend_modules") or 0
            lines.append(f"| {WAYS[w][0]} | {med:.2f} | {med / ort:.2f} | {mb(mem['native'] + mod)} "
                         f"({mb(mem['native'])} + {mb(mod)}) | {mb(built[w][1])} | {built[w][0]:.1f} |"
                         if ort else
                         f"| {WAYS[w][0]} | {med:.2f} | - | {mb(mem['native'] + mod)} ({mb(mem['native'])} + {mb(mod)}) "
                         f"| {mb(built[w][1])} | {built[w][0]:.1f} |")
        if ort:
            lines.append(f"| ONNX Runtime | {ort:.2f} | 1.00 | - | - | - |")
        # The machine's speed drifts between rounds more than the ways differ; a ratio taken
        # within each round (the ways ran seconds apart) cancels the drift. One ratio per other
        # way: the better of two noisy times would favour them.
        if "hook" in ways:
            for w in (x for x in ("byoc", "extern") if x in ways):
                ratios = sorted(per_round["hook"][r] / per_round[w][r] for r in range(a.rounds))
                q = lambda f: ratios[min(len(ratios) - 1, int(f * len(ratios)))]
                lines.append(f"\nRound by round, the hook's median / {WAYS[w][0]}'s in the same round: median "
                             f"{statistics.median(ratios):.3f}, quartiles {q(0.25):.3f}-{q(0.75):.3f}, the hook no "
                             f"slower in {sum(x <= 1 for x in ratios)} of {len(ratios)} rounds.")
    lines.append("\n### The integrations' code\n")
    lines.append("| way | folders | lines (C++ and CMake, no tests) | files outside its folders that name it |")
    lines.append("|---|---|---|---|")
    names = {"extern": ["sy_onednn_", "onednn_extern", "sy_add_extern(onednn"],
             "byoc": ["backends/onednn/", "sy_add_backend(onednn "], "hook": ["onednn_hook"]}
    for w in ("extern", "byoc", "hook"):
        if w not in ways:
            continue
        folders = WAYS[w][3]
        outside = files_outside(names[w])
        lines.append(f"| {WAYS[w][0]} | {', '.join(folders)} | {code_lines(folders)} | "
                     f"{', '.join(outside) if outside else 'none'} |")
    text = "\n".join(lines) + "\n"
    print(text)
    with open(os.path.join(a.build_dir, "bench", "integrations.md"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
