"""TfIdfVectorizer against onnxruntime beyond the onnx node cases: larger random pools of 1- to
4-grams, every mode with and without weights, shuffled and shared output columns (onnxruntime
weighs each n-gram, not each column), skips, min_gram_length > 1, int32 and int64 input, [C]
and [N, C]; and the errors a user can cause (a string input, a string pool, inconsistent
attributes, a repeated n-gram)."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from ort_check import assert_matches_ort, make_model, run_ort


def random_pool(rng, counts, vocab):
    """counts[n-1] n-grams of length n over items 0..vocab-1 -> (pool_int64s, ngram_counts)."""
    pool, starts = [], []
    for n, k in enumerate(counts, start=1):
        starts.append(len(pool))
        grams = set()
        while len(grams) < k:  # distinct n-grams: onnxruntime refuses a repeated one
            grams.add(tuple(rng.integers(0, vocab, size=n).tolist()))
        pool += [item for gram in sorted(grams, key=lambda g: rng.random()) for item in gram]
    return pool, starts


def tfidf_model(shape, elem, pool, starts, mode, min_n, max_n, skip, weights=None, indexes=None):
    ngrams = sum((( (starts[i + 1] if i + 1 < len(starts) else len(pool)) - s) // (i + 1))
                 for i, s in enumerate(starts))
    attrs = dict(mode=mode, min_gram_length=min_n, max_gram_length=max_n, max_skip_count=skip,
                 ngram_counts=starts, ngram_indexes=indexes if indexes is not None else list(range(ngrams)),
                 pool_int64s=pool)
    if weights is not None:
        attrs["weights"] = weights
    node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], **attrs)
    return make_model([node], [("x", shape, elem)], [("y", None)], opset=9)


@pytest.mark.parametrize("mode", ["TF", "IDF", "TFIDF"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("min_n,max_n,skip", [(1, 3, 0), (1, 3, 2), (2, 3, 3), (1, 1, 2), (3, 3, 1)])
def test_random_pool_2d_int64(mode, weighted, min_n, max_n, skip):
    rng = np.random.default_rng(min_n * 100 + max_n * 10 + skip)
    pool, starts = random_pool(rng, [6, 12, 10], vocab=6)
    weights = rng.uniform(0.1, 3.0, 28).astype(np.float32).tolist() if weighted else None
    indexes = rng.integers(0, 20, 28).tolist()  # n-gram -> a column, some columns shared, some unused
    model = tfidf_model([4, 23], TensorProto.INT64, pool, starts, mode, min_n, max_n, skip, weights, indexes)
    assert_matches_ort(model, {"x": rng.integers(0, 7, (4, 23)).astype(np.int64)})


@pytest.mark.parametrize("mode", ["TF", "IDF", "TFIDF"])
def test_shared_column_weights_follow_the_ngram(mode):
    # unigrams 10, 11, 12 -> columns 1, 1, 0: a shared column sums (TFIDF) or takes the last hit's
    # weight (IDF) of the n-grams' own weights
    model = tfidf_model([7], TensorProto.INT64, [10, 11, 12], [0], mode, 1, 1, 0, [1.0, 10.0, 100.0], [1, 1, 0])
    assert_matches_ort(model, {"x": np.array([11, 10, 12, 12, 10, 5, 11], np.int64)})


@pytest.mark.parametrize("skip", [0, 1, 4, 39])
def test_random_pool_1d_int32(skip):
    rng = np.random.default_rng(skip)
    pool, starts = random_pool(rng, [5, 9, 7, 4], vocab=5)  # up to 4-grams
    model = tfidf_model([40], TensorProto.INT32, pool, starts, "TFIDF", 1, 4, skip,
                        rng.uniform(0.5, 2.0, 25).astype(np.float32).tolist())
    assert_matches_ort(model, {"x": rng.integers(0, 5, 40).astype(np.int32)})


def test_huge_skip_count_is_the_row_length():
    # skip distances past the row fit no 2-gram: max_skip_count 2**40 counts as C (onnxruntime
    # would loop 2**40 times, so it runs the equivalent skip C as the oracle)
    rng = np.random.default_rng(7)
    pool, starts = random_pool(rng, [4, 8, 6], vocab=4)
    x = rng.integers(0, 4, (2, 12)).astype(np.int64)
    huge = tfidf_model([2, 12], TensorProto.INT64, pool, starts, "TF", 1, 3, 2**40)
    same = tfidf_model([2, 12], TensorProto.INT64, pool, starts, "TF", 1, 3, 12)
    got = dnnx.load(huge).run_dict({"x": x})["y"]
    want = run_ort(same, {"x": x})["y"]
    np.testing.assert_array_equal(got, want)


def test_output_columns_shared_and_unused():
    # two n-grams counted into one column, column 5 never written: max(ngram_indexes) + 1 = 7 wide
    model = tfidf_model([3, 8], TensorProto.INT64, [1, 2, 3, 1, 2, 2, 3], [0, 3], "TF", 1, 2, 1,
                        indexes=[0, 1, 6, 1, 3])
    x = np.array([[1, 2, 3, 1, 2, 2, 3, 9], [3, 3, 3, 3, 1, 1, 2, 2], [7, 7, 7, 7, 7, 7, 7, 7]], np.int64)
    assert_matches_ort(model, {"x": x})


def test_row_shorter_than_ngrams():
    model = tfidf_model([2, 2], TensorProto.INT64, [4, 5, 9, 4, 5, 6, 7], [0, 2, 4], "TF", 3, 3, 2)
    assert_matches_ort(model, {"x": np.array([[4, 5], [5, 6]], np.int64)})


def test_string_input_is_refused_naming_the_node():
    node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], name="tfidf0", mode="TF", min_gram_length=1,
                            max_gram_length=1, max_skip_count=0, ngram_counts=[0], ngram_indexes=[0],
                            pool_int64s=[1])
    model = make_model([node], [("x", [3], TensorProto.STRING)], [("y", None)], opset=9)
    with pytest.raises(dnnx.UnsupportedModelError, match=r"node 'tfidf0' \(TfIdfVectorizer\): input X is string"):
        dnnx.load(model)


def test_pool_strings_is_refused_naming_the_node():
    node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], name="tfidf1", mode="TF", min_gram_length=1,
                            max_gram_length=1, max_skip_count=0, ngram_counts=[0], ngram_indexes=[0],
                            pool_strings=["a"])
    model = make_model([node], [("x", [3], TensorProto.INT64)], [("y", None)], opset=9)
    with pytest.raises(dnnx.UnsupportedModelError, match=r"tfidf1.*pool_strings"):
        dnnx.load(model)


@pytest.mark.parametrize("attrs,message", [
    (dict(mode="BM25"), r"mode must be TF, IDF or TFIDF"),
    (dict(min_gram_length=0), r"min_gram_length must be positive"),
    (dict(max_gram_length=1, min_gram_length=2), r"max_gram_length 1 must be >= min_gram_length 2"),
    (dict(ngram_counts=[0, 9]), r"ngram_counts must rise from 0 within the pool's 4 items"),
    (dict(ngram_indexes=[0, 1]), r"the pool holds 3 n-grams but ngram_indexes has only 2"),
    (dict(weights=[1.0]), r"weights has 1 entries, ngram_indexes 3: one weight per n-gram"),
    (dict(pool_int64s=[1, 2, 1, 2, 1, 2]), r"pool_int64s repeats the 2-gram \[1,2\] \(at item 4\)"),
    (dict(pool_int64s=[1, 2, 1, 2, 3]), r"the pool's 3 items of 2-grams are not whole 2-grams"),
    (dict(max_gram_length=3), r"max_gram_length 3 exceeds the 2 n-gram lengths of ngram_counts"),
])
def test_inconsistent_attributes_are_model_errors(attrs, message):
    base = dict(mode="TF", min_gram_length=1, max_gram_length=2, max_skip_count=0, ngram_counts=[0, 2],
                ngram_indexes=[0, 1, 2], pool_int64s=[1, 2, 1, 2])
    base.update(attrs)
    node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], name="tfidf2", **base)
    graph = helper.make_graph([node], "t", [helper.make_tensor_value_info("x", TensorProto.INT64, [5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    with pytest.raises(dnnx.InvalidModelError, match="tfidf2.*" + message):
        dnnx.load(model)
