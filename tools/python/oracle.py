#!/usr/bin/env python3
"""A numpy interpreter for libshapepoly programs (.shpoly): the oracle of the C++ runtime.

It reads programs with the independent reader (shapepoly_reader.py, no libshapepoly), follows
the program's solve recipe with its own univariate solver (linear, products with known
factors, perfect powers, max/min with a known operand, as flatbuffers/README.md documents),
checks that every input dimension then evaluates to the given size, and runs each operation
with numpy under the documented semantics (shapepoly.h and the kernel headers):
  - integers wrap modulo 2^bits; div truncates toward zero and rem has the sign of the
    dividend (C); x / 0 == x rem 0 == 0, INT_MIN / -1 == INT_MIN, INT_MIN rem -1 == 0; pow
    wraps, and a negative exponent gives 1 for base 1, +-1 for base -1, else 0;
  - float rem is fmod; round is half to even; max/min propagate NaN;
  - float -> int conversion truncates and saturates (NaN -> 0); anything -> bool is != 0;
  - f32 sum, mean, prod and cumsum accumulate in double and round once; softmax and
    layer_norm along an axis; an empty max/min is the identity (-inf/INT_MIN, +inf/INT_MAX).
Derived programs (jvp, vjp, grad: schema version 2) use only ordinary ops; inputs with a
default (parameters, grad's cotangent, a jvp's fill-default tangents) may be left out of a run,
and every input binds by name.
Guards and variants (schema version 3) are decided as the runtime decides them
(cc/program/variants.cc): for each variant in order, solve its variables from the input shapes,
check their ranges, then its constraints, guards and assertions; the first variant that passes
runs (Program.last_variant says which). When none does, the error is GuardFailed listing each
variant's first failure if some variant failed by a guard, else variant 0's own error. Facts
that mention a variable no input shape gives are skipped, as the runtime's solver skips them.
Data-dependent sizes (schema version 5): nonzero(x) is np.argwhere(x) as int64 [u, rank]
(floats: -0.0 is zero, NaN is not); boolean_mask(x, mask, axis) is x[(slice(None),) * axis +
(mask,)]; size_from_value(v) is v. Each gives its unbacked variable its value when the node
runs (the count of true entries, or v), checks the variable's declared range and then every
assertion and guard over it whose variables are all known (as cc/program/program_unbacked.cc:
a violation is Rejected "constraint", a guard GuardFailed); later shapes use the value.
Derived facts (u <= numel(x)) hold by construction and are never checked.
It is a reference for valid inputs, not a validator of files.

Usage: oracle.py FILE.shpoly NAME=FILE.npy ...   (prints each output's shape and dtype)
"""

import math
import sys
import warnings

import ml_dtypes
import numpy as np

import shapepoly_reader as reader
from shapepoly.fb import AttentionOptions as _Attention
from shapepoly.fb import AxisOptions as _Axis
from shapepoly.fb import ConstantOptions as _Const
from shapepoly.fb import ControlFlowOptions as _ControlFlow
from shapepoly.fb import ConvOptions as _Conv
from shapepoly.fb import DimOp as _DimOp
from shapepoly.fb import DimValueOptions as _DimValue
from shapepoly.fb import DotGeneralOptions as _Dot
from shapepoly.fb import InputRole as _InputRole
from shapepoly.fb import IotaOptions as _Iota
from shapepoly.fb import LayerNormOptions as _LayerNorm
from shapepoly.fb import OpCode as _OpCode
from shapepoly.fb import PadOptions as _Pad
from shapepoly.fb import Program as _Program  # noqa: F401 (test_oracle reads oracle._Program)
from shapepoly.fb import ReduceOptions as _Reduce
from shapepoly.fb import ScatterOptions as _Scatter
from shapepoly.fb import ReverseOptions as _Reverse
from shapepoly.fb import ShapeOptions as _Shape
from shapepoly.fb import SliceOptions as _Slice
from shapepoly.fb import TransposeOptions as _Transpose
from shapepoly.fb import TopKOptions as _TopK
from shapepoly.fb import TriluOptions as _Trilu
from shapepoly.fb import UnbackedOptions as _Unbacked
from shapepoly.fb import WindowOptions as _Window

OP = _OpCode.OpCode
D = _DimOp.DimOp
BF16 = np.dtype(ml_dtypes.bfloat16)
NP_DTYPES = [np.float32, np.float64, np.int32, np.int64, np.bool_,  # index = DType
             np.float16, BF16, np.int8, np.uint8, np.int16, np.uint16, np.uint32, np.uint64]


def _rsqrt(x):
    return (1 / np.sqrt(x)).astype(x.dtype)


def _logistic(x):
    return (1 / (1 + np.exp(-x))).astype(x.dtype)


_ERF = np.vectorize(math.erf, otypes=[np.float64])


def _erf(x):
    return _ERF(x).astype(x.dtype)


def _not(x):
    return np.logical_not(x) if x.dtype == np.bool_ else np.invert(x)


UNARY = {
    OP.NEG: np.negative, OP.ABS: np.abs, OP.EXP: np.exp, OP.LOG: np.log, OP.LOG1P: np.log1p, OP.EXPM1: np.expm1,
    OP.SQRT: np.sqrt, OP.RSQRT: _rsqrt, OP.SIN: np.sin, OP.COS: np.cos, OP.TANH: np.tanh, OP.LOGISTIC: _logistic,
    OP.FLOOR: np.floor, OP.CEIL: np.ceil, OP.ROUND: np.round, OP.SIGN: np.sign, OP.NOT: _not,
    OP.ERF: _erf, OP.TAN: np.tan, OP.SINH: np.sinh, OP.COSH: np.cosh, OP.ASIN: np.arcsin, OP.ACOS: np.arccos,
    OP.ATAN: np.arctan, OP.ASINH: np.arcsinh, OP.ACOSH: np.arccosh, OP.ATANH: np.arctanh,
}


