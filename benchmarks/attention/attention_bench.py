#!/usr/bin/env python3
"""ONNX Attention (opset 23) self-attention: the model imported by shapepoly.onnx (one fused
attention op; the program run through the C API's shp_runtime_run_into on preallocated arrays)
against onnxruntime's Attention (the CPU provider, session.run) on the same model, in the same
process, alternating, on 1 and 2 threads. q, k, v random normal f32 [batch, heads, seq, 64].

Prints one line per scenario:
  ROW <scenario> | <ours us> | <spread> | <ort us> | <spread> | <ratio> | <target> | <verdict>
with ratio = ort / ours (> 1: ours is faster), medians of alternating rounds (wall time); spread =
min-max. Target: ratio >= 1.0 (issue 37). Then INFO lines: the CPU, the SIMD target, the versions,
and on 1 thread each side's median CPU time per call (the calling thread's: both run there).
Usage: attention_bench.py [--quick]   (SHAPEPOLY_LIB: the library to load)
"""
import ctypes
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
BINDINGS = os.path.join(HERE, "..", "..", "bindings", "python")
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "python"))
import capi_trace as ct  # noqa: E402 (its flatbuffers package is also named shapepoly)
sys.path.insert(0, os.path.join(HERE, ".."))
from ort_peer import cpu_model, ort_session, seconds  # noqa: E402

vp, sz = ct.vp, ct.sz

# (name, q/k/v shape [batch, heads, seq, head size], is_causal)
SCENARIOS = [
    ("q,k,v [1,8,128,64] f32", [1, 8, 128, 64], 0),
    ("q,k,v [4,16,512,64] f32", [4, 16, 512, 64], 0),
    ("q,k,v [4,16,512,64] f32, causal", [4, 16, 512, 64], 1),
]


def model(shape, causal):
    from onnx import TensorProto, helper
    graph = helper.make_graph([helper.make_node("Attention", ["q", "k", "v"], ["y"], is_causal=causal)],
                              "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape) for n in "qkv"],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    m.ir_version = 9
    return m


IMPORT = """
import sys
import onnx
import shapepoly.onnx as spx
with spx.import_model(onnx.load_from_string(sys.stdin.buffer.read())) as program:
    assert "attention" in program.text, program.text
    sys.stdout.buffer.write(program.serialize())
"""


def imported(m):
    """The serialized program shapepoly.onnx imports from model m (in a child process: the
    binding's package and capi_trace's flatbuffers package are both named shapepoly)."""
    env = dict(os.environ, PYTHONPATH=BINDINGS)
    return subprocess.run([sys.executable, "-c", IMPORT], input=m.SerializeToString(), env=env,
                          stdout=subprocess.PIPE, check=True).stdout


class Ours:
    def __init__(self, api, data, xs, threads):
        self.api = api
        p, opts, self.rt = vp(), vp(), vp()
        api("shp_program_load", data, sz(len(data)), ctypes.byref(p))
        api("shp_runtime_options_create", ctypes.byref(opts))
        api("shp_runtime_options_set_num_threads", opts, ctypes.c_int32(threads))
        api("shp_runtime_create", p, opts, ctypes.byref(self.rt))
        api.L.shp_runtime_options_destroy(opts)
        api.L.shp_program_destroy(p)
        self.y = ct.run_cpp(api, data, [list(xs)])[0][0].copy()  # the output shape (and the result)
        self.keep = xs
        self.arrays = [self._wrap(x, 0) for x in xs] + [self._wrap(self.y, 0)]
        self.ins, self.outs = (vp * 3)(*self.arrays[:3]), (vp * 1)(self.arrays[3])

    def _wrap(self, a, code):
        h = vp()
        shape = (ct.i64 * a.ndim)(*a.shape)
        self.api("shp_array_wrap", ctypes.c_int(code), shape, sz(a.ndim), a.ctypes.data_as(vp), sz(a.nbytes),
                 ctypes.byref(h))
        return h

    def run(self):
        self.api("shp_runtime_run_into", self.rt, None, self.ins, sz(3), self.outs, sz(1))


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
                print(f"ROW Attention {name}, {threads} thread(s) | - | - | - | - | - | >= 1.0x | n/a ({e})")
        return
    rng = np.random.default_rng(0)
    version = "?"
    cpu_rows = []
    for name, shape, causal in SCENARIOS:
        xs = [rng.standard_normal(shape).astype(np.float32) for _ in range(3)]
        m = model(shape, causal)
        data = imported(m)
        for threads in (1, 2):
            ours = Ours(api, data, xs, threads)
            sess, version = ort_session(m, threads)
            feeds = dict(zip("qkv", xs))
            want = sess.run(None, feeds)[0]
            np.testing.assert_allclose(ours.y, want, rtol=1e-4, atol=1e-5, err_msg=name)
            run_ort = lambda sess=sess, feeds=feeds: sess.run(None, feeds)  # noqa: E731
            calls = max(3, int(0.02 / max(seconds(ours.run, 3)[0], 1e-6)))
            a, b, ca, cb = [], [], [], []
            for _ in range(rounds):
                wall, cpu = seconds(ours.run, calls)
                a.append(wall)
                ca.append(cpu)
                wall, cpu = seconds(run_ort, calls)
                b.append(wall)
                cb.append(cpu)
            us, them = 1e6 * float(np.median(a)), 1e6 * float(np.median(b))
            if threads == 1:  # both run on this thread: its CPU time, robust to a loaded machine
                cu, ct_ = 1e6 * float(np.median(ca)), 1e6 * float(np.median(cb))
                cpu_rows.append(f"INFO CPU time per call, {name}, 1 thread: ours {cu:.1f} us, onnxruntime "
                                f"{ct_:.1f} us (ratio {ct_ / cu:.2f})")
            ratio = them / us
            sa, sb = f"{1e6 * min(a):.0f}-{1e6 * max(a):.0f}", f"{1e6 * min(b):.0f}-{1e6 * max(b):.0f}"
            print(f"ROW Attention {name}, {threads} thread(s) | {us:.1f} | {sa} | {them:.1f} | {sb} | "
                  f"{ratio:.2f} | >= 1.0x | {'met' if ratio >= 1.0 else 'MISSED'}", flush=True)
    api.L.shp_simd_target.restype = ctypes.c_char_p
    target = api.L.shp_simd_target().decode()
    print(f"INFO cpu: {cpu_model()}, {os.cpu_count()} cpus, load average {os.getloadavg()[0]:.1f}; "
          f"SIMD target {target}")
    print(f"INFO onnxruntime {version}; {rounds} rounds; times are per call (us, median; spread min-max)")
    print("\n".join(cpu_rows))


if __name__ == "__main__":
    main()
