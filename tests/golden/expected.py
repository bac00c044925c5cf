#!/usr/bin/env python3
"""Writes the fixed inputs and the expected outputs (.npy) of the golden programs.

For every case in CASES it makes each input deterministically (a numpy Generator seeded from
the file, case and input name; the value kind says which range), computes every output with
the numpy oracle (tools/python/oracle.py, which reads the program with the independent Python
reader and never calls libshapepoly), and writes, beside the program `<stem>.shpoly`:

    <stem>.<case>.in.<input>.npy     one per program input (a dimension input is 0-d int64)
                                     that the case gives (an input with a default may be
                                     left out: the run then uses the default)
    <stem>.<case>.out.<output>.npy   one per program output, as computed by the oracle

golden_test runs each program with the C runtime on the stored inputs and compares with the
stored outputs. Files are only ever added: an existing .npy is never rewritten; it is checked
instead (inputs must be what the generator makes, outputs must agree with the oracle within
golden_test's tolerance), and any difference is reported and makes the exit status 1.

Usage (from the repository root, after `bazel run //tests/golden:generate -- $PWD/tests/golden`):
    .venv/bin/python tests/golden/expected.py
"""

import os
import sys
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "tools", "python"))

import oracle  # noqa: E402

# Tolerances of golden_test.cc (keep in sync): |got - want| <= ATOL + RTOL * |want|, NaN
# matches NaN, infinities match exactly; integers and bools match exactly.
TOL = {np.dtype(np.float32): (1e-5, 1e-6), np.dtype(np.float64): (1e-12, 1e-14),
       np.dtype(np.float16): (2.0 ** -10, 2.0 ** -24)}  # f16: one unit in the last place


def I(shape, kind="mixed"):  # noqa: E743
    return (tuple(shape), kind)


# Per program stem: a list of cases, each {input name: (shape, value kind) or int for a
# dimension input}. Shapes must satisfy the program's constraints; sizes are odd or above a
# SIMD width where it matters, so kernels run their main loops and their tails.
# Products feed sums whose order differs between SIMD targets: their float inputs are
# quarters ("grid"), so every partial sum is exact and any order gives the stored value.
def _dot(m, k, n, bt):
    return {"a": I((m, k), "grid"), "w": I((k, n), "grid"), "c": I((bt, m, k), "grid"),
            "d": I((bt, k, n), "grid"), "u": I((m,), "grid"), "v": I((n,), "grid"), "ai": I((m, k)),
            "wi": I((k, n)), "cd": I((bt, m, k), "grid")}


def _binary(n, dtype):
    if dtype == "bool":
        return {"a": I((n, 3)), "b": I((3,))}
    return {"a": I((n, 3)), "b": I((3,), "nonzero"), "p": I((n, 3), "pos"), "e": I((3,), "exponent")}


def _reductions(a, b, c):
    case = {}
    for d in range(4):
        case[f"x{d}"] = I((a, b, c))
        case[f"q{d}"] = I((a, b, c), "factor")
    return case


def _nn(n, k, m, bt):
    return {"a": I((n, k), "grid"), "w": I((k, m), "grid"), "u": I((k,), "grid"), "c": I((bt, n, k), "grid"),
            "ad": I((n, k), "grid"),
            "ai": I((n, k)), "al": I((k, m)), "idx": I((3,), ("index", k)),
            "idx2": I((2, 2), ("index", n))}


def _shape_ops(n):
    return {"x": I((n, 4)), "y": I((n, 1)), "i": I((n, 4)), "l": I((n,)), "m": I((n, 4))}


def _reverse(n):
    return {"x": I((n, 3, 5)), "d": I((2 * n + 1, 3), "wide"), "i": I((n, 17), "wide"),
            "l": I((2, n, 3, 2), "wide"), "m": I((n, 4)), "s": I(()), "e": I((0, n))}


def _trilu(n):
    return {"x": I((n, n)), "d": I((3, 2 * n + 1), "wide"), "i": I((n + 2, 3), "wide"),
            "l": I((2, n, 5), "wide"), "m": I((n, 4)), "e": I((2, 0, n))}


