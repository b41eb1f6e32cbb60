"""dnnx on Ray (``pip install "dnnx[ray]"``): batch inference with Ray Data, one model per actor.

    import ray, dnnx.ray
    ds = ray.data.read_parquet("s3://.../images")               # a tensor column "image"
    out = dnnx.ray.predict(ds, "resnet50.onnx", input_columns="image", device="cuda", workers=4)
    out.write_parquet("s3://.../logits")

``predict`` reads the model once on the driver and puts it into the object store, so workers
need no copy of the file and load the same bytes; ``Predictor`` is the class behind it, for
``map_batches`` written by hand. A ``dnnx.Model`` pickles as its ONNX bytes and load options
(tuned weights included) and is loaded and planned again where it lands (dnnx/_pickle.py), so it
can also be passed to Ray tasks and actors as it is. On CUDA with ``algo_search="exhaustive"``
the actors of one node share the plan cache file: the second one times nothing.

Ray Serve: examples/ray_serve.py (a deployment with ``@serve.batch``).
"""
from __future__ import annotations

from typing import Any, Optional

from ._predictor import Columns, Predictor

INSTALL_HINT = 'dnnx.ray needs Ray: pip install "dnnx[ray]" (or "ray[data]")'


def _ray():
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError as e:
        raise ImportError(f"{INSTALL_HINT} ({e})") from None
    return ray


def predict(dataset, model, *, input_columns: Columns = None, output_columns: Columns = None, device: str = "cpu",
            precision: str = "fp32", chunk_size: Optional[int] = None, batch_size: int = 256,
            workers: Optional[int] = None, num_cpus: Optional[float] = None, num_gpus: Optional[float] = None,
            **load_options: Any):
    """``dataset.map_batches`` with a pool of ``Predictor`` actors; returns the (lazy) Dataset of
    the outputs (and the columns the model does not read).

    ``model``: a path (read here), ONNX bytes, an onnx.ModelProto or a dnnx.Model; put into the
    object store once. ``workers``: actors in the pool (default: the cluster's GPUs on CUDA, else
    1). Each actor asks for ``num_gpus`` (default 1 on CUDA: its own GPU) and ``num_cpus``
    (default 1 on the CPU, where the actor's dnnx threads follow it; give fractions on small
    clusters so that Ray Data's own tasks keep a CPU). ``batch_size``: rows per batch Ray hands
    over. The other arguments are ``Predictor``'s. ``device="cuda"`` on a cluster without GPUs
    is a ValueError here (rather than actors waiting for a GPU forever). A model that cannot load on a worker fails the
    dataset's execution with ``dnnx.WorkerLoadError``'s message (which worker, and why)."""
    ray = _ray()
    from .. import _pickle

    state = _pickle.as_state(model)  # a missing file or a wrong type fails here, on the driver
    on_gpu = str(device).startswith("cuda")
    if num_gpus is None:
        num_gpus = 1 if on_gpu else 0
        if on_gpu and not ray.cluster_resources().get("GPU"):  # else the actors would wait for one forever
            raise ValueError(f"device={device!r}: each actor asks Ray for a GPU, and this cluster has none "
                             f"(ray.cluster_resources()); on an autoscaling cluster pass num_gpus=1 explicitly")
    if num_cpus is None:
        num_cpus = 0 if on_gpu else 1
    if workers is None:
        workers = max(1, int(ray.cluster_resources().get("GPU", 1))) if on_gpu else 1
    threads = None if on_gpu else max(1, int(num_cpus))
    kwargs = dict(model=ray.put(state), input_columns=input_columns, output_columns=output_columns, device=device,
                  precision=precision, chunk_size=chunk_size, threads=threads, **load_options)
    return dataset.map_batches(Predictor, fn_constructor_kwargs=kwargs, batch_format="numpy", batch_size=batch_size,
                               compute=ray.data.ActorPoolStrategy(size=int(workers)), num_cpus=num_cpus,
                               num_gpus=num_gpus)


__all__ = ["Predictor", "predict", "INSTALL_HINT"]
