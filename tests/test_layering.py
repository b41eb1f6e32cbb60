"""The engine's layers include only downwards (docs/architecture.md, "Layers"): ir below ops below
runtime below train and the backends; the bindings on top. An include that runs back up fails
here, naming the file and the include."""
import pathlib
import re

import pytest

ENGINE = pathlib.Path(__file__).resolve().parent.parent / "engine"
# What each layer may include from the engine (its own folder included).
ALLOWED = {
    "ir": {"ir"},
    "ops": {"ir", "ops"},
    "runtime": {"ir", "ops", "runtime"},
    "train": {"ir", "ops", "runtime", "train"},
    "backends/cpu": {"ir", "ops", "runtime", "train", "backends/cpu"},
    "backends/cuda": {"ir", "ops", "runtime", "train", "backends/cuda"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path: str) -> str:
    return "/".join(path.split("/")[:2]) if path.startswith("backends/") else path.split("/")[0]


@pytest.mark.skipif(not ENGINE.is_dir(), reason="no engine sources here")
@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_includes_run_only_downwards(layer):
    files = [p for p in (ENGINE / layer).rglob("*") if p.suffix in {".h", ".cc", ".cu", ".cuh"}]
    assert files, f"engine/{layer} has no sources"
    bad = []
    for f in files:
        for inc in INCLUDE.findall(f.read_text()):
            if "/" not in inc:
                continue  # a library header or a sibling
            if layer_of(inc) not in ALLOWED[layer] and (ENGINE / inc).exists():
                bad.append(f"{f.relative_to(ENGINE)} includes {inc}")
    assert not bad, "includes that run back up:\n" + "\n".join(bad)


def test_no_core_folder_is_left():
    assert not (ENGINE / "core").exists()
