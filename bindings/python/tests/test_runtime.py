"""Runtime: keyword binding, zero-copy inputs and outputs, conversions, run_into, dry runs, plan
statistics."""

import ctypes

import numpy as np
import pytest

import shapepoly as sp
from shapepoly import _lib

from conftest import dense_ref


def wrapped_address(rt, name):
    """The data address the runtime's wrapper of input `name` points to."""
    for b in list(rt._calls.values()) + list(rt._intos.values()):
        if name in b.key:
            return _lib.lib.shp_array_data(b.wraps[b.key.index(name)][6])
    raise KeyError(name)


def test_call_returns_a_dict_in_output_order(dense):
    rt = dense.runtime()
    x = np.ones((3, 4), np.float32)
    out = rt(x=x)
    assert list(out) == ["y"] and rt.output_names == ("y",)
    np.testing.assert_allclose(out["y"], dense_ref(x), rtol=1e-6)
    assert rt.run({"x": x})["y"].tolist() == out["y"].tolist()
    with pytest.raises(TypeError):
        rt(x)  # keyword only


def test_inputs_are_zero_copy_when_contiguous_and_aligned(dense):
    rt = dense.runtime()
    x = np.ones((3, 4), np.float32)
    rt(x=x)
    assert wrapped_address(rt, "x") == x.ctypes.data
    ro = np.ones((2, 4), np.float32)
    ro.flags.writeable = False
    rt(x=ro)
    assert wrapped_address(rt, "x") == ro.ctypes.data  # read-only: still no copy
    strided = np.ones((3, 8), np.float32)[:, ::2]
    np.testing.assert_allclose(rt(x=strided)["y"], dense_ref(strided), rtol=1e-6)
    assert wrapped_address(rt, "x") != strided.ctypes.data  # copied once
    raw = np.zeros(3 * 4 * 4 + 1, np.uint8)
    unaligned = raw[1:].view(np.float32).reshape(3, 4)
    assert not unaligned.flags.aligned
    unaligned[...] = 2
    np.testing.assert_allclose(rt(x=unaligned)["y"], dense_ref(np.full((3, 4), 2, np.float32)),
                               rtol=1e-6)
    assert wrapped_address(rt, "x") != unaligned.ctypes.data
    swapped = np.ones((3, 4), ">f4")
    np.testing.assert_allclose(rt(x=swapped)["y"], dense_ref(np.ones((3, 4), np.float32)))
    np.testing.assert_allclose(rt(x=[[1, 1, 1, 1]])["y"], dense_ref(np.ones((1, 4), np.float32)))


def test_same_array_mutated_in_place_is_seen(dense):
    rt = dense.runtime()
    x = np.zeros((2, 4), np.float32)
    rt(x=x)
    x[...] = 1
    np.testing.assert_allclose(rt(x=x)["y"], dense_ref(x), rtol=1e-6)
    y = x.reshape(8, 1)[:4].reshape(1, 4)
    np.testing.assert_allclose(rt(x=y)["y"], dense_ref(y), rtol=1e-6)
    assert rt(x=x)["y"].shape == (2, 3)


def test_outputs_own_the_library_buffer(dense):
    rt = dense.runtime()
    y = rt(x=np.ones((3, 4), np.float32))["y"]
    base = y.base
    assert isinstance(base, ctypes.Array)
    assert ctypes.addressof(base) == y.ctypes.data  # the library's memory, not a copy
    assert base._shp_ptr and _lib.lib.shp_array_data(base._shp_ptr) == y.ctypes.data
    assert y.flags.c_contiguous and y.flags.writeable
    view = y[1:]
    del y, base
    assert view.sum() > 0  # the view keeps the buffer alive
    y2 = rt(x=np.ones((3, 4), np.float32))["y"]
    assert not np.shares_memory(view, y2)


def test_empty_and_scalar_outputs():
    with sp.Scope(ranges={"n": (0, None)}) as s:
        x = s.input("x", sp.F32, "n")
        p = s.program([x], {"y": x + 1.0, "s": x.sum()})
    rt = p.runtime()
    out = rt(x=np.zeros(0, np.float32))
    assert out["y"].shape == (0,) and out["s"].shape == () and out["s"] == 0
    out = rt(x=np.arange(3, dtype=np.float32))
    assert out["s"] == 3 and out["y"].tolist() == [1, 2, 3]
    z = sp.zeros(sp.I64, (2, 0))
    assert z.shape == (2, 0) and z.dtype == np.int64


def test_run_into_dry_run_and_statistics(dense):
    rt = dense.runtime(num_threads=1, plan_cache_capacity=4)
    assert rt.num_threads == 1 and rt.simd_target
    assert rt.plans_built == 0 and rt.last_variant == -1
    assert rt.dry_run({"x": (5, 4)}) == {"y": (5, 3)}
    assert rt.output_shape(0) == (5, 3) and rt.output_shape("y") == (5, 3)
    assert rt.plans_built == 1
    x = np.ones((5, 4), np.float32)
    out = np.empty((5, 3), np.float32)
    rt.run_into({"x": x}, {"y": out})
    np.testing.assert_allclose(out, dense_ref(x), rtol=1e-6)
    assert rt.cache_hits == 1 and rt.last_variant == 0
    assert rt.variant_plans_built(0) == 1 and rt.variant_cache_hits(0) == 1
    assert rt.last_plan_build_ns > 0
    with pytest.raises(sp.ShapeMismatch):
        rt.run_into({"x": x}, {"y": np.empty((4, 3), np.float32)})
    with pytest.raises(ValueError):
        rt.run_into({"x": x}, {"y": np.empty((3, 5), np.float32).T})
    with pytest.raises(sp.NotFound):
        rt.run_into({"x": x}, {})
    with pytest.raises(sp.NotFound):
        rt.output_shape("nope")
    for _ in range(3):
        rt(x=x)
    assert rt.plans_built == 1 and rt.cache_hits == 5
    rt(x=np.ones((6, 4), np.float32))
    assert rt.plans_built == 2


