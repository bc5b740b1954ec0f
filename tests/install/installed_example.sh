#!/usr/bin/env bash
# The C++ example built against the *installed* package: cmake --install into a fresh prefix,
# configure and build examples/cpp with find_package(switchyard), run it on an exported model and
# compare its top-5 with PyTorch's. Usage: installed_example.sh BUILD_DIR SOURCE_DIR MODEL_DIR
set -euo pipefail
build=$1 src=$2 model=$3
work=$build/tests/install/work
rm -rf "$work" && mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log"
cmake -S "$src/examples/cpp" -B "$work/example" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >"$work/configure.log"
cmake --build "$work/example" >"$work/build.log"
# The installed program, not the build tree's: nothing from the source or build tree is on the path.
# (ldd's output is read whole: with grep -q, ldd could die of SIGPIPE and fail the pipe.)
grep "$work/prefix/.*libswitchyard" <<<"$(ldd "$work/example/classify")" >/dev/null || {
  echo "classify does not use the installed libswitchyard:"; ldd "$work/example/classify"; exit 1; }
got=$("$work/example/classify" "$model/model.onnx" "$model/input.npy" onednn)
echo "$got"
want=$(/usr/bin/python3 -c "
import numpy as np, sys
y = np.load('$model/reference/logits.npy').reshape(-1)
print('top-5: ' + ' '.join(str(i) for i in np.argsort(-y)[:5]))")
echo "PyTorch: $want"
[ "$got" = "$want" ] || { echo "FAIL: top-5 differs from PyTorch's"; exit 1; }
