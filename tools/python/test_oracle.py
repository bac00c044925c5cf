"""The C++ runtime agrees with the numpy oracle (oracle.py) on random programs.

Random programs are traced through the C API (capi_trace.py), serialized, loaded back by both
the C++ runtime and the numpy interpreter, and run at several concrete shapes. Together they
cover every op with every dtype it accepts (capi_trace.legal_dtypes()): the (op, dtype) pairs
are dealt out to the programs, and test_every_op_and_dtype_covered checks, from the serialized
bytes of the programs that ran, that every pair was exercised. Integer programs meet zero
divisors and INT_MIN / -1; reductions run along random axes with and without keepdims; a few
programs reach ~10^6 elements (odd sizes, SIMD tails, threads); input shapes use products,
floordiv, max, min, powers and dimension inputs, so the oracle's own solver follows the
program's solve recipe through every kind of step.

Integers and bools must agree exactly, and so must floats that both sides compute bit for bit
("exact" values: inputs and what exact ops such as neg, floor, max, rem, select, shape ops and
conversions make of them). Other floats agree within f32 or f64 precision; to keep that
meaningful, an op whose result jumps (floor, compare, rem, float -> int, ...) only receives
exact operands, inexact operands of growing ops first go through tanh, and sums, products and
normalizations receive bounded operands (huge values cancel differently in any summation order).

The narrow types (f16, bf16, i8, u8, i16, u16, u32, u64; docs/dtypes.md) have (op, type) pairs
of their own (NARROW_PAIRS: every op with every narrow type the rules allow, u64 div, rem and pow
left out, every conversion from or to a narrow type, take with narrow indices), dealt out to the
same programs. The tracer records an op on them as conversions around the op in f32, i32 or i64,
so the oracle interprets the same bytes; narrow integers must agree exactly, f16 and bf16 bit for
bit when exact, else within one unit in the last place of the narrow type (test_narrow_types'
assert_narrow_agree), or, for sums, products and normalizations (accumulated in f32 in any
order, then rounded once), within f32 precision plus two units. To keep that meaningful, every
op on f16 or bf16 receives exact operands (inexact f16/bf16 values are only outputs), bounded
ones clamped to [-1, 1] by max and min; their inputs include the types' largest finite values,
subnormals, inf and NaN, and integer inputs their min and max. test_every_op_and_dtype_covered
checks that every narrow pair ran: from the bytes for ops that take narrow values as they are,
as traced for the others (the bytes hold them in the compute type).
"""

import collections
import ctypes
import random

import numpy as np
import pytest

import capi_trace as ct
import oracle
from test_narrow_types import assert_narrow_agree

LEGAL = ct.legal_dtypes()
ALL_PAIRS = sorted((op, key) for op, keys in LEGAL.items() for key in keys)
N_SMALL = 96     # small programs; the (op, dtype) pairs are dealt out to them
LARGE = [0, 1, 2, 3]  # programs of ~10^6 elements
EXTRA_OPS = 3    # random extra ops per small program

# Jumps include a domain edge (log(-0.1) is NaN) and tan's poles; asin, acos, atanh and acosh
# also lose all relative accuracy next to their edges +-1.
DISCONTINUOUS = {"FLOOR", "CEIL", "ROUND", "SIGN", "LOG", "SQRT", "RSQRT", "LOG1P", "DIV", "REM", "POW",
                 "TAN", "ASIN", "ACOS", "ATANH", "ACOSH"}
EXACT_FLOAT = {"NEG", "ABS", "SIGN", "FLOOR", "CEIL", "ROUND", "MAXIMUM", "MINIMUM", "REM"}
BOUNDING = {"TANH", "SIN", "COS", "LOGISTIC", "SOFTMAX", "ATAN", "ASIN", "ACOS"}
ACCUMULATING = {"REDUCE_SUM", "REDUCE_MEAN", "REDUCE_PROD", "CUMSUM", "MATMUL", "DOT_GENERAL", "LAYER_NORM",
                "SOFTMAX", "ATTENTION"}
# Constant exponents of float pow: not 0.5. numpy's power takes sqrt's path for an exponent 0.5
# that is one value broadcast (a 0-d or size-1 array, or stride 0): pow(-inf, 0.5) is nan and
# pow(-0, 0.5) is -0 there, +inf and +0 in C's pow and in the library. A base-shaped exponent
# goes through max(b, b) (b itself, in a fresh array).
POW_EXPONENTS = [-1.25, 2.0, 0.0, 3.0, -0.75, 1.5]
# Ops too costly for numpy at 10^6 elements, or whose extra inputs grow with the size.
NOT_LARGE = {"ATTENTION", "MATMUL", "DOT_GENERAL", "POW", "CONV"}

COVERAGE = {"programs": set(), "ops": 0, "runs": 0, "pairs": set(), "solve_kinds": collections.Counter(),
            "edge divisions": set(), "narrow": set(), "narrow programs": set(), "narrow runs": 0}

# ---- The narrow types ----
NFLOATS = ["f16", "bf16"]
NINTS = ["i8", "u8", "i16", "u16", "u32", "u64"]
U64_REFUSED = {"DIV", "REM", "POW"}  # SHP_UNSUPPORTED (test_narrow_types checks the refusal)
# Ops that take narrow values as they are: the bytes show them with the narrow dtype.
MOVES = {"CONSTANT", "CONVERT", "SELECT", "BROADCAST_TO", "RESHAPE", "TRANSPOSE", "CONCATENATE",
         "SLICE", "PAD", "TAKE", "TAKE_ALONG_AXIS", "REVERSE", "TRILU", "BOOLEAN_MASK"}
# f16/bf16 results of these ops on exact operands are exact too: the f32 op is IEEE on both sides
# (and rounded once to the narrow type by the same rule).
NARROW_EXACT = EXACT_FLOAT | {"ADD", "SUB", "MUL"}
# Edge values of f16 and bf16 inputs: the largest finite values, subnormals, the smallest normal.
EDGES = {"f16": [65504.0, -65504.0, 2.0 ** -24, -(2.0 ** -24), 2.0 ** -14, 2.0 ** -14 - 2.0 ** -24,
                 3 * 2.0 ** -20],
         "bf16": [3.3895313892515355e38, -3.3895313892515355e38, 2.0 ** -133, -(2.0 ** -133),
                  2.0 ** -126, 2.0 ** -126 - 2.0 ** -133, 3 * 2.0 ** -130]}


def is_float(k):
    return k in ct.FLOATS or k in NFLOATS


def is_int(k):
    return k in ct.INTS or k in NINTS


def is_narrow_key(op, key):
    """Whether an (op, key) pair involves a narrow type (data, indices or a conversion side)."""
    parts = key.replace("->", " ").replace("[", " ").rstrip("]").split()
    return any(part in ct.NARROW for part in parts)


def narrow_index(op, key):
    """take (take_along_axis) of compute-type data by narrow indices (the tracer converts the
    indices first)."""
    return op in ("TAKE", "TAKE_ALONG_AXIS") and key.split("[")[0] not in ct.NARROW


def narrow_pairs():
    """Every op with every narrow type the rules allow (an op on f32 takes f16 and bf16, one on
    i32 takes i8 ... u16, one on i64 takes u32 and u64 but u64 div, rem and pow), every
    conversion from or to a narrow type, take of narrow data and by narrow indices, scatter_add
    and scatter into narrow data."""
    pairs = []
    for op, keys in LEGAL.items():
        if op in ("CONVERT", "TAKE", "TAKE_ALONG_AXIS", "SCATTER_ADD", "SCATTER", "DIM_VALUE",
                  "SIZE_FROM_VALUE"):
            continue
        pairs += [(op, n) for k in keys for n in ct.NARROW
                  if ct.COMPUTE_OF[n] == k and not (n == "u64" and op in U64_REFUSED)]
    pairs += [("CONVERT", f"{a}->{b}") for a in ct.DTYPE_NAMES for b in ct.DTYPE_NAMES
              if a in ct.NARROW or b in ct.NARROW]
    pairs += [("TAKE", f"{n}[{i}]") for n in ct.NARROW for i in ct.INTS]
    pairs += [("TAKE", f"f32[{i}]") for i in NINTS]
    pairs += [("TAKE_ALONG_AXIS", f"{n}[{i}]") for n in ct.NARROW for i in ct.INTS]
    pairs += [("TAKE_ALONG_AXIS", f"f32[{i}]") for i in NINTS]
    pairs += [("SCATTER_ADD", f"{n}[{i}]") for n in ct.NARROW for i in ct.INTS]
    pairs += [("SCATTER", f"{n}[{i}]") for n in ct.NARROW for i in ct.INTS]
    return sorted(pairs)


NARROW_PAIRS = narrow_pairs()


class T:
    """A traced value of the base shape: handle, dtype, and whether both sides compute it bit
    for bit (exact) and it stays within a few units (bounded)."""

    # Set when an inexact f32 value is made: then every inexact output is checked at f32 precision.
    f32_seen = False

    def __init__(self, h, dtype, exact, bounded=False, loose=False):
        # loose: an f16/bf16 value accumulated in f32 (in any order) and rounded once.
        self.h, self.dtype, self.exact, self.bounded, self.loose = h, dtype, exact, bounded, loose
        if dtype == "f32" and not exact:
            T.f32_seen = True


