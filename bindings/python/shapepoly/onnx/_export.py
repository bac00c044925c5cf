"""shapepoly -> ONNX: one ONNX subgraph per program node, read with the repository's independent
reader (tools/python/shapepoly_reader.py and oracle.py: the C API does not list nodes).

Sizes are run-time tensors in ONNX: each variable is recovered from an input's shape (the
program's solve recipe, inverted with ONNX integer ops) or from its dim input, and every dim
expression a node needs (reshape targets, slice bounds, pads, broadcast shapes, iota lengths)
is computed from the variables with Add/Mul/Div/Mod/Max/Min. Input and output shapes carry
the expressions' text as dim_params. What ONNX cannot express is kept in metadata_props
(constraints, assertions, guards, variable ranges, the solve recipe) and is NOT checked by an
ONNX runtime: see README.md ("What export loses"). Several variants become nested If nodes on
each variant's facts. Control flow (cond, scan, while_loop) becomes one If, Scan or Loop node per
operation, its subprograms subgraphs whose variables are the enclosing graph's (docs/onnx.md).
"""

import json
import os
import sys
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from .._core import BFLOAT16
from ._export_names import read_onnx_names, restore_onnx_names

DEFAULT_OPSET = 18
# The trigonometric and hyperbolic ops (schema version 7): ONNX has each under the same name.
_TRIG = ("Tan", "Sinh", "Cosh", "Asin", "Acos", "Atan", "Asinh", "Acosh", "Atanh")
ONNX_TYPES = {"f32": TensorProto.FLOAT, "f64": TensorProto.DOUBLE, "i32": TensorProto.INT32,
              "i64": TensorProto.INT64, "bool": TensorProto.BOOL, "f16": TensorProto.FLOAT16,
              "bf16": TensorProto.BFLOAT16, "i8": TensorProto.INT8, "u8": TensorProto.UINT8,
              "i16": TensorProto.INT16, "u16": TensorProto.UINT16, "u32": TensorProto.UINT32,
              "u64": TensorProto.UINT64}
NUMPY = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64,
         "bool": np.bool_, "f16": np.float16, "i8": np.int8, "u8": np.uint8, "i16": np.int16,
         "u16": np.uint16, "u32": np.uint32, "u64": np.uint64}
if BFLOAT16 is not None:
    NUMPY["bf16"] = BFLOAT16


class ExportError(ValueError):
    """The program has something ONNX cannot express; the message says what and where."""


def _tools() -> Any:
    """The oracle module of the repository's tools/python (SHAPEPOLY_TOOLS overrides the
    folder). Its reader imports the flatc-generated `shapepoly.fb`, whose top-level name is
    this binding's: the generated folder joins the binding package's search path."""
    if "oracle" in sys.modules and hasattr(sys.modules["oracle"], "HANDLERS"):
        return sys.modules["oracle"]
    import shapepoly
    here = os.path.dirname(os.path.abspath(shapepoly.__file__))
    tools = os.environ.get("SHAPEPOLY_TOOLS") or os.path.join(here, "..", "..", "..", "tools",
                                                              "python")
    tools = os.path.normpath(tools)
    if not os.path.exists(os.path.join(tools, "shapepoly_reader.py")):
        raise ExportError("export reads programs with tools/python/shapepoly_reader.py of the "
                          "libshapepoly repository, not found at %s (set SHAPEPOLY_TOOLS)"
                          % tools)
    generated = os.path.join(tools, "_generated", "shapepoly")
    if generated not in shapepoly.__path__:
        shapepoly.__path__.append(generated)
    if tools not in sys.path:
        sys.path.insert(0, tools)
    try:
        import oracle
    except ImportError as e:  # the reader needs the flatbuffers package (and flatc's output)
        raise ExportError("export reads programs with %s/shapepoly_reader.py, which could not "
                          "be imported: %s (tools/requirements.txt has its packages)"
                          % (tools, e)) from None
    return oracle


