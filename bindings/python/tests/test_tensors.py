"""Every traced op of the C API (shp_tensor_*), traced through operators and methods and run
against numpy."""

import numpy as np
import pytest

import shapepoly as sp


def run1(build, **inputs):
    """Traces build(scope, *input tensors) with inputs of the given arrays' dtypes and
    symbolic shapes (an axis of size k is the variable s<k>, so equal sizes agree), runs it
    and returns the single output."""
    with sp.Scope() as s:
        ts = []
        for name, a in inputs.items():
            spec = ", ".join("s%d" % d if d != 1 else "1" for d in a.shape)
            ts.append(s.input(name, sp.as_dtype(a.dtype), spec))
        out = build(s, *ts)
        with s.program(ts, {"out": out}) as p, p.runtime(num_threads=1) as rt:
            return rt(**inputs)["out"]


F = np.array([[0.5, -1.5, 2.0], [3.0, -0.25, 1.0]], np.float32)
G = np.array([[1.0, 2.0, -3.0], [0.5, 4.0, 2.0]], np.float32)


@pytest.mark.parametrize("name,ref", [
    ("neg", np.negative), ("abs", np.abs), ("exp", np.exp), ("log", lambda a: np.log(np.abs(a))),
    ("log1p", lambda a: np.log1p(np.abs(a))), ("expm1", np.expm1),
    ("sqrt", lambda a: np.sqrt(np.abs(a))), ("rsqrt", lambda a: 1 / np.sqrt(np.abs(a))),
    ("sin", np.sin), ("cos", np.cos), ("tanh", np.tanh),
    ("logistic", lambda a: 1 / (1 + np.exp(-a))), ("floor", np.floor), ("ceil", np.ceil),
    ("round", np.round), ("sign", np.sign)])
def test_unary(name, ref):
    positive = name in ("log", "log1p", "sqrt", "rsqrt")
    out = run1(lambda s, x: getattr(x.abs() if positive else x, name)(), x=F)
    np.testing.assert_allclose(out, ref(F), rtol=1e-5, atol=1e-6)


# tan .. atanh, each on inputs inside its domain (U: (-1, 1), 1 + |F| for acosh).
U = np.array([[0.5, -0.75, 0.0], [0.9, -0.25, -0.99]], np.float32)


@pytest.mark.parametrize("name,ref,x", [
    ("tan", np.tan, F), ("sinh", np.sinh, F), ("cosh", np.cosh, F), ("asin", np.arcsin, U),
    ("acos", np.arccos, U), ("atan", np.arctan, F), ("asinh", np.arcsinh, F),
    ("acosh", np.arccosh, 1 + np.abs(F)), ("atanh", np.arctanh, U)])
def test_trig_and_hyperbolic(name, ref, x):
    out = run1(lambda s, t: getattr(t, name)(), t=x)
    np.testing.assert_allclose(out, ref(x), rtol=1e-5, atol=1e-6)


def test_unary_operators_and_not():
    np.testing.assert_array_equal(run1(lambda s, x: -abs(x), x=F), -np.abs(F))
    b = np.array([True, False, True])
    np.testing.assert_array_equal(run1(lambda s, x: ~x, x=b), ~b)
    i = np.array([1, 2, -3], np.int32)
    np.testing.assert_array_equal(run1(lambda s, x: x.logical_not(), x=i), ~i)


@pytest.mark.parametrize("op,ref", [
    (lambda x, y: x + y, np.add), (lambda x, y: x - y, np.subtract),
    (lambda x, y: x * y, np.multiply), (lambda x, y: x / y, np.divide),
    (lambda x, y: abs(x) ** y, lambda a, b: np.abs(a) ** b),
    (lambda x, y: x.maximum(y), np.maximum), (lambda x, y: x.minimum(y), np.minimum),
    (lambda x, y: x.rem(y), np.fmod), (lambda x, y: x.add(y), np.add),
    (lambda x, y: x.sub(y), np.subtract), (lambda x, y: x.mul(y), np.multiply),
    (lambda x, y: x.div(y), np.divide), (lambda x, y: x.abs().pow(y), lambda a, b: np.abs(a) ** b)])