class Gen:
    """Builds one random program around a base shape whose last axis is m."""

    def __init__(self, api, seed, pairs, large):
        T.f32_seen = False
        self.rng = random.Random(seed)
        self.nrng = np.random.default_rng(seed)
        self.large = large
        self.t = ct.Tracer(api)
        self.ins, self.gens = [], []
        rank = 2 if large else self.rng.choice([2, 3, 4])
        self.base_spec = {2: ["n", "m"], 3: ["n", "3", "m"], 4: ["2", "n", "3", "m"]}[rank]
        self.n_axis = self.base_spec.index("n")
        self.specials = self.rng.random() < 0.5  # NaN/inf/-0 among the float inputs
        x = self.input(self.rng.choice(ct.ALL), self.base_spec)
        self.base = self.t.shape(x.h)
        self.pool = [x]
        self.cur = x
        self.outputs = []
        self.edges = set()
        self.narrow_traced = set()  # the narrow (op, key) pairs traced
        self.extras(seed)
        for op, key in pairs:
            self.apply(op, key)

    # ---- Inputs ----
    def input(self, dtype, spec, kind=None):
        spec_text = ", ".join(spec)
        h = self.t.input(f"x{len(self.ins)}", dtype, spec_text)
        self.ins.append(h)
        if kind is None:
            kind = "any" if (not is_float(dtype) or self.specials) else "small"
        self.gens.append((dtype, spec_text, kind))
        return T(h, dtype, exact=True, bounded=is_float(dtype) and kind == "small")

    def dim_input(self, var):
        self.ins.append(self.t.dim_input(var))
        self.gens.append((None, var, None))

    def extras(self, seed):
        """Inputs whose shapes need every kind of solve step; each joins the base shape."""
        spec = self.base_spec
        with_n = lambda e: [e if d == "n" else d for d in spec]  # noqa: E731
        kinds = ["flat", "maxed", "half", "square", "odd", "maxk", "product", "mink", "dim"]
        chosen = [k for k in kinds if self.rng.random() < 0.4] + [kinds[seed % len(kinds)]]
        if self.large:
            chosen = ["flat", "half"]
        self.extra_kinds = sorted(set(chosen))
        for kind in self.extra_kinds:
            dt = self.rng.choice(ct.NUMERIC)
            if kind == "flat":  # the product of the base dims: reshaped to the base
                v = self.input(dt, ["*".join(spec)])
                self.add(T(self.t.reshape(v.h, self.base), dt, True))
            elif kind == "maxed":  # max(n, 3) on the n axis: sliced to n
                v = self.input(dt, with_n("max(n, 3)"))
                limit = [None] * len(spec)
                limit[self.n_axis] = self.base[self.n_axis]
                self.add(T(self.t.slice(v.h, None, limit, None), dt, True))
            elif kind == "half":  # floordiv(n, 2) + 1 on the n axis: reduced, broadcast back
                v = self.input(dt, with_n("floordiv(n, 2) + 1"))
                r = self.t.reduce("REDUCE_MAX", v.h, [self.n_axis], True)
                self.add(T(self.t.broadcast_to(r, self.base), dt, True))
            elif kind in ("square", "odd", "maxk", "product", "mink"):
                # A variable that only this input determines (a power, an offset, max/min with a
                # constant, a product with m); reduced to a scalar and broadcast.
                sp = {"square": ["k^2"], "odd": ["2*j + 1", "m"], "maxk": ["max(q, 3)"], "product": ["p*m"],
                      "mink": ["min(r, 9)", "2"]}[kind]
                v = self.input(dt, sp)
                r = self.t.reduce(self.rng.choice(["REDUCE_MAX", "REDUCE_MIN"]), v.h, [], False)
                self.add(T(self.t.broadcast_to(r, self.base), dt, True))
            elif kind == "dim":  # a variable given as a value, used in a shape of the program
                self.dim_input("w")
                io = self.t.iota(dt, ["w", 2], 0)
                r = self.t.reduce("REDUCE_SUM", io, [0], True)  # (1, 2) of w*(w-1)/2
                r = self.t.reduce("REDUCE_MAX", r, [], False)
                self.add(T(self.t.broadcast_to(r, self.base), dt, True))

    def env(self, size):
        """Variable values for one run; size 'large' aims at ~10^6 elements with odd extents."""
        rng = self.rng
        if size == "large":
            m = rng.choice([17, 31, 129, 1031])
            n = (10 ** 6 + rng.randrange(-999, 999)) // m | 1
        else:
            n, m = rng.choice([1, 2, 3, 5, 7, 12]), rng.choice([1, 2, 3, 4, 9, 16])
        return {"n": n, "m": m, "k": rng.randint(1, 6), "j": rng.randint(1, 5), "q": rng.randint(4, 9),
                "p": rng.randint(1, 4), "r": rng.randint(1, 8), "w": rng.randint(1, 6)}

    def feeds(self, env):
        return [np.array(env[spec], dtype=np.int64) if dtype is None else
                self.values(dtype, ct.eval_spec(spec, env), kind)
                for dtype, spec, kind in self.gens]

    def values(self, dtype, shape, kind):
        """ct.values; f16/bf16 inputs of kind any also hold the type's edge values (EDGES) at a
        few random places (ct.values gives zeros, inf and NaN; integers get min and max); kind
        plain is any without them (the weights of matmul: huge products overflow f32 in one
        summation order and cancel in another)."""
        v = ct.values(dtype, shape, "any" if kind == "plain" else kind, self.nrng)
        if dtype in NFLOATS and kind == "any" and v.size:
            at = self.nrng.integers(0, v.size, size=min(v.size, 4))
            edges = self.nrng.choice(np.array(EDGES[dtype]), size=at.size)
            v.flat[at] = oracle.convert(edges, v.dtype)
        return v

    # ---- Operands ----
    def add(self, v):
        self.pool.append(v)
        self.cur = v
        return v

    def side(self, v):
        self.outputs.append(v)

    @staticmethod
    def usable(v, exact):
        """Whether v may be an operand: exact if asked, never an inexact f16/bf16 value."""
        return v.exact or (not exact and v.dtype not in NFLOATS)

    def source(self, exact):
        if self.usable(self.cur, exact) and self.rng.random() < 0.6:
            return self.cur
        return self.rng.choice([p for p in self.pool if self.usable(p, exact)])

    def operand(self, dtype, exact=False, bounded=False, tame=False):
        """A base-shaped value of `dtype`, converted from the pool when needed (narrow types:
        sometimes a new input). bounded: an inexact float goes through tanh first; tame: any
        unbounded float does (the operand of a sum, whose rounding depends on the order when
        huge values cancel); f16/bf16 operands are always exact, and clamped to [-1, 1] instead."""
        need_exact = exact or not is_float(dtype) or dtype in NFLOATS
        narrow = dtype in ct.NARROW
        same = [p for p in self.pool if narrow and p.dtype == dtype and self.usable(p, need_exact)]
        r = self.rng.random() if narrow else 1
        if r < 0.2 and not self.large:
            v = self.input(dtype, self.base_spec)
        elif r < 0.6 and same:  # a narrow value of the pool: no conversion
            v = self.rng.choice(same)
        else:  # float -> int/bool jumps: exact sources only; f16/bf16: exact sources only
            v = self.source(need_exact)
        if v.dtype != dtype:
            v = T(self.t.convert(v.h, dtype), dtype, v.exact or not is_float(dtype),
                  v.bounded and is_float(dtype))
        if dtype in ct.FLOATS and not v.bounded and (tame or (bounded and not v.exact)):
            v = T(self.t.unary("TANH", v.h), dtype, False, True)
        if dtype in NFLOATS and not v.bounded and tame:
            lo, hi = (self.t.constant(oracle.convert(np.array(c), ct.NP_DTYPES[ct.CODE[dtype]]))
                      for c in (-1.0, 1.0))
            clamped = self.t.binary("MINIMUM", self.t.binary("MAXIMUM", v.h, lo), hi)
            v = T(clamped, dtype, True, True)
        return v

    def scalar(self, dtype, choices=None):
        if dtype == "bool":
            val = self.rng.random() < 0.5
        elif choices is not None:
            val = self.rng.choice(choices)
        elif is_float(dtype):
            val = self.rng.choice([0.5, -1.25, 2.0, 0.0, 3.0, -0.75])
        else:
            info = np.iinfo(ct.NP_DTYPES[ct.CODE[dtype]])
            val = self.rng.choice([-3, -1, 0, 1, 2, 5, info.min, info.max])
        shape = () if self.rng.random() < 0.6 else (1,) * self.rng.randint(1, len(self.base))
        dt = ct.NP_DTYPES[ct.CODE[dtype]]
        if dtype in NFLOATS:
            return self.t.constant(oracle.convert(np.full(shape, val, dtype=np.float64), dt))
        if dtype in NINTS:  # wrapped to the type (-1 is u8's 255)
            wrapped = int(val) % (1 << (8 * dt.itemsize))
            return self.t.constant(np.full(shape, wrapped, dtype=np.uint64).astype(dt))
        return self.t.constant(np.full(shape, val, dtype=dt))

    def second(self, dtype, exact, bounded, exponent=False):
        """A second operand: another pool value, a constant, or a broadcast reduction.
        exponent: of a float pow, never a broadcast 0.5 (see POW_EXPONENTS)."""
        r = self.rng.random()
        if r < 0.3:
            # int constants may be INT_MIN
            c = self.scalar(dtype, POW_EXPONENTS if exponent else None)
            return T(c, dtype, True, is_float(dtype))
        if r < 0.45 and dtype != "bool" and not exponent:
            v = self.operand(dtype, exact, bounded)
            axes = self.rng.sample(range(len(self.base)), self.rng.randint(1, len(self.base)))
            return T(self.t.reduce("REDUCE_MAX", v.h, axes, True), dtype, v.exact, v.bounded)
        saved = self.cur
        self.cur = self.rng.choice(self.pool)
        v = self.operand(dtype, exact, bounded)
        self.cur = saved
        return v

    def axis(self, rank=None):
        rank = rank or len(self.base)
        a = self.rng.randrange(rank)
        return a - rank if self.rng.random() < 0.4 else a

    # ---- Ops ----
    def apply(self, op, key):
        self.apply_op(op, key)
        if is_narrow_key(op, key):
            self.narrow_traced.add((op, key))

    def exact_of(self, op, key, *xs):
        """Whether op's result on operands xs is computed bit for bit on both sides."""
        ops = NARROW_EXACT if key in NFLOATS else EXACT_FLOAT
        return not is_float(key) or (op in ops and all(x.exact for x in xs))

    def apply_op(self, op, key):
        t, rng = self.t, self.rng
        if op in ct.UNARY:
            need_exact = op in DISCONTINUOUS
            x = self.operand(key, exact=need_exact, bounded=True)
            if op in ("LOG", "SQRT", "RSQRT", "LOG1P", "ACOSH") and rng.random() < 0.7:
                x = T(t.unary("ABS", x.h), key, x.exact, x.bounded)
            exact = self.exact_of(op, key, x)
            bounded = op in BOUNDING or (x.bounded and op in EXACT_FLOAT)
            return self.add(T(t.unary(op, x.h), key, exact, bounded))
        if op in ct.BINARY:
            need_exact = op in DISCONTINUOUS
            if op in ("DIV", "REM") and ((op, key) not in self.edges or rng.random() < 0.5):
                self.edges.add((op, key))
                a = self.input(key, self.base_spec, "dividend")  # INT_MIN / -1, x / 0 at fixed places
                b = self.input(key, self.base_spec, "divisor")
                COVERAGE["edge divisions"].add((op, key))
            elif op == "POW" and is_int(key):
                a = self.operand(key)
                b = T(self.scalar(key, [0, 1, 2, 3, 7, 31, -1, -2]), key, True)
            else:
                a = self.operand(key, need_exact, bounded=True)
                b = self.second(key, need_exact, bounded=True, exponent=op == "POW")
            if rng.random() < 0.3:
                a, b = b, a
            if op == "POW" and is_float(key) and self.is_base(b.h):  # a fresh array (POW_EXPONENTS)
                b = T(t.binary("MAXIMUM", b.h, b.h), key, b.exact, b.bounded)
            exact = self.exact_of(op, key, a, b)
            bounded = a.bounded and b.bounded and op in ("ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM")
            h = t.binary(op, a.h, b.h)
            if not self.is_base(h):  # both operands were broadcast constants
                h = t.broadcast_to(h, self.base)
            return self.add(T(h, key, exact, bounded))
        if op in ct.COMPARE:
            a = self.operand(key, exact=True)
            b = self.second(key, True, False)
            h = t.compare(op, a.h, b.h)
            if not self.is_base(h):
                h = t.broadcast_to(h, self.base)
            return self.add(T(h, "bool", True))
        if op == "SELECT":
            p = self.operand("bool", exact=True)
            a = self.operand(key, bounded=True)
            b = self.second(key, False, True)
            return self.add(T(t.select(p.h, a.h, b.h), key, a.exact and b.exact, a.bounded and b.bounded))
        if op == "CONVERT":
            src, dst = key.split("->")
            x = self.operand(src, exact=dst not in ct.FLOATS)
            return self.add(T(t.convert(x.h, dst), dst, x.exact or dst not in ct.FLOATS, x.bounded))
        if op == "CONSTANT":
            c = t.broadcast_to(self.scalar(key), self.base)
            return self.add(T(c, key, True, is_float(key)))
        if op == "DIM_VALUE":
            expr = rng.choice(["n*m", "floordiv(n, 2) + m", "max(n, 3)", "2*m + 1", "mod(n*m, 5)", "min(n, 4)"])
            return self.add(T(t.broadcast_to(t.dim_value(expr), self.base), "i64", True))
        if op == "IOTA":
            return self.add(T(t.iota(key, self.base, self.axis()), key, True))
        if op == "TAKE":
            xd, idd = key[:-1].split("[")
            x = self.operand(xd, bounded=True)
            a = self.axis()
            d = self.base[a]
            rev = t.binary("SUB", t.dim_value(t.dim_op("sub", d, 1)), t.iota("i64", [d], 0))  # d-1, ..., 0
            if rng.random() < 0.5:  # or every other index twice
                rev = t.binary("MUL", t.binary("DIV", rev, t.constant(np.array(2, np.int64))),
                               t.constant(np.array(2, np.int64)))
            idx = t.convert(rev, idd)
            return self.add(T(t.take(x.h, idx, a), xd, x.exact, x.bounded))
        if op == "TAKE_ALONG_AXIS":
            xd, idd = key[:-1].split("[")
            x = self.operand(xd, bounded=True)
            a = self.axis()
            d = self.base[a]
            pos = t.iota("i64", self.base, a)  # each position's own index along the axis
            r = rng.random()
            if r < 0.4:  # reversed: d-1, ..., 0
                idx = t.binary("SUB", t.dim_value(t.dim_op("sub", d, 1)), pos)
            elif r < 0.7 and not (idd in NINTS and idd.startswith("u")):  # from the end: -d, ..., -1
                idx = t.binary("SUB", pos, t.dim_value(d))
            else:  # every other index twice
                two = t.constant(np.array(2, np.int64))
                idx = t.binary("MUL", t.binary("DIV", pos, two), two)
            return self.add(T(t.take_along_axis(x.h, t.convert(idx, idd), a), xd, x.exact, x.bounded))
        if op == "SCATTER_ADD":
            xd, idd = key[:-1].split("[")
            x = self.operand(xd, bounded=True, tame=xd in NFLOATS)  # f16/bf16: sums in any order
            a = self.axis()
            d = self.base[a]
            # d-1, ..., 0 (a permutation), or every other index twice (repeats accumulate);
            # the updates then have the base's shape.
            rev = t.binary("SUB", t.dim_value(t.dim_op("sub", d, 1)), t.iota("i64", [d], 0))
            if rng.random() < 0.5:
                rev = t.binary("MUL", t.binary("DIV", rev, t.constant(np.array(2, np.int64))),
                               t.constant(np.array(2, np.int64)))
            idx = t.convert(rev, idd)
            saved = self.cur
            self.cur = rng.choice(self.pool)
            u = self.operand(xd, bounded=True, tame=xd in NFLOATS)
            self.cur = saved
            exact = not is_float(xd)
            y = t.scatter_add(x.h, idx, u.h, a)
            return self.add(T(y, xd, exact, x.bounded and u.bounded, xd in NFLOATS))
        if op == "SCATTER":
            # scatter_add's layout and indices (a permutation, or every other index twice) with a
            # random reduction: replace (the last of two repeats wins), add, mul, max, min.
            xd, idd = key[:-1].split("[")
            red = rng.randrange(5)
            summing = red in (1, 2)
            x = self.operand(xd, bounded=True, tame=summing and xd in NFLOATS)
            a = self.axis()
            d = self.base[a]
            rev = t.binary("SUB", t.dim_value(t.dim_op("sub", d, 1)), t.iota("i64", [d], 0))
            if rng.random() < 0.5:
                rev = t.binary("MUL", t.binary("DIV", rev, t.constant(np.array(2, np.int64))),
                               t.constant(np.array(2, np.int64)))
            idx = t.convert(rev, idd)
            saved = self.cur
            self.cur = rng.choice(self.pool)
            u = self.operand(xd, bounded=True, tame=summing and xd in NFLOATS)
            self.cur = saved
            y = t.scatter(x.h, idx, u.h, a, red)
            if summing:  # rounded in the compute type, as scatter_add
                return self.add(T(y, xd, not is_float(xd), x.bounded and u.bounded, xd in NFLOATS))
            return self.add(T(y, xd, x.exact and u.exact, x.bounded and u.bounded))
        if op == "CONV":
            return self.conv(key)
        if op == "REDUCE_WINDOW":
            return self.reduce_window(key)
        if op in ("NONZERO", "BOOLEAN_MASK", "SIZE_FROM_VALUE"):
            return self.data_dependent(op, key)
        if op in ("TOP_K_VALUES", "TOP_K_INDICES"):
            # A whole axis (a sort: the base shape) of an exact operand, so that both sides see
            # the same order.
            x = self.operand(key, exact=True)
            rank = len(self.base)
            a = rng.randrange(rank)
            v, i = t.top_k(x.h, self.base[a], a - rank if rng.random() < 0.3 else a, rng.random() < 0.5)
            if op == "TOP_K_VALUES":
                return self.add(T(v, key, True, x.bounded))
            return self.add(T(t.convert(i, key), key, True))
        if op in ("COND", "WHILE_LOOP", "SCAN"):
            return self.control_flow(op, key)
        x = self.operand(key, bounded=True, tame=op in ACCUMULATING)
        rank = len(self.base)
        if op == "BROADCAST_TO":
            a = rng.randrange(rank)
            limit = [None] * rank
            limit[a] = 1
            row = t.slice(x.h, None, limit, None)
            return self.add(T(t.broadcast_to(row, self.base), key, x.exact, x.bounded))
        if op == "RESHAPE":
            if rng.random() < 0.5:
                y = t.reshape(x.h, [None])  # flattened (inferred size)
            else:
                y = t.reshape(x.h, [t.dim_op("mul", self.base[0], self.base[1])] + self.base[2:])
            if key != "bool" and rng.random() < 0.5:
                y = t.unary("NEG", y)
            return self.add(T(t.reshape(y, self.base), key, x.exact, x.bounded))
        if op == "TRANSPOSE":
            perm = list(range(rank))
            rng.shuffle(perm)
            y = t.transpose(x.h, [p - rank if rng.random() < 0.3 else p for p in perm])
            if rng.random() < 0.5:
                y = t.unary("NOT" if key == "bool" else "ABS", y)
            inverse = [perm.index(i) for i in range(rank)]
            return self.add(T(t.transpose(y, inverse), key, x.exact, x.bounded))
        if op == "REVERSE":
            r = rng.random()
            axes = [] if r < 0.15 else rng.sample(range(rank), rng.randint(1, rank))
            y = t.reverse(x.h, [ax - rank if rng.random() < 0.3 else ax for ax in axes])
            if rng.random() < 0.3:  # flipped back along the same axes: the operand again
                y = t.reverse(y, axes)
            return self.add(T(y, key, x.exact, x.bounded))
        if op == "TRILU":
            if rank < 2:  # matrices only: a vector is viewed as one row
                return self.add(T(t.reverse(x.h, []), key, x.exact, x.bounded))
            k = rng.choice([-2, -1, 0, 1, 3, rng.randint(-2**63, 2**63 - 1)])
            return self.add(T(t.trilu(x.h, k, rng.random() < 0.5), key, x.exact, x.bounded))
        if op == "CONCATENATE":
            a = self.axis()
            o = self.operand(key, bounded=True)
            first = rng.random() < 0.5
            parts = [x, o] if first else [o, x]
            y = t.concatenate([p.h for p in parts] + ([x.h] if rng.random() < 0.3 else []), a)
            d = self.base[a]
            start, limit = [None] * rank, [None] * rank
            if first:
                limit[a] = d
            else:
                start[a], limit[a] = d, t.dim_op("add", d, d)
            return self.add(T(t.slice(y, start, limit, None), key, x.exact and o.exact, x.bounded and o.bounded))
        if op == "SLICE":
            a = rng.randrange(rank)
            if rng.random() < 0.4:  # strided, kept as an extra output
                strides = [rng.choice([1, 2, 3]) for _ in range(rank)]
                self.side(T(t.slice(x.h, None, None, strides), key, x.exact, x.bounded))
                return None
            d = self.base[a]
            s = t.dim_op("floordiv", d, 2)
            start = [None] * rank
            start[a] = s
            y = t.slice(x.h, start, None, None)
            low, high = [0] * rank, [0] * rank
            low[a] = s
            return self.add(T(t.pad(y, low, high, rng.choice([0.0, 1.5, -2.0])), key, x.exact, x.bounded))
        if op == "PAD":
            a = rng.randrange(rank)
            low, high = [0] * rank, [0] * rank
            low[a], high[a] = rng.randint(0, 3), rng.randint(1, 3)
            y = t.pad(x.h, low, high, rng.choice([0.0, 7.0, -1.0, 0.5]))
            start, limit = [None] * rank, [None] * rank
            start[a], limit[a] = low[a], t.dim_op("add", self.base[a], low[a])
            return self.add(T(t.slice(y, start, limit, None), key, x.exact, x.bounded))
        if op in ct.REDUCE:
            r = rng.random()
            axes = [] if r < 0.15 else rng.sample(range(rank), rng.randint(1, rank))
            axes = [ax - rank if rng.random() < 0.3 else ax for ax in axes]
            keep = rng.random() < 0.5
            y = t.reduce(op, x.h, axes, keep)
            if not keep:
                reduced = {ax % rank for ax in axes} if axes else set(range(rank))
                y = t.reshape(y, [1 if i in reduced else self.base[i] for i in range(rank)])
            exact = not is_float(key) or (op in ("REDUCE_MAX", "REDUCE_MIN") and x.exact)
            bounded = x.bounded and op in ("REDUCE_MAX", "REDUCE_MIN", "REDUCE_MEAN", "REDUCE_PROD")
            loose = not exact and key in NFLOATS
            return self.add(T(t.broadcast_to(y, self.base), key, exact, bounded, loose))
        if op in ("MATMUL", "DOT_GENERAL"):
            kind = "small" if is_int(key) else "plain" if key in NFLOATS and self.specials else None
            w = self.input(key, ["m", "m"], kind)
            if op == "MATMUL":
                y = t.matmul(x.h, w.h)
            elif rank >= 3 and rng.random() < 0.5:  # with a batch axis
                wb = self.input(key, [self.base_spec[0], "m", "m"], kind)
                y = t.dot_general(x.h, wb.h, [0], [0], [-1], [1])
            else:
                y = t.dot_general(x.h, w.h, [], [], [-1], [0])
            return self.add(T(y, key, is_int(key), loose=key in NFLOATS))
        if op == "ATTENTION":
            # Self-attention on x viewed as [1, ..., s, d] (k = v = q: heads and lengths equal),
            # a bool mask [s, s] of new input, a random scale and causal alignment.
            x = self.operand(key, bounded=True)
            q = t.reshape(x.h, [1] + list(self.base))
            s_spec = self.base_spec[-2]
            m = self.input("bool", [s_spec, s_spec])
            y = t.attention(q, q, q, m.h, rng.choice([0.0, 0.5]), rng.randrange(3))
            return self.add(T(t.reshape(y, self.base), key, False, x.bounded, key in NFLOATS))
        if op in ("SOFTMAX", "LAYER_NORM", "CUMSUM"):
            a = self.axis()
            if op == "SOFTMAX":
                y = t.softmax(x.h, a)
            elif op == "LAYER_NORM":
                y = t.layer_norm(x.h, a, rng.choice([1e-5, 1e-3, 0.1]))
            else:
                y = t.cumsum(x.h, a)
            return self.add(T(y, key, is_int(key), op != "CUMSUM", key in NFLOATS))
        raise AssertionError(f"no generator for {op}")

    def conv(self, key):
        """conv of the base value read as [N, C, *spatial] (rank 2 gets a channel axis), with a
        random kernel, strides, dilations, padding (SAME or explicit, output sizes >= 1 for
        every m) and groups (depthwise on 3 channels); kept as an extra output."""
        t, rng = self.t, self.rng
        x = self.operand(key, bounded=True, tame=True)
        rank = len(self.base)
        spec = self.base_spec
        if rank == 2:
            xh, spec = t.reshape(x.h, [self.base[0], 1, self.base[1]]), [spec[0], "1", spec[1]]
        else:
            xh = x.h
        ns = len(spec) - 2
        groups = 3 if spec[1] == "3" and rng.random() < 0.5 else 1
        cg = "1" if groups == 3 else spec[1]
        out_channels = groups * rng.choice([1, 2])
        kernel = [rng.choice([1, 2, 3]) for _ in range(ns)]
        w = self.input(key, [str(out_channels), cg] + [str(k) for k in kernel], "small")
        strides = [rng.choice([1, 1, 2]) for _ in range(ns)]
        dilations = [rng.choice([1, 1, 2]) for _ in range(ns)]
        if rng.random() < 0.5:
            y = t.conv(xh, w.h, strides=strides, dilations=dilations, auto_pad=rng.choice([1, 2]), groups=groups)
        else:  # pads covering the dilated kernel: every output size is >= 1
            reach = [(k - 1) * d for k, d in zip(kernel, dilations)]
            low = [rng.randint(0, r) for r in reach]
            pads = low + [r - lo for r, lo in zip(reach, low)]
            y = t.conv(xh, w.h, strides=strides, dilations=dilations, pads=pads, groups=groups)
        self.side(T(y, key, False, False, key in NFLOATS))
        return None

    def reduce_window(self, key):
        """A sum, max or min window that keeps the base shape: stride 1, random windows (1-3)
        and dilations (1-2), the padding split so that every window holds its own position (max
        and min never return the padding's infinity)."""
        t, rng = self.t, self.rng
        red = rng.choice(["REDUCE_SUM", "REDUCE_MAX", "REDUCE_MIN"])
        x = self.operand(key, bounded=True, tame=red == "REDUCE_SUM")
        win, dil, low, high = [], [], [], []
        for _ in self.base:
            w = rng.choice([1, 1, 2, 3])
            d = rng.choice([1, 2])
            lo = d * rng.randint(0, w - 1)
            win.append(w)
            dil.append(d)
            low.append(lo)
            high.append((w - 1) * d - lo)
        y = t.reduce_window(red, x.h, win, None, dil, None, low, high)
        exact = not is_float(key) or (red != "REDUCE_SUM" and x.exact)
        loose = not exact and key in NFLOATS
        return self.add(T(y, key, exact, x.bounded and red != "REDUCE_SUM", loose))

    def control_flow(self, op, key):
        """cond on a shape-dependent predicate with a captured operand in one branch; a scan
        along axis 0 (a running maximum by compare and select: exact for every dtype, the ys
        stacked back to the base shape); a while_loop that reverses axis 0 n times."""
        t, rng = self.t, self.rng
        x = self.operand(key, exact=True)
        n = self.base[0]
        if op == "COND":
            other = self.operand(key, exact=True)
            pred = t.compare("GT", t.dim_value(n), t.constant(np.array(rng.choice([1, 2, 3]), np.int64)))
            y, = t.cond(pred, [(key, self.base)], lambda a: [t.reverse(a[0], [0])], lambda a: [other.h], [x.h])
            return self.add(T(y, key, True, x.bounded and other.bounded))
        if op == "SCAN":
            row = self.base[1:]
            init = t.slice(x.h, None, [1] + [None] * (len(self.base) - 1), None)
            init = t.reshape(init, row)

            def body(a):
                best = t.select(t.compare("GT", a[1], a[0]), a[1], a[0])
                return [best, best]
            _, ys = t.scan([(key, row), (key, row)], body, [init], [x.h], 0, None, rng.random() < 0.5)
            return self.add(T(ys, key, True, x.bounded))
        i0 = t.constant(np.array(0, np.int64))
        one = t.constant(np.array(1, np.int64))
        bound = t.dim_value(n)
        _, y = t.while_loop([("i64", ""), (key, self.base)], lambda a: [t.compare("LT", a[0], bound)],
                            lambda a: [t.binary("ADD", a[0], one), t.reverse(a[1], [0])], [i0, x.h])
        return self.add(T(y, key, True, x.bounded))

    def data_dependent(self, op, key):
        """Ops whose result size comes from the data, kept as extra outputs: nonzero of an
        exact value; boolean_mask by an exact bool value over the whole tensor, or by the rows
        of one axis where it has a true element; an iota whose length is a count the program
        computes (size_from_value)."""
        t, rng = self.t, self.rng
        rank = len(self.base)
        if op == "NONZERO":
            x = self.operand(key, exact=True)
            self.side(T(t.nonzero(x.h), "i64", True))
            return None
        m = self.operand("bool", exact=True)
        if op == "SIZE_FROM_VALUE":
            u = t.size_from_value(t.reduce("REDUCE_SUM", t.convert(m.h, "i64"), [], False))
            self.side(T(t.iota("i64", [u], 0), "i64", True))
            return None
        x = self.operand(key, bounded=True)
        if rng.random() < 0.5:
            y = t.boolean_mask(x.h, m.h, 0)
        else:
            a = rng.randrange(rank)
            others = [i for i in range(rank) if i != a]
            any_true = t.reduce("REDUCE_MAX", t.convert(m.h, "i32"), others, False)
            rows = t.compare("NE", any_true, t.constant(np.array(0, np.int32)))
            y = t.boolean_mask(x.h, rows, a - rank if rng.random() < 0.3 else a)
        self.side(T(y, key, x.exact, x.bounded))
        return None

    def is_base(self, h):
        return len(self.t.shape(h)) == len(self.base)

    def program(self):
        """The serialized program, and per output whether it is exact (self.accumulated: per
        output whether it is an f16/bf16 value accumulated in f32)."""
        # Every value is an output: programs keep only the nodes that outputs depend on.
        self.loose = T.f32_seen
        outs = self.pool + self.outputs
        self.accumulated = [v.loose for v in outs]
        return self.t.program(self.ins, [v.h for v in outs]), [v.exact for v in outs]


