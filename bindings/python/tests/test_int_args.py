"""Issue 39 item 3: no integer argument is wrapped silently by ctypes (2**64 + 5 -> 5, -1 ->
SIZE_MAX) or truncated (3.7 -> 3). Two generated sweeps:

- every integer parameter of every declaration of the ctypes layer (_lib.FUNCTIONS argtypes)
  gets values outside its C type and non-integers, and must refuse them before the C call;
- every parameter of the public API whose annotation admits an int (found by introspecting
  the signatures) has a case below that feeds it the same values through the API, expecting
  ArgumentOutOfRange / ArgumentNotInteger naming the argument, then calls it again with a
  valid value on the same objects (still usable). A new int parameter without a case fails.
"""

import inspect
import typing

import numpy as np
import pytest

import shapepoly as sp
from shapepoly import _lib

TYPED = (sp.ArgumentOutOfRange, sp.ArgumentNotInteger)

# Values outside each C type (the ones that used to wrap into a valid value among them), and
# non-integers. np.uint64(2**64 - 1) became -1 in an int64_t.
BAD = {
    "int64_t": [2 ** 64 + 5, 2 ** 63, -(2 ** 63) - 1, 2 ** 64 + 10, np.uint64(2 ** 64 - 1), 3.7,
                np.float64(2.0), True],
    "int32_t": [2 ** 32 + 3, 2 ** 31, -(2 ** 31) - 1, 3.7, True],
    "size_t": [-1, 2 ** 64, 2 ** 64 + 2, np.int64(-1), 3.7],
}


# ---- The ctypes layer ----------------------------------------------------------------------

def placeholder(t):
    if t in _lib.INT_PARAMS:
        return 0
    if t is _lib._f64:
        return 0.0
    if t is _lib._bool:
        return False
    return None  # pointers and strings: never reach C (the check comes first)


INT_DECLS = [(name, i, cname) for name, (_, args) in sorted(_lib.FUNCTIONS.items())
             for i, cname, _, _ in _lib.int_positions(args)]


def test_the_sweep_covers_the_declarations():
    assert len(INT_DECLS) > 100
    assert {c for _, _, c in INT_DECLS} == {"int32_t", "int64_t", "size_t"}


@pytest.mark.parametrize("name,pos,cname", INT_DECLS,
                         ids=["%s:%d" % (n, p + 1) for n, p, _ in INT_DECLS])
def test_every_integer_parameter_of_the_ctypes_layer(name, pos, cname):
    fn = getattr(_lib.lib, name)
    args = [placeholder(t) for t in _lib.FUNCTIONS[name][1]]
    for bad in BAD[cname]:
        if isinstance(bad, bool):
            continue  # 0/1 at this layer (the API refuses bools where it means integers)
        args[pos] = bad
        with pytest.raises(TYPED) as e:
            fn(*args)
        assert name in e.value.message and cname in e.value.message, e.value.message
        assert e.value.code == _lib.SHP_INVALID_ARGUMENT


# ---- The public API ------------------------------------------------------------------------

def admits_int(t):
    if t is int:
        return True
    return any(admits_int(a) for a in typing.get_args(t))


SKIP_DUNDERS = {"__repr__", "__str__", "__del__", "__enter__", "__exit__", "__hash__",
                "__bool__", "__int__", "__init_subclass__"}
# Parameters that admit an int but are no C integer argument, with the reason.
NOT_C_INTEGERS = {
    "Dim.__init__.ptr": "a handle made by the binding itself",
    "Tensor.__init__.ptr": "a handle made by the binding itself",
    "Program.__init__.ptr": "a handle made by the binding itself",
    "error_class.code": "a dict lookup in Python (unknown codes give Error)",
}


def public_int_parameters():
    found = set()
    for n in sp.__all__:
        o = getattr(sp, n)
        if inspect.isclass(o):
            if issubclass(o, (BaseException, int)):
                continue
            own = {}  # the class's methods and its bases' (the generated op methods' TensorOps)
            for base in reversed(o.__mro__[:-1]):
                own.update(vars(base))
            members = [("%s.%s" % (n, m), f) for m, f in own.items()
                       if inspect.isfunction(f) and (not m.startswith("_") or
                                           (m.startswith("__") and m not in SKIP_DUNDERS))]
        elif callable(o):
            members = [(n, o)]
        else:
            continue
        for qn, f in members:
            hints = typing.get_type_hints(f, None, dict(vars(sp), Program=sp.Program))
            for p in inspect.signature(f).parameters:
                if p in hints and admits_int(hints[p]):
                    found.add("%s.%s" % (qn, p))
    return found


