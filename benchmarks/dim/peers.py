#!/usr/bin/env python3
"""Peer side of the dim-engine benchmark: runs the workload of workload.txt
through JAX's symbolic shape engine (jax.export) or through sympy, and prints
one machine-readable line per scenario:

    <scenario> <engine> <median microseconds per unit> <unit> [key=value ...]

The unit may contain spaces ("100 folds", "1000 queries"); the tokens after it
that contain '=' are suffixes. A scenario an engine cannot do faithfully is
printed as `<scenario> <engine> n/a`. Nothing else goes to stdout.

Run with the benchmark venv (see benchmarks/setup_env.sh):
    .venv-bench/bin/python benchmarks/dim/peers.py --engine jax
    .venv-bench/bin/python benchmarks/dim/peers.py --engine sympy
    .venv-bench/bin/python benchmarks/dim/peers.py --dump-poly50

Timing: each scenario runs one untimed warm-up rep, then reps until at least
--reps reps (default 5) AND at least --min-time seconds (default 0.2) of
timed work; the figure is the median of the per-rep times divided by the
units per rep. The garbage collector is off inside the timed region (as in
`timeit`). Untimed per-rep setup (fresh scopes, parsing of queries) is
excluded. By default both peers run warm: sympy's global cache stays on, and
scenarios that reuse a JAX scope across reps keep its per-scope bounds cache;
--cold clears sympy's cache before every rep and gives parse_spec10 and
fold_maxmin a fresh JAX scope per rep. One exception: compare1000 with sympy
(sympy.ask takes seconds per query) is one capped pass over a subset, see
run_sympy.

Scope of every scenario (the C++ side must use the same):
  parse_spec10   one scope with the 10 [constraints], created once and reused
                 by every rep (an "existing scope").
  poly50         one scope without constraints, variables x0..x4 built once.
  fold_maxmin    one scope without constraints, variables a, b built once.
  scope10_create a new scope with the 10 [constraints] per rep (timed).
  bounds1000     a fresh scope with the 10 [constraints] per rep; creation
                 and parsing untimed.
  compare1000    as bounds1000.
  solve5         a scope with the [solve_constraints] section of the workload:
                 the 7 constraints that mention only b, s, h, d (the solve
                 specs use no other variable). A fresh scope per rep; the
                 specs are parsed outside the timing (JAX's call-time solver
                 works on already-parsed avals); the solution is checked
                 against every constraint of that scope inside the timing.
"""

import argparse
import gc
import itertools
import os
import signal
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_WORKLOAD = os.path.join(HERE, "workload.txt")

EXPECTED_SOLUTION = {"b": 8, "s": 16, "h": 5, "d": 32}
FOLD_K = range(1, 51)
POLY_VARS = 5
POLY_TERMS = 50


# ----------------------------------------------------------------------------
# Workload
# ----------------------------------------------------------------------------

def read_workload(path):
    sections = {}
    cur = None
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if not line:
                continue
            if line.startswith("[") and line.endswith("]"):
                cur = line[1:-1]
                sections[cur] = []
            else:
                if cur is None:
                    raise ValueError(f"{path}: item before any section: {line!r}")
                sections[cur].append(line)
    return sections


def split_cmp(text):
    """Splits `e1 OP e2` with OP one of == >= <=; returns (e1, op, e2)."""
    for op in ("==", ">=", "<="):
        i = text.find(op)
        if i >= 0:
            return text[:i].strip(), op, text[i + 2:].strip()
    raise ValueError(f"no comparison operator in {text!r}")


def poly50_monomials():
    """The first 50 monomials of degree 1..3 in x0..x4: degree 1, then 2, then
    3; within a degree, exponent vectors in descending lexicographic order.
    Returns a list of (exponent vector, list of variable indices in product
    order). Monomial i (0-based) gets coefficient i + 1."""
    out = []
    for deg in (1, 2, 3):
        exps = [e for e in itertools.product(range(deg + 1), repeat=POLY_VARS)
                if sum(e) == deg]
        exps.sort(reverse=True)
        for e in exps:
            factors = [v for v in range(POLY_VARS) for _ in range(e[v])]
            out.append((e, factors))
    return out[:POLY_TERMS]


def dump_poly50():
    for i, (e, factors) in enumerate(poly50_monomials()):
        prod = "*".join(f"x{v}" for v in factors)
        print(i, i + 1, " ".join(map(str, e)), prod)


# ----------------------------------------------------------------------------
# Timing
# ----------------------------------------------------------------------------

