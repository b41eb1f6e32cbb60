"""The real models of ../shared/external (relative to the repository root) as the crash sweep
(bench/sweep.py) and the fuzzer (bench/fuzz.py) use them: where they are, how each is read (the
zoo's weights materialized from their seed), and how each is fed.

Files are named by their path under the external folder ("zoo2/bert.onnx",
"models/mnist-8/model.onnx"): several files are called model.onnx.

How a model is fed (Note [sweep inputs]):
- zoo2/ files carry their own recipe: metadata_props["zoo.inputs"] (zoo2/PROVENANCE.md), one entry
  per input: shape (0 = the batch), dtype, `high` (integer inputs drawn from [0, high): token ids),
  `unit` (float inputs in [0, 1) instead of standard normal);
- INPUT_SPECS below, keyed by file name, for what PROVENANCE.md says about the others (pixel
  scales, the LSTM node tests' sequence lengths);
- the generic rule for the rest: the declared inputs, floats standard normal (zoo/PROVENANCE.md:
  its weights are calibrated on standard normal inputs), integers 0, booleans random.

The batch (Note [sweep batch]): an input's leading dim when it is symbolic, else its only symbolic
dim (the batch rule of issue #34); every input that names the same symbolic dim gets the same
value. A model without one runs once, at its declared shape ("fixed"). Any other symbolic dim
takes its value from the spec's `dims`, else OTHER_DIM (and the case says so).
"""
from __future__ import annotations

import fnmatch
import json
import sys
import zlib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Dict, List, Optional, Tuple

REPO = Path(__file__).resolve().parents[1]
EXTERNAL = REPO.parent / "shared" / "external"
MATERIALIZE_MARK = "__materialize__"  # zoo/zoo_models.py: a stripped initializer's location
OTHER_DIM = 8  # a symbolic dim that is neither the batch nor named by a spec


@dataclass(frozen=True)
class Feed:
    """How one input's values are drawn: standard normal (scale 1), uniform in [low, high) where
    `uniform`, integers in [low, high) for an integer input, or every element `fill`."""

    uniform: bool = False
    low: float = 0.0
    high: Optional[float] = None
    fill: Optional[float] = None


@dataclass(frozen=True)
class InputSpec:
    """One model's inputs: a Feed per input name (others: the generic rule), values for symbolic
    dims other than the batch, and which outputs to compare (None: all of them)."""

    feeds: Dict[str, Feed] = field(default_factory=dict)
    dims: Dict[str, int] = field(default_factory=dict)
    compare: Optional[Tuple[int, ...]] = None
    why: str = ""


UNIT = Feed(uniform=True, low=0.0, high=1.0)
# From models/PROVENANCE.md and zoo2/PROVENANCE.md (what each file's author fed it).
INPUT_SPECS: Dict[str, InputSpec] = {
    "models/mnist-8/model.onnx": InputSpec({"Input3": Feed(uniform=True, low=0.0, high=255.0)},
                                           why="raw pixels 0..255, as its test_data_set inputs"),
    "models/lenet5_mnist_b10.onnx": InputSpec({"input_0": UNIT}, why="x/255"),
    "models/lenet5_bn_mnist_b10.onnx": InputSpec({"input_0": UNIT}, why="x/255 (its BatchNorm is scale-sensitive)"),
    "models/lenet5_mnist_dynbatch.onnx": InputSpec({"input": UNIT}, why="x/255"),
    "models/cifar10_imageclassifier_winml.onnx": InputSpec({"modelInput": Feed(uniform=True, low=-1.0, high=1.0)},
                                                           why="Normalize((0.5,)*3, (0.5,)*3): [-1, 1]"),
    "models/squeezenet_cifar10_nhwc.onnx": InputSpec({"input_1": UNIT}, why="NHWC pixels; scale undocumented"),
    "models/lstm_mnist_rows_b128.onnx": InputSpec({"input.1": UNIT}, why="MNIST rows, x/255"),
    "models/derived/lstm_mnist_rows_b128.folded.onnx": InputSpec({"input.1": UNIT}, why="MNIST rows, x/255"),
    # X is [seq_length 1, batch 2, 4]: every sequence_lens entry is at most 1.
    "models/onnx_lstm_node_tests/test_lstm_with_peepholes/model.onnx": InputSpec(
        {"sequence_lens": Feed(fill=1)}, why="sequence_lens = X's seq_length (1)"),
    # The boxes (the first output) are what zoo2/PROVENANCE.md says to compare.
    "zoo2/det_fasterrcnn_mobilenet_v3_large_320_fpn.onnx": InputSpec(compare=(0,), why="compare the boxes"),
    "zoo2/det_ssdlite320_mobilenet_v3_large.onnx": InputSpec(compare=(0,), why="compare the boxes"),
}


def find_models(root: Path = EXTERNAL) -> List[str]:
    """Every .onnx file under `root`, by its path there (posix), sorted; [] when `root` is absent."""
    if not root.is_dir():
        return []
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.onnx") if p.is_file())


# The float models: zoo2's quantized q_* files and the reference folders' node tests are not
# speed cases (the speed sweeps, bench/sweep_cpu_speed.py and bench/sweep_cuda_speed.py).
NOT_FLOAT = ("zoo2/q_*", "models/onnx_lstm_node_tests/*", "models/ort_reference/*")