class Objects:
    """Fresh objects for one case: a scope, tensors, a program with a dim input and its
    runtime, and a compiled function."""

    def __init__(self):
        self.s = sp.Scope()
        s = self.s
        self.n = s.var("n")
        self.x = s.input("x", sp.F32, "n, 4")
        self.img = s.input("img", sp.F32, "1, 4, 4, 4")
        self.k = s.input("k", sp.I64, "")
        self.w = s.constant(np.ones((4, 4, 1, 1), np.float32))
        d = s.dim_input("m")
        y = self.x.sum(1)
        self.p = s.program([self.x, d], {"y": y, "m2": s.dim_value(s.var("m") * 2)})
        self.rt = self.p.runtime()
        self.f = sp.Function(lambda scope, x: x + 1.0, {"x": (sp.F32, 1)}, ["y"])
        self.a = np.ones((3, 4), np.float32)
        self.data = self.p.serialize()

    def close(self):
        self.f.close()
        self.rt.close()
        self.p.close()
        self.s.close()


def seq(v, n=1, good=1):
    return [v] + [good] * (n - 1)


# qualified parameter -> (C type, call(o, v)): `v` lands in that parameter; called with a bad
# value (must raise the typed error) and then with GOOD[C type] (must work).
CASES = {
    "Dim.max.b": ("int64_t", lambda o, v: o.n.max(v)),
    "Dim.min.b": ("int64_t", lambda o, v: o.n.min(v)),
    "Dim.__pow__.exponent": ("int64_t", lambda o, v: o.n ** v if not isinstance(v, float)
                             else o.n.__pow__(v) if False else _pow(o, v)),
    "Dim.compare.b": ("int64_t", lambda o, v: o.n.compare("<=", v)),
    "Dim.guard.b": ("int64_t", lambda o, v: o.n.guard(">=", v)),
    "Dim.evaluate.values": ("int64_t", lambda o, v: o.n.evaluate({"n": v})),
    "Dim.evaluate.kw": ("int64_t", lambda o, v: o.n.evaluate(n=v)),
    "Dim.__add__.b": ("int64_t", lambda o, v: o.n + v),
    "Dim.__radd__.b": ("int64_t", lambda o, v: o.n.__radd__(v)),
    "Dim.__sub__.b": ("int64_t", lambda o, v: o.n - v),
    "Dim.__rsub__.b": ("int64_t", lambda o, v: o.n.__rsub__(v)),
    "Dim.__mul__.b": ("int64_t", lambda o, v: o.n * v),
    "Dim.__rmul__.b": ("int64_t", lambda o, v: o.n.__rmul__(v)),
    "Dim.__floordiv__.b": ("int64_t", lambda o, v: o.n // v),
    "Dim.__rfloordiv__.b": ("int64_t", lambda o, v: o.n.__rfloordiv__(v)),
    "Dim.__mod__.b": ("int64_t", lambda o, v: o.n % v),
    "Dim.__rmod__.b": ("int64_t", lambda o, v: o.n.__rmod__(v)),
    "Dim.__lt__.b": ("int64_t", lambda o, v: o.s.dim(5) < v),
    "Dim.__le__.b": ("int64_t", lambda o, v: o.s.dim(5) <= v),
    "Dim.__gt__.b": ("int64_t", lambda o, v: o.s.dim(5) > v),
    "Dim.__ge__.b": ("int64_t", lambda o, v: o.s.dim(5) >= v),
    "Function.__init__.inputs": ("size_t", lambda o, v: sp.Function(
        lambda scope, x: x, {"x": (sp.F32, v)}, ["y"]).close()),
    "Function.__init__.dynamic": ("int32_t", lambda o, v: sp.Function(
        lambda scope, x: x, {"x": (sp.F32, 1)}, ["y"], dynamic=v).close()),
    "Function.__init__.recompile_limit": ("int32_t", lambda o, v: sp.Function(
        lambda scope, x: x, {"x": (sp.F32, 1)}, ["y"], recompile_limit=v).close()),
    "Function.__init__.stance": ("int32_t", lambda o, v: sp.Function(
        lambda scope, x: x, {"x": (sp.F32, 1)}, ["y"], stance=v).close()),
    "Function.__init__.num_threads": ("int32_t", lambda o, v: sp.Function(
        lambda scope, x: x, {"x": (sp.F32, 1)}, ["y"], num_threads=v).close()),
    "function.inputs": ("size_t", lambda o, v: sp.function(
        inputs={"x": (sp.F32, v)}, outputs=["y"])(lambda scope, x: x).close()),
    "Function.mark_dynamic.axis": ("int64_t", lambda o, v: o.f.mark_dynamic("x", v)),
    "Function.mark_dynamic.min": ("int64_t", lambda o, v: o.f.mark_dynamic("x", 0, v)),
    "Function.mark_dynamic.max": ("int64_t", lambda o, v: o.f.mark_dynamic("x", 0, 0, v)),
    "Function.mark_static.axis": ("int64_t", lambda o, v: o.f.mark_static("x", v)),
    "Function.mark_unbacked.axis": ("int64_t", lambda o, v: o.f.mark_unbacked("x", v)),
    "Function.maybe_mark_dynamic.axis": ("int64_t", lambda o, v: o.f.maybe_mark_dynamic("x", v)),
    "scan.axis": ("int64_t", lambda o, v: sp.scan(lambda c, x: (c, x), o.x.sum(0), o.x, axis=v)),
    "while_loop.max_trips": ("int64_t", lambda o, v: sp.while_loop(
        lambda c: c.sum() > 0.0, lambda c: c, o.x, max_trips=v)),
    "Function.set_stance.stance": ("int32_t", lambda o, v: o.f.set_stance(v)),
    "Program.input_default.input": ("size_t", lambda o, v: _default(o, v)),
    "Program.input_default_fill.input": ("size_t", lambda o, v: _default_fill(o, v)),
    "Program.variable_is_unbacked.var": ("int64_t", lambda o, v: o.p.variable_is_unbacked(v)),
    "Program.variable_origin.var": ("int64_t", lambda o, v: o.p.variable_origin(v)),
    "Program.variable_bounds.var": ("int64_t", lambda o, v: o.p.variable_bounds(v)),
    "Program.variant_guards.v": ("size_t", lambda o, v: o.p.variant_guards(v)),
    "Program.vmap.in_axes": ("int64_t", lambda o, v: o.p.vmap([v, None]).close()),
    "Program.vmap.out_axes": ("int64_t", lambda o, v: o.p.vmap([0, None], out_axes=[v, 0]).close()),
    "Program.select_variant.shapes": ("int64_t", lambda o, v: o.p.select_variant(
        {"x": (v, 4), "m": 1})),
    "Program.cost.kind": ("int32_t", lambda o, v: o.p.cost(v)),
    "Program.cost_bounds.kind": ("int32_t", lambda o, v: o.p.cost_bounds(v)),
    "Program.cost_unbounded_reason.kind": ("int32_t", lambda o, v: o.p.cost_unbounded_reason(v)),
    "Program.check_shapes.shapes": ("int64_t", lambda o, v: o.p.check_shapes(
        {"x": (2, 4), "m": v})),
    "Program.output_shapes.shapes": ("int64_t", lambda o, v: o.p.output_shapes(
        {"x": (2, v), "m": 1})),
    "Program.runtime.num_threads": ("int32_t", lambda o, v: o.p.runtime(num_threads=v).close()),
    "Program.runtime.plan_cache_capacity": ("size_t", lambda o, v: o.p.runtime(
        plan_cache_capacity=v).close()),
    "Program.runtime.bound_allocation": ("size_t", lambda o, v: o.p.runtime(
        bound_allocation=v).close()),
    "Runtime.__init__.num_threads": ("int32_t", lambda o, v: sp.Runtime(o.p, num_threads=v)),
    "Runtime.__init__.plan_cache_capacity": ("size_t", lambda o, v: sp.Runtime(
        o.p, plan_cache_capacity=v)),
    "Runtime.__init__.bound_allocation": ("size_t", lambda o, v: sp.Runtime(
        o.p, bound_allocation=v)),
    "Program.runtime.max_loop_iterations": ("int64_t", lambda o, v: o.p.runtime(
        max_loop_iterations=v).close()),
    "Runtime.__init__.max_loop_iterations": ("int64_t", lambda o, v: sp.Runtime(
        o.p, max_loop_iterations=v)),
    "Runtime.dry_run.shapes": ("int64_t", lambda o, v: o.rt.dry_run({"x": (v, 4), "m": 1})),
    "Runtime.cost.kind": ("int32_t", lambda o, v: o.rt.cost(v, {"x": (2, 4), "m": 1})),
    "Runtime.cost.shapes": ("int64_t", lambda o, v: o.rt.cost(0, {"x": (2, 4), "m": v})),
    "Runtime.output_shape.i": ("size_t", lambda o, v: _after_run(o).output_shape(v)),
    "Runtime.output_dim_bounds.i": ("size_t", lambda o, v: _after_run(o).output_dim_bounds(v, 0)),
    "Runtime.output_dim_bounds.axis": ("size_t", lambda o, v: _after_run(o).output_dim_bounds(
        0, v)),
    "Runtime.variant_plans_built.v": ("size_t", lambda o, v: o.rt.variant_plans_built(v)),
    "Runtime.variant_cache_hits.v": ("size_t", lambda o, v: o.rt.variant_cache_hits(v)),
    # Not introspectable (**inputs: Any): the value of a dim input, by keyword and by dict.
    "Runtime.__call__.inputs": ("int64_t", lambda o, v: o.rt(x=o.a, m=v)),
    "Runtime.run.inputs": ("int64_t", lambda o, v: o.rt.run({"x": o.a, "m": v})),
    "Runtime.run_into.inputs": ("int64_t", lambda o, v: o.rt.run_into(
        {"x": o.a, "m": v}, {"y": np.empty(3, np.float32), "m2": np.empty((), np.int64)})),
    "Scope.__init__.ranges": ("int64_t", lambda o, v: sp.Scope(ranges={"b": (v, None)}).close()),
    "Scope.declare.min": ("int64_t", lambda o, v: o.s.declare("q", v, None)),
    "Scope.declare.max": ("int64_t", lambda o, v: o.s.declare("q", 1, v)),
    "Scope.check.a": ("int64_t", lambda o, v: o.s.check(v, ">=", 0)),
    "Scope.check.b": ("int64_t", lambda o, v: o.s.check(o.n, "!=", v)),
    "Scope.set_hint.value": ("int64_t", lambda o, v: o.s.set_hint("n", v)),
    "Scope.set_guard_policy.policy": ("int32_t", lambda o, v: o.s.set_guard_policy(v)),
    "Scope.assume.a": ("int64_t", lambda o, v: o.s.assume(v, ">=", 0)),
    "Scope.assume.b": ("int64_t", lambda o, v: o.s.assume(o.n, "!=", v)),
    "Scope.dim.x": ("int64_t", lambda o, v: o.s.dim(v)),
    "Scope.parse_shape.like": ("int64_t", lambda o, v: o.s.parse_shape("_", like=[v])),
    "Scope.dims.shape": ("int64_t", lambda o, v: o.s.dims([v, 2])),
    "Scope.solve.shapes": ("int64_t", lambda o, v: o.s.solve({"b": (v,)})),
    "Scope.input.shape": ("int64_t", lambda o, v: o.s.input("z", sp.F32, [v])),
    "Scope.input.like": ("int64_t", lambda o, v: o.s.input("z", sp.F32, "_", like=[v])),
    "Scope.input.rank": ("int64_t", lambda o, v: o.s.input("z", sp.F32, "...", rank=v)),
    "Scope.iota.shape": ("int64_t", lambda o, v: o.s.iota(sp.I32, [v], 0)),
    "Scope.iota.axis": ("int64_t", lambda o, v: o.s.iota(sp.I32, [3], v)),
    "Scope.dim_value.dim": ("int64_t", lambda o, v: o.s.dim_value(v)),
    "Tensor.unary.op": ("int32_t", lambda o, v: o.x.unary(v)),
    "Tensor.binary.op": ("int32_t", lambda o, v: o.x.binary(v, o.x)),
    "Tensor.broadcast_to.shape": ("int64_t", lambda o, v: o.x.broadcast_to(v, o.n, 4)),
    "Tensor.reshape.shape": ("int64_t", lambda o, v: o.x.reshape(o.n, v)),
    "Tensor.transpose.permutation": ("int64_t", lambda o, v: o.x.transpose(v, 0)),
    "Tensor.slice.start": ("int64_t", lambda o, v: o.x.slice([0, v])),
    "Tensor.slice.limit": ("int64_t", lambda o, v: o.x.slice(None, [o.n, v])),
    "Tensor.slice.strides": ("int64_t", lambda o, v: o.x.slice(None, None, [1, v])),
    "Tensor.pad.low": ("int64_t", lambda o, v: o.x.pad([0, v], [0, 0])),
    "Tensor.pad.high": ("int64_t", lambda o, v: o.x.pad([0, 0], [0, v])),
    "Tensor.reduce.op": ("int32_t", lambda o, v: o.x.reduce(v, 1)),
    "Tensor.reduce.axes": ("int64_t", lambda o, v: o.x.reduce(0, v)),
    "Tensor.sum.axes": ("int64_t", lambda o, v: o.x.sum(v)),
    "Tensor.mean.axes": ("int64_t", lambda o, v: o.x.mean([v])),
    "Tensor.max.axes": ("int64_t", lambda o, v: o.x.max(v)),
    "Tensor.min.axes": ("int64_t", lambda o, v: o.x.min(v)),
    "Tensor.prod.axes": ("int64_t", lambda o, v: o.x.prod(v)),
    "Tensor.dot_general.lhs_batch": ("int64_t", lambda o, v: o.x.dot_general(
        o.x, [v], [0], [], [])),
    "Tensor.dot_general.rhs_batch": ("int64_t", lambda o, v: o.x.dot_general(
        o.x, [0], [v], [], [])),
    "Tensor.dot_general.lhs_contracting": ("int64_t", lambda o, v: o.x.dot_general(
        o.x, [], [], [v], [1])),
    "Tensor.dot_general.rhs_contracting": ("int64_t", lambda o, v: o.x.dot_general(
        o.x, [], [], [1], [v])),
    "Tensor.softmax.axis": ("int64_t", lambda o, v: o.x.softmax(v)),
    "Tensor.layer_norm.axis": ("int64_t", lambda o, v: o.x.layer_norm(v)),
    "Tensor.cumsum.axis": ("int64_t", lambda o, v: o.x.cumsum(v)),
    "Tensor.take.axis": ("int64_t", lambda o, v: o.x.take(o.s.constant(np.array([0])), v)),
    "Tensor.take_along_axis.axis": ("int64_t", lambda o, v: o.x.take_along_axis(
        o.s.constant(np.zeros((1, 4), np.int64)), v)),
    "Tensor.scatter_add.axis": ("int64_t", lambda o, v: o.x.scatter_add(
        o.s.constant(np.array([0])), o.s.constant(np.ones((1, 4), np.float32)), v)),
    "Tensor.scatter.axis": ("int64_t", lambda o, v: o.x.scatter(
        o.s.constant(np.array([0])), o.s.constant(np.ones((1, 4), np.float32)), v)),
    "Tensor.scatter.reduction": ("int64_t", lambda o, v: o.x.scatter(
        o.s.constant(np.array([0])), o.s.constant(np.ones((1, 4), np.float32)), 0, v)),
    "Tensor.attention.causal": ("int64_t", lambda o, v: o.s.constant(
        np.zeros((1, 2, 4), np.float32)).attention(o.s.constant(np.zeros((1, 3, 4), np.float32)),
                                                   o.s.constant(np.zeros((1, 3, 2), np.float32)),
                                                   o.s.constant(np.array(True)), 0.0, v)),
    "Tensor.reverse.axes": ("int64_t", lambda o, v: o.x.reverse(v)),
    "Tensor.trilu.k": ("int64_t", lambda o, v: o.x.trilu(v)),
    "Tensor.top_k.k": ("int64_t", lambda o, v: o.x.top_k(v)),
    "Tensor.top_k.axis": ("int64_t", lambda o, v: o.x.top_k(1, v)),
    "Tensor.boolean_mask.axis": ("int64_t", lambda o, v: o.x.boolean_mask(
        o.s.constant(np.ones(4, bool)), v)),
    "Tensor.size_from_value.min": ("int64_t", lambda o, v: o.k.size_from_value(None, v)),
    "Tensor.size_from_value.max": ("int64_t", lambda o, v: o.k.size_from_value(None, 0, v)),
    "Tensor.conv.strides": ("int64_t", lambda o, v: o.img.conv(o.w, strides=seq(v, 2))),
    "Tensor.conv.dilations": ("int64_t", lambda o, v: o.img.conv(o.w, dilations=seq(v, 2))),
    "Tensor.conv.pads": ("int64_t", lambda o, v: o.img.conv(o.w, pads=seq(v, 4, 0))),
    "Tensor.conv.auto_pad": ("int32_t", lambda o, v: o.img.conv(o.w, auto_pad=v)),
    "Tensor.conv.groups": ("int64_t", lambda o, v: o.img.conv(o.w, groups=v)),
    "Tensor.conv_transpose.strides": ("int64_t", lambda o, v: o.img.conv_transpose(
        o.w, strides=seq(v, 2))),
    "Tensor.conv_transpose.dilations": ("int64_t", lambda o, v: o.img.conv_transpose(
        o.w, dilations=seq(v, 2))),
    "Tensor.conv_transpose.pads": ("int64_t", lambda o, v: o.img.conv_transpose(
        o.w, pads=seq(v, 4, 0))),
    "Tensor.conv_transpose.output_padding": ("int64_t", lambda o, v: o.img.conv_transpose(
        o.w, strides=[2, 2], output_padding=seq(v, 2, 0))),
    "Tensor.conv_transpose.auto_pad": ("int32_t", lambda o, v: o.img.conv_transpose(
        o.w, auto_pad=v)),
    "Tensor.conv_transpose.groups": ("int64_t", lambda o, v: o.img.conv_transpose(
        o.w, groups=v)),
    "Tensor.max_pool.kernel_shape": ("int64_t", lambda o, v: o.img.max_pool(seq(v, 2))),
    "Tensor.max_pool.strides": ("int64_t", lambda o, v: o.img.max_pool([1, 1], seq(v, 2))),
    "Tensor.max_pool.dilations": ("int64_t", lambda o, v: o.img.max_pool(
        [1, 1], dilations=seq(v, 2))),
    "Tensor.max_pool.pads": ("int64_t", lambda o, v: o.img.max_pool([1, 1], pads=seq(v, 4, 0))),
    "Tensor.max_pool.auto_pad": ("int32_t", lambda o, v: o.img.max_pool([1, 1], auto_pad=v)),
    "Tensor.avg_pool.kernel_shape": ("int64_t", lambda o, v: o.img.avg_pool(seq(v, 2))),
    "Tensor.avg_pool.strides": ("int64_t", lambda o, v: o.img.avg_pool([1, 1], seq(v, 2))),
    "Tensor.avg_pool.dilations": ("int64_t", lambda o, v: o.img.avg_pool(
        [1, 1], dilations=seq(v, 2))),
    "Tensor.avg_pool.pads": ("int64_t", lambda o, v: o.img.avg_pool([1, 1], pads=seq(v, 4, 0))),
    "Tensor.avg_pool.auto_pad": ("int32_t", lambda o, v: o.img.avg_pool([1, 1], auto_pad=v)),
    "Tensor.reduce_window.op": ("int32_t", lambda o, v: o.x.reduce_window(v, [1, 1])),
    "Tensor.reduce_window.window": ("int64_t", lambda o, v: o.x.reduce_window("sum", [1, v])),
    "Tensor.reduce_window.strides": ("int64_t", lambda o, v: o.x.reduce_window(
        "sum", [1, 1], strides=[1, v])),
    "Tensor.reduce_window.window_dilation": ("int64_t", lambda o, v: o.x.reduce_window(
        "sum", [1, 1], window_dilation=[1, v])),
    "Tensor.reduce_window.base_dilation": ("int64_t", lambda o, v: o.x.reduce_window(
        "sum", [1, 1], base_dilation=[1, v])),
    "Tensor.reduce_window.pad_low": ("int64_t", lambda o, v: o.x.reduce_window(
        "sum", [1, 1], pad_low=[0, v])),
    "Tensor.reduce_window.pad_high": ("int64_t", lambda o, v: o.x.reduce_window(
        "sum", [1, 1], pad_high=[0, v])),
    "Tensor.log_softmax.axis": ("int64_t", lambda o, v: o.x.log_softmax(v)),
    "Tensor.lrn.size": ("int64_t", lambda o, v: o.img.lrn(v)),
    "Tensor.pad_mode.low": ("int64_t", lambda o, v: o.x.pad_mode([0, v], [0, 0])),
    "Tensor.pad_mode.high": ("int64_t", lambda o, v: o.x.pad_mode([0, 0], [0, v])),
    "Tensor.pad_mode.mode": ("int32_t", lambda o, v: o.x.pad_mode([0, 0], [0, 0], v)),
    "Tensor.depth_to_space.blocksize": ("int64_t", lambda o, v: o.img.depth_to_space(v)),
    "Tensor.depth_to_space.mode": ("int32_t", lambda o, v: o.img.depth_to_space(1, v)),
    "Tensor.space_to_depth.blocksize": ("int64_t", lambda o, v: o.img.space_to_depth(v)),
    "code_string.code": ("int32_t", lambda o, v: sp.code_string(v)),
    "concatenate.axis": ("int64_t", lambda o, v: sp.concatenate([o.x, o.x], v)),
    "load.max_bytes": ("size_t", lambda o, v: _load(o, v)),
    "loads.max_bytes": ("size_t", lambda o, v: sp.loads(o.data, max_bytes=v).close()),
    "max.a": ("int64_t", lambda o, v: sp.max(v, o.n)),
    "max.b": ("int64_t", lambda o, v: sp.max(o.n, v)),
    "max.more": ("int64_t", lambda o, v: sp.max(o.n, 1, v)),
    "min.a": ("int64_t", lambda o, v: sp.min(v, o.n)),
    "min.b": ("int64_t", lambda o, v: sp.min(o.n, v)),
    "min.more": ("int64_t", lambda o, v: sp.min(o.n, 1, v)),
    "zeros.shape": ("int64_t", lambda o, v: sp.zeros(sp.F32, (v, 2))),
}
# A valid value for each case's parameter, where the C type's usual 1 does not fit.
GOOD = {"int64_t": 1, "int32_t": 1, "size_t": 1}
GOOD_FOR = {
    "Program.vmap.in_axes": 0,
    "Program.vmap.out_axes": 1,
    "Scope.check.a": 5, "Scope.assume.a": 5, "Dim.__pow__.exponent": 2,
    "Function.__init__.stance": 0,
    "Function.set_stance.stance": 0, "Function.__init__.dynamic": 0, "Tensor.unary.op": 0,
    "Tensor.binary.op": 0, "Tensor.reduce.op": 0, "Tensor.reduce_window.op": 0,
    "Program.input_default.input": 1, "Program.input_default_fill.input": 1,
    "Program.variant_guards.v": 0,
    "Runtime.variant_plans_built.v": 0, "Runtime.variant_cache_hits.v": 0,
    "Runtime.output_shape.i": 0, "Runtime.output_dim_bounds.i": 0,
    "Runtime.output_dim_bounds.axis": 0, "Tensor.conv.auto_pad": 0,
    "Tensor.conv_transpose.auto_pad": 0, "Tensor.max_pool.auto_pad": 0,
    "Tensor.avg_pool.auto_pad": 0, "Tensor.pad_mode.mode": 0, "Tensor.depth_to_space.mode": 0,
    "Program.cost.kind": 0, "Program.cost_bounds.kind": 0, "Program.cost_unbounded_reason.kind": 0,
    "Runtime.cost.kind": 0, "Program.variable_is_unbacked.var": 0,
    "Program.variable_origin.var": 0, "Program.variable_bounds.var": 0,
    "Tensor.reduce.axes": 1, "Tensor.transpose.permutation": 1, "Tensor.dot_general.lhs_batch": 0,
    "Tensor.dot_general.rhs_batch": 0, "Tensor.size_from_value.max": 10,
    "Scope.declare.min": 1, "Scope.declare.max": 10, "Tensor.take.axis": 0,
    "Tensor.take_along_axis.axis": 0,
    "Tensor.attention.causal": 0, "Tensor.scatter.axis": 0, "Tensor.scatter.reduction": 1,
    "Tensor.scatter_add.axis": 0, "Tensor.boolean_mask.axis": 1, "Runtime.cost.shapes": 3,
    "Tensor.reduce_window.pad_low": 0, "Tensor.reduce_window.pad_high": 0,
    "Tensor.pad.low": 0, "Tensor.pad.high": 0, "Tensor.pad_mode.low": 0,
    "Tensor.pad_mode.high": 0, "Tensor.conv.pads": 0, "Tensor.conv_transpose.pads": 0,
    "Tensor.max_pool.pads": 0, "Tensor.avg_pool.pads": 0, "Tensor.conv_transpose.output_padding": 0,
    "Program.output_shapes.shapes": 4, "load.max_bytes": 1 << 20, "loads.max_bytes": 1 << 20,
    "Function.mark_dynamic.axis": 0, "Function.mark_dynamic.min": 0,
    "Function.mark_dynamic.max": 100, "Function.mark_static.axis": 0,
    "Function.mark_unbacked.axis": 0, "Function.maybe_mark_dynamic.axis": 0, "scan.axis": 0,
    "while_loop.max_trips": 3,
    "Tensor.lrn.size": 3, "Scope.iota.axis": 0, "concatenate.axis": 0,
    "Tensor.reshape.shape": 4,
}


def _pow(o, v):
    r = o.n.__pow__(v)
    if r is NotImplemented:  # a float exponent: Python then raises TypeError
        raise sp.ArgumentNotInteger("exponent", _lib.SHP_INVALID_ARGUMENT)
    return r


def _default(o, v):
    with sp.Scope() as s:
        x = s.input("x", sp.F32, "n")
        p = s.program([x, s.parameter("w", np.ones(2, np.float32))], {"y": x})
    try:
        return p.input_default(v)
    finally:
        p.close()


def _default_fill(o, v):
    with sp.Scope() as s:
        x = s.input("x", sp.F64, "n")
        p = s.program([x], {"y": x * x})
    jp = p.jvp(["x"], default_tangents=1.0)  # inputs x, x.tangent (fill 1)
    try:
        return jp.input_default_fill(v)
    finally:
        jp.close()
        p.close()


def _after_run(o):
    o.rt(x=o.a, m=2)
    return o.rt


def _load(o, v):
    import os
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "p.shpoly")
        o.p.save(path)
        sp.load(path, max_bytes=v).close()


