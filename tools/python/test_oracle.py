"""The C++ runtime agrees with the numpy oracle (oracle.py) on random programs.

Random chains of operations over a symbolic batch `n` are traced through the C API (ctypes,
library from SHAPEPOLY_LIB), serialized, loaded back by both the C++ runtime and the numpy
interpreter, and run at several concrete batches; every output must agree within float
tolerance (exactly for integers).
"""

import ctypes
import os
import random

import numpy as np
import pytest

import oracle

ROOT = oracle.reader.ROOT
LIB_PATH = os.environ.get("SHAPEPOLY_LIB", os.path.join(ROOT, "build", "lib", "libshapepoly.so"))
vp, sz, i64 = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int64
DTYPES = {np.dtype(np.float32): 0, np.dtype(np.float64): 1, np.dtype(np.int32): 2,
          np.dtype(np.int64): 3, np.dtype(np.bool_): 4}


class Api:
    """Just enough of the C API, with errors turned into exceptions."""

    def __init__(self):
        L = ctypes.CDLL(LIB_PATH)
        for name in dir(L):
            pass
        L.shp_error_message.restype = ctypes.c_char_p
        L.shp_error_message.argtypes = [vp]
        L.shp_error_destroy.argtypes = [vp]
        L.shp_buffer_data.restype = vp
        L.shp_buffer_data.argtypes = [vp]
        L.shp_buffer_size.restype = sz
        L.shp_buffer_size.argtypes = [vp]
        L.shp_array_data.restype = vp
        L.shp_array_data.argtypes = [vp]
        L.shp_array_rank.restype = sz
        L.shp_array_rank.argtypes = [vp]
        L.shp_array_shape.restype = ctypes.POINTER(i64)
        L.shp_array_shape.argtypes = [vp]
        L.shp_array_dtype.restype = ctypes.c_int
        L.shp_array_dtype.argtypes = [vp]
        L.shp_array_nbytes.restype = sz
        L.shp_array_nbytes.argtypes = [vp]
        for f in ("shp_array_destroy", "shp_runtime_destroy", "shp_program_destroy", "shp_scope_destroy",
                  "shp_buffer_destroy"):
            getattr(L, f).argtypes = [vp]
        self.L = L

    def __call__(self, fname, *args):
        f = getattr(self.L, fname)
        f.restype = vp
        err = f(*args)
        if err:
            msg = self.L.shp_error_message(err).decode()
            self.L.shp_error_destroy(err)
            raise RuntimeError(f"{fname}: {msg}")


@pytest.fixture(scope="module")
def api():
    return Api()


class Tracer:
    """Traces through the C API, keeping (tensor handle, concrete-shape function) pairs."""

    def __init__(self, api, constraints=()):
        self.api = api
        self.scope = vp()
        arr = (ctypes.c_char_p * max(1, len(constraints)))(*[c.encode() for c in constraints])
        api("shp_scope_create", arr, sz(len(constraints)), ctypes.byref(self.scope))
        self.keep = []

    def out(self):
        return vp()

    def dim(self, value):
        d = vp()
        self.api("shp_dim_constant", self.scope, i64(value), ctypes.byref(d))
        return d

    def dims(self, values):
        arr = (vp * max(1, len(values)))(*[self.dim(v) for v in values])
        self.keep.append(arr)
        return arr

    def input(self, name, dtype, spec):
        t = vp()
        self.api("shp_tensor_input", self.scope, name.encode(), ctypes.c_int(dtype), spec.encode(), ctypes.byref(t))
        return t

    def constant(self, array):
        t = vp()
        array = np.ascontiguousarray(array)
        self.keep.append(array)
        shape = (i64 * max(1, array.ndim))(*array.shape)
        self.api("shp_tensor_constant", self.scope, ctypes.c_int(DTYPES[array.dtype]), shape, sz(array.ndim),
                 array.ctypes.data_as(vp), sz(array.nbytes), ctypes.byref(t))
        return t

    def op(self, fname, *args):
        t = vp()
        self.api(fname, *args, ctypes.byref(t))
        return t

    def program(self, inputs, outputs):
        ins = (vp * len(inputs))(*inputs)
        outs = (vp * len(outputs))(*outputs)
        names = (ctypes.c_char_p * len(outputs))(*[f"out{i}".encode() for i in range(len(outputs))])
        p = vp()
        self.api("shp_program_create", self.scope, ins, sz(len(inputs)), outs, names, sz(len(outputs)),
                 ctypes.byref(p))
        buf = vp()
        self.api("shp_program_serialize", p, ctypes.byref(buf))
        data = ctypes.string_at(self.api.L.shp_buffer_data(buf), self.api.L.shp_buffer_size(buf))
        self.api.L.shp_buffer_destroy(buf)
        self.api.L.shp_program_destroy(p)
        self.api.L.shp_scope_destroy(self.scope)
        return data


