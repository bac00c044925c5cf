#!/usr/bin/env python3
"""Asks the peers themselves (an installed jax and torch) every fact of the conformance files.

The fact files (README.md) record what JAX or PyTorch answers for each fact, as read from their
test suites and documentation. This script re-derives each answer from the installed engine and
prints every line where the file and the engine differ, so a fact is never recorded from memory:

    .venv-bench/bin/python tests/dim_conformance/peer_answers.py tests/dim_conformance/*.txt
    ... --fix     rewrites the recorded answers to the engine's (then review the diff)

JAX (files jax_*.txt): a comparison that raises InconclusiveDimensionOperation is UNKNOWN; `==`
and `!=` are TRUE or FALSE when JAX's `==` says equal, or when the bounds of the difference
exclude 0, UNKNOWN otherwise (JAX's `==` itself answers False when it cannot decide); bounds
are shape_poly._bounds_decision(e, BoundsPrecision.BEST). Variables may not be declared with
ranges (JAX has none): write them as constraints.

PyTorch (files torch_*.txt): each variable is a symbol of a ShapeEnv with its declared range
(the scope's default [1, inf) otherwise) as its value range; a constraint `v OP constant`
refines that range (as a guard or torch._check does), `v == e` becomes a replacement of v (as
torch.export's derived dims). A scope with other constraints (deferred runtime asserts, the
dim-constraint solver's congruences) is not re-derived: its facts are printed as "source
only", taken from the test as written.
A comparison is what ShapeEnv._maybe_evaluate_static decides (no hint, no guard): TRUE, FALSE,
or UNKNOWN when it returns None; bounds are bound_sympy(e) over the value ranges.
"""

import math
import operator
import re
import sys

OPS = {">=": operator.ge, "<=": operator.le, "==": operator.eq, "!=": operator.ne,
       ">": operator.gt, "<": operator.lt}


def split_top(text, sep):
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if ch == sep and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    parts.append(cur.strip())
    return parts


def split_cmp(text):
    depth = 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and ch in "<>=!":
            op = text[i:i + 2] if text[i + 1:i + 2] == "=" else ch
            return text[:i].strip(), op, text[i + len(op):].strip()
    raise ValueError(f"no comparison in {text!r}")


def parse_range(text):
    name, _, rng = text.partition("=")
    if not rng:
        return name.strip(), 1, math.inf
    lo, hi = rng.split("..")
    conv = {"inf": math.inf, "+inf": math.inf, "-inf": -math.inf}
    return (name.strip(), conv.get(lo.strip()) or int(lo),
            conv.get(hi.strip()) if hi.strip() in conv else int(hi))


def fmt_bound(v):
    if v == math.inf:
        return "inf"
    if v == -math.inf:
        return "-inf"
    return str(int(v))


def pyexpr(text):
    # Our syntax to Python: a^k is a**k; floordiv, mod, max and min are functions in the env.
    return text.replace("^", "**")


class SourceOnly(Exception):
    """A scope the script cannot rebuild in the peer: its facts come from the test as written."""


class Jax:
    def __init__(self):
        from jax._src import core
        from jax._src.export import shape_poly
        self.core, self.sp = core, shape_poly

    def scope(self, names, ranges, constraints):
        if any(lo != 1 or hi != math.inf for lo, hi in ranges):
            raise ValueError("JAX facts cannot declare ranges; write constraints")
        scope = self.sp.SymbolicScope(tuple(constraints))
        dims = self.sp.symbolic_shape(", ".join(names), scope=scope)
        env = dict(zip(names, dims))
        env.update(floordiv=operator.floordiv, mod=operator.mod, max=self.core.max_dim,
                   min=self.core.min_dim)
        return env

    def bounds(self, env, text):
        e = eval(pyexpr(text), {}, env)
        if isinstance(e, int):
            return e, e
        return self.sp._bounds_decision(e, self.sp.BoundsPrecision.BEST)

    def compare(self, env, lhs, op, rhs):
        a, b = eval(pyexpr(lhs), {}, env), eval(pyexpr(rhs), {}, env)
        if op in ("==", "!="):
            if a == b:
                return "TRUE" if op == "==" else "FALSE"
            lo, hi = self.bounds(env, f"({lhs}) - ({rhs})")
            if lo > 0 or hi < 0:
                return "FALSE" if op == "==" else "TRUE"
            return "UNKNOWN"
        try:
            return "TRUE" if OPS[op](a, b) else "FALSE"
        except self.core.InconclusiveDimensionOperation:
            return "UNKNOWN"


