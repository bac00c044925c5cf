"""Control flow: our `scan` (shapepoly.scan through the Python binding, a symbolic sequence length)
against JAX's jax.lax.scan under jax.jit, against the same body unrolled by hand, and the cost of
one iteration, on one thread.

Rows:
  "gru scan 1000 steps hH bB vs JAX": a GRU over xs[1000, B, H] from h0[B, H] (input size = H;
      z = sigmoid(x Wz + h Uz + bz), r = sigmoid(x Wr + h Ur + br), n = tanh(x Wn + (r*h) Un + bn),
      h' = (1-z)*n + z*h), returning the last h and every h (ys[1000, B, H]); ours traced once with
      the length `seq` (declared >= 0) and the weights as program inputs (closures of the body:
      captures), JAX's jax.jit(lambda h0, xs, *weights: lax.scan(cell, h0, xs)) with the same
      weights as arguments. Both results are compared before timing (and against a float64 numpy
      loop); the driver fails if they differ by more than 1e-4.
  "scan 10000 steps tanh(h@W+b) vs unrolled": h' = tanh(h @ W + b) (h [1, 16], W [16, 16], a
      contraction; the last h) as one scan whose length `seq` (>= 0) is a dim input, against the
      same 10,000 bodies traced one after another into one straight-line program (30,000
      operations: the same ones). ratio = unrolled time / scan time; the issue's target: the scan
      within 2x of the unrolled program (ratio >= 0.50). Both results must agree (1e-5).
  "scan 10000 steps tanh(h@W+x_i) vs unrolled": the same with x_i, slice i of xs[10000, 1, 16],
      in place of b (unrolled: x_i as slice + reshape, 50,000 operations).
  "  per-iteration overhead: (scan-unrolled)/N": under each, (scan time - unrolled time) / 10,000
      in microseconds from each round's own pair of times (negative: the scan is faster).
  "scan 10000 steps ... vs JAX": the same scan against JAX's jitted lax.scan of the same body.
  "per-iteration, trivial body h+x (us)": the time of one step of a scan whose body is one add
      on [1, 16], as (t(10000) - t(1000)) / 9000 from one program run at both lengths, ours and
      JAX's (jax.jit; two compiles, one per length) in microseconds.
Each row runs rounds as benchmarks/narrow/narrow_bench.py does: both sides warmed up, then in
each round ours and the peer back to back (the peer first in every other round), each for a
block of >= 50 ms of calls; the time columns are each side's median, the ratio (peer time / our
time; > 1: ours faster) the median of the rounds' ratios and 'rounds' their lowest..highest.

Threads: ours runs with num_threads=1; JAX with XLA_FLAGS=--xla_cpu_multi_thread_eigen=false (set
here before JAX is imported, unless XLA_FLAGS is given); the notes print each side's CPU time over
wall time for the GRU rows (~1.0: one core).
The header prints the CPU (/proc/cpuinfo), our SIMD target (shapepoly.simd_target()), JAX's and
jaxlib's versions, backend and device, and what XLA:CPU compiles for (a child process compiles one
elementwise function with --xla_dump_to and reads the widest float vector of its LLVM IR and its
debug options).

Usage: control_flow_bench.py [--quick]   (SHAPEPOLY_LIB: the library)
  --quick: 3 rounds per row instead of 7.
Last line: targets: N met, M MISSED, K not measured
"""
import argparse
import glob
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bindings", "python"))
import shapepoly as sp  # noqa: E402

GRU_SHAPES = [(64, 1), (64, 16), (256, 1), (256, 16)]  # (hidden, batch)
GRU_STEPS = 1000
SMALL_STEPS = 10000
SMALL_N = 16
GATES = ("z", "r", "n")


# ---- timing (as benchmarks/narrow/narrow_bench.py) ----------------------------------------------

def seconds(fn, calls):
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls


def block_calls(fn):
    """Calls per timed block: >= 50 ms, at least one."""
    return max(1, int(0.05 / max(seconds(fn, 1), 1e-7)))


