"""The plan as data: a list of per-layer rows that prints as a table."""
from __future__ import annotations


def _shape(s) -> str:
    return "-" if s is None else "x".join(str(d) for d in s) or "scalar"


def format_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def _algorithm(row) -> str:
    text = f"{row['algorithm']} [{row['math']}]" if row.get("math") else row["algorithm"]
    return text + (f" {row['time_ms']:.4f} ms" if row.get("time_ms") is not None else "")


def _workspace(row) -> str:
    text = format_bytes(row["workspace"])
    return text + f" + {format_bytes(row['scratch'])} scratch" if row.get("scratch") else text


class PlanTable(list):
    """Rows (dicts): name, op, inputs, outputs, algorithm, math, workspace, scratch, time_ms, rejected,
    fallbacks. fallbacks: (kernel, why) for each kernel of the layer that failed at run time and was
    replaced (algorithm then names what runs now); empty while the planned one runs.
    workspace is what the layer's algorithms take (within workspace_limit); scratch is a fused
    layer's own activation between its two halves (e.g. the conv output in a Conv+MaxPool pair),
    which shares the workspace buffer but is not bounded by the limit. ``notes``: lines printed
    after the table (the float64/float16 inputs and outputs converted at the edges, _edges.py).
    ``precision_notes`` {layer name: text}: the int8 accuracy guard's decision for each layer it
    measured (a model from dnnx.quantize or dnnx.load(precision="int8"): _quant_report.py), set
    as those rows' ``precision`` and printed after the table."""

    def __init__(self, rows=(), notes=(), precision_notes=None):
        super().__init__(rows)
        self.notes = list(notes)
        for row in self:
            if precision_notes and row["name"] in precision_notes:
                row["precision"] = precision_notes[row["name"]]

    def __str__(self) -> str:
        header = ("layer", "op", "inputs", "outputs", "algorithm", "workspace")
        rows = [header]
        for r in self:
            rows.append((r["name"], r["op"], ", ".join(_shape(s) for s in r["inputs"]),
                         ", ".join(_shape(s) for s in r["outputs"]), _algorithm(r), _workspace(r)))
        widths = [max(len(str(row[i])) for row in rows) for i in range(len(header))]
        lines = ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        for r in self:
            for algo, why in r["rejected"]:
                lines.append(f"  {r['name']}: not {algo}: {why}")
            for algo, why in r.get("fallbacks", ()):
                lines.append(f"  {r['name']}: run-time fallback from {algo}: {why}")
            if r.get("precision"):
                lines.append(f"  {r['name']}: {r['precision']}")
        lines.extend(f"  note: {note}" for note in self.notes)
        return "\n".join(lines)
