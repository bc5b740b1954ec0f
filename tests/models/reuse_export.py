#!/usr/bin/python3
"""Copies a model's export from another build tree when it is complete and current, else exports it.

scripts/dev test builds two trees, and the sanitizer tree (build-asan/) checks models that the
release tree (build/) exported minutes before: exporting them again with PyTorch took ~50 s of the
CI's sanitizer half. A copy is used only when export_cache.is_fresh holds for it (the same test
export_models.py uses to skip its own work), and meta.json is copied last with its time kept, so
an interrupted copy is not fresh and the next run redoes it.

Usage: /usr/bin/python3 reuse_export.py --from DIR --out-dir DIR MODEL
"""

import argparse
import os
import shutil
import subprocess
import sys

import export_cache


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--from", dest="source", required=True, help="another tree's model directory")
    parser.add_argument("--out-dir", required=True, help="this tree's model directory")
    parser.add_argument("model")
    args = parser.parse_args()

    src = os.path.join(args.source, args.model)
    dst = os.path.join(args.out_dir, args.model)
    if not export_cache.is_fresh(dst) and export_cache.is_fresh(src):
        meta = os.path.join(dst, "meta.json")
        if os.path.exists(meta):
            os.remove(meta)
        for f in export_cache.exported_files(src):
            os.makedirs(os.path.dirname(os.path.join(dst, f)), exist_ok=True)
            shutil.copy2(os.path.join(src, f), os.path.join(dst, f))
        shutil.copy2(os.path.join(src, "meta.json"), meta)
        print(f"{args.model}: copied from {src}")
        return 0
    return subprocess.call([sys.executable, export_cache.EXPORT_SCRIPT, "--out-dir", args.out_dir, args.model])


if __name__ == "__main__":
    sys.exit(main())
