"""Programs: signature, listing, shapes, serialization, load, autodiff, parameters, roles."""

import numpy as np
import pytest

import shapepoly as sp

from conftest import dense_ref


def test_signature_and_listing(dense):
    assert dense.input_names == ["x"] and dense.output_names == ["y"]
    (i,) = dense.inputs
    assert i == sp.InputInfo("x", sp.F32, sp.InputRole.DATA, "(batch, 4)", False)
    (o,) = dense.outputs
    assert o == sp.OutputInfo("y", sp.F32, sp.OutputRole.PRIMAL, "(batch, 3)")
    assert str(i.role) == "data" and str(o.role) == "primal"
    assert dense.variables == ["batch"]
    assert dense.constraints == [] and dense.assertions == [] and dense.guards == []
    assert "program(x: f32[batch, 4])" in dense.text and str(dense) == dense.text
    assert repr(dense) == "Program(inputs=['x'], outputs=['y'])"
    assert dense.variant_count == 1


def test_constraints_assertions_shapes():
    with sp.Scope(["n >= 2"]) as s:
        x = s.input("x", sp.F32, "n")
        y = x.reshape(None, 4)  # divisibility unknown: a run-time assertion
        s.check(x.shape[0], "<=", 100, "n too large")
        with s.program([x], {"y": y}) as p:
            assert p.constraints == ["n >= 2"]
            texts = [a.text for a in p.assertions]
            assert "mod(n, 4) == 0" in texts and "n <= 100" in texts
            assert sp.Assertion("n <= 100", "n too large") in p.assertions
            assert p.check_shapes({"x": (8,)}) == {"n": 8}
            assert p.output_shapes({"x": (8,)}) == {"y": (2, 4)}
            with pytest.raises(sp.ConstraintViolation):
                p.check_shapes({"x": (6,)})
            with pytest.raises(sp.ConstraintViolation) as e:
                p.runtime()(x=np.zeros(104, np.float32))
            assert "n too large" in e.value.message


def test_serialize_save_load_roundtrip(dense, tmp_path):
    data = dense.serialize()
    assert data[4:8] == b"SHP1"
    path = tmp_path / "dense.shpoly"
    dense.save(path)
    assert path.read_bytes() == data
    with sp.load(path) as loaded:
        assert loaded.serialize() == data
        x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
        np.testing.assert_allclose(loaded.runtime()(x=x)["y"], dense_ref(x), rtol=1e-5)
    with sp.loads(bytearray(data)) as again:
        assert again.input_names == ["x"]


def test_parameters_defaults_and_grad():
    w0 = np.array([[1.0, 2.0], [3.0, 4.0]], np.float64)
    with sp.Scope() as s:
        x = s.input("x", sp.F64, "b, 2")
        t = s.input("t", sp.F64, "b, 2")
        w = s.parameter("w", w0)
        r = x @ w - t
        loss = (r * r).sum()
        loss_program = s.program([x, t, w], {"loss": loss})
    with loss_program, loss_program.grad("loss", ["w", "x"]) as g:
        assert [(i.name, str(i.role), i.has_default) for i in g.inputs] == [
            ("x", "data", False), ("t", "data", False), ("w", "parameter", True),
            ("loss.cotangent", "cotangent", True)]
        assert [(o.name, str(o.role)) for o in g.outputs] == [
            ("loss", "primal"), ("w.grad", "grad"), ("x.grad", "grad")]
        np.testing.assert_array_equal(g.input_default("w"), w0)
        assert g.input_default("loss.cotangent") == 1.0
        with pytest.raises(sp.InvalidArgument):
            g.input_default("x")
        X = np.array([[1.0, 0.5], [2.0, -1.0], [0.0, 3.0]])
        T = np.ones((3, 2))
        rt = g.runtime()
        out = rt(x=X, t=T)
        R = X @ w0 - T
        assert out["loss"] == pytest.approx((R * R).sum())
        np.testing.assert_allclose(out["w.grad"], 2 * X.T @ R)
        np.testing.assert_allclose(out["x.grad"], 2 * R @ w0.T)
        # New weights by name, and a scaled cotangent.
        w1 = np.eye(2)
        out = rt(x=X, t=T, w=w1, **{"loss.cotangent": np.float64(2.0)})
        np.testing.assert_allclose(out["w.grad"], 4 * X.T @ (X @ w1 - T))
        # A program with defaults binds by name only: the positional C path is never used.
        with pytest.raises(sp.ShapeMismatch):
            rt(x=X, t=T, w=np.eye(3))


def test_jvp_vjp():
    with sp.Scope() as s:
        x = s.input("x", sp.F32, "n")
        p = s.program([x], {"y": (x * x).sum()})
    X = np.array([1.0, 2.0, 3.0], np.float32)
    with p.jvp(["x"]) as j:
        assert j.input_names == ["x", "x.tangent"] and j.output_names == ["y", "y.tangent"]
        assert [str(o.role) for o in j.outputs] == ["primal", "tangent"]
        out = j.runtime()(x=X, **{"x.tangent": np.ones(3, np.float32)})
        assert out["y.tangent"] == pytest.approx(12.0)
    with p.vjp(["y"], ["x"]) as v:
        assert v.input_names == ["x", "y.cotangent"]
        assert [str(i.role) for i in v.inputs] == ["data", "cotangent"]
        out = v.runtime()(x=X, **{"y.cotangent": np.float32(1)})
        np.testing.assert_allclose(out["x.grad"], 2 * X)
    # Transformations compose (jvp of grad: a Hessian-vector product).
    with p.grad("y", "x") as g, g.jvp(["x"]) as h:
        out = h.runtime()(x=X, **{"x.tangent": np.array([1, 0, 0], np.float32)})
        np.testing.assert_allclose(out["x.grad.tangent"], [2, 0, 0])


