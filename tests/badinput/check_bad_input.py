"""Runs the switchyard CLI on one bad input and checks it fails cleanly.

Clean failure: non-zero exit (the stated code), stderr is exactly one line starting with
"switchyard: error:" (or CLI11's usage error for bad flags), the line mentions the expected
words, no sanitizer report, and the process neither crashed (signal) nor hung (timeout).

Usage: check_bad_input.py SWITCHYARD DATADIR CASE
"""
import os
import subprocess
import sys

CASES = {
    # name: (argv after the program, expected exit code, words the error line must contain)
    "truncated_onnx": (["run", "{d}/truncated.onnx"], 1, ["truncated.onnx"]),
    "random_bytes": (["run", "{d}/random.onnx"], 1, ["random.onnx"]),
    "empty_file": (["inspect", "{d}/empty.onnx"], 1, ["empty.onnx"]),
    "missing_file": (["run", "{d}/does_not_exist.onnx"], 1, ["does_not_exist.onnx"]),
    "unknown_op": (["run", "{d}/unknown_op.onnx"], 1, ["FrobnicateXYZ", "WarpDrive", "frob0", "warp0"]),
    "wrong_shape_input": (["run", "{d}/good.onnx", "--input", "x={d}/x_wrong_shape.npy"], 1,
                          ["'x'", "(1, 3, 16, 16)", "(1, 3, 8, 8)"]),
    "wrong_dtype_input": (["run", "{d}/good.onnx", "--input", "x={d}/x_wrong_dtype.npy"], 1,
                          ["'x'", "float32", "int64"]),
    "unknown_input_name": (["run", "{d}/good.onnx", "--input", "nope={d}/x_good.npy"], 1, ["nope"]),
    "garbage_npy": (["run", "{d}/good.onnx", "--input", "x={d}/garbage.npy"], 1, ["garbage.npy"]),
    "truncated_npy": (["run", "{d}/good.onnx", "--input", "x={d}/truncated_data.npy"], 1,
                      ["truncated_data.npy", "truncated"]),
    "symbolic_dim_unset": (["run", "{d}/symbolic.onnx"], 1, ["--input-shape"]),
    "bad_input_shape_flag": (["run", "{d}/symbolic.onnx", "--input-shape", "x=1,three,16,16"], 1,
                             ["three"]),
    "bad_ir_text": (["run", "{d}/bad_ir.sy"], 1, ["bad_ir.sy", "2:"]),
    "int_div_zero_native": (["run", "{d}/int_div.sy", "--input", "a={d}/int_a.npy", "--input", "b={d}/int_b_zero.npy"],
                            1, ["division", "zero", "divide"]),
    "int_div_zero_reference": (["run", "{d}/int_div.sy", "--target", "reference", "--input", "a={d}/int_a.npy",
                                "--input", "b={d}/int_b_zero.npy"], 1, ["division", "zero", "divide"]),
    "gather_index_out_of_range": (["run", "{d}/take.sy", "--input", "a={d}/take_a.npy", "--input",
                                   "i={d}/take_i_bad.npy"], 1, ["take", "out of range"]),
    "scatter_index_out_of_range": (["run", "{d}/scatter.sy", "--input", "a={d}/take_a.npy", "--input",
                                    "i={d}/scatter_i_bad.npy", "--input", "u={d}/scatter_u.npy"], 1,
                                   ["scatter_elements", "out of range"]),
    "scatter_index_out_of_range_reference": (["run", "{d}/scatter.sy", "--target", "reference", "--input",
                                              "a={d}/take_a.npy", "--input", "i={d}/scatter_i_bad.npy", "--input",
                                              "u={d}/scatter_u.npy"], 1, ["out of range"]),
    "scatter_nd_index_out_of_range": (["run", "{d}/scatter_nd.sy", "--input", "a={d}/take_a.npy", "--input",
                                       "i={d}/scatter_nd_i_bad.npy", "--input", "u={d}/scatter_u.npy"], 1,
                                      ["scatter_nd", "out of range"]),
    "unknown_zoo_model": (["run", "zoo:resnet9000"], 1, ["resnet9000"]),
    "bad_flag": (["run", "{d}/good.onnx", "--frobnicate"], 2, ["frobnicate"]),
    "bad_threads": (["run", "{d}/good.onnx", "--threads", "-3"], None, ["threads"]),
    # Artifacts (made from good.onnx by `switchyard compile`, then damaged; see make_artifacts).
    "artifact_truncated": (["run", "{d}/art_truncated.sya"], 1, ["art_truncated.sya", "truncated"]),
    "artifact_flipped_byte": (["run", "{d}/art_flipped.sya"], 1, ["art_flipped.sya", "corrupted", "checksum"]),
    "artifact_flipped_header": (["run", "{d}/art_flipped_header.sya"], 1, ["art_flipped_header.sya"]),
    "artifact_future_version": (["run", "{d}/art_version.sya"], 1, ["art_version.sya", "version 99"]),
    "artifact_not_an_artifact": (["run", "{d}/art_garbage.sya"], 1, ["art_garbage.sya", "not a Switchyard artifact"]),
    "artifact_empty": (["inspect", "{d}/art_empty.sya"], 1, ["art_empty.sya"]),
    "unknown_backend": (["partition", "{d}/good.onnx", "--backends", "nosuchlib"], 1, ["nosuchlib", "built into"]),
    "bad_prefer": (["compile", "{d}/good.onnx", "-o", "{d}/x.sya", "--prefer", "nn.conv2d"], 1, ["OP=BACKEND"]),
    "bad_dump_after": (["partition", "{d}/good.onnx", "--dump-after", "nopass"], 1, ["nopass"]),
}


