//! Raw FFI declarations of the libshapepoly C API, written by hand from
//! `c_api/include/shapepoly/shapepoly.h` (one item per C declaration, same names, same order).
//!
//! Everything here is `unsafe` and follows the C rules stated in the header's preamble
//! (ownership table, threading, `shp_error_t*` = NULL on success). Use the safe `shapepoly`
//! crate instead. A test (`tests/header.rs`) checks that every function of the header is
//! declared here, so a function added to the header fails the build of this crate's tests.
#![allow(non_camel_case_types)]

use std::marker::{PhantomData, PhantomPinned};
use std::os::raw::{c_char, c_void};

/// SHP_VERSION_* of the header this crate was written against.
pub const SHP_VERSION_MAJOR: i32 = 0;
pub const SHP_VERSION_MINOR: i32 = 1;
pub const SHP_VERSION_PATCH: i32 = 0;
pub const SHP_VERSION_STRING: &str = "0.1.0";
/// SHP_ABI_VERSION of the header this crate was written against; compare with
/// `shp_abi_version()` before use.
pub const SHP_ABI_VERSION: i32 = 1;

/// `SHP_LOAD_DEFAULT_MAX_BYTES`: the default cap on a loaded program's constants (1 GiB).
pub const SHP_LOAD_DEFAULT_MAX_BYTES: usize = 1 << 30;

