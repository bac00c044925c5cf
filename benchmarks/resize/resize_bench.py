#!/usr/bin/env python3
"""ONNX Resize: the model imported by shapepoly.onnx (one take_weighted op per resized axis: the
importer computes each axis's [m, k] index and weight tables; the program run through the C
API's shp_runtime_run_into on preallocated arrays) against onnxruntime's Resize (the CPU
provider, session.run) on the same model, in the same process, alternating, on 1 and 2 threads.
Scales are constants (opset 18, half_pixel coordinates).

Prints one line per scenario:
  ROW <scenario> | <ours us> | <spread> | <ort us> | <spread> | <ratio> | <target> | <verdict>
with ratio = ort / ours (> 1: ours is faster), medians of alternating rounds (wall time); spread =
min-max. Target: ratio >= 1.0 (issue 37). Then INFO lines: the CPU, the SIMD target, the versions,
the ops of each imported program, and on 1 thread each side's median CPU time per call (the
calling thread's: both run there).
Usage: resize_bench.py [--quick]   (SHAPEPOLY_LIB: the library to load)
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

# (name, input shape, mode, scale of the two spatial axes)
SCENARIOS = [
    ("linear 2x of [1,64,56,56]", [1, 64, 56, 56], "linear", 2.0),
    ("nearest 2x of [1,64,56,56]", [1, 64, 56, 56], "nearest", 2.0),
    ("linear 0.5x of [1,64,112,112]", [1, 64, 112, 112], "linear", 0.5),
    ("cubic 2x of [1,16,56,56]", [1, 16, 56, 56], "cubic", 2.0),
]


def model(x_shape, mode, scale):
    from onnx import TensorProto, helper
    scales = helper.make_tensor("scales", TensorProto.FLOAT, [4], [1.0, 1.0, scale, scale])
    node = helper.make_node("Resize", ["x", "", "scales"], ["y"], mode=mode)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [scales])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 9
    return m


IMPORT = """
import sys
import onnx
import shapepoly.onnx as spx
with spx.import_model(onnx.load_from_string(sys.stdin.buffer.read())) as program:
    ops = sorted(set(line.split("=", 1)[1].split()[0].split("(")[0] for line in program.text.splitlines()
                     if "=" in line and line.strip().startswith("%")))
    sys.stderr.write("ops: " + " ".join(ops) + "\\n")
    sys.stdout.buffer.write(program.serialize())
"""


def imported(m):
    """The serialized program shapepoly.onnx imports from model m, and the ops it uses (in a child
    process: the binding's package and capi_trace's flatbuffers package are both named shapepoly)."""
    env = dict(os.environ, PYTHONPATH=BINDINGS)
    r = subprocess.run([sys.executable, "-c", IMPORT], input=m.SerializeToString(), env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        raise RuntimeError("the import failed: " + r.stderr.decode())
    return r.stdout, r.stderr.decode().strip()


class Ours:
    def __init__(self, api, data, x, threads):
        self.api = api
        p, opts, self.rt = vp(), vp(), vp()
        api("shp_program_load", data, sz(len(data)), ctypes.byref(p))
        api("shp_runtime_options_create", ctypes.byref(opts))
        api("shp_runtime_options_set_num_threads", opts, ctypes.c_int32(threads))
        api("shp_runtime_create", p, opts, ctypes.byref(self.rt))
        api.L.shp_runtime_options_destroy(opts)
        api.L.shp_program_destroy(p)
        self.y = ct.run_cpp(api, data, [[x]])[0][0].copy()  # the output shape (and the result)
        self.keep = x
        self.arrays = [self._wrap(x, 0), self._wrap(self.y, 0)]
        self.ins, self.outs = (vp * 1)(self.arrays[0]), (vp * 1)(self.arrays[1])

    def _wrap(self, a, code):
        h = vp()
        shape = (ct.i64 * a.ndim)(*a.shape)
        self.api("shp_array_wrap", ctypes.c_int(code), shape, sz(a.ndim), a.ctypes.data_as(vp), sz(a.nbytes),
                 ctypes.byref(h))
        return h

    def run(self):
        self.api("shp_runtime_run_into", self.rt, None, self.ins, sz(1), self.outs, sz(1))


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
                print(f"ROW Resize {name}, {threads} thread(s) | - | - | - | - | - | >= 1.0x | n/a ({e})")
        return
    rng = np.random.default_rng(0)
    version = "?"
    info_rows = []
    for name, xs, mode, scale in SCENARIOS:
        x = rng.standard_normal(xs).astype(np.float32)
        m = model(xs, mode, scale)
        data, ops = imported(m)
        info_rows.append(f"INFO {name}: {ops}")
        for threads in (1, 2):
            ours = Ours(api, data, x, threads)
            sess, version = ort_session(m, threads)
            want = sess.run(None, {"x": x})[0]
            np.testing.assert_allclose(ours.y, want, rtol=1e-5, atol=1e-5, err_msg=name)
            feeds = {"x": x}
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
                sca = f"{1e6 * min(ca):.0f}-{1e6 * max(ca):.0f}"
                scb = f"{1e6 * min(cb):.0f}-{1e6 * max(cb):.0f}"
                info_rows.append(f"INFO CPU time per call, {name}, 1 thread: ours {cu:.1f} us ({sca}), "
                                 f"onnxruntime {ct_:.1f} us ({scb}) (ratio {ct_ / cu:.2f})")
            ratio = them / us
            sa, sb = f"{1e6 * min(a):.0f}-{1e6 * max(a):.0f}", f"{1e6 * min(b):.0f}-{1e6 * max(b):.0f}"
            print(f"ROW Resize {name}, {threads} thread(s) | {us:.1f} | {sa} | {them:.1f} | {sb} | "
                  f"{ratio:.2f} | >= 1.0x | {'met' if ratio >= 1.0 else 'MISSED'}", flush=True)
    api.L.shp_simd_target.restype = ctypes.c_char_p
    target = api.L.shp_simd_target().decode()
    print(f"INFO cpu: {cpu_model()}, {os.cpu_count()} cpus, load average {os.getloadavg()[0]:.1f}; "
          f"SIMD target {target}")
    print(f"INFO onnxruntime {version}; {rounds} rounds; times are per call (us, median; spread min-max)")
    print("\n".join(info_rows))


if __name__ == "__main__":
    main()
