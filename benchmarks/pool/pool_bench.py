#!/usr/bin/env python3
"""Pooling: the C API's max_pool / avg_pool (a one-op program, shp_runtime_run_into on
preallocated arrays) against onnxruntime's MaxPool / AveragePool (a one-node model, the CPU
provider, session.run), in the same process, alternating, on 1 and 2 threads.

Prints one line per scenario:
  ROW <scenario> | <ours us> | <spread> | <ort us> | <spread> | <ratio> | <target> | <verdict>
with ratio = ort / ours (> 1: ours is faster), medians of alternating rounds; spread = min-max. Target: ratio >= 1.0 (issue 16).
Usage: pool_bench.py [--quick]   (SHAPEPOLY_LIB: the library to load)
"""
import ctypes
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "python"))
import capi_trace as ct  # noqa: E402

vp, sz = ct.vp, ct.sz

# (name, ONNX op, kernel, strides, pads, count_include_pad)
SCENARIOS = [
    ("max_pool 3x3 s2 p1 1x64x112x112 (ResNet stem)", "MaxPool", [3, 3], [2, 2], [1, 1, 1, 1], False),
    ("max_pool 2x2 s2 1x64x112x112 (VGG)", "MaxPool", [2, 2], [2, 2], [0, 0, 0, 0], False),
    ("avg_pool 3x3 s1 p1 1x64x56x56 excl. pad", "AveragePool", [3, 3], [1, 1], [1, 1, 1, 1], False),
    ("avg_pool 2x2 s2 1x64x112x112", "AveragePool", [2, 2], [2, 2], [0, 0, 0, 0], False),
]
SHAPES = {"max_pool 3x3 s2 p1 1x64x112x112 (ResNet stem)": [1, 64, 112, 112],
          "max_pool 2x2 s2 1x64x112x112 (VGG)": [1, 64, 112, 112],
          "avg_pool 3x3 s1 p1 1x64x56x56 excl. pad": [1, 64, 56, 56],
          "avg_pool 2x2 s2 1x64x112x112": [1, 64, 112, 112]}


class Ours:
    def __init__(self, api, op, x, kernel, strides, pads, include, threads):
        t = ct.Tracer(api)
        h = t.input("x", "f32", "n, c, h, w")
        y = (t.max_pool(h, kernel, strides, None, pads) if op == "MaxPool" else
             t.avg_pool(h, kernel, strides, None, pads, count_include_pad=include))
        data = t.program([h], [y])
        self.api = api
        p, opts, self.rt = vp(), vp(), vp()
        api("shp_program_load", data, sz(len(data)), ctypes.byref(p))
        api("shp_runtime_options_create", ctypes.byref(opts))
        api("shp_runtime_options_set_num_threads", opts, ctypes.c_int32(threads))
        api("shp_runtime_create", p, opts, ctypes.byref(self.rt))
        api.L.shp_runtime_options_destroy(opts)
        api.L.shp_program_destroy(p)
        self.y = ct.run_cpp(api, data, [[x]])[0][0].copy()  # the output shape (and the result)
        self.x = x
        self.xa, self.ya = self._wrap(x), self._wrap(self.y)
        self.ins, self.outs = (vp * 1)(self.xa), (vp * 1)(self.ya)

    def _wrap(self, a):
        h = vp()
        shape = (ct.i64 * a.ndim)(*a.shape)
        self.api("shp_array_wrap", ctypes.c_int(0), shape, sz(a.ndim), a.ctypes.data_as(vp), sz(a.nbytes),
                 ctypes.byref(h))
        return h

    def run(self):
        self.api("shp_runtime_run_into", self.rt, None, self.ins, sz(1), self.outs, sz(1))


def ort_session(op, x, kernel, strides, pads, include, threads):
    import onnxruntime as ort
    from onnx import TensorProto, helper
    attrs = dict(kernel_shape=kernel, strides=strides, pads=pads)
    if op == "AveragePool":
        attrs["count_include_pad"] = int(include)
    graph = helper.make_graph([helper.make_node(op, ["x"], ["y"], **attrs)], "pool",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    model.ir_version = 9
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")  # no stolen cores
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    return sess, ort.__version__


def seconds(f, calls):
    t0 = time.perf_counter()
    for _ in range(calls):
        f()
    return (time.perf_counter() - t0) / calls


def main():
    quick = "--quick" in sys.argv
    rounds = 5 if quick else 11
    api = ct.Api()
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError as e:
        for name, *_ in SCENARIOS:
            for threads in (1, 2):
                print(f"ROW {name}, {threads} thread(s) | - | - | - | - | - | >= 1.0x | n/a ({e})")
        return
    rng = np.random.default_rng(0)
    for name, op, kernel, strides, pads, include in SCENARIOS:
        x = rng.standard_normal(SHAPES[name]).astype(np.float32)
        for threads in (1, 2):
            ours = Ours(api, op, x, kernel, strides, pads, include, threads)
            sess, version = ort_session(op, x, kernel, strides, pads, include, threads)
            want = sess.run(None, {"x": x})[0]
            np.testing.assert_allclose(ours.y, want, rtol=1e-5, atol=1e-6, err_msg=name)
            run_ort = lambda: sess.run(None, {"x": x})  # noqa: E731
            calls = max(3, int(0.02 / max(seconds(ours.run, 3), 1e-6)))
            a, b = [], []
            for _ in range(rounds):
                a.append(seconds(ours.run, calls))
                b.append(seconds(run_ort, calls))
            us, them = 1e6 * float(np.median(a)), 1e6 * float(np.median(b))
            ratio = them / us
            sa, sb = f"{1e6 * min(a):.0f}-{1e6 * max(a):.0f}", f"{1e6 * min(b):.0f}-{1e6 * max(b):.0f}"
            print(f"ROW {name}, {threads} thread(s) | {us:.1f} | {sa} | {them:.1f} | {sb} | {ratio:.2f} | "
                  f">= 1.0x | {'met' if ratio >= 1.0 else 'MISSED'}", flush=True)
    print(f"INFO onnxruntime {version}; {rounds} rounds; times are per call (us, median)")


if __name__ == "__main__":
    main()