def pairs_of(seed, narrow=True):
    """The (op, dtype) pairs dealt to small program `seed`, plus a few random ones; the narrow
    pairs (NARROW_PAIRS) are dealt out too, mixed in, unless narrow=False."""
    deck = list(ALL_PAIRS)
    random.Random(21).shuffle(deck)
    mine = deck[seed::N_SMALL]
    rng = random.Random(seed)
    mine = mine + [rng.choice(ALL_PAIRS) for _ in range(EXTRA_OPS)]
    if not narrow:
        return mine
    ndeck = list(NARROW_PAIRS)
    random.Random(22).shuffle(ndeck)
    mine += ndeck[seed::N_SMALL]
    rng.shuffle(mine)
    return mine


def large_pairs(seed):
    rng = random.Random(1000 + seed)
    cheap = [p for p in ALL_PAIRS if p[0] not in NOT_LARGE]
    # Narrow pairs too (not narrow indices: 10^6 rows do not fit i8 or u8).
    ncheap = [p for p in NARROW_PAIRS if p[0] not in NOT_LARGE and not narrow_index(*p)]
    return [rng.choice(cheap) for _ in range(10)] + [rng.choice(ncheap)]


def record(prog, name, envs, gen):
    """Counts what a program exercised, read back from its serialized bytes (the narrow pairs of
    ops that compute: as traced)."""
    codes = {v: k for k, v in ct.op_definitions().items()}
    dts = [ct.DTYPE_NAMES[d] for d in prog.input_dtypes] + [ct.DTYPE_NAMES[n.Dtype()] for n in prog.nodes]
    pairs = set()
    for n in prog.nodes:
        op = codes[n.Op()]
        pairs.add((op, ct.dtype_key(op, ct.DTYPE_NAMES[n.Dtype()],
                                    [dts[n.Operands(j)] for j in range(n.OperandsLength())])))
    COVERAGE["pairs"] |= pairs
    narrow = {p for p in pairs if p[0] in MOVES and is_narrow_key(*p)}
    narrow |= {p for p in gen.narrow_traced if p[0] not in MOVES or narrow_index(*p)}
    COVERAGE["narrow"] |= narrow
    if narrow:
        COVERAGE["narrow programs"].add(name)
        COVERAGE["narrow runs"] += len(envs)
    COVERAGE["ops"] += len(prog.nodes)
    COVERAGE["runs"] += len(envs)
    COVERAGE["programs"].add(name)
    kinds = {oracle.D.VAR: "variable", oracle.D.ADD: "linear", oracle.D.MUL: "product", oracle.D.POW: "power",
             oracle.D.MAXIMUM: "max", oracle.D.MINIMUM: "min"}
    for i in range(prog.fb.SolveLength()):
        s = prog.fb.Solve(i)
        kind = "dim input" if s.Axis() < 0 else kinds[prog.dims[prog.inputs[s.Input()].Shape(s.Axis())][0]]
        COVERAGE["solve_kinds"][kind] += 1


