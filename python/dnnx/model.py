"""The user-facing Model: load an ONNX model, run numpy arrays through it, show its plan."""
from __future__ import annotations

import os
import time
import warnings
import weakref
from dataclasses import dataclass
from typing import Any, Dict, Optional, Union

import numpy as np

from ._chunks import run_chunked
from ._device import backend_options, start_device
from ._dims import batched_shapes
from ._inputs import FastInputs, checked_inputs
from ._tensors import ELEM_NAMES, dtype_named
from .errors import HostFallbackWarning, NonFiniteWarning, PlanCacheWarning, UnsupportedModelError
from . import finetune as _finetune
from . import _pickle
from ._importer import import_model, restore_weights
from ._passes import pass_switches
from . import _layout_choice, _precision_choice
from . import _background_search
from ._native import core
from .plan import PlanTable
from ._quant_report import METADATA_KEY, decisions_from_metadata
from .profile import ProfileTable, profile_table


@dataclass(frozen=True)
class TensorSpec:
    """A graph input or output: symbolic dims are strings (e.g. 'N')."""

    name: str
    shape: tuple
    dtype: str
    # "tensor", or for a value that is not one (Note [sequences]) "sequence" (a Python list of
    # arrays of `dtype`) or "optional" (None, or an array or list); such a value has no shape here.
    kind: str = "tensor"


# TensorProto.DataType -> dtype name (on a device FLOAT16, DOUBLE and BFLOAT16 are computed in float32: _edges.py)
_ONNX_DTYPES = ELEM_NAMES


_PLANNER_COUNTERS = ("timing_runs", "cache_hits", "cache_misses", "cache_stale", "cache_writes", "search_seconds")


def _output_specs(outputs: list) -> list:
    return [TensorSpec(name, tuple(dims), _ONNX_DTYPES.get(elem_type, "float32"), kind)
            for name, dims, elem_type, kind in outputs]


