"""Installs onnxruntime-node (version pinned in bench/package.json) into BUILD/bench/node_modules
with npm, once; later runs reuse it. Raises Unavailable with a readable reason on failure."""

import json
import os
import re
import shutil
import subprocess

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))


class Unavailable(Exception):
    """An engine cannot run here; the message says why (shown as n/a in the table)."""


def wanted_version():
    with open(os.path.join(BENCH_DIR, "package.json")) as f:
        return json.load(f)["dependencies"]["onnxruntime-node"]


def installed_version(node_modules):
    try:
        with open(os.path.join(node_modules, "onnxruntime-node", "package.json")) as f:
            return json.load(f)["version"]
    except (OSError, ValueError, KeyError):
        return None


def loads(node_modules):
    """Empty string when `require('onnxruntime-node')` works from node_modules, else the error."""
    script = ("const {createRequire}=require('node:module');"
              f"createRequire({json.dumps(os.path.join(node_modules, 'x.js'))})('onnxruntime-node');")
    proc = subprocess.run(["node", "-e", script], capture_output=True, text=True, timeout=120)
    return "" if proc.returncode == 0 else (proc.stderr.strip().splitlines() or ["?"])[-1]


def ensure(build_dir, log):
    """Returns the node_modules directory holding a loadable onnxruntime-node."""
    if shutil.which("node") is None:
        raise Unavailable("node not found (apt-get install nodejs npm)")
    target = os.path.join(os.path.abspath(build_dir), "bench")
    node_modules = os.path.join(target, "node_modules")
    version = wanted_version()
    if installed_version(node_modules) == version and not loads(node_modules):
        return node_modules

    if shutil.which("npm") is None:
        raise Unavailable("npm not found (apt-get install npm)")
    os.makedirs(target, exist_ok=True)
    shutil.copyfile(os.path.join(BENCH_DIR, "package.json"), os.path.join(target, "package.json"))
    log(f"setting up ONNX Runtime: npm install onnxruntime-node@{version} into {node_modules}")
    env = dict(os.environ, ONNXRUNTIME_NODE_INSTALL="skip")  # CPU binaries ship in the package
    try:
        proc = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"],
                              cwd=target, env=env, capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired:
        raise Unavailable("npm install onnxruntime-node timed out (is the npm registry reachable?)")
    if proc.returncode != 0:
        lines = [l.strip() for l in (proc.stderr + proc.stdout).splitlines() if l.strip()]
        # npm prints "npm error code X", syscall/errno lines, a message line, then a stack
        code = [l for l in lines if re.match(r"npm error code ", l)][:1]
        message = [l for l in lines if not re.match(r"npm error\s+(code|syscall|errno|at)\b", l)]
        head = " | ".join(code + message[:1])
        raise Unavailable(f"npm install onnxruntime-node@{version} failed "
                          f"(is the npm registry reachable?): {head[:300]}")
    error = loads(node_modules)
    if error:
        raise Unavailable(f"onnxruntime-node installed but does not load: {error}")
    return node_modules