def run_cpp(api, data, inputs, capacity=16):
    """Loads the serialized program, runs it on `inputs` (declared order) and returns numpy outputs."""
    p, rt, opts = vp(), vp(), vp()
    api("shp_program_load", data, sz(len(data)), ctypes.byref(p))
    api("shp_runtime_options_create", ctypes.byref(opts))
    api("shp_runtime_options_set_plan_cache_capacity", opts, sz(capacity))
    api("shp_runtime_create", p, opts, ctypes.byref(rt))
    api.L.shp_runtime_options_destroy.argtypes = [vp]
    api.L.shp_runtime_options_destroy(opts)
    api.L.shp_program_destroy(p)
    try:
        return [_run(api, rt, inp) for inp in inputs]
    finally:
        api.L.shp_runtime_destroy(rt)


def _run(api, rt, arrays):
    handles = []
    arrays = [np.ascontiguousarray(a) for a in arrays]
    for a in arrays:
        h = vp()
        shape = (i64 * max(1, a.ndim))(*a.shape)
        api("shp_array_wrap", ctypes.c_int(DTYPES[a.dtype]), shape, sz(a.ndim), a.ctypes.data_as(vp),
            sz(a.nbytes), ctypes.byref(h))
        handles.append(h)
    n_out = 8
    outs = (vp * n_out)()
    count = ctypes.c_size_t(0)
    ins = (vp * len(handles))(*handles)
    # The number of outputs is what the program declares; try counts until it matches.
    err_last = None
    for k in range(1, n_out + 1):
        try:
            api("shp_runtime_run", rt, None, ins, sz(len(handles)), outs, sz(k))
            count.value = k
            break
        except RuntimeError as e:
            err_last = e
            if "num_outputs" not in str(e):
                raise
    else:
        raise err_last
    result = []
    npd = [np.float32, np.float64, np.int32, np.int64, np.bool_]
    for j in range(count.value):
        o = outs[j]
        rank = api.L.shp_array_rank(o)
        shape = [api.L.shp_array_shape(o)[i] for i in range(rank)]
        dt = npd[api.L.shp_array_dtype(o)]
        nbytes = api.L.shp_array_nbytes(o)
        buf = ctypes.string_at(api.L.shp_array_data(o), nbytes) if nbytes else b""
        result.append(np.frombuffer(buf, dtype=dt).reshape(shape).copy())
        api.L.shp_array_destroy(o)
    for h in handles:
        api.L.shp_array_destroy(h)
    return result


# ---- Random float chains ------------------------------------------------------------------------

UNARY_F = {"tanh": 10, "sin": 8, "cos": 9, "abs": 1, "neg": 0, "logistic": 11}
BINARY = {"add": 0, "sub": 1, "mul": 2, "max": 5, "min": 6}


def random_chain(api, seed, dtype):
    """A random program over x: (n, 3); returns (serialized bytes, description)."""
    rng = random.Random(seed)
    nprng = np.random.default_rng(seed)
    code = DTYPES[np.dtype(dtype)]
    t = Tracer(api)
    x = t.input("x", code, "n, 3")
    cur, cols, prev = x, 3, None
    steps = []
    for _ in range(rng.randint(4, 10)):
        kind = rng.choice(["unary", "binary_const", "binary_prev", "softmax", "layer_norm", "cumsum",
                           "reduce", "matmul", "concat", "slice", "pad", "transpose", "convert"])
        before = cur
        if kind == "unary":
            name = rng.choice(list(UNARY_F))
            cur = t.op("shp_tensor_unary", ctypes.c_int(UNARY_F[name]), cur)
        elif kind == "binary_const":
            name = rng.choice(list(BINARY))
            c = nprng.uniform(-1, 1, size=(cols,) if rng.random() < 0.7 else ()).astype(dtype)
            cur = t.op("shp_tensor_binary", ctypes.c_int(BINARY[name]), cur, t.constant(c))
        elif kind == "binary_prev" and prev is not None:
            name = rng.choice(["add", "mul", "max"])
            cur = t.op("shp_tensor_binary", ctypes.c_int(BINARY[name]), cur, prev)
        elif kind == "softmax":
            cur = t.op("shp_tensor_softmax", cur, i64(rng.choice([-1, 0])))
        elif kind == "layer_norm" and cols > 1:
            cur = t.op("shp_tensor_layer_norm", cur, i64(rng.choice([-1, 0])), ctypes.c_double(1e-3))
        elif kind == "cumsum":
            cur = t.op("shp_tensor_cumsum", cur, i64(rng.choice([0, 1])))
        elif kind == "reduce":
            op = rng.choice([0, 1, 2, 3])  # sum, mean, max, min
            axes = (i64 * 1)(1)
            cur = t.op("shp_tensor_reduce", ctypes.c_int(op), cur, axes, sz(1), ctypes.c_bool(True))
            cols = 1
        elif kind == "matmul":
            out_cols = rng.randint(1, 6)
            w = nprng.uniform(-1, 1, size=(cols, out_cols)).astype(dtype)
            cur = t.op("shp_tensor_matmul", cur, t.constant(w))
            cols = out_cols
        elif kind == "concat" and cols <= 8:
            axis = rng.choice([0, 1])
            xs = (vp * 2)(cur, cur)
            cur = t.op("shp_tensor_concatenate", xs, sz(2), i64(axis))
            cols = cols * 2 if axis == 1 else cols
        elif kind == "slice" and cols > 1:
            start = t.dims([0, 1])
            strides = (i64 * 2)(rng.choice([1, 2]), 1)
            cur = t.op("shp_tensor_slice", cur, start, None, strides, sz(2))
            cols -= 1
        elif kind == "pad":
            low, high = t.dims([1, 0]), t.dims([0, 2])
            cur = t.op("shp_tensor_pad", cur, low, high, sz(2), ctypes.c_double(0.5))
            cols += 2
        elif kind == "transpose":
            perm = (i64 * 2)(1, 0)
            tr = t.op("shp_tensor_transpose", cur, perm, sz(2))
            tr = t.op("shp_tensor_unary", ctypes.c_int(UNARY_F["tanh"]), tr)
            cur = t.op("shp_tensor_transpose", tr, perm, sz(2))
        elif kind == "convert":
            other = 1 if code == 0 else 0
            cur = t.op("shp_tensor_convert", t.op("shp_tensor_convert", cur, ctypes.c_int(other)), ctypes.c_int(code))
        else:
            continue
        steps.append(kind)
        # `prev` (same shape as `cur`, used again later) survives shape-preserving steps only.
        same_shape = kind in ("unary", "binary_const", "binary_prev", "softmax", "layer_norm", "cumsum",
                              "transpose", "convert")
        prev = (before if prev is None else prev) if same_shape else None
    return t.program([x], [cur]), steps


