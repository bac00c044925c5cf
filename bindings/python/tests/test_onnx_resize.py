"""ONNX import of the resampling ops (Resize, Upsample, GridSample, ...), from the outside in:
models built with onnx.helper, imported (with fixed, symbolic batch and symbolic spatial sizes),
run, and compared with onnxruntime on random inputs; and ONNX's own node conformance cases of
these ops, as they are (scales and sizes as graph inputs: data-dependent sizes) and with those
inputs turned into initializers (sizes known at import)."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnx_node_suite as suite
from shapepoly import onnx as spx
from shapepoly.onnx import models

F = TensorProto.FLOAT
RNG = np.random.default_rng(2024)
OPS = ("Resize", "Upsample", "GridSample")


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def model(nodes, inputs, inits=(), opset=19):
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(*i) for i in inputs],
                          [helper.make_tensor_value_info("y", F, None)],
                          [numpy_helper.from_array(np.asarray(v), n) for n, v in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def check(m, feeds_list, rtol=1e-4, atol=1e-5, **kw):
    """Imports `m` once (kw to import_model), compares it with onnxruntime on each feeds dict;
    returns the output's symbolic shape (texts). onnxruntime reads a copy whose first input's
    sizes are all free (`dynamic` makes fixed ones symbolic for the import only)."""
    free = onnx.ModelProto()
    free.CopyFrom(m)
    for inp in free.graph.input[:1]:
        for k, d in enumerate(inp.type.tensor_type.shape.dim):
            d.dim_param = "%s_%d" % (inp.name, k)
    sess = models.ort_session(free, threads=1)
    shapes = {}
    with spx.import_model(m, shapes=shapes, **kw) as p, p.runtime() as rt:
        for feeds in feeds_list:
            want = sess.run(None, feeds)[0]
            got = rt(**feeds)["y"]
            assert got.shape == want.shape, (got.shape, want.shape)
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    return shapes["y"]


def resize(x_shape, attrs, scales=None, sizes=None, roi=None, axes=None, opset=19):
    """A Resize model of x (its shape may hold names) with constant scales/sizes/roi."""
    inits = [("roi", np.array(roi if roi is not None else [], np.float32)),
             ("scales", np.array(scales if scales is not None else [], np.float32))]
    names = ["x", "roi", "scales"]
    if sizes is not None:
        inits.append(("sizes", np.array(sizes, np.int64)))
        names.append("sizes")
    if axes is not None:
        attrs = dict(attrs, axes=axes)
    node = helper.make_node("Resize", names, ["y"], **attrs)
    return model([node], [("x", F, x_shape)], inits, opset)


def feeds(*shapes):
    return [{"x": rand(*s)} for s in shapes]


# ---- Resize against onnxruntime ------------------------------------------------------------

COORDS = ["half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
          "asymmetric"]
SCALES = [[1, 1, 2, 3], [1, 1, 0.5, 0.75], [1, 1, 1.7, 0.6], [1, 1, 3, 0.25]]


@pytest.mark.parametrize("cmode", COORDS)
@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
def test_resize_scales(mode, cmode):
    for scales in SCALES:
        if cmode == "align_corners" and any(s * n != int(s * n) for s, n in
                                            zip(scales, (2, 3, 5, 7))):
            continue  # a fractional width: onnxruntime and ONNX's reference differ (below)
        if cmode == "half_pixel_symmetric" and mode == "nearest" and scales[3] == 0.6:
            continue  # a source at 0.5 + 2e-7 (f64) or 0.5 (onnxruntime's f32): a tie or not
        m = resize([2, 3, 5, 7], {"mode": mode, "coordinate_transformation_mode": cmode},
                   scales=scales)
        check(m, feeds((2, 3, 5, 7)))


@pytest.mark.parametrize("nmode", ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"])
@pytest.mark.parametrize("cmode", COORDS)
def test_resize_nearest_modes_with_sizes(nmode, cmode):
    # Sizes with ties (4 -> 8 and 6 -> 4 put sources at halves) and size-1 axes.
    for x_shape, sizes in (((1, 2, 4, 6), [1, 2, 8, 4]), ((1, 1, 1, 5), [1, 1, 3, 1]),
                           ((2, 1, 5, 3), [2, 1, 1, 7])):
        m = resize(list(x_shape), {"mode": "nearest", "coordinate_transformation_mode": cmode,
                                   "nearest_mode": nmode}, sizes=sizes)
        check(m, feeds(x_shape))


@pytest.mark.parametrize("mode", ["linear", "cubic"])
def test_resize_sizes_cubic_options_and_size_one(mode):
    # onnxruntime takes exclude_outside for cubic (and antialiased linear) only.
    exclude = int(mode == "cubic")
    for attrs in ({}, {"cubic_coeff_a": -0.5}, {"exclude_outside": exclude},
                  {"coordinate_transformation_mode": "align_corners"},
                  {"coordinate_transformation_mode": "pytorch_half_pixel"},
                  {"coordinate_transformation_mode": "asymmetric", "exclude_outside": exclude}):
        for x_shape, sizes in (((1, 2, 4, 4), [1, 2, 3, 9]), ((2, 1, 1, 6), [2, 1, 4, 1]),
                               ((1, 1, 7, 2), [1, 1, 2, 2])):
            m = resize(list(x_shape), dict(attrs, mode=mode), sizes=sizes)
            check(m, feeds(x_shape))


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
def test_resize_tf_crop_and_resize(mode):
    attrs = {"mode": mode, "coordinate_transformation_mode": "tf_crop_and_resize",
             "extrapolation_value": -7.5}
    # (No source exactly at a half: f64 and onnxruntime's f32 would round it differently.)
    for roi, sizes in (([0, 0, 0.15, 0.1, 1, 1, 0.8, 0.9], [1, 2, 3, 6]),
                       ([0, 0, -0.3, 0.4, 1, 1, 1.2, 0.6], [1, 2, 5, 1]),
                       ([0, 0, 0.5, 0, 1, 1, 0.5, 1], [1, 2, 1, 4])):
        check(resize([1, 2, 4, 5], attrs, sizes=sizes, roi=roi), feeds((1, 2, 4, 5)))
    # With axes: roi covers the listed axes only.
    check(resize([1, 2, 4, 5], attrs, sizes=[6, 3], roi=[0.1, 0.25, 0.9, 1.1], axes=[3, 2]),
          feeds((1, 2, 4, 5)))


def test_resize_axes_and_keep_aspect_ratio():
    for policy in ("stretch", "not_larger", "not_smaller"):
        for sizes in ([7, 3], [2, 9], [1, 1]):
            for mode in ("nearest", "linear"):
                m = resize([1, 2, 4, 6], {"mode": mode, "keep_aspect_ratio_policy": policy},
                           sizes=sizes, axes=[2, 3])
                check(m, feeds((1, 2, 4, 6)))
    check(resize([1, 2, 4, 6], {"mode": "linear"}, scales=[2.0, 0.5], axes=[-1, -2]),
          feeds((1, 2, 4, 6)))
    # Three resized axes at once (trilinear); nearest on the channels too (onnxruntime's
    # linear resizes only spatial axes).
    check(resize([1, 2, 3, 4, 5], {"mode": "linear"}, scales=[1, 1, 0.5, 1.5, 2]),
          feeds((1, 2, 3, 4, 5)))
    check(resize([1, 2, 3, 4, 5], {"mode": "nearest"}, scales=[1, 2, 0.5, 1.5, 2]),
          feeds((1, 2, 3, 4, 5)))


def test_resize_integer_data_nearest():
    m = resize([1, 1, 3, 4], {"mode": "nearest"}, scales=[1, 1, 2, 1.5])
    m.graph.input[0].type.tensor_type.elem_type = TensorProto.INT32
    m.graph.output[0].type.tensor_type.elem_type = TensorProto.INT32
    sess = models.ort_session(m, threads=1)
    x = RNG.integers(-100, 100, (1, 1, 3, 4)).astype(np.int32)
    with spx.import_model(m) as p, p.runtime() as rt:
        np.testing.assert_array_equal(rt(x=x)["y"], sess.run(None, {"x": x})[0])


# ---- Symbolic sizes ------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
def test_resize_symbolic_batch(mode):
    m = resize([2, 3, 5, 4], {"mode": mode}, scales=[1, 1, 1.5, 0.5])
    shape = check(m, feeds((1, 3, 5, 4), (4, 3, 5, 4)), dynamic="batch")
    assert shape == ("batch", "3", "7", "2")


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("cmode", COORDS)
def test_resize_symbolic_spatial_integer_scales(mode, cmode):
    if cmode == "half_pixel_symmetric" and mode == "cubic":
        pytest.skip("onnxruntime: cubic has no half_pixel_symmetric")
    m = resize(["N", 2, "H", "W"], {"mode": mode, "coordinate_transformation_mode": cmode},
               scales=[1, 1, 2, 0.5])
    # align_corners divides by the unfloored width W / 2, as ONNX's reference does, where
    # onnxruntime divides by W // 2: they agree for an even W.
    odd = [] if cmode == "align_corners" else [(1, 2, 3, 7), (1, 2, 4, 1)]
    shape = check(m, feeds((1, 2, 1, 4), (2, 2, 5, 6), *odd))
    assert shape[0] == "N" and shape[2] == "2*H"
    assert shape[3].replace(" ", "") in ("floordiv(W,2)", "W//2"), shape


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
def test_resize_symbolic_spatial_sizes(mode):
    # Constant sizes on symbolic input axes: the scale is computed at run time.
    for cmode in ("half_pixel", "align_corners", "asymmetric", "tf_crop_and_resize"):
        m = resize(["N", 2, "H", "W"], {"mode": mode, "coordinate_transformation_mode": cmode},
                   sizes=[2, 2, 6, 1], roi=[0, 0, 0.1, 0.2, 1, 1, 0.7, 0.9])
        shape = check(m, [{"x": rand(2, 2, h, w)} for h, w in ((4, 4), (1, 9), (7, 2))])
        assert shape == ("2", "2", "6", "1")


def test_resize_sizes_from_the_input_shape():
    # sizes = shape(x)[2:] * 2, the way exporters write it: a dim expression, no run-time size.
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Slice", ["s", "two", "four"], ["hw"]),
             helper.make_node("Mul", ["hw", "k"], ["hw2"]),
             helper.make_node("Slice", ["s", "zero", "two"], ["nc"]),
             helper.make_node("Concat", ["nc", "hw2"], ["sizes"], axis=0),
             helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="linear")]
    m = model(nodes, [("x", F, ["N", 3, "H", "W"])],
              [("zero", np.array([0])), ("two", np.array([2])), ("four", np.array([4])),
               ("k", np.array([2, 3]))])
    shape = check(m, feeds((1, 3, 4, 5), (2, 3, 1, 2)))
    assert shape == ("N", "3", "2*H", "3*W")


def test_resize_runtime_sizes_and_scales():
    # sizes/scales as graph inputs: the output sizes are data-dependent variables.
    node = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="linear")
    m = model([node], [("x", F, [1, 2, "H", "W"]), ("sizes", TensorProto.INT64, [4])])
    check(m, [{"x": rand(1, 2, 4, 5), "sizes": np.array([1, 2, 7, 3], np.int64)},
              {"x": rand(1, 2, 3, 3), "sizes": np.array([1, 2, 2, 8], np.int64)}])
    node = helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="nearest")
    m = model([node], [("x", F, [1, 2, "H", "W"]), ("scales", F, [4])])
    check(m, [{"x": rand(1, 2, 4, 5), "scales": np.array([1, 1, 1.5, 0.4], np.float32)},
              {"x": rand(1, 2, 3, 3), "scales": np.array([1, 1, 3, 2], np.float32)}])


def test_resize_refusals_name_the_problem():
    m = resize(["N", 2, "H", "W"], {"mode": "linear"}, scales=[1, 1, 0.6, 2])
    with pytest.raises(spx.OnnxImportError, match=r"axis 2 .*symbolic size H and scale 0\.6"):
        spx.import_model(m)
    m = resize([1, 2, 4, 4], {"mode": "linear", "coordinate_transformation_mode": "nope"},
               scales=[1, 1, 2, 2])
    with pytest.raises(spx.UnsupportedOps, match="coordinate_transformation_mode=nope"):
        spx.import_model(m)
    m = resize([1, 2, "H", 4], {"mode": "linear", "antialias": 1}, sizes=[1, 2, 2, 2])
    with pytest.raises(spx.OnnxImportError, match="antialias=1 on axis 2"):
        spx.import_model(m)
    m = resize([1, 2, "H", 4], {"keep_aspect_ratio_policy": "not_larger"}, sizes=[3, 3],
               axes=[2, 3])
    m2 = resize([1, 2, 4, 4], {"mode": "linear"}, scales=[1, 1, 2, 2])
    m2.graph.input[0].type.tensor_type.elem_type = TensorProto.INT32
    with pytest.raises(spx.OnnxImportError, match="only nearest resizes integer"):
        spx.import_model(m2)
    # not_larger on a symbolic axis: computed at run time (a data-dependent size), not refused.
    check(m, [{"x": rand(1, 2, h, 4)} for h in (2, 8)])


# ---- Antialias and opsets 10 and older -----------------------------------------------------

@pytest.mark.parametrize("mode", ["linear", "cubic"])
def test_resize_antialias_matches_the_reference(mode):
    # onnxruntime weighs the taps past the edges differently (it drops them, the ONNX
    # reference repeats the edge pixel), so the interior is compared with onnxruntime and
    # everything with the reference.
    from onnx.reference import ReferenceEvaluator
    for scales in ([1, 1, 0.5, 0.3], [1, 1, 0.8, 1.5], [1, 1, 0.25, 1]):
        m = resize([1, 2, 8, 10], {"mode": mode, "antialias": 1}, scales=scales)
        x = rand(1, 2, 8, 10)
        want = ReferenceEvaluator(m).run(None, {"x": x})[0]
        with spx.import_model(m) as p, p.runtime() as rt:
            got = rt(x=x)["y"]
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode", ["linear", "cubic"])
def test_resize_antialias_with_run_time_scales_and_sizes(mode):
    """Scales or sizes as graph inputs: one program whose filter has the taps of the smallest
    scale with a non-empty output (1 / n); each run's scale stretches it (or not, >= 1)."""
    from onnx.reference import ReferenceEvaluator
    for name, values in (("scales", ([1, 1, 0.5, 0.3], [1, 1, 0.8, 1.5], [1, 1, 0.125, 1],
                                     [1, 1, 1, 0.1])),
                         ("sizes", ([1, 2, 3, 4], [1, 2, 8, 1], [1, 2, 1, 13]))):
        names = ["x", "", "scales"] if name == "scales" else ["x", "", "", "sizes"]
        node = helper.make_node("Resize", names, ["y"], mode=mode, antialias=1)
        m = model([node], [("x", F, [1, 2, 8, 10]),
                           (name, F if name == "scales" else TensorProto.INT64, [4])])
        with spx.import_model(m) as p, p.runtime() as rt:
            for v in values:
                feeds = {"x": rand(1, 2, 8, 10),
                         name: np.array(v, np.float32 if name == "scales" else np.int64)}
                want = ReferenceEvaluator(m).run(None, feeds)[0]
                got = rt(**feeds)["y"]
                assert got.shape == want.shape
                np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_resize_antialias_run_time_scale_refusals():
    node = helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="cubic", antialias=1,
                            name="rs")
    m = model([node], [("x", F, [1, 1, 70, 4]), ("scales", F, [4])])
    with pytest.raises(spx.OnnxImportError, match="'rs'.*axis 2 of size 70.*280 taps, over "
                       "the cap of 256"):
        spx.import_model(m)
    m = model([node], [("x", F, [1, 1, "H", 4]), ("scales", F, [4])])
    with pytest.raises(spx.OnnxImportError, match="'rs'.*axis 2.*size H is symbolic"):
        spx.import_model(m)


