"""ResNet-18 (../shared/external/zoo) trained whole, batch 2: each parameter's gradient from dnnx's
CPU and from CUDA under algo_search "heuristic" and "auto", against float64 (PyTorch's functional
interpreter of the same ONNX graph, bench_cuda_finetune_resnet.py, run in float64 on the CPU in a
child process: one libcudnn per process). Per parameter in graph order: the relative L2 error and
the largest difference over the largest element; then each backward conv's algorithm and math.
This tells fp32 rounding over ~20 layers (dnnx's CPU and PyTorch's float32 stay within ~2e-6 of
float64 on every layer: session 23, the 2-core EPYC) from an inaccurate algorithm or TF32.

Session 23 (one H100) found CUDA within ~4e-7 of float64 on layer4 and ~1e-3 off below it, the
same under both searches (bench/RESULTS_CUDA.md). Session 24 found why on the CPU: the input's
distance from a ReLU kink (bench/_relu_kinks.py), printed first. --size and --seed take another
input (32 and 9: every Relu input at least 1.4e-5 from 0). --cut runs the same check on the
network cut after a block (that block's output -> GlobalAveragePool -> a seeded 10-class Gemm).

Run on the GPU machine with ../shared carried:
    python bench/probes/probe_cuda_resnet18_grads.py [--size 32 --seed 9] [--cut layer4.0 ...] [--no-full]"""
import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))
from _external_models import read_model  # noqa: E402
from _relu_kinks import at_size, kink_margin  # noqa: E402

LABELS = np.array([3, 7])
CHANNELS = {"layer1": 64, "layer2": 128, "layer3": 256, "layer4": 512}


def cut_model(model: onnx.ModelProto, block: str) -> onnx.ModelProto:
    """The graph up to block's output (e.g. "layer4.0": /layer4/layer4.0/relu_1/Relu_output_0), then
    GlobalAveragePool -> Flatten -> Gemm to 10 classes (seeded weights)."""
    stage = block.split(".")[0]
    end = f"/{stage}/{block}/relu_1/Relu_output_0"
    nodes = []
    for node in model.graph.node:
        nodes.append(node)
        if end in node.output:
            break
    else:
        raise SystemExit(f"no block {block!r} in the model")
    rng = np.random.default_rng(5)
    inits = {"probe.fc.w": (rng.standard_normal((10, CHANNELS[stage])) * 0.05).astype(np.float32),
             "probe.fc.b": np.zeros(10, np.float32)}
    nodes += [helper.make_node("GlobalAveragePool", [end], ["probe.pooled"]),
              helper.make_node("Flatten", ["probe.pooled"], ["probe.flat"]),
              helper.make_node("Gemm", ["probe.flat", "probe.fc.w", "probe.fc.b"], ["logits"], transB=1)]
    used = {name for node in nodes for name in node.input}
    initializers = [t for t in model.graph.initializer if t.name in used]
    initializers += [numpy_helper.from_array(v, k) for k, v in inits.items()]
    graph = helper.make_graph(nodes, f"resnet18_to_{block}", list(model.graph.input),
                              [helper.make_tensor_value_info("logits", onnx.TensorProto.FLOAT, [2, 10])], initializers)
    return helper.make_model(graph, opset_imports=model.opset_import)


def probe_input(size: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((2, 3, size, size)).astype(np.float32)


def float64_reference(model_path: str, out_path: str, x: np.ndarray) -> None:
    """The child: PyTorch's float64 gradients of the model at `model_path`, saved to `out_path`."""
    import torch
    import torch.nn.functional as F

    from bench_cuda_finetune_resnet import torch_graph_forward

    model = onnx.load(model_path)
    w = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy()).double().requires_grad_(True)
         for t in model.graph.initializer}
    loss = F.cross_entropy(torch_graph_forward(model, w, torch.from_numpy(x).double()), torch.from_numpy(LABELS))
    loss.backward()
    np.savez(out_path, **{k: v.grad.numpy() for k, v in w.items() if v.grad is not None}, loss=loss.item())


def check(model: onnx.ModelProto, x: np.ndarray, label: str, show_plan: bool) -> None:
    import dnnx

    with tempfile.TemporaryDirectory() as tmp:
        model_path, ref_path, x_path = (str(Path(tmp) / f) for f in ("m.onnx", "ref.npz", "x.npy"))
        onnx.save(model, model_path)
        np.save(x_path, x)
        subprocess.run([sys.executable, __file__, "--child", model_path, ref_path, x_path], check=True, cwd=HERE)
        ref = dict(np.load(ref_path))
    relu, pool = kink_margin(model, {model.graph.input[0].name: x})
    print(f"=== {label}: smallest |Relu input| {relu:.2e}, smallest MaxPool gap {pool:.2e}")
    runs = {"cpu": dnnx.load(model).finetune(trainable="all", loss="cross_entropy")}
    for search in ("heuristic", "auto"):
        runs[f"cuda {search}"] = dnnx.load(model, device="cuda", algo_search=search).finetune(
            trainable="all", loss="cross_entropy")
    grads = {}
    for name, tuner in runs.items():
        loss, grads[name] = tuner.gradients(x, LABELS)
        print(f"{name}: loss {loss:.9g} (float64 {float(ref['loss']):.9g})")
    order = [i.name for i in model.graph.initializer if i.name in grads["cpu"]]
    print(f"{'parameter':26s} " + " ".join(f"{name + ' L2 / max':>24s}" for name in runs))
    for param in order:
        want = ref[param]
        cells = []
        for name in runs:
            got = np.asarray(grads[name][param], np.float64)
            rel = np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-300)
            worst = np.abs(got - want).max() / max(np.abs(want).max(), 1e-300)
            cells.append(f"{rel:11.1e} {worst:11.1e}  ")
        print(f"{param:26s} " + " ".join(cells))
    if show_plan:
        for name in ("cuda heuristic", "cuda auto"):
            print(f"== {name}: the backward steps")
            for r in runs[name].plan():
                if r["stage"] == "backward":
                    print(f"  {r['name']:40s} {r['op']:10s} {r['algorithm']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cut", action="append", default=[], help="also check the net cut after this block")
    parser.add_argument("--no-full", action="store_true", help="skip the whole network")
    parser.add_argument("--size", type=int, default=224, help="the image's height and width")
    parser.add_argument("--seed", type=int, default=3, help="the input's seed")
    args = parser.parse_args()
    model = at_size(read_model("zoo/resnet18.onnx"), args.size, args.size)
    x = probe_input(args.size, args.seed)
    where = f"{args.size}x{args.size}, seed {args.seed}"
    if not args.no_full:
        check(model, x, f"the whole network, {where}", show_plan=True)
    for block in args.cut:
        check(cut_model(model, block), x, f"cut after {block}, {where}", show_plan=False)


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        float64_reference(sys.argv[2], sys.argv[3], np.load(sys.argv[4]))
    else:
        main()
