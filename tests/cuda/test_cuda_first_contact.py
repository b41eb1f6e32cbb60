"""Issue #34's first-contact cases on CUDA: models that load and match at fp32 must at every
precision. Each load runs in a child process, so that a crash (a segfault in dnnx.load at fp16 on
ViT-Tiny's TorchScript export, once) fails its test instead of ending the session. Bounds are
tests/cuda/test_cuda_zoo_models.py's (relative to the output's largest magnitude)."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from zoo_check import relative_error, zoo2_inputs, zoo2_model  # noqa: E402

BOUNDS = {"fp32": 1e-3, "tf32": 3e-2, "fp16": 5e-2, "bf16": 0.2}


CHILD = """
import sys, warnings
import numpy as np
sys.path.insert(0, {tests!r})
import dnnx
from zoo_check import zoo2_inputs, zoo2_model
model = zoo2_model({name!r})
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    m = dnnx.load(model, device="cuda", precision={precision!r})
np.save({out!r}, m.run_dict(zoo2_inputs({name!r}, model, {batch}))[model.graph.output[0].name])
"""


def _in_child(name, precision, batch, tmp_path):
    out = str(tmp_path / "y.npy")
    code = CHILD.format(tests=str(Path(__file__).resolve().parents[1]), name=name, precision=precision,
                        batch=batch, out=out)
    try:
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{name} at {precision}: no result in 300 s (a hang)")
    assert r.returncode == 0, f"{name} at {precision}: exit code {r.returncode}\n{r.stderr[-2000:]}"
    return np.load(out)


@pytest.mark.parametrize("precision", list(BOUNDS))
@pytest.mark.parametrize("name", ["rexnet_100", "vit_tiny_patch16_224_ts"])
def test_zoo2_model_at_every_precision(name, precision, tmp_path):
    import onnxruntime as ort

    model = zoo2_model(name)
    feeds = zoo2_inputs(name, model, 1)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = sess.run([model.graph.output[0].name], feeds)[0]
    got = _in_child(name, precision, 1, tmp_path)
    assert got.shape == want.shape
    assert np.all(np.isfinite(got)), f"{name} {precision}: non-finite outputs"
    assert relative_error(got, want) < BOUNDS[precision], f"{name} {precision}: {relative_error(got, want)}"