macro_rules! opaque {
    ($($(#[$m:meta])* $name:ident;)*) => {$(
        $(#[$m])*
        #[repr(C)]
        pub struct $name {
            _data: [u8; 0],
            // !Send, !Sync, !Unpin: the safe crate decides what may cross threads.
            _marker: PhantomData<(*mut u8, PhantomPinned)>,
        }
    )*};
}

opaque! {
    /// `shp_error_t`: an error object owned by the caller (`shp_error_destroy`).
    shp_error_t;
    /// `shp_scope_t`: symbols, constraints, dims and traced tensors.
    shp_scope_t;
    /// `shp_dim_t`: an interned dim expression owned by its scope.
    shp_dim_t;
    /// `shp_bindings_t`: variable values found by a solve.
    shp_bindings_t;
    /// `shp_tensor_t`: a traced tensor owned by its scope.
    shp_tensor_t;
    /// `shp_program_t`: an immutable program.
    shp_program_t;
    /// `shp_buffer_t`: serialized bytes.
    shp_buffer_t;
    /// `shp_runtime_t`: an executable instance of a program.
    shp_runtime_t;
    /// `shp_runtime_options_t`: options of `shp_runtime_create`.
    shp_runtime_options_t;
    /// `shp_load_options_t`: options of `shp_program_load_with_options`.
    shp_load_options_t;
    /// `shp_array_t`: an n-d array.
    shp_array_t;
    /// `shp_function_t`: a compiled function (a trace callback and its variants).
    shp_function_t;
    /// `shp_function_options_t`: options of `shp_function_create`.
    shp_function_options_t;
}

/// `shp_code_t` (int32_t).
pub type shp_code_t = i32;
pub const SHP_OK: shp_code_t = 0;
pub const SHP_INVALID_ARGUMENT: shp_code_t = 1;
pub const SHP_PARSE_ERROR: shp_code_t = 2;
pub const SHP_INCONCLUSIVE: shp_code_t = 3;
pub const SHP_SCOPE_MISMATCH: shp_code_t = 4;
pub const SHP_UNSATISFIABLE: shp_code_t = 5;
pub const SHP_SHAPE_MISMATCH: shp_code_t = 6;
pub const SHP_CONSTRAINT_VIOLATION: shp_code_t = 7;
pub const SHP_UNSOLVABLE: shp_code_t = 8;
pub const SHP_DIVISION_BY_ZERO: shp_code_t = 9;
pub const SHP_OVERFLOW: shp_code_t = 10;
pub const SHP_DTYPE_MISMATCH: shp_code_t = 11;
pub const SHP_NOT_FOUND: shp_code_t = 12;
pub const SHP_INVALID_PROGRAM: shp_code_t = 13;
pub const SHP_VERSION_MISMATCH: shp_code_t = 14;
pub const SHP_UNSUPPORTED: shp_code_t = 15;
pub const SHP_OUT_OF_MEMORY: shp_code_t = 16;
pub const SHP_INTERNAL: shp_code_t = 17;
pub const SHP_GUARD_FAILED: shp_code_t = 18;

// C enums are passed as `int` (32 bits on every supported platform); they are declared as i32
// type aliases with constants, so an unknown value coming back from C is never UB.

/// `shp_cmp_t`.
pub type shp_cmp_t = i32;
pub const SHP_CMP_EQ: shp_cmp_t = 0;
pub const SHP_CMP_NE: shp_cmp_t = 1;
pub const SHP_CMP_LT: shp_cmp_t = 2;
pub const SHP_CMP_LE: shp_cmp_t = 3;
pub const SHP_CMP_GT: shp_cmp_t = 4;
pub const SHP_CMP_GE: shp_cmp_t = 5;

/// `shp_truth_t`.
pub type shp_truth_t = i32;
pub const SHP_FALSE: shp_truth_t = 0;
pub const SHP_TRUE: shp_truth_t = 1;
pub const SHP_UNKNOWN: shp_truth_t = 2;

/// `shp_guard_policy_t`.
pub type shp_guard_policy_t = i32;
pub const SHP_GUARDS_NEVER: shp_guard_policy_t = 0;
pub const SHP_GUARDS_FROM_HINTS: shp_guard_policy_t = 1;

/// `shp_dynamic_mode_t`.
pub type shp_dynamic_mode_t = i32;
pub const SHP_DYNAMIC_AUTO: shp_dynamic_mode_t = 0;
pub const SHP_DYNAMIC_ALL: shp_dynamic_mode_t = 1;
pub const SHP_DYNAMIC_NONE: shp_dynamic_mode_t = 2;

/// `shp_stance_t`.
pub type shp_stance_t = i32;
pub const SHP_STANCE_DEFAULT: shp_stance_t = 0;
pub const SHP_STANCE_FAIL_ON_RECOMPILE: shp_stance_t = 1;
pub const SHP_STANCE_DYNAMIC_ON_LIMIT: shp_stance_t = 2;

/// `shp_trace_fn`: the trace callback of `shp_function_create`. It must not unwind: a Rust
/// callback catches panics and returns an error instead.
pub type shp_trace_fn = Option<
    unsafe extern "C" fn(
        scope: *mut shp_scope_t,
        inputs: *const *const shp_tensor_t,
        num_inputs: usize,
        outputs: *mut *const shp_tensor_t,
        num_outputs: usize,
        user_data: *mut c_void,
    ) -> *mut shp_error_t,
>;

/// `shp_dtype_t`.
pub type shp_dtype_t = i32;
pub const SHP_F32: shp_dtype_t = 0;
pub const SHP_F64: shp_dtype_t = 1;
pub const SHP_I32: shp_dtype_t = 2;
pub const SHP_I64: shp_dtype_t = 3;
pub const SHP_BOOL: shp_dtype_t = 4;

/// `shp_unary_op_t`.
pub type shp_unary_op_t = i32;
pub const SHP_NEG: shp_unary_op_t = 0;
pub const SHP_ABS: shp_unary_op_t = 1;
pub const SHP_EXP: shp_unary_op_t = 2;
pub const SHP_LOG: shp_unary_op_t = 3;
pub const SHP_LOG1P: shp_unary_op_t = 4;
pub const SHP_EXPM1: shp_unary_op_t = 5;
pub const SHP_SQRT: shp_unary_op_t = 6;
pub const SHP_RSQRT: shp_unary_op_t = 7;
pub const SHP_SIN: shp_unary_op_t = 8;
pub const SHP_COS: shp_unary_op_t = 9;
pub const SHP_TANH: shp_unary_op_t = 10;
pub const SHP_LOGISTIC: shp_unary_op_t = 11;
pub const SHP_FLOOR: shp_unary_op_t = 12;
pub const SHP_CEIL: shp_unary_op_t = 13;
pub const SHP_ROUND: shp_unary_op_t = 14;
pub const SHP_SIGN: shp_unary_op_t = 15;
pub const SHP_NOT: shp_unary_op_t = 16;
pub const SHP_ERF: shp_unary_op_t = 17;

/// `shp_binary_op_t`.
pub type shp_binary_op_t = i32;
pub const SHP_ADD: shp_binary_op_t = 0;
pub const SHP_SUB: shp_binary_op_t = 1;
pub const SHP_MUL: shp_binary_op_t = 2;
pub const SHP_DIV: shp_binary_op_t = 3;
pub const SHP_POW: shp_binary_op_t = 4;
pub const SHP_MAX: shp_binary_op_t = 5;
pub const SHP_MIN: shp_binary_op_t = 6;
pub const SHP_REM: shp_binary_op_t = 7;
pub const SHP_AND: shp_binary_op_t = 8;
pub const SHP_OR: shp_binary_op_t = 9;
pub const SHP_XOR: shp_binary_op_t = 10;

/// `shp_reduce_op_t`.
pub type shp_reduce_op_t = i32;
pub const SHP_REDUCE_SUM: shp_reduce_op_t = 0;
pub const SHP_REDUCE_MEAN: shp_reduce_op_t = 1;
pub const SHP_REDUCE_MAX: shp_reduce_op_t = 2;
pub const SHP_REDUCE_MIN: shp_reduce_op_t = 3;
pub const SHP_REDUCE_PROD: shp_reduce_op_t = 4;

/// `shp_pad_mode_t`: padding modes of `shp_tensor_pad_mode`.
pub type shp_pad_mode_t = i32;
pub const SHP_PAD_CONSTANT: shp_pad_mode_t = 0;
pub const SHP_PAD_REFLECT: shp_pad_mode_t = 1;
pub const SHP_PAD_EDGE: shp_pad_mode_t = 2;

/// `shp_depth_to_space_mode_t`: channel orders of `shp_tensor_depth_to_space`.
pub type shp_depth_to_space_mode_t = i32;
pub const SHP_DEPTH_TO_SPACE_DCR: shp_depth_to_space_mode_t = 0;
pub const SHP_DEPTH_TO_SPACE_CRD: shp_depth_to_space_mode_t = 1;

/// `shp_auto_pad_t`: ONNX/PyTorch-style auto padding for conv and pooling.
pub type shp_auto_pad_t = i32;
pub const SHP_AUTO_PAD_NOTSET: shp_auto_pad_t = 0;
pub const SHP_AUTO_PAD_SAME_UPPER: shp_auto_pad_t = 1;
pub const SHP_AUTO_PAD_SAME_LOWER: shp_auto_pad_t = 2;
pub const SHP_AUTO_PAD_VALID: shp_auto_pad_t = 3;

/// `shp_input_role_t`.
pub type shp_input_role_t = i32;
pub const SHP_INPUT_DATA: shp_input_role_t = 0;
pub const SHP_INPUT_DIM: shp_input_role_t = 1;
pub const SHP_INPUT_PARAMETER: shp_input_role_t = 2;
pub const SHP_INPUT_TANGENT: shp_input_role_t = 3;
pub const SHP_INPUT_COTANGENT: shp_input_role_t = 4;

/// `shp_output_role_t`.
pub type shp_output_role_t = i32;
pub const SHP_OUTPUT_PRIMAL: shp_output_role_t = 0;
pub const SHP_OUTPUT_TANGENT: shp_output_role_t = 1;
pub const SHP_OUTPUT_GRAD: shp_output_role_t = 2;

/// `shp_cost_kind_t`: what `shp_program_cost` measures.
pub type shp_cost_kind_t = i32;
pub const SHP_COST_FLOPS: shp_cost_kind_t = 0;
pub const SHP_COST_BYTES_ACCESSED: shp_cost_kind_t = 1;
pub const SHP_COST_PEAK_BYTES: shp_cost_kind_t = 2;
pub const SHP_COST_PARAMETER_BYTES: shp_cost_kind_t = 3;

extern "C" {
    // ---- Version ----
    pub fn shp_version_string() -> *const c_char;
    pub fn shp_abi_version() -> i32;

    // ---- Errors ----
    pub fn shp_error_code(error: *const shp_error_t) -> shp_code_t;
    pub fn shp_error_message(error: *const shp_error_t) -> *const c_char;
    pub fn shp_error_destroy(error: *mut shp_error_t);
    pub fn shp_code_string(code: shp_code_t) -> *const c_char;
    pub fn shp_error_create(code: shp_code_t, message: *const c_char) -> *mut shp_error_t;
    pub fn shp_error_witness_count(error: *const shp_error_t) -> usize;
    pub fn shp_error_witness_holds(error: *const shp_error_t, i: usize) -> bool;
    pub fn shp_error_witness_variable_count(error: *const shp_error_t, i: usize) -> usize;
    pub fn shp_error_witness_variable_name(
        error: *const shp_error_t,
        i: usize,
        j: usize,
    ) -> *const c_char;
    pub fn shp_error_witness_variable_value(error: *const shp_error_t, i: usize, j: usize) -> i64;
    pub fn shp_error_fix_count(error: *const shp_error_t) -> usize;
    pub fn shp_error_fix(error: *const shp_error_t, i: usize) -> *const c_char;

    // ---- Scopes ----
    pub fn shp_scope_create(
        constraints: *const *const c_char,
        num_constraints: usize,
        scope_out: *mut *mut shp_scope_t,
    ) -> *mut shp_error_t;
    pub fn shp_scope_create_with_ranges(
        constraints: *const *const c_char,
        num_constraints: usize,
        names: *const *const c_char,
        mins: *const i64,
        maxs: *const i64,
        num_ranges: usize,
        scope_out: *mut *mut shp_scope_t,
    ) -> *mut shp_error_t;
    pub fn shp_scope_destroy(scope: *mut shp_scope_t);
    pub fn shp_scope_declare(
        scope: *mut shp_scope_t,
        name: *const c_char,
        min: i64,
        max: i64,
    ) -> *mut shp_error_t;
    pub fn shp_scope_check(
        scope: *mut shp_scope_t,
        a: *const shp_dim_t,
        op: shp_cmp_t,
        b: *const shp_dim_t,
        message: *const c_char,
    ) -> *mut shp_error_t;
    pub fn shp_scope_set_hint(
        scope: *mut shp_scope_t,
        name: *const c_char,
        value: i64,
    ) -> *mut shp_error_t;
    pub fn shp_scope_hint(
        scope: *const shp_scope_t,
        name: *const c_char,
        has_hint_out: *mut bool,
        value_out: *mut i64,
    ) -> *mut shp_error_t;
    pub fn shp_scope_set_guard_policy(
        scope: *mut shp_scope_t,
        policy: shp_guard_policy_t,
    ) -> *mut shp_error_t;
    pub fn shp_dim_guard(
        a: *const shp_dim_t,
        op: shp_cmp_t,
        b: *const shp_dim_t,
        message: *const c_char,
        bool_out: *mut bool,
    ) -> *mut shp_error_t;
    pub fn shp_scope_assume(
        scope: *mut shp_scope_t,
        a: *const shp_dim_t,
        op: shp_cmp_t,
        b: *const shp_dim_t,
        message: *const c_char,
    ) -> *mut shp_error_t;
    pub fn shp_scope_variable_count(scope: *const shp_scope_t) -> usize;
    pub fn shp_scope_variable_name(scope: *const shp_scope_t, i: usize) -> *const c_char;
    pub fn shp_scope_variable_range(
        scope: *const shp_scope_t,
        i: usize,
        min_out: *mut i64,
        max_out: *mut i64,
    ) -> *mut shp_error_t;
    pub fn shp_scope_variable_is_unbacked(scope: *const shp_scope_t, i: usize) -> bool;
    pub fn shp_scope_variable_origin(scope: *const shp_scope_t, i: usize) -> *const c_char;
    pub fn shp_scope_constraint_count(scope: *const shp_scope_t) -> usize;
    pub fn shp_scope_constraint_text(scope: *const shp_scope_t, i: usize) -> *const c_char;

    // ---- Dims ----
    pub fn shp_dim_parse(
        scope: *mut shp_scope_t,
        text: *const c_char,
        dim_out: *mut *const shp_dim_t,
    ) -> *mut shp_error_t;
    pub fn shp_dim_constant(
        scope: *mut shp_scope_t,
        value: i64,
        dim_out: *mut *const shp_dim_t,
    ) -> *mut shp_error_t;
    pub fn shp_dim_variable(
        scope: *mut shp_scope_t,
        name: *const c_char,
        dim_out: *mut *const shp_dim_t,
    ) -> *mut shp_error_t;
    pub fn shp_dim_add(
        a: *const shp_dim_t,
        b: *const shp_dim_t,
        dim_out: *mut *const shp_dim_t,
    ) -> *mut shp_error_t;
    pub fn shp_dim_sub(
        a: *const shp_dim_t,
        b: *const shp_dim_t,
        dim_out: *mut *const shp_dim_t,
    ) -> *mut shp_error_t;
    pub fn shp_dim_mul(
        a: *const shp_dim_t,
        b: *const shp_dim_t,
        dim_out: *mut *const shp_dim_t,
    ) -> *mut shp_error_t;
    pub fn shp_dim_floordiv(
        a: *const shp_dim_t,
        b: *const shp_dim_t,
        dim_out: *mut *const shp_dim_t,
    ) -> *mut shp_error_t;
    pub fn shp_dim_mod(
        a: *const shp_dim_t,
        b: *const shp_dim_t,
        dim_out: *mut *const shp_dim_t,
    ) -> *mut shp_error_t;
    pub fn shp_dim_max(
        a: *const shp_dim_t,
        b: *const shp_dim_t,
        dim_out: *mut *const shp_dim_t,
    ) -> *mut shp_error_t;
    pub fn shp_dim_min(
        a: *const shp_dim_t,
        b: *const shp_dim_t,
        dim_out: *mut *const shp_dim_t,
    ) -> *mut shp_error_t;
    pub fn shp_dim_neg(a: *const shp_dim_t, dim_out: *mut *const shp_dim_t) -> *mut shp_error_t;
    pub fn shp_dim_pow(
        a: *const shp_dim_t,
        exponent: i64,
        dim_out: *mut *const shp_dim_t,
    ) -> *mut shp_error_t;
    pub fn shp_dim_to_string(
        dim: *const shp_dim_t,
        buf: *mut c_char,
        cap: usize,
        len_out: *mut usize,
    ) -> *mut shp_error_t;
    pub fn shp_dim_is_constant(dim: *const shp_dim_t, value_out: *mut i64) -> bool;
    pub fn shp_dim_variables(
        dim: *const shp_dim_t,
        names_out: *mut *const c_char,
        cap: usize,
        count_out: *mut usize,
    ) -> *mut shp_error_t;
    pub fn shp_dim_bounds(
        dim: *const shp_dim_t,
        lo_out: *mut i64,
        hi_out: *mut i64,
    ) -> *mut shp_error_t;
    pub fn shp_dim_compare(
        a: *const shp_dim_t,
        op: shp_cmp_t,
        b: *const shp_dim_t,
        truth_out: *mut shp_truth_t,
    ) -> *mut shp_error_t;
    pub fn shp_dim_evaluate(
        dim: *const shp_dim_t,
        names: *const *const c_char,
        values: *const i64,
        n: usize,
        value_out: *mut i64,
    ) -> *mut shp_error_t;

    // ---- Shapes and solving ----
    pub fn shp_shape_parse(
        scope: *mut shp_scope_t,
        spec: *const c_char,
        like: *const i64,
        like_rank: usize,
        dims_out: *mut *const shp_dim_t,
        dims_cap: usize,
        rank_out: *mut usize,
    ) -> *mut shp_error_t;
    pub fn shp_scope_solve(
        scope: *mut shp_scope_t,
        num_args: usize,
        specs: *const *const c_char,
        shapes: *const *const i64,
        ranks: *const usize,
        bindings_out: *mut *mut shp_bindings_t,
    ) -> *mut shp_error_t;
    pub fn shp_bindings_count(b: *const shp_bindings_t) -> usize;
    pub fn shp_bindings_name(b: *const shp_bindings_t, i: usize) -> *const c_char;
    pub fn shp_bindings_value(b: *const shp_bindings_t, i: usize) -> i64;
    pub fn shp_bindings_destroy(b: *mut shp_bindings_t);

    // ---- Tensors ----
    pub fn shp_tensor_input(
        scope: *mut shp_scope_t,
        name: *const c_char,
        dtype: shp_dtype_t,
        shape_spec: *const c_char,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_input_dims(
        scope: *mut shp_scope_t,
        name: *const c_char,
        dtype: shp_dtype_t,
        dims: *const *const shp_dim_t,
        rank: usize,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_dim_input(
        scope: *mut shp_scope_t,
        var_name: *const c_char,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_constant(
        scope: *mut shp_scope_t,
        dtype: shp_dtype_t,
        shape: *const i64,
        rank: usize,
        data: *const c_void,
        nbytes: usize,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_unary(
        op: shp_unary_op_t,
        x: *const shp_tensor_t,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_binary(
        op: shp_binary_op_t,
        a: *const shp_tensor_t,
        b: *const shp_tensor_t,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_compare(
        a: *const shp_tensor_t,
        op: shp_cmp_t,
        b: *const shp_tensor_t,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_select(
        pred: *const shp_tensor_t,
        on_true: *const shp_tensor_t,
        on_false: *const shp_tensor_t,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_convert(
        x: *const shp_tensor_t,
        dtype: shp_dtype_t,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_broadcast_to(
        x: *const shp_tensor_t,
        dims: *const *const shp_dim_t,
        rank: usize,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_reshape(
        x: *const shp_tensor_t,
        dims: *const *const shp_dim_t,
        rank: usize,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_transpose(
        x: *const shp_tensor_t,
        permutation: *const i64,
        rank: usize,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_concatenate(
        xs: *const *const shp_tensor_t,
        n: usize,
        axis: i64,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_slice(
        x: *const shp_tensor_t,
        start: *const *const shp_dim_t,
        limit: *const *const shp_dim_t,
        strides: *const i64,
        rank: usize,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_pad(
        x: *const shp_tensor_t,
        low: *const *const shp_dim_t,
        high: *const *const shp_dim_t,
        rank: usize,
        value: f64,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_reduce(
        op: shp_reduce_op_t,
        x: *const shp_tensor_t,
        axes: *const i64,
        num_axes: usize,
        keepdims: bool,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_matmul(
        a: *const shp_tensor_t,
        b: *const shp_tensor_t,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_dot_general(
        a: *const shp_tensor_t,
        b: *const shp_tensor_t,
        lhs_batch: *const i64,
        rhs_batch: *const i64,
        num_batch: usize,
        lhs_contracting: *const i64,
        rhs_contracting: *const i64,
        num_contracting: usize,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_iota(
        scope: *mut shp_scope_t,
        dtype: shp_dtype_t,
        dims: *const *const shp_dim_t,
        rank: usize,
        axis: i64,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_softmax(
        x: *const shp_tensor_t,
        axis: i64,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_layer_norm(
        x: *const shp_tensor_t,
        axis: i64,
        epsilon: f64,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_cumsum(
        x: *const shp_tensor_t,
        axis: i64,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_take(
        x: *const shp_tensor_t,
        indices: *const shp_tensor_t,
        axis: i64,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_reverse(
        x: *const shp_tensor_t,
        axes: *const i64,
        num_axes: usize,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_scatter_add(
        base: *const shp_tensor_t,
        indices: *const shp_tensor_t,
        updates: *const shp_tensor_t,
        axis: i64,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;

    // ---- Neural-network building blocks (ONNX semantics) ----
    pub fn shp_tensor_leaky_relu(
        x: *const shp_tensor_t,
        alpha: f64,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_prelu(
        x: *const shp_tensor_t,
        slope: *const shp_tensor_t,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_elu(
        x: *const shp_tensor_t,
        alpha: f64,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_selu(
        x: *const shp_tensor_t,
        alpha: f64,
        gamma: f64,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_softplus(
        x: *const shp_tensor_t,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_softsign(
        x: *const shp_tensor_t,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_clip(
        x: *const shp_tensor_t,
        min: f64,
        max: f64,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_hard_sigmoid(
        x: *const shp_tensor_t,
        alpha: f64,
        beta: f64,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_log_softmax(
        x: *const shp_tensor_t,
        axis: i64,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_batch_norm(
        x: *const shp_tensor_t,
        scale: *const shp_tensor_t,
        bias: *const shp_tensor_t,
        mean: *const shp_tensor_t,
        var: *const shp_tensor_t,
        epsilon: f64,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_lrn(
        x: *const shp_tensor_t,
        size: i64,
        alpha: f64,
        beta: f64,
        bias: f64,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_pad_mode(
        x: *const shp_tensor_t,
        low: *const *const shp_dim_t,
        high: *const *const shp_dim_t,
        rank: usize,
        mode: shp_pad_mode_t,
        value: f64,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_depth_to_space(
        x: *const shp_tensor_t,
        blocksize: i64,
        mode: shp_depth_to_space_mode_t,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_space_to_depth(
        x: *const shp_tensor_t,
        blocksize: i64,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_conv(
        x: *const shp_tensor_t,
        w: *const shp_tensor_t,
        bias: *const shp_tensor_t,
        num_spatial: usize,
        strides: *const i64,
        dilations: *const i64,
        pads: *const i64,
        auto_pad: shp_auto_pad_t,
        groups: i64,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_conv_transpose(
        x: *const shp_tensor_t,
        w: *const shp_tensor_t,
        bias: *const shp_tensor_t,
        num_spatial: usize,
        strides: *const i64,
        dilations: *const i64,
        pads: *const i64,
        output_padding: *const i64,
        auto_pad: shp_auto_pad_t,
        groups: i64,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_reduce_window(
        op: shp_reduce_op_t,
        x: *const shp_tensor_t,
        window: *const i64,
        strides: *const i64,
        window_dilation: *const i64,
        base_dilation: *const i64,
        pad_low: *const *const shp_dim_t,
        pad_high: *const *const shp_dim_t,
        rank: usize,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_max_pool(
        x: *const shp_tensor_t,
        num_spatial: usize,
        kernel_shape: *const i64,
        strides: *const i64,
        dilations: *const i64,
        pads: *const i64,
        auto_pad: shp_auto_pad_t,
        ceil_mode: bool,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_avg_pool(
        x: *const shp_tensor_t,
        num_spatial: usize,
        kernel_shape: *const i64,
        strides: *const i64,
        dilations: *const i64,
        pads: *const i64,
        auto_pad: shp_auto_pad_t,
        ceil_mode: bool,
        count_include_pad: bool,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_global_avg_pool(
        x: *const shp_tensor_t,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_global_max_pool(
        x: *const shp_tensor_t,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_dim_value(
        scope: *mut shp_scope_t,
        dim: *const shp_dim_t,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;

    // ---- Data-dependent sizes ----
    pub fn shp_tensor_nonzero(
        x: *const shp_tensor_t,
        indices_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_boolean_mask(
        x: *const shp_tensor_t,
        mask: *const shp_tensor_t,
        axis: i64,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_size_from_value(
        value: *const shp_tensor_t,
        name: *const c_char,
        min: i64,
        max: i64,
        dim_out: *mut *const shp_dim_t,
    ) -> *mut shp_error_t;
    pub fn shp_tensor_dtype(tensor: *const shp_tensor_t) -> shp_dtype_t;
    pub fn shp_tensor_shape(
        tensor: *const shp_tensor_t,
        dims_out: *mut *const shp_dim_t,
        cap: usize,
        rank_out: *mut usize,
    ) -> *mut shp_error_t;

    // ---- Programs ----
    pub fn shp_tensor_parameter(
        scope: *mut shp_scope_t,
        name: *const c_char,
        dtype: shp_dtype_t,
        shape: *const i64,
        rank: usize,
        data: *const c_void,
        nbytes: usize,
        tensor_out: *mut *const shp_tensor_t,
    ) -> *mut shp_error_t;
    pub fn shp_program_create(
        scope: *mut shp_scope_t,
        inputs: *const *const shp_tensor_t,
        num_inputs: usize,
        outputs: *const *const shp_tensor_t,
        output_names: *const *const c_char,
        num_outputs: usize,
        program_out: *mut *mut shp_program_t,
    ) -> *mut shp_error_t;
    pub fn shp_program_destroy(program: *mut shp_program_t);
    pub fn shp_program_input_count(program: *const shp_program_t) -> usize;
    pub fn shp_program_input_name(program: *const shp_program_t, i: usize) -> *const c_char;
    pub fn shp_program_input_dtype(program: *const shp_program_t, i: usize) -> shp_dtype_t;
    pub fn shp_program_input_role(program: *const shp_program_t, i: usize) -> shp_input_role_t;
    pub fn shp_program_input_has_default(program: *const shp_program_t, i: usize) -> bool;
    pub fn shp_program_input_default(
        program: *const shp_program_t,
        i: usize,
        array_out: *mut *mut shp_array_t,
    ) -> *mut shp_error_t;
    pub fn shp_program_input_shape_string(
        program: *const shp_program_t,
        i: usize,
        buf: *mut c_char,
        cap: usize,
        len_out: *mut usize,
    ) -> *mut shp_error_t;
    pub fn shp_program_output_count(program: *const shp_program_t) -> usize;
    pub fn shp_program_output_name(program: *const shp_program_t, i: usize) -> *const c_char;
    pub fn shp_program_output_dtype(program: *const shp_program_t, i: usize) -> shp_dtype_t;
    pub fn shp_program_output_role(program: *const shp_program_t, i: usize) -> shp_output_role_t;
    pub fn shp_program_output_shape_string(
        program: *const shp_program_t,
        i: usize,
        buf: *mut c_char,
        cap: usize,
        len_out: *mut usize,
    ) -> *mut shp_error_t;
    pub fn shp_program_variable_count(program: *const shp_program_t) -> usize;
    pub fn shp_program_variable_name(program: *const shp_program_t, i: usize) -> *const c_char;
    pub fn shp_program_variable_bounds(
        program: *const shp_program_t,
        i: usize,
        lo_out: *mut i64,
        hi_out: *mut i64,
    ) -> *mut shp_error_t;
    pub fn shp_program_variable_is_unbacked(program: *const shp_program_t, i: usize) -> bool;
    pub fn shp_program_variable_origin(program: *const shp_program_t, i: usize) -> *const c_char;
    pub fn shp_program_constraint_count(program: *const shp_program_t) -> usize;
    pub fn shp_program_constraint_text(program: *const shp_program_t, i: usize) -> *const c_char;
    pub fn shp_program_assertion_count(program: *const shp_program_t) -> usize;
    pub fn shp_program_assertion_text(program: *const shp_program_t, i: usize) -> *const c_char;
    pub fn shp_program_assertion_message(program: *const shp_program_t, i: usize) -> *const c_char;
    pub fn shp_program_guard_count(program: *const shp_program_t) -> usize;
    pub fn shp_program_guard_text(program: *const shp_program_t, i: usize) -> *const c_char;
    pub fn shp_program_guard_message(program: *const shp_program_t, i: usize) -> *const c_char;
    pub fn shp_program_guard_origin(program: *const shp_program_t, i: usize) -> *const c_char;

    // ---- Multi-variant programs ----
    pub fn shp_program_create_variants(
        variants: *const *const shp_program_t,
        num_variants: usize,
        program_out: *mut *mut shp_program_t,
    ) -> *mut shp_error_t;
    pub fn shp_program_variant_count(program: *const shp_program_t) -> usize;
    pub fn shp_program_variant_guard_count(program: *const shp_program_t, v: usize) -> usize;
    pub fn shp_program_variant_guard_text(
        program: *const shp_program_t,
        v: usize,
        i: usize,
    ) -> *const c_char;
    pub fn shp_program_variant_guard_message(
        program: *const shp_program_t,
        v: usize,
        i: usize,
    ) -> *const c_char;
    pub fn shp_program_variants_exhaustive(program: *const shp_program_t) -> shp_truth_t;
    pub fn shp_program_variants_counterexample(
        program: *const shp_program_t,
        buf: *mut c_char,
        cap: usize,
        len_out: *mut usize,
    ) -> *mut shp_error_t;
    pub fn shp_bindings_variant(bindings: *const shp_bindings_t) -> i64;

    pub fn shp_program_to_text(
        program: *const shp_program_t,
        buf: *mut c_char,
        cap: usize,
        len_out: *mut usize,
    ) -> *mut shp_error_t;
    pub fn shp_program_cost(
        program: *const shp_program_t,
        kind: shp_cost_kind_t,
        buf: *mut c_char,
        cap: usize,
        len_out: *mut usize,
    ) -> *mut shp_error_t;
    pub fn shp_program_cost_bounds(
        program: *const shp_program_t,
        kind: shp_cost_kind_t,
        lo_out: *mut i64,
        hi_out: *mut i64,
    ) -> *mut shp_error_t;
    pub fn shp_program_cost_unbounded_reason(
        program: *const shp_program_t,
        kind: shp_cost_kind_t,
        buf: *mut c_char,
        cap: usize,
        len_out: *mut usize,
    ) -> *mut shp_error_t;
    pub fn shp_program_to_dot(
        program: *const shp_program_t,
        buf: *mut c_char,
        cap: usize,
        len_out: *mut usize,
    ) -> *mut shp_error_t;
    pub fn shp_program_check_shapes(
        program: *const shp_program_t,
        input_names: *const *const c_char,
        shapes: *const *const i64,
        ranks: *const usize,
        num_inputs: usize,
        bindings_out: *mut *mut shp_bindings_t,
    ) -> *mut shp_error_t;
    pub fn shp_program_output_shape(
        program: *const shp_program_t,
        i: usize,
        bindings: *const shp_bindings_t,
        dims_out: *mut i64,
        cap: usize,
        rank_out: *mut usize,
    ) -> *mut shp_error_t;
    pub fn shp_program_serialize(
        program: *const shp_program_t,
        buffer_out: *mut *mut shp_buffer_t,
    ) -> *mut shp_error_t;
    pub fn shp_buffer_data(buffer: *const shp_buffer_t) -> *const c_void;
    pub fn shp_buffer_size(buffer: *const shp_buffer_t) -> usize;
    pub fn shp_buffer_destroy(buffer: *mut shp_buffer_t);
    pub fn shp_load_options_create(options_out: *mut *mut shp_load_options_t) -> *mut shp_error_t;
    pub fn shp_load_options_set_max_bytes(
        options: *mut shp_load_options_t,
        max_bytes: usize,
    ) -> *mut shp_error_t;
    pub fn shp_load_options_destroy(options: *mut shp_load_options_t);
    pub fn shp_program_load(
        data: *const c_void,
        size: usize,
        program_out: *mut *mut shp_program_t,
    ) -> *mut shp_error_t;
    pub fn shp_program_load_with_options(
        data: *const c_void,
        size: usize,
        options: *const shp_load_options_t,
        program_out: *mut *mut shp_program_t,
    ) -> *mut shp_error_t;
    pub fn shp_program_schema_version() -> i32;
    pub fn shp_program_load_file(
        path: *const c_char,
        program_out: *mut *mut shp_program_t,
    ) -> *mut shp_error_t;
    pub fn shp_program_save_file(
        program: *const shp_program_t,
        path: *const c_char,
    ) -> *mut shp_error_t;

    // ---- Differentiation ----
    pub fn shp_program_jvp(
        program: *const shp_program_t,
        wrt: *const *const c_char,
        num_wrt: usize,
        program_out: *mut *mut shp_program_t,
    ) -> *mut shp_error_t;
    pub fn shp_program_vjp(
        program: *const shp_program_t,
        of: *const *const c_char,
        num_of: usize,
        wrt: *const *const c_char,
        num_wrt: usize,
        program_out: *mut *mut shp_program_t,
    ) -> *mut shp_error_t;
    pub fn shp_program_grad(
        program: *const shp_program_t,
        of: *const c_char,
        wrt: *const *const c_char,
        num_wrt: usize,
        program_out: *mut *mut shp_program_t,
    ) -> *mut shp_error_t;

    // ---- Runtime ----
    pub fn shp_runtime_options_create(
        options_out: *mut *mut shp_runtime_options_t,
    ) -> *mut shp_error_t;
    pub fn shp_runtime_options_set_num_threads(
        options: *mut shp_runtime_options_t,
        n: i32,
    ) -> *mut shp_error_t;
    pub fn shp_runtime_options_set_plan_cache_capacity(
        options: *mut shp_runtime_options_t,
        n: usize,
    ) -> *mut shp_error_t;
    pub fn shp_runtime_options_set_bound_allocation(
        options: *mut shp_runtime_options_t,
        max_bytes: usize,
    ) -> *mut shp_error_t;
    pub fn shp_runtime_options_destroy(options: *mut shp_runtime_options_t);
    pub fn shp_runtime_create(
        program: *const shp_program_t,
        options: *const shp_runtime_options_t,
        runtime_out: *mut *mut shp_runtime_t,
    ) -> *mut shp_error_t;
    pub fn shp_runtime_destroy(runtime: *mut shp_runtime_t);
    pub fn shp_runtime_run(
        runtime: *mut shp_runtime_t,
        input_names: *const *const c_char,
        inputs: *const *const shp_array_t,
        num_inputs: usize,
        outputs_out: *mut *mut shp_array_t,
        num_outputs: usize,
    ) -> *mut shp_error_t;
    pub fn shp_runtime_run_into(
        runtime: *mut shp_runtime_t,
        input_names: *const *const c_char,
        inputs: *const *const shp_array_t,
        num_inputs: usize,
        outputs: *const *mut shp_array_t,
        num_outputs: usize,
    ) -> *mut shp_error_t;
    pub fn shp_runtime_dry_run(
        runtime: *mut shp_runtime_t,
        input_names: *const *const c_char,
        dtypes: *const shp_dtype_t,
        shapes: *const *const i64,
        ranks: *const usize,
        num_inputs: usize,
    ) -> *mut shp_error_t;
    pub fn shp_runtime_cost(
        runtime: *mut shp_runtime_t,
        kind: shp_cost_kind_t,
        input_names: *const *const c_char,
        dtypes: *const shp_dtype_t,
        shapes: *const *const i64,
        ranks: *const usize,
        num_inputs: usize,
        value_out: *mut i64,
    ) -> *mut shp_error_t;
    pub fn shp_runtime_output_shape(
        runtime: *const shp_runtime_t,
        i: usize,
        dims_out: *mut i64,
        cap: usize,
        rank_out: *mut usize,
    ) -> *mut shp_error_t;
    pub fn shp_runtime_output_dim_bounds(
        runtime: *const shp_runtime_t,
        i: usize,
        axis: usize,
        data_dependent_out: *mut bool,
        min_out: *mut i64,
        max_out: *mut i64,
    ) -> *mut shp_error_t;
    pub fn shp_runtime_plans_built(runtime: *const shp_runtime_t) -> u64;
    pub fn shp_runtime_cache_hits(runtime: *const shp_runtime_t) -> u64;
    pub fn shp_runtime_last_plan_build_ns(runtime: *const shp_runtime_t) -> i64;
    pub fn shp_runtime_last_variant(runtime: *const shp_runtime_t) -> i64;
    pub fn shp_runtime_variant_plans_built(runtime: *const shp_runtime_t, v: usize) -> u64;
    pub fn shp_runtime_variant_cache_hits(runtime: *const shp_runtime_t, v: usize) -> u64;
    pub fn shp_runtime_num_threads(runtime: *const shp_runtime_t) -> i32;
    pub fn shp_runtime_simd_target(runtime: *const shp_runtime_t) -> *const c_char;

    // ---- Compiled functions ----
    pub fn shp_function_options_create(
        options_out: *mut *mut shp_function_options_t,
    ) -> *mut shp_error_t;
    pub fn shp_function_options_destroy(options: *mut shp_function_options_t);
    pub fn shp_function_options_set_dynamic(
        options: *mut shp_function_options_t,
        mode: shp_dynamic_mode_t,
    ) -> *mut shp_error_t;
    pub fn shp_function_options_set_duck_sizing(
        options: *mut shp_function_options_t,
        on: bool,
    ) -> *mut shp_error_t;
    pub fn shp_function_options_set_recompile_limit(
        options: *mut shp_function_options_t,
        limit: i32,
    ) -> *mut shp_error_t;
    pub fn shp_function_options_set_stance(
        options: *mut shp_function_options_t,
        stance: shp_stance_t,
    ) -> *mut shp_error_t;
    pub fn shp_function_options_set_num_threads(
        options: *mut shp_function_options_t,
        num_threads: i32,
    ) -> *mut shp_error_t;
    pub fn shp_function_create(
        trace_fn: shp_trace_fn,
        user_data: *mut c_void,
        input_names: *const *const c_char,
        dtypes: *const shp_dtype_t,
        ranks: *const usize,
        num_inputs: usize,
        output_names: *const *const c_char,
        num_outputs: usize,
        options: *const shp_function_options_t,
        function_out: *mut *mut shp_function_t,
    ) -> *mut shp_error_t;
    pub fn shp_function_destroy(function: *mut shp_function_t);
    pub fn shp_function_mark_dynamic(
        function: *mut shp_function_t,
        input: *const c_char,
        axis: i64,
        min: i64,
        max: i64,
    ) -> *mut shp_error_t;
    pub fn shp_function_mark_static(
        function: *mut shp_function_t,
        input: *const c_char,
        axis: i64,
    ) -> *mut shp_error_t;
    pub fn shp_function_set_stance(
        function: *mut shp_function_t,
        stance: shp_stance_t,
    ) -> *mut shp_error_t;
    pub fn shp_function_call(
        function: *mut shp_function_t,
        names: *const *const c_char,
        inputs: *const *const shp_array_t,
        num_inputs: usize,
        outputs_out: *mut *mut shp_array_t,
        num_outputs: usize,
    ) -> *mut shp_error_t;
    pub fn shp_function_event_count(function: *const shp_function_t) -> usize;
    pub fn shp_function_event_text(function: *const shp_function_t, i: usize) -> *const c_char;
    pub fn shp_function_trace_count(function: *const shp_function_t) -> u64;
    pub fn shp_function_cache_hits(function: *const shp_function_t) -> u64;
    pub fn shp_function_variant_count(function: *const shp_function_t) -> usize;
    pub fn shp_function_export(
        function: *const shp_function_t,
        program_out: *mut *mut shp_program_t,
    ) -> *mut shp_error_t;

    // ---- Arrays ----
    pub fn shp_array_create(
        dtype: shp_dtype_t,
        shape: *const i64,
        rank: usize,
        array_out: *mut *mut shp_array_t,
    ) -> *mut shp_error_t;
    pub fn shp_array_wrap(
        dtype: shp_dtype_t,
        shape: *const i64,
        rank: usize,
        data: *mut c_void,
        nbytes: usize,
        array_out: *mut *mut shp_array_t,
    ) -> *mut shp_error_t;
    pub fn shp_array_data(array: *const shp_array_t) -> *mut c_void;
    pub fn shp_array_nbytes(array: *const shp_array_t) -> usize;
    pub fn shp_array_dtype(array: *const shp_array_t) -> shp_dtype_t;
    pub fn shp_array_rank(array: *const shp_array_t) -> usize;
    pub fn shp_array_shape(array: *const shp_array_t) -> *const i64;
    pub fn shp_array_destroy(array: *mut shp_array_t);

    // ---- SIMD ----
    pub fn shp_simd_target() -> *const c_char;
    pub fn shp_set_simd_target(name: *const c_char) -> *mut shp_error_t;
    pub fn shp_simd_sum_f32(data: *const f32, n: usize, sum_out: *mut f32) -> *mut shp_error_t;
}