class Model:
    """A loaded model. ``run`` may be called from several threads at once (it releases the GIL)."""

    def __init__(self, src, *, batch_size=None, dims=None, device="cpu", precision="fp32", workspace_limit=None,
                 algo_search="auto", deterministic=False, passes=None, optimize=True, plan_cache=True,
                 cuda_graph=True, max_plans=64, calibration=None, memory_limit=None, measure_precision=True,
                 search_budget=None, calibration_method=None, int8_tolerance=None, measure_layout=True):
        start = time.perf_counter()
        self.int8_report = None  # precision="int8": the accuracy guard's QuantReport (_quantize.py)
        if precision == "int8":
            # the QDQ graph runs as it is, its float layers (those the guard kept wide) at fp32 on
            # either backend, the precision the guard measured them against; on CUDA its int8
            # layers on int8 tensor cores (docs/precision.md, "On CUDA")
            src = self._quantized(src, device, calibration, calibration_method, int8_tolerance)
            precision, calibration = "fp32", None
        elif calibration_method is not None or int8_tolerance is not None:
            raise ValueError(f"calibration_method and int8_tolerance apply to precision='int8' only "
                             f"(got precision={precision!r})")
        # what a pickled model loads with where it lands (_pickle.py; batch_size and dims live in the proto)
        self._load_options = dict(device=device, precision=precision, workspace_limit=workspace_limit,
                                  algo_search=algo_search, deterministic=deterministic, passes=passes,
                                  optimize=optimize, plan_cache=plan_cache, cuda_graph=cuda_graph, max_plans=max_plans,
                                  memory_limit=memory_limit, measure_precision=measure_precision,
                                  search_budget=search_budget, measure_layout=measure_layout)
        # Note [overlapped device start]: the CUDA backend opens on its own thread while the model is read
        started = start_device(device, precision, workspace_limit, algo_search, deterministic, plan_cache,
                               memory_limit)
        kind = started.kind
        # read by the engine, not the backend
        options = dict(started.options, cuda_graph=bool(cuda_graph), max_plans=max_plans)
        device_seconds = time.perf_counter() - start
        try:
            imported = import_model(src, batch_size=batch_size, dims=dims, float_edges=kind != "cpu")
        except BaseException:
            started.checked()  # an unavailable device is the first thing to fix, as before the overlap
            raise
        read = time.perf_counter()
        device_start = started.checked()
        probe_wait = time.perf_counter() - read  # for the probe's answer, after the model was read
        if calibration is not None:  # measured value ranges for the fp16 range check (_calibration.py)
            if precision != "fp16":
                raise ValueError(f"calibration applies to precision='fp16' only (got precision={precision!r})")
            from . import _calibration  # onnx's helpers: imported only when asked for (no onnx package at load)

            options = dict(options, fp16_calibration=_calibration.measure(imported.proto, calibration))
        self.precision = "int8" if self.int8_report is not None else precision
        self._nonfinite_layer = None  # the first non-finite layer, once looked for (_warn_nonfinite)
        self._nonfinite_load = dict(device=device, precision=precision, workspace_limit=workspace_limit,
                                    algo_search=algo_search, deterministic=deterministic, passes=passes,
                                    optimize=optimize, measure_precision=measure_precision)  # how that
        # search loads the model again
        self.device = device
        self.opset = imported.opset
        self._proto, self._file_weights = imported.proto, imported.weights
        self.passes = pass_switches(passes, optimize)
        self._backend = (kind, options)
        self._ir = imported.ir
        if kind != "cpu":  # Note [string tensors]: host values only, refused before the engine sees them
            for spec in imported.ir["inputs"]:
                if spec[2] == "string":
                    raise UnsupportedModelError(f"graph input '{spec[0]}' is a string tensor: string tensors run on "
                                                f"the CPU only (load the model with device='cpu')")
        self._engine = core.Engine(imported.ir, kind, options, passes=self.passes, started=device_start)
        self._load_profile = {"device": device_seconds, **imported.phases, **self._engine.load_phases(),
                              **({"device start: probe wait": probe_wait, **device_start.phases()}
                                 if device_start is not None else {})}
        self._layout_note = ""  # Note [measured layout]: what the layout choice measured, for plan()
        if kind == "cuda" and measure_layout and self.passes.get("channels_last"):
            self._choose_layout()
        if kind == "cuda" and precision in ("fp16", "bf16") and measure_precision:
            self._choose_precision(precision, (workspace_limit, algo_search, deterministic, plan_cache, memory_limit))
        self._tuner = None     # the Tuner whose weights the engine has not loaded yet
        self._tuned = set()    # parameter names any tuner has changed (what save() writes back)
        self._edges = imported.edges  # float64/float16 inputs and outputs: converted at the edges (_edges.py)
        kinds = imported.ir.get("input_kinds") or ["tensor"] * len(imported.ir["inputs"])
        self.inputs = [TensorSpec(name, tuple(dims), self._edges.inputs.get(name, dtype), kind)
                       for (name, dims, dtype), kind in zip(imported.ir["inputs"], kinds)]
        self.outputs = _output_specs(imported.outputs)
        self._fast_inputs = FastInputs(self.inputs, self._edges)  # Note [the input fast path]
        # Inputs whose values decide shapes (a Reshape's shape, Slice's starts, ...): their values
        # join the plan key (docs/architecture.md, "value inputs").
        self.value_inputs = [self.inputs[i].name for i in self._engine.value_inputs()]
        host_layers = self._engine.host_layers()
        if host_layers:
            warnings.warn(f"{len(host_layers)} node(s) run on the host inside this {device} model (no device "
                          f"kernel): " + "; ".join(host_layers), HostFallbackWarning, stacklevel=3)
        self._planner_stats()  # shows the warnings of the load's own plan
        self._search = self._start_search(kind, algo_search, deterministic, search_budget)
        self._int8_notes = int8_plan_notes(imported.proto)

    def _start_search(self, kind, algo_search, deterministic, search_budget):
        """Note [background search] (_background_search.py): the search thread of
        algo_search="background"; None for the other policies."""
        if algo_search != "background":
            if search_budget is not None:
                raise ValueError(f"search_budget applies to algo_search='background' (got algo_search={algo_search!r})")
            return None
        budget = _background_search.DEFAULT_BUDGET_S if search_budget is None else search_budget
        if isinstance(budget, bool) or not isinstance(budget, (int, float)) or not budget >= 0:
            raise ValueError(f"search_budget: expected seconds >= 0, got {search_budget!r}")
        why = ("the CPU backend has no algorithm search" if kind != "cuda" else
               "deterministic=True: the load's plan is kept (a swap would change results)" if deterministic else "")
        if why:
            return _background_search.BackgroundSearch(build_engine=None, swap=None, budget_s=0,
                                                       enabled=False, why_off=why)
        load = self._load_options
        cache = _background_search.plan_cache_for(load["plan_cache"])
        _, foreground = core.device_options(self.device, load["precision"], load["workspace_limit"], "background",
                                            bool(deterministic), cache, load["memory_limit"])
        model = weakref.ref(self)  # the thread must not keep the model alive

        def build_engine(searcher: bool):
            """The searcher, or a twin of the model's engine (the candidate, or the baseline it is
            timed against), both at the device's lowest stream priority."""
            m = model()
            if m is None:
                raise RuntimeError("the model was closed")
            device = foreground.as_searcher() if searcher else foreground.in_background()
            return core.Engine(m._ir, m._backend[0], dict(m._backend[1], device_options=device), passes=m.passes)

        def swap(engine) -> bool:
            m = model()
            if m is None or m._tuner is not None or m._tuned:
                return False
            engine.set_foreground()  # the requests' priority, before the first request reaches it
            m._engine = engine  # one assignment: a run holds the engine it started with
            return True

        search = _background_search.BackgroundSearch(
            build_engine=build_engine, swap=swap, budget_s=budget,
            value_indices=[i for i, spec in enumerate(self.inputs) if spec.name in self.value_inputs])
        if not self.value_inputs and all(isinstance(d, int) for spec in self.inputs for d in spec.shape):
            search.saw(self._prepare_arrays([list(spec.shape) for spec in self.inputs]))  # the declared shapes
        return search

    def search_status(self) -> dict:
        """Note [background search]: with ``algo_search="background"`` on CUDA, the search's
        progress: ``state`` ("searching", "done", "budget spent", "stopped", "failed" or "off",
        with ``why``), ``shapes_searched`` and ``shapes_pending`` (input shapes the model ran),
        ``layers_searched`` (layers the searcher timed or found in the plan cache),
        ``search_seconds``, ``timings_retaken`` (timings a request overlapped, taken again),
        ``quiet_waits_given_up`` (waits for an idle device that gave up: runs back to back),
        ``seconds`` since load, ``time_left_s`` of the budget, ``swaps`` (times
        a faster plan replaced the current one) and ``speedup`` (the load plan's time over the
        current plan's, on the first shape searched). Other policies: {"state": "off", "why": ...}."""
        if self._search is None:
            return {"state": "off", "why": f"algo_search={self._load_options['algo_search']!r}: the plan is final at "
                                           f"load"}
        return self._search.status()

    def wait_search(self, timeout: Optional[float] = None) -> bool:
        """Blocks until the background search is over (or ``timeout`` seconds pass); True when it
        is over. True at once for models without one."""
        return True if self._search is None else self._search.wait(timeout)

    def _quantized(self, src, device, calibration, calibration_method, int8_tolerance):
        """precision="int8": the QDQ model of dnnx.quantize (in memory), its report kept."""
        if device != "cpu":  # an unavailable device says so before the calibration runs (on the CPU)
            backend_options(device, "fp32")
        from . import _quantize

        self.int8_report = _quantize.quantize_model(
            src, calibration, calibration_method or "minmax", True,
            _quantize.DEFAULT_TOLERANCE if int8_tolerance is None else int8_tolerance, show_progress=False)
        return self.int8_report.model

    def _choose_layout(self) -> None:
        """Note [measured layout] (_layout_choice.py): a channels-last plan cut by many layout
        conversions is timed against a twin in ONNX's layout, and the faster is kept."""
        start = time.perf_counter()
        kind, options = self._backend
        twin_passes = dict(self.passes, channels_last=False)
        twin, self._layout_note = _layout_choice.choose(
            self._engine, self._ir, lambda: core.Engine(self._ir, kind, options, passes=twin_passes))
        if twin is not None:
            self.passes, self._engine = twin_passes, twin  # later engines (fine-tuning, search) follow
        if self._layout_note:
            self._load_profile["layout_choice"] = time.perf_counter() - start

    def _choose_precision(self, precision: str, device_args: tuple) -> None:
        """Note [measured precision] (_precision_choice.py): the half layers that run faster in
        fp32 keep fp32; the engine is built once more when there are any. Where the layer-by-layer
        cut (Note [precision cut]) and the whole-segment rule disagree, both plans are built and
        timed, and the faster is kept."""
        start = time.perf_counter()
        kind, options = self._backend
        fp32 = dict(options, **backend_options(self.device, "fp32", *device_args)[1])
        cut, whole, inputs = _precision_choice.choose(self._engine, self._ir, kind, fp32, self.passes, precision)

        def build(kept):
            return core.Engine(self._ir, kind, dict(options, precision_kept=kept), passes=self.passes) if kept \
                else self._engine

        def measured(kept):
            engine = build(kept)
            return _precision_choice.total_ms(engine.profile(inputs, _precision_choice.FIRST_REPEAT)["layers"]), engine

        if cut == whole:
            kept, engine = cut, build(cut)
        else:  # the faster of the two plans; the slower one's device memory goes back with it
            (cut_ms, cut_engine), (whole_ms, whole_engine) = measured(cut), measured(whole)
            kept, engine = (cut, cut_engine) if cut_ms <= whole_ms else (whole, whole_engine)
        if kept:
            self._backend = (kind, dict(options, precision_kept=kept))
        self._engine = engine
        self._load_profile["precision_choice"] = time.perf_counter() - start

    @property
    def proto(self):
        """The onnx.ModelProto as read (batch_size and dims applied; before folding and rewrites):
        what ``save()`` writes back. The weights a file load left in the file (the engine copied
        them from there) are put into it at the first access."""
        if self._file_weights:
            restore_weights(self._proto, self._file_weights)
            self._file_weights = {}
        return self._proto

    # --- running -------------------------------------------------------------------------------
    def _ordered_inputs(self, args, kwargs) -> list:
        """The inputs in graph-input order, under dnnx's input rule (_inputs.py: dtypes strict,
        lists converted, None refused, shared dims agreeing)."""
        if not kwargs:  # Note [the input fast path] (_inputs.py)
            fast = (self._fast_inputs.take_named(args[0]) if len(args) == 1 and type(args[0]) is dict
                    else self._fast_inputs.take(args))
            if fast is not None:
                return fast
        names = [spec.name for spec in self.inputs]
        if len(args) == 1 and isinstance(args[0], dict) and not kwargs:
            feeds = args[0]
        elif kwargs and not args:
            feeds = kwargs
        else:
            if kwargs:
                raise ValueError("pass inputs either positionally or by name, not both")
            if len(args) != len(names):
                raise ValueError(f"expected {len(names)} input(s) ({', '.join(names)}), got {len(args)}")
            # host or device arrays: the engine reads either (python/bindings/run_inputs.h)
            return self._edges.to_engine(names, checked_inputs(self.inputs, args))
        unknown = sorted(set(feeds) - set(names))
        missing = [n for n in names if n not in feeds]
        if unknown or missing:
            raise ValueError(f"inputs by name: expected {names}; missing {missing}, unknown {unknown}")
        return self._edges.to_engine(names, checked_inputs(self.inputs, [feeds[n] for n in names]))

    def _outputs(self, args, kwargs, output, chunk_size, progress=None) -> list:
        """The outputs of one run (or of a chunked one) as a list in graph-output order."""
        arrays = self._ordered_inputs(args, kwargs)
        if self._search is not None:
            self._search.saw(arrays)  # a new shape joins the background search's queue
        engine = self._current_engine()
        if chunk_size is None:
            outputs = engine.run(arrays, output)
            if self._search is not None:
                self._search.ran()  # Note [search after the first run] (_background_search.py)
            return self._checked_finite(self._declared_outputs(outputs), arrays)
        if output != "numpy":
            raise ValueError(f"chunk_size: chunked runs return numpy arrays; got output={output!r}")
        return self._checked_finite(self._declared_outputs(run_chunked(
            lambda feed: engine.run(feed, "numpy"), self.inputs, self.outputs, self.value_inputs, arrays, chunk_size,
            progress)), arrays)

    def _checked_finite(self, outputs: list, arrays: list) -> list:
        """precision="fp16": a NonFiniteWarning when a host output holds inf or NaN (np.isfinite on
        the returned arrays; device outputs are not read back). The first layer whose output is not
        finite is looked for once per model, by one more run with every value an output."""
        if self.precision != "fp16":
            return outputs
        bad = [spec.name for spec, out in zip(self.outputs, outputs)
               if isinstance(out, np.ndarray) and out.dtype.kind == "f" and not np.isfinite(out).all()]
        if bad:
            self._warn_nonfinite(bad, arrays)
        return outputs

    def _warn_nonfinite(self, bad: list, arrays: list) -> None:
        if self._nonfinite_layer is None:
            self._nonfinite_layer = ""
            if all(isinstance(a, np.ndarray) for a in arrays):
                try:
                    from . import _calibration

                    self._nonfinite_layer = _calibration.first_nonfinite_layer(
                        self.proto, self._nonfinite_load, arrays) or ""
                except Exception:  # the search is a courtesy: the warning names the output(s) then
                    self._nonfinite_layer = ""
        where = (f"; the first layer whose output is not finite: {self._nonfinite_layer}" if self._nonfinite_layer
                 else "")
        warnings.warn(NonFiniteWarning(
            f"precision='fp16': output(s) {', '.join(repr(b) for b in bad)} hold inf or NaN{where}. fp16 stores "
            f"values up to 65504; load with calibration=<a typical batch> so that the layers whose values leave "
            f"that range stay fp32, or load with precision='fp32' or 'tf32' (docs/precision.md)"), stacklevel=4)

    def _declared_outputs(self, outputs: list) -> list:
        """Numpy outputs in their declared dtypes (float64/float16 ones converted back: _edges.py)."""
        return self._edges.from_engine([spec.name for spec in self.outputs], list(outputs))

    def run_dict(self, *inputs: Any, output: str = "numpy", chunk_size: Optional[int] = None,
                 **named_inputs: Any) -> Dict[str, Any]:
        """Runs the model as ``run`` does (the same inputs and keywords); always returns
        {output name: array} in graph-output order."""
        outputs = self._outputs(inputs, named_inputs, output, chunk_size)
        return {spec.name: out for spec, out in zip(self.outputs, outputs)}

    def run(self, *inputs: Any, output: str = "numpy", chunk_size: Optional[int] = None, **named_inputs: Any):
        """One positional array per graph input, or one dict by input name, or the inputs as
        keywords by name. Returns an array for a single-output model, else a tuple in
        graph-output order.

        Inputs are numpy arrays, or on a CUDA model device arrays read in place without a host
        copy: anything with ``__dlpack__`` on the model's GPU (PyTorch CUDA tensors, CuPy), with
        ``__cuda_array_interface__``, or a ``dnnx.DeviceArray``. They must be C-contiguous; a wrong
        dtype, shape or device is a ValueError naming the input.

        The input rule (the same for ``InferenceSession`` and ``dnnx run``): an array of another
        dtype than the input's (float64 for a float32 input) is a ValueError naming the input, the
        dtype expected and the one given: dnnx converts no arrays. A Python list or scalar becomes
        an array of the input's dtype when no kind changes (ints for a float input). ``None`` and
        two inputs disagreeing on a shared named dim are ValueErrors naming the input(s); a sequence
        input takes a list of arrays and an optional input None or a value, and a sequence or
        optional output comes back as a list, None or a value (Note [sequences]). An empty
        batch (a dim of 0) runs, with onnxruntime's outputs (empty ones, or a reduction's identity).

        ``output="device"`` (CUDA only) returns ``dnnx.DeviceArray``s in GPU memory instead of
        numpy arrays (their lifetime rules are in ``help(dnnx.DeviceArray)``). ``chunk_size=k``
        streams the inputs with a symbolic leading (batch) dim through the model k rows at a time
        and gathers the outputs (which must be batch-major) into full numpy arrays: memory for the
        activations stays that of one chunk; a smaller last chunk runs its own plan. An input
        named "output" or "chunk_size" must be passed in a dict. A run returns when its outputs
        are complete; runs from several threads take turns on the model's CUDA stream."""
        outputs = self._outputs(inputs, named_inputs, output, chunk_size)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    __call__ = run

    def to_device(self, array) -> "core.DeviceArray":
        """A copy of a host array in this model's GPU memory (CUDA models only), to run on
        without a host-to-device copy per call."""
        return self._current_engine().to_device(np.asarray(array))

    def profile(self, *args, repeat=20, **kwargs) -> ProfileTable:
        """Per-layer times over ``repeat`` runs on these inputs (passed as to ``run``): rows of
        (name, op, algorithm, median_ms), printable as a table. On CUDA, GPU times from CUDA
        events (see dnnx/profile.py); on the CPU, host wall-clock times."""
        result = self._current_engine().profile(self._ordered_inputs(args, kwargs), int(repeat))
        return profile_table(result, self.device, int(repeat))

    def graphs(self) -> list:
        """How the layers of each input shape run so far on CUDA: one dict per plan with
        ``input_shapes``, ``state`` ("pending": its first run was eager, the next one captures;
        "captured": runs replay one CUDA graph; "off": ``cuda_graph=False``; "failed: why": eager
        for good), and the counts ``captures``, ``replays`` and ``eager_runs``. Empty on the CPU."""
        return self._current_engine().graphs()

    # --- fine-tuning -------------------------------------------------------------------------
    def finetune(self, trainable="last:2", loss="cross_entropy", lr=0.01, momentum=0.9, nesterov=False,
                 weight_decay=0.0, schedule=None, deterministic=False, seed=0, total_steps=None):
        """A Tuner that trains ``trainable`` ("last:N": the parameters of the last N Conv, Gemm,
        MatMul or LSTM layers; "all"; or a list of initializer names) with SGD on ``loss``
        ("cross_entropy" or its onnx name "softmax_cross_entropy": integer labels, fused with a
        final Softmax; "nll": integer labels against an output of log-probabilities; "mse": float
        targets).
        ``schedule`` ("step", "cosine") needs ``total_steps``. ``run()`` and ``save()`` see the
        tuned weights. See dnnx/finetune.py."""
        options = self._backend[1].get("device_options")
        # bf16 fine-tunes (Note [bf16 fine-tuning] in engine/train/trainer.cc); fp16's range does
        # not hold gradients without loss scaling, so fp16 stays inference-only.
        if options is not None and options.precision == core.Precision.fp16:
            raise ValueError("finetune: fine-tuning runs in fp32, tf32 or bf16, not fp16 (fp16 half storage is for "
                             "inference); load the model with precision='bf16', 'fp32' or 'tf32' to fine-tune it")
        self._current_engine()  # a previous tuner's weights first
        self._float_tail(trainable)
        return _finetune.Tuner(self, trainable=trainable, loss=loss, lr=lr, momentum=momentum, nesterov=nesterov,
                               weight_decay=weight_decay, schedule=schedule, deterministic=deterministic,
                               seed=seed, total_steps=total_steps)

    def _float_tail(self, trainable) -> None:
        """Note [int8 fine-tuning] (_quant_tail.py): where the layers ``trainable`` names read
        dequantized int8 weights (a QDQ model), the model is loaded again with those layers float
        and the QDQ pairs inside the tail bypassed, its options kept; earlier tuned weights
        carry over."""
        from . import _quant_tail

        base = self.proto
        if self._tuned:
            base = _finetune.tuned_proto(base, {name: self._ir["constants"][name] for name in self._tuned})
        proto = _quant_tail.float_tail(base, trainable)
        if proto is None:
            return
        report, precision = self.int8_report, self.precision
        fresh = Model(proto, **self._load_options)
        if self._search is not None:
            self._search.stop("fine-tuning makes the tail float: the model is loaded again")
        self.__dict__.update(fresh.__dict__)
        self.int8_report, self.precision = report, precision

    def save(self, path) -> None:
        """Writes the original ONNX graph (``self.proto``: before folding and rewrites) with the
        tuned initializers (atomically: a temporary file renamed over ``path``)."""
        self._current_engine()
        weights = {name: self._ir["constants"][name] for name in self._tuned}
        _finetune.atomic_write_bytes(path, _finetune.tuned_proto(self.proto, weights).SerializeToString())

    def __reduce__(self):
        """Pickles as the ONNX bytes (tuned weights included) and the load options, not as engine
        state: unpickling loads and plans the model again where it lands (_pickle.py)."""
        return (_pickle._unpickle, (_pickle.state(self),))

    def _weights_changed(self, tuner) -> None:
        self._tuner = tuner
        if self._search is not None:
            self._search.stop("fine-tuning changes the weights: the tuned engine is kept")

    def _current_engine(self):
        """The engine, rebuilt with a tuner's weights when they changed since the last run."""
        if self._tuner is not None:
            weights = self._tuner.weights()
            self._ir = dict(self._ir, constants={**self._ir["constants"], **weights})
            self._tuned.update(weights)
            kind, options = self._backend
            self._engine = core.Engine(self._ir, kind, options, passes=self.passes)
            self._tuner = None
        return self._engine

    # --- introspection -------------------------------------------------------------------------
    def _shapes(self, batch_size):
        """The input shapes plan/memory(batch_size=) plan: the declared ones (symbolic dims as 1)
        with ``batch_size`` bound by the one batch rule that load applies (Note [one batch rule]
        in _dims.py); None: the declared shapes."""
        if batch_size is None:
            return None
        declared = [(spec.name, list(spec.shape)) for spec in self.inputs]
        return batched_shapes(declared, self._engine.default_shapes(), batch_size)

    def _planner_stats(self) -> dict:
        report = self._engine.planner_report()
        for message in report.pop("warnings"):
            warnings.warn(message, PlanCacheWarning, stacklevel=3)
        for counter in _PLANNER_COUNTERS:  # a backend without a search reports none
            report.setdefault(counter, 0)
        return report

    def planner_stats(self) -> dict:
        """What the planner did for this model so far: ``plans_built`` (one per new input shape, or
        new value of a ``value_inputs`` input), ``plans_reused`` (runs and plans answered by a kept
        plan), ``plans_evicted`` (dropped by the ``max_plans`` bound, least recently used first),
        ``plans_kept`` and ``max_plans``; ``timing_runs`` (exhaustive searches that
        timed cuDNN's candidates on the GPU), ``cache_hits`` (choices taken from the persistent plan
        cache after re-validation), ``cache_misses``, ``cache_stale`` (entries dropped, each with a
        ``PlanCacheWarning``), ``cache_writes``, ``search_seconds`` and its parts ``search_seconds: <part>`` (CUDA: heuristics,
        workspace sizes, find, retime, scratch, own kernels, cublaslt; the parts a cold load waits
        on), ``plan_seconds: <op>`` (CUDA: the
        time spent planning that op's layers, searches included) and ``plan_cache`` (the file, or
        None); the search counters are zero on the CPU, which has no algorithm search. On CUDA,
        ``device_bytes``: what the model holds on the GPU now (what ``memory_limit`` caps).
        ``stages``: for a model with staged plans or subgraphs (Note [staged plans]), one dict per
        stage or body planned so far (``stage``: "after NonZero 'n1'", "Loop 'l' body", ...; its
        ``plans_built``, ``plans_reused``, ``plans_evicted``, ``plans_kept``), and
        ``plans_kept_total``: the plans kept by the model and all of them, which share
        ``max_plans`` (each keeps at least the plan it built last)."""
        return self._planner_stats()

    def load_profile(self) -> dict:
        """Seconds per phase of this model's load, in order: ``device`` (options, the CUDA probe),
        ``read`` (the file parsed), ``check`` (onnx.checker over a weight-free view), ``shapes``
        (batch_size and dims applied), ``convert`` (the IR: arrays over the weights' bytes),
        ``engine: graph`` (the IR in the engine's types: the weights copied, once), ``engine:
        backend`` (the CPU backend, or the CUDA library opened with its context and handles) and
        ``engine: build`` (validation, the rewrite passes, the constants' upload to a device, the
        plan of the declared shapes). On CUDA the backend opens on a thread of its own while the
        model is read (Note [overlapped device start]): ``device start: probe wait`` and ``engine:
        backend`` are then the waits for it, and ``device start: libraries``, ``device start:
        probe`` and ``device start: open`` that thread's steps (cuBLAS and cuDNN loaded; the
        backend library opened, the driver started and the devices counted; the context, handles
        and kernels). On CUDA at tf32, fp16 or bf16, ``layout_choice`` where the plan was timed
        against its ONNX-layout twin (Note [measured layout]); at fp16 or bf16, ``precision_choice``
        (Note [measured precision]: the half plan and an fp32 twin timed, the engine built again
        where a segment keeps fp32)."""
        return dict(self._load_profile)

    def kernels(self) -> dict:
        """What this model's backend registers: {op type: {"dtypes": [...], "gradient": bool,
        "checks_nodes": bool, "staged": bool}} ("staged": a value-shaped op's device kernel, run
        between plan stages, Note [device staged kernels])
        ("<op>@NHWC" and fused types included: the rewrite passes make those nodes)."""
        return dict(self._engine.kernels())

    def _plan_request(self, batch_size, inputs) -> dict:
        """The engine's plan arguments: the given inputs (as ``run`` takes them), else shapes."""
        if inputs is not None:
            if batch_size is not None:
                raise ValueError("pass batch_size or inputs, not both")
            feeds = inputs if isinstance(inputs, dict) else (inputs if isinstance(inputs, (list, tuple)) else [inputs])
            args = (feeds,) if isinstance(feeds, dict) else tuple(feeds)
            return {"inputs": self._ordered_inputs(args, {})}
        shapes = self._shapes(batch_size)  # a bad batch_size first: the ValueError names it
        if self.value_inputs:
            raise ValueError(f"the plan depends on the values of input(s) {self.value_inputs} (they decide "
                             f"shapes): pass inputs= (arrays as run() takes them)")
        return {"shapes": shapes}

    def plan(self, batch_size=None, inputs=None) -> PlanTable:
        """One row per layer: name, op, input and output shapes, algorithm, math, workspace bytes.
        Symbolic dims are taken as 1, except those ``batch_size`` binds (the rule ``load`` applies:
        Note [one batch rule] in _dims.py; 0 plans an empty batch); ``inputs`` (arrays as ``run``
        takes them) plans for those inputs instead, as a model with ``value_inputs`` needs."""
        table = PlanTable(self._current_engine().plan(**self._plan_request(batch_size, inputs)),
                          notes=self._edges.notes() + ([self._layout_note] if self._layout_note else []),
                          precision_notes=self._int8_notes)
        self._planner_stats()  # a new batch size plans anew: its warnings show here
        return table

    def memory(self, batch_size=None, inputs=None) -> dict:
        """Arena bytes after liveness placement against the naive sum of all activations, for the
        shapes ``plan`` would plan with the same arguments."""
        return self._engine.memory(**self._plan_request(batch_size, inputs))

    def set_max_plans(self, max_plans: int) -> None:
        """How many plans (one per input shape, and per value of the ``value_inputs``) the model
        keeps; the least recently used go first (``planner_stats()`` counts them)."""
        self._current_engine().set_max_plans(max_plans)
        self._backend = (self._backend[0], dict(self._backend[1], max_plans=max_plans))  # for rebuilt engines
        self._load_options["max_plans"] = max_plans

    def prepare(self, shapes) -> None:
        """Plans ahead, for servers that must not plan on a request: ``shapes`` is a list with one
        entry per input set, each a list of shapes in input order, a dict {input name: shape}, or
        (one-input models) one shape; an entry may instead hold arrays (as ``run`` takes them),
        which a model with ``value_inputs`` needs. On CUDA each set also runs twice on zeros (or
        the given arrays), so that its CUDA graph is recorded and the first request replays it."""
        engine = self._current_engine()
        for entry in shapes:
            arrays = self._prepare_arrays(entry)
            if self._search is not None:
                self._search.saw(arrays)
            engine.plan(inputs=arrays)
            if self.device != "cpu":
                for _ in range(2):  # the first run is eager, the second records the graph
                    engine.run(arrays, "numpy")
        self._planner_stats()

    def _prepare_arrays(self, entry) -> list:
        """Arrays for one prepare() entry: given arrays as they are, zeros for given shapes."""
        names = [spec.name for spec in self.inputs]
        if isinstance(entry, dict):
            unknown = sorted(set(entry) - set(names))
            if unknown or len(entry) != len(names):
                raise ValueError(f"prepare: expected shapes for {names}, got {sorted(entry)}")
            entry = [entry[n] for n in names]
        elif len(names) == 1 and (isinstance(entry, tuple) or (isinstance(entry, list) and entry and
                                                               all(isinstance(d, int) for d in entry))):
            entry = [entry]
        if len(entry) != len(names):
            raise ValueError(f"prepare: expected {len(names)} shape(s) ({', '.join(names)}), got {len(entry)}")
        arrays = []
        for spec, item in zip(self.inputs, entry):
            if isinstance(item, (tuple, list)) and all(isinstance(d, (int, np.integer)) for d in item):
                if spec.name in self.value_inputs:
                    raise ValueError(f"prepare: input '{spec.name}' decides shapes by its value: give an "
                                     f"array for it, not a shape")
                arrays.append(np.zeros(tuple(int(d) for d in item), dtype=dtype_named(spec.dtype)))
            else:
                arrays.append(item)
        return self._edges.to_engine(names, arrays)

    def __repr__(self) -> str:
        ins = ", ".join(f"{s.name}{list(s.shape)}" for s in self.inputs)
        outs = ", ".join(f"{s.name}{list(s.shape)}" for s in self.outputs)
        return f"<dnnx.Model device={self.device} opset={self.opset} inputs=({ins}) outputs=({outs})>"


