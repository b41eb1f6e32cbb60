"""``dnnx.InferenceSession``: onnxruntime's session API over a dnnx Model, for the everyday cases,
so that code written for onnxruntime runs on dnnx by changing its import.

    sess = dnnx.InferenceSession("lenet.onnx", providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    probs, = sess.run(None, {name: x})

What maps where:

- ``providers`` (names, or (name, options) tuples; ``provider_options`` a parallel list of dicts):
  the first available of CUDAExecutionProvider (device "cuda:<device_id>") and
  CPUExecutionProvider. CUDA unavailable (``dnnx.cuda_status()`` says why) falls back to the next
  provider with a UserWarning, as onnxruntime does; so does a provider dnnx does not have
  (TensorRT, OpenVINO, ...). ``providers=None``: CUDA where it is available, else the CPU
  (no warning). CUDA options: ``device_id``;
  ``cudnn_conv_algo_search`` EXHAUSTIVE -> algo_search="exhaustive", HEURISTIC and DEFAULT ->
  "heuristic", unset -> "background" (Note [background search]: the session loads with the
  heuristic plan, as fast as onnxruntime's load, and reaches the exhaustive plan's speed once its
  background search has timed the shapes it runs; onnxruntime's own default, EXHAUSTIVE, times
  every convolution on the first run instead); ``use_tf32`` 1 -> precision "tf32", 0 -> "fp32" (unset: dnnx's fp32, where
  onnxruntime's CUDA default is TF32); ``enable_cuda_graph`` -> cuda_graph (unset: dnnx's
  default, on); ``cudnn_deterministic``/``use_deterministic_compute`` -> deterministic. The
  memory-arena options onnxruntime has (gpu_mem_limit, arena_extend_strategy, ...) are accepted
  and ignored; an unknown option is a ValueError.
- ``SessionOptions`` (dnnx's, or onnxruntime's own object: read by attribute):
  ``intra_op_num_threads`` > 0 -> ``dnnx.threads.set_num_threads`` (process-wide in dnnx: every
  model shares one pool); ``graph_optimization_level`` ORT_DISABLE_ALL -> optimize=False, any
  other level -> dnnx's rewrites on; ``use_deterministic_compute`` -> deterministic;
  ``add_free_dimension_override_by_name(name, n)`` -> dims={name: n}. The other onnxruntime
  options (log levels, execution mode, profiling, memory patterns, ...) are accepted and ignored;
  setting a name onnxruntime does not have is an AttributeError, as there.
- ``run(output_names, input_feed)`` returns a list of numpy arrays. Inputs follow dnnx's input
  rule (``help(dnnx.Model.run)``): a wrong dtype is a ValueError naming the input (onnxruntime
  raises its InvalidArgument there); lists convert as in onnxruntime; an empty batch runs and
  returns what onnxruntime returns (empty outputs). Errors are dnnx's: ValueError (missing or
  unknown inputs and outputs, wrong arrays), ``dnnx.DnnxError`` and its subclasses.
- ``io_binding()``: inputs bound as arrays (numpy, device arrays, or onnxruntime's raw
  (device_type, device_id, element_type, shape, buffer_ptr)), outputs to "cpu" (numpy) or
  "cuda" (``dnnx.DeviceArray``s, not copied to the host); dnnx allocates outputs, so an output
  bound to a given buffer is a ValueError.
"""
from __future__ import annotations

import ctypes
import enum
import os
import warnings
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np

from .cuda import cuda_available, cuda_status
from .model import Model

CPU = "CPUExecutionProvider"
CUDA = "CUDAExecutionProvider"

_TYPES = {"float32": "tensor(float)", "float64": "tensor(double)", "float16": "tensor(float16)",
          "int32": "tensor(int32)", "int64": "tensor(int64)", "bool": "tensor(bool)", "int8": "tensor(int8)",
          "uint8": "tensor(uint8)", "int16": "tensor(int16)", "uint16": "tensor(uint16)", "uint32": "tensor(uint32)",
          "uint64": "tensor(uint64)", "bfloat16": "tensor(bfloat16)", "float8_e4m3fn": "tensor(float8e4m3fn)",
          "float8_e4m3fnuz": "tensor(float8e4m3fnuz)", "float8_e5m2": "tensor(float8e5m2)",
          "float8_e5m2fnuz": "tensor(float8e5m2fnuz)", "int4": "tensor(int4)", "uint4": "tensor(uint4)",
          "float4_e2m1fn": "tensor(float4e2m1)"}  # onnxruntime's NodeArg.type strings


