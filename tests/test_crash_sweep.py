"""The crash sweep's CPU half in CI (issue #34): bench/sweep.py over every model of
../shared/external on the CPU, at batches 1, 3 and 0 (a fixed model as declared), each model in
a child process. No crash, no hang, no mismatch against onnxruntime, nothing left unrun; every
case is ok except the refusals and onnxruntime failures listed below, each with its reason.

The lists are kept true both ways: a case newly refused fails this test, and so does a listed case
that now runs. When a fix lands, remove its entries; never add an entry without the open issue
that will lift it. Skipped where ../shared/external is absent. On 2 cores shared with builds it
took 141 s (98 cases, 2026-12-04); BATCHES, JOBS and BUDGET set its cost."""
import sys

import pytest

from bench_modules import bench_module

ext = bench_module("_external_models")
report = bench_module("_sweep_report")
sweep = bench_module("sweep")

BATCHES = (1, 3, 0)
JOBS = 2
TIMEOUT = 300.0  # per case; the slowest CPU case (r3d_18, batch 3) takes about 20 s alone
BUDGET = 1500.0  # the whole sweep; a case left unrun fails the test (raise it rather than lose cases)
ALL = BATCHES
FIXED = (None,)  # a model without a symbolic batch runs once, as declared

EMPTY_BATCH = ("cannot reshape", "an export whose Reshape infers a -1 beside the batch dim: with 0 rows the -1 is "
                                "ambiguous, and onnxruntime refuses it too ('The input tensor cannot be reshaped')")
# (file, batches, a phrase of the refusal, why and the open issue that lifts it)
KNOWN_REFUSALS = [
]
# The files whose export cannot run an empty batch (EMPTY_BATCH says why) where onnxruntime runs it:
# none now (the three such exports below fail in onnxruntime too, which the sweep counts as its failure).
REFUSED_AT_BATCH_0 = []
# onnxruntime (the reference) cannot run these; dnnx's run is not compared.
KNOWN_ONNXRUNTIME_FAILURES = {
    ("models/onnx_lstm_node_tests/test_lstm_batchwise/model.onnx", None):
        "onnxruntime does not implement LSTM's layout=1 (models/PROVENANCE.md)",
    **{(f"zoo2/{name}.onnx", 0): "onnxruntime 1.32 aborts on a recurrent layer over an empty batch ('terminate "
                                 "called without an active exception'); dnnx runs it (tests/test_empty_tensors.py)"
       for name in ("crnn", "speech_gru", "conv_lstm_har")},
    **{(name, 0): "both refuse an empty batch: " + EMPTY_BATCH[1]
       for name in ("zoo/lstm_bi.onnx", "zoo2/vit_tiny_patch16_224_ts.onnx", "zoo2/q_dyn_bert.onnx")},
}


def expected_refusals():
    """{(file, batch): (phrase, why)}."""
    known = {}
    for model, batches, phrase, why in KNOWN_REFUSALS:
        for b in batches:
            known[(model, b)] = (phrase, why)
    for model in REFUSED_AT_BATCH_0:
        known.setdefault((model, 0), EMPTY_BATCH)
    return known


