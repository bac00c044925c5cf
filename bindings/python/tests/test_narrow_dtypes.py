"""The narrow element types as a Python user meets them: f16 and bf16 copies of the demo MLP at
four batch sizes against the f32 model, gradients of an f16 loss, u8 image inputs, ONNX export
of an f16 program run by onnxruntime, and clear refusals."""

import numpy as np
import pytest

import shapepoly as sp
from shapepoly._core import BFLOAT16

DIMS = (784, 256, 256, 10)


def _weights():
    rng = np.random.default_rng(42)
    return [(rng.uniform(-1, 1, (a, b)).astype(np.float32) / np.sqrt(a),
             rng.uniform(-0.1, 0.1, b).astype(np.float32)) for a, b in zip(DIMS, DIMS[1:])]


def _mlp(dtype, weights):
    scope = sp.Scope()
    x = scope.input("x", dtype, "batch, 784")
    h, params = x, []
    for i, (w, b) in enumerate(weights):
        wt = scope.parameter("w%d" % i, w.astype(dtype.numpy))
        bt = scope.parameter("b%d" % i, b.astype(dtype.numpy))
        params += [wt, bt]
        h = h @ wt + bt
        if i < 2:
            h = h.maximum(scope.constant(np.zeros((), dtype.numpy)))
    return scope.program([x] + params, {"probs": h.softmax(-1)})


@pytest.mark.skipif(BFLOAT16 is None, reason="ml_dtypes is not installed")
def test_half_precision_mlp_matches_f32():
    weights = _weights()
    ref = _mlp(sp.F32, weights).runtime()
    runs = {t: sp.loads(_mlp(t, weights).serialize()).runtime() for t in (sp.F16, sp.BF16)}
    rng = np.random.default_rng(7)
    for batch in (1, 7, 64, 1000):
        x = rng.uniform(-1, 1, (batch, 784)).astype(np.float32)
        want = ref(x=x)["probs"]
        for t, run in runs.items():
            got = run(x=x.astype(t.numpy))["probs"]
            assert got.dtype == t.numpy and got.shape == (batch, 10)
            err = np.max(np.abs(got.astype(np.float64) - want)) / np.max(np.abs(want))
            assert err <= 1e-2, (t, batch, err)


def test_f16_gradients_are_f16_and_close_to_f32():
    rng = np.random.default_rng(3)
    w = rng.uniform(-1, 1, (5, 3)).astype(np.float32)
    x = rng.uniform(-1, 1, (4, 5)).astype(np.float32)
    grads = {}
    for t in (sp.F32, sp.F16):
        scope = sp.Scope()
        xt = scope.input("x", t, "batch, 5")
        wt = scope.input("w", t, "5, 3")
        loss = ((xt @ wt).tanh() * (xt @ wt)).sum()
        g = scope.program([xt, wt], {"loss": loss}).grad("loss", ["w"])
        out = g.runtime()(x=x.astype(t.numpy), w=w.astype(t.numpy))
        grads[t] = out[[k for k in out if k != "loss"][0]]
    assert grads[sp.F16].dtype == np.float16
    np.testing.assert_allclose(grads[sp.F16].astype(np.float32), grads[sp.F32], rtol=2e-2,
                               atol=2e-2)


def test_u8_image_input_normalized_in_the_program():
    scope = sp.Scope()
    img = scope.input("img", sp.U8, "h, w, 3")
    y = (img.astype(sp.F32) / 255.0).mean(-1)
    run = scope.program([img], {"y": y}).runtime()
    a = np.random.default_rng(0).integers(0, 256, (4, 5, 3), dtype=np.uint8)
    np.testing.assert_allclose(run(img=a)["y"], (a / 255.0).mean(-1), rtol=1e-6)


def test_unsigned_arithmetic_wraps_and_u64_division_is_refused():
    scope = sp.Scope()
    a = scope.input("a", sp.U8, "n")
    b = scope.input("b", sp.U8, "n")
    run = scope.program([a, b], {"s": a + b, "d": a - b, "lt": a < b}).runtime()
    x, y = np.array([250, 3], np.uint8), np.array([10, 5], np.uint8)
    out = run(a=x, b=y)
    np.testing.assert_array_equal(out["s"], x + y)
    np.testing.assert_array_equal(out["d"], x - y)
    np.testing.assert_array_equal(out["lt"], x < y)
    u = scope.input("u", sp.U64, "n")
    with pytest.raises(sp.Unsupported, match="u64"):
        u / u
    with pytest.raises(sp.DtypeMismatch):
        a + scope.input("c", sp.I32, "n")


def test_f16_program_exports_to_onnx_and_runs_in_onnxruntime():
    ort = pytest.importorskip("onnxruntime")
    from shapepoly import onnx as spx
    scope = sp.Scope()
    x = scope.input("x", sp.F16, "batch, 4")
    w = scope.parameter("w", np.linspace(-1, 1, 12, dtype=np.float16).reshape(4, 3))
    prog = scope.program([x, w], {"y": (x @ w).tanh()})
    model = spx.export_model(prog)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    xv = np.random.default_rng(1).uniform(-1, 1, (3, 4)).astype(np.float16)
    got = sess.run(None, {"x": xv})[0]
    want = prog.runtime()(x=xv)["y"]
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), atol=2e-3)


def test_bf16_without_ml_dtypes_takes_uint16_bits():
    """Without ml_dtypes, BF16 inputs and outputs are numpy uint16 arrays holding the bits."""
    import os
    import subprocess
    import sys
    code = """
import sys
sys.modules["ml_dtypes"] = None  # as if not installed
import numpy as np, shapepoly as sp
assert sp.BF16.numpy == np.uint16
s = sp.Scope()
x = s.input("x", sp.BF16, "n")
out = s.program([x], {"y": x * x, "f": x.astype(sp.F32)}).runtime()(
    x=np.array([0x3fc0, 0x4000, 0xc040], np.uint16))
assert out["y"].dtype == np.uint16 and list(out["y"]) == [0x4010, 0x4080, 0x4110], out["y"]
assert list(out["f"]) == [1.5, 2.0, -3.0]
"""
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(sp.__file__)))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
