"""Compiled functions (issue 12): automatic dynamic shapes, guards from Python branches, marks,
stances, the event log, export, and errors of the trace function."""

import gc
import threading
import weakref

import numpy as np
import pytest

import shapepoly as sp


def make():
    @sp.function(inputs={"x": (sp.F32, 2)}, outputs=["y"])
    def f(scope, x):
        if x.shape[1].guard("<=", 4, "narrow rows"):
            return (x * 2.0).sum(1)
        return x.sum(1)
    return f


def test_automatic_dynamic_shapes_and_guards(tmp_path):
    f = make()
    assert f(x=np.ones((2, 3), np.float32))["y"].tolist() == [6, 6]
    assert f.trace_count == 1  # static first trace
    f(x=np.ones((5, 3), np.float32))  # axis 0 changed: symbolic from now on
    assert f.trace_count == 2
    assert f(x=np.ones((7, 3), np.float32))["y"].tolist() == [6] * 7
    assert f.trace_count == 2 and f.cache_hits == 1
    assert f(x=np.ones((2, 8), np.float32))["y"].tolist() == [8, 8]  # the other branch
    assert f.variant_count == 3
    events = f.events
    assert events[0].startswith("trace 1 for call 1") and any("marked dynamic" in e for e in events)
    assert any("narrow rows" in e or "s1 > 4" in e for e in events)
    with f.export() as p:
        assert p.variant_count == 3
        p.save(tmp_path / "f.shpoly")
    with sp.load(tmp_path / "f.shpoly") as q:
        rt = q.runtime()
        assert rt(x=np.ones((9, 3), np.float32))["y"].tolist() == [6] * 9
        assert rt(x=np.ones((4, 16), np.float32))["y"].tolist() == [16] * 4


def test_options_marks_and_stances():
    f = sp.Function(lambda scope, x: x + 1.0, {"x": ("f32", 1)}, ["y"],
                    dynamic=sp.DynamicMode.ALL, duck_sizing=False, recompile_limit=2,
                    stance=sp.Stance.DEFAULT, num_threads=1)
    for n in (1, 2, 5, 9):
        assert f(x=np.zeros(n, np.float32))["y"].tolist() == [1] * n
    assert f.trace_count == 1
    g = sp.Function(lambda scope, x: x * 3.0, {"x": ("f32", 1)}, ["y"])
    g.mark_static("x", 0)
    g(x=np.ones(2, np.float32))
    g.set_stance(sp.Stance.FAIL_ON_RECOMPILE)
    with pytest.raises(sp.GuardFailed):
        g(x=np.ones(3, np.float32))
    with pytest.raises(sp.NotFound):
        g.mark_dynamic("nope", 0)
    h = sp.Function(lambda scope, x: x * 3.0, {"x": ("f32", 1)}, ["y"])
    h.mark_dynamic("x", 0, 1, 100)
    h(x=np.ones(2, np.float32))
    h(x=np.ones(50, np.float32))
    assert h.trace_count == 1
    with pytest.raises(sp.InvalidArgument):
        sp.Function(lambda scope, x: x, {"x": ("f32", 1)}, ["y"], recompile_limit=0)


def test_outputs_by_dict_and_sequence():
    f = sp.Function(lambda scope, a, b: {"d": a - b, "s": a + b},
                    {"a": (sp.F64, 1), "b": (sp.F64, 1)}, ["s", "d"])
    out = f(a=np.array([3.0, 4.0]), b=[1.0, 1.0])
    assert list(out) == ["s", "d"] and out["d"].tolist() == [2, 3] and out["s"].tolist() == [4, 5]
    g = sp.Function(lambda scope, a: (a, a * 2.0), {"a": (sp.F64, 1)}, ["p", "q"])
    assert g(a=np.array([1.0]))["q"].tolist() == [2.0]


def test_trace_errors_propagate():
    def raises(scope, x):
        raise KeyError("oops")
    with pytest.raises(KeyError):
        sp.Function(raises, {"x": ("f32", 1)}, ["y"])(x=np.ones(3, np.float32))
    bad = sp.Function(lambda scope, x: x @ x.reshape(1, -1), {"x": ("f32", 1)}, ["y"])
    with pytest.raises(sp.ShapeMismatch) as e:
        bad(x=np.ones(3, np.float32))
    assert "trace function" in e.value.message
    wrong = sp.Function(lambda scope, x: [x, x], {"x": ("f32", 1)}, ["y"])
    with pytest.raises(ValueError):
        wrong(x=np.ones(3, np.float32))
    with pytest.raises(sp.DtypeMismatch):
        sp.Function(lambda scope, x: x, {"x": ("f32", 1)}, ["y"])(x=np.ones(3, np.float16))


