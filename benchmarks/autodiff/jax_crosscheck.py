"""Cross-check of shp_program_grad against JAX on the MLP training loss (issue 10).

Traces the loss of benchmarks/autodiff/mlp_ref.py through the C API of libshapepoly.so
(ctypes): x: f32[batch, 784] and labels: i32[batch] are data inputs, the six weights are
parameters (shp_tensor_parameter), and

    logits = mlp(x)                      (784-256-256-10; relu as max(z, 0), or tanh)
    logp   = d - log(sum(exp(d), 1))     with d = logits - reduce_max(logits, 1)
    loss   = -mean(sum(take(eye(10), labels, 0) * logp, 1))

The program is serialized and loaded back (as deployed), shp_program_grad takes the gradient
wrt all six parameters, and one runtime runs it at batch 1, 7 and 64 -- the same program at
every batch. JAX computes jax.value_and_grad of the same loss in f32 on the same values.

Criterion, per output (the loss and each of the six gradients): with e = max|ours - jax| and
m = max|jax| over that output's elements, e <= 1e-5 * max(m, 1e-30) -- the error relative to the
output's largest magnitude. A batch passes when all seven outputs do. The errors of both sides
against a float64 numpy backprop are printed too, as information: they show how far f32
rounding alone moves either result.

Prints one verdict line per activation and batch, `crosscheck <act> batch <n>: PASS|FAIL ...`,
and exits 1 on any FAIL.

Usage: jax_crosscheck.py --lib path/to/libshapepoly.so [--activations relu,tanh]
"""

import argparse
import ctypes
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mlp_ref  # noqa: E402

vp, sz, i64 = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int64
F32, I32 = 0, 2
SHP_SUB, SHP_MUL, SHP_ADD, SHP_MAX = 1, 2, 0, 5
SHP_NEG, SHP_EXP, SHP_LOG, SHP_TANH = 0, 2, 3, 10
SUM, MEAN, RMAX = 0, 1, 2
TOLERANCE = 1e-5
BATCHES = [1, 7, 64]


class Lib:
    """Just enough of the C API; an error becomes an exception with the library's message."""

    def __init__(self, path):
        L = ctypes.CDLL(path)
        for f, res, args in [
                ("shp_error_message", ctypes.c_char_p, [vp]), ("shp_error_code", ctypes.c_int32, [vp]),
                ("shp_buffer_data", vp, [vp]), ("shp_buffer_size", sz, [vp]),
                ("shp_array_data", vp, [vp]), ("shp_array_nbytes", sz, [vp]),
                ("shp_array_rank", sz, [vp]), ("shp_array_shape", ctypes.POINTER(i64), [vp]),
                ("shp_program_output_count", sz, [vp]), ("shp_program_output_name", ctypes.c_char_p, [vp, sz]),
                ("shp_simd_target", ctypes.c_char_p, []), ("shp_version_string", ctypes.c_char_p, [])]:
            getattr(L, f).restype = res
            getattr(L, f).argtypes = args
        for f in ("shp_error_destroy", "shp_array_destroy", "shp_runtime_destroy", "shp_program_destroy",
                  "shp_scope_destroy", "shp_buffer_destroy", "shp_runtime_options_destroy"):
            getattr(L, f).argtypes = [vp]
            getattr(L, f).restype = None
        self.L = L

    def __call__(self, fname, *args):
        f = getattr(self.L, fname)
        f.restype = vp
        err = f(*args)
        if err:
            msg = self.L.shp_error_message(err).decode()
            code = self.L.shp_error_code(err)
            self.L.shp_error_destroy(err)
            raise RuntimeError(f"{fname}: [{code}] {msg}")

    def new(self, fname, *args):
        """Calls a function whose last argument is an out-pointer; returns what it received."""
        out = vp()
        self(fname, *args, ctypes.byref(out))
        return out


def shape_arg(shape):
    return (i64 * max(1, len(shape)))(*shape), sz(len(shape))