class Runner:
    def __init__(self, engine, min_reps, min_time, cold=False):
        self.engine = engine
        self.min_reps = min_reps
        self.min_time = min_time
        self.cold = cold
        self.before_rep = lambda: None  # untimed hook, e.g. clear a cache

    def measure(self, setup, run, units_per_rep=1.0):
        """setup() -> state (untimed); run(state) -> result (timed).
        Returns (median microseconds per unit, result of the last rep)."""
        self.before_rep()
        result = run(setup())  # warm-up
        times = []
        total = 0.0
        while len(times) < self.min_reps or total < self.min_time:
            self.before_rep()
            state = setup()
            gc.collect()
            gc.disable()
            try:
                t0 = time.perf_counter()
                result = run(state)
                dt = time.perf_counter() - t0
            finally:
                gc.enable()
            times.append(dt)
            total += dt
        return statistics.median(times) * 1e6 / units_per_rep, result

    def emit(self, scenario, us, unit, **suffix):
        extra = "".join(f" {k.replace('_', '-')}={v}" for k, v in suffix.items())
        print(f"{scenario} {self.engine} {us:.3f} {unit}{extra}", flush=True)

    def emit_na(self, scenario):
        print(f"{scenario} {self.engine} n/a", flush=True)


# ----------------------------------------------------------------------------
# JAX
# ----------------------------------------------------------------------------
# JAX functions used (jax 0.10.2):
#   jax.export.SymbolicScope(constraints)           scope with constraints
#   jax.export.symbolic_shape(spec, scope=scope)    parser
#   _DimExpr operators + - * and >=                 (jax._src.export.shape_poly)
#   jax.core.max_dim / jax.core.min_dim             max/min with folding
#   jax._src.export.shape_poly_decision.bounds_decision(e, BoundsPrecision.BEST)
#       the function installed as jax._src.export.shape_poly._bounds_decision;
#       what comparisons and max/min use internally
#   jax._src.core.InconclusiveDimensionOperation   raised by an undecided >=
#   jax._src.export.shape_poly.solve_dim_vars.__wrapped__  (the call-time
#       solver without its lru cache), ShapeEvaluator, ShapeConstraints
#       .check_statically, all_dim_vars: the steps that
#       jax._src.export._export._call_exported_abstract_eval runs for exp.call
#   jax.export.export(jax.jit(f))(...).call(...)    solve5_call