def _div(a, b):
    if a.dtype.kind == "f":
        return a / b
    a, b = np.broadcast_arrays(a, b)
    safe = np.where((b == 0) | (b == -1), 1, b)
    # Floor division, moved one step toward zero when inexact with operands of opposite signs.
    q = np.floor_divide(a, safe) + ((np.remainder(a, safe) != 0) & ((a < 0) != (safe < 0)))
    q = np.where(b == -1, np.negative(a), q)  # wraps: INT_MIN / -1 == INT_MIN
    return np.where(b == 0, 0, q).astype(a.dtype)


def _rem(a, b):
    if a.dtype.kind == "f":
        return np.fmod(a, b)
    a, b = np.broadcast_arrays(a, b)
    special = (b == 0) | (b == -1)
    return np.where(special, 0, np.fmod(a, np.where(special, 1, b))).astype(a.dtype)


def _pow(a, b):
    if a.dtype.kind == "f":
        return np.power(a, b)
    a, b = np.broadcast_arrays(a, b)
    u = np.dtype(f"uint{8 * a.dtype.itemsize}")
    result = np.ones(a.shape, dtype=u)
    base = a.astype(u)
    e = np.where(b < 0, 0, b).astype(np.uint64)
    while e.any():  # square and multiply modulo 2^bits
        result = np.where((e & np.uint64(1)) != 0, result * base, result)
        base = base * base
        e = e >> np.uint64(1)
    negative = np.where(a == 1, 1, np.where(a == -1, np.where(b % 2 == 0, 1, -1), 0))
    return np.where(b < 0, negative, result.view(a.dtype)).astype(a.dtype)


BINARY = {
    OP.ADD: np.add, OP.SUB: np.subtract, OP.MUL: np.multiply, OP.DIV: _div, OP.POW: _pow, OP.MAXIMUM: np.maximum,
    OP.MINIMUM: np.minimum, OP.REM: _rem, OP.AND: np.bitwise_and, OP.OR: np.bitwise_or, OP.XOR: np.bitwise_xor,
    OP.EQ: np.equal, OP.NE: np.not_equal, OP.LT: np.less, OP.LE: np.less_equal, OP.GT: np.greater,
    OP.GE: np.greater_equal,
}


def _is_float(dt):
    return dt.kind == "f" or dt == BF16


def _f64_to_f32_odd(x):
    """f64 values rounded to f32 by round-to-odd (truncate, then set the last bit if inexact):
    rounding that once more to bf16 is the correctly rounded bf16 (no double rounding)."""
    with np.errstate(over="ignore", invalid="ignore"):
        f = x.astype(np.float32)
        over = np.abs(f.astype(np.float64)) > np.abs(x)  # rounded away from zero: step back
        f = np.where(over & np.isfinite(x), np.nextafter(f, np.float32(0)), f).astype(np.float32)
        inexact = np.isfinite(x) & (f.astype(np.float64) != x)
        bits = f.view(np.uint32) | np.where(inexact, 1, 0).astype(np.uint32)
        return bits.view(np.float32)


def convert(src, dt):
    """Elements of `src` as dtype `dt` under the library's conversion rules (numpy's astype,
    plus: float -> int truncates and saturates with NaN -> 0; to f16/bf16 rounds once)."""
    dt = np.dtype(dt)
    src = np.asarray(src)
    if _is_float(src.dtype) and dt.kind in "iu":
        info = np.iinfo(dt)
        t = np.trunc(src.astype(np.float64))
        hi = 2.0 ** (8 * dt.itemsize - (1 if dt.kind == "i" else 0))  # max + 1, exact
        lo = -hi if dt.kind == "i" else 0.0
        out = np.where(np.isnan(t) | (t >= hi) | (t < lo), 0, t).astype(dt)
        return np.where(t >= hi, info.max, np.where(t < lo, info.min, out)).astype(dt)
    with np.errstate(over="ignore", invalid="ignore"):
        if dt == BF16 and src.dtype != BF16:
            if src.dtype == np.float64 or src.dtype.kind in "iu" and src.dtype.itemsize == 8:
                # One rounding: f64 -> f32 by round-to-odd, then to bf16. (A 64-bit integer is
                # rounded to f64 first: wrong only for one within 2^-53 of a bf16 midpoint.)
                src = _f64_to_f32_odd(src.astype(np.float64))
            return src.astype(np.float32).astype(BF16)
        if dt == np.float16 and src.dtype.kind in "iu" and src.dtype.itemsize == 8:
            return src.astype(np.float64).astype(np.float16)  # > 65504 is inf either way
        if src.dtype == np.bool_ and dt == BF16:
            return src.astype(np.float32).astype(BF16)
        return src.astype(dt)


def _options(node, cls):
    table = node.Options()
    obj = getattr(cls, cls.__name__.split(".")[-1])()
    obj.Init(table.Bytes, table.Pos)
    return obj


def _ints(obj, name):
    n = getattr(obj, name + "Length")()
    get = getattr(obj, name)
    return [get(i) for i in range(n)]


def _empty_minmax(a, axes, keep, is_max):
    shape = [1 if i in axes else d for i, d in enumerate(a.shape)] if keep else \
        [d for i, d in enumerate(a.shape) if i not in axes]
    if a.dtype.kind == "f":
        fill = -np.inf if is_max else np.inf
    else:
        info = np.iinfo(a.dtype)
        fill = info.min if is_max else info.max
    return np.full(shape, fill, dtype=a.dtype)


CMP = [lambda a, b: a == b, lambda a, b: a != b, lambda a, b: a < b, lambda a, b: a <= b,
       lambda a, b: a > b, lambda a, b: a >= b]  # index = fb.Cmp