def tolerance(exact, f32, want):
    """Exact values must match bit for bit; others within f32 or f64 precision, with an absolute
    part scaled by the output's magnitude (cancellation)."""
    if exact:
        return 0, 0
    finite = np.abs(want[np.isfinite(want)]) if want.size else np.zeros(0)
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    return (1e-4, 1e-5 * scale) if f32 else (1e-9, 1e-10 * scale)


def same_values(a, b):
    """Bit for bit but any NaN for a NaN."""
    if a.dtype in (np.float16, oracle.BF16):
        a, b = a.astype(np.float32), b.astype(np.float32)
    return np.array_equal(a, b, equal_nan=a.dtype.kind == "f")


def assert_narrow_float_agree(got, want, what, exact, accumulated):
    """f16/bf16: exact values bit for bit (any NaN for a NaN), others within one unit in the last
    place of the narrow type; values accumulated in f32 (in any order) within f32 precision and
    then two units (the rounding of each side). Values both below f32's smallest normal (bf16's
    subnormals, where an f32 result keeps few bits) pass."""
    if exact:
        return assert_narrow_agree(got, want, what + " exact", ulps=0)
    g, w = got.astype(np.float64), want.astype(np.float64)
    rtol, atol = tolerance(False, True, w) if accumulated else (0, 0)
    tiny = float(np.finfo(np.float32).tiny)  # below it f32 keeps few bits (bf16's subnormals)
    with np.errstate(invalid="ignore"):
        near = np.isfinite(g) & np.isfinite(w) & (np.abs(g - w) <= atol + rtol * np.abs(w))
        near |= (np.abs(g) < tiny) & (np.abs(w) < tiny)
    assert_narrow_agree(np.where(near, want, got), want, what, ulps=2 if accumulated else 1)


