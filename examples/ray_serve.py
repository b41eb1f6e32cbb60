"""Serving a dnnx model over HTTP with Ray Serve, with dynamic batching (``@serve.batch``): the
requests that arrive within ``batch_wait_timeout_s`` of each other (up to ``max_batch_size``) run
as one batch through one model per replica.

    pip install "dnnx[ray]"
    python examples/ray_serve.py model.onnx --port 8000        # then, from another shell:
    curl -s -X POST http://127.0.0.1:8000/ -d '{"input": [[[0.0, ...]]]}'

A request holds one sample (the model's first input without its batch dim) as nested lists;
the reply is {output name: the sample's output as nested lists}. From Python, the same deployment
answers ``handle.predict.remote(array)`` with {output name: array}. On a GPU give
``--device cuda``: each replica asks Ray for one GPU. tests/test_ray_serve.py runs this file
against a local Serve instance.
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Dict, List

import numpy as np
from ray import serve

import dnnx.ray


@serve.deployment
class DnnxDeployment:
    """One dnnx model per replica, fed batches of single samples."""

    def __init__(self, model: bytes, device: str = "cpu", max_batch_size: int = 32,
                 batch_wait_timeout_s: float = 0.005):
        # dnnx.ray.Predictor: loads once, and runs any number of rows (a fixed-batch model N at a time)
        self.predictor = dnnx.ray.Predictor(model, device=device)
        self.input = self.predictor.model.inputs[0]
        self.batch_sizes: List[int] = []  # what @serve.batch gathered, for the curious (and the test)
        self.predict_batch.set_max_batch_size(max_batch_size)
        self.predict_batch.set_batch_wait_timeout_s(batch_wait_timeout_s)

    @serve.batch(max_batch_size=32, batch_wait_timeout_s=0.005)
    async def predict_batch(self, samples: List[np.ndarray]) -> List[Dict[str, np.ndarray]]:
        self.batch_sizes.append(len(samples))
        outputs = self.predictor({self.input.name: np.stack(samples)})
        return [{name: array[i] for name, array in outputs.items()} for i in range(len(samples))]

    async def predict(self, sample) -> Dict[str, np.ndarray]:
        """One sample (an array or nested lists of the input's dtype) -> {output name: array}."""
        return await self.predict_batch(np.asarray(sample, dtype=self.input.dtype))

    def stats(self) -> Dict[str, list]:
        return {"batch_sizes": list(self.batch_sizes)}

    async def __call__(self, request) -> Dict[str, list]:
        body = await request.json()
        if "input" not in body:
            return {"error": f"expected JSON {{\"input\": one sample of {self.input.name} "
                             f"{list(self.input.shape[1:])} as nested lists}}"}
        outputs = await self.predict(body["input"])
        return {name: array.tolist() for name, array in outputs.items()}


def app(model, device: str = "cpu", max_batch_size: int = 32, batch_wait_timeout_s: float = 0.005, **options):
    """The Serve application for ``model`` (a path: read here and shipped as bytes). ``options``
    go to ``@serve.deployment`` (num_replicas, ray_actor_options, ...)."""
    data = Path(model).read_bytes() if not isinstance(model, bytes) else model
    if str(device).startswith("cuda"):
        options.setdefault("ray_actor_options", {"num_gpus": 1})
    deployment = DnnxDeployment.options(**options) if options else DnnxDeployment
    return deployment.bind(data, device, max_batch_size, batch_wait_timeout_s)


def main() -> None:
    parser = argparse.ArgumentParser(description="serve an ONNX model with dnnx on Ray Serve")
    parser.add_argument("model")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--replicas", type=int, default=1)
    parser.add_argument("--max-batch-size", type=int, default=32)
    args = parser.parse_args()
    serve.start(http_options={"host": args.host, "port": args.port})
    serve.run(app(args.model, args.device, args.max_batch_size, num_replicas=args.replicas), blocking=True)


if __name__ == "__main__":
    main()