def rounds(ours, peer, reps):
    """(our times, peer times) of `reps` rounds, ours and the peer back to back in each (the
    peer first in every other round), after a warm-up call of each."""
    ours()
    peer()
    c_ours, c_peer = block_calls(ours), block_calls(peer)
    t_ours, t_peer = [], []
    for r in range(reps):
        if r % 2 == 0:
            t_ours.append(seconds(ours, c_ours))
            t_peer.append(seconds(peer, c_peer))
        else:
            t_peer.append(seconds(peer, c_peer))
            t_ours.append(seconds(ours, c_ours))
    return t_ours, t_peer


def cpu_per_wall(fn):
    """Process CPU time over wall time of one 50 ms block of fn: ~1.0 when it ran on one core."""
    calls = block_calls(fn)
    c0, t0 = time.process_time(), time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.process_time() - c0) / (time.perf_counter() - t0)


def summary(t_ours, t_peer):
    """(our median, peer median, median ratio, lowest, highest); a ratio is peer / ours."""
    ratios = [b / a for a, b in zip(t_ours, t_peer)]
    return (statistics.median(t_ours), statistics.median(t_peer), statistics.median(ratios),
            min(ratios), max(ratios))


ROW_FMT = "%-44s %11s %11s %8s %11s  %-8s %s"


def print_row(name, ours, peer, ratio, spread, target="-", verdict="-"):
    print(ROW_FMT % (name, ours, peer, ratio, spread, target, verdict), flush=True)


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
    want = ["sse4_2", "avx", "avx2", "fma", "avx512f"]
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    have = set(line.split(":", 1)[1].split())
                    return " ".join(w for w in want if w in have) or "-"
    except OSError:
        pass
    return "unknown"


XLA_PROBE = """
import jax, jax.numpy as jnp
jax.jit(lambda a: jnp.tanh(a) * a + 1.0).lower(jnp.ones((4096,), jnp.float32)).compile()
"""