class Rejected(ValueError):
    """The shapes are refused, as the runtime refuses them: `kind` is "shape" (solving, or an
    input dimension), "constraint" (a range, constraint or assertion) or "guard"."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


class GuardFailed(Rejected):
    """A guard does not hold (SHP_GUARD_FAILED), or no variant applies."""

    def __init__(self, message):
        super().__init__("guard", message)


def _integer_root(target, k):
    """The integer r >= 0 with r^k == target, or None."""
    if target < 0:
        return None
    r = int(round(target ** (1.0 / k)))
    for c in (r - 1, r, r + 1):
        if c >= 0 and c ** k == target:
            return c
    return None


class Program:
    """A loaded program that can be evaluated on numpy arrays."""

    def __init__(self, data: bytes, info=None):
        """The program in `data`; `info` (internal): one variant of it, as the reader read it."""
        self.info = info or reader.ProgramInfo(data)
        self.fb = self.info.table
        fb = self.fb
        self.dims = []
        for i in range(fb.DimsLength()):
            d = fb.Dims(i)
            self.dims.append((d.Op(), d.Value(), [d.Operands(j) for j in range(d.OperandsLength())]))
        self.inputs = [fb.Inputs(i) for i in range(fb.InputsLength())]
        self.nodes = [fb.Nodes(i) for i in range(fb.NodesLength())]
        self.input_dtypes = [self.inputs[i].Dtype() for i in range(len(self.inputs))]
        self._vars_of = []
        for op, value, ops in self.dims:
            vs = {value} if op == D.VAR else set()
            for o in ops:
                vs |= self._vars_of[o]
            self._vars_of.append(frozenset(vs))
        # (kind, op, lhs, rhs, text, message) in the order the runtime checks them.
        facts = [("constraint", fb.Constraints(i)) for i in range(fb.ConstraintsLength())]
        asserts = [fb.Assertions(i) for i in range(fb.AssertionsLength())]
        facts += [("guard", f) for f in asserts if f.Guard()]
        facts += [("assertion", f) for f in asserts if not f.Guard()]
        self.facts = [(kind, f.Op(), f.Lhs(), f.Rhs(), reader.CMP[f.Op()], (f.Message() or b"").decode())
                      for kind, f in facts]
        # Unbacked variables take their value when their producer runs; facts over them are
        # checked then (assertions and guards only, as the runtime).
        self.unbacked = set(self.info.unbacked)
        # Variant 0 is this program; a run uses the first variant whose checks pass.
        self.variants = [self] + [Program(data, q) for q in self.info.variants[1:]]
        self.last_variant = -1
        self.last_values = {}

    # ---- Dimensions ----
    def eval_dim(self, i, var):
        op, value, ops = self.dims[i]
        if op == D.CONST:
            return value
        if op == D.VAR:
            return var[value]
        xs = [self.eval_dim(o, var) for o in ops]
        if op == D.ADD:
            return sum(xs)
        if op == D.MUL:
            p = 1
            for x in xs:
                p *= x
            return p
        if op == D.FLOORDIV:
            return xs[0] // xs[1]
        if op == D.MOD:
            return xs[0] % xs[1]
        if op == D.MAXIMUM:
            return max(xs)
        if op == D.MINIMUM:
            return min(xs)
        if op == D.POW:
            return xs[0] ** value
        raise ValueError(f"unknown dim op {op}")

    def _invert(self, i, v, var, target):
        """The value of variable v for which dims[i] == target (the other variables known), or None."""
        op, value, ops = self.dims[i]
        if op == D.VAR:
            return target if value == v else None
        with_v = [o for o in ops if v in self._vars_of[o]]
        known = [self.eval_dim(o, var) for o in ops if v not in self._vars_of[o]]
        if op in (D.ADD, D.MUL) and len(with_v) == 1:
            if op == D.ADD:
                return self._invert(with_v[0], v, var, target - sum(known))
            p = int(np.prod(known, dtype=object))
            if p == 0 or target % p:
                return None
            return self._invert(with_v[0], v, var, target // p)
        if op == D.ADD:  # several terms with v: solvable when linear in v
            f = []
            for x in (0, 1, 2):
                try:
                    f.append(self.eval_dim(i, {**var, v: x}))
                except ZeroDivisionError:
                    return None
            slope = f[1] - f[0]
            if slope == 0 or f[2] - f[1] != slope or (target - f[0]) % slope:
                return None
            return (target - f[0]) // slope
        if op == D.POW:
            r = _integer_root(target, value)
            return None if r is None else self._invert(ops[0], v, var, r)
        if op in (D.MAXIMUM, D.MINIMUM) and len(with_v) == 1:
            k = known[0]
            if (op == D.MAXIMUM and target > k) or (op == D.MINIMUM and target < k):
                return self._invert(with_v[0], v, var, target)
        return None

    def solve(self, shapes):
        """Variable values from the input shapes (by input index; an int for a DIM input),
        following the program's solve recipe; then every input dimension is checked."""
        for k, inp in enumerate(self.inputs):  # ranks first, as the runtime checks them
            if shapes[k] is None:
                continue  # an input left out with a fill default: shaped by the variables
            if inp.Role() != _InputRole.InputRole.DIM and len(shapes[k]) != inp.ShapeLength():
                raise Rejected("shape", f"oracle: input {k} has rank {len(shapes[k])}, the program "
                                        f"requires {inp.ShapeLength()}")
        var = {}
        for step in range(self.fb.SolveLength()):
            s = self.fb.Solve(step)
            v = s.Variable()
            if s.Axis() < 0:
                var[v] = int(shapes[s.Input()])
                continue
            target = int(shapes[s.Input()][s.Axis()])
            value = self._invert(self.inputs[s.Input()].Shape(s.Axis()), v, var, target)
            if value is None:
                raise Rejected("shape", f"oracle: cannot solve variable {self.info.variables[v][0]} from input "
                                 f"{s.Input()} axis {s.Axis()} = {target}")
            var[v] = value
        for k, inp in enumerate(self.inputs):
            if inp.Role() == _InputRole.InputRole.DIM or shapes[k] is None:
                continue
            want = [self.eval_dim(inp.Shape(j), var) for j in range(inp.ShapeLength())]
            if list(shapes[k]) != want:
                raise Rejected("shape", f"oracle: input {k} has shape {tuple(shapes[k])}, the solved variables "
                                 f"{var} give {tuple(want)}")
        return var

    def check(self, shapes):
        """solve(shapes), then the variables' ranges, the constraints, the guards and the
        assertions of this program alone (one variant); raises Rejected or GuardFailed."""
        var = self.solve(shapes)
        names = [v[0] for v in self.info.variables]
        for v, value in var.items():
            _, lo, hi, _ = self.info.variables[v]
            if not lo <= value <= hi:
                raise Rejected("constraint", f"oracle: {names[v]} = {value} is outside [{lo}, {hi}]")
        for fact in self.facts:
            if not (self._vars_of[fact[2]] | self._vars_of[fact[3]]) <= var.keys():
                continue  # a variable that no shape gives: skipped, as the runtime's solver does
            self._check_fact(fact, var)
        return var

    def _check_fact(self, fact, var):
        """Raises Rejected (GuardFailed for a guard) unless `fact` holds at `var`."""
        kind, op, lhs, rhs, cmp_text, message = fact
        names = [v[0] for v in self.info.variables]
        values = ", ".join(f"{names[v]} = {var[v]}" for v in sorted(self._vars_of[lhs] | self._vars_of[rhs]))
        try:
            holds = CMP[op](self.eval_dim(lhs, var), self.eval_dim(rhs, var))
        except ZeroDivisionError:
            raise Rejected("constraint", f"oracle: a {kind} divides by zero at {values}") from None
        if holds:
            return
        text = self._fact_text(lhs, cmp_text, rhs)
        if kind == "guard":
            raise GuardFailed(f"guard {text} does not hold: {values}" +
                              (f"; guard message: {message}" if message else ""))
        raise Rejected("constraint", f"oracle: {kind} {text} violated at {values}" +
                       (f"; message: {message}" if message else ""))

    def _dim_or_lowest(self, i, dim):
        """dim(i), or the lowest value of an unbacked variable no iteration has set (a scan of
        length 0 whose ys' sizes its body computes)."""
        size_op, v, _ = self.dims[i]
        if size_op == D.VAR and v in self.unbacked:
            try:
                return dim(i)
            except (KeyError, ValueError):
                return self.info.variables[v][1]
        return dim(i)

    def set_unbacked(self, v, value, var):
        """Variable v (unbacked) takes `value` from its producer: its declared range, then each
        assertion and guard over it whose variables are now all known, are checked."""
        name, lo, hi, _ = self.info.variables[v]
        if not lo <= value <= hi:
            raise Rejected("constraint", f"oracle: the data-dependent size {name} = {value}, computed by "
                                         f"{self.info.unbacked[v]}, is outside [{lo}, {hi}]")
        var[v] = value
        for fact in self.facts:
            used = self._vars_of[fact[2]] | self._vars_of[fact[3]]
            if fact[0] != "constraint" and v in used and used <= var.keys():
                self._check_fact(fact, var)

    def _fact_text(self, lhs, cmp_text, rhs):
        dims = reader.Dims(self.fb, [v[0] for v in self.info.variables])
        return f"{dims.text(lhs)} {cmp_text} {dims.text(rhs)}"

    def select(self, shapes):
        """(index of the variant that runs on `shapes`, its variable values), by the runtime's
        rule; raises Rejected (variant 0's error) or GuardFailed (each variant's first failure)."""
        errors = []
        for v, q in enumerate(self.variants):
            try:
                return v, q.check(shapes)
            except Rejected as e:
                errors.append(e)
        if len(errors) == 1 or not any(isinstance(e, GuardFailed) for e in errors):
            raise errors[0]
        raise GuardFailed("no variant of the program applies to these shapes (the first failure of each):" +
                          "".join(f"\n  variant {v}: {e}" for v, e in enumerate(errors)))

    # ---- Evaluation ----
    def default(self, name):
        """The default value of input `name` (a parameter, or grad's cotangent) as an array."""
        _, _, dtype, shape, _ = next(x for x in self.info.inputs if x[0] == name)
        raw = self.info.buffers[self.info.defaults[name]]
        dt = NP_DTYPES[reader.DTYPES.index(dtype)]
        return np.frombuffer(raw, dtype=dt).reshape([int(d) for d in shape]).copy()

    def run(self, args):
        """args: {input name: numpy array (or int for a dimension input)} -> list of outputs.
        An input with a default may be left out: its default is used (binding is by name)."""
        names = [x.Name().decode() for x in self.inputs]
        unknown = sorted(set(args) - set(names))
        if unknown:
            raise ValueError(f"oracle: no input named {unknown} (inputs: {names})")
        missing = [n for n in names
                   if n not in args and n not in self.info.defaults and n not in self.info.fills]
        if missing:
            raise ValueError(f"oracle: inputs {missing} are missing and have no default")
        # A fill default (schema 11) takes its shape from the variables the other inputs bind.
        vals = [np.asarray(args[n]) if n in args else None if n in self.info.fills else self.default(n)
                for n in names]
        shapes = [None if v is None else int(v) if x.Role() == _InputRole.InputRole.DIM else v.shape
                  for v, x in zip(vals, self.inputs)]
        v, var = self.select(shapes)
        for k, x in enumerate(self.inputs):
            if vals[k] is None:
                shape = [self.eval_dim(x.Shape(j), var) for j in range(x.ShapeLength())]
                vals[k] = np.full(shape, self.info.fills[names[k]], dtype=NP_DTYPES[x.Dtype()])
        var = dict(var)  # unbacked variables join it as their producers run
        q = self.variants[v]
        for node in q.nodes:
            vals.append(q._node(node, vals, var))
        self.last_variant = v
        self.last_values = var  # {variable index: value}, the data-dependent ones included
        return [vals[q.fb.Outputs(i).Value()] for i in range(q.fb.OutputsLength())]

    def _node(self, n, vals, var):
        op = n.Op()
        x = [vals[n.Operands(j)] for j in range(n.OperandsLength())]
        dt = NP_DTYPES[n.Dtype()]
        handler = HANDLERS.get(op)
        if handler is None:
            raise ValueError(f"unknown operation {op}")
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # e.g. the mean of an empty slice is NaN
            out = np.asarray(handler(self, n, x, dt, lambda i: self.eval_dim(i, var)))
            out = out.astype(dt, copy=False)
        if op in UNBACKED:  # the size the data gave becomes its variable's value
            o = _options(n, _Unbacked)
            size_op, v, _ = self.dims[o.Size()]
            if size_op != D.VAR or v not in self.unbacked:
                raise ValueError(f"oracle: node {n.Op()}'s size is not an unbacked variable")
            value = int(out) if op == OP.SIZE_FROM_VALUE else out.shape[o.Axis()]
            if v in var:  # a second producer (boolean_mask's tangent) gives the same value
                if var[v] != value:
                    raise ValueError(f"oracle: two producers of {self.info.variables[v][0]} disagree")
            else:
                self.set_unbacked(v, value, var)
        if op in (OP.COND, OP.SCAN):  # sizes set by the branch that ran, the first iteration
            o = _options(n, _ControlFlow)
            sizes = [] if o.SizesIsNone() else [o.Sizes(j) for j in range(o.SizesLength())]
            if sizes and self._cond_shapes is None:  # a scan of length 0: the lowest values
                for i in sizes:
                    v = self.dims[i][1]
                    if i != 0xFFFFFFFF and v not in var:
                        self.set_unbacked(v, self.info.variables[v][1], var)
                sizes = []
            got = [d for sh in self._cond_shapes for d in sh] if sizes else []
            if len(got) != len(sizes):
                raise ValueError("oracle: a cond's branch returned results of other ranks")
            for d, i in zip(got, sizes):
                if i == 0xFFFFFFFF:
                    continue
                size_op, v, _ = self.dims[i]
                if size_op != D.VAR or v not in self.unbacked:
                    raise ValueError("oracle: a cond's result size is not an unbacked variable")
                if v in var:  # another node of the operation, or its jvp's cond
                    if var[v] != d:
                        raise Rejected("shape", f"cond: a branch returned size {d} where the "
                                       f"cond's data-dependent size is {var[v]}")
                else:
                    self.set_unbacked(v, int(d), var)
        return out


