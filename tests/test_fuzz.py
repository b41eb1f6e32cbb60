"""A small seeded run of bench/fuzz.py in CI (issue #18): mutated models (the examples, and
../shared/external's models where present) loaded and run in worker processes with a timeout,
inputs fuzzed too. No crash, no hang, every failure a dnnx.DnnxError or ValueError within 1 s of
the load call. The bench runs the same cases at a large count (python bench/fuzz.py)."""
import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "fuzz.py"
spec = importlib.util.spec_from_file_location("dnnx_bench_fuzz", BENCH)
fuzz = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fuzz)

COUNT = 400
JOBS = 2
CAP = 4 << 30  # address space per worker: a shared CI machine never pays for a model that fits the RAM


def test_the_sources_include_the_examples():
    names = fuzz.source_names()
    assert "example:lenet" in names and "example:lstm" in names


def test_mutations_are_seeded(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    for seed in range(5):
        pa, da = fuzz.mutate("example:lenet", seed, a)
        pb, db = fuzz.mutate("example:lenet", seed, b)
        assert da == db and pa.read_bytes() == pb.read_bytes()


@pytest.mark.parametrize("seed", [1000])
def test_fuzzed_models_fail_cleanly_and_quickly(seed):
    stats = fuzz.drive(COUNT, seed, "cpu", JOBS, timeout=30.0, sources=fuzz.source_names(), log=lambda line: None,
                       max_memory=CAP)
    line = fuzz.summary("cpu", stats)
    assert stats["models"] == COUNT, line
    assert stats["crashes"] == 0 and stats["hangs"] == 0, "\n".join([line] + stats["findings"])
    assert stats["unclean"] == 0, "\n".join([line] + stats["findings"])
    assert stats["slow"] == 0, "\n".join([line] + stats["findings"])
    assert stats["clean"] > COUNT // 4 and stats["ran"] > 0, line  # both kinds of case were exercised
