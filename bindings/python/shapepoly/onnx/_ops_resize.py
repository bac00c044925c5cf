"""ONNX converters: resampling (Resize, Upsample, GridSample).

Resize is separable: each resized axis is resampled on its own. For an axis the source
coordinate of every output index comes from `iota` and the scale (in f64, as the ONNX reference
computes it); from it come clamped integer indices and weights, and the axis becomes a weighted
sum of `take`s (nearest: 1 tap, linear: 2, cubic: 4, antialiased: as many as the stretched
filter covers). Symbolic input sizes enter the coordinates as dim_value tensors.

GridSample reads coordinates from run-time data: each tap is a flat index into the input with its
spatial axes flattened, gathered with one `take`.
"""

from fractions import Fraction
from itertools import product as cartesian
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np

from .._core import F64, I64, Dim, Tensor, concatenate
from ._import import FLOATS, CHECKS, ImportError_, Importer, Val, _axis, _int, converter, prod

MODES = ("nearest", "linear", "cubic")
COORDINATE_MODES = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                    "asymmetric", "tf_crop_and_resize")
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
POLICIES = ("stretch", "not_larger", "not_smaller")
# A scale p/q on a symbolic axis gives the size (in * p) // q; beyond this denominator the
# expression would only restate a float (0.6f is 10066330/16777216): refused instead.
MAX_SCALE_DENOMINATOR = 64
# Antialiasing with a scale known at run time only: the taps for every possible scale of an
# axis of size n (2 n linear, 4 n cubic), one take each; beyond this many, refused.
MAX_ANTIALIAS_TAPS = 256

Num = Union[int, float, Dim, Tensor]


def _check_resize(imp: Importer, at: Dict[str, Any], node: Any) -> Optional[str]:
    for key, allowed, default in (("mode", MODES, "nearest"),
                                  ("coordinate_transformation_mode", COORDINATE_MODES,
                                   "half_pixel"),
                                  ("nearest_mode", NEAREST_MODES, "round_prefer_floor"),
                                  ("keep_aspect_ratio_policy", POLICIES, "stretch")):
        v = at.get(key, default)
        if v not in allowed:
            return "%s=%s" % (key, v)
    if imp.opset < 11 and at.get("mode", "nearest") == "cubic":
        return "mode=cubic"
    return None


def _check_upsample(imp: Importer, at: Dict[str, Any], node: Any) -> Optional[str]:
    mode = at.get("mode", "nearest")
    return None if mode in ("nearest", "linear", "bilinear") else "mode=%s" % mode


CHECKS["Resize"] = _check_resize
CHECKS["Upsample"] = _check_upsample


# ---- Scalars: Python numbers while sizes are known, f64 tensors once one is symbolic -------

def _f64(ctx: Importer, v: Num) -> Tensor:
    if isinstance(v, Tensor):
        return v if v.dtype == F64 else v.astype(F64)
    if isinstance(v, Dim):
        return ctx.scope.dim_value(v).astype(F64)
    return ctx.scope.constant(np.array(v, np.float64))


def _i64(ctx: Importer, v: Any) -> Tensor:
    """A size (int or Dim) as a scalar i64 tensor."""
    if isinstance(v, Dim):
        return ctx.scope.dim_value(v)
    return ctx.scope.constant(np.array(v, np.int64))


def _along(t: Tensor, axis: int, rank: int) -> Tensor:
    """A vector over one axis shaped to broadcast against a tensor of `rank`."""
    return t.reshape([t.shape[0]] + [1] * (rank - axis - 1))


