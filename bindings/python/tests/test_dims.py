"""Scopes and dims: arithmetic, comparisons (bool or Inconclusive), compare(), bounds, solve."""

import pytest

import shapepoly as sp


def test_scope_constraints_and_ranges():
    with sp.Scope(constraints=["a >= 2", "b <= 10"], ranges={"b": (0, None)}) as s:
        assert s.constraints == ["a >= 2", "b <= 10"]
        assert s.variable_range("b") == (0, None)
        assert s.variable_range("a") == (1, None)
        assert set(s.variables) == {"a", "b"}
        s.declare("c", 0, 5)
        assert s.variable_range("c") == (0, 5)
        assert s.var("b").bounds() == (0, 10)
        assert s.var("a").bounds() == (2, None)
        assert repr(s).startswith("Scope(")


def test_arithmetic_and_text():
    s = sp.Scope()
    b = s.var("b")
    assert str(2 * b + 1) == "2*b + 1"
    assert str(b - 3) == "b - 3"
    assert str(10 - b) == "-b + 10"
    assert str(b // 2) == "floordiv(b, 2)"
    assert str(b % 3) == "mod(b, 3)"
    assert str(b ** 2) == "b^2"
    assert str(-b) == "-b"
    assert str(+b) == "b"
    assert str(sp.max(b, 3)) == "max(b, 3)"
    assert sp.min(b, 3, 2).evaluate(b=10) == 2 and sp.min(b, 3, 2).evaluate(b=1) == 1
    assert str(sp.max(b, 1)) == "b"  # folded: b >= 1
    assert str(b.max(s.dim("c"))) == "max(b, c)"
    assert repr(b) == "Dim('b')"
    assert s.dim("2*b + 1") == 2 * b + 1
    assert s.dim(7).constant == 7 and int(s.dim(7)) == 7
    assert b.constant is None
    with pytest.raises(TypeError):
        int(b)
    assert (b * s.var("c")).variables == ["b", "c"]
    assert (2 * b + 1).evaluate(b=4) == 9
    assert (2 * b + 1).evaluate({"b": 5}) == 11
    assert hash(b + 1) == hash(1 + b)


def test_comparisons_return_bool_or_raise_inconclusive():
    s = sp.Scope(["n >= 4"])
    n = s.var("n")
    assert n >= 4
    assert n > 3
    assert not (n < 4)
    assert n != 2
    assert (n == 3) is False
    # Semantic equality is compare()'s; `==` is JAX's total rule (the same normal form).
    assert (2 * (n // 2) + n % 2).compare("==", n) is sp.Truth.TRUE
    assert (n == 5) is False and (n != 5) is True
    with pytest.raises(sp.Inconclusive) as e:
        bool(n > 5)
    assert e.value.code == 3 and "n" in e.value.message
    with pytest.raises(sp.Inconclusive):
        if n > 5:
            pass
    assert n.compare("==", 5) is sp.Truth.UNKNOWN
    assert n.compare(sp.Cmp.GE, 4) is sp.Truth.TRUE
    assert n.compare("<", 4) is sp.Truth.FALSE
    assert (n == s.dim("n")) is True
    assert (n == "n") is False  # a string is no dim (its hash differs)
    assert n.__eq__(object()) is NotImplemented


def test_check_adds_an_assertion():
    s = sp.Scope()
    n = s.var("n")
    assert n.compare(">=", 3) is sp.Truth.UNKNOWN
    s.check(n, ">=", 3, "n must be at least 3")
    assert n >= 3
    assert s.constraints[-1] == "n >= 3"


def test_parse_shape_and_solve():
    s = sp.Scope()
    dims = s.parse_shape("b, 2*b + 1")
    assert [str(d) for d in dims] == ["b", "2*b + 1"]
    assert [str(d) for d in s.parse_shape("_, ...", like=[3, 4, 5])] == ["3", "4", "5"]
    assert s.parse_shape("()") == ()
    assert s.solve({"b, 2*b + 1": (3, 7)}) == {"b": 3}
    assert s.solve([("b, c", (2, 5)), ("c * b", (10,))]) == {"b": 2, "c": 5}
    with pytest.raises(sp.ShapeMismatch):
        s.solve({"b, 2*b": (3, 7)})
    with pytest.raises(sp.Unsolvable):
        s.solve({"b * c": (6,)})
