#!/usr/bin/env python3
"""Checks the layers of src/ against the dependencies CMake declares for them (cmake/layers.cmake).

The link check (sy_layer_check_*) catches a layer calling into a layer it does not declare; this
catches the rest: an include of an undeclared layer's header that uses only its types or inline
functions, and a cycle among the declared dependencies (CMake accepts cyclic static libraries).
It also checks that the command-line program (tools/) includes nothing from src/: it is a user
of the public API (include/switchyard/) like any other. With --graph it prints the layers, each
with the layers it depends on directly.

usage: check_layers.py LAYERS_FILE SOURCE_DIR [--graph]
LAYERS_FILE has one line per layer: NAME;DIR1,DIR2;DEP1,DEP2 (dirs relative to SOURCE_DIR).
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
ANY_INCLUDE = re.compile(r'^\s*#\s*include\s*["<]([^">]+)[">]')


def read_layers(path):
    layers = {}
    for line in open(path):
        line = line.strip()
        if not line:
            continue
        name, dirs, deps = (line.split(";") + ["", ""])[:3]
        layers[name] = {
            "dirs": [d for d in dirs.split(",") if d],
            "deps": [d for d in deps.split(",") if d],
        }
    return layers


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 2:
        sys.exit(__doc__)
    layers = read_layers(args[0])
    root = args[1]
    # A directory owns the files directly in it (subfolders are other layers or other targets).
    owner = {}
    for name, l in layers.items():
        for d in l["dirs"]:
            owner[os.path.relpath(d, "src")] = name
    deps = {n: [d for d in l["deps"] if d in layers] for n, l in layers.items()}

    # Cycles: depth-first search over the declared dependencies.
    state = {}
    def visit(n, stack):
        if state.get(n) == 1:
            cycle = stack[stack.index(n):] + [n]
            sys.exit("layer cycle: " + " -> ".join(cycle))
        if state.get(n) == 2:
            return
        state[n] = 1
        for d in deps[n]:
            visit(d, stack + [n])
        state[n] = 2
    for n in layers:
        visit(n, [])

    def closure(n, seen=None):
        seen = set() if seen is None else seen
        for d in deps[n]:
            if d not in seen:
                seen.add(d)
                closure(d, seen)
        return seen

    problems = []
    files = 0
    for name, l in layers.items():
        allowed = closure(name) | {name}
        for d in l["dirs"]:
            full = os.path.join(root, d)
            for f in sorted(os.listdir(full)):
                if not f.endswith((".h", ".cpp", ".def")):
                    continue
                files += 1
                for lineno, line in enumerate(open(os.path.join(full, f), errors="replace"), 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    target = owner.get(os.path.dirname(m.group(1)))
                    if target and target not in allowed:
                        problems.append(f"{d}/{f}:{lineno}: layer {name} includes {m.group(1)} of layer "
                                        f"{target}, which it does not depend on")
    # The CLI: public headers only (quoted or angled), nothing that names a folder of src/.
    internal = {d for d in os.listdir(os.path.join(root, "src"))}
    for dirpath, _, names in os.walk(os.path.join(root, "tools")):
        for f in sorted(names):
            if not f.endswith((".h", ".cpp")):
                continue
            path = os.path.join(dirpath, f)
            for lineno, line in enumerate(open(path, errors="replace"), 1):
                m = ANY_INCLUDE.match(line)
                if m and m.group(1).split("/")[0] in internal:
                    problems.append(f"{os.path.relpath(path, root)}:{lineno}: the command-line program includes "
                                    f"{m.group(1)} from src/; it may use include/switchyard/ only")
    if problems:
        print("\n".join(problems))
        sys.exit(f"{len(problems)} include(s) across undeclared layer dependencies")
    if "--graph" in sys.argv:
        for n in layers:
            print(f"{n:14} -> {' '.join(deps[n]) or '(none)'}")
    print(f"{len(layers)} layers, {files} files: every include is of a declared dependency, no cycle; "
          "tools/ includes the public API only")


if __name__ == "__main__":
    main()