def run_jax(w, r):
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import numpy as np
    import jax
    import jax.numpy as jnp
    from jax import export
    from jax._src import core as jcore
    from jax._src import tree_util
    from jax._src.export import shape_poly
    from jax._src.export import shape_poly_decision

    BEST = shape_poly.BoundsPrecision.BEST
    bounds_decision = shape_poly_decision.bounds_decision
    assert shape_poly._bounds_decision is bounds_decision
    Inconclusive = jcore.InconclusiveDimensionOperation
    max_dim, min_dim = jax.core.max_dim, jax.core.min_dim

    spec = w["spec"][0]
    constraints = w["constraints"]

    # 1. parse_spec10 ---------------------------------------------------------
    scope = export.SymbolicScope(constraints)

    def parse_setup():
        return export.SymbolicScope(constraints) if r.cold else scope

    def parse_run(sc):
        return export.symbolic_shape(spec, scope=sc)
    us, shape = r.measure(parse_setup, parse_run)
    assert len(shape) == 10, shape
    r.emit("parse_spec10", us, "spec")

    # 2. poly50 ---------------------------------------------------------------
    xs = export.symbolic_shape(", ".join(f"x{i}" for i in range(POLY_VARS)),
                               scope=export.SymbolicScope())
    monos = poly50_monomials()

    def poly_run(_):
        acc = None
        for i, (_, factors) in enumerate(monos):
            m = xs[factors[0]]
            for v in factors[1:]:
                m = m * xs[v]
            t = m * (i + 1)
            acc = t if acc is None else acc + t
        return acc
    us, poly = r.measure(lambda: None, poly_run)
    assert len(poly._sorted_terms) == POLY_TERMS, poly
    r.emit("poly50", us, "poly")

    # 3. fold_maxmin ----------------------------------------------------------
    ab = export.symbolic_shape("a, b", scope=export.SymbolicScope())

    def fold_setup():
        if r.cold:
            return export.symbolic_shape("a, b", scope=export.SymbolicScope())
        return ab

    def fold_run(state):
        a, b = state
        not_folded = 0
        for k in FOLD_K:
            if max_dim(a + k, a) != a + k:
                not_folded += 1
            if min_dim(2 * b + k, b) != b:
                not_folded += 1
        return not_folded
    us, not_folded = r.measure(fold_setup, fold_run)
    extra = {"not_folded": not_folded} if not_folded else {}
    r.emit("fold_maxmin", us, "100 folds", **extra)

    # 4. scope10_create -------------------------------------------------------
    us, _ = r.measure(lambda: None,
                      lambda _: export.SymbolicScope(constraints))
    r.emit("scope10_create", us, "scope")

    # 5. bounds1000 -----------------------------------------------------------
    def bounds_setup():
        sc = export.SymbolicScope(constraints)
        return [export.symbolic_shape(e, scope=sc)[0] for e in w["bounds"]]

    def bounds_run(exprs):
        return [bounds_decision(e, BEST) for e in exprs]
    n = len(w["bounds"])
    us, bounds = r.measure(bounds_setup, bounds_run, units_per_rep=n / 1000)
    unbounded_lo = sum(1 for lo, _ in bounds if lo == -float("inf"))
    unbounded_hi = sum(1 for _, hi in bounds if hi == float("inf"))
    r.emit("bounds1000", us, "1000 queries",
           lo_unbounded=unbounded_lo, hi_unbounded=unbounded_hi)

    # 6. compare1000 ----------------------------------------------------------
    pairs_text = [split_cmp(c) for c in w["compare"]]
    assert all(op == ">=" for _, op, _ in pairs_text)

    def compare_setup():
        sc = export.SymbolicScope(constraints)
        return [(export.symbolic_shape(lt, scope=sc)[0],
                 export.symbolic_shape(rt, scope=sc)[0])
                for lt, _, rt in pairs_text]

    def compare_run(pairs):
        out = []
        for lhs, rhs in pairs:
            try:
                out.append(bool(lhs >= rhs))
            except Inconclusive:
                out.append(None)
        return out
    n = len(pairs_text)
    us, answers = r.measure(compare_setup, compare_run, units_per_rep=n / 1000)
    r.emit("compare1000", us, "1000 queries",
           true=answers.count(True), false=answers.count(False),
           unknown=answers.count(None))

    # 7. solve5 ---------------------------------------------------------------
    specs = w["solve_specs"]
    shapes = [tuple(int(x) for x in s.split(",")) for s in w["solve_shapes"]]
    in_tree = tree_util.tree_structure((tuple(range(len(specs))), {}))
    solve_uncached = shape_poly.solve_dim_vars.__wrapped__

    def solve_setup():
        sc = export.SymbolicScope(w["solve_constraints"])
        return tuple(jcore.ShapedArray(export.symbolic_shape(s, scope=sc),
                                       np.float32) for s in specs)

    def solve_run(avals):
        # What _call_exported_abstract_eval does (minus the rank/dtype and
        # constant-dimension checks), with concrete shapes.
        solution, shape_constraints, synth = solve_uncached(avals, in_tree)
        ev = shape_poly.ShapeEvaluator(
            {name: shapes[ai][di] for name, ai, di in synth})
        shape_constraints.check_statically(ev)
        return {v: ev.evaluate(solution[v])
                for v in shape_poly.all_dim_vars(avals)}
    us, sol = r.measure(solve_setup, solve_run)
    assert {k: int(v) for k, v in sol.items()} == EXPECTED_SOLUTION, sol
    r.emit("solve5", us, "solve")

    # solve5_call: exp.call of an exported trivial function ------------------
    sc = export.SymbolicScope(w["solve_constraints"])
    arg_specs = [jax.ShapeDtypeStruct(export.symbolic_shape(s, scope=sc),
                                      jnp.float32) for s in specs]

    def trivial(x0, x1, x2, x3, x4):
        return x0.sum()
    exp = export.export(jax.jit(trivial))(*arg_specs)
    arrays = [jnp.zeros(s, jnp.float32) for s in shapes]
    exp.call(*arrays).block_until_ready()  # compile
    us, _ = r.measure(lambda: None,
                      lambda _: exp.call(*arrays).block_until_ready())
    r.emit("solve5_call", us, "call")

    return {"bounds": bounds, "compare": answers}


# ----------------------------------------------------------------------------
# sympy
# ----------------------------------------------------------------------------

class _AskTimeout(Exception):
    pass

# sympy symbols are integer and positive (the JAX default: every dimension
# variable is >= 1). floordiv(x, k) is floor(x/k), mod is sympy.Mod (floor
# semantics, like Python), max/min are sympy.Max/sympy.Min.

