"""ONNX converters: signal ops (DFT, STFT, the Hann/Hamming/Blackman windows,
MelWeightMatrix), the training ops of ai.onnx.preview.training (Adagrad, Adam, Momentum),
Det and MaxUnpool.

The library has no complex numbers and no FFT: a DFT is a linear map of the (length, re/im)
pairs of one axis, so it becomes one dot_general with a constant cos/sin matrix, which needs
the transformed length to be a constant; a dft_length (or STFT frame_length) computed at run
time gets a matrix the program computes from iota (its size checked at run time). STFT frames
are one `take` of iota-built indices, so the number of frames may be symbolic. Det is a Laplace
expansion over memoized minors (2^n of them), for small constant n.
"""

import math
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
from onnx import TensorProto

from .._core import F64, I32, I64, Tensor, Truth, concatenate
from ._import import (FLOATS, CHECKS, ONNX_DTYPES, ImportError_, Importer, RuntimeShape, Val,
                      _const_like, _int, converter, host, prod)

MAX_DFT_MATRIX = 1 << 24  # elements of a DFT's cos/sin matrix: beyond, refuse (memory)
MAX_DET_N = 6  # Det expands 2^n minors with n * 2^(n-1) products
TRAINING = "ai.onnx.preview.training"


def _const_size(ctx: Importer, d: Any, what: str) -> int:
    """`d` as a Python int, or a refusal naming `what` when it is symbolic."""
    d = _int(d)
    if not isinstance(d, int):
        raise ImportError_("%s is symbolic (%s); it must be a constant, since the op is built "
                           "from constant cos/sin matrices" % (what, d))
    return d


def _scalar_int(ctx: Importer, v: Optional[Val], what: str) -> Any:
    """The one value of a scalar int input known at import (an int or a Dim)."""
    vals = ctx.ints(v, what)
    if len(vals) != 1:
        raise ImportError_("%s must be a scalar, got %d values" % (what, len(vals)))
    return vals[0]


def _known(ctx: Importer, v: Val, what: str, why: str) -> int:
    """A scalar int input that must be a constant at import (`why` says what it decides)."""
    if v.host is None:
        raise RuntimeShape("%s is computed from run-time data; it must be known at import (a "
                           "constant or an initializer), since %s" % (what, why))
    return _const_size(ctx, _scalar_int(ctx, v, what), what)


def _size_input(ctx: Importer, v: Val, what: str, least: int) -> Any:
    """A scalar size input: its value when known at import, else (computed at run time) a new
    data-dependent size, checked >= `least` when the program runs."""
    if v.host is not None:
        d = _scalar_int(ctx, v, what)
        if isinstance(d, int) and d < least:
            raise ImportError_("%s must be >= %d, got %d" % (what, least, d))
        return d
    t = ctx.t(v)
    if t.dtype not in (I32, I64) or _count_of(ctx, t) != 1:
        raise ImportError_("%s must be an int scalar" % what)
    return _int(t.reshape(()).astype(I64).size_from_value(None, least, None))


def _count_of(ctx: Importer, t: Tensor) -> Any:
    return prod(ctx.shape(t))


def _out_dtype(at: Dict[str, Any], default: int = TensorProto.FLOAT) -> Any:
    dt = ONNX_DTYPES.get(at.get("output_datatype", default))
    if dt is None:
        raise ImportError_("output_datatype=%s is not a shapepoly type"
                           % at.get("output_datatype"))
    return dt


def _dtype_check(imp: Importer, at: Dict[str, Any], node: Any) -> Optional[str]:
    return None if at.get("output_datatype", TensorProto.FLOAT) in ONNX_DTYPES else \
        "output_datatype=%s" % at.get("output_datatype")


# ---- DFT and STFT ----------------------------------------------------------------------

def _dft_matrix(n_in: int, c_in: int, length: int, inverse: bool, onesided: bool
                ) -> np.ndarray:
    """W[n, c, k, o] (float64) such that out[k, o] = sum over n, c of x[n, c] W[n, c, k, o]:
    x is n_in (re[, im]) pairs, cut or zero-padded to `length` as ONNX's dft_length says."""
    if inverse and onesided:  # IRFFT: the half spectrum X[0..length//2] -> a real signal
        k_out, c_out = length, 1
        half = length // 2
        n = np.arange(n_in)[:, None]
        m = np.arange(length)[None, :]
        # Angles from (n * m) mod length: exact zeros of sin at the DC and Nyquist terms.
        phi = 2 * np.pi * ((n * m) % length) / length
        # The conjugate-symmetric half counts twice, but for DC and (even length) Nyquist.
        weight = np.where((n == 0) | (2 * n == length), 1.0, 2.0) / length
        weight = np.where(n <= half, weight, 0.0)  # bins past length//2 are not read
        w = np.zeros((n_in, c_in, k_out, c_out))
        w[:, 0, :, 0] = weight * np.cos(phi)
        if c_in == 2:
            w[:, 1, :, 0] = -weight * np.sin(phi)
        return w
    k_out = length // 2 + 1 if onesided else length
    n = np.arange(n_in)[:, None]
    k = np.arange(k_out)[None, :]
    phi = (1.0 if inverse else -1.0) * 2 * np.pi * ((n * k) % length) / length
    scale = np.where(n < length, 1.0 / length if inverse else 1.0, 0.0)  # cut past length
    cos, sin = scale * np.cos(phi), scale * np.sin(phi)
    # (a + ib)(cos + i sin) = (a cos - b sin) + i (a sin + b cos)
    w = np.zeros((n_in, c_in, k_out, 2))
    w[:, 0, :, 0], w[:, 0, :, 1] = cos, sin
    if c_in == 2:
        w[:, 1, :, 0], w[:, 1, :, 1] = -sin, cos
    return w


