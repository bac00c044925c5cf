"""Differential testing of programs written through the Python binding (`shapepoly`).

A generator builds random expression DAGs the way Python users write them (operators, methods,
Python scalars and numpy constants as operands, broadcasting across ranks, size-1 and size-0
axes, fan-out, several outputs sharing intermediates, reductions/matmul/softmax/transpose/
reshape/concat/slicing between elementwise regions), traces each through `shapepoly`, and runs
it at several sizes of its symbolic dims. Each run is checked against

  1. an independent numpy evaluation of the generator's own DAG (never the serialized program):
     floats are evaluated in float64 together with a first-order bound on |ours - exact| per
     element (see `Evaluator`), integers and bools must match exactly;
  2. the same program on a runtime created with SHP_FUSION=off (every elementwise op unfused):
     the raw bytes must be identical;
  3. the program after serialize/loads: identical bytes again;
all on 1 and 2 threads (each compared bit for bit with the fused 1-thread run).

A failing program is minimized (subexpressions replaced by leaves while the failure persists)
and printed as let-bound expression text.

Script mode, for long soaks:
    python tools/python/program_differential.py --programs 5000 --seed 7
prints programs/second and a coverage summary (ops x dtypes, ranks, broadcast kinds, sizes).
"""

import argparse
import collections
import math
import os
import random
import sys
import time

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
_REPO = os.path.dirname(os.path.dirname(_HERE))
if "SHAPEPOLY_LIB" not in os.environ:
    _default_lib = os.path.join(_REPO, "build", "lib", "libshapepoly.so")
    if os.path.exists(_default_lib):
        os.environ["SHAPEPOLY_LIB"] = _default_lib


def _import_binding():
    """The binding package bindings/python/shapepoly. In one pytest process the name
    `shapepoly` may already be taken by flatc's generated Python package (tools/python/
    _generated, imported by shapepoly_reader, whose generated code imports `shapepoly.X`
    lazily), so the binding is then loaded under another name (its imports are relative)."""
    import importlib
    import importlib.util
    root = os.path.join(_REPO, "bindings", "python", "shapepoly")
    loaded = sys.modules.get("shapepoly")
    if loaded is None or os.path.dirname(os.path.abspath(getattr(loaded, "__file__", "") or "")) \
            == root:
        if root not in [os.path.join(p, "shapepoly") for p in sys.path]:
            sys.path.insert(0, os.path.dirname(root))
        if loaded is None:
            return importlib.import_module("shapepoly")
        return loaded
    name = "shapepoly_binding"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(
        name, os.path.join(root, "__init__.py"), submodule_search_locations=[root])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


sp = _import_binding()

SP_DTYPE = {"f32": sp.F32, "f64": sp.F64, "i32": sp.I32, "i64": sp.I64, "bool": sp.BOOL}
NP_DTYPE = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64,
            "bool": np.bool_}
FLOATS = ("f32", "f64")
INTS = ("i32", "i64")

# Unit roundoff of our result's dtype. For f64 results the float64 reference rounds as much as
# we do, so every rounding term is doubled (ROUND_SCALE).
U = {"f32": 2.0 ** -24, "f64": 2.0 ** -53}
ROUND_SCALE = {"f32": 1.0, "f64": 2.0}
TINY = {"f32": float(np.finfo(np.float32).tiny), "f64": float(np.finfo(np.float64).tiny)}
FMAX = {"f32": float(np.finfo(np.float32).max), "f64": float(np.finfo(np.float64).max)}
# Transcendental functions (tanh, exp, logistic, log, sin, erf, ...): 4 ulp = 8 u, relative.
# Measured on this library: <= 4.8 u (f64, including numpy's own rounding), <= 3.8 u (f32).
TRANSC_ULPS = 4.0


# ---- The expression DAG --------------------------------------------------------------------

class Node:
    """One value of a program: op, argument nodes, attributes, dtype and a shape of tokens
    (int: a fixed size; str: a variable)."""
    __slots__ = ("op", "args", "attrs", "dtype", "shape", "depth", "id")

    def __init__(self, op, args, attrs, dtype, shape, nid):
        self.op, self.args, self.attrs = op, list(args), dict(attrs)
        self.dtype, self.shape, self.id = dtype, tuple(shape), nid
        self.depth = 1 + max((a.depth for a in self.args), default=-1)

    @property
    def is_leaf(self):
        return self.op in ("input", "const")


class Dag:
    """Nodes in topological order, the input nodes, named outputs and declared variables."""

    def __init__(self):
        self.nodes, self.inputs, self.outputs = [], [], []
        self.variables = []          # names
        self.zero_ok = True          # variables declared with range (0, None)

    def add(self, op, args, dtype, shape, **attrs):
        n = Node(op, args, attrs, dtype, shape, len(self.nodes))
        self.nodes.append(n)
        if op == "input":
            self.inputs.append(n)
        return n

    def live(self):
        """Nodes reachable from the outputs, in topological order."""
        seen = set()
        stack = [n for _, n in self.outputs]
        while stack:
            n = stack.pop()
            if n.id in seen:
                continue
            seen.add(n.id)
            stack.extend(n.args)
        return [n for n in self.nodes if n.id in seen]


def broadcast_shape(a, b):
    ra, rb = len(a), len(b)
    out = []
    for i in range(max(ra, rb)):
        x = a[ra - 1 - i] if i < ra else 1
        y = b[rb - 1 - i] if i < rb else 1
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            return None
    return tuple(reversed(out))


def concrete(shape, sizes):
    return tuple(sizes[t] if isinstance(t, str) else t for t in shape)


# ---- Expression text ------------------------------------------------------------------------

def _const_text(n):
    v, form = n.attrs["value"], n.attrs["form"]
    if form == "py":
        return repr(v)
    if form == "np0":
        return "np.%s(%r)" % (NP_DTYPE[n.dtype].__name__, v.item())
    return "np.array(%s, np.%s)" % (np.asarray(v).tolist(), NP_DTYPE[n.dtype].__name__)


def _call_text(n, argt):
    a = n.attrs
    extra = []
    for k in ("cmp", "axis", "keepdims", "lo", "hi", "alpha", "perm", "start", "stop", "step",
              "to", "newshape", "reduction"):
        if k in a:
            extra.append("%s=%r" % (k, a[k]))
    return "%s(%s)" % (n.op, ", ".join(list(argt) + extra))


def dag_text(dag):
    """Let-bound text: shared intermediates get names, everything else is inlined."""
    live = dag.live()
    uses = collections.Counter(a.id for n in live for a in n.args)
    for _, n in dag.outputs:
        uses[n.id] += 1
    names, lines = {}, []
    decl = ["%s: %s[%s]" % (n.attrs["name"], n.dtype, ", ".join(str(t) for t in n.shape))
            for n in dag.inputs if n in live]
    lines.append("inputs " + "; ".join(decl))

    def text(n):
        if n.id in names:
            return names[n.id]
        if n.op == "input":
            return n.attrs["name"]
        if n.op == "const":
            return _const_text(n)
        return _call_text(n, [text(a) for a in n.args])

    for n in live:
        if not n.is_leaf and uses[n.id] > 1 and n not in [o for _, o in dag.outputs]:
            t = text(n)
            names[n.id] = "t%d" % n.id
            lines.append("t%d = %s    # %s%s" % (n.id, t, n.dtype, list(n.shape)))
    for name, n in dag.outputs:
        lines.append("%s = %s    # %s%s" % (name, text(n), n.dtype, list(n.shape)))
    return "\n".join(lines)


# ---- Tracing through shapepoly (what a user writes) ------------------------------------------

def _operand(n, env):
    if n.op == "const":
        return n.attrs["value"]
    return env[n.id]


def trace(dag):
    """Builds the program with the public binding; returns a Program."""
    ranges = {v: (0, None) for v in dag.variables} if dag.zero_ok else None
    with sp.Scope(ranges=ranges) as s:
        env = {}
        for n in dag.live():
            if n.op == "const":
                continue
            env[n.id] = _trace_node(s, n, env)
        ins = [env[n.id] for n in dag.inputs if n.id in env]
        return s.program(ins, {name: env[n.id] for name, n in dag.outputs})


