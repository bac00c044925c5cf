#!/usr/bin/env python3
"""A numpy interpreter for libshapepoly programs (.shpoly): the oracle of the C++ runtime.

It reads programs with the independent reader (shapepoly_reader.py, no libshapepoly), solves
the dimension variables from the input shapes, evaluates every dimension expression, and runs
each operation with numpy, following the semantics documented in shapepoly.h (integer div
truncates toward zero and rem has the sign of the dividend, as in C; round is half to even;
softmax and layer_norm along an axis; float32 reductions are computed in float64 and rounded
once, like the runtime). It checks nothing beyond what it needs: it is a reference for valid
inputs, not a validator.

Usage: oracle.py FILE.shpoly NAME=FILE.npy ...   (prints each output's shape and dtype)
"""

import sys

import numpy as np

import shapepoly_reader as reader
from shapepoly.fb import AxisOptions as _Axis
from shapepoly.fb import ConstantOptions as _Const
from shapepoly.fb import ConvertOptions as _Convert
from shapepoly.fb import DimOp as _DimOp
from shapepoly.fb import DimValueOptions as _DimValue
from shapepoly.fb import DotGeneralOptions as _Dot
from shapepoly.fb import IotaOptions as _Iota
from shapepoly.fb import LayerNormOptions as _LayerNorm
from shapepoly.fb import PadOptions as _Pad
from shapepoly.fb import Program as _Program
from shapepoly.fb import ReduceOptions as _Reduce
from shapepoly.fb import ReshapeOptions as _Reshape
from shapepoly.fb import ShapeOptions as _Shape
from shapepoly.fb import SliceOptions as _Slice
from shapepoly.fb import TransposeOptions as _Transpose

NP_DTYPES = [np.float32, np.float64, np.int32, np.int64, np.bool_]

UNARY = {
    1: np.negative, 2: np.abs, 3: np.exp, 4: np.log, 5: np.log1p, 6: np.expm1, 7: np.sqrt,
    8: lambda x: (1 / np.sqrt(x)).astype(x.dtype), 9: np.sin, 10: np.cos, 11: np.tanh,
    12: lambda x: (1 / (1 + np.exp(-x))).astype(x.dtype), 13: np.floor, 14: np.ceil,
    15: np.round, 16: np.sign,
    17: lambda x: np.logical_not(x) if x.dtype == np.bool_ else np.invert(x),
}


def _c_div(a, b):
    if a.dtype.kind == "f":
        return a / b
    with np.errstate(all="ignore"):
        safe = np.where(b == 0, 1, b)
        q = np.abs(a) // np.abs(safe) * np.sign(a) * np.sign(safe)
        return np.where(b == 0, 0, q).astype(a.dtype)


def _c_rem(a, b):
    if a.dtype.kind == "f":
        return np.fmod(a, b)
    safe = np.where((b == 0) | (b == -1), 1, b)
    return np.where((b == 0) | (b == -1), 0, np.fmod(a, safe)).astype(a.dtype)


BINARY = {
    18: np.add, 19: np.subtract, 20: np.multiply, 21: _c_div, 22: np.power, 23: np.maximum,
    24: np.minimum, 25: _c_rem, 26: np.bitwise_and, 27: np.bitwise_or, 28: np.bitwise_xor,
    29: np.equal, 30: np.not_equal, 31: np.less, 32: np.less_equal, 33: np.greater,
    34: np.greater_equal,
}


def _options(node, cls):
    table = node.Options()
    obj = getattr(cls, cls.__name__.split(".")[-1])()
    obj.Init(table.Bytes, table.Pos)
    return obj


def _ints(obj, name):
    n = getattr(obj, name + "Length")()
    get = getattr(obj, name)
    return [get(i) for i in range(n)]


