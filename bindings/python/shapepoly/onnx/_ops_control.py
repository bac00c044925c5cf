"""ONNX control flow, onto the library's control-flow ops (cond, while_loop, scan; see
shapepoly/_control_flow.py) where a trip count or condition is computed at run time:

- If: a condition known while importing (a constant, or decided by the shape facts) imports the
  taken branch only; a condition computed at run time becomes a cond whose branches are the
  subgraphs traced as functions (values of the enclosing graphs they read become operands). The
  branches' outputs must have the same element types and ranks; a dim whose sizes are not
  provably equal becomes a data-dependent size set by the branch that runs.
- Loop: unrolled when its trip count M is a constant (at most MAX_UNROLL iterations; a condition
  computed at run time then masks the iterations after it turns false). Otherwise a while_loop
  over (iteration i64, condition, carried values) that runs while i < M and the condition holds,
  or, when the loop has scan outputs, a scan of length M (times the initial condition): scan
  outputs need a loop that cannot stop early (no condition input, or a body whose condition
  output is its condition input or true); M may be a size, or computed at run time (then a
  data-dependent size). Carried values keep their element types and shapes.
- Scan (opset >= 9; opset 8 without sequence_lens): unrolled along the scan axis when its length
  is a constant (at most MAX_UNROLL); otherwise a scan, the inputs transposed (and reversed where
  their direction differs from the scan's) to scan axis 0, the outputs moved to their axes.
"""

from typing import Any, Dict, List, Optional, Sequence

import numpy as np
import onnx

from .._control_flow import cond as sp_cond
from .._control_flow import scan as sp_scan
from .._control_flow import while_loop as sp_while_loop
from .._core import BOOL, I64, Dim, Tensor, Truth, concatenate
from ._import import ImportError_, Importer, Val, _axis, _int, converter
from ._ops_sequence import describe, flatten, is_value, kind, unflatten

MAX_UNROLL = 1024


def _host_int(v: Optional[Val], what: str) -> Optional[int]:
    """The value of a one-element input known while importing (a constant Dim too), or None
    when it is computed at run time or symbolic."""
    if v is None or v.host is None:
        return None
    a = v.host.reshape(-1)
    if a.size != 1:
        raise ImportError_("the %s has %d elements, not 1" % (what, a.size))
    x = a[0]
    return x.constant if isinstance(x, Dim) else int(x)


def _host_bool(v: Optional[Val]) -> Optional[bool]:
    """A condition known while importing (a comparison of sizes decided by the shape facts
    included), or None."""
    x = _host_int(v, "condition")
    return None if x is None else bool(x)


def _same_shapes(ctx: Importer, a: Tensor, b: Tensor, what: str) -> None:
    if a.dtype != b.dtype:
        raise ImportError_("%s: the element types differ (%s and %s)" % (what, a.dtype.name,
                                                                        b.dtype.name))
    sa, sb = ctx.shape(a), ctx.shape(b)
    ok = len(sa) == len(sb) and all(
        (x == y) if isinstance(x, int) and isinstance(y, int) else
        (ctx.scope.dim(x).compare("==", y) is Truth.TRUE) for x, y in zip(sa, sb))
    if not ok:
        raise ImportError_("%s: the shapes (%s) and (%s) are not provably equal" % (
            what, ", ".join(map(str, sa)), ", ".join(map(str, sb))))


def _names_read(graph: Any, out: set) -> set:
    """The names `graph` (and the subgraphs in it) reads, its outputs included."""
    for n in graph.node:
        out.update(x for x in n.input if x)
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                _names_read(a.g, out)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for g in a.graphs:
                    _names_read(g, out)
    out.update(o.name for o in graph.output)
    return out


def _outer(ctx: Importer, graphs: Sequence[Any]) -> Dict[str, Val]:
    """What the subgraphs read of the enclosing graphs' host values, copied for tracing them as
    the body of a control-flow op: a host value materialized inside the body keeps its tensor
    (one of the body's) on the copy, never on the value the enclosing graph goes on using. A
    floating-point initializer becomes its parameter now, outside the body (a parameter is an
    input of the program; the body reads it as a closure)."""
    names: set = set()
    for g in graphs:
        _names_read(g, names)
    out = {}
    for name in sorted(names):
        v = ctx.vals.get(name)
        if v is None or v.tensor is not None or v.host is None:
            continue
        if v.param is not None and ctx.parameters and v.host.dtype.kind == "f":
            ctx.t(v)
            continue
        out[name] = Val(host=v.host, etype=v.etype, narrow=v.narrow)
    return out


