"""Conv micro-benchmarks: our runtime's `conv` against onnxruntime's Conv on the same shapes, in
the same process, on 1 and 2 threads.

Scenarios (ResNet/MobileNet layers): 3x3 (1x64x56x56 -> 64, 1x128x28x28 -> 128, 1x256x14x14 ->
256, 1x512x7x7 -> 512, pad 1), 1x1 (1x256x56x56 -> 64) and depthwise 3x3 (1x128x56x56, groups 128, pad 1). Both
sides are timed in 7 alternating rounds; each row prints the median GFLOP/s of both sides and
their spread (min-max over the rounds) (2 * output elements * C/groups * kernel size), the ratio ours / ORT
(>1: ours is faster, target >= 1.0) and our speed as a share of our own 512^3 matmul on as many
threads (%mm: the packed kernel the conv calls, measured in the same run: the ceiling of the
im2col path). The nominal peak (FMA lanes x 2 flops x 2 FMA pipes x the clock of /proc/cpuinfo)
is printed for reference only: it overstates CPUs that split 512-bit FMAs over two 256-bit pipes
(Zen 4) by 2x.

Usage: conv_bench.py [--quick] [--cpu-time]   (SHAPEPOLY_LIB: the library; default
build/lib/libshapepoly.so; --cpu-time: 1 thread only, timed by the process's CPU time)
Last line: targets: N met, M MISSED, K not measured
"""
import ctypes
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "python"))
import capi_trace as ct  # noqa: E402

vp, sz = ctypes.c_void_p, ctypes.c_size_t
# The clock of every timing: the wall clock, or with --cpu-time the process's CPU time (1 thread
# only; steadier on a loaded machine).
CLOCK = time.perf_counter

SCENARIOS = [  # name, x shape, w shape, pads, groups
    ("conv3x3 1x64x56x56->64", (1, 64, 56, 56), (64, 64, 3, 3), [1, 1, 1, 1], 1),
    ("conv3x3 1x128x28x28->128", (1, 128, 28, 28), (128, 128, 3, 3), [1, 1, 1, 1], 1),
    ("conv3x3 1x256x14x14->256", (1, 256, 14, 14), (256, 256, 3, 3), [1, 1, 1, 1], 1),
    ("conv3x3 1x512x7x7->512", (1, 512, 7, 7), (512, 512, 3, 3), [1, 1, 1, 1], 1),
    ("conv1x1 1x256x56x56->64", (1, 256, 56, 56), (64, 256, 1, 1), [0, 0, 0, 0], 1),
    ("depthwise3x3 1x128x56x56", (1, 128, 56, 56), (128, 1, 3, 3), [1, 1, 1, 1], 128),
]


def flops(xs, ws, ys):
    return 2.0 * np.prod(ys) * ws[1] * np.prod(ws[2:])


class Ours:
    """A one-conv program on a runtime with `threads` threads; inputs wrapped once."""

    def __init__(self, api, xs, ws, pads, groups, threads, x, w):
        self.api = api
        t = ct.Tracer(api)
        xi = t.input("x", "f32", ", ".join(str(d) for d in xs))
        # w is a parameter whose default is the weights (ORT's side has them as an initializer):
        # the runtime may pack them once (the channels-last product, the NCHWc kernel).
        wi = t.parameter("w", np.ascontiguousarray(w, dtype=np.float32))
        y = t.conv(xi, wi, pads=pads, groups=groups)
        data = t.program([xi, wi], [y])
        p, opts = vp(), vp()
        self.rt = vp()
        api("shp_program_load", data, sz(len(data)), ctypes.byref(p))
        api("shp_runtime_options_create", ctypes.byref(opts))
        api("shp_runtime_options_set_num_threads", opts, ctypes.c_int32(threads))
        api("shp_runtime_create", p, opts, ctypes.byref(self.rt))
        api.L.shp_runtime_options_destroy(opts)
        api.L.shp_program_destroy(p)
        self.arrays = [np.ascontiguousarray(x)]
        self.handles = []
        for a in self.arrays:
            h = vp()
            shape = (ct.i64 * a.ndim)(*a.shape)
            api("shp_array_wrap", ctypes.c_int(0), shape, sz(a.ndim), a.ctypes.data_as(vp), sz(a.nbytes),
                ctypes.byref(h))
            self.handles.append(h)
        self.ins = (vp * 1)(*self.handles)
        self.names = (ctypes.c_char_p * 1)(b"x")
        self.outs = (vp * 1)()

    def run(self):
        self.api("shp_runtime_run", self.rt, self.names, self.ins, sz(1), self.outs, sz(1))
        self.api.L.shp_array_destroy(self.outs[0])

    def result(self, shape):
        self.api("shp_runtime_run", self.rt, self.names, self.ins, sz(1), self.outs, sz(1))
        out = self.outs[0]
        n = int(np.prod(shape))
        ptr = ctypes.cast(self.api.L.shp_array_data(out), ctypes.POINTER(ctypes.c_float))
        y = np.ctypeslib.as_array(ptr, shape=(n,)).copy().reshape(shape)
        self.api.L.shp_array_destroy(out)
        return y

    def close(self):
        for h in self.handles:
            self.api.L.shp_array_destroy(h)
        self.api.L.shp_runtime_destroy(self.rt)


