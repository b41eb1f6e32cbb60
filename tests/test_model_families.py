"""Building blocks of well-known CNN families, built with onnx.helper and compared with
onnxruntime at batch 1 and 8, with the rewrite passes on (the default) and off: a ResNet basic
block (BatchNormalization, residual Add, a strided 1x1 shortcut), an Inception module (four
branches into a Concat, max and average pooling), a ShuffleNet unit (grouped conv, channel
shuffle by Reshape/Transpose, depthwise conv), a DenseNet block (pre-activation BN, growing
Concat, transition with AveragePool), a SqueezeNet fire module with a GlobalAveragePool head,
and a PyTorch-style export whose flatten is a Shape/Gather/Unsqueeze/Concat/Reshape chain."""
import numpy as np
import pytest
from onnx import helper

import dnnx
from ort_check import assert_matches_ort, make_model, rand


class Builder:
    """Accumulates nodes and random weights; each method returns its output's name."""

    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.count = [], {}, 0

    def _name(self, kind):
        self.count += 1
        return f"{kind}{self.count}"

    def node(self, op, inputs, **attrs):
        out = self._name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def weight(self, *shape, scale=None):
        name = self._name("w")
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
        std = scale if scale is not None else np.sqrt(2.0 / fan_in)
        self.inits[name] = (self.rng.standard_normal(shape) * std).astype(np.float32)
        return name

    def conv(self, x, c_in, c_out, k=3, stride=1, group=1, bias=True):
        inputs = [x, self.weight(c_out, c_in // group, k, k)] + ([self.weight(c_out, scale=0.1)] if bias else [])
        pad = k // 2
        return self.node("Conv", inputs, kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4,
                         group=group)

    def bn(self, x, c):
        stats = [self.weight(c, scale=0.2), self.weight(c, scale=0.1), self.weight(c, scale=0.1)]
        var = self._name("var")
        self.inits[var] = self.rng.uniform(0.5, 1.5, c).astype(np.float32)
        self.inits[stats[0]] += 1.0  # scale around 1
        return self.node("BatchNormalization", [x, stats[0], stats[1], stats[2], var], epsilon=1e-5)

    def relu(self, x):
        return self.node("Relu", [x])

    def conv_bn_relu(self, x, c_in, c_out, k=3, stride=1, group=1):
        return self.relu(self.bn(self.conv(x, c_in, c_out, k, stride, group, bias=False), c_out))

    def const(self, values):
        name = self._name("c")
        self.inits[name] = np.asarray(values)
        return name

    def model(self, out, x_shape, opset=17, y_shape=None):
        """The graph so far with input "x" and the last node's output renamed "y" (its shape
        inferred unless given)."""
        assert self.nodes[-1].output[0] == out
        self.nodes[-1].output[0] = "y"
        return make_model(self.nodes, [("x", x_shape)], [("y", y_shape)], self.inits, opset=opset)


def resnet_basic_block(downsample):
    b, c_in = Builder(1), 8
    c_out, stride = (16, 2) if downsample else (8, 1)
    h = b.conv_bn_relu("x", c_in, c_out, stride=stride)
    h = b.bn(b.conv(h, c_out, c_out, bias=False), c_out)
    shortcut = b.bn(b.conv("x", c_in, c_out, k=1, stride=2, bias=False), c_out) if downsample else "x"
    out = b.relu(b.node("Add", [h, shortcut]))
    return b.model(out, ["N", c_in, 8, 8])


def inception_module():
    b, c = Builder(2), 16
    branch1 = b.relu(b.conv("x", c, 8, k=1))
    branch3 = b.relu(b.conv(b.relu(b.conv("x", c, 6, k=1)), 6, 8, k=3))
    branch5 = b.relu(b.conv(b.relu(b.conv("x", c, 4, k=1)), 4, 6, k=5))
    pooled = b.node("MaxPool", ["x"], kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1])
    branch_pool = b.relu(b.conv(pooled, c, 4, k=1))
    avg = b.node("AveragePool", ["x"], kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1], count_include_pad=0)
    branch_avg = b.relu(b.conv(avg, c, 4, k=1))
    out = b.node("Concat", [branch1, branch3, branch5, branch_pool, branch_avg], axis=1)
    return b.model(out, ["N", c, 7, 7])


