"""The one input rule of dnnx (``Model.run``, ``run_dict``, ``profile``, ``plan(inputs=)``,
``InferenceSession.run`` and ``dnnx run`` alike): strict, with a message naming the input.

- an array (numpy, or a device array) must have the input's declared dtype: a float64 array for
  a float32 input is a ValueError naming the input, the dtype expected and the dtype given, as
  onnxruntime refuses it. dnnx converts no array: a silent conversion would copy and change
  precision behind the caller's back (the CLI refuses a float64 .npy the same way);
- a Python list, tuple or scalar has no dtype of its own: it becomes an array of the declared
  dtype when its values convert without changing kind (ints to a float input, bools to bool;
  not floats to an int input), as onnxruntime converts lists;
- ``None`` is a ValueError naming the input, except for an optional input (Note [sequences]),
  where it is the optional holding none; a sequence input takes a list (or tuple) of arrays of
  its element type, which the engine checks (python/bindings/bind_values.cc);
- an empty tensor (a dim of 0: an empty batch) is valid, as ONNX allows: the outputs are what
  onnxruntime gives (empty, or a reduction's identity over an empty axis);
- inputs that share a named dim (two inputs declared [N, ...]) must agree on its size: a
  ValueError naming both inputs, before any planning.

Device arrays (anything with ``__dlpack__`` or ``__cuda_array_interface__``, a DeviceArray) pass
through: the engine checks their dtype, layout and device (python/bindings/run_inputs.cc).
"""
from __future__ import annotations

import numpy as np

from ._tensors import dtype_named


def _is_device(value) -> bool:
    return not isinstance(value, np.ndarray) and (hasattr(value, "__cuda_array_interface__") or
                                                  hasattr(value, "__dlpack_device__"))


def _from_python(spec, value) -> np.ndarray:
    """A list, tuple or scalar as an array of the declared dtype, when no kind changes."""
    want = dtype_named(spec.dtype)
    try:
        natural = np.asarray(value)
    except ValueError as e:  # a ragged list
        raise ValueError(f"input '{spec.name}': a {type(value).__name__} that is not a regular array ({e})") from None
    if natural.dtype == object or not np.can_cast(natural.dtype, want, casting="same_kind"):
        raise ValueError(f"input '{spec.name}': expected dtype {want}, got a {type(value).__name__} of "
                         f"{natural.dtype} values (lists convert only where no kind changes)")
    return np.asarray(natural, dtype=want, order="C")  # (ascontiguousarray would make a scalar 1-d)


def checked_input(spec, value):
    """``value`` for the input ``spec`` (a TensorSpec) under the rule above: the same object, or
    the array a list becomes."""
    if value is None:
        raise ValueError(f"input '{spec.name}': expected an array of {spec.dtype} {list(spec.shape)}, got None")
    if spec.dtype == "string":  # Note [string tensors]: str, bytes or object arrays, or lists of str
        array = np.asarray(value) if isinstance(value, (np.ndarray, np.generic)) else np.asarray(value, dtype=object)
        if array.dtype.kind not in "OUS":
            raise ValueError(f"input '{spec.name}': expected dtype string (an array of str), got {array.dtype}")
        return array
    if isinstance(value, (np.ndarray, np.generic)):
        if value.dtype != dtype_named(spec.dtype):
            raise ValueError(f"input '{spec.name}': expected dtype {spec.dtype}, got {value.dtype} "
                             f"(dnnx converts no arrays: pass x.astype(np.{spec.dtype}))")
        return np.asarray(value)  # a numpy scalar as a 0-d array
    if _is_device(value):
        return value
    return _from_python(spec, value)


def check_dims(specs, values) -> None:
    """Named dims on which two inputs disagree (inputs in spec order)."""
    seen = {}  # dim name -> (input name, size)
    for spec, value in zip(specs, values):
        shape = getattr(value, "shape", None)
        if shape is None or len(shape) != len(spec.shape):
            continue  # the engine names a rank mismatch
        for declared, size in zip(spec.shape, shape):
            if not isinstance(declared, str):
                continue
            size = int(size)
            if declared == "?":  # an unnamed dim binds nothing across inputs
                continue
            other = seen.setdefault(declared, (spec.name, size))
            if other[1] != size:
                raise ValueError(f"inputs '{other[0]}' and '{spec.name}' disagree on dim '{declared}': "
                                 f"{other[1]} vs {size}")


def checked_inputs(specs, values) -> list:
    """All inputs (in spec order) under the rule. A sequence or optional input (Note [sequences]:
    a list of arrays, None or a value) goes to the engine as it is: the engine checks it there."""
    values = [checked_input(spec, value) if getattr(spec, "kind", "tensor") == "tensor" else value
              for spec, value in zip(specs, values)]
    check_dims(specs, values)
    return values


class FastInputs:
    """Note [the input fast path]: on a small model the rule above took longer than the engine's
    own input handling (Model.run_dict on a one-Relu model: 7 us, 2.4 of them in the rule's
    calls, onnxruntime's whole run 4). Most calls pass numpy arrays of the declared dtypes, by
    name or in order; for them the rule can find nothing wrong where no two inputs share a named
    dim, no input is converted at the edges (_edges.py) and every input is a numeric tensor. So
    `take` returns such arrays as the rule would (the same objects, in graph-input order), and
    None for anything else, which then goes through the rule and its messages."""

    def __init__(self, specs, edges):
        self.names = [spec.name for spec in specs]
        named = [d for spec in specs for d in spec.shape if isinstance(d, str) and d != "?"]
        simple = (not edges.inputs and len(named) == len(set(named)) and
                  all(getattr(spec, "kind", "tensor") == "tensor" and spec.dtype != "string" for spec in specs))
        self.dtypes = [dtype_named(spec.dtype) for spec in specs] if simple else None

    def take(self, values):
        """The arrays of a list in graph-input order, or None where the rule must look."""
        if self.dtypes is None or len(values) != len(self.dtypes):
            return None
        for value, dtype in zip(values, self.dtypes):
            if type(value) is not np.ndarray or value.dtype != dtype:
                return None
        return list(values)

    def take_named(self, feeds):
        """The same for a dict by input name."""
        if self.dtypes is None or len(feeds) != len(self.names):
            return None
        values = [feeds.get(name) for name in self.names]
        return self.take(values)


__all__ = ["checked_input", "checked_inputs", "check_dims", "FastInputs"]
