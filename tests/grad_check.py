"""Gradient checks against float64 finite differences: the model is converted to float64 and run
by onnx's reference evaluator (an oracle independent of dnnx), the loss is computed in numpy,
and central differences along random directions are compared with dnnx's float32 gradients."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper
from onnx.reference import ReferenceEvaluator

import dnnx

EPS = 1e-4          # central-difference step (float64: truncation error ~ EPS^2)
DIRECTIONS = 3      # random directions per parameter
GRAD_RTOL = 2e-3    # of the directional derivative: dnnx computes in float32, the reference in float64
GRAD_NORM_TOL = 1e-4  # of the gradient's norm: float32 rounding spread over all its elements
GRAD_ATOL = 2e-5


def to_float64(model: onnx.ModelProto) -> onnx.ModelProto:
    out = onnx.ModelProto()
    out.CopyFrom(model)
    g = out.graph
    for i, t in enumerate(g.initializer):
        if t.data_type == TensorProto.FLOAT:
            g.initializer[i].CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float64), t.name))
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        if vi.type.tensor_type.elem_type == TensorProto.FLOAT:
            vi.type.tensor_type.elem_type = TensorProto.DOUBLE
    return out


def _log_softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


def reference_loss(model64, params: dict, feeds: dict, target, loss: str, scores: str = "logits",
                   reference_ops=()) -> float:
    """The loss in float64. scores: "logits" (cross entropy on the raw output), "probs" (the model
    ends in Softmax), "log_probs" (it ends in LogSoftmax). reference_ops: OpRun classes replacing
    the evaluator's own (where onnx's reference lacks a case, such as RNN's Relu)."""
    m = onnx.ModelProto()
    m.CopyFrom(model64)
    for i, t in enumerate(m.graph.initializer):
        if t.name in params:
            m.graph.initializer[i].CopyFrom(numpy_helper.from_array(params[t.name], t.name))
    evaluator = ReferenceEvaluator(m, new_ops=list(reference_ops) or None)
    y = evaluator.run(None, {k: v.astype(np.float64) for k, v in feeds.items()})[0]
    if loss == "mse":
        return float(np.mean((y - target) ** 2))
    logp = {"logits": lambda: _log_softmax(y), "probs": lambda: np.log(y), "log_probs": lambda: y}[scores]()
    return float(-np.mean(logp[np.arange(len(target)), target]))


def check_gradients(model: onnx.ModelProto, trainable: list, feeds: dict, target, loss: str = "mse",
                    scores: str = "logits", seed: int = 0, rtol: float = GRAD_RTOL, atol: float = GRAD_ATOL,
                    reference_ops=()):
    """dnnx's gradients of every parameter in `trainable` against float64 central differences
    along DIRECTIONS random unit directions; also returns them for further checks."""
    m = dnnx.load(model, optimize=False)
    tuner = m.finetune(trainable=trainable, loss=loss, momentum=0.0)
    x = [feeds[s.name] for s in m.inputs]
    got_loss, grads = tuner.gradients(x, target)
    model64 = to_float64(model)
    base = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in model64.graph.initializer}
    want_loss = reference_loss(model64, {}, feeds, target, loss, scores, reference_ops)
    np.testing.assert_allclose(got_loss, want_loss, rtol=1e-4, atol=1e-6)
    rng = np.random.default_rng(seed)
    for name in trainable:
        for _ in range(DIRECTIONS):
            v = rng.standard_normal(base[name].shape)
            v /= np.linalg.norm(v)
            plus = reference_loss(model64, {name: base[name] + EPS * v}, feeds, target, loss, scores, reference_ops)
            minus = reference_loss(model64, {name: base[name] - EPS * v}, feeds, target, loss, scores, reference_ops)
            numeric = (plus - minus) / (2 * EPS)
            analytic = float(np.sum(grads[name].astype(np.float64) * v))
            scale = np.linalg.norm(grads[name])
            assert abs(analytic - numeric) <= atol + rtol * abs(numeric) + GRAD_NORM_TOL * scale, (
                f"{name}: dnnx {analytic:.6g} vs float64 finite difference {numeric:.6g} (|grad| {scale:.3g})")
    return grads
