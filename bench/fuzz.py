"""Fuzzing dnnx with broken models and broken inputs, as a broken exporter, a fuzzer or a careless
caller would (issue #18): seeded mutations of the project's own example models (dnnx.examples:
lenet, lstm), of ../shared/external/models, and of every model of ../shared/external/zoo and zoo2
(issue #34; their weights materialized from their seed, bench/_external_models.py) where present,
each loaded and run in a worker process with a timeout.

    python bench/fuzz.py                       # 2000 models on the CPU
    python bench/fuzz.py --count 300 --seed 7  # fewer, another seed
    python bench/fuzz.py --device cuda --jobs 8
    python bench/fuzz.py --device cuda --precision fp16 --count 2000   # and again with bf16
    python bench/fuzz.py --sources example,models  # only the small models (what CI fuzzes)

Sources (--sources, comma-separated kinds; default all): example (dnnx.examples), models (small
files of ../shared/external/models), zoo and zoo2 (every file there). Cases take the sources in
turn (seed modulo their count), so a seed names one case of one source list.

Mutations (one to three per model): bit flips and truncation of the serialized file, attribute
changes (ints to 0, -1, 2^31, 2^40; floats to NaN, inf; dropped or unknown attributes), dim
changes of graph inputs, outputs and initializers, dtype swaps (inputs, initializers, Cast targets),
dangling names (an input renamed to nothing, a node dropped, an output renamed), op changes and
opset changes, and initializers moved to external data with a path that leaves the folder, does not
exist, or whose offset and length do not fit the file. Inputs are fuzzed too: wrong shapes and
dtypes, NaN and Inf, non-contiguous and read-only arrays, empty batches, missing and extra inputs.

The target: no crash (a signal), no hang (the timeout), and every failure a ``dnnx.DnnxError`` or
``ValueError`` raised within 1 s of the call that raised it (``load``, or ``run`` once loaded),
plus 1 s per 100 MB of the model file (reading and checking the zoo's larger weights is not a
slow refusal). The summary line:

    fuzz cpu fp32: N models, 0 crashes, 0 hangs, K clean errors, M ran, slowest refusal X s

and one line per bad case (crash, hang, unclean error, slow refusal) with its seed and mutations,
which ``--case SEED`` (with the same ``--sources``) replays in this process (a traceback instead
of a summary). With ``--budget`` seconds, cases not started by then are counted as not run, and
the line says so.
tests/test_fuzz.py runs a small seeded count of the same cases in CI.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import selectors
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _external_models as ext  # noqa: E402

EXTERNAL = ext.EXTERNAL / "models"
# Small real models (under 1 MB each), by file name under EXTERNAL.
EXTERNAL_MODELS = ("lenet5_mnist_b10.onnx", "lenet5_bn_mnist_b10.onnx", "lenet5_mnist_dynbatch.onnx",
                   "cifar10_imageclassifier_winml.onnx", "squeezenet_cifar10_nhwc.onnx",
                   "lstm_mnist_rows_b128.onnx", "mnist-8/model.onnx")
EXAMPLES = ("lenet", "lstm")
SOURCE_KINDS = ("example", "models", "zoo", "zoo2")
PRECISIONS = ("fp32", "tf32", "fp16", "bf16")

SLOW_REFUSAL_S = 1.0  # a failure later than this after the call that raised it is a finding ...
SLOW_REFUSAL_BYTES_PER_S = 100e6  # ... plus the time to read and check the model file at this rate
MUTATE_S = 300.0  # the most a case's mutation may take (a zoo model's weights drawn) before it is a hang
HUGE = 2 ** 40


def source_names(kinds=SOURCE_KINDS) -> List[str]:
    """The models mutated: "example:NAME" for dnnx.examples, "external:FILE" for the small files of
    ../shared/external/models, "zoo:FILE" and "zoo2:FILE" for every model there; those that exist."""
    unknown = set(kinds) - set(SOURCE_KINDS)
    if unknown:
        raise ValueError(f"unknown source kind(s) {sorted(unknown)}: the kinds are {', '.join(SOURCE_KINDS)}")
    names = []
    if "example" in kinds:
        names += [f"example:{n}" for n in EXAMPLES]
    if "models" in kinds:
        names += [f"external:{n}" for n in EXTERNAL_MODELS if (EXTERNAL / n).is_file()]
    for folder in ("zoo", "zoo2"):
        if folder in kinds:
            names += [f"{folder}:{n.split('/', 1)[1]}" for n in ext.find_models() if n.startswith(folder + "/")]
    return names


# ---------------------------------------------------------------------------------------------
# Mutations (in the worker: onnx is imported there, never in the driver).

def _load_source(name: str):
    import onnx

    kind, _, what = name.partition(":")
    if kind == "example":
        from dnnx.examples import build

        return build(what, seed=0)
    if kind in ("zoo", "zoo2"):
        return onnx.ModelProto.FromString(_zoo_bytes(f"{kind}/{what}"))
    return onnx.load(str(EXTERNAL / what))


ZOO_CACHE_ENV = "DNNX_FUZZ_ZOO_CACHE"  # a folder the driver makes: the workers share it


def _zoo_bytes(name: str) -> bytes:
    """The materialized zoo model, serialized. Drawing a large model's weights takes seconds (VGG's
    132M), so the first worker to need it writes it to the driver's cache folder and every later
    case reads it from there (then parses its own copy to mutate)."""
    folder = os.environ.get(ZOO_CACHE_ENV)
    if not folder:  # --case: one case in this process
        return ext.read_model(name).SerializeToString()
    path = Path(folder) / name.replace("/", "__")
    if path.is_file():
        return path.read_bytes()
    data = ext.read_model(name).SerializeToString()
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)  # whole or absent for a reader in another worker
    return data


def _random_int(rng: random.Random) -> int:
    return rng.choice([0, -1, 1, 2, 3, 7, -7, 2 ** 31, 2 ** 31 - 1, HUGE, -HUGE, 2 ** 62, rng.randint(-20, 64)])


def _random_float(rng: random.Random) -> float:
    return rng.choice([0.0, -1.0, 1e-30, 1e30, float("nan"), float("inf"), -float("inf"), rng.uniform(-5, 5)])


def _mutate_attribute(model, rng: random.Random) -> str:
    import onnx

    nodes = [n for n in model.graph.node if n.attribute]
    if not nodes:
        return "attribute: none to change"
    node = rng.choice(nodes)
    attr = rng.choice(list(node.attribute))
    what = rng.random()
    if what < 0.15:
        node.attribute.remove(attr)
        return f"attribute: dropped {node.op_type}.{attr.name}"
    if what < 0.25:
        node.attribute.append(onnx.helper.make_attribute("fuzz_unknown", 1))
        return f"attribute: unknown attribute on {node.op_type}"
    A = onnx.AttributeProto
    if attr.type == A.INT:
        attr.i = _random_int(rng)
        return f"attribute: {node.op_type}.{attr.name} = {attr.i}"
    if attr.type == A.INTS:
        values = list(attr.ints)
        if values and rng.random() < 0.8:
            values[rng.randrange(len(values))] = _random_int(rng)
        else:
            values = [_random_int(rng) for _ in range(rng.randint(0, 6))]
        del attr.ints[:]
        attr.ints.extend(values)
        return f"attribute: {node.op_type}.{attr.name} = {values}"
    if attr.type == A.FLOAT:
        attr.f = _random_float(rng)
        return f"attribute: {node.op_type}.{attr.name} = {attr.f}"
    if attr.type == A.FLOATS:
        values = [_random_float(rng) for _ in range(rng.randint(0, 4))]
        del attr.floats[:]
        attr.floats.extend(values)
        return f"attribute: {node.op_type}.{attr.name} = {values}"
    if attr.type == A.STRING:
        attr.s = rng.choice([b"", b"nonsense", b"NOTSET", b"SAME_UPPER", b"VALID"])
        return f"attribute: {node.op_type}.{attr.name} = {attr.s!r}"
    if attr.type == A.TENSOR:
        attr.t.data_type = rng.choice([1, 2, 6, 7, 8, 9, 10, 11, 16])
        return f"attribute: {node.op_type}.{attr.name} tensor dtype {attr.t.data_type}"
    attr.type = rng.choice([A.INT, A.FLOAT, A.INTS, A.STRING])
    return f"attribute: {node.op_type}.{attr.name} kind changed"


def _mutate_dim(model, rng: random.Random) -> str:
    where = rng.random()
    if where < 0.55 or not model.graph.initializer:
        values = list(model.graph.input) + list(model.graph.output)
        value = rng.choice(values)
        dims = value.type.tensor_type.shape.dim
        if not dims:
            return "dim: no dims"
        if rng.random() < 0.1:
            dims.add().dim_value = rng.choice([1, 3, HUGE])
            return f"dim: extra dim on {value.name}"
        k = rng.randrange(len(dims))
        new = rng.choice([0, 1, 2, 3, 5, 1000, 2 ** 31, 2 ** 32 + 1, HUGE, 2 ** 62, -1, -HUGE])
        dims[k].dim_value = new
        return f"dim: {value.name}[{k}] = {new}"
    init = rng.choice(model.graph.initializer)
    if not init.dims or rng.random() < 0.2:
        init.dims.append(rng.choice([1, 2, HUGE]))
        return f"dim: initializer {init.name} extra dim"
    k = rng.randrange(len(init.dims))
    new = rng.choice([0, 1, 2, init.dims[k] + 1, HUGE, -1])
    init.dims[k] = new
    return f"dim: initializer {init.name}[{k}] = {new}"


ONNX_DTYPES = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0, 99)


def _mutate_dtype(model, rng: random.Random) -> str:
    where = rng.random()
    new = rng.choice(ONNX_DTYPES)
    if where < 0.4:
        value = rng.choice(list(model.graph.input) + list(model.graph.output))
        value.type.tensor_type.elem_type = new
        return f"dtype: {value.name} -> {new}"
    if where < 0.8 and model.graph.initializer:
        init = rng.choice(model.graph.initializer)
        init.data_type = new
        return f"dtype: initializer {init.name} -> {new}"
    casts = [n for n in model.graph.node if n.op_type == "Cast"]
    if casts:
        for a in rng.choice(casts).attribute:
            if a.name == "to":
                a.i = new
        return f"dtype: Cast to {new}"
    node = rng.choice(model.graph.node)
    import onnx

    cast_out = node.output[0] + "_fuzzcast"
    for other in model.graph.node:
        for i, name in enumerate(other.input):
            if name == node.output[0]:
                other.input[i] = cast_out
    for out in model.graph.output:
        if out.name == node.output[0]:
            out.name = cast_out
    position = list(model.graph.node).index(node) + 1
    model.graph.node.insert(position, onnx.helper.make_node("Cast", [node.output[0]], [cast_out], to=new))
    return f"dtype: inserted Cast to {new} after {node.op_type}"


def _mutate_names(model, rng: random.Random) -> str:
    nodes = list(model.graph.node)
    what = rng.random()
    node = rng.choice(nodes)
    if what < 0.3 and node.input:
        k = rng.randrange(len(node.input))
        node.input[k] = rng.choice(["fuzz_dangling", "", node.output[0] if node.output else "x"])
        return f"names: {node.op_type} input {k} -> {node.input[k]!r}"
    if what < 0.5:
        model.graph.node.remove(node)
        return f"names: dropped node {node.op_type}"
    if what < 0.65 and model.graph.output:
        model.graph.output[0].name = rng.choice(["fuzz_dangling", "", model.graph.input[0].name])
        return f"names: graph output -> {model.graph.output[0].name!r}"
    if what < 0.75 and node.output:
        node.output[0] = rng.choice(["", "fuzz_dup", model.graph.input[0].name])
        return f"names: {node.op_type} output -> {node.output[0]!r}"
    if what < 0.85 and len(nodes) > 1:
        order = nodes[:]
        rng.shuffle(order)
        del model.graph.node[:]
        model.graph.node.extend(order)
        return "names: nodes shuffled (not topological)"
    if what < 0.92:
        node.op_type = rng.choice(["Conv", "Relu", "Gemm", "Reshape", "FuzzOp", "LSTM", "Concat", "Slice"])
        return f"names: op -> {node.op_type}"
    model.opset_import[0].version = rng.choice([1, 5, 6, 7, 9, 11, 13, 17, 21, 99])
    return f"names: opset -> {model.opset_import[0].version}"


def _mutate_external(model, rng: random.Random, folder: Path) -> str:
    import onnx

    inits = [t for t in model.graph.initializer if t.raw_data or t.float_data]
    if not inits:
        return "external: no initializer"
    init = rng.choice(inits)
    raw = init.raw_data or onnx.numpy_helper.to_array(init).tobytes()
    init.ClearField("raw_data")
    init.ClearField("float_data")
    init.data_location = onnx.TensorProto.EXTERNAL
    (folder / "weights.bin").write_bytes(raw)
    case = rng.choice(["outside", "absolute", "missing", "offset", "length", "ok", "dir", "empty"])
    location, extra = {
        "outside": ("../../../../etc/hostname", {}),
        "absolute": ("/etc/hostname", {}),
        "missing": ("no_such_file.bin", {}),
        "offset": ("weights.bin", {"offset": str(len(raw) + 4096)}),
        "length": ("weights.bin", {"length": str(len(raw) * 4 + 3)}),
        "ok": ("weights.bin", {}),
        "dir": (".", {}),
        "empty": ("", {}),
    }[case]
    entries = {"location": location, **extra}
    for k, v in entries.items():
        e = init.external_data.add()
        e.key, e.value = k, v
    return f"external: {init.name} {case}"


def mutate(source: str, seed: int, folder: Path):
    """The mutated model of this seed as (bytes or None, path, description): bit flips and
    truncation give bytes only, the rest a ModelProto written to `folder`."""
    rng = random.Random(seed)
    model = _load_source(source)
    steps = []
    raw_ops = []
    if rng.random() < 0.15:  # the model as it is: only its inputs are fuzzed
        path = folder / "model.onnx"
        path.write_bytes(model.SerializeToString())
        return path, f"{source} | inputs only"
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        kind = rng.choice(["bits", "truncate", "attribute", "attribute", "dim", "dim", "dtype", "names",
                           "external"])
        if kind in ("bits", "truncate"):
            raw_ops.append(kind)
            continue
        fn = {"attribute": _mutate_attribute, "dim": _mutate_dim, "dtype": _mutate_dtype,
              "names": _mutate_names}.get(kind)
        try:
            steps.append(fn(model, rng) if fn else _mutate_external(model, rng, folder))
        except (IndexError, ValueError) as e:
            steps.append(f"{kind}: not applicable ({e})")
    data = model.SerializeToString()
    for kind in raw_ops:
        if kind == "bits":
            buf = bytearray(data)
            flips = rng.choice([1, 2, 8, 64])
            for _ in range(flips):
                buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
            data = bytes(buf)
            steps.append(f"bits: {flips} flipped")
        else:
            cut = rng.randrange(len(data))
            steps.append(f"truncate: at {cut} of {len(data)}")
            data = data[:cut]
    path = folder / "model.onnx"
    path.write_bytes(data)
    return path, f"{source} | " + "; ".join(steps)


# ---------------------------------------------------------------------------------------------
# Input fuzzing (in the worker).

INPUT_MODES = ("plain", "plain", "plain", "nan", "inf", "wrong_shape", "wrong_rank", "wrong_dtype",
               "noncontiguous", "readonly", "empty_batch", "missing", "extra", "list", "big_batch", "scalar")


def fuzz_inputs(model, rng: random.Random, mode: str):
    """(args, kwargs) for Model.run: the model's inputs, made wrong as `mode` says."""
    import numpy as np

    arrays = {}
    for spec in model.inputs:
        name, shape, dtype = spec.name, spec.shape, spec.dtype
        dims = [d if isinstance(d, int) and d > 0 else 2 for d in shape]
        dims = [min(d, 4096) for d in dims]
        if int(np.prod(dims, dtype=np.float64)) > 1 << 24:
            dims = [1] * len(dims)
        dt = np.dtype(dtype) if dtype not in (None, "") else np.float32
        if np.issubdtype(dt, np.floating):
            a = np.random.default_rng(rng.randrange(1 << 30)).standard_normal(dims).astype(dt)
        elif dt == np.bool_:
            a = np.ones(dims, dt)
        else:
            a = np.ones(dims, dt)
        arrays[name] = a
    if not arrays:
        return (), {}
    name = rng.choice(list(arrays))
    a = arrays[name]
    if mode == "nan" and a.dtype.kind == "f" and a.size:
        a.flat[rng.randrange(a.size)] = np.nan
    elif mode == "inf" and a.dtype.kind == "f" and a.size:
        a.flat[:: max(1, a.size // 3)] = np.inf
    elif mode == "wrong_shape" and a.ndim:
        shape = list(a.shape)
        shape[rng.randrange(len(shape))] += 1
        arrays[name] = np.zeros(shape, a.dtype)
    elif mode == "wrong_rank":
        arrays[name] = a.reshape(-1) if a.ndim != 1 else a.reshape(1, -1)
    elif mode == "wrong_dtype":
        arrays[name] = a.astype(rng.choice([np.float64, np.float16, np.int32, np.int64, np.bool_, np.uint8,
                                            np.complex64]))
    elif mode == "noncontiguous" and a.ndim:
        big = np.repeat(a, 2, axis=a.ndim - 1)
        arrays[name] = big[..., ::2] if rng.random() < 0.5 else np.asfortranarray(a)
    elif mode == "readonly":
        a.flags.writeable = False
    elif mode == "empty_batch" and a.ndim:
        arrays[name] = np.zeros((0,) + a.shape[1:], a.dtype)
    elif mode == "missing":
        del arrays[name]
    elif mode == "extra":
        arrays["fuzz_extra"] = np.zeros(3, np.float32)
    elif mode == "list":
        arrays[name] = a.tolist()
    elif mode == "big_batch" and a.ndim:
        # Billions of rows of zeros, as a read-only broadcast view: no memory of its own.
        arrays[name] = np.broadcast_to(np.zeros((1,) + a.shape[1:], a.dtype), (1 << 34,) + a.shape[1:])
    elif mode == "scalar":
        arrays[name] = 1.5
    return (), {"inputs": arrays}


# ---------------------------------------------------------------------------------------------
# The worker: reads case lines, answers result lines; the driver restarts it after a crash/hang.

def _clean(exc: BaseException) -> bool:
    import dnnx

    return isinstance(exc, (dnnx.DnnxError, ValueError))


def run_case(case: dict) -> dict:
    """Mutates, loads and runs one case; the result as a dict (see the driver for its fields)."""
    import numpy as np
    import dnnx

    seed, device, precision = case["seed"], case["device"], case.get("precision", "fp32")
    rng = random.Random(seed * 7919 + 1)
    with tempfile.TemporaryDirectory(prefix="dnnx-fuzz-") as tmp:
        path, described = mutate(case["source"], seed, Path(tmp))
        # the time a refusal may take: SLOW_REFUSAL_S, and reading the file at SLOW_REFUSAL_BYTES_PER_S
        allowed = SLOW_REFUSAL_S + path.stat().st_size / SLOW_REFUSAL_BYTES_PER_S
        out = {"seed": seed, "what": described, "allowed": allowed}
        _say({"started": seed, "what": described})
        start = time.perf_counter()
        try:
            model = dnnx.load(str(path), device=device, precision=precision)
        except BaseException as e:  # noqa: BLE001 - classified, not swallowed
            out.update(stage="load", error=f"{type(e).__name__}: {str(e)[:300]}", clean=_clean(e),
                       seconds=time.perf_counter() - start)
            return out
        loaded = time.perf_counter() - start
        mode = rng.choice(INPUT_MODES)
        out["input"] = mode
        start = time.perf_counter()  # a run's refusal is timed from the run call
        try:
            args, kwargs = fuzz_inputs(model, rng, mode)
            result = model.run(kwargs["inputs"]) if kwargs else model.run()
            outputs = result if isinstance(result, tuple) else (result,)
            for o in outputs:
                np.asarray(o).sum()  # read every output
        except BaseException as e:  # noqa: BLE001
            out.update(stage="run", error=f"{type(e).__name__}: {str(e)[:300]}", clean=_clean(e),
                       seconds=time.perf_counter() - start, load_seconds=loaded)
            return out
        out.update(stage="ran", seconds=loaded + time.perf_counter() - start, load_seconds=loaded)
        return out


def _say(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def worker_main(device: str, precision: str = "fp32") -> None:
    # Onnx's and dnnx's import happen once per worker; each case is then milliseconds of setup.
    cap = os.environ.get("DNNX_FUZZ_MAX_MEMORY")
    if cap:  # a shared machine: a model that fits the RAM but not this cap is a MemoryError finding
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (int(cap), int(cap)))
    import dnnx  # noqa: F401
    import numpy as np
    import onnx  # noqa: F401

    dnnx.threads.set_num_threads(1)
    if device != "cpu":  # the device's context and libraries start once here, not in a case's second
        from dnnx.examples import build

        dnnx.load(build("lenet"), device=device, precision=precision).run(np.zeros((1, 1, 28, 28), np.float32))
    _say({"ready": True})
    for line in sys.stdin:
        case = json.loads(line)
        _say({"result": run_case(case)})


# ---------------------------------------------------------------------------------------------
# The driver.

class Worker:
    """One worker process; cases go one at a time, each with a deadline. Its answers are read
    from the raw pipe (a buffered reader would hide a second line from select), its stderr goes
    to a file (a full pipe would stall it: a false hang)."""

    def __init__(self, env: Dict[str, str], device: str, precision: str = "fp32"):
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--worker", "--device", device,
                                      "--precision", precision],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
                                     env=env)
        self.case: Optional[dict] = None
        self.deadline = 0.0
        self.ready = False
        self.described = ""
        self.pending = b""

    def lines(self, wait: float) -> Optional[List[dict]]:
        """The messages that came within `wait` s; None when the worker has died."""
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        if not sel.select(timeout=wait):
            return []
        chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
        if not chunk:
            return None
        self.pending += chunk
        *complete, self.pending = self.pending.split(b"\n")
        out = []
        for line in complete:
            try:
                out.append(json.loads(line))
            except ValueError:
                pass  # something else printed to stdout
        return out

    def send(self, case: dict, timeout: float) -> None:
        """Hands over a case. Its timeout starts once the worker says it has made the mutated model
        (MUTATE_S until then: drawing a large zoo model's weights is the harness's time, not dnnx's)."""
        self.case = case
        self.described = ""
        self.deadline = time.monotonic() + max(timeout, MUTATE_S)
        self.proc.stdin.write((json.dumps(case) + "\n").encode())
        self.proc.stdin.flush()

    def kill(self) -> str:
        """Ends the worker; the tail of what it wrote to stderr."""
        self.proc.kill()
        self.proc.wait()
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")[-2000:]


