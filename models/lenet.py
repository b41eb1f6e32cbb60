"""Writes the LeNet example model (python models/lenet.py [--out lenet.onnx] [--seed S]).
The builder lives in the package (dnnx.examples), so `dnnx models lenet` writes the same file."""
import argparse
import sys

from dnnx.cli import main

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="lenet.onnx", help="where to write it (default lenet.onnx)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random weights (default 0)")
    args = parser.parse_args()
    sys.exit(main(["models", "lenet", "--out", args.out, "--seed", str(args.seed)]))