class GraphOptimizationLevel(enum.IntEnum):
    """onnxruntime's levels (the same values): DISABLE_ALL switches dnnx's rewrites off."""

    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_ALL = 99


class ExecutionMode(enum.IntEnum):
    """Accepted for onnxruntime's code; dnnx runs a plan's layers in order either way."""

    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


class SessionOptions:
    """The onnxruntime SessionOptions names; which ones dnnx reads is in this module's docstring."""

    __slots__ = ("intra_op_num_threads", "inter_op_num_threads", "graph_optimization_level", "log_severity_level",
                 "log_verbosity_level", "logid", "execution_mode", "execution_order", "enable_profiling",
                 "profile_file_prefix", "enable_mem_pattern", "enable_mem_reuse", "enable_cpu_mem_arena",
                 "optimized_model_filepath", "use_deterministic_compute", "_config", "_free_dims")

    def __init__(self) -> None:
        self.intra_op_num_threads = 0  # 0: dnnx's default (the cores this process may run on)
        self.inter_op_num_threads = 0
        self.graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self.execution_mode = ExecutionMode.ORT_SEQUENTIAL
        self.execution_order = 0
        self.enable_profiling = False
        self.profile_file_prefix = "onnxruntime_profile_"
        self.enable_mem_pattern = True
        self.enable_mem_reuse = True
        self.enable_cpu_mem_arena = True
        self.optimized_model_filepath = ""
        self.use_deterministic_compute = False
        self._config: Dict[str, str] = {}
        self._free_dims: Dict[str, int] = {}

    def add_session_config_entry(self, key: str, value: str) -> None:
        """Kept (``get_session_config_entry`` returns it); dnnx reads none."""
        self._config[str(key)] = str(value)

    def get_session_config_entry(self, key: str) -> str:
        return self._config[key]

    def add_free_dimension_override_by_name(self, dim_name: str, dim_value: int) -> None:
        """Binds the named (symbolic) input dim at load: ``dnnx.load(..., dims={dim_name: dim_value})``."""
        self._free_dims[str(dim_name)] = int(dim_value)


class NodeArg:
    """A graph input or output as onnxruntime describes it: ``name``, ``shape`` (ints, and
    strings for symbolic dims) and ``type`` ('tensor(float)', ...)."""

    __slots__ = ("name", "shape", "type")

    def __init__(self, name: str, shape: list, type: str) -> None:
        self.name, self.shape, self.type = name, shape, type

    def __repr__(self) -> str:
        return f"NodeArg(name='{self.name}', type='{self.type}', shape={self.shape})"


METADATA_FIELDS = ("producer_name", "graph_name", "domain", "description", "graph_description", "version",
                   "custom_metadata_map")


class ModelMetadata:
    """``producer_name``, ``graph_name``, ``domain``, ``description``, ``graph_description``,
    ``version`` and ``custom_metadata_map``, from the model file."""

    def __init__(self, proto) -> None:
        self.producer_name = proto.producer_name
        self.graph_name = proto.graph.name
        self.domain = proto.domain
        self.description = proto.doc_string
        self.graph_description = proto.graph.doc_string
        # onnxruntime reports an unset model_version as INT64_MAX
        self.version = proto.model_version if proto.HasField("model_version") else 2 ** 63 - 1
        self.custom_metadata_map = {p.key: p.value for p in proto.metadata_props}

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in METADATA_FIELDS)
        return f"ModelMetadata({fields})"


# --- providers ------------------------------------------------------------------------------------

_CUDA_OPTIONS_IGNORED = {"gpu_mem_limit", "arena_extend_strategy", "do_copy_in_default_stream",
                         "cudnn_conv_use_max_workspace", "cudnn_conv1d_pad_to_nc1d", "tunable_op_enable",
                         "tunable_op_tuning_enable", "prefer_nhwc", "user_compute_stream", "has_user_compute_stream",
                         "enable_skip_layer_norm_strict_mode", "gpu_external_alloc", "gpu_external_free",
                         "gpu_external_empty_cache", "use_ep_level_unified_stream"}