def drive(count: int, seed: int, device: str, jobs: int, timeout: float, sources: List[str],
          log=print, max_memory: int = 0, precision: str = "fp32", budget: Optional[float] = None) -> dict:
    """Runs `count` cases (seeds seed..seed+count-1, sources round-robin) over `jobs` workers at
    `precision`, each capped at `max_memory` bytes of address space where nonzero (CPU only); no
    case starts after `budget` seconds (those left are counted in stats["not_run"])."""
    with tempfile.TemporaryDirectory(prefix="dnnx-fuzz-zoo-") as zoo_cache:
        return _drive(count, seed, device, jobs, timeout, sources, log, max_memory, precision, budget, zoo_cache)


def _drive(count, seed, device, jobs, timeout, sources, log, max_memory, precision, budget, zoo_cache) -> dict:
    env = dict(os.environ)
    env[ZOO_CACHE_ENV] = zoo_cache
    if max_memory:
        env["DNNX_FUZZ_MAX_MEMORY"] = str(max_memory)
    if env.get("DNNX_DEV_BUILD"):  # a dev build runs the checkout's package; else the installed one
        env["PYTHONPATH"] = os.pathsep.join([str(HERE.parent / "python")] + ([env["PYTHONPATH"]]
                                                                             if env.get("PYTHONPATH") else []))
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    cases = [{"seed": seed + i, "source": sources[(seed + i) % len(sources)], "device": device,
              "precision": precision} for i in range(count)]
    stop = time.monotonic() + budget if budget else float("inf")
    pending = list(reversed(cases))
    stats = {"models": 0, "crashes": 0, "hangs": 0, "clean": 0, "unclean": 0, "slow": 0, "ran": 0,
             "slowest_refusal": 0.0, "findings": [], "not_run": 0}
    workers = [Worker(env, device, precision) for _ in range(max(1, jobs))]
    startup = 120.0  # an import of dnnx and onnx, on a busy machine

    def finding(kind: str, case: dict, detail: str) -> None:
        line = f"  {kind}: seed {case['seed']} ({case.get('what', case['source'])}): {detail}"
        stats["findings"].append(line)
        log(line)

    for w in workers:
        w.deadline = time.monotonic() + startup
    while True:
        if pending and time.monotonic() > stop:
            stats["not_run"] += len(pending)
            pending.clear()
        for i, w in enumerate(workers):
            if w.ready and w.case is None and pending:
                w.send(pending.pop(), timeout)
        busy = [w for w in workers if w.case is not None or not w.ready]
        if not busy:
            break
        for w in busy:
            messages = w.lines(0.01 if len(busy) > 1 else 0.05)
            if messages is None:  # the worker died
                code = w.proc.wait()
                err = w.kill()
                if w.case is not None:
                    stats["models"] += 1
                    stats["crashes"] += 1
                    w.case["what"] = w.described or w.case["source"]
                    finding("crash", w.case, f"exit {code}; {err.strip().splitlines()[-1:] if err else ''}")
                elif not w.ready:
                    raise RuntimeError(f"a fuzz worker did not start:\n{err}")
                workers[workers.index(w)] = fresh = Worker(env, device, precision)
                fresh.deadline = time.monotonic() + startup
                continue
            for msg in messages:
                if msg.get("ready"):
                    w.ready = True
                elif "started" in msg:
                    w.described = msg["what"]
                    w.deadline = time.monotonic() + timeout
                elif "result" in msg:
                    r = msg["result"]
                    case, w.case = w.case, None
                    stats["models"] += 1
                    if r["stage"] == "ran":
                        stats["ran"] += 1
                    elif not r["clean"]:
                        stats["unclean"] += 1
                        finding("unclean error", {**case, "what": r["what"]}, f"{r['stage']}: {r['error']}")
                    else:
                        stats["clean"] += 1
                        stats["slowest_refusal"] = max(stats["slowest_refusal"], r["seconds"])
                        if r["seconds"] > r.get("allowed", SLOW_REFUSAL_S):
                            stats["slow"] += 1
                            finding("slow refusal", {**case, "what": r["what"]},
                                    f"{r['seconds']:.2f} s, {r['stage']}: {r['error']}")
        now = time.monotonic()
        for i, w in enumerate(workers):
            if now > w.deadline and (w.case is not None or not w.ready):
                err = w.kill()
                if w.case is None:
                    raise RuntimeError(f"a fuzz worker did not start in {startup:.0f} s:\n{err}")
                stats["models"] += 1
                stats["hangs"] += 1
                w.case["what"] = w.described or w.case["source"]
                finding("hang", w.case, f"no answer in {timeout:.0f} s")
                workers[i] = Worker(env, device, precision)
                workers[i].deadline = time.monotonic() + startup
    for w in workers:
        w.proc.stdin.close()
        try:
            w.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            w.kill()
    return stats


