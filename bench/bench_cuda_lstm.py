"""dnnx's cuDNN LSTM against PyTorch's cuDNN LSTM (and onnxruntime-gpu's, bench/_ort_worker.py) on the same GPU: 4 stacked LSTM layers, sequence
512, input and hidden 512, batch 32 to 256, at fp32 and tf32. Prints a markdown report (and writes it to --out).

    python bench/bench_cuda_lstm.py [--iters K] [--warmup W] [--out FILE]

The ONNX model is four LSTM nodes (one layer each, as ONNX has them) with a Reshape dropping the
direction axis between them; PyTorch runs one nn.LSTM(512, 512, num_layers=4) with the same
weights (gates reordered from ONNX's i, o, f, c to PyTorch's i, f, g, o) in its own process: it
loads its own cuDNN, and only one libcudnn.so.9 can live in a process. Times are wall-clock
medians of K calls after W warm-up calls:
- dnnx host: Model.run, numpy in and numpy out (the copies to and from the GPU included);
- dnnx device: the input already on the GPU (Model.to_device) and output="device" (the output stays
  on the GPU), the call complete when it returns: the number to compare with torch device;
- torch host: the same numpy in/out work;
- torch device: input already on the GPU, synchronize after the forward.
"""
from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx

from _ort_worker import ort_case, ort_cell, ort_worker, run_ort_worker
from _timing import median_ms, time_calls
from _torch_worker import add_worker_arguments, machine_lines, run_torch_worker

SEQ, FEATURES, HIDDEN, LAYERS = 512, 512, 512, 4
BATCHES = (32, 64, 128, 256)
PRECISIONS = ("fp32", "tf32")
TAIL = 8  # the last steps of the output, compared between the two sides


def weights(seed: int = 0) -> list:
    """Per layer (W [1, 4H, in], R [1, 4H, H], B [1, 8H]) in ONNX's gate order, PyTorch's init."""
    rng = np.random.default_rng(seed)
    bound = 1.0 / np.sqrt(HIDDEN)
    out = []
    for layer in range(LAYERS):
        inp = FEATURES if layer == 0 else HIDDEN
        out.append(tuple(rng.uniform(-bound, bound, size=s).astype(np.float32)
                         for s in ((1, 4 * HIDDEN, inp), (1, 4 * HIDDEN, HIDDEN), (1, 8 * HIDDEN))))
    return out


def inputs_for(batch: int) -> np.ndarray:
    return np.random.default_rng(batch).standard_normal((SEQ, batch, FEATURES)).astype(np.float32)


def copy_weights_to_torch(lstm) -> None:
    """weights() into a torch.nn.LSTM(FEATURES, HIDDEN, num_layers=LAYERS), in the PyTorch worker."""
    import torch

    onnx_to_torch = [0, 2, 3, 1]  # torch's gate k (i, f, g, o) is ONNX's block onnx_to_torch[k]

    def reorder(a):  # [4H, ...] in ONNX's gate order -> PyTorch's
        blocks = np.split(a, 4, axis=0)
        return np.concatenate([blocks[g] for g in onnx_to_torch], axis=0)

    with torch.no_grad():
        for layer, (w, r, b) in enumerate(weights()):
            getattr(lstm, f"weight_ih_l{layer}").copy_(torch.from_numpy(reorder(w[0])))
            getattr(lstm, f"weight_hh_l{layer}").copy_(torch.from_numpy(reorder(r[0])))
            getattr(lstm, f"bias_ih_l{layer}").copy_(torch.from_numpy(reorder(b[0, :4 * HIDDEN])))
            getattr(lstm, f"bias_hh_l{layer}").copy_(torch.from_numpy(reorder(b[0, 4 * HIDDEN:])))


def onnx_model(batch: int):
    from onnx import TensorProto, helper, numpy_helper

    nodes, inits = [], []
    x = "x"
    for layer, (w, r, b) in enumerate(weights()):
        names = [f"W{layer}", f"R{layer}", f"B{layer}"]
        inits += [numpy_helper.from_array(a, n) for a, n in zip((w, r, b), names)]
        inits.append(numpy_helper.from_array(np.array([SEQ, batch, HIDDEN], np.int64), f"shape{layer}"))
        nodes.append(helper.make_node("LSTM", [x] + names, [f"y{layer}"], name=f"lstm{layer}", hidden_size=HIDDEN))
        nodes.append(helper.make_node("Reshape", [f"y{layer}", f"shape{layer}"], [f"h{layer}"], name=f"drop_dir{layer}"))
        x = f"h{layer}"
    graph = helper.make_graph(nodes, "lstm4", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [SEQ, batch, FEATURES])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, [SEQ, batch, HIDDEN])],
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


# --- the PyTorch worker (its own process) ------------------------------------------------------
def torch_worker(out_dir: str, warmup: int, iters: int) -> None:
    import torch

    torch.backends.cudnn.benchmark = False
    lstm = torch.nn.LSTM(FEATURES, HIDDEN, num_layers=LAYERS).cuda().eval()
    copy_weights_to_torch(lstm)
    results = {"torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
               "gpu": torch.cuda.get_device_name(0), "cases": {}}
    with torch.inference_mode():
        for precision in PRECISIONS:
            torch.backends.cudnn.allow_tf32 = precision == "tf32"
            torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
            for batch in BATCHES:
                x_np = inputs_for(batch)
                x_dev = torch.from_numpy(x_np).cuda()
                y = lstm(x_dev)[0]
                np.save(Path(out_dir) / f"torch_{precision}_{batch}.npy", y[-TAIL:].cpu().numpy())

                def host():
                    return lstm(torch.from_numpy(x_np).cuda())[0].cpu().numpy()

                def device():
                    lstm(x_dev)
                    torch.cuda.synchronize()

                results["cases"][f"{precision}_{batch}"] = {"host": time_calls(host, warmup, iters),
                                                            "device": time_calls(device, warmup, iters)}
    (Path(out_dir) / "torch.json").write_text(json.dumps(results))