def _trace_node(s, n, env):
    op, a = n.op, n.attrs
    if op == "input":
        return s.input(a["name"], SP_DTYPE[n.dtype], ", ".join(str(t) for t in n.shape))
    args = n.args
    if op in ("add", "sub", "mul", "div"):
        x, y = args
        if x.op == "const":  # 2.0 - t: Python's reflected operator
            t, c = env[y.id], x.attrs["value"]
            return {"add": lambda: c + t, "sub": lambda: c - t, "mul": lambda: c * t,
                    "div": lambda: c / t}[op]()
        t, o = env[x.id], _operand(y, env)
        if a.get("method"):
            return getattr(t, op)(o)
        return {"add": lambda: t + o, "sub": lambda: t - o, "mul": lambda: t * o,
                "div": lambda: t / o}[op]()
    if op in ("maximum", "minimum", "rem"):
        return getattr(env[args[0].id], op)(_operand(args[1], env))
    if op == "pow":
        return env[args[0].id] ** a["n"]
    if op == "neg":
        return -env[args[0].id]
    if op == "abs":
        return abs(env[args[0].id]) if a.get("builtin") else env[args[0].id].abs()
    if op in ("tanh", "exp", "logistic", "sqrt", "log", "sin", "cos", "erf", "softplus",
              "softsign", "sign", "rsqrt", "log1p", "expm1", "floor"):
        return getattr(env[args[0].id], op)()
    if op == "leaky_relu":
        return env[args[0].id].leaky_relu(a["alpha"])
    if op == "elu":
        return env[args[0].id].elu(a["alpha"])
    if op == "hard_sigmoid":
        return env[args[0].id].hard_sigmoid(a["alpha"], a["beta"])
    if op == "clip":
        return env[args[0].id].clip(a["lo"], a["hi"])
    if op == "cmp":
        t, o = env[args[0].id], _operand(args[1], env)
        return {"<": lambda: t < o, "<=": lambda: t <= o, ">": lambda: t > o,
                ">=": lambda: t >= o, "==": lambda: t == o, "!=": lambda: t != o}[a["cmp"]]()
    if op == "where":
        p, t, f = (env[x.id] for x in args)
        return sp.where(p, t, f) if a.get("func") else p.select(t, f)
    if op in ("and", "or", "xor"):
        t, o = env[args[0].id], env[args[1].id]
        return {"and": lambda: t & o, "or": lambda: t | o, "xor": lambda: t ^ o}[op]()
    if op == "not":
        return ~env[args[0].id]
    if op == "astype":
        return env[args[0].id].astype(SP_DTYPE[a["to"]])
    if op in ("sum", "mean", "rmax"):
        t = env[args[0].id]
        f = {"sum": t.sum, "mean": t.mean, "rmax": t.max}[op]
        return f(a["axis"], keepdims=True)
    if op == "softmax":
        return env[args[0].id].softmax(a["axis"])
    if op == "matmul":
        return env[args[0].id] @ env[args[1].id]
    if op == "transpose":
        return env[args[0].id].transpose(*a["perm"])
    if op == "reshape":
        return env[args[0].id].reshape(*[s.var(t) if isinstance(t, str) else t
                                         for t in a["newshape"]])
    if op == "concat":
        return sp.concatenate([env[x.id] for x in args], a["axis"])
    if op == "take_along":
        return env[args[0].id].take_along_axis(env[args[1].id], a["axis"])
    if op == "scatter":
        return env[args[0].id].scatter(env[args[1].id], env[args[2].id], a["axis"],
                                       sp.ScatterReduction[a["reduction"].upper()])
    if op == "slice":
        t = env[args[0].id]
        r = len(args[0].shape)
        start, stop, step = [None] * r, [None] * r, [1] * r
        start[-1], stop[-1], step[-1] = a["start"], a["stop"], a["step"]
        return t.slice(start, stop, step)
    raise AssertionError("unknown op " + op)


# ---- The independent numpy evaluation with error bounds -------------------------------------

class V:
    """A value of the reference: val (float64 for floats, the exact dtype otherwise), err (an
    absolute bound on |ours - val| per element, floats only) and unk (elements whose value the
    reference cannot vouch for: overflow, a comparison closer than the errors, ...)."""
    __slots__ = ("val", "err", "unk")

    def __init__(self, val, err, unk):
        self.val, self.err, self.unk = val, err, unk


def _bc(*xs):
    return np.broadcast_arrays(*xs)


def c_div(a, b):
    """C integer division: toward zero, x / 0 == 0, INT_MIN / -1 == INT_MIN (wrapping)."""
    a, b = _bc(a, b)
    special = (b == 0) | (b == -1)
    safe = np.where(special, 1, b).astype(a.dtype)
    r = np.fmod(a, safe)
    q = (a - r) // safe                      # exact division
    q = np.where(b == -1, np.negative(a), q)
    return np.where(b == 0, 0, q).astype(a.dtype)


def c_rem(a, b):
    a, b = _bc(a, b)
    special = (b == 0) | (b == -1)
    safe = np.where(special, 1, b).astype(a.dtype)
    return np.where(special, 0, np.fmod(a, safe)).astype(a.dtype)


