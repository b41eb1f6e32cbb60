"""The frames a sampled profile spends its time in: py-spy's raw (folded) output, summed per frame.

    py-spy record --native --format raw -o run.folded -- python3 ...
    python3 bench/probes/folded_top.py run.folded [--top 30] [--match dnnx]

Prints the top frames by self samples (the stack's last frame) and by inclusive samples (any
frame of the stack, counted once per stack), each as a share of all samples. --match keeps
inclusive frames whose text holds that string (e.g. the engine's namespace).
"""
from __future__ import annotations

import argparse
import collections
import re


def frame_name(frame: str) -> str:
    # "function (file:line)" -> "function (file)": lines split one function into many rows
    return re.sub(r":\d+\)$", ")", frame.strip())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folded")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--match", default="")
    args = parser.parse_args()
    own: collections.Counter = collections.Counter()
    inclusive: collections.Counter = collections.Counter()
    total = 0
    with open(args.folded, errors="replace") as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            if not count.isdigit():
                continue
            n = int(count)
            frames = [frame_name(x) for x in stack.split(";") if x]
            if not frames:
                continue
            total += n
            own[frames[-1]] += n
            for name in set(frames):
                if args.match in name:
                    inclusive[name] += n
    print(f"{total} samples")
    for title, counter in (("self", own), ("inclusive", inclusive)):
        print(f"-- by {title} samples")
        for name, n in counter.most_common(args.top):
            print(f"{100.0 * n / max(total, 1):6.1f}%  {name[:160]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