_CUDA_OPTIONS = {"device_id", "cudnn_conv_algo_search", "use_tf32", "enable_cuda_graph", "cudnn_deterministic"}
_ALGO_SEARCH = {"EXHAUSTIVE": "exhaustive", "HEURISTIC": "heuristic", "DEFAULT": "heuristic"}


def _flag(name: str, value) -> bool:
    text = str(value).strip().lower()
    if text in ("1", "true"):
        return True
    if text in ("0", "false"):
        return False
    raise ValueError(f"CUDAExecutionProvider option '{name}': expected 0/1 or true/false, got {value!r}")


def _cuda_load_options(options: dict) -> dict:
    """dnnx.load keywords from the CUDA provider's options."""
    unknown = sorted(set(options) - _CUDA_OPTIONS - _CUDA_OPTIONS_IGNORED)
    if unknown:
        raise ValueError(f"CUDAExecutionProvider: unknown option(s) {unknown} (dnnx reads {sorted(_CUDA_OPTIONS)})")
    out = {"device": f"cuda:{int(options.get('device_id', 0))}", "algo_search": "background"}
    if "cudnn_conv_algo_search" in options:
        search = str(options["cudnn_conv_algo_search"]).upper()
        if search not in _ALGO_SEARCH:
            raise ValueError(f"CUDAExecutionProvider option 'cudnn_conv_algo_search': expected one of "
                             f"{list(_ALGO_SEARCH)}, got {options['cudnn_conv_algo_search']!r}")
        out["algo_search"] = _ALGO_SEARCH[search]
    if "use_tf32" in options:
        out["precision"] = "tf32" if _flag("use_tf32", options["use_tf32"]) else "fp32"
    if "enable_cuda_graph" in options:
        out["cuda_graph"] = _flag("enable_cuda_graph", options["enable_cuda_graph"])
    if "cudnn_deterministic" in options:
        out["deterministic"] = _flag("cudnn_deterministic", options["cudnn_deterministic"])
    return out


def _provider_list(providers, provider_options) -> list:
    """[(name, options dict)] from onnxruntime's two forms."""
    if providers is None:
        providers = get_available_providers()
    if isinstance(providers, str):
        raise ValueError(f"providers: expected a list of provider names, got the string {providers!r}")
    if provider_options is not None and len(provider_options) != len(providers):
        raise ValueError(f"provider_options: expected one dict per provider ({len(providers)}), "
                         f"got {len(provider_options)}")
    out = []
    for i, entry in enumerate(providers):
        if isinstance(entry, (tuple, list)):
            if len(entry) != 2 or not isinstance(entry[1], dict):
                raise ValueError(f"providers[{i}]: expected a name or a (name, options dict) tuple, got {entry!r}")
            if provider_options is not None:
                raise ValueError("pass provider options in (name, options) tuples or in provider_options, not both")
            name, options = entry
        else:
            name, options = entry, (provider_options[i] if provider_options is not None else {})
        out.append((str(name), dict(options or {})))
    return out


def _choose_provider(providers: list) -> tuple:
    """(the provider dnnx runs, dnnx.load keywords): the first one available, warning about each
    one skipped (as onnxruntime does)."""
    for name, options in providers:
        if name == CUDA:
            load_options = _cuda_load_options(options)  # a wrong option is an error even without CUDA
            if cuda_available():
                return name, load_options
            warnings.warn(f"Specified provider '{CUDA}' is not available here (CUDA {cuda_status()}); falling back "
                          f"to the next provider", UserWarning, stacklevel=4)
        elif name == CPU:
            return name, {"device": "cpu"}
        else:  # onnxruntime's wording, with what is available here
            warnings.warn(f"Specified provider '{name}' is not in available provider names. Available providers: "
                          f"'{', '.join(get_available_providers())}'", UserWarning, stacklevel=4)
    warnings.warn(f"no provider given is available: running on '{CPU}'", UserWarning, stacklevel=4)
    return CPU, {"device": "cpu"}


def get_available_providers() -> List[str]:
    """The providers dnnx can run here: CUDAExecutionProvider where CUDA works, and the CPU."""
    return [CUDA, CPU] if cuda_available() else [CPU]