# ---- Operations: handler(program, node, operands, result dtype, eval dim) -> numpy array ----

def _constant(p, n, x, dt, dim):
    o = _options(n, _Const)
    shape = [dim(n.Shape(j)) for j in range(n.ShapeLength())]
    return np.frombuffer(p.info.buffers[o.Buffer()], dtype=dt).reshape(shape).copy()


def _unary(p, n, x, dt, dim):
    return UNARY[n.Op()](x[0])


def _binary(p, n, x, dt, dim):
    return BINARY[n.Op()](x[0], x[1])


def _select(p, n, x, dt, dim):
    return np.where(x[0], x[1], x[2])


def _convert(p, n, x, dt, dim):
    return convert(x[0], dt)


def _broadcast_to(p, n, x, dt, dim):
    return np.broadcast_to(x[0], [dim(s) for s in _ints(_options(n, _Shape), "Shape")]).copy()


def _reshape(p, n, x, dt, dim):
    return x[0].reshape([dim(n.Shape(j)) for j in range(n.ShapeLength())])


def _transpose(p, n, x, dt, dim):
    return np.transpose(x[0], _ints(_options(n, _Transpose), "Permutation")).copy()


def _concatenate(p, n, x, dt, dim):
    return np.concatenate(x, axis=_options(n, _Axis).Axis())