class Evaluator:
    """Evaluates a Dag on concrete inputs in float64 with a first-order error bound.

    Rounding of a result r (carrying propagated error e) costs rs*u*(|r| + e) + tiny, where u is
    the unit roundoff of the node's dtype and rs is 2 for f64 (the reference rounds too).
    Rules: add/sub e_a + e_b; mul |a|e_b + |b|e_a + e_a e_b; div (e_a + |r|e_b)/(|b| - e_b)
    (unknown when |b| <= 2 e_b); max/min/clip/neg/abs/select: the selected operand's error;
    f(x) for f = tanh, logistic, erf, exp, log, sin, cos, rsqrt: sup |f'| over [x - e, x + e]
    times e, plus 4 ulp of f(x); sqrt: min(sqrt(e), e / sqrt(x)); sums over n terms:
    sum(e) + n u sum(|a| + e); matmul likewise over K; softmax: s (expm1(2 max e) + (n + 8) u).
    Comparisons are known only where |a - b| > e_a + e_b (or both sides are exact, e == 0).
    Values whose bound is non-finite, or whose |r| + e passes the dtype's max, become unknown;
    a non-finite value with e == 0 (an exact inf/nan, e.g. an empty max) stays known and must
    match in class.
    """

    def __init__(self, dag, sizes, inputs):
        self.dag, self.sizes, self.inputs = dag, sizes, inputs
        self.vals = {}

    def run(self):
        with np.errstate(all="ignore"):
            for n in self.dag.live():
                self.vals[n.id] = self._node(n)
        return {name: self.vals[n.id] for name, n in self.dag.outputs}

    # helpers
    def _finish(self, n, val, err, unk):
        shape = concrete(n.shape, self.sizes)
        val = np.broadcast_to(val, shape)
        unk = np.broadcast_to(unk, shape)
        if n.dtype in FLOATS:
            err = np.broadcast_to(err, shape)
            finite = np.isfinite(val)
            bad = ~np.isfinite(err) | (finite & (np.abs(val) + err > FMAX[n.dtype])) | \
                (~finite & (err > 0))
            unk = unk | bad
            err = np.where(np.isfinite(err), err, 0.0)
        return V(val, err, unk)

    def _rnd(self, n, r, e):
        u = U[n.dtype] * ROUND_SCALE[n.dtype]
        return u * (np.abs(r) + e) + TINY[n.dtype]

    def _tr(self, n, r):
        u = U[n.dtype] * ROUND_SCALE[n.dtype]
        return 2 * TRANSC_ULPS * u * np.abs(r) + TINY[n.dtype]

    def _node(self, n):
        op, a, dt = n.op, n.attrs, n.dtype
        isf = dt in FLOATS
        if op == "input":
            x = self.inputs[a["name"]]
            return V(x.astype(np.float64) if isf else x, np.zeros(x.shape) if isf else None,
                     np.zeros(x.shape, bool))
        if op == "const":
            x = np.asarray(a["value"], NP_DTYPE[dt])
            return V(x.astype(np.float64) if isf else x, np.zeros(x.shape) if isf else None,
                     np.zeros(x.shape, bool))
        vs = [self.vals[x.id] for x in n.args]
        if op in ("sum", "mean", "rmax", "softmax", "matmul", "transpose", "reshape", "concat",
                  "slice", "take_along", "scatter"):
            return self._structural(n, vs)
        unk = vs[0].unk
        for v in vs[1:]:
            unk = unk | v.unk
        if op in ("cmp",):
            return self._cmp(n, vs, unk)
        if op == "where":
            p, t, f = vs
            val = np.where(p.val, t.val, f.val)
            u2 = p.unk | np.where(p.val, t.unk, f.unk)
            err = np.where(p.val, t.err, f.err) if isf else None
            return self._finish(n, val, err, u2)
        if op in ("and", "or", "xor", "not"):
            x = vs[0].val
            val = {"and": lambda: x & vs[1].val, "or": lambda: x | vs[1].val,
                   "xor": lambda: x ^ vs[1].val, "not": lambda: ~x}[op]()
            return self._finish(n, val, None, unk)
        if op == "astype":
            return self._astype(n, vs[0], unk)
        if not isf:
            return self._int(n, vs, unk)
        return self._float(n, vs, unk)

    def _cmp(self, n, vs, unk):
        x, y = vs
        c = n.attrs["cmp"]
        f = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
             "==": np.equal, "!=": np.not_equal}[c]
        val = f(x.val, y.val)
        if x.err is not None:
            es = x.err + y.err
            decided = (es == 0) | (np.abs(x.val - y.val) > es)
            unk = unk | ~decided
        return self._finish(n, val, None, unk)

    def _astype(self, n, x, unk):
        to, frm = n.attrs["to"], n.args[0].dtype
        if to in FLOATS:
            val = x.val.astype(np.float64)
            err = x.err if x.err is not None else np.zeros(np.shape(val))
            if not (frm == "bool" or (frm == "f32" and to == "f64")):
                err = err + self._rnd(n, val, err)
            return self._finish(n, val, err, unk)
        return self._finish(n, x.val.astype(NP_DTYPE[to]), None, unk)

    def _int(self, n, vs, unk):
        op, a = n.op, n.attrs
        nd = NP_DTYPE[n.dtype]
        x = vs[0].val
        y = vs[1].val if len(vs) > 1 else None
        if op == "add":
            val = np.add(x, y, dtype=nd)
        elif op == "sub":
            val = np.subtract(x, y, dtype=nd)
        elif op == "mul":
            val = np.multiply(x, y, dtype=nd)
        elif op == "div":
            val = c_div(x, y)
        elif op == "rem":
            val = c_rem(x, y)
        elif op == "maximum":
            val = np.maximum(x, y)
        elif op == "minimum":
            val = np.minimum(x, y)
        elif op == "neg":
            val = np.negative(x)
        elif op == "abs":
            val = np.abs(x)
        elif op == "sign":
            val = np.sign(x)
        elif op == "pow":
            val = x
            for _ in range(a["n"] - 1):
                val = np.multiply(val, x, dtype=nd)
        else:
            raise AssertionError(op)
        return self._finish(n, np.asarray(val, nd), None, unk)

    def _float(self, n, vs, unk):
        op, a = n.op, n.attrs
        x, ex = vs[0].val, vs[0].err
        if len(vs) > 1:
            y, ey = vs[1].val, vs[1].err
        if op in ("add", "sub"):
            r = x + y if op == "add" else x - y
            e0 = ex + ey
            return self._finish(n, r, e0 + self._rnd(n, r, e0), unk)
        if op == "mul":
            r = x * y
            e0 = np.abs(x) * ey + np.abs(y) * ex + ex * ey
            return self._finish(n, r, e0 + self._rnd(n, r, e0), unk)
        if op == "div":
            r = x / y
            den = np.abs(y) - ey
            unk = unk | ~(np.abs(y) > 2 * ey)
            e0 = (ex + np.abs(r) * ey) / np.where(den > 0, den, 1.0)
            return self._finish(n, r, e0 + self._rnd(n, r, e0), unk)
        if op in ("maximum", "minimum"):
            r = np.maximum(x, y) if op == "maximum" else np.minimum(x, y)
            return self._finish(n, r, np.maximum(ex, ey), unk)
        if op == "neg":
            return self._finish(n, -x, ex, unk)
        if op == "abs":
            return self._finish(n, np.abs(x), ex, unk)
        if op == "clip":
            lo = float(NP_DTYPE[n.dtype](a["lo"]))
            hi = float(NP_DTYPE[n.dtype](a["hi"]))
            return self._finish(n, np.minimum(np.maximum(x, lo), hi), ex, unk)
        lo_abs = np.maximum(np.abs(x) - ex, 0.0)   # the smallest |x'| in [x - e, x + e]
        hi_abs = np.abs(x) + ex
        if op == "tanh":
            r = np.tanh(x)
            t = np.exp(-2 * lo_abs)
            d = 4 * t / (1 + t) ** 2        # 1 - tanh^2 without cancellation
            return self._finish(n, r, d * ex + self._tr(n, r), unk)
        if op == "logistic":
            r = 1 / (1 + np.exp(-x))
            t = np.exp(-lo_abs)
            d = t / (1 + t) ** 2            # s (1 - s) without cancellation
            return self._finish(n, r, d * ex + self._tr(n, r), unk)
        if op == "erf":
            r = _erf(x)
            d = 2 / math.sqrt(math.pi) * np.exp(-lo_abs ** 2)
            return self._finish(n, r, d * ex + self._tr(n, r), unk)
        if op == "exp":
            r = np.exp(x)
            return self._finish(n, r, r * np.expm1(ex) + self._tr(n, r), unk)
        if op == "expm1":
            r = np.expm1(x)
            return self._finish(n, r, np.exp(x) * np.expm1(ex) + self._tr(n, r), unk)
        if op in ("sin", "cos"):
            r = np.sin(x) if op == "sin" else np.cos(x)
            unk = unk | (np.abs(x) > 1e4)
            u = U[n.dtype] * ROUND_SCALE[n.dtype]
            return self._finish(n, r, ex + self._tr(n, r) + 2 * TRANSC_ULPS * u, unk)
        if op == "sqrt":  # operand >= 0 by construction (sqrt(abs(x)))
            r = np.sqrt(x)
            e0 = np.minimum(np.sqrt(ex), ex / np.where(x > 0, np.sqrt(x), np.inf))
            e0 = np.where(x > 0, e0, np.sqrt(ex))
            return self._finish(n, r, e0 + self._rnd(n, r, e0), unk)
        if op == "rsqrt":  # operand >= 1 by construction
            r = 1 / np.sqrt(x)
            lo = np.maximum(x - ex, 1e-300)
            # (ex / lo) / sqrt(lo), not lo ** -1.5 * ex: past x ~ 1e205, lo ** -1.5 underflows
            # to 0 and the propagated error vanished from the bound (seed 685804825).
            return self._finish(n, r, 0.5 * (ex / lo) / np.sqrt(lo) + self._tr(n, r), unk)
        if op == "log":  # operand >= 1 by construction
            r = np.log(x)
            lo = x - ex
            unk = unk | ~(lo > 0)
            e0 = ex / np.where(lo > 0, lo, 1.0)
            u = U[n.dtype] * ROUND_SCALE[n.dtype]
            return self._finish(n, r, e0 + self._tr(n, r) + 2 * u, unk)
        if op == "log1p":  # operand >= 0 by construction
            r = np.log1p(x)
            lo = np.maximum(x - ex, 0.0)
            return self._finish(n, r, ex / (1 + lo) + self._tr(n, r), unk)
        if op == "pow":
            k = a["n"]
            r = x ** k
            e0 = k * hi_abs ** (k - 1) * ex
            return self._finish(n, r, e0 + self._tr(n, r), unk)
        if op == "softplus":
            r = np.logaddexp(0.0, x)
            u = U[n.dtype] * ROUND_SCALE[n.dtype]
            return self._finish(n, r, ex + self._tr(n, r) + 2 * TRANSC_ULPS * u, unk)
        if op == "softsign":
            r = x / (1 + np.abs(x))
            d = 1 / (1 + lo_abs) ** 2
            return self._finish(n, r, d * ex + self._tr(n, r), unk)
        if op == "leaky_relu":
            al = float(NP_DTYPE[n.dtype](a["alpha"]))
            r = np.where(x >= 0, x, al * x)
            return self._finish(n, r, max(1.0, abs(al)) * ex + self._rnd(n, r, 0), unk)
        if op == "elu":
            al = float(NP_DTYPE[n.dtype](a["alpha"]))
            r = np.where(x >= 0, x, al * np.expm1(x))
            u = U[n.dtype] * ROUND_SCALE[n.dtype]
            return self._finish(n, r, max(1.0, abs(al)) * ex + self._tr(n, r) +
                                2 * TRANSC_ULPS * u * abs(al), unk)
        if op == "hard_sigmoid":
            al = float(NP_DTYPE[n.dtype](a["alpha"]))
            be = float(NP_DTYPE[n.dtype](a["beta"]))
            r = np.clip(al * x + be, 0.0, 1.0)
            return self._finish(n, r, abs(al) * ex + self._rnd(n, np.abs(al * x) + abs(be), 0) * 2,
                                unk)
        raise AssertionError("no float rule for " + op)

    def _scatter(self, n, vs):
        """The index positions one at a time along the last axis (the definition), each step's
        float error bound: replace moves the update's, max/min are 1-Lipschitz (the larger
        error), add and mul propagate both and round once. Integers wrap as numpy's do."""
        x, idx, upd = vs
        red = n.attrs["reduction"]
        isf = n.dtype in FLOATS
        u = U.get(n.dtype, 0) * ROUND_SCALE.get(n.dtype, 0)
        val, unk = x.val.copy(), x.unk.copy()
        err = x.err.copy() if isf else None
        with np.errstate(all="ignore"):
            for j, k in enumerate(idx.val.reshape(-1).astype(np.int64)):
                d, ud, uu = val[..., k], upd.val[..., j], upd.unk[..., j]
                unk[..., k] = uu if red == "replace" else unk[..., k] | uu
                if red == "replace":
                    val[..., k] = ud
                    if isf:
                        err[..., k] = upd.err[..., j]
                    continue
                f = {"add": np.add, "mul": np.multiply, "max": np.maximum,
                     "min": np.minimum}[red]
                r = f(d, ud)
                if isf:
                    ed, eu = err[..., k], upd.err[..., j]
                    if red in ("max", "min"):
                        e = np.maximum(ed, eu)
                    elif red == "add":
                        e = ed + eu + u * (np.abs(r) + ed + eu) + TINY[n.dtype]
                    else:
                        e = np.abs(d) * eu + np.abs(ud) * ed + ed * eu + \
                            u * (np.abs(d) + ed) * (np.abs(ud) + eu) + TINY[n.dtype]
                    err[..., k] = e
                val[..., k] = r
        return self._finish(n, val, err, unk)

    def _structural(self, n, vs):
        op, a = n.op, n.attrs
        x = vs[0]
        isf = n.dtype in FLOATS
        u = U.get(n.dtype, 0) * ROUND_SCALE.get(n.dtype, 0)
        if op in ("sum", "mean"):
            ax = a["axis"]
            cnt = x.val.shape[ax]
            unk = x.unk.any(axis=ax, keepdims=True)
            if not isf:
                val = np.sum(x.val, axis=ax, keepdims=True, dtype=x.val.dtype)
                return self._finish(n, val, None, unk)
            val = np.sum(x.val, axis=ax, keepdims=True)
            e = np.sum(x.err, axis=ax, keepdims=True) + TINY[n.dtype] + \
                (cnt + 1) * u * np.sum(np.abs(x.val) + x.err, axis=ax, keepdims=True)
            if op == "mean":
                with np.errstate(all="ignore"):
                    val = val / cnt
                    e = e / cnt + self._rnd(n, val, e / cnt)
                if cnt == 0:
                    unk = np.ones_like(unk)  # 0/0
            return self._finish(n, val, e, unk)
        if op == "rmax":
            ax = a["axis"]
            if x.val.shape[ax] == 0:
                shape = list(x.val.shape)
                shape[ax] = 1
                ident = -np.inf if isf else np.iinfo(x.val.dtype).min
                val = np.full(shape, ident, np.float64 if isf else x.val.dtype)
                return self._finish(n, val, np.zeros(shape) if isf else None,
                                    np.zeros(shape, bool))
            val = np.max(x.val, axis=ax, keepdims=True)
            unk = x.unk.any(axis=ax, keepdims=True)
            e = np.max(x.err, axis=ax, keepdims=True) if isf else None
            return self._finish(n, val, e, unk)
        if op == "softmax":
            ax = a["axis"]
            cnt = x.val.shape[ax]
            if cnt == 0:
                return self._finish(n, x.val, x.err, x.unk)
            m = np.max(x.val, axis=ax, keepdims=True)
            ex = np.exp(x.val - m)
            s = ex / np.sum(ex, axis=ax, keepdims=True)
            E = np.max(x.err, axis=ax, keepdims=True)
            e = s * (np.expm1(2 * E) + (cnt + 2 * TRANSC_ULPS + 4) * u) + TINY[n.dtype]
            unk = x.unk.any(axis=ax, keepdims=True)
            return self._finish(n, s, e, unk)
        if op == "matmul":
            w = vs[1]
            K = x.val.shape[-1]
            val = x.val @ w.val
            e = x.err @ np.abs(w.val) + np.abs(x.val) @ w.err + x.err @ w.err + \
                (K + 2) * u * ((np.abs(x.val) + x.err) @ (np.abs(w.val) + w.err)) + TINY[n.dtype]
            unk = np.broadcast_to(x.unk.any(axis=-1, keepdims=True), val.shape)
            unk = unk | np.broadcast_to(w.unk.any(axis=-2, keepdims=True), val.shape)
            return self._finish(n, val, e, unk)

        def move(f):
            val = f(x.val)
            return self._finish(n, val, f(x.err) if isf else None, f(x.unk))
        if op == "transpose":
            return move(lambda t: np.transpose(t, a["perm"]))
        if op == "reshape":
            shape = concrete(a["newshape"], self.sizes)
            return move(lambda t: np.reshape(t, shape))
        if op == "slice":
            return move(lambda t: t[..., a["start"]:a["stop"]:a["step"]])
        if op == "take_along":  # moves values exactly: the errors and unknowns move with them
            i = vs[1].val.astype(np.int64)
            return move(lambda t: np.take_along_axis(t, i, a["axis"]))
        if op == "scatter":
            return self._scatter(n, vs)
        if op == "concat":
            ax = a["axis"]
            val = np.concatenate([v.val for v in vs], ax)
            unk = np.concatenate([v.unk for v in vs], ax)
            e = np.concatenate([v.err for v in vs], ax) if isf else None
            return self._finish(n, val, e, unk)
        raise AssertionError(op)


