"""Cost: Program.cost / cost_bounds / cost_unbounded_reason / variable_bounds / to_dot and
Runtime.cost, on a traced MLP; then FLOPs checked against an independent count of the golden
programs and the MLP, made per node from the numpy oracle's view of each program (the reader's
node list, the oracle's solver for the concrete shapes) with the rules of docs/ops.md."""

import collections
import glob
import os
import re
import sys

import numpy as np
import pytest

import shapepoly as sp

from conftest import REPO

FLOPS = sp.CostKind.FLOPS
PEAK = sp.CostKind.PEAK_BYTES
UNBOUNDED = "no upper bound on batch"


def mlp(constraints=("batch <= 1000",)) -> sp.Program:
    """softmax(relu(x @ w + b), axis 1) with x: f32[batch, 8], w: f32[8, 4], b: f32[4]."""
    with sp.Scope(list(constraints)) as s:
        x = s.input("x", sp.F32, "batch, 8")
        w = s.constant(np.arange(32, dtype=np.float32).reshape(8, 4) / 32)
        b = s.constant(np.array([0.5, -1.0, 0.0, 1.0], np.float32))
        y = (x @ w + b).maximum(np.float32(0)).softmax(1)
        return s.program([x], {"y": y})


def test_mlp_formulas_bounds_and_runtime_cost():
    with mlp() as p, p.runtime() as rt:
        # matmul 2*4*8, add 4, max 4, softmax 5*4 per row; the weights 32 + 4 + 1 floats.
        assert p.cost(FLOPS) == "92*batch"
        assert p.cost(sp.CostKind.PARAMETER_BYTES) == "148"
        assert p.cost_bounds(FLOPS) == (92, 92000)
        assert p.cost_bounds(sp.CostKind.PARAMETER_BYTES) == (148, 148)
        assert p.cost_unbounded_reason(FLOPS) == ""
        assert rt.cost(FLOPS, {"x": (10, 8)}) == 920
        assert rt.cost(sp.CostKind.PARAMETER_BYTES, {"x": (10, 8)}) == 148
        # The worst case of the peak is reached at the largest batch the constraint allows.
        lo, hi = p.cost_bounds(PEAK)
        assert hi == rt.cost(PEAK, {"x": (1000, 8)})
        assert lo == rt.cost(PEAK, {"x": (1, 8)})
        assert p.variable_bounds(0) == (1, 1000) and p.variable_bounds("batch") == (1, 1000)
        # Every kind stays within its bounds at every batch, and the peak holds the output.
        for batch in (1, 2, 7, 64, 999, 1000):
            for kind in sp.CostKind:
                lo, hi = p.cost_bounds(kind)
                assert lo <= rt.cost(kind, {"x": (batch, 8)}) <= hi, (kind, batch)
            assert rt.cost(PEAK, {"x": (batch, 8)}) >= 4 * batch * 4
            assert rt.cost(sp.CostKind.BYTES_ACCESSED, {"x": (batch, 8)}) > 0


def test_unbounded_without_the_constraint():
    with mlp(()) as p:
        lo, hi = p.cost_bounds(PEAK)
        assert hi is None and lo > 0
        assert UNBOUNDED in p.cost_unbounded_reason(PEAK)
        assert p.cost_bounds(FLOPS) == (92, None)
        assert UNBOUNDED in p.cost_unbounded_reason("flops")
        # The weights do not depend on the batch: bounded, no reason.
        assert p.cost_bounds(sp.CostKind.PARAMETER_BYTES) == (148, 148)
        assert p.cost_unbounded_reason(sp.CostKind.PARAMETER_BYTES) == ""
        assert p.variable_bounds(0) == (1, None)
        assert p.runtime().cost(FLOPS, {"x": (100000, 8)}) == 9200000


