"""The C API through ctypes, for the Python tests: trace, serialize, load back and run programs.

The library is SHAPEPOLY_LIB, or build/lib/libshapepoly.so (staged by tools/stage_lib.sh).
Also here: the op set read from flatbuffers/program.fbs, the C API enum value of every op, and
the dtypes each op accepts, which test_every_op.py checks against the library both ways.
"""

import ctypes
import os
import re

import numpy as np

import oracle
import shapepoly_reader as reader
import ops_spec  # generated from cc/ops/ops.toml

ROOT = reader.ROOT
LIB_PATH = os.environ.get("SHAPEPOLY_LIB", os.path.join(ROOT, "build", "lib", "libshapepoly.so"))
vp, sz, i64 = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int64

DTYPE_NAMES = ["f32", "f64", "i32", "i64", "bool",  # index = shp_dtype_t = fb.DType
               "f16", "bf16", "i8", "u8", "i16", "u16", "u32", "u64"]
NP_DTYPES = [np.dtype(d) for d in oracle.NP_DTYPES]
CODE = {name: i for i, name in enumerate(DTYPE_NAMES)}
CODE_OF_NP = {d: i for i, d in enumerate(NP_DTYPES)}
FLOATS, INTS = ["f32", "f64"], ["i32", "i64"]
NUMERIC = FLOATS + INTS
ALL = NUMERIC + ["bool"]
# The narrow (storage) types and the compute type each computes in (cc/kernels/dtype.h).
NARROW = ["f16", "bf16", "i8", "u8", "i16", "u16", "u32", "u64"]
COMPUTE_OF = {"f16": "f32", "bf16": "f32", "i8": "i32", "u8": "i32", "i16": "i32", "u16": "i32",
              "u32": "i64", "u64": "i64"}

SHP_DTYPE_MISMATCH = 11


def fbs_enum(name):
    """{member: value} of enum `name` in flatbuffers/program.fbs (values are explicit there)."""
    with open(reader.SCHEMA) as f:
        text = re.sub(r"//[^\n]*", "", f.read())
    body = re.search(r"\benum\s+" + name + r"\s*:\s*\w+\s*\{([^}]*)\}", text).group(1)
    return {m: int(v) for m, v in re.findall(r"(\w+)\s*=\s*(-?\d+)", body)}


def op_definitions():
    """The op set: {op name: op code}. Today the OpCode enum of the schema is the op set."""
    return fbs_enum("OpCode")


# C API enum value of each op (shp_unary_op_t, shp_binary_op_t, shp_cmp_t, shp_reduce_op_t).
UNARY = {n: i for i, n in enumerate(
    ["NEG", "ABS", "EXP", "LOG", "LOG1P", "EXPM1", "SQRT", "RSQRT", "SIN", "COS", "TANH", "LOGISTIC",
     "FLOOR", "CEIL", "ROUND", "SIGN", "NOT", "ERF", "TAN", "SINH", "COSH", "ASIN", "ACOS", "ATAN", "ASINH", "ACOSH",
     "ATANH"])}
BINARY = {n: i for i, n in enumerate(
    ["ADD", "SUB", "MUL", "DIV", "POW", "MAXIMUM", "MINIMUM", "REM", "AND", "OR", "XOR"])}