def _dft_matrix_t(ctx: Importer, n_in: Any, c_in: int, length: Tensor, k_out: Any,
                  inverse: bool, onesided: bool) -> Tensor:
    """_dft_matrix computed by the program, for a length known at run time only (an i64
    scalar; k_out the matching number of outputs, a dim): angles from (n * k) mod length."""
    shape = [n_in, k_out]
    nn, kk = ctx.scope.iota(I64, shape, 0), ctx.scope.iota(I64, shape, 1)
    lf = length.astype(F64)
    sign = 1.0 if inverse else -1.0
    phi = (nn * kk).rem(length).astype(F64) * (sign * 2 * math.pi) / lf
    zero = phi * 0.0
    if inverse and onesided:
        weight = ((nn == 0) | (nn * 2 == length)).select(zero + 1.0, zero + 2.0) / lf
        weight = (nn <= length / 2).select(weight, zero)
        parts = [[weight * phi.cos()], [weight * phi.sin() * -1.0]]
    else:
        one = zero + 1.0
        scale = (nn < length).select(one / lf if inverse else one, zero)  # cut past length
        cos, sin = scale * phi.cos(), scale * phi.sin()
        parts = [[cos, sin], [sin * -1.0, cos]]
    rows = [concatenate([p.reshape([n_in, 1, k_out, 1]) for p in ps], 3) for ps in
            parts[:c_in]]
    return concatenate(rows, 1) if c_in == 2 else rows[0]


