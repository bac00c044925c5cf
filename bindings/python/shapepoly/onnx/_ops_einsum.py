"""ONNX Einsum, in general: any number of operands, `...`, repeated letters (diagonals), implicit
outputs. A contraction plan onto the library's ops: each operand's diagonals are taken (a mask
of iota == iota and a sum), letters that only one operand has and the output lacks are summed
out, then the operands are contracted left to right with dot_general (letters still needed later
are batch axes, the others contracted), and the result is transposed to the output's order.
"""

import string
from typing import Any, Dict, List, Tuple

import numpy as np

from .._core import I64, Dim, Tensor
from ._import import ImportError_, Importer, Val, _int, _pair, converter


def _parse(eq: str, ranks: List[int]) -> Tuple[List[str], str]:
    """The operands' and the output's letters, with each `...` replaced by fresh upper-case
    letters (right-aligned, as numpy broadcasts them)."""
    eq = eq.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise ImportError_("Einsum '%s' names %d operands, the node has %d" %
                           (eq, len(terms), len(ranks)))
    used = set(c for c in eq if c.isalpha())
    fresh = [c for c in string.ascii_uppercase + string.ascii_lowercase if c not in used]
    n_ell = 0
    for t, r in zip(terms, ranks):
        if "..." in t:
            n_ell = max(n_ell, r - len(t.replace("...", "")))
    if n_ell > len(fresh):
        raise ImportError_("Einsum '%s': too many axes under '...'" % eq)
    ell = "".join(fresh[:n_ell])
    out_terms = []
    for t, r in zip(terms, ranks):
        if t.count("...") > 1 or not all(c.isalpha() for c in t.replace("...", "")):
            raise ImportError_("Einsum '%s': operand '%s' is not letters and at most one "
                               "'...'" % (eq, t))
        if "..." in t:
            k = r - len(t.replace("...", ""))
            t = t.replace("...", ell[n_ell - k:] if k > 0 else "")
        if len(t) != r:
            raise ImportError_("Einsum '%s': operand '%s' has %d letters for rank %d" %
                               (eq, t, len(t), r))
        out_terms.append(t)
    if arrow:
        res = out.replace("...", ell)
        if not all(c.isalpha() for c in res) or len(set(res)) != len(res):
            raise ImportError_("Einsum '%s': the output '%s' must be distinct letters" % (eq, out))
    else:  # implicit: '...' then the letters that appear once, in alphabetical order
        counts: Dict[str, int] = {}
        for t in out_terms:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        res = ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    for c in res:
        if not any(c in t for t in out_terms):
            raise ImportError_("Einsum '%s': output letter '%s' is in no operand" % (eq, c))
    return out_terms, res


def _diagonal(ctx: Importer, x: Tensor, term: str) -> Tuple[Tensor, str]:
    """x with each repeated letter reduced to its diagonal (one axis)."""
    while len(set(term)) != len(term):
        c = next(c for c in term if term.count(c) > 1)
        i = term.index(c)
        j = term.index(c, i + 1)
        dims = ctx.shape(x)
        eye_shape = [1] * x.ndim
        eye_shape[i], eye_shape[j] = dims[i], dims[j]
        eye = ctx.scope.iota(I64, eye_shape, i) == ctx.scope.iota(I64, eye_shape, j)
        zero = ctx.scope.constant(np.zeros((), x.dtype.numpy))
        x = eye.select(x, zero).sum(j)
        term = term[:j] + term[j + 1:]
    return x, term


def _sizes(ctx: Importer, xs: List[Tensor], terms: List[str]) -> Dict[str, Any]:
    """Each letter's size: the one that is not 1 where operands broadcast."""
    size: Dict[str, Any] = {}
    for x, t in zip(xs, terms):
        for c, d in zip(t, ctx.shape(x)):
            if c not in size or (isinstance(size[c], int) and size[c] == 1):
                size[c] = d
    return size


def _contract(ctx: Importer, a: Tensor, ta: str, b: Tensor, tb: str, keep: str
              ) -> Tuple[Tensor, str]:
    """a and b contracted over their shared letters that `keep` lacks; shared letters in
    `keep` are batch axes. Result letters: batch, a's own, b's own."""
    shared = [c for c in ta if c in tb]
    size = _sizes(ctx, [a, b], [ta, tb])
    for x_is_a in (True, False):  # broadcast size-1 axes of a shared letter to the other's
        x, t = (a, ta) if x_is_a else (b, tb)
        dims = ctx.shape(x)
        target = [size[c] if c in shared else d for c, d in zip(t, dims)]
        if any(str(p) != str(q) for p, q in zip(dims, target)):
            x = x.broadcast_to([_int(d) if isinstance(d, Dim) else d for d in target])
        if x_is_a:
            a = x
        else:
            b = x
    batch = [c for c in shared if c in keep]
    contract = [c for c in shared if c not in keep]
    y = a.dot_general(b, [ta.index(c) for c in batch], [tb.index(c) for c in batch],
                      [ta.index(c) for c in contract], [tb.index(c) for c in contract])
    return y, "".join(batch) + "".join(c for c in ta if c not in tb) + \
        "".join(c for c in tb if c not in ta)


@converter("Einsum")
def _einsum(ctx, node, ins, at):
    xs = [ctx.t(v) for v in ins]
    if len(xs) == 2:
        xs = list(_pair(ctx, ins))
    elif len(xs) > 2:
        xs = [xs[0]] + [t.astype(xs[0].dtype) if t.dtype != xs[0].dtype else t for t in xs[1:]]
    if not xs:
        raise ImportError_("Einsum needs at least one operand")
    terms, res = _parse(at["equation"], [t.ndim for t in xs])
    ops = []
    for x, t in zip(xs, terms):
        x, t = _diagonal(ctx, x, t)
        ops.append((x, t))
    # Letters only one operand has and the output lacks: summed out first.
    for k, (x, t) in enumerate(ops):
        others = "".join(u for j, (_, u) in enumerate(ops) if j != k) + res
        drop = [i for i, c in enumerate(t) if c not in others]
        if drop:
            ops[k] = (x.sum(drop), "".join(c for c in t if c in others))
    x, t = ops[0]
    for k in range(1, len(ops)):
        later = "".join(u for _, u in ops[k + 1:]) + res
        x, t = _contract(ctx, x, t, ops[k][0], ops[k][1], later)
        drop = [i for i, c in enumerate(t) if c not in later]
        if drop:  # a letter both had but no later operand needs (after broadcasting)
            x, t = x.sum(drop), "".join(c for c in t if c in later)
    if sorted(t) != sorted(res):
        raise ImportError_("Einsum '%s': internal plan gave '%s' for '%s'" %
                           (at["equation"], t, res))
    perm = [t.index(c) for c in res]
    return [Val(x if perm == sorted(perm) else x.transpose(perm))]
