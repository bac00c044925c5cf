"""Control flow traced from Python functions, as JAX writes it: cond, while_loop, scan.

Each function is traced once into a subprogram of the enclosing scope (shapepoly.h, "Control
flow"). Arguments and results are pytrees of tensors: a Tensor, None, or tuples, lists and dicts
of them. Tensors a function uses from the enclosing computation (closures) become operands of the
op automatically (shp_program_create_body's captures).
"""

import ctypes
from typing import Any, Callable, List, Optional, Sequence, Tuple

from . import _lib
from ._core import Dim, Scope, Tensor
from ._errors import check, int_arg
from ._program import Program

L = _lib.lib
_vp = ctypes.c_void_p
_byref = ctypes.byref

__all__ = ["cond", "while_loop", "scan"]


# ---- pytrees: (leaves, rebuild) --------------------------------------------------------------

def _flatten(x: Any, what: str) -> Tuple[List[Tensor], Any]:
    if x is None:
        return [], None
    if isinstance(x, Tensor):
        return [x], "*"
    if isinstance(x, (tuple, list)):
        leaves: List[Tensor] = []
        defs = []
        for item in x:
            lv, d = _flatten(item, what)
            leaves += lv
            defs.append((len(lv), d))
        return leaves, (type(x), defs)
    if isinstance(x, dict):
        keys = sorted(x)
        lv, d = _flatten([x[k] for k in keys], what)
        return lv, (dict, keys, d)
    raise TypeError("shapepoly: %s must be tensors, or tuples, lists or dicts of tensors, "
                    "not %s" % (what, type(x).__name__))


def _unflatten(tree: Any, leaves: Sequence[Any]) -> Any:
    if tree is None:
        return None
    if tree == "*":
        return leaves[0]
    if tree[0] is dict:
        _, keys, d = tree
        return dict(zip(keys, _unflatten(d, leaves)))
    kind, defs = tree
    out, pos = [], 0
    for n, d in defs:
        out.append(_unflatten(d, leaves[pos:pos + n]))
        pos += n
    return kind(out) if kind is tuple else list(out)


def _scope_of(*trees: Sequence[Tensor]) -> Optional[Scope]:
    for leaves in trees:
        for t in leaves:
            return t.scope
    return None


class _Body:
    """A function traced on fresh inputs of the given types: its program, captures and
    result tree."""

    def __init__(self, scope: Scope, fn: Callable[..., Any], args_tree: Any,
                 specs: Sequence[Tuple[str, Tensor]], what: str) -> None:
        self.scope = scope
        self.fn = fn
        self.what = what
        with scope._lock:
            self.mark = L.shp_scope_trace_mark(scope._h())
        self.inputs = [scope.input(name, like.dtype, like.shape) for name, like in specs]
        result = fn(*_unflatten(args_tree, self.inputs))
        self.outputs, self.out_tree = _flatten(result, "the results of " + what)
        self.program, self.captures = self.cut([])

    def cut(self, given: Sequence[Tensor]) -> Tuple[Program, List[Tensor]]:
        with self.scope._lock:  # older tensors, the scope's variables, the given: enough
            cap = self.mark + L.shp_scope_variable_count(self.scope._h()) + len(given) + 1
        caps = (_vp * cap)(*[t._ptr for t in given])
        n = ctypes.c_size_t(len(given))
        ins = (_vp * max(len(self.inputs), 1))(*[t._ptr for t in self.inputs])
        outs = (_vp * max(len(self.outputs), 1))(*[t._ptr for t in self.outputs])
        prog = _vp()
        with self.scope._lock:
            check(L.shp_program_create_body(self.scope._h(), self.mark, ins, len(self.inputs),
                                            outs, len(self.outputs), caps, cap, _byref(n),
                                            _byref(prog)))
        return Program(prog.value), [Tensor(self.scope, caps[i]) for i in range(n.value)]

    def with_captures(self, union: Sequence[Tensor]) -> Program:
        """The program taking exactly `union` (which holds all of its captures) as captures."""
        if [t._ptr for t in union] == [t._ptr for t in self.captures]:
            return self.program
        return self.cut(union)[0]


def _union(*lists: Sequence[Tensor]) -> List[Tensor]:
    seen, out = set(), []
    for lst in lists:
        for t in lst:
            if t._ptr not in seen:
                seen.add(t._ptr)
                out.append(t)
    return out


def _results(scope: Scope, count: int, fn: Callable[..., Any], *args: Any) -> List[Tensor]:
    arr = (_vp * max(count, 1))()
    with scope._lock:
        check(fn(*args, arr, count))
    return [Tensor(scope, arr[i]) for i in range(count)]


def _ptrs(ts: Sequence[Tensor]) -> Any:
    return (_vp * max(len(ts), 1))(*[t._h() for t in ts])


