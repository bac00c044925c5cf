"""Matmul on the narrow element types: f16 and bf16 (computed in f32, rounded once) and int8
(u8 x i8 with i32 accumulation, as onnxruntime's MatMulInteger) through the Python binding,
against our own f32 matmul of the same shape and against onnxruntime in the same process, on 1
and 2 threads.

Rows (shapes MxNxK: C[m,n] = A[m,k] * B[k,n], row-major; 1024^3 and the MLP layer 256x256x784,
batch 256, 784 -> 256):
  "f16|bf16 matmul S T thread(s) vs f32": a one-matmul program on f16/bf16 inputs (traced as
      convert A, B to f32, the f32 matmul, convert C back) against the f32 program on the same
      values; ratio > 1: the narrow program is faster than the f32 one.
  "f16 matmul S T thread(s) vs ORT": against onnxruntime's MatMul on float16 inputs (a one-node
      model; its profile says how it runs it). onnxruntime has no bf16 MatMul on the CPU (the
      driver asks it and prints its answer): bf16 is compared with our f32 only.
  "u8xi8 matmul S T thread(s) vs ORT MatMulInteger": a.astype(I32) @ b.astype(I32) on u8 A and
      i8 B against onnxruntime's MatMulInteger (uint8 A, int8 B, int32 C); both int32 results
      are checked equal to numpy's (and so to each other) before timing.
Each row runs rounds like benchmarks/kernels/matmul_bench.cc: both sides warmed up, then in each
round ours and the peer back to back (the peer first in every other round), each for >= 50 ms of
calls; the GFLOP/s columns (GOP/s for int8; 2*m*n*k / time) are each side's median, the ratio
ours / peer (= peer time / our time, > 1: ours faster) the median of the rounds' ratios and
'rounds' their lowest..highest. The rows carry no target ("-"): they are information.
After the table, '# where the time goes' lines time the parts of our narrow programs alone, each
as its own program (conversions, the compute-type matmul; 1 thread), and read onnxruntime's
per-node times from its profiler.

The header names what the figures depend on: the SIMD target the library dispatches to
(shp_simd_target; SHP_SIMD_TARGET caps it), the instructions compiled into that target's GEMM,
int matmul and f16/bf16 conversions in libshapepoly.so (found with objdump: the library does
not report its conversion path), the CPU's flags, and onnxruntime's version and graph.

Usage: narrow_bench.py [--quick] [--cpu-time] [--int-only]   (SHAPEPOLY_LIB: the library)
  --quick: 3 rounds per row instead of 7.
  --int-only: only the u8xi8 rows (and their '# where the time goes' lines).
  --cpu-time (for A/B runs on a loaded machine, as matmul_bench's): 1-thread rows only, 21
      rounds of 20 ms blocks, each figure the best rep of the process's CPU time (time slices
      lost to other processes do not count; memory bandwidth shared with them still does).
Last line: targets: 0 met, 0 MISSED, 0 not measured
"""
import argparse
import collections
import functools
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bindings", "python"))
import shapepoly as sp  # noqa: E402

SHAPES = [(1024, 1024, 1024), (256, 256, 784)]  # (m, n, k)
THREADS = (1, 2)
MANTISSA_BITS = {"f16": 10, "bf16": 7}
# Slack for summation-order differences between two f32 GEMMs before the one rounding.
ABS_TOL = 1e-4


def shape_name(s):
    m, n, k = s
    return str(m) if m == n == k else "%dx%dx%d" % (m, n, k)


# ---- timing (benchmarks/kernels/matmul_bench.cc's Measure / TimeRound / Summarize) ----------

# --cpu-time: the process's CPU time instead of wall time, and the best rep instead of the median
# (for a loaded machine: time slices lost to other processes do not count; 1-thread rows only).
CPU_TIME = False


def seconds(fn, calls):
    """Seconds per call of fn over `calls` back-to-back calls (wall, or process CPU time)."""
    clock = time.process_time if CPU_TIME else time.perf_counter
    t0 = clock()
    for _ in range(calls):
        fn()
    return (clock() - t0) / calls


def figure_name():
    return "runtime(...) calls, %s" % ("best process CPU time" if CPU_TIME else "medians")


def figure(v):
    """The median time (the best one with --cpu-time)."""
    return min(v) if CPU_TIME else statistics.median(v)


def block_calls(fn):
    """Calls per timed block: >= 50 ms (20 ms with --cpu-time), at least one."""
    return max(1, int((0.02 if CPU_TIME else 0.05) / max(seconds(fn, 1), 1e-7)))


