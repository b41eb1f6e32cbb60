"""float64, float16 and bfloat16 at a model's edges on a device (issue #15).

On the CPU these are engine dtypes like any other (issue #35). A device computes floats in float32
(or in half storage under precision="fp16"/"bf16" on CUDA, whose float16 and bfloat16 values are
its own). There a model whose graph inputs, outputs, initializers or Casts are float64 (DOUBLE),
float16 (FLOAT16) or bfloat16 (BFLOAT16) is imported as its float32 twin (_importer.py: constants and Constant/tensor attributes converted, Cast to
DOUBLE or FLOAT16 made a Cast to FLOAT, the graph inputs declared float32 to the engine), and the
conversion happens here, at the edges: ``run`` takes arrays of the declared dtype and converts them
to float32, and returns numpy outputs in their declared dtype. ``m.inputs``/``m.outputs`` keep the
declared dtypes and ``plan()`` lists the conversions. Precision: a float64 model computes with
float32's ~7 significant digits (values beyond float32's range overflow to inf); a float16 model in
a float32 run keeps more precision than a float16 engine would (its Casts to FLOAT16 do not round).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._tensors import dtype_named

# TensorProto.DataType -> the declared dtype that dnnx computes in float32
EDGE_TYPES = {10: "float16", 11: "float64", 16: "bfloat16"}  # FLOAT16, DOUBLE, BFLOAT16
FLOAT = 1  # TensorProto.FLOAT: the compute type of every EDGE_TYPES value
COMPUTE = np.dtype(np.float32)


def compute_elem_type(elem_type: int) -> int:
    """The element type dnnx computes a value of ``elem_type`` in."""
    return FLOAT if elem_type in EDGE_TYPES else elem_type


def compute_array(array: np.ndarray) -> np.ndarray:
    """A float64, float16 or bfloat16 constant as float32 (the same array for any other dtype)."""
    if array.dtype.name in EDGE_TYPES.values():
        return array.astype(COMPUTE)
    return array


def _is_device(value) -> bool:
    return not isinstance(value, (np.ndarray, np.generic)) and (
        hasattr(value, "__cuda_array_interface__") or hasattr(value, "__dlpack_device__"))


@dataclass(frozen=True)
class Edges:
    """The graph inputs and outputs declared float64 or float16: {name: declared dtype name}."""

    inputs: dict = field(default_factory=dict)
    outputs: dict = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.inputs or self.outputs)

    def notes(self) -> list:
        """One line per converted edge, as ``plan()`` prints them."""
        return ([f"{name}: {dtype} -> float32 at the input edge" for name, dtype in self.inputs.items()] +
                [f"{name}: float32 -> {dtype} at the output edge" for name, dtype in self.outputs.items()])

    def to_engine(self, names: list, values: list) -> list:
        """The inputs (in graph-input order, ``names``) as the engine takes them: an array of a
        converted input's declared dtype (or a list, taken as that dtype) becomes float32; another
        host dtype is a ValueError naming the input; a device array passes (the engine wants float32)."""
        if not self.inputs:
            return values
        out = []
        for name, value in zip(names, values):
            declared = self.inputs.get(name)
            if declared is None or value is None or _is_device(value):
                out.append(value)
                continue
            if not isinstance(value, (np.ndarray, np.generic)):
                value = np.asarray(value, dtype=dtype_named(declared))
            if value.dtype != dtype_named(declared):
                raise ValueError(f"input '{name}': expected dtype {declared}, got {value.dtype} (the model declares "
                                 f"{declared}; dnnx converts it to float32 at the edge)")
            out.append(np.asarray(value, dtype=COMPUTE, order="C"))  # a 0-d input stays 0-d
        return out

    def from_engine(self, names: list, values: list) -> list:
        """The outputs (``names``: graph-output order) in their declared dtypes; device arrays
        (``output="device"``) stay float32."""
        if not self.outputs:
            return values
        return [value.astype(dtype_named(self.outputs[name])) if name in self.outputs and isinstance(value, np.ndarray) else value
                for name, value in zip(names, values)]