def cond(pred: Any, true_fn: Callable[..., Any], false_fn: Callable[..., Any],
         *operands: Any) -> Any:
    """lax.cond / torch.cond: true_fn(*operands) if `pred` (a bool scalar tensor) else
    false_fn(*operands), with only the taken branch running. Both branches return the same
    structure of tensors with the same dtypes and ranks; a dim whose sizes are not provably
    equal (or that a branch computes from data) becomes a new data-dependent size (u0, ...)
    set by the branch that runs. A Python bool picks the branch now, as tracing would."""
    if isinstance(pred, bool):
        return true_fn(*operands) if pred else false_fn(*operands)
    if not isinstance(pred, Tensor):
        raise TypeError("shapepoly.cond: pred must be a bool scalar tensor or a bool, not %s"
                        % type(pred).__name__)
    leaves, tree = _flatten(list(operands), "cond's operands")
    scope = pred.scope
    specs = [("operand%d" % i, t) for i, t in enumerate(leaves)]
    t = _Body(scope, true_fn, tree, specs, "the true branch")
    f = _Body(scope, false_fn, tree, specs, "the false branch")
    if t.out_tree != f.out_tree:
        raise TypeError("shapepoly.cond: the branches return different structures: %r and %r"
                        % (t.out_tree, f.out_tree))
    caps = _union(t.captures, f.captures)
    tp, fp = t.with_captures(caps), f.with_captures(caps)
    ops = leaves + caps
    res = _results(scope, len(t.outputs), L.shp_tensor_cond, scope._h(), pred._h(), tp._h(),
                   fp._h(), _ptrs(ops), len(ops))
    return _unflatten(t.out_tree, res)


def while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any], init_val: Any,
               max_trips: Optional[int] = None) -> Any:
    """lax.while_loop: val = init_val; while cond_fun(val): val = body_fun(val); returns val.
    cond_fun returns a bool scalar tensor; body_fun returns a value of init_val's structure,
    dtypes and shapes. `max_trips` bounds the iterations (a run that would exceed it fails with
    ConstraintViolation)."""
    leaves, tree = _flatten(init_val, "while_loop's init_val")
    scope = _scope_of(leaves)
    if scope is None:
        raise ValueError("shapepoly.while_loop: init_val holds no tensor")
    specs = [("carry%d" % i, t) for i, t in enumerate(leaves)]
    args = (list, [(len(leaves), tree)])
    c = _Body(scope, cond_fun, args, specs, "while_loop's cond_fun")
    b = _Body(scope, body_fun, args, specs, "while_loop's body_fun")
    if b.out_tree != tree:
        raise TypeError("shapepoly.while_loop: body_fun returns another structure than "
                        "init_val")
    caps = _union(c.captures, b.captures)
    cp, bp = c.with_captures(caps), b.with_captures(caps)
    trips = -1 if max_trips is None else int_arg(max_trips, "max_trips", lo=0)
    res = _results(scope, len(leaves), L.shp_tensor_while_loop, scope._h(), cp._h(), bp._h(),
                   _ptrs(leaves), len(leaves), _ptrs(caps), len(caps), trips)
    return _unflatten(tree, res)


def scan(f: Callable[[Any, Any], Any], init: Any, xs: Any = None,
         length: Optional[Any] = None, reverse: bool = False, axis: int = 0) -> Any:
    """lax.scan: for each slice x of xs along `axis` (reversed with `reverse`): carry, y =
    f(carry, x); returns (carry, ys) with the ys stacked along `axis`. The length is a dim
    (symbolic sequence lengths); `length` gives it when xs is None. f returns (carry, y) with
    the carry of init's structure, dtypes and shapes; y may be None."""
    c_leaves, c_tree = _flatten(init, "scan's init")
    x_leaves, x_tree = _flatten(xs, "scan's xs")
    scope = _scope_of(c_leaves, x_leaves)
    if scope is None:
        if isinstance(length, Dim):
            scope = length.scope
        else:
            raise ValueError("shapepoly.scan: init and xs hold no tensor (give a Dim length)")
    ax = int_arg(axis, "axis", lo=0)
    slices = []
    for i, x in enumerate(x_leaves):
        shape = x.shape
        if len(shape) <= ax:
            raise ValueError("shapepoly.scan: xs[%d] has rank %d, no axis %d to scan"
                             % (i, len(shape), ax))
        slices.append(("x%d" % i, _Spec(x.dtype, shape[:ax] + shape[ax + 1:])))
    specs = [("carry%d" % i, t) for i, t in enumerate(c_leaves)] + slices
    args = (list, [(len(c_leaves), c_tree), (len(x_leaves), x_tree)])
    body = _Body(scope, f, args, specs, "scan's f")
    out = body.out_tree
    if not (isinstance(out, tuple) and out[0] in (tuple, list) and len(out[1]) == 2):
        raise TypeError("shapepoly.scan: f must return a pair (carry, y)")
    (nc, carry_tree), (ny, y_tree) = out[1]
    if carry_tree != c_tree:
        raise TypeError("shapepoly.scan: f returns a carry of another structure than init")
    n_out = len(body.outputs)
    dim = None if length is None else scope.dim(length)
    res = _results(scope, n_out, L.shp_tensor_scan, scope._h(), body.program._h(),
                   _ptrs(c_leaves), len(c_leaves), _ptrs(x_leaves), len(x_leaves),
                   _ptrs(body.captures), len(body.captures), ax,
                   None if dim is None else dim._h(), bool(reverse))
    return _unflatten(carry_tree, res[:nc]), _unflatten(y_tree, res[nc:])


class _Spec:
    """A dtype and shape standing for a tensor in _Body's specs."""

    def __init__(self, dtype: Any, shape: Any) -> None:
        self.dtype = dtype
        self.shape = tuple(shape)
