"""TensorScatter (opset 24, a KV cache update) against onnxruntime: linear and circular writes,
with and without write_indices, along the default and other axes, any element type; an index
that leaves the cache in mode 'linear' is an InputError naming the node, a shape that cannot
agree is refused at load."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from ort_check import assert_matches_ort, make_model


def _model(past_shape, update_shape, indices=True, elem=TensorProto.FLOAT, **attrs):
    inputs = [("past", past_shape, elem), ("update", update_shape, elem)]
    names = ["past", "update"]
    if indices:
        inputs.append(("idx", [past_shape[0]], TensorProto.INT64))
        names.append("idx")
    node = helper.make_node("TensorScatter", names, ["present"], name="ts", **attrs)
    return make_model([node], inputs, [("present", past_shape, elem)], opset=24)


def _feeds(past_shape, update_shape, idx=None, np_type=np.float32):
    rng = np.random.default_rng(0)
    feeds = {"past": rng.standard_normal(past_shape).astype(np_type) * 10,
             "update": rng.standard_normal(update_shape).astype(np_type) * 10}
    if idx is not None:
        feeds["idx"] = np.array(idx, np.int64)
    return feeds


@pytest.mark.parametrize("mode", ["linear", "circular"])
@pytest.mark.parametrize("past,update,axis,idx", [
    ([2, 3, 8, 4], [2, 3, 2, 4], -2, [0, 6]),    # [batch, heads, max_seq, head_dim], the default axis
    ([3, 8, 5], [3, 3, 5], 1, [5, 0, 2]),         # [batch, max_seq, hidden]
    ([2, 4, 3, 6], [2, 4, 3, 1], 3, [5, 2]),      # the last axis
    ([2, 6, 4], [2, 6, 4], 1, [0, 0]),            # the whole cache replaced
])
def test_tensor_scatter_matches_ort(mode, past, update, axis, idx):
    assert_matches_ort(_model(past, update, mode=mode, axis=axis), _feeds(past, update, idx), rtol=0, atol=0)


def test_tensor_scatter_circular_wraps():
    past, update = [2, 1, 5, 2], [2, 1, 3, 2]
    assert_matches_ort(_model(past, update, mode="circular"), _feeds(past, update, [4, 7]), rtol=0, atol=0)


def test_tensor_scatter_without_write_indices():
    past, update = [2, 2, 6, 3], [2, 2, 4, 3]
    assert_matches_ort(_model(past, update, indices=False), _feeds(past, update), rtol=0, atol=0)


@pytest.mark.parametrize("elem,np_type", [(TensorProto.FLOAT16, np.float16), (TensorProto.INT8, np.int8),
                                          (TensorProto.INT64, np.int64), (TensorProto.DOUBLE, np.float64)])
def test_tensor_scatter_any_type(elem, np_type):
    past, update = [2, 7, 3], [2, 2, 3]
    assert_matches_ort(_model(past, update, elem=elem, axis=1), _feeds(past, update, [1, 5], np_type), rtol=0, atol=0)


@pytest.mark.parametrize("idx", [[7, 0], [-1, 0]])
def test_tensor_scatter_linear_index_outside_is_an_input_error(idx):
    past, update = [2, 1, 8, 2], [2, 1, 2, 2]
    m = dnnx.load(_model(past, update))
    with pytest.raises(ValueError, match=r"ts.*write_indices\[0\] = -?\d+ with 2 update rows"):
        m.run_dict(_feeds(past, update, idx))


@pytest.mark.parametrize("past,update,attrs,msg", [
    ([2, 4, 3], [2, 5, 3], {"axis": 1}, r"update \[2,5,3\] must have past_cache \[2,4,3\]'s shape"),
    ([2, 4, 3], [2, 4, 2], {"axis": 1}, "must have past_cache"),
    ([2, 4, 3], [2, 4, 3], {"axis": 0}, "axis must not be 0"),
    ([2, 4, 3], [2, 4, 3], {"mode": "ring"}, "mode 'ring' must be 'linear' or 'circular'"),
])
def test_tensor_scatter_bad_models_are_refused(past, update, attrs, msg):
    node = helper.make_node("TensorScatter", ["past", "update"], ["present"], name="ts", **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("past", TensorProto.FLOAT, past),
                                            helper.make_tensor_value_info("update", TensorProto.FLOAT, update)],
                              [helper.make_tensor_value_info("present", TensorProto.FLOAT, past)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 24)])
    with pytest.raises(dnnx.InvalidModelError, match="ts.*" + msg):
        dnnx.load(model)