def test_cost_kinds_and_invalid_kinds():
    assert [int(k) for k in sp.CostKind] == [0, 1, 2, 3]
    assert str(sp.CostKind.PEAK_BYTES) == "peak_bytes"
    with mlp() as p, p.runtime() as rt:
        # A kind by enum, by name (any case) or by its value.
        assert p.cost("flops") == p.cost("FLOPS") == p.cost(0) == p.cost(FLOPS)
        assert rt.cost("parameter_bytes", {"x": (3, 8)}) == rt.cost(3, {"x": (3, 8)}) == 148
        # An int that is no kind reaches the library, which rejects it.
        for bad in (4, 7, -1, (1 << 31) - 1):
            with pytest.raises(sp.InvalidArgument) as e:
                p.cost(bad)
            assert "shp_cost_kind_t" in e.value.message and e.value.code == 1
            with pytest.raises(sp.InvalidArgument):
                p.cost_bounds(bad)
            with pytest.raises(sp.InvalidArgument):
                p.cost_unbounded_reason(bad)
            with pytest.raises(sp.InvalidArgument):
                rt.cost(bad, {"x": (3, 8)})
        # Beyond int32 ctypes would wrap 2^32 into FLOPS: refused before the call.
        for bad in (1 << 32, -(1 << 40)):
            with pytest.raises(sp.InvalidArgument):
                p.cost(bad)
            with pytest.raises(sp.InvalidArgument):
                rt.cost(bad, {"x": (3, 8)})
        with pytest.raises(ValueError, match="unknown cost kind 'time'"):
            p.cost("time")
        with pytest.raises(TypeError):
            p.cost(1.0)
        # Nothing is left broken by the errors.
        assert rt.cost(FLOPS, {"x": (2, 8)}) == 184 and p.cost(FLOPS) == "92*batch"


def test_runtime_cost_checks_shapes_like_a_dry_run():
    with mlp() as p, p.runtime() as rt:
        with pytest.raises(sp.ShapeMismatch) as e:
            rt.cost(FLOPS, {"x": (3, 9)})
        assert "'x'" in e.value.message
        with pytest.raises(sp.ConstraintViolation):
            rt.cost(FLOPS, {"x": (1001, 8)})
        with pytest.raises(sp.NotFound):
            rt.cost(FLOPS, {"z": (3, 8)})
        with pytest.raises(sp.InvalidArgument):
            rt.cost(FLOPS, {})
        with pytest.raises(sp.DtypeMismatch):
            rt.cost(FLOPS, {"x": (3, 8)}, dtypes={"x": sp.F64})
        assert rt.cost(FLOPS, {"x": (3, 8)}, dtypes={"x": np.float32}) == 276
        # A cost plans and caches like a dry run: the run that follows is a cache hit.
        built = rt.plans_built
        rt.cost(FLOPS, {"x": (5, 8)})
        assert rt.plans_built == built + 1
        rt(x=np.ones((5, 8), np.float32))
        assert rt.plans_built == built + 1 and rt.cache_hits >= 1
    with pytest.raises(ValueError):
        rt.cost(FLOPS, {"x": (3, 8)})


def test_variable_bounds_errors_and_closed_program():
    with sp.Scope(["2 <= n", "n <= 64", "m >= n"]) as s:
        x = s.input("x", sp.F32, "n, m")
        p = s.program([x], {"y": x.sum(1)})
    assert sorted(p.variables) == ["m", "n"]
    assert p.variable_bounds("n") == (2, 64)
    assert p.variable_bounds("m") == (2, None)
    assert p.variable_bounds(p.variables.index("n")) == (2, 64)
    with pytest.raises(IndexError):
        p.variable_bounds(2)
    with pytest.raises(IndexError):
        p.variable_bounds(-1)
    with pytest.raises(sp.NotFound):
        p.variable_bounds("k")
    p.close()
    for call in (lambda: p.cost(FLOPS), lambda: p.cost_bounds(FLOPS), p.to_dot,
                 lambda: p.cost_unbounded_reason(FLOPS), lambda: p.variable_bounds(0)):
        with pytest.raises(ValueError):
            call()


def test_to_dot_and_loaded_program():
    with mlp() as p:
        dot = p.to_dot()
        assert dot.startswith("digraph") and dot.rstrip().endswith("}")
        assert "f32[batch, 8]" in dot and "softmax" in dot and "batch <= 1000" in dot
        with sp.loads(p.serialize()) as q:
            assert q.to_dot() == dot
            for kind in sp.CostKind:
                assert q.cost(kind) == p.cost(kind)
                assert q.cost_bounds(kind) == p.cost_bounds(kind)
            assert q.variable_bounds(0) == (1, 1000)


# ---- FLOPs against an independent count from the oracle's view of the program ------------

@pytest.fixture(scope="module")
def oracle():
    """tools/python/oracle.py, imported here. Its reader imports the flatc-generated package
    `shapepoly.fb`, whose top-level name is this binding's: the generated folder is lent to the
    binding package's search path for this module's tests, and taken back afterwards."""
    tools = os.path.join(REPO, "tools", "python")
    generated = os.path.join(tools, "_generated", "shapepoly")
    sys.path.insert(0, tools)
    sp.__path__.append(generated)
    try:
        import oracle as module
        yield module
    finally:
        sp.__path__.remove(generated)
        sp.__dict__.pop("fb", None)
        sys.path.remove(tools)
        for name in list(sys.modules):
            if name in ("oracle", "shapepoly_reader") or name.startswith("shapepoly.fb"):
                del sys.modules[name]