def _source_coords(ctx: Importer, cmode: str, n: Any, m: Any, scale: Num, width: Num,
                   roi: Optional[Tuple[Num, Num]]) -> Tuple[Tensor, Optional[Tensor]]:
    """x_original of every output index 0..m-1 (f64, shape (m,)) and, for tf_crop_and_resize,
    the mask of the indices that fall outside the input (they take extrapolation_value).
    `width` is the output width before flooring (n * scale; m when `sizes` gave it): the
    reference implementation (and so the conformance data) divides by it, not by m, in
    align_corners and tf_crop_and_resize; onnxruntime divides by m."""
    y = ctx.scope.iota(F64, [m], 0)
    s = _f64(ctx, scale)
    half = lambda: (y + 0.5) / s - 0.5  # noqa: E731
    if cmode == "asymmetric":
        return y / s, None
    if cmode == "half_pixel":
        return half(), None
    if cmode == "half_pixel_symmetric":
        # The fractional output width against its floor m shifts the centre.
        nf = _f64(ctx, n)
        offset = nf / 2.0 * (1.0 - _f64(ctx, m) / _f64(ctx, width))
        return offset + half(), None
    if cmode == "pytorch_half_pixel":  # length_resized == 1 reads x_original 0
        x = half()
        return _unless_one(ctx, m, x * 0.0, x), None
    n1 = _f64(ctx, n) - 1.0
    w1 = _f64(ctx, width) - 1.0
    if cmode == "align_corners":
        return _unless_one(ctx, width, y * 0.0, y * n1 / w1), None
    # tf_crop_and_resize
    start, end = roi
    x = y * (end - start) * n1 / w1 + n1 * start
    x = _unless_one(ctx, width, y * 0.0 + n1 * (0.5 * (start + end)), x)
    return x, (x < 0.0) | (x > n1)


def _unless_one(ctx: Importer, m: Num, special: Tensor, general: Tensor) -> Tensor:
    """`special` when the output size m is 1, else `general` (decided at run time when m is
    symbolic or computed)."""
    if isinstance(m, (int, float)):
        return special if m == 1 else general
    return (_f64(ctx, m) == 1.0).reshape(1).select(special, general)


def _nearest_index(x: Tensor, nmode: str, downscale: Union[bool, Tensor]) -> Tensor:
    if nmode == "round_prefer_floor":  # halves go down
        return (x - 0.5).ceil()
    if nmode == "round_prefer_ceil":
        return (x + 0.5).floor()
    if nmode == "floor":
        return x.floor()
    if nmode == "ceil":
        return x.ceil()
    # "simple" (Resize-10, Upsample): onnxruntime truncates, but rounds up when downscaling.
    if isinstance(downscale, Tensor):
        return downscale.reshape(1).select(x.ceil(), x.floor())
    return x.ceil() if downscale else x.floor()


def _clamped_index(ctx: Importer, idx: Tensor, n: Any) -> Tensor:
    """A float index clamped to [0, n - 1] (edge padding) as i64; clamped before converting
    too, so that far-off (or NaN) coordinates convert to something in range."""
    hi = _i64(ctx, n) - 1
    i = idx.maximum(0.0).minimum(hi.astype(idx.dtype)).astype(I64)
    return i.maximum(ctx.scope.constant(np.array(0, np.int64))).minimum(hi)


def _keys(d: Tensor, a: float) -> Tensor:
    """The cubic convolution kernel (Keys, coefficient a) at distances d >= 0."""
    near = ((a + 2.0) * d - (a + 3.0)) * d * d + 1.0
    far = ((a * d - 5.0 * a) * d + 8.0 * a) * d - 4.0 * a
    return (d <= 1.0).select(near, (d < 2.0).select(far, d * 0.0))