class _Builder:
    def __init__(self, data: bytes, opset: int, variant: Any = None,
                 parent: Optional["_Builder"] = None, tag: str = "",
                 inputs: Optional[List[str]] = None) -> None:
        """The builder of a program, or (variant, parent) of one variant's body inside it, or
        (subprogram, parent, inputs) of a control-flow branch or body read by a graph of the
        parent's: `inputs` names its input values (the graph's own inputs, or values of the
        enclosing graphs), and its variables are the parent's of the same names (outer-scope
        values of the enclosing graph)."""
        self.o = parent.o if parent else _tools()
        self.top = parent.top if parent else self.o.Program(data)
        self.prog = variant or self.top
        self.info = self.prog.info
        self.opset = opset
        self.tag = tag  # keeps value names of the variants' bodies apart
        self.nodes: List[Any] = []
        self.inits: List[Any] = []
        self.counter = parent.counter if parent else [0]
        self.dim_cache: Dict[int, str] = {}
        self.operations: Dict[Tuple[Any, ...], List[str]] = {}  # control flow -> its results
        self.vars: Dict[int, str] = {}
        self.names: List[str] = [x[0] for x in self.info.inputs]  # value id -> ONNX name
        self.types: List[str] = [x[2] for x in self.info.inputs]  # value id -> dtype name
        if inputs is not None and parent is not None:
            self.names = list(inputs)
            known = {parent.info.variables[v][0]: name for v, name in parent.vars.items()}
            for v, var in enumerate(self.info.variables):
                if var[0] in known:
                    self.vars[v] = known[var[0]]

    # Small graph helpers.
    def fresh(self, hint: str) -> str:
        self.counter[0] += 1
        return "_shp_%s_%d" % (hint, self.counter[0])

    def add(self, op: str, inputs: List[str], out: Optional[str] = None, **attrs: Any) -> str:
        out = out or self.fresh(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def const(self, value: Any, dtype: Any = np.int64, name: Optional[str] = None) -> str:
        """A Constant node: initializers are kept for parameters (inputs with defaults), so
        that importing the model back gives constants and parameters their roles again."""
        name = name or self.fresh("c")
        t = numpy_helper.from_array(np.asarray(value, dtype=dtype), name)
        self.nodes.append(helper.make_node("Constant", [], [name], name=name, value=t))
        return name

    # Dims as 1-element int64 tensors.
    def dim(self, i: int) -> str:
        if i in self.dim_cache:
            return self.dim_cache[i]
        D = self.o.D
        op, value, ops = self.prog.dims[i]
        if op == D.CONST:
            r = self.const([value])
        elif op == D.VAR:
            if value not in self.vars:
                raise ExportError("variable %s is given by no input shape" %
                                  self.info.variables[value][0])
            r = self.vars[value]
        elif op in (D.ADD, D.MUL):
            r = self.dim(ops[0])
            for x in ops[1:]:
                r = self.add("Add" if op == D.ADD else "Mul", [r, self.dim(x)])
        elif op == D.FLOORDIV:
            a, b = self.dim(ops[0]), self.dim(ops[1])
            r = self.add("Div", [self.add("Sub", [a, self.add("Mod", [a, b])]), b])
        elif op == D.MOD:
            r = self.add("Mod", [self.dim(ops[0]), self.dim(ops[1])])
        elif op in (D.MAXIMUM, D.MINIMUM):
            r = self.add("Max" if op == D.MAXIMUM else "Min",
                         [self.dim(ops[0]), self.dim(ops[1])])
        elif op == D.POW:
            base = self.dim(ops[0])
            r = self.const([1])
            for _ in range(value):
                r = self.add("Mul", [r, base])
        else:
            raise ExportError("unknown dim op %d" % op)
        self.dim_cache[i] = r
        return r

    def shape(self, dims: List[int]) -> str:
        if not dims:
            return self.const(np.zeros(0, np.int64))
        consts = [self.prog.dims[i] for i in dims]
        if all(c[0] == self.o.D.CONST for c in consts):
            return self.const([c[1] for c in consts])
        parts = [self.dim(i) for i in dims]
        return parts[0] if len(parts) == 1 else self.add("Concat", parts, axis=0)

    def dim_text(self, i: int) -> Union[int, str]:
        op, value, _ = self.prog.dims[i]
        if op == self.o.D.CONST:
            return value
        return self.o.reader.Dims(self.prog.fb, [v[0] for v in self.info.variables]).text(i)

    # Variants: nested If nodes on each variant's condition, in order; the last variant runs
    # when no earlier one applies (the library would then check its facts and may refuse).
    def variants(self, out_names: List[str]) -> List[Any]:
        branches, shapes = [], []
        for v, pv in enumerate(self.prog.variants):
            b = _Builder(b"", self.opset, pv, self, "%d_" % v)
            outs = b.body()
            graph_outs = []
            for name, (value, dtype, dims) in zip(out_names, outs):
                b.add("Identity", [value], "%s__v%d" % (name, v))
                graph_outs.append(b.value_info("%s__v%d" % (name, v), dtype, dims))
            branches.append(helper.make_graph(b.nodes, "variant%d" % v, [], graph_outs))
            shapes.append([(dtype, [b.dim_text(d) for d in dims]) for _, dtype, dims in outs])
        conds = []
        for v, pv in enumerate(self.prog.variants[:-1]):
            g = _Builder(b"", self.opset, pv, self, "g%d_" % v)
            conds.append(g.condition())
            self.nodes += g.nodes
        else_graph = branches[-1]
        for v in range(len(branches) - 2, -1, -1):
            names = out_names if v == 0 else ["%s__w%d" % (n, v) for n in out_names]
            node = helper.make_node("If", [conds[v]], names, name="_shp_variant%d" % v,
                                    then_branch=branches[v], else_branch=else_graph)
            if v == 0:
                self.nodes.append(node)
            else:
                else_graph = helper.make_graph(
                    [node], "variants%d" % v, [],
                    [helper.make_tensor_value_info(n, ONNX_TYPES[shapes[v][i][0]], None)
                     for i, n in enumerate(names)])
        outputs = []
        for i, name in enumerate(out_names):
            dtype = shapes[0][i][0]
            texts = [s[i][1] for s in shapes]
            same = all(t == texts[0] for t in texts)
            outputs.append(helper.make_tensor_value_info(
                name, ONNX_TYPES[dtype], texts[0] if same else [None] * len(texts[0])))
        return outputs

    # Variables from the solve recipe.
    def solve(self) -> None:
        fb = self.prog.fb
        for step in range(fb.SolveLength()):
            s = fb.Solve(step)
            v, k, axis = s.Variable(), s.Input(), s.Axis()
            if v in self.vars:  # a subprogram's variable given by the enclosing graph
                continue
            if axis < 0:
                self.vars[v] = self.add("Reshape", [self.names[k], self.const([1])])
                continue
            size = self.add("Gather", [self.add("Shape", [self.names[k]]), self.const([axis])])
            self.vars[v] = self.invert(self.prog.inputs[k].Shape(axis), v, size)

    def invert(self, i: int, v: int, target: str) -> str:
        D = self.o.D
        op, value, ops = self.prog.dims[i]
        name = self.info.variables[v][0]
        if op == D.VAR and value == v:
            return target
        with_v = [x for x in ops if v in self.prog._vars_of[x]]
        known = [x for x in ops if v not in self.prog._vars_of[x]]
        if op in (D.ADD, D.MUL) and len(with_v) == 1:
            for x in known:
                target = self.add("Sub" if op == D.ADD else "Div", [target, self.dim(x)])
            return self.invert(with_v[0], v, target)
        if op == D.POW:
            f = self.add("Cast", [target], to=TensorProto.DOUBLE)
            r = self.add("Round", [self.add("Pow", [f, self.const([1.0 / value], np.float64)])])
            return self.invert(ops[0], v, self.add("Cast", [r], to=TensorProto.INT64))
        if op in (D.MAXIMUM, D.MINIMUM) and len(with_v) == 1:
            return self.invert(with_v[0], v, target)  # the size is the variable's operand
        raise ExportError("variable %s is solved from %s, which ONNX integer ops cannot invert"
                          % (name, self.dim_text(i)))

    # The graph.
    def value_info(self, name: str, dtype: str, dims: List[int]) -> Any:
        return helper.make_tensor_value_info(name, ONNX_TYPES[dtype],
                                             [self.dim_text(d) for d in dims])

    def body(self) -> List[Tuple[str, str, List[int]]]:
        """Solves the variables and converts every node; [(output name, dtype, dims)]."""
        prog = self.prog
        self.solve()
        names = {v: k for k, v in vars(self.o.OP).items() if k.isupper()}
        for idx, node in enumerate(prog.nodes):
            op = node.Op()
            dtype = self.o.reader.DTYPES[node.Dtype()]
            out = "_shp_%sv%d" % (self.tag, len(self.names))
            try:
                out = self.node(node, op, dtype, out) or out
            except ExportError as e:
                raise ExportError("node %d (%s): %s" % (idx, names.get(op, op).lower(), e)
                                  ) from None
            self.names.append(out)
            self.types.append(dtype)
        value_dims = [[prog.inputs[k].Shape(j) for j in range(prog.inputs[k].ShapeLength())]
                      for k in range(len(prog.inputs))]
        value_dims += [[n.Shape(j) for j in range(n.ShapeLength())] for n in prog.nodes]
        outs = []
        for i in range(prog.fb.OutputsLength()):
            o = prog.fb.Outputs(i)
            outs.append((self.names[o.Value()], self.types[o.Value()], value_dims[o.Value()]))
        return outs

    def condition(self) -> str:
        """A bool scalar: this variant's ranges, constraints, guards and assertions hold (the
        runtime's rule for picking it). Facts on variables no input gives are skipped, as the
        runtime's solver skips them."""
        self.solve()
        cmp_ops = ["Equal", "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"]
        conds = []
        for v, (_, lo, hi, _) in enumerate(self.info.variables):
            if v in self.vars:
                if lo > -(1 << 63):
                    conds.append(self.add("GreaterOrEqual", [self.vars[v], self.const([lo])]))
                if hi < (1 << 63) - 1:
                    conds.append(self.add("LessOrEqual", [self.vars[v], self.const([hi])]))
        for _, op, lhs, rhs, _, _ in self.prog.facts:
            if not (self.prog._vars_of[lhs] | self.prog._vars_of[rhs]) <= self.vars.keys():
                continue
            c = self.add(cmp_ops[op], [self.dim(lhs), self.dim(rhs)])
            conds.append(self.add("Not", [c]) if op == 1 else c)
        if not conds:
            return self.const(True, np.bool_)
        r = conds[0]
        for c in conds[1:]:
            r = self.add("And", [r, c])
        return self.add("Squeeze", [r])

    def build(self) -> onnx.ModelProto:
        prog, info = self.prog, self.info
        inputs, outputs = [], []
        for k, (name, role, dtype, _, _) in enumerate(info.inputs):
            inp = prog.inputs[k]
            if role == "dim":
                inputs.append(helper.make_tensor_value_info(name, TensorProto.INT64, []))
                continue
            if name in getattr(info, "fills", {}):
                raise ExportError(
                    "input %r has a fill default (shp_program_jvp_with_default_tangents: %r in "
                    "every element of a shape the other inputs give), which ONNX cannot express; "
                    "export the program made by jvp without default tangents instead" %
                    (name, info.fills[name]))
            dims = [inp.Shape(j) for j in range(inp.ShapeLength())]
            inputs.append(self.value_info(name, dtype, dims))
            if name in info.defaults:
                self.inits.append(numpy_helper.from_array(prog.default(name), name))
        out_names = [o[0] for o in info.outputs]
        variants = self.prog.variants
        if len(variants) == 1:
            for name, (value, dtype, dims) in zip(out_names, self.body()):
                self.add("Identity", [value], name)
                outputs.append(self.value_info(name, dtype, dims))
        else:
            outputs = self.variants(out_names)
        graph = helper.make_graph(self.nodes, "shapepoly", inputs, outputs, self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)],
                                  producer_name="shapepoly-onnx")
        model.ir_version = min(model.ir_version, 9)
        meta = {
            # Unbacked variables are made again by the ops that produce them on import.
            "shapepoly.variables": json.dumps(
                [dict({"name": n, "min": lo, "max": hi, "declared": bool(dec)},
                      **({"unbacked": info.unbacked[i]} if i in info.unbacked else {}))
                 for i, (n, lo, hi, dec) in enumerate(info.variables)]),
            "shapepoly.constraints": json.dumps(info.constraints),
            "shapepoly.assertions": json.dumps([{"text": t, "message": m}
                                                for t, m in info.assertions]),
            "shapepoly.guards": json.dumps([{"text": t, "message": m, "origin": o}
                                            for t, m, o in info.guards]),
            "shapepoly.variant_guards": json.dumps([[t for t, _, _ in v.guards]
                                                    for v in info.variants]),
            "shapepoly.solve": json.dumps([{"variable": v, "input": k, "axis": a}
                                           for v, k, a in info.solve]),
            "shapepoly.input_roles": json.dumps({n: r for n, r, _, _, _ in info.inputs}),
            "shapepoly.output_roles": json.dumps({o[0]: r for o, r in
                                                  zip(info.outputs, info.output_roles)}),
        }
        helper.set_model_props(model, meta)
        return model

    def node(self, n: Any, op: int, dtype: str, out: str) -> Optional[str]:
        """Adds the ONNX nodes of program node n, whose result is named `out`; or returns the
        name of its result when another ONNX node gives it (one result of an operation with
        several)."""
        o, OP = self.o, self.o.OP
        x = [self.names[n.Operands(j)] for j in range(n.OperandsLength())]
        xt = [self.types[n.Operands(j)] for j in range(n.OperandsLength())]
        add = self.add
        if op in (getattr(OP, "COND", None), getattr(OP, "WHILE_LOOP", None),
                  getattr(OP, "SCAN", None)):
            return self.control_flow(n, op, x)
        if op in (OP.PAD, OP.SLICE) and not self.prog_rank(n.Operands(0)):
            add("Identity", x, out)  # a scalar: nothing to pad or slice (ONNX refuses)
            return
        if op == OP.CONSTANT:
            opt = o._options(n, o._Const)
            shape = [self.prog.eval_dim(n.Shape(j), {}) for j in range(n.ShapeLength())]
            a = np.frombuffer(self.info.buffers[opt.Buffer()], dtype=NUMPY[dtype]).reshape(shape)
            self.const(a, NUMPY[dtype], out)
            return
        unary = {OP.NEG: "Neg", OP.ABS: "Abs", OP.EXP: "Exp", OP.LOG: "Log", OP.SQRT: "Sqrt",
                 OP.SIN: "Sin", OP.COS: "Cos", OP.TANH: "Tanh", OP.LOGISTIC: "Sigmoid",
                 OP.FLOOR: "Floor", OP.CEIL: "Ceil", OP.ROUND: "Round", OP.SIGN: "Sign"}
        trig = {getattr(OP, n.upper()): n for n in _TRIG if hasattr(OP, n.upper())}
        if op in unary:
            add(unary[op], x, out)
        elif op == OP.NOT:
            add("Not" if dtype == "bool" else "BitwiseNot", x, out)
        elif op == OP.LOG1P:  # approximate: log(1 + x) loses digits for |x| << 1
            add("Log", [add("Add", [x[0], self.const(1, NUMPY[dtype])])], out)
        elif op == OP.EXPM1:  # approximate, as log1p
            add("Sub", [add("Exp", x), self.const(1, NUMPY[dtype])], out)
        elif op == OP.RSQRT:
            add("Reciprocal", [add("Sqrt", x)], out)
        elif op in (OP.ADD, OP.SUB, OP.MUL, OP.MAXIMUM, OP.MINIMUM):
            add({OP.ADD: "Add", OP.SUB: "Sub", OP.MUL: "Mul", OP.MAXIMUM: "Max",
                 OP.MINIMUM: "Min"}[op], x, out)
        elif op == OP.DIV:
            if dtype in ("f32", "f64"):
                add("Div", x, out)
            else:
                self.int_div_rem(x, dtype, out, rem=False)
        elif op == OP.REM:
            if dtype in ("f32", "f64"):
                add("Mod", x, out, fmod=1)
            else:
                self.int_div_rem(x, dtype, out, rem=True)
        elif op == OP.POW:
            if dtype in ("f32", "f64"):
                add("Pow", x, out)
            else:
                self.int_pow(x, dtype, out)
        elif op in (OP.AND, OP.OR, OP.XOR):
            names = ("And", "Or", "Xor") if dtype == "bool" else \
                ("BitwiseAnd", "BitwiseOr", "BitwiseXor")
            add(names[[OP.AND, OP.OR, OP.XOR].index(op)], x, out)
        elif op in (OP.EQ, OP.NE, OP.LT, OP.LE, OP.GT, OP.GE):
            if xt[0] == "bool" and op not in (OP.EQ, OP.NE):  # ONNX orders numbers only
                x = [add("Cast", [v], to=TensorProto.INT32) for v in x]
            name = {OP.EQ: "Equal", OP.NE: "Equal", OP.LT: "Less", OP.LE: "LessOrEqual",
                    OP.GT: "Greater", OP.GE: "GreaterOrEqual"}[op]
            if op == OP.NE:
                add("Not", [add("Equal", x)], out)
            else:
                add(name, x, out)
        elif op == OP.SELECT:
            if dtype == "bool":  # ONNX runtimes lack Where on bool: p & a | !p & b
                add("Or", [add("And", [x[0], x[1]]), add("And", [add("Not", [x[0]]), x[2]])],
                    out)
            else:
                add("Where", x, out)
        elif op == OP.CONVERT:
            self.convert(x[0], xt[0], dtype, out)
        elif op == OP.BROADCAST_TO:
            dims = o._ints(o._options(n, o._Shape), "Shape")
            add("Expand", [x[0], self.shape(dims)], out)
        elif op == OP.RESHAPE:
            add("Reshape", [x[0], self.shape([n.Shape(j) for j in range(n.ShapeLength())])],
                out)
        elif op == OP.TRANSPOSE:
            perm = o._ints(o._options(n, o._Transpose), "Permutation")
            if perm:
                add("Transpose", x, out, perm=perm)
            else:
                add("Identity", x, out)
        elif op == OP.CONCATENATE:
            add("Concat", x, out, axis=o._options(n, o._Axis).Axis())
        elif op == OP.SLICE:
            opt = o._options(n, o._Slice)
            start, limit = o._ints(opt, "Start"), o._ints(opt, "Limit")
            steps = o._ints(opt, "Strides")
            add("Slice", [x[0], self.shape(start), self.shape(limit),
                          self.const(list(range(len(start)))), self.const(steps)], out)
        elif op == OP.PAD:
            opt = o._options(n, o._Pad)
            pads = self.shape(o._ints(opt, "Low") + o._ints(opt, "High"))
            value = self.o.convert(np.array(opt.Value(), np.float64), NUMPY[dtype])
            add("Pad", [x[0], pads, self.const(value, NUMPY[dtype])], out, mode="constant")
        elif op in (OP.REDUCE_SUM, OP.REDUCE_MEAN, OP.REDUCE_MAX, OP.REDUCE_MIN, OP.REDUCE_PROD):
            opt = o._options(n, o._Reduce)
            axes = o._ints(opt, "Axes")
            name = {OP.REDUCE_SUM: "ReduceSum", OP.REDUCE_MEAN: "ReduceMean",
                    OP.REDUCE_MAX: "ReduceMax", OP.REDUCE_MIN: "ReduceMin",
                    OP.REDUCE_PROD: "ReduceProd"}[op]
            ins = [x[0]] + ([self.const(axes)] if axes else [])
            keep = int(bool(opt.Keepdims()))
            if op == OP.REDUCE_MEAN:  # sum / count: the mean of nothing is 0/0 = NaN, as ours
                total = add("ReduceSum", ins, keepdims=keep)
                sizes = add("Shape", [x[0]])
                if axes:
                    sizes = add("Gather", [sizes, self.const(axes)])
                count = add("Cast", [add("ReduceProd", [sizes], keepdims=0)],
                            to=ONNX_TYPES[dtype])
                add("Div", [total, count], out)
            else:
                add(name, ins, out, keepdims=keep)
        elif op == OP.MATMUL:
            add("MatMul", x, out)
        elif op == OP.DOT_GENERAL:
            self.dot_general(n, x, out)
        elif op == OP.IOTA:
            opt = o._options(n, o._Iota)
            dims = o._ints(opt, "Shape")
            axis = opt.Axis()
            length = add("Squeeze", [self.dim(dims[axis])])
            r = add("Range", [self.const(0), length, self.const(1)])
            r = add("Reshape", [r, self.const([-1 if i == axis else 1
                                               for i in range(len(dims))])])
            r = add("Expand", [r, self.shape(dims)])
            add("Cast", [r], out, to=ONNX_TYPES[dtype])
        elif op == OP.SOFTMAX:
            add("Softmax", x, out, axis=o._options(n, o._Axis).Axis())
        elif op == OP.LAYER_NORM:
            opt = o._options(n, o._LayerNorm)
            axes = self.const([opt.Axis()])
            mean = add("ReduceMean", [x[0], axes], keepdims=1)
            d = add("Sub", [x[0], mean])
            var = add("ReduceMean", [add("Mul", [d, d]), axes], keepdims=1)
            eps = self.const(opt.Epsilon(), NUMPY[dtype])
            add("Div", [d, add("Sqrt", [add("Add", [var, eps])])], out)
        elif op == OP.CUMSUM:
            add("CumSum", [x[0], self.const(o._options(n, o._Axis).Axis())], out)
        elif op == OP.TAKE:
            add("Gather", x, out, axis=o._options(n, o._Axis).Axis())
        elif op == getattr(OP, "TAKE_ALONG_AXIS", None):  # the same index rule as ONNX's
            add("GatherElements", x, out, axis=o._options(n, o._Axis).Axis())
        elif op == OP.DIM_VALUE:
            add("Reshape", [self.dim(o._options(n, o._DimValue).Dim()),
                            self.const(np.zeros(0, np.int64))], out)
        elif op == OP.REVERSE:
            axes = o._ints(o._options(n, o._Reverse), "Axes")
            if not axes:
                add("Identity", x, out)
            else:
                k = len(axes)
                add("Slice", [x[0], self.const([-1] * k), self.const([-(1 << 63)] * k),
                              self.const(axes), self.const([-1] * k)], out)
        elif op == OP.SCATTER_ADD:
            self.scatter_add(n, x, out)
        elif op == OP.SCATTER:
            o = self.o
            opt = o._options(n, o._Scatter)
            self.scatter_add(n, x, out, opt.Axis(),
                             ("none", "add", "mul", "max", "min")[opt.Reduction()])
        elif op == getattr(OP, "CONV", None):
            self.conv(n, x, out)
        elif op == getattr(OP, "REDUCE_WINDOW", None):
            self.reduce_window(n, x, dtype, out)
        elif op == getattr(OP, "ERF", None):
            add("Erf", x, out)
        elif op in trig:  # ONNX Tan, Sinh, ..., Atanh (opsets 7 and 9)
            add(trig[op], x, out)
        elif op == getattr(OP, "NONZERO", None):  # ONNX's [rank, u] is argwhere transposed
            add("Transpose", [add("NonZero", x)], out, perm=[1, 0])
            self.unbacked(n, out, 0)
        elif op == getattr(OP, "BOOLEAN_MASK", None):
            self.boolean_mask(n, x, out)
        elif op == getattr(OP, "TRILU", None):  # ONNX Trilu (opset 14): k is a 0-d input
            opt = o._options(n, o._Trilu)
            add("Trilu", [x[0], self.const(np.int64(opt.K()))], out, upper=int(opt.Upper()))
        elif op in (getattr(OP, "TOP_K_VALUES", None), getattr(OP, "TOP_K_INDICES", None)):
            # ONNX TopK (K an int64 [1] input); each of our two nodes keeps its own output.
            opt = o._options(n, o._TopK)
            other = self.fresh("topk_unused")
            outs = [out, other] if op == OP.TOP_K_VALUES else [other, out]
            self.nodes.append(helper.make_node(
                "TopK", [x[0], self.dim(opt.K())], outs, name=out, axis=opt.Axis(),
                largest=int(opt.Largest()), sorted=int(opt.Sorted())))
        elif op == getattr(OP, "SIZE_FROM_VALUE", None):
            # The value is the size (its declared range is not checked by the ONNX graph).
            add("Identity", x, out)
            self.vars[self.unbacked_var(n)] = add("Reshape", [x[0], self.const([1])])
        else:
            raise ExportError("operation %d has no ONNX form" % op)
        return None

    # Data-dependent sizes: the unbacked variable is read back from the result's shape.
    def unbacked_var(self, n: Any) -> int:
        op, v, _ = self.prog.dims[self.o._options(n, self.o._Unbacked).Size()]
        if op != self.o.D.VAR:
            raise ExportError("its size is not a variable")
        return v

    def unbacked(self, n: Any, out: str, axis: int) -> None:
        self.vars[self.unbacked_var(n)] = self.add("Shape", [out], start=axis, end=axis + 1)

    def boolean_mask(self, n: Any, x: List[str], out: str) -> None:
        """Compress along `axis`; a mask of rank k > 1 first merges the k axes it covers into
        one of their product (the mask flattened alike)."""
        axis = self.o._options(n, self.o._Unbacked).Axis()
        k = self.prog_rank(n.Operands(1))
        data, mask = x
        if k > 1:
            sizes = self.add("ReduceProd", [self.add("Shape", [mask])], keepdims=1)
            shape = self.add("Concat", [self.add("Shape", [data], start=0, end=axis), sizes,
                                        self.add("Shape", [data], start=axis + k)], axis=0)
            data = self.add("Reshape", [data, shape])
            mask = self.add("Reshape", [mask, self.const([-1])])
        self.add("Compress", [data, mask], out, axis=axis)
        self.unbacked(n, out, axis)

    def int_div_rem(self, x: List[str], dtype: str, out: str, rem: bool) -> None:
        """C semantics with the library's edge cases: x / 0 == x % 0 == 0, INT_MIN / -1 ==
        INT_MIN (wraps), INT_MIN % -1 == 0; ONNX leaves them undefined, so the divisor is made
        safe first."""
        a, b = x
        t = NUMPY[dtype]
        zero, minus1, one = self.const(0, t), self.const(-1, t), self.const(1, t)
        special = self.add("Or", [self.add("Equal", [b, zero]), self.add("Equal", [b, minus1])])
        safe = self.add("Where", [special, one, b])
        if rem:
            r = self.add("Mod", [a, safe], fmod=1)
            self.add("Where", [special, zero, r], out)
            return
        q = self.add("Div", [a, safe])
        # Neg of INT_MIN wraps to INT_MIN, as 0 - a does in two's complement.
        neg = self.add("Sub", [zero, a])
        self.add("Where", [self.add("Equal", [b, zero]), zero,
                           self.add("Where", [self.add("Equal", [b, minus1]), neg, q])], out)

    def int_pow(self, x: List[str], dtype: str, out: str) -> None:
        """Square and multiply over every bit of the exponent, wrapping as the library does;
        a negative exponent gives 1 for base 1, +-1 for base -1, else 0."""
        a, b = x
        t = NUMPY[dtype]
        zero, one, two = self.const(0, t), self.const(1, t), self.const(2, t)
        result = self.add("Mul", [self.add("Mul", [a, zero]), zero])
        result = self.add("Add", [self.add("Mul", [b, zero]), self.add("Add", [result, one])])
        base = self.add("Add", [a, self.add("Mul", [b, zero])])
        e = self.add("Max", [b, zero])
        for _ in range(8 * np.dtype(t).itemsize - 1):
            bit = self.add("Equal", [self.add("Mod", [e, two]), one])
            result = self.add("Where", [bit, self.add("Mul", [result, base]), result])
            base = self.add("Mul", [base, base])
            e = self.add("Div", [e, two])
        minus1 = self.const(-1, t)
        odd = self.add("Equal", [self.add("Mod", [b, two]), one])
        neg = self.add("Where", [self.add("Equal", [a, one]), one,
                                 self.add("Where", [self.add("Equal", [a, minus1]),
                                                    self.add("Where", [odd, minus1, one]),
                                                    zero])])
        self.add("Where", [self.add("Less", [b, zero]), neg, result], out)

    def convert(self, x: str, src: str, dst: str, out: str) -> None:
        if src in ("f32", "f64") and dst in ("i32", "i64"):
            # Truncate and saturate, NaN -> 0 (the library's rule; ONNX leaves it undefined).
            ft, info = NUMPY[src], np.iinfo(NUMPY[dst])
            lim = 2.0 ** (info.bits - 1)
            clean = self.add("Where", [self.add("IsNaN", [x]), self.const(0, ft), x])
            raw = self.add("Cast", [clean], to=ONNX_TYPES[dst])
            hi = self.add("GreaterOrEqual", [clean, self.const(lim, ft)])
            lo = self.add("Less", [clean, self.const(-lim, ft)])
            r = self.add("Where", [lo, self.const(info.min, NUMPY[dst]), raw])
            self.add("Where", [hi, self.const(info.max, NUMPY[dst]), r], out)
            return
        self.add("Cast", [x], out, to=ONNX_TYPES[dst])

    def dot_general(self, n: Any, x: List[str], out: str) -> None:
        o = self.o
        opt = o._options(n, o._Dot)
        lb, rb = o._ints(opt, "LhsBatch"), o._ints(opt, "RhsBatch")
        lc, rc = o._ints(opt, "LhsContracting"), o._ints(opt, "RhsContracting")
        ra = self.prog_rank(n.Operands(0))
        rr = self.prog_rank(n.Operands(1))
        letters = iter("abcdefghijklmnopqrstuvwxyz")
        lhs = [""] * ra
        rhs = [""] * rr
        for i, j in zip(lb + lc, rb + rc):
            lhs[i] = rhs[j] = next(letters)
        for i in range(ra):
            lhs[i] = lhs[i] or next(letters)
        for j in range(rr):
            rhs[j] = rhs[j] or next(letters)
        res = [lhs[i] for i in lb] + [lhs[i] for i in range(ra) if i not in lb + lc] + \
            [rhs[j] for j in range(rr) if j not in rb + rc]
        eq = "%s,%s->%s" % ("".join(lhs), "".join(rhs), "".join(res))
        self.add("Einsum", x, out, equation=eq)

    def dilate(self, x: str, rank: int, axis: int, d: int, fill: Any, dtype: Any) -> str:
        """x (of rank `rank`) with d - 1 copies of `fill` between neighbours along `axis`
        (XLA's base or lhs dilation): a new axis after `axis` padded to d, merged into it, the
        tail cut."""
        u = self.add("Unsqueeze", [x, self.const([axis + 1])])
        pads = [0] * (2 * (rank + 1))
        pads[rank + 1 + axis + 1] = d - 1
        u = self.add("Pad", [u, self.const(pads), self.const(fill, dtype)], mode="constant")
        shape = self.add("Shape", [x])
        size = self.add("Mul", [self.add("Slice", [shape, self.const([axis]),
                                                   self.const([axis + 1])]), self.const([d])])
        parts = [self.add("Slice", [shape, self.const([0]), self.const([axis])]), size,
                 self.add("Slice", [shape, self.const([axis + 1]), self.const([1 << 62])])]
        merged = self.add("Reshape", [u, self.add("Concat", parts, axis=0)])
        return self.add("Slice", [merged, self.const([0]), self.const([-(d - 1)]),
                                  self.const([axis])])

    def spatial_pads(self, x: str, low: List[int], high: List[int], first: int, fill: Any,
                     dtype: Any) -> str:
        """x padded (or cropped, for negative dims) by the dims low/high on the axes from
        `first` on; unchanged when every pad is the constant 0."""
        consts = [self.prog.dims[i] for i in low + high]
        if all(c[0] == self.o.D.CONST and c[1] == 0 for c in consts):
            return x
        zeros = [self.const([0] * first)] if first else []
        pads = self.add("Concat", zeros + [self.shape(low)] + zeros + [self.shape(high)],
                        axis=0)
        return self.add("Pad", [x, pads, self.const(fill, dtype)], mode="constant")

    def conv(self, n: Any, x: List[str], out: str) -> None:
        """XLA ConvGeneralDilated (NCHW) as ONNX Conv: the input dilated (a transposed conv's
        lhs dilation) and padded (pads are dims, of any sign) first, then Conv without pads."""
        o = self.o
        opt = o._options(n, o._Conv)
        strides, ld = o._ints(opt, "Strides"), o._ints(opt, "LhsDilation")
        rd = o._ints(opt, "RhsDilation")
        t = NUMPY[self.types[n.Operands(0)]]
        a = x[0]
        rank = self.prog_rank(n.Operands(0))
        for i, d in enumerate(ld):
            if d > 1:
                a = self.dilate(a, rank, 2 + i, d, 0, t)
        a = self.spatial_pads(a, o._ints(opt, "PadLow"), o._ints(opt, "PadHigh"), 2, 0, t)
        if t == np.float32:
            self.add("Conv", [a, x[1]], out, strides=strides, dilations=rd, group=opt.Groups())
            return
        # onnxruntime has no double Conv: a sum over the kernel taps of strided slices of the
        # input contracted with that tap's weights, per group (exact in f64).
        g = opt.Groups()
        ns = len(strides)
        out_dims = [n.Shape(j) for j in range(2, 2 + ns)]
        ksizes = self.kernel_sizes(n.Operands(1), ns)
        xg = self.add("Reshape", [a, self.regroup(a, 1, [g, -1])])  # (N, g, C/g, ...)
        wg = self.add("Reshape", [x[1], self.regroup(x[1], 0, [g, -1])])  # (g, O/g, C/g, k)
        letters = "hijk"[:ns]
        acc = None
        for tap in np.ndindex(*ksizes):
            starts = [tap[i] * rd[i] for i in range(ns)]
            ends = [self.add("Add", [self.add("Mul", [self.add("Sub", [
                self.dim(out_dims[i]), self.const([1])]), self.const([strides[i]])]),
                self.const([starts[i] + 1])]) for i in range(ns)]
            sl = self.add("Slice", [xg, self.const(starts), self.add("Concat", ends, axis=0),
                                    self.const(list(range(3, 3 + ns))), self.const(strides)])
            wt = self.add("Slice", [wg, self.const(list(tap)),
                                    self.const([v + 1 for v in tap]),
                                    self.const(list(range(3, 3 + ns)))])
            wt = self.add("Squeeze", [wt, self.const(list(range(3, 3 + ns)))])
            term = self.add("Einsum", [sl, wt], equation="ngc%s,goc->ngo%s" % (letters,
                                                                                 letters))
            acc = term if acc is None else self.add("Add", [acc, term])
        self.add("Reshape", [acc, self.regroup(acc, 1, [-1], 2)], out)  # (N, O, out...)

    def regroup(self, x: str, axis: int, middle: List[int], count: int = 1) -> str:
        """The shape of x with the `count` axes at `axis` replaced by the sizes `middle`."""
        shape = self.add("Shape", [x])
        return self.add("Concat", [self.add("Slice", [shape, self.const([0]),
                                                      self.const([axis])]),
                                   self.const(middle),
                                   self.add("Slice", [shape, self.const([axis + count]),
                                                      self.const([1 << 62])])], axis=0)

    def kernel_sizes(self, value: int, ns: int) -> List[int]:
        """The constant spatial sizes of a conv's kernel (value id)."""
        k = len(self.prog.inputs)
        fb = self.prog.inputs[value] if value < k else self.prog.nodes[value - k]
        dims = [self.prog.dims[fb.Shape(j)] for j in range(2, 2 + ns)]
        if any(d[0] != self.o.D.CONST for d in dims):
            raise ExportError("a conv kernel with symbolic spatial sizes has no ONNX form")
        return [d[1] for d in dims]

    def reduce_window(self, n: Any, x: List[str], dtype: str, out: str) -> None:
        """XLA ReduceWindow over the spatial axes of an (N, C, ...) floating-point tensor as
        ONNX pooling: max as MaxPool, min as -MaxPool(-x), sum as AveragePool (counting every
        element) times the window size; dilation and pads (any sign) applied first with the
        reduction's identity."""
        o, OP = self.o, self.o.OP
        opt = o._options(n, o._Window)
        red = opt.Reduction()
        win, st = o._ints(opt, "Window"), o._ints(opt, "Strides")
        wd, bd = o._ints(opt, "WindowDilation"), o._ints(opt, "BaseDilation")
        rank = len(win)
        if dtype not in ("f32", "f64") or rank < 3 or any(
                v != 1 for v in win[:2] + st[:2] + wd[:2] + bd[:2]):
            raise ExportError("reduce_window has an ONNX form (pooling) only on the spatial "
                              "axes of an (N, C, ...) floating-point tensor")
        t = NUMPY[dtype]
        ident = 0.0 if red == OP.REDUCE_SUM else -np.inf
        a = x[0]
        if red == OP.REDUCE_MIN:
            a = self.add("Neg", [a])
        for i, d in enumerate(bd):
            if d > 1:
                a = self.dilate(a, rank, i, d, ident, t)
        lo, hi = o._ints(opt, "PadLow"), o._ints(opt, "PadHigh")
        if any(self.prog.dims[i][0] != o.D.CONST or self.prog.dims[i][1] != 0
               for i in lo[:2] + hi[:2]):
            raise ExportError("reduce_window pads the batch or channel axis")
        a = self.spatial_pads(a, lo[2:], hi[2:], 2, ident, t)
        attrs = {"kernel_shape": win[2:], "strides": st[2:]}
        if any(v != 1 for v in wd):
            attrs["dilations"] = wd[2:]
        if red == OP.REDUCE_SUM:
            if "dilations" in attrs and self.opset < 19:
                raise ExportError("a dilated window sum needs opset 19 (AveragePool's "
                                  "dilations), not %d" % self.opset)
            avg = self.add("AveragePool", [a], count_include_pad=1, **attrs)
            self.add("Mul", [avg, self.const(float(np.prod(win)), t)], out)
        elif red == OP.REDUCE_MIN:
            self.add("Neg", [self.add("MaxPool", [a], **attrs)], out)
        else:
            self.add("MaxPool", [a], out, **attrs)

    # Control flow: one ONNX node per operation, whose outputs are its results (the program has
    # one node per result it uses, with equal operands and options but `result`).
    def control_flow(self, n: Any, op: int, x: List[str]) -> str:
        o, OP = self.o, self.o.OP
        opt = o._options(n, o._ControlFlow)
        bodies = [o._subprogram(self.prog, opt.Bodies(i)) for i in range(opt.BodiesLength())]
        counts = o._ints(opt, "Counts")
        key = (op, tuple(x), tuple(opt.Bodies(i) for i in range(opt.BodiesLength())),
               tuple(counts), opt.Axis(), bool(opt.Reverse()), opt.Length(), opt.MaxTrips())
        if key not in self.operations:
            if op == OP.COND:
                self.operations[key] = self.cond(bodies, x)
            elif op == OP.SCAN:
                self.operations[key] = self.scan(bodies[0], counts, opt, x)
            else:
                self.operations[key] = self.while_loop(bodies, counts[0], opt.MaxTrips(), x)
        return self.operations[key][opt.Result()]

    def child(self, sub: Any, inputs: List[str]) -> Tuple["_Builder", List[Any]]:
        """The builder of subprogram `sub` on the values `inputs`, converted: (builder, its
        [(output, dtype, dims)])."""
        self.counter[0] += 1
        b = _Builder(b"", self.opset, sub, self, "b%d_" % self.counter[0], inputs)
        return b, b.body()

    def graph_inputs(self, b: "_Builder", names: List[str], first: int) -> List[Any]:
        """Value infos of b's inputs first, first + 1, ... named `names` (a body's inputs)."""
        prog = b.prog
        return [b.value_info(name, b.types[first + i],
                             [prog.inputs[first + i].Shape(j)
                              for j in range(prog.inputs[first + i].ShapeLength())])
                for i, name in enumerate(names)]

    def graph(self, b: "_Builder", outs: List[Any], inputs: List[Any], what: str,
              first: Optional[List[Tuple[str, Any]]] = None) -> Any:
        """The graph of b's nodes with outputs `first` ([(name, value info)]) then b's outputs
        (each a new name: an output may be an input or an outer value, or repeat)."""
        outputs = [vi for _, vi in first or []]
        for value, dtype, dims in outs:
            name = b.add("Identity", [value], self.fresh(what + "_out"))
            outputs.append(b.value_info(name, dtype, dims))
        return helper.make_graph(b.nodes, self.fresh(what), inputs, outputs)

    def cond(self, bodies: List[Any], x: List[str]) -> List[str]:
        """If: the branches take no inputs and read the operands from the enclosing graph."""
        branches = []
        for sub, what in zip(bodies, ("then", "else")):
            b, outs = self.child(sub, x[1:])
            branches.append((self.graph(b, outs, [], what), len(outs)))
        names = [self.fresh("cond") for _ in range(branches[0][1])]
        self.nodes.append(helper.make_node("If", [x[0]], names, name=names[0],
                                           then_branch=branches[0][0],
                                           else_branch=branches[1][0]))
        return names

    def scan(self, sub: Any, counts: List[int], opt: Any, x: List[str]) -> List[str]:
        """Scan (opset 9's form): the carries are its state, xs its scan inputs along `axis`,
        the constants outer values the body reads; a scan over no xs scans a [length] tensor
        of zeros that the body ignores."""
        nc, nx = counts
        axis, rev = opt.Axis(), int(bool(opt.Reverse()))
        state = [self.fresh("carry") for _ in range(nc)]
        slices = [self.fresh("slice") for _ in range(nx)]
        b, outs = self.child(sub, state + slices + x[nc + nx:])
        inputs = self.graph_inputs(b, state + slices, 0)
        xs, axes = x[nc:nc + nx], [axis] * nx
        if not nx:
            xs = [self.add("ConstantOfShape", [self.shape([opt.Length()])],
                           value=helper.make_tensor("zero", TensorProto.INT64, [1], [0]))]
            axes = [0]
            inputs.append(helper.make_tensor_value_info(self.fresh("step"), TensorProto.INT64,
                                                        []))
        body = self.graph(b, outs, inputs, "scan_body")
        names = [self.fresh("scan") for _ in outs]
        k = len(outs) - nc
        attrs: Dict[str, Any] = {"num_scan_inputs": len(xs), "scan_input_axes": axes,
                                 "scan_input_directions": [rev] * len(xs)}
        if k:
            attrs.update(scan_output_axes=[axis] * k, scan_output_directions=[rev] * k)
        node = helper.make_node("Scan", x[:nc] + xs, names, name=names[0], body=body, **attrs)
        if opt.Length() != 0xFFFFFFFF and self.lower_bound(opt.Length()) >= 1:
            self.nodes.append(node)
            return names
        # onnxruntime fails on a Scan of length 0 (axis 0: "Invalid dim0_offset"; another
        # axis: a floating-point exception that ends the process), which ONNX allows: an If
        # on length > 0 runs it, else gives the initial carry and empty ys.
        if opt.Length() != 0xFFFFFFFF:
            length = self.dim(opt.Length())
        else:
            length = self.add("Shape", [xs[0]], start=axis, end=axis + 1)
        pos = self.add("Squeeze", [self.add("Greater", [length, self.const([0])])])
        then = helper.make_graph([node], self.fresh("scan_then"), [], [
            helper.make_tensor_value_info(v, ONNX_TYPES[t], None)
            for v, (_, t, _) in zip(names, outs)])
        self.counter[0] += 1
        e = _Builder(b"", self.opset, sub, self, "b%d_" % self.counter[0],
                     x[:nc] + [""] * nx + x[nc + nx:])
        empty = []
        for j, (_, dtype, dims) in enumerate(outs):
            if j < nc:
                empty.append(e.add("Identity", [x[j]]))
                continue
            # The length (0 here) keeps the ys' shape that of the Scan's (an importer's
            # cond needs them provably equal).
            shape = e.add("Concat", [e.shape(dims[:axis]), length, e.shape(dims[axis:])],
                          axis=0)
            empty.append(e.add("Expand", [e.const(0, NUMPY[dtype]), shape]))
        otherwise = helper.make_graph(e.nodes, self.fresh("scan_else"), [], [
            helper.make_tensor_value_info(v, ONNX_TYPES[t], None)
            for v, (_, t, _) in zip(empty, outs)])
        outer = [self.fresh("scan") for _ in outs]
        self.nodes.append(helper.make_node("If", [pos], outer, name=outer[0], then_branch=then,
                                           else_branch=otherwise))
        return outer

    def lower_bound(self, i: int) -> float:
        """A lower bound of dim i from the variables' ranges (-inf when not simply known)."""
        D = self.o.D
        op, value, ops = self.prog.dims[i]
        if op == D.CONST:
            return value
        if op == D.VAR:
            lo = self.info.variables[value][1]
            return lo if lo > -(1 << 63) else -np.inf
        los = [self.lower_bound(x) for x in ops]
        if op == D.ADD:
            return sum(los)
        if op == D.MUL and all(lo >= 0 for lo in los):
            return float(np.prod(los))
        if op == D.MAXIMUM:
            return max(los)
        if op == D.MINIMUM:
            return min(los)
        return -np.inf

    def while_loop(self, bodies: List[Any], nc: int, max_trips: int, x: List[str]
                   ) -> List[str]:
        """Loop: the condition runs once on the initial carry before the loop (its cond
        input), the body computes the next carry, then the condition on it; the carries are
        its loop-carried values, the constants outer values; M is max_trips (absent when
        unbounded). A run that would exceed max_trips stops there (ONNX cannot fail)."""
        cond_sub, body_sub = bodies
        consts = x[nc:]
        c, couts = self.child(cond_sub, x)
        self.nodes += c.nodes
        carry = [self.fresh("carry") for _ in range(nc)]
        b, outs = self.child(body_sub, carry + consts)
        c, couts2 = b.child(cond_sub, [v for v, _, _ in outs] + consts)
        b.nodes += c.nodes
        it, cin = self.fresh("iteration"), self.fresh("cond_in")
        inputs = [helper.make_tensor_value_info(it, TensorProto.INT64, []),
                  helper.make_tensor_value_info(cin, TensorProto.BOOL, [])]
        inputs += self.graph_inputs(b, carry, 0)
        cout = b.add("Identity", [couts2[0][0]], self.fresh("cond_out"))
        body = self.graph(b, outs, inputs, "loop_body",
                          [(cout, helper.make_tensor_value_info(cout, TensorProto.BOOL, []))])
        m = self.const(np.int64(max_trips)) if max_trips >= 0 else ""
        names = [self.fresh("loop") for _ in range(nc)]
        self.nodes.append(helper.make_node("Loop", [m, couts[0][0]] + x[:nc], names,
                                           name=names[0], body=body))
        return names

    def prog_rank(self, value: int) -> int:
        k = len(self.prog.inputs)
        if value < k:
            return self.prog.inputs[value].ShapeLength()
        return self.prog.nodes[value - k].ShapeLength()

    def scatter_add(self, n: Any, x: List[str], out: str, axis: Optional[int] = None,
                    reduction: str = "add") -> None:
        """np.add.at along `axis` (scatter: the reduction) as ScatterND on the axis moved to the
        front (ScatterND's 'none' is sequential in onnxruntime: the last repeat wins, as
        scatter's replace)."""
        o = self.o
        if axis is None:
            axis = o._options(n, o._Axis).Axis()
        base, idx, upd = x
        rb = self.prog_rank(n.Operands(0))
        ri = self.prog_rank(n.Operands(1))
        perm = [axis] + [i for i in range(rb) if i != axis]
        upd_perm = list(range(axis, axis + ri)) + list(range(axis)) + \
            list(range(axis + ri, rb - 1 + ri))
        b = self.add("Transpose", [base], perm=perm)
        u = self.add("Transpose", [upd], perm=upd_perm)
        i = self.add("Unsqueeze", [self.add("Cast", [idx], to=TensorProto.INT64),
                                   self.const([-1])])
        kw = {} if reduction == "none" else {"reduction": reduction}  # attribute since opset 16
        s = self.add("ScatterND", [b, i, u], **kw)
        inv = [perm.index(k) for k in range(rb)]
        self.add("Transpose", [s], out, perm=inv)


