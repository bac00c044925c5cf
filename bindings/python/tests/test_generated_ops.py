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