def _take_along_axis(n):
    return {"x": I((n, 3, 5)), "i": I((n, 4, 5), ("sindex", 3)), "d": I((2 * n + 1, 3), "wide"),
            "j": I((2, 3), ("sindex", 2 * n + 1)), "l": I((n, 4), "wide"), "k": I((n, 7), ("sindex", 4)),
            "c": I((6, n), "wide"), "ci": I((2, n), ("sindex", 6)), "m": I((n, 4)), "mi": I((n, 2), ("sindex", 4)),
            "e": I((2, 0)), "ei": I((2, 0), ("index", 1)), "y": I((n, 1031)), "yi": I((n, 1031), ("sindex", 1031))}


def _scatter(n):
    return {"x": I((3, n)), "i": I((5,), ("index", 3)), "u": I((5, n)), "d": I((n, 4)),
            "j": I((2, 3), ("index", 4)), "v": I((n, 2, 3)), "l": I((n, 3, 2), "wide"),
            "k": I((), ("index", 3)), "w": I((n, 2), "wide"), "c": I((4, n), "wide"),
            "ci": I((0,), ("index", 4)), "cu": I((0, n), "wide"), "y": I((2, 1031)),
            "yi": I((7,), ("index", 1031)), "yu": I((2, 7))}


def _trig(n):
    return {"x": I((n,), "special"), "u": I((n,), "unit"), "c": I((n,), "ge1"),
            "f64_x": I((2 * n + 1,), "special"), "f64_u": I((2 * n + 1,), "unit"),
            "f64_c": I((2 * n + 1,), "ge1")}


def _topk(n):
    return {"x": I((n, 6), "grid"), "s": I((n, 8), "special"), "d": I((2 * n + 1,), "wide"),
            "i": I((3, n)), "l": I((n, 4, 3))}


def _narrow(n):
    return {"h": I((n, 3), "special"), "q": I((n, 3)), "i": I((n,), "full"),
            "u": I((n,)), "w": I((3,))}


def _control_flow(n):
    return {"x": I((n, 3)), "h": I((3,)), "w": I((3, 3), "grid"), "k": I((2, n)), "a": I((4,), "pos")}


def _cond_sizes(n, m, t):
    return {"x": I((n,)), "y": I((m,)), "p": I((), "pos"), "xs": I((t, 3), "pos")}


def _scatter_add(n):
    return {"x": I((n, 3, 5)), "i": I((2 * n + 1,), ("index", 3)), "u": I((n, 2 * n + 1, 5)),
            "d": I((n, 4), "wide"), "j": I((2, 3), ("index", 4)), "v": I((n, 2, 3), "wide"),
            "c": I((7, n), "wide"), "k": I((), ("index", 7)), "w": I((n,), "wide"),
            "l": I((5, 2, n)), "r": I((6,), ("index", 2)), "q": I((5, 6, n)),
            "s": I((3,)), "h": I((n,), ("index", 3)), "g": I((n,), "wide"),
            "e": I((0,), ("index", 1)), "eu": I((n, 3, 0)),
            "y": I((n, 1031)), "yi": I((2 * n,), ("index", max(n, 1))), "yu": I((2 * n, 1031))}


