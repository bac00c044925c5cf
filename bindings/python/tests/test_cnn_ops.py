"""The CNN ops of the binding (issue 16): conv, conv_transpose, pooling, the activations,
batch_norm, lrn, pad modes, depth_to_space / space_to_depth. Each is traced with symbolic
dims, run at concrete sizes and compared with a numpy reference; bad arguments raise the
binding's exceptions."""

import math

import numpy as np
import pytest

import shapepoly as sp

RNG = np.random.default_rng(7)


def randn(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def trace(spec, fn):
    """A runtime of fn(x) for an f32 input x of shape spec."""
    scope = sp.Scope()
    x = scope.input("x", sp.F32, spec)
    y = fn(scope, x)
    program = scope.program([x], {"y": y})
    shape = [str(d) for d in y.shape]
    scope.close()
    return program, program.runtime(num_threads=2), shape


def run(spec, fn, x):
    program, rt, shape = trace(spec, fn)
    with program, rt:
        return rt(x=x)["y"], shape


# ---- numpy references ---------------------------------------------------------------------

def np_conv(x, w, b=None, strides=None, dil=None, pads=None, groups=1):
    n, c, *sp_ = x.shape
    nd, o, k = len(sp_), w.shape[0], w.shape[2:]
    strides, dil = strides or [1] * nd, dil or [1] * nd
    pads = pads or [0] * 2 * nd
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + [(pads[i], pads[i + nd])
                                                          for i in range(nd)])
    out = [(sp_[i] + pads[i] + pads[i + nd] - dil[i] * (k[i] - 1) - 1) // strides[i] + 1
           for i in range(nd)]
    y = np.zeros((n, o, *out))
    cg, og = c // groups, o // groups
    for g in range(groups):
        for kk in np.ndindex(*k):
            sl = tuple(slice(kk[i] * dil[i], kk[i] * dil[i] + strides[i] * (out[i] - 1) + 1,
                             strides[i]) for i in range(nd))
            patch = xp[(slice(None), slice(g * cg, (g + 1) * cg)) + sl]
            wk = w[(slice(g * og, (g + 1) * og), slice(None)) + kk]
            y[:, g * og:(g + 1) * og] += np.einsum("nc...,oc->no...", patch, wk)
    if b is not None:
        y += b.reshape((1, o) + (1,) * nd)
    return y


def np_conv_transpose(x, w, b=None, strides=None, dil=None, pads=None, opad=None, groups=1):
    n, c, *sp_ = x.shape
    nd, og, k = len(sp_), w.shape[1], w.shape[2:]
    strides, dil = strides or [1] * nd, dil or [1] * nd
    pads, opad = pads or [0] * 2 * nd, opad or [0] * nd
    full = [(sp_[i] - 1) * strides[i] + dil[i] * (k[i] - 1) + 1 + opad[i] for i in range(nd)]
    y = np.zeros((n, og * groups, *full))
    cg = c // groups
    for g in range(groups):
        for kk in np.ndindex(*k):
            sl = tuple(slice(kk[i] * dil[i], kk[i] * dil[i] + strides[i] * (sp_[i] - 1) + 1,
                             strides[i]) for i in range(nd))
            wk = w[(slice(g * cg, (g + 1) * cg), slice(None)) + kk]
            y[(slice(None), slice(g * og, (g + 1) * og)) + sl] += np.einsum(
                "nc...,co->no...", x[:, g * cg:(g + 1) * cg].astype(np.float64), wk)
    y = y[(slice(None), slice(None)) + tuple(slice(pads[i], full[i] - pads[i + nd])
                                             for i in range(nd))]
    if b is not None:
        y += b.reshape((1, -1) + (1,) * nd)
    return y


