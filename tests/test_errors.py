"""Every failure a user can cause is a clear Python exception naming what went wrong."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import dnnx
from ort_check import make_model, rand


def relu_model():
    return make_model([helper.make_node("Relu", ["x"], ["y"], name="act")], [("x", ["N", 3])], [("y", ["N", 3])])


def test_unsupported_op_names_node_op_and_supported_list():
    # Multinomial: a random op dnnx does not run
    model = make_model([helper.make_node("Multinomial", ["x"], ["y"], name="my_draw", sample_size=2)], [("x", [2, 3])],
                       [("y", [2, 2], TensorProto.INT32)])
    with pytest.raises(dnnx.UnsupportedModelError, match=r"node 'my_draw' \(Multinomial\).*not supported.*Conv"):
        dnnx.load(model)


def test_attribute_unknown_to_onnx_is_invalid_and_named():
    node = helper.make_node("Gemm", ["a", "b"], ["y"], name="fc", bogus=3)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("a", 1, [2, 2]),
                                             helper.make_tensor_value_info("b", 1, [2, 2])],
                              [helper.make_tensor_value_info("y", 1, [2, 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(dnnx.InvalidModelError, match="bogus"):
        dnnx.load(model)


def test_unsupported_output_is_refused_at_load():
    # BatchNormalization's running statistics (training outputs) at inference.
    node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "running_mean", "running_var"],
                            name="bn")
    params = {k: np.ones(2, np.float32) for k in "sbmv"}
    model = make_model([node], [("x", [1, 2, 3])], [("y", [1, 2, 3]), ("running_mean", [2]), ("running_var", [2])],
                       params)
    with pytest.raises(dnnx.UnsupportedModelError, match=r"node 'bn' \(BatchNormalization\).*output 1"):
        dnnx.load(model)


def test_custom_domain_is_refused():
    node = helper.make_node("Foo", ["x"], ["y"], name="custom", domain="com.example")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", 1, [2])],
                              [helper.make_tensor_value_info("y", 1, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.example", 1)])
    with pytest.raises(dnnx.UnsupportedModelError, match="custom.*com.example"):
        dnnx.load(model)


def test_unsupported_input_dtype():
    model = make_model([helper.make_node("Identity", ["x"], ["y"])], [("x", [2], TensorProto.COMPLEX64)],
                       [("y", [2], TensorProto.COMPLEX64)])
    with pytest.raises(dnnx.UnsupportedModelError, match="graph input 'x'.*COMPLEX64"):
        dnnx.load(model)


def test_shape_mismatch_at_load_names_node_and_shapes():
    model = make_model([helper.make_node("Gemm", ["x", "w"], ["y"], name="fc")], [("x", [2, 3])], [("y", [2, 5])],
                       {"w": rand(4, 5)})
    with pytest.raises(dnnx.InvalidModelError, match=r"node 'fc' \(Gemm\).*\[2,3\].*\[4,5\]"):
        dnnx.load(model)


def test_wrong_input_count():
    m = dnnx.load(relu_model())
    with pytest.raises(ValueError, match=r"expected 1 input\(s\) \(x\), got 2"):
        m.run(rand(1, 3), rand(1, 3))


def test_wrong_input_shape_names_input_expected_and_got():
    m = dnnx.load(relu_model())
    with pytest.raises(ValueError, match=r"input 'x': expected \[N,3\] float32, got \[2,4\] float32"):
        m.run(rand(2, 4))
    with pytest.raises(ValueError, match=r"input 'x'.*got \[3\]"):
        m.run(rand(3))


def test_wrong_input_dtype_names_input():
    m = dnnx.load(relu_model())
    with pytest.raises(ValueError, match="input 'x': expected dtype float32, got float64"):
        m.run(np.zeros((1, 3)))
    with pytest.raises(ValueError, match="input 'x': expected dtype float32, got int64"):
        m.run(np.zeros((1, 3), dtype=np.int64))


def test_wrong_input_names():
    m = dnnx.load(relu_model())
    with pytest.raises(ValueError, match=r"missing \['x'\], unknown \['z'\]"):
        m.run({"z": rand(1, 3)})


def test_model_stays_usable_after_an_input_error():
    m = dnnx.load(relu_model())
    with pytest.raises(ValueError):
        m.run(rand(2, 4))
    x = rand(2, 3)
    np.testing.assert_array_equal(m.run(x), np.maximum(x, 0))


@pytest.mark.parametrize("payload", [b"", b"\x00", b"garbage bytes that are not protobuf \xff\xfe",
                                     bytes(range(256)) * 4])
def test_garbage_bytes_raise_invalid_model_error(payload):
    with pytest.raises(dnnx.InvalidModelError):
        dnnx.load(payload)


def test_truncated_files_never_crash(tmp_path):
    data = relu_model().SerializeToString()
    for cut in range(1, len(data)):
        path = tmp_path / "cut.onnx"
        path.write_bytes(data[:cut])
        with pytest.raises(dnnx.DnnxError):
            dnnx.load(path)


def test_missing_file():
    with pytest.raises(FileNotFoundError, match="nope.onnx"):
        dnnx.load("/nonexistent/nope.onnx")


def test_wrong_source_type():
    with pytest.raises(TypeError, match="path, bytes or onnx.ModelProto"):
        dnnx.load(42)


def _model_with_external_weight(location):
    w = numpy_helper.from_array(rand(3, 3), "w")
    w.ClearField("raw_data")
    w.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", "0"), ("length", str(9 * 4))):
        entry = w.external_data.add()
        entry.key, entry.value = key, value
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", 1, [1, 3])],
                              [helper.make_tensor_value_info("y", 1, [1, 3])], initializer=[w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_external_data_leaving_the_model_folder_is_refused(tmp_path):
    (tmp_path / "secret.bin").write_bytes(rand(3, 3).tobytes())
    folder = tmp_path / "model"
    folder.mkdir()
    path = folder / "m.onnx"
    path.write_bytes(_model_with_external_weight("../secret.bin").SerializeToString())
    with pytest.raises(dnnx.InvalidModelError, match="leaves the model's folder"):
        dnnx.load(path)
    path.write_bytes(_model_with_external_weight("/etc/passwd").SerializeToString())
    with pytest.raises(dnnx.InvalidModelError):
        dnnx.load(path)


def test_external_data_inside_the_folder_loads(tmp_path):
    w = rand(3, 3)
    (tmp_path / "w.bin").write_bytes(w.tobytes())
    path = tmp_path / "m.onnx"
    path.write_bytes(_model_with_external_weight("w.bin").SerializeToString())
    x = rand(1, 3)
    np.testing.assert_allclose(dnnx.load(path).run(x), x @ w, rtol=1e-5)


def test_external_data_file_missing(tmp_path):
    path = tmp_path / "m.onnx"
    path.write_bytes(_model_with_external_weight("absent.bin").SerializeToString())
    with pytest.raises(dnnx.InvalidModelError, match="not found"):
        dnnx.load(path)


def test_checker_failure_is_invalid_model_error():
    model = relu_model()
    model.graph.node[0].input[0] = "undefined_tensor"
    with pytest.raises(dnnx.InvalidModelError):
        dnnx.load(model.SerializeToString())


@pytest.mark.parametrize("value", [-1, 2.5, True, "4"])
def test_bad_batch_size(value):
    with pytest.raises(ValueError, match=r"batch_size must be an int >= 0 \(0: an empty batch\), got"):
        dnnx.load(relu_model(), batch_size=value)


def test_unknown_device():
    with pytest.raises(dnnx.DeviceError, match="device 'tpu'"):
        dnnx.load(relu_model(), device="tpu")


def _small_mixed_model():
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Flatten", ["p1"], ["f"]),
             helper.make_node("Gemm", ["f", "w2", "b2"], ["g"], transB=1),
             helper.make_node("Reshape", ["g", "s"], ["rs"]),
             helper.make_node("Softmax", ["rs"], ["y"], axis=-1),
             helper.make_node("LSTM", ["xs", "W", "R"], ["Y", "Yh"], hidden_size=3)]
    weights = {"w1": rand(2, 1, 3, 3), "b1": rand(2), "w2": rand(4, 2 * 4 * 4), "b2": rand(4),
               "s": np.array([-1, 4], np.int64), "W": rand(1, 12, 2), "R": rand(1, 12, 3)}
    return make_model(nodes, [("x", ["N", 1, 8, 8]), ("xs", [4, 2, 2])], [("y", None), ("Yh", None)], weights)


def test_mutated_files_raise_or_run_but_never_crash():
    """Seeded byte mutations of a small model (conv, pool, gemm, reshape, softmax, LSTM): every
    one either loads and runs or raises a Python exception; none may crash the process."""
    data = _small_mixed_model().SerializeToString()
    rng = np.random.default_rng(1234)
    inputs = (rand(2, 1, 8, 8), rand(4, 2, 2, seed=1))
    outcomes = {"ran": 0, "refused": 0}
    for _ in range(400):
        mutated = bytearray(data)
        for _ in range(rng.integers(1, 4)):
            mutated[rng.integers(0, len(mutated))] = rng.integers(0, 256)
        try:
            model = dnnx.load(bytes(mutated))
        except (dnnx.DnnxError, ValueError, MemoryError):
            outcomes["refused"] += 1
            continue
        try:
            model.run(*inputs)
        except (dnnx.DnnxError, ValueError, MemoryError):
            pass
        outcomes["ran"] += 1
    assert outcomes["refused"] > 0 and outcomes["ran"] > 0, outcomes