def _prod(xs):
    n = 1
    for x in xs:
        n *= x
    return n


def ops_md_rules():
    """{OpCode: (op name, FLOPs text)} from docs/ops.md's table."""
    with open(os.path.join(REPO, "docs", "ops.md"), encoding="utf-8") as f:
        rows = re.findall(r"^\| `(\w+)` \| (\d+) \|.*\| ([^|]+) \|$", f.read(), re.M)
    assert len(rows) > 50, "parsed only %d rows of docs/ops.md" % len(rows)
    return {int(code): (name, text.strip()) for name, code, text in rows}


CONTROL_FLOW_RULES = ("the larger of the branches'", "length times the body's",
                      "max_trips times the condition's and the body's, plus one condition "
                      "(unbounded without max_trips)")


def control_flow_flops(oracle, q, node, operands, result_of):
    """FLOPs of a cond, while_loop or scan by its rule, from its subprograms counted as programs
    of their own at the shapes their inputs get (`operands`: the operands' shapes)."""
    o = oracle._options(node, oracle._ControlFlow)
    bodies = [q.fb.Subprograms(o.Bodies(i)).ProgramAsNumpy().tobytes()
              for i in range(o.BodiesLength())]
    counts = oracle._ints(o, "Counts")

    def body(i, shapes):
        names = [x[0] for x in oracle.reader.ProgramInfo(bodies[i]).inputs]
        return oracle_flops(oracle, bodies[i], dict(zip(names, shapes)))[0]
    op = node.Op()
    if op == oracle.OP.COND:
        return max(body(0, operands[1:]), body(1, operands[1:]))
    if op == oracle.OP.WHILE_LOOP:
        cond = body(0, operands)
        return cond + o.MaxTrips() * (cond + body(1, operands))
    nc, nx = counts
    axis = o.Axis()
    slices = [s[:axis] + s[axis + 1:] for s in operands[nc:nc + nx]]
    return result_of(o.Length()) * body(0, operands[:nc] + slices + operands[nc + nx:])


def node_flops(text, operands, result, contracting):
    """FLOPs of one node by the docs/ops.md text `text`, from its operands' and result's
    concrete shapes (`contracting`: dot_general's lhs contracting axes, reduce_window's
    window, scatter's [reduction])."""
    if text == "0 (data movement)":
        return 0
    if text == "1 per result element":
        return _prod(result)
    if text == "1 per operand element":
        return _prod(operands[0])
    if text == "1 per element of the updates":
        return _prod(operands[2])
    if text == "1 per element of the updates (replace: 0, data movement)":  # scatter
        return 0 if contracting[0] == 0 else _prod(operands[2])  # contracting: [reduction]
    if text.startswith("batch * hq * s * l * (2 * (d + dv) + 7)"):  # attention
        q, k, v = ((1, 1, 1) + tuple(o) for o in operands[:3])  # rank >= 3 (ops.md check)
        return _prod(q[:-3]) * q[-3] * q[-2] * k[-2] * (2 * (q[-1] + v[-1]) + 7)
    if text.startswith("2 * result elements * contracted size"):
        return 2 * _prod(result) * operands[0][-1]
    if text == "2 * result elements * product of the contracting dims":
        return 2 * _prod(result) * _prod(operands[0][a] for a in contracting)
    if text == "2 * result elements * C/groups * product of the kernel's spatial dims":
        return 2 * _prod(result) * _prod(operands[1][1:])  # kernel (O, C/groups, *k)
    if text == "1 per window element per output element":
        return _prod(result) * _prod(contracting)
    if text in CONTROL_FLOW_RULES:
        return None  # from the subprograms (oracle_flops)
    m = re.match(r"(\d+) per element( \(.*\))?$", text)
    if m:
        return int(m.group(1)) * _prod(operands[0])
    raise AssertionError("docs/ops.md has a FLOPs rule this test does not know: %r" % text)


