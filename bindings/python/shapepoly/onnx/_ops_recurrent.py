"""ONNX converters: recurrent layers (LSTM, GRU, RNN).

A layer of a fixed sequence length up to UNROLL_STEPS is unrolled over its sequence axis: one
cell (matmuls and elementwise ops) per step. A symbolic or longer sequence is one `scan` whose
body is the cell (the carry is h, and c for LSTM), so torch/JAX exports with a dynamic sequence
length import; the batch may stay symbolic either way. The input projection X W^T is one matmul
over all steps; each step adds H R^T. sequence_lens is run-time data: a step past a sequence's
length keeps its state and gives zeros in Y (masks; the scan gets the step index as an xs).
"""

from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from .._control_flow import scan
from .._core import Tensor, concatenate
from ._import import FLOATS, CHECKS, ImportError_, Importer, Val, _const_like, converter

# Each unrolled step is a handful of ops: a fixed length up to this is unrolled (no per-step
# control-flow overhead), a longer or symbolic one becomes a scan.
UNROLL_STEPS = 1024
DIRECTIONS = {"forward": 1, "reverse": 1, "bidirectional": 2}
GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
DEFAULT_ACTIVATIONS = {"LSTM": ["Sigmoid", "Tanh", "Tanh"], "GRU": ["Sigmoid", "Tanh"],
                       "RNN": ["Tanh"]}
# Lower-case name -> (default alpha, default beta); None: the function takes no such value,
# NEEDED: it does but has no default. The defaults are those of the ONNX ops of the same name,
# as the spec says (onnxruntime takes 0 for ThresholdedRelu, Affine and ScaledTanh instead).
NEEDED = float("nan")
ACTIVATIONS: Dict[str, Tuple[Optional[float], Optional[float]]] = {
    "sigmoid": (None, None), "tanh": (None, None), "relu": (None, None),
    "softsign": (None, None), "softplus": (None, None),
    "leakyrelu": (0.01, None), "thresholdedrelu": (1.0, None), "elu": (1.0, None),
    "hardsigmoid": (0.2, 0.5), "scaledtanh": (NEEDED, NEEDED), "affine": (1.0, 0.0),
}


def _names(at: Dict[str, Any]) -> List[str]:
    return [a.decode() if isinstance(a, bytes) else str(a) for a in at.get("activations", [])]


def _check(imp: Importer, at: Dict[str, Any], node: Any) -> Optional[str]:
    """Attribute values refused before converting (listed with the unsupported ops)."""
    d = at.get("direction", "forward")
    if d not in DIRECTIONS:
        return "direction=%s" % d
    if at.get("layout", 0) not in (0, 1):
        return "layout=%s" % at.get("layout")
    bad = [a for a in _names(at) if a.lower() not in ACTIVATIONS]
    return "activations=%s" % ",".join(bad) if bad else None


for _op in GATES:
    CHECKS[_op] = _check


Act = Callable[[Tensor], Tensor]


def _activation(name: str, alpha: Optional[float], beta: Optional[float]) -> Act:
    n = name.lower()
    c = lambda v, x: x.scope.constant(np.array(v, x.dtype.numpy))  # noqa: E731
    return {
        "sigmoid": lambda x: x.logistic(),
        "tanh": lambda x: x.tanh(),
        "relu": lambda x: x.maximum(c(0, x)),
        "softsign": lambda x: x.softsign(),
        "softplus": lambda x: x.softplus(),
        "leakyrelu": lambda x: x.leaky_relu(alpha),
        "thresholdedrelu": lambda x: (x > c(alpha, x)).select(x, c(0, x)),
        "elu": lambda x: x.elu(alpha),
        "hardsigmoid": lambda x: x.hard_sigmoid(alpha, beta),
        "scaledtanh": lambda x: (x * c(beta, x)).tanh() * c(alpha, x),
        "affine": lambda x: x * c(alpha, x) + c(beta, x),
    }[n]