def np_pool(x, k, strides, pads, op, count_include_pad=False):
    """2-D max or average pooling with explicit pads (no ceil mode)."""
    n, c, h, w = x.shape
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])],
                constant_values=-np.inf if op == "max" else 0.0)
    ones = np.pad(np.ones((h, w)), [(pads[0], pads[2]), (pads[1], pads[3])])
    oh = (h + pads[0] + pads[2] - k[0]) // strides[0] + 1
    ow = (w + pads[1] + pads[3] - k[1]) // strides[1] + 1
    y = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            win = xp[:, :, i * strides[0]:i * strides[0] + k[0],
                     j * strides[1]:j * strides[1] + k[1]]
            if op == "max":
                y[:, :, i, j] = win.max(axis=(2, 3))
            else:
                cnt = k[0] * k[1] if count_include_pad else ones[
                    i * strides[0]:i * strides[0] + k[0], j * strides[1]:j * strides[1] + k[1]
                ].sum()
                y[:, :, i, j] = win.sum(axis=(2, 3)) / cnt
    return y


def close(got, want, tol=1e-4):
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


# ---- convolutions ---------------------------------------------------------------------------

def test_conv_symbolic_sizes_and_values():
    w = randn(4, 3, 3, 3)
    b = randn(4)
    fn = lambda s, x: x.conv(s.constant(w), s.constant(b), strides=[2, 2],  # noqa: E731
                             pads=[1, 1, 1, 1])
    program, rt, shape = trace("n, 3, h, w", fn)
    with program, rt:
        assert shape[:2] == ["n", "4"] and "h" in shape[2] and "w" in shape[3], shape
        for h, wd in ((9, 10), (16, 7)):
            x = randn(2, 3, h, wd)
            close(rt(x=x)["y"], np_conv(x, w, b, [2, 2], None, [1, 1, 1, 1]))
        assert rt.plans_built == 2


def test_conv_groups_dilations_and_same_padding():
    x = randn(1, 4, 11, 9)
    w = randn(8, 2, 3, 3)  # groups 2
    y, _ = run("1, 4, h, w", lambda s, t: t.conv(s.constant(w), groups=2, dilations=[2, 1]),
               x)
    close(y, np_conv(x, w, dil=[2, 1], groups=2))
    wd = randn(8, 1, 3, 3)  # depthwise, multiplier 2
    y, shape = run("1, 4, h, w", lambda s, t: t.conv(s.constant(wd), groups=4,
                                                     auto_pad="SAME_UPPER", strides=[2, 2]), x)
    assert y.shape == (1, 8, 6, 5)  # ceil(11 / 2), ceil(9 / 2)
    # SAME_UPPER: total pad = (out - 1) * stride + k - in, the odd one at the end.
    close(y, np_conv(x, wd, strides=[2, 2], pads=[1, 1, 1, 1], groups=4))


def test_conv_1d_and_3d():
    x1, w1 = randn(2, 3, 10), randn(5, 3, 4)
    close(run("b, 3, l", lambda s, t: t.conv(s.constant(w1), pads=[1, 2]), x1)[0],
          np_conv(x1, w1, pads=[1, 2]))
    x3, w3 = randn(1, 2, 5, 6, 4), randn(3, 2, 2, 3, 2)
    close(run("b, 2, d, h, w", lambda s, t: t.conv(s.constant(w3), strides=[1, 2, 1]), x3)[0],
          np_conv(x3, w3, strides=[1, 2, 1]))


def test_conv_transpose():
    x, w, b = randn(2, 4, 5, 6), randn(4, 3, 3, 2), randn(6)
    fn = lambda s, t: t.conv_transpose(s.constant(w), s.constant(b), strides=[2, 3],  # noqa
                                       pads=[1, 0, 0, 1], output_padding=[1, 0], groups=2)
    y, shape = run("n, 4, h, w", fn, x)
    close(y, np_conv_transpose(x, w, b, [2, 3], None, [1, 0, 0, 1], [1, 0], groups=2))
    assert shape[1] == "6"


