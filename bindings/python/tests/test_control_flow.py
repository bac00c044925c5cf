"""Control flow traced from Python (sp.cond, sp.while_loop, sp.scan) against numpy loops: an
Elman RNN and a GRU over a symbolic sequence length, a Newton iteration with a clipped update,
save/load, and the errors users hit."""

import numpy as np
import pytest

import shapepoly as sp

RNG = np.random.default_rng(7)
H, X, B = 8, 5, 3


def _weights(*shapes):
    return [(RNG.standard_normal(s) * 0.4).astype(np.float32) for s in shapes]


def _sigmoid(v):
    return 1 / (1 + np.exp(-v))


W, U, BIAS = _weights((X, H), (H, H), (H,))
GW = _weights((X, H), (X, H), (X, H))
GU = _weights((H, H), (H, H), (H, H))


def _numeric_grad(rt, vals, name, out="loss", eps=1e-6):
    """Central differences of output `out` of runtime `rt` in input `name` at `vals`."""
    num = np.zeros_like(vals[name])
    for idx in np.ndindex(vals[name].shape):
        a = {k: v.copy() for k, v in vals.items()}
        a[name][idx] += eps
        up = rt(**a)[out]
        a[name][idx] -= 2 * eps
        num[idx] = (up - rt(**a)[out]) / (2 * eps)
    return num


def _elman(s, x, h0):
    w, u, b = s.constant(W), s.constant(U), s.constant(BIAS)
    return sp.scan(lambda h, xt: ((xt @ w + h @ u + b).tanh(),) * 2, h0, x)


def _gru(s, x, h0):
    wz, wr, wn = (s.constant(a) for a in GW)
    uz, ur, un = (s.constant(a) for a in GU)

    def cell(h, xt):
        z = (xt @ wz + h @ uz).logistic()
        r = (xt @ wr + h @ ur).logistic()
        n = (xt @ wn + (r * h) @ un).tanh()
        hn = (1.0 - z) * n + z * h
        return hn, hn
    return sp.scan(cell, h0, x)


def _elman_np(x, h):
    ys = []
    for xt in x:
        h = np.tanh(xt @ W + h @ U + BIAS)
        ys.append(h)
    return h, np.stack(ys) if ys else np.zeros((0,) + h.shape, np.float32)


def _gru_np(x, h):
    ys = []
    for xt in x:
        z = _sigmoid(xt @ GW[0] + h @ GU[0])
        r = _sigmoid(xt @ GW[1] + h @ GU[1])
        n = np.tanh(xt @ GW[2] + (r * h) @ GU[2])
        h = (1 - z) * n + z * h
        ys.append(h)
    return h, np.stack(ys) if ys else np.zeros((0,) + h.shape, np.float32)


@pytest.mark.parametrize("cell,ref", [(_elman, _elman_np), (_gru, _gru_np)], ids=["elman", "gru"])
def test_rnn_scan_matches_numpy_after_save_load(cell, ref):
    s = sp.Scope()
    s.declare("seq", 0)
    x = s.input("x", sp.F32, "seq, batch, %d" % X)
    h0 = s.input("h0", sp.F32, "batch, %d" % H)
    h, ys = cell(s, x, h0)
    assert str(ys.shape[0]) == "seq"
    p = sp.loads(s.program([x, h0], {"h": h, "ys": ys}).serialize())
    rt = sp.Runtime(p)
    for length in (0, 1, 7, 100):
        xv = RNG.standard_normal((length, B, X)).astype(np.float32)
        hv = RNG.standard_normal((B, H)).astype(np.float32)
        out = rt(x=xv, h0=hv)
        want_h, want_ys = ref(xv, hv)
        np.testing.assert_allclose(out["h"], want_h, atol=2e-5)
        np.testing.assert_allclose(out["ys"], want_ys, atol=2e-5)
    assert rt.plans_built <= 4  # one plan per length


