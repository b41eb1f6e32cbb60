"""bench/sweep_cuda_speed.py (issue #38's CUDA speed sweep) on the CPU (--device cpu: the same flow,
dnnx on the CPU beside onnxruntime's CPU provider): the table's rows and ratios, the summary and
the profile, and that what fails (an unreadable file, a child that crashes, hangs or raises, the
budget, a glob matching nothing) is a row or a message, never the sweep's death. Also the
onnxruntime worker's IO binding (several inputs and outputs, the fallback without CUDA graph) on
the CPU. Timing numbers are not checked (a shared machine), only that they are there."""
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from dnnx.examples import build

from bench_modules import bench_module

REPO = Path(__file__).resolve().parents[1]
ext = bench_module("_external_models")
ort_worker = bench_module("_ort_sweep_worker")
sweep = bench_module("sweep_cuda_speed")

SCRIPT = REPO / "bench" / "sweep_cuda_speed.py"
SHARED_MODEL = "models/mnist-8/model.onnx"
NUMBER = r"([\d.]+)"


def run_sweep(*args, timeout=120):
    cmd = [sys.executable, str(SCRIPT), "--device", "cpu", "--seconds-per-case", "0.01", *args]
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=timeout, env=os.environ.copy())


def row(text, model, batch, precision):
    """The cells of one table row (after model, batch, precision), or None."""
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[:3] == [model, str(batch), precision]:
            return cells[3:]
    return None


@pytest.fixture(scope="module")
def lenet(tmp_path_factory):
    path = tmp_path_factory.mktemp("speed") / "lenet.onnx"
    onnx.save(build("lenet", seed=0), str(path))
    return str(path)