CASES = {
    "mlp_v1": [{"x": I((3, 784))}],
    "constraints_v1": [{"x": I((6, 3)), "y": I((6, 3)), "pad": I((2,)), "k": 4},
                       {"x": I((4, 3)), "y": I((4, 3)), "pad": I((0,)), "k": 1}],
    **{f"dtype_{d}_v1": [{"x": I((5, 4))}, {"x": I((1, 4))}] for d in ["f32", "f64", "i32", "i64", "bool"]},
    "dot_general_v1": [_dot(5, 7, 3, 2), _dot(17, 33, 9, 3)],
    "transpose_v1": [
        {"x": I((2, 3, 4)), "d": I((2, 3, 4)), "i": I((2, 3)), "l": I((3,)), "m": I((3, 4)), "s": I(()),
         "si": I(())},
        {"x": I((5, 1, 7)), "d": I((5, 1, 7)), "i": I((5, 1)), "l": I((1,)), "m": I((1, 7)), "s": I(()),
         "si": I(())}],
    "scalars_v1": [{"s": I(()), "si": I(()), "sb": I(()), "x": I((6,))},
                   {"s": I(()), "si": I(()), "sb": I(()), "x": I((1,))}],
    "unary_f32_v1": [{"x": I((37,), "special"), "p": I((37,), "pos")}, {"x": I((3,)), "p": I((3,), "pos")}],
    "unary_f64_v1": [{"x": I((37,), "special"), "p": I((37,), "pos")}, {"x": I((3,)), "p": I((3,), "pos")}],
    "unary_int_v1": [{"i": I((37,), "wide"), "l": I((37, 2), "wide"), "m": I((37,))},
                     {"i": I((2,), "wide"), "l": I((2, 2), "wide"), "m": I((2,))}],
    **{f"binary_{d}_v1": [_binary(37, d), _binary(2, d)] for d in ["f32", "f64", "i32", "i64", "bool"]},
    "convert_v1": [{d: I((37,), "wide") for d in ["f32", "f64", "i32", "i64", "bool"]},
                   {d: I((4,), "wide") for d in ["f32", "f64", "i32", "i64", "bool"]}],
    "shape_ops_v1": [_shape_ops(5), _shape_ops(2)],
    "reductions_v1": [_reductions(2, 3, 5), _reductions(4, 1, 17)],
    "nn_v1": [_nn(4, 6, 5, 2), _nn(9, 17, 3, 1)],
    "reverse_v1": [_reverse(4), _reverse(1), _reverse(0), _reverse(37)],
    "scatter_add_v2": [_scatter_add(4), _scatter_add(1), _scatter_add(0), _scatter_add(37)],
    "trilu_v6": [_trilu(4), _trilu(1), _trilu(0), _trilu(37)],
    "trig_v7": [_trig(37), _trig(1), _trig(8)],
    "topk_v8": [_topk(4), _topk(1), _topk(37)],
    "narrow_v9": [_narrow(5), _narrow(1), _narrow(300)],
    "control_flow_v10": [_control_flow(n) for n in (7, 0, 1)],
    # Schema version 11: the jvp's tangents have fill defaults (1 and -0.5); cases leave both out,
    # give one, give both.
    "cond_sizes_v13": [_cond_sizes(3, 5, 4), _cond_sizes(1, 1, 0), _cond_sizes(7, 2, 1),
                       _cond_sizes(2, 37, 3)],
    "metadata_v14": [{"x": I((3, 4))}, {"x": I((1, 4))}, {"x": I((37, 4))}],
    "scatter_v15": [_scatter(4), _scatter(1), _scatter(0), _scatter(37)],
    "take_along_axis_v12": [_take_along_axis(4), _take_along_axis(1), _take_along_axis(0), _take_along_axis(37)],
    "jvp_defaults_v11": [{"x": I((5, 3)), "w": I((3,))},
                         {"x": I((1, 3)), "w": I((3,)), "x.tangent": I((1, 3))},
                         {"x": I((37, 3)), "w": I((3,)), "x.tangent": I((37, 3)), "w.tangent": I((3,))},
                         {"x": I((2, 3)), "w": I((3,), "wide")}],
    # Schema version 2. An input with a default (a parameter, grad's cotangent) that a case leaves
    # out runs with its default and has no .in file; a case that names it gives a new value.
    "mlp_params_v2": [{"x": I((3, 8))},
                      {"x": I((1, 8)), "w1": I((8, 16), "grid"), "b2": I((4,), "grid")},
                      {"x": I((37, 8))}],
    "grad_v2": [{"x": I((5, 6)), "y": I((5, 3))},
                {"x": I((1, 6)), "y": I((1, 3)), "w": I((6, 3)), "loss.cotangent": I((), "pos")},
                {"x": I((37, 6)), "y": I((37, 3)), "b": I((3,))}],
    # Schema version 3: two variants split by the guard cols <= 16 (the softmax op) / cols > 16
    # (max-subtract, exp, sum, divide); cases on both sides and at the boundary 16 / 17.
    "row_softmax_variants_v3": [{"x": I((3, 8))}, {"x": I((2, 16))}, {"x": I((2, 17))},
                                {"x": I((5, 64), "wide")}, {"x": I((1, 1))}],
    # conv's sums depend on the kernel's order: quarters keep every partial sum exact.
    "conv_v4": [{"x": I((2, 4, 6, 5), "grid"), "w": I((6, 4, 3, 3), "grid"), "bias": I((6,), "grid"),
                 "wg": I((4, 2, 2, 3), "grid"), "wd": I((8, 1, 3, 3), "grid"), "wt": I((4, 3, 3, 3), "grid"),
                 "d": I((2, 2, 13), "grid"), "w1": I((3, 2, 3), "grid")},
                {"x": I((1, 4, 1, 5), "grid"), "w": I((6, 4, 3, 3), "grid"), "bias": I((6,), "grid"),
                 "wg": I((4, 2, 2, 3), "grid"), "wd": I((8, 1, 3, 3), "grid"), "wt": I((4, 3, 3, 3), "grid"),
                 "d": I((1, 2, 3), "grid"), "w1": I((3, 2, 3), "grid")},
                {"x": I((3, 4, 9, 5), "grid"), "w": I((6, 4, 3, 3), "grid"), "bias": I((6,), "grid"),
                 "wg": I((4, 2, 2, 3), "grid"), "wd": I((8, 1, 3, 3), "grid"), "wt": I((4, 3, 3, 3), "grid"),
                 "d": I((3, 2, 19), "grid"), "w1": I((3, 2, 3), "grid")}],
    # Window sums (avg pools) of quarters are exact in any order.
    "pool_v4": [{"x": I((2, 3, 5, 7), "grid"), "d": I((2, 2, 11), "grid"), "k": I((2, 2, 9))},
                {"x": I((1, 3, 1, 1), "grid"), "d": I((1, 2, 3), "grid"), "k": I((1, 2, 5))},
                {"x": I((3, 3, 9, 17), "grid"), "d": I((3, 2, 19), "grid"), "k": I((3, 2, 13))}],
    # Data-dependent sizes: quarters (zeros among them) keep the mean exact; counts from 0 up.
    # (A scalar i64 data input is given by its value, like a dimension input.)
    "data_dependent_v5": [{"x": I((7, 3), "grid"), "score": I((7,), "grid"), "m": I((7, 3)), "v": 3},
                          {"x": I((1, 3), "grid"), "score": I((1,), "grid"), "m": I((1, 3)), "v": 0},
                          {"x": I((33, 3), "grid"), "score": I((33,), "grid"), "m": I((33, 3)), "v": 5}],
    "empty_v1": [{"x": I((0, 3)), "w": I((3, 2), "grid"), "i": I((0, 3)), "l": I((0,)), "y": I((0, 1)),
                  "idx": I((0,), ("index", 3))},
                 {"x": I((3, 3), "grid"), "w": I((3, 2), "grid"), "i": I((3, 3)), "l": I((3,)), "y": I((3, 1)),
                  "idx": I((3,), ("index", 3))}],
}


