"""The one kind of progress bar dnnx shows (tqdm, on stderr), for everything that takes long:
``dnnx bench``'s timed calls, ``dnnx finetune``'s steps.

Bars appear only where someone watches: when stderr is a terminal. Redirected to a file or a
pipe (CI logs, ``2> log``) they stay quiet, so logs hold the results and not a thousand
carriage returns. ``DNNX_PROGRESS=1`` forces them on, ``DNNX_PROGRESS=0`` off.

    with bar(total=110, desc="timing", unit="call") as b:
        for _ in range(110):
            ...
            b.update()
"""
from __future__ import annotations

import os
import shutil
import sys

ENV = "DNNX_PROGRESS"
SPARE_COLUMNS = 3  # left free at the line's end: a "^C" echoed there must not wrap past what the bar clears
BAR_FORMAT = "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}{postfix}]"


def enabled() -> bool:
    """Whether bars show: DNNX_PROGRESS when set ("0" off, anything else on), else whether stderr is
    a terminal."""
    forced = os.environ.get(ENV)
    if forced is not None and forced.strip() != "":
        return forced.strip() != "0"
    stream = sys.stderr
    return bool(stream is not None and hasattr(stream, "isatty") and stream.isatty())


class _Quiet:
    """What ``bar`` returns when bars are off (or tqdm is missing): the same calls, doing nothing."""

    n = 0

    def update(self, n: int = 1) -> None:
        self.n += n

    def set_postfix_str(self, text: str = "", refresh: bool = True) -> None:
        pass

    def set_description_str(self, text: str = "", refresh: bool = True) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def bar(total: int, desc: str, unit: str = "it", leave: bool = False, show: bool = True):
    """A tqdm bar on stderr (``leave=False``: it clears itself when closed, so the line printed
    after it, on stdout, is the one that stays), or a quiet stand-in when bars are off (or the
    caller says ``show=False``)."""
    if not show or not enabled():
        return _Quiet()
    try:
        from tqdm import tqdm
    except ImportError:  # tqdm is a dependency; a stripped environment still runs, silently
        return _Quiet()
    columns = shutil.get_terminal_size(fallback=(100, 24)).columns
    return tqdm(total=total, desc=desc, unit=unit, leave=leave, file=sys.stderr, ncols=max(40, columns - SPARE_COLUMNS),
                bar_format=BAR_FORMAT, mininterval=0.2)


__all__ = ["bar", "enabled", "ENV"]