def _tensors(ctx: Importer, vals: Sequence[Val]) -> List[Tensor]:
    return [ctx.t(v) for v in vals]


def _vals(ts: Sequence[Tensor]) -> List[Val]:
    return [Val(t) for t in ts]


def _run_body(ctx: Importer, graph: Any, inputs: Sequence[Optional[Val]], where: str,
              outer: Dict[str, Val]) -> List[Val]:
    """run_graph for a subgraph traced as the body of a control-flow op. A data-dependent size
    it makes stays the body's own (its runtime reads it per run); a cond's result whose size
    differs between the branches gets a data-dependent size set by the branch that runs, and
    a loop refuses a carried value or scan output whose size the body computes from data."""
    return ctx.run_graph(graph, inputs, where, outer)


@converter("If")
def _if(ctx, node, ins, at):
    name = "'%s' (If)" % (node.name or node.output[0])
    c = _host_bool(ins[0])
    if c is not None:
        branch = "then_branch" if c else "else_branch"
        return ctx.run_graph(at[branch], [], "the %s of %s" % (branch, name))
    n_then, n_else = len(at["then_branch"].output), len(at["else_branch"].output)
    if n_then != n_else:
        raise ImportError_("the branches have %d and %d outputs" % (n_then, n_else))
    pred = ctx.t(ins[0], BOOL).reshape(())
    outer = _outer(ctx, [at["then_branch"], at["else_branch"]])
    # Sequences and optionals (_ops_sequence.py) go through the cond as their tensors: both
    # branches must give the same structure (sequences of one length, optionals both empty
    # or both holding a value).
    structures: Dict[str, List[Any]] = {}

    def branch(key: str) -> Any:
        def fn() -> List[Tensor]:
            outs = _run_body(ctx, at[key], [], "the %s of %s" % (key, name), outer)
            flat = [flatten(v) for v in outs]
            structures[key] = [st for st, _ in flat]
            return _tensors(ctx, [x for _, xs in flat for x in xs])
        return fn
    then_fn, else_fn = branch("then_branch"), branch("else_branch")

    def checked_else() -> List[Tensor]:
        res = else_fn()
        for k, (a, b) in enumerate(zip(structures["then_branch"], structures["else_branch"])):
            if a != b:
                raise ImportError_("output %d of the branches is %s and %s: a condition "
                                   "computed at run time needs the same form from both "
                                   "branches (sequences of one length, optionals both empty "
                                   "or both holding a value)" % (k, describe(a), describe(b)))
        return res
    res = _vals(sp_cond(pred, then_fn, checked_else))
    return [unflatten(st, res) for st in structures["then_branch"]]


def _select_all(ctx: Importer, pred: Tensor, xs: List[Val], ys: List[Val], what: str
                ) -> List[Val]:
    """pred ? x : y for each pair, which must have provably equal shapes (`what` % k says
    why in the error)."""
    outs = []
    for k, (a, b) in enumerate(zip(xs, ys)):
        ta, tb = ctx.t(a), ctx.t(b)
        _same_shapes(ctx, ta, tb, what % k)
        outs.append(Val(pred.broadcast_to(ta.shape).select(ta, tb)))
    return outs


def _stack(ctx: Importer, xs: List[Tensor], axis: int, what: str) -> Tensor:
    """The tensors (of one shape) stacked along a new `axis`."""
    if not xs:
        raise ImportError_("%s: no iterations, so the shape of its scan outputs is unknown" %
                           what)
    shape = ctx.shape(xs[0])
    ys = [x.reshape([1] + ctx.shape(x)) for x in xs]
    y = ys[0] if len(ys) == 1 else concatenate(ys, 0)
    rank = len(shape) + 1
    axis = _axis(axis, rank)
    if axis:
        perm = list(range(1, axis + 1)) + [0] + list(range(axis + 1, rank))
        y = y.transpose(perm)
    return y


