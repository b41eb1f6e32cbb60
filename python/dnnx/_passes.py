"""The switches of the load-time rewrite passes (engine/runtime/passes), from ``dnnx.load``'s
``passes`` and ``optimize`` arguments."""
from __future__ import annotations

from ._native import core


def pass_names() -> list:
    """The rewrite passes in the order they run."""
    return list(core.pass_names())


def pass_switches(passes=None, optimize=True) -> dict:
    """{pass name: on} for every pass: all on, all off with ``optimize=False``, then the
    ``passes`` dict's own choices. ValueError for an unknown name or a non-bool value."""
    names = pass_names()
    switches = {name: bool(optimize) for name in names}
    if passes is None:
        return switches
    if not isinstance(passes, dict):
        raise ValueError(f"passes must be a dict {{pass name: bool}}, got {type(passes).__name__}")
    for name, on in passes.items():
        if name not in switches:
            raise ValueError(f"unknown pass {name!r} (passes: {', '.join(names)})")
        if not isinstance(on, bool):
            raise ValueError(f"passes[{name!r}] must be True or False, got {on!r}")
        switches[name] = on
    return switches