_ERF_V = np.vectorize(math.erf, otypes=[np.float64])


def _erf(x):
    return _ERF_V(x) if np.size(x) else np.zeros(np.shape(x))


# ---- The checks ------------------------------------------------------------------------------

def compare_reference(name, ours, ref, dtype):
    """Problems (strings) of `ours` against the reference V of that output."""
    if ours.shape != ref.val.shape:
        return ["%s: shape %s, want %s" % (name, ours.shape, ref.val.shape)]
    if ours.dtype != np.dtype(NP_DTYPE[dtype]):
        return ["%s: dtype %s, want %s" % (name, ours.dtype, dtype)]
    known = ~ref.unk
    if dtype not in FLOATS:
        bad = known & (ours != ref.val)
        if bad.any():
            i = tuple(np.argwhere(bad)[0])
            return ["%s: %d of %d known elements differ; first at %s: ours %r, numpy %r" %
                    (name, int(bad.sum()), int(known.sum()), i, ours[i], ref.val[i])]
        return []
    o = ours.astype(np.float64)
    fin = np.isfinite(ref.val)
    with np.errstate(all="ignore"):
        diff = np.abs(o - ref.val)
        bound = ref.err * (1 + 1e-9) + TINY[dtype]
        bad_f = known & fin & ~(diff <= bound)
        # An exact non-finite reference (err == 0): the same class (nan, +inf, -inf).
        bad_n = known & ~fin & ~((np.isnan(o) & np.isnan(ref.val)) | (o == ref.val))
    bad = bad_f | bad_n
    if bad.any():
        i = tuple(np.argwhere(bad)[0])
        return ["%s: %d of %d known elements outside the bound; first at %s: ours %r, numpy(f64) "
                "%r, |diff| %.3g > bound %.3g" % (name, int(bad.sum()), int(known.sum()), i,
                                                    ours[i], ref.val[i], diff[i], bound[i])]
    return []


class Runner:
    """Runs programs on the six runtimes and accumulates statistics."""

    def __init__(self, threads=(1, 2), check_unfused=True, check_roundtrip=True):
        self.threads = threads
        self.check_unfused, self.check_roundtrip = check_unfused, check_roundtrip
        self.stats = collections.Counter()

    def runtimes(self, prog):
        rts = []
        for t in self.threads:
            rts.append(("fused/%dt" % t, prog.runtime(num_threads=t)))
        if self.check_unfused:
            old = os.environ.get("SHP_FUSION")
            os.environ["SHP_FUSION"] = "off"
            try:
                for t in self.threads:
                    rts.append(("unfused/%dt" % t, prog.runtime(num_threads=t)))
            finally:
                if old is None:
                    del os.environ["SHP_FUSION"]
                else:
                    os.environ["SHP_FUSION"] = old
        if self.check_roundtrip:
            loaded = sp.loads(prog.serialize())
            for t in self.threads:
                rts.append(("loaded/%dt" % t, loaded.runtime(num_threads=t)))
        return rts

    def check(self, dag, size_list, seed=0, prog=None):
        """Traces `dag`, runs it at each sizes dict of size_list; returns problem strings.
        What the library writes to stderr meanwhile (e.g. "internal error: a fused elementwise
        layout breaks the evaluator's contract ...", after which it runs unfused) is a problem
        too."""
        with StderrCapture() as cap:
            problems = self._check(dag, size_list, seed, prog)
        if cap.text.strip():
            self.stats["stderr reports"] += 1
            problems.append("library stderr: " + cap.text.strip().splitlines()[0])
        return problems

    def _check(self, dag, size_list, seed=0, prog=None):
        try:
            prog = prog or trace(dag)
        except sp.Error as e:
            return ["trace: %s: %s" % (type(e).__name__, e)]
        problems = []
        rts = self.runtimes(prog)
        for k, sizes in enumerate(size_list):
            inputs = make_inputs(dag, sizes, seed * 1000 + k)
            try:
                first_name, first = rts[0][0], rts[0][1](**inputs)
            except sp.Error as e:
                problems.append("run %s at %s: %s: %s" % (rts[0][0], sizes, type(e).__name__, e))
                continue
            first = {k2: np.array(v) for k2, v in first.items()}
            for rname, rt in rts[1:]:
                try:
                    out = rt(**inputs)
                except sp.Error as e:
                    problems.append("run %s at %s: %s: %s" % (rname, sizes, type(e).__name__, e))
                    continue
                for oname, o in out.items():
                    f = first[oname]
                    if o.shape == f.shape and o.dtype == f.dtype and o.dtype.kind == "f" and \
                            o.tobytes() != f.tobytes() and not NAN_BITS_STRICT:
                        # NaN against NaN with other sign/payload bits: counted, not failed
                        # (the documented rule, shapepoly.h; SHP_PYDIFF_NAN_BITS=strict fails them).
                        both_nan = np.isnan(o) & np.isnan(f)
                        same = np.where(both_nan, True, (o == f) & (np.signbit(o) ==
                                                                    np.signbit(f)))
                        same |= np.isnan(o) & np.isnan(f)
                        if same.all():
                            self.stats["nan-bit differences"] += 1
                            continue
                    if o.shape != f.shape or o.dtype != f.dtype or o.tobytes() != f.tobytes():
                        neq = (o != f) & ~(np.isnan(o) & np.isnan(f)) if o.shape == f.shape and \
                            o.dtype.kind == "f" else (o != f)
                        if o.shape == f.shape and o.dtype.kind == "f":
                            neq = neq | (np.signbit(o) != np.signbit(f))
                        idx = tuple(np.argwhere(neq)[0]) if o.shape == f.shape and neq.any() \
                            else None
                        problems.append(
                            "%s: %s differs bitwise from %s at sizes %s (%s elements; first at "
                            "%s: %r vs %r)" % (oname, rname, first_name, sizes,
                                               int(np.sum(neq)) if o.shape == f.shape else "?",
                                               idx, o[idx] if idx is not None else o.shape,
                                               f[idx] if idx is not None else f.shape))
                        self.stats["bitwise mismatches"] += 1
            ref = Evaluator(dag, sizes, inputs).run()
            for name, n in dag.outputs:
                p = compare_reference(name, first[name], ref[name], n.dtype)
                if p:
                    problems.append("vs numpy at sizes %s: %s" % (sizes, p[0]))
                v = ref[name]
                self.stats["elements checked"] += int(np.size(v.val) - np.sum(v.unk))
                self.stats["elements total"] += int(np.size(v.val))
            self.stats["runs"] += len(rts)
        self.stats["programs"] += 1
        return problems


