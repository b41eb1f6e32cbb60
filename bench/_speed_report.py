"""The markdown of the CUDA speed sweep (bench/sweep_cuda_speed.py): the header, one row per
model x batch x precision, the summary per precision at the summary batch, and the per-layer
profiles of the worst rows. Rows are dicts: model, batch ("fixed" or an int), precision, dnnx and
ort (a child's record: "ms", "load_s", "note", or "error"), diff (max |dnnx - ort| / max |ort| over
the first output, or None) and diff_note."""
from __future__ import annotations

import statistics
from typing import List, Optional

CELL = 110  # characters of an error in a cell


def cell(text: str) -> str:
    return " ".join(str(text).split())[:CELL].replace("|", "/")


def ratio(row: dict) -> Optional[float]:
    d, o = row["dnnx"].get("ms"), row["ort"].get("ms")
    return d / o if d is not None and o else None


def time_cell(record: dict) -> str:
    if "ms" in record:
        return f"{record['ms']:.3f}"
    return cell(record.get("error", "not run"))


def diff_cell(row: dict) -> str:
    if row.get("diff") is None:
        return row.get("diff_note") or "-"
    return f"{row['diff']:.2g}"


def row_line(row: dict) -> str:
    r = ratio(row)
    notes = [row["dnnx"].get("note", ""), *(["ort: " + row["ort"]["note"]] if row["ort"].get("note") else []),
             row.get("diff_note", "") if row.get("diff") is not None else ""]
    load = row["dnnx"].get("load_s")
    return (f"| {row['model']} | {row['batch']} | {row['precision']} | {time_cell(row['dnnx'])} | "
            f"{time_cell(row['ort'])} | {'-' if r is None else f'{r:.2f}'} | "
            f"{'-' if load is None else f'{load:.2f}'} | {diff_cell(row)} | {cell('; '.join(filter(None, notes)))} |")


def summary(rows: List[dict], precisions: List[str], batch) -> List[str]:
    lines = [f"Summary at batch {batch} (dnnx / onnxruntime, rows where both ran):", "",
             "| precision | rows | median ratio | rows <= 1.0 | worst ratio (model) |",
             "| --- | ---: | ---: | ---: | --- |"]
    for precision in precisions:
        timed = [(ratio(r), r["model"]) for r in rows if r["batch"] == batch and r["precision"] == precision
                 and ratio(r) is not None]
        if not timed:
            lines.append(f"| {precision} | 0 | - | - | - |")
            continue
        ratios = [t for t, _ in timed]
        worst = max(timed)
        lines.append(f"| {precision} | {len(timed)} | {statistics.median(ratios):.2f} | "
                     f"{sum(t <= 1.0 for t in ratios)} of {len(ratios)} | {worst[0]:.2f} ({worst[1]}) |")
    return lines


def profile_lines(profiles: List[dict]) -> List[str]:
    lines = []
    for p in profiles:
        head = f"Profile of {p['model']} at batch {p['batch']}, {p['precision']} (ratio {p['ratio']:.2f})"
        if "profile" not in p:
            lines += ["", f"{head}: {cell(p.get('error', 'no profile'))}"]
            continue
        lines += ["", f"{head}; layers' sum {p['profile_total_ms']:.3f} ms; the {len(p['profile'])} slowest layers:",
                  "", "| layer | op | algorithm | median ms |", "| --- | --- | --- | ---: |"]
        lines += [f"| {cell(n)} | {cell(op)} | {cell(algo)} | {ms:.3f} |" for n, op, algo, ms in p["profile"]]
    return lines


def markdown(rows: List[dict], header: List[str], precisions: List[str], summary_batch, profiles: List[dict]) -> str:
    lines = [*header, "",
             "| model | batch | precision | dnnx ms | onnxruntime ms | dnnx / ort | dnnx load s | max rel diff "
             "| note |",
             "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    lines += [row_line(r) for r in rows]
    lines += ["", *summary(rows, precisions, summary_batch), *profile_lines(profiles)]
    return "\n".join(lines) + "\n"
