"""dnnx on Ray Data (issue #19): images/s of dnnx.ray.predict (Dataset.map_batches with a pool of
dnnx.ray.Predictor actors) against a direct Model.run in this process, on the MNIST test set
(mnist-8 from ../shared/external, or the example LeNet on random images where that is absent) and
on the ResNet-50 bench model (bench/resnet50.py, seeded weights, random 224x224 images).

    python bench/bench_ray.py [--mnist-images 10000] [--resnet-images 512] [--out RESULTS.md]

Rows per model: direct (one process, Model.run in chunks of --batch rows, the input on the host),
then Ray with 1 and 2 CPU actors (each actor num_cpus=--cpus-per-worker and as many dnnx threads)
and, where CUDA is available, direct CUDA and 1 GPU actor (num_gpus=1). A Ray row is the wall time
of one whole execution of the lazy dataset (ds.materialize()), actor start and model load inside
it, as a user sees it; it is measured twice and the faster is kept (the first also pays Ray's
worker-process start). Its steady rate leaves out each actor's first batch (the actor's start and
load): the rows after them over the time from the first batch done to the last. The direct rows
exclude the load (a warm-up run first). Every Ray output is checked against the direct run of the
same device (max abs difference printed).
"""
from __future__ import annotations

import argparse
import datetime
import gzip
import os
import platform
import shlex
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from resnet50 import build_resnet50  # noqa: E402

import dnnx  # noqa: E402

EXTERNAL = Path(__file__).resolve().parents[2] / "shared" / "external"


def mnist_images(count: int):
    """(model bytes, images [count,1,28,28] float32, which): mnist-8 on the real test set when
    ../shared/external is here, else the example LeNet on random images."""
    data = EXTERNAL / "data" / "t10k-images-idx3-ubyte.gz"
    model = EXTERNAL / "models" / "mnist-8" / "model.onnx"
    if data.exists() and model.exists():
        with gzip.open(data, "rb") as f:
            n, rows, cols = (int(v) for v in np.frombuffer(f.read(16), dtype=">u4")[1:])
            images = np.frombuffer(f.read(), dtype=np.uint8).reshape(n, 1, rows, cols).astype(np.float32)
        images = np.resize(images, (count, 1, rows, cols))  # repeats the set past 10,000 rows
        return model.read_bytes(), images, "mnist-8 on the MNIST test set"
    from dnnx.examples import build
    images = np.random.default_rng(0).random((count, 1, 28, 28), dtype=np.float32)
    return build("lenet").SerializeToString(), images, "example LeNet on random images (../shared absent)"


def resnet_images(count: int):
    images = np.random.default_rng(1).standard_normal((count, 3, 224, 224)).astype(np.float32)
    return build_resnet50().SerializeToString(), images, "ResNet-50 (bench/resnet50.py) on random images"


def direct(model_bytes: bytes, images: np.ndarray, device: str, batch: int):
    """(seconds, outputs) of Model.run over every row in chunks of `batch`, after one warm-up chunk."""
    model = dnnx.load(model_bytes, device=device)
    name = model.inputs[0].name
    fixed = model.inputs[0].shape[0]
    step = fixed if isinstance(fixed, int) else batch  # mnist-8 has a fixed batch of 1
    model.run({name: images[:step]})
    start = time.perf_counter()
    out = np.concatenate([model.run({name: images[i:i + step]}) for i in range(0, len(images), step)])
    return time.perf_counter() - start, out


class TimedPredictor:
    """dnnx.ray.Predictor that stamps each output batch with the time it finished (column "done_at"),
    so that the steady rate can be told apart from the actors' start."""

    def __init__(self, **kwargs):
        import dnnx.ray

        self.predictor = dnnx.ray.Predictor(**kwargs)

    def __call__(self, batch):
        out = self.predictor(batch)
        out["done_at"] = np.full(len(out["y"]), time.time())
        return out


