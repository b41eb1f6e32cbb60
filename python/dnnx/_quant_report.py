"""What the int8 accuracy guard decided (docs/precision.md, "Accuracy guard"): one row per
quantizable layer with its measured error and precision, printable as a table, and the same rows
as JSON in the written model's metadata_props (METADATA_KEY)."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Dict, List

METADATA_KEY = "dnnx.int8.layers"
JOIN_OP = "Add"  # the op of a residual join's row (Note [int8 residual join] in _quant_graph.py)
SETTINGS_KEY = "dnnx.int8.settings"


@dataclass(frozen=True)
class LayerDecision:
    """name and op of the layer (op "Add": a residual join, Note [int8 residual join] in
    _quant_graph.py); error: the relative RMS error of its output, int8 against fp32 on the
    calibration data (its inputs fp32, so the error is the layer's own); precision: "int8" or
    "fp32"; why: the reason in words."""

    name: str
    op: str
    error: float
    precision: str
    why: str


class QuantReport:
    """``dnnx.quantize``'s result: ``layers`` (LayerDecision rows in graph order), the settings
    (``calibration_method``, ``per_channel``, ``int8_tolerance``), ``output_error`` ({graph output:
    relative RMS error of the written model against fp32 on the calibration data}), ``path`` (the
    file written, or None) and ``model`` (the QDQ onnx.ModelProto). ``print(report)`` prints the
    table."""

    def __init__(self, layers: List[LayerDecision], settings: dict, output_error: Dict[str, float], path, model):
        self.layers, self.settings, self.output_error = list(layers), dict(settings), dict(output_error)
        self.path, self.model = path, model

    @property
    def int8_layers(self) -> List[LayerDecision]:
        return [row for row in self.layers if row.precision == "int8"]

    @property
    def float_layers(self) -> List[LayerDecision]:
        return [row for row in self.layers if row.precision != "int8"]

    def decisions(self) -> Dict[str, LayerDecision]:
        return {row.name: row for row in self.layers}

    def metadata(self) -> Dict[str, str]:
        """metadata_props entries: the rows and the settings, as JSON."""
        return {METADATA_KEY: json.dumps([asdict(row) for row in self.layers]),
                SETTINGS_KEY: json.dumps(self.settings)}

    def __str__(self) -> str:
        header = ("layer", "op", "error", "precision", "why")
        rows = [header] + [(r.name, r.op, f"{100.0 * r.error:.3f}%", r.precision, r.why) for r in self.layers]
        widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        layers = [r for r in self.layers if r.op != JOIN_OP]
        joins = [r for r in self.layers if r.op == JOIN_OP]
        counted = f"{sum(r.precision == 'int8' for r in layers)} of {len(layers)} layer(s) int8"
        if joins:
            counted += f", {sum(r.precision == 'int8' for r in joins)} of {len(joins)} residual join(s)"
        lines.append(f"{counted} at int8_tolerance {100.0 * self.settings['int8_tolerance']:g}% "
                     f"({self.settings['calibration_method']} calibration, "
                     f"{'per-channel' if self.settings['per_channel'] else 'per-tensor'} weights)")
        for name, error in self.output_error.items():
            lines.append(f"output '{name}': relative RMS error {100.0 * error:.3f}% against fp32 on the "
                         f"calibration data")
        return "\n".join(lines)

    __repr__ = __str__


def decisions_from_metadata(proto) -> List[LayerDecision]:
    """The rows a model written by ``dnnx.quantize`` carries (empty for any other model)."""
    for prop in proto.metadata_props:
        if prop.key == METADATA_KEY:
            return [LayerDecision(**row) for row in json.loads(prop.value)]
    return []
