"""The ai.onnx.ml ops (engine/ops/ml/: ArrayFeatureExtractor, Binarizer, LabelEncoder 1/2/4,
TreeEnsemble 5), each against onnxruntime (CPU) over several attribute combinations and empty
inputs; models that import ai.onnx.ml alone load."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto as T, helper, numpy_helper

import dnnx
from ort_check import run_ort

ML = "ai.onnx.ml"


def ml_model(nodes, inputs, outputs, initializers=(), ml_opset=1, onnx_opset=None):
    """A model importing ai.onnx.ml (and ai.onnx only when onnx_opset is given)."""
    vi = lambda s: helper.make_tensor_value_info(s[0], s[2], s[1])
    graph = helper.make_graph(nodes, "ml", [vi(s) for s in inputs], [vi(s) for s in outputs], list(initializers))
    imports = [helper.make_opsetid(ML, ml_opset)] + ([helper.make_opsetid("", onnx_opset)] if onnx_opset else [])
    model = helper.make_model(graph, opset_imports=imports)
    model.ir_version = 10
    model = onnx.shape_inference.infer_shapes(model)  # fills outputs given with shape None
    onnx.checker.check_model(model)
    return model


def matches_ort(model, feeds, rtol=1e-6, atol=1e-6):
    want = run_ort(model, feeds)
    got = dnnx.load(model).run_dict(feeds)
    assert set(got) == set(want)
    for name, w in want.items():
        g = got[name]
        assert g.shape == w.shape and g.dtype == w.dtype, (name, g.shape, w.shape, g.dtype, w.dtype)
        if w.dtype == object:
            assert g.tolist() == w.tolist(), name
        else:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True, err_msg=name)
    return got


def strings(*values, shape=None):
    a = np.array(values, dtype=object)
    return a.reshape(shape) if shape else a


# ArrayFeatureExtractor

@pytest.mark.parametrize("x,idx", [
    (np.arange(12, dtype=np.float32).reshape(3, 4), [0, 3, 1]),
    (np.arange(5, dtype=np.float32), [4, 4]),  # 1-D X: [1, K]
    (np.arange(24, dtype=np.int64).reshape(2, 3, 4), [2]),
    (np.arange(6, dtype=np.int32).reshape(2, 3), [[2, 0], [1, 1]]),  # a 2-D Y counts its elements
    (np.linspace(0, 1, 8).reshape(2, 4), [3, 0]),  # float64
    (np.zeros((0, 4), np.float32), [1, 2]),  # empty rows
])
def test_array_feature_extractor(x, idx):
    elem = {np.dtype(np.float32): T.FLOAT, np.dtype(np.float64): T.DOUBLE, np.dtype(np.int64): T.INT64,
            np.dtype(np.int32): T.INT32}[x.dtype]
    node = helper.make_node("ArrayFeatureExtractor", ["x", "y"], ["z"], domain=ML)
    z = [1, np.size(idx)] if x.ndim == 1 else list(x.shape[:-1]) + [np.size(idx)]
    model = ml_model([node], [("x", list(x.shape), elem), ("y", list(np.shape(idx)), T.INT64)], [("z", z, elem)])
    matches_ort(model, {"x": x, "y": np.array(idx, np.int64)})


def test_array_feature_extractor_strings_and_a_constant_index():
    node = helper.make_node("ArrayFeatureExtractor", ["x", "y"], ["z"], domain=ML)
    model = ml_model([node], [("x", [2, 3], T.STRING)], [("z", None, T.STRING)],
                     [numpy_helper.from_array(np.array([2, 0], np.int64), "y")])
    got = matches_ort(model, {"x": strings("a", "bé", "", "c", "d", "e", shape=(2, 3))})
    assert got["z"].tolist() == [["", "a"], ["e", "c"]]


def test_array_feature_extractor_refuses_an_index_out_of_range():
    node = helper.make_node("ArrayFeatureExtractor", ["x", "y"], ["z"], name="afe", domain=ML)
    model = ml_model([node], [("x", [2, 3], T.FLOAT), ("y", [1], T.INT64)], [("z", None, T.FLOAT)])
    m = dnnx.load(model)
    x = np.ones((2, 3), np.float32)
    for bad in (3, -1):
        with pytest.raises(ValueError, match=r"node 'afe'.*Y\[0\] = " + str(bad) + r" is outside \[0, 3\)"):
            m.run_dict({"x": x, "y": np.array([bad], np.int64)})


# Binarizer

@pytest.mark.parametrize("attrs", [{}, {"threshold": 0.5}, {"threshold": -1.25}])
@pytest.mark.parametrize("shape", [[2, 5], [7], [0, 3]])
def test_binarizer(attrs, shape):
    node = helper.make_node("Binarizer", ["x"], ["y"], domain=ML, **attrs)
    model = ml_model([node], [("x", shape, T.FLOAT)], [("y", shape, T.FLOAT)])
    x = np.random.default_rng(0).uniform(-2, 2, shape).astype(np.float32)
    if x.size:
        x.flat[0] = attrs.get("threshold", 0.0)  # equal to the threshold: 0
    matches_ort(model, {"x": x})


def test_binarizer_refuses_nan_as_onnxruntime_does():
    node = helper.make_node("Binarizer", ["x"], ["y"], name="bin", domain=ML)
    model = ml_model([node], [("x", [3], T.FLOAT)], [("y", [3], T.FLOAT)])
    with pytest.raises(ValueError, match=r"node 'bin'.*X\[1\].*NaN"):
        dnnx.load(model).run(np.array([1, np.nan, 0], np.float32))


# LabelEncoder

def _label_case(ml_opset, x, x_elem, y_elem, **attrs):
    node = helper.make_node("LabelEncoder", ["x"], ["y"], domain=ML, **attrs)
    model = ml_model([node], [("x", list(x.shape), x_elem)], [("y", list(x.shape), y_elem)], ml_opset=ml_opset)
    return matches_ort(model, {"x": x})["y"]


def test_label_encoder_opset1_both_directions_and_defaults():
    classes = ["cat", "dog", "bird"]
    y = _label_case(1, strings("dog", "cow", "bird", "cat", shape=(2, 2)), T.STRING, T.INT64, classes_strings=classes)
    assert y.tolist() == [[1, -1], [2, 0]]
    _label_case(1, strings("x", "cat"), T.STRING, T.INT64, classes_strings=classes, default_int64=42)
    y = _label_case(1, np.array([2, 7, 0, -1], np.int64), T.INT64, T.STRING, classes_strings=classes)
    assert y.tolist() == ["bird", "_Unused", "cat", "_Unused"]
    _label_case(1, np.array([5, 1], np.int64), T.INT64, T.STRING, classes_strings=classes, default_string="?")


@pytest.mark.parametrize("ml_opset", [2, 4])
def test_label_encoder_lists(ml_opset):
    s = strings("a", "b", "zz", "", "b", shape=(5,))
    _label_case(ml_opset, s, T.STRING, T.FLOAT, keys_strings=["a", "b", ""], values_floats=[0.5, -1.0, 7.0])
    _label_case(ml_opset, s, T.STRING, T.INT64, keys_strings=["a", "b"], values_int64s=[10, 20], default_int64=99)
    f = np.array([[1.5, 2.0, np.nan], [-0.0, 3.25, 1.5]], np.float32)
    _label_case(ml_opset, f, T.FLOAT, T.INT64, keys_floats=[1.5, 0.0, 3.25], values_int64s=[1, 2, 3])
    _label_case(ml_opset, f, T.FLOAT, T.STRING, keys_floats=[2.0, 1.5], values_strings=["two", "one.5"], default_string="-")
    i = np.array([3, 1, 4, 1, 5], np.int64)
    _label_case(ml_opset, i, T.INT64, T.FLOAT, keys_int64s=[1, 5], values_floats=[0.25, 8.0], default_float=-3.0)
    _label_case(ml_opset, i, T.INT64, T.STRING, keys_int64s=[4, 3], values_strings=["four", "three"])
    # a repeated key keeps its first value; an empty input
    _label_case(ml_opset, i, T.INT64, T.INT64 if ml_opset == 4 else T.FLOAT, keys_int64s=[1, 1, 3],
                **({"values_int64s": [7, 8, 9]} if ml_opset == 4 else {"values_floats": [7.0, 8.0, 9.0]}))
    _label_case(ml_opset, np.zeros((0, 2), np.int64), T.INT64, T.STRING, keys_int64s=[0], values_strings=["z"])


def test_label_encoder_opset4_tensors_defaults_and_nan_keys():
    t = lambda name, a: numpy_helper.from_array(a, name)
    x = np.array([1.0, np.nan, 2.5, 7.0], np.float64)
    y = _label_case(4, x, T.DOUBLE, T.DOUBLE, keys_tensor=t("k", np.array([1.0, np.nan, 2.5])),
                    values_tensor=t("v", np.array([10.0, 20.0, 30.0])), default_tensor=t("d", np.array([-5.0])))
    assert y.tolist() == [10.0, 20.0, 30.0, -5.0]
    _label_case(4, x, T.DOUBLE, T.DOUBLE, keys_tensor=t("k", np.array([1.0, 2.5])), values_tensor=t("v", np.array([3.0, 4.0])))
    s = strings("a", "b", "c")
    _label_case(4, s, T.STRING, T.INT64, keys_tensor=t("k", strings("a", "c")), values_tensor=t("v", np.array([1, 3], np.int64)),
                default_tensor=t("d", np.array([-9], np.int64)))
    _label_case(4, s, T.STRING, T.DOUBLE, keys_strings=["b"], values_tensor=t("v", np.array([0.125])))
    _label_case(4, s, T.STRING, T.INT16, keys_strings=["c", "a"], values_tensor=t("v", np.array([3, -7], np.int16)))
    _label_case(4, s, T.STRING, T.INT16, keys_tensor=t("k", strings("b")), values_tensor=t("v", np.array([5], np.int16)),
                default_tensor=t("d", np.array([300], np.int16)))
    _label_case(4, np.array([2, 9], np.int64), T.INT64, T.STRING, keys_tensor=t("k", np.array([2], np.int64)),
                values_tensor=t("v", strings("two")), default_tensor=t("d", strings("none")))


def test_label_encoder_refusals_name_the_node():
    def load(**attrs):
        node = helper.make_node("LabelEncoder", ["x"], ["y"], name="le", domain=ML, **attrs)
        graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", T.INT64, [2])],
                                  [helper.make_tensor_value_info("y", T.INT64, [2])])
        return dnnx.load(helper.make_model(graph, opset_imports=[helper.make_opsetid(ML, 2)]))
    with pytest.raises(dnnx.InvalidModelError, match=r"node 'le'.*2 keys but 1 values"):
        load(keys_int64s=[1, 2], values_int64s=[3])
    with pytest.raises(dnnx.InvalidModelError, match=r"node 'le'.*X is int64 but the keys are string"):
        load(keys_strings=["a"], values_int64s=[3])
    with pytest.raises(dnnx.InvalidModelError, match=r"node 'le'.*exactly one of values_strings"):
        load(keys_int64s=[1], values_int64s=[3], values_floats=[1.0])


# TreeEnsemble (ai.onnx.ml 5)

def random_forest(rng, n_trees, n_features, n_targets, dtype, modes=range(7), missing=True):
    """Random trees as TreeEnsemble's attributes: every branch mode, member sets, leaves on both
    sides, missing-value tracking."""
    attrs = {k: [] for k in ("nodes_featureids", "nodes_truenodeids", "nodes_falsenodeids", "nodes_trueleafs",
                             "nodes_falseleafs", "nodes_missing_value_tracks_true", "leaf_targetids", "tree_roots")}
    splits, node_modes, weights, members = [], [], [], []

    def leaf():
        attrs["leaf_targetids"].append(int(rng.integers(n_targets)))
        weights.append(float(np.round(rng.normal(), 3)))
        return len(weights) - 1

    def branch(depth):
        i = len(node_modes)
        mode = int(rng.choice(list(modes)))
        node_modes.append(mode)
        attrs["nodes_featureids"].append(int(rng.integers(n_features)))
        splits.append(float(rng.integers(-2, 3)) / 2 if mode in (4, 5) else float(np.round(rng.normal(), 2)))
        attrs["nodes_missing_value_tracks_true"].append(int(missing and rng.integers(2)))
        if mode == 6:
            members.extend(sorted(set(float(v) for v in rng.integers(-2, 4, size=3))) + [np.nan])
        for k in ("truenodeids", "falsenodeids", "trueleafs", "falseleafs"):
            attrs["nodes_" + k].append(0)
        for side in ("true", "false"):
            is_leaf = depth >= 3 or rng.random() < 0.3
            attrs[f"nodes_{side}nodeids"][i] = leaf() if is_leaf else branch(depth + 1)
            attrs[f"nodes_{side}leafs"][i] = int(is_leaf)
        return i

    for _ in range(n_trees):
        attrs["tree_roots"].append(branch(0))
    tensor = lambda name, v, t: numpy_helper.from_array(np.array(v, t), name)
    attrs["nodes_splits"] = tensor("splits", splits, dtype)
    attrs["nodes_modes"] = tensor("modes", node_modes, np.uint8)
    attrs["leaf_weights"] = tensor("weights", weights, dtype)
    if members:
        attrs["membership_values"] = tensor("members", members, dtype)
    attrs["n_targets"] = n_targets
    return attrs


def _tree_case(attrs, x, rtol=1e-5, atol=1e-6):
    elem = T.FLOAT if x.dtype == np.float32 else T.DOUBLE
    node = helper.make_node("TreeEnsemble", ["x"], ["y"], domain=ML, **attrs)
    y = [x.shape[0] if x.ndim == 2 else 1, attrs["n_targets"]]
    model = ml_model([node], [("x", list(x.shape), elem)], [("y", y, elem)], ml_opset=5)
    return matches_ort(model, {"x": x}, rtol=rtol, atol=atol)["y"]


def _features(rng, rows, n_features, dtype):
    x = (rng.integers(-2, 4, size=(rows, n_features)) / 2).astype(dtype)  # hits the EQ splits and the sets
    continuous = rng.random(x.shape) < 0.3
    x[continuous] = rng.normal(size=int(continuous.sum())).astype(dtype)
    x[rng.random(x.shape) < 0.1] = np.nan
    return x


@pytest.mark.parametrize("aggregate", [0, 1, 2, 3])
@pytest.mark.parametrize("n_targets", [1, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tree_ensemble_aggregates(aggregate, n_targets, dtype):
    rng = np.random.default_rng(aggregate * 10 + n_targets)
    attrs = random_forest(rng, 4, 5, n_targets, dtype)
    _tree_case({**attrs, "aggregate_function": aggregate}, _features(rng, 16, 5, dtype))


@pytest.mark.parametrize("post", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("n_targets", [1, 2, 4])
def test_tree_ensemble_post_transforms(post, n_targets):
    rng = np.random.default_rng(post * 7 + n_targets)
    attrs = random_forest(rng, 3, 4, n_targets, np.float32, missing=False)
    if post == 4:  # PROBIT wants scores in (0, 1)
        w = numpy_helper.to_array(attrs["leaf_weights"])
        attrs["leaf_weights"] = numpy_helper.from_array((np.abs(w) % 1 / 3 + 0.01).astype(np.float32), "weights")
    x = _features(rng, 12, 4, np.float32)
    _tree_case({**attrs, "post_transform": post}, x, rtol=1e-5, atol=1e-5)


def test_tree_ensemble_single_row_empty_batch_and_one_leaf_tree():
    rng = np.random.default_rng(5)
    attrs = random_forest(rng, 2, 3, 2, np.float32, modes=[0, 1, 2, 3])
    _tree_case(attrs, np.zeros((0, 3), np.float32))
    _tree_case(attrs, np.array([[0.5, -1.0, 2.0]], np.float32))  # one row
    # a one-leaf tree: its root's branches both the same leaf (Note [one-leaf trees])
    one = {"nodes_featureids": [0], "nodes_truenodeids": [0], "nodes_falsenodeids": [0], "nodes_trueleafs": [1],
           "nodes_falseleafs": [1], "nodes_splits": numpy_helper.from_array(np.array([0.0], np.float32), "s"),
           "nodes_modes": numpy_helper.from_array(np.array([0], np.uint8), "m"), "leaf_targetids": [0],
           "leaf_weights": numpy_helper.from_array(np.array([2.5], np.float32), "w"), "tree_roots": [0], "n_targets": 1}
    assert _tree_case(one, np.array([[1.0], [-1.0]], np.float32)).tolist() == [[2.5], [2.5]]


def test_tree_ensemble_refuses_malformed_forests():
    rng = np.random.default_rng(1)
    attrs = random_forest(rng, 2, 3, 2, np.float32)

    def load(**change):
        node = helper.make_node("TreeEnsemble", ["x"], ["y"], name="te", domain=ML, **{**attrs, **change})
        graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", T.FLOAT, [4, 3])],
                                  [helper.make_tensor_value_info("y", T.FLOAT, [4, 2])])
        return dnnx.load(helper.make_model(graph, opset_imports=[helper.make_opsetid(ML, 5)]))
    with pytest.raises(dnnx.InvalidModelError, match=r"node 'te'.*leaf_targetids holds 2, outside \[0, n_targets = 2\)"):
        load(leaf_targetids=[2] * len(attrs["leaf_targetids"]))
    with pytest.raises(dnnx.InvalidModelError, match=r"node 'te'.*reads feature 7 but X has 3"):
        load(nodes_featureids=[7] * len(attrs["nodes_featureids"]))
    with pytest.raises(dnnx.InvalidModelError, match=r"node 'te'.*'nodes_splits' is float64, expected X's type float32"):
        load(nodes_splits=numpy_helper.from_array(numpy_helper.to_array(attrs["nodes_splits"]).astype(np.float64), "s"))
    with pytest.raises(dnnx.InvalidModelError, match=r"node 'te'.*true branch 999 is outside"):
        load(nodes_truenodeids=[999] * len(attrs["nodes_truenodeids"]), nodes_trueleafs=[0] * len(attrs["nodes_trueleafs"]))


def test_a_model_of_ai_onnx_ml_and_ai_onnx_ops():
    nodes = [helper.make_node("Binarizer", ["x"], ["b"], domain=ML, threshold=0.25),
             helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Add", ["b", "r"], ["y"])]
    model = ml_model(nodes, [("x", [2, 3], T.FLOAT)], [("y", [2, 3], T.FLOAT)], onnx_opset=17)
    matches_ort(model, {"x": np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)})


# Scaler, Normalizer

_ELEM = {np.dtype(np.float32): T.FLOAT, np.dtype(np.float64): T.DOUBLE, np.dtype(np.int64): T.INT64,
         np.dtype(np.int32): T.INT32}


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32])
@pytest.mark.parametrize("shape,scale,offset", [
    ([3, 4], [0.5, 2.0, -1.0, 3.0], [1.0, 0.0, -2.5, 0.25]),  # per feature
    ([5, 2], [1.5], [0.75]),  # one value
    ([4], [2.0, 1.0, 0.5, 0.1], [0.0, 1.0, 2.0, 3.0]),  # 1-D: dim 0 is the feature dim
    ([2, 3, 2], [2.0, -1.0, 0.5], [1.0, 2.0, 3.0]),  # rank 3: dim 1, as onnxruntime counts it
    ([0, 3], [1.0, 2.0, 3.0], [0.0, 0.0, 0.0]),  # empty
])
def test_scaler(dtype, shape, scale, offset):
    node = helper.make_node("Scaler", ["x"], ["y"], domain=ML, scale=scale, offset=offset)
    model = ml_model([node], [("x", shape, _ELEM[np.dtype(dtype)])], [("y", shape, T.FLOAT)])
    x = (np.random.default_rng(2).normal(size=shape) * 10).astype(dtype)
    matches_ort(model, {"x": x}, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32])
@pytest.mark.parametrize("norm", [None, "MAX", "L1", "L2"])
@pytest.mark.parametrize("shape", [[3, 5], [6], [0, 4]])
def test_normalizer(dtype, norm, shape):
    node = helper.make_node("Normalizer", ["x"], ["y"], domain=ML, **({"norm": norm} if norm else {}))
    model = ml_model([node], [("x", shape, _ELEM[np.dtype(dtype)])], [("y", shape, T.FLOAT)])
    x = (np.random.default_rng(3).normal(size=shape) * 10).astype(dtype)
    if len(shape) == 2 and shape[0] > 1:
        x[1] = 0  # a zero norm: the row is copied
    matches_ort(model, {"x": x}, rtol=1e-6, atol=1e-6)


def test_scaler_and_normalizer_refusals_name_the_node():
    def load(op, shape, **attrs):
        node = helper.make_node(op, ["x"], ["y"], name="n", domain=ML, **attrs)
        graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", T.FLOAT, shape)],
                                  [helper.make_tensor_value_info("y", T.FLOAT, shape)])
        return dnnx.load(helper.make_model(graph, opset_imports=[helper.make_opsetid(ML, 1)]))
    with pytest.raises(dnnx.InvalidModelError, match=r"node 'n' \(ai.onnx.ml::Scaler\).*hold 2 values: expected 1 or 3"):
        load("Scaler", [2, 3], scale=[1.0, 2.0], offset=[0.0, 0.0])
    with pytest.raises(dnnx.InvalidModelError, match=r"node 'n'.*scale has 1 values but offset 2"):
        load("Scaler", [2, 3], scale=[1.0], offset=[0.0, 0.0])
    with pytest.raises(dnnx.InvalidModelError, match=r"node 'n' \(ai.onnx.ml::Normalizer\).*\[C\] or \[N, C\]"):
        load("Normalizer", [2, 3, 4])


def test_zipmap_is_refused_clearly():
    """ZipMap makes a sequence of maps, which dnnx has no value type for."""
    node = helper.make_node("ZipMap", ["x"], ["z"], name="zm", domain=ML, classlabels_int64s=[0, 1])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", T.FLOAT, [2, 2])],
                              [helper.make_value_info("z", helper.make_sequence_type_proto(
                                  helper.make_map_type_proto(T.INT64, helper.make_tensor_type_proto(T.FLOAT, []))))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(ML, 1)])
    with pytest.raises(dnnx.UnsupportedModelError, match=r"node 'zm' \(ai.onnx.ml::ZipMap\).*a sequence of maps.*zipmap"):
        dnnx.load(model)


def test_an_ai_onnx_node_in_a_model_without_an_ai_onnx_opset_is_refused():
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [helper.make_tensor_value_info("x", T.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", T.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(ML, 3)])
    with pytest.raises(dnnx.InvalidModelError, match=r"No opset import for domain ''"):
        dnnx.load(model)
