"""The crash sweep's outcomes and what it prints and writes (bench/sweep.py): the summary lines,
the failure table, the markdown report."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Dict, List, Optional

PRECISIONS = ("fp32", "tf32", "fp16", "bf16")
OUTCOMES = ("ok", "crash", "hang", "refusal", "mismatch", "onnxruntime-fails", "not run", "sweep error")
FAILURES = ("crash", "hang", "refusal", "mismatch", "sweep error")
PLURAL = {"ok": "ok", "crash": "crashes", "hang": "hangs", "refusal": "refusals", "mismatch": "mismatches",
          "onnxruntime-fails": "onnxruntime-fails", "not run": "not run", "sweep error": "sweep errors"}


def batch_label(batch: Optional[int]) -> str:
    return "fixed" if batch is None else str(batch)


def summary_line(results: List[dict], what: str, extra: str = "") -> str:
    counts = Counter(r["outcome"] for r in results)
    parts = [f"{counts.get(o, 0)} {PLURAL[o]}" for o in OUTCOMES if o != "sweep error" or counts.get(o)]
    return f"sweep {what}: {len(results)} cases: " + ", ".join(parts) + (f" ({extra})" if extra else "")


def summary_lines(results: List[dict], extra: str) -> List[str]:
    lines = []
    pairs = sorted({(r["device"], r["precision"]) for r in results},
                   key=lambda p: (p[0], PRECISIONS.index(p[1])))
    for device, precision in pairs:
        lines.append(summary_line([r for r in results if (r["device"], r["precision"]) == (device, precision)],
                                  f"{device} {precision}"))
    if len(pairs) == 1:
        lines = []
    devices = ",".join(sorted({p[0] for p in pairs}))
    precisions = ",".join(p for p in PRECISIONS if any(q[1] == p for q in pairs))
    lines.append(summary_line(results, f"{devices} {precisions}", extra))
    return lines


def grouped_failures(results: List[dict]) -> List[dict]:
    """The failed cases, one row per model, device, precision, outcome and detail (batches joined)."""
    rows: Dict[tuple, dict] = {}
    for r in results:
        if r["outcome"] not in FAILURES:
            continue
        key = (r["model"], r["device"], r["precision"], r["outcome"], r["detail"])
        rows.setdefault(key, {"model": r["model"], "device": r["device"], "precision": r["precision"],
                              "outcome": r["outcome"], "detail": r["detail"], "batches": []})
        rows[key]["batches"].append(batch_label(r["batch"]))
    return sorted(rows.values(), key=lambda r: (FAILURES.index(r["outcome"]), r["model"], r["device"],
                                                PRECISIONS.index(r["precision"])))


def failure_table(results: List[dict], width: int = 160) -> str:
    rows = grouped_failures(results)
    if not rows:
        return "no failures"
    lines = [f"{'outcome':<11} {'model':<52} {'case':<10} {'batches':<8} detail"]
    for r in rows:
        case = f"{r['device']} {r['precision']}"
        line = f"{r['outcome']:<11} {r['model']:<52} {case:<10} {','.join(r['batches']):<8} {r['detail']}"
        lines.append(line if len(line) <= width else line[:width - 3] + "...")
    return "\n".join(lines)


def markdown_report(results: List[dict], meta: dict) -> str:
    def cell(text) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")

    out = [f"# Crash sweep, {meta['date']}", "", f"`{meta['command']}`", "",
           f"{meta['machine']}; {meta['jobs']} workers, timeout {meta['timeout']:.0f} s per case, budget "
           f"{meta['budget']:.0f} s; took {meta['seconds']:.0f} s.", ""]
    out += [f"- {line}" for line in meta["summary"]]
    out += ["", "Bounds (max |dnnx - onnxruntime| / max |onnxruntime|, Note [sweep tolerances] in "
            "bench/_sweep_worker.py): " + ", ".join(f"{k} {v:g}" for k, v in meta["tolerances"].items()) + ".", ""]
    failures = grouped_failures(results)
    out += ["## Failures", ""]
    if failures:
        out += ["| outcome | model | device | precision | batches | detail |", "| --- | --- | --- | --- | --- | --- |"]
        out += [f"| {r['outcome']} | {r['model']} | {r['device']} | {r['precision']} | {','.join(r['batches'])} | "
                f"{cell(r['detail'])} |" for r in failures]
    else:
        out += ["None."]
    out += ["", "## Every case", "", "| model | device | precision | batch | outcome | error | bound | seconds | detail |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in sorted(results, key=lambda r: (r["model"], r["device"], PRECISIONS.index(r["precision"]),
                                             -1 if r["batch"] is None else r["batch"])):
        error = "" if r.get("error") is None else f"{r['error']:.2e}"
        seconds = "" if r.get("seconds") is None else f"{r['seconds']:.1f}"
        notes = "; ".join(r.get("notes") or [])
        detail = r["detail"] + (f" ({notes})" if notes else "")
        out.append(f"| {r['model']} | {r['device']} | {r['precision']} | {batch_label(r['batch'])} | {r['outcome']} | "
                   f"{error} | {r.get('tol', '')} | {seconds} | {cell(detail)} |")
    return "\n".join(out) + "\n"


def write_report(path: Path, results: List[dict], meta: dict) -> None:
    if path.suffix.lower() == ".md":
        path.write_text(markdown_report(results, meta))
    else:
        path.write_text(json.dumps({"meta": meta, "results": results}, indent=1))
