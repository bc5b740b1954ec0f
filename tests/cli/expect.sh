#!/bin/bash
# Runs one command and checks what it did: exit code, number of stderr lines, words in stdout or
# stderr, and that stdout is JSON satisfying Python expressions over `j`.
# Usage: expect.sh [--exit N] [--stderr-lines N] [--stderr-has TEXT]... [--stdout-has TEXT]...
#                  [--json-check EXPR]... -- COMMAND ARGS...
set -u
want_exit=0
want_err_lines=""
err_has=()
out_has=()
json_checks=()
while [ $# -gt 0 ]; do
  case "$1" in
    --exit) want_exit=$2; shift 2 ;;
    --stderr-lines) want_err_lines=$2; shift 2 ;;
    --stderr-has) err_has+=("$2"); shift 2 ;;
    --stdout-has) out_has+=("$2"); shift 2 ;;
    --json-check) json_checks+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) echo "expect.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
"$@" >"$out" 2>"$err" </dev/null
code=$?
fail=0
problem() { echo "FAIL: $*"; fail=1; }
echo "\$ $*"
echo "exit $code"
echo "--- stderr:"; cat "$err"
echo "--- stdout (first 40 lines):"; head -n 40 "$out"
echo "---"
[ "$code" -eq "$want_exit" ] || problem "exit code $code, expected $want_exit"
if [ -n "$want_err_lines" ]; then
  n=$(grep -c . "$err")
  [ "$n" -eq "$want_err_lines" ] || problem "stderr has $n lines, expected $want_err_lines"
fi
for w in "${err_has[@]+"${err_has[@]}"}"; do
  grep -qF -- "$w" "$err" || problem "stderr does not contain '$w'"
done
for w in "${out_has[@]+"${out_has[@]}"}"; do
  grep -qF -- "$w" "$out" || problem "stdout does not contain '$w'"
done
if [ ${#json_checks[@]} -gt 0 ]; then
  /usr/bin/python3 - "$out" "${json_checks[@]}" <<'PY' || fail=1
import json, sys
with open(sys.argv[1]) as f:
    try:
        j = json.load(f)
    except ValueError as e:
        print(f"FAIL: stdout is not JSON: {e}")
        sys.exit(1)
bad = [c for c in sys.argv[2:] if not eval(c, {"j": j})]
for c in bad:
    print(f"FAIL: JSON check failed: {c}")
sys.exit(1 if bad else 0)
PY
fi
exit $fail
