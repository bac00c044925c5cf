"""Loads libshapepoly.so and declares every function of shapepoly.h through ctypes.

The declarations below mirror c_api/include/shapepoly/shapepoly.h one to one (the header
completeness test in tests/test_header.py fails when the header gains a function or constant
that is not declared here). Lookup order of the library: the SHAPEPOLY_LIB environment
variable, then libshapepoly.so next to this file (bundled by `make python-wheel` or by
`pip install bindings/python` after `make lib`), then build/lib/libshapepoly.so of the
repository that holds this package.
"""

import ctypes
import os
from typing import Any, Dict, List, Tuple

# ---- Constants of the header (names and values as in shapepoly.h) ------------------------

SHP_VERSION_MAJOR = 0
SHP_VERSION_MINOR = 1
SHP_VERSION_PATCH = 0
SHP_VERSION_STRING = "0.1.0"
SHP_ABI_VERSION = 1
SHP_LOAD_DEFAULT_MAX_BYTES = 1 << 30

SHP_OK = 0
SHP_INVALID_ARGUMENT = 1
SHP_PARSE_ERROR = 2
SHP_INCONCLUSIVE = 3
SHP_SCOPE_MISMATCH = 4
SHP_UNSATISFIABLE = 5
SHP_SHAPE_MISMATCH = 6
SHP_CONSTRAINT_VIOLATION = 7
SHP_UNSOLVABLE = 8
SHP_DIVISION_BY_ZERO = 9
SHP_OVERFLOW = 10
SHP_DTYPE_MISMATCH = 11
SHP_NOT_FOUND = 12
SHP_INVALID_PROGRAM = 13
SHP_VERSION_MISMATCH = 14
SHP_UNSUPPORTED = 15
SHP_OUT_OF_MEMORY = 16
SHP_INTERNAL = 17
SHP_GUARD_FAILED = 18

SHP_GUARDS_NEVER = 0
SHP_GUARDS_FROM_HINTS = 1

SHP_DYNAMIC_AUTO = 0
SHP_DYNAMIC_ALL = 1
SHP_DYNAMIC_NONE = 2

SHP_STANCE_DEFAULT = 0
SHP_STANCE_FAIL_ON_RECOMPILE = 1
SHP_STANCE_DYNAMIC_ON_LIMIT = 2

SHP_CMP_EQ = 0
SHP_CMP_NE = 1
SHP_CMP_LT = 2
SHP_CMP_LE = 3
SHP_CMP_GT = 4
SHP_CMP_GE = 5

SHP_FALSE = 0
SHP_TRUE = 1
SHP_UNKNOWN = 2

SHP_F32 = 0
SHP_F64 = 1
SHP_I32 = 2
SHP_I64 = 3
SHP_BOOL = 4

SHP_NEG = 0
SHP_ABS = 1
SHP_EXP = 2
SHP_LOG = 3
SHP_LOG1P = 4
SHP_EXPM1 = 5
SHP_SQRT = 6
SHP_RSQRT = 7
SHP_SIN = 8
SHP_COS = 9
SHP_TANH = 10
SHP_LOGISTIC = 11
SHP_FLOOR = 12
SHP_CEIL = 13
SHP_ROUND = 14
SHP_SIGN = 15
SHP_NOT = 16
SHP_ERF = 17

SHP_ADD = 0
SHP_SUB = 1
SHP_MUL = 2
SHP_DIV = 3
SHP_POW = 4
SHP_MAX = 5
SHP_MIN = 6
SHP_REM = 7
SHP_AND = 8
SHP_OR = 9
SHP_XOR = 10

SHP_REDUCE_SUM = 0
SHP_REDUCE_MEAN = 1
SHP_REDUCE_MAX = 2
SHP_REDUCE_MIN = 3
SHP_REDUCE_PROD = 4

SHP_INPUT_DATA = 0
SHP_INPUT_DIM = 1
SHP_INPUT_PARAMETER = 2
SHP_INPUT_TANGENT = 3
SHP_INPUT_COTANGENT = 4

SHP_OUTPUT_PRIMAL = 0
SHP_OUTPUT_TANGENT = 1
SHP_OUTPUT_GRAD = 2

SHP_AUTO_PAD_NOTSET = 0
SHP_AUTO_PAD_SAME_UPPER = 1
SHP_AUTO_PAD_SAME_LOWER = 2
SHP_AUTO_PAD_VALID = 3

