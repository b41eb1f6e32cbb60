"""examples/ray_serve.py against a local Ray Serve instance (loopback only, a free port): HTTP
requests and concurrent handle calls answered as a direct run answers them, the concurrent ones
gathered into batches by @serve.batch."""
import importlib.util
import json
import socket
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import onnx
import pytest

pytest.importorskip("ray")
serve = pytest.importorskip("ray.serve")

import dnnx  # noqa: E402
from dnnx.examples import build  # noqa: E402
from ort_check import rand  # noqa: E402
from ray_cluster import start_ray  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
TIMEOUT = 60  # seconds for any one request


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """(handle, port, model path) of examples/ray_serve.py's app serving LeNet on 127.0.0.1."""
    _, restore = start_ray(extra_paths=[EXAMPLES])  # replicas import the example as the module ray_serve
    spec = importlib.util.spec_from_file_location("ray_serve", EXAMPLES / "ray_serve.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    path = tmp_path_factory.mktemp("serve") / "lenet.onnx"
    onnx.save(build("lenet", seed=0), path)
    port = free_port()
    try:
        serve.start(http_options={"host": "127.0.0.1", "port": port})
        # a long wait and room for 16: the concurrent calls below land in few batches
        handle = serve.run(example.app(path, max_batch_size=16, batch_wait_timeout_s=0.2,
                                       ray_actor_options={"num_cpus": 0.5}), route_prefix="/")
        yield handle, port, path
    finally:
        serve.shutdown()
        restore()


def post(port, body) -> dict:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=TIMEOUT) as reply:
        return json.loads(reply.read())


def test_http_requests_are_answered_as_a_direct_run(served):
    _, port, path = served
    model = dnnx.load(path)
    for seed in range(2):
        x = rand(1, 28, 28, seed=seed)
        got = post(port, {"input": x.tolist()})
        np.testing.assert_allclose(np.array(got["probs"]), model.run(x[None])[0], rtol=1e-6, atol=1e-7)
    assert "expected JSON" in post(port, {"nope": 1})["error"]


def test_concurrent_calls_are_batched(served):
    handle, _, path = served
    model = dnnx.load(path)
    samples = [rand(1, 28, 28, seed=10 + i) for i in range(16)]
    with ThreadPoolExecutor(16) as pool:
        replies = list(pool.map(lambda x: handle.predict.remote(x).result(timeout_s=TIMEOUT), samples))
    want = model.run(np.stack(samples))
    for reply, row in zip(replies, want):
        np.testing.assert_allclose(reply["probs"], row, rtol=1e-5, atol=1e-6)  # in batches of other sizes
    sizes = handle.stats.remote().result(timeout_s=TIMEOUT)["batch_sizes"]
    assert sum(sizes) >= 16 and max(sizes) > 1, sizes  # @serve.batch gathered some of the 16
