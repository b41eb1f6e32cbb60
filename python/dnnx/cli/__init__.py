"""The ``dnnx`` command line: ``dnnx info|run|plan|bench|profile|models|finetune|quantize``; ``dnnx COMMAND --help`` for each;
``dnnx --version`` prints ``dnnx <version>``.

Errors a user can cause (a missing or malformed file, an unsupported model, a wrong input) print
one line to stderr and exit with status 2; a traceback means a bug in dnnx.
"""
from __future__ import annotations

import argparse
import sys

from .. import __version__
from ..errors import DnnxError
from . import bench, finetune, info, models, plan, profile, quantize, run
from ._args import DefaultsHelpFormatter

COMMANDS = (info, run, plan, bench, profile, models, finetune, quantize)  # each: NAME, HELP, add_arguments(parser), main(args)
DESCRIPTION = "dnnx: an ONNX inference and fine-tuning engine (CPU: OpenBLAS; NVIDIA GPUs: cuDNN, cuBLAS)."
USER_ERROR = 2  # the status argparse uses for a bad command line; dnnx uses it for every user error


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dnnx", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"dnnx {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        sub = commands.add_parser(command.NAME, help=command.HELP, description=command.HELP,
                                  formatter_class=DefaultsHelpFormatter)
        command.add_arguments(sub)
        sub.set_defaults(handler=command.main)
    return parser


def _one_line(error: BaseException) -> str:
    text = " ".join(line.strip() for line in str(error).splitlines() if line.strip())
    return text or type(error).__name__


def main(argv=None) -> int:
    """Runs one command; returns the exit status (console scripts pass it to sys.exit)."""
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except (DnnxError, ValueError, OSError) as e:  # OSError covers a missing or unreadable file
        print(f"dnnx {args.command}: error: {_one_line(e)}", file=sys.stderr)
        return USER_ERROR
    except KeyboardInterrupt:
        print(f"dnnx {args.command}: interrupted", file=sys.stderr)
        return 130  # the shell's convention for SIGINT


__all__ = ["main", "build_parser"]