SHP_PAD_CONSTANT = 0
SHP_PAD_REFLECT = 1
SHP_PAD_EDGE = 2

SHP_DEPTH_TO_SPACE_DCR = 0
SHP_DEPTH_TO_SPACE_CRD = 1

SHP_COST_FLOPS = 0
SHP_COST_BYTES_ACCESSED = 1
SHP_COST_PEAK_BYTES = 2
SHP_COST_PARAMETER_BYTES = 3

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1

# ---- Function declarations ----------------------------------------------------------------

_p = ctypes.c_void_p  # any pointer: handles, out-params (byref), arrays, output buffers
_pp = ctypes.c_void_p  # const char* const* (an array of C strings)
_str = ctypes.c_char_p  # a NUL-terminated string passed in (bytes) or returned (borrowed)
_i32 = ctypes.c_int32
_i64 = ctypes.c_int64
_u64 = ctypes.c_uint64
_size = ctypes.c_size_t
_bool = ctypes.c_bool
_f64 = ctypes.c_double

# shp_trace_fn: the trace callback of shp_function_create.
TRACE_FN = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                            ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t,
                            ctypes.c_void_p)

# name: (restype, argtypes). Fallible functions return shp_error_t* (_p: None on success).
FUNCTIONS: Dict[str, Tuple[Any, List[Any]]] = {
    "shp_version_string": (_str, []),
    "shp_abi_version": (_i32, []),
    "shp_error_code": (_i32, [_p]),
    "shp_error_message": (_str, [_p]),
    "shp_error_destroy": (None, [_p]),
    "shp_code_string": (_str, [_i32]),
    "shp_error_create": (_p, [_i32, _str]),
    "shp_error_witness_count": (_size, [_p]),
    "shp_error_witness_holds": (_bool, [_p, _size]),
    "shp_error_witness_variable_count": (_size, [_p, _size]),
    "shp_error_witness_variable_name": (_str, [_p, _size, _size]),
    "shp_error_witness_variable_value": (_i64, [_p, _size, _size]),
    "shp_error_fix_count": (_size, [_p]),
    "shp_error_fix": (_str, [_p, _size]),
    "shp_scope_create": (_p, [_pp, _size, _p]),
    "shp_scope_create_with_ranges": (_p, [_pp, _size, _pp, _p, _p, _size, _p]),
    "shp_scope_destroy": (None, [_p]),
    "shp_scope_declare": (_p, [_p, _str, _i64, _i64]),
    "shp_scope_check": (_p, [_p, _p, _i32, _p, _str]),
    "shp_scope_variable_count": (_size, [_p]),
    "shp_scope_variable_name": (_str, [_p, _size]),
    "shp_scope_variable_range": (_p, [_p, _size, _p, _p]),
    "shp_scope_variable_is_unbacked": (_bool, [_p, _size]),
    "shp_scope_variable_origin": (_str, [_p, _size]),
    "shp_scope_constraint_count": (_size, [_p]),
    "shp_scope_constraint_text": (_str, [_p, _size]),
    "shp_scope_set_hint": (_p, [_p, _str, _i64]),
    "shp_scope_hint": (_p, [_p, _str, _p, _p]),
    "shp_scope_set_guard_policy": (_p, [_p, _i32]),
    "shp_dim_guard": (_p, [_p, _i32, _p, _str, _p]),
    "shp_scope_assume": (_p, [_p, _p, _i32, _p, _str]),
    "shp_program_guard_count": (_size, [_p]),
    "shp_program_guard_text": (_str, [_p, _size]),
    "shp_program_guard_message": (_str, [_p, _size]),
    "shp_program_guard_origin": (_str, [_p, _size]),
    "shp_program_create_variants": (_p, [_p, _size, _p]),
    "shp_program_variant_count": (_size, [_p]),
    "shp_program_variant_guard_count": (_size, [_p, _size]),
    "shp_program_variant_guard_text": (_str, [_p, _size, _size]),
    "shp_program_variant_guard_message": (_str, [_p, _size, _size]),
    "shp_program_variants_exhaustive": (_i32, [_p]),
    "shp_program_variants_counterexample": (_p, [_p, _p, _size, _p]),
    "shp_bindings_variant": (_i64, [_p]),
    "shp_dim_parse": (_p, [_p, _str, _p]),
    "shp_dim_constant": (_p, [_p, _i64, _p]),
    "shp_dim_variable": (_p, [_p, _str, _p]),
    "shp_dim_add": (_p, [_p, _p, _p]),
    "shp_dim_sub": (_p, [_p, _p, _p]),
    "shp_dim_mul": (_p, [_p, _p, _p]),
    "shp_dim_floordiv": (_p, [_p, _p, _p]),
    "shp_dim_mod": (_p, [_p, _p, _p]),
    "shp_dim_max": (_p, [_p, _p, _p]),
    "shp_dim_min": (_p, [_p, _p, _p]),
    "shp_dim_neg": (_p, [_p, _p]),
    "shp_dim_pow": (_p, [_p, _i64, _p]),
    "shp_dim_to_string": (_p, [_p, _p, _size, _p]),
    "shp_dim_is_constant": (_bool, [_p, _p]),
    "shp_dim_variables": (_p, [_p, _p, _size, _p]),
    "shp_dim_bounds": (_p, [_p, _p, _p]),
    "shp_dim_compare": (_p, [_p, _i32, _p, _p]),
    "shp_dim_evaluate": (_p, [_p, _pp, _p, _size, _p]),
    "shp_shape_parse": (_p, [_p, _str, _p, _size, _p, _size, _p]),
    "shp_scope_solve": (_p, [_p, _size, _pp, _p, _p, _p]),
    "shp_bindings_count": (_size, [_p]),
    "shp_bindings_name": (_str, [_p, _size]),
    "shp_bindings_value": (_i64, [_p, _size]),
    "shp_bindings_destroy": (None, [_p]),
    "shp_tensor_input": (_p, [_p, _str, _i32, _str, _p]),
    "shp_tensor_input_dims": (_p, [_p, _str, _i32, _p, _size, _p]),
    "shp_tensor_dim_input": (_p, [_p, _str, _p]),
    "shp_tensor_constant": (_p, [_p, _i32, _p, _size, _p, _size, _p]),
    "shp_tensor_unary": (_p, [_i32, _p, _p]),
    "shp_tensor_binary": (_p, [_i32, _p, _p, _p]),
    "shp_tensor_compare": (_p, [_p, _i32, _p, _p]),
    "shp_tensor_select": (_p, [_p, _p, _p, _p]),
    "shp_tensor_convert": (_p, [_p, _i32, _p]),
    "shp_tensor_broadcast_to": (_p, [_p, _p, _size, _p]),
    "shp_tensor_reshape": (_p, [_p, _p, _size, _p]),
    "shp_tensor_transpose": (_p, [_p, _p, _size, _p]),
    "shp_tensor_concatenate": (_p, [_p, _size, _i64, _p]),
    "shp_tensor_slice": (_p, [_p, _p, _p, _p, _size, _p]),
    "shp_tensor_pad": (_p, [_p, _p, _p, _size, _f64, _p]),
    "shp_tensor_reduce": (_p, [_i32, _p, _p, _size, _bool, _p]),
    "shp_tensor_matmul": (_p, [_p, _p, _p]),
    "shp_tensor_dot_general": (_p, [_p, _p, _p, _p, _size, _p, _p, _size, _p]),
    "shp_tensor_iota": (_p, [_p, _i32, _p, _size, _i64, _p]),
    "shp_tensor_softmax": (_p, [_p, _i64, _p]),
    "shp_tensor_layer_norm": (_p, [_p, _i64, _f64, _p]),
    "shp_tensor_cumsum": (_p, [_p, _i64, _p]),
    "shp_tensor_take": (_p, [_p, _p, _i64, _p]),
    "shp_tensor_scatter_add": (_p, [_p, _p, _p, _i64, _p]),
    "shp_tensor_reverse": (_p, [_p, _p, _size, _p]),
    "shp_tensor_dim_value": (_p, [_p, _p, _p]),
    "shp_tensor_nonzero": (_p, [_p, _p]),
    "shp_tensor_boolean_mask": (_p, [_p, _p, _i64, _p]),
    "shp_tensor_size_from_value": (_p, [_p, _str, _i64, _i64, _p]),
    "shp_tensor_conv": (_p, [_p, _p, _p, _size, _p, _p, _p, _i32, _i64, _p]),
    "shp_tensor_conv_transpose": (_p, [_p, _p, _p, _size, _p, _p, _p, _p, _i32, _i64, _p]),
    "shp_tensor_reduce_window": (_p, [_i32, _p, _p, _p, _p, _p, _p, _p, _size, _p]),
    "shp_tensor_max_pool": (_p, [_p, _size, _p, _p, _p, _p, _i32, _bool, _p]),
    "shp_tensor_avg_pool": (_p, [_p, _size, _p, _p, _p, _p, _i32, _bool, _bool, _p]),
    "shp_tensor_global_avg_pool": (_p, [_p, _p]),
    "shp_tensor_global_max_pool": (_p, [_p, _p]),
    "shp_tensor_leaky_relu": (_p, [_p, _f64, _p]),
    "shp_tensor_prelu": (_p, [_p, _p, _p]),
    "shp_tensor_elu": (_p, [_p, _f64, _p]),
    "shp_tensor_selu": (_p, [_p, _f64, _f64, _p]),
    "shp_tensor_softplus": (_p, [_p, _p]),
    "shp_tensor_softsign": (_p, [_p, _p]),
    "shp_tensor_clip": (_p, [_p, _f64, _f64, _p]),
    "shp_tensor_hard_sigmoid": (_p, [_p, _f64, _f64, _p]),
    "shp_tensor_log_softmax": (_p, [_p, _i64, _p]),
    "shp_tensor_batch_norm": (_p, [_p, _p, _p, _p, _p, _f64, _p]),
    "shp_tensor_lrn": (_p, [_p, _i64, _f64, _f64, _f64, _p]),
    "shp_tensor_pad_mode": (_p, [_p, _p, _p, _size, _i32, _f64, _p]),
    "shp_tensor_depth_to_space": (_p, [_p, _i64, _i32, _p]),
    "shp_tensor_space_to_depth": (_p, [_p, _i64, _p]),
    "shp_tensor_dtype": (_i32, [_p]),
    "shp_tensor_shape": (_p, [_p, _p, _size, _p]),
    "shp_tensor_parameter": (_p, [_p, _str, _i32, _p, _size, _p, _size, _p]),
    "shp_program_create": (_p, [_p, _p, _size, _p, _pp, _size, _p]),
    "shp_program_destroy": (None, [_p]),
    "shp_program_input_count": (_size, [_p]),
    "shp_program_input_name": (_str, [_p, _size]),
    "shp_program_input_dtype": (_i32, [_p, _size]),
    "shp_program_input_role": (_i32, [_p, _size]),
    "shp_program_input_has_default": (_bool, [_p, _size]),
    "shp_program_input_default": (_p, [_p, _size, _p]),
    "shp_program_input_shape_string": (_p, [_p, _size, _p, _size, _p]),
    "shp_program_output_count": (_size, [_p]),
    "shp_program_output_name": (_str, [_p, _size]),
    "shp_program_output_dtype": (_i32, [_p, _size]),
    "shp_program_output_role": (_i32, [_p, _size]),
    "shp_program_output_shape_string": (_p, [_p, _size, _p, _size, _p]),
    "shp_program_variable_count": (_size, [_p]),
    "shp_program_variable_name": (_str, [_p, _size]),
    "shp_program_variable_bounds": (_p, [_p, _size, _p, _p]),
    "shp_program_variable_is_unbacked": (_bool, [_p, _size]),
    "shp_program_variable_origin": (_str, [_p, _size]),
    "shp_program_constraint_count": (_size, [_p]),
    "shp_program_constraint_text": (_str, [_p, _size]),
    "shp_program_assertion_count": (_size, [_p]),
    "shp_program_assertion_text": (_str, [_p, _size]),
    "shp_program_assertion_message": (_str, [_p, _size]),
    "shp_program_to_text": (_p, [_p, _p, _size, _p]),
    "shp_program_cost": (_p, [_p, _i32, _p, _size, _p]),
    "shp_program_cost_bounds": (_p, [_p, _i32, _p, _p]),
    "shp_program_cost_unbounded_reason": (_p, [_p, _i32, _p, _size, _p]),
    "shp_program_to_dot": (_p, [_p, _p, _size, _p]),
    "shp_program_check_shapes": (_p, [_p, _pp, _p, _p, _size, _p]),
    "shp_program_output_shape": (_p, [_p, _size, _p, _p, _size, _p]),
    "shp_program_serialize": (_p, [_p, _p]),
    "shp_buffer_data": (_p, [_p]),
    "shp_buffer_size": (_size, [_p]),
    "shp_buffer_destroy": (None, [_p]),
    "shp_load_options_create": (_p, [_p]),
    "shp_load_options_set_max_bytes": (_p, [_p, _size]),
    "shp_load_options_destroy": (None, [_p]),
    "shp_program_load": (_p, [_p, _size, _p]),
    "shp_program_load_with_options": (_p, [_p, _size, _p, _p]),
    "shp_program_load_file": (_p, [_str, _p]),
    "shp_program_save_file": (_p, [_p, _str]),
    "shp_program_schema_version": (_i32, []),
    "shp_program_jvp": (_p, [_p, _pp, _size, _p]),
    "shp_program_vjp": (_p, [_p, _pp, _size, _pp, _size, _p]),
    "shp_program_grad": (_p, [_p, _str, _pp, _size, _p]),
    "shp_runtime_options_create": (_p, [_p]),
    "shp_runtime_options_set_num_threads": (_p, [_p, _i32]),
    "shp_runtime_options_set_plan_cache_capacity": (_p, [_p, _size]),
    "shp_runtime_options_set_bound_allocation": (_p, [_p, _size]),
    "shp_runtime_options_destroy": (None, [_p]),
    "shp_runtime_create": (_p, [_p, _p, _p]),
    "shp_runtime_destroy": (None, [_p]),
    "shp_runtime_run": (_p, [_p, _pp, _p, _size, _p, _size]),
    "shp_runtime_run_into": (_p, [_p, _pp, _p, _size, _p, _size]),
    "shp_runtime_dry_run": (_p, [_p, _pp, _p, _p, _p, _size]),
    "shp_runtime_cost": (_p, [_p, _i32, _pp, _p, _p, _p, _size, _p]),
    "shp_runtime_output_shape": (_p, [_p, _size, _p, _size, _p]),
    "shp_runtime_output_dim_bounds": (_p, [_p, _size, _size, _p, _p, _p]),
    "shp_runtime_plans_built": (_u64, [_p]),
    "shp_runtime_cache_hits": (_u64, [_p]),
    "shp_runtime_last_plan_build_ns": (_i64, [_p]),
    "shp_runtime_num_threads": (_i32, [_p]),
    "shp_runtime_simd_target": (_str, [_p]),
    "shp_runtime_last_variant": (_i64, [_p]),
    "shp_runtime_variant_plans_built": (_u64, [_p, _size]),
    "shp_runtime_variant_cache_hits": (_u64, [_p, _size]),
    "shp_array_create": (_p, [_i32, _p, _size, _p]),
    "shp_array_wrap": (_p, [_i32, _p, _size, _p, _size, _p]),
    "shp_array_data": (_p, [_p]),
    "shp_array_nbytes": (_size, [_p]),
    "shp_array_dtype": (_i32, [_p]),
    "shp_array_rank": (_size, [_p]),
    "shp_array_shape": (_p, [_p]),
    "shp_array_destroy": (None, [_p]),
    "shp_function_options_create": (_p, [_p]),
    "shp_function_options_destroy": (None, [_p]),
    "shp_function_options_set_dynamic": (_p, [_p, _i32]),
    "shp_function_options_set_duck_sizing": (_p, [_p, _bool]),
    "shp_function_options_set_recompile_limit": (_p, [_p, _i32]),
    "shp_function_options_set_stance": (_p, [_p, _i32]),
    "shp_function_options_set_num_threads": (_p, [_p, _i32]),
    "shp_function_create": (_p, [_p, _p, _pp, _p, _p, _size, _pp, _size, _p, _p]),
    "shp_function_destroy": (None, [_p]),
    "shp_function_mark_dynamic": (_p, [_p, _str, _i64, _i64, _i64]),
    "shp_function_mark_static": (_p, [_p, _str, _i64]),
    "shp_function_set_stance": (_p, [_p, _i32]),
    "shp_function_call": (_p, [_p, _pp, _p, _size, _p, _size]),
    "shp_function_event_count": (_size, [_p]),
    "shp_function_event_text": (_str, [_p, _size]),
    "shp_function_trace_count": (_u64, [_p]),
    "shp_function_cache_hits": (_u64, [_p]),
    "shp_function_variant_count": (_size, [_p]),
    "shp_function_export": (_p, [_p, _p]),
    "shp_simd_target": (_str, []),
    "shp_set_simd_target": (_p, [_str]),
    "shp_simd_sum_f32": (_p, [_p, _size, _p]),
}

