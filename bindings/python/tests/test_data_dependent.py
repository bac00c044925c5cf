"""Data-dependent sizes (issue 13: nonzero, boolean_mask, size_from_value, unbacked variables,
staged runs, dry-run bounds) and the witnesses and fixes of Inconclusive errors (issue 14)."""

import pickle

import numpy as np
import pytest

import shapepoly as sp


def argwhere_rows(x: np.ndarray) -> np.ndarray:
    """np.argwhere computed without numpy's nonzero: every index whose element is not zero."""
    out = [idx for idx in np.ndindex(*x.shape) if x[idx] != 0]
    return np.array(out, dtype=np.int64).reshape(len(out), x.ndim)


def test_nonzero_empty_partial_full():
    with sp.Scope() as s:
        s.declare("n", 1, 10)
        x = s.input("x", sp.F32, "n, 4")
        idx = x.nonzero()
        assert idx.dtype == sp.I64
        u, two = idx.shape
        assert str(u) == "u0" and two.constant == 2
        assert u.bounds() == (0, 40)  # 0 <= u0 <= 4*n with n in [1, 10]
        assert u <= s.dim("4*n")
        assert u.compare("<=", "3*n") is sp.Truth.UNKNOWN
        assert s.is_unbacked("u0") and not s.is_unbacked("n")
        assert "nonzero" in s.variable_origin("u0") and s.variable_origin("n") is None
        assert list(s.unbacked) == ["u0"]
        p = s.program([x], {"idx": idx})
    assert p.variable_is_unbacked("u0") and not p.variable_is_unbacked("n")
    assert "nonzero" in p.variable_origin("u0") and p.variable_origin("n") is None
    assert p.variable_bounds("u0")[0] == 0
    rng = np.random.default_rng(1)
    for threads in (1, 2):
        rt = p.runtime(num_threads=threads)
        assert rt.data_dependent
        for n in (1, 3, 10):
            for density in (0.0, 0.4, 1.0):
                a = np.where(rng.random((n, 4)) < density, rng.standard_normal((n, 4)),
                             0).astype(np.float32)
                got = rt(x=a)["idx"]
                want = argwhere_rows(a)
                assert got.dtype == np.int64 and got.shape == want.shape
                np.testing.assert_array_equal(got, want)
                # the same array object with other data: the shape is read again
                a[:] = 0
                assert rt(x=a)["idx"].shape == (0, 2)
    # -0.0 is zero, NaN is not.
    a = np.array([[0.0, -0.0, np.nan, 1.0]], np.float32)
    assert p.runtime()(x=a)["idx"].tolist() == [[0, 2], [0, 3]]


def mask_mean_program():
    with sp.Scope() as s:
        x = s.input("x", sp.F32, "n, 3")
        score = s.input("score", sp.F32, "n")
        rows = x.boolean_mask(score > np.float32(0.5))
        assert str(rows.shape[0]) == "u0" and rows.shape[1].constant == 3
        count = s.dim_value(rows.shape[0]).astype(sp.F32)
        return s.program([x, score], {"mean": rows.sum(0) / count, "rows": rows})


def test_mask_then_average_over_every_count():
    p = mask_mean_program()
    rt = p.runtime()
    n = 7
    x = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
    order = np.random.default_rng(2).permutation(n)
    for count in range(n + 1):
        score = np.zeros(n, np.float32)
        score[order[:count]] = 0.9
        score[order[count:]] = 0.5  # not > 0.5
        out = rt(x=x, score=score)
        keep = score > 0.5
        np.testing.assert_array_equal(out["rows"], x[keep])
        if count == 0:
            assert out["rows"].shape == (0, 3) and np.isnan(out["mean"]).all()
        else:
            np.testing.assert_allclose(out["mean"], x[keep].sum(0) / np.float32(count),
                                       rtol=1e-6)


def test_boolean_mask_axis_and_errors():
    with sp.Scope() as s:
        x = s.input("x", sp.I32, "a, b, c")
        m = s.input("m", sp.BOOL, "b, c")
        y = x.boolean_mask(m, axis=1)
        assert [str(d) for d in y.shape] == ["a", "u0"]
        z = x.boolean_mask(s.input("m2", sp.BOOL, "c"), axis=-1)
        assert [str(d) for d in z.shape] == ["a", "b", "u1"]
        with pytest.raises(sp.DtypeMismatch):
            x.boolean_mask(s.input("f", sp.F32, "a"))
        with pytest.raises(sp.InvalidArgument):
            x.boolean_mask(m, axis=2)
        with pytest.raises(sp.ShapeMismatch):
            s.input("y", sp.F32, "3, 2").boolean_mask(s.constant(np.ones(4, np.bool_)))
        with pytest.raises(sp.Inconclusive):
            x.boolean_mask(s.input("k", sp.BOOL, "k"))
        p = s.program([x, m], {"y": y})
    a = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    mask = (a[0] % 3) == 1
    np.testing.assert_array_equal(p.runtime()(x=a, m=mask)["y"], a[:, mask])