def test_scan_axis_reverse_length_and_closures():
    s = sp.Scope()
    s.declare("n", 0)
    xs = s.input("xs", sp.F64, "2, n")
    scale = s.input("scale", sp.F64, "")
    carry, ys = sp.scan(lambda c, x: (c + x * scale, {"c": c, "x": x}), s.constant(np.zeros(2)),
                        xs, reverse=True, axis=1)
    count, _ = sp.scan(lambda c, _: (c + 1, None), s.constant(np.int64(0)), None,
                       length=s.dim("n + 2"))
    p = s.program([xs, scale], {"carry": carry, "c": ys["c"], "x": ys["x"], "count": count})
    rt = sp.Runtime(p)
    for n in (0, 1, 6):
        v = RNG.standard_normal((2, n))
        out = rt(xs=v, scale=np.float64(3.0))
        np.testing.assert_allclose(out["carry"], 3 * v.sum(axis=1))
        np.testing.assert_allclose(out["x"], v)
        # c at step i (reversed) is the sum of the later columns.
        later = np.concatenate([np.cumsum(v[:, ::-1], axis=1)[:, ::-1][:, 1:], np.zeros((2, 1))],
                               axis=1)[:, :n]
        np.testing.assert_allclose(out["c"], 3 * later, atol=1e-12)
        assert int(out["count"]) == n + 2


def test_newton_while_loop_with_clipped_update():
    s = sp.Scope()
    a = s.input("a", sp.F32, "n")

    def body(v):
        x, i = v
        step = (x - a / x) * 0.5
        step = sp.cond(step.abs().max() > 8.0, lambda u: u.clip(-8.0, 8.0), lambda u: u, step)
        return x - step, i + 1

    def go_on(v):
        x, i = v
        return ((x * x - a).abs().max() > 1e-3) & (i < 100)
    root, iters = sp.while_loop(go_on, body, (a * 0.0 + 1.0, s.constant(np.int32(0))))
    rt = sp.Runtime(sp.loads(s.program([a], {"root": root, "iters": iters}).serialize()))
    av = np.array([0.25, 2.0, 99.0, 400.0], np.float32)
    out = rt(a=av)
    x, i = np.ones(4, np.float32), 0
    while np.abs(x * x - av).max() > 1e-3 and i < 100:
        step = (x - av / x) * np.float32(0.5)
        if np.abs(step).max() > 8:
            step = np.clip(step, -8, 8)
        x, i = x - step, i + 1
    np.testing.assert_allclose(out["root"], x, rtol=1e-6)
    assert int(out["iters"]) == i and i > 3


def test_cond_takes_one_branch_per_run():
    s = sp.Scope()
    x = s.input("x", sp.F32, "n, 2")
    y = s.input("y", sp.F32, "n, 2")
    r = sp.cond(x.sum() > 0.0, lambda a: a * 2.0, lambda a: a + y, x)
    rt = sp.Runtime(s.program([x, y], {"r": r}))
    for sign in (1, -1):
        xv = sign * np.abs(RNG.standard_normal((4, 2))).astype(np.float32)
        yv = RNG.standard_normal((4, 2)).astype(np.float32)
        want = xv * 2 if xv.sum() > 0 else xv + yv
        np.testing.assert_allclose(rt(x=xv, y=yv)["r"], want)


def test_errors_name_the_problem():
    s = sp.Scope()
    x = s.input("x", sp.F32, "n, 2")
    with pytest.raises(sp.ShapeMismatch, match="false branch"):
        sp.cond(x.sum() > 0.0, lambda a: a, lambda a: a[:1] if False else a.sum(0), x)
    with pytest.raises(sp.ShapeMismatch, match="carried value"):
        sp.scan(lambda c, xt: (c.sum(0), xt), x, x)
    with pytest.raises(TypeError, match="shapepoly.cond"):
        if x.sum() > 0.0:
            pass
    with pytest.raises(sp.DtypeMismatch, match="bool scalar"):
        sp.cond(x.sum(), lambda a: a, lambda a: a, x)
    with pytest.raises(sp.ConstraintViolation, match="max_trips"):
        i = s.constant(np.int64(0))
        k, = sp.while_loop(lambda v: v[0] < 10, lambda v: (v[0] + 1,), (i,), max_trips=3)
        sp.Runtime(s.program([], {"k": k}))()



