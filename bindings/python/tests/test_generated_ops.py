"""The op methods generated from cc/ops/ops.toml (shapepoly/_ops.py): each against numpy, with
defaults, a symbolic batch, every dtype, and a clear error for a bad argument."""

import numpy as np
import pytest

import shapepoly as sp

DTYPES = [(sp.F32, np.float32), (sp.F64, np.float64), (sp.I32, np.int32), (sp.I64, np.int64),
          (sp.BOOL, np.bool_)]


def _run(build, spec, dtype, value):
    with sp.Scope() as s:
        x = s.input("x", dtype, spec)
        prog = s.program([x], {"y": build(x)})
    try:
        return prog.runtime()(x=value)["y"]
    finally:
        prog.close()


@pytest.mark.parametrize("dtype, np_dtype", DTYPES)
@pytest.mark.parametrize("k", [-3, -1, 0, 1, 2, 50, -(2 ** 63), 2 ** 63 - 1])
@pytest.mark.parametrize("upper", [True, False])
def test_trilu_matches_numpy(dtype, np_dtype, k, upper):
    rng = np.random.default_rng(7)
    a = (rng.standard_normal((3, 4, 5)) * 4).astype(np_dtype)
    got = _run(lambda x: x.trilu(k, upper), "b, 4, 5", dtype, a)
    kk = max(min(k, 100), -100)  # numpy's tri overflows at the int64 extremes: same matrices
    want = np.triu(a, kk) if upper else np.tril(a, kk)
    np.testing.assert_array_equal(got, want)


def test_trilu_defaults_are_numpy_triu():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(_run(lambda x: x.trilu(), "n, 4", sp.F32, a), np.triu(a))


def test_trilu_refuses_vectors():
    with sp.Scope() as s:
        x = s.input("x", sp.F32, "n")
        with pytest.raises(sp.InvalidArgument, match="trilu: needs an operand of rank >= 2"):
            x.trilu()


def test_reverse_and_scatter_add_match_numpy():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(_run(lambda x: x.reverse(0, 1), "n, 3", sp.F32, a), a[::-1, ::-1])
    with sp.Scope() as s:
        x = s.input("x", sp.F32, "n, 3")
        i = s.input("i", sp.I64, "k")
        u = s.input("u", sp.F32, "k, 3")
        prog = s.program([x, i, u], {"y": x.scatter_add(i, u)})
    want = a.copy()
    np.add.at(want, [1, 1], np.ones((2, 3), np.float32))
    got = prog.runtime()(x=a, i=np.array([1, 1]), u=np.ones((2, 3), np.float32))["y"]
    prog.close()
    np.testing.assert_array_equal(got, want)


# ---- take_along_axis (np.take_along_axis, ONNX GatherElements) ----

def _take_along(x_spec, i_spec, dtype, itype, axis, a, i):
    with sp.Scope() as s:
        x = s.input("x", dtype, x_spec)
        idx = s.input("i", itype, i_spec)
        prog = s.program([x, idx], {"y": x.take_along_axis(idx, axis)})
    try:
        return prog.runtime()(x=a, i=i)["y"]
    finally:
        prog.close()


@pytest.mark.parametrize("dtype, np_dtype", DTYPES)
@pytest.mark.parametrize("itype, np_itype", [(sp.I32, np.int32), (sp.I64, np.int64)])
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_take_along_axis_matches_numpy(dtype, np_dtype, itype, np_itype, axis):
    rng = np.random.default_rng(11)
    a = (rng.standard_normal((3, 4, 5)) * 4).astype(np_dtype)
    ishape = [3, 4, 5]
    ishape[axis] = 7  # more positions than the axis: repeats
    n = a.shape[axis]
    i = rng.integers(-n, n, size=ishape).astype(np_itype)  # negative ones count from the end
    i_spec = ["k, 4, 5", "b, k, 5", "b, 4, k"][axis % 3]
    got = _take_along("b, 4, 5", i_spec, dtype, itype, axis, a, i)
    np.testing.assert_array_equal(got, np.take_along_axis(a, i, axis=axis))
    assert got.dtype == np_dtype


