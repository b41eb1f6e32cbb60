"""Add, Sub, Mul, Div with numpy broadcasting, checked against onnxruntime."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from ort_check import assert_matches_ort, make_model, rand

OPS = ["Add", "Sub", "Mul", "Div"]

# (A shape, B shape, the CPU path the planner should pick)
PATTERNS = [
    ([2, 3, 4, 5], [2, 3, 4, 5], "elementwise"),
    ([2, 3, 4, 5], [], "broadcast scalar"),
    ([], [2, 3, 4, 5], "broadcast scalar"),
    ([2, 3, 4, 5], [1], "broadcast scalar"),
    ([2, 3, 4, 5], [5], "broadcast vector"),           # trailing vector
    ([6, 10], [1, 10], "broadcast vector"),             # row bias
    ([2, 3, 4, 5], [3, 1, 1], "broadcast vector"),      # conv bias
    ([3, 1, 1], [2, 3, 4, 5], "broadcast vector"),      # the small side first
    ([2, 3, 4, 5], [2, 3, 1, 1], "broadcast vector"),   # per (N, C)
    ([2, 3, 4, 5], [1, 3, 4, 5], "broadcast vector"),   # leading 1
    ([1, 3, 4, 5], [2, 3, 4, 5], "broadcast vector"),
    ([2, 1, 4, 1], [3, 1, 5], "broadcast strided"),     # both sides broadcast
    ([4, 1], [1, 5], "broadcast strided"),              # outer product
    ([2, 3, 4, 5], [2, 1, 4, 1], "broadcast strided"),
    ([2, 3, 1], [1, 1, 4], "broadcast strided"),
    ([1, 1, 1], [1], "elementwise"),
    ([2, 3, 4], [1, 1, 1, 1, 4], "broadcast vector"),  # B of higher rank
]


def binary_model(op, a_shape, b_shape, out_shape, opset=17):
    node = helper.make_node(op, ["a", "b"], ["y"], name=f"{op.lower()}_node")
    return make_model([node], [("a", a_shape), ("b", b_shape)], [("y", out_shape)], opset=opset)


def feeds_for(op, a_shape, b_shape, seed=0):
    a = rand(*a_shape, seed=seed)
    b = rand(*b_shape, seed=seed + 1)
    if op == "Div":  # keep the denominator away from 0 so rtol compares like with like
        b = np.where(b >= 0, b + 0.5, b - 0.5).astype(np.float32)
    return {"a": a, "b": b}


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("a_shape,b_shape,path", PATTERNS)
def test_broadcast_patterns(op, a_shape, b_shape, path):
    out_shape = list(np.broadcast_shapes(tuple(a_shape), tuple(b_shape)))
    model = binary_model(op, a_shape, b_shape, out_shape)
    got = assert_matches_ort(model, feeds_for(op, a_shape, b_shape))
    assert got["y"].shape == tuple(out_shape)
    assert dnnx.load(model).plan()[0]["algorithm"] == path


def random_broadcast_pair(rng):
    """Two shapes that broadcast: a random output shape, each side dropping leading dims and
    setting some dims to 1."""
    rank = int(rng.integers(1, 6))
    out = [int(d) for d in rng.integers(1, 6, size=rank)]

    def side():
        keep = int(rng.integers(0, rank + 1))
        dims = out[rank - keep:]
        return [1 if rng.random() < 0.4 else d for d in dims]

    return side(), side()


@pytest.mark.parametrize("seed", range(24))
def test_random_shapes(seed):
    rng = np.random.default_rng(seed)
    a_shape, b_shape = random_broadcast_pair(rng)
    op = OPS[seed % len(OPS)]
    out_shape = list(np.broadcast_shapes(tuple(a_shape), tuple(b_shape)))
    model = binary_model(op, a_shape, b_shape, out_shape)
    assert_matches_ort(model, feeds_for(op, a_shape, b_shape, seed=seed))


def test_constant_operand_and_chain():
    """A bias from an initializer, then a chain whose intermediate values live in the arena."""
    nodes = [
        helper.make_node("Mul", ["x", "scale"], ["t0"], name="scale"),
        helper.make_node("Add", ["t0", "bias"], ["t1"], name="bias"),
        helper.make_node("Sub", ["t1", "x"], ["t2"], name="residual"),
        helper.make_node("Div", ["t2", "denom"], ["y"], name="norm"),
    ]
    inits = {"scale": rand(3, 1, 1, seed=3), "bias": rand(1, 3, 1, 1, seed=4),
             "denom": np.full((5,), 2.0, np.float32)}
    model = make_model(nodes, [("x", [2, 3, 4, 5])], [("y", [2, 3, 4, 5])], initializers=inits)
    assert_matches_ort(model, {"x": rand(2, 3, 4, 5)})


def test_opset7_is_accepted():
    model = binary_model("Add", [2, 3], [3], [2, 3], opset=7)
    assert_matches_ort(model, feeds_for("Add", [2, 3], [3]))


@pytest.mark.parametrize("a_shape,b_shape", [([2, 3], [4]), ([2, 3, 4], [2, 1]), ([5, 1], [4, 2, 3])])
def test_incompatible_shapes_raise(a_shape, b_shape):
    out_shape = [f"d{i}" for i in range(max(len(a_shape), len(b_shape)))]  # symbolic: unknowable
    model = binary_model("Add", a_shape, b_shape, out_shape)
    with pytest.raises((dnnx.InvalidModelError, dnnx.UnsupportedModelError)) as err:
        dnnx.load(model)
    assert "add_node" in str(err.value)
    assert "broadcast" in str(err.value)


def test_legacy_broadcast_model_is_upgraded():
    """Opset < 7 `broadcast` semantics never reach the core (which refuses the attribute):
    the importer upgrades the model to numpy broadcasting first."""
    node = helper.make_node("Add", ["a", "b"], ["y"], name="old_add", broadcast=1)
    model = make_model([node], [("a", [2, 3, 4]), ("b", [4])], [("y", [2, 3, 4])], opset=6)
    feeds = feeds_for("Add", [2, 3, 4], [4])
    got = dnnx.load(model).run_dict(feeds)  # onnxruntime has no Add-6 kernel: numpy is the oracle
    np.testing.assert_allclose(got["y"], feeds["a"] + feeds["b"], rtol=1e-6)


def test_integer_inputs_run_on_the_cpu():
    # int64 arithmetic (the shape computations of dynamic exports) as numpy computes it.
    node = helper.make_node("Add", ["a", "b"], ["y"], name="int_add")
    model = make_model([node], [("a", [2, 3], TensorProto.INT64), ("b", [1, 3], TensorProto.INT64)],
                       [("y", [2, 3], TensorProto.INT64)])
    a = np.arange(6, dtype=np.int64).reshape(2, 3) - 3
    b = np.array([[10, -20, 2**40]], np.int64)
    np.testing.assert_array_equal(dnnx.load(model).run_dict({"a": a, "b": b})["y"], a + b)


def test_mixed_types_name_the_node():
    node = helper.make_node("Add", ["a", "b"], ["y"], name="mixed_add")
    model = make_model([node], [("a", [2, 3], TensorProto.INT64), ("b", [2, 3])], [("y", [2, 3])])
    with pytest.raises((dnnx.UnsupportedModelError, dnnx.InvalidModelError), match="mixed_add"):
        dnnx.load(model)