def summary(device: str, stats: dict) -> str:
    """The one-line summary; `device` names the device and precision ("cpu fp32", "cuda fp16")."""
    return (f"fuzz {device}: {stats['models']} models, {stats['crashes']} crashes, {stats['hangs']} hangs, "
            f"{stats['clean']} clean errors, {stats['ran']} ran, slowest refusal {stats['slowest_refusal']:.2f} s"
            + (f", {stats['unclean']} unclean errors" if stats["unclean"] else "")
            + (f", {stats['slow']} slow refusals (over {SLOW_REFUSAL_S:.0f} s + file size / "
               f"{SLOW_REFUSAL_BYTES_PER_S / 1e6:.0f} MB/s)" if stats["slow"] else "")
            + (f", {stats['not_run']} not run (budget)" if stats.get("not_run") else ""))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--precision", default="fp32", choices=PRECISIONS,
                        help="dnnx.load's precision (CUDA; the CPU runs fp32 only)")
    parser.add_argument("--sources", default=",".join(SOURCE_KINDS),
                        help=f"comma-separated kinds of models to mutate, of {', '.join(SOURCE_KINDS)} "
                             "(default: all; those whose files are absent are left out)")
    parser.add_argument("--jobs", type=int, default=0, help="worker processes (default: the CPU count; "
                                                            "on CUDA 8)")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per case before it is a hang (from the mutated model's making: drawing a zoo "
                             "model's weights does not count)")
    parser.add_argument("--budget", type=float, default=0,
                        help="seconds for the whole run: cases not started by then are not run (0: no limit)")
    parser.add_argument("--max-memory", type=float, default=0,
                        help="GiB of address space per worker on the CPU (0: no cap); for shared machines")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--case", type=int, help="replay one seed in this process")
    args = parser.parse_args(argv)
    cuda = args.device.startswith("cuda")
    if args.precision != "fp32" and not cuda:
        parser.error(f"--precision {args.precision}: the CPU runs fp32 only (use --device cuda)")
    if args.worker:
        worker_main(args.device, args.precision)
        return 0
    try:
        sources = source_names(tuple(k.strip() for k in args.sources.split(",") if k.strip()))
    except ValueError as e:
        parser.error(f"--sources: {e}")
    if not sources:
        parser.error(f"--sources {args.sources}: none of their models is here")
    if args.case is not None:
        if os.environ.get("DNNX_DEV_BUILD"):
            sys.path.insert(0, str(HERE.parent / "python"))
        case = {"seed": args.case, "source": sources[args.case % len(sources)], "device": args.device,
                "precision": args.precision}
        print(json.dumps(run_case(case), indent=1))
        return 0
    jobs = args.jobs or (8 if cuda else (os.cpu_count() or 1))
    start = time.monotonic()
    cap = int(args.max_memory * (1 << 30)) if not cuda else 0
    stats = drive(args.count, args.seed, args.device, jobs, args.timeout, sources, max_memory=cap,
                  precision=args.precision, budget=args.budget or None)
    device = "cuda" if cuda else args.device
    print(summary(f"{device} {args.precision}", stats) + f" ({time.monotonic() - start:.0f} s, {jobs} workers, "
          f"{len(sources)} source models)")
    bad = stats["crashes"] + stats["hangs"] + stats["unclean"] + stats["slow"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