def test_binary(op, ref):
    np.testing.assert_allclose(run1(lambda s, x, y: op(x, y), x=F, y=G), ref(F, G), rtol=1e-5)


def test_logical_and_scalars():
    a = np.array([True, False, True, False])
    b = np.array([True, True, False, False])
    np.testing.assert_array_equal(run1(lambda s, x, y: x & y, x=a, y=b), a & b)
    np.testing.assert_array_equal(run1(lambda s, x, y: x | y, x=a, y=b), a | b)
    np.testing.assert_array_equal(run1(lambda s, x, y: x ^ y, x=a, y=b), a ^ b)
    np.testing.assert_allclose(run1(lambda s, x: 2 * x + 1 - x / 4, x=F), 2 * F + 1 - F / 4)
    np.testing.assert_allclose(run1(lambda s, x: 1 / x - 2 ** x, x=F), 1 / F - 2 ** F,
                               rtol=1e-6)


@pytest.mark.parametrize("op,ref", [("<", np.less), ("<=", np.less_equal),
                                    (">", np.greater), (">=", np.greater_equal),
                                    ("==", np.equal), ("!=", np.not_equal)])
def test_compare_and_select(op, ref):
    H = np.array([[0.5, 0.0, 2.0], [1.0, -0.25, 3.0]], np.float32)
    ops = {"<": lambda x, y: x < y, "<=": lambda x, y: x <= y, ">": lambda x, y: x > y,
           ">=": lambda x, y: x >= y, "==": lambda x, y: x == y, "!=": lambda x, y: x != y}
    np.testing.assert_array_equal(run1(lambda s, x, y: ops[op](x, y), x=F, y=H), ref(F, H))
    np.testing.assert_array_equal(run1(lambda s, x, y: x.compare(op, y), x=F, y=H), ref(F, H))
    np.testing.assert_array_equal(
        run1(lambda s, x, y: sp.where(ops[op](x, y), x, y), x=F, y=H), np.where(ref(F, H), F, H))


def test_where_with_a_scalar_branch():
    # The scalar takes the tensor branch's dtype (it took the predicate's, bool, and failed).
    np.testing.assert_array_equal(run1(lambda s, x: sp.where(x > 0, x, 0.0), x=F),
                                  np.where(F > 0, F, np.float32(0)))
    np.testing.assert_array_equal(run1(lambda s, x: sp.where(x > 0, -1, x), x=F),
                                  np.where(F > 0, np.float32(-1), F))
    out = run1(lambda s, x: (x > 0).select(2.5, 0.5), x=F)
    np.testing.assert_array_equal(out, np.where(F > 0, 2.5, 0.5))


def test_convert_broadcast_reshape_transpose():
    np.testing.assert_array_equal(run1(lambda s, x: x.astype(sp.I32), x=F), F.astype(np.int32))
    np.testing.assert_array_equal(run1(lambda s, x: x.convert("f64"), x=F), F.astype(np.float64))
    v = np.array([1.0, 2.0, 3.0], np.float32)
    out = run1(lambda s, x: x.broadcast_to(4, x.shape[0]), x=v)
    np.testing.assert_array_equal(out, np.broadcast_to(v, (4, 3)))
    np.testing.assert_array_equal(run1(lambda s, x: x.reshape(-1), x=F), F.reshape(-1))
    np.testing.assert_array_equal(run1(lambda s, x: x.reshape(x.shape[1], None), x=F),
                                  F.reshape(3, 2))
    np.testing.assert_array_equal(run1(lambda s, x: x.transpose(1, 0), x=F), F.T)
    np.testing.assert_array_equal(run1(lambda s, x: x.T, x=F), F.T)


