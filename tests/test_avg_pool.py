"""AveragePool against onnxruntime: 1-D to 3-D, strides, pads with and without
count_include_pad, ceil_mode, auto_pad and dilations (opset 19)."""
import pytest
from onnx import helper

import dnnx
from ort_check import assert_matches_ort, make_model, rand


def pool_model(op, x_shape, name="pool", opset=17, **attrs):
    node = helper.make_node(op, ["x"], ["y"], name=name, **attrs)
    return make_model([node], [("x", list(x_shape))], [("y", None)], opset=opset)


CASES = {
    "inception_3x3_s1": ([2, 4, 9, 9], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}),
    "densenet_transition": ([2, 8, 8, 8], {"kernel_shape": [2, 2], "strides": [2, 2]}),
    "pads_include": ([1, 3, 7, 6], {"kernel_shape": [3, 3], "pads": [1, 2, 1, 0], "count_include_pad": 1}),
    "pads_exclude": ([1, 3, 7, 6], {"kernel_shape": [3, 3], "pads": [1, 2, 1, 0]}),
    "strided_pads": ([2, 2, 11, 10], {"kernel_shape": [3, 2], "strides": [2, 3], "pads": [1, 1, 2, 1]}),
    "ceil": ([1, 2, 7, 8], {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
    "ceil_include_pad": ([1, 2, 8, 7], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1],
                                        "ceil_mode": 1, "count_include_pad": 1}),
    "same_upper": ([1, 3, 7, 6], {"kernel_shape": [3, 2], "strides": [2, 2], "auto_pad": "SAME_UPPER"}),
    "same_lower_include": ([1, 3, 7, 6], {"kernel_shape": [3, 2], "strides": [2, 2], "auto_pad": "SAME_LOWER",
                                          "count_include_pad": 1}),
    "valid": ([1, 3, 7, 6], {"kernel_shape": [2, 2], "auto_pad": "VALID"}),
    "pool1d": ([2, 3, 15], {"kernel_shape": [4], "strides": [3], "pads": [2, 1]}),
    "pool3d": ([1, 2, 5, 6, 7], {"kernel_shape": [2, 3, 2], "strides": [1, 2, 2], "pads": [1, 0, 1, 0, 1, 1],
                                 "count_include_pad": 1}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_average_pool_matches_ort(case):
    x_shape, attrs = CASES[case]
    assert_matches_ort(pool_model("AveragePool", x_shape, **attrs), {"x": rand(*x_shape)})


@pytest.mark.parametrize("include_pad", [0, 1])
@pytest.mark.parametrize("ceil_mode", [0, 1])
def test_average_pool_dilations(include_pad, ceil_mode):
    model = pool_model("AveragePool", [1, 2, 12, 11], opset=19, kernel_shape=[3, 2], dilations=[2, 3],
                       strides=[2, 2], pads=[1, 1, 2, 1], count_include_pad=include_pad, ceil_mode=ceil_mode)
    assert_matches_ort(model, {"x": rand(1, 2, 12, 11)})


def test_average_pool_bad_count_include_pad():
    model = pool_model("AveragePool", [1, 1, 4, 4], name="avg_bad", kernel_shape=[2, 2], count_include_pad=2)
    with pytest.raises(dnnx.InvalidModelError, match="avg_bad.*count_include_pad 2"):
        dnnx.load(model)
