"""The attention op (q.attention(k, v, mask, scale, causal)) against a numpy reference of its
definition: grouped-query heads, bool and float masks broadcast, both causal alignments, s != l,
fully masked rows, symbolic sizes; its errors; gradients against finite differences; vmap;
a save/load round trip."""

import math

import numpy as np
import pytest

import shapepoly as sp


def reference(q, k, v, mask, scale=0.0, causal=0):
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    g = q.shape[-3] // k.shape[-3]
    k, v = np.repeat(k, g, axis=-3), np.repeat(v, g, axis=-3)
    d, s, lk = q.shape[-1], q.shape[-2], k.shape[-2]
    out_shape = q.shape[:-1] + (v.shape[-1],)
    if lk == 0 or 0 in out_shape:
        return np.zeros(out_shape)
    scale = scale or (1 / math.sqrt(d) if d else 1.0)
    with np.errstate(invalid="ignore", over="ignore"):
        z = (q @ np.swapaxes(k, -1, -2)) * scale
        bias = np.zeros((s, lk))
        if causal:
            off = 0 if causal == 1 else lk - s
            keep = np.arange(lk)[None, :] <= np.arange(s)[:, None] + off
            bias = np.where(keep, 0.0, -np.inf)
        mask = np.asarray(mask)
        bias = bias + (np.where(mask, 0.0, -np.inf) if mask.dtype == np.bool_ else mask)
        z = z + bias
        dead = np.isneginf(np.broadcast_to(bias, z.shape).max(-1, keepdims=True)) | np.isneginf(
            np.where(np.isnan(z), np.inf, z).max(-1, keepdims=True))
        e = np.exp(z - z.max(-1, keepdims=True))
        w = np.where(dead, 0.0, e / e.sum(-1, keepdims=True))
        return w @ v


def run(qa, ka, va, ma, scale=0.0, causal=0, dtype=sp.F32, specs=None):
    specs = specs or [", ".join(str(n) for n in a.shape) for a in (qa, ka, va)]
    mdt = sp.BOOL if np.asarray(ma).dtype == np.bool_ else dtype
    with sp.Scope() as s:
        q = s.input("q", dtype, specs[0])
        k = s.input("k", dtype, specs[1])
        v = s.input("v", dtype, specs[2])
        m = s.input("m", mdt, ", ".join(str(n) for n in np.shape(ma)))
        prog = s.program([q, k, v, m], {"y": q.attention(k, v, m, scale, causal)})
    try:
        return prog.runtime()(q=qa, k=ka, v=va, m=ma)["y"]
    finally:
        prog.close()


def rand(rng, shape, np_dtype):
    return rng.standard_normal(shape).astype(np_dtype)


@pytest.mark.parametrize("dtype, np_dtype, tol",
                         [(sp.F32, np.float32, 2e-5), (sp.F64, np.float64, 1e-12)])
@pytest.mark.parametrize("causal", [0, 1, 2])
@pytest.mark.parametrize("mask_kind", ["none", "bool", "float"])
def test_matches_reference(dtype, np_dtype, tol, causal, mask_kind):
    rng = np.random.default_rng(causal * 10 + len(mask_kind))
    for b, hq, hkv, s, lk, d, dv, mshape in [(2, 4, 2, 5, 7, 8, 3, (1, 4, 5, 7)),
                                            (1, 3, 1, 9, 4, 5, 6, (9, 1)),
                                            (3, 2, 2, 1, 1, 1, 1, (2, 1, 1)),
                                            (2, 6, 3, 70, 90, 16, 8, (2, 1, 70, 90)),
                                            (1, 1, 1, 4, 0, 3, 2, (1,)),
                                            (0, 2, 1, 3, 3, 2, 2, ())]:
        qa = rand(rng, (b, hq, s, d), np_dtype)
        ka = rand(rng, (b, hkv, lk, d), np_dtype)
        va = rand(rng, (b, hkv, lk, dv), np_dtype)
        if mask_kind == "none":
            ma = np.array(True)
        elif mask_kind == "bool":
            ma = rng.random(mshape) < 0.75
        else:
            ma = np.where(rng.random(mshape) < 0.2, -np.inf,
                          rng.standard_normal(mshape)).astype(np_dtype)
        for scale in (0.0, 0.3):
            got = run(qa, ka, va, ma, scale, causal, dtype)
            want = reference(qa, ka, va, ma, scale, causal)
            assert got.shape == want.shape and got.dtype == np_dtype
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=str((b, hq, s, lk)))