def run_sympy(w, r):
    import sympy
    from sympy import Q
    from sympy.core.cache import clear_cache
    if r.cold:
        r.before_rep = clear_cache

    def sym(name):
        return sympy.Symbol(name, integer=True, positive=True)

    names = ["b", "s", "h", "d", "n", "w"]
    local = {v: sym(v) for v in names}
    local.update({
        "floordiv": lambda x, k: sympy.floor(x / k),
        "mod": sympy.Mod,
        "max": sympy.Max,
        "min": sympy.Min,
    })

    def parse(text):
        return sympy.parse_expr(text, local_dict=local)

    q_of = {"==": Q.eq, ">=": Q.ge, "<=": Q.le}
    rel_of = {"==": sympy.Eq, ">=": sympy.Ge, "<=": sympy.Le}

    def assumptions(constraints):
        preds = []
        for c in constraints:
            lt, op, rt = split_cmp(c)
            preds.append(q_of[op](parse(lt), parse(rt)))
        return sympy.And(*preds)

    spec = w["spec"][0]
    constraints = w["constraints"]

    # 1. parse_spec10 ---------------------------------------------------------
    us, shape = r.measure(lambda: None, lambda _: parse("(" + spec + ")"))
    assert len(shape) == 10, shape
    r.emit("parse_spec10", us, "spec")

    # 2. poly50 ---------------------------------------------------------------
    xs = [sym(f"x{i}") for i in range(POLY_VARS)]
    monos = poly50_monomials()

    def poly_run(_):
        acc = None
        for i, (_, factors) in enumerate(monos):
            m = xs[factors[0]]
            for v in factors[1:]:
                m = m * xs[v]
            t = m * (i + 1)
            acc = t if acc is None else acc + t
        return sympy.expand(acc)
    us, poly = r.measure(lambda: None, poly_run)
    assert len(poly.args) == POLY_TERMS, poly
    r.emit("poly50", us, "poly")

    # 3. fold_maxmin ----------------------------------------------------------
    a, b = sym("a"), sym("b")

    def fold_run(_):
        not_folded = 0
        for k in FOLD_K:
            if sympy.Max(a + k, a) != a + k:
                not_folded += 1
            if sympy.Min(2 * b + k, b) != b:
                not_folded += 1
        return not_folded
    us, not_folded = r.measure(lambda: None, fold_run)
    extra = {"not_folded": not_folded} if not_folded else {}
    r.emit("fold_maxmin", us, "100 folds", **extra)

    # 4. scope10_create: parse the constraints into sympy.ask assumptions -----
    us, _ = r.measure(lambda: None, lambda _: assumptions(constraints))
    r.emit("scope10_create", us, "scope")

    # 5. bounds1000 -----------------------------------------------------------
    # sympy has no "bounds of an expression under constraints" API. PyTorch's
    # ShapeEnv gets bounds from its own value-range analysis
    # (torch.utils._sympy.value_ranges.bound_sympy: interval arithmetic over
    # per-symbol ranges), which is torch code, not sympy. sympy's nearest
    # tool, substituting AccumBounds intervals for the symbols, leaves
    # floor(), Mod, Max and Min of intervals unevaluated (no bound comes out)
    # and ignores every relational constraint (d >= h + 8, b*s <= 65536).
    r.emit_na("bounds1000")

    # 6. compare1000: sympy.ask(Q.ge(lhs, rhs), constraints) ----------------
    # sympy.ask with these relational assumptions takes seconds to minutes per
    # query (some did not finish in 60 s) and keeps no cache between calls, so
    # this scenario deviates from the common timing rule: ONE pass over the
    # first --sympy-subset pairs (default 50), no warm-up, each query cut off
    # after --sympy-ask-timeout seconds (default 2; counted as unknown and as
    # that many seconds). The figure, scaled to 1000 queries, is therefore a
    # LOWER bound on sympy's time.
    pairs_text = [split_cmp(c) for c in w["compare"]][:r.sympy_subset]
    facts = assumptions(constraints)
    pairs = [(parse(lt), parse(rt)) for lt, _, rt in pairs_text]
    answers, timeouts, total = [], 0, 0.0
    cap = r.sympy_ask_timeout

    def on_alarm(*_):
        raise _AskTimeout()
    old_handler = signal.signal(signal.SIGALRM, on_alarm)
    try:
        for lhs, rhs in pairs:
            r.before_rep()
            gc.collect()
            gc.disable()
            t0 = time.perf_counter()
            try:
                signal.setitimer(signal.ITIMER_REAL, cap)
                try:
                    ans = sympy.ask(Q.ge(lhs, rhs), facts)
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            except _AskTimeout:
                ans = None
                timeouts += 1
            total += time.perf_counter() - t0
            gc.enable()
            answers.append(ans)
    finally:
        signal.signal(signal.SIGALRM, old_handler)
    n = len(pairs)
    r.emit("compare1000", total * 1e6 * 1000 / n, "1000 queries",
           true=answers.count(True), false=answers.count(False),
           unknown=answers.count(None), subset=n, timeouts=timeouts,
           timeout_s=f"{cap:g}", reps=1)

    # 7. solve5: sympy.solve of spec_dim == value, then check the constraints -
    specs = [parse("(" + s + ",)") for s in w["solve_specs"]]
    shapes = [tuple(int(x) for x in s.split(",")) for s in w["solve_shapes"]]
    unknowns = [local[v] for v in ("b", "s", "h", "d")]
    solve_rels = []
    for c in w["solve_constraints"]:
        lt, op, rt = split_cmp(c)
        solve_rels.append(rel_of[op](parse(lt), parse(rt)))

    def solve_run(_):
        eqs = []
        for spec_dims, shape in zip(specs, shapes):
            if len(spec_dims) != len(shape):
                raise ValueError("rank mismatch")
            for e, v in zip(spec_dims, shape):
                eq = sympy.Eq(e, v)
                if eq is sympy.false:
                    raise ValueError(f"{e} != {v}")
                if eq is not sympy.true:
                    eqs.append(eq)
        sols = sympy.solve(eqs, unknowns, dict=True)
        if len(sols) != 1 or set(sols[0]) != set(unknowns):
            raise ValueError(f"unsolved: {sols}")
        sol = sols[0]
        for rel in solve_rels:
            if rel.subs(sol) is not sympy.true:
                raise ValueError(f"constraint {rel} violated")
        return {str(k): v for k, v in sol.items()}
    us, sol = r.measure(lambda: None, solve_run)
    assert {k: int(v) for k, v in sol.items()} == EXPECTED_SOLUTION, sol
    r.emit("solve5", us, "solve")
    return None