def check_program(api, name, gen, sizes, capacity, one_thread_too=False):
    data, exact = gen.program()
    prog = oracle.Program(data)
    envs = [gen.env(s) for s in sizes]
    feeds = [gen.feeds(env) for env in envs]
    # Large programs use 4 threads whatever the machine, and are compared with 1 thread.
    got = ct.run_cpp(api, data, feeds, capacity=capacity, num_threads=4 if one_thread_too else 0)
    if one_thread_too:  # results do not depend on the thread count (documented), bit for bit
        for env, out, single in zip(envs, got, ct.run_cpp(api, data, feeds, num_threads=1)):
            for i, (o, s) in enumerate(zip(out, single)):
                assert same_values(o, s), f"{name} output {i} at {env}: 1 thread"
    for env, feed, out in zip(envs, feeds, got):
        want = prog.run({x.Name().decode(): v for x, v in zip(prog.inputs, feed)})
        assert len(out) == len(want)
        for i, (o, w) in enumerate(zip(out, want)):
            what = f"{name} output {i} at {env} (extras {gen.extra_kinds})"
            if o.dtype in (np.float16, oracle.BF16):
                assert_narrow_float_agree(o, w, what, exact[i], gen.accumulated[i])
            elif o.dtype in ct.NP_DTYPES[5:]:  # narrow integers: exact
                assert_narrow_agree(o, w, what)
            elif o.dtype.kind == "f":
                f32 = gen.loose or o.dtype == np.float32
                ct.assert_agree(o, w, what + (" exact" if exact[i] else ""), *tolerance(exact[i], f32, w))
            else:
                ct.assert_agree(o, w, what)
    record(prog, name, envs, gen)


@pytest.fixture(scope="module")
def api():
    return ct.Api()


def run_small(api, seed):
    gen = Gen(api, seed, pairs_of(seed), large=False)
    check_program(api, f"small {seed}", gen, ["small"] * 3, capacity=seed % 3 * 8)


def run_large(api, seed):
    gen = Gen(api, 5000 + seed, large_pairs(seed), large=True)
    check_program(api, f"large {seed}", gen, ["large", "small"], capacity=16, one_thread_too=True)


@pytest.mark.parametrize("seed", range(N_SMALL))
def test_random_program_agrees(api, seed):
    run_small(api, seed)


@pytest.mark.parametrize("seed", LARGE)
def test_large_random_program_agrees(api, seed):
    run_large(api, seed)


def test_integer_division_edge_cases_exactly(api):
    """x / 0, x rem 0, INT_MIN / -1 and INT_MIN rem -1 at fixed places, and their broadcasts."""
    for key in ct.INTS:
        info = np.iinfo(ct.NP_DTYPES[ct.CODE[key]])
        t = ct.Tracer(api)
        a = t.input("a", key, "n")
        b = t.input("b", key, "n")
        data = t.program([a, b], [t.binary("DIV", a, b), t.binary("REM", a, b),
                                  t.binary("DIV", a, t.constant(np.array(-1, ct.NP_DTYPES[ct.CODE[key]])))])
        av = np.array([info.min, info.min, info.max, 7, -7, 7, -7, 0, 5, info.min], ct.NP_DTYPES[ct.CODE[key]])
        bv = np.array([-1, 0, -1, 2, 2, -2, -2, 0, 0, 1], ct.NP_DTYPES[ct.CODE[key]])
        (q, r, neg), = ct.run_cpp(api, data, [[av, bv]])
        want_q = [info.min, 0, -info.max, 3, -3, -3, 3, 0, 0, info.min]
        want_r = [0, 0, 0, 1, -1, 1, -1, 0, 0, 0]
        np.testing.assert_array_equal(q, want_q)  # C truncation; x / 0 == 0; INT_MIN / -1 wraps
        np.testing.assert_array_equal(r, want_r)  # sign of the dividend; x rem 0 == x rem -1 == 0
        np.testing.assert_array_equal(neg, np.negative(av))
        w = oracle.Program(data).run({"a": av, "b": bv})
        for got, want in zip((q, r, neg), w):
            ct.assert_agree(got, want, f"{key} oracle")


def test_every_op_and_dtype_covered(api, capsys):
    """Every op x legal dtype ran in this session (programs that did not run yet run here), and
    the totals are printed."""
    for seed in range(N_SMALL):
        if f"small {seed}" not in COVERAGE["programs"]:
            run_small(api, seed)
    for seed in LARGE:
        if f"large {seed}" not in COVERAGE["programs"]:
            run_large(api, seed)
    missing = sorted(set(ALL_PAIRS) - COVERAGE["pairs"])
    assert not missing, f"op x dtype pairs no random program exercised: {missing}"
    missing = sorted(set(NARROW_PAIRS) - COVERAGE["narrow"])
    assert not missing, f"narrow op x dtype pairs no random program exercised: {missing}"
    ops = {op for op, _ in COVERAGE["pairs"]}
    assert ops == set(ct.op_definitions()), f"ops never run: {sorted(set(ct.op_definitions()) - ops)}"
    edges = {(op, key) for op in ("DIV", "REM") for key in ct.NUMERIC + ct.NARROW if key != "u64"}
    assert COVERAGE["edge divisions"] == edges, \
        f"zero divisors / INT_MIN / -1 not met by {edges - COVERAGE['edge divisions']}"
    solve_kinds = {"variable", "linear", "product", "power", "max", "min", "dim input"}
    assert set(COVERAGE["solve_kinds"]) == solve_kinds, f"solve steps exercised: {COVERAGE['solve_kinds']}"
    with capsys.disabled():  # shown without -s: the coverage of every run of make test
        print(f"\noracle: {len(COVERAGE['programs'])} random programs, {COVERAGE['runs']} runs, "
              f"{COVERAGE['ops']} ops, {len(ops)}/{len(ct.op_definitions())} op codes, "
              f"{len(COVERAGE['pairs'] & set(ALL_PAIRS))}/{len(ALL_PAIRS)} op x dtype pairs, "
              f"solve steps {dict(sorted(COVERAGE['solve_kinds'].items()))}; narrow types: "
              f"{len(COVERAGE['narrow programs'])} programs, {COVERAGE['narrow runs']} runs, "
              f"{len(COVERAGE['narrow'] & set(NARROW_PAIRS))}/{len(NARROW_PAIRS)} "
              "op x narrow dtype pairs")


# ---- Derived programs (jvp, vjp, grad; schema version 2) ----
# They use only ordinary ops, so the oracle runs them as any program: inputs with a default
# (parameters, grad's cotangent) left out take it, every input binds by name.

def _mlp_loss(api):
    """mean((tanh(x @ w1 + b1) @ w2 - y)^2) and the hidden layer; f64, symbolic batch, the
    weights as parameters."""
    rng = np.random.default_rng(7)
    t = ct.Tracer(api)
    x = t.input("x", "f64", "batch, 5")
    y = t.input("y", "f64", "batch, 2")
    w1 = t.parameter("w1", rng.uniform(-1, 1, (5, 4)))
    b1 = t.parameter("b1", rng.uniform(-1, 1, (4,)))
    w2 = t.parameter("w2", rng.uniform(-1, 1, (4, 2)))
    h = t.unary("TANH", t.binary("ADD", t.matmul(x, w1), b1))
    d = t.binary("SUB", t.matmul(h, w2), y)
    loss = t.reduce("REDUCE_MEAN", t.binary("MUL", d, d), [], False)
    return t.program([x, y, w1, b1, w2], [loss, h], names=["loss", "hidden"])


def _derived(api):
    """name -> serialized derived program of the MLP loss, to second order."""
    f = _mlp_loss(api)
    grad = ct.derive(api, f, "grad", ["x", "w1", "b1", "w2"], of="loss")
    return {
        "grad": grad,
        "jvp": ct.derive(api, f, "jvp", ["x", "w1"]),
        "vjp": ct.derive(api, f, "vjp", ["w2", "x"], of=["hidden", "loss"]),
        "hvp (jvp of grad)": ct.derive(api, grad, "jvp", ["w1"]),
        "vjp of jvp": ct.derive(api, ct.derive(api, f, "jvp", ["b1"]), "vjp", ["b1"], of=["loss.tangent"]),
    }


