"""The call path's caches (issue 40 item 6): a runtime keeps, per input signature (the input names
in their order), the wraps of the arrays of its last call and the output shapes of their shapes;
for run_into the output arrays' wraps too. Every change that makes a cached entry wrong must be
seen: another array, the same array reshaped, resized, re-typed or re-strided in place, other
keyword order, a dim input's new value, an output of the wrong shape, dtype or layout. Values
are compared with numpy; each case runs with both comparisons of an array with its record (views
over numpy's own fields of the array, and the portable one through its attributes)."""

import threading
import warnings

import numpy as np
import pytest

import shapepoly as sp
from shapepoly import _program


@pytest.fixture(params=["views", "portable"])
def reader(request, monkeypatch):
    if request.param == "portable":
        monkeypatch.setattr(_program, "_LAYOUT", None)
    elif _program._LAYOUT is None:
        pytest.skip("numpy's array fields are not where the views read them here")
    return request.param


@pytest.fixture
def rt():
    with sp.Scope(ranges={"n": (0, None)}) as s:
        x = s.input("x", sp.F32, "n")
        y = s.input("y", sp.F32, "n")
        p = s.program([x, y], {"z": x + y, "d": x - y})
    r = p.runtime(num_threads=1)
    yield r
    r.close()
    p.close()


