"""dnnx.ray.Predictor as a plain callable (no Ray needed): the batches Ray Data hands over
(read-only numpy columns) in, outputs and pass-through columns out; fixed-batch models run N rows
at a time (dnnx/_rows.py). On a Ray cluster: test_ray_data.py."""
import numpy as np
import pytest

import dnnx
from dnnx.examples import build
from dnnx.ray import Predictor
from ort_check import rand


def read_only(a):
    a.setflags(write=False)  # as Ray Data's columns are: views of Arrow buffers
    return a


@pytest.fixture(scope="module")
def lenet():
    return build("lenet", seed=0)


def test_read_only_columns_run_without_a_copy_and_other_columns_pass_through(lenet):
    x = read_only(rand(5, 1, 28, 28, seed=1))
    ids = np.arange(5)
    predictor = Predictor(lenet.SerializeToString(), input_columns="image", output_columns={"probs": "p"})
    out = predictor({"image": x, "id": ids})
    assert sorted(out) == ["id", "p"] and out["id"] is ids
    np.testing.assert_array_equal(out["p"], dnnx.load(lenet).run(x))


def test_default_columns_and_chunks(lenet):
    x = read_only(rand(7, 1, 28, 28, seed=2))
    want = dnnx.load(lenet).run(x)
    np.testing.assert_array_equal(Predictor(lenet)({"x": x})["probs"], want)     # named as the input
    np.testing.assert_array_equal(Predictor(lenet)({"data": x})["probs"], want)  # a one-column batch
    chunked = Predictor(lenet, chunk_size=3)({"x": x})["probs"]
    np.testing.assert_allclose(chunked, want, rtol=1e-5, atol=1e-6)  # other GEMM row counts: last-bit changes


def test_a_fixed_batch_model_runs_n_rows_at_a_time_with_the_last_slice_padded(lenet):
    x = read_only(rand(7, 1, 28, 28, seed=3))
    fixed = dnnx.load(lenet, batch_size=3)
    padded = np.zeros((9, 1, 28, 28), np.float32)
    padded[:7] = x
    want = np.concatenate([fixed.run(padded[i:i + 3]) for i in range(0, 9, 3)])[:7]
    got = Predictor(lenet, batch_size=3)({"x": x})["probs"]
    np.testing.assert_array_equal(got, want)


def test_column_errors_name_the_columns(lenet):
    x = rand(2, 1, 28, 28)
    with pytest.raises(ValueError, match=r"which columns feed the model's inputs \['x'\]\? the batch has "
                                         r"\['a', 'b'\]: pass input_columns="):
        Predictor(lenet)({"a": x, "b": x})
    with pytest.raises(ValueError, match=r"column\(s\) \['image'\] not in the batch \(it has \['x'\]\)"):
        Predictor(lenet, input_columns="image")({"x": x})
    with pytest.raises(ValueError, match=r"input_columns: \['y'\] are not the model's inputs \['x'\]"):
        Predictor(lenet, input_columns={"y": "image"})
    with pytest.raises(ValueError, match=r"output_columns: expected 1 column name\(s\), one per model output"):
        Predictor(lenet, output_columns=["a", "b"])
    with pytest.raises(ValueError, match="expected dtype float32, got float64"):
        Predictor(lenet)({"x": x.astype(np.float64)})


def test_a_model_that_cannot_load_is_a_worker_load_error(lenet):
    with pytest.raises(dnnx.WorkerLoadError, match=r"could not be loaded on worker .* pid \d+, device 'cpu': "
                                                   r"InvalidModelError"):
        Predictor(b"junk")
    if not dnnx.cuda_available():  # a GPU actor on a machine without one
        with pytest.raises(dnnx.WorkerLoadError, match=r"device 'cuda': DeviceError: device 'cuda' is not available"):
            Predictor(lenet, device="cuda")