def through_ray(ray, model_bytes: bytes, images: np.ndarray, device: str, workers: int, cpus: float, batch: int):
    """(best job seconds of two executions, steady images/s of that one, outputs in row order).
    The job is what dnnx.ray.predict runs (map_batches with a pool of Predictor actors, the same
    arguments), as the user waits for it: actor start and model load included. The steady rate
    leaves out each actor's first batch: rows after them over the time from the first batch done
    to the last."""
    import pyarrow as pa
    from ray.data.extensions import ArrowTensorArray

    table = pa.table({"image": ArrowTensorArray.from_numpy(images), "id": np.arange(len(images))})
    ds = ray.data.from_arrow(table).repartition(max(4, 2 * workers)).materialize()
    gpu = device.startswith("cuda")
    threads = None if gpu else max(1, int(cpus))
    kwargs = dict(model=ray.put(model_bytes), input_columns="image", output_columns="y", device=device,
                  threads=threads)
    best = None
    for _ in range(2):
        out = ds.map_batches(TimedPredictor, fn_constructor_kwargs=kwargs, batch_format="numpy", batch_size=batch,
                             compute=ray.data.ActorPoolStrategy(size=workers), num_cpus=0.5 if gpu else cpus,
                             num_gpus=1 if gpu else 0)
        start = time.perf_counter()
        done = out.materialize()
        seconds = time.perf_counter() - start
        if best is None or seconds < best[0]:
            best = (seconds, done)
    seconds, done = best
    batches = list(done.iter_batches(batch_format="numpy", batch_size=None))
    ids = np.concatenate([b["id"] for b in batches])
    rows = np.concatenate([b["y"] for b in batches])[np.argsort(ids)]
    # one stamp per output batch, in time order, with its row count
    stamps, counts = np.unique(np.concatenate([b["done_at"] for b in batches]), return_counts=True)
    later = slice(workers, None)  # each actor's first batch left out
    steady = counts[later].sum() / (stamps[-1] - stamps[workers - 1]) if len(stamps) > workers else float("nan")
    return seconds, steady, rows


def bench_model(ray, title: str, model_bytes: bytes, images: np.ndarray, args, cuda: bool) -> list:
    lines = [f"### {title}, {len(images)} images, Ray batches of {args.batch} rows", "",
             "| run | images/s, whole job | seconds | images/s, steady | max abs diff vs direct |",
             "| --- | ---: | ---: | ---: | ---: |"]

    def row(name, seconds, steady, diff):
        lines.append(f"| {name} | {len(images) / seconds:,.0f} | {seconds:.2f} | {steady} | {diff} |")
        print(lines[-1], flush=True)

    seconds, reference = direct(model_bytes, images, "cpu", args.batch)
    row(f"direct, CPU, {os.cpu_count()} dnnx threads", seconds, "-", "-")
    for workers in (1, 2):
        seconds, steady, out = through_ray(ray, model_bytes, images, "cpu", workers, args.cpus_per_worker, args.batch)
        row(f"Ray, {workers} CPU actor{'s' * (workers > 1)} ({args.cpus_per_worker:g} CPUs each)", seconds,
            f"{steady:,.0f}", f"{np.abs(out - reference).max():.1e}")
    if cuda:
        seconds, reference = direct(model_bytes, images, "cuda", args.batch)
        row("direct, CUDA (fp32, host input and output)", seconds, "-", "-")
        seconds, steady, out = through_ray(ray, model_bytes, images, "cuda", 1, 0.5, args.batch)
        row("Ray, 1 GPU actor (fp32)", seconds, f"{steady:,.0f}", f"{np.abs(out - reference).max():.1e}")
    return lines + [""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mnist-images", type=int, default=10000)
    parser.add_argument("--resnet-images", type=int, default=512)
    parser.add_argument("--batch", type=int, default=256, help="rows per batch Ray hands an actor (and direct chunks)")
    parser.add_argument("--cpus-per-worker", type=float, default=max(1, (os.cpu_count() or 2) // 2))
    parser.add_argument("--out", help="append the markdown section to this file")
    args = parser.parse_args()

    import ray

    cuda = dnnx.cuda_available()
    ray.init(num_cpus=os.cpu_count(), num_gpus=1 if cuda else 0, include_dashboard=False, log_to_driver=False,
             logging_level="WARNING")
    ray.data.DataContext.get_current().enable_progress_bars = False
    header = [f"## dnnx on Ray Data ({datetime.date.today()})", "",
              f"Machine: {platform.node()}, {os.cpu_count()} CPUs, Ray {ray.__version__}, dnnx {dnnx.__version__}, "
              f"CUDA: {dnnx.cuda_status()}.",
              f"Command: `python bench/bench_ray.py {' '.join(shlex.quote(a) for a in sys.argv[1:])}`", ""]
    print("\n".join(header), flush=True)
    lines = list(header)
    for title, (model_bytes, images, what) in (("MNIST", mnist_images(args.mnist_images)),
                                               ("ResNet-50", resnet_images(args.resnet_images))):
        lines += bench_model(ray, f"{title}: {what}", model_bytes, images, args, cuda)
    ray.shutdown()
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "a") as f:
            f.write(text)


if __name__ == "__main__":
    main()