def _feeds(prog, batch, rng, leave_out):
    """Values by name for every input, shapes evaluated at `batch`; inputs with a default are
    left out when `leave_out`, else given (new values), in reversed order (binding is by name)."""
    feeds = {}
    for name, _, dtype, shape, _ in reversed(prog.info.inputs):
        if leave_out and name in prog.info.defaults:
            continue
        dims = ct.eval_spec(", ".join(shape), {"batch": batch}) if shape else ()
        feeds[name] = rng.uniform(-1.5, 1.5, dims).astype(oracle.NP_DTYPES[oracle.reader.DTYPES.index(dtype)])
    return feeds


def test_derived_programs_agree(api):
    """The runtime and the oracle agree on derived programs of every kind (first and second
    order) at three batch sizes (1 included), with defaults used and overridden by name."""
    rng = np.random.default_rng(3)
    for kind, data in _derived(api).items():
        prog = oracle.Program(data)
        assert prog.info.schema_version == 2, kind
        for batch in (1, 3, 17):
            for leave_out in (True, False):
                feeds = _feeds(prog, batch, rng, leave_out)
                got, = ct.run_cpp(api, data, [feeds])
                want = prog.run(feeds)
                for (name, _, _), g, w in zip(prog.info.outputs, got, want):
                    ct.assert_agree(g, w, f"{kind} {name} at batch {batch}", 1e-10, 1e-12)


def test_oracle_gradient_matches_finite_differences(api):
    """The grad program, run by the oracle, matches central differences of the loss, and the
    named cotangent scales it: the derived program itself is right, not only run alike."""
    f = oracle.Program(_mlp_loss(api))
    g = oracle.Program(_derived(api)["grad"])
    rng = np.random.default_rng(11)
    for batch in (1, 4):
        feeds = _feeds(f, batch, rng, leave_out=True)
        outs = g.run(feeds)
        grads = dict(zip([n for n, _, _ in g.info.outputs], outs))
        for name in ("x", "w1", "b1", "w2"):
            base = feeds[name] if name in feeds else f.default(name)
            for flat in range(0, base.size, 3):
                eps = 1e-6
                plus, minus = base.copy(), base.copy()
                plus.flat[flat] += eps
                minus.flat[flat] -= eps
                fd = (f.run({**feeds, name: plus})[0] - f.run({**feeds, name: minus})[0]) / (2 * eps)
                assert abs(fd - grads[name + ".grad"].flat[flat]) <= 1e-7 + 1e-6 * abs(fd), (name, flat)
        scaled = g.run({**feeds, "loss.cotangent": np.array(-2.0)})
        np.testing.assert_allclose(scaled[2], -2 * outs[2], rtol=1e-12)


def test_jvp_of_random_programs_agrees(api):
    """jvp of random programs (tangents of every float input): the runtime agrees with the
    oracle; a program with an op that has no rule yet is SHP_UNSUPPORTED, never a zero."""
    derived = 0
    for seed in range(0, N_SMALL, 4):
        gen = Gen(api, seed, pairs_of(seed, narrow=False), large=False)
        data, _ = gen.program()
        prog = oracle.Program(data)
        wrt = [n for n, r, dt, _, _ in prog.info.inputs if r == "data" and dt in ct.FLOATS]
        if not wrt:
            continue
        try:
            jdata = ct.derive(api, data, "jvp", wrt)
        except ct.ShpError as e:
            assert e.code == 15, str(e)  # SHP_UNSUPPORTED (naming the op), never a silent zero
            continue
        derived += 1
        jprog = oracle.Program(jdata)
        env = gen.env("small")
        feed = dict(zip([n for n, _, _, _, _ in prog.info.inputs], gen.feeds(env)))
        nrng = np.random.default_rng(seed)
        for name in wrt:
            feed[name + ".tangent"] = nrng.uniform(-1, 1, feed[name].shape).astype(feed[name].dtype)
        got, = ct.run_cpp(api, jdata, [feed])
        want = jprog.run(feed)
        for (name, _, _), role, o, w in zip(jprog.info.outputs, jprog.info.output_roles, got, want):
            if o.dtype.kind == "f":
                with np.errstate(all="ignore"):
                    finite = np.isfinite(w) & (np.abs(w) < 1e6)
                if role == "tangent":  # derivatives of steep ops: compare where moderate
                    o, w = o[finite], w[finite]
                f32 = gen.loose or o.dtype == np.float32
                ct.assert_agree(o, w, f"jvp of small {seed}: {name}", *tolerance(False, f32, w))
            else:
                ct.assert_agree(o, w, f"jvp of small {seed}: {name}")
    assert derived >= 1


def _stack(elements, axis, shape, dtype):
    """Elements stacked along a new axis `axis` (an empty batch keeps the element shape)."""
    if not elements:
        return np.empty(shape[:axis] + (0,) + shape[axis:], dtype=dtype)
    return np.stack(elements, axis=axis)


BATCH_DEPENDENT = ("nonzero", "boolean_mask", "size_from_value", "conv")
VMAP_COVERAGE = {"programs": 0, "refused": 0, "ops": set()}


@pytest.mark.parametrize("seed", range(N_SMALL))
def test_vmap_of_random_programs_agrees(api, seed):
    """vmap of random programs (every op and dtype, narrow pairs included): the batched program
    on stacked inputs equals the program run once per element, at batch 0, 1 and 7 (and 64 for
    a few), batch axes at random places; the oracle interprets the batched bytes the same. An op
    that cannot be batched is refused with SHP_UNSUPPORTED naming it, never run wrong."""
    gen = Gen(api, seed, pairs_of(seed), large=False)
    data, exact = gen.program()
    prog = oracle.Program(data)
    rng = random.Random(seed)
    names = [n for n, _, _, _, _ in prog.info.inputs]
    roles = [r for _, r, _, _, _ in prog.info.inputs]
    env = gen.env("small")
    sample = gen.feeds(env)
    in_axes = [-1 if r == "dim" else (rng.randint(0, a.ndim) if rng.random() < 0.8 else -1)
               for r, a in zip(roles, sample)]
    if all(a < 0 for a in in_axes):
        in_axes[0] = 0
    out_ranks = [o.ndim for o in ct.run_cpp(api, data, [sample])[0]]
    out_axes = [rng.randint(0, r) for r in out_ranks]
    codes = {v: k for k, v in ct.op_definitions().items()}
    # When an op refuses the batch (its size depends on each element's data), batch one input
    # at a time instead: the refusal must name such an op, never be a wrong result.
    singles = [[ax if j == i else -1 for j, ax in enumerate(in_axes)] for i, ax in enumerate(in_axes) if ax >= 0]
    vdata = None
    for attempt in [in_axes] + singles:
        try:
            vdata = ct.vmap(api, data, attempt, out_axes)
            in_axes = attempt
            break
        except ct.ShpError as e:
            assert e.code == 15 and any(op in str(e) for op in BATCH_DEPENDENT), str(e)
    if vdata is None:
        VMAP_COVERAGE["refused"] += 1
        return
    VMAP_COVERAGE["programs"] += 1
    VMAP_COVERAGE["ops"] |= {codes[n.Op()] for n in prog.nodes}
    vprog = oracle.Program(vdata)
    for batch in ([0, 1, 7, 64] if seed % 8 == 0 else [0, 1, 7]):
        per = [gen.feeds(env) for _ in range(batch)]
        feed = []
        for i, ax in enumerate(in_axes):
            if ax < 0:  # shared: the sample's value for every element
                for p in per:
                    p[i] = sample[i]
                feed.append(sample[i])
            else:
                feed.append(_stack([p[i] for p in per], ax, sample[i].shape, sample[i].dtype))
        want = ct.run_cpp(api, data, per) if per else []
        got, = ct.run_cpp(api, vdata, [feed])
        oracle_got = vprog.run(dict(zip(names, feed)))
        for o, (g, og) in enumerate(zip(got, oracle_got)):
            what = f"vmap of small {seed} (in_axes {in_axes}) output {o} at batch {batch}"
            assert g.shape[out_axes[o]] == batch, what
            if g.dtype in (np.float16, oracle.BF16) or g.dtype in ct.NP_DTYPES[5:]:
                ok = same_values(g, og) or not exact[o]
                assert ok or g.dtype.kind == "f", what + ": oracle"
            elif g.dtype.kind == "f":
                ct.assert_agree(g, og, what + ": oracle",
                                *tolerance(exact[o], gen.loose or g.dtype == np.float32, og))
            else:
                ct.assert_agree(g, og, what + ": oracle")
            for e in range(batch):
                ge = np.take(g, e, axis=out_axes[o])
                we = want[e][o]
                if exact[o] or ge.dtype.kind != "f":
                    assert same_values(ge, we), what + f" element {e}"
                else:
                    ct.assert_agree(ge.astype(np.float64), we.astype(np.float64), what + f" element {e}",
                                    *tolerance(False, True, we.astype(np.float64)))


def test_vmap_covered_every_op():
    """The vmap cases above batched most programs and, among them, every op but the ones whose
    sizes depend on each element's data."""
    if VMAP_COVERAGE["programs"] + VMAP_COVERAGE["refused"] < N_SMALL:
        pytest.skip("needs the whole vmap parametrization")
    assert VMAP_COVERAGE["programs"] >= 0.9 * N_SMALL, VMAP_COVERAGE
    missing = set(ct.op_definitions()) - VMAP_COVERAGE["ops"] - {"NONZERO", "BOOLEAN_MASK", "SIZE_FROM_VALUE"}
    assert not missing, f"ops never batched by the random programs: {sorted(missing)}"


