"""ONNX import of the ops built as composites of library ops (issue 37): blocked
QuantizeLinear/DequantizeLinear (block_size), ConvTranspose with an output_shape past the full
transposed convolution, MaxPool's Indices output, Col2Im and DeformConv. From the outside in:
models built with onnx.helper, imported (with symbolic sizes where the op allows), run, and
compared with onnxruntime (skipped when it is missing) or the onnx wheel's reference evaluator;
and the refusals, which name the node and the attribute."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from shapepoly import onnx as spx
from shapepoly.onnx import models

F, I64, U8, I8 = TensorProto.FLOAT, TensorProto.INT64, TensorProto.UINT8, TensorProto.INT8
RNG = np.random.default_rng(37)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def model(nodes, inputs, inits=(), opset=21, outputs=(("y", F),)):
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(*i) for i in inputs],
                          [helper.make_tensor_value_info(o, t, None) for o, t in outputs],
                          [numpy_helper.from_array(np.asarray(v), n) for n, v in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10
    return m


def ort(m, feeds):
    pytest.importorskip("onnxruntime")
    return models.ort_session(m, threads=1).run(None, feeds)


def reference(m, feeds):
    return ReferenceEvaluator(m).run(None, feeds)


def check(m, feeds_list, oracle=ort, atol=1e-5, **kw):
    """Imports m once (kw to import_model) and compares every output with the oracle on each
    of the feeds (one plan per distinct shape)."""
    with spx.import_model(m, **kw) as p, p.runtime() as rt:
        for feeds in feeds_list:
            want = oracle(m, feeds)
            got = list(rt(**feeds).values())
            assert len(got) == len(want)
            for g, w in zip(got, want):
                assert g.shape == w.shape, (g.shape, w.shape)
                assert g.dtype == w.dtype, (g.dtype, w.dtype)
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=atol)


def refused(m, *fragments):
    with pytest.raises(spx.OnnxImportError) as e:
        spx.import_model(m)
    for f in fragments:
        assert f in str(e.value), (f, str(e.value))


# ---- QuantizeLinear / DequantizeLinear with block_size -----------------------------------

@pytest.mark.parametrize("block,axis", [(2, 1), (3, 1), (4, -1), (2, 0)])
def test_blocked_quantize_dequantize_symbolic_rows(block, axis):
    """x (n, 7) with scales and zero points (n, ceil(7 / block)) as inputs (or along axis 0:
    (ceil(n / block), 7)); the last block is partial."""
    d = 7
    ax = axis % 2
    q = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=axis, block_size=block)
    dq = helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=axis,
                          block_size=block)
    sshape = ["n", -(-d // block)] if ax == 1 else [3, d]
    m = model([q, dq], [("x", F, ["n", d]), ("s", F, sshape), ("z", U8, sshape)],
              outputs=(("q", U8), ("y", F)))
    feeds = []
    for n in ((1, 4, 5) if ax == 1 else (5, 6)):
        rows = n if ax == 1 else -(-n // block)
        shape = (rows, -(-d // block)) if ax == 1 else (rows, d)
        if ax == 0:
            m.graph.input[1].type.tensor_type.shape.dim[0].dim_value = rows
            m.graph.input[2].type.tensor_type.shape.dim[0].dim_value = rows
        feeds.append({"x": rand(n, d) * 20, "s": np.abs(rand(*shape)) + 0.1,
                      "z": RNG.integers(0, 255, shape).astype(np.uint8)})
    if ax == 0:  # the scale's rows are ceil(n / block): one model per row count
        for f in feeds:
            for i in (1, 2):
                m.graph.input[i].type.tensor_type.shape.dim[0].dim_value = f["s"].shape[0]
            check(m, [f], oracle=reference)
        return
    check(m, feeds, oracle=ort)


def test_blocked_dequantize_int8_matches_onnxruntime():
    x = RNG.integers(-128, 127, (2, 10, 3)).astype(np.int8)
    s = np.abs(rand(2, 3, 3)) + 0.05
    node = helper.make_node("DequantizeLinear", ["x", "s"], ["y"], axis=1, block_size=4)
    m = model([node], [("x", I8, [2, 10, 3]), ("s", F, [2, 3, 3])])
    check(m, [{"x": x, "s": s}], oracle=ort)


def test_blocked_quantization_refusals():
    node = helper.make_node("DequantizeLinear", ["x", "s"], ["y"], name="dq", axis=1,
                            block_size=2)
    refused(model([node], [("x", U8, [2, 6]), ("s", F, [2, 4])]), "'dq'", "x_scale",
            "block_size=2", "ceil(6 / 2) = 3")
    refused(model([node], [("x", U8, [2, 6]), ("s", F, [3])]), "'dq'", "x_scale has rank 1")
    refused(model([node], [("x", U8, [2, 6]), ("s", F, [3, 3])]), "'dq'",
            "x_scale has shape (3, 3)", "match x's (2, 6) on every axis but 1")
    neg = helper.make_node("QuantizeLinear", ["x", "s"], ["y"], name="q", block_size=-1)
    refused(model([neg], [("x", F, [2, 6]), ("s", F, [2, 3])], outputs=(("y", U8),)),
            "'q'", "block_size=-1")


def test_blocked_symbolic_size_is_checked_at_run_time():
    """x (n, 3) blocked by 2 along axis 0 with a (3, 3) scale: n in {5, 6} runs, n = 7 (four
    blocks) fails the run naming the node."""
    node = helper.make_node("DequantizeLinear", ["x", "s"], ["y"], name="dq", axis=0,
                            block_size=2)
    m = model([node], [("x", I8, ["n", 3]), ("s", F, [3, 3])])
    s = np.abs(rand(3, 3)) + 0.1
    with spx.import_model(m) as p, p.runtime() as rt:
        x = RNG.integers(-128, 127, (5, 3)).astype(np.int8)
        np.testing.assert_allclose(rt(x=x, s=s)["y"], x * np.repeat(s, 2, 0)[:5], rtol=1e-6)
        with pytest.raises(Exception, match="dq"):
            rt(x=RNG.integers(-128, 127, (7, 3)).astype(np.int8), s=s)


# ---- ConvTranspose with output_shape past the full transposed convolution ---------------

@pytest.mark.parametrize("auto_pad", ["NOTSET", "SAME_UPPER", "SAME_LOWER"])
@pytest.mark.parametrize("out", [[10, 8], [11, 8], [9, 8], [8, 6]])
def test_conv_transpose_output_shape_larger_pads_with_bias(auto_pad, out):
    """x (1, 2, 3, 3), w (2, 3, 3, 3), strides (3, 2): the full output is 9 x 7; a larger
    output_shape (by less than the stride) adds rows/columns of bias at the end, as
    onnxruntime does in every auto_pad mode (onnx's reference for NOTSET; a smaller one
    crops by the pads auto_pad splits)."""
    w, b = rand(2, 3, 3, 3), rand(3)
    node = helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], strides=[3, 2],
                            output_shape=out, auto_pad=auto_pad)
    m = model([node], [("x", F, [1, 2, 3, 3])], [("w", w), ("b", b)], opset=18)
    check(m, [{"x": rand(1, 2, 3, 3)}], oracle=ort)
    if auto_pad == "NOTSET" and out[0] >= 9 and out[1] >= 7:  # the reference needs pads 0
        check(m, [{"x": rand(1, 2, 3, 3)}], oracle=reference)


def test_conv_transpose_output_shape_past_the_stride_is_refused():
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="ct", strides=[3, 2],
                            output_shape=[12, 7])
    m = model([node], [("x", F, [1, 2, 3, 3])], [("w", rand(2, 3, 3, 3))], opset=18)
    refused(m, "'ct'", "output_shape [12, 7] is 3 more", "spatial axis 0", "stride - 1 = 2")


# ---- MaxPool's Indices output ----------------------------------------------------------

POOLS = [  # (spatial input sizes of x's shape, attributes)
    (["h", "w"], dict(kernel_shape=[2, 2])),
    (["h", "w"], dict(kernel_shape=[3, 2], strides=[2, 1], pads=[1, 0, 1, 1])),
    (["h", "w"], dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)),
    (["h", "w"], dict(kernel_shape=[2, 3], dilations=[2, 1], storage_order=1)),
    (["h", "w"], dict(kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER",
                      storage_order=1)),
    (["h", "w"], dict(kernel_shape=[2, 2], strides=[2, 2], auto_pad="SAME_LOWER")),
    (["h"], dict(kernel_shape=[3], strides=[2], pads=[2, 1])),
    ([5, 6, 4], dict(kernel_shape=[2, 3, 2], strides=[1, 2, 2], storage_order=1)),
]


@pytest.mark.parametrize("spatial,attrs", POOLS)
def test_max_pool_indices_symbolic_against_onnxruntime(spatial, attrs):
    node = helper.make_node("MaxPool", ["x"], ["y", "i"], **attrs)
    m = model([node], [("x", F, ["n", 3] + spatial)], opset=12,
              outputs=(("y", F), ("i", I64)))
    sizes = [(2, 7, 9), (1, 8, 5), (3, 4, 4)] if spatial[0] == "h" else [(2, 0, 0)]
    feeds = []
    for n, h, w in sizes:
        shape = [n, 3] + ([h, w][:len(spatial)] if spatial[0] == "h" else spatial)
        # few distinct values: ties everywhere, the first maximum must win
        feeds.append({"x": RNG.integers(-2, 3, shape).astype(np.float32)})
    check(m, feeds, oracle=ort)


def test_max_pool_indices_nan_and_infinities():
    """A NaN propagates (Y is the Y of MaxPool without Indices) and its index is the window's
    first NaN; otherwise the first maximum; -inf everywhere still gives an in-bounds index
    (never one of the padding). Oracle: the windows in numpy."""
    x = np.array([[[[np.nan, 1, 2, -np.inf], [0, np.nan, -np.inf, -np.inf],
                    [3, 3, np.nan, 1], [-1, 7, 2, np.nan]]]], np.float32)
    pads = [1, 1, 0, 0]
    node = helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2], pads=pads)
    m = model([node], [("x", F, [1, 1, 4, 4])], opset=12, outputs=(("y", F), ("i", I64)))
    want_y, want_i = np.zeros((4, 4), np.float32), np.zeros((4, 4), np.int64)
    for r in range(4):
        for c in range(4):
            taps = [(h, w) for h in (r - 1, r) for w in (c - 1, c)
                    if 0 <= h < 4 and 0 <= w < 4]
            vals = [x[0, 0, h, w] for h, w in taps]
            nan = [k for k, v in enumerate(vals) if np.isnan(v)]
            k = nan[0] if nan else int(np.argmax(vals))
            want_y[r, c], want_i[r, c] = vals[k], taps[k][0] * 4 + taps[k][1]
    single = model([helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], pads=pads)],
                   [("x", F, [1, 1, 4, 4])], opset=12)
    with spx.import_model(m) as p, p.runtime() as rt, spx.import_model(single) as p1, \
            p1.runtime() as rt1:
        out = rt(x=x)
        np.testing.assert_array_equal(out["y"][0, 0], want_y)
        np.testing.assert_array_equal(out["i"][0, 0], want_i)
        np.testing.assert_array_equal(out["y"], rt1(x=x)["y"])


def test_max_pool_bad_storage_order_is_refused():
    node = helper.make_node("MaxPool", ["x"], ["y", "i"], name="mp", kernel_shape=[2],
                            storage_order=2)
    refused(model([node], [("x", F, [1, 1, 4])], opset=12, outputs=(("y", F), ("i", I64))),
            "'mp'", "storage_order=2")


# ---- Col2Im --------------------------------------------------------------------------------

def col2im_model(image=None, block=None, rank=2, **attrs):
    """Col2Im of x (n, c, l); image_shape and block_shape constants (initializers) when given,
    else graph inputs (run-time data)."""
    node = helper.make_node("Col2Im", ["x", "image", "block"], ["y"], name="c2i", **attrs)
    inputs, inits = [("x", F, ["n", "c", "l"])], []
    for name, v in (("image", image), ("block", block)):
        if v is None:
            inputs.append((name, I64, [rank]))
        else:
            inits.append((name, np.array(v, np.int64)))
    return model([node], inputs, inits, opset=18)


def col2im_feeds(n, c, image, block, strides=None, dilations=None, pads=None):
    r = len(image)
    strides, dilations, pads = strides or [1] * r, dilations or [1] * r, pads or [0] * 2 * r
    blocks = 1
    for i in range(r):
        eff = (block[i] - 1) * dilations[i] + 1
        blocks *= (image[i] + pads[i] + pads[r + i] - eff) // strides[i] + 1
    return {"x": rand(n, c * int(np.prod(block)), blocks)}


COL2IM = [  # (image, block, attributes)
    ([5, 5], [1, 5], {}),
    ([5, 6], [2, 3], dict(strides=[2, 1], pads=[1, 0, 1, 2])),
    ([7, 6], [3, 2], dict(dilations=[2, 3], pads=[1, 1, 0, 2], strides=[1, 2])),
    ([4, 5, 3], [2, 2, 1], dict(strides=[1, 2, 1])),
    ([9], [3], dict(pads=[2, 1], strides=[2], dilations=[2])),
]


@pytest.mark.parametrize("image,block,attrs", COL2IM)
def test_col2im_constant_shapes_against_onnxruntime(image, block, attrs):
    m = col2im_model(image, block, **attrs)
    check(m, [col2im_feeds(n, c, image, block, **attrs) for n, c in ((1, 1), (2, 3), (3, 2))],
          oracle=ort if len(image) == 2 else reference)


def test_col2im_shapes_from_run_time_data():
    """One import; image_shape and block_shape are graph inputs, so each run may use other
    values (data-dependent sizes)."""
    m = col2im_model(strides=[2, 1], pads=[1, 0, 0, 1])
    attrs = dict(strides=[2, 1], pads=[1, 0, 0, 1])
    feeds = []
    for image, block in (([5, 5], [2, 2]), ([6, 3], [3, 1]), ([4, 7], [1, 3])):
        f = col2im_feeds(2, 2, image, block, **attrs)
        f["image"], f["block"] = np.array(image, np.int64), np.array(block, np.int64)
        feeds.append(f)
    check(m, feeds, oracle=ort)
    with spx.import_model(m) as p, p.runtime() as rt:
        bad = feeds[0]
        with pytest.raises(Exception, match="c2i.*number of blocks"):
            rt(**dict(bad, image=np.array([8, 5], np.int64)))
        with pytest.raises(Exception, match="c2i.*multiple of prod"):
            rt(**dict(bad, x=bad["x"][:, :7], block=np.array([2, 2], np.int64)))


def test_col2im_refusals():
    refused(col2im_model([5, 5], [2, 2], strides=[1]), "'c2i'", "strides has 1 entries")
    refused(col2im_model([5, 5], [2, 2], dilations=[1, 0]), "'c2i'", "dilations [1, 0]")
    refused(col2im_model([5, 5], [0, 2]), "'c2i'", "block_shape [0, 2]")
    refused(col2im_model([5, 5], [2]), "'c2i'", "image_shape has 2 entries and block_shape 1")


# ---- DeformConv ----------------------------------------------------------------------------

def deform_model(c, oc, kernel, group=1, offset_group=1, mask=True, bias=True, spatial=None,
                 **attrs):
    """DeformConv of x (n, c, *spatial) with W and B initializers; offset and mask inputs."""
    r = len(kernel)
    spatial = spatial or ["h", "w", "d"][:r]
    ins = ["x", "w", "offset", "b" if bias else "", "mask" if mask else ""]
    while ins[-1] == "":
        ins.pop()
    node = helper.make_node("DeformConv", ins, ["y"], name="dc", group=group,
                            offset_group=offset_group, **attrs)
    k = int(np.prod(kernel))
    inputs = [("x", F, ["n", c] + spatial), ("offset", F, ["n", offset_group * k * r] +
                                              ["o%d" % i for i in range(r)])]
    if mask:
        inputs.append(("mask", F, ["n", offset_group * k] + ["o%d" % i for i in range(r)]))
    inits = [("w", rand(oc, c // group, *kernel))] + ([("b", rand(oc))] if bias else [])
    return model([node], inputs, inits, opset=19)


def deform_feeds(m, n, c, size, kernel, offset_group=1, strides=None, pads=None,
                 dilations=None, scale=2.0):
    r = len(kernel)
    strides, dilations, pads = strides or [1] * r, dilations or [1] * r, pads or [0] * 2 * r
    outs = [(size[i] + pads[i] + pads[r + i] - (kernel[i] - 1) * dilations[i] - 1) //
            strides[i] + 1 for i in range(r)]
    k = int(np.prod(kernel))
    f = {"x": rand(n, c, *size), "offset": rand(n, offset_group * k * r, *outs) * scale}
    if any(i.name == "mask" for i in m.graph.input):
        f["mask"] = RNG.uniform(0, 1, (n, offset_group * k, *outs)).astype(np.float32)
    return f


DEFORM = [  # (c, oc, kernel, group, offset_group, attributes)
    (1, 1, [2, 2], 1, 1, {}),
    (4, 6, [3, 3], 2, 2, dict(pads=[1, 1, 1, 1])),
    (4, 2, [3, 2], 1, 4, dict(strides=[2, 1], dilations=[1, 2], pads=[1, 0, 2, 1])),
    (6, 3, [1, 3], 3, 1, dict(strides=[1, 2])),
]


@pytest.mark.parametrize("c,oc,kernel,group,og,attrs", DEFORM)
def test_deform_conv_symbolic_against_onnxruntime(c, oc, kernel, group, og, attrs):
    m = deform_model(c, oc, kernel, group, og, **attrs)
    feeds = [deform_feeds(m, n, c, size, kernel, og, **attrs)
             for n, size in ((1, (5, 6)), (2, (7, 4)), (3, (6, 6)))]
    check(m, feeds, oracle=ort, atol=1e-4)
    # Large offsets: most samples fall outside X (zeros), some on its border.
    check(m, [deform_feeds(m, 2, c, (5, 5), kernel, og, scale=6.0, **attrs)], oracle=ort,
          atol=1e-4)


def test_deform_conv_without_mask_and_bias_matches_the_reference():
    m = deform_model(2, 2, [2, 2], mask=False, bias=False, pads=[1, 0, 0, 1])
    check(m, [deform_feeds(m, 1, 2, (4, 5), [2, 2], pads=[1, 0, 0, 1])], oracle=reference,
          atol=1e-4)


def test_deform_conv_1d_and_3d_equal_2d_with_a_unit_axis():
    """The n-d composite on 1-D and 3-D inputs equals the 2-D one (checked against
    onnxruntime above) with the extra axis of size 1 and a zero offset along it."""
    m2 = deform_model(2, 3, [1, 3], spatial=[1, "w"], pads=[0, 1, 0, 1])
    m1 = deform_model(2, 3, [3], spatial=["w"], pads=[1, 1])
    m3 = deform_model(2, 3, [1, 3, 1], spatial=[1, "w", 1], pads=[0, 1, 0, 0, 1, 0])
    for m in (m1, m3):  # the same weights and bias
        m.graph.initializer[0].CopyFrom(numpy_helper.from_array(
            numpy_helper.to_array(m2.graph.initializer[0]).reshape(
                numpy_helper.to_array(m.graph.initializer[0]).shape), "w"))
        m.graph.initializer[1].CopyFrom(m2.graph.initializer[1])
    x = rand(2, 2, 1, 6)
    off2 = rand(2, 6, 1, 6)  # (dh, dw) per tap
    mask = RNG.uniform(0, 1, (2, 3, 1, 6)).astype(np.float32)
    off2[:, 0::2] = 0.0
    with spx.import_model(m2) as p, p.runtime() as rt:
        want = rt(x=x, offset=off2, mask=mask)["y"]
    with spx.import_model(m1) as p, p.runtime() as rt:
        got = rt(x=x[:, :, 0], offset=off2[:, 1::2, 0], mask=mask[:, :, 0])["y"]
        np.testing.assert_allclose(got, want[:, :, 0], rtol=1e-5, atol=1e-5)
    off3 = np.zeros((2, 9, 1, 6, 1), np.float32)
    off3[:, 1::3, 0, :, 0] = off2[:, 1::2, 0]
    with spx.import_model(m3) as p, p.runtime() as rt:
        got = rt(x=x[..., None], offset=off3, mask=mask[..., None])["y"]
        np.testing.assert_allclose(got[..., 0], want, rtol=1e-5, atol=1e-5)


def test_deform_conv_refusals():
    refused(deform_model(4, 4, [2, 2], group=3), "'dc'", "do not fit group=3")
    refused(deform_model(3, 3, [2, 2], offset_group=2), "'dc'", "offset_group=2")
    refused(deform_model(2, 2, [2, 2], strides=[1, 0]), "'dc'", "strides [1, 0]")
    refused(deform_model(2, 2, [2, 2], pads=[1, 1]), "'dc'", "pads has 2 entries")
    refused(deform_model(2, 2, [2, 2], kernel_shape=[3, 2]), "'dc'",
            "kernel_shape [3, 2] does not match W's spatial sizes (2, 2)")