# Files renamed after their inputs were written: their inputs keep the seeds of the first name
# (scatter_add was first written as version 1, then moved to version 2, the version of its op).
SEED_STEM = {"scatter_add_v2": "scatter_add_v1"}


def make_input(rng, dtype, shape, kind):
    """Deterministic values of one input; `kind` picks a range the ops are defined on."""
    size = int(np.prod(shape, dtype=np.int64))
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if isinstance(kind, tuple) and kind[0] == "sindex":  # valid indices in [-n, n): from the end too
        return rng.integers(-kind[1], kind[1], size=shape).astype(dtype)
    if isinstance(kind, tuple):  # ("index", n): valid indices of an axis of size n
        return rng.integers(0, kind[1], size=shape).astype(dtype)
    if np.dtype(dtype).kind == "u":  # the whole range of the narrow ones, 0..2^16 of the others
        hi = min(int(np.iinfo(dtype).max) + 1, 1 << 16)
        return rng.integers(0, hi, size=shape).astype(dtype)
    if np.dtype(dtype).kind == "i" and kind == "full":
        info = np.iinfo(dtype)
        return rng.integers(int(info.min), int(info.max) + 1, size=shape).astype(dtype)
    if np.dtype(dtype).kind == "i":
        lo, hi = {"mixed": (-20, 21), "grid": (-20, 21), "nonzero": (1, 10), "exponent": (0, 4), "factor": (-2, 3),
                  "wide": (-1000, 1001), "pos": (1, 10)}[kind]
        v = rng.integers(lo, hi, size=shape).astype(dtype)
        if kind == "nonzero":
            v = v * rng.choice(np.array([-1, 1], dtype=dtype), size=shape)
        return v
    if kind == "pos":
        return rng.uniform(0.05, 4.0, size=shape).astype(dtype)
    if kind == "unit":  # (-1, 1), then the edges +-1, -0 and one value beyond
        v = rng.uniform(-1.0, 1.0, size=size)
        v[-min(size, 4):] = [1.0, -1.0, -0.0, 1.5][-min(size, 4):]
        return v.reshape(shape).astype(dtype)
    if kind == "ge1":  # [1, 10), then 1 itself and one value below
        v = rng.uniform(1.0, 10.0, size=size)
        v[-min(size, 2):] = [1.0, 0.5][-min(size, 2):]
        return v.reshape(shape).astype(dtype)
    if kind == "factor":
        return rng.uniform(0.5, 1.5, size=shape).astype(dtype)
    if kind == "exponent":
        return rng.uniform(-3.0, 3.0, size=shape).astype(dtype)
    if kind == "nonzero":
        v = rng.uniform(0.25, 3.0, size=shape) * rng.choice([-1.0, 1.0], size=shape)
        return v.astype(dtype)
    if kind == "wide":  # fractions, exact integers and halves in (-100, 100)
        v = rng.uniform(-100.0, 100.0, size=size)
        v[::3] = np.round(v[::3])
        v[1::3] = np.round(v[1::3] * 2) / 2
        return v.reshape(shape).astype(dtype)
    if kind == "grid":  # quarters in [-4, 4]
        return (rng.integers(-16, 17, size=shape) / 4.0).astype(dtype)
    # mixed: quarters in [-4, 4] (zeros and ties for rounding) alternating with uniform values
    v = rng.uniform(-3.0, 3.0, size=size)
    v[::2] = rng.integers(-16, 17, size=v[::2].shape) / 4.0
    if kind == "special" and size >= 8:
        v[-8:] = [0.0, -0.0, np.inf, -np.inf, np.nan, 0.5, -2.5, 1e-30]
    return v.reshape(shape).astype(dtype)