def _apply_dft(ctx: Importer, x: Tensor, axis: int, length: Any, inverse: bool,
               onesided: bool) -> Tensor:
    """The DFT of x (..., re/im last) along `axis`, the transformed axis left in place.
    `length`: an int, or (i64 scalar, dim) for a length known at run time only (the cos/sin
    matrix is then computed by the program, its size checked at run time)."""
    dims = ctx.shape(x)
    c_in = _int(dims[-1])
    if not isinstance(c_in, int) or c_in not in (1, 2):
        raise ImportError_("the last axis holds (real) or (real, imaginary): its size must be "
                           "1 or 2, not %s" % (c_in,))
    if isinstance(length, tuple):
        from ._ops_shape import _dim_t, _require
        lt, ld = length
        n_in = dims[axis]
        k_out = _int(ld // 2 + 1) if onesided and not inverse else ld
        _require(ctx, _dim_t(ctx, n_in) * _dim_t(ctx, k_out) <= MAX_DFT_MATRIX // (2 * c_in),
                 "the DFT's cos/sin matrix (length and input length) must have at most %d "
                 "elements" % MAX_DFT_MATRIX)
        wt = _dft_matrix_t(ctx, n_in, c_in, lt, k_out, inverse, onesided)
    else:
        wt = _dft_constant(ctx, dims, axis, c_in, length, inverse, onesided)
    r = x.ndim
    y = x.astype(F64).dot_general(wt, [], [], [axis, r - 1], [0, 1])  # (others..., k, re/im)
    y = y.astype(x.dtype) if x.dtype != F64 else y
    others = list(range(r - 2))
    perm = others[:axis] + [r - 2] + others[axis:] + [r - 1]
    return y.transpose(*perm) if perm != list(range(r)) else y


def _dft_constant(ctx: Importer, dims: List[Any], axis: int, c_in: int, length: int,
                  inverse: bool, onesided: bool) -> Tensor:
    n_in = _const_size(ctx, dims[axis], "the length of axis %d" % axis)
    if length < 1:
        raise ImportError_("dft_length must be >= 1, got %d" % length)
    k_out = length // 2 + 1 if onesided and not inverse else length
    size = n_in * c_in * k_out * 2
    if size > MAX_DFT_MATRIX:
        raise ImportError_("the DFT's cos/sin matrix would have %d elements (length %d), over "
                           "the cap of %d" % (size, length, MAX_DFT_MATRIX))
    # In double precision: float32 sums of length n lose ~n ulps, which matters near zeros.
    return ctx.scope.constant(_dft_matrix(n_in, c_in, length, inverse, onesided))


def _float_input(ctx: Importer, v: Val, what: str) -> Tensor:
    x = ctx.t(v)
    if x.dtype not in FLOATS:
        raise ImportError_("%s must be float or double, got %s" % (what, x.dtype.name.lower()))
    return x


@converter("DFT")
def _dft(ctx, node, ins, at):
    x = _float_input(ctx, ins[0], "the input")
    r = x.ndim
    if r < 2:
        raise ImportError_("the input must have rank >= 2 (signal axes, then re/im), got %d" % r)
    inverse, onesided = bool(at.get("inverse", 0)), bool(at.get("onesided", 0))
    if ctx.opset >= 20:
        axis = -2
        if len(ins) > 2 and ins[2] is not None and ins[2].host is None:
            # The axis is run-time data: the DFT along every candidate axis, one selected.
            from ._ops_runtime_axes import select_axis_sized
            return [Val(select_axis_sized(ctx, ins[2], r, r - 1, lambda j: _dft_along(
                ctx, node, ins, x, j, inverse, onesided)))]
        if len(ins) > 2 and ins[2] is not None:
            axis = _known(ctx, ins[2], "input 'axis'", "it picks the axis to transform")
    else:
        axis = at.get("axis", 1)
    if not (-r <= axis <= -2 or 0 <= axis <= r - 2):
        raise ImportError_("axis %d is out of [-%d, -2] and [0, %d] (the last axis is re/im)"
                           % (axis, r, r - 2))
    return [Val(_dft_along(ctx, node, ins, x, axis % r, inverse, onesided))]


def _dft_along(ctx: Importer, node: Any, ins: List[Optional[Val]], x: Tensor, axis: int,
               inverse: bool, onesided: bool) -> Tensor:
    if len(ins) > 1 and ins[1] is not None and ins[1].host is None:
        length: Any = _run_time_length(ctx, ins[1], "input 'dft_length'")
    elif len(ins) > 1 and ins[1] is not None:
        length = _known(ctx, ins[1], "input 'dft_length'", "the cos/sin matrix has that size")
    else:
        n = _const_size(ctx, ctx.shape(x)[axis], "the length of axis %d" % axis)
        length = 2 * (n - 1) if inverse and onesided else n
    return _apply_dft(ctx, x, axis, length, inverse, onesided)


def _run_time_length(ctx: Importer, v: Val, what: str) -> Tuple[Tensor, Any]:
    """A length computed at run time (an int scalar >= 1): (i64 scalar, data-dependent size)."""
    from ._ops_shape import _require, _size
    t = ctx.t(v)
    if t.dtype not in (I32, I64) or _count_of(ctx, t) != 1:
        raise ImportError_("%s must be an int scalar" % what)
    t = t.reshape(()).astype(I64)
    _require(ctx, t >= 1, "%s must be >= 1" % what)
    return t, _size(t)


@converter("STFT")
def _stft(ctx, node, ins, at):
    x = _float_input(ctx, ins[0], "the signal")
    if x.ndim != 3:
        raise ImportError_("the signal must have shape (batch, length, 1 or 2), got rank %d"
                           % x.ndim)
    dims = ctx.shape(x)
    sig = dims[1]
    step = _size_input(ctx, ins[1], "input 'frame_step'", 1)  # may be known at run time only
    window = ins[2] if len(ins) > 2 and ins[2] is not None else None
    wt = None if window is None else ctx.t(window, x.dtype)
    if wt is not None and wt.ndim != 1:
        raise ImportError_("the window must be 1-D, got rank %d" % wt.ndim)
    fl_t = None
    if len(ins) > 3 and ins[3] is not None and ins[3].host is None:
        fl_t, fl = _run_time_length(ctx, ins[3], "input 'frame_length'")
        if wt is not None:
            ctx.scope.check(_int(ctx.shape(wt)[0]), "==", fl, "%s: the window's length must "
                            "equal frame_length" % ctx.label)
    elif len(ins) > 3 and ins[3] is not None:
        fl = _known(ctx, ins[3], "input 'frame_length'", "the cos/sin matrix has that size")
        if wt is not None:
            wl = _int(ctx.shape(wt)[0])
            if isinstance(wl, int) and wl != fl:
                raise ImportError_("the window has length %d, frame_length is %d" % (wl, fl))
            if not isinstance(wl, int):
                ctx.scope.check(wl, "==", fl, "%s: the window's length must equal "
                                "frame_length" % ctx.label)
    elif wt is not None:
        fl = _const_size(ctx, ctx.shape(wt)[0], "the window's length")
    else:
        fl = _const_size(ctx, sig, "the signal length (the frame length when neither window "
                         "nor frame_length is given)")
    if isinstance(fl, int) and fl < 1:
        raise ImportError_("frame_length must be >= 1, got %d" % fl)
    if isinstance(sig, int) and isinstance(fl, int):
        if sig < fl:
            raise ImportError_("the signal (%d) is shorter than a frame (%d)" % (sig, fl))
        frames: Any = _int((sig - fl) // step + 1)
    else:
        if isinstance(sig, int) or sig.compare(">=", fl) is not Truth.TRUE:
            ctx.scope.check(sig, ">=", fl, "%s: the signal must be at least one frame (%s) "
                            "long" % (ctx.label, fl))
        frames = _int((sig - fl) // step + 1)
    # Frame f, element j is signal[f * step + j]: one take of (frames, fl) indices.
    shape = [frames, fl]
    step_t = ctx.scope.dim_value(step) if not isinstance(step, int) else step
    idx = ctx.scope.iota(I64, shape, 0) * step_t + ctx.scope.iota(I64, shape, 1)
    fr = x.take(idx, 1)  # (batch, frames, fl, re/im)
    if wt is not None:
        fr = fr * wt.reshape(fl, 1)
    length = fl if fl_t is None else (fl_t, fl)
    return [Val(_apply_dft(ctx, fr, 2, length, False, bool(at.get("onesided", 1))))]


# ---- Windows -----------------------------------------------------------------------------

def _window_np(op: str, n: np.ndarray, denom: Any) -> np.ndarray:
    """The window's formula on positions n over denom (numpy or shapepoly operands)."""
    return _window_formula(op, n, denom, np.cos, np.sin)


def _window_formula(op: str, n: Any, denom: Any, cos: Any, sin: Any) -> Any:
    if op == "HannWindow":
        s = sin(n * math.pi / denom)
        return s * s
    if op == "HammingWindow":
        a = 25.0 / 46.0
        return a - cos(n * (2 * math.pi) / denom) * (1.0 - a)
    return 0.42 - cos(n * (2 * math.pi) / denom) * 0.5 + cos(n * (4 * math.pi) / denom) * 0.08


@host("HannWindow", "HammingWindow", "BlackmanWindow")
def _h_window(ctx, node, hs, at):
    size = hs[0].reshape(-1)
    if size.size != 1 or size.dtype == object:
        return None  # a symbolic size: the converter's iota arithmetic
    n = int(size[0])
    if n < 0:
        raise ImportError_("the window size must be >= 0, got %d" % n)
    denom = n if at.get("periodic", 1) else n - 1
    with np.errstate(all="ignore"):  # size 1, symmetric: 0/0, NaN as ONNX's formula gives
        w = _window_np(node.op_type, np.arange(n, dtype=np.float64), float(denom))
    return [w.astype(_out_dtype(at).numpy)]


@converter("HannWindow", "HammingWindow", "BlackmanWindow")
def _window_op(ctx, node, ins, at):
    # Reached for a symbolic or run-time size, or a constant one over the fold cap.
    size = _size_input(ctx, ins[0], "input 'size'", 0)
    dt = _out_dtype(at)
    n = ctx.scope.iota(F64, [size], 0)
    denom = ctx.scope.dim_value(size if at.get("periodic", 1) else size - 1).astype(F64)
    w = _window_formula(node.op_type, n, denom, Tensor.cos, Tensor.sin)
    return [Val(w.astype(dt))]


for _op in ("HannWindow", "HammingWindow", "BlackmanWindow", "MelWeightMatrix"):
    CHECKS[_op] = _dtype_check


# ---- MelWeightMatrix ----------------------------------------------------------------------

def _mel_np(bins: int, dft_length: int, rate: float, low: float, high: float) -> np.ndarray:
    """Triangular filters with peak 1 on the mel scale mel(f) = 2595 log10(1 + f / 700), at
    spectrogram bins floor((dft_length + 1) f / rate), as ONNX's MelWeightMatrix."""
    def mel(f: float) -> float:
        return 2595.0 * math.log10(1.0 + f / 700.0)
    lo, hi = mel(low), mel(high)
    step = (hi - lo) / (bins + 2)
    m = np.arange(bins + 2) * step + lo
    hz = 700.0 * (np.power(10.0, m / 2595.0) - 1.0)
    edge = np.floor((dft_length + 1) * hz / rate).astype(np.int64)
    out = np.zeros((dft_length // 2 + 1, bins))
    for i in range(bins):
        left, mid, right = int(edge[i]), int(edge[i + 1]), int(edge[i + 2])
        if mid == left:
            out[mid, i] = 1.0
        else:
            for j in range(left, mid + 1):
                out[j, i] = (j - left) / (mid - left)
        for j in range(mid, right):
            out[j, i] = (right - j) / (right - mid)
    return out


def _mel_args(hs: List[np.ndarray]) -> Tuple[int, int, float, float, float]:
    if any(h.size != 1 or h.dtype == object for h in hs):
        raise ImportError_("MelWeightMatrix needs 5 constant scalars (num_mel_bins, dft_length, "
                           "sample_rate, lower_edge_hertz, upper_edge_hertz)")
    bins, length, rate = (int(h.reshape(-1)[0]) for h in hs[:3])
    low, high = (float(h.reshape(-1)[0]) for h in hs[3:])
    if bins < 1 or length < 1 or rate <= 0 or not 0 <= low < high:
        raise ImportError_("MelWeightMatrix: needs num_mel_bins >= 1, dft_length >= 1, "
                           "sample_rate > 0 and 0 <= lower_edge_hertz < upper_edge_hertz")
    return bins, length, rate, low, high


@host("MelWeightMatrix")
def _h_mel(ctx, node, hs, at):
    if len(hs) != 5 or any(h is None for h in hs):
        raise ImportError_("MelWeightMatrix takes 5 inputs")
    bins, length, rate, low, high = _mel_args(hs)
    w = _mel_np(bins, length, rate, low, high)
    # A bin past the spectrum (upper edge above the Nyquist frequency) is an error in ONNX.
    return [w.astype(_out_dtype(at).numpy)]


@converter("MelWeightMatrix")
def _mel(ctx, node, ins, at):
    # Only on the host: every input must be known at import; an initializer counts as its
    # value (a weight of a filter bank is not meant to change).
    if len(ins) != 5 or any(v is None for v in ins):
        raise ImportError_("MelWeightMatrix takes 5 inputs")
    if any(v.host is None for v in ins):
        return [Val(_mel_runtime(ctx, ins, at))]
    res = _h_mel(ctx, node, [v.host for v in ins], at)
    return [Val(ctx.scope.constant(res[0]))]


def _mel_runtime(ctx: Importer, ins: List[Optional[Val]], at: Dict[str, Any]) -> Tensor:
    """MelWeightMatrix of inputs computed at run time: the (dft_length // 2 + 1, num_mel_bins)
    filters (data-dependent sizes) computed by the program as onnx's reference does (f64):
    the band edges floor((dft_length + 1) hz / rate), then at spectrogram bin j of filter i
    the rising (j - left) / (mid - left) on [left, mid] (1 at mid when mid == left),
    overwritten by the falling (right - j) / (right - mid) on [mid, right)."""
    from ._ops_shape import _require, _size
    sc = []
    for v, what in zip(ins, ("num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz",
                             "upper_edge_hertz")):
        t = ctx.t(v)
        if _count_of(ctx, t) != 1:
            raise ImportError_("input %s must be a scalar" % what)
        sc.append(t.reshape(()))
    bins, length = sc[0].astype(I64), sc[1].astype(I64)
    rate, low, high = (t.astype(F64) for t in sc[2:])
    _require(ctx, (bins >= 1) & (length >= 1) & (rate > 0.0) & (low >= 0.0) & (low < high),
             "needs num_mel_bins >= 1, dft_length >= 1, sample_rate > 0 and 0 <= "
             "lower_edge_hertz < upper_edge_hertz")
    nb, ns = _size(bins), _size(length / 2 + 1)
    ln10 = math.log(10.0)
    lo_mel = (low / 700.0).log1p() * (2595.0 / ln10)
    hi_mel = (high / 700.0).log1p() * (2595.0 / ln10)
    k = ctx.scope.iota(I64, [_int(nb + 2)], 0).astype(F64)
    m = k * ((hi_mel - lo_mel) / (bins + 2).astype(F64)) + lo_mel
    hz = (m / 2595.0 * ln10).expm1() * 700.0
    edge = ((length + 1).astype(F64) * hz / rate).floor().astype(I64)
    i = ctx.scope.iota(I64, [nb], 0)
    left, mid, right = (edge.take(i + d, 0).reshape([1, nb]) for d in (0, 1, 2))
    j = ctx.scope.iota(I64, [ns, nb], 0)
    jf, lf, mf, rf = (t.astype(F64) for t in (j, left, mid, right))
    zero = jf * 0.0
    rising = (mid == left).select((j == mid).select(zero + 1.0, zero),
                                  ((j >= left) & (j <= mid)).select(
                                      (jf - lf) / (mf - lf).maximum(zero + 1.0), zero))
    falling = (rf - jf) / (rf - mf).maximum(zero + 1.0)
    w = ((j >= mid) & (j < right)).select(falling, rising)
    out = _out_dtype(at)
    return w if out == F64 else w.astype(out)


# ---- Training ops (ai.onnx.preview.training) ------------------------------------------

def _training_args(ctx: Importer, node: Any, ins: List[Optional[Val]], groups: int
                   ) -> Tuple[Any, Any, List[List[Tensor]]]:
    """(R, T as float, then `groups` lists of n tensors) of a training op's inputs."""
    if node.domain != TRAINING:
        raise ImportError_("%s is an op of domain %s, not of '%s'" % (node.op_type, TRAINING,
                                                                     node.domain))
    if any(v is None for v in ins) or len(ins) < 2 + groups or (len(ins) - 2) % groups:
        raise ImportError_("takes R, T, then %d groups of the same number of tensors; got %d "
                           "inputs" % (groups, len(ins)))
    n = (len(ins) - 2) // groups
    ts = [ctx.t(v) for v in ins[2:]]
    for t in ts:
        if t.dtype not in FLOATS:
            raise ImportError_("the optimized tensors must be float or double, got %s"
                               % t.dtype.name.lower())
    out = [ts[g * n:(g + 1) * n] for g in range(groups)]
    return ins[0], ins[1], out


def _rt(ctx: Importer, r: Val, t: Val, like: Tensor) -> Tuple[Tensor, Tensor]:
    """R and T as scalars of like's dtype (ONNX gives them as scalars of their own types)."""
    return ctx.t(r, like.dtype).reshape(), ctx.t(t, like.dtype).reshape()


@converter("%s::Adagrad" % TRAINING)
def _adagrad(ctx, node, ins, at):
    r0, t0, (xs, gs, hs) = _training_args(ctx, node, ins, 3)
    decay, eps, norm = (at.get(k, d) for k, d in (("decay_factor", 0.0), ("epsilon", 1e-6),
                                                  ("norm_coefficient", 0.0)))
    outs_x, outs_h = [], []
    for x, g, h in zip(xs, gs, hs):
        r, t = _rt(ctx, r0, t0, x)
        rate = r / (t * decay + 1.0)
        gr = x * norm + g
        h_new = h + gr * gr
        outs_x.append(Val(x - rate * gr / (h_new.sqrt() + eps)))
        outs_h.append(Val(h_new))
    return outs_x + outs_h


@converter("%s::Adam" % TRAINING)
def _adam(ctx, node, ins, at):
    r0, t0, (xs, gs, vs, hs) = _training_args(ctx, node, ins, 4)
    alpha, beta = at.get("alpha", 0.9), at.get("beta", 0.999)
    eps, norm = at.get("epsilon", 1e-6), at.get("norm_coefficient", 0.0)
    post = at.get("norm_coefficient_post", 0.0)
    ox, ov, oh = [], [], []
    for x, g, v, h in zip(xs, gs, vs, hs):
        r, t = _rt(ctx, r0, t0, x)
        gr = x * norm + g
        v_new = v * alpha + gr * (1.0 - alpha)
        h_new = h * beta + gr * gr * (1.0 - beta)
        # Bias correction from the second step on (T > 0); T = 0's NaN branch is not taken.
        a_t, b_t = _const_like(ctx, alpha, r) ** t, _const_like(ctx, beta, r) ** t
        rate = (t > 0).select(r * (1.0 - b_t).sqrt() / (1.0 - a_t), r)
        x_new = x - rate * (v_new / (h_new.sqrt() + eps))
        ox.append(Val(x_new * (1.0 - post)))
        ov.append(Val(v_new))
        oh.append(Val(h_new))
    return ox + ov + oh


@converter("%s::Momentum" % TRAINING)
def _momentum(ctx, node, ins, at):
    r0, t0, (xs, gs, vs) = _training_args(ctx, node, ins, 3)
    for k in ("alpha", "beta", "mode", "norm_coefficient"):
        if k not in at:
            raise ImportError_("the attribute '%s' is required" % k)
    if at["mode"] not in ("standard", "nesterov"):
        raise ImportError_("mode=%r (must be 'standard' or 'nesterov')" % at["mode"])
    alpha, beta, norm = at["alpha"], at["beta"], at["norm_coefficient"]
    ox, ov = [], []
    for x, g, v in zip(xs, gs, vs):
        r, t = _rt(ctx, r0, t0, x)
        gr = x * norm + g
        b = (t > 0).select(_const_like(ctx, beta, r), _const_like(ctx, 1.0, r))
        v_new = v * alpha + gr * b
        step = v_new if at["mode"] == "standard" else gr + v_new * alpha
        ox.append(Val(x - r * step))
        ov.append(Val(v_new))
    return ox + ov


# ---- Det ---------------------------------------------------------------------------------

@converter("Det")
def _det(ctx, node, ins, at):
    x = _float_input(ctx, ins[0], "the input")
    if x.ndim < 2:
        raise ImportError_("Det needs matrices (rank >= 2), got rank %d" % x.ndim)
    dims = ctx.shape(x)
    n, m = _int(dims[-1]), _int(dims[-2])
    if not isinstance(n, int) or not isinstance(m, int):
        raise ImportError_("Det needs a constant matrix size, got %s x %s" % (m, n))
    if n != m:
        raise ImportError_("Det needs square matrices, got %d x %d" % (m, n))
    if n > MAX_DET_N:
        raise ImportError_("Det of %d x %d matrices: only sizes up to %d are expanded (a "
                           "Laplace expansion, n * 2^(n-1) products)" % (n, n, MAX_DET_N))
    batch = dims[:-2]
    if n == 0:
        return [Val(_const_like(ctx, 1.0, x).broadcast_to(batch))]
    r = x.ndim

    def elem(i: int, j: int) -> Tensor:
        start = [0] * (r - 2) + [i, j]
        return x.slice(start, list(batch) + [i + 1, j + 1]).reshape(batch)
    e = [[elem(i, j) for j in range(n)] for i in range(n)]
    # minor[cols] = det of rows n-len(cols).. and columns `cols`, expanded along its top row.
    minor: Dict[Tuple[int, ...], Tensor] = {(j,): e[n - 1][j] for j in range(n)}
    for size in range(2, n + 1):
        row = n - size
        nxt: Dict[Tuple[int, ...], Tensor] = {}
        for cols in _subsets(n, size):
            acc = None
            for p, j in enumerate(cols):
                term = e[row][j] * minor[cols[:p] + cols[p + 1:]]
                acc = term if acc is None else (acc - term if p % 2 else acc + term)
            nxt[cols] = acc
        minor = nxt
    return [Val(minor[tuple(range(n))])]


def _subsets(n: int, k: int) -> List[Tuple[int, ...]]:
    import itertools
    return list(itertools.combinations(range(n), k))


# ---- MaxUnpool ---------------------------------------------------------------------------

def _shape_input(ctx: Importer, v: Val, rank: int, what: str) -> List[Any]:
    """A shape input's entries: known at import, or (run-time data) new data-dependent sizes."""
    if v.host is not None:
        return ctx.ints(v, what)
    t = ctx.t(v, I64)
    if t.ndim != 1 or _int(t.shape[0]) != rank:
        raise ImportError_("%s must have %d entries" % (what, rank))
    return [_int(t.slice([i], [i + 1]).reshape(()).size_from_value(None, 0, None))
            for i in range(rank)]


@converter("MaxUnpool")
def _max_unpool(ctx, node, ins, at):
    x = _float_input(ctx, ins[0], "X")
    idx = ctx.t(ins[1])
    if idx.dtype != I64:
        raise ImportError_("the indices must be int64, got %s" % idx.dtype.name.lower())
    if x.ndim < 3:
        raise ImportError_("X must be (N, C, spatial...), got rank %d" % x.ndim)
    k = list(at.get("kernel_shape", []))
    sp = x.ndim - 2
    if len(k) != sp:
        raise ImportError_("kernel_shape needs %d entries, got %d" % (sp, len(k)))
    strides = list(at.get("strides", [1] * sp))
    pads = list(at.get("pads", [0] * 2 * sp))
    if len(strides) != sp or len(pads) != 2 * sp:
        raise ImportError_("strides needs %d entries and pads %d" % (sp, 2 * sp))
    dims = ctx.shape(x)
    # The unpooled size; the indices are flat positions in (N, C, *that).
    inferred = dims[:2] + [_int((dims[2 + i] - 1) * strides[i] - pads[i] - pads[sp + i] + k[i])
                           for i in range(sp)]
    for d in inferred[2:]:
        if isinstance(d, int) and d < 1:
            raise ImportError_("the unpooled size %d is < 1" % d)
    flat = x.reshape(-1)
    pos = idx.reshape(-1)
    zeros = _const_like(ctx, 0.0, x).broadcast_to([prod(inferred)])
    total = zeros.scatter_add(pos, flat, 0)
    # Overlapping windows repeat an index, with the same value (the one max): its mean.
    count = zeros.scatter_add(pos, _const_like(ctx, 1.0, x).broadcast_to(ctx.shape(flat)), 0)
    y = (count > 1.0).select(total / count, total).reshape(inferred)
    if len(ins) > 2 and ins[2] is not None:
        out = _shape_input(ctx, ins[2], x.ndim, "input 'output_shape'")
        if len(out) != x.ndim:
            raise ImportError_("output_shape needs %d entries, got %d" % (x.ndim, len(out)))
        high = []
        for o, d in zip(out, inferred):
            extra = _int(o - d)
            if isinstance(extra, int):
                if extra < 0:
                    raise ImportError_("output_shape %s is smaller than the unpooled shape %s"
                                       % (out, inferred))
            elif extra.compare(">=", 0) is not Truth.TRUE:
                ctx.scope.check(o, ">=", d, "%s: output_shape must hold the unpooled shape"
                                % ctx.label)
            high.append(extra)
        if any(not (isinstance(h, int) and h == 0) for h in high):
            y = y.pad([0] * x.ndim, high)  # the unpooled values at the start of each axis
    return [Val(y)]



# ---- RoiAlign ----------------------------------------------------------------------------

def _roi_axis(ctx: Importer, c: Tensor, size: Any) -> Tuple[Tensor, Tensor, Tensor, Tensor,
                                                              Tensor]:
    """Bilinear terms of sample coordinates `c` (f64) on an axis of `size`: (low, high as i64,
    the weights of low and high, and 1.0 where the sample lies within [-1, size], else 0)."""
    n = ctx.scope.dim_value(size).astype(F64) if not isinstance(size, int) else float(size)
    valid = ((c >= -1.0) & (c <= n)).select(1.0, 0.0)
    c = c.maximum(0.0)
    low = c.floor()
    edge = low >= n - 1.0  # at the last row: both corners there, no fraction
    low = edge.select(n - 1.0 + c * 0.0, low)
    high = edge.select(low, low + 1.0)
    c = edge.select(low, c)
    frac = c - low
    return low.astype(I64), high.astype(I64), (1.0 - frac) * valid, frac * valid, valid


@converter("RoiAlign")
def _roi_align(ctx, node, ins, at):
    x = _float_input(ctx, ins[0], "X")
    if x.ndim != 4:
        raise ImportError_("X must be (N, C, H, W), got rank %d" % x.ndim)
    rois = ctx.t(ins[1], x.dtype).astype(F64)
    bi = ctx.t(ins[2]).astype(I64)
    s = at.get("sampling_ratio", 0)
    if s <= 0:  # ceil(roi size / output size) samples: a count that differs per ROI
        raise ImportError_("sampling_ratio=%d (adaptive per ROI) is not supported; give a "
                           "constant sampling_ratio >= 1" % s)
    oh, ow = at.get("output_height", 1), at.get("output_width", 1)
    scale = at.get("spatial_scale", 1.0)
    default = "half_pixel" if ctx.opset >= 16 else "output_half_pixel"
    half = at.get("coordinate_transformation_mode", default) == "half_pixel"
    n, c, h, w = ctx.shape(x)
    r = ctx.shape(rois)[0]

    def col(k: int) -> Tensor:
        return rois.slice([0, k], [r, k + 1]) * scale - (0.5 if half else 0.0)  # (R, 1)
    x1, y1, x2, y2 = col(0), col(1), col(2), col(3)
    rw, rh = x2 - x1, y2 - y1
    if not half:  # legacy mode: a malformed ROI is made 1 x 1
        rw, rh = rw.maximum(1.0), rh.maximum(1.0)
    # Sample p of an axis sits at bin p // s, offset (p % s + 0.5) / s of a bin.
    th = np.array([p // s + (p % s + 0.5) / s for p in range(oh * s)])
    tw = np.array([p // s + (p % s + 0.5) / s for p in range(ow * s)])
    ys = y1 + ctx.scope.constant(th).reshape(1, oh * s) * (rh / float(oh))  # (R, oh*s)
    xs = x1 + ctx.scope.constant(tw).reshape(1, ow * s) * (rw / float(ow))
    yl, yh, wyl, wyh, _ = _roi_axis(ctx, ys, h)
    xl, xh, wxl, wxh, _ = _roi_axis(ctx, xs, w)
    yl, yh, wyl, wyh = (t.reshape(r, oh * s, 1) for t in (yl, yh, wyl, wyh))
    xl, xh, wxl, wxh = (t.reshape(r, 1, ow * s) for t in (xl, xh, wxl, wxh))
    # Gather the corners from (N * H * W, C) rows: row (b * H + y) * W + x.
    rows = x.transpose(0, 2, 3, 1).reshape(prod([n, h, w]), c)
    wd = ctx.scope.dim_value(w) if not isinstance(w, int) else w
    base = bi.reshape(r, 1, 1) * (ctx.scope.dim_value(h) if not isinstance(h, int) else h)
    terms = []
    for yy, wy in ((yl, wyl), (yh, wyh)):
        for xx, wx in ((xl, wxl), (xh, wxh)):
            v = rows.take((base + yy) * wd + xx, 0).astype(F64)  # (R, oh*s, ow*s, C)
            terms.append(v * (wy * wx).reshape(r, oh * s, ow * s, 1))
    if at.get("mode", "avg") == "max":  # ONNX's max: of each weighted corner, over samples
        v = terms[0].maximum(terms[1]).maximum(terms[2]).maximum(terms[3])
        y = v.reshape(r, oh, s, ow, s, c).max([2, 4])
    else:
        v = terms[0] + terms[1] + terms[2] + terms[3]
        y = v.reshape(r, oh, s, ow, s, c).sum([2, 4]) * (1.0 / (s * s))
    return [Val(y.transpose(0, 3, 1, 2).astype(x.dtype))]


CHECKS["RoiAlign"] = lambda imp, at, node: None if at.get("sampling_ratio", 0) > 0 else \
    "sampling_ratio=%s" % at.get("sampling_ratio", 0)
