"""ONNX Attention (opset 23) imported onto the library's fused attention op, from the outside:
models built with onnx.helper, imported, run, and compared with onnxruntime on random cases
(4-D and 3-D inputs, grouped-query heads, bool and float masks, causal, s != l, a past cache,
symbolic batch and sequence); the forms the op does not express keep ONNX's function body."""

import numpy as np
import pytest
from onnx import TensorProto, helper

from shapepoly import onnx as spx

ort = pytest.importorskip("onnxruntime")

ELEM = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float64): TensorProto.DOUBLE,
        np.dtype(np.bool_): TensorProto.BOOL}


def model(inputs, n_out=1, shapes=None, **attrs):
    """One Attention node; `inputs` maps its input names (Q, K, V, attn_mask, past_key,
    past_value; '' entries skipped as absent) to arrays."""
    shapes = shapes or {}
    names = ["q", "k", "v", "attn_mask", "past_key", "past_value"]
    used = [n if n in inputs else "" for n in names]
    while used and not used[-1]:
        used.pop()
    outs = ["y", "present_key", "present_value"][:n_out]
    node = helper.make_node("Attention", used, outs, **attrs)
    g = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(n, ELEM[a.dtype], shapes.get(n, a.shape))
         for n, a in inputs.items()],
        [helper.make_empty_tensor_value_info(o) for o in outs])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 23)])
    m.ir_version = 10
    return m


def compare(m, feeds, tol=3e-5, fused=True):
    with spx.import_model(m) as program:
        text = program.text
        with program.runtime() as rt:
            got = list(rt(**feeds).values())
    assert ("attention" in text) == fused, text
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    want = sess.run(None, feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape, (g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)
    return got


def r(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("causal", [0, 1])
@pytest.mark.parametrize("mask", ["none", "bool", "float"])
@pytest.mark.parametrize("hq, hkv, s, lk", [(4, 4, 6, 6), (4, 2, 5, 9), (6, 1, 8, 3)])
def test_four_d_matches_onnxruntime(causal, mask, hq, hkv, s, lk):
    rng = np.random.default_rng(hq * 100 + s * 10 + lk + causal)
    feeds = {"q": r(rng, 2, hq, s, 8), "k": r(rng, 2, hkv, lk, 8), "v": r(rng, 2, hkv, lk, 5)}
    if mask == "bool":
        feeds["attn_mask"] = rng.random((s, lk)) < 0.8
    elif mask == "float":
        feeds["attn_mask"] = r(rng, 2, 1, s, lk)
    compare(model(feeds, is_causal=causal), feeds)
    compare(model(feeds, is_causal=causal, scale=0.7), feeds)


def test_three_d_with_heads_and_symbolic_sizes():
    rng = np.random.default_rng(3)
    feeds = {"q": r(rng, 2, 7, 4 * 6), "k": r(rng, 2, 5, 2 * 6), "v": r(rng, 2, 5, 2 * 3)}
    m = model(feeds, shapes={"q": ["b", "s", 24], "k": ["b", "l", 12], "v": ["b", "l", 6]},
              q_num_heads=4, kv_num_heads=2)
    compare(m, feeds)
    feeds["attn_mask"] = rng.random((7, 5)) < 0.7
    compare(model(feeds, q_num_heads=4, kv_num_heads=2,
                  shapes={"q": ["b", "s", 24], "k": ["b", "l", 12], "v": ["b", "l", 6],
                          "attn_mask": ["s", "l"]}), feeds)


def test_past_cache_and_presents():
    rng = np.random.default_rng(4)
    feeds = {"q": r(rng, 1, 2, 3, 4), "k": r(rng, 1, 2, 3, 4), "v": r(rng, 1, 2, 3, 4),
             "past_key": r(rng, 1, 2, 5, 4), "past_value": r(rng, 1, 2, 5, 4)}
    for causal in (0, 1):
        got = compare(model(feeds, n_out=3, is_causal=causal), feeds)
        np.testing.assert_array_equal(got[1], np.concatenate([feeds["past_key"], feeds["k"]], 2))


def test_fully_masked_rows_follow_onnx():
    """ONNX (opset 23 errata): a fully masked query gives a zero row."""
    rng = np.random.default_rng(5)
    mask = np.ones((3, 4), bool)
    mask[1] = False
    feeds = {"q": r(rng, 1, 2, 3, 4), "k": r(rng, 1, 2, 4, 4), "v": r(rng, 1, 2, 4, 2),
             "attn_mask": mask}
    with spx.import_model(model(feeds)) as program, program.runtime() as rt:
        y = rt(**feeds)["y"]
    assert (y[:, :, 1] == 0).all() and np.isfinite(y).all()


def test_forms_the_op_does_not_express_keep_the_function_body():
    rng = np.random.default_rng(6)
    feeds = {"q": r(rng, 1, 2, 3, 4), "k": r(rng, 1, 2, 3, 4), "v": r(rng, 1, 2, 3, 4)}
    compare(model(feeds, softcap=2.0), feeds, fused=False)
    # Causal with a past cache and fewer new keys than queries: ONNX's frontier is
    # j <= i + past, neither of the op's alignments.
    feeds = {"q": r(rng, 1, 2, 3, 4), "k": r(rng, 1, 2, 2, 4), "v": r(rng, 1, 2, 2, 4),
             "past_key": r(rng, 1, 2, 4, 4), "past_value": r(rng, 1, 2, 4, 4)}
    compare(model(feeds, n_out=3, is_causal=1), feeds, fused=False)