def check(results):
    """Every way the sweep's results differ from what this file expects, one line each."""
    problems = []
    refusals = expected_refusals()
    seen = set()
    for r in results:
        key = (r["model"], r["batch"])
        seen.add(key)
        case = f"{r['model']} batch {report.batch_label(r['batch'])}"
        outcome, detail = r["outcome"], r["detail"]
        if outcome in ("crash", "hang", "mismatch", "sweep error"):
            problems.append(f"{outcome}: {case}: {detail} (an engine bug: fix it)")
        elif outcome == "not run":
            problems.append(f"not run: {case}: the budget ({BUDGET:.0f} s) ran out: raise BUDGET")
        elif outcome == "refusal":
            if key not in refusals:
                problems.append(f"newly refused: {case}: {detail} (a refusal is a failure: fix it, or add it to "
                                f"KNOWN_REFUSALS naming the open issue that will lift it)")
            elif refusals[key][0] not in detail:
                problems.append(f"refused for another reason: {case}: {detail} (KNOWN_REFUSALS expects "
                                f"{refusals[key][0]!r}: update its entry)")
        elif outcome == "onnxruntime-fails":
            if key not in KNOWN_ONNXRUNTIME_FAILURES:
                problems.append(f"onnxruntime fails: {case}: {detail} (not dnnx's failure: add it to "
                                f"KNOWN_ONNXRUNTIME_FAILURES with the reason)")
        if outcome != "refusal" and key in refusals:
            problems.append(f"a known refusal now gives {outcome}: {case} ({refusals[key][1]}): remove it from "
                            f"KNOWN_REFUSALS / REFUSED_AT_BATCH_0")
        if outcome != "onnxruntime-fails" and key in KNOWN_ONNXRUNTIME_FAILURES:
            problems.append(f"onnxruntime's known failure now gives {outcome}: {case}: remove it from "
                            f"KNOWN_ONNXRUNTIME_FAILURES")
    for key in sorted(set(refusals) | set(KNOWN_ONNXRUNTIME_FAILURES), key=str):
        if key not in seen:
            problems.append(f"listed but not swept: {key[0]} batch {report.batch_label(key[1])}: the file is gone "
                            f"or its batch changed: update the lists")
    return problems


def test_every_shared_model_runs_on_the_cpu_without_a_crash():
    if not ext.find_models():
        pytest.skip(f"{ext.EXTERNAL} is not here (the shared models are optional)")
    results = sweep.sweep(devices=("cpu",), precisions=("fp32",), batches=BATCHES, jobs=JOBS, timeout=TIMEOUT,
                          budget=BUDGET)
    swept = {r["model"] for r in results}
    assert swept == set(ext.find_models())
    problems = check(results)
    line = report.summary_lines(results, f"{JOBS} workers")[-1]
    assert not problems, "\n".join([line] + problems + ["", report.failure_table(results)])
    assert sum(r["outcome"] == "ok" for r in results) > len(results) // 2, line


def test_the_check_names_each_kind_of_change(monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "KNOWN_REFUSALS", [
        ("zoo2/det_fasterrcnn_mobilenet_v3_large_320_fpn.onnx", FIXED, "(NonMaxSuppression)", "an example"),
        ("zoo2/det_ssdlite320_mobilenet_v3_large.onnx", FIXED, "(NonMaxSuppression)", "an example")])

    def case(model, batch, outcome, detail=""):
        return {"model": model, "device": "cpu", "precision": "fp32", "batch": batch, "outcome": outcome,
                "detail": detail}

    results = [case("zoo/resnet18.onnx", 1, "crash", "signal SIGSEGV (stage run)"),
               case("zoo/resnet18.onnx", 3, "refusal", "ValueError: new"),
               case("zoo/lstm_bi.onnx", 0, "ok"),
               case("zoo2/det_fasterrcnn_mobilenet_v3_large_320_fpn.onnx", None, "refusal", "UnsupportedModelError: op Where"),
               case("zoo2/det_ssdlite320_mobilenet_v3_large.onnx", None, "ok"),
               case("zoo2/bert.onnx", 0, "onnxruntime-fails", "dnnx ran; onnxruntime crash")]
    text = "\n".join(check(results))
    assert "crash: zoo/resnet18.onnx batch 1" in text
    assert "newly refused: zoo/resnet18.onnx batch 3" in text
    assert "onnxruntime's known failure now gives ok: zoo/lstm_bi.onnx batch 0" in text
    assert "refused for another reason: zoo2/det_fasterrcnn_mobilenet_v3_large_320_fpn.onnx batch fixed" in text
    assert "a known refusal now gives ok: zoo2/det_ssdlite320_mobilenet_v3_large.onnx batch fixed" in text
    assert "onnxruntime fails: zoo2/bert.onnx batch 0" in text
    assert "listed but not swept: zoo2/vit_tiny_patch16_224_ts.onnx batch 0" in text
