"""The CUDA planner on LeNet: what the heuristic and the exhaustive search choose per convolution,
what each choice costs to plan and to run, and what a warm plan cache saves. Prints a markdown
report (and writes it to --out).

    python bench/bench_cuda_planner.py [--iters K] [--out FILE]

Per layer, each LeNet convolution is planned alone (a one-node model of the same shapes), so that
the planner's own clock (planner_stats()["search_seconds"]) is that layer's planning time:
- heuristic: cuDNN's ranked list, first candidate that qualifies;
- exhaustive: every candidate timed by cudnnFindConvolutionForwardAlgorithmEx;
- cached: the exhaustive choice read back from the plan cache and re-validated (no timing).
A layer's run time is cuDNN's own measurement from the exhaustive search, for the algorithm each
policy chose. For the whole model, load time is dnnx.load's wall time (import and plan) and run
time the median of K Model.run calls (numpy in and out).
"""
from __future__ import annotations

import argparse
import datetime
import shlex
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from onnx import helper, numpy_helper

BATCHES = (64, 256, 1024)
# LeNet's convolutions: name, input [C, H, W], weight [M, C, k, k] (python/dnnx/examples/lenet.py)
CONVS = (("conv1", (1, 28, 28), (20, 1, 5, 5)), ("conv2", (20, 12, 12), (50, 20, 5, 5)))


def conv_model(batch, chw, wshape):
    rng = np.random.default_rng(0)
    w = (rng.standard_normal(wshape) / np.sqrt(np.prod(wshape[1:]))).astype(np.float32)
    b = rng.standard_normal(wshape[0]).astype(np.float32)
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], name="conv")
    graph = helper.make_graph([node], "conv", [helper.make_tensor_value_info("x", 1, [batch, *chw])],
                              [helper.make_tensor_value_info("y", 1, None)],
                              initializer=[numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def measured_ms(row, algorithm):
    """cuDNN's time for `algorithm` in an exhaustive plan row: the chosen one's or a loser's."""
    if row["algorithm"].split(" ")[0] == algorithm:
        return row["time_ms"]
    for algo, why in row["rejected"]:
        if algo == algorithm and " ms, slower than" in why:
            return float(why.split(" ms")[0])
    return float("nan")


def layer_rows(dnnx, cache_dir):
    rows = []
    for batch in BATCHES:
        for name, chw, wshape in CONVS:
            model = conv_model(batch, chw, wshape)
            out = {}
            for policy, kwargs in (("heuristic", dict(plan_cache=False)),
                                   ("exhaustive", dict(algo_search="exhaustive", plan_cache=cache_dir / f"{name}{batch}")),
                                   ("cached", dict(algo_search="exhaustive", plan_cache=cache_dir / f"{name}{batch}"))):
                m = dnnx.load(model, device="cuda", **kwargs)
                out[policy] = (m.plan()[0], m.planner_stats())
            h_row, h_stats = out["heuristic"]
            e_row, e_stats = out["exhaustive"]
            c_row, c_stats = out["cached"]
            assert c_stats["timing_runs"] == 0 and c_stats["cache_hits"] == 1, c_stats
            h_algo = h_row["algorithm"]
            rows.append(f"| {batch} | {name} | {h_algo} | {1e3 * h_stats['search_seconds']:.2f} | "
                        f"{measured_ms(e_row, h_algo):.4f} | {e_row['algorithm']} | "
                        f"{1e3 * e_stats['search_seconds']:.2f} | {e_row['time_ms']:.4f} | "
                        f"{1e3 * c_stats['search_seconds']:.2f} |")
    return rows


def model_rows(dnnx, cache_dir, iters):
    from dnnx.examples import build

    rows = []
    for batch in BATCHES:
        x = np.random.default_rng(batch).standard_normal((batch, 1, 28, 28)).astype(np.float32)
        cells = []
        for policy, kwargs in (("heuristic", dict(plan_cache=False)),
                               ("exhaustive", dict(algo_search="exhaustive", plan_cache=cache_dir / f"lenet{batch}")),
                               ("cached", dict(algo_search="exhaustive", plan_cache=cache_dir / f"lenet{batch}"))):
            start = time.perf_counter()
            m = dnnx.load(build("lenet", seed=0), device="cuda", batch_size=batch, **kwargs)
            load_ms = 1e3 * (time.perf_counter() - start)
            for _ in range(10):
                m.run(x)
            times = []
            for _ in range(iters):
                t0 = time.perf_counter()
                m.run(x)
                times.append(time.perf_counter() - t0)
            cells.append(f"{load_ms:.1f} | {1e3 * float(np.median(times)):.3f}")
        rows.append(f"| {batch} | " + " | ".join(cells) + " |")
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iters", type=int, default=100)
    parser.add_argument("--out", help="also write the markdown report to this file (replacing it)")
    args = parser.parse_args()
    import dnnx

    with tempfile.TemporaryDirectory() as tmp:
        layers = layer_rows(dnnx, Path(tmp))
        models = model_rows(dnnx, Path(tmp), args.iters)
    lines = [
        "## CUDA planner: heuristic vs exhaustive on LeNet (fp32)",
        "",
        f"- date: {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}",
        f"- dnnx {dnnx.__version__}: {dnnx.cuda_status()}",
        f"- command: `{shlex.join(['python', *sys.argv])}`",
        "- per layer: planning time is the planner's own clock for that convolution alone; run time is cuDNN's "
        "measurement (cudnnFindConvolutionForwardAlgorithmEx) of the algorithm each policy chose; cached = a second "
        "load of the exhaustive plan from the plan cache (re-validated, nothing timed)",
        "",
        "| batch | layer | heuristic algo | heuristic plan ms | its run ms | exhaustive algo | exhaustive plan ms | "
        "its run ms | cached plan ms |",
        "| ---: | --- | --- | ---: | ---: | --- | ---: | ---: | ---: |",
        *layers,
        "",
        f"Whole model: dnnx.load wall time (import + plan) and Model.run median of {args.iters} calls "
        "(numpy in/out), ms",
        "",
        "| batch | heuristic load | heuristic run | exhaustive load | exhaustive run | cached load | cached run |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        *models,
    ]
    text = "\n".join(lines) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
