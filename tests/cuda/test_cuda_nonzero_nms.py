"""NonZero and NonMaxSuppression on their CUDA staged kernels (Note [device staged kernels] in
engine/runtime/staged_kernel.h; Note [device nonzero], Note [device nms]): the plan stops at the
node, the node runs on the device, its count crosses with one small copy, and the rest is planned
for it. Integer outputs, so every result equals onnxruntime's (or, for the types onnxruntime
lacks, the CPU backend's, which tests/test_value_shaped_ops.py and test_onnx_node_tests.py check
against onnxruntime) exactly, row order included; plan() says the node runs on a device kernel."""
import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import dnnx
from nms_cases import random_boxes, random_nms_feeds
from ort_check import make_model, rand, run_ort

I64 = TensorProto.INT64
NMS_INPUTS = ["boxes", "scores", "max_output_boxes_per_class", "iou_threshold", "score_threshold"]
NMS_ALGORITHM = "segmented sort + greedy in spans of 256"


def staged_row(model_or_m, op):
    m = model_or_m if isinstance(model_or_m, dnnx.Model) else dnnx.load(model_or_m, device="cuda")
    rows = [r for r in m.plan() if r["op"] == op and r["algorithm"].startswith("staged:")]
    assert len(rows) == 1, m.plan()
    return rows[0]


def assert_on_device_kernel(m, op, algorithm):
    row = staged_row(m, op)
    assert f"runs on a device kernel ({algorithm})" in row["algorithm"], row["algorithm"]
    assert "one small copy" in row["algorithm"] and "on the host" not in row["algorithm"], row["algorithm"]


def test_both_ops_are_registered_as_staged_device_kernels():
    kernels = dnnx.load(nonzero_model((2, 3), TensorProto.FLOAT), device="cuda").kernels()
    assert kernels["NonZero"]["staged"] and kernels["NonMaxSuppression"]["staged"]
    assert kernels["NonMaxSuppression"]["dtypes"] == ["float32"]
    assert not kernels["Conv"]["staged"]


# --- NonZero ---------------------------------------------------------------------------------------

def nonzero_model(shape, elem):
    return make_model([helper.make_node("NonZero", ["x"], ["y"])], [("x", list(shape), elem)], [("y", None, I64)],
                      opset=13)


# (numpy dtype, onnx elem type, whether onnxruntime's CPU NonZero takes it: else the CPU backend is
# the oracle)
DTYPES = [
    (np.float32, TensorProto.FLOAT, True), (np.int32, TensorProto.INT32, True), (np.int64, TensorProto.INT64, True),
    (np.bool_, TensorProto.BOOL, True), (np.uint8, TensorProto.UINT8, True), (np.float16, TensorProto.FLOAT16, True),
    (np.int8, TensorProto.INT8, False), (np.int16, TensorProto.INT16, False), (np.uint16, TensorProto.UINT16, False),
    (np.uint32, TensorProto.UINT32, False), (np.uint64, TensorProto.UINT64, False),
    (np.float64, TensorProto.DOUBLE, False), (ml_dtypes.bfloat16, TensorProto.BFLOAT16, False),
    (ml_dtypes.float8_e4m3fn, TensorProto.FLOAT8E4M3FN, False),
    (ml_dtypes.float8_e4m3fnuz, TensorProto.FLOAT8E4M3FNUZ, False),
    (ml_dtypes.float8_e5m2, TensorProto.FLOAT8E5M2, False),
    (ml_dtypes.float8_e5m2fnuz, TensorProto.FLOAT8E5M2FNUZ, False),
]
# the types with NaN: a NaN is nonzero; those with a signed zero also get -0.0, which is zero
WITH_NAN = {np.dtype(t) for t in (np.float32, np.float16, np.float64, ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn,
                                  ml_dtypes.float8_e4m3fnuz, ml_dtypes.float8_e5m2, ml_dtypes.float8_e5m2fnuz)}
SHAPES = [(), (0,), (3, 0, 2), (7,), (2, 3, 4), (4097,), (3, 5000), (2, 1, 3, 1, 2, 1, 2)]