class StderrCapture:
    """Captures file descriptor 2 (the library's own messages) into a temporary file."""

    def __enter__(self):
        import tempfile
        sys.stderr.flush()
        self.tmp = tempfile.TemporaryFile(mode="w+b")
        self.saved = os.dup(2)
        os.dup2(self.tmp.fileno(), 2)
        self.text = ""
        return self

    def __exit__(self, *exc):
        sys.stderr.flush()
        os.dup2(self.saved, 2)
        os.close(self.saved)
        self.tmp.seek(0)
        self.text = self.tmp.read().decode("utf-8", "replace")
        self.tmp.close()
        return False


NAN_BITS_STRICT = os.environ.get("SHP_PYDIFF_NAN_BITS", "") == "strict"


def make_inputs(dag, sizes, seed):
    rng = np.random.default_rng(seed)
    special = rng.random() < 0.05
    out = {}
    live = set(n.id for n in dag.live())
    for n in dag.inputs:
        if n.id not in live:
            continue
        shape = concrete(n.shape, sizes)
        dt = n.dtype
        scale = n.attrs.get("scale", 3.0)
        if dt in FLOATS:
            x = rng.uniform(-scale, scale, shape)
            # Exactly representable small values: ties for comparisons, max/min, where.
            m = rng.random(shape) < 0.15
            x = np.where(m, rng.integers(-3, 4, shape) * 0.5, x)
            if special and x.size:
                m = rng.random(shape) < 0.02
                x = np.where(m, rng.choice([np.inf, -np.inf, np.nan, -0.0], shape), x)
            out[n.attrs["name"]] = x.astype(NP_DTYPE[dt])
        elif dt in INTS and "index" in n.attrs:  # take_along_axis/scatter indices: [lo, hi)
            lo, hi = n.attrs["index"]
            out[n.attrs["name"]] = rng.integers(lo, hi, shape).astype(NP_DTYPE[dt])
        elif dt in INTS:
            if rng.random() < 0.2:
                info = np.iinfo(NP_DTYPE[dt])
                x = rng.integers(info.min, info.max, shape, dtype=NP_DTYPE[dt], endpoint=True)
            else:
                x = rng.integers(-20, 21, shape)
            out[n.attrs["name"]] = x.astype(NP_DTYPE[dt])
        else:
            out[n.attrs["name"]] = rng.random(shape) < 0.5
    return out


# ---- The random generator -------------------------------------------------------------------

FLOAT_UNARY = ["neg", "abs", "tanh", "exp", "logistic", "sqrt_abs", "log_abs1", "sin", "cos",
               "erf", "softplus", "softsign", "leaky_relu", "elu", "hard_sigmoid", "clip",
               "pow", "rsqrt_abs1", "log1p_abs", "expm1", "astype"]
FLOAT_BINARY = ["add", "add", "sub", "mul", "mul", "div", "maximum", "minimum", "where"]
INT_UNARY = ["neg", "abs", "sign", "pow", "astype"]
INT_BINARY = ["add", "add", "sub", "mul", "mul", "maximum", "minimum", "div", "rem", "where"]
STRUCTURAL = ["sum", "mean", "rmax", "softmax", "matmul", "transpose", "reshape", "concat",
              "slice", "take_along", "scatter"]
SCATTER_REDUCTIONS = ["replace", "add", "mul", "max", "min"]