def test_every_public_integer_parameter_has_a_case():
    found = public_int_parameters()
    assert len(found) > 100
    missing = sorted(found - set(CASES) - set(NOT_C_INTEGERS))
    assert not missing, "integer parameters without a case in CASES: %s" % missing
    stale = sorted(k for k in set(CASES) - found if not k.startswith("Runtime.__call__")
                   and not k.startswith("Runtime.run"))
    assert not stale, "cases of parameters that no longer exist: %s" % stale


# As JAX (issue 38), `d + 3.7` makes the dim an f32 scalar tensor (dim_value): nothing is
# truncated, so floats are checked by test_a_float_with_a_dim_is_a_tensor_not_a_dim instead.
DIM_ARITHMETIC_WITH_FLOATS = {"Dim.__%s__.b" % op for op in
                              ("add", "radd", "sub", "rsub", "mul", "rmul")}


def bad_values(cname, key):
    vals = list(BAD[cname])
    if key in DIM_ARITHMETIC_WITH_FLOATS:
        vals = [v for v in vals if not isinstance(v, (float, np.floating))]
    if cname == "int32_t" and key.endswith((".kind",)):
        pass
    return vals


@pytest.mark.parametrize("key", sorted(CASES))
def test_every_public_integer_parameter_refuses_wrapping_values(key):
    cname, call = CASES[key]
    o = Objects()
    try:
        for bad in bad_values(cname, key):
            with pytest.raises(TYPED) as e:
                call(o, bad)
            msg = e.value.message
            assert e.value.code == _lib.SHP_INVALID_ARGUMENT
            if isinstance(e.value, sp.ArgumentOutOfRange):
                assert str(int(bad)) in msg and cname in msg, msg  # the value and the range
        # The objects are still usable: the same call with a valid value works.
        call(o, GOOD_FOR.get(key, GOOD[cname]))
    finally:
        o.close()