LIBRARY_NAME = "libshapepoly.so"


def candidate_paths() -> List[str]:
    """The places searched for the library, in order (see the module docstring)."""
    paths = []
    env = os.environ.get("SHAPEPOLY_LIB")
    if env:
        paths.append(env)
    here = os.path.dirname(os.path.abspath(__file__))
    paths.append(os.path.join(here, LIBRARY_NAME))
    # <repo>/bindings/python/shapepoly/_lib.py -> <repo>/build/lib/libshapepoly.so
    repo = os.path.dirname(os.path.dirname(os.path.dirname(here)))
    paths.append(os.path.join(repo, "build", "lib", LIBRARY_NAME))
    return paths


def _load() -> Tuple[ctypes.CDLL, str]:
    env = os.environ.get("SHAPEPOLY_LIB")
    tried = []
    for path in candidate_paths():
        if not os.path.exists(path):
            tried.append(path)
            if env and path == env:
                # An explicit choice that does not exist is an error, not a fallback.
                raise ImportError("shapepoly: SHAPEPOLY_LIB=%s does not exist" % env)
            continue
        return ctypes.CDLL(path), path
    raise ImportError("shapepoly: cannot find %s (tried %s); run `make lib` or set "
                      "SHAPEPOLY_LIB" % (LIBRARY_NAME, ", ".join(tried)))