@converter("Loop")
def _loop(ctx, node, ins, at):
    name = "'%s' (Loop)" % (node.name or node.output[0])
    body = at["body"]
    m = ins[0] if len(ins) > 0 else None
    cond = ins[1] if len(ins) > 1 else None
    state = list(ins[2:])
    n_scan = len(body.output) - 1 - len(state)
    if n_scan < 0:
        raise ImportError_("the body has %d outputs for %d carried values" %
                           (len(body.output), len(state)))
    if len(body.input) != 2 + len(state):
        raise ImportError_("the body takes %d inputs for %d carried values (it takes the "
                           "iteration number, the condition, then the carried values)" %
                           (len(body.input), len(state)))
    trip = None if m is None else _host_int(m, "trip count")
    c0 = None if cond is None else _host_bool(cond)
    seqs = [k for k, v in enumerate(state) if is_value(v)]
    if seqs and (trip is None or trip > MAX_UNROLL or (cond is not None and c0 is None)):
        raise ImportError_("%s carries %s (carried value %d), which needs the loop unrolled "
                           "while importing: a trip count known while importing (at most %d) "
                           "and no condition computed at run time; here %s" % (
                               name, kind(state[seqs[0]]), seqs[0], MAX_UNROLL,
                               "the trip count is computed at run time" if trip is None and
                               (m is not None) else "there is no trip count" if m is None
                               else "the trip count is %d" % trip if trip > MAX_UNROLL
                               else "the condition is computed at run time"))
    if trip is not None and trip <= MAX_UNROLL and not (n_scan and cond is not None and
                                                        c0 is None):
        return _unroll_loop(ctx, name, body, trip, cond, state, n_scan)
    if n_scan:
        return _loop_scan(ctx, name, body, m, cond, c0, state, n_scan)
    return _loop_while(ctx, name, body, m, cond, state)


def _unroll_loop(ctx: Importer, name: str, body: Any, trip: int, cond: Optional[Val],
                 state: List[Val], n_scan: int) -> List[Val]:
    """The loop unrolled (a constant trip count); a condition computed at run time masks the
    iterations after it turns false."""
    active: Any = True if cond is None else _host_bool(cond)
    if active is None:
        active = ctx.t(cond, BOOL).reshape(())
    scans: List[List[Tensor]] = [[] for _ in range(n_scan)]
    for i in range(max(trip, 0)):
        if active is False:
            break
        masked = not isinstance(active, bool)
        cin = Val(host=np.array(True)) if not masked else Val(tensor=active)
        outs = ctx.run_graph(body, [Val(host=np.array(i, np.int64)), cin] + state,
                             "the body of %s, iteration %d" % (name, i))
        new = outs[1:1 + len(state)]
        for k, v in enumerate(outs[1 + len(state):]):
            if is_value(v):
                raise ImportError_("scan output %d of %s is %s, not a tensor" % (k, name,
                                                                                kind(v)))
            scans[k].append(ctx.t(v))
        if masked and any(is_value(v) for v in new + state):
            raise ImportError_("%s carries a sequence or optional and its body computes its "
                               "condition at run time (iteration %d): the loop may stop "
                               "at a point known only at run time, so the carried value's "
                               "length is not known while importing" % (name, i))
        if masked:  # after the condition turned false, the carried values stay
            state = _select_all(ctx, active, new, state, "carried value %d of a loop whose "
                                "condition is computed at run time")
            active = active & ctx.t(outs[0], BOOL).reshape(())
        else:
            state = new
            c = _host_bool(outs[0])
            active = ctx.t(outs[0], BOOL).reshape(()) if c is None else c
    return state + [Val(_stack(ctx, xs, 0, name)) for xs in scans]


def _zero_i64(ctx: Importer) -> Tensor:
    return ctx.scope.constant(np.array(0, np.int64))


