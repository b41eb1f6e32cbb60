"""Fine-tuning real backbones (issue #15): ResNet-18, MobileNetV2 and EfficientNet-B0 from
../shared/external/zoo, input resized (the graphs pool globally, so any H x W runs), on a
synthetic 10-class task whose classes are fixed random input patterns under noise."""
import numpy as np
import onnx

from zoo_check import zoo_model

BACKBONES = ["resnet18", "mobilenet_v2", "efficientnet_b0"]
CLASSES = 10


def resized(name, side):
    """The backbone with its input's H and W set to `side` (batch left symbolic)."""
    model = onnx.ModelProto()
    model.CopyFrom(zoo_model(name))
    dims = model.graph.input[0].type.tensor_type.shape.dim
    for d in dims[2:]:
        d.Clear()
        d.dim_value = side
    return model


def pattern_task(side, per_class, seed):
    """x [n, 3, side, side]: class k's pattern (fixed, smooth: low-frequency noise upsampled) plus
    noise of half its scale; y: int64 labels. A fixed seed makes the patterns the same for every
    split; `seed` draws the noise and order."""
    patterns = np.random.default_rng(1234).standard_normal((CLASSES, 3, 8, 8)).astype(np.float32)
    patterns = np.repeat(np.repeat(patterns, side // 8, axis=2), side // 8, axis=3)
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(CLASSES), per_class)
    rng.shuffle(y)
    x = patterns[y] + 0.5 * rng.standard_normal((len(y), 3, side, side)).astype(np.float32)
    return x.astype(np.float32), y.astype(np.int64)
