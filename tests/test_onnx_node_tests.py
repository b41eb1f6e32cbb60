"""onnx's backend node suite, every case (tests/node_suite.py runs and judges them as onnx's own
runner does), through dnnx's onnx.backend adapter on the CPU.

The rule: every case onnxruntime passes, dnnx passes too (onnxruntime's verdicts are cached per
onnx/onnxruntime version pair in tests/data/ort_node_verdicts.json). Until an open issue lifts it,
a refusal whose cause is listed in KNOWN_GAPS, with the issue and the reason, is an expected
failure; any other refusal of such a case fails, and so does a wrong value anywhere. A listed cause
that no case shows any more fails test_known_gaps_still_occur, so the list stays true.
`python scripts/node_suite.py` prints the scoreboard."""
import re

import pytest

import dnnx.backend
import node_suite

CASES = node_suite.cases()
ORT = node_suite.ort_verdicts(CASES)


# cause (a regex over dnnx's refusal) -> why it is a gap, and which open issue lifts it
KNOWN_GAPS = {
    r"\(Dropout\): training_mode true with ratio \S+ drops at random": "Dropout in training mode with a ratio above 0 drops at "
                                                       "random: dnnx runs inference graphs (fine-tuning has its own "
                                                       "training path)",
}


from node_suite import STORED_OUTPUT_DISPUTED  # noqa: E402 (shared with tests/cuda/test_cuda_every_op.py)


def _ort_run(case):
    import onnxruntime as ort

    sess = ort.InferenceSession(case.model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    return lambda inputs: sess.run(None, dict(zip(names, inputs)))


def _known_gap(message: str):
    return next((reason for cause, reason in KNOWN_GAPS.items() if re.search(cause, message)), None)


_seen_causes = set()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_onnx_node_case(case):
    ort = ORT.get(case.name, "missing: recompute tests/data/ort_node_verdicts.json")
    try:
        rep = dnnx.backend.prepare(case.model, "CPU")
        if case.name in STORED_OUTPUT_DISPUTED:
            assert ort != "pass", f"onnxruntime now passes {case.name}: remove it from STORED_OUTPUT_DISPUTED"
            held_to = STORED_OUTPUT_DISPUTED[case.name][1]
            ref = _ort_run(case) if held_to == "onnxruntime" else None
            for inputs, stored in case.data_sets:
                inputs = [node_suite.as_array(v) for v in inputs]
                want = ref(inputs) if ref else [node_suite.as_array(v) for v in stored]
                atol = case.atol if ref else held_to
                node_suite.assert_similar(want, rep.run(inputs), case.rtol, atol)
        else:
            node_suite.run_case(rep.run, case, node_suite.FLOAT16_RTOL)
    except AssertionError:
        raise  # a wrong value is a failure, whatever onnxruntime does
    except Exception as e:  # noqa: BLE001 - any refusal is judged below
        message = f"{type(e).__name__}: {e}"
        reason = _known_gap(message)
        if reason:
            _seen_causes.update(c for c in KNOWN_GAPS if re.search(c, message))
        if ort != "pass":
            pytest.skip(f"onnxruntime fails it too ({ort[:120]}); dnnx: {message[:200]}")
        if reason:
            pytest.xfail(reason)
        raise AssertionError(f"onnxruntime passes {case.name} and dnnx refuses it, with no open issue "
                             f"listed for the cause: {message[:500]}") from e


def test_known_gaps_still_occur():
    """Runs after the cases (pytest keeps file order): a cause that no case shows any more has been
    lifted, and must leave KNOWN_GAPS."""
    if len(_seen_causes) == 0:
        pytest.skip("the node cases did not run in this session (-k or a subset)")
    stale = [c for c in KNOWN_GAPS if c not in _seen_causes]
    assert not stale, f"these KNOWN_GAPS causes no longer occur; remove them: {stale}"


def test_every_case_has_a_verdict():
    missing = [c.name for c in CASES if c.name not in ORT]
    assert not missing, f"no onnxruntime verdict for {missing[:5]}...; delete tests/data/ort_node_verdicts.json"
