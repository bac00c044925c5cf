"""Every op of the op set, in each of its attribute forms, saved, reloaded and run.

Each case traces one op through the C API (ctypes) in one form: every dtype the op accepts,
scalar (rank 0) and rank >= 3 operands, empty and non-empty integer lists, negative axes,
keepdims on and off. It serializes the program, loads the bytes back with shp_program_load,
runs them in a runtime at two concrete shapes, and compares with the numpy oracle, which
interprets the same bytes on its own: integers and bools exactly, floats within a tolerance.

The op set is read from flatbuffers/program.fbs (the OpCode enum), so a new op fails
test_every_op_has_a_case until it gets cases here.
"""

import zlib

import numpy as np
import pytest

import capi_trace as ct
import oracle

values, eval_spec = ct.values, ct.eval_spec


class Ctx:
    """One case being traced: its inputs and how to make their values for a valuation."""

    def __init__(self, api):
        self.t = ct.Tracer(api)
        self.ins, self.gens = [], []

    def input(self, dtype, spec, kind="any"):
        h = self.t.input(f"x{len(self.ins)}", dtype, spec)
        self.ins.append(h)
        self.gens.append((dtype, spec, kind))
        return h

    def dim_input(self, var):
        h = self.t.dim_input(var)
        self.ins.append(h)
        self.gens.append((None, var, None))
        return h

    def feeds(self, env, rng):
        return [np.array(env[spec], dtype=np.int64) if dtype is None else
                values(dtype, eval_spec(spec, env), kind, rng) for dtype, spec, kind in self.gens]


# ---- The cases: CASES[op] = [(dtype key, label, build)]; build(ctx, key) -> output tensors ----

CASES = {}


def add_case(op, key, label, build, envs=({"n": 1}, {"n": 4}), tol=None):
    CASES.setdefault(op, []).append((key, label, build, envs, tol))



R3 = "n, 3, 2"
# Wide forms reach the SIMD main loops, the tails, several 1024-element tiles and the threaded
# path (steps of >= 2^15 elements): 37 x 1031 = 38147 elements.
WIDE, WIDE_ENVS = "n, 1031", ({"n": 37},)


def iota_from_dim_input(c, key, dims, axis):
    c.dim_input("n")  # n appears in no data input: the program takes it as a value
    return [c.t.iota(key, dims, axis)]


def broadcast(c, key, spec, dims):
    x = c.input(key, spec)
    c.dim_input("n")
    return [c.t.broadcast_to(x, dims)]


def dim_value_of_input(c, expr):
    c.input("f32", "n, m")
    return [c.t.dim_value(expr)]


UNARY_KIND = {"LOG": "pos", "SQRT": "pos", "RSQRT": "pos", "LOG1P": "gt-1"}
for op in ct.UNARY:
    for key in ct.legal_dtypes()[op]:
        kind = "bits" if op == "NOT" else UNARY_KIND.get(op, "any")
        for label, spec in (("rank3", R3), ("scalar", ""), ("wide", WIDE)):
            add_case(op, key, label, lambda c, k, op=op, spec=spec, kind=kind: [c.t.unary(op, c.input(k, spec, kind))],
                     envs=WIDE_ENVS if spec == WIDE else ({"n": 1}, {"n": 4}))

BINARY_KINDS = {"DIV": ("dividend", "divisor"), "REM": ("dividend", "divisor"), "POW": ("base", "exponent"),
                "AND": ("bits", "bits"), "OR": ("bits", "bits"), "XOR": ("bits", "bits")}
for op in ct.BINARY:
    for key in ct.legal_dtypes()[op]:
        ka, kb = BINARY_KINDS.get(op, ("any", "any"))
        if key in ct.FLOATS and op == "POW":
            ka, kb = "any", "small"
        for label, sa, sb in (("rank3", R3, R3), ("rank3_by_scalar", R3, ""), ("scalar", "", ""),
                              ("broadcast_ranks", "n, 1, 2", "3, 1"), ("wide", WIDE, WIDE),
                              ("wide_by_row", WIDE, "1031")):
            add_case(op, key, label, lambda c, k, op=op, sa=sa, sb=sb, ka=ka, kb=kb:
                     [c.t.binary(op, c.input(k, sa, ka), c.input(k, sb, kb))],
                     envs=WIDE_ENVS if sa == WIDE else ({"n": 1}, {"n": 4}))