def test_gradients_through_scan_and_cond_match_finite_differences():
    s = sp.Scope()
    s.declare("seq", 0)
    x = s.input("x", sp.F64, "seq, 2, 3")
    h0 = s.input("h0", sp.F64, "2, 4")
    w = s.input("w", sp.F64, "3, 4")
    u = s.input("u", sp.F64, "4, 4")
    h, ys = sp.scan(lambda h, xt: ((xt @ w + h @ u).tanh(),) * 2, h0, x, reverse=True)
    g = sp.cond(h.sum() > 0.0, lambda a: a * a, lambda a: a.sin() + ys.sum(0), h)
    loss = (g * g).sum() + (ys * ys).sum() * 0.5
    p = s.program([x, h0, w, u], {"loss": loss})
    rt = sp.Runtime(p)
    grad = sp.Runtime(sp.loads(p.grad("loss", ["x", "h0", "w", "u"]).serialize()))
    for length in (0, 1, 4):
        vals = dict(x=RNG.standard_normal((length, 2, 3)), h0=RNG.standard_normal((2, 4)),
                    w=RNG.standard_normal((3, 4)) * 0.5, u=RNG.standard_normal((4, 4)) * 0.5)
        got = grad(**vals)
        for name in vals:
            num = _numeric_grad(rt, vals, name, eps=1e-6)
            np.testing.assert_allclose(got[name + ".grad"], num, atol=1e-6)


def test_while_loop_has_jvp_only():
    s = sp.Scope()
    v = s.input("v", sp.F64, "3")
    w = s.input("w", sp.F64, "3, 3")
    out, _ = sp.while_loop(lambda c: c[1] < 3, lambda c: ((c[0] @ w).tanh(), c[1] + 1),
                           (v, s.constant(np.int64(0))))
    p = s.program([v, w], {"out": out})
    vals = dict(v=RNG.standard_normal(3), w=RNG.standard_normal((3, 3)))
    tans = {k + ".tangent": RNG.standard_normal(a.shape) for k, a in vals.items()}
    jv = sp.Runtime(p.jvp(["v", "w"]))(**vals, **tans)["out.tangent"]
    rt = sp.Runtime(p)
    plus = rt(**{k: a + 1e-6 * tans[k + ".tangent"] for k, a in vals.items()})["out"]
    minus = rt(**{k: a - 1e-6 * tans[k + ".tangent"] for k, a in vals.items()})["out"]
    np.testing.assert_allclose(jv, (plus - minus) / 2e-6, atol=1e-6)
    with pytest.raises(sp.Unsupported, match="max_trips"):
        p.vjp(["out"], ["v"])


def test_bounded_while_loop_gradient_matches_finite_differences():
    s = sp.Scope()
    v = s.input("v", sp.F64, "3")
    w = s.input("w", sp.F64, "3, 3")

    def go_on(c):
        return (c[0] * c[0]).sum() < 50.0

    def grow(c):
        return (c[0] @ w + c[0]).abs() + 0.5, c[1] + 1
    out, trips = sp.while_loop(go_on, grow, (v, s.constant(np.int64(0))), max_trips=20)
    p = s.program([v, w], {"loss": (out * out.sin()).sum(), "trips": trips})
    rt = sp.Runtime(p)
    grad = sp.Runtime(sp.loads(p.grad("loss", ["v", "w"]).serialize()))
    vals = dict(v=np.array([0.3, -0.2, 0.1]), w=RNG.standard_normal((3, 3)) * 0.3)
    got = grad(**vals)
    assert 1 < int(rt(**vals)["trips"]) < 20
    for name in vals:
        num = _numeric_grad(rt, vals, name, eps=1e-7)
        np.testing.assert_allclose(got[name + ".grad"], num, rtol=1e-5, atol=1e-6)