def test_resize_opset_10_and_upsample():
    for mode in ("nearest", "linear"):
        for scales in ([1, 1, 2, 3], [1, 1, 0.5, 0.6], [1, 1, 1.5, 0.75]):
            node = helper.make_node("Resize", ["x", "scales"], ["y"], mode=mode)
            m = model([node], [("x", F, [2, 3, 5, 7])],
                      [("scales", np.array(scales, np.float32))], opset=10)
            check(m, feeds((2, 3, 5, 7)))
        for scales in ([1, 1, 2, 3], [1, 1, 1.5, 2.5]):
            node = helper.make_node("Upsample", ["x", "scales"], ["y"], mode=mode)
            m = model([node], [("x", F, [2, 3, 5, 7])],
                      [("scales", np.array(scales, np.float32))], opset=9)
            check(m, feeds((2, 3, 5, 7)))
    node = helper.make_node("Upsample", ["x"], ["y"], mode="nearest", scales=[1.0, 1.0, 2.0, 3.0])
    m = model([node], [("x", F, ["N", 3, "H", "W"])], opset=7)
    assert check(m, feeds((2, 3, 5, 7), (1, 3, 2, 1))) == ("N", "3", "2*H", "3*W")


# ---- GridSample ----------------------------------------------------------------------------

def grid_sample(x_shape, g_shape, attrs, opset=20):
    node = helper.make_node("GridSample", ["x", "grid"], ["y"], **attrs)
    return model([node], [("x", F, x_shape), ("grid", F, g_shape)], opset=opset)