for op in ct.COMPARE:
    for key in ct.ALL:
        for label, sa, sb in (("rank3", R3, R3), ("scalar_by_rank3", "", R3), ("wide", WIDE, WIDE)):
            add_case(op, key, label, lambda c, k, op=op, sa=sa, sb=sb:
                     [c.t.compare(op, c.input(k, sa, "few"), c.input(k, sb, "few"))],
                     envs=WIDE_ENVS if sa == WIDE else ({"n": 1}, {"n": 4}))

for key in ct.ALL:
    add_case("SELECT", key, "rank3", lambda c, k: [c.t.select(c.input("bool", R3), c.input(k, R3), c.input(k, ""))])
    add_case("SELECT", key, "scalar", lambda c, k: [c.t.select(c.input("bool", ""), c.input(k, ""), c.input(k, ""))])
    add_case("SELECT", key, "scalar_pred", lambda c, k: [c.t.select(c.input("bool", ""), c.input(k, R3),
                                                                    c.input(k, "3, 1"))])
    add_case("SELECT", key, "wide", lambda c, k: [c.t.select(c.input("bool", WIDE), c.input(k, WIDE),
                                                             c.input(k, "1031"))], envs=WIDE_ENVS)

def build_convert(c, key, spec, kind):
    src, dst = key.split("->")
    x = c.input(src, spec, kind)
    return [c.t.convert(x, dst)]


for key in ct.legal_dtypes()["CONVERT"]:
    for label, spec, kind, envs in (("rank3", R3, "any", ({"n": 1}, {"n": 4})), ("scalar", "", "any", ({},)),
                                    ("out_of_range", "n, 18", "range", ({"n": 1}, {"n": 3})),
                                    ("wide", WIDE, "range", WIDE_ENVS)):
        add_case("CONVERT", key, label, lambda c, k, spec=spec, kind=kind: build_convert(c, k, spec, kind), envs=envs)

for key in ct.ALL:
    add_case("BROADCAST_TO", key, "scalar_to_rank3", lambda c, k: broadcast(c, k, "", ["n", 3, 2]))
    add_case("BROADCAST_TO", key, "rank1_to_rank3", lambda c, k: broadcast(c, k, "2", ["n", 3, 2]))
    add_case("BROADCAST_TO", key, "ones_to_rank4", lambda c, k: broadcast(c, k, "1, 3, 1", [2, "n", 3, 2]))
    add_case("BROADCAST_TO", key, "scalar_to_scalar", lambda c, k: [c.t.broadcast_to(c.input(k, ""), [])])

    add_case("RESHAPE", key, "rank3_to_rank2", lambda c, k: [c.t.reshape(c.input(k, R3), ["n", 6])])
    add_case("RESHAPE", key, "inferred", lambda c, k: [c.t.reshape(c.input(k, R3), [None, 2])])
    add_case("RESHAPE", key, "inferred_with_assertion", lambda c, k: [c.t.reshape(c.input(k, "n"), [None, 2])],
             envs=({"n": 2}, {"n": 8}))
    add_case("RESHAPE", key, "to_scalar", lambda c, k: [c.t.reshape(c.input(k, "1, 1"), [])])
    add_case("RESHAPE", key, "from_scalar", lambda c, k: [c.t.reshape(c.input(k, ""), [1, 1, 1])])

    add_case("TRANSPOSE", key, "scalar", lambda c, k: [c.t.transpose(c.input(k, ""), [])])
    add_case("TRANSPOSE", key, "rank3_negative", lambda c, k: [c.t.transpose(c.input(k, R3), [-1, 0, 1])])
    add_case("TRANSPOSE", key, "rank4", lambda c, k: [c.t.transpose(c.input(k, "n, 3, 2, 5"), [2, 0, 3, 1])])

    add_case("CONCATENATE", key, "one", lambda c, k: [c.t.concatenate([c.input(k, R3)], 0)])
    add_case("CONCATENATE", key, "three_negative_axis", lambda c, k: [c.t.concatenate(
        [c.input(k, R3), c.input(k, "n, 3, 1"), c.input(k, R3)], -1)])
    add_case("CONCATENATE", key, "symbolic_axis", lambda c, k: [c.t.concatenate(
        [c.input(k, R3), c.input(k, "2, 3, 2")], 0)])

    add_case("SLICE", key, "scalar", lambda c, k: [c.t.slice(c.input(k, ""), [], [], [])])
    add_case("SLICE", key, "defaults", lambda c, k: [c.t.slice(c.input(k, R3), None, None, None)])
    add_case("SLICE", key, "strided", lambda c, k: [c.t.slice(c.input(k, "n, 7, 2"), [0, 1, 1], ["n", 7, 2],
                                                                [2, 3, 1])])
    add_case("SLICE", key, "symbolic", lambda c, k: [c.t.slice(c.input(k, R3), ["floordiv(n, 2)", None, 0],
                                                                [None, 2, None], None)])

    add_case("PAD", key, "scalar", lambda c, k: [c.t.pad(c.input(k, ""), [], [], 2.5)])
    add_case("PAD", key, "rank3", lambda c, k: [c.t.pad(c.input(k, R3), [1, 0, 2], [0, 2, "n"], -1.5)])
    add_case("PAD", key, "zero", lambda c, k: [c.t.pad(c.input(k, "n, 2"), [0, 0], [2, 1], 0.0)])

