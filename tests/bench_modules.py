"""bench/'s scripts as modules for the tests (bench/ is no package; its modules import each other
by name, so the folder joins sys.path)."""
import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"


def bench_module(name):
    """bench/NAME.py as a module, loaded once."""
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]