def test_symbolic_sizes_and_rank_three():
    rng = np.random.default_rng(1)
    qa, ka, va = (rand(rng, sh, np.float32) for sh in ((2, 5, 4), (2, 7, 4), (2, 7, 3)))
    got = run(qa, ka, va, np.array(True), 0.0, 1, sp.F32, ["h, s, 4", "h, l, 4", "h, l, 3"])
    want = reference(qa, ka, va, np.array(True), 0.0, 1)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6)


def test_fully_masked_rows_are_zero():
    rng = np.random.default_rng(2)
    qa, ka, va = (rand(rng, sh, np.float32) for sh in ((1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 2)))
    ma = np.ones((3, 5), bool)
    ma[1] = False
    got = run(qa, ka, va, ma)
    assert (got[:, :, 1] == 0).all() and (got[:, :, [0, 2]] != 0).all()
    fm = np.zeros((3, 5), np.float32)
    fm[2] = -np.inf
    assert (run(qa, ka, va, fm)[:, :, 2] == 0).all()
    # lower-right with s > l: query i sees j <= i + (l - s); the first s - l queries see nothing
    qb = rand(rng, (1, 1, 6, 4), np.float32)
    got = run(qb, ka[:, :1], va[:, :1], np.array(True), 0.0, 2)
    assert (got[0, 0, 0] == 0).all() and (got[0, 0, 1:] != 0).all()
    assert run(qa, ka, va, np.array(False)).sum() == 0


def test_errors_name_the_dims():
    with sp.Scope() as s:
        q = s.input("q", sp.F32, "b, 4, s, 8")
        k = s.input("k", sp.F32, "b, 2, l, 6")
        v = s.input("v", sp.F32, "b, 2, l, 3")
        t = s.input("t", sp.BOOL, "")
        with pytest.raises(sp.ShapeMismatch,
                           match=r"attention: the head sizes d of q and k differ: 8 vs 6"):
            q.attention(k, v, t)
        k8 = s.input("k8", sp.F32, "b, 3, l, 8")
        v8 = s.input("v8", sp.F32, "b, 3, l, 3")
        with pytest.raises(sp.ShapeMismatch, match="not a multiple of the kv heads hkv = 3"):
            q.attention(k8, v8, t)
        k2 = s.input("k2", sp.F32, "b, 2, l, 8")
        v2 = s.input("v2", sp.F32, "b, 2, m, 3")
        with pytest.raises((sp.ShapeMismatch, sp.Inconclusive),
                           match="key lengths l of k and v"):
            q.attention(k2, v2, t)
        v3 = s.input("v3", sp.F32, "b, 2, l, 3")
        with pytest.raises(sp.DtypeMismatch, match="the mask must be bool or q's dtype"):
            q.attention(k2, v3, s.input("mi", sp.I32, ""))
        with pytest.raises(sp.ShapeMismatch, match="broadcast"):
            q.attention(k2, v3, s.input("m3", sp.BOOL, "3, 1, l"))
        with pytest.raises(sp.InvalidArgument, match="causal must be 0"):
            q.attention(k2, v3, t, 0.0, 3)
        with pytest.raises(sp.InvalidArgument, match="scale must be finite"):
            q.attention(k2, v3, t, float("nan"))
        with pytest.raises(sp.InvalidArgument, match="rank >= 3"):
            s.input("r", sp.F32, "s, 8").attention(s.input("rk", sp.F32, "l, 8"),
                                                   s.input("rv", sp.F32, "l, 3"), t)
        with pytest.raises(sp.DtypeMismatch):
            s.input("qi", sp.I32, "2, 3, 4").attention(s.input("ki", sp.I32, "2, 3, 4"),
                                                      s.input("vi", sp.I32, "2, 3, 4"), t)