def export_model(program: Any, opset: int = DEFAULT_OPSET,
                 onnx_names: bool = True) -> onnx.ModelProto:
    """The ONNX model of a Program (or of its serialized bytes, or of a .shpoly path).
    A program imported from ONNX (metadata "onnx.names") is written under its original ONNX
    input and output names ('y.z' again, not the program's 'y_z'), except where that would be
    ambiguous (an output the model listed twice keeps its '_2' name); `onnx_names=False`
    writes the program's own names."""
    if isinstance(program, (bytes, bytearray)):
        data = bytes(program)
    elif isinstance(program, (str, os.PathLike)):
        with open(program, "rb") as f:
            data = f.read()
    else:
        data = program.serialize()
    if opset < 18:
        raise ExportError("export writes opset 18 or newer (ReduceMean's axes as an input, "
                          "BitwiseNot), not %d" % opset)
    builder = _Builder(data, opset)
    model = builder.build()
    names = read_onnx_names(builder.top.info.metadata) if onnx_names else None
    if names is not None:
        restore_onnx_names(model, names)
    return model


def export_program(program: Any, path: Union[str, "os.PathLike[str]"],
                   opset: int = DEFAULT_OPSET, onnx_names: bool = True) -> onnx.ModelProto:
    """Writes the ONNX model of `program` to `path` and returns it (see export_model)."""
    model = export_model(program, opset, onnx_names)
    onnx.save(model, str(path))
    return model