def _slice(p, n, x, dt, dim):
    o = _options(n, _Slice)
    idx = tuple(slice(dim(a), dim(b), s) for a, b, s in zip(_ints(o, "Start"), _ints(o, "Limit"), _ints(o, "Strides")))
    return x[0][idx].copy()


def _pad(p, n, x, dt, dim):
    o = _options(n, _Pad)
    widths = [(dim(a), dim(b)) for a, b in zip(_ints(o, "Low"), _ints(o, "High"))]
    if not widths:
        return x[0].copy()  # a scalar: nothing to pad (np.pad rejects an empty width list)
    value = convert(np.array(o.Value(), dtype=np.float64), dt)
    return np.pad(x[0], widths, constant_values=value)


def _reduce(p, n, x, dt, dim):
    o = _options(n, _Reduce)
    axes = tuple(_ints(o, "Axes"))
    keep = o.Keepdims()
    op = n.Op()
    a = x[0]
    if op in (OP.REDUCE_MAX, OP.REDUCE_MIN):
        if a.size == 0:
            return _empty_minmax(a, axes, keep, op == OP.REDUCE_MAX)
        return (np.max if op == OP.REDUCE_MAX else np.min)(a, axis=axes, keepdims=keep)
    if a.dtype == np.float32:
        a = a.astype(np.float64)
    f = {OP.REDUCE_SUM: np.sum, OP.REDUCE_MEAN: np.mean, OP.REDUCE_PROD: np.prod}[op]
    return f(a, axis=axes, keepdims=keep)


def _matmul(p, n, x, dt, dim):
    a, b = x
    if a.dtype == np.float32:
        return np.matmul(a.astype(np.float64), b.astype(np.float64))
    return np.matmul(a, b)


def _dot_general(p, n, x, dt, dim):
    o = _options(n, _Dot)
    lb, rb = _ints(o, "LhsBatch"), _ints(o, "RhsBatch")
    lc, rc = _ints(o, "LhsContracting"), _ints(o, "RhsContracting")
    a, b = x
    lf = [i for i in range(a.ndim) if i not in lb + lc]
    rf = [i for i in range(b.ndim) if i not in rb + rc]
    a2 = np.transpose(a, lb + lf + lc)
    b2 = np.transpose(b, rb + rc + rf)
    B = [a.shape[i] for i in lb]
    M = [a.shape[i] for i in lf]
    N = [b.shape[i] for i in rf]
    K = int(np.prod([a.shape[i] for i in lc], dtype=np.int64))
    acc = np.float64 if a.dtype == np.float32 else a.dtype
    nb, nm, nn = (int(np.prod(s, dtype=np.int64)) for s in (B, M, N))
    a3 = a2.reshape([nb, nm, K]).astype(acc)
    b3 = b2.reshape([nb, K, nn]).astype(acc)
    return np.matmul(a3, b3).reshape(B + M + N)