@pytest.mark.parametrize("causal", [0, 1, 2])
def test_gradients_match_finite_differences(causal):
    rng = np.random.default_rng(5 + causal)
    shapes = {"q": (2, 4, 3, 5), "k": (2, 2, 4, 5), "v": (2, 2, 4, 3), "m": (4, 1, 4)}
    vals = {n: rng.standard_normal(sh) for n, sh in shapes.items()}
    vals["m"][0, 0, 1] = -np.inf
    w = rng.standard_normal((2, 4, 3, 3))
    with sp.Scope() as s:
        ins = {n: s.input(n, sp.F64, ", ".join(map(str, sh))) for n, sh in shapes.items()}
        y = ins["q"].attention(ins["k"], ins["v"], ins["m"], 0.0, causal)
        prog = s.program(list(ins.values()), {"loss": (y * s.constant(w)).sum([0, 1, 2, 3])})
    grads = sp.Runtime(prog.grad("loss", list(shapes)))(**vals)

    def loss(vs):
        return float(np.sum(reference(vs["q"], vs["k"], vs["v"], vs["m"], 0.0, causal) * w))
    for n in shapes:
        fd = np.zeros(shapes[n])
        for idx in np.ndindex(*shapes[n]):
            if not np.isfinite(vals[n][idx]):
                continue
            hi, lo = {**vals, n: vals[n].copy()}, {**vals, n: vals[n].copy()}
            hi[n][idx] += 1e-6
            lo[n][idx] -= 1e-6
            fd[idx] = (loss(hi) - loss(lo)) / 2e-6
        got = np.where(np.isfinite(vals[n]), grads[n + ".grad"], 0.0)
        np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-7, err_msg=n)
    # jvp along a random direction agrees with the gradient
    tang = {n: rng.standard_normal(sh) for n, sh in shapes.items()}
    tang["m"][0, 0, 1] = 0.0
    jp = prog.jvp(list(shapes))
    feeds = {**vals, **{n + ".tangent": t for n, t in tang.items()}}
    out = sp.Runtime(jp)(**feeds)
    want = sum(float(np.sum(np.where(np.isfinite(vals[n]), grads[n + ".grad"], 0.0) * tang[n]))
               for n in shapes)
    np.testing.assert_allclose(out["loss.tangent"], want, rtol=1e-9)
    prog.close()


def test_vmap_and_round_trip():
    rng = np.random.default_rng(9)
    with sp.Scope() as s:
        q = s.input("q", sp.F32, "2, 3, 4")
        k = s.input("k", sp.F32, "1, 5, 4")
        v = s.input("v", sp.F32, "1, 5, 2")
        m = s.input("m", sp.BOOL, "3, 5")
        prog = s.program([q, k, v, m], {"y": q.attention(k, v, m, 0.5, 1)})
    assert "attention" in prog.text and "scale=0.5 causal=upper_left" in prog.text
    qs = rand(rng, (6, 2, 3, 4), np.float32)
    ka, va = rand(rng, (1, 5, 4), np.float32), rand(rng, (1, 5, 2), np.float32)
    ms = rng.random((6, 3, 5)) < 0.7
    got = sp.Runtime(prog.vmap({"q": 0, "m": 0}))(q=qs, k=ka, v=va, m=ms)["y"]
    want = np.stack([reference(qs[i], ka, va, ms[i], 0.5, 1) for i in range(6)])
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6)
    again = sp.loads(prog.serialize())
    np.testing.assert_array_equal(sp.Runtime(again)(q=qs[0], k=ka, v=va, m=ms[0])["y"],
                                  prog.runtime()(q=qs[0], k=ka, v=va, m=ms[0])["y"])
    prog.close()