def test_take_along_axis_default_axis_and_sizes_zero_and_one():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    i = np.array([[2, 0, -1, 1]], np.int64)
    np.testing.assert_array_equal(_take_along("n, 4", "1, 4", sp.F32, sp.I64, 0, a, i),
                                  np.take_along_axis(a, i, 0))  # axis defaults to 0 (numpy's none)
    with sp.Scope() as s:
        s.declare("n", 0)
        s.declare("k", 0)
        x = s.input("x", sp.F32, "n, 4")
        idx = s.input("i", sp.I64, "k, 4")
        prog = s.program([x, idx], {"y": x.take_along_axis(idx)})
    rt = prog.runtime()
    assert rt(x=a, i=i)["y"].tolist() == [[8.0, 1.0, 10.0, 7.0]]
    assert rt(x=a, i=np.zeros((0, 4), np.int64))["y"].shape == (0, 4)  # an empty result
    assert rt(x=np.zeros((0, 4), np.float32), i=np.zeros((0, 4), np.int64))["y"].shape == (0, 4)
    one = rt(x=a[:1], i=np.array([[0, -1, 0, -1]], np.int64))["y"]  # an axis of size 1
    np.testing.assert_array_equal(one, a[:1])
    prog.close()


def test_take_along_axis_refuses_an_index_out_of_range_naming_it():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    with sp.Scope() as s:
        s.declare("m", 0)
        x = s.input("x", sp.F32, "n, m")
        idx = s.input("i", sp.I32, "n, k")
        prog = s.program([x, idx], {"y": x.take_along_axis(idx, 1)})
    rt = prog.runtime()
    for bad, pos in ((4, 5), (-5, 5), (2 ** 31 - 1, 5)):
        i = np.zeros((3, 2), np.int32)
        i.flat[pos] = bad
        with pytest.raises(sp.InvalidArgument, match=r"take_along_axis: index %d \(position %d of "
                           r"the indices\) is outside \[-4, 4\) on axis 1" % (bad, pos)):
            rt(x=a, i=i)
    i = np.array([[3, -4]] * 3, np.int32)  # the limits are valid
    np.testing.assert_array_equal(rt(x=a, i=i)["y"], a[:, [3, 0]])
    empty_axis = r"index 0 \(position 0 of the indices\) is outside \[0, 0\) on axis 1"
    with pytest.raises(sp.InvalidArgument, match=empty_axis):
        rt(x=np.zeros((3, 0), np.float32), i=np.zeros((3, 1), np.int32))
    prog.close()


def test_take_along_axis_refuses_bad_operands():
    with sp.Scope() as s:
        x = s.input("x", sp.F32, "n, 4")
        with pytest.raises(sp.ShapeMismatch, match="must have the rank of the operand"):
            x.take_along_axis(s.input("i", sp.I64, "n"), 0)
        with pytest.raises(sp.ShapeMismatch, match="differ on axis 1 .3 vs 4.; only axis 0 may"):
            x.take_along_axis(s.input("j", sp.I64, "k, 3"), 0)
        with pytest.raises(sp.Inconclusive):  # m == n is not provable
            x.take_along_axis(s.input("l", sp.I64, "m, 2"), 1)
        with pytest.raises(sp.DtypeMismatch, match="i32 or i64 indices"):
            x.take_along_axis(s.input("f", sp.F32, "n, 4"), 0)
        with pytest.raises(sp.InvalidArgument, match="axis"):
            x.take_along_axis(s.input("a", sp.I64, "n, 4"), 2)
        with pytest.raises(sp.InvalidArgument, match="rank >= 1"):
            s.input("r", sp.F32, "").take_along_axis(s.input("ri", sp.I64, ""), 0)


def test_take_along_axis_gradient_and_vmap_match_numpy():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 4))
    i = np.array([[0, 0, -1], [3, -4, 2], [1, 1, 1]], np.int64)
    with sp.Scope() as s:
        x = s.input("x", sp.F64, "n, 4")
        idx = s.input("i", sp.I64, "n, k")
        y = x.take_along_axis(idx, 1)
        prog = s.program([x, idx], {"loss": (y * y).sum([0, 1])})
    g = sp.Runtime(sp.loads(prog.grad("loss", ["x"]).serialize()))(x=a, i=i)["x.grad"]
    want = np.zeros_like(a)
    np.add.at(want, (np.arange(3)[:, None], i % 4), 2 * np.take_along_axis(a, i, 1))
    np.testing.assert_allclose(g, want, rtol=1e-12)
    with pytest.raises(sp.InvalidArgument):  # the gradient program refuses a bad index too
        sp.Runtime(prog.grad("loss", ["x"]))(x=a, i=np.full((3, 3), 4, np.int64))
    batched = prog.vmap({"x": 0})  # x batched, the indices shared
    xs = rng.standard_normal((5, 3, 4))
    got = sp.Runtime(batched)(x=xs, i=i)["loss"]
    want = [np.sum(np.take_along_axis(e, i, 1) ** 2) for e in xs]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    prog.close()
