"""Einsum against onnxruntime: contractions (a batched GEMM), transposes, sums, diagonals,
ellipses with broadcasting, three operands, integer inputs; malformed equations name the node."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from ort_check import assert_matches_ort, make_model, rand

I32, I64 = TensorProto.INT32, TensorProto.INT64

CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 8), (2, 3, 5, 8)]),      # attention scores
    ("bhqk,bhkd->bhqd", [(2, 3, 4, 5), (2, 3, 5, 8)]),
    ("ij->ji", [(3, 4)]),
    ("ij->i", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),                                       # trace, implicit output
    ("...ii->...i", [(2, 3, 4, 4)]),
    ("i,i", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij,kj", [(3, 4), (5, 4)]),                            # implicit: ik
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (1, 5, 4, 2)]),   # ellipsis broadcast
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),         # bilinear, three operands
    ("ijk,ikl->jl", [(2, 3, 4), (2, 4, 5)]),                # batch contracted too
    ("abc,cd->abd", [(2, 3, 4), (4, 6)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("iij,jk->ik", [(3, 3, 4), (4, 2)]),                    # diagonal inside a contraction
    ("ab,cd->", [(2, 3), (4, 5)]),                          # sums on both sides
    ("Bj,Bj->B", [(2, 3), (2, 3)]),                         # uppercase labels
]


@pytest.mark.parametrize("equation,shapes", CASES, ids=[c[0] for c in CASES])
def test_einsum_matches_ort(equation, shapes):
    names = [f"x{i}" for i in range(len(shapes))]
    feeds = {n: rand(*s, seed=i) for i, (n, s) in enumerate(zip(names, shapes))}
    out_shape = list(np.einsum(equation, *feeds.values()).shape)  # onnx's inference misses broadcast ellipses
    node = helper.make_node("Einsum", names, ["y"], equation=equation)
    model = make_model([node], [(n, list(s)) for n, s in zip(names, shapes)], [("y", out_shape)], opset=12)
    assert_matches_ort(model, feeds)


@pytest.mark.parametrize("elem", [I32, I64])
def test_einsum_integers(elem):
    node = helper.make_node("Einsum", ["a", "b"], ["y"], equation="bij,bjk->bik")
    model = make_model([node], [("a", [2, 3, 4], elem), ("b", [2, 4, 2], elem)], [("y", None, elem)], opset=12)
    np_type = helper.tensor_dtype_to_np_dtype(elem)
    rng = np.random.default_rng(0)
    assert_matches_ort(model, {"a": rng.integers(-9, 9, (2, 3, 4)).astype(np_type),
                               "b": rng.integers(-9, 9, (2, 4, 2)).astype(np_type)})


def test_einsum_plan_is_one_gemm_for_a_matmul():
    node = helper.make_node("Einsum", ["a", "b"], ["y"], equation="bij,bjk->bik")
    model = make_model([node], [("a", [2, 3, 4]), ("b", [2, 4, 5])], [("y", None)], opset=12)
    assert "gemm" in str(dnnx.load(model).plan())


@pytest.mark.parametrize("equation,message", [
    ("ij,jk", "names 2 operands for 1 inputs"),
    ("ij->k", "output label 'k'"),
    ("ijk->i", "does not fit"),
    ("...j->j", "no ellipsis"),
    ("i1->i", "labels are letters"),
])
def test_einsum_bad_equation_names_the_node(equation, message):
    node = helper.make_node("Einsum", ["a"], ["y"], equation=equation, name="ein")
    # built without make_model: onnx's checker would refuse these equations before dnnx sees them
    from onnx import helper as h
    graph = h.make_graph([node], "g", [h.make_tensor_value_info("a", TensorProto.FLOAT, [3, 4])],
                         [h.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 12)])
    with pytest.raises(dnnx.InvalidModelError, match=f"ein.*{message}"):
        dnnx.load(model)


def test_einsum_size_mismatch_names_the_node():
    node = helper.make_node("Einsum", ["a", "b"], ["y"], equation="ij,jk->ik", name="ein2")
    from onnx import helper as h
    graph = h.make_graph([node], "g", [h.make_tensor_value_info("a", TensorProto.FLOAT, [3, 4]),
                                       h.make_tensor_value_info("b", TensorProto.FLOAT, [5, 2])],
                         [h.make_tensor_value_info("y", TensorProto.FLOAT, [3, 2])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 12)])
    with pytest.raises(dnnx.InvalidModelError, match="ein2.*label 'j' has sizes 4 and 5"):
        dnnx.load(model)