def grid(*shape):
    # Inside and past the borders, with some points on exact pixel centres and halves.
    g = RNG.uniform(-1.4, 1.4, shape).astype(np.float32)
    g.reshape(-1)[::7] = np.round(g.reshape(-1)[::7] * 4) / 4
    return g


@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["linear", "nearest", "cubic"])
@pytest.mark.parametrize("align", [0, 1])
def test_grid_sample_2d(mode, padding, align):
    m = grid_sample(["N", 3, "H", "W"], ["N", "h", "w", 2],
                    {"mode": mode, "padding_mode": padding, "align_corners": align})
    cases = [((2, 3, 4, 5), (2, 6, 3, 2)), ((1, 3, 1, 7), (1, 2, 5, 2)),
             ((3, 3, 6, 1), (3, 1, 1, 2))]
    shape = check(m, [{"x": rand(*xs), "grid": grid(*gs)} for xs, gs in cases])
    assert shape == ("N", "3", "h", "w")


@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["linear", "nearest"])
def test_grid_sample_3d(mode, padding):
    m = grid_sample([2, 2, 3, 4, 5], [2, 2, 3, 4, 3],
                    {"mode": mode, "padding_mode": padding, "align_corners": 0})
    check(m, [{"x": rand(2, 2, 3, 4, 5), "grid": grid(2, 2, 3, 4, 3)}])