def _session_load_options(sess_options) -> dict:
    """dnnx.load keywords (and the thread count) from a SessionOptions (dnnx's or onnxruntime's)."""
    if sess_options is None:
        return {}
    out = {}
    threads = int(getattr(sess_options, "intra_op_num_threads", 0) or 0)
    if threads > 0:
        from . import threads as _threads
        _threads.set_num_threads(threads)
    level = getattr(sess_options, "graph_optimization_level", None)
    if level is not None and int(level) == GraphOptimizationLevel.ORT_DISABLE_ALL:
        out["optimize"] = False
    if getattr(sess_options, "use_deterministic_compute", False):
        out["deterministic"] = True
    free_dims = getattr(sess_options, "_free_dims", None)
    if free_dims:
        out["dims"] = dict(free_dims)
    return out


# --- the session ----------------------------------------------------------------------------------

class InferenceSession:
    """onnxruntime's ``InferenceSession`` over a ``dnnx.Model`` (``self.model``); what maps where
    is in ``help(dnnx.session)``."""

    def __init__(self, path_or_bytes: Union[str, bytes, os.PathLike, Any], sess_options: Optional[Any] = None,
                 providers: Optional[Sequence[Union[str, tuple]]] = None,
                 provider_options: Optional[Sequence[dict]] = None, **kwargs: Any) -> None:
        """``path_or_bytes``: a path, the model's bytes (or an onnx.ModelProto); ``sess_options``: a
        SessionOptions; ``providers``: ["CUDAExecutionProvider", "CPUExecutionProvider"], names or
        (name, options) tuples, in order of preference (None: CUDA where available, else the CPU);
        ``provider_options``: one dict per provider. Other onnxruntime keywords are ignored."""
        provider, load_options = _choose_provider(_provider_list(providers, provider_options))
        session_options = _session_load_options(sess_options)
        if "deterministic" in session_options and provider == CPU:
            session_options.pop("deterministic")  # the CPU is deterministic; the option is CUDA's
        self._provider = provider
        self._sess_options = sess_options
        self.model = Model(path_or_bytes, **{**session_options, **load_options})
        self._inputs = [_node_arg(s) for s in self.model.inputs]
        self._outputs = [_node_arg(s) for s in self.model.outputs]
        self._output_index = {s.name: i for i, s in enumerate(self.model.outputs)}

    # --- description ---------------------------------------------------------------------------
    def get_inputs(self) -> List[NodeArg]:
        """The graph inputs (initializers excluded), in order."""
        return list(self._inputs)

    def get_outputs(self) -> List[NodeArg]:
        return list(self._outputs)

    def get_overridable_initializers(self) -> List[NodeArg]:
        """Empty: dnnx does not feed initializers as inputs."""
        return []

    def get_providers(self) -> List[str]:
        """The provider this session runs on, then the CPU (as onnxruntime lists its fallback)."""
        return [self._provider] if self._provider == CPU else [self._provider, CPU]

    def get_provider_options(self) -> Dict[str, dict]:
        return {name: {} for name in self.get_providers()}

    def get_session_options(self) -> Any:
        return self._sess_options if self._sess_options is not None else SessionOptions()

    def get_modelmeta(self) -> ModelMetadata:
        return ModelMetadata(self.model._proto)  # the fields it reads hold no weights

    # --- running -------------------------------------------------------------------------------
    def _indices(self, output_names) -> list:
        if output_names is None:
            return list(range(len(self._outputs)))
        if isinstance(output_names, str):
            output_names = [output_names]
        unknown = [n for n in output_names if n not in self._output_index]
        if unknown:
            raise ValueError(f"unknown output name(s) {unknown}; the model's outputs are {list(self._output_index)}")
        return [self._output_index[n] for n in output_names]

    def _feeds(self, input_feed: dict) -> dict:
        if not isinstance(input_feed, dict):
            raise ValueError(f"input_feed: expected a dict {{input name: array}}, got {type(input_feed).__name__}")
        names = [s.name for s in self.model.inputs]
        missing = [n for n in names if n not in input_feed]
        if missing:
            raise ValueError(f"Required inputs ({missing}) are missing from input feed ({list(input_feed)}).")
        unknown = [n for n in input_feed if n not in names]
        if unknown:
            raise ValueError(f"invalid input name(s) {unknown}; the model's inputs are {names}")
        return input_feed

    def run(self, output_names: Optional[Sequence[str]], input_feed: Dict[str, Any],
            run_options: Optional[Any] = None) -> List[np.ndarray]:
        """The outputs named (None: all, in graph order) as numpy arrays, for ``input_feed``
        {input name: array}. ``run_options`` is accepted and ignored."""
        indices = self._indices(output_names)
        outputs = self.model._outputs((self._feeds(input_feed),), {}, "numpy", None)
        return [outputs[i] for i in indices]

    def run_with_iobinding(self, iobinding: "IOBinding", run_options: Optional[Any] = None) -> None:
        """Runs on the bound inputs; the bound outputs are then in ``iobinding.get_outputs()``."""
        if not isinstance(iobinding, IOBinding) or iobinding._session is not self:
            raise ValueError("run_with_iobinding: expected an IOBinding made by this session's io_binding()")
        iobinding._run()

    def io_binding(self) -> "IOBinding":
        return IOBinding(self)

    def end_profiling(self) -> str:
        """No onnxruntime profile file: ``self.model.profile(...)`` times dnnx's layers."""
        return ""