def test_vjp_and_jvp_of_random_programs_are_consistent(api):
    """On random programs (the generator above), with every f64 data input as wrt and every f64
    output as of: <vjp(ct), t> == <ct, jvp(t)> to 1e-9 relative in f64. Both transformations
    are linear maps built from the same rules, so the identity holds at any point, kinks
    included; only non-finite values (the generator's NaN/inf inputs) are left out."""
    checked = 0
    for seed in range(1, N_SMALL, 2):
        gen = Gen(api, seed, pairs_of(seed, narrow=False), large=False)
        data, _ = gen.program()
        prog = oracle.Program(data)
        wrt = [n for n, r, dt, _, _ in prog.info.inputs if r == "data" and dt == "f64"]
        of = [n for (n, dt, _), role in zip(prog.info.outputs, prog.info.output_roles)
              if dt == "f64" and role == "primal"]
        if not wrt or not of:
            continue
        try:
            jdata = ct.derive(api, data, "jvp", wrt)
            vdata = ct.derive(api, data, "vjp", wrt, of=of)
        except ct.ShpError as e:
            assert e.code == 15, str(e)  # SHP_UNSUPPORTED (naming the op), never a silent zero
            continue
        env = gen.env("small")
        feed = dict(zip([n for n, _, _, _, _ in prog.info.inputs], gen.feeds(env)))
        if not all(np.all(np.isfinite(feed[n])) for n in wrt):
            continue
        nrng = np.random.default_rng(seed)
        tangents = {n + ".tangent": nrng.standard_normal(feed[n].shape) for n in wrt}
        jout, = ct.run_cpp(api, jdata, [{**feed, **tangents}])
        jnames = [n for n, _, _ in oracle.Program(jdata).info.outputs]
        cot = {}
        for o in of:
            shape = jout[jnames.index(o)].shape
            cot[o + ".cotangent"] = nrng.standard_normal(shape)
        vout, = ct.run_cpp(api, vdata, [{**feed, **cot}])
        vnames = [n for n, _, _ in oracle.Program(vdata).info.outputs]
        lhs_terms = [(vout[vnames.index(n + ".grad")] * tangents[n + ".tangent"]).ravel() for n in wrt]
        rhs_terms = [(cot[o + ".cotangent"] * jout[jnames.index(o + ".tangent")]).ravel() for o in of]
        terms = np.concatenate(lhs_terms + rhs_terms)
        if not np.all(np.isfinite(terms)):
            continue
        lhs = sum(t.sum() for t in lhs_terms)
        rhs = sum(t.sum() for t in rhs_terms)
        scale = np.abs(terms).sum() + 1e-300
        # A derivative through f32 (or f16/bf16) values is rounded there on both sides, each
        # in its own order: the identity then holds to that precision only.
        # (f32, f16, bf16: DType codes 0, 5, 6; the dealt pairs cover control-flow bodies too)
        narrow = T.f32_seen or any(n.Dtype() in (0, 5, 6) for n in prog.nodes) or any(
            any(k.startswith(d) or ("->" + d) in k for d in ("f32", "f16", "bf16"))
            for _, k in pairs_of(seed, narrow=False))
        assert abs(lhs - rhs) <= (1e-5 if narrow else 1e-9) * scale, (seed, lhs, rhs, scale)
        checked += 1
    assert checked >= 5, checked


# ---- Guards and variants (schema version 3) ----
# A row softmax traced twice: the softmax op under `cols <= 16`, and max-subtract / exp / sum /
# div under `cols > 16`, combined by shp_program_create_variants. The oracle must pick the
# variant the runtime picks (same order, same rule) and compute the same values.

GUARD_FAILED = 18  # SHP_GUARD_FAILED


def _row_softmax(api, op, bound, plain):
    """One variant: x: f32[rows, cols] -> y, traced under the guard `cols op bound`."""
    t = ct.Tracer(api)
    x = t.input("x", "f32", "rows, cols")
    api("shp_scope_assume", t.scope, t.dim("cols"), ctypes.c_int(ct.COMPARE[op]), t.dim(bound),
        f"row softmax: {'the softmax op' if plain else 'composed'}".encode())
    if plain:
        y = t.softmax(x, -1)
    else:
        e = t.unary("EXP", t.binary("SUB", x, t.reduce("REDUCE_MAX", x, [-1], True)))
        y = t.binary("DIV", e, t.reduce("REDUCE_SUM", e, [-1], True))
    return t.program([x], [y], names=["y"])


def _combine(api, parts):
    """The serialized multi-variant program of the serialized programs `parts`, in order."""
    handles = []
    out, buf = ct.vp(), ct.vp()
    try:
        for data in parts:
            p = ct.vp()
            api("shp_program_load", data, ct.sz(len(data)), ctypes.byref(p))
            handles.append(p)
        api("shp_program_create_variants", (ct.vp * len(handles))(*handles), ct.sz(len(handles)),
            ctypes.byref(out))
        api("shp_program_serialize", out, ctypes.byref(buf))
        return ctypes.string_at(api.L.shp_buffer_data(buf), api.L.shp_buffer_size(buf))
    finally:
        api.L.shp_buffer_destroy(buf)
        api.L.shp_program_destroy(out)
        for p in handles:
            api.L.shp_program_destroy(p)


def _run_variant(api, data, feeds_list):
    """Runs each feed dict with one runtime; [(outputs, shp_runtime_last_variant) or
    ShpError] per feed, and the variant shp_program_check_shapes chose (or the ShpError)."""
    L = api.L
    L.shp_runtime_last_variant.restype = ctypes.c_int64
    L.shp_runtime_last_variant.argtypes = [ct.vp]
    L.shp_bindings_variant.restype = ctypes.c_int64
    L.shp_bindings_variant.argtypes = [ct.vp]
    L.shp_bindings_destroy.argtypes = [ct.vp]
    p, rt = ct.vp(), ct.vp()
    api("shp_program_load", data, ct.sz(len(data)), ctypes.byref(p))
    api("shp_runtime_create", p, None, ctypes.byref(rt))
    results = []
    try:
        n_out = L.shp_program_output_count(p)
        for feeds in feeds_list:
            names = (ctypes.c_char_p * len(feeds))(*[n.encode() for n in feeds])
            shapes = [(ct.i64 * max(1, v.ndim))(*v.shape) for v in feeds.values()]
            ranks = (ct.sz * len(feeds))(*[v.ndim for v in feeds.values()])
            b = ct.vp()
            try:
                api("shp_program_check_shapes", p, names, (ct.vp * len(shapes))(
                    *[ctypes.cast(s, ct.vp) for s in shapes]), ranks, ct.sz(len(feeds)), ctypes.byref(b))
                checked = L.shp_bindings_variant(b)
                L.shp_bindings_destroy(b)
            except ct.ShpError as e:
                checked = e
            try:
                outs = ct._run(api, rt, feeds, n_out)
                results.append(((outs, L.shp_runtime_last_variant(rt)), checked))
            except ct.ShpError as e:
                results.append((e, checked))
    finally:
        L.shp_runtime_destroy(rt)
        L.shp_program_destroy(p)
    return results


def _softmax_feeds(rows, cols, seed):
    return {"x": np.random.default_rng(seed).uniform(-8, 8, (rows, cols)).astype(np.float32)}


def test_variant_dispatch_agrees_with_the_runtime(api):
    """Two variants split at cols = 16: at shapes on both sides and at the boundary (16, 17)
    the oracle picks the variant the runtime ran (shp_runtime_last_variant) and that
    shp_program_check_shapes chose, and both compute the same softmax."""
    data = _combine(api, [_row_softmax(api, "LE", 16, True), _row_softmax(api, "GT", 16, False)])
    prog = oracle.Program(data)
    assert prog.info.schema_version == 3 and len(prog.variants) == 2
    assert [q.info.guards for q in prog.variants] == [
        [("cols <= 16", "row softmax: the softmax op", "shp_scope_assume")],
        [("cols > 16", "row softmax: composed", "shp_scope_assume")]]
    shapes = [(r, c) for r in (1, 3) for c in (1, 8, 15, 16, 17, 18, 64)]
    feeds = [_softmax_feeds(r, c, 100 * r + c) for r, c in shapes]
    for (r, c), f, (result, checked) in zip(shapes, feeds, _run_variant(api, data, feeds)):
        outs, ran = result
        want = prog.run(f)
        assert ran == prog.last_variant == checked == (0 if c <= 16 else 1), (r, c)
        ct.assert_agree(outs[0], want[0].astype(np.float32), f"row softmax at {(r, c)}")
        np.testing.assert_allclose(want[0].sum(axis=1), 1.0, rtol=1e-6)
    assert prog.select([(2, 16)])[0] == 0 and prog.select([(2, 17)])[0] == 1


def test_overlapping_variants_first_wins(api):
    """Overlapping guards are allowed and the first variant that applies runs, in the oracle
    as in the runtime: cols <= 32 first, then cols >= 8."""
    data = _combine(api, [_row_softmax(api, "LE", 32, False), _row_softmax(api, "GE", 8, True)])
    prog = oracle.Program(data)
    shapes = [(2, 7), (2, 8), (2, 32), (2, 33)]
    feeds = [_softmax_feeds(r, c, c) for r, c in shapes]
    for (r, c), f, (result, checked) in zip(shapes, feeds, _run_variant(api, data, feeds)):
        outs, ran = result
        want = prog.run(f)
        assert ran == prog.last_variant == checked == (0 if c <= 32 else 1), c
        ct.assert_agree(outs[0], want[0].astype(np.float32), f"row softmax at {(r, c)}")


def test_no_variant_applies_in_the_oracle_as_in_the_runtime(api):
    """A gap between the guards (cols <= 8, cols >= 17): at cols 12 the runtime fails with
    SHP_GUARD_FAILED listing each variant's failed guard, and so does the oracle; a shape that
    no variant can take for another reason (a wrong rank) is variant 0's own error."""
    data = _combine(api, [_row_softmax(api, "LE", 8, True), _row_softmax(api, "GE", 17, False)])
    prog = oracle.Program(data)
    shapes = [(3, 8), (3, 12), (3, 17)]
    feeds = [_softmax_feeds(r, c, c) for r, c in shapes]
    results = _run_variant(api, data, feeds)
    for (r, c), f, (result, checked) in zip(shapes, feeds, results):
        if c == 12:
            assert isinstance(result, ct.ShpError) and result.code == GUARD_FAILED, result
            assert isinstance(checked, ct.ShpError) and checked.code == GUARD_FAILED
            with pytest.raises(oracle.GuardFailed) as e:
                prog.run(f)
            for msg in (str(result), str(e.value)):
                assert "variant 0: guard cols <= 8" in msg and "variant 1: guard cols >= 17" in msg, msg
            assert "cols = 12" in str(result) and "cols = 12" in str(e.value)
            continue
        outs, ran = result
        want = prog.run(f)
        assert ran == prog.last_variant == checked == (0 if c <= 8 else 1)
        ct.assert_agree(outs[0], want[0].astype(np.float32), f"row softmax at {(r, c)}")
    bad = {"x": np.zeros((3,), np.float32)}
    (result, _), = _run_variant(api, data, [bad])
    assert isinstance(result, ct.ShpError) and result.code != GUARD_FAILED
    with pytest.raises(oracle.Rejected) as e:
        prog.run(bad)
    assert not isinstance(e.value, oracle.GuardFailed)


def test_single_variant_guard_enforced_alike(api):
    """A single-variant program with a guard (cols <= 16): both sides run it at 16 and refuse
    17 with a guard failure naming the values."""
    data = _row_softmax(api, "LE", 16, False)
    prog = oracle.Program(data)
    assert prog.info.schema_version == 3 and len(prog.variants) == 1
    results = _run_variant(api, data, [_softmax_feeds(2, 16, 1), _softmax_feeds(2, 17, 2)])
    (outs, ran), checked = results[0]
    assert ran == checked == 0
    ct.assert_agree(outs[0], prog.run(_softmax_feeds(2, 16, 1))[0].astype(np.float32), "at 16")
    assert isinstance(results[1][0], ct.ShpError) and results[1][0].code == GUARD_FAILED
    with pytest.raises(oracle.GuardFailed, match="cols = 17"):
        prog.run(_softmax_feeds(2, 17, 2))