def oracle_flops(oracle, data, shapes, arrays=None):
    """(FLOPs, the variant that runs, its variable values {name: value}, counts per op) of the
    program `data` at `shapes` ({input name: shape or int}; an input with a default that is
    left out has its default's shape), counted node by node from the reader's node list. A
    program with data-dependent sizes needs the input `arrays` too: the oracle runs on them,
    which gives the unbacked variables their values."""
    prog = oracle.Program(data)
    rules = ops_md_rules()
    args = []
    for name, _role, _, shape, _ in prog.info.inputs:
        if name in shapes:
            args.append(shapes[name])
        elif name in prog.info.fills:
            args.append(None)  # a fill default: shaped by the variables the others bind
        else:
            args.append(tuple(int(d) for d in shape))
    if prog.info.unbacked:
        prog.run(arrays)
        v, var = prog.last_variant, prog.last_values
    else:
        v, var = prog.select(args)
    q = prog.variants[v]
    args = [tuple(q.eval_dim(q.inputs[k].Shape(j), var) for j in range(q.inputs[k].ShapeLength()))
            if a is None else a for k, a in enumerate(args)]
    values = [() if role == "dim" else tuple(a)
              for (_, role, _, _, _), a in zip(q.info.inputs, args)]
    total, per_op, seen = 0, collections.Counter(), set()
    for (op, operands, _), node in zip(q.info.nodes, q.nodes):
        result = tuple(q.eval_dim(node.Shape(j), var) for j in range(node.ShapeLength()))
        contracting = []
        if op == oracle.OP.DOT_GENERAL:
            contracting = oracle._ints(oracle._options(node, oracle._Dot), "LhsContracting")
        elif op == getattr(oracle.OP, "REDUCE_WINDOW", None):
            contracting = oracle._ints(oracle._options(node, oracle._Window), "Window")
        elif op == getattr(oracle.OP, "SCATTER", None):
            contracting = [oracle._options(node, oracle._Scatter).Reduction()]
        name, text = rules[op]
        n = node_flops(text, [values[o] for o in operands], result, contracting)
        if n is None:  # control flow: once per operation (its first node), from its subprograms
            opts = oracle._options(node, oracle._ControlFlow)
            key = (op, tuple(operands), tuple(oracle._ints(opts, "Bodies")),
                   tuple(oracle._ints(opts, "Counts")), opts.Axis(), opts.Reverse(), opts.Length())
            n = 0 if key in seen else control_flow_flops(
                oracle, q, node, [values[o] for o in operands], lambda d: q.eval_dim(d, var))
            seen.add(key)
        per_op[name] += n
        total += n
        values.append(result)
    names = {i: q.info.variables[i][0] for i in var}
    return total, v, {names[i]: value for i, value in var.items()}, per_op


GOLDEN = os.path.join(REPO, "tests", "golden")


def golden_stems():
    return sorted(os.path.basename(p)[:-len(".shpoly")]
                  for p in glob.glob(os.path.join(GOLDEN, "*.shpoly")))


def golden_cases(stem, dim_inputs, arrays=False):
    """[{input name: shape, or the value of a dim input}] from the stored inputs of `stem`
    (with `arrays`: [{input name: its stored array}])."""
    cases = collections.defaultdict(dict)
    for npy in glob.glob(os.path.join(GOLDEN, stem + ".*.in.*.npy")):
        m = re.match(re.escape(stem) + r"\.(\d+)\.in\.(.+)\.npy$", os.path.basename(npy))
        a = np.load(npy)
        cases[int(m.group(1))][m.group(2)] = a if arrays else \
            int(a) if m.group(2) in dim_inputs else a.shape
    return [cases[k] for k in sorted(cases)]


def test_ops_md_covers_every_op(oracle):
    rules = ops_md_rules()
    codes = {v for k, v in vars(oracle.OP).items() if k.isupper()}
    assert codes == set(rules), "ops.md and the schema's OpCode differ"
    for _code, (_, text) in rules.items():
        node_flops(text, [(2, 3), (3, 4), (5,)], (2, 4), [1])  # every text has a rule here


def _check_program(oracle, program, data, shape_cases, array_cases=None):
    """Runtime.cost(FLOPS) equals the oracle's count at every case, within cost_bounds; so does
    Program.cost's formula (variant 0's) evaluated at the solved variables when variant 0 runs.
    With data-dependent sizes Runtime.cost is refused (the count depends on the data): the
    formula, evaluated at the values the oracle's run on `array_cases` gives the unbacked
    variables, is compared instead."""
    formula = program.cost(FLOPS)
    lo, hi = program.cost_bounds(FLOPS)
    # A scope to evaluate the formula in, whatever range the program gave its variables.
    unbounded = {name: (None, None) for name in program.variables}
    with program.runtime() as rt, sp.Scope(ranges=unbounded) as s:
        for k, shapes in enumerate(shape_cases):
            arrays = array_cases[k] if program.unbacked else None
            want, variant, var, per_op = oracle_flops(oracle, data, shapes, arrays)
            if program.unbacked:
                assert set(program.unbacked) <= set(var), var
                with pytest.raises(sp.Unsupported, match="data-dependent"):
                    rt.cost(FLOPS, shapes)
            else:
                assert rt.cost(FLOPS, shapes) == want, (shapes, dict(per_op))
            assert lo <= want and (hi is None or want <= hi)
            if variant == 0:
                d = s.dim(formula)
                assert d.evaluate({n: var[n] for n in d.variables}) == want, (formula, var)