def _iota(p, n, x, dt, dim):
    o = _options(n, _Iota)
    shape = [dim(s) for s in _ints(o, "Shape")]
    ax = o.Axis()
    r = np.arange(shape[ax], dtype=dt).reshape([-1 if i == ax else 1 for i in range(len(shape))])
    return np.broadcast_to(r, shape).copy()


def _softmax(p, n, x, dt, dim):
    ax = _options(n, _Axis).Axis()
    a = x[0].astype(np.float64)
    if a.size == 0:  # an empty axis (or any empty extent): nothing to normalize
        return a
    e = np.exp(a - np.max(a, axis=ax, keepdims=True))
    return e / np.sum(e, axis=ax, keepdims=True)


def _layer_norm(p, n, x, dt, dim):
    o = _options(n, _LayerNorm)
    a = x[0].astype(np.float64)
    if a.size == 0:
        return a
    mean = np.mean(a, axis=o.Axis(), keepdims=True)
    var_ = np.mean((a - mean) ** 2, axis=o.Axis(), keepdims=True)
    return (a - mean) / np.sqrt(var_ + o.Epsilon())


def _cumsum(p, n, x, dt, dim):
    ax = _options(n, _Axis).Axis()
    a = x[0].astype(np.float64) if x[0].dtype == np.float32 else x[0]
    return np.cumsum(a, axis=ax)


def _take(p, n, x, dt, dim):
    return np.take(x[0], x[1], axis=_options(n, _Axis).Axis())


def _take_along_axis(p, n, x, dt, dim):
    # numpy's own take_along_axis: indices in [-n, n) (negative ones count from the end), any
    # other one an IndexError, as the library fails the run.
    return np.take_along_axis(x[0], x[1].astype(np.int64), axis=_options(n, _Axis).Axis())


def _attention(p, n, x, dt, dim):
    """attention: softmax(scale * q.k^T + bias) . v per query head (head h reads kv head
    h // (hq / hkv)); bias = causal (-inf after the frontier j <= i, or j <= i + l - s) + the
    mask (bool: 0 / -inf; float: added); a row whose bias or scores are -inf at every key is 0
    (ONNX's Attention); another with a NaN or +inf score is NaN (the softmax op's rule)."""
    o = _options(n, _Attention)
    q, k, v = (a.astype(np.float64) for a in x[:3])
    m = x[3]
    hq, hkv = q.shape[-3], k.shape[-3]
    g = hq // hkv if hkv else 1
    k, v = np.repeat(k, g, axis=-3), np.repeat(v, g, axis=-3)
    d, s, lk = q.shape[-1], q.shape[-2], k.shape[-2]
    scale = o.Scale() if o.Scale() != 0 else (1 / math.sqrt(d) if d else 1.0)
    out_shape = q.shape[:-1] + (v.shape[-1],)
    if lk == 0 or 0 in out_shape:
        return np.zeros(out_shape)
    with np.errstate(invalid="ignore", over="ignore"):
        z = (q @ np.swapaxes(k, -1, -2)) * scale
        bias = np.zeros((s, lk))
        if o.Causal():
            off = 0 if o.Causal() == 1 else lk - s
            i, j = np.arange(s)[:, None], np.arange(lk)[None, :]
            bias = np.where(j <= i + off, 0.0, -np.inf)
        bias = bias + (np.where(m, 0.0, -np.inf) if m.dtype == np.bool_ else m.astype(np.float64))
        z = z + bias
        full = np.broadcast_to(bias, z.shape)
        dead = np.isneginf(full.max(axis=-1, keepdims=True)) | np.isneginf(
            np.where(np.isnan(z), np.inf, z).max(axis=-1, keepdims=True))
        mx = z.max(axis=-1, keepdims=True)
        e = np.exp(z - mx)
        w = e / e.sum(axis=-1, keepdims=True)
        w = np.where(np.isnan(mx) | np.isposinf(mx), np.nan, w)
        w = np.where(dead, 0.0, w)
        return w @ v


def _scatter_add(p, n, x, dt, dim):
    """np.add.at on a copy of the base: the updates' slice at each index position is added at
    base[..., indices[j], ...] along the axis, repeated indices accumulating in position order."""
    out = x[0].copy()
    np.add.at(out, (slice(None),) * _options(n, _Axis).Axis() + (x[1],), x[2])
    return out


def _scatter(p, n, x, dt, dim):
    """scatter: the updates' slice at each index position j, in order, combined into the base's
    slice at indices[j] along the axis: replaced (the last position among repeats wins), or
    by numpy's add/multiply/maximum/minimum (NaN on either side gives NaN; integers wrap)."""
    o = _options(n, _Scatter)
    ax, red = o.Axis(), o.Reduction()
    out = x[0].copy()
    idx = x[1].reshape(-1).astype(np.int64)
    upd = x[2].reshape(out.shape[:ax] + (idx.size,) + out.shape[ax + 1:])
    if (idx < 0).any() or (idx >= out.shape[ax]).any():
        raise IndexError("scatter: an index outside [0, %d)" % out.shape[ax])
    combine = {0: None, 1: np.add, 2: np.multiply, 3: np.maximum, 4: np.minimum}[red]
    with np.errstate(over="ignore", invalid="ignore"):
        for j, i in enumerate(idx):  # one position at a time: the order is the definition
            at = (slice(None),) * ax + (i,)
            u = upd[(slice(None),) * ax + (j,)]
            out[at] = u if combine is None else combine(out[at], u)
    return out


def _reverse(p, n, x, dt, dim):
    axes = tuple(_ints(_options(n, _Reverse), "Axes"))
    return np.flip(x[0], axis=axes).copy() if axes else x[0].copy()  # axis=None would flip all


def _trilu(p, n, x, dt, dim):
    """Where j - i >= k (upper) or <= k (lower) in the last two axes: kept; else zero."""
    o = _options(n, _Trilu)
    rows, cols = x[0].shape[-2:]
    d = np.arange(cols, dtype=np.int64)[None, :] - np.arange(rows, dtype=np.int64)[:, None]
    keep = d >= o.K() if o.Upper() else d <= o.K()
    return np.where(keep, x[0], np.zeros((), x[0].dtype))


