"""Whether an export of export_models.py is complete and current (no torch needed to ask)."""

import json
import os

EXPORT_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "export_models.py")


def exported_files(model_dir):
    """The files meta.json lists (model, inputs, reference outputs), or None without a readable one."""
    try:
        with open(os.path.join(model_dir, "meta.json")) as f:
            meta = json.load(f)
    except (OSError, ValueError):
        return None
    return ["model.onnx"] + [i["file"] for i in meta.get("inputs", [])] + \
           [o["file"] for o in meta.get("outputs", [])]


def is_fresh(model_dir, script_mtime=None):
    """meta.json (written last) is newer than export_models.py and every file it lists exists."""
    if script_mtime is None:
        script_mtime = os.path.getmtime(EXPORT_SCRIPT)
    meta_path = os.path.join(model_dir, "meta.json")
    if not os.path.exists(meta_path) or os.path.getmtime(meta_path) <= script_mtime:
        return False
    files = exported_files(model_dir)
    return files is not None and all(os.path.exists(os.path.join(model_dir, p)) for p in files)