def _loop_while(ctx: Importer, name: str, body: Any, m: Optional[Val], cond: Optional[Val],
                state: List[Val]) -> List[Val]:
    """A while_loop over (i, condition, carried values) while i < M and the condition."""
    init = [_zero_i64(ctx),
            ctx.scope.constant(np.array(True)) if cond is None else
            ctx.t(cond, BOOL).reshape(())] + _tensors(ctx, state)
    trips = None if m is None else ctx.t(m, I64).reshape(())
    outer = _outer(ctx, [body])
    where = "the body of %s" % name

    def cond_fun(carry: List[Tensor]) -> Tensor:
        i, c = carry[0], carry[1]
        return c if trips is None else (i < trips).logical_and(c)

    def body_fun(carry: List[Tensor]) -> List[Tensor]:
        outs = _run_body(ctx, body, _vals(carry), where, outer)
        return [carry[0] + _one_i64(ctx), ctx.t(outs[0], BOOL).reshape(())] + \
            _tensors(ctx, outs[1:len(carry) - 1])
    return _vals(sp_while_loop(cond_fun, body_fun, init)[2:])


def _one_i64(ctx: Importer) -> Tensor:
    return ctx.scope.constant(np.array(1, np.int64))


def _loop_scan(ctx: Importer, name: str, body: Any, m: Optional[Val], cond: Optional[Val],
               c0: Optional[bool], state: List[Val], n_scan: int) -> List[Val]:
    """A loop with scan outputs as a scan of length max(M, 0) (0 when the initial condition is
    false): the loop may not stop early, which the body shows by passing its condition on (or
    computing true) when given true."""
    if m is None:
        raise ImportError_("%s has scan outputs but no trip count M: it runs until its "
                           "condition turns false, so its scan outputs have a length known "
                           "only at run time, which the scan op cannot stack" % name)
    length: Any
    if m.host is not None:
        x = _int(m.host.reshape(-1)[0])
        length = max(x, 0) if isinstance(x, int) else ctx.scope.dim(x).max(0)
    else:
        length = None
    if c0 is False:
        length = 0
    elif length is None or (cond is not None and c0 is None):
        n = ctx.t(m, I64).reshape(()) if length is None else ctx.t(
            Val(host=np.array(length, dtype=object if isinstance(length, Dim) else np.int64)))
        n = n.maximum(_zero_i64(ctx))
        if cond is not None and c0 is None:
            n = ctx.t(cond, BOOL).reshape(()).select(n, _zero_i64(ctx))
        length = n.size_from_value(None, 0, None)
    n_state = len(state)
    outer = _outer(ctx, [body])
    where = "the body of %s" % name

    def f(carry: List[Tensor], _xs: Any) -> Any:
        i, st = carry[0], carry[1:]
        outs = _run_body(ctx, body, [Val(i), Val(host=np.array(True))] + _vals(st), where,
                             outer)
        if _host_bool(outs[0]) is not True:
            raise ImportError_("%s has scan outputs and its body computes its condition "
                               "(the loop may stop early), so the scan outputs have a length "
                               "known only at run time, which the scan op cannot stack" % name)
        return ([i + _one_i64(ctx)] + _tensors(ctx, outs[1:1 + n_state]),
                _tensors(ctx, outs[1 + n_state:]))
    carry, ys = sp_scan(f, [_zero_i64(ctx)] + _tensors(ctx, state), None, length=length)
    return _vals(carry[1:]) + _vals(ys)


@converter("Scan")
def _scan(ctx, node, ins, at):
    name = "'%s' (Scan)" % (node.name or node.output[0])
    body = at["body"]
    m = at["num_scan_inputs"]
    if ctx.opset < 9:  # batch axis 0, scan axis 1, sequence_lens first
        if ins and ins[0] is not None:
            raise ImportError_("Scan of opset 8 with sequence_lens is not supported; "
                               "re-export at opset 9 or newer")
        ins = ins[1:]
    n = len(ins) - m
    if m < 1 or n < 0:
        raise ImportError_("num_scan_inputs=%d for %d inputs" % (m, len(ins)))
    k = len(body.output) - n
    if ctx.opset < 9:
        dirs = list(at.get("directions", [0] * m))
        if len(dirs) != m:
            raise ImportError_("the directions do not match the %d scan inputs" % m)
        ts = _tensors(ctx, ins)

        def per_batch(carry: Any, sl: List[Tensor]) -> Any:
            outs = _scan_body(ctx, name, body, _vals(sl[:n]), sl[n:], [0] * m, dirs,
                              [0] * k, [0] * k)
            return [], _tensors(ctx, outs)
        return _vals(sp_scan(per_batch, [], ts)[1])
    in_axes = list(at.get("scan_input_axes", [0] * m))
    in_dirs = list(at.get("scan_input_directions", [0] * m))
    out_axes = list(at.get("scan_output_axes", [0] * k))
    out_dirs = list(at.get("scan_output_directions", [0] * k))
    if len(in_axes) != m or len(in_dirs) != m or len(out_axes) != k or len(out_dirs) != k:
        raise ImportError_("the scan axes and directions do not match the %d scan inputs and "
                           "%d scan outputs" % (m, k))
    return _scan_body(ctx, name, body, list(ins[:n]), [ctx.t(v) for v in ins[n:]], in_axes,
                      in_dirs, out_axes, out_dirs)