def make_artifacts(exe, data):
    """Compiles good.onnx into an artifact and writes damaged copies of it."""
    good = os.path.join(data, "art_good.sya")
    subprocess.run([exe, "compile", os.path.join(data, "good.onnx"), "-o", good, "-q"], check=True,
                   timeout=120)
    blob = bytearray(open(good, "rb").read())

    def write(name, content):
        # Atomically (a new file renamed into place): every artifact_* case rewrites these files
        # while others, run in parallel, may have one mapped; truncating a mapped file in place
        # killed the reader with SIGBUS.
        path = os.path.join(data, name)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(bytes(content))
        os.replace(tmp, path)

    write("art_truncated.sya", blob[: len(blob) * 2 // 3])
    flipped = bytearray(blob)
    flipped[len(blob) // 2] ^= 0x10  # inside a section's content
    write("art_flipped.sya", flipped)
    header = bytearray(blob)
    header[17] ^= 0x01  # the first section's name length
    write("art_flipped_header.sya", header)
    version = bytearray(blob)
    version[8:12] = (99).to_bytes(4, "little")
    write("art_version.sya", version)
    write("art_garbage.sya", b"PK\x03\x04 this is a zip, not an artifact" * 10)
    write("art_empty.sya", b"")


def main():
    exe, data, case = sys.argv[1], sys.argv[2], sys.argv[3]
    argv, want_code, words = CASES[case]
    if case.startswith("artifact_"):
        make_artifacts(exe, data)
    cmd = [exe] + [a.format(d=data) for a in argv]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                           cwd=os.path.join(data), stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        sys.exit(f"FAIL {case}: hung (no exit within 120 s): {' '.join(cmd)}")
    err_lines = [l for l in p.stderr.splitlines() if l.strip()]
    problems = []
    if p.returncode < 0:
        problems.append(f"killed by signal {-p.returncode}")
    elif p.returncode == 0:
        problems.append("exit code 0 for a bad input")
    elif want_code is not None and p.returncode != want_code:
        problems.append(f"exit code {p.returncode}, expected {want_code}")
    if any(s in p.stderr for s in ("AddressSanitizer", "runtime error:", "LeakSanitizer", "terminate called")):
        problems.append("sanitizer report or uncaught exception")
    if case != "bad_flag" and len(err_lines) != 1:
        problems.append(f"stderr has {len(err_lines)} lines, expected exactly one")
    text = "\n".join(err_lines)
    for w in words:
        if w not in text:
            problems.append(f"error does not mention {w!r}")
    print(f"$ {' '.join(cmd)}\nexit {p.returncode}\nstderr: {p.stderr.strip()}")
    if problems:
        sys.exit(f"FAIL {case}: " + "; ".join(problems))
    print(f"ok {case}")


if __name__ == "__main__":
    main()