def test_grid_sample_cubic_border_pads_the_taps_only():
    # onnxruntime (and PyTorch) clamp each cubic tap, not the coordinate first as ONNX's
    # reference does; no conformance case tells them apart, onnxruntime is followed.
    m = grid_sample([1, 1, 1, 4], [1, 1, 1, 2], {"mode": "cubic", "padding_mode": "border"})
    x = np.array([0, 1, 2, 10], np.float32).reshape(1, 1, 1, 4)
    check(m, [{"x": x, "grid": np.array([1.2, 0], np.float32).reshape(1, 1, 1, 2)}])


def test_grid_sample_opset_16_names():
    m = grid_sample([1, 2, 4, 4], [1, 3, 3, 2], {"mode": "bicubic", "padding_mode": "border"},
                    opset=16)
    check(m, [{"x": rand(1, 2, 4, 4), "grid": grid(1, 3, 3, 2)}])


# ---- ONNX's node conformance cases ---------------------------------------------------------

CASES = [c for c in suite.cases() if suite.op_family(c) in OPS]
# What stays refused: element types shapepoly does not have.
ALLOWED_REFUSALS = ("element type", "which shapepoly does not have")


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_node_suite_case(case):
    outcome, detail = suite.run(case)
    if outcome == "refused" and any(r in detail for r in ALLOWED_REFUSALS):
        pytest.skip(detail)
    assert outcome == "pass", detail


