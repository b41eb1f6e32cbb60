"""One child process of the crash sweep (bench/sweep.py): one model on one device at one precision,
its batches in turn. A crash or a hang here ends this process only; the sweep reports it and
starts another child for the batches left.

    python bench/_sweep_worker.py '{"model": "zoo/resnet18.onnx", "root": "...", "device": "cpu",
        "precision": "fp32", "batches": [1, 3, 0], "ref_dir": "...", "stop_at": 1.7e9, "threads": 1}'

It writes JSON lines to the stdout it was started with (anything else the process prints goes to
stderr): {"batch": B, "stage": S} as it enters each stage (the sweep blames a crash or a hang on
that stage), and {"batch": B, "outcome": ..., ...} for each batch. B is null for a fixed model.

Stages: import, read (the file; the zoo's weights materialized), load (dnnx.load, once per child:
its time counts toward the first batch), reference (onnxruntime on the CPU, cached per model and
batch in ref_dir for the other precisions and devices), run (Model.run_dict), plan
(Model.plan(inputs=...) rendered, as a user prints it), compare.
"""
from __future__ import annotations

import fcntl
import json
import os
import sys
import time
import traceback
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

# Note [sweep tolerances]: max |dnnx - onnxruntime| over max |onnxruntime|, per output. Every model
# here keeps its activations O(1) (the zoo's weights are calibrated so, zoo/PROVENANCE.md; the
# others are trained), so an error relative to the output's largest magnitude is the measure
# tests/cuda/test_cuda_zoo_models.py uses. The CUDA bounds are that test's, with docs/precision.md's
# accuracy figures behind them:
# - fp32 1e-3 on CUDA: the summation order of cuDNN's algorithms (FFT, Winograd, split-K GEMMs).
# - tf32 3e-2: a 10-bit significand in every conv/GEMM product, compounded over ~50 layers.
# - fp16 5e-2: half storage of every activation too (2^-11 per stored value; docs/precision.md's
#   whole-model bound is 3e-2 on smaller models).
# - bf16 0.2: 8 significant bits, 8 times fp16's rounding (docs/precision.md: whole models 0.24).
# - fp32 on the CPU 1e-4: dnnx's CPU kernels and onnxruntime's both accumulate in fp32 FMAs; the
#   largest error over every model here was 1.4e-6 (2026-12-04), 70 times below this bound, where
#   a wrong kernel (a tap, a channel, a row off) gives 1e-2 or more.
# The quantized files (zoo2/q_*) carry their own bound (metadata zoo.tol: one quantization step),
# taken where it is looser: a rounding that lands on the other side of a step moves a value by one.
TOLERANCES = {"fp32": 1e-3, "tf32": 3e-2, "fp16": 5e-2, "bf16": 0.2}
CPU_FP32_TOLERANCE = 1e-4


def tolerance(device: str, precision: str) -> float:
    return CPU_FP32_TOLERANCE if device == "cpu" else TOLERANCES[precision]


def reference_stem(ref_dir: Path, name: str, batch) -> str:
    """Where the reference of `name` at `batch` is cached: STEM.npz, or STEM.failed.txt saying why
    onnxruntime could not make it (written by the sweep too, when onnxruntime crashed or hung)."""
    return str(Path(ref_dir) / (name.replace("/", "__") + f"__b{batch}"))


_out = None  # the JSON-lines channel: the stdout this process was started with


def say(**message) -> None:
    _out.write(json.dumps(message) + "\n")
    _out.flush()


def short(exc: BaseException, limit: int = 400) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:limit]}"


# ---------------------------------------------------------------------------------------------
# The reference (onnxruntime, CPU), cached per model and batch.