def set_strides(a, strides):
    """a.strides = strides in place (deprecated since NumPy 2.4); False where refused."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            a.strides = strides
        except AttributeError:
            return False
    return True


def check(out, x, y):
    assert list(out) == ["z", "d"]
    np.testing.assert_array_equal(out["z"], np.add(x, y, dtype=np.float32))
    np.testing.assert_array_equal(out["d"], np.subtract(x, y, dtype=np.float32))


def test_calls_see_every_change_of_a_cached_signature(rt, reader):
    a, b = np.arange(8, dtype=np.float32), np.full(8, 0.5, np.float32)
    check(rt(x=a, y=b), a, b)
    check(rt(x=a, y=b), a, b)  # the cached signature
    a[3] = 100  # new data in the same array
    check(rt(x=a, y=b), a, b)
    check(rt(y=a, x=b), b, a)  # the same arrays under the other names
    check(rt(x=b, y=a), b, a)  # ... and the other keyword order
    check(rt(x=a, y=a), a, a)  # one array for both inputs
    a5, b5 = np.arange(5, dtype=np.float32), np.ones(5, np.float32)  # other arrays and shapes
    out = rt(x=a5, y=b5)
    assert out["z"].shape == (5,)
    check(out, a5, b5)
    check(rt(x=a, y=b), a, b)  # back: the output shapes of (8,) from the cache
    # The same objects reshaped in place: a rank the program refuses, then a new length.
    a.shape = (2, 4)
    with pytest.raises(sp.ShapeMismatch):
        rt(x=a, y=b)
    a.shape = (8,)
    check(rt(x=a, y=b), a, b)
    a.resize(6, refcheck=False)
    b.resize(6, refcheck=False)
    out = rt(x=a, y=b)
    assert out["z"].shape == (6,)
    check(out, a, b)
    # The same object re-typed in place (the same bytes, another dtype), then back.
    a.dtype = np.int32
    with pytest.raises(sp.DtypeMismatch):
        rt(x=a, y=b)
    a.dtype = np.float32
    check(rt(x=a, y=b), a, b)
    # The same object re-strided in place: now non-contiguous, converted (a copy).
    base = np.arange(12, dtype=np.float32)
    v = base[:6]
    check(rt(x=v, y=b), v, b)
    if set_strides(v, (8,)):  # base[::2]
        assert not v.flags.c_contiguous
        check(rt(x=v, y=b), base[::2], b)
        base[::2] = -1  # a converted input is read again at every call
        check(rt(x=v, y=b), base[::2], b)
    check(rt(x=base[1::2], y=b), base[1::2], b)  # a new non-contiguous array
    # Lists and scalars of the right size, converted at every call.
    check(rt(x=[1, 2, 3], y=np.ones(3, np.float32)), np.array([1, 2, 3], np.float32),
          np.ones(3, np.float32))
    with pytest.raises(sp.DtypeMismatch):  # another dtype in a new array
        rt(x=a.astype(np.float64), y=b)
    check(rt(x=a, y=b), a, b)


def test_sizes_zero_and_one(rt, reader):
    for n in (0, 1, 0, 1):
        a, b = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
        out = rt(x=a, y=b)
        assert out["z"].shape == (n,)
        check(out, a, b)
        z, d = np.empty(n, np.float32), np.empty(n, np.float32)
        rt.run_into({"x": a, "y": b}, {"z": z, "d": d})
        check({"z": z, "d": d}, a, b)


def test_run_into_sees_every_change_of_a_cached_signature(rt, reader):
    a, b = np.arange(8, dtype=np.float32), np.full(8, 0.25, np.float32)
    z, d = np.empty(8, np.float32), np.empty(8, np.float32)
    outs = {"z": z, "d": d}

    def run_into(x, y, o):
        rt.run_into({"x": x, "y": y}, o)
        check(o, x, y)

    run_into(a, b, outs)
    a[0] = -7
    run_into(a, b, outs)
    run_into(b, a, outs)
    rt.run_into({"y": a, "x": b}, outs)  # the other keyword order
    check(outs, b, a)
    with pytest.raises(sp.ShapeMismatch):  # an output of the wrong shape
        rt.run_into({"x": a, "y": b}, {"z": np.empty(7, np.float32), "d": d})
    run_into(a, b, outs)
    # The same output object reshaped in place, then back.
    z.shape = (2, 4)
    with pytest.raises(sp.ShapeMismatch):
        rt.run_into({"x": a, "y": b}, outs)
    z.shape = (8,)
    run_into(a, b, outs)
    # Re-typed in place: the library names the dtype.
    z.dtype = np.int32
    with pytest.raises(sp.DtypeMismatch):
        rt.run_into({"x": a, "y": b}, outs)
    z.dtype = np.float32
    run_into(a, b, outs)
    # Re-strided in place, or made read-only: refused before the run.
    zb = np.empty(16, np.float32)
    zv = zb[:8]
    run_into(a, b, {"z": zv, "d": d})
    if set_strides(zv, (8,)):
        with pytest.raises(ValueError, match="output 'z' must be a writable, C-contiguous"):
            rt.run_into({"x": a, "y": b}, {"z": zv, "d": d})
    run_into(a, b, outs)
    d.flags.writeable = False  # the very arrays of the last run_into
    with pytest.raises(ValueError, match="output 'd' must be a writable"):
        rt.run_into({"x": a, "y": b}, outs)
    d.flags.writeable = True
    run_into(a, b, outs)
    # Shrunk in place: the same strides (and most likely the same data pointer).
    d.resize(5, refcheck=False)
    with pytest.raises(sp.ShapeMismatch):
        rt.run_into({"x": a, "y": b}, outs)
    d.resize(8, refcheck=False)
    run_into(a, b, outs)
    # Inputs and outputs of another length, then the first ones again.
    a3, b3 = np.arange(3, dtype=np.float32), np.ones(3, np.float32)
    o3 = {"z": np.empty(3, np.float32), "d": np.empty(3, np.float32)}
    run_into(a3, b3, o3)
    with pytest.raises(sp.ShapeMismatch):  # the old outputs no longer fit
        rt.run_into({"x": a3, "y": b3}, outs)
    run_into(a, b, outs)
    # An input resized in place: the outputs no longer fit, then new ones do.
    a.resize(5, refcheck=False)
    b.resize(5, refcheck=False)
    with pytest.raises(sp.ShapeMismatch):
        rt.run_into({"x": a, "y": b}, outs)
    run_into(a, b, {"z": np.empty(5, np.float32), "d": np.empty(5, np.float32)})
    # Missing, extra and non-array outputs.
    with pytest.raises(sp.NotFound, match="missing"):
        rt.run_into({"x": a, "y": b}, {"z": z})
    with pytest.raises(sp.NotFound, match="unknown"):
        rt.run_into({"x": a, "y": b}, {"z": z, "d": d, "e": d})
    with pytest.raises(ValueError, match="output 'z' must be"):
        rt.run_into({"x": a, "y": b}, {"z": [0.0] * 5, "d": np.empty(5, np.float32)})


def test_output_shapes_follow_a_dim_inputs_value(reader):
    with sp.Scope(ranges={"m": (0, None)}) as s:
        m = s.dim_input("m")
        io = s.iota(sp.I32, [s.var("m")], 0)
        p = s.program([m], {"io": io})
    rt = p.runtime(num_threads=1)
    for v in (4, 6, 4, 0, 1):
        np.testing.assert_array_equal(rt(m=v)["io"], np.arange(v, dtype=np.int32))
    held = np.array(3, np.int64)
    np.testing.assert_array_equal(rt(m=held)["io"], np.arange(3, dtype=np.int32))
    held[...] = 7  # the same array object, another value: read again
    np.testing.assert_array_equal(rt(m=held)["io"], np.arange(7, dtype=np.int32))
    out = np.empty(7, np.int32)
    rt.run_into({"m": held}, {"io": out})
    np.testing.assert_array_equal(out, np.arange(7, dtype=np.int32))
    held[...] = 2
    with pytest.raises(sp.ShapeMismatch):
        rt.run_into({"m": held}, {"io": out})
    rt.close()
    p.close()


def test_errors_of_a_call_leave_the_cache_right(rt, reader):
    a, b = np.arange(4, dtype=np.float32), np.ones(4, np.float32)
    check(rt(x=a, y=b), a, b)
    with pytest.raises(sp.ShapeMismatch):
        rt(x=a, y=np.ones(5, np.float32))
    check(rt(x=a, y=b), a, b)
    with pytest.raises(sp.InvalidArgument):
        rt(x=a)
    with pytest.raises(sp.NotFound, match="no input named 'w'"):
        rt(x=a, y=b, w=b)
    check(rt(x=a, y=b), a, b)
    rt.close()
    with pytest.raises(ValueError, match="closed Runtime"):
        rt(x=a, y=b)
    with pytest.raises(ValueError, match="closed Runtime"):
        rt.run_into({"x": a, "y": b}, {"z": a, "d": b})


def test_more_signatures_than_the_runtime_holds(rt, reader):
    """Beyond 16 held signatures all are released and bound again: still right."""
    arrays = {n: (np.arange(n, dtype=np.float32), np.full(n, 2, np.float32)) for n in range(40)}
    for _ in range(2):
        for n, (a, b) in arrays.items():
            check(rt(x=a, y=b), a, b)
            o = {"z": np.empty(n, np.float32), "d": np.empty(n, np.float32)}
            rt.run_into({"x": a, "y": b} if n % 2 else {"y": b, "x": a}, o)
            check(o, a, b)


def test_a_runtime_shared_by_two_threads_with_changing_signatures(rt):
    """Calls and run_intos from two threads on one runtime, each thread with its own arrays
    and lengths: the lock keeps every binding and output right."""
    errors = []

    def work(k):
        try:
            rng = np.random.default_rng(k)
            for i in range(300):
                n = (k * 3 + i) % 7
                a = rng.standard_normal(n).astype(np.float32)
                b = rng.standard_normal(n).astype(np.float32)
                if i % 2:
                    check(rt(x=a, y=b), a, b)
                else:
                    o = {"z": np.empty(n, np.float32), "d": np.empty(n, np.float32)}
                    rt.run_into({"x": a, "y": b}, o)
                    check(o, a, b)
        except BaseException as e:  # reported below
            errors.append(e)

    ts = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors


def holders():
    """Ways to keep an output's memory reachable without keeping the output array itself:
    {name: f(z) -> a function that reads z's 8 values through what it holds}."""
    import ctypes
    import weakref

    def view(z):
        v = z[2:]
        return lambda: v

    def base(z):
        b = z.base
        return lambda: np.frombuffer(b, np.float32)

    def mview(z):
        m = memoryview(z)
        return lambda: np.array(m.tolist(), np.float32)

    def cts(z):
        c = (ctypes.c_float * z.size).from_buffer(z)
        return lambda: np.array(c[:], np.float32)

    def weak(z):
        w = weakref.ref(z)
        return lambda: w()

    def in_dict(z):
        d = {"z": z}
        return lambda: d["z"]

    def fb(z):
        f = np.frombuffer(z, np.float32)
        return lambda: f

    return {"the array": lambda z: (lambda: z), "a view": view, "its base": base,
            "a memoryview": mview, "np.frombuffer": fb, "a ctypes array": cts,
            "a weak reference": weak, "a dict": in_dict}


@pytest.mark.parametrize("kind", list(holders()))
def test_an_output_still_referenced_is_never_written_again(rt, kind):
    """Calls of a known signature write into dropped outputs of earlier calls (the output pool):
    an output kept in any way (itself, a view, its base buffer, a memoryview, a numpy or ctypes
    array over its buffer, a weak reference) keeps its values through later calls."""
    a, b = np.arange(8, dtype=np.float32), np.ones(8, np.float32)
    for _ in range(3):
        check(rt(x=a, y=b), a, b)  # the signature is known, the pool has outputs
    z = rt(x=a, y=b)["z"]
    want = (a + b)[2:] if kind == "a view" else a + b
    read = holders()[kind](z)
    del z
    for k in range(8):  # more calls than the pool holds records
        a[:] = k * 10
        out = rt(x=a, y=b)
        check(out, a, b)
        np.testing.assert_array_equal(read(), want)
        del out


def test_dropped_outputs_are_reused_and_come_back_as_made(rt):
    """A dropped output is written again (the pool works), and one changed in place before it
    was dropped (reshaped, re-typed, made read-only) is never handed out again."""
    if _program._refcount is None or _program._LAYOUT is None:
        pytest.skip("no output pool here (it needs CPython's reference counts)")
    a, b = np.arange(8, dtype=np.float32), np.ones(8, np.float32)
    rt(x=a, y=b)
    ids = set()
    for _ in range(5):
        ids.add(id(rt(x=a, y=b)["z"]))
    assert len(ids) < 5  # dropped at once: the same arrays again
    for change in ("shape", "strides", "dtype", "readonly"):
        z = rt(x=a, y=b)["z"]
        if change == "shape":
            z.shape = (2, 4)
        elif change == "strides":  # the same rank: only the strides' memory tells
            if not set_strides(z, (0,)):
                continue
        elif change == "dtype":
            z.dtype = np.int32
        else:
            z.flags.writeable = False
        del z
        for k in range(6):
            a[:] = k
            out = rt(x=a, y=b)
            assert out["z"].shape == (8,) and out["z"].dtype == np.float32
            assert out["z"].strides == (4,)
            assert out["z"].flags.writeable and out["d"].flags.writeable
            check(out, a, b)
    # Outputs of more than 16 KiB in all are not pooled: new arrays from the library.
    big = np.ones(3000, np.float32)
    for _ in range(3):
        check(rt(x=big, y=big), big, big)
    assert rt._calls[("x", "y")].pool is None
    check(rt(x=a, y=b), a, b)


def test_a_dropped_output_reshaped_at_the_same_rank_is_not_reused():
    """(2, 4) -> (4, 2) in place: the same rank, both contiguous, new dims in numpy's memory
    (maybe at the same address): only the dims' values tell."""
    with sp.Scope() as s:
        x = s.input("x", sp.F32, "m, n")
        p = s.program([x], {"z": x * 2.0})
    rt = p.runtime(num_threads=1)
    a = np.arange(8, dtype=np.float32).reshape(2, 4)
    for _ in range(3):
        rt(x=a)
    for k in range(3):
        z = rt(x=a)["z"]
        z.shape = (4, 2)
        del z
        for _ in range(4):
            a[...] = k
            out = rt(x=a)["z"]
            assert out.shape == (2, 4) and out.strides == (16, 4)
            np.testing.assert_array_equal(out, a * 2)
    # (1, 8) with the stride of its size-1 axis changed: the same flags (still contiguous).
    a1 = np.arange(8, dtype=np.float32).reshape(1, 8)
    for _ in range(3):
        rt(x=a1)
    z = rt(x=a1)["z"]
    if set_strides(z, (0, 4)):
        assert z.flags.c_contiguous
        del z
        for _ in range(4):
            out = rt(x=a1)["z"]
            assert out.shape == (1, 8) and out.strides == (32, 4)
            np.testing.assert_array_equal(out, a1 * 2)
    rt.close()
    p.close()


def test_every_result_kept_keeps_its_values(rt):
    """Results all kept (more than the pool holds): each call past the pool's records gets new
    arrays, and every kept result keeps its own values."""
    a, b = np.arange(8, dtype=np.float32), np.ones(8, np.float32)
    kept, want = [], []
    for k in range(12):
        a[:] = k
        kept.append(rt(x=a, y=b))
        want.append((a + b, a - b))
        if k % 4 == 3:
            del kept[1]  # one dropped now and then: its arrays may come back
            del want[1]
    for out, (z, d) in zip(kept, want):
        np.testing.assert_array_equal(out["z"], z)
        np.testing.assert_array_equal(out["d"], d)
    assert len({id(out["z"]) for out in kept}) == len(kept)


def test_other_arrays_at_every_call(rt, reader):
    """New input arrays at every call (the usual way: a new batch each time), of a few shapes
    and dtypes in turn: each is wrapped again from its slot's cached arguments for its dtype and
    shape, the output shapes come from the cache, and every value is numpy's."""
    rng = np.random.default_rng(5)
    for k in range(60):
        n = (0, 8, 3, 8, 1)[k % 5]
        a = rng.standard_normal(n).astype(np.float32)
        b = rng.standard_normal(n).astype(np.float32)
        if k % 7 == 3:
            with pytest.raises(sp.DtypeMismatch):
                rt(x=a.astype(np.float64), y=b)
            continue
        out = rt(x=a, y=b)
        assert out["z"].shape == (n,)
        check(out, a, b)
