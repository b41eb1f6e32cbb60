"""The onnx node suite's scoreboard: every case through dnnx (CPU) and onnxruntime (CPU, cached
verdicts), with the cases onnxruntime passes and dnnx does not, grouped by operator.

    python scripts/node_suite.py [--filter REGEX] [--show-failures] [--json out.json]

Run from the repository root with dnnx importable (a wheel, or DNNX_DEV_BUILD=build/dev
PYTHONPATH=python). tests/test_onnx_node_tests.py asserts the same superset rule case by case."""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import sys
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

import node_suite  # noqa: E402


def dnnx_verdict(case) -> str:
    import dnnx.backend

    try:
        rep = dnnx.backend.prepare(case.model, "CPU")
        node_suite.run_case(rep.run, case, node_suite.FLOAT16_RTOL)
        return "pass"
    except AssertionError as e:
        return "mismatch: " + str(e).strip().splitlines()[0][:200]
    except Exception as e:  # noqa: BLE001 - a refusal of any kind is recorded, not raised
        return node_suite._first_line(e)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--filter", default="", help="only cases whose name matches this regex")
    ap.add_argument("--show-failures", action="store_true", help="list each case onnxruntime passes and dnnx not")
    ap.add_argument("--json", help="write {case: {ort, dnnx}} here")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    cases = [c for c in node_suite.cases() if re.search(args.filter, c.name)]
    ort = node_suite.ort_verdicts()
    rows = {}
    try:
        from tqdm import tqdm
        it = tqdm(cases, desc="node cases", unit="case", disable=not sys.stderr.isatty())
    except ImportError:
        it = cases
    for c in it:
        rows[c.name] = {"ort": ort.get(c.name, "missing"), "dnnx": dnnx_verdict(c)}
    both = sum(r["ort"] == "pass" and r["dnnx"] == "pass" for r in rows.values())
    ort_pass = sum(r["ort"] == "pass" for r in rows.values())
    dnnx_pass = sum(r["dnnx"] == "pass" for r in rows.values())
    gaps = {n: r for n, r in rows.items() if r["ort"] == "pass" and r["dnnx"] != "pass"}
    wrong = {n: r for n, r in rows.items() if r["dnnx"].startswith("mismatch")}
    by_op = collections.Counter()
    ops_of = {c.name: sorted({n.op_type for n in c.model.graph.node}) for c in cases}
    for n in gaps:
        by_op["+".join(ops_of[n])] += 1
    print(f"{node_suite.versions_key()}: {len(rows)} cases")
    print(f"onnxruntime passes {ort_pass}, dnnx passes {dnnx_pass}, both {both}; "
          f"onnxruntime passes and dnnx does not: {len(gaps)}; dnnx wrong values: {len(wrong)}")
    for ops, n in by_op.most_common():
        print(f"  {n:4d}  {ops}")
    if args.show_failures:
        for n, r in sorted(gaps.items()):
            print(f"{n}: {r['dnnx']}")
    for n, r in sorted(wrong.items()):
        print(f"WRONG {n}: {r['dnnx']} (onnxruntime: {r['ort']})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
