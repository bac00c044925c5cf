"""Issue 38, PyTorch / Dynamo users: compiled functions behave as torch.compile with
dynamic shapes. Written as PyTorch's docs write it: plain Python code over x.shape, compiled,
called with new sizes, then the recompile log is read."""

import numpy as np
import pytest

import shapepoly as sp


# Item 6: x.reshape(x.shape[0], -1) infers -1 once axis 0 is symbolic (guard: product >= 1).
def test_6_reshape_minus_one_in_a_compiled_function():
    @sp.function(inputs={"x": (sp.F32, 3)}, outputs=["y"])
    def f(scope, x):
        return x.reshape(x.shape[0], -1)

    for n in (2, 3, 7):
        assert f(x=np.ones((n, 4, 5), np.float32))["y"].shape == (n, 20)
    assert f.trace_count == 2
    assert any("s0 >= 1" in e and "reshape" in e for e in f.events)


# Item 7: mark_dynamic, then code that specializes the axis, raises naming axis and line.
def test_7_specializing_a_marked_dynamic_axis_raises():
    @sp.function(inputs={"x": (sp.F32, 1)}, outputs=["y"])
    def f(scope, x):
        if x.shape[0] == 4:
            return x * 2.0
        return x

    f.mark_dynamic("x", 0)
    with pytest.raises(sp.ConstraintViolation, match=r"input 'x' axis 0 was marked dynamic"
                       r".*s0 == 4.*test_torch_like.py:\d+"):
        f(x=np.ones(4, np.float32))


# maybe_mark_dynamic: symbolic from the next trace, but specializing it is no error.
def test_7_maybe_mark_dynamic():
    @sp.function(inputs={"x": (sp.F32, 1)}, outputs=["y"])
    def f(scope, x):
        if x.shape[0] == 4:  # specializes the axis: allowed after maybe_mark_dynamic
            return x * 2.0
        return x

    f.maybe_mark_dynamic("x", 0)
    np.testing.assert_array_equal(f(x=np.ones(4, np.float32))["y"], [2, 2, 2, 2])
    np.testing.assert_array_equal(f(x=np.ones(3, np.float32))["y"], [1, 1, 1])

    @sp.function(inputs={"x": (sp.F32, 1)}, outputs=["y"])
    def g(scope, x):
        return x * 2.0

    g.maybe_mark_dynamic("x", 0)
    for n in (1, 2, 7):
        g(x=np.ones(n, np.float32))
    assert g.trace_count == 1  # symbolic from the first trace
    with pytest.raises(sp.NotFound):
        g.maybe_mark_dynamic("nope", 0)


# Item 8: a plain `if` on a shape in a compiled function guards on the call's sizes.
def test_8_plain_if_on_a_shape_guards():
    @sp.function(inputs={"x": (sp.F32, 1)}, outputs=["y"])
    def f(scope, x):
        if x.shape[0] > 2:
            return x * 2.0
        return x

    f.mark_dynamic("x", 0)
    np.testing.assert_array_equal(f(x=np.ones(4, np.float32))["y"], [2, 2, 2, 2])
    np.testing.assert_array_equal(f(x=np.ones(1, np.float32))["y"], [1])
    np.testing.assert_array_equal(f(x=np.ones(9, np.float32))["y"], [2] * 9)
    assert f.trace_count == 2
    # Outside a trace (guard policy NEVER) the error names .guard().
    s = sp.Scope()
    s.set_hint("n", 3)
    with pytest.raises(sp.Inconclusive, match=r"\.guard\(\)"):
        if s.var("n") > 2:
            pass


# Item 9: the log names the guard that failed (variant 1's, not variant 0's).
def test_9_event_log_names_the_failed_guard():
    @sp.function(inputs={"x": (sp.F32, 1)}, outputs=["y"])
    def f(scope, x):
        if x.shape[0].guard("<=", 10):
            return x * 2.0
        return x

    f(x=np.ones(4, np.float32))   # variant 0: s0 == 4
    f(x=np.ones(5, np.float32))   # variant 1: dynamic, guard s0 <= 10
    f(x=np.ones(20, np.float32))  # fails s0 == 4 and s0 <= 10
    last = [e for e in f.events if e.startswith("trace 3")][0]
    assert "s0 <= 10" in last, last


# Item 10: stances. FAIL_ON_RECOMPILE exists; force_trace is not added (see the report).
def test_10_fail_on_recompile_stance():
    @sp.function(inputs={"x": (sp.F32, 1)}, outputs=["y"])
    def f(scope, x):
        return x + 1.0

    f(x=np.ones(2, np.float32))
    f.set_stance(sp.Stance.FAIL_ON_RECOMPILE)
    with pytest.raises(sp.GuardFailed, match="FAIL_ON_RECOMPILE"):
        f(x=np.ones(3, np.float32))


# force_trace (PyTorch's force_eager): every call traces; the variants stay as they were.
def test_10_force_trace_stance():
    traced = []

    @sp.function(inputs={"x": (sp.F32, 1)}, outputs=["y"])
    def f(scope, x):
        traced.append(1)
        return x + 1.0

    f(x=np.ones(2, np.float32))
    f.set_stance(sp.Stance.FORCE_TRACE)
    for _ in range(3):
        np.testing.assert_array_equal(f(x=np.ones(2, np.float32))["y"], [2, 2])
    assert len(traced) == 4 and f.variant_count == 1
    assert any("FORCE_TRACE" in e for e in f.events)
    f.set_stance(sp.Stance.DEFAULT)
    f(x=np.ones(2, np.float32))
    assert len(traced) == 4  # the cached variant again
