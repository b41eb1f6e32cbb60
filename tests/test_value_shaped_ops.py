"""NonMaxSuppression's and Unique's host computes (Note [value-shaped compute] in
engine/ops/indexing/value_shaped_ops.h), called on their own through the test-only
dnnx._pass_hooks module as a staged plan will call them, against onnxruntime: random and edge
inputs (tied scores, no boxes, every box below the threshold, max_output_boxes_per_class 0 or
absent, NaN scores; Unique of every type, with and without axis, empty, -0.0 and 0.0, NaN), onnx's
node cases for both ops, and the errors a user can cause. Until staged plans run them (issue #36),
loading either op is refused with a message naming the node (checked last)."""
import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import dnnx
import node_suite
from dnnx._native import load_extension
from nms_cases import random_boxes, random_nms_feeds
from ort_check import run_ort

pass_hooks = load_extension("_pass_hooks")  # test-only module, beside _core

NMS_INPUTS = ["boxes", "scores", "max_output_boxes_per_class", "iou_threshold", "score_threshold"]


def nms_model(given, center_point_box=0):
    """A NonMaxSuppression node whose inputs are the graph inputs named in `given` ('' elsewhere)."""
    names = [n if n in given else "" for n in NMS_INPUTS]
    while names and not names[-1]:
        names.pop()
    node = helper.make_node("NonMaxSuppression", names, ["selected"], center_point_box=center_point_box)
    elem = {"max_output_boxes_per_class": TensorProto.INT64}
    inputs = [helper.make_tensor_value_info(n, elem.get(n, TensorProto.FLOAT), None) for n in names if n]
    graph = helper.make_graph([node], "nms", inputs, [helper.make_tensor_value_info("selected", TensorProto.INT64, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    model.ir_version = 10
    return model


def check_nms(feeds, center_point_box=0):
    """dnnx's compute against onnxruntime, exactly (the order of the rows included)."""
    want = run_ort(nms_model(set(feeds), center_point_box), feeds)["selected"]
    inputs = [feeds.get(n) for n in NMS_INPUTS]
    (got,) = pass_hooks.run_value_shaped("NonMaxSuppression", {"center_point_box": center_point_box}, inputs)
    assert got.dtype == np.int64 and got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)
    return got


@pytest.mark.parametrize("center_point_box", [0, 1])
@pytest.mark.parametrize("iou", [0.0, 0.3, 0.7, 1.0])
@pytest.mark.parametrize("max_out", [None, -1, 0, 1, 4, 1000])
@pytest.mark.parametrize("score", [None, 0.2, 0.95])
def test_nms_random(center_point_box, iou, max_out, score):
    feeds = random_nms_feeds(center_point_box, iou, max_out, score, count=40)
    check_nms(feeds, center_point_box)


@pytest.mark.parametrize("center_point_box", [0, 1])
def test_nms_tied_scores_and_identical_boxes(center_point_box):
    rng = np.random.default_rng(7)
    boxes = random_boxes(rng, 1, 60, center_point_box)
    boxes[0, 30:] = boxes[0, :30]  # every box twice
    scores = rng.integers(0, 4, (1, 2, 60)).astype(np.float32) / 4  # four score values: many ties
    for iou in (0.0, 0.5, 1.0):
        check_nms({"boxes": boxes, "scores": scores, "max_output_boxes_per_class": np.array(100, np.int64),
                   "iou_threshold": np.array(iou, np.float32)}, center_point_box)


def test_nms_edges():
    rng = np.random.default_rng(8)
    big = np.array([100], np.int64)
    for b, c, n in [(1, 1, 0), (2, 3, 0), (0, 2, 5), (2, 0, 5), (1, 1, 1)]:  # no boxes, batches or classes
        got = check_nms({"boxes": random_boxes(rng, b, n, 0), "scores": rng.uniform(0, 1, (b, c, n)).astype(np.float32),
                         "max_output_boxes_per_class": big})
        assert got.shape[1] == 3
    feeds = {"boxes": random_boxes(rng, 1, 10, 0), "scores": rng.uniform(0, 0.5, (1, 2, 10)).astype(np.float32)}
    assert check_nms(dict(feeds, max_output_boxes_per_class=big, score_threshold=np.array([0.5], np.float32))).shape == (0, 3)
    assert check_nms(feeds).shape == (0, 3)  # max_output_boxes_per_class absent: none
    # a score equal to the threshold is not above it; degenerate (zero-area) and flipped boxes
    feeds["scores"][0, 0, :3] = 0.25
    feeds["boxes"][0, 4] = [3, 3, 3, 3]
    feeds["boxes"][0, 5] = [9, 8, 1, 2]
    check_nms(dict(feeds, max_output_boxes_per_class=big, score_threshold=np.array(0.25, np.float32),
                   iou_threshold=np.array(0.1, np.float32)))


@pytest.mark.parametrize("center_point_box", [0, 1])
def test_nms_thousands_kept_with_nan_and_degenerate_boxes(center_point_box):
    """Note [kept boxes in columns]: more kept boxes than one block of 256 (the vectorized test
    over columns, its blocks and early stop), with NaN corners, zero-area and flipped boxes, and
    identical boxes, against onnxruntime row for row."""
    rng = np.random.default_rng(11)
    boxes = random_boxes(rng, 1, 3000, center_point_box) * 30  # a wide field: few overlaps, many kept
    boxes[0, 5:50:7, 1] = np.nan
    boxes[0, 60:90:5] = boxes[0, 60:90:5, :1]  # every corner the same value: zero area
    boxes[0, 100:200:3] = boxes[0, 100:200:3][:, ::-1]  # flipped corners
    boxes[0, 1000:1100] = boxes[0, 900:1000]  # identical pairs
    scores = rng.uniform(0, 1, (1, 2, 3000)).astype(np.float32)
    for iou in (0.0, 0.45, 1.0):
        got = check_nms({"boxes": boxes, "scores": scores, "max_output_boxes_per_class": np.array([5000], np.int64),
                         "iou_threshold": np.array([iou], np.float32)}, center_point_box)
        if iou == 1.0:
            assert got.shape[0] > 512  # past two blocks of kept boxes


def test_nms_nan_scores():
    # NaN is not ranked by onnxruntime's heap order; the same std::priority_queue gives its order
    rng = np.random.default_rng(9)
    scores = rng.uniform(0, 1, (1, 2, 30)).astype(np.float32)
    scores[0, :, ::4] = np.nan
    feeds = {"boxes": random_boxes(rng, 1, 30, 0), "scores": scores,
             "max_output_boxes_per_class": np.array([30], np.int64), "iou_threshold": np.array([0.4], np.float32)}
    check_nms(feeds)
    check_nms(dict(feeds, score_threshold=np.array([0.3], np.float32)))  # NaN > threshold is false: dropped


def test_nms_errors():
    boxes = np.zeros((1, 3, 4), np.float32)
    scores = np.zeros((1, 1, 3), np.float32)
    with pytest.raises(ValueError, match=r"node 'under_test' \(NonMaxSuppression\): iou_threshold 1.5.* must be in \[0, 1\]"):
        pass_hooks.run_value_shaped("NonMaxSuppression", {}, [boxes, scores, None, np.array([1.5], np.float32)])
    with pytest.raises(dnnx.InvalidModelError, match=r"boxes \[1,3,4\] and scores \[1,1,2\] must be"):
        pass_hooks.run_value_shaped("NonMaxSuppression", {}, [boxes, np.zeros((1, 1, 2), np.float32)])
    with pytest.raises(dnnx.InvalidModelError, match=r"max_output_boxes_per_class \[2\] int64 must be one int64"):
        pass_hooks.run_value_shaped("NonMaxSuppression", {}, [boxes, scores, np.array([1, 2], np.int64)])
    with pytest.raises(dnnx.UnsupportedModelError, match=r"center_point_box 2 must be 0 or 1"):
        pass_hooks.run_value_shaped("NonMaxSuppression", {"center_point_box": 2}, [boxes, scores])
    with pytest.raises(dnnx.UnsupportedModelError, match=r"must be float32"):
        pass_hooks.run_value_shaped("NonMaxSuppression", {}, [boxes.astype(np.float64), scores])


# --- Unique ---

def unique_ort(x, attrs):
    """onnxruntime's four outputs (it runs float32, float64, int64 and int8)."""
    node = helper.make_node("Unique", ["x"], ["y", "indices", "inverse", "counts"], **attrs)
    elem = onnx.helper.np_dtype_to_tensor_dtype(x.dtype)
    graph = helper.make_graph([node], "u", [helper.make_tensor_value_info("x", elem, None)],
                              [helper.make_tensor_value_info("y", elem, None)] +
                              [helper.make_tensor_value_info(n, TensorProto.INT64, None)
                               for n in ("indices", "inverse", "counts")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    model.ir_version = 10
    out = run_ort(model, {"x": x})
    return [out[n] for n in ("y", "indices", "inverse", "counts")]


def check_unique(x, attrs, ort_type=None):
    """dnnx's compute on x against onnxruntime's on x (or on x as ort_type, for a type onnxruntime
    lacks: the same order, the values converted back)."""
    got = pass_hooks.run_value_shaped("Unique", attrs, [x])
    want = unique_ort(x.astype(ort_type) if ort_type else x, attrs)
    want[0] = want[0].astype(x.dtype)
    assert len(got) == 4
    for name, g, w in zip(("Y", "indices", "inverse_indices", "counts"), got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, f"{name}: {g.dtype}{g.shape} != {w.dtype}{w.shape}"
        np.testing.assert_array_equal(g, w, err_msg=name)
    return got


ATTRS = [dict(sorted=1), dict(sorted=0), dict(sorted=1, axis=0), dict(sorted=0, axis=1), dict(sorted=1, axis=-1),
         dict(axis=2)]


@pytest.mark.parametrize("attrs", ATTRS, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int8])
def test_unique_ort_types(attrs, dtype):
    rng = np.random.default_rng(len(str(attrs)))
    x = rng.integers(-3, 3, (6, 4, 3)).astype(dtype)  # many repeats, of values and of slices
    x[3] = x[1]
    x[:, 2] = x[:, 0]
    x[:, :, 1] = x[:, :, 2]
    if dtype in (np.float32, np.float64):
        x = x / 2
    check_unique(x, attrs)


@pytest.mark.parametrize("attrs", ATTRS, ids=str)
@pytest.mark.parametrize("dtype,ort_type", [(np.int32, np.int64), (np.int16, np.int64), (np.uint8, np.int64),
                                            (np.uint16, np.int64), (np.uint32, np.int64), (np.uint64, np.int64),
                                            (np.float16, np.float32), (ml_dtypes.bfloat16, np.float32),
                                            (np.bool_, np.int8)])
def test_unique_other_types(attrs, dtype, ort_type):
    rng = np.random.default_rng(11)
    x = rng.integers(0, 4, (5, 4, 3)).astype(dtype)
    x[2] = x[4]
    if dtype in (np.float16, ml_dtypes.bfloat16):
        x = (x.astype(np.float32) / 4 - 0.3).astype(dtype)
    check_unique(x, attrs, ort_type)


def test_unique_uint64_beyond_int64():
    x = np.array([2**64 - 1, 3, 2**63, 3, 2**64 - 1, 0], np.uint64)
    y, indices, inverse, counts = pass_hooks.run_value_shaped("Unique", {"sorted": 1}, [x])
    np.testing.assert_array_equal(y, [0, 3, 2**63, 2**64 - 1])
    np.testing.assert_array_equal(indices, [5, 1, 2, 0])
    np.testing.assert_array_equal(inverse, [3, 1, 2, 1, 3, 0])
    np.testing.assert_array_equal(counts, [1, 2, 1, 2])


@pytest.mark.parametrize("attrs", [dict(sorted=1), dict(sorted=0), dict(axis=0), dict(axis=1), dict(axis=-2)], ids=str)
def test_unique_empty(attrs):
    for shape in [(0,), (0, 3), (3, 0)]:
        x = np.zeros(shape, np.float32)
        if "axis" in attrs and len(shape) == 1 and attrs["axis"] != 0:
            continue
        if "axis" in attrs and shape[attrs["axis"]] == 3:
            # three empty slices: one unique (empty) slice seen three times (onnxruntime aborts here)
            y, indices, inverse, counts = pass_hooks.run_value_shaped("Unique", attrs, [x])
            assert y.shape == tuple(1 if d == 3 else d for d in shape)
            np.testing.assert_array_equal(indices, [0])
            np.testing.assert_array_equal(inverse, [0, 0, 0])
            np.testing.assert_array_equal(counts, [3])
            continue
        check_unique(x, attrs)


def test_unique_scalar_signed_zero_and_nan():
    check_unique(np.array(2.5, np.float32), {})
    check_unique(np.array([0.0, -0.0, 1.0, -0.0, 0.0], np.float32), {"sorted": 1})  # one zero, the first seen
    check_unique(np.array([0.0, -0.0, 1.0, -0.0, 0.0], np.float32), {"sorted": 0})
    for sorted_ in (0, 1):
        got = check_unique(np.array([1.0, np.nan, 2.0, np.nan, 1.0, 0.5, np.nan], np.float32), {"sorted": sorted_})
        assert len(got[0]) >= 3
    x = np.array([[1.0, np.nan], [1.0, np.nan], [2.0, 0.0]], np.float64)
    check_unique(x, {"axis": 0})


def test_unique_errors():
    with pytest.raises(dnnx.InvalidModelError, match=r"node 'under_test' \(Unique\).*axis"):
        pass_hooks.run_value_shaped("Unique", {"axis": 2}, [np.zeros((2, 2), np.float32)])
    with pytest.raises(dnnx.UnsupportedModelError, match=r"sorted 2 must be 0 or 1"):
        pass_hooks.run_value_shaped("Unique", {"sorted": 2}, [np.zeros(2, np.float32)])
    with pytest.raises(dnnx.UnsupportedModelError, match=r"X of type float8_e4m3fn is not supported"):
        pass_hooks.run_value_shaped("Unique", {}, [np.zeros(2, ml_dtypes.float8_e4m3fn)])


# --- onnx's node cases, through the computes ---

def _node_cases(op):
    return [c for c in node_suite.cases() if len(c.model.graph.node) == 1 and c.model.graph.node[0].op_type == op]


@pytest.mark.parametrize("op", ["NonMaxSuppression", "Unique"])
def test_node_cases_through_the_compute(op):
    cases = _node_cases(op)
    assert cases, f"no onnx node case of {op}"
    for case in cases:
        node = case.model.graph.node[0]
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        for inputs, stored in case.data_sets:
            arrays = iter(node_suite.as_array(v) for v in inputs)
            given = [next(arrays) if name else None for name in node.input]
            got = pass_hooks.run_value_shaped(op, attrs, given)
            want = [node_suite.as_array(v) for v in stored]
            for g, w in zip(got, want):  # the node names its outputs in order
                np.testing.assert_array_equal(g.astype(w.dtype) if g.dtype != w.dtype else g, w, err_msg=case.name)


def test_nms_and_unique_run_staged_in_a_model_against_onnxruntime():
    """Through dnnx.load: the plan stops at each value-shaped node (Note [staged plans]), the engine
    runs its host compute, and what follows (Gather of the selected boxes, Add of the counts) is
    planned per shape; the same shapes reuse their plans."""
    import onnxruntime as ort

    nodes = [helper.make_node("NonMaxSuppression", ["boxes", "scores", "max_out", "iou", "thr"], ["sel"]),
             helper.make_node("Gather", ["sel", "col"], ["box_ids"], axis=1),
             helper.make_node("Unique", ["box_ids"], ["u", "idx", "inv", "cnt"]),
             helper.make_node("Add", ["cnt", "cnt"], ["twice"])]
    inits = [helper.make_tensor("max_out", TensorProto.INT64, [1], [3]),
             helper.make_tensor("iou", TensorProto.FLOAT, [1], [0.5]),
             helper.make_tensor("thr", TensorProto.FLOAT, [1], [0.1]),
             helper.make_tensor("col", TensorProto.INT64, [], [2])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [1, 6, 4]),
                                           helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 2, 6])],
                              [helper.make_tensor_value_info(n, TensorProto.INT64, None) for n in
                               ("sel", "u", "inv", "twice")], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    model.ir_version = 8
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    m = dnnx.load(model)
    rng = np.random.default_rng(0)
    for trial in range(4):
        corner = rng.uniform(0, 10, (1, 6, 2)).astype(np.float32)
        boxes = np.concatenate([corner, corner + rng.uniform(1, 4, (1, 6, 2)).astype(np.float32)], axis=2)
        scores = rng.uniform(0, 1, (1, 2, 6)).astype(np.float32)
        if trial == 3:
            scores[:] = 0.0  # nothing above the threshold: empty selections flow on
        want = sess.run(None, {"boxes": boxes, "scores": scores})
        got = m.run(boxes, scores)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)
    assert "staged" in str(m.plan())
