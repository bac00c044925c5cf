"""Tensor.scatter (shp_tensor_scatter): scatter_add's layout with a reduction, against a numpy
reference that applies the index positions one at a time (the definition), for every numeric
dtype and reduction; repeated indices, sizes 0 and 1, a bad index or reduction, gradients and
vmap."""

import numpy as np
import pytest

import shapepoly as sp

R = sp.ScatterReduction
DTYPES = [(sp.F32, np.float32), (sp.F64, np.float64), (sp.I32, np.int32), (sp.I64, np.int64)]
COMBINE = {R.REPLACE: lambda d, u: u, R.ADD: np.add, R.MUL: np.multiply, R.MAX: np.maximum,
           R.MIN: np.minimum}


def reference(base, idx, upd, axis, red):
    """base with each index position j, in row-major order, combined along `axis`."""
    out = base.copy()
    axis %= base.ndim
    flat = idx.reshape(-1)
    u = upd.reshape(base.shape[:axis] + (flat.size,) + base.shape[axis + 1:])
    with np.errstate(over="ignore"):
        for j, i in enumerate(flat):
            at = (slice(None),) * axis + (int(i),)
            out[at] = COMBINE[red](out[at], u[(slice(None),) * axis + (j,)])
    return out


def _program(b_spec, i_spec, u_spec, dtype, itype, axis, red):
    with sp.Scope() as s:
        s.declare("n", 0)  # sizes 0 allowed
        s.declare("k", 0)
        b = s.input("b", dtype, b_spec)
        i = s.input("i", itype, i_spec)
        u = s.input("u", dtype, u_spec)
        return s.program([b, i, u], {"y": b.scatter(i, u, axis, red)})


@pytest.mark.parametrize("dtype, np_dtype", DTYPES)
@pytest.mark.parametrize("itype, np_itype", [(sp.I32, np.int32), (sp.I64, np.int64)])
@pytest.mark.parametrize("red", list(R))
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_scatter_matches_the_reference(dtype, np_dtype, itype, np_itype, red, axis):
    rng = np.random.default_rng(5 + int(red))
    base = (rng.standard_normal((3, 4)) * 4).astype(np_dtype)
    n = base.shape[axis]
    idx = rng.integers(0, n, size=(2, 5)).astype(np_itype)  # 10 positions: repeats
    ushape = (3, 2, 5) if axis % 2 else (2, 5, 4)
    upd = (rng.standard_normal(ushape) * 4).astype(np_dtype)
    spec = "k, 2, 5" if axis % 2 else "2, 5, m"
    prog = _program("k, m", "2, 5", spec, dtype, itype, axis, red)
    got = prog.runtime()(b=base, i=idx, u=upd)["y"]
    np.testing.assert_array_equal(got, reference(base, idx, upd, axis, red))
    assert got.dtype == np_dtype
    prog.close()


def test_replace_keeps_the_last_repeat_and_nan_wins_max_and_min():
    base = np.array([1.0, 2.0, 3.0], np.float32)
    idx = np.array([0, 2, 0, 0], np.int64)
    upd = np.array([10.0, 20.0, 30.0, 40.0], np.float32)
    prog = _program("3", "4", "4", sp.F32, sp.I64, 0, R.REPLACE)
    assert prog.runtime()(b=base, i=idx, u=upd)["y"].tolist() == [40.0, 2.0, 20.0]
    prog.close()
    upd = np.array([np.nan, 0.5, 7.0, 0.0], np.float32)
    for red, want in ((R.MAX, [np.nan, 2.0, 3.0]), (R.MIN, [np.nan, 2.0, 0.5])):
        prog = _program("3", "4", "4", sp.F32, sp.I64, 0, red)
        np.testing.assert_array_equal(prog.runtime()(b=base, i=idx, u=upd)["y"], want)
        prog.close()


def test_sizes_zero_and_one_and_integer_wrap():
    prog = _program("n, 2", "k", "k, 2", sp.I32, sp.I32, 0, R.MUL)
    rt = prog.runtime()
    base = np.array([[3, -2]], np.int32)
    empty = rt(b=base, i=np.zeros(0, np.int32), u=np.zeros((0, 2), np.int32))["y"]
    assert empty.tolist() == [[3, -2]]
    big = np.array([[2 ** 30, 2 ** 31 - 1]], np.int32)
    got = rt(b=base, i=np.array([0], np.int32), u=big)["y"]
    assert got.tolist() == [[np.int32(-1073741824), np.int32(2)]]  # wraps modulo 2^32
    assert rt(b=np.zeros((0, 2), np.int32), i=np.zeros(0, np.int32),
              u=np.zeros((0, 2), np.int32))["y"].shape == (0, 2)
    prog.close()


