"""Pictures the CLI draws with matplotlib (the ``plot`` extra: ``pip install 'dnnx[plot]'``):
``dnnx finetune --plot`` (loss and accuracy per epoch) and ``dnnx profile --plot`` (time per layer).

matplotlib is imported only here and only when a picture is asked for; the commands call
``require_matplotlib()`` before any work, so a missing extra fails in a second, in one line, and
not after an hour of training.
"""
from __future__ import annotations

import math

EXTRA_HINT = "pip install matplotlib (dnnx's 'plot' extra)"
DPI = 120
MAX_LAYER_ROWS = 40  # a profile plot shows the slowest layers when there are more


class MissingExtraError(ImportError, ValueError):
    """An optional dependency is not installed. An ImportError for library callers; a ValueError,
    so the CLI reports it as a user error in one line."""


def require_matplotlib():
    """matplotlib.pyplot on the Agg backend (files only: no display needed, none opened)."""
    try:
        import matplotlib
    except ImportError:
        raise MissingExtraError(f"--plot needs matplotlib, which is not installed: {EXTRA_HINT}") from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path) -> None:
    fig.tight_layout()
    fig.savefig(path, dpi=DPI, format="png")


def training_curves(history: list, path, title: str = "") -> None:
    """Two panels over epochs: train and validation loss; train and validation accuracy. ``history``
    holds one dict per epoch (``epoch``, ``train_loss`` and, where measured, ``train_accuracy``,
    ``val_loss``, ``val_accuracy``); a missing series is left out."""
    plt = require_matplotlib()
    epochs = [h["epoch"] for h in history]

    def series(key):
        values = [h.get(key) for h in history]
        return None if all(v is None for v in values) else [math.nan if v is None else v for v in values]

    fig, (loss_ax, acc_ax) = plt.subplots(1, 2, figsize=(10, 4))
    try:
        for key, label, style in (("train_loss", "train", "o-"), ("val_loss", "validation", "s--")):
            values = series(key)
            if values is not None:
                loss_ax.plot(epochs, values, style, label=label)
        loss_ax.set(xlabel="epoch", ylabel="loss", title="loss (train: mean over the epoch's steps)")
        shown = []
        for key, label, style in (("train_accuracy", "train", "o-"), ("val_accuracy", "validation", "s--")):
            values = series(key)
            if values is not None:
                acc_ax.plot(epochs, values, style, label=label)
                shown += [v for v in values if not math.isnan(v)]
        acc_ax.set(xlabel="epoch", ylabel="accuracy", title="accuracy")
        if shown:  # up to 1, down to a little under the lowest value: small gains near 1 stay visible
            low = min(shown)
            acc_ax.set_ylim(max(0.0, low - 0.1 * max(1.0 - low, 0.05)), 1.0 + 0.01)
        else:
            acc_ax.text(0.5, 0.5, "no accuracy\n(mse loss, or no validation data)", ha="center", va="center",
                        transform=acc_ax.transAxes)
        for ax in (loss_ax, acc_ax):
            ax.grid(alpha=0.3)
            ax.xaxis.get_major_locator().set_params(integer=True)
            if ax.get_legend_handles_labels()[0]:
                ax.legend()
        if title:
            fig.suptitle(title)
        _save(fig, path)
    finally:
        plt.close(fig)


def layer_times(table, path, title: str = "") -> None:
    """A horizontal bar per layer (plan order, top to bottom): its median time in ms, labelled
    "name (op)" with the time and share at the bar's end. ``table`` is a dnnx.profile.ProfileTable."""
    plt = require_matplotlib()
    rows = list(table)
    total = table.total_ms
    note = ""
    if len(rows) > MAX_LAYER_ROWS:  # keep the slowest, in plan order
        keep = set(sorted(range(len(rows)), key=lambda i: -rows[i].median_ms)[:MAX_LAYER_ROWS])
        note = f" (the {MAX_LAYER_ROWS} slowest of {len(rows)} layers)"
        rows = [r for i, r in enumerate(rows) if i in keep]
    labels = [f"{r.name} ({r.op})" for r in rows]
    times = [r.median_ms for r in rows]
    fig, ax = plt.subplots(figsize=(9, 1.2 + 0.32 * len(rows)))
    try:
        ax.barh(range(len(rows)), times, color="tab:blue")
        ax.set_yticks(range(len(rows)), labels)
        ax.invert_yaxis()  # the first layer on top
        longest = max(times, default=0.0) or 1.0
        for i, t in enumerate(times):
            share = f"{100.0 * t / total:.1f}%" if total > 0 else "-"
            ax.text(t + 0.01 * longest, i, f"{t:.3f} ms  {share}", va="center", fontsize=8)
        ax.set_xlim(0, longest * 1.25)
        ax.set_xlabel("median time per run, ms")
        how = "GPU time" if str(table.device).startswith("cuda") else "host wall-clock time"
        ax.set_title(title or f"time per layer on {table.device}: {how}, median of {table.repeat} runs, "
                              f"total {total:.3f} ms{note}", fontsize=10)
        ax.grid(axis="x", alpha=0.3)
        _save(fig, path)
    finally:
        plt.close(fig)


__all__ = ["MissingExtraError", "require_matplotlib", "training_curves", "layer_times"]