def _activations(op: str, at: Dict[str, Any], dirs: int) -> List[List[Act]]:
    """The activation functions of each direction. activation_alpha and activation_beta are
    consumed in the order of the functions, each by those that take such a value (as
    onnxruntime reads them); a function without one given takes its op's default."""
    per = len(DEFAULT_ACTIVATIONS[op])
    names = _names(at) or DEFAULT_ACTIVATIONS[op] * dirs
    if len(names) != per * dirs:
        raise ImportError_("activations lists %d functions; %s with %d direction(s) needs %d" %
                           (len(names), op, dirs, per * dirs))
    alphas = list(at.get("activation_alpha", []))
    betas = list(at.get("activation_beta", []))
    fns = []
    for name in names:
        da, db = ACTIVATIONS[name.lower()]
        a = (alphas.pop(0) if alphas else da) if da is not None else None
        b = (betas.pop(0) if betas else db) if db is not None else None
        if any(v is not None and v != v for v in (a, b)):  # NEEDED and not given
            raise ImportError_("activation %s needs activation_alpha and activation_beta "
                               "values (ONNX gives it no defaults)" % name)
        fns.append(_activation(name, a, b))
    return [fns[d * per:(d + 1) * per] for d in range(dirs)]


def _row(t: Tensor, i: int) -> Tensor:
    """t[i] of a tensor (n, ...), as a tensor (...)."""
    dims = list(t.shape)
    return t.slice([i] + [0] * (len(dims) - 1), [i + 1] + [None] * (len(dims) - 1)).reshape(
        dims[1:])


def _cols(t: Tensor, k: int, h: Any, n: int = 1) -> Tensor:
    """The columns [k*h, (k+n)*h) of the last axis of t: gates k..k+n-1 of size h."""
    rank = t.ndim
    return t.slice([0] * (rank - 1) + [k * h], [None] * (rank - 1) + [(k + n) * h])


