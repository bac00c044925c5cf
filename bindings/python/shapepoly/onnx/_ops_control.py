"""ONNX control flow, for the programs of this library (straight-line, symbolic shapes):

- If: a condition known while importing (a constant, or decided by the shape facts) imports the
  taken branch only; a condition computed at run time imports both branches and selects between
  their results, which must then have provably equal shapes and the same element types (both
  branches run; ONNX ops have no side effects, so only a run-time check in the branch not taken,
  such as an index out of range, can tell the difference).
- Loop: unrolled when its trip count M is a constant (at most MAX_UNROLL iterations). A
  condition computed at run time masks the iterations after it turns false (the carried values
  keep their value), which needs carried values of unchanging shapes and no scan outputs.
- Scan (opset >= 9): unrolled along the scan axis when its length is a constant.
A trip count or sequence length that is symbolic or computed at run time is refused naming the
node: it needs a loop op in the library (see the control-flow issue).
"""

from typing import Any, List, Optional

import numpy as np

from .._core import BOOL, Dim, Tensor, Truth, concatenate
from ._import import ImportError_, Importer, Val, _axis, converter

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


@converter("If")
def _if(ctx, node, ins, at):
    name = "'%s' (If)" % (node.name or node.output[0])
    c = _host_bool(ins[0])
    if c is not None:
        branch = "then_branch" if c else "else_branch"
        return ctx.run_graph(at[branch], [], "the %s of %s" % (branch, name))
    then = ctx.run_graph(at["then_branch"], [], "the then_branch of %s" % name)
    other = ctx.run_graph(at["else_branch"], [], "the else_branch of %s" % name)
    if len(then) != len(other):
        raise ImportError_("the branches have %d and %d outputs" % (len(then), len(other)))
    return _select_all(ctx, ctx.t(ins[0], BOOL).reshape(()), then, other,
                       "the condition is computed at run time, so both branches run and "
                       "output %d is selected")


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
    if m is None:
        raise ImportError_("a Loop without a trip count M runs until a condition computed at "
                           "run time; only loops with a constant trip count are unrolled")
    trip = _host_int(m, "trip count")
    if trip is None:
        raise ImportError_("the trip count M is %s; only a constant trip count is unrolled "
                           "(programs are straight-line)" %
                           ("symbolic" if m.host is not None else "computed at run time"))
    if trip > MAX_UNROLL:
        raise ImportError_("the trip count %d is above the unroll limit %d" % (trip, MAX_UNROLL))
    active: Any = True if cond is None else _host_bool(cond)
    if active is None:
        active = ctx.t(cond, BOOL).reshape(())
    scans: List[List[Tensor]] = [[] for _ in range(n_scan)]
    for i in range(max(trip, 0)):
        if active is False:
            break
        masked = not isinstance(active, bool)
        if masked and n_scan:
            raise ImportError_("scan outputs of a loop whose condition is computed at run time "
                               "have a run-time length")
        cin = Val(host=np.array(True)) if not masked else Val(tensor=active)
        outs = ctx.run_graph(body, [Val(host=np.array(i, np.int64)), cin] + state,
                             "the body of %s, iteration %d" % (name, i))
        new = outs[1:1 + len(state)]
        for k, v in enumerate(outs[1 + len(state):]):
            scans[k].append(ctx.t(v))
        if masked:  # after the condition turned false, the carried values stay
            state = _select_all(ctx, active, new, state, "carried value %d of a loop whose "
                                "condition is computed at run time")
            active = active & ctx.t(outs[0], BOOL).reshape(())
        else:
            state = new
            c = _host_bool(outs[0])
            active = ctx.t(outs[0], BOOL).reshape(()) if c is None else c
    return state + [Val(_stack(ctx, xs, 0, name)) for xs in scans]


@converter("Scan")
def _scan(ctx, node, ins, at):
    name = "'%s' (Scan)" % (node.name or node.output[0])
    if ctx.opset < 9:
        raise ImportError_("Scan of opset 8 (with a batch axis and sequence_lens) is not "
                           "supported; re-export at opset 9 or newer")
    body = at["body"]
    m = at["num_scan_inputs"]
    n = len(ins) - m
    if m < 1 or n < 0:
        raise ImportError_("num_scan_inputs=%d for %d inputs" % (m, len(ins)))
    state = list(ins[:n])
    xs = [ctx.t(v) for v in ins[n:]]
    k = len(body.output) - n
    in_axes = list(at.get("scan_input_axes", [0] * m))
    in_dirs = list(at.get("scan_input_directions", [0] * m))
    out_axes = list(at.get("scan_output_axes", [0] * k))
    out_dirs = list(at.get("scan_output_directions", [0] * k))
    if len(in_axes) != m or len(in_dirs) != m or len(out_axes) != k or len(out_dirs) != k:
        raise ImportError_("the scan axes and directions do not match the %d scan inputs and "
                           "%d scan outputs" % (m, k))
    in_axes = [_axis(a, x.ndim) for a, x in zip(in_axes, xs)]
    lengths = {ctx.shape(x)[a] for x, a in zip(xs, in_axes)}
    if len(lengths) != 1 or not isinstance(next(iter(lengths)), int):
        raise ImportError_("the scan length is %s; only a constant length is unrolled "
                           "(programs are straight-line)" %
                           " and ".join(sorted(str(d) for d in lengths)))
    length = lengths.pop()
    if length > MAX_UNROLL:
        raise ImportError_("the scan length %d is above the unroll limit %d" %
                           (length, MAX_UNROLL))
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