def test_conv_errors():
    with sp.Scope() as s:
        x = s.input("x", sp.F32, "n, 3, h, w")
        with pytest.raises(sp.Error, match="3|channel"):
            x.conv(s.constant(randn(4, 2, 3, 3)))  # 2 input channels per group, x has 3
        with pytest.raises(ValueError, match="strides needs 2 entries"):
            x.conv(s.constant(randn(4, 3, 3, 3)), strides=[1])
        with pytest.raises(ValueError, match="auto_pad"):
            x.conv(s.constant(randn(4, 3, 3, 3)), auto_pad="SAME")
        with pytest.raises(ValueError, match="rank >= 3"):
            s.input("v", sp.F32, "n, 3").conv(s.constant(randn(4, 3, 3)))
    # A size too small for the kernel: a clear error at run time, not a crash.
    program, rt, _ = trace("1, 1, h, w", lambda s, t: t.conv(s.constant(randn(1, 1, 5, 5))))
    with program, rt:
        with pytest.raises(sp.Error) as e:
            rt(x=randn(1, 1, 3, 8))
        assert isinstance(e.value, (sp.ConstraintViolation, sp.ShapeMismatch)), e.value


# ---- pooling --------------------------------------------------------------------------------

def test_max_and_avg_pool():
    x = randn(2, 3, 9, 8)
    y, shape = run("n, c, h, w", lambda s, t: t.max_pool([3, 2], strides=[2, 2],
                                                         pads=[1, 0, 1, 1]), x)
    close(y, np_pool(x, [3, 2], [2, 2], [1, 0, 1, 1], "max"))
    assert shape[:2] == ["n", "c"]
    for include in (False, True):
        y, _ = run("n, c, h, w", lambda s, t, include=include: t.avg_pool(
            [3, 3], strides=[2, 1], pads=[1, 1, 1, 1], count_include_pad=include), x)
        close(y, np_pool(x, [3, 3], [2, 1], [1, 1, 1, 1], "avg", include))


def test_pool_ceil_mode_and_dilations():
    x = randn(1, 2, 6, 7)
    y, _ = run("n, c, h, w", lambda s, t: t.max_pool([3, 3], strides=[2, 2], ceil_mode=True),
               x)
    assert y.shape == (1, 2, 3, 3)  # ceil((6 - 3) / 2) + 1, ceil((7 - 3) / 2) + 1
    want = np_pool(np.pad(x, [(0, 0), (0, 0), (0, 1), (0, 0)], constant_values=-np.inf),
                   [3, 3], [2, 2], [0, 0, 0, 0], "max")
    close(y, want)
    y, _ = run("n, c, h, w", lambda s, t: t.max_pool([2, 2], dilations=[2, 2]), x)
    close(y, np.maximum(np.maximum(x[:, :, :-2, :-2], x[:, :, 2:, :-2]),
                        np.maximum(x[:, :, :-2, 2:], x[:, :, 2:, 2:])))


def test_global_pools():
    x = randn(2, 3, 5, 4)
    y, shape = run("n, c, h, w", lambda s, t: t.global_avg_pool(), x)
    close(y, x.mean(axis=(2, 3), keepdims=True))
    assert shape == ["n", "c", "1", "1"]
    close(run("n, c, h, w", lambda s, t: t.global_max_pool(), x)[0],
          x.max(axis=(2, 3), keepdims=True))


def test_pool_errors():
    with sp.Scope() as s:
        x = s.input("x", sp.F32, "n, c, h, w")
        with pytest.raises(ValueError, match="kernel_shape needs 2 entries"):
            x.max_pool([3])
        with pytest.raises(ValueError, match="pads needs 4 entries"):
            x.avg_pool([3, 3], pads=[1, 1])
        with pytest.raises(sp.Error):
            x.max_pool([0, 3])  # a kernel size must be positive


# ---- activations and normalizations ---------------------------------------------------------

ERF = np.vectorize(math.erf)