# --- the onnxruntime-gpu worker (its own process: bench/_ort_worker.py) -----------------------
def ort_cases(out_dir: str) -> list:
    cases = []
    for batch in BATCHES:
        path = str(Path(out_dir) / f"lstm_{batch}.onnx")
        onnx.save(onnx_model(batch), path)
        cases += [ort_case(f"{precision}_{batch}", path, inputs_for(batch), (SEQ, batch, HIDDEN),
                           use_tf32=int(precision == "tf32")) for precision in PRECISIONS]
    return cases


def ort_cells(ort: dict, precision: str, batch: int, torch_tail) -> str:
    """The table's onnxruntime-gpu cells: ms (on GPU), dnnx/ort, max abs diff against torch."""
    seconds, note = ort_cell(ort, f"{precision}_{batch}")
    if seconds is None:
        return f"{note.replace('|', '/')} | | "
    out = ort["cases"][f"{precision}_{batch}"]["out"]
    diff = f"{float(np.abs(out[-TAIL:] - torch_tail).max()):.2g}" if out is not None else ""
    return f"{median_ms(seconds):.2f}{' (' + note + ')' if note else ''} | {{ratio}} | {diff}"


# --- dnnx and the report (the main process: never imports torch or onnxruntime) ---------------
def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iters", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--out", help="also write the markdown report to this file (replacing it)")
    add_worker_arguments(parser, "--dir")
    args = parser.parse_args()
    if args.worker == "torch":
        torch_worker(args.dir, args.warmup, args.iters)
        return 0
    if args.worker == "ort":
        ort_worker(args.dir, ort_cases(args.dir), args.warmup, args.iters)
        return 0

    import dnnx

    with tempfile.TemporaryDirectory() as tmp:
        run_torch_worker(__file__, "--dir", tmp, "--warmup", str(args.warmup), "--iters", str(args.iters))
        ort = run_ort_worker(__file__, tmp, "--warmup", str(args.warmup), "--iters", str(args.iters))
        torch_results = json.loads((Path(tmp) / "torch.json").read_text())
        rows = []
        for precision in PRECISIONS:
            for batch in BATCHES:
                x = inputs_for(batch)
                model = dnnx.load(onnx_model(batch), device="cuda", precision=precision)
                y = model.run(x)
                torch_tail = np.load(Path(tmp) / f"torch_{precision}_{batch}.npy")
                diff = float(np.abs(y[-TAIL:] - torch_tail).max())
                ours = median_ms(time_calls(lambda: model.run(x), args.warmup, args.iters))
                x_dev = model.to_device(x)
                ours_dev = median_ms(time_calls(lambda: model.run(x_dev, output="device"), args.warmup, args.iters))
                t = torch_results["cases"][f"{precision}_{batch}"]
                host, device = median_ms(t["host"]), median_ms(t["device"])
                seconds, _ = ort_cell(ort, f"{precision}_{batch}")
                ratio = f"{ours_dev / median_ms(seconds):.2f}" if seconds else ""
                rows.append(f"| {precision} | {batch} | {ours:.2f} | {host:.2f} | {ours / host:.2f} | {ours_dev:.2f} | "
                            f"{device:.2f} | {ours_dev / device:.2f} | {batch * SEQ / ours_dev * 1e3:,.0f} | {diff:.2g} | "
                            + ort_cells(ort, precision, batch, torch_tail).replace("{ratio}", ratio) + " |")
                del model, x_dev
    lines = [
        f"## LSTM: {LAYERS} stacked layers, sequence {SEQ}, input and hidden {HIDDEN} (dnnx vs PyTorch and "
        "onnxruntime-gpu, cuDNN all)",
        "",
        *machine_lines(torch_results, dnnx.cuda_status()),
        f"- onnxruntime-gpu: {ort.get('version') or 'not available: ' + ort.get('error', '?')}, in its own process: "
        "the four-node ONNX model, CUDA provider, CUDA graph, IO binding on the GPU, use_tf32 0 (fp32) or 1 (tf32)",
        f"- command: `{shlex.join(['python', *sys.argv])}`",
        f"- method: wall-clock median of {args.iters} calls after {args.warmup} warm-up calls; same weights and "
        "seeded inputs; dnnx runs the four ONNX LSTM nodes as one LSTMStack (the fuse_lstm_stack pass: one "
        "cudnnRNNForward with numLayers=4), PyTorch one call for all four layers; "
        "target (issue #3): dnnx on GPU within 5% of torch on GPU (ratio <= 1.05)",
        "",
        "| precision | batch | dnnx ms (numpy in/out) | torch ms (numpy in/out) | dnnx/torch (numpy) | "
        "dnnx ms (on GPU) | torch ms (on GPU) | dnnx/torch (on GPU) | dnnx steps x batch /s (on GPU) | "
        "max abs diff (last 8 steps) | onnxruntime-gpu ms (on GPU) | dnnx/onnxruntime (on GPU) | "
        "onnxruntime max abs diff vs torch |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        *rows,
    ]
    text = "\n".join(lines) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