def test_size_from_value_range_is_checked():
    with sp.Scope() as s:
        v = s.input("v", sp.I64, "")
        k = v.size_from_value("k", 1, 5)
        assert str(k) == "k" and k.bounds() == (1, 5) and s.is_unbacked("k")
        assert "size_from_value" in s.variable_origin("k")
        with pytest.raises(sp.InvalidArgument):
            v.size_from_value("k2", -1, 5)
        with pytest.raises(sp.InvalidArgument):
            v.size_from_value("k2", 5, 4)
        with pytest.raises(sp.DtypeMismatch):
            s.input("f", sp.F32, "").size_from_value()
        assert str(v.size_from_value()) == "u0"  # the first free name
        p = s.program([v], {"y": s.iota(sp.I64, [k], 0)})
    rt = p.runtime()
    for val in (1, 3, 5):
        np.testing.assert_array_equal(rt(v=np.int64(val))["y"], np.arange(val))
    for val in (0, 6):
        with pytest.raises(sp.ConstraintViolation) as e:
            rt(v=np.int64(val))
        assert "k = %d" % val in e.value.message and "[1, 5]" in e.value.message
    np.testing.assert_array_equal(rt(v=np.int64(2))["y"], [0, 1])  # still usable


def test_guard_on_unbacked_and_check():
    with sp.Scope() as s:
        x = s.input("x", sp.F32, "n")
        idx = x.nonzero()
        u = idx.shape[0]
        with pytest.raises(sp.Inconclusive) as e:
            u.guard(">=", 1)
        assert "data-dependent" in e.value.message and "u0" in e.value.message
        assert "shp_scope_check" in e.value.message
        with pytest.raises(sp.InvalidArgument):
            s.set_hint("u0", 3)  # an unbacked variable has no example value
        s.check(u, ">=", 1, "at least one hit")
        assert u.compare(">=", 1) is sp.Truth.TRUE
        assert u.guard(">", 0) is True
        p = s.program([x], {"idx": idx})
    assert p.assertions == [sp.Assertion("u0 >= 1", "at least one hit")]
    rt = p.runtime()
    assert rt(x=np.array([0, 2, 0], np.float32))["idx"].tolist() == [[1]]
    with pytest.raises(sp.ConstraintViolation) as e:
        rt(x=np.zeros(3, np.float32))
    assert "at least one hit" in e.value.message and "u0 = 0" in e.value.message
    assert rt(x=np.ones(2, np.float32))["idx"].tolist() == [[0], [1]]


def test_dry_run_bounds_and_bound_allocation():
    with sp.Scope() as s:
        x = s.input("x", sp.F32, "n, 4")
        p = s.program([x], {"idx": x.nonzero()})
    rt = p.runtime()
    assert rt.dry_run({"x": (10, 4)}) == {"idx": (-1, 2)}
    assert rt.output_dim_bounds("idx", 0) == (True, 0, 40)
    assert rt.output_dim_bounds(0, 1) == (False, 2, 2)
    with pytest.raises(sp.InvalidArgument):
        rt.output_dim_bounds(0, 2)
    with pytest.raises(sp.NotFound):
        rt.output_dim_bounds("nope", 0)
    a = np.zeros((10, 4), np.float32)
    a.flat[::5] = 1
    assert rt(x=a)["idx"].shape == (8, 2)
    assert rt.output_dim_bounds(0, 0) == (True, 8, 8)
    assert rt.output_shape("idx") == (8, 2)
    with pytest.raises(sp.Unsupported):
        rt.cost("flops", {"x": (10, 4)})
    bounded = p.runtime(bound_allocation=1 << 20)
    rng = np.random.default_rng(4)
    for _ in range(10):
        b = np.where(rng.random((10, 4)) < 0.5, 1, 0).astype(np.float32)
        np.testing.assert_array_equal(bounded(x=b)["idx"], rt(x=b)["idx"])
    with pytest.raises(ValueError):
        p.runtime(bound_allocation=-1)


def test_chain_using_u_and_serialization():
    with sp.Scope() as s:
        x = s.input("x", sp.F32, "n")
        w = s.input("w", sp.F32, "n")
        idx = x.nonzero()
        u = idx.shape[0]
        head = w.slice([0], [u])  # u <= n is a derived fact: in range
        dot = head @ s.iota(sp.F32, [u], 0)
        pair = sp.concatenate([idx.astype(sp.F32), s.iota(sp.F32, [u, 1], 0)], 1)
        flat = pair.reshape(2 * u)
        assert str(flat.shape[0]) == "2*u0"
        p = s.program([x, w], {"dot": dot, "flat": flat})
    loaded = sp.loads(p.serialize())
    assert loaded.unbacked == p.unbacked and list(p.unbacked) == ["u0"]
    for prog in (p, loaded):
        rt = prog.runtime()
        for xs in ([0, 0, 0, 0], [0, -2, 0, 3, 0], [1, 1, 1]):
            xa = np.array(xs, np.float32)
            wa = np.arange(1, len(xs) + 1, dtype=np.float32)
            out = rt(x=xa, w=wa)
            nz = np.flatnonzero(xa)
            k = len(nz)
            assert out["dot"] == pytest.approx(float(wa[:k] @ np.arange(k)))
            np.testing.assert_array_equal(out["flat"], np.stack([nz, np.arange(k)], 1).ravel())


