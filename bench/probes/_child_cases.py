"""What the CUDA probes that time each case in a child process of their own share: the common
arguments (models, batch, runs, budget, timeout) and one child's run, read as the JSON its last
line prints."""
import json
import subprocess
import sys


def add_case_arguments(ap, models, runs, budget):
    ap.add_argument("models", nargs="*", default=models)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--runs", type=int, default=runs)
    ap.add_argument("--budget", type=float, default=budget, help="seconds; cases not started by then are skipped")
    ap.add_argument("--timeout", type=int, default=120)


def run_child(code: str, argv: list, timeout: int):
    """(the child's JSON dict, None), or (None, why it gave none: its last error line, or "timeout")."""
    try:
        r = subprocess.run([sys.executable, "-c", code, *map(str, argv)], capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timeout"
    if r.returncode:
        return None, "error: " + (r.stderr.strip().splitlines() or ["rc %d" % r.returncode])[-1][:80]
    return json.loads(r.stdout.strip().splitlines()[-1]), None
