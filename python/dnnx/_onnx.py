"""The parts of onnx a load needs: the protobuf classes, the checker and shape inference.

Note [onnx without its package import]
``import onnx`` costs about 0.6 s of CPU (onnx/__init__.py pulls in onnx.helper, whose dtype table
imports ml_dtypes: most of that time), more than onnxruntime's whole import + load + first run of
a ResNet-50. A load needs none of it: only the generated protobuf module (onnx/onnx_ml_pb2.py, which
needs nothing but google.protobuf) and the checker and shape inference of onnx's C++ extension
(onnx_cpp2py_export). So where onnx is not imported yet, this module executes those two files of
the installed onnx package itself, without running the package's __init__:

- the protobuf module is registered under a private name; its classes are the ones ``import onnx``
  gives later (the protobuf runtime keeps one class per message descriptor, and the descriptors
  live in the default pool), so a ModelProto made here is an ``onnx.ModelProto`` afterwards too;
- the extension is registered under its own name, ``onnx.onnx_cpp2py_export``, so that a later
  ``import onnx`` finds it there instead of initialising it a second time (which fails).

Where onnx is already imported, or its files are not where this expects them, the real package
is used. What needs more of onnx (the version converter, the reference evaluator) imports it
where it is used; tests/test_load_path.py checks that a plain load does not.
"""
from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import os
import sys
import threading
from types import ModuleType

EXTENSION = "onnx.onnx_cpp2py_export"
_cache: dict = {}
_lock = threading.Lock()  # two first loads on two threads must not initialise the extension twice


def _package_dir():
    spec = importlib.util.find_spec("onnx")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("onnx is not installed (pip install onnx)")
    return spec.submodule_search_locations[0]


def _exec_file(name: str, path: str, register_as: str) -> ModuleType:
    if path.endswith(".py"):
        spec = importlib.util.spec_from_file_location(name, path)
    else:
        loader = importlib.machinery.ExtensionFileLoader(name, path)
        spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[register_as] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[register_as]
        raise
    return module


def _extension_path(folder: str) -> str:
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = os.path.join(folder, "onnx_cpp2py_export" + suffix)
        if os.path.exists(path):
            return path
    raise ImportError(f"onnx's C++ extension is not in {folder}")


def _light() -> tuple:
    """(protobuf module, extension) without onnx/__init__.py (Note [onnx without its package import])."""
    if "onnx" in sys.modules:
        import onnx
        import onnx.onnx_cpp2py_export as extension

        return onnx, extension
    folder = _package_dir()
    extension = sys.modules.get(EXTENSION) or _exec_file(EXTENSION, _extension_path(folder), EXTENSION)
    proto = sys.modules.get("dnnx._onnx_ml_pb2") or _exec_file(
        "dnnx._onnx_ml_pb2", os.path.join(folder, "onnx_ml_pb2.py"), "dnnx._onnx_ml_pb2")
    return proto, extension


def _modules() -> tuple:
    with _lock:
        if "modules" not in _cache:
            try:
                _cache["modules"] = _light()
            except Exception:  # not installed, or laid out otherwise: the package's own import says
                import onnx
                import onnx.onnx_cpp2py_export as extension

                _cache["modules"] = (onnx, extension)
        return _cache["modules"]


def protos() -> ModuleType:
    """A module with ModelProto, TensorProto, AttributeProto, ... (onnx's own classes)."""
    return _modules()[0]


def check_model(model_bytes: bytes) -> None:
    """onnx.checker.check_model over serialized bytes; raises the checker's ValidationError."""
    _modules()[1].checker.check_model(model_bytes, False, False, False)


def infer_shapes(model_bytes: bytes) -> bytes:
    """onnx.shape_inference.infer_shapes over serialized bytes (not strict, with data
    propagation): the inferred model's bytes."""
    return _modules()[1].shape_inference.infer_shapes(model_bytes, False, False, True)


def validation_errors() -> tuple:
    """The exception classes the checker and shape inference raise."""
    extension = _modules()[1]
    return (extension.checker.ValidationError, extension.shape_inference.InferenceError)
