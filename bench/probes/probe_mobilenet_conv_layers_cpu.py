"""MobileNetV2's depthwise and pointwise conv shapes (and EfficientNet's 5x5, ConvNeXt's 7x7), one
conv per model at batch 1 on 1 thread: dnnx's kernel time (Model.profile) and whole-call medians
of dnnx and onnxruntime over 10 interleaved rounds of 10 calls; one markdown row per layer
(bench/RESULTS.md, issue #38). probe_onednn_conv_layers.cc times the same shapes in oneDNN.

    DNNX_DEV_BUILD=build/dev PYTHONPATH=python python bench/probes/probe_mobilenet_conv_layers_cpu.py
"""
import sys
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort
from onnx import helper

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
import dnnx  # noqa: E402
from ort_check import make_model, rand  # noqa: E402
from residual_models import weights  # noqa: E402

# (C, M, H = W, kernel, stride, group, label)
CASES = [(32, 32, 112, 3, 1, 32, "dw 3x3 32x112"), (96, 96, 112, 3, 2, 96, "dw 3x3/2 96x112"),
         (144, 144, 56, 3, 1, 144, "dw 3x3 144x56"), (384, 384, 14, 3, 1, 384, "dw 3x3 384x14"),
         (960, 960, 7, 3, 1, 960, "dw 3x3 960x7"), (240, 240, 28, 5, 1, 240, "dw 5x5 240x28"),
         (96, 96, 56, 7, 1, 96, "dw 7x7 96x56"),
         (32, 16, 112, 1, 1, 1, "pw 32->16 112"), (16, 96, 112, 1, 1, 1, "pw 16->96 112"),
         (144, 24, 56, 1, 1, 1, "pw 144->24 56"), (384, 64, 14, 1, 1, 1, "pw 384->64 14"),
         (960, 160, 7, 1, 1, 1, "pw 960->160 7"), (320, 1280, 7, 1, 1, 1, "pw 320->1280 7")]


def main():
    dnnx.threads.set_num_threads(1)
    print("| layer | dnnx algorithm | dnnx kernel ms | dnnx call ms | onnxruntime call ms |")
    print("| --- | --- | ---: | ---: | ---: |")
    for c, m, h, k, s, g, label in CASES:
        p = k // 2
        node = helper.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=[k, k], strides=[s, s], pads=[p] * 4,
                                group=g)
        model = make_model([node], [("x", [1, c, h, h])], [("y", None)],
                           {"w": weights(m, c // g, k, k, seed=1), "b": rand(m, seed=2)})
        feeds = {"x": rand(1, c, h, h, seed=3)}
        ours = dnnx.load(model)
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        theirs = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        seconds = {"dnnx": [], "ort": []}
        for _ in range(10):
            for name, run in (("dnnx", lambda: ours.run_dict(feeds)), ("ort", lambda: theirs.run(None, feeds))):
                run()
                for _ in range(10):
                    start = time.perf_counter()
                    run()
                    seconds[name].append(time.perf_counter() - start)
        kernel = ours.profile(feeds, repeat=50)[0].median_ms
        print(f"| {label} | {ours.plan()[0]['algorithm']} | {kernel:.3f} | {1e3 * np.median(seconds['dnnx']):.3f} | "
              f"{1e3 * np.median(seconds['ort']):.3f} |", flush=True)


if __name__ == "__main__":
    main()