def test_costs_count_the_subprograms():
    def build(steps):
        s = sp.Scope()
        s.declare("seq", 0)
        x = s.input("x", sp.F32, ("seq" if steps is None else str(steps)) + ", 2, 4")
        h0 = s.input("h0", sp.F32, "2, 8")
        w = s.constant(np.ones((4, 8), np.float32))
        u = s.constant(np.ones((8, 8), np.float32))

        def step(h, xt):
            return (xt @ w + h @ u).tanh(), h
        if steps is None:
            h, ys = sp.scan(step, h0, x)
        else:  # unrolled by hand
            h, outs = h0, []
            for t in range(steps):
                xt = x.slice([t, 0, 0], [t + 1, 2, 4]).reshape(2, 4)
                h, y = step(h, xt)
                outs.append(y)
        return s.program([x, h0], {"h": h})
    scanned = build(None)
    rt = sp.Runtime(scanned)
    shapes = {"x": (5, 2, 4), "h0": (2, 8)}
    unrolled = sp.Runtime(build(5)).cost(sp.CostKind.FLOPS, shapes)
    assert rt.cost(sp.CostKind.FLOPS, shapes) == unrolled
    assert rt.cost(sp.CostKind.PARAMETER_BYTES, shapes) == (32 + 64) * 4  # the body's weights
    assert rt.cost(sp.CostKind.BYTES_ACCESSED, shapes) > 5 * (32 + 64) * 4
    # Peak memory bounds the carries (twice), the stacked ys and the body's own arena.
    assert rt.cost(sp.CostKind.PEAK_BYTES, shapes) >= 2 * 64 + 5 * 64 + 2 * 64
    s = sp.Scope()
    v = s.input("v", sp.F32, "3")
    out, _ = sp.while_loop(lambda c: c[1] < 3, lambda c: (c[0] * 2.0, c[1] + 1),
                           (v, s.constant(np.int64(0))))
    with pytest.raises(sp.Unsupported, match="max_trips"):
        s.program([v], {"out": out}).cost(sp.CostKind.FLOPS)


def test_gru_gradients_after_save_load():
    s = sp.Scope()
    s.declare("seq", 0)
    x = s.input("x", sp.F64, "seq, 2, 3")
    h0 = s.input("h0", sp.F64, "2, 4")
    ws = [s.input(n, sp.F64, "3, 4") for n in ("wz", "wr", "wn")]
    us = [s.input(n, sp.F64, "4, 4") for n in ("uz", "ur", "un")]

    def cell(h, xt):
        z = (xt @ ws[0] + h @ us[0]).logistic()
        r = (xt @ ws[1] + h @ us[1]).logistic()
        n = (xt @ ws[2] + (r * h) @ us[2]).tanh()
        hn = (1.0 - z) * n + z * h
        return hn, hn
    h, ys = sp.scan(cell, h0, x)
    p = s.program([x, h0] + ws + us, {"loss": (h * h).sum() + ys.sum()})
    names = ["x", "h0", "wz", "wr", "wn", "uz", "ur", "un"]
    rt = sp.Runtime(p)
    grad = sp.Runtime(sp.loads(p.grad("loss", names).serialize()))
    for length in (0, 1, 7):
        vals = {"x": RNG.standard_normal((length, 2, 3)), "h0": RNG.standard_normal((2, 4))}
        vals.update({n: RNG.standard_normal((3, 4)) * 0.5 for n in ("wz", "wr", "wn")})
        vals.update({n: RNG.standard_normal((4, 4)) * 0.5 for n in ("uz", "ur", "un")})
        got = grad(**vals)
        for name in ("x", "h0", "wn", "ur"):
            num = _numeric_grad(rt, vals, name, eps=1e-6)
            np.testing.assert_allclose(got[name + ".grad"], num, atol=1e-6)


def test_bodies_use_dims_of_the_enclosing_scope():
    s = sp.Scope()
    x = s.input("x", sp.F32, "n, 3")
    y = s.input("y", sp.F32, "m")

    def m_value():
        return s.dim_value(s.var("m")).astype(sp.F32)
    total, _ = sp.scan(lambda c, xt: (c + m_value(), xt), s.constant(np.float32(0)), x)
    r = sp.cond(x.sum() > 0.0, lambda a: a + m_value(), lambda a: a * m_value(), x)
    p = s.program([x, y], {"total": total, "r": r, "loss": r.sum()})
    rt = sp.Runtime(sp.loads(p.serialize()))
    out = rt(x=-np.ones((2, 3), np.float32), y=np.ones(5, np.float32))
    assert float(out["total"]) == 10.0
    np.testing.assert_array_equal(out["r"], -5 * np.ones((2, 3)))
    g = sp.Runtime(p.grad("loss", ["x"]))(x=-np.ones((2, 3), np.float32), y=np.ones(5, np.float32))
    np.testing.assert_array_equal(g["x.grad"], 5 * np.ones((2, 3)))