def test_errors_leave_the_runtime_usable(dense):
    rt = dense.runtime()
    x = np.ones((2, 4), np.float32)
    assert rt(x=x)["y"].shape == (2, 3)
    with pytest.raises(sp.DtypeMismatch):
        rt(x=np.ones((2, 4), np.int32))
    with pytest.raises(sp.ShapeMismatch):
        rt(x=np.ones((2, 5), np.float32))
    with pytest.raises(sp.InvalidArgument):
        rt()
    assert rt(x=x)["y"].shape == (2, 3)
    assert rt(x=np.ones((7, 4), np.float32))["y"].shape == (7, 3)
    assert rt(x=x)["y"].shape == (2, 3)


def test_context_managers_close(dense):
    with dense.runtime() as rt:
        rt(x=np.ones((1, 4), np.float32))
    assert rt.closed
    with sp.Scope() as s:
        pass
    assert s.closed


def test_an_array_resized_in_place_between_calls_is_wrapped_again(dense):
    """Issue 39 item 2: the runtime reused its wrapper of the same array object, assuming the
    array could not move; resize(refcheck=False) moves the data (the old buffer is freed) and
    the next call read freed memory. Each case ends with the array's original shape, strides
    and dtype, so only the data pointer tells that it moved."""
    rt = dense.runtime(num_threads=1)
    a = np.arange(8, dtype=np.float32)
    a.shape = (2, 4)  # still owns its data (reshape() would make a view)
    np.testing.assert_allclose(rt(x=a)["y"], dense_ref(a), rtol=1e-6)
    for big in (1 << 16, 1 << 20, 1 << 22):
        before = a.__array_interface__["data"][0]
        a.resize((big, 4), refcheck=False)  # realloc: moves the data
        a.resize((2, 4), refcheck=False)
        a[...] = np.arange(8, dtype=np.float32).reshape(2, 4) + big
        # Churn the allocator so that the freed buffer is reused and overwritten.
        junk = [np.full((big, 4), -1e30, np.float32) for _ in range(2)]
        moved = a.__array_interface__["data"][0] != before
        np.testing.assert_allclose(rt(x=a)["y"], dense_ref(a), rtol=1e-6)
        del junk
        if moved:
            break
    else:
        pytest.skip("the allocator never moved the array")
    # Reshaped in place (same object, same data): the new shape is used.
    a.shape = (4, 2)
    with pytest.raises(sp.ShapeMismatch):
        rt(x=a)
    a.shape = (1, 8)
    with pytest.raises(sp.ShapeMismatch):
        rt(x=a)
    b = np.arange(12, dtype=np.float32)
    b.shape = (3, 4)
    np.testing.assert_allclose(rt(x=b)["y"], dense_ref(b), rtol=1e-6)
    b.resize((5, 4), refcheck=False)  # grows in place or moves: new shape either way
    b[3:] = 7
    np.testing.assert_allclose(rt(x=b)["y"], dense_ref(b), rtol=1e-6)
    rt.close()


def test_run_into_reuses_its_wraps_and_sees_every_change():
    """run_into holds the arrays of its last call (like calls do): the same arrays again are
    not re-wrapped, but new data in them, another output array, a resized input or an output
    made read-only are all seen."""
    s = sp.Scope()
    x = s.input("x", sp.F32, "n")
    y = s.input("y", sp.F32, "n")
    rt = s.program([x, y], {"z": x + y, "d": x - y}).runtime()
    a, b = np.arange(4, dtype=np.float32), np.ones(4, np.float32)
    z, d = np.empty(4, np.float32), np.empty(4, np.float32)
    outs = {"z": z, "d": d}
    rt.run_into({"x": a, "y": b}, outs)
    np.testing.assert_array_equal(z, a + 1)
    a[:] = 10  # new data in the same array
    rt.run_into({"x": a, "y": b}, outs)
    np.testing.assert_array_equal(z, 11)
    np.testing.assert_array_equal(d, 9)
    z2 = np.empty(4, np.float32)  # another output array
    rt.run_into({"x": a, "y": b}, {"z": z2, "d": d})
    np.testing.assert_array_equal(z2, 11)
    a6, b6 = np.full(6, 2, np.float32), np.ones(6, np.float32)  # other shapes
    z6, d6 = np.empty(6, np.float32), np.empty(6, np.float32)
    rt.run_into({"x": a6, "y": b6}, {"z": z6, "d": d6})
    np.testing.assert_array_equal(d6, 1)
    with pytest.raises(sp.ShapeMismatch):  # the old outputs no longer fit
        rt.run_into({"x": a6, "y": b6}, outs)
    d6.flags.writeable = False
    with pytest.raises(ValueError, match="output 'd' must be a writable"):
        rt.run_into({"x": a6, "y": b6}, {"z": z6, "d": d6})
    with pytest.raises(sp.NotFound, match="missing"):
        rt.run_into({"x": a6, "y": b6}, {"z": z6})
    rt.close()
    with pytest.raises(ValueError, match="closed Runtime"):
        rt.run_into({"x": a, "y": b}, outs)