def measure(ours, peer, reps, ops):
    """Rounds of ours and the peer back to back (the peer first in every other round), each
    for a block of >= 50 ms of calls. Returns (ours G/s, peer G/s, median ratio, lowest,
    highest): each side's median (best with --cpu-time), and the spread of the rounds' ratios,
    a round's ratio being the peer's time over ours."""
    ours()  # warm-up (page faults, thread start, pack buffers)
    peer()
    calls = block_calls(ours)
    t_ours, t_peer, ratios = [], [], []
    for r in range(reps):
        if r % 2 == 0:
            a = seconds(ours, calls)
            b = seconds(peer, calls)
        else:
            b = seconds(peer, calls)
            a = seconds(ours, calls)
        t_ours.append(a)
        t_peer.append(b)
        ratios.append(b / a)
    return (ops / figure(t_ours) * 1e-9, ops / figure(t_peer) * 1e-9,
            statistics.median(ratios), min(ratios), max(ratios))


def median_ms(fn, reps):
    """The median (best with --cpu-time) of reps blocks of calls after one warm-up call, in ms
    per call."""
    fn()
    calls = block_calls(fn)
    return figure([seconds(fn, calls) for _ in range(reps)]) * 1e3


ROW_FMT = "%-55s %10s %10s %8s %11s  %-7s  %s"


def print_row(name, r):
    if r is None:  # the peer is missing
        print(ROW_FMT % (name, "-", "n/a", "-", "-", "-", "-"), flush=True)
        return
    print(ROW_FMT % (name, "%.1f" % r[0], "%.1f" % r[1], "%.2fx" % r[2],
                     "%.2f..%.2f" % (r[3], r[4]), "-", "-"), flush=True)


# ---- what the figures depend on ---------------------------------------------------------------

def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def cpu_flags():
    want = ["avx2", "fma", "f16c", "avx512f", "avx512_bf16", "avx512_fp16", "avx512_vnni",
            "avx_vnni"]
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    have = set(line.split(":", 1)[1].split())
                    yes = [w for w in want if w in have]
                    no = [w for w in want if w not in have]
                    return "%s; not %s" % (" ".join(yes) or "-", " ".join(no) or "-")
    except OSError:
        pass
    return "unknown"


SCAN_MNEMONICS = re.compile(
    r"^(vcvtph2ps|vcvtps2ph|vcvtneps2bf16|vdpbf16ps|vfn?madd\d+[ps]s|vmulps|mulps|vpmulld|"
    r"pmulld|vpmaddwd|pmaddwd|vpmaddubsw|vpdpbusds?|vpdpwssds?|imul|v?pmov[sz]xbd)$")


