"""Plan-time folding on CUDA (Note [plan-time folding] in engine/runtime/plan_folding.h): the
shape computations run on the host when a plan is built, their values are uploaded with the plan,
and a symbolic-batch export runs at any batch; alternating batches replay each shape's own graph."""
import numpy as np
import pytest

import dnnx
from ort_check import rand, run_ort
from test_plan_folding import channel_shuffle, flatten_by_shape, zero_state_plus, zoo

FP32_RTOL, FP32_ATOL = 1e-4, 1e-5  # fp32 on cuDNN/cuBLAS: summation order only


@pytest.mark.parametrize("build", [flatten_by_shape, channel_shuffle, zero_state_plus])
def test_symbolic_batch_on_cuda(build):
    model = build()
    m = dnnx.load(model, device="cuda")
    shape = [d.dim_value or 1 for d in model.graph.input[0].type.tensor_type.shape.dim]
    for _ in range(2):  # alternating batches: each plan's captured graph, never a stale one
        for batch in (1, 2, 5):
            x = rand(batch, *shape[1:], seed=batch)
            np.testing.assert_allclose(m.run(x), run_ort(model, {"x": x})["y"], rtol=FP32_RTOL, atol=FP32_ATOL)


@pytest.mark.parametrize("name", ["lstm_bi", "shufflenet_v2_x1_0"])
def test_dynamic_batch_zoo_exports_on_cuda(name):
    model = zoo(name)
    m = dnnx.load(model, device="cuda")
    inp = model.graph.input[0]
    dims = [d.dim_value if d.HasField("dim_value") else None for d in inp.type.tensor_type.shape.dim]
    for batch in (1, 2, 5):
        x = rand(*[batch if d is None else d for d in dims], seed=batch)
        want = run_ort(model, {inp.name: x})
        got = m.run_dict({inp.name: x})
        for out, value in want.items():
            np.testing.assert_allclose(got[out], value, rtol=1e-3, atol=1e-4, err_msg=f"{name} batch {batch} {out}")


@pytest.mark.parametrize("name", ["shufflenet_v2_x1_0", "resnet18"])
@pytest.mark.parametrize("precision", ["fp32", "tf32"])
def test_a_symbolic_batch_export_plans_as_a_fixed_one_on_cuda(name, precision):
    from test_plan_folding import fixed_batch, kernel_rows

    model = zoo(name)
    # measure_layout=False: the layout is timed at each load's own shapes (Note [measured layout]),
    # the symbolic export's at batch 1 and the fixed one's at its batch; the plans compared here
    # are the rewrite's and the planner's for the same shapes
    for batch in (1, 64):
        symbolic = kernel_rows(model, batch, device="cuda", precision=precision, measure_layout=False)
        fixed = kernel_rows(fixed_batch(model, batch), batch, device="cuda", precision=precision, measure_layout=False)
        assert symbolic == fixed, f"{name} {precision} batch {batch}"
