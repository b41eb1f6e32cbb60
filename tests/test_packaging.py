"""What pyproject.toml promises the README's set-up commands: the test requirements file and the
[test] extra agree (the second command installs the file, so that dnnx is not built twice),
DNNX_CUDA=ON adds cuDNN and cuBLAS to the build requirements, and the digits ship with the
package (no scikit-learn needed, the same values as scikit-learn's copy)."""
import re
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def pyproject():
    if sys.version_info < (3, 11):
        pytest.skip("tomllib needs Python 3.11")
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def requirement_lines(path: Path) -> list:
    return [line.strip() for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]


def test_test_requirements_match_the_test_extra(pyproject):
    assert sorted(requirement_lines(ROOT / "tests" / "requirements.txt")) == \
        sorted(pyproject["project"]["optional-dependencies"]["test"])


def test_base_dependencies_cover_the_examples(pyproject):
    names = {re.split(r"[<>=!~ ;\[]", d)[0].lower() for d in pyproject["project"]["dependencies"]}
    assert "tqdm" in names  # the progress bars
    assert "scikit-learn" not in names  # the digits ship with dnnx
    assert pyproject["project"]["optional-dependencies"]["plot"] == ["matplotlib>=3.5"]


def test_dnnx_cuda_on_adds_the_cuda_libraries_to_the_build(pyproject):
    overrides = pyproject["tool"]["scikit-build"]["overrides"]
    cuda = [o for o in overrides if "DNNX_CUDA" in o.get("if", {}).get("env", {})]
    assert len(cuda) == 1
    pattern = cuda[0]["if"]["env"]["DNNX_CUDA"]
    assert all(re.match(pattern, v) for v in ("ON", "on")) and not any(re.match(pattern, v) for v in ("OFF", "AUTO"))
    # the run-time libraries of the cuda extra, and cudnn-frontend's headers (build time only), pinned to
    # the last release whose headers need no NVRTC (pyproject.toml says why)
    build_only = [r for r in cuda[0]["build"]["requires"] if r.startswith("nvidia-cudnn-frontend")]
    assert build_only == ["nvidia-cudnn-frontend==1.18.*"]
    runtime = [r for r in cuda[0]["build"]["requires"] if r not in build_only]
    assert sorted(runtime) == sorted(pyproject["project"]["optional-dependencies"]["cuda"])
    build_core = next(r for r in pyproject["build-system"]["requires"] if r.startswith("scikit-build-core"))
    assert build_core == "scikit-build-core>=0.11"  # build.requires came in 0.11


def test_digits_ship_with_the_package():
    from dnnx._digits import DATA, digit_images, load_digits

    assert DATA.is_file() and DATA.stat().st_size < 64 * 1024
    images, labels = digit_images()
    assert images.shape == (1797, 8, 8) and labels.shape == (1797,)
    assert images.min() == 0 and images.max() == 16 and sorted(set(labels.tolist())) == list(range(10))
    x_train, y_train, x_val, y_val = load_digits([1, 1, 28, 28], seed=0)
    assert x_train.shape == (1438, 1, 28, 28) and x_val.shape == (359, 1, 28, 28)
    assert len(y_train) + len(y_val) == 1797


def test_shipped_digits_are_scikit_learns():
    datasets = pytest.importorskip("sklearn.datasets")
    from dnnx._digits import digit_images

    images, labels = digit_images()
    reference = datasets.load_digits()
    np.testing.assert_array_equal(images, reference.images)
    np.testing.assert_array_equal(labels, reference.target)