def int8_plan_notes(proto) -> dict:
    """{layer name: "int8 ..." or "fp32 (kept in fp32: ...)"}: the accuracy guard's decisions that a
    model written by dnnx.quantize carries in its metadata_props (_quant_report.py); {} otherwise."""
    if not any(p.key == METADATA_KEY for p in proto.metadata_props):
        return {}
    notes = {}
    for row in decisions_from_metadata(proto):
        notes[row.name] = (f"int8 weights and activations (error {100.0 * row.error:.3g}%, measured by the "
                           f"int8 accuracy guard)" if row.precision == "int8" else f"{row.precision} ({row.why})")
    return notes


def load(src: Union[str, os.PathLike, bytes, Any], batch_size: Optional[int] = None, device: str = "cpu", *,
         dims: Optional[Dict[str, int]] = None, precision: str = "fp32", workspace_limit: Union[int, str, None] = None,
         algo_search: str = "auto", deterministic: bool = False, passes: Optional[Dict[str, bool]] = None,
         optimize: bool = True, plan_cache: Union[bool, str, os.PathLike, None] = True,
         cuda_graph: bool = True, max_plans: int = 64, calibration: Any = None,
         memory_limit: Union[int, str, None] = None, measure_precision: bool = True,
         search_budget: Optional[float] = None, calibration_method: Optional[str] = None,
         int8_tolerance: Optional[float] = None, measure_layout: bool = True) -> Model:
    """Loads an ONNX model from a path, bytes or ``onnx.ModelProto`` (kept as ``Model.proto``, not
    copied, unless ``batch_size`` or ``dims`` change it: then a copy changes).

    ``batch_size=N`` binds each data input's batch dim under one rule (the same for
    ``Model.plan``, ``Model.memory`` and every CLI ``--batch``; Note [one batch rule] in
    _dims.py): its leading dim when that is symbolic or 1 (and a Reshape target that carries an
    exported batch of 1), otherwise its only symbolic dim (a time-major [16, N, 8] input binds N);
    an input where neither applies and that has symbolic dims is a ValueError that says to use
    ``dims=``. ``dims={"T": 128}`` binds named (symbolic) dims of the graph inputs at load:
    ``Model.inputs`` shows the value, and a run with another size there is a ValueError. A name no
    input has is a ValueError (the message lists the model's named dims); ``dims`` is applied
    before ``batch_size``. Sizes are ints >= 0: 0 is an empty batch, which plans and runs (empty
    outputs, as onnxruntime gives); a negative or non-integer size is a ValueError naming the
    argument. Dims left symbolic are bound per run, with one plan per input shape.
    Unsupported ops or attributes raise ``UnsupportedModelError`` here, not at run time;
    ``Model.load_profile()`` says where the load's time went.

    ``device``: "cpu", "cuda" or "cuda:N". On CUDA: ``precision`` ("fp32": FMA math, no TF32
    anywhere; "tf32": TF32 tensor ops for convolutions, GEMMs and LSTMs, about 3 significant digits
    per product, fp32 accumulation; "fp16": half storage, tensor ops with fp32 accumulation, inputs
    converted to fp16 at entry and outputs back to float32 at exit, about 3 significant digits per
    stored value; a layer without an fp16 kernel runs fp32 between conversions and ``plan()``
    says so; a layer whose values may leave fp16's range (|x| > 65504), estimated at load from the
    weights with the inputs taken as values in [0, 1], stays fp32 with the reason in ``plan()``;
    ``calibration=x`` (inputs as ``run`` takes them: a typical batch) measures every value's range
    on the CPU in fp32 instead, where it reaches; an fp16 run whose numpy output holds inf or NaN
    raises ``dnnx.NonFiniteWarning`` naming the first layer whose output is not finite; inference
    only; "bf16": half storage in bfloat16, the same conversions and tensor ops, float32's range
    (no range check) with 8 significant bits, about 2 significant digits per stored value; a
    layer without a bf16 kernel (the recurrent layers: cuDNN's RNNs take no bfloat16) runs fp32
    between conversions; fine-tuning runs the frozen layers in bf16 and trains fp32 master
    weights in fp32; at fp16 and bf16, with ``measure_precision`` (default True), every segment of
    half layers is timed at load against the same layers in fp32 at the load's shapes, and keeps
    fp32 and ONNX's layout where that is faster, so that a half precision never makes a model
    slower; ``plan()`` says so per layer: "fp32 (kept in fp32: measured faster ...)"),
    ``workspace_limit`` (bytes, or
    a string such as "256MiB": no layer's workspace exceeds it; None, the default: 4 GiB, at most
    an eighth of the GPU's memory or of memory_limit, where FFT, Winograd or a 3-D conv's
    precomputed indices need it), ``algo_search`` ("auto", the default: timed as "exhaustive"
    for the fp32 convolutions of 4 GFLOP or more, where timing was measured to pay, and for every
    fp32 convolution's backward when fine-tuning, heuristic for the rest (Note [auto search] in
    engine/backends/cuda/search/conv_algo.cc); "heuristic":
    cuDNN's ranking, instant; "exhaustive": every convolution algorithm timed at plan time, the
    fastest that fits kept, times in ``plan()``; "background": load returns with cuDNN's
    heuristic plan, or the plan cache's exhaustive choices where it has them, and a thread then
    runs the exhaustive search on the shapes the model runs, only while no run is in flight, for
    at most ``search_budget`` seconds (default 60), writing the plan cache as it goes, and swaps
    in the searched plan between runs where its replayed graph measures faster:
    ``Model.search_status()`` and ``Model.wait_search()``; Note [background search] in
    _background_search.py. ``dnnx.InferenceSession`` uses it by default; ``load`` keeps "auto", whose
    plan is final when load returns) and ``deterministic`` (only algorithms cuDNN marks
    deterministic). An algorithm that fails at plan time (not supported, its workspace cannot be
    allocated) gives way to the next candidate, with the reason in ``plan()``; so does one that
    fails at run time (the layer is planned again without it, or runs on the CPU; the run's result
    is right and ``plan()`` lists what failed under ``fallbacks``). A sticky CUDA error (an illegal
    address) cannot be survived in a process: it is a ``DeviceError`` that says the process must
    restart. ``memory_limit`` (bytes, or a string such as "2GiB"; CUDA only) caps what the model
    holds on the GPU: constants, activations, workspace, the planner's search buffers; a plan
    that needs more is refused at once (``ValueError`` for the run's shapes), and an allocation past it
    is a ``DeviceError`` naming what it was for. ``DeviceError``
    when CUDA is not available (``dnnx.cuda_status()`` says why).

    ``precision="int8"`` with ``calibration=x``: the model is quantized in memory by
    ``dnnx.quantize``'s own function (``calibration_method``: "minmax", the default, "percentile"
    or "entropy"; ``int8_tolerance``: default 0.01; the calibration and the guard run on the CPU)
    and its QDQ graph loaded on ``device``: its int8 layers on int8 kernels (on CUDA int8 tensor
    cores), the layers the guard keeps float at fp32; ``Model.int8_report`` holds the accuracy guard's per-layer errors and
    decisions, and ``plan()`` prints each layer's (docs/precision.md, "int8").
    ``calibration_method`` and ``int8_tolerance`` at another precision are a ValueError.

    ``plan_cache``: where exhaustive choices persist, so that another process loading the same
    model times nothing (``planner_stats()`` counts). True (default): $XDG_CACHE_HOME/dnnx/
    plan-cache.json or ~/.cache/dnnx/plan-cache.json; a path: that file; False or None: off.
    Entries are keyed by GPU, compute capability, cuDNN version and the layer's full signature
    (a new batch size is a new key) and re-validated before use; a stale one is dropped with a
    ``PlanCacheWarning``. Heuristic plans never use the cache (they cost nothing to redo).

    ``cuda_graph`` (CUDA): the first run of an input shape queues its layers one by one, the
    second records them as a CUDA graph, and later runs replay it with one launch (device inputs
    and ``output="device"`` arrays are copied in and out by nodes of that graph, at each run's
    addresses; host arrays are copied outside it). A new shape is planned and recorded
    anew (one graph per plan); ``Model.graphs()`` shows them. ``cuda_graph=False`` queues the
    layers one by one on every run (Nsight Systems then shows every layer's NVTX range).

    Plans: one per input shape, built on its first run and kept (``max_plans``, default 64: the
    least recently used go first; ``Model.prepare(shapes)`` plans ahead). An input whose value
    decides shapes (a Reshape's target, Squeeze/Unsqueeze/Reduce axes, Slice starts/ends/axes/steps,
    Split sizes, Expand's shape, ConstantOfShape's input, Pad's pads, fed as a graph input or
    computed from one) is listed in ``Model.value_inputs``: its value joins the plan key, so a new
    value plans (and on CUDA records a graph) anew and a seen value reuses its plan.

    Load-time rewrites (``dnnx.pass_names()``: fuse_qdq_int8, fold_conv_add, fold_batchnorm, fuse_batchnorm_relu, fuse_matmul_add, fuse_conv_relu,
    fuse_conv_activation, fuse_gemm_relu, fuse_gemm_softmax, fuse_conv_add_relu, fuse_conv_pool, fuse_lstm_stack,
    fuse_gelu, channels_last, fold_entry_cast) are on by default; ``passes={"fold_batchnorm": False}``
    switches single ones off, ``optimize=False`` all of them. ``plan()`` shows fused layers (op
    "Conv+Relu", "Conv+MaxPool", "Gemm+Softmax", "LSTMStack", "Int8Conv", ...). channels_last applies on CUDA
    at tf32, fp16 and bf16 only: the convs and pools run on NHWC data ("Conv+Relu@NHWC", ...) between
    Transposes at the model's edges (docs/operators.md). With ``measure_layout`` (default True), a
    channels-last plan cut by many such Transposes (DenseNet's concatenations) is timed at load
    against the same model in ONNX's layout, and the faster is kept; ``plan()`` prints what was
    measured as a note (Note [measured layout] in _layout_choice.py).
    """
    return Model(src, batch_size=batch_size, dims=dims, device=device, precision=precision,
                 workspace_limit=workspace_limit,
                 algo_search=algo_search, deterministic=deterministic, passes=passes, optimize=optimize,
                 plan_cache=plan_cache, cuda_graph=cuda_graph, max_plans=max_plans, calibration=calibration,
                 memory_limit=memory_limit, measure_precision=measure_precision, search_budget=search_budget,
                 calibration_method=calibration_method, int8_tolerance=int8_tolerance, measure_layout=measure_layout)