def test_jvp_default_tangents():
    """Tangents may have defaults (issue 38 item 12): a run that leaves x.tangent out uses the
    fill value in every element of x's shape at that run; the default survives save/load."""
    with sp.Scope() as s:
        x = s.input("x", sp.F32, "n")
        a = s.input("a", sp.F64, "m, 2")
        p = s.program([x, a], {"y": (x * x).sum(), "z": a * a})
    X = np.array([1.0, 2.0, 3.0], np.float32)
    A = np.arange(8.0).reshape(4, 2)
    j = p.jvp(["x", "a"], default_tangents={"x": 1.0, "a": 0.5})
    ins = j.inputs
    assert [i.name for i in ins] == ["x", "a", "x.tangent", "a.tangent"]
    assert ins[2].default == sp.InputDefault("fill", 1.0) and ins[2].has_default
    assert ins[3].default.kind == "fill" and ins[3].default.fill == 0.5
    assert ins[0].default is None
    assert j.input_default_fill("a.tangent") == 0.5
    with pytest.raises(sp.InvalidArgument, match="over the symbolic shape"):
        j.input_default("x.tangent")
    with pytest.raises(sp.InvalidArgument, match="has no fill default"):
        j.input_default_fill("x")
    assert "with the default fill 1" in j.text
    for prog in (j, sp.loads(j.serialize())):
        rt = prog.runtime()
        out = rt(x=X, a=A)
        assert out["y.tangent"] == pytest.approx(12.0)  # 2 * sum(x * 1)
        np.testing.assert_allclose(out["z.tangent"], 2 * A * 0.5)
        given = rt(x=X, a=A, **{"x.tangent": np.ones(3, np.float32),
                                "a.tangent": np.full((4, 2), 0.5)})
        assert given["y.tangent"] == out["y.tangent"]
        np.testing.assert_array_equal(given["z.tangent"], out["z.tangent"])
        assert rt.dry_run({"x": (5,), "a": (1, 2)}) == {
            "y": (), "z": (1, 2), "y.tangent": (), "z.tangent": (1, 2)}
    # One value for every tangent, or one per name; bad values and counts are refused.
    assert p.jvp(["x"], default_tangents=2).inputs[2].default.fill == 2.0
    assert [i.default for i in p.jvp(["x", "a"], default_tangents=[0, -1]).inputs[2:]] == [
        sp.InputDefault("fill", 0.0), sp.InputDefault("fill", -1.0)]
    with pytest.raises(ValueError, match="missing: a"):
        p.jvp(["x", "a"], default_tangents={"x": 1.0})
    with pytest.raises(ValueError, match="1 default tangents for 2 inputs"):
        p.jvp(["x", "a"], default_tangents=[1.0])
    with pytest.raises(sp.InvalidArgument, match="not a finite f32 value"):
        p.jvp(["x"], default_tangents=float("inf"))
    # Without default_tangents a tangent has none; parameters report a stored array.
    assert p.jvp(["x"]).inputs[2].default is None
    with sp.Scope() as s:
        w = s.parameter("w", np.ones(2, np.float32))
        q = s.program([w], {"y": w.sum()})
    assert q.inputs[0].default == sp.InputDefault("array")


def test_check_shapes_with_dim_input_and_defaults():
    with sp.Scope() as s:
        n = s.dim_input("n")
        w = s.parameter("w", np.zeros(2, np.float32))
        io = s.iota(sp.F32, [s.var("n"), 2], 0) + w
        p = s.program([n, w], {"io": io})
    assert p.check_shapes({"n": 5}) == {"n": 5}
    assert p.output_shapes({"n": 5}) == {"io": (5, 2)}
    assert p.runtime().dry_run({"n": 7}) == {"io": (7, 2)}


def _node_lines(program):
    """The right-hand sides of a program's operation lines ("sin(%0) : f64[]")."""
    import re
    return [m.group(1) for m in re.finditer(r"^%\d+ = (?!input|constant)(.*)$", program.text, re.M)]


def test_higher_order_grads_are_simplified():
    """Each order's program records every distinct operation once (no two nodes with the same
    op, operands and attributes) and no x * 1 or x + 0, so the size grows less per order (issue
    39: 534,624 bytes at order 8 before, 316,048 after; ~2.45x per order)."""
    with sp.Scope() as s:
        x = s.input("x", sp.F64, "")
        p = s.program([x], {"y": (x.sin() * x + x.exp()).tanh()})
    name, sizes = "y", []
    for _ in range(6):
        p = p.grad(name, ["x"])
        name = [o.name for o in p.outputs if o.name.endswith(".grad")][-1]
        lines = _node_lines(p)
        assert len(lines) == len(set(lines)), [ln for ln in lines if lines.count(ln) > 1][:3]
        sizes.append(len(p.serialize()))
        assert p.runtime()(x=np.array(0.3))[name].shape == ()
    assert sizes[-1] < 60000, sizes  # 78,320 bytes before the simplification
