"""What ``dnnx info`` counts in a model without running it: the weights (floating-point values
held in the file, or made from constants in it) and the nodes, subgraphs (If/Loop/Scan bodies)
included.

A weight is any floating-point value the graph holds as a constant: an initializer, a Constant
node's value, or a ConstantOfShape of a constant shape (onnx's light models make every weight
that way: ConstantOfShape(shape initializer, value=0.02)). Integer constants are shapes, axes and
indices, not parameters, except in quantized models: 8-bit integers (int8, uint8: QDQ's and
QOperator's weights and zero points) and the integer tensors a DequantizeLinear, QLinearConv or
QGemm reads as its data or bias (the int32 biases). Only dims are read, never weight bytes: the
model is read without them (_importer.read_model(weights=False)); the small integer shapes are in
the proto.
"""
from __future__ import annotations

from typing import Iterator

import numpy as np

from .._tensors import numpy_dtype, tensor_array

SHAPE_VALUES = 64  # an integer constant of at most this many values may be a ConstantOfShape's shape
FLOAT32 = 1        # TensorProto.FLOAT: ConstantOfShape's value when it has none
QUANTIZED_DATA = {("", "DequantizeLinear"): (0,), ("", "QLinearConv"): (3, 8),  # (domain, op): weight inputs
                  ("com.microsoft", "QGemm"): (3, 6)}


def subgraphs(node) -> Iterator:
    for attr in node.attribute:
        if attr.HasField("g"):
            yield attr.g
        yield from attr.graphs


def all_nodes(graph) -> Iterator:
    """The graph's nodes, then (depth first) those of its subgraphs."""
    for node in graph.node:
        yield node
        for sub in subgraphs(node):
            yield from all_nodes(sub)


def quantized_data(graph) -> set:
    """The names of the graph's tensors that quantized ops read as weights (QUANTIZED_DATA)."""
    names = set()
    for node in graph.node:
        for index in QUANTIZED_DATA.get((node.domain if node.domain != "ai.onnx" else "", node.op_type), ()):
            if index < len(node.input) and node.input[index]:
                names.add(node.input[index])
    return names


def _weight(dims, elem_type: int, quantized: bool = False) -> tuple:
    """(values, bytes) of a weight of ``dims``: floating-point, 8-bit, or (``quantized``) any
    integer type read by a quantized op; (0, 0) for any other type."""
    dtype = numpy_dtype(elem_type)
    if dtype is None or not (dtype.kind == "f" or (dtype.kind in "iu" and (dtype.itemsize == 1 or quantized))):
        return 0, 0
    n = int(np.prod([int(d) for d in dims], dtype=np.int64))
    return n, n * dtype.itemsize


def _shape_value(tensor, name: str):
    """A small integer constant's values (a candidate shape), or None."""
    dtype = numpy_dtype(tensor.data_type)
    if dtype is None or dtype.kind not in "iu" or int(np.prod(tensor.dims, dtype=np.int64)) > SHAPE_VALUES:
        return None
    try:
        return tensor_array(tensor, name)
    except ValueError:  # a malformed one: the load names it
        return None


def _node_weights(node, shapes: dict, quantized: set) -> tuple:
    """(values, bytes) a Constant or ConstantOfShape node makes; records integer Constants in
    ``shapes`` for the ConstantOfShape nodes after it."""
    attrs = {a.name: a for a in node.attribute}
    if node.op_type == "Constant" and node.output:
        if "value" in attrs:
            value = _shape_value(attrs["value"].t, node.output[0])
            if value is not None:
                shapes[node.output[0]] = value
            return _weight(attrs["value"].t.dims, attrs["value"].t.data_type, node.output[0] in quantized)
        if "value_floats" in attrs:
            return _weight([len(attrs["value_floats"].floats)], FLOAT32)
        if "value_float" in attrs:
            return _weight([], FLOAT32)
        if "value_ints" in attrs:
            shapes[node.output[0]] = np.array(list(attrs["value_ints"].ints), np.int64)
        return 0, 0
    if node.op_type == "ConstantOfShape" and node.input and node.input[0] in shapes:
        dims = shapes[node.input[0]].reshape(-1)
        if (dims < 0).any():
            return 0, 0  # an invalid shape: the load names it
        elem_type = attrs["value"].t.data_type if "value" in attrs else FLOAT32
        return _weight(dims, elem_type)
    return 0, 0


def parameters(graph, outer_shapes: dict = None) -> tuple:
    """(count, bytes) of the weights of ``graph`` and its subgraphs (the module docstring)."""
    shapes = dict(outer_shapes or {})  # name -> integer values, for ConstantOfShape
    quantized = quantized_data(graph)
    count = nbytes = 0
    for tensor in graph.initializer:
        n, b = _weight(tensor.dims, tensor.data_type, tensor.name in quantized)
        count, nbytes = count + n, nbytes + b
        value = _shape_value(tensor, f"initializer '{tensor.name}'")
        if value is not None:
            shapes[tensor.name] = value
    for node in graph.node:
        n, b = _node_weights(node, shapes, quantized)
        count, nbytes = count + n, nbytes + b
        for sub in subgraphs(node):
            n, b = parameters(sub, shapes)
            count, nbytes = count + n, nbytes + b
    return count, nbytes


__all__ = ["parameters", "all_nodes", "subgraphs"]