def shufflenet_unit(groups=2):
    b, c, hw = Builder(3), 8, 6
    h = b.conv_bn_relu("x", c, c, k=1, group=groups)
    # channel shuffle: [N, g, C/g, H, W] -> swap the group axes -> back to [N, C, H, W]
    h = b.node("Reshape", [h, b.const(np.array([-1, groups, c // groups, hw, hw], np.int64))])
    h = b.node("Transpose", [h], perm=[0, 2, 1, 3, 4])
    h = b.node("Reshape", [h, b.const(np.array([-1, c, hw, hw], np.int64))])
    h = b.bn(b.conv(h, c, c, k=3, group=c, bias=False), c)  # depthwise
    h = b.bn(b.conv(h, c, c, k=1, group=groups, bias=False), c)
    out = b.relu(b.node("Add", [h, "x"]))
    return b.model(out, ["N", c, hw, hw])


def densenet_block(layers=3, growth=4):
    b, c = Builder(4), 8
    features = "x"
    for _ in range(layers):
        h = b.relu(b.bn(features, c))  # pre-activation: BN before the conv (no fold)
        h = b.conv_bn_relu(h, c, 4 * growth, k=1)  # bottleneck: this BN follows a conv (folds)
        h = b.conv(h, 4 * growth, growth, k=3, bias=False)
        features = b.node("Concat", [features, h], axis=1)
        c += growth
    h = b.conv(b.relu(b.bn(features, c)), c, c // 2, k=1, bias=False)  # transition
    out = b.node("AveragePool", [h], kernel_shape=[2, 2], strides=[2, 2])
    return b.model(out, ["N", 8, 8, 8])


def squeezenet_fire():
    b, c = Builder(5), 16
    squeeze = b.relu(b.conv("x", c, 4, k=1))
    expand1 = b.relu(b.conv(squeeze, 4, 8, k=1))
    expand3 = b.relu(b.conv(squeeze, 4, 8, k=3))
    fire = b.node("Concat", [expand1, expand3], axis=1)
    logits = b.relu(b.conv(fire, 16, 10, k=1))
    pooled = b.node("GlobalAveragePool", [logits])
    out = b.node("Softmax", [b.node("Flatten", [pooled], axis=1)], axis=1)
    return b.model(out, ["N", c, 9, 9])


def pytorch_style_export():
    """``x = relu(conv(x)); x = x.view(x.size(0), -1); relu(linear(x))`` as torch.onnx exports it,
    Linear as MatMul + Add."""
    b, c = Builder(6), 3
    h = b.relu(b.conv("x", c, 4, k=3))
    shape = b.node("Shape", [h])
    batch = b.node("Gather", [shape, b.const(np.array(0, np.int64))], axis=0)
    batch = b.node("Unsqueeze", [batch, b.const(np.array([0], np.int64))])
    target = b.node("Concat", [batch, b.const(np.array([-1], np.int64))], axis=0)
    flat = b.node("Reshape", [h, target])
    fc = b.node("Add", [b.node("MatMul", [flat, b.weight(4 * 5 * 5, 6)]), b.weight(6, scale=0.1)])
    out = b.relu(fc)
    return b.model(out, ["N", c, 5, 5], opset=13, y_shape=["N", 6])  # inference cannot see through the chain


FAMILIES = {
    "resnet_basic_block": (lambda: resnet_basic_block(False), [8, 8, 8]),
    "resnet_downsample_block": (lambda: resnet_basic_block(True), [8, 8, 8]),
    "inception_module": (inception_module, [16, 7, 7]),
    "shufflenet_unit": (shufflenet_unit, [8, 6, 6]),
    "densenet_block": (densenet_block, [8, 8, 8]),
    "squeezenet_fire": (squeezenet_fire, [16, 9, 9]),
    "pytorch_style_export": (pytorch_style_export, [3, 5, 5]),
}


@pytest.mark.parametrize("optimize", [True, False])
@pytest.mark.parametrize("batch", [1, 8])
@pytest.mark.parametrize("family", list(FAMILIES))
def test_family_matches_onnxruntime(family, batch, optimize):
    build, x_shape = FAMILIES[family]
    x = rand(batch, *x_shape, seed=batch)
    # The PyTorch export's flatten needs the batch at load (its Shape chain folds then).
    assert_matches_ort(build(), {"x": x}, batch_size=batch, optimize=optimize, rtol=1e-4, atol=1e-4)


def plan_ops(family, **load_kwargs):
    return [row["op"] for row in dnnx.load(FAMILIES[family][0](), batch_size=2, **load_kwargs).plan()]


def test_resnet_block_plan_after_the_passes():
    ops = plan_ops("resnet_downsample_block")
    assert "BatchNormalization" not in ops  # all three follow a Conv: folded
    # conv_a + BN + Relu, the downsample conv + BN, then conv_b + BN + the residual Add + Relu as
    # one layer (fuse_conv_add_relu), placed after the downsample conv whose output it adds
    assert ops == ["Conv+Relu", "Conv", "Conv+Add+Relu"], ops
    assert plan_ops("resnet_basic_block") == ["Conv+Relu", "Conv+Add+Relu"]
    assert plan_ops("resnet_downsample_block", passes={"fuse_conv_add_relu": False})[-2:] == ["Add", "Relu"]
    assert plan_ops("resnet_downsample_block", optimize=False).count("BatchNormalization") == 3


def test_densenet_plan_keeps_pre_activation_batchnorm():
    ops = plan_ops("densenet_block")
    # before a conv: nothing to fold into; each with its Relu as one layer (fuse_batchnorm_relu)
    assert ops.count("BatchNormalization+Relu") == 4 and "BatchNormalization" not in ops and "Relu" not in ops, ops
    assert ops.count("Conv+Relu") == 3           # the bottleneck conv + BN + Relu of each layer


def test_pytorch_export_plan_has_no_shape_arithmetic():
    rows = dnnx.load(FAMILIES["pytorch_style_export"][0](), batch_size=2).plan()
    ops = [r["op"] for r in rows if not r["algorithm"].startswith("folded at plan time")]
    assert ops == ["Conv+Relu", "Reshape", "Gemm+Relu"], ops