def trace_loss(lib, params, activation):
    """The loss program (inputs x, labels, w0..b2), serialized and loaded back."""
    s = lib.new("shp_scope_create", None, sz(0))
    keep = []  # arrays whose memory the tracer reads during the calls

    def const(a):
        a = np.ascontiguousarray(a, dtype=np.float32)
        keep.append(a)
        return lib.new("shp_tensor_constant", s, F32, *shape_arg(a.shape), a.ctypes.data_as(vp), sz(a.nbytes))

    x = lib.new("shp_tensor_input", s, b"x", F32, b"batch, 784")
    labels = lib.new("shp_tensor_input", s, b"labels", I32, b"batch")
    ps = []
    for name, a in zip(mlp_ref.PARAM_NAMES, params):
        a = np.ascontiguousarray(a, dtype=np.float32)
        keep.append(a)
        ps.append(lib.new("shp_tensor_parameter", s, name.encode(), F32, *shape_arg(a.shape),
                          a.ctypes.data_as(vp), sz(a.nbytes)))
    zero = const(np.zeros((), np.float32))
    h = x
    for l in range(3):
        h = lib.new("shp_tensor_matmul", h, ps[2 * l])
        h = lib.new("shp_tensor_binary", SHP_ADD, h, ps[2 * l + 1])
        if l < 2:
            h = (lib.new("shp_tensor_binary", SHP_MAX, h, zero) if activation == "relu"
                 else lib.new("shp_tensor_unary", SHP_TANH, h))
    one = (i64 * 1)(1)
    m = lib.new("shp_tensor_reduce", RMAX, h, one, sz(1), ctypes.c_bool(True))
    d = lib.new("shp_tensor_binary", SHP_SUB, h, m)
    e = lib.new("shp_tensor_unary", SHP_EXP, d)
    se = lib.new("shp_tensor_reduce", SUM, e, one, sz(1), ctypes.c_bool(True))
    logp = lib.new("shp_tensor_binary", SHP_SUB, d, lib.new("shp_tensor_unary", SHP_LOG, se))
    onehot = lib.new("shp_tensor_take", const(np.eye(mlp_ref.OUT)), labels, i64(0))
    picked = lib.new("shp_tensor_reduce", SUM, lib.new("shp_tensor_binary", SHP_MUL, onehot, logp), one, sz(1),
                     ctypes.c_bool(False))
    loss = lib.new("shp_tensor_unary", SHP_NEG, lib.new("shp_tensor_reduce", MEAN, picked, None, sz(0),
                                                        ctypes.c_bool(False)))
    ins = (vp * 8)(x, labels, *ps)
    names = (ctypes.c_char_p * 1)(b"loss")
    traced = lib.new("shp_program_create", s, ins, sz(8), (vp * 1)(loss), names, sz(1))
    lib.L.shp_scope_destroy(s)
    buf = lib.new("shp_program_serialize", traced)
    lib.L.shp_program_destroy(traced)
    loaded = lib.new("shp_program_load", vp(lib.L.shp_buffer_data(buf)), sz(lib.L.shp_buffer_size(buf)))
    lib.L.shp_buffer_destroy(buf)
    return loaded


def wrap(lib, a):
    dtype = {np.dtype(np.float32): F32, np.dtype(np.int32): I32}[a.dtype]
    return lib.new("shp_array_wrap", dtype, *shape_arg(a.shape), a.ctypes.data_as(vp), sz(a.nbytes))