class Torch:
    def __init__(self):
        import sympy
        from torch.fx.experimental.symbolic_shapes import ShapeEnv
        from torch.utils._sympy.functions import FloorDiv, Mod
        from torch.utils._sympy.value_ranges import ValueRanges, bound_sympy
        self.sympy, self.ShapeEnv, self.VR, self.bound_sympy = sympy, ShapeEnv, ValueRanges, \
            bound_sympy
        self.FloorDiv, self.Mod = FloorDiv, Mod

    def scope(self, names, ranges, constraints):
        from torch.utils._sympy.numbers import int_oo
        sympy = self.sympy
        env = {}
        shape_env = self.ShapeEnv()
        for name, (lo, hi) in zip(names, ranges):
            sym = sympy.Symbol(name, integer=True, positive=lo >= 1 or None)
            env[name] = sym
            shape_env.var_to_range[sym] = self.VR(
                -int_oo if lo == -math.inf else lo, int_oo if hi == math.inf else hi)
        env.update(floordiv=self.FloorDiv, mod=self.Mod, max=sympy.Max, min=sympy.Min)
        for c in constraints:
            lhs, op, rhs = split_cmp(c)
            if lhs in names and re.fullmatch(r"-?\d+", rhs) and op != "==":
                vr = shape_env.var_to_range[env[lhs]]
                k = int(rhs)
                lo, hi = {">=": (k, None), ">": (k + 1, None), "<=": (None, k),
                          "<": (None, k - 1)}[op]
                shape_env.var_to_range[env[lhs]] = self.VR(
                    vr.lower if lo is None else max(vr.lower, lo),
                    vr.upper if hi is None else min(vr.upper, hi))
            elif lhs in names and op == "==":
                # Derived dims chain (x == y - 1, y == w - 1): store each fully substituted.
                value = sympy.sympify(eval(pyexpr(rhs), {}, env))
                shape_env.replacements[env[lhs]] = value.xreplace(shape_env.replacements)
            else:
                raise SourceOnly(c)
        return shape_env, env

    def expr(self, scope, text):
        shape_env, env = scope
        e = self.sympy.sympify(eval(pyexpr(text), {}, env))
        return self.sympy.sympify(shape_env.replace(e.xreplace(shape_env.replacements)))

    def bounds(self, scope, text):
        shape_env, _ = scope
        e = self.expr(scope, text)
        vr = self.bound_sympy(e, shape_env.var_to_range)
        conv = lambda v: math.inf if v.is_infinite and v > 0 else (  # noqa: E731
            -math.inf if v.is_infinite else int(v))
        return conv(vr.lower), conv(vr.upper)

    def compare(self, scope, lhs, op, rhs):
        shape_env, _ = scope
        rel = {">=": self.sympy.Ge, "<=": self.sympy.Le, "==": self.sympy.Eq,
               "!=": self.sympy.Ne, ">": self.sympy.Gt, "<": self.sympy.Lt}[op]
        e = rel(self.expr(scope, lhs), self.expr(scope, rhs))
        r = shape_env._maybe_evaluate_static(e)
        if r is None:
            return "UNKNOWN"
        return "TRUE" if bool(r) else "FALSE"


def check(path, fix):
    peer = Jax() if path.rsplit("/", 1)[-1].startswith("jax_") else Torch()
    lines = open(path).read().split("\n")
    scope, diffs = None, 0
    for i, line in enumerate(lines):
        s = line.strip()
        word, _, rest = s.partition(" ")
        try:
            if word == "scope":
                parts = split_top(rest, ";")
                names, ranges = [], []
                for v in split_top(parts[0], ","):
                    name, lo, hi = parse_range(v)
                    names.append(name)
                    ranges.append((lo, hi))
                scope = "unreadable"  # facts under a scope the peer refuses are reported
                try:
                    scope = peer.scope(names, ranges, parts[1:])
                except SourceOnly:
                    scope = None
            elif word in ("cmp", "bounds", "equal") and scope is None:
                print(f"{path}:{i + 1}: source only: {rest}")
            elif word in ("cmp", "bounds", "equal"):
                head, body, recorded = [p.strip() for p in rest.split("|")[:3]]
                if word == "bounds":
                    lo, hi = peer.bounds(scope, body)
                    found = f"{fmt_bound(lo)}, {fmt_bound(hi)}"
                else:
                    found = peer.compare(scope, *split_cmp(body))
                if found != recorded:
                    diffs += 1
                    print(f"{path}:{i + 1}: {word} {body}: recorded {recorded}, peer says {found}")
                    if fix:
                        cut = line.rfind(recorded)
                        lines[i] = line[:cut] + found + line[cut + len(recorded):]
        except Exception as e:  # noqa: BLE001 - report every line the peer cannot take
            diffs += 1
            print(f"{path}:{i + 1}: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
    if fix:
        open(path, "w").write("\n".join(lines))
    return diffs


def main(argv):
    fix = "--fix" in argv
    paths = [a for a in argv if a != "--fix"]
    total = sum(check(p, fix) for p in paths)
    print(f"{total} difference(s)")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