# ---- Data-dependent sizes (schema version 5): nonzero, boolean_mask, size_from_value ----
# Random masks, densities (empty, full and in between) and shapes; programs with nonzero,
# mask-then-reduce and chains that use the unbacked size u later (slice to u, iota of u,
# reshape [u, 2] -> [2u]). The oracle and the runtime agree exactly on integers and shapes, to
# 1e-6 on floats; checks over u fail alike.

CONSTRAINT_VIOLATION = 7  # SHP_CONSTRAINT_VIOLATION


def _density_data(rng, dtype, shape, density):
    """Values of `dtype` that are nonzero with probability `density` (0: all zero, 1: none),
    with -0.0 among the zeros and NaN among the nonzeros of floats."""
    keep = rng.random(shape) < density
    if dtype == "bool":
        return keep
    dt = ct.NP_DTYPES[ct.CODE[dtype]]
    if dtype in ct.FLOATS:
        v = rng.uniform(0.5, 2.0, shape) * rng.choice([-1.0, 1.0], shape)
        if v.size:
            v.flat[0] = np.nan
        zero = np.where(rng.random(shape) < 0.5, -0.0, 0.0)
        return np.where(keep, v, zero).astype(dt)
    v = rng.integers(1, 100, shape) * rng.choice([-1, 1], shape)
    return np.where(keep, v, 0).astype(dt)


def _run_each(api, data, feeds_list):
    """Runs each feed (a dict by name) with one runtime, as _run_variant: outputs or ShpError."""
    return [r[0] if isinstance(r[0], ct.ShpError) else r[0][0] for r in _run_variant(api, data, feeds_list)]


def _agree(data, feeds_list, results, what, errors=False):
    """The oracle gives each result (outputs, or the refusal of a check); without `errors`
    every run must have succeeded."""
    prog = oracle.Program(data)
    assert prog.info.schema_version == 5 and prog.info.unbacked, what
    for feeds, got in zip(feeds_list, results):
        assert errors or not isinstance(got, ct.ShpError), (what, got)
        if isinstance(got, ct.ShpError):
            with pytest.raises(oracle.Rejected) as e:
                prog.run(feeds)
            assert got.code == CONSTRAINT_VIOLATION and e.value.kind == "constraint", (what, got, e.value)
            continue
        want = prog.run(feeds)
        shapes = {k: v.shape for k, v in feeds.items()}
        for i, (o, w) in enumerate(zip(got, want)):
            if o.dtype.kind == "f":
                ct.assert_agree(o, w.astype(o.dtype), f"{what} output {i} at {shapes}", 1e-6, 1e-6)
            else:
                ct.assert_agree(o, w, f"{what} output {i} at {shapes}")
    return prog


def test_nonzero_random_agrees(api):
    """nonzero of every dtype at ranks 0-3, densities 0, 1 and random, shapes with an empty
    extent among them; one runtime per program (plans per shape and count)."""
    rng = np.random.default_rng(131)
    runs = 0
    for dtype in ct.ALL:
        for spec in ("", "n", "n, m", "2, n, m"):
            t = ct.Tracer(api)
            api("shp_scope_declare", t.scope, b"n", ct.i64(0), ct.i64(2 ** 63 - 1))  # n = 0: empty extents
            x = t.input("x", dtype, spec)
            data = t.program([x], [t.nonzero(x)])
            feeds = []
            for _ in range(8):
                env = {"n": int(rng.integers(0, 7)), "m": int(rng.integers(1, 5))}
                density = rng.choice([0.0, 1.0, rng.random()])
                feeds.append({"x": _density_data(rng, dtype, ct.eval_spec(spec, env), density)})
            results = _run_each(api, data, feeds)
            _agree(data, feeds, results, f"nonzero {dtype} ({spec})")
            for f, (idx,) in zip(feeds, results):  # and numpy's own argwhere
                np.testing.assert_array_equal(idx, np.argwhere(f["x"]).reshape(idx.shape))
            runs += len(feeds)
    assert runs == 160


def test_mask_then_reduce_random_agrees(api):
    """rows of x (n, m) whose score > 0.5 (as a boolean_mask by a computed mask), then their
    sum, mean (sum / u as a float), max and the rows themselves; and x masked by a random
    (n, m) bool mask at once. Counts from 0 (mean NaN, max -inf) to n."""
    rng = np.random.default_rng(7)
    for dtype in ct.FLOATS:
        t = ct.Tracer(api)
        api("shp_scope_declare", t.scope, b"n", ct.i64(0), ct.i64(2 ** 63 - 1))  # n = 0: empty extents
        x = t.input("x", dtype, "n, m")
        score = t.input("score", dtype, "n")
        full = t.input("mask", "bool", "n, m")
        th = t.constant(np.array(0.5, ct.NP_DTYPES[ct.CODE[dtype]]))
        rows = t.boolean_mask(x, t.compare("GT", score, th), 0)
        u = t.shape(rows)[0]
        total = t.reduce("REDUCE_SUM", rows, [0], False)
        mean = t.binary("DIV", total, t.convert(t.dim_value(u), dtype))
        top = t.reduce("REDUCE_MAX", rows, [0], False)
        picked = t.boolean_mask(x, full, 0)
        data = t.program([x, score, full], [rows, total, mean, top, picked, t.reduce("REDUCE_SUM", picked, [], False)])
        feeds = []
        for n in (0, 1, 5, 40):
            for density in (0.0, 1.0, 0.5):
                m = int(rng.integers(1, 6))
                s = np.where(rng.random(n) < density, 0.9, rng.choice([0.5, 0.1, -1.0], n))
                feeds.append({"x": rng.uniform(-1, 1, (n, m)).astype(ct.NP_DTYPES[ct.CODE[dtype]]),
                              "score": s.astype(ct.NP_DTYPES[ct.CODE[dtype]]),
                              "mask": rng.random((n, m)) < density})
        results = _run_each(api, data, feeds)
        _agree(data, feeds, results, f"mask then reduce {dtype}")
        for f, out in zip(feeds, results):
            keep = f["score"] > 0.5
            np.testing.assert_array_equal(out[0], f["x"][keep])
            assert np.isnan(out[2]).all() == (not keep.any())


def test_chains_using_the_size_random_agree(api):
    """u = nonzero count of x (n); w[:u] (u <= n is derived), iota of u, their dot product,
    the indices paired with iota [u, 1] and reshaped [u, 2] -> [2u], and an iota whose length
    is a computed value (size_from_value, range [0, n_max]) reshaped the same way."""
    rng = np.random.default_rng(23)
    t = ct.Tracer(api)
    api("shp_scope_declare", t.scope, b"n", ct.i64(0), ct.i64(2 ** 63 - 1))  # n = 0: empty extents
    x = t.input("x", "i32", "n")
    w = t.input("w", "f64", "n")
    idx = t.nonzero(x)
    u = t.shape(idx)[0]
    head = t.slice(w, [0], [u], None)
    dot = t.matmul(head, t.iota("f64", [u], 0))
    pair = t.concatenate([t.convert(idx, "f64"), t.iota("f64", [u, 1], 0)], 1)
    flat = t.reshape(pair, [t.dim_op("mul", u, 2)])
    total = t.reduce("REDUCE_SUM", t.convert(t.compare("GT", x, t.constant(np.array(0, np.int32))), "i64"), [], False)
    k = t.size_from_value(total, "k", 0, 50)
    kk = t.reshape(t.iota("i32", [k, 2], 0), [t.dim_op("mul", k, 2)])
    data = t.program([x, w], [idx, head, dot, flat, kk])
    feeds = []
    for n in (0, 1, 3, 17, 50):
        for density in (0.0, 1.0, 0.3):
            feeds.append({"x": _density_data(rng, "i32", (n,), density), "w": rng.uniform(-1, 1, n)})
    results = _run_each(api, data, feeds)
    _agree(data, feeds, results, "chain")
    for f, out in zip(feeds, results):
        nz = np.flatnonzero(f["x"])
        assert out[3].shape == (2 * len(nz),) and out[4].shape == (2 * int((f["x"] > 0).sum()),)


def test_checks_over_unbacked_sizes_fail_alike(api):
    """shp_scope_check(u >= 1) and size_from_value's declared range: data that violates them
    is refused by the runtime (SHP_CONSTRAINT_VIOLATION) and by the oracle (Rejected
    "constraint"), with the check's message; other data runs alike."""
    t = ct.Tracer(api)
    api("shp_scope_declare", t.scope, b"n", ct.i64(0), ct.i64(2 ** 63 - 1))  # n = 0: empty extents
    x = t.input("x", "f32", "n")
    idx = t.nonzero(x)
    u = t.shape(idx)[0]
    api("shp_scope_check", t.scope, u, ctypes.c_int(ct.COMPARE["GE"]), t.dim(1), b"at least one hit")
    v = t.input("v", "i64", "")
    k = t.size_from_value(v, "k", 1, 5)
    data = t.program([x, v], [idx, t.iota("i64", [k], 0)])
    feeds = [{"x": np.array(xs, np.float32), "v": np.array(val, np.int64)}
             for xs, val in (([0, 1, 0], 3), ([0, 0, 0], 3), ([], 3), ([2], 0), ([2], 6), ([2, 2], 5), ([1], 1))]
    results = _run_each(api, data, feeds)
    failed = [i for i, r in enumerate(results) if isinstance(r, ct.ShpError)]
    assert failed == [1, 2, 3, 4], results
    prog = _agree(data, feeds, results, "checks", errors=True)
    with pytest.raises(oracle.Rejected, match="at least one hit"):
        prog.run(feeds[1])
    with pytest.raises(oracle.Rejected, match=r"k = 6.*outside \[1, 5\]"):
        prog.run(feeds[4])
    assert "at least one hit" in str(results[1]) and "k = 6" in str(results[4])


def test_reader_refuses_data_dependent_ops_in_an_older_schema(api):
    """A file that declares schema version 4 but holds a nonzero node (or an unbacked
    variable) is refused by the Python reader, as by the library."""
    t = ct.Tracer(api)
    x = t.input("x", "f32", "n")
    data = bytearray(t.program([x], [t.nonzero(x)]))
    prog = oracle._Program.Program.GetRootAs(bytes(data), 0)
    pos = prog._tab.Pos + prog._tab.Offset(4)  # Program.schema_version
    assert int.from_bytes(data[pos:pos + 4], "little") == 5
    data[pos:pos + 4] = (4).to_bytes(4, "little")
    with pytest.raises(oracle.reader.FormatError, match="schema version"):
        oracle.Program(bytes(data))
    p = ct.vp()
    with pytest.raises(ct.ShpError):
        api("shp_program_load", bytes(data), ct.sz(len(data)), ctypes.byref(p))
