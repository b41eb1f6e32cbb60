"""ResNet-18 (../shared/external/zoo) trained whole, batch 2: each parameter's gradient from dnnx's
CPU and from CUDA under algo_search "heuristic" and "auto", against float64 (PyTorch's functional
interpreter of the same ONNX graph, bench_cuda_finetune_resnet.py, run in float64 on the CPU in a
child process: one libcudnn per process). Per parameter in graph order: the relative L2 error and
the largest difference over the largest element; then each backward conv's algorithm and math.
This tells fp32 rounding over ~20 layers (dnnx's CPU and PyTorch's float32 stay within ~2e-6 of
float64 on every layer: session 23, the 2-core EPYC) from an inaccurate algorithm or TF32. Run on
the GPU machine with ../shared carried:
    python bench/probes/probe_cuda_resnet18_grads.py"""
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))
from _external_models import read_model  # noqa: E402

X = np.random.default_rng(3).standard_normal((2, 3, 224, 224)).astype(np.float32)
LABELS = np.array([3, 7])


def float64_reference(path: str) -> None:
    """The child: PyTorch's float64 gradients, saved to `path`."""
    import torch
    import torch.nn.functional as F
    from onnx import numpy_helper

    from bench_cuda_finetune_resnet import torch_graph_forward

    model = read_model("zoo/resnet18.onnx")
    w = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy()).double().requires_grad_(True)
         for t in model.graph.initializer}
    loss = F.cross_entropy(torch_graph_forward(model, w, torch.from_numpy(X).double()), torch.from_numpy(LABELS))
    loss.backward()
    np.savez(path, **{k: v.grad.numpy() for k, v in w.items() if v.grad is not None}, loss=loss.item())


def main() -> None:
    import dnnx

    with tempfile.TemporaryDirectory() as tmp:
        ref_path = str(Path(tmp) / "ref.npz")
        subprocess.run([sys.executable, __file__, "--child", ref_path], check=True, cwd=HERE)
        ref = dict(np.load(ref_path))
    model = read_model("zoo/resnet18.onnx")
    runs = {"cpu": dnnx.load(model).finetune(trainable="all", loss="cross_entropy")}
    for search in ("heuristic", "auto"):
        runs[f"cuda {search}"] = dnnx.load(model, device="cuda", algo_search=search).finetune(
            trainable="all", loss="cross_entropy")
    grads = {}
    for label, tuner in runs.items():
        loss, grads[label] = tuner.gradients(X, LABELS)
        print(f"{label}: loss {loss:.9g} (float64 {float(ref['loss']):.9g})")
    order = [i.name for i in model.graph.initializer if i.name in grads["cpu"]]
    print(f"{'parameter':26s} " + " ".join(f"{label + ' L2 / max':>24s}" for label in runs))
    for name in order:
        want = ref[name]
        cells = []
        for label in runs:
            got = np.asarray(grads[label][name], np.float64)
            rel = np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-300)
            worst = np.abs(got - want).max() / max(np.abs(want).max(), 1e-300)
            cells.append(f"{rel:11.1e} {worst:11.1e}  ")
        print(f"{name:26s} " + " ".join(cells))
    for label in ("cuda heuristic", "cuda auto"):
        print(f"== {label}: backward convs")
        for r in runs[label].plan():
            if r["op"].startswith("Conv") and r["stage"] == "backward":
                print(f"  {r['name']:22s} {r['algorithm'][:110]} | {r['math']}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        float64_reference(sys.argv[2])
    else:
        main()