def _scan_body(ctx: Importer, name: str, body: Any, state: List[Val], xs: List[Tensor],
               in_axes: List[int], in_dirs: List[int], out_axes: List[int],
               out_dirs: List[int]) -> List[Val]:
    """Scan (opset 9's form): unrolled when the length is a constant up to MAX_UNROLL, else
    the scan op."""
    n, k = len(state), len(out_axes)
    in_axes = [_axis(a, x.ndim) for a, x in zip(in_axes, xs)]
    lengths = {ctx.shape(x)[a] for x, a in zip(xs, in_axes)}
    length = next(iter(lengths)) if len(lengths) == 1 else None
    if not isinstance(length, int) or not 0 < length <= MAX_UNROLL:
        return _scan_traced(ctx, name, body, state, xs, in_axes, in_dirs, out_axes, out_dirs)
    scans: List[List[Tensor]] = [[] for _ in range(k)]
    for t in range(length):
        slices = []
        for x, a, d in zip(xs, in_axes, in_dirs):
            i = length - 1 - t if d else t
            dims = ctx.shape(x)
            lo, hi = [0] * len(dims), list(dims)
            lo[a], hi[a] = i, i + 1
            slices.append(Val(x.slice(lo, hi).reshape(dims[:a] + dims[a + 1:])))
        outs = ctx.run_graph(body, state + slices, "the body of %s, step %d" % (name, t))
        state = outs[:n]
        for j, v in enumerate(outs[n:]):
            scans[j].append(ctx.t(v))
    ys = []
    for j in range(k):
        elems = scans[j][::-1] if out_dirs[j] else scans[j]
        ys.append(Val(_stack(ctx, elems, out_axes[j], name)))
    return state + ys


def _scan_traced(ctx: Importer, name: str, body: Any, state: List[Val], xs: List[Tensor],
                 in_axes: List[int], in_dirs: List[int], out_axes: List[int],
                 out_dirs: List[int]) -> List[Val]:
    """The scan op along axis 0: each input's scan axis moved first and, where its direction
    differs from the scan's (the inputs' majority), reversed; each output reversed where its
    direction differs, then moved to its axis."""
    rev = 2 * sum(1 for d in in_dirs if d) > len(in_dirs)
    moved = []
    for x, a, d in zip(xs, in_axes, in_dirs):
        if a:
            x = x.transpose([a] + [j for j in range(x.ndim) if j != a])
        moved.append(x.reverse(0) if bool(d) != rev else x)
    n = len(state)
    outer = _outer(ctx, [body])
    where = "the body of %s" % name

    def f(carry: List[Tensor], sl: List[Tensor]) -> Any:
        outs = _run_body(ctx, body, _vals(carry) + _vals(sl), where, outer)
        return _tensors(ctx, outs[:n]), _tensors(ctx, outs[n:])
    carry, ys = sp_scan(f, _tensors(ctx, state), moved, reverse=rev)
    out = []
    for y, a, d in zip(ys, out_axes, out_dirs):
        if bool(d) != rev:
            y = y.reverse(0)
        a = _axis(a, y.ndim)
        if a:
            y = y.transpose(list(range(1, a + 1)) + [0] + list(range(a + 1, y.ndim)))
        out.append(Val(y))
    return _vals(carry) + out
