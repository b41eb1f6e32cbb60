#!/usr/bin/env python3
"""Writes the support matrix of docs/operators.md from the registrations (dnnx.support).

    python scripts/gen_operators.py            # rewrite the block in docs/operators.md
    python scripts/gen_operators.py --check    # exit 1 when the file is stale

Every backend that can be opened here is read from its registrations. CUDA needs a GPU: on a
machine without one the CUDA columns are kept from the file as it is (a new op's CUDA cells
read "?" until the script runs where a GPU is; tests/cuda/test_cuda_support_matrix.py fails on
the GPU machine while they are stale)."""
import argparse
import pathlib
import sys

import dnnx
from dnnx import support

DOC = pathlib.Path(__file__).resolve().parent.parent / "docs" / "operators.md"


def render(text: str) -> str:
    before, block, after = support.split_document(text)
    tables = {"cpu": support.kernel_table("cpu"),
              "cuda": support.kernel_table("cuda") if dnnx.cuda_available() else None}  # None: keep the file's
    return before + support.matrix_markdown(tables, kept=support.block_rows(block)) + after


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when docs/operators.md is stale")
    args = parser.parse_args()
    text = DOC.read_text()
    new = render(text)
    if args.check:
        if new != text:
            print(f"{DOC} is stale: run python scripts/gen_operators.py", file=sys.stderr)
            return 1
        return 0
    tmp = DOC.with_suffix(".md.tmp")
    tmp.write_text(new)
    tmp.replace(DOC)  # never a half-written file
    print(f"wrote {DOC}" + ("" if dnnx.cuda_available() else " (CUDA columns kept: no GPU here)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