def test_an_index_out_of_range_fails_the_run_naming_it():
    prog = _program("n", "k", "k", sp.F64, sp.I64, 0, R.MAX)
    rt = prog.runtime()
    for bad in (3, -1):
        with pytest.raises(sp.InvalidArgument, match=r"scatter \(max\): index %d \(position 1 of "
                           r"the indices\) is outside \[0, 3\) on axis 0" % bad):
            rt(b=np.zeros(3), i=np.array([0, bad]), u=np.ones(2))
    assert rt(b=np.zeros(3), i=np.array([2, 0]), u=np.ones(2))["y"].tolist() == [1, 0, 1]
    prog.close()


def test_bad_operands_and_reductions_are_refused():
    with sp.Scope() as s:
        b = s.input("b", sp.F32, "n, 4")
        i = s.input("i", sp.I64, "3")
        with pytest.raises(sp.InvalidArgument, match=r"reduction 5 is not one of replace \(0\), "
                           r"add \(1\), mul \(2\), max \(3\), min \(4\)"):
            b.scatter(i, s.input("u", sp.F32, "3, 4"), 0, 5)
        with pytest.raises(sp.InvalidArgument, match="reduction -1"):
            b.scatter(i, s.input("u2", sp.F32, "3, 4"), 0, -1)
        with pytest.raises(sp.ShapeMismatch, match="shape of take"):
            b.scatter(i, s.input("u3", sp.F32, "3, 5"), 0, R.ADD)
        with pytest.raises(sp.DtypeMismatch):
            b.scatter(s.input("f", sp.F32, "3"), s.input("u4", sp.F32, "3, 4"), 0, R.MAX)
        with pytest.raises(sp.DtypeMismatch):
            s.input("bb", sp.BOOL, "4").scatter(i, s.input("ub", sp.BOOL, "3"), 0, R.MAX)
        with pytest.raises(sp.InvalidArgument, match="axis"):
            b.scatter(i, s.input("u5", sp.F32, "3, 4"), 2, R.MIN)


@pytest.mark.parametrize("red", [R.REPLACE, R.ADD, R.MAX, R.MIN])
def test_gradient_matches_finite_differences_and_vmap_the_reference(red):
    rng = np.random.default_rng(int(red))
    base = rng.standard_normal((3, 4))
    idx = np.array([1, 3, 1, 0, 1], np.int64)
    upd = rng.standard_normal((3, 5))
    with sp.Scope() as s:
        b = s.input("b", sp.F64, "n, 4")
        i = s.input("i", sp.I64, "k")
        u = s.input("u", sp.F64, "n, k")
        y = b.scatter(i, u, 1, red)
        prog = s.program([b, i, u], {"loss": (y * y).sum([0, 1])})
    g = sp.Runtime(sp.loads(prog.grad("loss", ["b", "u"]).serialize()))(b=base, i=idx, u=upd)

    def loss(bv, uv):
        return np.sum(reference(bv, idx, uv, 1, red) ** 2)

    for name, arr in (("b", base), ("u", upd)):
        fd = np.zeros_like(arr)
        for k in np.ndindex(arr.shape):
            e = np.zeros_like(arr)
            e[k] = 1e-6
            args = (base + e, upd) if name == "b" else (base, upd + e)
            args2 = (base - e, upd) if name == "b" else (base, upd - e)
            fd[k] = (loss(*args) - loss(*args2)) / 2e-6
        np.testing.assert_allclose(g[name + ".grad"], fd, rtol=1e-5, atol=1e-6)
    batched = prog.vmap({"b": 0, "u": 0})
    bs, us = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 5))
    got = sp.Runtime(batched)(b=bs, i=idx, u=us)["loss"]
    np.testing.assert_allclose(got, [loss(bs[e], us[e]) for e in range(2)], rtol=1e-12)
    prog.close()


def test_mul_gradient_is_refused():
    with sp.Scope() as s:
        b = s.input("b", sp.F64, "4")
        i = s.input("i", sp.I64, "2")
        u = s.input("u", sp.F64, "2")
        prog = s.program([b, i, u], {"loss": b.scatter(i, u, 0, R.MUL).sum([0])})
    with pytest.raises(sp.Error, match="the derivative of reduction mul is not supported"):
        prog.grad("loss", ["b"])
    prog.close()