COMPARE = {n: i for i, n in enumerate(["EQ", "NE", "LT", "LE", "GT", "GE"])}
REDUCE = {n: i for i, n in enumerate(
    ["REDUCE_SUM", "REDUCE_MEAN", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD"])}
FLOAT_UNARY = ["EXP", "LOG", "LOG1P", "EXPM1", "SQRT", "RSQRT", "SIN", "COS", "TANH", "LOGISTIC", "FLOOR",
               "CEIL", "ROUND", "ERF", "TAN", "SINH", "COSH", "ASIN", "ACOS", "ATAN", "ASINH", "ACOSH", "ATANH"]


def legal_dtypes():
    """{op name: the dtype keys the op accepts}, from the documented rules of shapepoly.h.

    The key is the operand dtype; for CONVERT "src->dst", for TAKE, TAKE_ALONG_AXIS,
    SCATTER_ADD and SCATTER "x[indices]"
    (x: the base of SCATTER_ADD and SCATTER), for SELECT the value dtype, for ops without operands
    (CONSTANT, IOTA, DIM_VALUE) the result dtype.
    """
    legal = {}
    for op in UNARY:
        legal[op] = FLOATS if op in FLOAT_UNARY else (INTS + ["bool"] if op == "NOT" else NUMERIC)
    for op in BINARY:
        legal[op] = INTS + ["bool"] if op in ("AND", "OR", "XOR") else NUMERIC
    for op in COMPARE:
        legal[op] = ALL
    for op in REDUCE:
        legal[op] = FLOATS if op == "REDUCE_MEAN" else NUMERIC
    for op in ("CONSTANT", "SELECT", "BROADCAST_TO", "RESHAPE", "TRANSPOSE", "CONCATENATE", "SLICE", "PAD"):
        legal[op] = ALL
    groups = {"all": ALL, "numeric": NUMERIC, "float": FLOATS, "int_bool": INTS + ["bool"]}
    for op, group in ops_spec.DTYPES.items():  # the ops whose spec row states its dtypes
        legal[op] = groups[group]
    for op in ("MATMUL", "DOT_GENERAL", "IOTA", "CUMSUM"):
        legal[op] = NUMERIC
    legal["SOFTMAX"] = legal["LAYER_NORM"] = FLOATS
    legal["CONVERT"] = [f"{a}->{b}" for a in ALL for b in ALL]
    legal["TAKE"] = legal["TAKE_ALONG_AXIS"] = [f"{a}[{b}]" for a in ALL for b in INTS]
    legal["SCATTER_ADD"] = legal["SCATTER"] = [f"{a}[{b}]" for a in NUMERIC for b in INTS]
    legal["DIM_VALUE"] = ["i64"]
    legal["REDUCE_WINDOW"] = NUMERIC
    legal["CONV"] = FLOATS
    legal["NONZERO"] = ALL
    legal["BOOLEAN_MASK"] = ALL  # x's dtype; the mask is bool
    legal["SIZE_FROM_VALUE"] = ["i64"]
    return legal


def dtype_key(op_name, node_dtype, operand_dtypes):
    """The key of legal_dtypes() for one node (dtypes as names)."""
    if op_name == "CONVERT":
        return f"{operand_dtypes[0]}->{node_dtype}"
    if op_name in ("TAKE", "TAKE_ALONG_AXIS", "SCATTER_ADD", "SCATTER"):
        return f"{operand_dtypes[0]}[{operand_dtypes[1]}]"
    if op_name == "SELECT":
        return operand_dtypes[1]
    if not operand_dtypes or op_name in ("COND", "WHILE_LOOP", "SCAN"):  # the results' types
        return node_dtype
    return operand_dtypes[0]


I32, I64 = np.iinfo(np.int32), np.iinfo(np.int64)
SPECIAL_F = [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, 1.5, 2.5, -2.5]
# Beyond the int32/int64 ranges, exactly at their limits, and halves: for conversions.
RANGE_F = [np.nan, np.inf, -np.inf, 3e9, -3e9, 2.5, -2.5, -0.7, 1e19, -1e19, 2.0 ** 63, -(2.0 ** 63), 2.0 ** 31,
           -(2.0 ** 31), -(2.0 ** 31) - 1, 2.0 ** 31 - 1, 1e300, -0.0]
RANGE_I = [2 ** 40 + 1, -(2 ** 40) - 7, 2 ** 53 + 1, -(2 ** 63), 2 ** 63 - 1, 2 ** 31, -(2 ** 31) - 1, 2 ** 31 - 1,
           -(2 ** 31), 2 ** 24 + 1, 0, 1, -1]


def values(dtype, shape, kind, rng):
    """Inputs of `kind`; special values first (so that even 6-element arrays hold them)."""
    dt = NP_DTYPES[CODE[dtype]]
    size = int(np.prod(shape, dtype=np.int64))
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if kind.startswith("index:"):
        return rng.integers(0, int(kind[6:]), size=shape).astype(dt)
    if kind.startswith("sindex:"):  # [-k, k): negative indices count from the end
        return rng.integers(-int(kind[7:]), int(kind[7:]), size=shape).astype(dt)
    info = np.iinfo(dt) if dt.kind in "iu" else None
    if dt.kind == "f" or dtype == "bf16":
        lo, hi, special = {"any": (-3, 3, SPECIAL_F), "pos": (0.1, 3, [np.inf, np.nan, 0.0, 1.0]),
                           "gt-1": (-0.9, 3, [np.inf, np.nan, 0.0, -1.0]), "small": (-2, 2, []),
                           "dividend": (-3, 3, [5.5, -5.5, 7.0, -7.0, 0.0, np.inf]),
                           "divisor": (-3, 3, [2.0, 2.0, -2.0, 0.0, -0.0, 2.0]),
                           "range": (-1e4, 1e4, RANGE_F), "few": (0, 0, [])}[kind]
        if kind == "few":
            flat = rng.choice(np.array([-1.0, 0.0, 0.5, 1.0, np.nan, np.inf, -np.inf]), size=size)
        else:
            flat = rng.uniform(lo, hi, size=size)
    else:
        lo, hi, special = {"any": (-1000, 1000, [info.min, info.max, -1, 0, 1, info.min + 1]),
                           "pos": (1, 6, []), "gt-1": (0, 6, []), "small": (-5, 6, []),
                           "dividend": (-100, 100, [info.min, info.min, info.max, -7, 7, -7, 0]),
                           "divisor": (-6, 7, [-1, 0, -1, 2, -2, -2, 0]),
                           "exponent": (-3, 40, [-1, -2, 0, 63, 1]), "base": (-5, 6, [-1, 1, -1, 2, 0]),
                           "bits": (info.min, info.max, [info.min, info.max, -1, 0]),
                           "range": (info.min, info.max, [v for v in RANGE_I if info.min <= v <= info.max]),
                           "few": (-2, 3, [])}[kind]
        if dt.kind == "u":  # the signed ranges above, wrapped into the type; bits: all of it
            lo, hi = (0, int(info.max)) if kind in ("bits", "range") else (max(lo, 0), max(hi, 1))
            flat = rng.integers(lo, hi, size=size, dtype=np.uint64, endpoint=True)
            special = [v for v in special if 0 <= v <= info.max]
        else:
            flat = rng.integers(max(lo, int(info.min)), min(hi, int(info.max)), size=size,
                                dtype=np.int64, endpoint=False)
            special = [v for v in special if info.min <= v <= info.max]
    k = min(size, len(special))
    with np.errstate(over="ignore", invalid="ignore"):  # 1e300 as f32 is inf
        flat = oracle.convert(flat, dt) if dtype in NARROW else flat.astype(dt)
        spec_vals = np.array(special[:k], dtype=np.float64 if info is None else object)
        flat[:k] = oracle.convert(spec_vals.astype(np.float64), dt) if info is None else \
            np.array([int(v) for v in special[:k]], dtype=dt)
    return flat.reshape(shape)


def eval_spec(spec, env):
    """The concrete shape of a shape spec (our own test specs) under variable values `env`."""
    if not spec.strip():
        return ()
    funcs = {"floordiv": lambda a, b: a // b, "max": max, "min": min}
    return tuple(eval("(" + spec.replace("^", "**") + ",)", funcs, dict(env)))  # noqa: S307 (our own specs)


class ShpError(RuntimeError):
    def __init__(self, fname, code, msg):
        super().__init__(f"{fname}: [{code}] {msg}")
        self.code = code


class Api:
    """Just enough of the C API, with errors turned into exceptions."""

    def __init__(self, path=LIB_PATH):
        L = ctypes.CDLL(path)
        for f, res, args in [
                ("shp_error_message", ctypes.c_char_p, [vp]), ("shp_error_code", ctypes.c_int32, [vp]),
                ("shp_buffer_data", vp, [vp]), ("shp_buffer_size", sz, [vp]),
                ("shp_array_data", vp, [vp]), ("shp_array_rank", sz, [vp]),
                ("shp_array_shape", ctypes.POINTER(i64), [vp]), ("shp_array_dtype", ctypes.c_int, [vp]),
                ("shp_array_nbytes", sz, [vp]), ("shp_program_output_count", sz, [vp]),
                ("shp_tensor_dtype", ctypes.c_int, [vp])]:
            getattr(L, f).restype = res
            getattr(L, f).argtypes = args
        for f in ("shp_error_destroy", "shp_array_destroy", "shp_runtime_destroy", "shp_program_destroy",
                  "shp_scope_destroy", "shp_buffer_destroy", "shp_runtime_options_destroy"):
            getattr(L, f).argtypes = [vp]
            getattr(L, f).restype = None
        self.L = L

    def __call__(self, fname, *args):
        f = getattr(self.L, fname)
        f.restype = vp
        err = f(*args)
        if err:
            msg = self.L.shp_error_message(err).decode()
            code = self.L.shp_error_code(err)
            self.L.shp_error_destroy(err)
            raise ShpError(fname, code, msg)


class _ProgramHandle:
    """Destroys a program handle with its tracer."""

    def __init__(self, api, p):
        self.api, self.p = api, p

    def __del__(self):
        try:
            self.api.L.shp_program_destroy(self.p)
        except Exception:  # interpreter shutdown
            pass


class Tracer:
    """Traces through the C API in one scope; handles are kept alive until program()."""

    def __init__(self, api, constraints=()):
        self.api = api
        self.scope = vp()
        arr = (ctypes.c_char_p * max(1, len(constraints)))(*[c.encode() for c in constraints])
        api("shp_scope_create", arr, sz(len(constraints)), ctypes.byref(self.scope))
        self.keep = []

    def close(self):
        if self.scope:
            self.api.L.shp_scope_destroy(self.scope)
            self.scope = vp()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass

    # ---- Dims ----
    def dim(self, value):
        """A dim from an int (constant) or a string (parsed expression)."""
        d = vp()
        if isinstance(value, str):
            self.api("shp_dim_parse", self.scope, value.encode(), ctypes.byref(d))
        else:
            self.api("shp_dim_constant", self.scope, i64(value), ctypes.byref(d))
        return d

    def dims(self, values):
        """A C array of dims from ints, strings or dim handles; None entries stay NULL."""
        arr = (vp * max(1, len(values)))(*[v if v is None or isinstance(v, vp) else self.dim(v) for v in values])
        self.keep.append(arr)
        return arr

    def dim_op(self, name, a, b):
        """shp_dim_<name>(a, b) ("add", "sub", "mul", "floordiv", "mod", "max", "min"); a, b as for dims()."""
        a, b = (v if isinstance(v, vp) else self.dim(v) for v in (a, b))
        d = vp()
        self.api("shp_dim_" + name, a, b, ctypes.byref(d))
        return d

    def shape(self, t):
        """The symbolic shape of a traced tensor as a list of dim handles."""
        rank = sz()
        self.api("shp_tensor_shape", t, None, sz(0), ctypes.byref(rank))
        out = (vp * max(1, rank.value))()
        self.api("shp_tensor_shape", t, out, rank, ctypes.byref(rank))
        return [vp(out[i]) for i in range(rank.value)]

    def dim_arr(self, handles):
        arr = (vp * max(1, len(handles)))(*handles)
        self.keep.append(arr)
        return arr

    def ints(self, values):
        arr = (i64 * max(1, len(values)))(*values)
        self.keep.append(arr)
        return arr

    # ---- Tensors ----
    def input(self, name, dtype, spec):
        t = vp()
        self.api("shp_tensor_input", self.scope, name.encode(), ctypes.c_int(CODE[dtype]), spec.encode(),
                 ctypes.byref(t))
        return t

    def input_dims(self, name, dtype, dims):
        """An input whose shape is a list of dim handles."""
        t = vp()
        self.api("shp_tensor_input_dims", self.scope, name.encode(), ctypes.c_int(CODE[dtype]), self.dims(dims),
                 sz(len(dims)), ctypes.byref(t))
        return t

    def dim_input(self, var):
        t = vp()
        self.api("shp_tensor_dim_input", self.scope, var.encode(), ctypes.byref(t))
        return t

    def constant(self, array):
        t = vp()
        array = np.require(array, requirements="C")
        self.keep.append(array)
        shape = (i64 * max(1, array.ndim))(*array.shape)
        self.api("shp_tensor_constant", self.scope, ctypes.c_int(CODE_OF_NP[array.dtype]), shape, sz(array.ndim),
                 array.ctypes.data_as(vp) if array.nbytes else None, sz(array.nbytes), ctypes.byref(t))
        return t

    def op(self, fname, *args):
        t = vp()
        self.api(fname, *args, ctypes.byref(t))
        return t

    def dtype(self, t):
        return DTYPE_NAMES[self.api.L.shp_tensor_dtype(t)]

    def unary(self, name, x):
        return self.op("shp_tensor_unary", ctypes.c_int(UNARY[name]), x)

    def binary(self, name, a, b):
        return self.op("shp_tensor_binary", ctypes.c_int(BINARY[name]), a, b)

    def compare(self, name, a, b):
        return self.op("shp_tensor_compare", a, ctypes.c_int(COMPARE[name]), b)

    def select(self, p, a, b):
        return self.op("shp_tensor_select", p, a, b)

    def convert(self, x, dtype):
        return self.op("shp_tensor_convert", x, ctypes.c_int(CODE[dtype]))

    def broadcast_to(self, x, dims):
        return self.op("shp_tensor_broadcast_to", x, self.dims(dims), sz(len(dims)))

    def reshape(self, x, dims):
        return self.op("shp_tensor_reshape", x, self.dims(dims), sz(len(dims)))

    def transpose(self, x, perm):
        return self.op("shp_tensor_transpose", x, self.ints(perm), sz(len(perm)))

    def concatenate(self, xs, axis):
        return self.op("shp_tensor_concatenate", self.dim_arr(xs), sz(len(xs)), i64(axis))

    def slice(self, x, start, limit, strides):
        """start/limit: lists of dims (None entries: default) or None; strides: list or None."""
        rank = len(self.shape(x))
        return self.op("shp_tensor_slice", x, None if start is None else self.dims(start),
                       None if limit is None else self.dims(limit), None if strides is None else self.ints(strides),
                       sz(rank))

    def pad(self, x, low, high, value):
        return self.op("shp_tensor_pad", x, self.dims(low), self.dims(high), sz(len(low)), ctypes.c_double(value))

    def reduce(self, name, x, axes, keepdims):
        return self.op("shp_tensor_reduce", ctypes.c_int(REDUCE[name]), x, self.ints(axes), sz(len(axes)),
                       ctypes.c_bool(keepdims))

    def dot_general(self, a, b, lb, rb, lc, rc):
        return self.op("shp_tensor_dot_general", a, b, self.ints(lb), self.ints(rb), sz(len(lb)), self.ints(lc),
                       self.ints(rc), sz(len(lc)))

    def iota(self, dtype, dims, axis):
        return self.op("shp_tensor_iota", self.scope, ctypes.c_int(CODE[dtype]), self.dims(dims), sz(len(dims)),
                       i64(axis))

    def __getattr__(self, name):
        """The ops of the spec's [[c_function]] entries (ops_spec.C_FUNCTIONS): t.trilu(x, k,
        upper), t.reverse(x, axes), ... with C arguments made from Python values."""
        params = ops_spec.C_FUNCTIONS.get(name)
        if params is None:
            raise AttributeError(name)

        def call(*values):
            if len(values) != len(params):
                raise TypeError("%s takes %d arguments" % (name, len(params)))
            args = []
            for (_, kind), v in zip(params, values):
                if kind == "ints":
                    args += [self.ints(v), sz(len(v))]
                else:
                    args.append({"tensor": lambda x: x, "int": i64, "float": ctypes.c_double,
                                 "bool": ctypes.c_bool}[kind](v))
            return self.op("shp_tensor_" + name, *args)
        return call

    def conv(self, x, w, bias=None, strides=None, dilations=None, pads=None, auto_pad=0, groups=1):
        """shp_tensor_conv (ONNX Conv): pads are begins then ends; auto_pad a shp_auto_pad_t value."""
        ns = len(self.shape(x)) - 2
        opt = lambda v: None if v is None else self.ints(v)  # noqa: E731
        return self.op("shp_tensor_conv", x, w, bias, sz(ns), opt(strides), opt(dilations), opt(pads),
                       ctypes.c_int(auto_pad), i64(groups))

    def conv_transpose(self, x, w, bias=None, strides=None, dilations=None, pads=None, output_padding=None,
                       auto_pad=0, groups=1):
        """shp_tensor_conv_transpose (ONNX ConvTranspose; w is [C, O/groups, *kernel])."""
        ns = len(self.shape(x)) - 2
        opt = lambda v: None if v is None else self.ints(v)  # noqa: E731
        return self.op("shp_tensor_conv_transpose", x, w, bias, sz(ns), opt(strides), opt(dilations), opt(pads),
                       opt(output_padding), ctypes.c_int(auto_pad), i64(groups))

    def reduce_window(self, name, x, window, strides=None, window_dilation=None, base_dilation=None,
                      pad_low=None, pad_high=None):
        """shp_tensor_reduce_window: name is REDUCE_SUM, REDUCE_MAX or REDUCE_MIN; None is NULL."""
        opt = lambda v: None if v is None else self.ints(v)  # noqa: E731
        optd = lambda v: None if v is None else self.dims(v)  # noqa: E731
        return self.op("shp_tensor_reduce_window", ctypes.c_int(REDUCE[name]), x, self.ints(window), opt(strides),
                       opt(window_dilation), opt(base_dilation), optd(pad_low), optd(pad_high), sz(len(window)))

    def max_pool(self, x, kernel, strides=None, dilations=None, pads=None, auto_pad=0, ceil_mode=False):
        """shp_tensor_max_pool (ONNX MaxPool): pads are begins then ends."""
        opt = lambda v: None if v is None else self.ints(v)  # noqa: E731
        return self.op("shp_tensor_max_pool", x, sz(len(kernel)), self.ints(kernel), opt(strides), opt(dilations),
                       opt(pads), ctypes.c_int(auto_pad), ctypes.c_bool(ceil_mode))

    def avg_pool(self, x, kernel, strides=None, dilations=None, pads=None, auto_pad=0, ceil_mode=False,
                 count_include_pad=False):
        """shp_tensor_avg_pool (ONNX AveragePool)."""
        opt = lambda v: None if v is None else self.ints(v)  # noqa: E731
        return self.op("shp_tensor_avg_pool", x, sz(len(kernel)), self.ints(kernel), opt(strides), opt(dilations),
                       opt(pads), ctypes.c_int(auto_pad), ctypes.c_bool(ceil_mode), ctypes.c_bool(count_include_pad))

    def global_pool(self, kind, x):
        """shp_tensor_global_avg_pool / shp_tensor_global_max_pool (kind "avg" or "max")."""
        return self.op(f"shp_tensor_global_{kind}_pool", x)

    def nonzero(self, x):
        """shp_tensor_nonzero: i64 [u, rank(x)], u a new unbacked variable."""
        return self.op("shp_tensor_nonzero", x)

    def boolean_mask(self, x, mask, axis):
        """shp_tensor_boolean_mask: x[mask] with the mask's axes starting at `axis`."""
        return self.op("shp_tensor_boolean_mask", x, mask, i64(axis))

    def size_from_value(self, v, name=None, lo=0, hi=2 ** 63 - 1):
        """shp_tensor_size_from_value: the dim handle of a new unbacked variable whose value is
        the scalar i64 tensor v, with the declared range [lo, hi]."""
        d = vp()
        self.api("shp_tensor_size_from_value", v, name.encode() if name else None, i64(lo), i64(hi),
                 ctypes.byref(d))
        return d

    def top_k(self, x, k, axis=-1, largest=True, sorted_=True):
        """shp_tensor_top_k: (values, indices); k a dim handle or a spec text."""
        v, i = vp(), vp()
        self.api("shp_tensor_top_k", x, k if isinstance(k, vp) else self.dim(k), i64(axis),
                 ctypes.c_bool(largest), ctypes.c_bool(sorted_), ctypes.byref(v), ctypes.byref(i))
        return v, i

    # ---- Control flow: bodies traced by Python functions (shp_program_create_body) ----
    def body(self, specs, fn, given=()):
        """(program, captures): fn(list of fresh inputs of (dtype, spec)) -> list of outputs,
        cut into a subprogram; `given` captures come first."""
        self.api.L.shp_scope_trace_mark.restype = sz
        self.api.L.shp_scope_trace_mark.argtypes = [vp]
        mark = self.api.L.shp_scope_trace_mark(self.scope)
        ins = [self.input(f"arg{i}", d, spec) if isinstance(spec, str) else self.input_dims(f"arg{i}", d, spec)
               for i, (d, spec) in enumerate(specs)]
        outs = fn(ins)
        self.api.L.shp_scope_variable_count.restype = sz
        self.api.L.shp_scope_variable_count.argtypes = [vp]
        cap = mark + self.api.L.shp_scope_variable_count(self.scope) + len(given) + 1
        caps = (vp * cap)(*given)
        n = sz(len(given))
        p = vp()
        self.api("shp_program_create_body", self.scope, sz(mark), self.arr(ins), sz(len(ins)),
                 self.arr(outs), sz(len(outs)), caps, sz(cap), ctypes.byref(n), ctypes.byref(p))
        self.keep.append(_ProgramHandle(self.api, p))
        return p, [vp(caps[i]) for i in range(n.value)]

    def arr(self, handles):
        a = (vp * max(1, len(handles)))(*handles)
        self.keep.append(a)
        return a

    def cond(self, pred, specs, tfn, ffn, operands):
        """shp_tensor_cond over branches traced on `specs` (the operands' dtype and spec)."""
        _, ct_ = self.body(specs, tfn)
        _, cf = self.body(specs, ffn)
        caps = list({c.value: c for c in ct_ + cf}.values())
        tp, _ = self.body(specs, tfn, caps)
        fp, _ = self.body(specs, ffn, caps)
        n = len(self._outs_of(tp))
        res = (vp * max(1, n))()
        ops = list(operands) + caps
        self.api("shp_tensor_cond", self.scope, pred, tp, fp, self.arr(ops), sz(len(ops)), res, sz(n))
        return [vp(res[i]) for i in range(n)]

    def while_loop(self, specs, cfn, bfn, init, max_trips=-1):
        _, cc = self.body(specs, cfn)
        _, cb = self.body(specs, bfn)
        caps = list({c.value: c for c in cc + cb}.values())
        cp, _ = self.body(specs, cfn, caps)
        bp, _ = self.body(specs, bfn, caps)
        res = (vp * max(1, len(init)))()
        self.api("shp_tensor_while_loop", self.scope, cp, bp, self.arr(init), sz(len(init)), self.arr(caps),
                 sz(len(caps)), i64(max_trips), res, sz(len(init)))
        return [vp(res[i]) for i in range(len(init))]

    def scan(self, specs, fn, init, xs, axis=0, length=None, reverse=False):
        """specs: the body's inputs (carry, then slices of xs)."""
        bp, caps = self.body(specs, fn)
        n = len(self._outs_of(bp))
        res = (vp * max(1, n))()
        ln = None if length is None else (length if isinstance(length, vp) else self.dim(length))
        self.api("shp_tensor_scan", self.scope, bp, self.arr(init), sz(len(init)), self.arr(xs), sz(len(xs)),
                 self.arr(caps), sz(len(caps)), i64(axis), ln, ctypes.c_bool(reverse), res, sz(n))
        return [vp(res[i]) for i in range(n)]

    def _outs_of(self, p):
        return range(self.api.L.shp_program_output_count(p))

    def dim_value(self, d):
        return self.op("shp_tensor_dim_value", self.scope, d if isinstance(d, vp) else self.dim(d))

    def parameter(self, name, array):
        """shp_tensor_parameter: an input named `name` of the array's dtype and shape, whose
        default is the array (runs may leave it out, or give another value by name)."""
        array = np.ascontiguousarray(array)
        shape = (i64 * max(1, array.ndim))(*array.shape)
        t = vp()
        self.api("shp_tensor_parameter", self.scope, name.encode(), ctypes.c_int(CODE_OF_NP[array.dtype]),
                 shape, sz(array.ndim), array.ctypes.data_as(vp), sz(array.nbytes), ctypes.byref(t))
        self.keep.append(array)
        return t

    def program(self, inputs, outputs, keep_scope=False, names=None):
        """Creates the program and returns its serialized bytes (the scope is destroyed).
        Outputs are named `names`, or out0, out1, ..."""
        ins = (vp * max(1, len(inputs)))(*inputs)
        outs = (vp * len(outputs))(*outputs)
        names = names or [f"out{i}" for i in range(len(outputs))]
        names = (ctypes.c_char_p * len(outputs))(*[n.encode() for n in names])
        p = vp()
        self.api("shp_program_create", self.scope, ins, sz(len(inputs)), outs, names, sz(len(outputs)),
                 ctypes.byref(p))
        buf = vp()
        try:
            self.api("shp_program_serialize", p, ctypes.byref(buf))
            data = ctypes.string_at(self.api.L.shp_buffer_data(buf), self.api.L.shp_buffer_size(buf))
        finally:
            self.api.L.shp_buffer_destroy(buf)
            self.api.L.shp_program_destroy(p)
        if not keep_scope:
            self.close()
        return data


def derive(api, data, kind, wrt, of=()):
    """The serialized program shp_program_<kind> ("jvp", "vjp" or "grad") makes of the
    serialized program `data`: derivatives with respect to the inputs `wrt`, of the outputs
    `of` (vjp: a list; grad: one name)."""
    p, d, buf = vp(), vp(), vp()
    api("shp_program_load", data, sz(len(data)), ctypes.byref(p))
    names = lambda xs: (ctypes.c_char_p * max(1, len(xs)))(*[x.encode() for x in xs])  # noqa: E731
    try:
        if kind == "jvp":
            api("shp_program_jvp", p, names(wrt), sz(len(wrt)), ctypes.byref(d))
        elif kind == "vjp":
            api("shp_program_vjp", p, names(of), sz(len(of)), names(wrt), sz(len(wrt)), ctypes.byref(d))
        else:
            api("shp_program_grad", p, of.encode(), names(wrt), sz(len(wrt)), ctypes.byref(d))
        api("shp_program_serialize", d, ctypes.byref(buf))
        return ctypes.string_at(api.L.shp_buffer_data(buf), api.L.shp_buffer_size(buf))
    finally:
        api.L.shp_buffer_destroy(buf)
        api.L.shp_program_destroy(d)
        api.L.shp_program_destroy(p)


def vmap(api, data, in_axes, out_axes=None, batch_dim_name=None):
    """The serialized program shp_program_vmap makes of the serialized program `data`: in_axes
    one per input (-1: not batched), out_axes None (every batch axis first) or one per output."""
    p, d, buf = vp(), vp(), vp()
    api("shp_program_load", data, sz(len(data)), ctypes.byref(p))
    try:
        ins = (i64 * max(1, len(in_axes)))(*in_axes)
        outs = None if out_axes is None else (i64 * max(1, len(out_axes)))(*out_axes)
        api("shp_program_vmap", p, ins, sz(len(in_axes)), outs, sz(0 if out_axes is None else len(out_axes)),
            None if batch_dim_name is None else batch_dim_name.encode(), ctypes.byref(d))
        api("shp_program_serialize", d, ctypes.byref(buf))
        return ctypes.string_at(api.L.shp_buffer_data(buf), api.L.shp_buffer_size(buf))
    finally:
        api.L.shp_buffer_destroy(buf)
        api.L.shp_program_destroy(d)
        api.L.shp_program_destroy(p)


def run_cpp(api, data, inputs, capacity=16, num_threads=0):
    """Loads the serialized program, runs it on each input list (declared order) or dict (by
    name: inputs with a default may be left out) and returns the outputs of every run as
    numpy arrays."""
    p, rt, opts = vp(), vp(), vp()
    api("shp_program_load", data, sz(len(data)), ctypes.byref(p))
    try:
        n_out = api.L.shp_program_output_count(p)
        api("shp_runtime_options_create", ctypes.byref(opts))
        api("shp_runtime_options_set_plan_cache_capacity", opts, sz(capacity))
        api("shp_runtime_options_set_num_threads", opts, ctypes.c_int32(num_threads))
        api("shp_runtime_create", p, opts, ctypes.byref(rt))
    finally:
        api.L.shp_runtime_options_destroy(opts)
        api.L.shp_program_destroy(p)
    try:
        return [_run(api, rt, inp, n_out) for inp in inputs]
    finally:
        api.L.shp_runtime_destroy(rt)


def _run(api, rt, arrays, n_out):
    handles = []
    names = None
    if isinstance(arrays, dict):
        names = (ctypes.c_char_p * max(1, len(arrays)))(*[n.encode() for n in arrays])
        arrays = list(arrays.values())
    arrays = [np.require(a, requirements="C") for a in arrays]
    try:
        for a in arrays:
            h = vp()
            shape = (i64 * max(1, a.ndim))(*a.shape)
            api("shp_array_wrap", ctypes.c_int(CODE_OF_NP[a.dtype]), shape, sz(a.ndim),
                a.ctypes.data_as(vp) if a.nbytes else None, sz(a.nbytes), ctypes.byref(h))
            handles.append(h)
        outs = (vp * n_out)()
        ins = (vp * max(1, len(handles)))(*handles)
        api("shp_runtime_run", rt, names, ins, sz(len(handles)), outs, sz(n_out))
    finally:
        for h in handles:
            api.L.shp_array_destroy(h)
    result = []
    for j in range(n_out):
        o = outs[j]
        rank = api.L.shp_array_rank(o)
        shape = [api.L.shp_array_shape(o)[i] for i in range(rank)]
        dt = NP_DTYPES[api.L.shp_array_dtype(o)]
        nbytes = api.L.shp_array_nbytes(o)
        buf = ctypes.string_at(api.L.shp_array_data(o), nbytes) if nbytes else b""
        result.append(np.frombuffer(buf, dtype=dt).reshape(shape).copy())
        api.L.shp_array_destroy(o)
    return result


def assert_agree(got, want, what, rtol=None, atol=None):
    """Same dtype and shape; integers and bools bit-exact, floats within tolerance (NaN == NaN,
    infinities equal)."""
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} vs oracle {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} vs oracle {want.shape}"
    if got.dtype.kind != "f":
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    if rtol is None:
        rtol, atol = (2e-5, 1e-6) if got.dtype == np.float32 else (1e-12, 1e-14)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)
