"""BatchNormalization (inference) against onnxruntime: ranks 2 to 5, epsilon, statistics as
initializers or as graph inputs; training mode and extra outputs are refused at load."""
import numpy as np
import pytest
from onnx import helper

import dnnx
from ort_check import assert_matches_ort, make_model, rand


def bn_params(channels, seed=1):
    rng = np.random.default_rng(seed)
    return {"scale": rng.standard_normal(channels).astype(np.float32),
            "bias": rng.standard_normal(channels).astype(np.float32),
            "mean": rng.standard_normal(channels).astype(np.float32),
            "var": rng.uniform(0.1, 2.0, channels).astype(np.float32)}


def bn_model(x_shape, name="bn", outputs=None, opset=17, as_inputs=False, **attrs):
    params = bn_params(x_shape[1])
    node = helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"],
                            outputs or ["y"], name=name, **attrs)
    inputs = [("x", list(x_shape))]
    if as_inputs:
        inputs += [(k, [x_shape[1]]) for k in params]
    outs = [(o, list(x_shape)) for o in (outputs or ["y"])]
    return make_model([node], inputs, outs, {} if as_inputs else params, opset=opset), params


@pytest.mark.parametrize("x_shape", [[4, 3], [2, 5, 7], [2, 3, 6, 5], [1, 4, 3, 4, 5], [8, 16, 1, 1]])
def test_batchnorm_matches_ort(x_shape):
    model, _ = bn_model(x_shape)
    assert_matches_ort(model, {"x": rand(*x_shape)})


def test_batchnorm_epsilon_and_old_opset():
    model, _ = bn_model([2, 3, 4, 4], opset=9, epsilon=0.3)
    assert_matches_ort(model, {"x": rand(2, 3, 4, 4)})


def test_batchnorm_statistics_as_graph_inputs():
    model, params = bn_model([2, 3, 4, 4], as_inputs=True, epsilon=1e-3)
    assert_matches_ort(model, {"x": rand(2, 3, 4, 4), **params})


def test_batchnorm_training_mode_is_refused():
    model, _ = bn_model([2, 3, 4, 4], name="bn_train", training_mode=1)
    with pytest.raises(dnnx.UnsupportedModelError, match="bn_train.*training_mode 1"):
        dnnx.load(model)


def test_batchnorm_wrong_channel_count():
    params = bn_params(4)
    node = helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y"], name="bn_c")
    model = make_model([node], [("x", [2, 3, 4, 4])], [("y", [2, 3, 4, 4])], params)
    with pytest.raises(dnnx.InvalidModelError, match=r"bn_c.*scale \[4\] must be \[3\]"):
        dnnx.load(model)