@converter("LSTM", "GRU", "RNN")
def _recurrent(ctx, node, ins, at):
    op = node.op_type
    arg = lambda i: ins[i] if len(ins) > i else None  # noqa: E731 (None: omitted)
    x = ctx.t(ins[0])
    if x.dtype not in FLOATS:
        raise ImportError_("input X has element type %s; %s needs f32 or f64" % (x.dtype.name,
                                                                                 op))
    if x.ndim != 3:
        raise ImportError_("input X has rank %d; expected 3" % x.ndim)
    layout = at.get("layout", 0) if ctx.opset >= 14 else 0
    if layout:  # batch-major: work seq-major, transpose back at the end
        x = x.transpose(1, 0, 2)
    steps, batch, _ = ctx.shape(x)
    unroll = isinstance(steps, int) and steps <= UNROLL_STEPS
    direction = at.get("direction", "forward")
    dirs = DIRECTIONS[direction]
    gates = GATES[op]
    w = ctx.t(ins[1], x.dtype)
    r = ctx.t(ins[2], x.dtype)
    hidden = ctx.shape(r)[-1]
    _check_shapes(ctx, at, op, dirs, gates, hidden, w, r)
    acts = _activations(op, at, dirs)
    clip = at.get("clip")

    def act(fn: Act, v: Tensor) -> Tensor:
        return fn(v.clip(-clip, clip) if clip is not None else v)

    def state(i: int) -> Optional[Tensor]:  # initial_h / initial_c as (dirs, batch, hidden)
        v = arg(i)
        if v is None:
            return None
        t = ctx.t(v, x.dtype)
        return t.transpose(1, 0, 2) if layout else t

    h0, c0 = state(5), state(6) if op == "LSTM" else None
    bias = ctx.t(arg(3), x.dtype) if arg(3) is not None else None
    peep = ctx.t(arg(7), x.dtype) if op == "LSTM" and arg(7) is not None else None
    lens = _lengths(ctx, arg(4), steps)
    zeros = ctx.scope.constant(np.zeros((), x.dtype.numpy)).broadcast_to([batch, hidden])
    one = _const_like(ctx, 1, x)
    cell = {"LSTM": _lstm_cell, "GRU": _gru_cell, "RNN": _rnn_cell}[op]
    want_y = len(node.output) > 0 and bool(node.output[0])

    ys, hs, cs = [], [], []
    for d in range(dirs):
        wt = _row(w, d).transpose(1, 0)  # (input, gates*hidden)
        rt = _row(r, d).transpose(1, 0)  # (hidden, gates*hidden)
        b = _row(bias, d) if bias is not None else None
        wb = _cols(b, 0, hidden, gates) if b is not None else None
        rb = _cols(b, gates, hidden, gates) if b is not None else None
        # X W^T for every step at once, with the biases that are plain sums.
        xw = x.matmul(wt)
        if b is not None:
            if op == "GRU" and at.get("linear_before_reset", 0):
                # The hidden gate's recurrence bias goes inside r * (...): add z's and r's only.
                xw = xw + wb + concatenate([_cols(rb, 0, hidden, 2), _zeros(ctx, rb, hidden)])
            else:
                xw = xw + wb + rb
        p = {"rt": rt, "rb": rb, "hidden": hidden, "one": one, "acts": acts[d], "act": act,
             "lbr": at.get("linear_before_reset", 0), "input_forget": at.get("input_forget", 0)}
        if peep is not None:
            pd = _row(peep, d)
            p["peep"] = [_cols(pd, k, hidden) for k in range(3)]  # i, o, f
        h = _row(h0, d) if h0 is not None else zeros
        c = (_row(c0, d) if c0 is not None else zeros) if op == "LSTM" else None
        backward = direction == "reverse" or d == 1

        def step(xw_t: Tensor, t: Any, h: Tensor, c: Optional[Tensor],
                 p: Dict[str, Any] = p) -> Tuple[Any, ...]:
            """One step: the next h and c, and y_t (t: the step index, a number or a scalar
            tensor)."""
            hn, cn = cell(xw_t, h, c, p)
            if lens is None:
                return hn, cn, hn
            # Past a sequence's end: keep the state, output zeros.
            keep = (lens > t).reshape([batch, 1]).broadcast_to([batch, hidden])
            return (keep.select(hn, h), keep.select(cn, c) if cn is not None else None,
                    keep.select(hn, zeros) if want_y else None)

        if unroll:
            y: List[Optional[Tensor]] = [None] * steps
            for t in (range(steps - 1, -1, -1) if backward else range(steps)):
                h, c, y[t] = step(_row(xw, t), t, h, c)
            y_all = concatenate([v.reshape([1, 1, batch, hidden]) for v in y], 0) \
                if want_y and steps else None
        else:
            h, c, y_all = _scan_steps(ctx, step, xw, h, c, lens, want_y, backward)
            if y_all is not None:
                y_all = y_all.reshape([steps, 1, batch, hidden])
        if want_y and y_all is None:  # no step at all
            y_all = zeros.reshape([1, 1, batch, hidden]).slice([0, 0, 0, 0], [0, 1, None, None])
        if lens is not None:  # an empty sequence has no last state: zeros (onnxruntime's)
            nonempty = (lens > 0).reshape([batch, 1]).broadcast_to([batch, hidden])
            h = nonempty.select(h, zeros)
            c = nonempty.select(c, zeros) if c is not None else None
        if want_y:
            ys.append(y_all)
        hs.append(h.reshape([1, batch, hidden]))
        if c is not None:
            cs.append(c.reshape([1, batch, hidden]))

    def out(parts: List[Tensor], axis: int, perm: List[int]) -> Tensor:
        t = parts[0] if len(parts) == 1 else concatenate(parts, axis)
        return t.transpose(*perm) if layout else t

    outs = [Val(out(ys, 1, [2, 0, 1, 3])) if want_y else None, Val(out(hs, 0, [1, 0, 2]))]
    if op == "LSTM":
        outs.append(Val(out(cs, 0, [1, 0, 2])))
    return outs


def _scan_steps(ctx: Importer, step: Callable[..., Tuple[Any, ...]], xw: Tensor, h: Tensor,
                c: Optional[Tensor], lens: Optional[Tensor], want_y: bool, backward: bool
                ) -> Tuple[Tensor, Optional[Tensor], Optional[Tensor]]:
    """The steps as one scan over axis 0 of xw (steps, batch, gates*hidden): the final h and c
    and Y (steps, batch, hidden) or None. With sequence_lens, the step index is an xs too."""
    xs = [xw]
    if lens is not None:
        xs.append(ctx.scope.iota(lens.dtype, [ctx.shape(xw)[0]], 0))

    def body(carry: Any, x: Any) -> Any:
        hn, cn, y = step(x[0], x[1] if lens is not None else None, carry[0],
                         carry[1] if c is not None else None)
        return ((hn, cn) if c is not None else (hn,)), (y if want_y else None)

    carry, ys = scan(body, (h, c) if c is not None else (h,), xs, reverse=backward)
    return carry[0], carry[1] if c is not None else None, ys