def close(got, want):
    """Same rule as golden_test: exact for integers and bools, else within TOL."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if want.dtype.kind != "f":
        return bool(np.array_equal(got, want))
    rtol, atol = TOL[want.dtype]
    g, w = got.astype(np.float64), want.astype(np.float64)
    both_nan = np.isnan(g) & np.isnan(w)
    with np.errstate(invalid="ignore"):
        finite = np.isfinite(g) & np.isfinite(w)
        ok = (g == w) | (finite & (np.abs(g - w) <= atol + rtol * np.abs(w))) | both_nan
    return bool(np.all(ok))


def np_dtype(name):
    return np.dtype(oracle.NP_DTYPES[oracle.reader.DTYPES.index(name)])


def path(stem, case, io, name):
    return os.path.join(HERE, f"{stem}.{case}.{io}.{name}.npy")


def store(file, array, compare):
    """Writes `array` unless `file` exists; an existing file must satisfy compare(old, new)."""
    if os.path.exists(file):
        if compare(np.load(file), array):
            return 0
        print(f"DIFFERS: {os.path.basename(file)}")
        return 1
    # C order: golden_test reads row-major files only (np.argwhere's result is Fortran-ordered).
    np.save(file, np.asarray(array).copy(order="C"), allow_pickle=False)
    print(f"wrote {os.path.basename(file)}")
    return 0


def main():
    problems = 0
    stems = sorted(f[:-len(".shpoly")] for f in os.listdir(HERE) if f.endswith(".shpoly"))
    for stem in stems:
        if stem not in CASES:
            print(f"MISSING CASES: {stem}.shpoly has no entry in CASES")
            problems += 1
            continue
        prog = oracle.load(os.path.join(HERE, stem + ".shpoly"))
        for case, spec in enumerate(CASES[stem]):
            args = {}
            for name, role, dtype, _, _ in prog.info.inputs:
                if name not in spec and (name in prog.info.defaults or name in prog.info.fills):
                    continue  # the run uses the stored default (or the fill default)
                seed = zlib.crc32(f"{SEED_STEM.get(stem, stem)}/{case}/{name}".encode())
                if role == "dim" or isinstance(spec[name], int):  # a value, as a 0-d int64 array
                    value = np.array(spec[name], dtype=np.int64)
                else:
                    shape, kind = spec[name]
                    value = make_input(np.random.default_rng(seed), np_dtype(dtype), shape, kind)
                problems += store(path(stem, case, "in", name), value,
                                  lambda a, b: a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True))
                args[name] = value
            with np.errstate(all="ignore"):
                outs = prog.run(args)
            for (name, dtype, _), out in zip(prog.info.outputs, outs):
                out = np.asarray(out)
                if out.dtype != np_dtype(dtype):
                    raise SystemExit(f"{stem} {name}: the oracle gave {out.dtype}, the program says {dtype}")
                problems += store(path(stem, case, "out", name), out, close)
    print(f"{len(stems)} programs, {problems} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