for op in ct.REDUCE:
    for key in ct.legal_dtypes()[op]:
        kind = "small" if op == "REDUCE_PROD" else "any"
        for keep in (False, True):
            kd = "keepdims" if keep else "dropdims"
            for label, spec, axes in (("scalar", "", []), ("all_axes", R3, []), ("negative_axis", R3, [-1]),
                                      ("axes_0_2", R3, [2, 0]), ("middle_rank4", "n, 3, 2, 5", [1, 2]),
                                      ("empty_extent", "n, 0, 2", [1]), ("symbolic_axis", R3, [0]),
                                      ("wide_axis0", WIDE, [0]), ("wide_axis1", WIDE, [-1]), ("wide_all", WIDE, [])):
                add_case(op, key, f"{label}_{kd}", lambda c, k, op=op, spec=spec, axes=axes, keep=keep, kind=kind:
                         [c.t.reduce(op, c.input(k, spec, kind), axes, keep)],
                         envs=WIDE_ENVS if spec == WIDE else ({"n": 1}, {"n": 4}))

for key in ct.NUMERIC:
    for label, sa, sb in (("vec_vec", "3", "3"), ("mat_vec", "n, 3", "3"), ("vec_mat", "3", "3, n"),
                          ("mat_mat", "n, 3", "3, 2"), ("batch_broadcast", "n, 2, 3, 4", "4, 5"),
                          ("batch_both", "n, 1, 3, 4", "2, 4, 5")):
        add_case("MATMUL", key, label, lambda c, k, sa=sa, sb=sb: [c.t.matmul(c.input(k, sa, "small"),
                                                                             c.input(k, sb, "small"))])
    # Packed micro-kernel blocks and their edges; f32 accumulates in f32 (the oracle in double).
    add_case("MATMUL", key, "wide", lambda c, k: [c.t.matmul(c.input(k, "n, 67", "small"), c.input(k, "67, 129",
                                                                                                  "small"))],
             envs=WIDE_ENVS, tol=(1e-5, 1e-4))
    add_case("DOT_GENERAL", key, "wide", lambda c, k: [c.t.dot_general(
        c.input(k, "67, n", "small"), c.input(k, "129, 67", "small"), [], [], [0], [1])], envs=WIDE_ENVS,
        tol=(1e-5, 1e-4))
    for label, sa, sb, dims in (("no_batch", "n, 3", "3, 4", ([], [], [1], [0])),
                                ("no_contracting", "n, 3", "2", ([], [], [], [])),
                                ("scalars", "", "", ([], [], [], [])),
                                ("batch_negative_axes", "n, 3, 4", "n, 4, 2", ([0], [-3], [-1], [1])),
                                ("two_contracting", "2, 3, n", "3, n, 5", ([], [], [1, 2], [0, 1])),
                                ("batch_only", "n, 3", "n, 2", ([0], [0], [], []))):
        add_case("DOT_GENERAL", key, label, lambda c, k, sa=sa, sb=sb, dims=dims: [c.t.dot_general(
            c.input(k, sa, "small"), c.input(k, sb, "small"), *dims)])
    add_case("IOTA", key, "rank1", lambda c, k: iota_from_dim_input(c, k, ["n"], 0))
    add_case("IOTA", key, "rank3_negative_axis", lambda c, k: iota_from_dim_input(c, k, ["n", 3, 2], -3))
    add_case("IOTA", key, "constant_shape", lambda c, k: [c.t.iota(k, [2, 5, 3], 1)], envs=({},))
    for label, spec, axis in (("rank1", "n", 0), ("rank3_negative", R3, -2), ("rank3_axis0", R3, 0)):
        add_case("CUMSUM", key, label, lambda c, k, spec=spec, axis=axis: [c.t.cumsum(c.input(k, spec), axis)])