def _taps(ctx: Importer, x: Tensor, mode: str, at: Dict[str, Any], scale: Any,
          antialias: bool, n: Any) -> List[Tuple[Tensor, Optional[Tensor]]]:
    """(index as f64, weight or None) of every tap of every output coordinate x; the indices
    are unclamped. n: the input size (an int when the scale is a run-time tensor)."""
    if mode == "nearest":
        return [(x, None)]
    f = x.floor()
    r = x - f
    a = at.get("cubic_coeff_a", -0.75)
    support = 1.0 if mode == "linear" else 2.0
    if antialias and isinstance(scale, Tensor):
        # A scale known at run time only: the taps of the smallest scale that gives a
        # non-empty output (1 / n), with the filter stretched by 1 / min(scale, 1); the taps
        # past the (narrower) filter of a larger scale weigh 0.
        first = int(np.floor(-support * n)) + 1
        s = scale.minimum(1.0)
        taps = []
        for i in range(first, 2 - first):
            d = (r - float(i)).abs() * s
            w = (1.0 - d).maximum(0.0) if mode == "linear" else _keys(d, a)
            taps.append((f + float(i), w))
        return taps
    if antialias and scale < 1.0:
        # The filter stretched by 1 / scale: every tap whose kernel value can be non-zero.
        first = int(np.floor(-support / scale)) + 1
        taps = []
        for i in range(first, 2 - first):
            d = (r - float(i)).abs() * float(scale)
            w = (1.0 - d).maximum(0.0) if mode == "linear" else _keys(d, a)
            taps.append((f + float(i), w))
        return taps
    if mode == "linear":
        return [(f, 1.0 - r), (f + 1.0, r)]
    return [(f + float(i), _keys((r - float(i)).abs(), a)) for i in (-1, 0, 1, 2)]


def _resample_axis(ctx: Importer, x: Tensor, axis: int, n: Any, m: Any, scale: Num,
                   width: Num, mode: str, cmode: str, nmode: str, at: Dict[str, Any],
                   roi: Optional[Tuple[float, float]], antialias: bool) -> Tensor:
    rank = x.ndim
    coords, outside = _source_coords(ctx, cmode, n, m, scale, width, roi)
    downscale = scale < 1.0
    if mode == "nearest":
        coords = _nearest_index(coords, nmode, downscale)
    taps = _taps(ctx, coords, mode, at, scale, antialias, n)
    if mode != "nearest" and (at.get("exclude_outside", 0) or antialias):
        ws = [w for _, w in taps]
        if at.get("exclude_outside", 0):
            # Taps outside the input weigh 0; the others share the weight.
            nf = _f64(ctx, n)
            ws = [((i >= 0.0) & (i < nf)).select(w, w * 0.0) for (i, _), w in zip(taps, ws)]
        total = ws[0]
        for w in ws[1:]:
            total = total + w
        total = (total == 0.0).select(total + 1.0, total)
        taps = [(i, w / total) for (i, _), w in zip(taps, ws)]
    out = None
    for idx, w in taps:
        g = x.take(_clamped_index(ctx, idx, n), axis)
        if w is not None:
            g = g * _along(w.astype(x.dtype), axis, rank)
        out = g if out is None else out + g
    if outside is not None:
        fill = ctx.scope.constant(np.array(at.get("extrapolation_value", 0.0), x.dtype.numpy))
        out = _along(outside, axis, rank).select(fill, out)
    return out