def test_inconclusive_exposes_witnesses_and_fixes():
    with sp.Scope() as s:
        n = s.var("n")
        with pytest.raises(sp.Inconclusive) as e:
            n.guard(">=", 5)  # no hint, no fact
    err = e.value
    assert len(err.witnesses) == 2, err.message
    assert [w.holds for w in err.witnesses] == [True, False]  # the true one first
    for w in err.witnesses:
        values = dict(w.values)
        assert list(values) == ["n"]
        assert (values["n"] >= 5) == w.holds and values["n"] >= 1  # n's default range
        assert "n = %d" % values["n"] in err.message
    assert err.fixes and all(f in err.message for f in err.fixes)
    assert any("n >= 5" in f for f in err.fixes)
    # copied out: they survive the C error and pickling
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is sp.Inconclusive and again.witnesses == err.witnesses
    assert again.fixes == err.fixes
    # other errors explain nothing
    with pytest.raises(sp.ParseError) as e2:
        sp.Scope().dim("2 +")
    assert e2.value.witnesses == [] and e2.value.fixes == []


def test_witnesses_of_an_op_shape_check():
    with sp.Scope() as s:
        a = s.input("a", sp.F32, "a, 3")
        b = s.input("b", sp.F32, "b, 3")
        with pytest.raises(sp.Inconclusive) as e:
            a + b
    assert len(e.value.witnesses) == 2
    assert any("max(a, b)" in f for f in e.value.fixes), e.value.fixes
    names = {name for w in e.value.witnesses for name, _ in w.values}
    assert names == {"a", "b"}


def test_readme_data_dependent_example():
    """The example of bindings/python/README.md's "Data-dependent sizes" runs as written."""
    import os
    import re
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(here, "README.md"), encoding="utf-8") as f:
        section = f.read().split("\n## Data-dependent sizes\n", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)
    env: dict = {}
    exec(compile(code, "README.md", "exec"), env)
    assert env["out"]["rows"].shape == (2, 3)
    np.testing.assert_array_equal(env["out"]["mean"], [3, 4, 5])
    env["rt"].dry_run({"x": (4, 3), "score": (4,)})
    dd, lo, hi = env["rt"].output_dim_bounds("rows", 0)
    assert dd and hi == 4 and lo in (0, 1)  # 1 once the check's u0 >= 1 narrows it
    with pytest.raises(sp.ConstraintViolation, match="some row scores above 0.5"):
        env["rt"](x=np.zeros((2, 3), np.float32), score=np.zeros(2, np.float32))


def test_compiled_function_with_a_data_dependent_output():
    """A compiled function whose trace uses nonzero: one trace serves data of other counts
    (the count is not a shape), a new length is a new trace or a symbolic axis."""
    @sp.function(inputs={"x": (sp.F32, 1)}, outputs=["idx"])
    def f(scope, x):
        return {"idx": x.nonzero()}
    for xs in ([0, 1, 2, 0], [0, 0, 0, 0], [5, 5, 5, 5], [0, 3, 0, 0, 7]):
        a = np.array(xs, np.float32)
        np.testing.assert_array_equal(f(x=a)["idx"], np.argwhere(a))
    assert f.trace_count <= 2


def test_variants_cannot_dispatch_on_a_data_dependent_size():
    """Issue 39 item 7: a variant traced under assume(u0 >= 2), u0 from boolean_mask, next to a
    guard-free variant was accepted (and called exhaustive) but data with fewer rows raised
    GuardFailed. Variants are chosen before the data is computed: refused at create_variants,
    naming the guard."""
    progs = []
    for v in range(2):
        with sp.Scope() as s:
            x = s.input("x", sp.F32, "n")
            y = x.boolean_mask(x > np.float32(0))
            if v == 0:
                s.assume(y.shape[0], ">=", 2, "two hits")
            progs.append(s.program([x], {"s": y.sum()}))
    with pytest.raises(sp.InvalidArgument, match="variant 0 has the guard 'u0 >= 2' over a "
                       "data-dependent size"):
        sp.create_variants(progs)
    for p in progs:  # still usable
        with p.runtime() as rt:
            assert float(rt(x=np.array([1, -1, 2], np.float32))["s"]) == 3.0
        p.close()