def test_a_dry_run_reports_rows_ratios_summary_and_profile(lenet, tmp_path):
    out = tmp_path / "speed.md"
    done = run_sweep("--models", lenet, "--batches", "1,2", "--precisions", "fp32,fp16", "--profile-worst", "1",
                     "--budget", "60", "--out", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    text = out.read_text()
    assert "- command: `" in text and "--device cpu" in text and "onnxruntime 1." in text
    for batch in (1, 2):
        ours, theirs, ratio, load, diff, _ = row(text, lenet, batch, "fp32")
        assert float(ours) > 0 and float(theirs) > 0 and float(load) >= 0
        assert float(ratio) == pytest.approx(float(ours) / float(theirs), rel=0.05, abs=0.01)
        assert float(diff) < 1e-4  # dnnx's first output against onnxruntime's
        # dnnx's CPU backend refuses fp16 (its cell says why); onnxruntime runs its float16 conversion
        ours, theirs, ratio, *_ = row(text, lenet, batch, "fp16")
        assert "ValueError" in ours and "fp16" in ours and float(theirs) > 0 and ratio == "-"
    assert re.search(rf"^\| fp32 \| 1 \| {NUMBER} \| [01] of 1 \|", text, re.M), text
    assert re.search(rf"^Profile of {re.escape(lenet)} at batch 2, fp32", text, re.M), text
    assert "| Conv" in text  # the profile's rows name the layers' ops


@pytest.mark.skipif(SHARED_MODEL not in ext.find_models(), reason="../shared/external is absent")
def test_a_shared_fixed_model_runs_once_and_an_unmatched_glob_is_named(tmp_path):
    done = run_sweep("--models", SHARED_MODEL, "no_such_model*", "--precisions", "fp32", "--profile-worst", "0",
                     "--budget", "60")
    assert done.returncode == 0, done.stderr[-2000:]
    ours, theirs, ratio, *_ = row(done.stdout, SHARED_MODEL, "fixed", "fp32")
    assert float(ratio) == pytest.approx(float(ours) / float(theirs), rel=0.05, abs=0.01)
    assert "- no model matches `no_such_model*`" in done.stdout


def test_crashes_hangs_and_unreadable_files_are_rows(lenet, tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    done = run_sweep("--models", lenet, str(bad), "--batches", "1,2", "--precisions", "fp32,tf32",
                     "--profile-worst", "0", "--budget", "60", "--timeout", "6",
                     "--inject", "crash:dnnx:fp32,sticky:ort:fp32,hang:ort:tf32")
    assert done.returncode == 0, done.stderr[-2000:]
    text = done.stdout
    # the dnnx child aborts at each fp32 case: that case says so, and a new child runs the next one
    assert row(text, lenet, 1, "fp32")[0] == "child killed by SIGABRT"
    assert row(text, lenet, 2, "fp32")[0] == "child killed by SIGABRT"
    assert "ValueError" in row(text, lenet, 1, "tf32")[0]  # dnnx's CPU backend refuses tf32 (a row)
    # the onnxruntime child meets a sticky CUDA error at its first case: it reports it and ends, and a
    # fresh child hangs at the next: killed at the timeout, the rest not retried
    assert row(text, lenet, 1, "fp32")[1] == "RuntimeError: injected: a sticky CUDA error"
    assert row(text, lenet, 1, "tf32")[1] == "timeout after 6 s (child killed)"
    assert row(text, lenet, 2, "fp32")[1].startswith("not run (after: timeout")
    for engine_cell in row(text, str(bad), "fixed", "fp32")[:2]:
        assert engine_cell.startswith("read: DecodeError")


def test_the_budget_and_a_sweep_of_nothing(lenet):
    done = run_sweep("--models", lenet, "--batches", "1", "--precisions", "fp32", "--budget", "0.5")
    assert done.returncode == 0, done.stderr[-2000:]
    assert row(done.stdout, lenet, 1, "fp32")[:2] == ["not run (budget)", "not run (budget)"]
    done = run_sweep("--models", "no_such_model*", "--budget", "10")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "- no model matches `no_such_model*`" in done.stdout and "no models match" in done.stderr


def test_two_runs_merge_into_one_table(lenet, tmp_path):
    """A run cut by its budget, then a run of what it left: --merge gives one table where the
    second run's measured row replaces the first's "not run", under both runs' headers."""
    first, second, merged = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "all.md"
    done = run_sweep("--models", lenet, "--batches", "1", "--precisions", "fp32", "--budget", "0.5",
                     "--json", str(first))
    assert done.returncode == 0, done.stderr[-2000:]
    done = run_sweep("--models", lenet, "--batches", "1,2", "--precisions", "fp32", "--budget", "60",
                     "--profile-worst", "0", "--json", str(second))
    assert done.returncode == 0, done.stderr[-2000:]
    done = subprocess.run([sys.executable, str(SCRIPT), "--merge", str(first), str(second), "--out", str(merged)],
                          cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    text = merged.read_text()
    assert text.count("\nRun ") == 2 and text.count("- command: `") == 2
    for batch in (1, 2):
        cells = row(text, lenet, batch, "fp32")
        assert re.fullmatch(NUMBER, cells[0]) and re.fullmatch(NUMBER, cells[1]), cells
    assert sum(1 for line in text.splitlines() if line.startswith(f"| {lenet} |")) == 2
    assert "Summary at batch 2 " in text and "| fp32 | 1 |" in text  # the runs' largest batch

def test_the_sweep_order_puts_the_issues_six_cnns_first():
    names = ["models/a.onnx", "zoo2/bert.onnx", "zoo/vgg11_bn.onnx", "zoo/convnext_tiny.onnx", "zoo/resnet18.onnx",
             "zoo/mobilenet_v2.onnx", "zoo/alexnet.onnx"]
    assert sweep.sweep_order(names) == ["zoo/mobilenet_v2.onnx", "zoo/resnet18.onnx", "zoo/convnext_tiny.onnx",
                                        "zoo/alexnet.onnx", "zoo/vgg11_bn.onnx", "zoo2/bert.onnx", "models/a.onnx"]


def two_in_two_out():
    """x [N, 3] float and ids [N, 2] int64 -> y [N, 3] float (x + 1) and n [?] int64 (NonZero of ids)."""
    nodes = [helper.make_node("Add", ["x", "one"], ["y"]), helper.make_node("NonZero", ["ids"], ["nz"]),
             helper.make_node("ReduceSum", ["nz"], ["n"], keepdims=0)]
    graph = helper.make_graph(
        nodes, "two", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3]),
                       helper.make_tensor_value_info("ids", TensorProto.INT64, ["N", 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3]),
         helper.make_tensor_value_info("n", TensorProto.INT64, None)],
        [helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("capture_fails", [False, True])
def test_the_onnxruntime_worker_binds_every_input_and_output(capture_fails):
    import onnxruntime as ort

    model = two_in_two_out()
    data = model.SerializeToString()
    feeds = {"x": np.arange(6, dtype=np.float32).reshape(2, 3), "ids": np.array([[0, 3], [5, 0]], np.int64)}
    graphs = []

    def make_session(graph):
        graphs.append(graph)
        if graph and capture_fails:
            raise RuntimeError("capture failed")
        return ort.InferenceSession(data, providers=["CPUExecutionProvider"])

    shapes = ort_worker.output_shapes(model, "N", 2)
    assert shapes == {"y": [2, 3], "n": None}  # n's shape is not declared: onnxruntime allocates it
    times, first, _, note = ort_worker.run_bound(ort, make_session, feeds, shapes, 0.001, device="cpu")
    assert len(times) >= 5
    np.testing.assert_array_equal(first, feeds["x"] + 1)
    assert graphs == ([True, False] if capture_fails else [True])
    assert note == ("without CUDA graph (RuntimeError: capture failed)" if capture_fails else "")


class FakeDeviceArray:
    def __init__(self, value):
        self.value = value

    def numpy(self):
        return self.value


class FakeCudaModel:
    """What the dnnx worker calls on a CUDA Model: to_device and run_dict(..., output="device")."""

    def __init__(self, refuse_device_inputs):
        self.refuse, self.calls = refuse_device_inputs, []

    def to_device(self, value):
        if self.refuse:
            raise ValueError("no device inputs here")
        return FakeDeviceArray(value)

    def run_dict(self, feeds, output="numpy"):
        self.calls.append((output, sorted(type(v).__name__ for v in feeds.values())))
        return {"y": FakeDeviceArray(sum(np.sum(getattr(v, "value", v)) for v in feeds.values()))}


@pytest.mark.parametrize("refuse", [False, True])
def test_the_dnnx_worker_runs_on_device_inputs_or_says_why_not(refuse):
    worker = bench_module("_speed_dnnx_worker")
    child = bench_module("_speed_child")
    model = FakeCudaModel(refuse)
    feeds = {"x": np.ones((2, 3), np.float32), "ids": np.zeros((2, 4), np.int64)}
    call, note = worker.runner(model, feeds, "cuda")
    assert float(child.first_output(call())) == 6.0  # a DeviceArray copied back
    kinds = ["ndarray", "ndarray"] if refuse else ["FakeDeviceArray", "FakeDeviceArray"]
    assert model.calls[-1] == ("device", kinds)
    assert note == ("host inputs (device inputs: ValueError: no device inputs here)" if refuse else "")