def _floor_size(n: Any, s: float, axis: int) -> Any:
    """floor(n * s) (the ONNX output size from a scale), a dim expression for a symbolic n."""
    if isinstance(n, int):
        return int(np.floor(np.float64(n) * s))
    fr = Fraction(s)
    if fr.denominator > MAX_SCALE_DENOMINATOR:
        raise ImportError_("axis %d has the symbolic size %s and scale %r: the output size "
                           "floor(%s * %r) is not a dim expression; give 'sizes' instead, or "
                           "a scale p/q with q <= %d" % (axis, n, s, n, s,
                                                         MAX_SCALE_DENOMINATOR))
    return _int(n) if fr == 1 else _int(n * fr.numerator // fr.denominator)


def _present(ctx: Importer, v: Optional[Val]) -> bool:
    """Whether an optional input is given (not absent, not an empty tensor)."""
    if v is None:
        return False
    if v.host is not None:
        return v.host.size > 0
    return ctx.shape(v.tensor) != [0]


def _floats(ctx: Importer, v: Val, what: str) -> List[Num]:
    """A float vector input: Python floats when known now, else f64 scalar tensors (run-time
    scales or roi)."""
    if v.host is None:
        return [t.astype(F64) for t in _entries(ctx, ctx.t(v), what)]
    a = v.host
    if a.dtype == object or a.dtype.kind != "f":
        raise ImportError_("%s must be a float tensor" % what)
    return [float(s) for s in a.reshape(-1)]


def _entries(ctx: Importer, t: Tensor, what: str) -> List[Tensor]:
    """The entries of a rank-1 tensor of known length, as scalars."""
    n = ctx.shape(t)[0] if t.ndim == 1 else None
    if not isinstance(n, int):
        raise ImportError_("%s must be a vector of known length" % what)
    return [t.slice([i], [i + 1]).reshape(()) for i in range(n)]


def _unbacked(t: Tensor) -> Any:
    """A size computed at run time (an i64 scalar): a new data-dependent variable."""
    return _int(t.astype(I64).size_from_value(None, 0, None))


def _sizes(ctx: Importer, v: Val) -> List[Any]:
    """The sizes input: ints and Dims when known now (constants, shape computations), else
    each entry a data-dependent size."""
    if v.host is not None:
        return ctx.ints(v, "input 'sizes'")
    return [_unbacked(t) for t in _entries(ctx, ctx.t(v, I64), "input 'sizes'")]


def _out_sizes(ctx: Importer, dims: List[Any], axes: List[int], at: Dict[str, Any],
               scales: Optional[List[Num]], sizes: Optional[List[Any]]
               ) -> Tuple[Dict[int, Any], Dict[int, Num]]:
    """The output size and the scale of every resized axis."""
    out_sizes: Dict[int, Any] = {}
    axis_scale: Dict[int, Num] = {}
    if scales is not None:
        for a, s in zip(axes, scales):
            if isinstance(s, float) and not s > 0:
                raise ImportError_("scale %r of axis %d is not positive" % (s, a))
            axis_scale[a] = s
            out_sizes[a] = _floor_size(dims[a], s, a) if isinstance(s, float) else \
                _unbacked((_f64(ctx, dims[a]) * s).floor())
        return out_sizes, axis_scale
    policy = at.get("keep_aspect_ratio_policy", "stretch")
    if policy == "stretch":
        for a, m in zip(axes, sizes):
            if isinstance(m, int) and m < 0:
                raise ImportError_("sizes has a negative entry %d" % m)
            n = dims[a]
            out_sizes[a] = m
            axis_scale[a] = m / n if isinstance(n, int) and isinstance(m, int) else \
                _f64(ctx, m) / _f64(ctx, n)
        return out_sizes, axis_scale
    # One scale for every axis (the smallest or largest ratio), sizes rounded half up.
    if all(isinstance(dims[a], int) and isinstance(m, int) for a, m in zip(axes, sizes)):
        ratios = [m / dims[a] for a, m in zip(axes, sizes)]
        s = min(ratios) if policy == "not_larger" else max(ratios)
        return {a: int(s * dims[a] + 0.5) for a in axes}, {a: s for a in axes}
    ratios = [_f64(ctx, m) / _f64(ctx, dims[a]) for a, m in zip(axes, sizes)]
    st = ratios[0]
    for r in ratios[1:]:
        st = st.minimum(r) if policy == "not_larger" else st.maximum(r)
    return ({a: _unbacked((st * _f64(ctx, dims[a]) + 0.5).floor()) for a in axes},
            {a: st for a in axes})


def resize(ctx: Importer, x: Tensor, at: Dict[str, Any], scales: Optional[List[Num]],
           sizes: Optional[List[Any]], roi: Optional[List[Num]],
           axes: Optional[List[int]], legacy: bool = False) -> Tensor:
    """Resize x (ONNX semantics); `legacy`: Resize-10 and Upsample (asymmetric coordinates,
    onnxruntime's nearest rule). Scales and roi are floats, or f64 scalar tensors computed at
    run time; sizes are ints or Dims."""
    rank = x.ndim
    dims = ctx.shape(x)
    mode = at.get("mode", "nearest")
    mode = "linear" if mode == "bilinear" else mode
    cmode = "asymmetric" if legacy else at.get("coordinate_transformation_mode", "half_pixel")
    nmode = "simple" if legacy else at.get("nearest_mode", "round_prefer_floor")
    antialias = bool(at.get("antialias", 0)) and mode != "nearest"
    if at.get("antialias", 0) and mode == "nearest":
        raise ImportError_("antialias=1 applies to the linear and cubic modes, not nearest")
    if x.dtype not in FLOATS and mode != "nearest":
        raise ImportError_("mode=%s on %s data: only nearest resizes integer tensors" %
                           (mode, x.dtype.name.lower()))
    axes = list(range(rank)) if axes is None else [_axis(a, rank) for a in axes]
    if len(set(axes)) != len(axes):
        raise ImportError_("axes %s repeat an axis" % axes)
    given = scales if scales is not None else sizes
    if given is None:
        raise ImportError_("neither 'scales' nor 'sizes' is given")
    if len(given) != len(axes):
        raise ImportError_("%s has %d entries for %d axes" % (
            "scales" if scales is not None else "sizes", len(given), len(axes)))
    crop = cmode == "tf_crop_and_resize"
    if crop and roi is None:
        raise ImportError_("coordinate_transformation_mode=tf_crop_and_resize needs 'roi'")
    if crop and len(roi) != 2 * len(axes):
        raise ImportError_("roi has %d entries; expected %d" % (len(roi), 2 * len(axes)))
    out_sizes, axis_scale = _out_sizes(ctx, dims, axes, at, scales, sizes)
    y = x
    for k, a in enumerate(axes):
        n, m, s = dims[a], out_sizes[a], axis_scale[a]
        r = (roi[k], roi[k + len(axes)]) if crop else None
        if isinstance(s, float) and s == 1.0 and str(m) == str(n) and (
                not crop or r == (0.0, 1.0)):
            continue  # the identity
        if antialias and not isinstance(s, float):
            # The filter's width (its number of taps) depends on the scale: as many as the
            # smallest scale with a non-empty output (1 / n) needs, for a known n.
            if not isinstance(n, int):
                raise ImportError_("antialias=1 on axis %d, whose scale is only known at run "
                                   "time and whose size %s is symbolic: the filter's width "
                                   "(its number of taps) depends on both" % (a, n))
            taps = 2 * int(np.ceil((1.0 if mode == "linear" else 2.0) * n))
            if taps > MAX_ANTIALIAS_TAPS:
                raise ImportError_("antialias=1 on axis %d of size %d, whose scale is only "
                                   "known at run time: its filter could need %d taps, over "
                                   "the cap of %d; give the scale or sizes as a constant" %
                                   (a, n, taps, MAX_ANTIALIAS_TAPS))
        # The output width before flooring: m itself when `sizes` gave it.
        width = m if scales is None and at.get("keep_aspect_ratio_policy", "stretch") == \
            "stretch" else s * n if isinstance(s, float) and isinstance(n, int) else \
            _f64(ctx, s) * _f64(ctx, n)
        y = _resample_axis(ctx, y, a, n, m, s, width, mode, cmode, nmode, at, r, antialias)
    return y


@converter("Resize")
def _resize(ctx, node, ins, at):
    x = ctx.t(ins[0])
    if ctx.opset < 11:
        scales = _floats(ctx, ins[1], "input 'scales'")
        return [Val(resize(ctx, x, at, scales, None, None, None, legacy=True))]
    roi = ins[1] if len(ins) > 1 else None
    sc = ins[2] if len(ins) > 2 else None
    sz = ins[3] if len(ins) > 3 else None
    if _present(ctx, sc) and _present(ctx, sz):
        raise ImportError_("both 'scales' and 'sizes' are given (ONNX allows only one)")
    scales = _floats(ctx, sc, "input 'scales'") if _present(ctx, sc) else None
    sizes = _sizes(ctx, sz) if _present(ctx, sz) else None
    cmode = at.get("coordinate_transformation_mode", "half_pixel")
    rois = _floats(ctx, roi, "input 'roi'") if cmode == "tf_crop_and_resize" and \
        _present(ctx, roi) else None
    axes = list(at["axes"]) if "axes" in at and ctx.opset >= 18 else None
    return [Val(resize(ctx, x, at, scales, sizes, rois, axes))]


@converter("Upsample")
def _upsample(ctx, node, ins, at):
    x = ctx.t(ins[0])
    if "scales" in at:  # Upsample-7
        scales = [float(s) for s in at["scales"]]
    else:
        scales = _floats(ctx, ins[1], "input 'scales'")
    if any(isinstance(s, float) and s < 1.0 for s in scales):
        raise ImportError_("Upsample scales %s: every scale must be >= 1" % scales)
    return [Val(resize(ctx, x, at, scales, None, None, None, legacy=True))]


# ---- GridSample ----------------------------------------------------------------------------

GRID_MODES = {"bilinear": "linear", "linear": "linear", "nearest": "nearest",
              "bicubic": "cubic", "cubic": "cubic"}
PADDING_MODES = ("zeros", "border", "reflection")


def _check_grid_sample(imp: Importer, at: Dict[str, Any], node: Any) -> Optional[str]:
    if at.get("mode", "bilinear" if imp.opset < 20 else "linear") not in GRID_MODES:
        return "mode=%s" % at["mode"]
    if at.get("padding_mode", "zeros") not in PADDING_MODES:
        return "padding_mode=%s" % at["padding_mode"]
    return None


CHECKS["GridSample"] = _check_grid_sample


def _reflect(v: Tensor, lo: Tensor, hi: Tensor) -> Tensor:
    """v reflected by the borders lo and hi until it lies between them."""
    span = hi - lo
    below = v < lo
    d = below.select(lo - v, v - hi)  # the distance past the near border
    safe = (span > 0.0).select(span, span + 1.0)  # one voxel wide: no reflection to make
    k = (d / safe).floor()
    r = d - k * safe
    even = (k - (k * 0.5).floor() * 2.0) == 0.0
    # An even number of crossings ends moving away from the near border, an odd one from the
    # far border.
    from_low = below.select(even, even.logical_not())
    out = from_low.select(lo + r, hi - r)
    out = (span > 0.0).select(out, lo + v * 0.0)
    return ((v < lo) | (v > hi)).select(out, v)


@converter("GridSample")
def _grid_sample(ctx, node, ins, at):
    x = ctx.t(ins[0])
    grid = ctx.t(ins[1])
    mode = GRID_MODES[at.get("mode", "bilinear" if ctx.opset < 20 else "linear")]
    padding = at.get("padding_mode", "zeros")
    align = bool(at.get("align_corners", 0))
    r = x.ndim - 2
    if r < 1 or grid.ndim != r + 2:
        raise ImportError_("X of rank %d and grid of rank %d: expected (N, C, d1..dr) and "
                           "(N, o1..or, r)" % (x.ndim, grid.ndim))
    if grid.dtype not in FLOATS:
        raise ImportError_("grid must be float, not %s" % grid.dtype.name.lower())
    if x.dtype not in FLOATS:
        raise ImportError_("X must be float, not %s" % x.dtype.name.lower())
    xs, gs = ctx.shape(x), ctx.shape(grid)
    if isinstance(gs[-1], int) and gs[-1] != r:
        raise ImportError_("grid's last axis has %d coordinates for %d spatial axes" %
                           (gs[-1], r))
    spatial = xs[2:]
    ft = grid.dtype  # coordinates in the grid's precision, as the reference computes them
    sc = lambda v: ctx.scope.constant(np.array(v, ft.numpy))  # noqa: E731
    size = lambda d: (ctx.scope.dim_value(d).astype(ft) if isinstance(d, Dim)  # noqa: E731
                      else sc(d))
    # Spatial axis i of X reads grid coordinate r-1-i (the grid lists x, y, z...).
    per_axis = []
    for i, d in enumerate(spatial):
        c = r - 1 - i
        g = grid.slice([0] * (r + 1) + [c], list(gs[:-1]) + [c + 1]).reshape(gs[:-1])
        df = size(d)
        if align:
            v = (g + 1.0) / 2.0 * (df - 1.0)
            lo, hi = sc(0.0), df - 1.0
        else:
            v = ((g + 1.0) * df - 1.0) / 2.0
            lo, hi = sc(-0.5), df - 0.5
        if mode == "nearest":
            v = _round_half_even(v)
        # Coordinates past the borders move first (border: clamp, reflection: reflect)...
        # but not cubic ones with border padding: onnxruntime and PyTorch clamp its taps only
        # (ONNX's reference clamps the coordinate too; no conformance case tells them apart).
        if padding == "border" and mode != "cubic":
            v = v.maximum(sc(0.0)).minimum(df - 1.0)
        elif padding == "reflection":
            v = _reflect(v, lo, hi)
        taps: List[Tuple[Tensor, Optional[Tensor]]]
        if mode == "nearest":
            taps = [(v, None)]
        else:
            f = v.floor()
            t = v - f
            if mode == "linear":
                taps = [(f, 1.0 - t), (f + 1.0, t)]
            else:
                taps = [(f + float(k), _keys((t - float(k)).abs(), -0.75)) for k in (-1, 0, 1, 2)]
        # ...then so do the taps: zeros reads 0 outside, border clamps, reflection reflects.
        fixed = []
        for idx, w in taps:
            valid = None
            if padding == "zeros":
                valid = (idx >= 0.0) & (idx < df)
            elif padding == "reflection":
                idx = _reflect(idx, lo, hi)
            fixed.append((_clamped_index(ctx, idx, d), w, valid))
        per_axis.append(fixed)
    # X as (N * d1 * ... * dr, C): every tap of every output point is one row.
    rows = x.transpose([0] + list(range(2, r + 2)) + [1]).reshape([prod(xs[:1] + spatial),
                                                                    xs[1]])
    base = ctx.scope.iota(I64, gs[:-1], 0) * _i64(ctx, prod(spatial))
    out = None
    for combo in cartesian(*per_axis):
        flat, w, valid = base, None, None
        for i, (ii, wi, vi) in enumerate(combo):
            flat = flat + ii * _i64(ctx, prod(spatial[i + 1:]))
            if wi is not None:
                w = wi if w is None else w * wi
            if vi is not None:
                valid = vi if valid is None else valid & vi
        g = rows.take(flat, 0)  # (N, o1..or, C)
        if valid is not None:
            g = valid.reshape(gs[:-1] + [1]).select(g, 0.0)
        if w is not None:
            g = g * w.astype(x.dtype).reshape(gs[:-1] + [1])
        out = g if out is None else out + g
    return [Val(out.transpose([0, r + 1] + list(range(1, r + 1))))]


def _round_half_even(v: Tensor) -> Tensor:
    """Rounds to the nearest integer, halves to the even one (as numpy.rint)."""
    f = v.floor()
    d = v - f
    odd = (f - (f * 0.5).floor() * 2.0) != 0.0
    up = (d > 0.5) | ((d == 0.5) & odd)
    return up.select(f + 1.0, f)


# ---- AffineGrid ----------------------------------------------------------------------------

@converter("AffineGrid")
def _affine_grid(ctx, node, ins, at):
    """The grid (N, [D,] H, W, r) of theta (N, r, r + 1) applied to the normalized coordinates
    (x, y[, z], 1) of every output position: one dot_general. The size (N, C, [D,] H, W) may be
    run-time data (data-dependent sizes); N is checked against theta's at run time then. In
    f64, cast to theta's type at the end, as onnx's reference computes it. With align_corners
    an axis of size 1 sits at -1 as in onnx's reference (ONNX leaves it open: onnxruntime puts
    it at 1, PyTorch at 0)."""
    from ._ops_shape import _c, _dim_t, _entries, _require, _size
    if len(ins) < 2 or ins[0] is None or ins[1] is None:
        raise ImportError_("needs its inputs theta and size")
    theta = ctx.t(ins[0])
    if theta.dtype not in FLOATS:
        raise ImportError_("theta must be float, not %s" % theta.dtype.name.lower())
    ts = ctx.shape(theta)
    if theta.ndim != 3 or ts[1] not in (2, 3) or ts[2] != ts[1] + 1:
        raise ImportError_("theta has shape (%s); AffineGrid needs (N, 2, 3) or (N, 3, 4)" %
                           ", ".join(str(d) for d in ts))
    r = ts[1]
    align = bool(at.get("align_corners", 0))
    if ins[1].host is not None:
        size = ctx.ints(ins[1], "input 'size'")
        if len(size) != r + 2 or any(not isinstance(s, int) or s < 1 for s in size[2:]):
            raise ImportError_("size %s: expected (N, C, %s) of %d sizes >= 1 for theta (N, "
                               "%d, %d)" % (size, "D, H, W" if r == 3 else "H, W", r + 2, r,
                                            r + 1))
        if isinstance(size[0], int) and isinstance(ts[0], int) and size[0] != ts[0]:
            raise ImportError_("size's N is %d, theta's %d" % (size[0], ts[0]))
        if not (isinstance(size[0], int) and isinstance(ts[0], int)):
            ctx.scope.check(size[0], "==", ts[0], "%s: size's N must be theta's" % ctx.label)
        spatial = size[2:]
        values = [_c(ctx, s) if isinstance(s, int) else _dim_t(ctx, s) for s in spatial]
    else:
        entries = _entries(ctx, ins[1], "input 'size'")
        if len(entries) != r + 2:
            raise ImportError_("size has %d entries; theta (N, %d, %d) needs %d" %
                               (len(entries), r, r + 1, r + 2))
        _require(ctx, entries[0] == _dim_t(ctx, ts[0]), "size's N must be theta's")
        values = entries[2:]
        for v in values:
            _require(ctx, v >= 1, "every spatial size must be >= 1")
        spatial = [_size(v) for v in values]
    # The homogeneous coordinates (x, y[, z], 1) of every position, x along the last axis.
    count = prod(spatial)
    cols = []
    for i in reversed(range(r)):
        idx = ctx.scope.iota(I64, spatial, i).reshape([count]).astype(F64)
        n = values[i].astype(F64)
        if align:  # -1 + i * 2 / (n - 1); an axis of one position sits at -1
            step = (n > 1.0).select(2.0 / (n - 1.0), n * 0.0)
            cols.append(idx * step - 1.0)
        else:  # -1 + (2 i + 1) / n
            cols.append((idx * 2.0 + 1.0) / n - 1.0)
    cols.append(ctx.scope.constant(np.ones((), np.float64)).broadcast_to([count]))
    base = concatenate([c.reshape([count, 1]) for c in cols], 1)  # (count, r + 1)
    grid = theta.astype(F64).dot_general(base, [], [], [2], [1])  # (N, r, count)
    grid = grid.transpose(0, 2, 1).reshape([ts[0]] + spatial + [r])
    return [Val(grid.astype(theta.dtype))]