def sparse_values(shape, dtype, seed):
    """About a third nonzero, small integers (exact in every type), with -0.0 (zero) and NaN
    (nonzero) where the type has them."""
    rng = np.random.default_rng(seed)
    v = rng.integers(-3, 4, shape) * (rng.random(shape) < 0.35)
    x = np.asarray(v != 0) if dtype is np.bool_ else np.asarray(np.abs(v) if np.dtype(dtype).kind == "u" else v).astype(dtype)
    flat = x.reshape(-1)
    if np.dtype(dtype) in WITH_NAN and flat.size >= 3:
        flat[0] = -0.0
        flat[2] = np.nan
    return x


@pytest.mark.parametrize("dtype,elem,ort_has", DTYPES, ids=[np.dtype(d[0]).name for d in DTYPES])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_nonzero_dtypes_and_ranks(dtype, elem, ort_has, shape):
    model = nonzero_model(shape, elem)
    m = dnnx.load(model, device="cuda")
    for zeros, x in enumerate([sparse_values(shape, dtype, 1), np.zeros(shape, dtype)]):
        want = run_ort(model, {"x": x})["y"] if ort_has else dnnx.load(model).run(x)
        for _ in range(3):  # the stage before it eager, then captured, then replayed
            got = m.run(x)
            assert got.dtype == np.int64 and got.shape == want.shape, (got.shape, want.shape)
            np.testing.assert_array_equal(got, want)
        if zeros:  # all zero: [rank, 0] (a scalar counts as [1])
            assert got.shape == (max(len(shape), 1), 0)
    assert_on_device_kernel(m, "NonZero", "two-pass count scan")


def test_nonzero_signed_zero_and_nan_bit_patterns_of_the_storage_types():
    """Every byte pattern of each one-byte float type: the CPU's element_nonzero decides."""
    for dtype, elem in [(ml_dtypes.float8_e4m3fn, TensorProto.FLOAT8E4M3FN),
                        (ml_dtypes.float8_e4m3fnuz, TensorProto.FLOAT8E4M3FNUZ),
                        (ml_dtypes.float8_e5m2, TensorProto.FLOAT8E5M2),
                        (ml_dtypes.float8_e5m2fnuz, TensorProto.FLOAT8E5M2FNUZ)]:
        x = np.arange(256, dtype=np.uint8).view(dtype)
        model = nonzero_model(x.shape, elem)
        want = dnnx.load(model).run(x)
        np.testing.assert_array_equal(dnnx.load(model, device="cuda").run(x), want, err_msg=np.dtype(dtype).name)
    x = np.array([0, 0x8000, 1, 0x7c00, 0xfe00, 0x0001], np.uint16).view(np.float16)  # 0, -0, tiny, inf, nan, subnormal
    np.testing.assert_array_equal(dnnx.load(nonzero_model(x.shape, TensorProto.FLOAT16), device="cuda").run(x),
                                  [[2, 3, 4, 5]])


def nonzero_gather_model():
    # mask = x > t on the device; NonZero's [2, n] -> its rows (Gather axis 0 of row 0) and the
    # values at the coordinates (Transpose, GatherND), scaled: what follows is planned per n.
    nodes = [helper.make_node("Greater", ["x", "t"], ["mask"]),
             helper.make_node("NonZero", ["mask"], ["idx"]),
             helper.make_node("Gather", ["idx", "zero"], ["row_ids"], axis=0),
             helper.make_node("Gather", ["x", "row_ids"], ["rows"], axis=0),
             helper.make_node("Transpose", ["idx"], ["idx_t"], perm=[1, 0]),
             helper.make_node("GatherND", ["x", "idx_t"], ["vals"]),
             helper.make_node("Mul", ["vals", "two"], ["scaled"])]
    return make_model(nodes, [("x", [5, 6])], [("rows", ["N", 6]), ("scaled", ["N"]), ("idx", [2, "N"], I64)],
                      initializers={"t": np.float32(0.5), "zero": np.array(0, np.int64), "two": np.float32(2)})


