"""A small seeded run of bench/fuzz.py in CI (issue #18): mutated models (the examples, and
../shared/external's models where present) loaded and run in worker processes with a timeout,
inputs fuzzed too. No crash, no hang, every failure a dnnx.DnnxError or ValueError within 1 s of
the call that raised it. The bench runs the same cases at a large count (python bench/fuzz.py),
with the zoo's models as sources too (issue #34): a few of the smaller ones are fuzzed here."""
import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "fuzz.py"
spec = importlib.util.spec_from_file_location("dnnx_bench_fuzz", BENCH)
fuzz = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fuzz)

COUNT = 400
ZOO_COUNT = 24
JOBS = 2
SMALL_SOURCES = ("example", "models")  # what the seeded CI run fuzzes (as before the zoo sources)
CAP = 4 << 30  # address space per worker: a shared CI machine never pays for a model that fits the RAM


# Zoo sources small enough for CI's 2 cores and the address-space cap: one of each kind of model
# (a CNN, a recurrent net, token ids into a transformer, a quantized graph)
ZOO_SOURCES = ["zoo:squeezenet1_1.onnx", "zoo:lstm_bi.onnx", "zoo2:bert.onnx", "zoo2:q_dyn_bert.onnx"]


def test_the_sources_include_the_examples():
    names = fuzz.source_names()
    assert "example:lenet" in names and "example:lstm" in names
    assert fuzz.source_names(("example",)) == ["example:lenet", "example:lstm"]
    with pytest.raises(ValueError, match="unknown source kind"):
        fuzz.source_names(("zoo3",))


def test_the_sources_include_every_zoo_model():
    if not fuzz.ext.find_models():
        pytest.skip(f"{fuzz.ext.EXTERNAL} is not here (the shared models are optional)")
    names = fuzz.source_names(("zoo", "zoo2"))
    files = [n for n in fuzz.ext.find_models() if n.startswith(("zoo/", "zoo2/"))]
    assert len(names) == len(files) and set(ZOO_SOURCES) <= set(names)


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
    stats = fuzz.drive(COUNT, seed, "cpu", JOBS, timeout=30.0, sources=fuzz.source_names(SMALL_SOURCES),
                       log=lambda line: None, max_memory=CAP)
    line = fuzz.summary("cpu", stats)
    assert stats["models"] == COUNT, line
    assert stats["crashes"] == 0 and stats["hangs"] == 0, "\n".join([line] + stats["findings"])
    assert stats["unclean"] == 0, "\n".join([line] + stats["findings"])
    assert stats["slow"] == 0, "\n".join([line] + stats["findings"])
    assert stats["clean"] > COUNT // 4 and stats["ran"] > 0, line  # both kinds of case were exercised


def test_fuzzed_zoo_models_fail_cleanly_and_quickly():
    if not all(n in fuzz.source_names(("zoo", "zoo2")) for n in ZOO_SOURCES):
        pytest.skip(f"{fuzz.ext.EXTERNAL} is not here (the shared models are optional)")
    stats = fuzz.drive(ZOO_COUNT, 2000, "cpu", JOBS, timeout=60.0, sources=ZOO_SOURCES, log=lambda line: None,
                       max_memory=CAP)
    line = fuzz.summary("cpu fp32", stats)
    assert stats["models"] == ZOO_COUNT, line
    assert stats["crashes"] == 0 and stats["hangs"] == 0, "\n".join([line] + stats["findings"])
    assert stats["unclean"] == 0 and stats["slow"] == 0, "\n".join([line] + stats["findings"])
    assert stats["clean"] > 0 and stats["ran"] > 0, line


def test_the_budget_leaves_cases_not_run():
    stats = fuzz.drive(6, 0, "cpu", 1, timeout=30.0, sources=fuzz.source_names(("example",)), log=lambda line: None,
                       budget=1e-9)
    assert stats["not_run"] == 6 and stats["models"] == 0
    assert "6 not run" in fuzz.summary("cpu fp32", stats)


def test_the_command_line_refuses_a_half_precision_on_the_cpu(capsys):
    with pytest.raises(SystemExit):
        fuzz.main(["--precision", "fp16"])
    assert "the CPU runs fp32 only" in capsys.readouterr().err
