"""The dense rows kernel against cuBLASLt on narrow Gemms (Note [narrow Gemms] in
engine/backends/cuda/gemm_cuda.cc): for each shape (rows M, inputs K, columns N; B stored [N,K]
as PyTorch's Linear, a row-vector bias), the GPU time of one Gemm layer (Model.profile: CUDA
events in a replayed graph, median of --repeat runs) three ways: the planner's choice, cuBLASLt's
heuristic pick and cuBLASLt's fastest timed candidate (the dense rows kernel forced to fail with
DNNX_TEST_FAIL_ALGO, algo_search "heuristic" and "exhaustive").

    python bench/probes/probe_dense_rows.py [--repeat 200]
"""
from __future__ import annotations

import argparse
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from _gpu_profile import profile_on_gpu

SHAPES = [  # (M, K, N)
    (64, 500, 10), (256, 500, 10), (1024, 500, 10), (4096, 500, 10),
    (256, 84, 10), (256, 2048, 10), (256, 500, 32), (1024, 500, 32),
    (256, 500, 64), (1024, 800, 64), (256, 4096, 16), (8192, 256, 10),
]


def gemm_model(m: int, k: int, n: int):
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array((rng.standard_normal((n, k)) / np.sqrt(k)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(n).astype(np.float32), "b")
    node = helper.make_node("Gemm", ["a", "w", "b"], ["y"], name="gemm", transB=1)
    graph = helper.make_graph([node], "gemm", [helper.make_tensor_value_info("a", TensorProto.FLOAT, [m, k])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])], [w, b])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def layer_time(model: bytes, x, repeat: int, fail_dense: bool, **options):
    env = {"DNNX_TEST_FAIL_ALGO": "dense rows kernel"} if fail_dense else {}
    (row,) = profile_on_gpu(model, x, repeat, env, **options)
    return 1000.0 * row.median_ms, row.algorithm


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    import dnnx

    print(dnnx.cuda_status())
    print("| M | K | N | planner (us) | its choice | cuBLASLt heuristic (us) | cuBLASLt best timed (us) |")
    print("| ---: | ---: | ---: | ---: | --- | ---: | ---: |")
    for m, k, n in SHAPES:
        model = gemm_model(m, k, n)
        x = np.random.default_rng(1).standard_normal((m, k)).astype(np.float32)
        chosen_us, chosen = layer_time(model, x, args.repeat, False)
        heuristic_us, _ = layer_time(model, x, args.repeat, True)
        best_us, best = layer_time(model, x, args.repeat, True, algo_search="exhaustive")
        print(f"| {m} | {k} | {n} | {chosen_us:.1f} | {chosen.split(' [')[0]} | {heuristic_us:.1f} | "
              f"{best_us:.1f} ({best.split('[')[1].split(',')[0] if '[' in best else '-'}) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
