"""The benchmark's results as a side-by-side table (stdout) and as a CSV file, one row a cell."""

import csv
import os

CSV_FIELDS = ["model", "threads", "engine", "engine_label", "status", "median_ms", "min_ms",
              "p90_ms", "mean_ms", "runs", "warmup", "model_gflop", "gflops_per_s",
              "ratio_vs_baseline", "baseline", "executor", "note", "load_avg", "phases", "git_commit",
              "started", "openblas_coretype"]


NOISY = 1.25  # a median is starred when the p90 exceeds it by this factor


def gflops_per_s(flops, median_ms):
    return flops / (median_ms * 1e6) if flops and median_ms else None


def ratio(result, baseline):
    if result.get("median_ms") and baseline and baseline.get("median_ms"):
        return result["median_ms"] / baseline["median_ms"]
    return None


def fmt(value, spec, none="n/a"):
    return none if value is None else format(value, spec)


def table(rows, engines, baseline_key, flops):
    """rows: {(model, threads): {engine_key: result}}; returns the table and its footnotes."""
    reasons = []  # footnote texts; cells refer to them as n/a[k]

    def na(result):
        note = result.get("note") or "not run"
        if note not in reasons:
            reasons.append(note)
        return f"n/a[{reasons.index(note) + 1}]"

    head1 = ["", "", ""]
    head2 = ["model", "thr", "GFLOP"]
    for e in engines:
        sub = ["ms", "GF/s"] if e.key == baseline_key else ["ms", f"x{baseline_key.upper()}", "GF/s"]
        head1 += [e.label] + [""] * (len(sub) - 1)
        head2 += sub
    body = []
    for (model, threads), cells in rows.items():
        line = [model, str(threads), fmt(flops.get(model) and flops[model] / 1e9, ".2f")]
        base = cells.get(baseline_key)
        for e in engines:
            r = cells.get(e.key, {})
            ok = r.get("status") == "ok"
            noisy = ok and (r.get("p90_ms") or 0) > NOISY * r["median_ms"]
            line.append(fmt(r.get("median_ms"), ".2f") + ("*" if noisy else "") if ok else na(r))
            if e.key != baseline_key:
                line.append(fmt(ratio(r, base), ".2f", "-") if ok else "-")
            line.append(fmt(gflops_per_s(flops.get(model), r.get("median_ms")), ".1f", "-")
                        if ok else "-")
        body.append(line)

    widths = [max(len(row[i]) for row in [head2] + body) for i in range(len(head2))]
    # a group label may be wider than its sub-columns: widen the group's last column
    i = 3
    for e in engines:
        n = 2 if e.key == baseline_key else 3
        span = sum(widths[i:i + n]) + 2 * (n - 1)
        if len(e.label) > span:
            widths[i + n - 1] += len(e.label) - span
        i += n

    def render(cells, group=False):
        out, i = [], 0
        while i < len(cells):
            if group and cells[i] and i >= 3:
                n = next((k for k in range(i + 1, len(cells)) if cells[k]), len(cells)) - i
                out.append(cells[i].ljust(sum(widths[i:i + n]) + 2 * (n - 1)))
                i += n
                continue
            out.append(cells[i].ljust(widths[i]) if i < 1 else cells[i].rjust(widths[i]))
            i += 1
        return "  ".join(out).rstrip()

    lines = [render(head1, group=True), render(head2)]
    lines.append("-" * len(lines[1]))
    lines += [render(row) for row in body]
    notes = [f"[{k + 1}] {text}" for k, text in enumerate(reasons)]
    if any("*" in cell for row in body for cell in row):
        notes.append(f"* noisy: p90 > {NOISY} x median")
    return "\n".join(lines), notes


def speedup_table(rows, engines):
    """Per model and engine, the 1-thread median over the 2-thread one ("" without both)."""
    models = [m for (m, t) in rows if t == 1 and (m, 2) in rows]
    if not models:
        return ""
    w = max(len(m) for m in models + ["model"])
    lines = ["model".ljust(w) + "  " + "  ".join(e.key for e in engines)]
    for m in models:
        one, two = rows[(m, 1)], rows[(m, 2)]
        cells = []
        for e in engines:
            a, b = one.get(e.key, {}), two.get(e.key, {})
            ok = a.get("status") == "ok" and b.get("status") == "ok"
            cells.append(fmt(a["median_ms"] / b["median_ms"] if ok else None, ".2f", "-").rjust(len(e.key)))
        lines.append(m.ljust(w) + "  " + "  ".join(cells))
    return "\n".join(lines)


def write_csv(path, rows, engines, baseline_key, flops, extra):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    labels = {e.key: e.label for e in engines}
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        writer.writeheader()
        for (model, threads), cells in rows.items():
            for key, r in cells.items():
                model_flops = flops.get(model)
                writer.writerow({
                    **extra, "model": model, "threads": threads, "engine": key,
                    "engine_label": labels.get(key, key), "status": r.get("status"),
                    "median_ms": fmt(r.get("median_ms"), ".4f", ""),
                    "min_ms": fmt(r.get("min_ms"), ".4f", ""),
                    "p90_ms": fmt(r.get("p90_ms"), ".4f", ""),
                    "mean_ms": fmt(r.get("mean_ms"), ".4f", ""),
                    "runs": r.get("runs", ""), "warmup": r.get("warmup", ""),
                    "model_gflop": fmt(model_flops and model_flops / 1e9, ".4f", ""),
                    "gflops_per_s": fmt(gflops_per_s(model_flops, r.get("median_ms")), ".2f", ""),
                    "ratio_vs_baseline": fmt(ratio(r, cells.get(baseline_key)), ".4f", ""),
                    "baseline": baseline_key, "executor": r.get("executor", ""),
                    "note": r.get("note", ""), "load_avg": fmt(r.get("load_avg"), ".2f", ""),
                    "phases": r.get("phases", ""),
                })
