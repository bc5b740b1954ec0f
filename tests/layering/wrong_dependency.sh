#!/usr/bin/env bash
# Shows that a layer calling into a layer it does not declare fails to link: the IR layer, linked
# alone as sy_layer_check_ir is (whole-archive, --no-undefined, its declared dependency only),
# plus one function calling the ops layer, must fail on exactly that symbol; without the call it
# must link (so the failure is the wrong dependency, not the command).
# usage: wrong_dependency.sh CXX SOURCE_DIR LIBSY_IR LIBSY_SUPPORT
set -euo pipefail
cxx=$1 src=$2 ir=$3 support=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
link() {
  "$cxx" -std=c++20 -fPIC -shared -I"$src/src" -o "$tmp/probe.so" "$1" \
    -Wl,--whole-archive "$ir" -Wl,--no-whole-archive "$support" -fopenmp -ldl -Wl,--no-undefined 2>"$tmp/log"
}
cat >"$tmp/ok.cpp" <<'CPP'
#include "ir/op.h"
const std::string& probe() { return sy::ir::op_name(sy::ir::OpCode::Add); }
CPP
cat >"$tmp/bad.cpp" <<'CPP'
#include "ops/op.h"
void probe() { sy::ops::register_builtin_ops(); }  // the IR calling into the ops layer
CPP
if ! link "$tmp/ok.cpp"; then
  cat "$tmp/log"; echo "FAIL: the IR layer does not link alone against its declared dependencies"; exit 1
fi
if link "$tmp/bad.cpp"; then
  echo "FAIL: the IR layer linked although it calls into the ops layer"; exit 1
fi
if ! grep -q 'undefined reference to .*register_builtin_ops' "$tmp/log"; then
  cat "$tmp/log"; echo "FAIL: the link failed, but not on the ops layer's symbol"; exit 1
fi
echo "ok: $(grep -m1 -o 'undefined reference to .*register_builtin_ops[^'"'"']*' "$tmp/log")"