def _top_k(p, n, x, dt, dim):
    """ONNX's reference order: a lexsort by (value, index), numpy's NaN last; largest is the
    reverse with the index negated, so ties keep the lower index first."""
    o = _options(n, _TopK)
    a, k, v = o.Axis(), dim(o.K()), x[0]
    idx = np.indices(v.shape)[a] if v.ndim else np.zeros((), np.int64)
    order = np.lexsort((-idx if o.Largest() else idx, v), axis=a)
    if o.Largest():
        order = np.flip(order, axis=a)
    order = np.take(order, np.arange(k), axis=a).astype(np.int64)
    if n.Op() == OP.TOP_K_INDICES:
        return order
    return np.take_along_axis(v, order, axis=a)


def _conv(p, n, x, dt, dim):
    """XLA ConvGeneralDilated, NCHW: the input dilated by lhs_dilation and padded (negative pads
    crop), then an explicit im2col of every window (taps rhs_dilation apart, windows `strides`
    apart) contracted with the kernel per group, accumulated in double for f32."""
    o = _options(n, _Conv)
    a, w = x
    ns = a.ndim - 2
    strides, ld, rd = _ints(o, "Strides"), _ints(o, "LhsDilation"), _ints(o, "RhsDilation")
    lo, hi = [dim(d) for d in _ints(o, "PadLow")], [dim(d) for d in _ints(o, "PadHigh")]
    g = o.Groups()
    acc = np.float64 if a.dtype == np.float32 else a.dtype
    a = a.astype(acc)
    # Dilate, then pad (positive) or crop (negative) each spatial axis.
    shape = list(a.shape[:2]) + [(s - 1) * d + 1 if s > 0 else 0 for s, d in zip(a.shape[2:], ld)]
    xd = np.zeros(shape, dtype=acc)
    xd[(slice(None), slice(None)) + tuple(slice(None, None, d) for d in ld)] = a
    for i in range(ns):
        ax = 2 + i
        pad = [(0, 0)] * xd.ndim
        pad[ax] = (max(lo[i], 0), max(hi[i], 0))
        xd = np.pad(xd, pad)
        end = xd.shape[ax] - max(-hi[i], 0)
        xd = np.take(xd, np.arange(max(-lo[i], 0), end), axis=ax)
    k = w.shape[2:]
    out = [(xd.shape[2 + i] - ((k[i] - 1) * rd[i] + 1)) // strides[i] + 1 for i in range(ns)]
    # cols[n, c, taps..., out...]: the input element each tap of each window reads.
    taps = list(np.ndindex(*k))
    cols = np.empty((a.shape[0], a.shape[1], len(taps)) + tuple(out), dtype=acc)
    for t, j in enumerate(taps):
        idx = tuple(slice(j[i] * rd[i], j[i] * rd[i] + (out[i] - 1) * strides[i] + 1, strides[i])
                    for i in range(ns))
        cols[:, :, t] = xd[(slice(None), slice(None)) + idx]
    N, C = a.shape[:2]
    out_ch = w.shape[0]
    cg, og = C // g, out_ch // g
    cols = cols.reshape(N, g, cg * len(taps), int(np.prod(out, dtype=np.int64)))  # N may be 0
    wg = w.astype(acc).reshape(g, og, cg * len(taps))
    y = np.einsum("gok,ngkp->ngop", wg, cols)
    return y.reshape([N, out_ch] + out)


def _reduce_window(p, n, x, dt, dim):
    """XLA ReduceWindow (sum, max, min): each axis is base-dilated and padded (any sign) with
    the identity, then every window (positions o * stride + k * window_dilation) is gathered
    into its own axis and reduced; f32 sums in double, int sums wrap, max/min propagate NaN."""
    o = _options(n, _Window)
    a = x[0]
    red = o.Reduction()
    flt = np.issubdtype(a.dtype, np.floating)
    if red == OP.REDUCE_SUM:
        ident = 0
    elif red == OP.REDUCE_MAX:
        ident = -np.inf if flt else np.iinfo(a.dtype).min
    else:
        ident = np.inf if flt else np.iinfo(a.dtype).max
    win, st = _ints(o, "Window"), _ints(o, "Strides")
    wd, bd = _ints(o, "WindowDilation"), _ints(o, "BaseDilation")
    lo, hi = [dim(d) for d in _ints(o, "PadLow")], [dim(d) for d in _ints(o, "PadHigh")]
    e = a
    for ax in range(a.ndim):
        cur = 2 * ax  # each axis done before this one became (out, window)
        h = a.shape[ax]
        length = (h - 1) * bd[ax] + 1 + lo[ax] + hi[ax]
        out = (length - ((win[ax] - 1) * wd[ax] + 1)) // st[ax] + 1
        q = np.arange(max(length, 0)) - lo[ax]
        src = np.where((q >= 0) & (q % bd[ax] == 0) & (q // bd[ax] < h), q // bd[ax], h)
        pos = (np.arange(max(out, 0))[:, None] * st[ax] + np.arange(win[ax])[None, :] * wd[ax]).ravel()
        fill_shape = list(e.shape)
        fill_shape[cur] = 1
        ext = np.concatenate([e, np.full(fill_shape, ident, dtype=a.dtype)], axis=cur)
        e = np.take(ext, src[pos], axis=cur)
        e = e.reshape(e.shape[:cur] + (max(out, 0), win[ax]) + e.shape[cur + 1:])
    axes = tuple(range(1, 2 * a.ndim, 2))
    if red == OP.REDUCE_SUM:
        if a.dtype == np.float32:
            return np.sum(e.astype(np.float64), axis=axes).astype(np.float32)
        return np.sum(e, axis=axes, dtype=a.dtype)
    return (np.max if red == OP.REDUCE_MAX else np.min)(e, axis=axes)


def _dim_value(p, n, x, dt, dim):
    return np.array(dim(_options(n, _DimValue).Dim()), dtype=np.int64)


def _nonzero(p, n, x, dt, dim):
    """np.argwhere: row-major indices of the elements != 0 (-0.0 is zero, NaN is not)."""
    return np.argwhere(x[0]).astype(np.int64)  # [count, ndim], also for a scalar


def _boolean_mask(p, n, x, dt, dim):
    """x[mask] with the mask's axes starting at `axis`: they become one axis of the selected
    slices, in row-major order."""
    return x[0][(slice(None),) * _options(n, _Unbacked).Axis() + (x[1].astype(bool),)]


def _size_from_value(p, n, x, dt, dim):
    return np.array(x[0], dtype=np.int64).reshape(())


UNBACKED = (OP.NONZERO, OP.BOOLEAN_MASK, OP.SIZE_FROM_VALUE)


def _subprogram(p, i):
    """Subprogram i of p's table, loaded once (a whole program of its own)."""
    cache = p.__dict__.setdefault("_subprograms", {})
    if i not in cache:
        cache[i] = Program(p.fb.Subprograms(i).ProgramAsNumpy().tobytes())
    return cache[i]


def _call(body, args):
    """Runs a subprogram on positional arguments (its inputs in order)."""
    names = [x.Name().decode() for x in body.inputs]
    return body.run(dict(zip(names, args)))


def _control_flow(p, n, x, dt, dim):
    """cond, while_loop and scan (control_flow.cc): every result of the operation computed in
    plain Python loops over the subprograms, then result `result` returned."""
    o = _options(n, _ControlFlow)
    bodies = [_subprogram(p, o.Bodies(i)) for i in range(o.BodiesLength())]
    counts = _ints(o, "Counts")
    op = n.Op()
    if op == OP.COND:
        results = _call(bodies[0] if bool(x[0]) else bodies[1], x[1:])
        p._cond_shapes = [np.shape(r) for r in results]  # for its result sizes (_node)
    elif op == OP.WHILE_LOOP:
        nc = counts[0]
        carry, consts, trips = list(x[:nc]), list(x[nc:]), 0
        while bool(_call(bodies[0], carry + consts)[0]):
            if o.MaxTrips() >= 0 and trips >= o.MaxTrips():
                raise Rejected("constraint", "while_loop: the condition still holds after max_trips")
            carry = list(_call(bodies[1], carry + consts))
            trips += 1
        results = carry
    else:  # scan
        nc, nx = counts
        axis, length = o.Axis(), dim(o.Length())
        carry, xs, consts = list(x[:nc]), x[nc:nc + nx], list(x[nc + nx:])
        ys = None
        steps = range(length - 1, -1, -1) if o.Reverse() else range(length)
        p._cond_shapes = None  # the first iteration's result shapes (its ys' sizes, _node)
        for i in steps:
            out = _call(bodies[0], carry + [np.take(v, i, axis=axis) for v in xs] + consts)
            carry = list(out[:nc])
            if ys is None:
                ys = [np.zeros(y.shape[:axis] + (length,) + y.shape[axis:], y.dtype) for y in out[nc:]]
                p._cond_shapes = [np.shape(v) for v in out]
            for k, y in enumerate(out[nc:]):
                if np.shape(y) != p._cond_shapes[nc + k]:  # sizes the body computes from data
                    raise Rejected("shape", f"scan: y {k} of iteration {i} has the shape "
                                   f"{np.shape(y)}, not {p._cond_shapes[nc + k]}")
                ys[k][(slice(None),) * axis + (i,)] = y
        if ys is None:  # length 0: empty ys of the node's own shape
            if o.Result() < nc:
                return carry[o.Result()]
            return np.zeros([p._dim_or_lowest(n.Shape(j), dim) for j in range(n.ShapeLength())], dt)
        results = carry + ys
    return results[o.Result()]


HANDLERS = {OP.CONSTANT: _constant, OP.SELECT: _select, OP.CONVERT: _convert, OP.BROADCAST_TO: _broadcast_to,
            OP.RESHAPE: _reshape, OP.TRANSPOSE: _transpose, OP.CONCATENATE: _concatenate, OP.SLICE: _slice,
            OP.PAD: _pad, OP.MATMUL: _matmul, OP.DOT_GENERAL: _dot_general, OP.IOTA: _iota, OP.SOFTMAX: _softmax,
            OP.LAYER_NORM: _layer_norm, OP.CUMSUM: _cumsum, OP.TAKE: _take, OP.DIM_VALUE: _dim_value,
            OP.TAKE_ALONG_AXIS: _take_along_axis,
            OP.REVERSE: _reverse, OP.SCATTER_ADD: _scatter_add, OP.SCATTER: _scatter,
            OP.ATTENTION: _attention, OP.CONV: _conv,
            OP.REDUCE_WINDOW: _reduce_window, OP.NONZERO: _nonzero, OP.BOOLEAN_MASK: _boolean_mask,
            OP.SIZE_FROM_VALUE: _size_from_value, OP.TRILU: _trilu,
            OP.TOP_K_VALUES: _top_k, OP.TOP_K_INDICES: _top_k,
            OP.COND: _control_flow, OP.WHILE_LOOP: _control_flow, OP.SCAN: _control_flow}
HANDLERS.update({op: _unary for op in UNARY})
HANDLERS.update({op: _binary for op in BINARY})
HANDLERS.update({op: _reduce for op in (OP.REDUCE_SUM, OP.REDUCE_MEAN, OP.REDUCE_MAX, OP.REDUCE_MIN, OP.REDUCE_PROD)})


def load(path):
    with open(path, "rb") as f:
        return Program(f.read())


def main(argv):
    if len(argv) < 1:
        print(__doc__.strip().splitlines()[-1])
        return 2
    prog = load(argv[0])
    args = {}
    for a in argv[1:]:
        name, _, path = a.partition("=")
        args[name] = np.load(path)
    for (name, _, _), out in zip(prog.info.outputs, prog.run(args)):
        print(f"{name}: {out.dtype} {out.shape}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
