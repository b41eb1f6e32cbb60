"""Note [measured layout]: on CUDA at tf32, fp16 and bf16 the channels_last pass runs the 4-D
window ops (convs, pools, BatchNormalization) on NHWC data, with a layout conversion (a Transpose)
wherever a region of such ops meets an op that keeps ONNX's layout. Where the regions are long
(ResNets, MobileNets, ConvNeXt) that pays up to 2x; where many conversions cut them (the channel
concatenations of DenseNet, GoogLeNet and SqueezeNet, RexNet's) ONNX's layout is faster. Measured
at batch 64 on an H100 (bench/probes/probe_layout_regions_cuda.py, session 14; conversions /
channels-last layers in brackets):

    model          tf32 NHWC / NCHW ms     fp16 NHWC / NCHW ms
    DenseNet-121   21.81 / 19.02 (122/119) 16.07 / 13.68 (125/121)
    RexNet-100      9.68 /  8.27 (54/75)    9.28 /  6.76 (40/50)
    GoogLeNet       6.26 /  5.73 (52/47)    5.12 /  4.70 (49/52)
    ShuffleNetV2    2.80 /  2.94 (53/56)    2.47 /  2.57 (30/19)
    MobileViT-XXS   6.89 /  7.07 (56/35)    5.32 /  5.71 (54/34)
    MobileNetV2     3.55 /  5.82 (1/53)     2.52 /  5.20 (1/53)

Since session 18 the channel concatenations, splits, slices and shuffles, BatchNormalization, the
pools and the means over H and W stay channels-last as well (Note [channels-last forms]): DenseNet,
GoogLeNet, SqueezeNet, ShuffleNetV2 and RexNet keep one to three conversions, and their channels-last
plans win (DenseNet-121 8.71 / 12.44 ms at tf32 and 5.41 / 8.65 at fp16, batch 64, H100), so they
are no longer timed. MobileViT's attention blocks still cut its plan 46 times. The count alone does
not split the two groups (ShuffleNetV2 and MobileViT had as many conversions and gained from NHWC),
so it is measured: where the channels-last plan has at least
MIN_CONVERSIONS conversions and at least MIN_SHARE of a conversion per channels-last layer, the
engine is timed against a twin built without the channels_last pass, the two taking turns (each
turn one replayed CUDA graph per plan, the sum of its layers' event times) on seeded data of the
load's input shapes, and the twin is kept only where it is faster by more than MARGIN. The model
then runs without the pass (``Model.passes["channels_last"]`` is False, so every engine it builds
later, for fine-tuning or the background search, keeps ONNX's layout), and ``plan()`` prints the
measurement as a note either way. Plans with few conversions keep channels-last untimed: a load
pays for the twin only where the choice is open. The choice is made for the load's shapes;
``dnnx.load(..., measure_layout=False)`` turns it off (the pass then runs wherever it can)."""
from __future__ import annotations

from statistics import median

from . import _background_search

MIN_CONVERSIONS = 4
MIN_SHARE = 0.25
MARGIN = 0.02
FIRST_TURNS, CLOSE_TURNS, CLOSE = 5, 15, 0.1  # more turns where the two lie within CLOSE of each other
CONVERSION_OPS = ("Transpose", "Transpose+Pad", "Transpose+SpaceToDepth")


def plan_counts(rows, model_nodes) -> tuple:
    """(layout conversions, channels-last layers) of a plan's rows: the conversions are the
    Transpose layers the channels_last pass added (a Transpose the model has itself is not one)."""
    conversions = sum(1 for r in rows if r["op"] in CONVERSION_OPS and r["name"] not in model_nodes)
    return conversions, sum(1 for r in rows if r["op"].endswith("@NHWC"))


def worth_timing(conversions: int, nhwc_layers: int) -> bool:
    return nhwc_layers > 0 and conversions >= max(MIN_CONVERSIONS, MIN_SHARE * nhwc_layers)


def verdict(nhwc_ms: float, nchw_ms: float, conversions: int, nhwc_layers: int, where: str) -> tuple:
    """(keep ONNX's layout?, the plan's note) from the two plans' times."""
    faster = nchw_ms < nhwc_ms * (1 - MARGIN)
    measured = (f"{nchw_ms:.3f} ms in ONNX's layout against {nhwc_ms:.3f} ms channels-last at input shape {where}, "
                f"whose plan had {conversions} layout conversion(s) for {nhwc_layers} channels-last layer(s)")
    if faster:
        return True, f"layout: ONNX's (NCHW) kept, measured faster: {measured} (Note [measured layout])"
    return False, f"layout: channels-last kept, measured: {measured} (Note [measured layout])"


def choose(engine, ir: dict, build_twin) -> tuple:
    """(twin or None, note or ""): `engine` is the model's channels-last CUDA engine and
    `build_twin()` builds the same without the channels_last pass. The twin is returned where it
    is measurably faster; the note says what was measured ("" where nothing was: no channels-last
    layers, too few conversions, or shapes that come from input values)."""
    if engine.value_inputs():
        return None, ""
    shapes = engine.default_shapes()
    conversions, nhwc_layers = plan_counts(engine.plan(shapes, None), {node[1] for node in ir["nodes"]})
    if not worth_timing(conversions, nhwc_layers):
        return None, ""
    twin = build_twin()
    feeds = [_background_search._search_data(shape, dtype) for (_, _, dtype), shape in zip(ir["inputs"], shapes)]
    times = ([], [])
    _background_search.profile_turns((engine, twin), feeds, FIRST_TURNS, times)
    nhwc_ms, nchw_ms = median(times[0]), median(times[1])
    if abs(nhwc_ms - nchw_ms) <= CLOSE * max(nhwc_ms, nchw_ms):
        _background_search.profile_turns((engine, twin), feeds, CLOSE_TURNS, times)
        nhwc_ms, nchw_ms = median(times[0]), median(times[1])
    where = ", ".join("x".join(str(d) for d in s) for s in shapes)
    keep_nchw, note = verdict(nhwc_ms, nchw_ms, conversions, nhwc_layers, where)
    return (twin if keep_nchw else None), note
