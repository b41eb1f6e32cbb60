"""Absurd sizes fail fast (issue #18, Note [absurd sizes] in engine/runtime/size_check.h): a model
whose declared dims, attributes or constants make a tensor larger than the machine's memory is an
InvalidModelError at load, a caller's shapes that do the same are a ValueError, both in
milliseconds (not a minute of planning ending in std::bad_alloc), naming the tensor and the bytes."""
import time
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper

import dnnx
from dnnx.examples import build
from ort_check import make_model

HUGE = 2 ** 40
MODELS = Path(__file__).resolve().parents[2] / "shared" / "external" / "models"
FAST_S = 5.0  # generous: the point is that nothing takes seconds (it took 59-85 s before)


def with_input_dim(model: onnx.ModelProto, axis: int, value: int) -> onnx.ModelProto:
    model = onnx.ModelProto.FromString(model.SerializeToString())
    dim = model.graph.input[0].type.tensor_type.shape.dim[axis]
    dim.Clear()
    dim.dim_value = value
    return model


def refused(model, error, match, **load):
    start = time.perf_counter()
    with pytest.raises(error, match=match) as info:
        dnnx.load(model, **load)
    seconds = time.perf_counter() - start
    assert seconds < FAST_S, f"refused after {seconds:.1f} s"
    return str(info.value)


def bytes_in(message: str) -> int:
    """The first "<n> bytes" of a message."""
    words = message.split()
    return int(words[words.index("bytes") - 1])


def test_a_spatial_dim_of_2_to_the_40_is_refused_at_once_naming_the_input_and_its_bytes():
    model = with_input_dim(build("lenet"), 2, HUGE)
    shape = [d.dim_value or 1 for d in model.graph.input[0].type.tensor_type.shape.dim]
    name = model.graph.input[0].name
    message = refused(model, dnnx.InvalidModelError, rf"input '{name}'.*needs \d+ bytes .*more than the host has")
    assert bytes_in(message) == int(np.prod(shape)) * 4, message


@pytest.mark.parametrize("file", ["lenet5_mnist_b10.onnx", "cifar10_imageclassifier_winml.onnx"])
def test_the_issues_real_models_with_a_height_of_2_to_the_40(file):
    path = MODELS / file
    if not path.exists():
        pytest.skip(f"{path} not present")
    model = with_input_dim(onnx.load(str(path)), 2, HUGE)
    refused(model, dnnx.InvalidModelError, r"input '.*needs \d+ bytes")


def test_a_size_past_int64_saturates_instead_of_wrapping():
    # 2^40 * 2^40 elements wraps int64 to 0: read as empty, this would plan and "run".
    model = make_model([helper.make_node("Relu", ["x"], ["y"], name="act")], [("x", [HUGE, HUGE])],
                       [("y", [HUGE, HUGE])])
    refused(model, dnnx.InvalidModelError, r"input 'x': \[1099511627776,1099511627776\] float32 needs more than "
                                           r"2\^64 bytes")


def test_an_attribute_that_blows_up_an_output_names_the_node_and_output():
    # A pad of 2^40 on each side of a small image: the input is small, the Pad's output is not.
    node = helper.make_node("Pad", ["x", "pads"], ["y"], name="big_pad")
    pads = np.array([0, 0, HUGE, 0, 0, 0, HUGE, 0], np.int64)
    model = make_model([node], [("x", [1, 1, 4, 4])], [("y", None)], {"pads": pads})
    message = refused(model, dnnx.InvalidModelError, r"node 'big_pad' \(Pad\) output 'y'.*needs \d+ bytes")
    assert bytes_in(message) == (2 * HUGE + 4) * 4 * 4, message


def test_a_constant_folded_at_load_is_checked_before_it_is_allocated():
    # ConstantOfShape of a constant shape folds at load, on the host: 2^40 floats would be 4 TiB.
    shape = np.array([1024, HUGE // 1024], np.int64)
    nodes = [helper.make_node("ConstantOfShape", ["shape"], ["c"], name="fill"),
             helper.make_node("Add", ["x", "c"], ["y"], name="add")]
    model = make_model(nodes, [("x", [1, 1])], [("y", None)], {"shape": shape})
    refused(model, dnnx.InvalidModelError, r"node 'fill' \(ConstantOfShape\) output 'c'.*needs 4398046511104 bytes")


def tile_model():
    """[N, 1] -> Tile -> [N, 2^28]: a GiB per row, so a batch of 65536 needs 64 TiB."""
    return make_model([helper.make_node("Tile", ["x", "repeats"], ["y"], name="tile")], [("x", ["N", 1])],
                      [("y", None)], {"repeats": np.array([1, 2 ** 28], np.int64)})


def test_a_huge_batch_is_a_value_error_naming_the_tensor_and_bytes():
    model = dnnx.load(tile_model())  # batch 1 (a GiB of output) plans, and nothing is allocated yet
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"node 'tile' \(Tile\) output 'y': \[65536,268435456\] float32 needs "
                                         r"70368744177664 bytes .*for the input shapes given") as info:
        model.run(np.zeros((65536, 1), np.float32))
    assert time.perf_counter() - start < FAST_S
    assert not isinstance(info.value, dnnx.InvalidModelError)  # the caller's shapes, not the model


def test_a_huge_batch_asked_of_plan_is_a_value_error():
    model = dnnx.load(build("lenet"))
    name = model.inputs[0].name
    start = time.perf_counter()
    with pytest.raises(ValueError, match=rf"input '{name}'.*needs \d+ bytes"):
        model.plan(batch_size=HUGE)
    assert time.perf_counter() - start < FAST_S
    assert len(model.plan(batch_size=2)) > 0  # the model stays usable


def test_sizes_that_fit_still_plan():
    model = dnnx.load(tile_model())
    assert model.memory(batch_size=2)["arena_bytes"] >= 2 * 2 ** 28 * 4  # 2 GiB: planned, not allocated


def test_a_broadcast_view_of_billions_of_rows_is_a_value_error_not_a_copy():
    # A read-only broadcast view costs no memory, but the engine would copy it to C order first.
    model = dnnx.load(build("lenet"))
    x = np.broadcast_to(np.zeros((1, 1, 28, 28), np.float32), (2 ** 34, 1, 28, 28))
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"input 'x': a non-contiguous \[17179869184,1,28,28\] array, copied to C "
                                         r"order, needs 53876069761024 bytes"):
        model.run(x)
    assert time.perf_counter() - start < FAST_S