# The C integer types of the declarations above, by ctypes type: (C name, min, max). ctypes
# converts a Python int into them modulo 2^bits without a word, so every function with such a
# parameter is called through a wrapper that refuses an argument outside its type's range (or
# no integer at all) before ctypes sees it: the last line of defence behind the API's own
# checks, which name the Python argument (_errors.int_arg).
INT_PARAMS: Dict[Any, Tuple[str, int, int]] = {
    _i32: ("int32_t", -(1 << 31), (1 << 31) - 1),
    _i64: ("int64_t", INT64_MIN, INT64_MAX),
    _size: ("size_t", 0, (1 << (8 * ctypes.sizeof(_size))) - 1),
}


def int_positions(argtypes: List[Any]) -> List[Tuple[int, str, int, int]]:
    """(index, C type, min, max) of each integer parameter of a declaration."""
    return [(i, ) + INT_PARAMS[t] for i, t in enumerate(argtypes) if t in INT_PARAMS]


def _checked(name: str, fn: Any, positions: List[Tuple[int, str, int, int]]) -> Any:
    def call(*args: Any) -> Any:
        for i, cname, lo, hi in positions:
            v = args[i]
            if type(v) is int and lo <= v <= hi:
                continue
            if isinstance(v, ctypes._SimpleCData):  # already a C value: ctypes checks its type
                continue
            from ._errors import CInt, int_arg
            # A bool is 0 or 1 here (the API refuses bools where it means integers).
            int_arg(int(v) if isinstance(v, bool) else v,
                    "argument %d of %s" % (i + 1, name), CInt(cname, lo, hi))
        return fn(*args)

    call.__name__ = name
    call.__wrapped__ = fn  # type: ignore[attr-defined]
    return call


lib, path = _load()
_missing = []
for _name, (_res, _args) in FUNCTIONS.items():
    try:
        _fn = getattr(lib, _name)
    except AttributeError:
        _missing.append(_name)
        continue
    _fn.restype = _res
    _fn.argtypes = _args
    _pos = int_positions(_args)
    if _pos:
        _fn = _checked(_name, _fn, _pos)
        setattr(lib, _name, _fn)  # lib.shp_x is the checked function from now on
    globals()[_name] = _fn

# The same functions without argtypes, for the hot path of Runtime.run: called with ctypes
# objects built once, they skip the per-call argument conversion (about 1 us per call).
raw = ctypes.CDLL(path)
raw.shp_runtime_run.restype = ctypes.c_void_p
raw.shp_array_data.restype = ctypes.c_void_p

abi_version = lib.shp_abi_version()
if abi_version != SHP_ABI_VERSION:
    raise ImportError("shapepoly: %s has ABI version %d, this binding needs %d" %
                      (path, abi_version, SHP_ABI_VERSION))
if _missing:
    raise ImportError("shapepoly: %s lacks %s (an older library?)" % (path, ", ".join(_missing)))