def run(lib, rt, program, x, labels):
    """{output name: array} of one run binding x and labels (the parameters take their defaults)."""
    n_out = lib.L.shp_program_output_count(program)
    arrays = [wrap(lib, x), wrap(lib, labels)]
    outs = (vp * n_out)()
    try:
        lib("shp_runtime_run", rt, (ctypes.c_char_p * 2)(b"x", b"labels"), (vp * 2)(*arrays), sz(2), outs,
            sz(n_out))
    finally:
        for a in arrays:
            lib.L.shp_array_destroy(a)
    result = {}
    for i in range(n_out):
        a = outs[i]
        rank = lib.L.shp_array_rank(a)
        shape = tuple(lib.L.shp_array_shape(a)[k] for k in range(rank))
        data = ctypes.string_at(lib.L.shp_array_data(a), lib.L.shp_array_nbytes(a))
        result[lib.L.shp_program_output_name(program, i).decode()] = np.frombuffer(
            data, dtype=np.float32).reshape(shape).copy()
        lib.L.shp_array_destroy(a)
    return result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--activations", default="relu,tanh")
    args = ap.parse_args()

    import jax

    jax.config.update("jax_default_matmul_precision", "highest")  # full f32 on every backend
    lib = Lib(args.lib)
    print(f"libshapepoly {lib.L.shp_version_string().decode()}, SIMD target "
          f"{lib.L.shp_simd_target().decode()}; JAX {jax.__version__} ({jax.default_backend()})")
    print(f"criterion per output: max|ours - jax| <= {TOLERANCE:g} * max|jax|")
    rng = np.random.default_rng(10)
    params = []
    for l in range(3):
        params.append((rng.standard_normal((mlp_ref.DIMS[l], mlp_ref.DIMS[l + 1])) /
                       np.sqrt(mlp_ref.DIMS[l])).astype(np.float32))
        params.append((0.1 * rng.standard_normal(mlp_ref.DIMS[l + 1])).astype(np.float32))
    wrt = (ctypes.c_char_p * 6)(*[n.encode() for n in mlp_ref.PARAM_NAMES])
    names = ["loss"] + [n + ".grad" for n in mlp_ref.PARAM_NAMES]
    failures = 0
    for activation in args.activations.split(","):
        program = trace_loss(lib, params, activation)
        grad = lib.new("shp_program_grad", program, b"loss", wrt, sz(6))
        got_names = [lib.L.shp_program_output_name(grad, i).decode()
                     for i in range(lib.L.shp_program_output_count(grad))]
        if got_names != names:
            raise SystemExit(f"grad program outputs {got_names}, expected {names}")
        rt = lib.new("shp_runtime_create", grad, None)
        value_and_grad = jax.jit(jax.value_and_grad(mlp_ref.jax_loss_fn(activation)))
        for batch in BATCHES:
            x = rng.standard_normal((batch, mlp_ref.IN)).astype(np.float32)
            labels = rng.integers(0, mlp_ref.OUT, size=batch).astype(np.int32)
            ours = run(lib, rt, grad, x, labels)
            jl, jg = value_and_grad(params, x, labels)
            theirs = dict(zip(names, [np.asarray(jl)] + [np.asarray(g) for g in jg]))
            ref_loss, ref_grads = mlp_ref.numpy_step([p.astype(np.float64) for p in params], x.astype(np.float64),
                                                     labels, activation)
            ref = dict(zip(names, [np.asarray(ref_loss)] + ref_grads))
            worst, worst_name, ok = 0.0, "", True
            info = []
            for n in names:
                if ours[n].shape != theirs[n].shape:
                    raise SystemExit(f"{n}: shape {ours[n].shape}, JAX {theirs[n].shape}")
                scale = max(float(np.max(np.abs(theirs[n]))), 1e-30)
                rel = float(np.max(np.abs(ours[n].astype(np.float64) - theirs[n]))) / scale
                rs = max(float(np.max(np.abs(ref[n]))), 1e-30)
                info.append(f"{n} {rel:.1e} (ours/f64 "
                            f"{float(np.max(np.abs(ours[n] - ref[n]))) / rs:.1e}, jax/f64 "
                            f"{float(np.max(np.abs(theirs[n] - ref[n]))) / rs:.1e})")
                ok = ok and rel <= TOLERANCE
                if rel >= worst:
                    worst, worst_name = rel, n
            failures += not ok
            print(f"crosscheck {activation} batch {batch}: {'PASS' if ok else 'FAIL'} "
                  f"(loss {float(ours['loss']):.6f} vs JAX {float(theirs['loss']):.6f}; worst relative error "
                  f"{worst:.2e} in {worst_name}, tolerance {TOLERANCE:g})")
            print("  relative errors: " + "; ".join(info))
        lib.L.shp_runtime_destroy(rt)
        lib.L.shp_program_destroy(grad)
        lib.L.shp_program_destroy(program)
    print(f"crosscheck: {'FAIL' if failures else 'PASS'} "
          f"({failures} of {len(BATCHES) * len(args.activations.split(','))} cases failed)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