def xla_target():
    """What XLA:CPU compiles for: the widest <N x float> of an elementwise kernel's optimized
    LLVM IR and the debug options that cap it (a child process with --xla_dump_to)."""
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ)
        # First: XLA stops reading its flags at a word without dashes.
        env["XLA_FLAGS"] = ("--xla_dump_to=%s %s" % (d, env.get("XLA_FLAGS", ""))).strip()
        try:
            subprocess.run([sys.executable, "-c", XLA_PROBE], env=env, check=True, timeout=300,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        except (subprocess.SubprocessError, OSError) as e:
            return "unknown (probe failed: %s)" % e
        widths, triple = set(), "?"
        for path in glob.glob(os.path.join(d, "*ir-with-opt.ll")):
            text = open(path).read()
            widths.update(int(w) for w in re.findall(r"<(\d+) x float>", text))
            m = re.search(r'target triple = "([^"]+)"', text)
            triple = m.group(1) if m else triple
        opts = {}
        for path in glob.glob(os.path.join(d, "*", "compile_options.textproto"))[:1]:
            for key in ("xla_cpu_multi_thread_eigen", "xla_cpu_max_isa", "xla_cpu_prefer_vector_width",
                        "xla_cpu_use_xnnpack", "xla_cpu_enable_fast_math"):
                m = re.search(r"\b%s: (\S+)" % key, open(path).read())
                if m:
                    opts[key] = m.group(1)
        width = max(widths) if widths else 0
        return ("LLVM for the host CPU (%s), widest float vector in a tanh kernel <%d x float> "
                "(%d bits); %s" % (triple, width, width * 32,
                                   ", ".join("%s %s" % kv for kv in opts.items()) or "options ?"))


# ---- GRU ---------------------------------------------------------------------------------------

def gru_weights(rng, hidden):
    bound = 1.0 / np.sqrt(hidden)
    w = {}
    for g in GATES:
        w["W" + g] = rng.uniform(-bound, bound, (hidden, hidden)).astype(np.float32)
        w["U" + g] = rng.uniform(-bound, bound, (hidden, hidden)).astype(np.float32)
        w["b" + g] = rng.uniform(-bound, bound, (hidden,)).astype(np.float32)
    return w


def gru_cell(w, h, x, sigmoid, tanh):
    """One GRU step, written once for both sides (our tensors and jnp arrays)."""
    z = sigmoid(x @ w["Wz"] + h @ w["Uz"] + w["bz"])
    r = sigmoid(x @ w["Wr"] + h @ w["Ur"] + w["br"])
    n = tanh(x @ w["Wn"] + (r * h) @ w["Un"] + w["bn"])
    h = (1 - z) * n + z * h
    return h, h


def gru_program(hidden, batch, names):
    with sp.Scope() as s:
        s.declare("seq", 0)
        xs = s.input("xs", sp.F32, "seq, %d, %d" % (batch, hidden))
        h0 = s.input("h0", sp.F32, "%d, %d" % (batch, hidden))
        w = {k: s.input(k, sp.F32, "%d" % hidden if k[0] == "b" else "%d, %d" % (hidden, hidden))
             for k in names}
        h, ys = sp.scan(lambda h, x: gru_cell(w, h, x, sp.Tensor.logistic, sp.Tensor.tanh), h0, xs)
        return s.program([xs, h0] + [w[k] for k in names], {"h": h, "ys": ys})


def gru_jax(names):
    import jax
    import jax.numpy as jnp

    def f(h0, xs, *ws):
        w = dict(zip(names, ws))
        return jax.lax.scan(lambda h, x: gru_cell(w, h, x, jax.nn.sigmoid, jnp.tanh), h0, xs)
    return jax.jit(f)


def gru_numpy(w, h0, xs):
    """The float64 reference."""
    w = {k: v.astype(np.float64) for k, v in w.items()}
    h = h0.astype(np.float64)
    ys = np.empty(xs.shape)
    for i in range(xs.shape[0]):
        h, ys[i] = gru_cell(w, h, xs[i].astype(np.float64), lambda v: 1 / (1 + np.exp(-v)), np.tanh)
    return h, ys


def bench_gru(ctx, hidden, batch, rng):
    import jax
    names = [p + g for g in GATES for p in "WUb"]
    w = gru_weights(rng, hidden)
    xs = rng.uniform(-1, 1, (GRU_STEPS, batch, hidden)).astype(np.float32)
    h0 = rng.uniform(-1, 1, (batch, hidden)).astype(np.float32)
    prog = gru_program(hidden, batch, names)
    rt = prog.runtime(num_threads=1)
    feeds = dict(w, xs=xs, h0=h0)
    got = rt(**feeds)
    fj = gru_jax(names)
    args = [jax.device_put(a) for a in [h0, xs] + [w[k] for k in names]]
    hj, ysj = (np.asarray(a) for a in fj(*args))
    h64, ys64 = gru_numpy(w, h0, xs)
    err_jax = max(float(np.max(np.abs(got["h"] - hj))), float(np.max(np.abs(got["ys"] - ysj))))
    err_ref = float(np.max(np.abs(got["ys"] - ys64)))
    err_jax_ref = float(np.max(np.abs(ysj - ys64)))
    name = "gru scan %d steps h%d b%d vs JAX" % (GRU_STEPS, hidden, batch)
    ctx.notes.append("# %s: max |ours - JAX| %.2g (h and ys), |ours - float64 numpy| %.2g, "
                     "|JAX - float64 numpy| %.2g" % (name, err_jax, err_ref, err_jax_ref))
    if not (err_jax <= 1e-4 and err_ref <= 1e-4):
        raise BenchError("%s: results differ (|ours - JAX| %g, |ours - float64| %g)"
                         % (name, err_jax, err_ref))

    def peer():
        jax.block_until_ready(fj(*args))
    t_ours, t_peer = rounds(lambda: rt(**feeds), peer, ctx.reps)
    o, p, r, lo, hi = summary(t_ours, t_peer)
    print_row(name, "%.3f ms" % (o * 1e3), "%.3f ms" % (p * 1e3), "%.2fx" % r, "%.2f..%.2f" % (lo, hi))
    ctx.notes.append("# %s: per step ours %.2f us, JAX %.2f us; CPU time / wall time ours %.2f, JAX %.2f"
                     % (name, o / GRU_STEPS * 1e6, p / GRU_STEPS * 1e6, cpu_per_wall(lambda: rt(**feeds)),
                        cpu_per_wall(peer)))


# ---- scan against the same body unrolled -------------------------------------------------------

def small_scan_program(with_xs):
    """h' = tanh(h @ w + b) (with_xs: tanh(h @ w + x_i)) as a scan over a length `seq` >= 0
    (with_xs: axis 0 of xs; else a dim input)."""
    with sp.Scope() as s:
        s.declare("seq", 0)
        h0 = s.input("h0", sp.F32, "1, %d" % SMALL_N)
        w = s.input("w", sp.F32, "%d, %d" % (SMALL_N, SMALL_N))
        if with_xs:
            xs = s.input("xs", sp.F32, "seq, 1, %d" % SMALL_N)
            h, _ = sp.scan(lambda h, x: ((h @ w + x).tanh(), None), h0, xs)
            return s.program([xs, h0, w], {"h": h})
        b = s.input("b", sp.F32, "%d" % SMALL_N)
        h, _ = sp.scan(lambda h, _x: ((h @ w + b).tanh(), None), h0, None, length=s.var("seq"))
        return s.program([b, h0, w, s.dim_input("seq")], {"h": h})


def small_unrolled_program(with_xs):
    """The same SMALL_STEPS bodies traced one after another (x_i: slice + reshape of xs)."""
    with sp.Scope() as s:
        h0 = s.input("h0", sp.F32, "1, %d" % SMALL_N)
        w = s.input("w", sp.F32, "%d, %d" % (SMALL_N, SMALL_N))
        if with_xs:
            first = s.input("xs", sp.F32, "%d, 1, %d" % (SMALL_STEPS, SMALL_N))
        else:
            first = s.input("b", sp.F32, "%d" % SMALL_N)
        h = h0
        for i in range(SMALL_STEPS):
            x = first.slice([i, 0, 0], [i + 1, 1, SMALL_N]).reshape(1, SMALL_N) if with_xs else first
            h = (h @ w + x).tanh()
        return s.program([first, h0, w], {"h": h})


def trivial_scan_program():
    with sp.Scope() as s:
        s.declare("seq", 0)
        xs = s.input("xs", sp.F32, "seq, 1, %d" % SMALL_N)
        h0 = s.input("h0", sp.F32, "1, %d" % SMALL_N)
        h, _ = sp.scan(lambda h, x: (h + x, None), h0, xs)
        return s.program([xs, h0], {"h": h})


def small_jax(with_xs):
    import jax
    import jax.numpy as jnp
    if with_xs:
        return jax.jit(lambda first, h0, w: jax.lax.scan(lambda h, x: (jnp.tanh(h @ w + x), None),
                                                         h0, first)[0])
    return jax.jit(lambda first, h0, w: jax.lax.scan(lambda h, _x: (jnp.tanh(h @ w + first), None),
                                                     h0, None, length=SMALL_STEPS)[0])


def bench_unrolled(ctx, rng, jax, with_xs):
    """The scan against the same bodies unrolled (target: within 2x), the per-iteration
    overhead that the scan adds, and JAX's jitted scan of the same body (when JAX is here)."""
    what = "h@W+x_i" if with_xs else "h@W+b"
    if with_xs:
        first = rng.uniform(-1, 1, (SMALL_STEPS, 1, SMALL_N)).astype(np.float32)
    else:
        first = rng.uniform(-0.1, 0.1, (SMALL_N,)).astype(np.float32)
    h0 = rng.uniform(-1, 1, (1, SMALL_N)).astype(np.float32)
    # A contraction (spectral radius ~0.3): rounding differences do not grow over the steps.
    w = rng.uniform(-0.5, 0.5, (SMALL_N, SMALL_N)).astype(np.float32) / np.float32(np.sqrt(SMALL_N))
    key = "xs" if with_xs else "b"
    feeds = {key: first, "h0": h0, "w": w}
    scan_feeds = dict(feeds) if with_xs else dict(feeds, seq=SMALL_STEPS)
    t0 = time.perf_counter()
    scan_prog, unrolled = small_scan_program(with_xs), small_unrolled_program(with_xs)
    t_trace = time.perf_counter() - t0
    scan_rt = scan_prog.runtime(num_threads=1)
    unrolled_rt = unrolled.runtime(num_threads=1)
    a = scan_rt(**scan_feeds)["h"]
    t0 = time.perf_counter()
    b = unrolled_rt(**feeds)["h"]
    t_first = time.perf_counter() - t0
    ops = SMALL_STEPS * (5 if with_xs else 3)
    err = float(np.max(np.abs(a - b)))
    ctx.notes.append("# scan vs unrolled, tanh(%s): max |scan - unrolled| %.2g; tracing both %.2f s "
                     "(the unrolled program: %d operations); its first run (plan) %.2f s"
                     % (what, err, t_trace, ops, t_first))
    if not err <= 1e-5:
        raise BenchError("scan and unrolled (%s) differ by %g" % (what, err))
    name = "scan %d steps tanh(%s) vs unrolled" % (SMALL_STEPS, what)
    t_scan, t_unr = rounds(lambda: scan_rt(**scan_feeds), lambda: unrolled_rt(**feeds), ctx.reps)
    o, p, r, lo, hi = summary(t_scan, t_unr)
    ok = r >= 0.5
    ctx.count(ok)
    print_row(name, "%.3f ms" % (o * 1e3), "%.3f ms" % (p * 1e3), "%.2fx" % r, "%.2f..%.2f" % (lo, hi),
              ">=0.50x", "met" if ok else "MISSED")
    over = [(s - u) / SMALL_STEPS * 1e6 for s, u in zip(t_scan, t_unr)]
    print_row("  per-iteration overhead: (scan-unrolled)/N", "%+.3f us" % statistics.median(over), "-", "-",
              "%+.3f..%+.3f" % (min(over), max(over)))
    note = ("# scan %d steps tanh(%s): per step ours %.3f us, unrolled %.3f us"
            % (SMALL_STEPS, what, o / SMALL_STEPS * 1e6, p / SMALL_STEPS * 1e6))
    if jax is not None:
        fj = small_jax(with_xs)
        args = [jax.device_put(v) for v in (first, h0, w)]
        hj = np.asarray(fj(*args))
        errj = float(np.max(np.abs(a - hj)))
        if not errj <= 1e-4:
            raise BenchError("scan tanh(%s): ours and JAX differ by %g" % (what, errj))
        t_scan2, t_jax = rounds(lambda: scan_rt(**scan_feeds), lambda: jax.block_until_ready(fj(*args)),
                                ctx.reps)
        o, p, r, lo, hi = summary(t_scan2, t_jax)
        print_row("scan %d steps tanh(%s) vs JAX" % (SMALL_STEPS, what), "%.3f ms" % (o * 1e3),
                  "%.3f ms" % (p * 1e3), "%.2fx" % r, "%.2f..%.2f" % (lo, hi))
        note += ", JAX %.3f us (max |ours - JAX| %.2g)" % (p / SMALL_STEPS * 1e6, errj)
    ctx.notes.append(note)


def bench_trivial(ctx, rng):
    import jax
    n1, n2 = 1000, SMALL_STEPS
    rt = trivial_scan_program().runtime(num_threads=1)
    fj = jax.jit(lambda h0, xs: jax.lax.scan(lambda h, x: (h + x, None), h0, xs)[0])
    h0 = rng.uniform(-1, 1, (1, SMALL_N)).astype(np.float32)
    feeds, args = {}, {}
    for n in (n1, n2):
        xs = rng.uniform(-1, 1, (n, 1, SMALL_N)).astype(np.float32)
        feeds[n] = {"xs": xs, "h0": h0}
        args[n] = [jax.device_put(h0), jax.device_put(xs)]
        want = h0 + xs.sum(axis=0, dtype=np.float64)
        for got, who in ((rt(**feeds[n])["h"], "ours"), (np.asarray(fj(*args[n])), "JAX")):
            if not float(np.max(np.abs(got - want))) <= 1e-3:
                raise BenchError("trivial scan, %s at %d steps: wrong sum" % (who, n))
    times = {}
    for n in (n1, n2):
        times[n] = rounds(lambda n=n: rt(**feeds[n]), lambda n=n: jax.block_until_ready(fj(*args[n])),
                          ctx.reps)
    ours = [(b - a) / (n2 - n1) * 1e6 for a, b in zip(times[n1][0], times[n2][0])]
    peer = [(b - a) / (n2 - n1) * 1e6 for a, b in zip(times[n1][1], times[n2][1])]
    o, p, r, lo, hi = summary(ours, peer)
    print_row("per-iteration, trivial body h+x (us)", "%.2f us" % o, "%.2f us" % p, "%.2fx" % r,
              "%.2f..%.2f" % (lo, hi))
    ctx.notes.append("# trivial body: whole call at %d / %d steps: ours %.3f / %.3f ms, JAX %.3f / "
                     "%.3f ms (medians)" % (n1, n2, statistics.median(times[n1][0]) * 1e3,
                                            statistics.median(times[n2][0]) * 1e3,
                                            statistics.median(times[n1][1]) * 1e3,
                                            statistics.median(times[n2][1]) * 1e3))


# ---- driver ------------------------------------------------------------------------------------

class BenchError(Exception):
    """A result check failed: the driver fails (after printing the reason)."""


class Ctx:
    def __init__(self, reps):
        self.reps = reps
        self.notes = []
        self.met = self.missed = self.na = 0

    def count(self, ok):
        self.met += ok
        self.missed += not ok


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="3 rounds per row instead of 7")
    args = ap.parse_args(argv)
    ctx = Ctx(3 if args.quick else 7)
    print("# cpu: %s (/proc/cpuinfo; %s), %d cpus; load average %s"
          % (cpu_model(), cpu_flags(), os.cpu_count() or 0,
             " ".join("%.2f" % x for x in os.getloadavg())))
    print("# ours: shapepoly.scan through the Python binding, num_threads=1, SIMD target %s "
          "(shapepoly.simd_target()%s); library %s"
          % (sp.simd_target(), "; SHP_SIMD_TARGET=%s" % os.environ["SHP_SIMD_TARGET"]
             if os.environ.get("SHP_SIMD_TARGET") else "", sp.library_path))
    try:
        import jax
        import jaxlib
        print("# peer: JAX %s (jaxlib %s), backend %s, devices %s, XLA_FLAGS=%r"
              % (jax.__version__, jaxlib.__version__, jax.default_backend(), jax.devices(),
                 os.environ.get("XLA_FLAGS", "")))
        print("# peer target: XLA:CPU compiles %s" % xla_target())
    except ImportError as e:
        print("# peer: JAX unavailable (%s): rows n/a" % e)
        jax = None
    print("# figures: medians of %d rounds (ours and the peer back to back in each round, the peer "
          "first in every other one, >= 50 ms of calls each); ratio = peer time / our time (> 1: ours "
          "faster), the median of the rounds' ratios, 'rounds' their lowest..highest" % ctx.reps)
    print(ROW_FMT % ("scenario", "ours", "peer", "ratio", "rounds", "target", "verdict"), flush=True)
    rng = np.random.default_rng(0)
    if jax is not None:
        for hidden, batch in GRU_SHAPES:
            bench_gru(ctx, hidden, batch, rng)
    else:
        for hidden, batch in GRU_SHAPES:
            print_row("gru scan %d steps h%d b%d vs JAX" % (GRU_STEPS, hidden, batch), "-", "n/a", "-", "-")
    for with_xs in (False, True):
        bench_unrolled(ctx, rng, jax, with_xs)
    if jax is not None:
        bench_trivial(ctx, rng)
    else:
        print_row("per-iteration, trivial body h+x (us)", "-", "n/a", "-", "-")
    print()
    for line in ctx.notes:
        print(line)
    print()
    print("targets: %d met, %d MISSED, %d not measured" % (ctx.met, ctx.missed, ctx.na))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BenchError as e:
        print("ERROR: %s" % e, file=sys.stderr)
        sys.exit(1)