class Program:
    """A loaded program that can be evaluated on numpy arrays."""

    def __init__(self, data: bytes):
        self.info = reader.ProgramInfo(data)
        self.fb = _Program.Program.GetRootAs(data, 0)
        fb = self.fb
        self.dims = []
        for i in range(fb.DimsLength()):
            d = fb.Dims(i)
            self.dims.append((d.Op(), d.Value(), [d.Operands(j) for j in range(d.OperandsLength())]))
        self.inputs = [fb.Inputs(i) for i in range(fb.InputsLength())]
        self.nodes = [fb.Nodes(i) for i in range(fb.NodesLength())]

    # ---- Dimensions ----
    def eval_dim(self, i, var):
        op, value, ops = self.dims[i]
        D = _DimOp.DimOp
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

    def solve(self, shapes):
        """Variable values from the input shapes (by input index); linear dims are inverted."""
        var = {}
        for step in range(self.fb.SolveLength()):
            s = self.fb.Solve(step)
            inp = self.inputs[s.Input()]
            if s.Axis() < 0:
                var[s.Variable()] = int(shapes[s.Input()])
                continue
            d = inp.Shape(s.Axis())
            target = shapes[s.Input()][s.Axis()]
            at0 = self.eval_dim(d, {**var, s.Variable(): 0})
            at1 = self.eval_dim(d, {**var, s.Variable(): 1})
            var[s.Variable()] = (target - at0) // (at1 - at0)
        return var

    # ---- Evaluation ----
    def run(self, args):
        """args: {input name: numpy array (or int for a dimension input)} -> list of outputs."""
        names = [x.Name().decode() for x in self.inputs]
        vals = [np.asarray(args[n]) for n in names]
        shapes = [v.shape if x.Role() == 0 else int(v) for v, x in zip(vals, self.inputs)]
        var = self.solve(shapes)
        for node in self.nodes:
            vals.append(self._node(node, vals, var))
        return [vals[self.fb.Outputs(i).Value()] for i in range(self.fb.OutputsLength())]

    def _node(self, n, vals, var):
        op = n.Op()
        x = [vals[n.Operands(j)] for j in range(n.OperandsLength())]
        dt = NP_DTYPES[n.Dtype()]
        dim = lambda i: self.eval_dim(i, var)  # noqa: E731
        if op == 0:
            o = _options(n, _Const)
            shape = [dim(n.Shape(j)) for j in range(n.ShapeLength())]
            return np.frombuffer(self.info.buffers[o.Buffer()], dtype=dt).reshape(shape).copy()
        if op in UNARY:
            with np.errstate(all="ignore"):
                return UNARY[op](x[0]).astype(dt)
        if op in BINARY:
            with np.errstate(all="ignore"):
                if op == 22 and x[0].dtype.kind == "i":
                    return _int_pow(x[0], x[1]).astype(dt)
                return BINARY[op](x[0], x[1]).astype(dt)
        if op == 35:
            return np.where(x[0], x[1], x[2]).astype(dt)
        if op == 36:
            with np.errstate(all="ignore"):
                src = x[0]
                if src.dtype.kind == "f" and np.dtype(dt).kind == "i":
                    info = np.iinfo(dt)
                    src = np.nan_to_num(np.trunc(src), nan=0, posinf=info.max, neginf=info.min)
                    src = np.clip(src, info.min, info.max)
                return src.astype(dt)
        if op == 37:
            o = _options(n, _Shape)
            return np.broadcast_to(x[0], [dim(s) for s in _ints(o, "Shape")]).copy()
        if op == 38:
            return x[0].reshape([dim(n.Shape(j)) for j in range(n.ShapeLength())])
        if op == 39:
            return np.transpose(x[0], _ints(_options(n, _Transpose), "Permutation")).copy()
        if op == 40:
            return np.concatenate(x, axis=_options(n, _Axis).Axis())
        if op == 41:
            o = _options(n, _Slice)
            idx = tuple(slice(dim(a), dim(b), s) for a, b, s in
                        zip(_ints(o, "Start"), _ints(o, "Limit"), _ints(o, "Strides")))
            return x[0][idx].copy()
        if op == 42:
            o = _options(n, _Pad)
            widths = [(dim(a), dim(b)) for a, b in zip(_ints(o, "Low"), _ints(o, "High"))]
            return np.pad(x[0], widths, constant_values=np.array(o.Value()).astype(dt))
        if 43 <= op <= 47:
            o = _options(n, _Reduce)
            axes = tuple(_ints(o, "Axes"))
            keep = o.Keepdims()
            a = x[0]
            if a.dtype == np.float32 and op in (43, 44, 47):
                a = a.astype(np.float64)
            f = {43: np.sum, 44: np.mean, 45: np.max, 46: np.min, 47: np.prod}[op]
            if op in (45, 46) and a.size == 0:
                return _empty_minmax(a, axes, keep, op == 45).astype(dt)
            with np.errstate(all="ignore"):
                return np.asarray(f(a, axis=axes, keepdims=keep)).astype(dt)
        if op == 48:
            a, b = x
            if a.dtype == np.float32:
                return np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(dt)
            return np.matmul(a, b).astype(dt)
        if op == 49:
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
            a3 = a2.reshape([int(np.prod(B, dtype=np.int64)), int(np.prod(M, dtype=np.int64)), K]).astype(acc)
            b3 = b2.reshape([int(np.prod(B, dtype=np.int64)), K, int(np.prod(N, dtype=np.int64))]).astype(acc)
            return np.matmul(a3, b3).reshape(B + M + N).astype(dt)
        if op == 50:
            o = _options(n, _Iota)
            shape = [dim(s) for s in _ints(o, "Shape")]
            ax = o.Axis()
            r = np.arange(shape[ax], dtype=dt).reshape([-1 if i == ax else 1 for i in range(len(shape))])
            return np.broadcast_to(r, shape).copy()
        if op == 51:
            ax = _options(n, _Axis).Axis()
            a = x[0].astype(np.float64)
            e = np.exp(a - np.max(a, axis=ax, keepdims=True))
            return (e / np.sum(e, axis=ax, keepdims=True)).astype(dt)
        if op == 52:
            o = _options(n, _LayerNorm)
            a = x[0].astype(np.float64)
            mean = np.mean(a, axis=o.Axis(), keepdims=True)
            var_ = np.mean((a - mean) ** 2, axis=o.Axis(), keepdims=True)
            return ((a - mean) / np.sqrt(var_ + o.Epsilon())).astype(dt)
        if op == 53:
            ax = _options(n, _Axis).Axis()
            a = x[0].astype(np.float64) if x[0].dtype == np.float32 else x[0]
            return np.cumsum(a, axis=ax).astype(dt)
        if op == 54:
            ax = _options(n, _Axis).Axis()
            return np.take(x[0], x[1], axis=ax)
        if op == 55:
            return np.array(dim(_options(n, _DimValue).Dim()), dtype=np.int64)
        raise ValueError(f"unknown operation {op}")


def _int_pow(a, b):
    a, b = np.broadcast_arrays(a, b)
    out = np.empty(a.shape, dtype=a.dtype)
    for idx in np.ndindex(a.shape):
        base, e = int(a[idx]), int(b[idx])
        if e < 0:
            r = 1 if base == 1 else ((-1) ** (-e) if base == -1 else 0)
        else:
            r = pow(base, e, 1 << (8 * a.dtype.itemsize))
        out[idx] = np.array(r & ((1 << (8 * a.dtype.itemsize)) - 1), dtype=np.uint64).astype(a.dtype)
    return out


def _empty_minmax(a, axes, keep, is_max):
    shape = [1 if i in axes else d for i, d in enumerate(a.shape)] if keep else \
        [d for i, d in enumerate(a.shape) if i not in axes]
    if a.dtype.kind == "f":
        fill = -np.inf if is_max else np.inf
    elif a.dtype == np.bool_:
        fill = not is_max
    else:
        info = np.iinfo(a.dtype)
        fill = info.min if is_max else info.max
    return np.full(shape, fill, dtype=a.dtype)


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