def scan_library(path):
    """{function: Counter((mnemonic, register class))} of the mnemonics SCAN_MNEMONICS names in
    libshapepoly.so's code (objdump -d -C); None and the reason when objdump is unavailable."""
    try:
        out = subprocess.run(["objdump", "-d", "-C", "--no-show-raw-insn", path],
                             capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        return None, "objdump failed (%s)" % e
    found = collections.defaultdict(collections.Counter)
    fn = ""
    for line in out.splitlines():
        if line.endswith(">:"):
            fn = line[line.find("<") + 1:-2]
            continue
        tab = line.find("\t")
        if tab < 0:
            continue
        ins = line[tab + 1:].split(None, 1)
        if not ins or not SCAN_MNEMONICS.match(ins[0]):
            continue
        ops = ins[1] if len(ins) > 1 else ""
        reg = next((r for r in ("zmm", "ymm", "xmm") if "%" + r in ops), "")
        found[fn][(ins[0], reg)] += 1
    return found, ""


def short_fn(fn):
    m = re.search(r"N_\w+::\w+(<int>)?", fn)
    return m.group(0) if m else fn.split("(")[0]


def instructions(found, target):
    """Lines naming what the dispatched target's code in the library multiplies and converts
    with (from the objdump scan)."""
    ns = "N_" + target.upper()
    def pick(pattern, prefer):
        c = collections.Counter()
        fns = set()
        for fn, cnt in found.items():
            if re.search(pattern, fn):
                for (mn, reg), k in cnt.items():
                    if re.match(prefer, mn):
                        c[(mn, reg)] += k
                        fns.add(short_fn(fn))
        return c, sorted(fns)

    def names(c):
        return ", ".join(("%s %s" % (mn, reg)).strip() for (mn, reg), _ in c.most_common(3))

    out = []
    gemm, gf = pick(r"\b%s::Gemm\w*<.*float" % ns, r"vfn?madd|v?mulps")
    out.append("f32 GEMM %s" % (("%s (%s)" % (names(gemm), gf[0].split("<")[0] + "*"))
                                if gemm else "no vector FMA found in %s::Gemm*" % ns))
    i16, i16f = pick(r"\b%s::I16PanelTile<" % ns, r"v?pmaddwd|vpdpwssd|vpdpbusd")
    out.append("i32 matmul of int16-range operands (the u8xi8 rows) %s" % (
        "%s (%s; vpdpwssd, and vpdpbusd on u8 x s8 operands, only on CPUs with AVX512_VNNI)"
        % (names(i16), i16f[0]) if i16 else "not found (%s::I16PanelTile)" % ns))
    vec_int, vf = pick(r"\b%s::MatmulIntImpl<int>" % ns,
                       r"v?pmulld|v?pmaddwd|vpmaddubsw|vpdpbusd|vpdpwssd")
    if vec_int:
        out.append("other i32 matmul %s (%s)" % (names(vec_int), vf[0]))
    else:
        sc, sf = pick(r"\b%s::MatmulIntImpl<int>" % ns, r"imul")
        out.append("other i32 matmul %s" % (
            "scalar imul only (%s: the loop is not vectorized)" % sf[0] if sc else
            "not found (%s::MatmulIntImpl<int>)" % ns))
    f16c, ff = pick(r"\b%s::" % ns, r"vcvtph2ps|vcvtps2ph")
    bf16, bff = pick(r".", r"vcvtneps2bf16|vdpbf16ps")
    if f16c:
        conv = "f16<->f32 F16C %s (%s)" % (names(f16c), ", ".join(ff))
    else:
        _, elsewhere = pick(r"\bN_\w+::", r"vcvtph2ps|vcvtps2ph")
        conv = ("f16<->f32 scalar loop (no F16C vcvtph2ps/vcvtps2ph in %s's code; %s)"
                % (ns, "the library has them in %s" % ", ".join(elsewhere) if elsewhere else
                   "nor anywhere in the library: no F16C/AVX512-BF16 path yet"))
    conv += "; bf16: %s" % ("AVX512-BF16 %s (%s)" % (names(bf16), ", ".join(bff)) if bf16 else
                            "no AVX512-BF16 instruction (vcvtneps2bf16/vdpbf16ps) in the library")
    i8, i8f = pick(r"\b%s::(EvalTiles|Convert\w*)\b" % ns, r"v?pmov[sz]xbd")
    conv += "; u8/i8->i32: %s" % ("%s (%s)" % (names(i8), ", ".join(i8f)) if i8 else
                                  "no vpmovzxbd/vpmovsxbd in %s's EvalTiles: scalar" % ns)
    out.append("conversion: " + conv)
    return out


# ---- our programs -----------------------------------------------------------------------------

def program(dt_a, dt_b, s, fn):
    m, n, k = s
    with sp.Scope() as scope:
        a = scope.input("a", dt_a, "%d, %d" % (m, k))
        b = scope.input("b", dt_b, "%d, %d" % (k, n))
        return scope.program([a, b], {"c": fn(a, b)})


def unary_program(dt, shape, to):
    with sp.Scope() as scope:
        x = scope.input("x", dt, ", ".join(str(d) for d in shape))
        return scope.program([x], {"y": x.astype(to)})


def matmul(a, b):
    return a @ b


def int_matmul(a, b):
    return a.astype(sp.I32) @ b.astype(sp.I32)


def ulps(got, ref, bits):
    """|got - ref| in units of the last place of a `bits`-bit mantissa at ref (absolute slack
    ABS_TOL taken off first)."""
    ref = ref.astype(np.float64)
    d = np.maximum(np.abs(got.astype(np.float64) - ref) - ABS_TOL, 0.0)
    _, e = np.frexp(np.maximum(np.abs(ref), 2.0 ** -14))
    return float(np.max(d / np.ldexp(1.0, e - 1 - bits)))


# ---- onnxruntime --------------------------------------------------------------------------------

def ort_session(op, ta, tb, tc, s, threads, profile_dir=None):
    import onnx
    import onnxruntime as ort
    from onnx import helper
    m, n, k = s
    graph = helper.make_graph(
        [helper.make_node(op, ["A", "B"], ["C"])], "g",
        [helper.make_tensor_value_info("A", ta, [m, k]),
         helper.make_tensor_value_info("B", tb, [k, n])],
        [helper.make_tensor_value_info("C", tc, [m, n])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    # Idle ORT workers would spin between its runs and steal the cores from ours.
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if profile_dir is not None:
        opts.enable_profiling = True
        opts.profile_file_prefix = os.path.join(profile_dir, "ort")
    return ort.InferenceSession(model.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])


def ort_node_ms(make, feeds, runs):
    """ORT's profile of `runs` runs (after one): [(node, op, median ms)] in execution order."""
    with tempfile.TemporaryDirectory() as d:
        sess = make(d)
        sess.run(None, feeds)
        for _ in range(runs):
            sess.run(None, feeds)
        with open(sess.end_profiling()) as f:
            events = json.load(f)
    times = collections.OrderedDict()
    ops = {}
    for e in events:
        if e.get("cat") == "Node" and e.get("name", "").endswith("_kernel_time"):
            node = e["name"][:-len("_kernel_time")]
            times.setdefault(node, []).append(e["dur"] / 1e3)
            ops[node] = e.get("args", {}).get("op_name", "?")
    return [(node, ops[node], statistics.median(v[-runs:])) for node, v in times.items()]


# ---- main -------------------------------------------------------------------------------------

def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="3 rounds per row instead of 7")
    ap.add_argument("--cpu-time", action="store_true",
                    help="1-thread rows only, 21 rounds, each figure the best rep of the "
                         "process's CPU time (for a loaded machine)")
    ap.add_argument("--int-only", action="store_true",
                    help="only the u8xi8 rows (no f16/bf16 rows, no f32 check)")
    ap.add_argument("--ops-only", action="store_true",
                    help="only the f16/bf16 softmax, layer_norm, reduction and elementwise rows")
    args = ap.parse_args(argv)
    global CPU_TIME, THREADS
    CPU_TIME = args.cpu_time
    THREADS = (1,) if CPU_TIME else (1, 2)
    reps = 21 if CPU_TIME else 3 if args.quick else 7
    try:
        import onnx
        import onnxruntime as ort
        ort_version = "onnxruntime %s (onnx %s)" % (ort.__version__, onnx.__version__)
    except ImportError as e:
        ort, ort_version = None, "unavailable (%s)" % e
    have_bf16 = sp.BF16.numpy != np.dtype(np.uint16)

    target = sp.simd_target()
    forced = os.environ.get("SHP_SIMD_TARGET")
    print("# cpu: %s, %d cpus; SIMD target: %s; threads %s (ours and ORT alike); load "
          "average %s" % (cpu_model(), os.cpu_count() or 0, target,
                          " and ".join(str(t) for t in THREADS),
                          " ".join("%.2f" % x for x in os.getloadavg())))
    print("# narrow matmul C[m,n] = A[m,k]*B[k,n] (row-major, shapes MxNxK); ours: a one-matmul "
          "program through the Python binding (runtime(a=, b=), num_threads 1 or 2), SIMD "
          "target %s (shp_simd_target%s); library %s"
          % (target, "; SHP_SIMD_TARGET=%s" % forced if forced else "", sp.library_path))
    found, why = scan_library(sp.library_path)
    if found is None:
        print("# ours, instructions: unknown: %s" % why)
    else:
        print("# ours, %s code in libshapepoly.so (objdump; the library does not report its "
              "kernels): %s" % (target, "; ".join(instructions(found, target))))
    print("# cpu flags: %s" % cpu_flags())
    if ort is None:
        print("# ORT rows n/a: %s" % ort_version)
    else:
        print("# ORT peer: %s (CPU provider, MLAS: its kernel is picked from CPUID and not "
              "reported; see the cpu flags)" % ort_version)
    print("# figures: %s GFLOP/s (GOP/s for u8xi8) of %d rounds (ours and the peer back to "
          "back in each round, the peer first in every other one); ratio = ours / peer = peer "
          "time / our time (>1: ours faster), the median of the rounds' ratios, 'rounds' their "
          "lowest..highest; peer: our f32 matmul (rows 'vs f32') or onnxruntime; no targets "
          "(information rows)" % ("best process-CPU-time" if CPU_TIME else "median", reps))
    print("# checks before timing: f16/bf16 results (ours, ORT) within 1 ulp of the narrow type "
          "of numpy's f32 matmul of the same values (+%g absolute); f32 within 1e-3 relative; "
          "u8xi8 int32 results equal to numpy's (computed exactly in float64) and to each other"
          % ABS_TOL)
    print(ROW_FMT % ("scenario", "ours", "peer", "ratio", "rounds", "target", "verdict"),
          flush=True)

    ctx = Ctx(reps, ort, have_bf16)
    rng = np.random.default_rng(0)
    if not args.int_only:
        bench_ops(ctx, rng)
    for s in ([] if args.ops_only else SHAPES):
        m, n, k = s
        if args.int_only:
            bench_int(ctx, s, rng)
            continue
        a32 = rng.uniform(-1, 1, (m, k)).astype(np.float32)
        b32 = rng.uniform(-1, 1, (k, n)).astype(np.float32)
        p32 = program(sp.F32, sp.F32, s, matmul)
        ref32 = a32 @ b32
        for threads in (1, 2):
            c = p32.runtime(num_threads=threads)(a=a32, b=b32)["c"]
            rel = float(np.max(np.abs(c - ref32) / (np.abs(ref32) + 1.0)))
            if not rel <= 1e-3:
                error("f32 %s %d thread(s): ours differs from numpy (max rel %g)"
                      % (shape_name(s), threads, rel))
        for dt_name in ("f16", "bf16"):
            bench_float(ctx, s, dt_name, a32, b32, p32)
        bench_int(ctx, s, rng)
    print()
    for line in ctx.notes:
        print(line)
    print()
    print("targets: 0 met, 0 MISSED, 0 not measured")
    return 0


class BenchError(Exception):
    """A result check failed: the driver fails (after printing the reason)."""


def error(msg):
    raise BenchError(msg)


class Ctx:
    def __init__(self, reps, ort, have_bf16):
        self.reps = reps
        self.ort = ort  # the onnxruntime module, or None
        self.have_bf16 = have_bf16
        self.notes = []  # '# where the time goes' lines, printed after the table
        self.bf16_said = False


def threads_tag(what, s, threads):
    return "%s %s %d thread%s" % (what, shape_name(s), threads, "" if threads == 1 else "s")


def bench_float(ctx, s, dt_name, a32, b32, p32):
    """The f16 or bf16 rows of shape s: vs our f32 matmul, and (f16) vs ORT's MatMul."""
    if dt_name == "bf16" and not ctx.have_bf16:
        print("# bf16 rows n/a: ml_dtypes is not installed (no numpy bfloat16)")
        return
    dt = sp.F16 if dt_name == "f16" else sp.BF16
    npdt = dt.numpy
    bits = MANTISSA_BITS[dt_name]
    a, b = a32.astype(npdt), b32.astype(npdt)
    af, bf = a.astype(np.float32), b.astype(np.float32)  # the same values in f32
    ref = af @ bf
    flops = 2.0 * s[0] * s[1] * s[2]
    pn = program(dt, dt, s, matmul)
    ort_err = "" if ctx.ort is not None else "onnxruntime is not installed"
    if ctx.ort is not None:
        from onnx import TensorProto
        tn = TensorProto.FLOAT16 if dt_name == "f16" else TensorProto.BFLOAT16
        try:
            ort_session("MatMul", tn, tn, tn, s, 1)
        except Exception as e:  # onnxruntime's answer (NOT_IMPLEMENTED for bf16)
            ort_err = str(e).strip().splitlines()[0]
    if dt_name == "bf16" and ctx.ort is not None and ort_err and not ctx.bf16_said:
        ctx.bf16_said = True
        print("# bf16: onnxruntime has no bf16 MatMul on the CPU (it says: %s): bf16 is "
              "compared with our f32 only" % ort_err)
    u1 = 0.0
    for threads in THREADS:
        rt = pn.runtime(num_threads=threads)
        rt32 = p32.runtime(num_threads=threads)
        c = rt(a=a, b=b)["c"]
        if c.dtype != npdt:
            error("%s %s: result dtype %s" % (dt_name, shape_name(s), c.dtype))
        u = ulps(c, ref, bits)
        if not u <= 1.0:
            error("%s %s %d thread(s): ours is %.2f ulp from numpy's f32 matmul"
                  % (dt_name, shape_name(s), threads, u))
        u1 = u if threads == 1 else u1
        tag = threads_tag(dt_name + " matmul", s, threads)
        print_row(tag + " vs f32", measure(functools.partial(rt, a=a, b=b),
                                           functools.partial(rt32, a=af, b=bf), ctx.reps, flops))
        if dt_name != "f16":
            continue
        if ort_err:
            print_row(tag + " vs ORT", None)
            print("# ORT f16 row n/a: %s" % ort_err)
            continue
        sess = ort_session("MatMul", tn, tn, tn, s, threads)
        feeds = {"A": a, "B": b}
        uo = ulps(sess.run(None, feeds)[0], ref, bits)
        if not uo <= 1.0:
            error("f16 %s %d thread(s): ORT is %.2f ulp from numpy's f32 matmul"
                  % (shape_name(s), threads, uo))
        print_row(tag + " vs ORT", measure(functools.partial(rt, a=a, b=b),
                                           functools.partial(sess.run, None, feeds), ctx.reps,
                                           flops))
    ctx.notes.append(where_narrow(ctx, dt_name, dt, s, a, b, af, bf, pn, p32, u1,
                                  with_ort=not ort_err))


# ---- softmax, layer_norm, reductions and elementwise on f16/bf16 (no matmul) --------------------

OPS_SHAPE = (4096, 1024)
OPS = [  # (row name, the op on a traced tensor, numpy's f32 reference of the op)
    ("softmax", lambda x: x.softmax(-1),
     lambda x: np.exp(x - x.max(-1, keepdims=True)) / np.exp(
         x - x.max(-1, keepdims=True)).sum(-1, keepdims=True)),
    ("layer_norm", lambda x: x.layer_norm(-1),
     lambda x: (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)),
    ("sum axis -1", lambda x: x.sum(-1), lambda x: x.astype(np.float64).sum(-1)),
    ("sum axis 0", lambda x: x.sum(0), lambda x: x.astype(np.float64).sum(0)),
    ("max axis -1", lambda x: x.max(-1), lambda x: x.max(-1)),
    ("x*y+x (elementwise)", None, None),
]


def op_program(dt, shape, fn):
    with sp.Scope() as scope:
        x = scope.input("x", dt, ", ".join(str(d) for d in shape))
        if fn is None:  # the elementwise row: two operands
            y = scope.input("y", dt, ", ".join(str(d) for d in shape))
            return scope.program([x, y], {"z": x * y + x})
        return scope.program([x], {"z": fn(x)})


def unfused_runtime(program_, threads):
    """A runtime made with SHP_FUSION=off: the narrow op runs as the tracer wrote it (convert to
    f32, the f32 op, convert back), every op its own step: the path before issue 41's last item."""
    old = os.environ.get("SHP_FUSION")
    os.environ["SHP_FUSION"] = "off"
    try:
        return program_.runtime(num_threads=threads)
    finally:
        if old is None:
            del os.environ["SHP_FUSION"]
        else:
            os.environ["SHP_FUSION"] = old


def bench_ops(ctx, rng):
    """f16/bf16 softmax, layer_norm, sums, max and an elementwise chain on 4096x1024: the narrow
    program against the f32 one (ratio > 1: the narrow program is faster) and against the same
    narrow program with fusion off (SHP_FUSION=off: convert, f32 op, convert as three steps)."""
    m, n = OPS_SHAPE
    x32 = rng.uniform(-3, 3, (m, n)).astype(np.float32)
    y32 = rng.uniform(-3, 3, (m, n)).astype(np.float32)
    elems = float(m * n)
    print("# softmax, layer_norm, reductions, elementwise %dx%d: columns ours/peer are Gelem/s "
          "(elements of x per second); 'vs f32': the f32 program on the same values; 'vs "
          "unfused': the same narrow program in a runtime made with SHP_FUSION=off (convert to "
          "f32, the f32 op, convert back: three steps)" % (m, n), flush=True)
    for name, fn, ref in OPS:
        p32 = op_program(sp.F32, OPS_SHAPE, fn)
        for dt_name in ("f16", "bf16"):
            if dt_name == "bf16" and not ctx.have_bf16:
                continue
            dt = sp.F16 if dt_name == "f16" else sp.BF16
            npdt = dt.numpy
            x, y = x32.astype(npdt), y32.astype(npdt)
            xf, yf = x.astype(np.float32), y.astype(np.float32)
            feeds = {"x": x} if fn is not None else {"x": x, "y": y}
            feeds32 = {"x": xf} if fn is not None else {"x": xf, "y": yf}
            pn = op_program(dt, OPS_SHAPE, fn)
            for threads in THREADS:
                rt, rt_off = pn.runtime(num_threads=threads), unfused_runtime(pn, threads)
                rt32 = p32.runtime(num_threads=threads)
                z = rt(**feeds)["z"]
                z_off = rt_off(**feeds)["z"]
                if z.dtype != npdt or z.view(np.uint16).tobytes() != z_off.view(
                        np.uint16).tobytes():
                    error("%s %s %d thread(s): fused and unfused results differ"
                          % (dt_name, name, threads))
                z32 = rt32(**feeds32)["z"]
                want = (xf * yf + xf) if fn is None else ref(xf)
                if not np.allclose(z32, want, rtol=1e-4, atol=1e-3 * max(1.0, float(
                        np.max(np.abs(want))) * 1e-3)):
                    error("f32 %s: ours differs from numpy" % name)
                if fn is None:  # rounded after each op, as numpy's own narrow arithmetic
                    if not np.array_equal(z.astype(np.float32), (x * y + x).astype(np.float32)):
                        error("%s %s: ours differs from numpy's %s arithmetic"
                              % (dt_name, name, dt_name))
                else:  # within 1 ulp of the narrow type (plus slack) of our own f32 result
                    u = ulps(z, z32, MANTISSA_BITS[dt_name])
                    if not u <= 1.0:
                        error("%s %s: %.2f ulp from the f32 result" % (dt_name, name, u))
                tag = "%s %s %dx%d %d thread%s" % (dt_name, name, m, n, threads,
                                                   "" if threads == 1 else "s")
                r32 = measure(functools.partial(rt, **feeds), functools.partial(rt32, **feeds32),
                              ctx.reps, elems)
                print_row(tag + " vs f32", r32)
                roff = measure(functools.partial(rt, **feeds), functools.partial(rt_off, **feeds),
                               ctx.reps, elems)
                print_row(tag + " vs unfused", roff)
                ms = lambda g: elems / (g * 1e9) * 1e3  # noqa: E731
                ctx.notes.append("# %s: %.2f ms (%.2f in the 'vs unfused' rounds); f32 %.2f ms; "
                                 "unfused (convert, f32 op, convert) %.2f ms"
                                 % (tag, ms(r32[0]), ms(roff[0]), ms(r32[1]), ms(roff[1])))


def bench_int(ctx, s, rng):
    """The u8 x i8 -> i32 rows of shape s against ORT's MatMulInteger."""
    m, n, k = s
    flops = 2.0 * m * n * k
    name = shape_name(s)
    au = rng.integers(0, 256, (m, k), dtype=np.uint8)
    bi = rng.integers(-128, 128, (k, n), dtype=np.int8)
    pi = program(sp.U8, sp.I8, s, int_matmul)
    refi = (au.astype(np.float64) @ bi.astype(np.float64)).astype(np.int32)  # exact
    for threads in (1, 2):
        c = pi.runtime(num_threads=threads)(a=au, b=bi)["c"]
        if c.dtype != np.int32 or not np.array_equal(c, refi):
            error("u8xi8 %s %d thread(s): ours differs from numpy's int32 result"
                  % (name, threads))
    bt = bi
    if ctx.ort is not None:
        from onnx import TensorProto
        types = (TensorProto.UINT8, TensorProto.INT8, TensorProto.INT32)
        co = ort_session("MatMulInteger", *types, s, 1).run(None, {"A": au, "B": bi})[0]
        bad = int(np.count_nonzero(co != refi))
        if bad:
            # MLAS's x86 u8s8 kernel without VNNI adds u8*s8 pairs into saturating int16
            # (onnxruntime's quantization guide: reduce_range, 7-bit weights, on such CPUs).
            bt = rng.integers(-64, 64, (k, n), dtype=np.int8)
            print("# u8xi8 %s: ORT MatMulInteger on full-range i8 B differs from numpy's int32 "
                  "in %d of %d outputs (max |diff| %d; ours equals numpy's): its x86 u8s8 "
                  "kernel without VNNI saturates int16 pair sums (onnxruntime's reduce_range); "
                  "timed and checked with B in [-64, 63] (7 bits)"
                  % (name, bad, co.size, int(np.max(np.abs(co.astype(np.int64) - refi)))))
    refi = (au.astype(np.float64) @ bt.astype(np.float64)).astype(np.int32)
    for threads in THREADS:
        rt = pi.runtime(num_threads=threads)
        c = rt(a=au, b=bt)["c"]
        if not np.array_equal(c, refi):
            error("u8xi8 %s %d thread(s): ours differs from numpy's int32 result"
                  % (name, threads))
        tag = threads_tag("u8xi8 matmul", s, threads) + " vs ORT MatMulInteger"
        if ctx.ort is None:
            print_row(tag, None)
            continue
        sess = ort_session("MatMulInteger", *types, s, threads)
        feeds = {"A": au, "B": bt}
        co = sess.run(None, feeds)[0]
        if co.dtype != np.int32 or not np.array_equal(co, c):
            error("u8xi8 %s %d thread(s): ORT MatMulInteger and ours differ in %d outputs"
                  % (name, threads, int(np.count_nonzero(co != c))))
        print_row(tag, measure(functools.partial(rt, a=au, b=bt),
                               functools.partial(sess.run, None, feeds), ctx.reps, flops))
    ctx.notes.append(where_int(ctx, s, au, bt, pi))


def call_fn(program_, threads=1, **inputs):
    """runtime(**inputs) of a runtime of program_, as a no-argument call."""
    return functools.partial(program_.runtime(num_threads=threads), **inputs)


def where_narrow(ctx, dt_name, dt, s, a, b, af, bf, pn, p32, ulp, with_ort):
    """Our f16/bf16 matmul and its parts run alone (1 thread), and ORT's per-node times from its
    profiler."""
    m, n, k = s
    reps = min(ctx.reps, 5)
    whole = median_ms(call_fn(pn, a=a, b=b), reps)
    with sp.Scope() as scope:
        xa = scope.input("a", dt, "%d, %d" % (m, k))
        xb = scope.input("b", dt, "%d, %d" % (k, n))
        p_in = scope.program([xa, xb], {"a32": xa.astype(sp.F32), "b32": xb.astype(sp.F32)})
    conv_in = median_ms(call_fn(p_in, a=a, b=b), reps)
    gemm = median_ms(call_fn(p32, a=af, b=bf), reps)
    c32 = af @ bf
    conv_out = median_ms(call_fn(unary_program(sp.F32, (m, n), dt), x=c32), reps)
    parts = conv_in + gemm + conv_out
    line = ("# where the time goes, %s %s, 1 thread (%s): the matmul %.2f ms (max error %.2f "
            "ulp); its parts alone: convert A, B to f32 %.2f ms (%.2f Gelem/s) + f32 matmul "
            "%.2f ms + convert C to %s %.2f ms (%.2f Gelem/s) = %.2f ms, conversions %.0f%% of it"
            % (dt_name, shape_name(s), figure_name(), whole, ulp, conv_in,
               (m * k + k * n) / conv_in * 1e-6, gemm, dt_name, conv_out,
               m * n / conv_out * 1e-6, parts, 100.0 * (conv_in + conv_out) / parts))
    if with_ort and dt_name == "f16":
        from onnx import TensorProto
        t = TensorProto.FLOAT16
        nodes = ort_node_ms(lambda d: ort_session("MatMul", t, t, t, s, 1, d),
                            {"A": a, "B": b}, max(reps, 5))
        line += ("\n#   ORT f16 MatMul as its profiler shows it (wall time, median per node): "
                 + " + ".join("%s %s %.2f ms" % (node, op, ms) for node, op, ms in nodes)
                 + " = %.2f ms" % sum(ms for _, _, ms in nodes))
    return line


def where_int(ctx, s, au, bi, pi):
    """Our u8 x i8 matmul and its parts run alone (1 thread), and ORT's node time."""
    m, n, k = s
    reps = min(ctx.reps, 5)
    whole = median_ms(call_fn(pi, a=au, b=bi), reps)
    with sp.Scope() as scope:
        xa = scope.input("a", sp.U8, "%d, %d" % (m, k))
        xb = scope.input("b", sp.I8, "%d, %d" % (k, n))
        p_in = scope.program([xa, xb], {"a32": xa.astype(sp.I32), "b32": xb.astype(sp.I32)})
    conv_in = median_ms(call_fn(p_in, a=au, b=bi), reps)
    gemm = median_ms(call_fn(program(sp.I32, sp.I32, s, matmul), a=au.astype(np.int32),
                             b=bi.astype(np.int32)), reps)
    line = ("# where the time goes, u8xi8 %s, 1 thread (%s): the matmul %.2f ms; its parts "
            "alone: convert A, B to i32 %.2f ms + i32 matmul %.2f ms (%.2f GOP/s)"
            % (shape_name(s), figure_name(), whole, conv_in, gemm, 2.0 * m * n * k / gemm * 1e-6))
    if ctx.ort is not None:
        from onnx import TensorProto
        types = (TensorProto.UINT8, TensorProto.INT8, TensorProto.INT32)
        nodes = ort_node_ms(lambda d: ort_session("MatMulInteger", *types, s, 1, d),
                            {"A": au, "B": bi}, max(reps, 5))
        line += ("\n#   ORT MatMulInteger as its profiler shows it (wall time, median per node): "
                 + " + ".join("%s %s %.2f ms" % (node, op, ms) for node, op, ms in nodes))
    return line


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BenchError as e:
        print("ERROR: %s" % e, flush=True)
        sys.exit(1)