def test_traced_objects_expire_and_function_closes():
    kept = []

    def keep(scope, x):
        kept.append((scope, x))
        return x + 1.0

    f = sp.Function(keep, {"x": ("f32", 1)}, ["y"])
    f(x=np.ones(3, np.float32))
    scope, x = kept[0]
    with pytest.raises(ValueError):
        x + 1.0
    with pytest.raises(ValueError):
        scope.var("n")
    scope.close()  # a borrowed scope is never destroyed by Python
    f.close()
    assert f.closed
    with pytest.raises(ValueError):
        f(x=np.ones(3, np.float32))
    with pytest.raises(ValueError):
        f.export()
    g = sp.Function(keep, {"x": ("f32", 1)}, ["y"])
    ref = weakref.ref(g)
    del g
    gc.collect()
    assert ref() is None


def _no_hang(target, timeout=20.0):
    """Runs target() on a daemon thread; fails (instead of hanging the suite) if it blocks."""
    result = {}

    def run():
        try:
            result["value"] = target()
        except BaseException as e:  # checked by the caller
            result["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(timeout)
    assert not t.is_alive(), "blocked: the call did not return within %.0f s" % timeout
    return result


@pytest.mark.parametrize("reenter", ["call", "close", "mark_dynamic", "mark_static",
                                     "set_stance"])
def test_reentry_from_the_trace_function_is_refused_never_blocks(reenter):
    """Issue 39 item 1: a trace function that re-enters its own Function used to deadlock on
    the binding's lock before the C check that refuses re-entry was reached."""
    box = {}
    seen = []

    def trace(scope, x):
        f = box["f"]
        try:
            if reenter == "call":
                f(x=np.ones(2, np.float32))
            elif reenter == "close":
                f.close()
            elif reenter == "mark_dynamic":
                f.mark_dynamic("x", 0)
            elif reenter == "mark_static":
                f.mark_static("x", 0)
            else:
                f.set_stance(sp.Stance.FAIL_ON_RECOMPILE)
        except sp.InvalidArgument as e:
            seen.append(e)
            raise
        return x + 1.0

    f = box["f"] = sp.Function(trace, {"x": ("f32", 1)}, ["y"])
    r = _no_hang(lambda: f(x=np.ones(3, np.float32)))
    assert isinstance(r.get("error"), sp.InvalidArgument), r
    assert len(seen) == 1 and "own trace function" in seen[0].message
    if reenter == "call":  # the C layer's own refusal, passed on
        assert "shp_function_call" in seen[0].message
    assert "own trace function" in r["error"].message
    # Nothing is left locked or closed: the function still traces and runs.
    assert not f.closed
    box["f"] = None
    f._fn = lambda scope, x: x + 1.0
    assert f(x=np.ones(3, np.float32))["y"].tolist() == [2.0] * 3
    f.set_stance(sp.Stance.DEFAULT)
    f.close()


def test_a_function_shared_by_threads_still_serializes_calls():
    """Refusing re-entry must not let two threads into one function at once."""
    f = sp.Function(lambda scope, x: x * 2.0, {"x": ("f32", 1)}, ["y"])
    errors = []

    def work(k):
        try:
            for i in range(100):
                n = 1 + (k + i) % 5
                assert f(x=np.full(n, k, np.float32))["y"].tolist() == [2.0 * k] * n
                if i % 10 == 0:
                    f.set_stance(sp.Stance.DEFAULT)
        except BaseException as e:
            errors.append(e)

    ts = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert not any(t.is_alive() for t in ts)
    assert not errors, errors
    f.close()


def test_mark_unbacked_has_no_hint_no_specialization_no_duck_sizing():
    seen = []

    def body(scope, x, y):
        seen.append((str(x.shape[0]), str(y.shape[0])))
        return x.sum() + y.sum()
    f = sp.Function(body, {"x": ("f32", 1), "y": ("f32", 1)}, ["z"])
    f.mark_unbacked("x", 0)
    f.mark_unbacked("y", 0)
    for n in (0, 1, 3, 8):  # sizes 0 and 1 included: one trace, symbolic
        assert f(x=np.ones(n, np.float32), y=np.ones(n, np.float32))["z"] == 2 * n
    assert f.trace_count == 1
    assert seen[0][0] != seen[0][1]  # equal sizes, two variables: never duck-sized

    def branchy(scope, x):
        if x.shape[0].guard(">=", 2, "long"):  # undecidable, no hint to guard on
            return x * 2.0
        return x
    g = sp.Function(branchy, {"x": ("f32", 1)}, ["y"])
    g.mark_unbacked("x", 0)
    with pytest.raises(sp.Inconclusive):
        g(x=np.ones(3, np.float32))
    with pytest.raises(sp.NotFound):
        g.mark_unbacked("nope", 0)
    with pytest.raises(sp.InvalidArgument):
        g.mark_unbacked("x", 1)
