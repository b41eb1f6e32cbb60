"""Models that travel (dnnx/_pickle.py): a Model pickles as its ONNX bytes, load options and tuned
weights, and is loaded and planned again where it lands; as_state/load_state are the halves
dnnx.ray and `dnnx run --workers/--ray` use."""
import pickle
import subprocess
import sys

import numpy as np
import onnx
import pytest

import dnnx
from dnnx import _pickle
from dnnx.examples import build
from ort_check import rand


@pytest.fixture(scope="module")
def lenet():
    return build("lenet", seed=0)


def test_a_pickled_model_runs_as_the_original_with_its_options(lenet):
    model = dnnx.load(lenet, batch_size=3, passes={"fuse_conv_relu": False}, max_plans=5)
    model.set_max_plans(7)
    x = rand(3, 1, 28, 28, seed=1)
    copy = pickle.loads(pickle.dumps(model))
    assert copy is not model and copy._engine is not model._engine  # loaded anew, not shared
    assert [s.shape for s in copy.inputs] == [(3, 1, 28, 28)]  # batch_size travels in the bytes
    assert copy.passes == model.passes and copy.passes["fuse_conv_relu"] is False
    assert copy.planner_stats()["max_plans"] == 7
    assert not any(row["op"] == "Conv+Relu" for row in copy.plan())
    np.testing.assert_array_equal(copy.run(x), model.run(x))  # same graph, same kernels: bitwise


def test_tuned_weights_travel(lenet):
    model = dnnx.load(lenet)
    x, y = rand(8, 1, 28, 28, seed=2), np.arange(8) % 10
    before = model.run(x)
    tuner = model.finetune(trainable="last:1", lr=0.1)
    for _ in range(3):
        tuner.step(x, y)
    tuned = model.run(x)
    assert np.abs(tuned - before).max() > 1e-4  # the step changed something to carry
    copy = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(copy.run(x), tuned)


def test_a_model_travels_to_another_process(lenet, tmp_path):
    model = dnnx.load(lenet)
    x = rand(2, 1, 28, 28, seed=3)
    (tmp_path / "model.pkl").write_bytes(pickle.dumps(model))
    np.save(tmp_path / "x.npy", x)
    code = ("import pickle, sys, numpy as np; from pathlib import Path; d = Path(sys.argv[1]); "
            "m = pickle.loads((d / 'model.pkl').read_bytes()); np.save(d / 'y.npy', m.run(np.load(d / 'x.npy')))")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), model.run(x))


def test_as_state_takes_paths_bytes_protos_models_and_overrides(lenet, tmp_path):
    path = tmp_path / "lenet.onnx"
    onnx.save(lenet, path)
    x = rand(4, 1, 28, 28, seed=4)
    want = dnnx.load(lenet).run(x)
    for src in (path, str(path), path.read_bytes(), lenet, dnnx.load(lenet)):
        state = _pickle.as_state(src)
        assert isinstance(state["onnx"], bytes)
        np.testing.assert_array_equal(_pickle.load_state(state).run(x), want)
    fixed = _pickle.load_state(_pickle.as_state(path, batch_size=4))
    assert fixed.inputs[0].shape == (4, 1, 28, 28)


def test_bad_sources_and_options_are_named(lenet, tmp_path):
    with pytest.raises(FileNotFoundError, match="model file not found: .*nope.onnx"):
        _pickle.as_state(tmp_path / "nope.onnx")
    with pytest.raises(ValueError, match="expected a model as a path, ONNX bytes.*got int"):
        _pickle.as_state(3)
    with pytest.raises(ValueError, match=r"unknown load option\(s\) \['colour'\]"):
        _pickle.as_state(lenet, colour="red")
    with pytest.raises(ValueError, match="not a dnnx model state"):
        _pickle.load_state({"onnx": b""})


def test_a_model_that_cannot_load_in_a_worker_names_the_worker_and_why():
    with pytest.raises(dnnx.WorkerLoadError, match=r"could not be loaded on worker .* pid \d+, device 'cpu': "
                                                   r"InvalidModelError"):
        _pickle.load_in_worker(_pickle.as_state(b"not an onnx model"))