def test_concatenate_slice_pad_reverse():
    np.testing.assert_array_equal(run1(lambda s, x, y: sp.concatenate([x, y], axis=1), x=F, y=G),
                                  np.concatenate([F, G], 1))
    np.testing.assert_array_equal(
        run1(lambda s, x: x.slice([0, 1], [None, x.shape[1]], [1, 2]), x=F), F[:, 1::2])
    np.testing.assert_array_equal(run1(lambda s, x: x.slice(), x=F), F)
    np.testing.assert_array_equal(run1(lambda s, x: x.pad([1, 0], [0, 2], 9.0), x=F),
                                  np.pad(F, ((1, 0), (0, 2)), constant_values=9))
    np.testing.assert_array_equal(run1(lambda s, x: x.reverse(1), x=F), F[:, ::-1])
    np.testing.assert_array_equal(run1(lambda s, x: x.reverse(), x=F), F)


@pytest.mark.parametrize("name,ref", [("sum", np.sum), ("mean", np.mean), ("max", np.max),
                                      ("min", np.min), ("prod", np.prod)])
def test_reductions(name, ref):
    np.testing.assert_allclose(run1(lambda s, x: getattr(x, name)(1), x=F), ref(F, axis=1),
                               rtol=1e-6)
    np.testing.assert_allclose(run1(lambda s, x: getattr(x, name)([0], keepdims=True), x=F),
                               ref(F, axis=0, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(run1(lambda s, x: getattr(x, name)(), x=F), ref(F), rtol=1e-6)


def test_matmul_dot_general():
    W = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_allclose(run1(lambda s, x, w: x @ w, x=F, w=W), F @ W, rtol=1e-6)

    def with_constant(s, x):
        s.check(x.shape[1], "==", 3, "x has 3 columns")
        return x @ s.constant(W), W.T @ x.T

    np.testing.assert_allclose(run1(lambda s, x: with_constant(s, x)[0], x=F), F @ W, rtol=1e-6)
    np.testing.assert_allclose(run1(lambda s, x: with_constant(s, x)[1], x=F), W.T @ F.T,
                               rtol=1e-6)
    np.testing.assert_allclose(run1(lambda s, x, w: x.dot_general(w, [], [], [1], [0]), x=F, w=W),
                               F @ W, rtol=1e-6)


def test_softmax_layer_norm_cumsum():
    e = np.exp(F - F.max(1, keepdims=True))
    np.testing.assert_allclose(run1(lambda s, x: x.softmax(1), x=F), e / e.sum(1, keepdims=True),
                               rtol=1e-6)
    m, v = F.mean(1, keepdims=True), F.var(1, keepdims=True)
    np.testing.assert_allclose(run1(lambda s, x: x.layer_norm(1, 1e-5), x=F),
                               (F - m) / np.sqrt(v + 1e-5), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(run1(lambda s, x: x.cumsum(1), x=F), np.cumsum(F, 1), rtol=1e-6)


def test_take_scatter_add():
    idx = np.array([2, 0, 2], np.int64)
    np.testing.assert_array_equal(run1(lambda s, x, i: x.take(i, 1), x=F, i=idx),
                                  np.take(F, idx, 1))
    upd = np.ones((2, 3), np.float32)
    ref = F.copy()
    np.add.at(ref, (slice(None), idx), upd)
    np.testing.assert_array_equal(
        run1(lambda s, x, i, u: x.scatter_add(i, u, 1), x=F, i=idx, u=upd), ref)


def test_sources_iota_dim_value_constant_parameter():
    with sp.Scope() as s:
        x = s.input("x", sp.F32, "n, 3")
        n = x.shape[0]
        io = s.iota(sp.I64, [n, 3], 0)
        dv = s.dim_value(2 * n)
        length = s.dim_input("m")
        io2 = s.iota(sp.I32, [s.var("m")], 0)
        w = s.parameter("w", np.full(3, 2.0, np.float32))
        c = s.constant([1, 2, 3], sp.F32)
        p = s.program([x, length, w], {"io": io, "dv": dv, "io2": io2, "y": x * w + c,
                                        "len": length})
    with p:
        assert [i.role for i in p.inputs] == [sp.InputRole.DATA, sp.InputRole.DIM,
                                              sp.InputRole.PARAMETER]
        rt = p.runtime()
        out = rt(x=np.ones((2, 3), np.float32), m=4)
        np.testing.assert_array_equal(out["io"], np.arange(2)[:, None].repeat(3, 1))
        assert out["dv"] == 4 and out["dv"].shape == () and out["len"] == 4
        np.testing.assert_array_equal(out["io2"], np.arange(4, dtype=np.int32))
        np.testing.assert_array_equal(out["y"], np.ones((2, 3)) * 2 + [1, 2, 3])
        out = rt(x=np.ones((2, 3), np.float32), m=np.int64(6), w=np.zeros(3, np.float32))
        assert out["io2"].shape == (6,)
        np.testing.assert_array_equal(out["y"], np.tile([1, 2, 3], (2, 1)))


def test_tensor_attributes():
    with sp.Scope() as s:
        x = s.input("x", "f32", "b, 2*b")
        assert x.dtype is sp.F32 and x.ndim == 2
        assert [str(d) for d in x.shape] == ["b", "2*b"]
        assert repr(x) == "Tensor(f32, (b, 2*b))"
        y = s.input("y", sp.F32, [x.shape[0], 3])
        assert str(y.shape[1]) == "3"
        with pytest.raises(TypeError):
            bool(x)
        with pytest.raises(TypeError):
            sp.as_dtype(np.complex64)
        assert sp.as_dtype(np.float16) is sp.F16 and sp.as_dtype("bf16") is sp.BF16
        assert sp.as_dtype(np.uint8) is sp.U8 and sp.as_dtype("u64") is sp.U64
        assert sp.as_dtype(np.dtype(">f8")) is sp.F64
        assert sp.F32.numpy == np.float32 and sp.I64.itemsize == 8


def test_top_k_values_indices_and_gradient():
    """top_k: both orders, ties by the lower index, NaN the greatest; a k asserted <= the axis
    at run time; the values' gradient lands at the selected positions."""
    x = np.array([[1, np.nan, 3, 3, -np.inf, 0], [5, 4, 3, 2, 1, 0]], np.float32)
    with sp.Scope() as s:
        t = s.input("x", sp.F32, "n, 6")
        v, i = t.top_k(3)
        w, j = t.top_k("n", axis=0, largest=False)
        u = s.input("u", sp.F32, "m")
        big, _ = u.top_k("n", largest=False)  # n <= m: a run-time assertion
        p = s.program([t, u], {"v": v, "i": i, "w": w, "j": j, "big": big})
    with p, p.runtime() as rt:
        got = rt(x=x, u=np.arange(4, dtype=np.float32))
        np.testing.assert_array_equal(got["i"], [[1, 2, 3], [0, 1, 2]])
        np.testing.assert_array_equal(got["v"], [[np.nan, 3, 3], [5, 4, 3]])
        np.testing.assert_array_equal(got["j"], [[0, 1, 0, 1, 0, 0], [1, 0, 1, 0, 1, 1]])
        np.testing.assert_array_equal(got["big"], [0, 1])
        with pytest.raises(sp.ConstraintViolation):
            rt(x=x, u=np.arange(1, dtype=np.float32))
    with sp.Scope() as s:
        t = s.input("x", sp.F64, "n, 4")
        v, _ = t.top_k(2)
        p = s.program([t], {"loss": (v * v).sum()})
    with p, p.grad("loss", ["x"]) as g, g.runtime() as rt:
        y = np.array([[1.0, 4.0, 2.0, 3.0]])
        grads = rt(x=y)
        np.testing.assert_array_equal(grads["x.grad"], [[0, 8, 0, 6]])
