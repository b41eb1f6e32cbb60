"""Argument types and arguments shared by the commands."""
from __future__ import annotations

import argparse


def _int_at_least(text: str, least: int, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got '{text}'") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"expected {what}, got {value}")
    return value


def positive_int(text: str) -> int:
    return _int_at_least(text, 1, "a positive integer")


def non_negative_int(text: str) -> int:
    return _int_at_least(text, 0, "an integer >= 0")


def add_model(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", metavar="MODEL", help="an .onnx file")


def add_precision(parser: argparse.ArgumentParser) -> None:
    """--precision, with the names the engine knows (one list, in C++: core.precision_names())."""
    from .._native import core

    parser.add_argument("--precision", default="fp32", choices=core.precision_names(),
                        help="arithmetic on CUDA (docs/precision.md): fp32, tf32, fp16 or bf16 half storage; "
                             "the CPU runs fp32")


def add_planning(parser: argparse.ArgumentParser) -> None:
    """--precision, --algo-search and --workspace-limit: how a CUDA model is planned (dnnx.load's
    precision=, algo_search= and workspace_limit=; the names from the engine's one list)."""
    from .._native import core

    add_precision(parser)
    parser.add_argument("--algo-search", default="auto", choices=core.algo_search_names(),
                        help="how CUDA picks each layer's algorithm: auto times the fp32 convs of 4 GFLOP or more "
                             "(and, when fine-tuning, every fp32 conv's backward), heuristic takes cuDNN's and cuBLASLt's ranking, exhaustive times every candidate")
    parser.add_argument("--workspace-limit", default=None, metavar="BYTES",
                        help="the most workspace one CUDA layer may take, e.g. 256MiB (default: 4 GiB, at most an "
                             "eighth of the GPU's memory)")


def planning_options(args) -> dict:
    """dnnx.load keywords from add_planning's options."""
    return {"device": args.device, "precision": args.precision, "algo_search": args.algo_search,
            "workspace_limit": args.workspace_limit}


def add_batch(parser: argparse.ArgumentParser, required: bool = False, help_extra: str = "") -> None:
    parser.add_argument("--batch", type=non_negative_int, required=required, metavar="N",
                        help="batch size (0: an empty batch): binds each input's leading dim where it is symbolic "
                             "or 1, else its only symbolic dim (dnnx.load's batch_size)" + help_extra)


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """--help with every option's default: appends "(default: X)" to an option's help unless the
    help already names its default, the default is None or False (the option is off), or it is a
    positional argument. argparse's ArgumentDefaultsHelpFormatter would also print "(default: None)"."""

    def _get_help_string(self, action) -> str:
        text = action.help or ""
        default = action.default
        if (not action.option_strings or "(default" in text or "%(default)" in text or default is None
                or default is False or default is argparse.SUPPRESS):
            return text
        return f"{text} (default: %(default)s)"
