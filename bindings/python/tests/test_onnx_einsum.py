"""General ONNX Einsum (any operand count, '...', repeated letters, implicit outputs) against
numpy.einsum, at fixed shapes and with a symbolic batch."""

import numpy as np
import pytest
from onnx import TensorProto, helper

from shapepoly import onnx as spx

CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("...qhd,...khd->...hqk", [(2, 5, 3, 4), (2, 6, 3, 4)]),  # attention scores
    ("ii->i", [(4, 4)]),
    ("ii", [(3, 3)]),
    ("iij->j", [(3, 3, 2)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("i,i", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("...ij,...jk", [(1, 3, 4), (5, 4, 2)]),  # '...' broadcasts 1 against 5
    ("abc,cd,de->abe", [(2, 3, 4), (4, 5), (5, 6)]),
    ("ij->", [(3, 4)]),
    ("ij,ij,ij->i", [(2, 3)] * 3),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("i...,i...->...", [(3, 2, 2), (3, 1, 2)]),
    ("ji", [(2, 3)]),
    ("ba,ab->", [(2, 3), (3, 2)]),
    ("ij,jk->ik", [(0, 4), (4, 5)]),  # an empty axis
    ("ij,jk->ik", [(3, 0), (0, 5)]),  # an empty contraction: zeros
]


def model(eq, shapes, batch=False):
    names = ["x%d" % i for i in range(len(shapes))]
    ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT,
                                         ["B"] + list(s[1:]) if batch else list(s))
           for n, s in zip(names, shapes)]
    g = helper.make_graph([helper.make_node("Einsum", names, ["y"], equation=eq)], "g", ins,
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 12)]), names


@pytest.mark.parametrize("eq,shapes", CASES)
def test_einsum_matches_numpy(eq, shapes):
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    m, names = model(eq, shapes)
    with spx.import_model(m) as p, p.runtime() as rt:
        got = rt(**dict(zip(names, xs)))["y"]
    want = np.einsum(eq, *xs)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_einsum_attention_pattern_with_symbolic_batch():
    """'...qhd,...khd->...hqk' with the batch a dim_param: one import, several batches."""
    eq = "...qhd,...khd->...hqk"
    m, names = model(eq, [(2, 5, 3, 4), (2, 6, 3, 4)], batch=True)
    rng = np.random.default_rng(1)
    with spx.import_model(m) as p, p.runtime() as rt:
        assert "B" in str(p.outputs[0].shape)
        for b in (1, 3, 7):
            xs = [rng.standard_normal((b, 5, 3, 4)).astype(np.float32),
                  rng.standard_normal((b, 6, 3, 4)).astype(np.float32)]
            np.testing.assert_allclose(rt(**dict(zip(names, xs)))["y"], np.einsum(eq, *xs),
                                       rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("eq,shapes,match", [
    ("ij,jk->ik", [(3, 4)], "names 2 operands"),
    ("ij->ii", [(3, 3)], "distinct letters"),
    ("ij->k", [(3, 3)], "in no operand"),
    ("ijk->i", [(3, 3)], "3 letters for rank 2"),
    ("i..j...->i", [(3, 3, 3)], "at most one"),
])
def test_einsum_bad_equations_are_refused(eq, shapes, match):
    names = ["x%d" % i for i in range(len(shapes))]
    ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s))
           for n, s in zip(names, shapes)]
    g = helper.make_graph([helper.make_node("Einsum", names, ["y"], equation=eq)], "g", ins,
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    with pytest.raises(spx.OnnxImportError, match=match):
        spx.import_model(helper.make_model(g, opset_imports=[helper.make_opsetid("", 12)]))
