"""dnnx's one input rule (dnnx/_inputs.py; README "Inputs"): strict, with a message naming the input.
Arrays of another dtype are ValueErrors (no conversion), lists convert where no kind changes, None
is a ValueError, an empty batch runs (onnxruntime's empty outputs), and two inputs disagreeing on a shared named dim are a ValueError
naming both. The same in Model.run, run_dict, profile, InferenceSession.run and `dnnx run`."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import dnnx
from dnnx.cli import main
from dnnx.examples import build
from ort_check import make_model, rand, run_ort


@pytest.fixture(scope="module")
def add_model():
    """s = x + z, both [N, 3]; c = Cast(i, float) * s with i [N, 3] int64."""
    nodes = [helper.make_node("Add", ["x", "z"], ["s"]), helper.make_node("Cast", ["i"], ["f"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["f", "s"], ["c"])]
    return make_model(nodes, [("x", ["N", 3]), ("z", ["N", 3]), ("i", ["N", 3], TensorProto.INT64)],
                      [("c", ["N", 3])])


@pytest.fixture(scope="module")
def model(add_model):
    return dnnx.load(add_model)


def feeds(rows=2):
    return {"x": rand(rows, 3, seed=1), "z": rand(rows, 3, seed=2), "i": np.arange(rows * 3).reshape(rows, 3)}


def want(f):
    return np.asarray(f["i"], np.float32) * (np.asarray(f["x"], np.float32) + np.asarray(f["z"], np.float32))


def runners(model):
    """Every API path that takes inputs, each as f(feeds dict)."""
    session = dnnx.InferenceSession(model.proto.SerializeToString(), providers=["CPUExecutionProvider"])
    return {"run": lambda f: model.run(f),
            "run positional": lambda f: model.run(f["x"], f["z"], f["i"]),
            "run keywords": lambda f: model.run(**f),
            "run_dict": lambda f: model.run_dict(f)["c"],
            "profile": lambda f: model.profile(f, repeat=1),
            "chunked": lambda f: model.run(f, chunk_size=1),
            "session": lambda f: session.run(None, f)[0]}


PATHS = ["run", "run positional", "run keywords", "run_dict", "profile", "chunked", "session"]


@pytest.mark.parametrize("path", PATHS)
def test_an_array_of_another_dtype_is_refused(model, path):
    f = dict(feeds(), x=feeds()["x"].astype(np.float64))
    with pytest.raises(ValueError, match=r"input 'x': expected dtype float32, got float64"):
        runners(model)[path](f)
    f = dict(feeds(), i=feeds()["i"].astype(np.int32))
    with pytest.raises(ValueError, match=r"input 'i': expected dtype int64, got int32"):
        runners(model)[path](f)


@pytest.mark.parametrize("path", PATHS)
def test_none_is_refused(model, path):
    with pytest.raises(ValueError, match=r"input 'z': expected an array of float32 \['N', 3\], got None"):
        runners(model)[path](dict(feeds(), z=None))


@pytest.mark.parametrize("path", [p for p in PATHS if p != "profile"])
def test_an_empty_batch_runs(model, add_model, path):
    # ONNX allows empty tensors: the output is onnxruntime's (0, 3) (Note [empty tensors])
    f = feeds(rows=0)
    got = runners(model)[path](f)
    want = run_ort(add_model, f)["c"]
    assert got.shape == want.shape == (0, 3) and got.dtype == want.dtype


def test_an_empty_batch_profiles(model):
    table = model.profile(feeds(rows=0), repeat=1)
    assert len(table) and all(row.median_ms >= 0 for row in table)


@pytest.mark.parametrize("path", PATHS)
def test_inputs_disagreeing_on_the_batch_name_both(model, path):
    f = dict(feeds(2), z=rand(3, 3))
    with pytest.raises(ValueError, match=r"inputs 'x' and 'z' disagree on dim 'N': 2 vs 3") as error:
        runners(model)[path](f)
    assert not isinstance(error.value, dnnx.InvalidModelError)


@pytest.mark.parametrize("path", PATHS)
def test_lists_convert_where_no_kind_changes(model, path):
    f = {"x": [[1, 2, 3]], "z": [[0.5, 0.25, -1.0]], "i": [[1, 0, 2]]}  # ints for a float input: converted
    got = np.asarray(runners(model)[path](f)) if path != "profile" else None
    if got is not None:
        np.testing.assert_allclose(got, want(f), rtol=1e-6)
    with pytest.raises(ValueError, match=r"input 'i': expected dtype int64, got a list of float64 values"):
        runners(model)[path](dict(f, i=[[1.5, 0.0, 2.0]]))  # floats for an int input: refused
    with pytest.raises(ValueError, match=r"input 'x': a list that is not a regular array"):
        runners(model)[path](dict(f, x=[[1, 2, 3], [1]]))


def test_a_scalar_array_of_the_right_dtype_passes_to_the_engine():
    m = dnnx.load(make_model([helper.make_node("Relu", ["x"], ["y"])], [("x", [])], [("y", [])]))
    assert m.run(np.float32(-2.0)) == 0.0
    with pytest.raises(ValueError, match="input 'x': expected dtype float32, got float64"):
        m.run(np.float64(-2.0))
    assert m.run(3) == 3.0  # a Python int: no dtype of its own, converted


def test_the_cli_applies_the_same_rule(capsys, tmp_path, add_model):
    path = tmp_path / "m.onnx"
    onnx.save(add_model, path)
    f = feeds()
    np.savez(tmp_path / "f64.npz", **dict(f, x=f["x"].astype(np.float64)))
    assert main(["run", str(path), "--input", str(tmp_path / "f64.npz")]) == 2
    err = capsys.readouterr().err
    assert "f64.npz: input 'x': expected dtype float32, got float64" in err and err.count("\n") == 1
    np.savez(tmp_path / "empty.npz", **feeds(rows=0))  # an empty batch runs (Note [empty tensors])
    assert main(["run", str(path), "--input", str(tmp_path / "empty.npz")]) == 0
    assert "c  float32  [0, 3]" in capsys.readouterr().out
    np.savez(tmp_path / "mismatch.npz", **dict(f, z=rand(3, 3)))
    assert main(["run", str(path), "--input", str(tmp_path / "mismatch.npz")]) == 2
    assert "inputs 'x' and 'z' disagree on dim 'N': 2 vs 3" in capsys.readouterr().err
    np.savez(tmp_path / "ok.npz", **f)
    assert main(["run", str(path), "--input", str(tmp_path / "ok.npz"), "--output", str(tmp_path / "c.npz")]) == 0
    with np.load(tmp_path / "c.npz") as saved:
        np.testing.assert_allclose(saved["c"], want(f), rtol=1e-6)


def test_an_unpickled_array_runs_like_the_original():
    """An array that crossed a process boundary (multiprocessing, Ray's object store) carries a
    dtype equal to numpy's float32 but not numpy's cached instance; it is the same input."""
    import pickle

    m = dnnx.load(build("lenet"))
    x = np.random.default_rng(0).random((2, 1, 28, 28), dtype=np.float32)
    moved = pickle.loads(pickle.dumps(x, protocol=5))
    assert moved.dtype is not x.dtype and moved.dtype == x.dtype
    np.testing.assert_array_equal(m.run(moved), m.run(x))


def test_the_fast_path_passes_the_arrays_themselves_and_leaves_the_rest_to_the_rule():
    """Note [the input fast path] (dnnx/_inputs.py): numpy arrays of the declared dtypes, by name or
    in order, reach the engine as they are; anything else goes through the rule, with its errors."""
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Cast", ["i"], ["f"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["r", "f"], ["y"])]
    m = dnnx.load(make_model(nodes, [("x", ["N", 3]), ("i", ["M", 3], TensorProto.INT64)], [("y", ["N", 3])]))
    x, i = rand(2, 3, seed=1), np.arange(6).reshape(2, 3)
    assert m._fast_inputs.dtypes is not None
    for args in (({"i": i, "x": x},), (x, i)):
        got = m._ordered_inputs(args, {})
        assert got[0] is x and got[1] is i
    np.testing.assert_array_equal(m.run({"x": x, "i": i}), np.maximum(x, 0) * i.astype(np.float32))
    with pytest.raises(ValueError, match="input 'i': expected dtype int64, got int32"):
        m.run({"x": x, "i": i.astype(np.int32)})
    with pytest.raises(ValueError, match="missing"):
        m.run({"x": x, "j": i})
    np.testing.assert_array_equal(m.run(x, [[0, 1, 2], [3, 4, 5]]), np.maximum(x, 0) * i.astype(np.float32))  # a list: the rule


def test_inputs_sharing_a_named_dim_keep_the_rule(model):
    assert model._fast_inputs.dtypes is None  # x, z and i share N: the rule checks they agree
