"""Hints, guards, assumptions, the guard policy and multi-variant programs (issue 11)."""

import numpy as np
import pytest

import shapepoly as sp


def variant(big: bool) -> sp.Program:
    with sp.Scope() as s:
        x = s.input("x", sp.F32, "n")
        n = x.shape[0]
        if big:
            s.assume(n, ">", 4, "big")
        else:
            s.assume(n, "<=", 4, "small")
        return s.program([x], {"y": x * 2.0 if big else x + 1.0})


def test_hints_and_dim_guard():
    with sp.Scope() as s:
        n = s.var("n")
        assert s.hint("n") is None
        s.set_hint("n", 5)
        assert s.hint("n") == 5
        assert n.compare(">", 3) is sp.Truth.UNKNOWN  # a hint is never a fact
        assert n.guard(">", 3, "need n > 3") is True
        assert n > 3  # the guard is a fact now
        assert n.guard(">=", 1) is True  # decided: nothing recorded
        x = s.input("x", sp.F32, [n])
        p = s.program([x], {"y": x + 1.0})
        assert p.guards == [sp.Guard("n > 3", "need n > 3", "shp_dim_guard")]
        with pytest.raises(sp.GuardFailed) as e:
            p.runtime()(x=np.ones(2, np.float32))
        assert "need n > 3" in e.value.message
        with pytest.raises(sp.Inconclusive):
            s.var("m").guard("==", 2)  # no hint
        with pytest.raises(sp.NotFound):
            s.hint("zzz")


def test_guard_policy_from_hints():
    with sp.Scope() as s:
        s.set_hint("a", 3)
        s.set_hint("b", 3)
        xa = s.input("xa", sp.F32, "a")
        xb = s.input("xb", sp.F32, "b")
        with pytest.raises(sp.Inconclusive):
            xa + xb
        s.set_guard_policy(sp.GuardPolicy.FROM_HINTS)
        p = s.program([xa, xb], {"z": xa + xb})
        (g,) = p.guards
        assert g.text == "a == b" and g.origin.startswith("add")
        rt = p.runtime()
        assert rt(xa=np.ones(2, np.float32), xb=np.ones(2, np.float32))["z"].tolist() == [2, 2]
        with pytest.raises(sp.GuardFailed):
            rt(xa=np.ones(2, np.float32), xb=np.ones(3, np.float32))
        with pytest.raises(sp.InvalidArgument):
            s.set_guard_policy(7)


def test_assume_contradiction_and_hint_violation():
    with sp.Scope(["n <= 3"]) as s:
        with pytest.raises(sp.Unsatisfiable):
            s.assume("n", ">", 5)
        with pytest.raises(sp.ConstraintViolation):
            s.set_hint("n", 9)


def test_variants(tmp_path):
    with variant(True) as big, variant(False) as small:
        p = sp.create_variants([big, small])
    with p:
        assert p.variant_count == 2
        assert p.variant_guards(0) == [sp.Guard("n > 4", "big", "")]
        assert p.variant_guards(1) == [sp.Guard("n <= 4", "small", "")]
        with pytest.raises(IndexError):
            p.variant_guards(2)
        assert p.variants_exhaustive is sp.Truth.TRUE and p.counterexample == ""
        assert p.select_variant({"x": (7,)}) == 0 and p.select_variant({"x": (2,)}) == 1
        rt = p.runtime()
        assert rt(x=np.ones(7, np.float32))["y"].tolist() == [2.0] * 7
        assert rt.last_variant == 0
        assert rt(x=np.ones(2, np.float32))["y"].tolist() == [2.0, 2.0]
        assert rt.last_variant == 1
        rt(x=np.ones(2, np.float32))
        assert rt.variant_plans_built(1) == 1 and rt.variant_cache_hits(1) == 1
        p.save(tmp_path / "v.shpoly")
        with sp.load(tmp_path / "v.shpoly") as q:
            assert q.variant_count == 2 and q.serialize() == p.serialize()


def test_variants_not_exhaustive():
    with sp.Scope() as s:
        x = s.input("x", sp.F32, "n")
        s.assume(x.shape[0], ">=", 4)
        big = s.program([x], {"y": x + 0.0})
    with sp.Scope() as s:
        x = s.input("x", sp.F32, "n")
        s.assume(x.shape[0], "<=", 2)
        small = s.program([x], {"y": x + 0.0})
    with sp.create_variants([big, small]) as p:
        assert p.variants_exhaustive is sp.Truth.FALSE
        assert "n = 3" in p.counterexample
        with pytest.raises(sp.GuardFailed):
            p.runtime()(x=np.ones(3, np.float32))
    with pytest.raises(sp.InvalidArgument):
        sp.create_variants([])