@pytest.mark.parametrize("name, fn, ref", [
    ("erf", lambda t: t.erf(), lambda x: ERF(x)),
    ("leaky_relu", lambda t: t.leaky_relu(0.1), lambda x: np.where(x < 0, 0.1 * x, x)),
    ("elu", lambda t: t.elu(0.7), lambda x: np.where(x < 0, 0.7 * np.expm1(x), x)),
    ("selu", lambda t: t.selu(), lambda x: 1.0507009873554805 * np.where(
        x <= 0, 1.6732632423543772 * np.expm1(x), x)),
    ("softplus", lambda t: t.softplus(), lambda x: np.logaddexp(0, x)),
    ("softsign", lambda t: t.softsign(), lambda x: x / (1 + np.abs(x))),
    ("clip", lambda t: t.clip(-0.5, 0.25), lambda x: np.clip(x, -0.5, 0.25)),
    ("clip_low", lambda t: t.clip(min=0.0), lambda x: np.maximum(x, 0)),
    ("hard_sigmoid", lambda t: t.hard_sigmoid(0.3, 0.4),
     lambda x: np.clip(0.3 * x + 0.4, 0, 1)),
    ("log_softmax", lambda t: t.log_softmax(1),
     lambda x: x - np.log(np.exp(x - x.max(1, keepdims=True)).sum(1, keepdims=True)) -
     x.max(1, keepdims=True)),
])
def test_activations(name, fn, ref):
    x = randn(3, 7) * 3
    x[0, :3] = [0.0, 80.0, -80.0]
    y, shape = run("b, 7", lambda s, t: fn(t), x)
    assert shape == ["b", "7"]
    close(y, ref(x.astype(np.float64)).astype(np.float32), 1e-5)


def test_prelu_broadcasts_the_slope():
    x = randn(2, 3, 4)
    slope = np.array([0.1, 0.2, 0.3], np.float32).reshape(3, 1)
    y, _ = run("n, 3, l", lambda s, t: t.prelu(s.constant(slope)), x)
    close(y, np.where(x < 0, slope * x, x))


def test_batch_norm():
    x = randn(2, 3, 4, 5)
    scale, bias, mean = randn(3), randn(3), randn(3)
    var = np.abs(randn(3)) + 0.5
    y, shape = run("n, 3, h, w", lambda s, t: t.batch_norm(
        s.constant(scale), s.constant(bias), s.constant(mean), s.constant(var), 1e-3), x)
    r = lambda a: a.reshape(1, 3, 1, 1)  # noqa: E731
    close(y, r(scale) * (x - r(mean)) / np.sqrt(r(var) + 1e-3) + r(bias))
    with sp.Scope() as s:
        t = s.input("x", sp.F32, "n, 3, h, w")
        with pytest.raises(sp.Error):
            t.batch_norm(s.constant(scale[:2]), s.constant(bias), s.constant(mean),
                         s.constant(var))