@pytest.mark.parametrize("seed", range(24))
def test_random_float_chains_agree(api, seed):
    dtype = np.float32 if seed % 3 else np.float64
    data, steps = random_chain(api, seed, dtype)
    prog = oracle.Program(data)
    rng = np.random.default_rng(1000 + seed)
    batches = [1, 4, 9, 4, 1]
    inputs = [[rng.uniform(-2, 2, size=(b, 3)).astype(dtype)] for b in batches]
    got = run_cpp(api, data, inputs, capacity=1 + seed % 2)
    tol = dict(rtol=2e-4, atol=2e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    for inp, out in zip(inputs, got):
        want = prog.run({"x": inp[0]})
        assert len(out) == len(want)
        for o, w in zip(out, want):
            assert o.shape == w.shape, steps
            assert o.dtype == w.dtype, steps
            np.testing.assert_allclose(o, w, err_msg=str(steps), **tol)


def test_integer_and_bool_program_agrees_exactly(api):
    t = Tracer(api)
    a = t.input("a", 2, "n, 4")
    b = t.input("b", 2, "4")
    q = t.op("shp_tensor_binary", ctypes.c_int(3), a, b)       # div (truncating)
    r = t.op("shp_tensor_binary", ctypes.c_int(7), a, b)       # rem (sign of dividend)
    m = t.op("shp_tensor_binary", ctypes.c_int(5), q, r)       # max
    cs = t.op("shp_tensor_cumsum", m, i64(0))
    axes = (i64 * 1)(0)
    s = t.op("shp_tensor_reduce", ctypes.c_int(0), cs, axes, sz(1), ctypes.c_bool(False))
    gt = t.op("shp_tensor_compare", a, ctypes.c_int(4), b)     # a > b
    x = t.op("shp_tensor_binary", ctypes.c_int(10), gt, t.op("shp_tensor_compare", r, ctypes.c_int(0), t.constant(np.array(0, np.int32))))
    sel = t.op("shp_tensor_select", x, a, t.op("shp_tensor_unary", ctypes.c_int(0), a))
    wide = t.op("shp_tensor_convert", sel, ctypes.c_int(3))
    mm = t.op("shp_tensor_matmul", wide, t.constant(np.arange(8, dtype=np.int64).reshape(4, 2) - 3))
    idx = t.constant(np.array([3, 0, 3], dtype=np.int64))
    tk = t.op("shp_tensor_take", a, idx, i64(1))
    data = t.program([a, b], [s, mm, tk, x])
    prog = oracle.Program(data)
    rng = np.random.default_rng(7)
    inputs = []
    for n in (1, 5, 2):
        av = rng.integers(-50, 50, size=(n, 4)).astype(np.int32)
        bv = np.array([3, -4, 7, -1], dtype=np.int32)
        inputs.append([av, bv])
    got = run_cpp(api, data, inputs)
    for inp, out in zip(inputs, got):
        want = prog.run({"a": inp[0], "b": inp[1]})
        for o, w in zip(out, want):
            assert o.dtype == w.dtype
            np.testing.assert_array_equal(o, w)