def _frozen(case):
    """The case with every input but the first made an initializer holding its value in the
    first data set (so scales, sizes and roi are known at import); None if there are none."""
    m = onnx.ModelProto()
    m.CopyFrom(case.model)
    g = m.graph
    inits = {i.name for i in g.initializer}
    names = [i.name for i in g.input if i.name not in inits]
    if len(names) < 2 or not all(isinstance(a, np.ndarray) for a in case.data_sets[0][0]):
        return None
    values = dict(zip(names, case.data_sets[0][0]))
    keep = [i for i in g.input if i.name == names[0]]
    for name in names[1:]:
        g.initializer.append(numpy_helper.from_array(values[name], name))
    del g.input[:]
    g.input.extend(keep)
    return m, values[names[0]], case.data_sets[0][1][0]


FROZEN = [c for c in CASES if suite.op_family(c) in ("Resize", "Upsample")]


@pytest.mark.parametrize("case", FROZEN, ids=[c.name for c in FROZEN])
def test_node_suite_case_with_constant_sizes(case):
    frozen = _frozen(case)
    if frozen is None:
        pytest.skip("no inputs to freeze")
    m, x, want = frozen
    try:
        p = spx.import_model(m)
    except spx.OnnxImportError as e:
        if any(r in str(e) for r in ALLOWED_REFUSALS):
            pytest.skip(str(e))
        raise
    with p, p.runtime() as rt:
        got = list(rt(**{p.inputs[0].name: x}).values())[0]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=max(case.rtol, 1e-4), atol=max(case.atol, 1e-5))