def test_max_loop_iterations_bounds_untrusted_loops():
    s = sp.Scope()
    s.declare("n", 0)
    x = s.input("x", sp.F32, "n")
    forever, _ = sp.while_loop(lambda c: c[1] >= 0, lambda c: (c[0] + 1.0, c[1] + 1),
                               (x, s.constant(np.int64(0))))
    total, _ = sp.scan(lambda c, xi: (c + xi, None), s.constant(np.float32(0)), x)
    p = s.program([x], {"forever": forever, "total": total})
    rt = p.runtime(max_loop_iterations=100)
    with pytest.raises(sp.ConstraintViolation, match="max_loop_iterations = 100"):
        rt(x=np.ones(3, np.float32))
    q = s.program([x], {"total": total})
    assert float(q.runtime(max_loop_iterations=100)(x=np.ones(100, np.float32))["total"]) == 100
    with pytest.raises(sp.ConstraintViolation, match="scan"):
        q.runtime(max_loop_iterations=100)(x=np.ones(101, np.float32))
    with pytest.raises(sp.InvalidArgument):
        p.runtime(max_loop_iterations=-2)


def test_cond_of_differently_sized_branches_makes_a_data_dependent_size():
    """A dim whose sizes the branches do not provably share is a new unbacked size, set by the
    branch that runs; it flows on (a sum, the output), through save/load, jvp and grad."""
    s = sp.Scope()
    x = s.input("x", sp.F64, "n")
    y = s.input("y", sp.F64, "m")
    r = sp.cond(x.sum() > 0.0, lambda a, b: a * a, lambda a, b: b.sin(), x, y)
    (u,) = r.shape
    assert s.is_unbacked(str(u)) and "true branch" in s.variable_origin(str(u))
    p = s.program([x, y], {"r": r, "loss": (r * r).sum()})
    rt = sp.Runtime(sp.loads(p.serialize()))
    jvp = sp.Runtime(sp.loads(p.jvp(["x", "y"]).serialize()))
    grad = sp.Runtime(sp.loads(p.grad("loss", ["x", "y"]).serialize()))
    for n, m, sign in [(3, 5, 1), (3, 5, -1), (1, 1, -1), (4, 2, 1)]:
        xv = sign * (np.abs(RNG.standard_normal(n)) + 0.1)
        yv = RNG.standard_normal(m)
        tx, ty = RNG.standard_normal(n), RNG.standard_normal(m)
        want = xv * xv if sign > 0 else np.sin(yv)
        np.testing.assert_allclose(rt(x=xv, y=yv)["r"], want)
        got = jvp(**{"x": xv, "y": yv, "x.tangent": tx, "y.tangent": ty})
        np.testing.assert_allclose(got["r.tangent"], 2 * xv * tx if sign > 0 else np.cos(yv) * ty)
        g = grad(x=xv, y=yv)
        gx = 4 * xv ** 3 if sign > 0 else np.zeros(n)
        gy = np.zeros(m) if sign > 0 else 2 * np.sin(yv) * np.cos(yv)
        np.testing.assert_allclose(g["x.grad"], gx)
        np.testing.assert_allclose(g["y.grad"], gy)


def test_cond_branch_that_computes_a_data_dependent_size():
    s = sp.Scope()
    x = s.input("x", sp.F32, "n")
    r = sp.cond(x.sum() > 0.0, lambda a: a.boolean_mask(a > 0.0), lambda a: a * 3.0, x)
    rt = sp.Runtime(sp.loads(s.program([x], {"r": r}).serialize()))
    for xv in ([1, -2, 3], [-1, -2, 1], [4], [5, -1, 0, 2], [1, -2, 3]):
        xv = np.array(xv, np.float32)
        np.testing.assert_array_equal(rt(x=xv)["r"], xv[xv > 0] if xv.sum() > 0 else xv * 3)


def test_cond_of_different_ranks_is_refused_naming_both_shapes():
    s = sp.Scope()
    x = s.input("x", sp.F32, "n, 2")
    with pytest.raises(sp.ShapeMismatch, match=r"true branch is f32 \(n, 2\), of the false "
                                               r"branch f32 \(2,\).*equal ranks"):
        sp.cond(x.sum() > 0.0, lambda a: a, lambda a: a.sum(0), x)


