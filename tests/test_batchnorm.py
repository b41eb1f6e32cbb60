"""BatchNormalization against onnxruntime: ranks 2 to 5, epsilon, statistics as initializers or as
graph inputs, and training mode (batch statistics, running mean and variance outputs); Dropout in
training mode with ratio 0."""
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


@pytest.mark.parametrize("x_shape", [[4, 3], [2, 5, 7], [2, 3, 6, 5], [1, 4, 3, 4, 5]])
@pytest.mark.parametrize("momentum", [None, 0.7])
def test_batchnorm_training_mode_matches_ort(x_shape, momentum):
    """Batch statistics (population variance) and the running mean/var outputs, as onnxruntime."""
    attrs = {"training_mode": 1, "epsilon": 1e-3, **({"momentum": momentum} if momentum is not None else {})}
    params = bn_params(x_shape[1])
    node = helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"],
                            ["y", "running_mean", "running_var"], **attrs)
    model = make_model([node], [("x", list(x_shape))],
                       [("y", list(x_shape)), ("running_mean", [x_shape[1]]), ("running_var", [x_shape[1]])],
                       params, opset=15)
    assert_matches_ort(model, {"x": rand(*x_shape) * 3 + 1})


def test_batchnorm_training_mode_after_a_conv_is_not_folded_into_it():
    """fold_batchnorm folds the inference form only: after a Conv, training mode still normalizes
    with the batch's statistics."""
    w = np.random.default_rng(3).standard_normal((4, 3, 3, 3)).astype(np.float32)
    params = bn_params(4)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]),
             helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["y", "rm", "rv"],
                              training_mode=1)]
    model = make_model(nodes, [("x", [2, 3, 8, 8])], [("y", [2, 4, 6, 6]), ("rm", [4]), ("rv", [4])],
                       {"w": w, **params}, opset=15)
    assert_matches_ort(model, {"x": rand(2, 3, 8, 8)})
    assert "batch statistics" in str(dnnx.load(model).plan())


def _dropout_model(opset=13):
    node = helper.make_node("Dropout", ["x", "ratio", "training"], ["y", "mask"], name="drop")
    from onnx import TensorProto as T
    return make_model([node], [("x", [2, 3]), ("ratio", [], T.FLOAT), ("training", [], T.BOOL)],
                      [("y", [2, 3]), ("mask", [2, 3], T.BOOL)], opset=opset)


def test_dropout_in_training_mode_with_ratio_0_is_the_identity():
    x = rand(2, 3)
    m = dnnx.load(_dropout_model())
    for training in (True, False):
        y, mask = m.run(x, np.array(0.0, np.float32), np.array(training))
        np.testing.assert_array_equal(y, x)
        assert mask.all()


def test_dropout_in_training_mode_with_a_ratio_is_refused_naming_the_node():
    with pytest.raises(dnnx.UnsupportedModelError, match=r"node 'drop'.*training_mode true with ratio 0\.3.*random"):
        dnnx.load(_dropout_model()).run(rand(2, 3), np.array(0.3, np.float32), np.array(True))


def test_batchnorm_wrong_channel_count():
    params = bn_params(4)
    node = helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y"], name="bn_c")
    model = make_model([node], [("x", [2, 3, 4, 4])], [("y", [2, 3, 4, 4])], params)
    with pytest.raises(dnnx.InvalidModelError, match=r"bn_c.*scale \[4\] must be \[3\]"):
        dnnx.load(model)


def test_batchnorm_training_mode_with_only_y_runs_and_a_bad_mode_is_refused():
    """Found by bench/fuzz.py (seed 11, case 195): training_mode set on a BN of one output read
    outputs it did not have. Y alone is the three-output node's Y; a mode other than 0 or 1 is refused."""
    params = bn_params(3)
    x = rand(2, 3, 4, 4)
    one = make_model([helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y"],
                                       training_mode=1)], [("x", [2, 3, 4, 4])], [("y", [2, 3, 4, 4])], params, opset=15)
    three = make_model([helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"],
                                         ["y", "rm", "rv"], training_mode=1)], [("x", [2, 3, 4, 4])],
                       [("y", [2, 3, 4, 4]), ("rm", [3]), ("rv", [3])], params, opset=15)
    np.testing.assert_array_equal(dnnx.load(one).run(x), dnnx.load(three).run(x)[0])
    bad = make_model([helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y"],
                                       name="bn_bad", training_mode=-7)], [("x", [2, 3, 4, 4])], [("y", [2, 3, 4, 4])],
                     params, opset=15)
    with pytest.raises(dnnx.InvalidModelError, match="bn_bad.*training_mode must be 0 or 1, got -7"):
        dnnx.load(bad)
