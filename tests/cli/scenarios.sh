#!/bin/bash
# Multi-step CLI scenarios (files written by one command and read by the next).
# Usage: scenarios.sh SWITCHYARD WORKDIR SCENARIO
set -eu
SY=$1
WORK=$2
HERE=$(cd "$(dirname "$0")" && pwd)
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK"
expect() { "$HERE/expect.sh" "$@"; }

case "$3" in
  run_writes_outputs)
    # One .npy per output, named after the outputs; NumPy reads them back.
    expect --stdout-has "logits" -- "$SY" run zoo:mlp --output-dir out --repeat 2
    test -f out/logits.npy && test -f out/probs.npy
    /usr/bin/python3 -c 'import numpy as np; p = np.load("out/probs.npy"); assert p.shape == (1, 10) and p.dtype == np.float32 and abs(p.sum() - 1) < 1e-5, p'
    ;;
  input_from_npy)
    # Outputs of one run feed the next; the wrong shape is named with both shapes.
    "$SY" run zoo:mlp --input-shape input=2,64 --output-dir a >/dev/null
    expect --exit 1 --stderr-lines 1 --stderr-has "switchyard: error: input 'input'" \
      --stderr-has "(2, 10)" --stderr-has "(1, 64)" -- "$SY" run zoo:mlp --input input=a/logits.npy
    /usr/bin/python3 -c 'import numpy as np; np.save("x.npy", np.full((1, 64), 0.5, np.float32)); np.save("x64.npy", np.zeros((1, 64)))'
    expect --json-check 'j["inputs"][0]["source"] == "x.npy"' -- "$SY" run zoo:mlp --input input=x.npy --json
    expect --exit 1 --stderr-lines 1 --stderr-has "float64" --stderr-has "float32" -- \
      "$SY" run zoo:mlp --input input=x64.npy
    expect --exit 1 --stderr-lines 1 --stderr-has "unknown input 'nope'" -- "$SY" run zoo:mlp --input nope=x.npy
    # Same input and seed: identical outputs.
    "$SY" run zoo:mlp --input input=x.npy --output-dir b1 >/dev/null
    "$SY" run zoo:mlp --input input=x.npy --output-dir b2 --threads 1 >/dev/null
    cmp b1/logits.npy b2/logits.npy
    ;;
  dynamic_shapes_from_npy)
    # A model exported with symbolic dims runs on the data given: the .npy's shape fills them.
    /usr/bin/python3 - <<'PY'
import numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto
w = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
g = helper.make_graph([helper.make_node("Relu", ["x"], ["r"]), helper.make_node("MatMul", ["r", "w"], ["y"])], "g",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", "T", 4])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", "T", 3])], [numpy_helper.from_array(w, "w")])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), "dyn.onnx")
x = np.random.default_rng(0).standard_normal((2, 5, 4)).astype(np.float32)
np.save("x.npy", x); np.save("want.npy", np.maximum(x, 0) @ w); np.save("bad.npy", np.zeros((2, 5, 6), np.float32))
PY
    "$SY" run dyn.onnx --input x=x.npy --output-dir out >/dev/null
    /usr/bin/python3 -c 'import numpy as np; y = np.load("out/y.npy"); w = np.load("want.npy"); assert y.shape == (2, 5, 3) and np.allclose(y, w, rtol=1e-6, atol=1e-6), (y.shape, abs(y - w).max())'
    expect --exit 1 --stderr-lines 1 --stderr-has "--input-shape x=N,T,4 with a number for each of N, T" -- "$SY" compile dyn.onnx -o d.sya
    expect --exit 1 --stderr-lines 1 --stderr-has "has shape (2, 5, 6); the model declares N,T,4: axis 2 must be 4" -- \
      "$SY" run dyn.onnx --input x=bad.npy
    # inspect shows what the file declares and what to pass; with the shape, the usual facts.
    expect --stdout-has "x  float32 (N, T, 4)" --stdout-has "y  float32 (N, T, 3)" \
      --stdout-has "need --input-shape x=N,T,4 with a number for each of N, T" -- "$SY" inspect dyn.onnx
    expect --json-check 'j["inputs"][0]["shape"] == ["N", "T", 4] and j["symbols"] == ["N", "T"] and not j["static"]' -- \
      "$SY" inspect dyn.onnx --json
    expect --json-check 'j["inputs"][0]["shape"] == [2, 5, 4] and j["flops"] == 2 * 5 * (4 + 2 * 4 * 3)' -- \
      "$SY" inspect dyn.onnx --input-shape x=2,5,4 --json
    # A misspelt name is named as such, not taken for a missing shape.
    expect --exit 1 --stderr-lines 1 --stderr-has "--input-shape given for 'z', which is not a graph input" -- \
      "$SY" inspect dyn.onnx --input-shape z=2,5,4
    ;;
  artifact_round_trip)
    # compile writes one artifact; run in a new process reproduces the in-process outputs bit for bit,
    # for the interpreted and the natively compiled form.
    expect --stdout-has "wrote mlp.sya" -- "$SY" compile zoo:mlp -o mlp.sya --target reference
    "$SY" run zoo:mlp --target reference --output-dir direct --threads 1 >/dev/null
    expect --stdout-has "artifact: reference" -- "$SY" run mlp.sya --output-dir loaded --threads 1
    cmp direct/logits.npy loaded/logits.npy && cmp direct/probs.npy loaded/probs.npy
    expect --json-check 'j["num_ops"] == 4' -- "$SY" inspect mlp.sya --json
    expect --stdout-has "native:" -- "$SY" compile zoo:mlp -o mlp_native.sya --emit c
    grep -q "k1_nn_dense" mlp_native.c
    # The code would be written over the artifact: refused before compiling.
    expect --exit 1 --stderr-lines 1 --stderr-has "name the artifact otherwise" -- "$SY" compile zoo:mlp -o mlp.c --emit c
    test ! -e mlp.c
    "$SY" run zoo:mlp --target cpu --output-dir direct_native --threads 1 >/dev/null
    expect --stdout-has "artifact: native" -- "$SY" run mlp_native.sya --output-dir loaded_native --threads 1
    cmp direct_native/logits.npy loaded_native/logits.npy && cmp direct_native/probs.npy loaded_native/probs.npy
    expect --json-check 'j["kernels"] == 3 and j["planned_bytes"] <= j["intermediate_bytes"]' -- "$SY" inspect mlp_native.sya --json
    expect --exit 1 --stderr-lines 1 --stderr-has "already partitioned" -- "$SY" run mlp.sya --backends x
    ;;
  artifact_target)
    # An artifact records its target; a CPU without the target's features refuses it with one line
    # naming them (SWITCHYARD_HOST_TARGET plays an AVX2-only CPU on any machine).
    export SWITCHYARD_CACHE_DIR="$WORK/cache"
    "$SY" compile zoo:mlp -o avx512.sya --target "cpu -isa=avx512" -q
    "$SY" compile zoo:mlp -o avx2.sya --target "cpu -isa=avx2" -q
    expect --exit 1 --stderr-lines 1 --stderr-has "avx512.sya: cannot run on this CPU" --stderr-has "avx512f" \
      --stderr-has "--target 'cpu -isa=avx2'" -- env SWITCHYARD_HOST_TARGET="cpu -isa=avx2" "$SY" run avx512.sya
    # In process too: compiled for a feature the CPU lacks, it is refused before the first kernel.
    expect --exit 1 --stderr-lines 1 --stderr-has "avx512f" -- \
      env SWITCHYARD_HOST_TARGET="cpu -isa=avx2" "$SY" run zoo:mlp --target "cpu -isa=avx512"
    expect --json-check 'j["target"].startswith("cpu -isa=avx2 ")' -- \
      env SWITCHYARD_HOST_TARGET="cpu -isa=avx2" "$SY" run avx2.sya --json --repeat 1
    # Each library holds the instructions of its target only: zmm registers in the AVX-512 one,
    # none in the AVX2 one (each compile above wrote one library into the empty cache).
    if command -v objdump >/dev/null; then
      with512=0
      for so in cache/*.so; do
        if objdump -d --no-show-raw-insn "$so" | grep -q '%zmm'; then with512=$((with512 + 1)); fi
      done
      test "$(ls cache/*.so | wc -l)" = 2 && test "$with512" = 1
    fi
    # Where both run, the same outputs (the kernels differ; float sums may differ in the last bits).
    "$SY" run avx2.sya --output-dir a2 >/dev/null
    if "$SY" target --json | /usr/bin/python3 -c 'import json, sys; sys.exit(0 if json.load(sys.stdin)["isa"] == "avx512" else 1)'; then
      "$SY" run avx512.sya --output-dir a5 >/dev/null
      /usr/bin/python3 -c 'import numpy as np; a, b = np.load("a2/probs.npy"), np.load("a5/probs.npy"); assert np.allclose(a, b, rtol=1e-5, atol=1e-6), (a, b)'
    fi
    ;;
  tune_records)
    # tune -> records -> compile --records; a re-run resumes (does nothing); two shards tuned in
    # separate processes and merged cover the same workloads and choose the same number of kernels
    # as one run; records for another target or build are refused with one line.
    export SWITCHYARD_CACHE_DIR="$WORK/cache"
    # (--no-model-check: what the end-to-end check marks depends on the machine's noise; it runs
    # on a file of its own below. --allow-busy: ctest runs other tests beside this one, which
    # would mark the kernels as timed on a busy machine, to be timed again.)
    expect --stdout-has "tuned 2 of 2 tasks" -- "$SY" tune zoo:mlp -o all.jsonl --trials 3 --no-model-check --allow-busy
    expect --stdout-has "tuned 0 of 2 tasks" --stdout-has "2 already in the records" -- \
      "$SY" tune zoo:mlp -o all.jsonl --trials 3 --no-model-check --allow-busy
    expect --stdout-has "tuned 2 of 2 tasks" --stdout-has "end to end: " --stdout-has " ms as without records" -- \
      "$SY" tune zoo:mlp -o checked.jsonl --trials 3
    "$SY" tune zoo:mlp -o s1.jsonl --trials 3 --shard 1/2 >/dev/null
    "$SY" tune zoo:mlp -o s2.jsonl --trials 3 --shard 2/2 >/dev/null
    expect --stdout-has "merged" -- "$SY" records merge s1.jsonl s2.jsonl -o merged.jsonl
    /usr/bin/python3 -c '
import json
w = lambda f: {json.loads(l)["workload"] for l in open(f)}
assert w("all.jsonl") == w("merged.jsonl") and len(w("all.jsonl")) == 2, (w("all.jsonl"), w("merged.jsonl"))
assert w("s1.jsonl").isdisjoint(w("s2.jsonl"))'
    expect --stdout-has "2 kernels chosen by records" -- "$SY" compile zoo:mlp --records all.jsonl -o a.sya
    ! "$SY" compile zoo:mlp --records all.jsonl -o a.sya | grep -q "other processes" || { echo "FAIL: busy warning without marks"; exit 1; }
    # One workload's records marked as timed on a busy machine: compile says so, once.
    /usr/bin/python3 -c '
import json
rs = [json.loads(l) for l in open("all.jsonl")]
w = rs[0]["workload"]
for r in rs:
    if r["workload"] == w: r["others_cpus"] = 0.8
open("busy.jsonl", "w").write("".join(json.dumps(r) + "\n" for r in rs))'
    expect --stdout-has "1 of 2 workloads were timed while other processes took CPUs (up to 0.8)" -- \
      "$SY" compile zoo:mlp --records busy.jsonl -o b.sya
    expect --stdout-has "2 kernels chosen by records" --stdout-has "measured" -- \
      "$SY" compile zoo:mlp --records merged.jsonl -o m.sya --explain
    # Made for AVX2, refused for AVX-512 (compiling for a target needs no such CPU), and the reverse.
    "$SY" tune zoo:mlp -o avx2.jsonl --trials 2 --target "cpu -isa=avx2" >/dev/null
    expect --exit 1 --stderr-lines 1 --stderr-has "refused" --stderr-has "cpu avx2" -- \
      "$SY" compile zoo:mlp --records avx2.jsonl --target "cpu -isa=avx512" -o x.sya
    sed 's/"target_key":"cpu avx2/"target_key":"cpu avx512/' avx2.jsonl >as512.jsonl
    expect --exit 1 --stderr-lines 1 --stderr-has "refused" --stderr-has "cpu avx512" -- \
      "$SY" compile zoo:mlp --records as512.jsonl --target "cpu -isa=avx2" -o x.sya
    sed 's/"switchyard":"[^"]*"/"switchyard":"0.0.1"/' all.jsonl >old.jsonl
    expect --exit 1 --stderr-lines 1 --stderr-has "0.0.1" --stderr-has "re-tune" -- \
      "$SY" compile zoo:mlp --records old.jsonl -o x.sya
    expect --exit 1 --stderr-lines 1 --stderr-has "no tuning records" -- "$SY" compile zoo:mlp --records none.jsonl -o x.sya
    echo '{"workload": 3}' >bad.jsonl
    expect --exit 1 --stderr-lines 1 --stderr-has "bad.jsonl:1: not a tuning record" -- \
      "$SY" compile zoo:mlp --records bad.jsonl -o x.sya
    expect --exit 2 --stderr-lines 1 --stderr-has "--search" -- "$SY" tune zoo:mlp -o x.jsonl --search best
    expect --exit 1 --stderr-lines 1 --stderr-has "--shard" -- "$SY" tune zoo:mlp -o x.jsonl --shard 3/2
    expect --exit 1 --stderr-lines 1 --stderr-has "--shard" -- "$SY" tune zoo:mlp -o x.jsonl --shard 1/2x
    expect --exit 1 --stderr-lines 1 --stderr-has "cannot write" -- "$SY" tune zoo:mlp -o /nonexistent/dir/r.jsonl
    expect --exit 1 --stderr-lines 1 --stderr-has "avx512f" -- \
      env SWITCHYARD_HOST_TARGET="cpu -isa=avx2" "$SY" tune zoo:mlp -o y.jsonl --target "cpu -isa=avx512"
    # A write cut off mid-line (a killed tuner) is skipped on resume, said in one line.
    head -c -40 all.jsonl >cut.jsonl
    expect --stdout-has "was cut off" -- "$SY" tune zoo:mlp -o cut.jsonl --trials 3
    ;;
  partition_dot)
    # The Graphviz file renders (Debian graphviz) and names the inputs and ops.
    "$SY" partition zoo:mlp --dot g.dot >/dev/null
    grep -q 'digraph' g.dot && grep -q 'nn.dense' g.dot
    if command -v dot >/dev/null; then dot -Tsvg g.dot -o g.svg && grep -q '<svg' g.svg; fi
    ;;
  print_round_trip)
    # The printed text IR loads back and describes the same model.
    "$SY" print zoo:mlp -o mlp.sy
    "$SY" inspect zoo:mlp --json >from_zoo.json
    "$SY" inspect mlp.sy --json >from_text.json
    /usr/bin/python3 -c '
import json
a, b = json.load(open("from_zoo.json")), json.load(open("from_text.json"))
for k in ("inputs", "op_histogram", "params", "flops"):
    assert a[k] == b[k], (k, a[k], b[k])'
    expect --stdout-has "..." -- "$SY" print zoo:mlp --no-weights
    ;;
  demo)
    expect --stdout-has "1. Load" --stdout-has "2. Compile" --stdout-has "3. Run" --stdout-has "(ok)" \
      --stdout-has "5. Save" -- "$SY" demo zoo:mlp --output-dir d
    test -f d/logits.npy && test -f d/probs.npy && test -f d/model.sya
    ;;
  *)
    echo "unknown scenario $3" >&2
    exit 2
    ;;
esac
echo "ok $3"