for key in ct.FLOATS:
    for label, spec, axis in (("rank1", "n", 0), ("rank3_negative", R3, -1), ("rank3_axis0", R3, 0)):
        add_case("SOFTMAX", key, label, lambda c, k, spec=spec, axis=axis: [c.t.softmax(c.input(k, spec, "small"),
                                                                                       axis)], tol=(1e-5, 1e-6))
        add_case("LAYER_NORM", key, label, lambda c, k, spec=spec, axis=axis: [c.t.layer_norm(
            c.input(k, spec, "small"), axis, 1e-3)], tol=(1e-4, 1e-5))
    # NaN, +-inf and -0 in the rows: IEEE propagation, as numpy computes it (a row with an inf
    # and no NaN once gave +-inf instead of NaN from layer_norm).
    add_case("SOFTMAX", key, "specials", lambda c, k: [c.t.softmax(c.input(k, "n, 9"), -1)], tol=(1e-5, 1e-6))
    add_case("LAYER_NORM", key, "specials", lambda c, k: [c.t.layer_norm(c.input(k, "n, 9"), 0, 1e-3)],
             tol=(1e-4, 1e-5))
    add_case("CUMSUM", key, "specials", lambda c, k: [c.t.cumsum(c.input(k, "n, 9"), 0)])
    for label, axis in (("wide_axis0", 0), ("wide_axis1", -1)):
        add_case("SOFTMAX", key, label, lambda c, k, axis=axis: [c.t.softmax(c.input(k, WIDE, "small"), axis)],
                 envs=WIDE_ENVS, tol=(1e-5, 1e-7))
        add_case("LAYER_NORM", key, label, lambda c, k, axis=axis: [c.t.layer_norm(c.input(k, WIDE, "small"), axis,
                                                                                   1e-5)], envs=WIDE_ENVS,
                 tol=(1e-4, 1e-5))
for key in ct.NUMERIC:
    for label, axis in (("wide_axis0", 0), ("wide_axis1", -1)):
        add_case("CUMSUM", key, label, lambda c, k, axis=axis: [c.t.cumsum(c.input(k, WIDE), axis)], envs=WIDE_ENVS)

for key in ct.legal_dtypes()["TAKE"]:
    for label, sx, si, axis, kind in (("scalar_index", R3, "", 1, "index:3"),
                                      ("rank2_index_negative_axis", R3, "2, 3", -1, "index:2"),
                                      ("rank1_x", "5", "n", 0, "index:5")):
        add_case("TAKE", key, label, lambda c, k, sx=sx, si=si, axis=axis, kind=kind: [c.t.take(
            c.input(k.split("[")[0], sx), c.input(k.split("[")[1][:-1], si, kind), axis)])

for label, expr in (("linear", "2*n + 1"), ("floordiv", "floordiv(n, 2)"), ("max", "max(n, 3)"),
                    ("product", "n*m"), ("mod", "mod(n, 3)"), ("constant", "7")):
    add_case("DIM_VALUE", "i64", label, lambda c, k, expr=expr: dim_value_of_input(c, expr),
             envs=({"n": 1, "m": 2}, {"n": 5, "m": 3}))

for key in ct.ALL:
    for label, shape in (("scalar", ()), ("rank3", (2, 3, 2)), ("empty", (0, 3))):
        def build_constant(c, k, shape=shape):
            arr = values(k, shape, "any", np.random.default_rng(5))
            return [c.t.constant(arr)]
        add_case("CONSTANT", key, label, build_constant, envs=({},))
    add_case("CONSTANT", key, "with_input", lambda c, k: [c.t.concatenate(
        [c.input(k, R3), c.t.constant(values(k, (1, 3, 2), "any", np.random.default_rng(6)))], 0)])

ALL_CASES = [(op, key, label) for op, cases in sorted(CASES.items()) for key, label, *_ in cases]


# ---- Coverage of the op set ----

def uncovered_ops():
    """Op codes of the op set with no case here (the single place that knows the op set)."""
    return sorted(name for name in ct.op_definitions() if not CASES.get(name))


def test_every_op_has_a_case():
    missing = uncovered_ops()
    assert not missing, f"ops without a save/reload/run case in test_every_op.py: {', '.join(missing)}"


def test_every_legal_dtype_has_a_case(capsys):
    legal = ct.legal_dtypes()
    unknown = sorted(set(ct.op_definitions()) - set(legal))
    assert not unknown, f"capi_trace.legal_dtypes() does not know the ops {unknown}"
    missing = [f"{op}:{k}" for op, keys in legal.items() for k in keys
               if k not in {key for key, *_ in CASES.get(op, [])}]
    assert not missing, f"legal op x dtype pairs without a case: {missing}"
    with capsys.disabled():  # shown without -s
        print(f"\nevery op: {len(ALL_CASES)} save/reload/run cases, {len(CASES)}/{len(ct.op_definitions())} op codes, "
              f"{sum(len(keys) for keys in legal.values())} op x dtype pairs, "
              f"{len({(op, label) for op, cases in CASES.items() for _, label, *_ in cases})} op forms")