# ---- AffineGrid ----------------------------------------------------------------------------

def affine_grid(r, size=None, align=0, n="N"):
    """AffineGrid of theta (n, r, r + 1); size an initializer when given, else an input."""
    node = helper.make_node("AffineGrid", ["theta", "size"], ["y"], name="ag",
                            align_corners=align)
    inputs = [("theta", F, [n, r, r + 1])]
    inits = []
    if size is None:
        inputs.append(("size", TensorProto.INT64, [r + 2]))
    else:
        inits.append(("size", np.array(size, np.int64)))
    return model([node], inputs, inits, opset=20)


@pytest.mark.parametrize("align", [0, 1])
@pytest.mark.parametrize("r", [2, 3])
def test_affine_grid_size_from_run_time_data(r, align):
    """One program; each run's size input gives other output sizes (1 included: an axis of one
    position). Oracles: onnx's reference (2-D and 3-D) and onnxruntime (2-D; but with
    align_corners it puts an axis of size 1 at 1, the reference at -1)."""
    from onnx.reference import ReferenceEvaluator
    m = affine_grid(r, align=align)
    sizes = ([[2, 3, 5, 6], [1, 1, 1, 4], [3, 2, 7, 1]] if r == 2 else
             [[2, 3, 4, 5, 6], [1, 1, 1, 3, 2]])
    with spx.import_model(m) as p, p.runtime() as rt:
        for s in sizes:
            feeds = {"theta": rand(s[0], r, r + 1), "size": np.array(s, np.int64)}
            got = rt(**feeds)["y"]
            want = ReferenceEvaluator(m).run(None, feeds)[0]
            assert got.shape == want.shape == tuple([s[0]] + s[2:] + [r])
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
            if r == 2 and not (align and 1 in s[2:]):
                want = models.ort_session(m, threads=1).run(None, feeds)[0]
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        with pytest.raises(Exception, match="ag.*size's N must be theta's"):
            rt(theta=rand(2, r, r + 1), size=np.array([3, 1] + [2] * r, np.int64))


def test_affine_grid_constant_size_and_refusals():
    m = affine_grid(2, size=[2, 3, 4, 5], n=2)
    with spx.import_model(m) as p, p.runtime() as rt:
        feeds = {"theta": rand(2, 2, 3)}
        want = models.ort_session(m, threads=1).run(None, feeds)[0]
        np.testing.assert_allclose(rt(**feeds)["y"], want, rtol=1e-5, atol=1e-5)
    with pytest.raises(spx.OnnxImportError, match="'ag'.*size's N is 3, theta's 2"):
        spx.import_model(affine_grid(2, size=[3, 3, 4, 5], n=2))
    with pytest.raises(spx.OnnxImportError, match="'ag'.*size \\[2, 3, 0, 5\\]"):
        spx.import_model(affine_grid(2, size=[2, 3, 0, 5], n=2))
    with pytest.raises(spx.OnnxImportError, match="'ag'.*theta has shape \\(N, 2, 4\\)"):
        m = affine_grid(2, size=[2, 3, 4, 5])
        m.graph.input[0].type.tensor_type.shape.dim[2].dim_value = 4
        spx.import_model(m)