def test_lrn():
    x = randn(2, 7, 3, 2)
    size, alpha, beta, bias = 3, 1e-2, 0.75, 2.0
    y, _ = run("n, c, h, w", lambda s, t: t.lrn(size, alpha, beta, bias), x)
    sq = np.zeros_like(x, dtype=np.float64)
    for c in range(7):
        lo, hi = max(0, c - (size - 1) // 2), min(6, c + math.ceil((size - 1) / 2))
        sq[:, c] = (x[:, lo:hi + 1].astype(np.float64) ** 2).sum(axis=1)
    close(y, x / (bias + alpha / size * sq) ** beta)


# ---- rearrangements -------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["reflect", "edge", "constant"])
def test_pad_modes(mode):
    x = randn(2, 5, 4)
    y, shape = run("n, h, w", lambda s, t: t.pad_mode([0, 2, 1], [0, 1, 3], mode, 1.5), x)
    kw = {"constant_values": 1.5} if mode == "constant" else {}
    close(y, np.pad(x, [(0, 0), (2, 1), (1, 3)], mode=mode, **kw))
    assert shape[0] == "n" and "h" in shape[1]
    y, _ = run("n, h, w", lambda s, t: t.pad_mode([0, 0, 0], [0, 0, 2], sp.PadMode[
        mode.upper()]), x)
    close(y, np.pad(x, [(0, 0), (0, 0), (0, 2)], mode=mode))


def test_pad_mode_errors():
    with sp.Scope() as s:
        x = s.input("x", sp.F32, "n, 3")
        with pytest.raises(ValueError, match="pad mode"):
            x.pad_mode([0, 1], [0, 1], "wrap")
    # Reflecting by more than the axis has: an error when the size is known.
    program, rt, _ = trace("n, h", lambda s, t: t.pad_mode([0, 3], [0, 0], "reflect"))
    with program, rt:
        close(rt(x=np.arange(10, dtype=np.float32).reshape(2, 5))["y"],
              np.pad(np.arange(10, dtype=np.float32).reshape(2, 5), [(0, 0), (3, 0)],
                     mode="reflect"))
        with pytest.raises(sp.Error):
            rt(x=randn(2, 3))


def test_depth_to_space_and_back():
    n, c, h, w, b = 2, 8, 3, 5, 2
    x = randn(n, c, h, w)
    y, shape = run("n, 8, h, w", lambda s, t: t.depth_to_space(b), x)
    dcr = x.reshape(n, b, b, c // 4, h, w).transpose(0, 3, 4, 1, 5, 2).reshape(
        n, c // 4, h * b, w * b)
    close(y, dcr)
    assert shape[1] == "2" and shape[2] == "2*h", shape
    y, _ = run("n, 8, h, w", lambda s, t: t.depth_to_space(b, "CRD"), x)
    close(y, x.reshape(n, c // 4, b, b, h, w).transpose(0, 1, 4, 2, 5, 3).reshape(
        n, c // 4, h * b, w * b))
    back, shape = run("n, 2, 2*h, 2*w", lambda s, t: t.space_to_depth(b), dcr)
    close(back, x)
    assert shape == ["n", "8", "h", "w"]
    with sp.Scope() as s:
        with pytest.raises(sp.Inconclusive, match="divisible"):
            s.input("x", sp.F32, "n, 2, h, w").space_to_depth(2)
    with sp.Scope() as s:
        t = s.input("x", sp.F32, "n, 6, h, w")
        with pytest.raises(sp.Error):
            t.depth_to_space(2)  # 6 channels are not a multiple of 2 * 2


def test_reduce_window():
    x = randn(2, 7, 5)
    y, shape = run("n, l, k", lambda s, t: t.reduce_window("max", [1, 3, 2], strides=[1, 2, 1]),
                   x)
    want = np.stack([np.stack([x[:, i:i + 3, j:j + 2].max(axis=(1, 2)) for j in range(4)], -1)
                     for i in range(0, 5, 2)], 1)
    close(y, want)
    assert shape[0] == "n"
    # Sum with a dilated base and pads of both signs (a negative pad crops).
    y, _ = run("n, l, k", lambda s, t: t.reduce_window(
        "sum", [1, 2, 1], base_dilation=[1, 2, 1], pad_low=[0, 1, -1], pad_high=[0, 0, 0]), x)
    d = np.zeros((2, 13, 5), np.float32)
    d[:, ::2] = x
    d = np.pad(d, [(0, 0), (1, 0), (0, 0)])[:, :, 1:]
    close(y, d[:, :-1] + d[:, 1:])
    y, _ = run("n, l, k", lambda s, t: t.reduce_window(sp._lib.SHP_REDUCE_MIN, [1, 1, 5]), x)
    close(y, x.min(axis=2, keepdims=True))
    with sp.Scope() as s:
        t = s.input("x", sp.F32, "n, 4")
        with pytest.raises(ValueError, match="window needs 2 entries"):
            t.reduce_window("max", [2])
        with pytest.raises(ValueError, match="not sum, max or min"):
            t.reduce_window("mean", [1, 2])
        with pytest.raises(ValueError, match="pad_low needs 2 entries"):
            t.reduce_window("sum", [1, 2], pad_low=[1])