def _node_arg(spec) -> NodeArg:
    """A TensorSpec as onnxruntime shows it: an unnamed symbolic dim ("?" in dnnx) is None."""
    shape = [None if d == "?" else d for d in spec.shape]
    tensor = _TYPES.get(spec.dtype, f"tensor({spec.dtype})")
    kind = getattr(spec, "kind", "tensor")  # Note [sequences]: onnxruntime's seq(...) and optional(...)
    return NodeArg(spec.name, shape, {"sequence": f"seq({tensor})", "optional": f"optional({tensor})"}.get(kind, tensor))


# --- io binding -----------------------------------------------------------------------------------

class _CudaPointer:
    """A raw CUDA buffer bound by onnxruntime's pointer form, shown to the engine through
    ``__cuda_array_interface__`` (version 2: no stream; the caller orders its writes)."""

    def __init__(self, pointer: int, shape: tuple, dtype: np.dtype) -> None:
        self.shape = tuple(int(d) for d in shape)
        self.__cuda_array_interface__ = {"shape": self.shape, "typestr": np.dtype(dtype).str,
                                         "data": (int(pointer), False), "strides": None, "version": 2}


def _host_buffer(pointer: int, shape: tuple, dtype) -> np.ndarray:
    """A numpy view of host memory at ``pointer`` (onnxruntime's pointer form on the CPU)."""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape)) if len(shape) else 1
    raw = (ctypes.c_char * (count * dtype.itemsize)).from_address(int(pointer))
    return np.frombuffer(raw, dtype=dtype).reshape(shape)


class HostValue:
    """An output bound to "cpu": a numpy array with onnxruntime OrtValue's accessors."""

    def __init__(self, array: np.ndarray) -> None:
        self._array = array

    def numpy(self) -> np.ndarray:
        return self._array

    def shape(self) -> list:
        return list(self._array.shape)

    def device_name(self) -> str:
        return "cpu"

    def data_ptr(self) -> int:
        return int(self._array.ctypes.data)

    def __array__(self, dtype=None, copy=None):
        return self._array if dtype is None else self._array.astype(dtype)


def _device_kind(device_type) -> str:
    kind = str(device_type).lower()
    if kind not in ("cpu", "cuda"):
        raise ValueError(f"device_type: expected 'cpu' or 'cuda', got {device_type!r}")
    return kind