def ort_session(xs, ws, pads, groups, threads, w):
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper
    node = helper.make_node("Conv", ["X", "W"], ["Y"], pads=pads, group=groups,
                            kernel_shape=list(ws[2:]))
    graph = helper.make_graph([node], "conv", [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(xs))],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
                              initializer=[numpy_helper.from_array(w, "W")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    # Idle ORT workers would spin between its runs and steal the cores from ours.
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def best_time(fn, min_seconds):
    """The best per-call time over repeats of batches lasting >= min_seconds / 5 each."""
    fn()
    calls, t0 = 1, CLOCK()
    fn()
    once = max(CLOCK() - t0, 1e-6)
    calls = max(1, int(min_seconds / 5 / once))
    best = float("inf")
    for _ in range(5):
        t0 = CLOCK()
        for _ in range(calls):
            fn()
        best = min(best, (CLOCK() - t0) / calls)
    return best


def calls_for(fn, seconds):
    """Calls of fn lasting about `seconds` (after one warm-up call)."""
    fn()
    t0 = CLOCK()
    fn()
    return max(1, int(seconds / max(CLOCK() - t0, 1e-6)))


def alternate_times(ours, peer, min_seconds, rounds=7):
    """Per-call times of `rounds` batches of ours() and of peer(), alternating (both see the same
    machine load), each batch lasting about min_seconds / rounds."""
    a_calls, b_calls = calls_for(ours, min_seconds / rounds), calls_for(peer, min_seconds / rounds)
    a, b = [], []
    for _ in range(rounds):
        for fn, calls, out in ((ours, a_calls, a), (peer, b_calls, b)):
            t0 = CLOCK()
            for _ in range(calls):
                fn()
            out.append((CLOCK() - t0) / calls)
    return a, b


def peak_gflops_per_thread():
    mhz = 0.0
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("cpu MHz"):
                    mhz = max(mhz, float(line.split(":")[1]))
    except OSError:
        pass
    flags = open("/proc/cpuinfo").read() if os.path.exists("/proc/cpuinfo") else ""
    lanes = 16 if " avx512f" in flags else 8 if " avx2" in flags else 4
    return lanes * 2 * 2 * mhz / 1000.0, lanes, mhz


def matmul_gflops(api, threads, min_seconds):
    n = 512
    t = ct.Tracer(api)
    a = t.input("a", "f32", f"{n}, {n}")
    b = t.input("b", "f32", f"{n}, {n}")
    data = t.program([a, b], [t.matmul(a, b)])
    rng = np.random.default_rng(1)
    feeds = [rng.uniform(-1, 1, (n, n)).astype(np.float32) for _ in range(2)]
    p, opts, rt = vp(), vp(), vp()
    api("shp_program_load", data, sz(len(data)), ctypes.byref(p))
    api("shp_runtime_options_create", ctypes.byref(opts))
    api("shp_runtime_options_set_num_threads", opts, ctypes.c_int32(threads))
    api("shp_runtime_create", p, opts, ctypes.byref(rt))
    api.L.shp_runtime_options_destroy(opts)
    api.L.shp_program_destroy(p)
    hs = []
    for arr in feeds:
        h = vp()
        api("shp_array_wrap", ctypes.c_int(0), (ct.i64 * 2)(n, n), sz(2), arr.ctypes.data_as(vp), sz(arr.nbytes),
            ctypes.byref(h))
        hs.append(h)
    ins, outs = (vp * 2)(*hs), (vp * 1)()

    def run():
        api("shp_runtime_run", rt, None, ins, sz(2), outs, sz(1))
        api.L.shp_array_destroy(outs[0])
    sec = best_time(run, min_seconds)
    for h in hs:
        api.L.shp_array_destroy(h)
    api.L.shp_runtime_destroy(rt)
    return 2.0 * n ** 3 / sec / 1e9


def main(argv):
    global CLOCK
    min_seconds = 0.5 if "--quick" in argv else 2.0
    thread_counts = (1, 2)
    if "--cpu-time" in argv:
        CLOCK, thread_counts = time.process_time, (1,)
    api = ct.Api()
    try:
        import onnxruntime as ort
        ort_version = ort.__version__
    except ImportError as e:
        ort, ort_version = None, f"unavailable ({e})"
    peak, lanes, mhz = peak_gflops_per_thread()
    print(f"conv micro-benchmarks; peer: onnxruntime {ort_version}")
    print(f"nominal peak f32 per thread: {peak:.1f} GFLOP/s ({lanes} lanes x 2 flops x 2 FMA pipes "
          f"x {mhz:.0f} MHz; not used below)")
    mm = {}
    for threads in thread_counts:
        mm[threads] = matmul_gflops(api, threads, min_seconds)
        print(f"our matmul 512^3, {threads} thread(s): {mm[threads]:.1f} GFLOP/s")
    print()
    print("GF/s: median of 7 alternating rounds (spread: min-max); ratio of the medians")
    print(f"{'scenario':<34} {'thr':>3} {'ours GF/s':>10} {'spread':>11} {'ORT GF/s':>9} {'spread':>11} "
          f"{'ratio':>6} {'%mm':>6} {'target':>7} verdict")
    met = missed = na = 0
    rng = np.random.default_rng(0)
    for name, xs, ws, pads, groups in SCENARIOS:
        x = rng.uniform(-1, 1, xs).astype(np.float32)
        w = rng.uniform(-1, 1, ws).astype(np.float32)
        for threads in thread_counts:
            ours = Ours(api, xs, ws, pads, groups, threads, x, w)
            ys = (xs[0], ws[0]) + tuple(xs[2 + i] + pads[i] + pads[2 + i] - ws[2 + i] + 1 for i in range(2))
            f = flops(xs, ws, ys)
            got = ours.result(ys)
            if ort is None:
                g_ours = f / best_time(ours.run, min_seconds) / 1e9
                ours.close()
                pct = 100.0 * g_ours / mm[threads] if mm[threads] else float("nan")
                na += 1
                print(f"{name:<34} {threads:>3} {g_ours:>10.1f} {'':>11} {'n/a':>9} {'':>11} {'n/a':>6} "
                      f"{pct:>5.0f}% {'>=1.0x':>7} n/a")
                continue
            sess = ort_session(xs, ws, pads, groups, threads, w)
            want = sess.run(None, {"X": x})[0]
            err = float(np.max(np.abs(got - want)))
            if not err <= 1e-3 * max(1.0, float(np.max(np.abs(want)))):
                print(f"{name}: ours and onnxruntime differ by {err}", file=sys.stderr)
                return 1
            a, b = alternate_times(ours.run, lambda: sess.run(None, {"X": x}), 2 * min_seconds)
            ours.close()
            ga, gb = sorted(f / t / 1e9 for t in a), sorted(f / t / 1e9 for t in b)
            g_ours, g_ort = float(np.median(ga)), float(np.median(gb))
            pct = 100.0 * g_ours / mm[threads] if mm[threads] else float("nan")
            ratio = g_ours / g_ort
            ok = ratio >= 1.0
            met, missed = met + ok, missed + (not ok)
            sa, sb = f"{ga[0]:.0f}-{ga[-1]:.0f}", f"{gb[0]:.0f}-{gb[-1]:.0f}"
            print(f"{name:<34} {threads:>3} {g_ours:>10.1f} {sa:>11} {g_ort:>9.1f} {sb:>11} {ratio:>5.2f}x "
                  f"{pct:>5.0f}% {'>=1.0x':>7} {'met' if ok else 'MISSED'}", flush=True)
    print()
    print(f"targets: {met} met, {missed} MISSED, {na} not measured")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