def float_models(patterns=(), root: Path = EXTERNAL) -> List[str]:
    """find_models() but the NOT_FLOAT files; only those matching one of the globs `patterns`
    where any are given."""
    names = [n for n in find_models(root) if not any(fnmatch.fnmatch(n, s) for s in NOT_FLOAT)]
    if patterns:
        names = [n for n in names if any(fnmatch.fnmatch(n, p) for p in patterns)]
    return names


def read_model(name: str, root: Path = EXTERNAL):
    """The onnx.ModelProto of `name`: its stripped weights (zoo/, zoo2/) materialized from their
    seed by zoo/zoo_models.py, as every reader of the shared zoo gets them."""
    import onnx

    path = root / name
    model = onnx.load(str(path), load_external_data=False)
    if not any(e.key == "location" and e.value == MATERIALIZE_MARK
               for t in model.graph.initializer for e in t.external_data):
        return onnx.load(str(path))
    return _zoo_models(str(root / "zoo")).materialized(str(path))


@lru_cache(maxsize=1)
def _zoo_models(folder: str):
    if folder not in sys.path:
        sys.path.insert(0, folder)
    import zoo_models

    return zoo_models


def weight_count(model) -> int:
    """Elements in the initializers (of a model read without its external data): how heavy a case is."""
    total = 0
    for t in model.graph.initializer:
        n = 1
        for d in t.dims:
            n *= d
        total += n
    return total


# ---------------------------------------------------------------------------------------------
# Inputs (Note [sweep inputs], [sweep batch] above)

@dataclass(frozen=True)
class DeclaredInput:
    name: str
    dtype: str  # numpy's name: "float32", "int64", ...
    dims: Tuple  # ints, or the symbolic dims' names ("" for an unnamed one)


def declared_inputs(model) -> List[DeclaredInput]:
    """The graph inputs that are not initializers, as declared."""
    import onnx

    constants = {t.name for t in model.graph.initializer}
    out = []
    for value in model.graph.input:
        if value.name in constants:
            continue
        t = value.type.tensor_type
        dims = tuple(d.dim_value if d.HasField("dim_value") else d.dim_param for d in t.shape.dim)
        out.append(DeclaredInput(value.name, onnx.helper.tensor_dtype_to_np_dtype(t.elem_type).name, dims))
    return out


def batch_dim(inputs: List[DeclaredInput]) -> Optional[str]:
    """The symbolic name that is the batch (Note [sweep batch]), or None for a fixed model."""
    for spec in inputs:
        if spec.dims and isinstance(spec.dims[0], str):
            return spec.dims[0]
    for spec in inputs:
        symbolic = [d for d in spec.dims if isinstance(d, str)]
        if len(symbolic) == 1:
            return symbolic[0]
    return None


def _zoo_recipe(model) -> Dict[str, dict]:
    """zoo2's metadata_props["zoo.inputs"], by input name ({} where absent)."""
    for prop in model.metadata_props:
        if prop.key == "zoo.inputs":
            return {entry["name"]: entry for entry in json.loads(prop.value)}
    return {}


def quantization_tolerance(model) -> Optional[float]:
    """zoo2's metadata_props["zoo.tol"] (q_* files): one quantization step, relative to the output's
    largest magnitude."""
    for prop in model.metadata_props:
        if prop.key == "zoo.tol":
            return float(prop.value)
    return None


def spec_for(name: str) -> InputSpec:
    return INPUT_SPECS.get(name, InputSpec())


def make_inputs(name: str, model, batch: Optional[int]) -> Tuple[Dict[str, "object"], List[str]]:
    """The feeds of `name` at `batch` (None: a fixed model), seeded by the file name and batch so
    that every process draws the same ones; and notes on guessed dims."""
    import numpy as np

    spec = spec_for(name)
    recipe = _zoo_recipe(model)
    inputs = declared_inputs(model)
    batch_name = batch_dim(inputs)
    rng = np.random.default_rng(zlib.crc32(f"{name}|{batch}".encode()))
    feeds, notes = {}, []
    for entry in inputs:
        shape = []
        for d in entry.dims:
            if isinstance(d, int):
                shape.append(d)
            elif d == batch_name and batch is not None:
                shape.append(batch)
            elif d in spec.dims:
                shape.append(spec.dims[d])
            else:
                shape.append(OTHER_DIM)
                notes.append(f"{entry.name}: dim {d or '?'} = {OTHER_DIM} (no spec)")
        dtype = np.dtype(entry.dtype)
        feed = spec.feeds.get(entry.name) or _feed_from_recipe(recipe.get(entry.name))
        feeds[entry.name] = _draw(rng, shape, dtype, feed)
    return feeds, notes


def _feed_from_recipe(entry: Optional[dict]) -> Feed:
    if not entry:
        return Feed()
    if entry.get("high") is not None:
        return Feed(low=0, high=entry["high"])
    if entry.get("unit"):
        return UNIT
    return Feed()


def _draw(rng, shape, dtype, feed: Feed):
    import numpy as np

    if feed.fill is not None:
        return np.full(shape, feed.fill, dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        return rng.integers(int(feed.low), int(feed.high or 1), size=shape).astype(dtype)
    if feed.uniform:
        return rng.uniform(feed.low, feed.high, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)