class IOBinding:
    """onnxruntime's IOBinding: inputs bound before a run (host or device arrays), outputs bound to
    "cpu" (numpy) or "cuda" (``dnnx.DeviceArray``s that stay in GPU memory)."""

    def __init__(self, session: InferenceSession) -> None:
        self._session = session
        self._inputs: Dict[str, Any] = {}
        self._output_devices: Dict[str, str] = {}
        self._results: Optional[list] = None  # [(name, array)] of the last run

    def bind_input(self, name: str, device_type: Any = None, device_id: int = 0, element_type: Any = None,
                   shape: Optional[Sequence[int]] = None, buffer_ptr: Optional[int] = None) -> None:
        """``bind_input(name, array)`` with a numpy array or a device array (DLPack,
        ``__cuda_array_interface__``, DeviceArray), or onnxruntime's form ``bind_input(name,
        device_type, device_id, element_type, shape, buffer_ptr)`` over raw memory."""
        if buffer_ptr is None:
            if device_type is None:
                raise ValueError(f"bind_input('{name}'): expected an array, or device_type, device_id, "
                                 f"element_type, shape and buffer_ptr")
            if isinstance(device_type, str):
                raise ValueError(f"bind_input('{name}'): a device_type without buffer_ptr: pass the array itself")
            self._inputs[name] = device_type  # the array form
            return
        if element_type is None or shape is None:
            raise ValueError(f"bind_input('{name}'): buffer_ptr needs element_type and shape")
        if _device_kind(device_type) == "cuda":
            self._inputs[name] = _CudaPointer(buffer_ptr, tuple(shape), element_type)
        else:
            self._inputs[name] = _host_buffer(buffer_ptr, tuple(shape), element_type)

    def bind_cpu_input(self, name: str, arr_on_cpu: np.ndarray) -> None:
        self._inputs[name] = arr_on_cpu

    def bind_ortvalue_input(self, name: str, ortvalue: Any) -> None:
        """A DeviceArray, an array, or anything with ``.numpy()`` (an OrtValue: copied to the host)."""
        if not isinstance(ortvalue, np.ndarray) and not hasattr(ortvalue, "__cuda_array_interface__") \
                and hasattr(ortvalue, "numpy"):
            ortvalue = ortvalue.numpy()
        self._inputs[name] = ortvalue

    def bind_output(self, name: str, device_type: str = "cpu", device_id: int = 0, element_type: Any = None,
                    shape: Optional[Sequence[int]] = None, buffer_ptr: Optional[int] = None) -> None:
        """Where output ``name`` goes: "cpu" (numpy) or "cuda" (a DeviceArray on the session's
        GPU). dnnx allocates outputs: a ``buffer_ptr`` is a ValueError."""
        if name not in self._session._output_index:
            raise ValueError(f"bind_output: unknown output '{name}'; the model's outputs are "
                             f"{list(self._session._output_index)}")
        if buffer_ptr is not None:
            raise ValueError(f"bind_output('{name}'): dnnx allocates its outputs and writes into no given buffer; "
                             f"bind it without buffer_ptr and read get_outputs()")
        kind = _device_kind(device_type)
        if kind == "cuda" and self._session._provider != CUDA:
            raise ValueError(f"bind_output('{name}'): 'cuda' on a session running on {self._session._provider}")
        self._output_devices[name] = kind

    def clear_binding_inputs(self) -> None:
        self._inputs = {}

    def clear_binding_outputs(self) -> None:
        self._output_devices = {}
        self._results = None

    def synchronize_inputs(self) -> None:
        """Nothing to wait for: a dnnx run orders itself after its inputs' streams."""

    def synchronize_outputs(self) -> None:
        """Nothing to wait for: a dnnx run returns when its outputs are complete."""

    def _run(self) -> None:
        session = self._session
        feeds = session._feeds(self._inputs)
        bound = self._output_devices or {s.name: "cpu" for s in session.model.outputs}
        on_device = "cuda" in bound.values()
        outputs = session.model._outputs((feeds,), {}, "device" if on_device else "numpy", None)
        by_name = {spec.name: out for spec, out in zip(session.model.outputs, outputs)}
        self._results = [(name, by_name[name] if kind == "cuda" or not on_device else by_name[name].numpy())
                         for name, kind in bound.items()]  # in binding order, as onnxruntime's

    def get_outputs(self) -> list:
        """The bound outputs of the last run, in binding order (all outputs when none was bound):
        DeviceArrays for "cuda", HostValues (``.numpy()``) for "cpu"."""
        return [value if not isinstance(value, np.ndarray) else HostValue(value) for _, value in self._checked()]

    def copy_outputs_to_cpu(self) -> List[np.ndarray]:
        return [value if isinstance(value, np.ndarray) else value.numpy() for _, value in self._checked()]

    def _checked(self) -> list:
        if self._results is None:
            raise ValueError("no outputs yet: call session.run_with_iobinding(binding) first")
        return self._results


__all__ = ["InferenceSession", "SessionOptions", "GraphOptimizationLevel", "ExecutionMode", "NodeArg",
           "ModelMetadata", "IOBinding", "get_available_providers"]