def test_vmap_of_a_cond_with_sizes_needs_a_shared_predicate():
    s = sp.Scope()
    x = s.input("x", sp.F64, "n")
    y = s.input("y", sp.F64, "m")
    flag = s.input("flag", sp.F64, "")
    p = s.program([x, y, flag], {"r": sp.cond(flag > 0.0, lambda a, b: a * 2.0,
                                              lambda a, b: b + 1.0, x, y)})
    rt = sp.Runtime(sp.loads(p.vmap({"x": 0, "y": 0}).serialize()))
    xs, ys = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 5))
    np.testing.assert_allclose(rt(x=xs, y=ys, flag=np.float64(1))["r"], xs * 2)
    np.testing.assert_allclose(rt(x=xs, y=ys, flag=np.float64(-1))["r"], ys + 1)
    with pytest.raises(sp.Unsupported, match="predicate per batch element"):
        p.vmap({"x": 0, "y": 0, "flag": 0})


def test_loop_bodies_with_inner_data_dependent_sizes():
    """A scan body that masks its slice and reduces it; a while_loop whose carried value's size
    the body computes is checked each iteration."""
    s = sp.Scope()
    s.declare("t", 0)
    xs = s.input("xs", sp.F32, "t, k")
    c, ys = sp.scan(lambda c, xt: (c + xt.boolean_mask(xt > 0.0).sum(),
                                   xt.boolean_mask(xt > 0.0).sum()), s.constant(np.float32(0)), xs)
    rt = sp.Runtime(sp.loads(s.program([xs], {"c": c, "ys": ys}).serialize()))
    for t in (0, 1, 6):
        xv = RNG.standard_normal((t, 4)).astype(np.float32)
        out = rt(xs=xv)
        want = np.where(xv > 0, xv, 0).sum(1)
        np.testing.assert_allclose(out["ys"], want, rtol=1e-6)
        np.testing.assert_allclose(out["c"], want.sum(), rtol=1e-5, atol=1e-6)
    s = sp.Scope()
    v = s.input("v", sp.F32, "n")
    lim = s.input("lim", sp.F32, "")
    i0 = s.constant(np.int64(0))
    _, vf = sp.while_loop(lambda c: c[0] < 3,
                          lambda c: (c[0] + 1, c[1].boolean_mask(c[1] > lim)), (i0, v))
    rt = sp.Runtime(s.program([v, lim], {"v": vf}))
    np.testing.assert_array_equal(rt(v=np.float32([5, 6]), lim=np.float32(1))["v"], [5, 6])
    with pytest.raises(sp.ShapeMismatch, match="iteration 0 of the body has the shape"):
        rt(v=np.float32([5, 0]), lim=np.float32(1))


def test_scan_ys_of_a_data_dependent_size_agree_across_iterations():
    """ys whose size the body computes from data: a new data-dependent size, set by the first
    iteration and checked on every other; jvp follows it; vjp and vmap are refused by name."""
    s = sp.Scope()
    s.declare("t", 0)
    xs = s.input("xs", sp.F64, "t, k")

    def body(c, xt):
        m = xt.boolean_mask(xt > 0.0)
        return c + xt.sum(), m * m
    c, ys = sp.scan(body, s.constant(np.float64(0)), xs)
    assert s.is_unbacked(str(ys.shape[1]))
    p = s.program([xs], {"c": c, "ys": ys})
    rt = sp.Runtime(sp.loads(p.serialize()))
    jvp = sp.Runtime(sp.loads(p.jvp(["xs"]).serialize()))
    xv = np.array([[1., -1, 2], [-3, 4, 5], [6, 0.5, -1]])
    out = rt(xs=xv)
    np.testing.assert_allclose(out["ys"], [[1, 4], [16, 25], [36, 0.25]])
    assert rt(xs=np.zeros((0, 3)))["ys"].shape[0] == 0
    got = jvp(xs=xv, **{"xs.tangent": np.full_like(xv, 0.5)})
    np.testing.assert_allclose(got["ys.tangent"], [[1, 2], [4, 5], [6, 0.5]])
    with pytest.raises(sp.ShapeMismatch, match="iteration 1 of the body has the shape \\(3,\\), "
                                               "not \\(2,\\)"):
        rt(xs=np.array([[1., -1, 2], [3, 4, 5]]))
    with pytest.raises(sp.Unsupported, match="vjp: a scan whose ys"):
        p.grad("c", ["xs"])
    with pytest.raises(sp.Unsupported, match="vmap: a scan whose ys"):
        p.vmap()
