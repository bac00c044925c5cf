"""Issue 38, JAX users: dims behave as JAX's symbolic dimensions (jax.export shape
polymorphism). Written as JAX's docs write it: make symbolic shapes, then use them in plain
Python (==, in, dict keys, bool, arithmetic with arrays)."""

import numpy as np
import pytest

import shapepoly as sp


# Item 1: `==`/`!=` are total (True only when provably equal, as JAX's normal-form rule),
# equal dims hash equal; orderings stay three-valued.
def test_1_eq_is_total_and_consistent_with_hash():
    s = sp.Scope()
    a, b = s.var("a"), s.var("b")
    assert (b == 1) is False and (b != 1) is True
    assert (a == b) is False and (a != b) is True
    assert [a, b].index(b) == 1 and b in [a, b]
    assert {a: "a", b: "b"}[s.dim("b")] == "b"
    assert a + b == b + a and hash(a + b) == hash(b + a)
    assert s.dim(3) == 3 and hash(s.dim(3)) == hash(3) and {3: "three"}[s.dim(3)] == "three"
    with pytest.raises(sp.Inconclusive):
        bool(a < b)
    assert a.compare("==", b) is sp.Truth.UNKNOWN  # the explicit three-valued form
    s.set_hint("a", 2)
    s.set_hint("b", 2)
    assert a.guard("==", b) is True  # the explicit guarding form


# Item 2: bool(dim) is True/False when provable, Inconclusive otherwise.
def test_2_bool_of_a_dim():
    s = sp.Scope(ranges={"n": (0, None)})
    n = s.var("n")
    assert bool(n - n) is False and int(n - n) == 0
    assert bool(n + 1) is True
    with pytest.raises(sp.Inconclusive):
        bool(n)  # n in [0, inf): maybe 0


# Item 3: a dim in array arithmetic becomes a scalar of the other operand's dtype
# (jnp.array(x.shape[0])).
def test_3_dims_in_tensor_arithmetic():
    with sp.Scope() as s:
        x = s.input("x", sp.F32, "b, 3")
        y = x + x.shape[0]
        z = 5.0 + x.shape[0]
        w = x.shape[0] * x
        assert y.dtype == sp.F32 and z.dtype == sp.F32 and z.shape == ()
        p = s.program([x], {"y": y, "z": z, "w": w})
    out = p.runtime()(x=np.ones((4, 3), np.float32))
    np.testing.assert_array_equal(out["y"], np.full((4, 3), 5, np.float32))
    assert out["z"] == 9.0
    np.testing.assert_array_equal(out["w"], np.full((4, 3), 4, np.float32))


# Item 4: `_` and `...` in specs, as symbolic_args_specs: from a concrete shape (like=) or
# a rank; and specs for a dict of arrays in one call.
def test_4_specs_with_placeholders_and_pytrees():
    s = sp.Scope()
    x = s.input("x", sp.F32, "b, ...", like=(2, 3, 4))
    assert [str(d) for d in x.shape] == ["b", "3", "4"]
    y = s.input("y", sp.F32, "b, _, ...", rank=4)
    assert len(y.shape) == 4 and str(y.shape[0]) == "b"
    args = {"params": {"w": np.zeros((3, 4), np.float32)}, "x": np.zeros((8, 3), np.float32)}
    ins = s.symbolic_inputs(args, {"params": None, "x": "b, _"})
    assert [str(d) for d in ins["x"].shape] == ["b", "3"]
    assert [str(d) for d in ins["params"]["w"].shape] == ["3", "4"]
    lst = s.symbolic_inputs([np.zeros((5, 2))], "b, ...")
    assert lst[0].dtype == sp.F64 and [str(d) for d in lst[0].shape] == ["b", "2"]


# Item 5: the operator's Inconclusive explains itself as .guard()'s does.
def test_5_operator_errors_carry_witnesses_and_fixes():
    s = sp.Scope()
    n = s.var("n")
    with pytest.raises(sp.Inconclusive) as op_err:
        bool(n >= 8)
    with pytest.raises(sp.Inconclusive) as guard_err:
        n.guard(">=", 8)
    assert op_err.value.witnesses and op_err.value.fixes
    assert op_err.value.witnesses == guard_err.value.witnesses
    assert op_err.value.fixes == guard_err.value.fixes


# Issue 43 item 6: a spec constant against `like` with unknown (None) entries, as
# jax.export.symbolic_shape("b, 3", like=(None, 4)) raises "different size".
def test_spec_constants_against_like_with_unknown_sizes():
    s = sp.Scope()
    with pytest.raises(sp.InvalidArgument, match="different size 4"):
        s.parse_shape("b, 3", like=(None, 4))
    with pytest.raises(sp.InvalidArgument, match="different size 4"):
        s.parse_shape("3", like=(4,))
    assert [str(d) for d in s.parse_shape("b, _", like=(None, 4))] == ["b", "4"]
    with pytest.raises(sp.InvalidArgument, match="unknown"):
        s.parse_shape("_, 4", like=(None, 4))
    with pytest.raises(sp.InvalidArgument, match="a size is >= 0"):
        s.parse_shape("b, 4", like=(-2, 4))
