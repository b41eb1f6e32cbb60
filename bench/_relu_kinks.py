"""How far an input lies from the kinks of a ReLU network, where a gradient is not continuous: a
Relu's input at 0 (the mask flips) and a MaxPool window whose two largest values tie (the
gradient moves to another element). Two float32 runs that sum in different orders (dnnx's CPU
and CUDA, or either against float64) differ by ~1e-6 of the activations after ~20 layers; an
element closer than that to a kink can take the other side on one of them, and then a gradient
differs by that element's whole contribution: not rounding, and no tolerance covers it.

Found on ResNet-18 of the zoo (session 24): at 224x224, batch 2, seed 3, one Relu input of
layer3.1's residual join is 2.5e-7 from 0, and CUDA's gradients of every layer below it were
~1e-3 off float64 while layer4's were within 4e-7 (bench/RESULTS_CUDA.md). At 224x224 a batch
has ~5 million Relu inputs, so some input always lies that close; a gradient check on a whole
ReLU network takes a smaller image and an input whose margin is measured (kink_margin).

The margin is measured with onnxruntime on the CPU (float32), with every Relu's input and every
MaxPool's input made graph outputs."""
from __future__ import annotations

from typing import Tuple

import numpy as np
import onnx
from onnx import helper


def at_size(model: onnx.ModelProto, height: int, width: int) -> onnx.ModelProto:
    """A copy of an image model whose first input takes [N, C, height, width] (fully convolutional
    networks with a global pool run at any size)."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    dims = model.graph.input[0].type.tensor_type.shape.dim
    dims[2].dim_value, dims[3].dim_value = height, width
    return model


def _max_pool_gap(x: np.ndarray, node: onnx.NodeProto) -> float:
    """The smallest gap between the largest and second largest value of a window whose largest is
    positive (a window of zeros after a Relu sends its gradient into a masked element whichever
    wins), for a 2-D MaxPool without dilation."""
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    (kh, kw), (sh, sw) = attrs["kernel_shape"], attrs.get("strides", [1, 1])
    pt, pl, pb, pr = attrs.get("pads", [0, 0, 0, 0])
    if any(d != 1 for d in attrs.get("dilations", [1, 1])) or attrs.get("ceil_mode", 0) or x.ndim != 4:
        raise ValueError(f"MaxPool {node.name!r}: only 2-D pools without dilation or ceil_mode are measured")
    padded = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)), constant_values=-np.inf)
    oh, ow = (padded.shape[2] - kh) // sh + 1, (padded.shape[3] - kw) // sw + 1
    windows = np.stack([padded[:, :, i:i + sh * oh:sh, j:j + sw * ow:sw] for i in range(kh) for j in range(kw)], -1)
    top = np.sort(windows, -1)
    positive = top[..., -1] > 0
    return float((top[..., -1] - top[..., -2])[positive].min()) if positive.any() else np.inf


def kink_margin(model: onnx.ModelProto, feeds: dict) -> Tuple[float, float]:
    """(the smallest |Relu input|, the smallest MaxPool gap) of the model on `feeds`."""
    import onnxruntime as ort

    probe = onnx.ModelProto.FromString(model.SerializeToString())
    relus = [n.input[0] for n in probe.graph.node if n.op_type == "Relu"]
    pools = [n for n in probe.graph.node if n.op_type == "MaxPool"]
    names = relus + [n.input[0] for n in pools]
    for name in names:
        probe.graph.output.append(helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    session = ort.InferenceSession(probe.SerializeToString(), providers=["CPUExecutionProvider"])
    values = dict(zip(names, session.run(names, feeds)))
    relu_margin = min((float(np.abs(values[n]).min()) for n in relus), default=np.inf)
    pool_gap = min((_max_pool_gap(values[n.input[0]], n) for n in pools), default=np.inf)
    return relu_margin, pool_gap
