"""The CPU kernels' thread rule (Note [cpu threads]): a model's outputs are the same bits at 1 and 2
threads. One helper for the tests that check it."""
import numpy as np

import dnnx
from dnnx.threads import get_num_threads, set_num_threads


def assert_same_bits_on_one_and_two_threads(model, feeds, check=None) -> dict:
    """Loads and runs ``model`` on ``feeds`` (a dict by input name) at 1 and at 2 threads, asserts
    that every output is bit-identical, and returns the outputs by name (the thread count restored).
    ``check(m)``, where given, asserts on each thread count's loaded model (its plan, say)."""
    before = get_num_threads()
    try:
        out = []
        for threads in (1, 2):
            set_num_threads(threads)
            m = dnnx.load(model)
            if check is not None:
                check(m)
            out.append(m.run_dict(feeds))
    finally:
        set_num_threads(before)
    for name in out[0]:
        assert np.array_equal(out[0][name], out[1][name]), name
    return out[0]