def test_nonzero_feeds_gather_downstream_on_the_device():
    model = nonzero_gather_model()
    m = dnnx.load(model, device="cuda")
    assert_on_device_kernel(m, "NonZero", "two-pass count scan")
    for seed in range(4):
        x = rand(5, 6, seed=seed) if seed < 3 else np.zeros((5, 6), np.float32)  # the last: n = 0
        want = run_ort(model, {"x": x})
        for _ in range(3):
            got = m.run_dict(x)
            for name, w in want.items():
                assert got[name].shape == w.shape, name
                np.testing.assert_array_equal(got[name], w, err_msg=name)
    assert any(s["stage"].startswith("after NonZero") for s in m.planner_stats()["stages"])
    assert m.graphs(), "each stage's plan is its own graph"
    # device outputs: the continuation's arrays, handed over
    got = m.run_dict(rand(5, 6, seed=1), output="device")
    np.testing.assert_array_equal(np.asarray(got["idx"].numpy()), run_ort(model, {"x": rand(5, 6, seed=1)})["idx"])


# --- NonMaxSuppression -----------------------------------------------------------------------------

def nms_model(feeds, center_point_box=0, constants=None):
    """A NonMaxSuppression node reading the graph inputs in `feeds` ({name: array}, typed by them)
    and the initializers in `constants` ({name: array}); boxes pass through an Add on the device
    first (its output is a device array of the stage before, Note [device-resident stages])."""
    constants = constants or {}
    given = set(feeds)
    names = [n if n in given or n in constants else "" for n in NMS_INPUTS]
    while names and not names[-1]:
        names.pop()
    names[0] = "boxes_dev"
    nodes = [helper.make_node("Add", ["boxes", "no_shift"], ["boxes_dev"]),
             helper.make_node("NonMaxSuppression", names, ["selected"], center_point_box=center_point_box)]
    elem = {"max_output_boxes_per_class": I64}
    inputs = [helper.make_tensor_value_info(n, elem.get(n, TensorProto.FLOAT), list(np.shape(feeds[n])))
              for n in NMS_INPUTS if n in given]
    inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in constants.items()]
    inits.append(numpy_helper.from_array(np.float32(0), "no_shift"))
    graph = helper.make_graph(nodes, "nms", inputs, [helper.make_tensor_value_info("selected", I64, None)],
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    model.ir_version = 8
    return model


def check_nms(feeds, center_point_box=0, constants=None, device_kernel=True):
    model = nms_model(feeds, center_point_box, constants)
    want = run_ort(model, feeds)["selected"]
    m = dnnx.load(model, device="cuda")
    for _ in range(2):
        got = m.run_dict(feeds)["selected"]
        assert got.dtype == np.int64 and got.shape == want.shape, (got.shape, want.shape)
        np.testing.assert_array_equal(got, want)
    if device_kernel:
        assert_on_device_kernel(m, "NonMaxSuppression", NMS_ALGORITHM)
    return got


@pytest.mark.parametrize("center_point_box", [0, 1])
@pytest.mark.parametrize("iou", [0.0, 0.3, 0.7, 1.0])
@pytest.mark.parametrize("max_out", [None, -1, 0, 1, 4, 1000])
@pytest.mark.parametrize("score", [None, 0.2, 0.95])
def test_nms_random_against_onnxruntime(center_point_box, iou, max_out, score):
    feeds = random_nms_feeds(center_point_box, iou, max_out, score, count=150)
    check_nms(feeds, center_point_box)


@pytest.mark.parametrize("center_point_box", [0, 1])
def test_nms_tied_scores_identical_boxes_and_signed_zeros(center_point_box):
    rng = np.random.default_rng(7)
    boxes = random_boxes(rng, 2, 300, center_point_box)
    boxes[:, 150:] = boxes[:, :150]  # every box twice
    scores = rng.integers(-2, 3, (2, 4, 300)).astype(np.float32) / 4  # five values: many ties
    scores[scores == 0] = np.where(rng.random((scores == 0).sum()) < 0.5, -0.0, 0.0)  # -0.0 ties +0.0
    for iou in (0.0, 0.5, 1.0):
        check_nms({"boxes": boxes, "scores": scores, "max_output_boxes_per_class": np.array(1000, np.int64),
                   "iou_threshold": np.array(iou, np.float32)}, center_point_box)


def test_nms_many_boxes_across_chunks_with_constant_scalars():
    """3000 boxes of 5 classes in 3 batches (47 chunks of 64 per segment), the scalars
    initializers (the model's device constants)."""
    rng = np.random.default_rng(11)
    corner = rng.uniform(0, 100, (3, 3000, 2)).astype(np.float32)
    boxes = np.concatenate([corner, corner + rng.uniform(1, 12, (3, 3000, 2)).astype(np.float32)], axis=2)
    scores = np.round(rng.uniform(0, 1, (3, 5, 3000)), 2).astype(np.float32)
    constants = {"max_output_boxes_per_class": np.array([300], np.int64),
                 "iou_threshold": np.array([0.45], np.float32), "score_threshold": np.array([0.25], np.float32)}
    got = check_nms({"boxes": boxes, "scores": scores}, constants=constants)
    assert 0 < len(got) <= 3 * 5 * 300


def test_nms_empty_results_and_shapes():
    rng = np.random.default_rng(8)
    big = np.array([100], np.int64)
    for b, c, n in [(1, 1, 0), (2, 3, 0), (0, 2, 5), (2, 0, 5), (1, 1, 1)]:  # no boxes, batches or classes
        got = check_nms({"boxes": random_boxes(rng, b, n, 0), "scores": rng.uniform(0, 1, (b, c, n)).astype(np.float32),
                         "max_output_boxes_per_class": big})
        assert got.shape[1] == 3
    feeds = {"boxes": random_boxes(rng, 2, 40, 0), "scores": rng.uniform(0, 0.5, (2, 3, 40)).astype(np.float32)}
    # a score_threshold above every score: nothing selected
    assert check_nms(dict(feeds, max_output_boxes_per_class=big, score_threshold=np.array([0.5], np.float32))).shape == (0, 3)
    assert check_nms(dict(feeds, max_output_boxes_per_class=np.array([0], np.int64))).shape == (0, 3)
    assert check_nms(feeds).shape == (0, 3)  # max_output_boxes_per_class absent: none
    # a score equal to the threshold is not above it; degenerate (zero-area) and flipped boxes
    feeds["scores"][0, 0, :3] = 0.25
    feeds["boxes"][0, 4] = [3, 3, 3, 3]
    feeds["boxes"][0, 5] = [9, 8, 1, 2]
    check_nms(dict(feeds, max_output_boxes_per_class=big, score_threshold=np.array(0.25, np.float32),
                   iou_threshold=np.array(0.1, np.float32)))


def test_nms_nan_scores_go_to_the_host_and_match():
    """A NaN score among the candidates: the status sends that run to the host compute, whose
    std::priority_queue orders NaNs as onnxruntime's does; with a threshold NaN is no candidate."""
    rng = np.random.default_rng(9)
    scores = rng.uniform(0, 1, (1, 2, 30)).astype(np.float32)
    scores[0, :, ::4] = np.nan
    feeds = {"boxes": random_boxes(rng, 1, 30, 0), "scores": scores,
             "max_output_boxes_per_class": np.array([30], np.int64), "iou_threshold": np.array([0.4], np.float32)}
    check_nms(feeds)
    check_nms(dict(feeds, score_threshold=np.array([0.3], np.float32)))


def test_nms_iou_threshold_outside_0_1_is_a_value_error():
    feeds = {"boxes": np.zeros((1, 3, 4), np.float32), "scores": np.zeros((1, 1, 3), np.float32),
             "max_output_boxes_per_class": np.array([0], np.int64), "iou_threshold": np.array([1.5], np.float32)}
    m = dnnx.load(nms_model(feeds), device="cuda")
    with pytest.raises(ValueError, match=r"\(NonMaxSuppression\): iou_threshold 1.5.* must be in \[0, 1\]"):
        m.run_dict(feeds)


def test_nms_then_gather_of_the_selected_boxes():
    """NonMaxSuppression's selections feed a Gather of their box column and a GatherND of the boxes
    on the device, planned per count."""
    nodes = [helper.make_node("NonMaxSuppression", ["boxes", "scores", "max_out", "iou", "thr"], ["sel"]),
             helper.make_node("Gather", ["sel", "col"], ["box_ids"], axis=1),
             helper.make_node("Gather", ["boxes", "box_ids"], ["picked"], axis=1)]
    model = make_model(nodes, [("boxes", [1, 200, 4]), ("scores", [1, 3, 200])],
                       [("sel", ["S", 3], I64), ("picked", [1, "S", 4])],
                       initializers={"max_out": np.array([20], np.int64), "iou": np.array([0.5], np.float32),
                                     "thr": np.array([0.3], np.float32), "col": np.array(2, np.int64)}, opset=11)
    m = dnnx.load(model, device="cuda")
    assert_on_device_kernel(m, "NonMaxSuppression", NMS_ALGORITHM)
    rng = np.random.default_rng(3)
    for trial in range(3):
        corner = rng.uniform(0, 50, (1, 200, 2)).astype(np.float32)
        boxes = np.concatenate([corner, corner + rng.uniform(1, 10, (1, 200, 2)).astype(np.float32)], axis=2)
        scores = rng.uniform(0, 1, (1, 3, 200)).astype(np.float32) * (trial != 2)  # the last: none above 0.3
        want = run_ort(model, {"boxes": boxes, "scores": scores})
        got = m.run_dict(boxes, scores)
        for name, w in want.items():
            assert got[name].shape == w.shape, name
            np.testing.assert_array_equal(got[name], w, err_msg=name)


def test_nms_one_long_segment_of_offset_classes_as_torchvision_exports_it():
    """torchvision's batched NMS as its exporter writes it (SSDlite's postprocess): the boxes of 90
    classes shifted apart by class * (max coordinate + 1) into one segment of 18,000 boxes, so that
    no two classes overlap; thousands are kept, over 71 spans of 256 (Note [device nms])."""
    rng = np.random.default_rng(12)
    n, classes = 18000, 90
    corner = rng.uniform(0, 100, (n, 2)).astype(np.float32)
    boxes = np.concatenate([corner, corner + rng.uniform(10, 60, (n, 2)).astype(np.float32)], axis=1)
    boxes += (rng.integers(0, classes, (n, 1)) * np.float32(161)).astype(np.float32)
    scores = rng.uniform(0, 1, (1, 1, n)).astype(np.float32)
    got = check_nms({"boxes": boxes[None], "scores": scores, "max_output_boxes_per_class": np.array(100000, np.int64),
                     "iou_threshold": np.array(0.55, np.float32)})
    assert 1000 < len(got) < n - 1000  # thousands kept and thousands suppressed


@pytest.mark.parametrize("max_out", [37, 100000])
def test_nms_a_chain_of_overlaps_across_many_steps(max_out):
    """Boxes in a row, each overlapping the next by more than the threshold, scores falling along
    the row: every box's fate hangs on the one before it, within and across 20 spans of 256; max_out stops
    the greedy in the first step."""
    n = 5000
    x = np.arange(n, dtype=np.float32) * np.float32(0.25)
    boxes = np.stack([np.zeros(n, np.float32), x, np.ones(n, np.float32), x + 1], axis=1)[None]
    scores = (1.0 - np.arange(n, dtype=np.float32) / n)[None, None].astype(np.float32)
    got = check_nms({"boxes": boxes, "scores": scores, "max_output_boxes_per_class": np.array(max_out, np.int64),
                     "iou_threshold": np.array(0.5, np.float32)})
    assert len(got) == min(max_out, n // 2)  # every other box: each kept one suppresses the next