def test_a_float_with_a_dim_is_a_tensor_not_a_dim():
    with sp.Scope() as s:
        n = s.var("n")
        for r in (n + 3.7, 3.7 + n, n - 3.7, 3.7 - n, n * 3.7, 3.7 * n):
            assert isinstance(r, sp.Tensor) and r.dtype == sp.F32 and r.shape == ()
        with pytest.raises(sp.ArgumentNotInteger):
            n // 3.7
        with pytest.raises(sp.ArgumentNotInteger):
            sp.max(n, 3.7)


def test_the_issue_examples():
    o = Objects()
    try:
        with pytest.raises(sp.ArgumentOutOfRange, match=r"dim value = 18446744073709551621"):
            o.s.dim(2 ** 64 + 5)
        with pytest.raises(sp.ArgumentOutOfRange, match="declare: max"):
            o.s.declare("q", 1, 2 ** 64 + 10)
        with pytest.raises(sp.ArgumentOutOfRange, match=r"shapes\['x'\]\[1\]"):
            o.p.check_shapes({"x": (2, 2 ** 64 + 2), "m": 1})
        with pytest.raises(sp.ArgumentOutOfRange, match=r"num_threads.*int32_t"):
            o.p.runtime(num_threads=2 ** 32 + 3)
        with pytest.raises(sp.ArgumentOutOfRange, match="recompile_limit"):
            sp.Function(lambda s, x: x, {"x": (sp.F32, 1)}, ["y"], recompile_limit=2 ** 32 + 3)
        with pytest.raises(sp.ArgumentOutOfRange, match=r"max_bytes = -1 .*size_t"):
            sp.loads(o.data, max_bytes=-1)
        with pytest.raises(sp.ArgumentNotInteger, match="input 'm'"):
            o.rt(x=o.a, m=3.7)
        with pytest.raises(sp.ArgumentOutOfRange, match="18446744073709551615"):
            o.s.dim(np.uint64(2 ** 64 - 1))
        # Still exact where they fit.
        assert o.s.dim(np.uint64(2 ** 63 - 1)).constant == 2 ** 63 - 1
        assert o.rt(x=o.a, m=np.int32(3))["m2"] == 6
        assert o.p.check_shapes({"x": (2, 4), "m": np.int64(5)}) == {"n": 2, "m": 5}
        # Typed: both are InvalidArgument; out of range is a ValueError, a non-integer a
        # TypeError.
        assert issubclass(sp.ArgumentOutOfRange, (sp.InvalidArgument, ValueError))
        assert issubclass(sp.ArgumentNotInteger, TypeError)
    finally:
        o.close()