# ----------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(
        description="Peer side (JAX, sympy) of the dim-engine benchmark.")
    ap.add_argument("--engine", choices=["jax", "sympy"])
    ap.add_argument("--reps", type=int, default=5,
                    help="minimum timed reps per scenario (default 5)")
    ap.add_argument("--min-time", type=float, default=0.2,
                    help="minimum timed seconds per scenario (default 0.2)")
    ap.add_argument("--cold", action="store_true",
                    help="no cache carried between reps: clear sympy's cache "
                         "before every rep, give parse_spec10 and fold_maxmin "
                         "a fresh JAX scope per rep (default: warm)")
    ap.add_argument("--sympy-subset", type=int, default=50,
                    help="compare1000 with sympy: number of pairs timed "
                         "(default 50)")
    ap.add_argument("--sympy-ask-timeout", type=float, default=2.0,
                    help="compare1000 with sympy: seconds after which one "
                         "sympy.ask is cut off and counted unknown (default 2)")
    ap.add_argument("--workload", default=DEFAULT_WORKLOAD)
    ap.add_argument("--dump-poly50", action="store_true",
                    help="print the poly50 monomials (index, coefficient, "
                         "exponents of x0..x4, product) and exit")
    ap.add_argument("--dump-answers", metavar="FILE",
                    help="with --engine jax: write JAX's bounds and comparison "
                         "answers, one per workload line, to FILE")
    args = ap.parse_args()

    if args.dump_poly50:
        dump_poly50()
        return 0
    if not args.engine:
        ap.error("--engine is required")
    if args.reps < 1:
        ap.error("--reps must be >= 1")
    if not 1 <= args.sympy_subset <= 1000:
        ap.error("--sympy-subset must be in [1, 1000]")

    w = read_workload(args.workload)
    r = Runner(args.engine, args.reps, args.min_time, cold=args.cold)
    r.sympy_subset = args.sympy_subset
    r.sympy_ask_timeout = args.sympy_ask_timeout
    if args.engine == "jax":
        answers = run_jax(w, r)
        if args.dump_answers:
            write_answers(args.dump_answers, w, answers)
    else:
        run_sympy(w, r)
    return 0


def write_answers(path, w, answers):
    def fmt(x):
        if x == float("inf"):
            return "inf"
        if x == -float("inf"):
            return "-inf"
        return str(int(x))
    with open(path, "w", encoding="utf-8") as f:
        f.write("[bounds]\n")
        for text, (lo, hi) in zip(w["bounds"], answers["bounds"]):
            f.write(f"{fmt(lo)} {fmt(hi)}\t{text}\n")
        f.write("[compare]\n")
        names = {True: "TRUE", False: "FALSE", None: "UNKNOWN"}
        for text, ans in zip(w["compare"], answers["compare"]):
            f.write(f"{names[ans]}\t{text}\n")


if __name__ == "__main__":
    sys.exit(main())