class Generator:
    def __init__(self, seed, large=False, coverage=None):
        self.rng = random.Random(seed)
        self.seed = seed
        self.large = large
        self.cov = coverage if coverage is not None else collections.Counter()

    def new_dag(self):
        r = self.rng
        d = Dag()
        self.d = d
        nvars = r.choice([1, 1, 2])
        d.variables = ["n", "m"][:nvars]
        rank = r.choice([1, 2, 2, 3, 3, 4])
        # The base shape: variables and fixed sizes (size-1 axes included).
        base = [r.choice([1, 2, 3, 4, 5, 8]) for _ in range(rank)]
        pos = r.sample(range(rank), min(nvars, rank))
        for v, p in zip(d.variables, pos):
            base[p] = v
        d.variables = [v for v in d.variables if v in base]
        self.base = tuple(base)
        self.dtype = r.choice(["f32", "f32", "f32", "f64", "i32", "i64"])
        self.cov["rank %d" % rank] += 1
        return d

    def input(self, dtype, shape):
        name = "x%d" % len(self.d.inputs)
        kind = []
        for a, b in zip(reversed(shape), reversed(self.base)):
            if a != b:
                kind.append("size-1")
        if len(shape) < len(self.base):
            kind.append("rank")
        self.cov["input broadcast: " + ("+".join(sorted(set(kind))) or "none")] += 1
        return self.d.add("input", [], dtype, shape, name=name)

    def sub_shape(self, shape):
        """A shape that broadcasts to `shape`: a suffix, with some axes made 1."""
        r = self.rng
        k = len(shape) if r.random() < 0.6 else r.randint(0, len(shape))
        s = list(shape[len(shape) - k:])
        for i in range(len(s)):
            if r.random() < 0.2:
                s[i] = 1
        return tuple(s)

    def const(self, dtype, shape):
        """A Python scalar, a numpy scalar or a numpy array of fixed axes of `shape`."""
        r = self.rng
        nd = NP_DTYPE[dtype]
        fixed_suffix = []
        for t in reversed(shape):
            if isinstance(t, str):
                break
            fixed_suffix.insert(0, t)
        kind = r.random()
        choices = ([0.5, 2.0, -1.0, 0.1, 3.0, 1.5, -0.25, 0.75] if dtype in FLOATS
                   else [1, 2, 3, -1, 7, -5, 0])

        def pick():
            return r.choice(choices)

        if kind < 0.55 or not fixed_suffix:
            v, form = pick(), "py"
            if kind >= 0.4:
                v, form = nd(v), "np0"
        else:
            sh = tuple(fixed_suffix[r.randint(0, len(fixed_suffix) - 1):]) \
                if r.random() < 0.7 else tuple(fixed_suffix[-1:])
            v = np.array([pick() for _ in range(int(np.prod(sh)))], nd).reshape(sh)
            form = "nparr"
        self.cov["const " + form] += 1
        shape_c = () if form != "nparr" else v.shape
        return self.d.add("const", [], dtype, shape_c, value=v, form=form)

    def operand(self, pool, dtype, shape, max_depth):
        """An operand for a binary op with a node of `shape`: a pool node (fan-out), a new
        input, or a constant."""
        r = self.rng
        x = r.random()
        cands = [n for n in pool if n.dtype == dtype and n.depth < max_depth and
                 broadcast_shape(n.shape, shape) == tuple(shape)]
        if x < 0.45 and cands:
            # Prefer recent nodes: more sharing of intermediates.
            return cands[-1 - min(int(r.expovariate(0.5)), len(cands) - 1)]
        if x < 0.75:
            return self.input(dtype, self.sub_shape(shape))
        return self.const(dtype, shape)

    def gen(self, n_ops=None):
        r = self.rng
        d = self.new_dag()
        max_depth = 8
        pool = []
        for _ in range(r.randint(1, 3)):
            pool.append(self.input(self.dtype, self.sub_shape(self.base) if pool else self.base))
        n_ops = n_ops or r.randint(3, 14)
        for _ in range(n_ops):
            # A pool node to extend; favour the newest, never past the depth limit.
            ok = [n for n in pool if n.depth < max_depth]
            if not ok:
                break
            x = ok[-1 - min(int(r.expovariate(0.7)), len(ok) - 1)]
            node = self.step(x, pool, max_depth)
            if node is not None and node.depth <= max_depth:
                pool.append(node)
        nonleaf = [n for n in pool if not n.is_leaf]
        if not nonleaf:
            nonleaf = [self.d.add("neg" if pool[0].dtype != "bool" else "not", [pool[0]],
                                  pool[0].dtype, pool[0].shape)]
        outs = [nonleaf[-1]]
        for _ in range(r.choice([0, 0, 1, 1, 2])):
            c = r.choice(nonleaf)
            if c not in outs:
                outs.append(c)
        d.outputs = [("out%d" % i, n) for i, n in enumerate(outs)]
        uses = collections.Counter(a.id for n in d.live() for a in n.args)
        if uses:
            self.cov["max fan-out %d" % min(max(uses.values()), 4)] += 1
        self.cov["outputs %d" % len(outs)] += 1
        self.cov["depth %d" % max(n.depth for n in outs)] += 1
        return d

    def _note(self, op, dtype):
        self.cov[("op", op, dtype)] += 1

    def step(self, x, pool, max_depth):
        r = self.rng
        d = self.d
        dt = x.dtype
        if dt == "bool":
            c = r.random()
            if c < 0.4:
                # where(pred, a, b) over the dtype of the program
                t = self.operand(pool, self.dtype, x.shape, max_depth)
                if t.op == "const":
                    t = self.input(self.dtype, self.sub_shape(x.shape))
                f = self.operand(pool, self.dtype, x.shape, max_depth)
                if f.op == "const":
                    f = self.input(self.dtype, self.sub_shape(x.shape))
                shape = broadcast_shape(broadcast_shape(x.shape, t.shape), f.shape)
                self._note("where", self.dtype)
                return d.add("where", [x, t, f], self.dtype, shape, func=r.random() < 0.5)
            if c < 0.6:
                self._note("not", "bool")
                return d.add("not", [x], "bool", x.shape)
            if c < 0.75:
                to = r.choice(["f32", "f64", "i32", "i64"])
                self._note("astype->" + to, "bool")
                return d.add("astype", [x], to, x.shape, to=to)
            bools = [n for n in pool if n.dtype == "bool" and n is not x and
                     broadcast_shape(n.shape, x.shape) is not None and n.depth < max_depth]
            if not bools:
                return None
            y = r.choice(bools)
            op = r.choice(["and", "or", "xor"])
            self._note(op, "bool")
            return d.add(op, [x, y], "bool", broadcast_shape(x.shape, y.shape))
        c = r.random()
        if c < 0.15:
            return self.motif(x, pool, max_depth)
        c = r.random()
        if c < 0.12:
            return self.structural(x, pool, max_depth)
        if c < 0.22:
            y = self.operand(pool, dt, x.shape, max_depth)
            cmp = r.choice(["<", "<=", ">", ">=", "==", "!="])
            self._note("cmp" + cmp, dt)
            return d.add("cmp", [x, y], "bool", broadcast_shape(x.shape, y.shape), cmp=cmp)
        if c < 0.55:
            return self.unary(x)
        op = r.choice(FLOAT_BINARY if dt in FLOATS else INT_BINARY)
        if op == "where":
            y = self.operand(pool, dt, x.shape, max_depth)
            if y.op == "const":
                y = self.input(dt, self.sub_shape(x.shape))
            p = self.operand(pool, dt, x.shape, max_depth)
            cmp = r.choice(["<", ">", "<=", ">=", "==", "!="])
            pred = d.add("cmp", [x, p], "bool", broadcast_shape(x.shape, p.shape), cmp=cmp)
            self._note("cmp" + cmp, dt)
            self._note("where", dt)
            args = [pred, x, y] if r.random() < 0.5 else [pred, y, x]
            shape = broadcast_shape(pred.shape, y.shape)
            return d.add("where", args, dt, shape, func=r.random() < 0.5)
        y = self.operand(pool, dt, x.shape, max_depth)
        if op in ("div", "rem") and dt in FLOATS and r.random() < 0.6 and y.op != "const":
            # x / (|y| + 1): what users write to keep a divisor away from 0
            y = d.add("abs", [y], dt, y.shape)
            y = d.add("add", [y, self.d.add("const", [], dt, (), value=1.0, form="py")], dt,
                      y.shape)
        if op in ("div", "rem") and y.op == "const" and dt in INTS and np.all(
                np.asarray(y.attrs["value"]) == 0) and r.random() < 0.5:
            y.attrs["value"] = 3 if y.attrs["form"] == "py" else NP_DTYPE[dt](3)
        args = [x, y]
        if y.op == "const" and y.attrs["form"] == "py" and op in ("add", "sub", "mul", "div") \
                and r.random() < 0.4:
            args = [y, x]  # 2.0 - x
            self.cov["reflected scalar"] += 1
        elif y.op != "const" and r.random() < 0.5:
            args = [y, x]  # z + x * tanh(y): the new value as the right operand
            self.cov["new value on the right"] += 1
        self._note(op, dt)
        return d.add(op, args, dt, broadcast_shape(x.shape, y.shape),
                     method=r.random() < 0.2)

    def motif(self, x, pool, max_depth):
        """Expressions users write often, and that the fused evaluator fuses: z + y * f(x),
        f(x) * y + z, z - y * f(x), (x + y) * z, x * y + z * w, f(x * y + z)."""
        r = self.rng
        d = self.d
        dt = x.dtype
        kind = r.randrange(6)
        self.cov["motif %d" % kind] += 1
        self._note("motif", dt)

        def opnd(shape):
            y = self.operand(pool, dt, shape, max_depth)
            return y

        def bin_(op, a, b):
            if a.op == "const" and b.op == "const":
                b = self.input(dt, self.sub_shape(x.shape))
            if a.op == "const" and a.attrs["form"] != "py":
                # numpy values go on the right (np.array(...) + tensor is numpy's operator)
                a, b = (b, a) if op in ("add", "mul") else (self.input(dt, a.shape), b)
            return d.add(op, [a, b], dt, broadcast_shape(a.shape, b.shape))

        def f(t):
            return self.unary(t, same_dtype=True)

        if kind == 0:
            fx = f(x)
            y, z = opnd(fx.shape), opnd(fx.shape)
            return bin_("add", z, bin_("mul", y, fx)) if z.op != "const" else \
                bin_("add", bin_("mul", y, fx), z)
        if kind == 1:
            fx = f(x)
            y = opnd(fx.shape)
            return bin_("add", bin_("mul", fx, y), opnd(fx.shape))
        if kind == 2:
            fx = f(x)
            y, z = opnd(fx.shape), opnd(fx.shape)
            if z.op == "const":
                z = self.input(dt, self.sub_shape(fx.shape))
            return bin_("sub", z, bin_("mul", y, fx))
        if kind == 3:
            return bin_("mul", bin_("add", x, opnd(x.shape)), opnd(x.shape))
        if kind == 4:
            a = bin_("mul", x, opnd(x.shape))
            return bin_("add", a, bin_("mul", opnd(x.shape), opnd(x.shape)))
        return f(bin_("add", bin_("mul", x, opnd(x.shape)), opnd(x.shape)))

    def unary(self, x, same_dtype=False):
        r = self.rng
        d = self.d
        dt = x.dtype
        ops = FLOAT_UNARY if dt in FLOATS else INT_UNARY
        if same_dtype:
            ops = [o for o in ops if o != "astype"]
        op = r.choice(ops)
        self._note(op, dt)
        sh = x.shape
        if op == "sqrt_abs":
            return d.add("sqrt", [d.add("abs", [x], dt, sh)], dt, sh)
        if op == "log_abs1":
            a = d.add("abs", [x], dt, sh, builtin=True)
            one = d.add("const", [], dt, (), value=1.0, form="py")
            return d.add("log", [d.add("add", [a, one], dt, sh)], dt, sh)
        if op == "rsqrt_abs1":
            a = d.add("abs", [x], dt, sh)
            one = d.add("const", [], dt, (), value=1.0, form="py")
            return d.add("rsqrt", [d.add("add", [one, a], dt, sh)], dt, sh)
        if op == "log1p_abs":
            return d.add("log1p", [d.add("abs", [x], dt, sh)], dt, sh)
        if op == "pow":
            return d.add("pow", [x], dt, sh, n=r.choice([2, 3]))
        if op == "leaky_relu":
            return d.add(op, [x], dt, sh, alpha=r.choice([0.01, 0.1, 0.5]))
        if op == "elu":
            return d.add(op, [x], dt, sh, alpha=r.choice([1.0, 0.5]))
        if op == "hard_sigmoid":
            return d.add(op, [x], dt, sh, alpha=0.2, beta=0.5)
        if op == "clip":
            lo, hi = r.choice([(-1.0, 1.0), (0.0, 6.0), (-0.5, float("inf")),
                               (float("-inf"), 0.25)])
            return d.add(op, [x], dt, sh, lo=lo, hi=hi)
        if op == "astype":
            to = r.choice([t for t in ("f32", "f64") if t != dt]) if dt in FLOATS else \
                r.choice(["f32", "f64", "i32" if dt == "i64" else "i64"])
            if dt == "i64" and to == "i32":
                to = "f64"
            self._note("astype->" + to, dt)
            return d.add("astype", [x], to, sh, to=to)
        return d.add(op, [x], dt, sh)

    def structural(self, x, pool, max_depth):
        r = self.rng
        d = self.d
        dt = x.dtype
        sh = x.shape
        rank = len(sh)
        op = r.choice(STRUCTURAL)
        isf = dt in FLOATS
        if rank == 0:
            return None
        if op in ("sum", "mean", "rmax"):
            if op == "mean" and not isf:
                op = "sum"
            ax = r.randrange(rank)
            self._note(op, dt)
            ns = list(sh)
            ns[ax] = 1
            return d.add(op, [x], dt, tuple(ns), axis=ax)
        if op == "softmax" and isf:
            self._note(op, dt)
            return d.add("softmax", [x], dt, sh, axis=rank - 1)
        if op == "matmul" and isf and rank >= 2 and isinstance(sh[-1], int):
            p = r.choice([1, 3, 4, 6])
            w = self.input(dt, (sh[-1], p))
            w.attrs["scale"] = 1.0
            self._note(op, dt)
            return d.add("matmul", [x, w], dt, sh[:-1] + (p,))
        if op == "transpose" and rank >= 2:
            perm = list(range(rank))
            i, j = r.sample(range(rank), 2)
            perm[i], perm[j] = perm[j], perm[i]
            self._note(op, dt)
            return d.add("transpose", [x], dt, tuple(sh[p] for p in perm), perm=tuple(perm))
        if op == "reshape" and isinstance(sh[-1], int) and sh[-1] % 2 == 0 and sh[-1] > 0:
            ns = sh[:-1] + (2, sh[-1] // 2)
            self._note(op + " split", dt)
            return d.add("reshape", [x], dt, ns, newshape=ns)
        if op == "reshape" and rank >= 2 and isinstance(sh[-1], int) and isinstance(sh[-2], int):
            ns = sh[:-2] + (sh[-2] * sh[-1],)
            self._note(op + " merge", dt)
            return d.add("reshape", [x], dt, ns, newshape=ns)
        if op == "concat" and isinstance(sh[-1], int):
            cands = [n for n in pool if n.dtype == dt and n.shape == sh and n.depth < max_depth]
            y = r.choice(cands) if cands and r.random() < 0.7 else self.input(dt, sh)
            self._note(op, dt)
            return d.add("concat", [x, y], dt, sh[:-1] + (2 * sh[-1],), axis=rank - 1)
        if op in ("take_along", "scatter") and isinstance(sh[-1], int) and sh[-1] >= 1:
            # Along the last (constant) axis of length L: take_along_axis by indices in [-L, L)
            # of k positions, or a scatter of k updates at indices in [0, L) (repeats likely).
            L = sh[-1]
            k = r.choice([1, 3, L, 2 * L + 1])
            it = r.choice(["i32", "i64"])
            if op == "take_along":
                i = self.input(it, sh[:-1] + (k,))
                i.attrs["index"] = (-L, L)
                self._note(op, dt)
                return d.add(op, [x, i], dt, sh[:-1] + (k,), axis=r.choice([-1, rank - 1]))
            if dt == "bool":
                return None
            i = self.input(it, (k,))
            i.attrs["index"] = (0, L)
            ush = sh[:-1] + (k,)
            cands = [n for n in pool if n.dtype == dt and n.shape == ush and n.depth < max_depth]
            y = r.choice(cands) if cands and r.random() < 0.5 else self.input(dt, ush)
            red = r.choice(SCATTER_REDUCTIONS)
            self._note(op + " " + red, dt)
            return d.add(op, [x, i, y], dt, sh, axis=rank - 1, reduction=red)
        if op == "slice" and isinstance(sh[-1], int) and sh[-1] >= 2:
            start, stop, step = r.choice([(1, sh[-1], 1), (0, sh[-1] - 1, 1), (0, sh[-1], 2)])
            ln = len(range(start, stop, step))
            self._note(op, dt)
            return d.add("slice", [x], dt, sh[:-1] + (ln,), start=start, stop=stop, step=step)
        return self.unary(x) if dt != "bool" else None

    def sizes(self, dag):
        """At least 3 size assignments: 0/1/7/17/33, ~256 and ~1024 elements (and ~10^6 for
        large programs)."""
        r = self.rng
        vs = dag.variables
        if not vs:
            return [{}]
        small = [0, 1, 7, 17, 33] if dag.zero_ok else [1, 7, 17, 33]
        out = []
        picks = r.sample(small, 2)
        for p in picks:
            out.append({v: (p if i == 0 else r.choice(small)) for i, v in enumerate(vs)})
        # Elements per unit of the variables (the largest live shape): cross 256 or 1024.
        fixed = 1
        for t in self.base:
            if isinstance(t, int):
                fixed *= t
        target = r.choice([256, 1024]) if not self.large else 1 << 20
        per = max(1, target // max(fixed, 1))
        if len(vs) == 1:
            out.append({vs[0]: per + r.choice([-1, 0, 1, 3])})
        else:
            a = max(1, int(round(math.sqrt(per))))
            out.append({vs[0]: a + r.choice([0, 1]), vs[1]: per // a + r.choice([0, 1])})
        for s in out:
            self.cov["size %s" % _size_class(s, self.base)] += 1
        return out


def _size_class(sizes, base):
    n = 1
    for t in base:
        n *= sizes[t] if isinstance(t, str) else t
    for lim, name in ((0, "0 elems"), (1, "1 elem"), (64, "<=64"), (255, "<256"),
                      (1023, "256..1023"), (4096, "1024..4096"), (100000, "<=1e5")):
        if n <= lim:
            return name
    return ">1e5"


# ---- Hand-written programs: user-style code that builds a Dag ------------------------------

class Expr:
    """A Dag node with the operators and methods of shapepoly.Tensor, so that the same user code
    (a function of tensors) builds a Dag for the differential checks."""

    def __init__(self, dag, node):
        self.dag, self.node = dag, node

    def _o(self, b):
        if isinstance(b, Expr):
            return b.node
        v = b
        form = "py" if isinstance(b, (int, float)) else ("np0" if np.ndim(b) == 0 else "nparr")
        shape = () if form != "nparr" else np.shape(b)
        return self.dag.add("const", [], self.node.dtype, shape, value=v, form=form)

    def _bin(self, op, b, swap=False):
        o = self._o(b)
        x, y = (o, self.node) if swap else (self.node, o)
        return Expr(self.dag, self.dag.add(op, [x, y], self.node.dtype,
                                           broadcast_shape(x.shape, y.shape)))

    def __add__(self, b):
        return self._bin("add", b)

    def __radd__(self, b):
        return self._bin("add", b, True)

    def __sub__(self, b):
        return self._bin("sub", b)

    def __rsub__(self, b):
        return self._bin("sub", b, True)

    def __mul__(self, b):
        return self._bin("mul", b)

    def __rmul__(self, b):
        return self._bin("mul", b, True)

    def __truediv__(self, b):
        return self._bin("div", b)

    def maximum(self, b):
        return self._bin("maximum", b)

    def minimum(self, b):
        return self._bin("minimum", b)

    def __neg__(self):
        return self._un("neg")

    def __abs__(self):
        return self._un("abs")

    def _un(self, op):
        return Expr(self.dag, self.dag.add(op, [self.node], self.node.dtype, self.node.shape))

    def abs(self):
        return self._un("abs")

    def neg(self):
        return self._un("neg")

    def exp(self):
        return self._un("exp")

    def tanh(self):
        return self._un("tanh")

    def logistic(self):
        return self._un("logistic")

    def __matmul__(self, b):
        sh = self.node.shape[:-1] + b.node.shape[-1:]
        return Expr(self.dag, self.dag.add("matmul", [self.node, b.node], self.node.dtype, sh))

    def slice(self, start=None, limit=None, strides=None):
        """Only the last axis may be sliced (enough for the LSTM's gates)."""
        r = len(self.node.shape)
        start = list(start or [None] * r)
        limit = list(limit or [None] * r)
        assert all(v in (None, 0) for v in start[:-1]) and all(v is None for v in limit[:-1])
        a = start[-1] or 0
        b = self.node.shape[-1] if limit[-1] is None else limit[-1]
        st = (strides or [1] * r)[-1]
        sh = self.node.shape[:-1] + (len(range(a, b, st)),)
        return Expr(self.dag, self.dag.add("slice", [self.node], self.node.dtype, sh, start=a,
                                           stop=b, step=st))


def expr_dag(inputs, fn, zero_ok=False):
    """A Dag from {name: (dtype, shape tokens)} and fn(**exprs) -> Expr or {name: Expr}."""
    d = Dag()
    d.zero_ok = zero_ok
    ex = {}
    for name, spec in inputs.items():
        dt, shape = spec[0], spec[1]
        ex[name] = Expr(d, d.add("input", [], dt, tuple(shape), name=name))
        if len(spec) > 2:
            ex[name].node.attrs["scale"] = spec[2]
        for t in shape:
            if isinstance(t, str) and t not in d.variables:
                d.variables.append(t)
    out = fn(**ex)
    if isinstance(out, Expr):
        out = {"out": out}
    d.outputs = [(k, v.node) for k, v in out.items()]
    return d


def lstm_cell(x, h, c, W, U, bias, hidden):
    """One LSTM step as a user writes it (works on shapepoly Tensors and on Exprs)."""
    gates = x @ W + h @ U + bias
    H = hidden

    def gate(k):
        return gates.slice([0, k * H], [None, (k + 1) * H])
    i, f, g, o = gate(0).logistic(), gate(1).logistic(), gate(2).tanh(), gate(3).logistic()
    c2 = f * c + i * g
    h2 = o * c2.tanh()
    return {"h": h2, "c": c2}


# ---- Minimization ---------------------------------------------------------------------------

def clone_dag(dag, replace=None):
    """A copy of the live part of `dag`, with node id `replace[0]` replaced by a new input of
    its dtype and shape (or by the node `replace[1]` of the copy, if given)."""
    new = Dag()
    new.variables, new.zero_ok = list(dag.variables), dag.zero_ok
    m = {}
    for n in dag.live():
        if replace and n.id == replace[0]:
            if replace[1] is not None:
                m[n.id] = m[replace[1]]
                continue
            c = new.add("input", [], n.dtype, n.shape, name="x%d" % (100 + len(new.inputs)))
            m[n.id] = c
            continue
        c = new.add(n.op, [m[a.id] for a in n.args], n.dtype, n.shape, **n.attrs)
        if n.op == "input":
            c.attrs = dict(n.attrs)
        m[n.id] = c
    new.outputs = [(name, m[n.id]) for name, n in dag.outputs]
    # An output that became an input (a leaf) is wrapped so the program still computes it.
    new.outputs = [(name, n if not n.is_leaf else new.add(
        "neg" if n.dtype != "bool" else "not", [n], n.dtype, n.shape)) for name, n in new.outputs]
    return new


def minimize(dag, sizes_list, fails, budget=300):
    """Shrinks `dag` while fails(dag, sizes_list) stays true: drop outputs, replace a
    subexpression by an argument of the same dtype and shape, or by a fresh input."""
    tries = 0
    progress = True
    while progress and tries < budget:
        progress = False
        if len(dag.outputs) > 1:
            for i in range(len(dag.outputs)):
                cand = clone_dag(dag)
                cand.outputs = [cand.outputs[i]]
                tries += 1
                if fails(cand, sizes_list):
                    dag, progress = cand, True
                    break
            if progress:
                continue
        for n in reversed(dag.live()):
            if n.is_leaf or n in [o for _, o in dag.outputs]:
                continue
            options = [a.id for a in n.args if a.dtype == n.dtype and a.shape == n.shape
                       and not a.op == "const"] + [None]
            for opt in options:
                cand = clone_dag(dag, (n.id, opt))
                tries += 1
                if fails(cand, sizes_list):
                    dag, progress = cand, True
                    break
            if progress or tries >= budget:
                break
    # Fewer sizes
    for s in list(sizes_list):
        if len(sizes_list) > 1 and fails(dag, [s]):
            sizes_list = [s]
            break
    return dag, sizes_list


def run_programs(n_programs, seed, runner=None, time_limit=None, coverage=None, log=print,
                 large_every=0):
    """Generates and checks programs seed, seed+1, ...; returns (failures, stats, coverage).
    A failure is (program seed, minimized text, sizes, problems)."""
    runner = runner or Runner()
    cov = coverage if coverage is not None else collections.Counter()
    failures = []
    t0 = time.time()
    done = 0
    for i in range(n_programs):
        if time_limit is not None and time.time() - t0 > time_limit:
            break
        ps = seed + i
        large = bool(large_every) and i % large_every == large_every - 1
        g = Generator(ps, large=large, coverage=cov)
        dag = g.gen()
        sizes = g.sizes(dag)
        problems = runner.check(dag, sizes, seed=ps)
        done += 1
        if problems and _kind(problems[0]) == "library stderr":
            # Said once per process: nothing to minimize against.
            failures.append((ps, dag_text(dag), sizes, problems))
            log("FAIL program seed %d (library stderr)\n  sizes %s\n  %s\n  program:\n    %s" %
                (ps, sizes, "\n  ".join(problems[:4]), dag_text(dag).replace("\n", "\n    ")))
        elif problems:
            kind = _kind(problems[0])

            def fails(cand, sl, kind=kind, ps=ps):
                p = runner.check(cand, sl, seed=ps)
                return bool(p) and _kind(p[0]) == kind
            mdag, msizes = minimize(dag, sizes, fails)
            mprob = runner.check(mdag, msizes, seed=ps) or problems
            failures.append((ps, dag_text(mdag), msizes, mprob))
            log("FAIL program seed %d (%s)\n  sizes %s\n  %s\n  minimized:\n    %s\n  original:\n"
                "    %s" % (ps, kind, msizes, "\n  ".join(mprob[:4]),
                            dag_text(mdag).replace("\n", "\n    "),
                            dag_text(dag).replace("\n", "\n    ")))
    return failures, done, time.time() - t0, runner.stats, cov


def _kind(problem):
    if problem.startswith("vs numpy"):
        return "numpy"
    if "differs bitwise" in problem:
        return "bitwise " + problem.split(" differs")[0].split(": ")[-1].split("/")[0]
    return problem.split(":")[0]


def coverage_summary(cov, stats):
    lines = []
    ops = collections.defaultdict(dict)
    for k, v in cov.items():
        if isinstance(k, tuple) and k[0] == "op":
            ops[k[1]][k[2]] = v
    dts = ["f32", "f64", "i32", "i64", "bool"]
    lines.append("ops x dtypes (node counts):")
    lines.append("  %-18s" % "op" + "".join("%8s" % d for d in dts))
    for op in sorted(ops):
        lines.append("  %-18s" % op + "".join("%8s" % ops[op].get(d, "") for d in dts))
    other = sorted((k, v) for k, v in cov.items() if not isinstance(k, tuple))
    groups = collections.defaultdict(list)
    for k, v in other:
        groups[k.split(" ")[0]].append("%s: %d" % (k, v))
    for g in sorted(groups):
        lines.append("%s" % "; ".join(groups[g]))
    if stats.get("elements total"):
        lines.append("reference-checked elements: %d of %d (%.1f%%; the rest unknown: "
                     "overflow, near-ties of comparisons, ...)" %
                     (stats["elements checked"], stats["elements total"],
                      100.0 * stats["elements checked"] / stats["elements total"]))
    lines.append("runs: %d; bitwise mismatches: %d; outputs differing only in NaN bits: %d" %
                 (stats.get("runs", 0), stats.get("bitwise mismatches", 0),
                  stats.get("nan-bit differences", 0)))
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--programs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=None, help="default: time-based")
    ap.add_argument("--large-every", type=int, default=100,
                    help="every Nth program runs at ~10^6 elements (0: never)")
    ap.add_argument("--threads", default="1,2")
    args = ap.parse_args(argv)
    seed = args.seed if args.seed is not None else int(time.time())
    print("seed %d, library %s, SIMD target %s" % (seed, sp.library_path, sp.simd_target()))
    runner = Runner(threads=tuple(int(t) for t in args.threads.split(",")))
    failures, done, dt, stats, cov = run_programs(args.programs, seed, runner=runner,
                                                  large_every=args.large_every)
    print("%d programs in %.1f s: %.1f programs/s; %d failing" % (done, dt, done / dt,
                                                                  len(failures)))
    print(coverage_summary(cov, stats))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