def _zeros(ctx: Importer, like: Tensor, n: Any) -> Tensor:
    return ctx.scope.constant(np.zeros((), like.dtype.numpy)).broadcast_to([n])


def _check_shapes(ctx: Importer, at: Dict[str, Any], op: str, dirs: int, gates: int,
                  hidden: Any, w: Tensor, r: Tensor) -> None:
    """The sizes that the converter relies on, where they are known now."""
    if w.ndim != 3 or r.ndim != 3:
        raise ImportError_("W and R must have rank 3, got %d and %d" % (w.ndim, r.ndim))
    if "hidden_size" in at and isinstance(hidden, int) and at["hidden_size"] != hidden:
        raise ImportError_("hidden_size=%d but R has hidden size %d" % (at["hidden_size"],
                                                                        hidden))
    for name, t in (("W", w), ("R", r)):
        n, g = ctx.shape(t)[:2]
        if isinstance(n, int) and n != dirs:
            raise ImportError_("%s has %d direction(s), direction=%s needs %d" %
                               (name, n, at.get("direction", "forward"), dirs))
        if isinstance(g, int) and isinstance(hidden, int) and g != gates * hidden:
            raise ImportError_("%s has %d rows, %s needs %d (%d gates of hidden size %d)" %
                               (name, g, op, gates * hidden, gates, hidden))


def _lengths(ctx: Importer, v: Optional[Val], steps: Any) -> Optional[Tensor]:
    """sequence_lens as a tensor (batch,), or None when there is none or it is a constant that
    says every sequence is full (no masks needed)."""
    if v is None:
        return None
    if v.tensor is None and v.host is not None and v.host.dtype != object and \
            isinstance(steps, int) and np.all(v.host == steps):
        return None
    return ctx.t(v)


def _lstm_cell(xw: Tensor, h: Tensor, c: Tensor, p: Dict[str, Any]
               ) -> Tuple[Tensor, Tensor]:
    f, g, hact = p["acts"]
    act, n = p["act"], p["hidden"]
    z = xw + h.matmul(p["rt"])  # gates i, o, f, c
    i, o, fg, cg = (_cols(z, k, n) for k in range(4))
    if "peep" in p:  # i and f see the previous cell state, o the new one
        pi, po, pf = p["peep"]
        i, fg = i + pi * c, fg + pf * c
    i = act(f, i)
    fg = p["one"] - i if p["input_forget"] else act(f, fg)  # coupled: f = 1 - i
    c = fg * c + i * act(g, cg)
    if "peep" in p:
        o = o + po * c
    # onnxruntime clips the gates' inputs only, not the cell state that h reads.
    return act(f, o) * hact(c), c


def _gru_cell(xw: Tensor, h: Tensor, c: None, p: Dict[str, Any]) -> Tuple[Tensor, None]:
    f, g = p["acts"]
    act, n, rt = p["act"], p["hidden"], p["rt"]
    if p["lbr"]:  # h R^T once; the reset gate scales its hidden-gate part (with its bias)
        hr = h.matmul(rt)
        z = act(f, _cols(xw, 0, n) + _cols(hr, 0, n))
        rg = act(f, _cols(xw, 1, n) + _cols(hr, 1, n))
        hh = _cols(hr, 2, n)
        if p["rb"] is not None:
            hh = hh + _cols(p["rb"], 2, n)
        cand = act(g, _cols(xw, 2, n) + rg * hh)
    else:  # the reset gate scales h before its product with Rh
        hr = h.matmul(_cols(rt, 0, n, 2))
        z = act(f, _cols(xw, 0, n) + _cols(hr, 0, n))
        rg = act(f, _cols(xw, 1, n) + _cols(hr, 1, n))
        cand = act(g, _cols(xw, 2, n) + (rg * h).matmul(_cols(rt, 2, n)))
    return (p["one"] - z) * cand + z * h, None


def _rnn_cell(xw: Tensor, h: Tensor, c: None, p: Dict[str, Any]) -> Tuple[Tensor, None]:
    return p["act"](p["acts"][0], xw + h.matmul(p["rt"])), None
