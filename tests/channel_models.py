"""Models whose channel-axis ops (Concat, Split, Slice, the channel shuffle) the channels_last
pass keeps channels-last (Note [channels-last forms] and Note [channel shuffle] in
engine/runtime/passes/channels_last.cc), for the CPU and CUDA tests."""
import numpy as np
from onnx import helper

from ort_check import make_model, rand
from residual_models import weights


def dense_block(growth, pool_pads=(0, 0, 0, 0), count_include_pad=0, epsilon=1e-5):
    """A DenseNet block and transition: x [N, 32, 12, 12] -> conv; the concatenation of x and it
    -> BatchNormalization + Relu -> a 1x1 conv -> a 2x2 AveragePool -> y; and a Split of the
    concatenation on channels, its parts concatenated in the other order -> BatchNormalization
    (no conv before it) -> a 1x1 conv -> z."""
    c = 32 + growth
    bn = lambda s: [(rand(c, seed=s) * 0.2 + 1).astype(np.float32), rand(c, seed=s + 1) * 0.1,
                    rand(c, seed=s + 2) * 0.1, (np.abs(rand(c, seed=s + 3)) + 0.5).astype(np.float32)]
    inits = {"w": weights(growth, 32, 3, 3, seed=1), "w2": weights(c, c, 1, 1, seed=2)}
    for prefix, seed in (("a", 10), ("b", 20)):
        inits.update(dict(zip([prefix + "_s", prefix + "_b", prefix + "_m", prefix + "_v"], bn(seed))))
    half = c // 2
    inits["sizes"] = np.array([half, c - half], np.int64)
    nodes = [helper.make_node("Conv", ["x", "w"], ["g"], name="grow", pads=[1, 1, 1, 1]),
             helper.make_node("Concat", ["x", "g"], ["cat"], name="concat", axis=1),
             helper.make_node("BatchNormalization", ["cat", "a_s", "a_b", "a_m", "a_v"], ["n"], name="norm",
                              epsilon=epsilon),
             helper.make_node("Relu", ["n"], ["r"], name="relu"),
             helper.make_node("Conv", ["r", "w2"], ["t"], name="transition"),
             helper.make_node("AveragePool", ["t"], ["y"], name="pool", kernel_shape=[2, 2], strides=[2, 2],
                              pads=list(pool_pads), count_include_pad=count_include_pad),
             helper.make_node("Split", ["cat", "sizes"], ["lo", "hi"], name="split", axis=1),
             helper.make_node("Concat", ["hi", "lo"], ["swapped"], name="swap", axis=1),
             helper.make_node("BatchNormalization", ["swapped", "b_s", "b_b", "b_m", "b_v"], ["sn"], name="norm2"),
             helper.make_node("Conv", ["sn", "w2"], ["z"], name="after_split")]
    return make_model(nodes, [("x", ["N", 32, 12, 12])], [("y", None), ("z", None)], inits)


def shuffle_unit(dynamic_shapes, axes_dtype=np.int64, grouped_output=False):
    """A ShuffleNetV2 unit: x [N, 32, 6, 6] -> conv -> Slice of each half of its channels (constant
    axes [1]) -> a conv of the second half -> Concat with the first -> the channel shuffle, Reshape
    to [N, 2, 16, 6, 6], Transpose [0, 2, 1, 3, 4], Reshape back (the shapes from Shape as torch
    exports them, or constants) -> conv -> y. grouped_output: the transposed 5-D value is a
    graph output too."""
    c, h = 32, 6
    i64 = lambda *v: np.array(v, np.int64)
    inits = {"w0": weights(c, c, 3, 3, seed=1), "w1": weights(c // 2, c // 2, 1, 1, seed=2),
             "w2": weights(c, c, 1, 1, seed=3), "lo_start": np.array([0], axes_dtype),
             "lo_end": np.array([c // 2], axes_dtype), "hi_end": np.array([c], axes_dtype),
             "axes": np.array([1], axes_dtype)}
    nodes = [helper.make_node("Conv", ["x", "w0"], ["a"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Slice", ["a", "lo_start", "lo_end", "axes"], ["lo"]),
             helper.make_node("Slice", ["a", "lo_end", "hi_end", "axes"], ["hi"]),
             helper.make_node("Conv", ["hi", "w1"], ["b"], kernel_shape=[1, 1]),
             helper.make_node("Concat", ["lo", "b"], ["cat"], axis=1)]
    if dynamic_shapes:
        inits.update({"zero": i64(0), "one": i64(1), "two": i64(2), "four": i64(4), "groups": i64(2),
                      "per_group": i64(c // 2), "channels": i64(c)})
        nodes += [helper.make_node("Shape", ["cat"], ["shape"]),
                  helper.make_node("Slice", ["shape", "zero", "one"], ["n"]),
                  helper.make_node("Slice", ["shape", "two", "four"], ["hw"]),
                  helper.make_node("Concat", ["n", "groups", "per_group", "hw"], ["grouped_shape"], axis=0),
                  helper.make_node("Concat", ["n", "channels", "hw"], ["flat_shape"], axis=0)]
        for name in ("zero", "one", "two", "four", "groups", "per_group", "channels"):
            inits[name] = inits[name].reshape(1)
    else:
        inits.update({"grouped_shape": i64(-1, 2, c // 2, h, h), "flat_shape": i64(-1, c, h, h)})
    nodes += [helper.make_node("Reshape", ["cat", "grouped_shape"], ["g"]),
              helper.make_node("Transpose", ["g"], ["t"], perm=[0, 2, 1, 3, 4]),
              helper.make_node("Reshape", ["t", "flat_shape"], ["s"]),
              helper.make_node("Conv", ["s", "w2"], ["y"], kernel_shape=[1, 1])]
    outputs = [("y", None)] + ([("t", None)] if grouped_output else [])
    return make_model(nodes, [("x", ["N", c, h, h])], outputs, inits, opset=17)



def mean_gate(keepdims, axes=(2, 3), axes_as_input=True):
    """timm's squeeze-and-excitation: x [N, 32, 7, 7] -> conv -> ReduceMean over `axes` -> 1x1
    convs -> Sigmoid -> Mul with the conv's output -> y; without keepdims, the mean [N, 32] is
    a second output (a pooled head)."""
    c = 32
    inits = {"w": weights(c, c, 3, 3, seed=1), "w1": weights(8, c, 1, 1, seed=2), "w2": weights(c, 8, 1, 1, seed=3)}
    mean_inputs = ["a"]
    mean_attrs = {"keepdims": keepdims}
    if axes_as_input:
        inits["axes"] = np.array(axes, np.int64)
        mean_inputs.append("axes")
    else:
        mean_attrs["axes"] = list(axes)
    nodes = [helper.make_node("Conv", ["x", "w"], ["a"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("ReduceMean", mean_inputs, ["m"], **mean_attrs)]
    if keepdims:
        nodes += [helper.make_node("Conv", ["m", "w1"], ["h"], kernel_shape=[1, 1]),
                  helper.make_node("Relu", ["h"], ["r"]),
                  helper.make_node("Conv", ["r", "w2"], ["g"], kernel_shape=[1, 1]),
                  helper.make_node("Sigmoid", ["g"], ["s"]),
                  helper.make_node("Mul", ["a", "s"], ["y"])]
        outputs = [("y", None)]
    else:
        nodes.append(helper.make_node("Relu", ["a"], ["y"]))
        outputs = [("y", None), ("m", None)]
    return make_model(nodes, [("x", ["N", c, 7, 7])], outputs, inits, opset=18 if axes_as_input else 17)