class Reference:
    def __init__(self, name: str, model_bytes: bytes, ref_dir: Path, threads: int):
        self.name, self.model_bytes, self.ref_dir, self.threads = name, model_bytes, ref_dir, threads
        self.session = None

    def outputs(self, batch, feeds):
        """({output name: array}, None), or (None, why onnxruntime cannot run it)."""
        import numpy as np

        stem = reference_stem(self.ref_dir, self.name, batch)
        ok, failed = Path(stem + ".npz"), Path(stem + ".failed.txt")
        with open(stem + ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one process computes it; the others wait and read it
            if ok.is_file():
                with np.load(ok, allow_pickle=False) as data:
                    names = json.loads(str(data["__names__"]))
                    return {n: data[f"o{i}"] for i, n in enumerate(names)}, None
            if failed.is_file():
                return None, failed.read_text()
            try:
                result = self._compute(feeds)
            except Exception as e:  # noqa: BLE001 - onnxruntime's own failure: recorded, not dnnx's
                failed.write_text(short(e))
                return None, short(e)
            tmp = stem + ".tmp.npz"
            np.savez(tmp, __names__=np.array(json.dumps(list(result))),
                     **{f"o{i}": v for i, v in enumerate(result.values())})
            os.replace(tmp, ok)
            return result, None

    def _compute(self, feeds):
        import onnxruntime as ort

        if self.session is None:
            options = ort.SessionOptions()
            options.intra_op_num_threads = self.threads
            options.inter_op_num_threads = 1
            options.log_severity_level = 3
            self.session = ort.InferenceSession(self.model_bytes, options, providers=["CPUExecutionProvider"])
        names = [o.name for o in self.session.get_outputs()]
        return dict(zip(names, self.session.run(None, feeds)))


# ---------------------------------------------------------------------------------------------
# The comparison (Note [sweep tolerances]).

def relative_error(got, want) -> float:
    """max |got - want| over max |want|, on the finite elements (where both agree on the others)."""
    import numpy as np

    got64, want64 = got.astype(np.float64), want.astype(np.float64)
    finite = np.isfinite(want64)
    if not finite.any():
        return 0.0
    scale = max(float(np.max(np.abs(want64[finite]))), 1e-30)
    return float(np.max(np.abs(got64[finite] - want64[finite]))) / scale


def align_near_ties(got: dict, want: dict, tol: float) -> dict:
    """Note [detections compared as sets]: a detector's outputs are rows of one length N (boxes
    [N, 4], scores [N], labels [N]) in the order of their scores. Two detections whose scores
    differ by float32 noise may come out in either order, in dnnx as in onnxruntime, and an
    elementwise comparison then sees two boxes far apart. Here a row of dnnx's may stand for
    another row of onnxruntime's only where its every 1-D float output (a score) is within `tol`
    of that row's relative to the output's largest magnitude, its integer outputs are equal and
    its other outputs are within `tol` too: `got` reordered so, or `got` unchanged when the outputs
    are not such rows or some row has no such partner."""
    return match_detections(got, want, tol, cutoff=False)[0]


def match_detections(got: dict, want: dict, tol: float, cutoff: bool = True) -> tuple:
    """(got, want) with got's rows in want's order (align_near_ties). With `cutoff`, a row of either
    side that has no partner is dropped from both when its score is within `tol` of the lowest
    score kept (Note [detections compared as sets]: at tf32, fp16 or bf16 a detection at the
    top-N or score-threshold cut-off may be in on one side and out on the other; a seeded
    random-weight detector's scores are dense there), so the two sides may hold different counts
    of such rows. Any other unmatched row: both unchanged."""
    import numpy as np

    names = list(want)
    arrays = [(np.asarray(got.get(n)), np.asarray(want[n])) for n in names]
    if not arrays or any(g.ndim != w.ndim or g.shape[1:] != w.shape[1:] or w.ndim == 0 for g, w in arrays):
        return got, want
    n_got, n = arrays[0][0].shape[0], arrays[0][1].shape[0]
    if any(g.shape[0] != n_got or w.shape[0] != n for g, w in arrays) or (n_got != n and not cutoff):
        return got, want
    if max(n, n_got) < 2:
        return got, want
    scores = [k for k, (_, w) in enumerate(arrays) if w.ndim == 1 and w.dtype.kind == "f"]
    if not scores:
        return got, want
    scale = [max(float(np.max(np.abs(w.astype(np.float64)))) if w.size else 0.0, 1e-30) for _, w in arrays]

    def same(i, j):
        for k, (g, w) in enumerate(arrays):
            a, b = g[i].astype(np.float64), w[j].astype(np.float64)
            if w.dtype.kind in "biu":
                if not np.array_equal(a, b):
                    return False
            elif np.any(np.abs(a - b) > tol * scale[k]):
                return False
        return True

    pairs, used = [], set()
    for j in range(n):
        match = j if j < n_got and j not in used and same(j, j) else \
            next((i for i in range(n_got) if i not in used and same(i, j)), None)
        if match is not None:
            pairs.append((match, j))
            used.add(match)
    if len(pairs) < max(n, n_got):
        if not cutoff:
            return got, want
        s = scores[0]
        g_score, w_score = arrays[s][0].astype(np.float64), arrays[s][1].astype(np.float64)
        lowest = min([float(v.min()) for v in (g_score, w_score) if v.size])
        near = lambda v: v <= lowest + tol * scale[s]  # noqa: E731
        matched_want = {j for _, j in pairs}
        if not all(near(g_score[i]) for i in range(n_got) if i not in used) or \
                not all(near(w_score[j]) for j in range(n) if j not in matched_want):
            return got, want
    got_rows, want_rows = [i for i, _ in pairs], [j for _, j in pairs]
    return ({**got, **{name: np.asarray(got[name])[got_rows] for name in names}},
            {**want, **{name: np.asarray(want[name])[want_rows] for name in names}})


def compare(got: dict, want: dict, which, tol: float):
    """(error, None) where every compared output is within `tol`, else (error, why not); a
    detector's rows are matched first (match_detections)."""
    import numpy as np

    got, want = match_detections(got, want, tol)
    names = list(want)
    if which is not None:
        names = [names[i] for i in which]
    worst = 0.0
    for name in names:
        if name not in got:
            return None, f"output {name} missing (dnnx gave {sorted(got)})"
        g, w = np.asarray(got[name]), np.asarray(want[name])
        if g.shape != w.shape:
            return None, f"output {name}: shape {g.shape}, onnxruntime {w.shape}"
        if w.dtype.kind in "biu" or g.dtype.kind in "biu":
            if not np.array_equal(g, w):
                return None, f"output {name}: {int(np.sum(g != w))} of {w.size} integer values differ"
            continue
        if w.size == 0:
            continue
        g64, w64 = g.astype(np.float64), w.astype(np.float64)
        g_bad, w_bad = ~np.isfinite(g64), ~np.isfinite(w64)
        if np.any(g_bad != w_bad):
            return None, (f"output {name}: {int(np.sum(g_bad != w_bad))} values non-finite on one side only "
                          f"(dnnx {int(g_bad.sum())}, onnxruntime {int(w_bad.sum())})")
        a, b = g64[g_bad], w64[w_bad]
        if not np.all((a == b) | (np.isnan(a) & np.isnan(b))):
            return None, f"output {name}: non-finite values differ (NaN against inf, or the sign of inf)"
        err = relative_error(g, w)
        worst = max(worst, err)
        if not err <= tol:
            return err, f"output {name}: max error {err:.3g} of max |output| (bound {tol:g})"
    return worst, None


# ---------------------------------------------------------------------------------------------

def main() -> int:
    global _out
    _out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # what dnnx, onnxruntime or a library prints goes to stderr, not into the answers
    case = json.loads(sys.argv[1])
    name, device, precision = case["model"], case["device"], case["precision"]
    batches = case["batches"]
    say(batch=batches[0], stage="import")
    threads = int(case.get("threads", 1))
    if case.get("dev_build"):
        sys.path.insert(0, str(HERE.parent / "python"))
    import numpy as np
    import _external_models as ext
    import dnnx

    dnnx.threads.set_num_threads(threads)
    say(batch=batches[0], stage="read")
    model = ext.read_model(name, Path(case["root"]))
    spec = ext.spec_for(name)
    tol = tolerance(device, precision)
    qtol = ext.quantization_tolerance(model)
    if qtol is not None:
        tol = max(tol, qtol)
    reference = Reference(name, model.SerializeToString(), Path(case["ref_dir"]), threads)
    loaded, load_error, load_seconds = None, None, 0.0
    for i, batch in enumerate(batches):
        if time.time() > case["stop_at"]:
            for rest in batches[i:]:
                say(batch=rest, outcome="not run", detail="the sweep's time budget ran out")
            break
        start = time.perf_counter()
        if loaded is None and load_error is None:
            say(batch=batch, stage="load")
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # HostFallbackWarning & co.: plan() says them
                    loaded = dnnx.load(model, device=device, precision=precision)
            except Exception as e:  # noqa: BLE001 - a refusal, classified
                load_error = e
            load_seconds = time.perf_counter() - start
        result = {"batch": batch, "tol": tol}
        if load_error is not None:
            say(**result, outcome="refusal", stage="load", detail=short(load_error),
                error_class=type(load_error).__name__, clean=isinstance(load_error, (dnnx.DnnxError, ValueError)))
            continue
        say(batch=batch, stage="reference")
        feeds, notes = ext.make_inputs(name, model, batch)
        want, ort_error = reference.outputs(batch, feeds)
        say(batch=batch, stage="run")
        run_start = time.perf_counter()
        stage, caught = "run", []
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                got = loaded.run_dict(feeds)
                stage = "plan"
                say(batch=batch, stage=stage)
                str(loaded.plan(inputs=feeds))
        except Exception as e:  # noqa: BLE001
            if want is None and stage == "run":  # onnxruntime refuses these inputs too (a Reshape of 0 elements by -1)
                say(**result, outcome="onnxruntime-fails", detail=f"both refuse: dnnx: {short(e)}; onnxruntime: {ort_error}")
                continue
            say(**result, outcome="refusal", stage=stage, detail=short(e), error_class=type(e).__name__,
                clean=isinstance(e, (dnnx.DnnxError, ValueError)), seconds=time.perf_counter() - start)
            continue
        run_seconds = time.perf_counter() - run_start
        say(batch=batch, stage="compare")
        warned = sorted({f"{w.category.__name__}: {str(w.message)[:160]}" for w in caught
                         if not issubclass(w.category, (DeprecationWarning, dnnx.HostFallbackWarning))})
        result.update(seconds=time.perf_counter() - start, run_seconds=run_seconds,
                      load_seconds=load_seconds if i == 0 else 0.0, notes=notes + warned)
        if want is None:
            say(**result, outcome="onnxruntime-fails", detail=f"dnnx ran; onnxruntime: {ort_error}")
            continue
        error, why = compare(got, want, spec.compare, tol)
        result["error"] = error
        if why is None:
            say(**result, outcome="ok", detail="")
        else:
            say(**result, outcome="mismatch", detail=why)
    _out.close()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception:  # noqa: BLE001 - the harness's own failure: the sweep reports it as such
        traceback.print_exc()
        sys.exit(3)