# Goldens whose cost formula is refused: a subprogram computes data-dependent sizes (a cond of
# differently sized branches, a scan whose ys size comes from the data), so the count depends on
# the data (cc/runtime/cost.cc says so).
COST_REFUSED = {"cond_sizes_v13"}


@pytest.mark.parametrize("stem", golden_stems())
def test_flops_of_golden_programs_match_the_oracle(oracle, stem):
    path = os.path.join(GOLDEN, stem + ".shpoly")
    with open(path, "rb") as f:
        data = f.read()
    if stem in COST_REFUSED:
        with sp.load(path) as program:
            with pytest.raises(sp.Unsupported, match="subprogram computes data-dependent sizes"):
                program.cost(FLOPS)
        return
    with sp.load(path) as program:
        dims = {i.name for i in program.inputs if i.role == sp.InputRole.DIM}
        cases = golden_cases(stem, dims)
        assert cases, stem
        _check_program(oracle, program, data, cases, golden_cases(stem, dims, arrays=True))


def test_golden_programs_exercise_every_flops_rule(oracle):
    """The comparison above means something for every op: each op whose docs/ops.md rule is
    not 0 counts FLOPs in some golden case."""
    per_op = collections.Counter()
    for stem in golden_stems():
        if stem in COST_REFUSED:
            continue
        path = os.path.join(GOLDEN, stem + ".shpoly")
        with open(path, "rb") as f:
            data = f.read()
        dims = {name for name, role, _, _, _ in oracle.reader.ProgramInfo(data).inputs
                if role == "dim"}
        for shapes, arrays in zip(golden_cases(stem, dims), golden_cases(stem, dims, True)):
            per_op.update(oracle_flops(oracle, data, shapes, arrays)[3])
    counting = {name for name, text in ops_md_rules().values() if text != "0 (data movement)"}
    assert len(counting) > 40
    # Ops whose rule a traced program checks instead, until they get a golden file.
    assert sorted(n for n in counting if not per_op[n]) == sorted(TRACED_ONLY)
    assert all(per_op[name] == 0 for name in set(per_op) - counting)


# Op -> the test that checks its FLOPs rule on a traced program (no golden file yet).
TRACED_ONLY = {"attention": "test_flops_of_traced_attention_match_the_oracle"}


def test_flops_of_traced_attention_match_the_oracle(oracle):
    """attention's rule (grouped-query heads, d != dv, a bool mask, causal) at several sizes."""
    with sp.Scope() as s:
        q = s.input("q", sp.F32, "b, 4, s, 8")
        k = s.input("k", sp.F32, "b, 2, l, 8")
        v = s.input("v", sp.F32, "b, 2, l, 5")
        m = s.input("m", sp.BOOL, "s, l")
        y = q.attention(k, v, m, 0.0, 2)
        with s.program([q, k, v, m], {"y": y}) as p:
            cases = [{"q": (b, 4, n, 8), "k": (b, 2, t, 8), "v": (b, 2, t, 5), "m": (n, t)}
                     for b, n, t in ((1, 1, 1), (2, 3, 7), (3, 16, 16), (1, 5, 4))]
            _check_program(oracle, p, p.serialize(), cases)
            assert oracle_flops(oracle, p.serialize(), cases[1])[3]["attention"] == \
                2 * 4 * 3 * 7 * (2 * (8 + 5) + 7)


def test_flops_of_the_traced_mlp_match_the_oracle(oracle):
    with mlp() as p:
        _check_program(oracle, p, p.serialize(), [{"x": (b, 8)} for b in (1, 3, 10, 257, 1000)])
        for b in (1, 257):
            assert oracle_flops(oracle, p.serialize(), {"x": (b, 8)})[0] == 92 * b
        _, _, _, per_op = oracle_flops(oracle, p.serialize(), {"x": (10, 8)})
        assert per_op == {"matmul": 640, "add": 40, "max": 40, "softmax": 200,
                          "constant": 0}
