"""The strided gather's simplified forms on CUDA (Note [gathers by wide units] in
engine/backends/cuda/layout/gather_kernels.cu), behind Slice, Transpose and Expand: dims merged,
rows moved in 16-, 8- or 4-byte units, a contiguous range as one copy, a short strided innermost
dim written one group a store; and the cases that must not take them (a row or a pointer off the
unit). Moving data is exact, so every case is compared bit for bit with numpy, in fp32 storage
(4-byte elements) and in fp16 storage (2-byte elements: the values are small integers, which fp16
holds exactly)."""
import numpy as np
import pytest
from onnx import helper

import dnnx
from ort_check import make_model

PRECISIONS = ["fp32", "fp16"]


def integers(shape, seed=0):
    return np.random.default_rng(seed).integers(-64, 64, size=shape).astype(np.float32)


def run(model, x, precision):
    m = dnnx.load(model, device="cuda", precision=precision, measure_precision=False, plan_cache=False)
    return m.run_dict({"x": x})["y"]


# (shape, axis, start, end): the fp16 / fp32 row bytes and the start's byte offset decide the unit
SLICES = {
    "shufflenet_half_first": ([2, 3, 4, 116], 3, 0, 58),  # 116 / 232 bytes a row: 4- / 8-byte units
    "shufflenet_half_second": ([2, 3, 4, 116], 3, 58, 116),
    "wide_half": ([2, 3, 4, 232], 3, 116, 232),  # 232 / 464 bytes: 8- / 16-byte units
    "aligned_quarter": ([2, 5, 3, 64], 3, 16, 32),  # 16-byte units either way
    "odd_row": ([2, 3, 4, 7], 3, 1, 5),  # a 2-byte offset: element by element
    "offset_off_the_unit": ([2, 3, 4, 8], 3, 1, 5),  # whole units a row, the pointer between two
    "middle_axis": ([2, 6, 5, 8], 1, 2, 5),  # [2, 120] after merging: contiguous rows
    "contiguous_range": ([3, 3, 4, 8], 0, 1, 2),  # one copy
    "one_element": ([1, 1, 1, 9], 3, 4, 5),
}


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("case", list(SLICES))
def test_slice_moves_whole_units(case, precision):
    shape, axis, start, end = SLICES[case]
    inits = {"starts": np.array([start], np.int64), "ends": np.array([end], np.int64),
             "axes": np.array([axis], np.int64)}
    node = helper.make_node("Slice", ["x", "starts", "ends", "axes"], ["y"], name="slice")
    model = make_model([node], [("x", shape)], [("y", None)], initializers=inits, opset=13)
    x = integers(shape)
    want = np.take(x, range(start, end), axis=axis)
    np.testing.assert_array_equal(run(model, x, precision), want)


# (shape, perm): ShuffleNet's shuffle channels-last (the last two axes of [N, H, W, g, C/g]) and in
# ONNX's layout ([N, g, C/g, H, W]); a group of 8 fp32 values (32 bytes) is no single store
TRANSPOSES = {
    "shuffle_nhwc_2": ([2, 3, 4, 2, 58], [0, 1, 2, 4, 3]),
    "shuffle_nhwc_4": ([2, 3, 4, 4, 6], [0, 1, 2, 4, 3]),
    "shuffle_nhwc_8": ([2, 3, 2, 8, 5], [0, 1, 2, 4, 3]),
    "shuffle_nchw": ([2, 2, 6, 4, 4], [0, 2, 1, 3, 4]),
    "unit_dims_merge_to_a_copy": ([1, 6, 1, 10], [2, 0, 1, 3]),
}


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("case", list(TRANSPOSES))
def test_transpose_moves_groups_and_units(case, precision):
    shape, perm = TRANSPOSES[case]
    node = helper.make_node("Transpose", ["x"], ["y"], name="transpose", perm=perm)
    model = make_model([node], [("x", shape)], [("y", None)], opset=13)
    x = integers(shape, seed=1)
    np.testing.assert_array_equal(run(model, x, precision), x.transpose(perm))


# (x shape, target): a broadcast innermost dim (stride 0: the group kernel reads one value G
# times) and a broadcast outer dim over contiguous rows (units, an outer stride of 0)
EXPANDS = {
    "innermost_broadcast": ([2, 5, 1], [2, 5, 4]),
    "rows_broadcast": ([1, 8], [6, 8]),
    "both": ([3, 1, 1], [3, 4, 2]),
}


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("case", list(EXPANDS))
def test_expand_moves_groups_and_units(case, precision):
    shape, target = EXPANDS[case]
    node = helper.make_node("Expand", ["x", "shape"], ["y"], name="expand")
    model = make_model([node], [("x", shape)], [("y", None)],
                       initializers={"shape": np.array(target, np.int64)}, opset=13)
    x = integers(shape, seed=2)
    np.testing.assert_array_equal(run(model, x, precision), np.broadcast_to(x, target))