def test_oracle_supports_every_op_and_dtype():
    codes = ct.op_definitions()
    missing = sorted(name for name, code in codes.items() if code not in oracle.HANDLERS)
    assert not missing, f"the oracle has no handler for {missing}"
    assert sorted(oracle.HANDLERS) == sorted(codes.values()), "the oracle handles op codes the schema lacks"
    dtypes = sorted(ct.fbs_enum("DType").items(), key=lambda item: item[1])
    assert [name.lower() for name, _ in dtypes] == ct.DTYPE_NAMES, "the schema's dtypes changed"
    assert [np.dtype(d) for d in oracle.NP_DTYPES] == ct.NP_DTYPES


@pytest.fixture(scope="module")
def api():
    return ct.Api()


def test_legal_dtypes_match_the_library(api):
    """The legal table (which the oracle's coverage target relies on) agrees with the library
    both ways: every legal key traces, every other one is SHP_DTYPE_MISMATCH."""
    legal = ct.legal_dtypes()
    checked = set()
    for op, cases in CASES.items():
        label = cases[0][1]
        build = cases[0][2]
        candidates = [f"{a}->{b}" for a in ct.ALL for b in ct.ALL] if op == "CONVERT" else \
            [f"{a}[{b}]" for a in ct.ALL for b in ct.ALL] if op == "TAKE" else ct.ALL
        if op in ("DIM_VALUE",):
            continue  # no operand dtype: always i64
        for key in candidates:
            c = Ctx(api)
            try:
                build(c, key)
                ok, err = True, None
            except ct.ShpError as e:
                ok, err = False, e
            finally:
                c.t.close()
            if key in legal[op]:
                assert ok, f"{op} {key} ({label}) is documented as legal but fails: {err}"
            else:
                assert not ok and err.code == ct.SHP_DTYPE_MISMATCH, f"{op} {key} should be a dtype mismatch: {err}"
            checked.add(op)
    assert checked == set(ct.op_definitions()) - {"DIM_VALUE"}, "ops whose dtype rules were not checked"
    for key in ct.NUMERIC:  # select's predicate is bool only
        c = Ctx(api)
        with pytest.raises(ct.ShpError) as e:
            c.t.select(c.input(key, R3), c.input("f32", R3), c.input("f32", R3))
        c.t.close()
        assert e.value.code == ct.SHP_DTYPE_MISMATCH, str(e.value)


@pytest.mark.parametrize("op,key,label", ALL_CASES, ids=[f"{o}-{k}-{l}" for o, k, l in ALL_CASES])
def test_op_saved_reloaded_and_run(api, op, key, label):
    (_, _, build, envs, tol), = [c for c in CASES[op] if c[0] == key and c[1] == label]
    c = Ctx(api)
    outs = build(c, key)
    data = c.t.program(c.ins, outs)
    prog = oracle.Program(data)  # independent reader of the same bytes
    codes = ct.op_definitions()
    dts = [ct.DTYPE_NAMES[d] for d in prog.input_dtypes] + [ct.DTYPE_NAMES[n.Dtype()] for n in prog.nodes]
    n_in = len(prog.inputs)
    keys = {ct.dtype_key(op, ct.DTYPE_NAMES[n.Dtype()], [dts[n.Operands(j)] for j in range(n.OperandsLength())])
            for n in prog.nodes if n.Op() == codes[op]}
    assert key in keys, f"the program has no {op} node of dtype {key} (found {keys}, {n_in} inputs)"
    seed = zlib.crc32(f"{op} {key} {label}".encode())  # fixed per case
    rng = np.random.default_rng(seed)
    feeds = [c.feeds(env, rng) for env in envs]
    got = ct.run_cpp(api, data, feeds, capacity=1)
    for env, feed, out in zip(envs, feeds, got):
        want = prog.run({x.Name().decode(): v for x, v in zip(prog.inputs, feed)})
        assert len(out) == len(want)
        for o, w in zip(out, want):
            what = f"{op} {key} {label} at {env} (seed {seed}); inputs {feed}"
            if tol:
                ct.assert_agree(o, w, what, *tol)
            else:
                ct.assert_agree(o, w, what)
