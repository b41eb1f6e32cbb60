"""Control flow and staged plans on CUDA (Note [staged plans] in engine/runtime/stages.h): the
decisions and the value-shaped nodes run on the host, every stage's plan and every body on the
device; results equal the CPU's. The models are tests/test_control_flow.py's."""
import numpy as np
from onnx import TensorProto, helper

import dnnx
from ort_check import make_model, rand
from test_control_flow import B, F, I64, _nonzero_model, vi


def _both(model, *inputs):
    cpu = dnnx.load(model).run_dict(*inputs)
    gpu_model = dnnx.load(model, device="cuda")
    gpu = gpu_model.run_dict(*inputs)
    for name, want in cpu.items():
        assert gpu[name].shape == want.shape, name
        np.testing.assert_allclose(gpu[name], want, rtol=1e-5, atol=1e-6, err_msg=name)
    return gpu_model


def test_staged_nonzero_plan_matches_the_cpu_and_is_captured_per_stage():
    x = rand(3, 4)
    m = _both(_nonzero_model(), x)
    assert any(r["algorithm"].startswith("staged:") for r in m.plan())
    for _ in range(3):
        m.run(x)  # the second run of each stage's plan records its graph, the third replays it
    assert m.graphs(), "the stage before NonZero runs as a plan of its own"
    _both(_nonzero_model(), -np.abs(x) - 1)  # all false: empty outputs


def test_loop_with_growing_carried_value_on_the_device():
    body = helper.make_graph(
        [helper.make_node("Concat", ["y_in", "y_in"], ["y_out"], axis=0),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "double", [vi("i", I64, []), vi("cond_in", B, []), vi("y_in", F, None)],
        [vi("cond_out", B, []), vi("y_out", F, None)])
    model = make_model([helper.make_node("Loop", ["M", "", "y0"], ["y"], body=body)],
                       [("M", [], I64), ("y0", [3])], [("y", ["Y"])])
    m = _both(model, np.array(3, np.int64), rand(3))
    assert any(s["stage"].endswith("body") for s in m.planner_stats()["stages"])
