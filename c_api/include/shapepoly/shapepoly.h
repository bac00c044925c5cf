/*
 * libshapepoly: the stable C API.
 *
 * libshapepoly traces a tensor program once with symbolic dimensions ("batch", "2*seq + 1"),
 * serializes it, and then loads and runs it on any concrete shapes that satisfy its
 * constraints. This header is the only stable interface of libshapepoly.so. It favours
 * simplicity over convenience: most applications use it through the Rust, Go or C# wrappers,
 * which map each function here to one method. (Experimental and test-only functions, without
 * ABI promise, are in shapepoly/shapepoly_experimental.h; see "Versioning".)
 *
 * size-gate: file: C users include one header; its op enums and op declarations are generated
 * from cc/ops/ops.toml, the rest is one documented declaration per function.
 *
 * ---- Conventions ----------------------------------------------------------------------------
 *
 *  - Names: functions are `shp_<object>_<verb>[_<qualifier>]`, object first
 *    (`shp_error_destroy`); types are `shp_<object>_t`; macros and enum constants are `SHP_*`.
 *    Every exported symbol starts with `shp_`.
 *  - Parameters: the subject comes first, then inputs, then out-params last, named `out` or
 *    `*_out`.
 *  - Types: `int64_t` for dimensions and dimension values, `size_t` for counts and byte sizes,
 *    `int32_t` (`shp_code_t`) for error codes, `bool` from <stdbool.h>.
 *  - Strings passed in are `const char*`, UTF-8, NUL-terminated; the library does not keep
 *    them after the call returns. Strings passed out are either borrowed with a documented
 *    lifetime, or written snprintf-style into `char* buf, size_t cap, size_t* len_out`:
 *    at most `cap` bytes including the terminating NUL are written (nothing if `buf` is NULL
 *    or `cap` is 0) and `*len_out` receives the full length without the NUL, so a caller can
 *    size a buffer with a first call.
 *  - Errors: a fallible function returns `shp_error_t*`: NULL on success, otherwise an error
 *    object that the caller owns and must release with `shp_error_destroy`. On error every
 *    out-param is left untouched. A NULL or invalid argument is an SHP_INVALID_ARGUMENT error,
 *    never a crash, and no C++ exception ever crosses this API. Fallible functions are marked
 *    SHP_MUST_USE_RESULT. Functions that cannot fail return their value directly.
 *
 * ---- Ownership ------------------------------------------------------------------------------
 *
 *   object                 owned by     released by                 valid until
 *   ---------------------  -----------  --------------------------  ------------------------------
 *   shp_scope_t            caller       shp_scope_destroy           destroyed
 *   dims (shp_dim_t)       their scope  (never one by one)          their scope is destroyed
 *   traced tensors         their scope  (never one by one)          their scope is destroyed
 *   shp_program_t          caller       shp_program_destroy         destroyed; independent of the
 *                                                                   scope it was traced in
 *   shp_buffer_t           caller       shp_buffer_destroy          destroyed
 *   shp_runtime_t          caller       shp_runtime_destroy         destroyed; keeps its program
 *                                                                   alive internally
 *   shp_runtime_options_t  caller       shp_runtime_options_destroy destroyed
 *   shp_load_options_t     caller       shp_load_options_destroy    destroyed
 *   shp_array_t            caller       shp_array_destroy           destroyed; a wrapped array
 *                                                                   borrows the caller's memory
 *   shp_error_t            caller       shp_error_destroy           destroyed
 *
 *   No owned handle requires another one to be destroyed later: owned handles may be
 *   destroyed in any order. Every destroy function returns void and accepts NULL.
 *
 * ---- Limits ---------------------------------------------------------------------------------
 *
 *   One table of limits (cc/base/limits.h) holds when tracing, when a program is created,
 *   serialized and loaded: what can be created can be loaded back. A value has at most 64
 *   axes; a constant holds at most 1 GiB and a program's constants at most 4 GiB; a program
 *   has at most 2^20 operations, 2^20 inputs and 2^20 outputs; an operation has at most 4096
 *   operands. Beyond them the call fails with SHP_INVALID_ARGUMENT (tracing, creation) or
 *   SHP_INVALID_PROGRAM (loading, which also caps the inflated constants by
 *   shp_load_options_set_max_bytes). Dimensions: a scope (and so a program) has at most 4096
 *   dimension variables and at most 1024 facts (constraints, assertions, guards and the
 *   derived bounds of data-dependent sizes together); a dim has at most 1024 terms in normal
 *   form, a product at most 4096 distinct factors, each factor an exponent of at most 64
 *   (n^64); a program's shapes, attributes and facts use at most 65536 distinct dimension
 *   expressions (entries of the serialized DAG). Past one of these, the builder that would
 *   cross it fails with SHP_UNSUPPORTED naming the limit (shp_dim_pow, shp_dim_mul, the
 *   parser, shp_dim_variable, shp_scope_create, shp_scope_check, shp_scope_assume,
 *   shp_dim_guard, shp_program_create), the loader with SHP_INVALID_PROGRAM. The runtime's
 *   kernels add limits that shp_runtime_create checks for every operation (SHP_UNSUPPORTED),
 *   never first at run time: transpose, slice, pad, concatenate and reverse support rank <= 16
 *   (as does dot_general or layer_norm when it must transpose), matmul at most 8 batch axes, a
 *   fused elementwise operation rank <= 32; and at most 256 threads per runtime. A dim nests
 *   floordiv/mod/max/min at most 1000 deep and has at most 100000 atoms and terms when
 *   written out as text (a few builder calls could otherwise double its text with each call);
 *   builders refuse more with SHP_UNSUPPORTED, the parser with SHP_PARSE_ERROR, the loader
 *   with SHP_INVALID_PROGRAM. Every walk over dims is iterative: any dim the builders allow
 *   works on a 256 KB thread stack.
 *
 * ---- Threading ------------------------------------------------------------------------------
 *
 *   Unless a function says otherwise, an object may be used by only one thread at a time;
 *   different objects may be used concurrently from different threads. Functions taking a
 *   `const shp_program_t*` may run concurrently on the same program (a program is immutable).
 *   Functions that take no object (version, error-code text, SIMD queries and kernels) are
 *   safe to call from any thread at any time.
 *
 * ---- Versioning -----------------------------------------------------------------------------
 *
 *   Within one SHP_ABI_VERSION only additions are made: signatures never change (a changed
 *   function gets a `_v2` sibling) and enum values are never renumbered. Check at start-up
 *   that `shp_abi_version() == SHP_ABI_VERSION`.
 *
 *   These promises cover this header only. The library also exports experimental and
 *   test-only functions, declared in shapepoly/shapepoly_experimental.h (installed next to this
 *   header, never included by it): they carry no ABI promise and may change or disappear in
 *   any release, even within one SHP_ABI_VERSION.
 */
#ifndef SHAPEPOLY_SHAPEPOLY_H_
#define SHAPEPOLY_SHAPEPOLY_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* SHP_API marks the exported functions (everything else in the library is hidden). */
#if defined(_WIN32)
#if defined(SHP_BUILDING_LIBRARY)
#define SHP_API __declspec(dllexport)
#else
#define SHP_API __declspec(dllimport)
#endif
#elif defined(__GNUC__) || defined(__clang__)
#define SHP_API __attribute__((visibility("default")))
#else
#define SHP_API
#endif

/* SHP_MUST_USE_RESULT: ignoring the returned shp_error_t* would leak it and lose the error. */
#if defined(__GNUC__) || defined(__clang__)
#define SHP_MUST_USE_RESULT __attribute__((warn_unused_result))
#else
#define SHP_MUST_USE_RESULT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Version ---------------------------------------------------------------------------- */

/** Version of this header. The library reports its own with shp_version_string(). */
#define SHP_VERSION_MAJOR 0
#define SHP_VERSION_MINOR 1
#define SHP_VERSION_PATCH 0
#define SHP_VERSION_STRING "0.1.0"

/** ABI generation: bumped only when a released signature or enum value would change. */
#define SHP_ABI_VERSION 1

/// Returns the version of the loaded library, e.g. "0.1.0".
/// @return A static NUL-terminated string; never NULL, never freed.
SHP_API const char* shp_version_string(void);

/// Returns the ABI version of the loaded library. Bindings compare it with the
/// SHP_ABI_VERSION they were compiled against and refuse to run on a mismatch.
SHP_API int32_t shp_abi_version(void);

/* ---- Errors ----------------------------------------------------------------------------- */

/** An error returned by a fallible function. Opaque; owned by the caller. */
typedef struct shp_error shp_error_t;

/** An error code: one of the SHP_* values below, stored as int32_t. */
typedef int32_t shp_code_t;

/**
 * Error codes. The values are fixed and never renumbered.
 * WARNING: new codes may be appended in later versions, also within one ABI version.
 * Applications must handle values they do not know (e.g. treat them like SHP_INTERNAL,
 * and show shp_error_message()).
 */
enum shp_code {
  SHP_OK = 0,                   /**< Success (never the code of an error object). */
  SHP_INVALID_ARGUMENT = 1,     /**< A NULL, out-of-range or otherwise invalid argument. */
  SHP_PARSE_ERROR = 2,          /**< Text (e.g. a dimension expression) could not be parsed. */
  SHP_INCONCLUSIVE = 3,         /**< A symbolic comparison could not be decided. */
  SHP_SCOPE_MISMATCH = 4,       /**< Objects from different scopes were combined. */
  SHP_UNSATISFIABLE = 5,        /**< The constraints of a scope admit no assignment. */
  SHP_SHAPE_MISMATCH = 6,       /**< Shapes are incompatible (symbolically or concretely). */
  SHP_CONSTRAINT_VIOLATION = 7, /**< Concrete shapes violate a constraint or assertion. */
  SHP_UNSOLVABLE = 8,           /**< Dimension variables cannot be solved from the inputs. */
  SHP_DIVISION_BY_ZERO = 9,     /**< A dimension expression divides by zero. */
  SHP_OVERFLOW = 10,            /**< A dimension value or size overflows int64_t. */
  SHP_DTYPE_MISMATCH = 11,      /**< Element types are incompatible. */
  SHP_NOT_FOUND = 12,           /**< A named input, output or symbol does not exist. */
  SHP_INVALID_PROGRAM = 13,     /**< A serialized program is malformed or fails verification. */
  SHP_VERSION_MISMATCH = 14,    /**< A serialized program needs a newer library/schema. */
  SHP_UNSUPPORTED = 15,         /**< A valid request that this build does not support. */
  SHP_OUT_OF_MEMORY = 16,       /**< An allocation failed. */
  SHP_INTERNAL = 17,            /**< A bug in libshapepoly; please report it. */
  SHP_GUARD_FAILED = 18         /**< Concrete shapes violate a guard, or no variant applies. */
};

/// Returns the code of an error.
/// @param[in] error The error, or NULL. Not retained.
/// @return The error's code (never SHP_OK for a non-NULL error); SHP_OK for NULL, which is
///         what a successful call returns.
SHP_API shp_code_t shp_error_code(const shp_error_t* error);

/// Returns the message of an error: a human-readable, UTF-8 description that names the
/// offending argument, symbol or constraint where there is one.
/// @param[in] error The error, or NULL. Not retained.
/// @return Borrowed from `error`, valid until shp_error_destroy(error); "" for NULL.
///         Never NULL.
SHP_API const char* shp_error_message(const shp_error_t* error);

/// Releases an error.
/// @param[in] error The error to release, or NULL (no-op). Invalid after the call.
///        The preallocated out-of-memory error is static; destroying it does nothing, so
///        callers need not treat it specially.
SHP_API void shp_error_destroy(shp_error_t* error);

/// Returns the fixed text of an error code, e.g. "SHP_INVALID_ARGUMENT: invalid argument".
/// Like sqlite3_errstr(): it describes the code only; use shp_error_message() for details.
/// @param[in] code Any value; codes unknown to this library give "unknown error code".
/// @return A static NUL-terminated string; never NULL, never freed.
SHP_API const char* shp_code_string(shp_code_t code);

/// Creates an error, for callbacks that report a failure to the library (the trace function
/// of shp_function_create): the library passes it on to its caller with its code and message.
/// @param[in] code    An error code (1 to SHP_GUARD_FAILED); any other value gives an
///                    SHP_INVALID_ARGUMENT error whose message says so.
/// @param[in] message UTF-8 text, copied; NULL is "".
/// @return A new error owned by the caller (or the library, once returned to it); never NULL
///         (out of memory: the static out-of-memory error).
SHP_API shp_error_t* shp_error_create(shp_code_t code, const char* message);

/* ---- Error details: witnesses and verified fixes ------------------------------------------
 * An SHP_INCONCLUSIVE error from a comparison the engine cannot decide (shp_dim_guard without
 * hints, or an op's shape check while tracing) explains itself:
 *  - Witnesses (0 to 2): concrete values of the dimension variables that satisfy every
 *    constraint, check, guard and variable range of the scope, one making the comparison true
 *    (shp_error_witness_holds is true) and one making it false. The true one, when found, is
 *    witness 0. Each is checked by evaluating every fact before it is listed; a search that
 *    gives up lists what it found (one witness or none) and the message says so. A witness
 *    names the variables of the comparison and every variable that shares a fact with them,
 *    in the scope's variable order; the other variables do not affect the answer.
 *  - Fixes: one sentence each, e.g. "add the constraint 'n >= 8' when creating the scope",
 *    "assert it first: shp_scope_check(scope, n, SHP_CMP_GE, 8)", "declare 'n' with the range
 *    [8, inf] (shp_scope_declare before it is used)", "write max(a, b) for both dimensions in
 *    the specification". Each is listed only after the engine, run on a copy of the scope's
 *    facts with the fix applied, decides the comparison as true, and a valuation satisfying
 *    the copy's facts was found: a fix never makes the facts unsatisfiable.
 * An SHP_CONSTRAINT_VIOLATION at run time may list fixes too: the smallest change of one
 * input dimension that satisfies the violated constraint (verified by solving again).
 * The message shows the same witnesses and fixes. Other errors have none (counts are 0).
 * Strings are UTF-8, borrowed from the error and valid until shp_error_destroy(error). */

/// Number of witnesses of `error` (0, 1 or 2); 0 for NULL.
SHP_API size_t shp_error_witness_count(const shp_error_t* error);
/// Whether witness `i` makes the comparison true (false: it makes it false). False for NULL
/// or `i` out of range.
SHP_API bool shp_error_witness_holds(const shp_error_t* error, size_t i);
/// Number of variables witness `i` gives a value; 0 for NULL or `i` out of range.
SHP_API size_t shp_error_witness_variable_count(const shp_error_t* error, size_t i);
/// Name of variable `j` of witness `i` (borrowed); NULL for NULL or out of range.
SHP_API const char* shp_error_witness_variable_name(const shp_error_t* error, size_t i, size_t j);
/// Value of variable `j` of witness `i`; 0 for NULL or out of range.
SHP_API int64_t shp_error_witness_variable_value(const shp_error_t* error, size_t i, size_t j);
/// Number of verified fixes of `error`; 0 for NULL.
SHP_API size_t shp_error_fix_count(const shp_error_t* error);
/// Fix `i` of `error` (borrowed), a sentence as described above; NULL for NULL or out of
/// range.
SHP_API const char* shp_error_fix(const shp_error_t* error, size_t i);

/* ---- Scopes ----------------------------------------------------------------------------- */

/** A scope: dimension variables, constraints, and every dim (and traced tensor) built in it.
 *  Owned by the caller; used by one thread at a time. */
typedef struct shp_scope shp_scope_t;
/** A symbolic dimension expression in normal form. Interned: two dims of one scope are equal
 *  expressions exactly when the pointers are equal. Owned by its scope, immutable, valid until
 *  the scope is destroyed; never destroyed one by one. */
typedef struct shp_dim shp_dim_t;
/** The variable values found by shp_scope_solve. Owned by the caller. */
typedef struct shp_bindings shp_bindings_t;

/** Comparison operators (fixed values). */
/* BEGIN GENERATED shp_cmp_t (tools/gen_ops.py from cc/ops/ops.toml; do not edit) */
typedef enum {
  SHP_CMP_EQ = 0,
  SHP_CMP_NE = 1,
  SHP_CMP_LT = 2,
  SHP_CMP_LE = 3,
  SHP_CMP_GT = 4,
  SHP_CMP_GE = 5
} shp_cmp_t;
/* END GENERATED shp_cmp_t */

/** Three-valued truth (fixed values). SHP_UNKNOWN means the engine can prove neither the
 *  comparison nor its negation under the scope's constraints; it is never turned into
 *  SHP_FALSE. */
typedef enum { SHP_FALSE = 0, SHP_TRUE = 1, SHP_UNKNOWN = 2 } shp_truth_t;

/// Creates a scope with constraints.
///
/// Expressions: identifiers (variables), int64 constants, `+ - *`, unary minus, parentheses,
/// `^` with a non-negative integer exponent, `floordiv(a, b)`, `mod(a, b)` (Python floor
/// semantics: mod has the sign of the divisor), `max(a, b)`, `min(a, b)`; `//` and `%` are
/// spellings of floordiv and mod. Constraints: `e1 >= e2`, `e1 <= e2`, `e1 == e2`, `e1 > e2`,
/// `e1 < e2`. Every variable is >= 1 unless declared otherwise (shp_scope_declare, or
/// shp_scope_create_with_ranges to have the constraints checked under the declared ranges).
/// Equality constraints are used by the decision procedure; they never rewrite expressions,
/// so no variable disappears from a shape.
/// @param[in]  constraints     `num_constraints` strings; may be NULL if `num_constraints` is 0.
///                             Not retained.
/// @param[out] scope_out       Receives the new scope. Untouched on error.
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL pointers), SHP_PARSE_ERROR (which constraint,
///         column, expected/found), SHP_UNSATISFIABLE (naming the constraints that cannot
///         hold together), SHP_DIVISION_BY_ZERO, SHP_OVERFLOW, SHP_UNSUPPORTED (more than
///         1024 constraints, see "Limits").
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_scope_create(const char* const* constraints,
                                                          size_t num_constraints,
                                                          shp_scope_t** scope_out);

/// Like shp_scope_create, but first declares `num_ranges` variables with inclusive ranges
/// [mins[i], maxs[i]] (INT64_MIN / INT64_MAX for unbounded), so the constraints are checked
/// and simplified under those ranges. `names`, `mins`, `maxs` may be NULL if `num_ranges` is 0.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_scope_create_with_ranges(
    const char* const* constraints, size_t num_constraints, const char* const* names,
    const int64_t* mins, const int64_t* maxs, size_t num_ranges, shp_scope_t** scope_out);

/// Destroys a scope and every dim and traced tensor built in it. NULL is a no-op.
SHP_API void shp_scope_destroy(shp_scope_t* scope);

/// Declares variable `name` with the inclusive range [min, max] (INT64_MIN / INT64_MAX for
/// unbounded). `min` may be 0 (symbolic size-0 dimensions) or negative. Allowed once per
/// variable and only before the variable is used in an expression (a constraint mentioning
/// it is fine: the constraints are re-checked under the new range).
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL arguments, invalid name, min > max, declared
///         twice, already used), SHP_UNSATISFIABLE (the range contradicts the constraints; the
///         scope is left unchanged).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_scope_declare(shp_scope_t* scope, const char* name,
                                                           int64_t min, int64_t max);

/// Asserts `a op b` (like torch._check): the decision procedure uses it from now on, and
/// every program built from the scope afterwards carries it as an assertion that the runtime
/// checks before running, failing with `message`.
/// @param[in] message  Shown when the assertion fails at run time; may be NULL (a default
///                     message is used). Copied.
/// Incremental: the variables' bounds derived before stay valid, and only the variables that
/// share a constraint (directly or through others) with the assertion are derived again.
/// @return NULL, or SHP_INVALID_ARGUMENT, SHP_SCOPE_MISMATCH, SHP_UNSATISFIABLE (the assertion
///         is provably false under the scope's constraints, within the work budget described
///         at shp_dim_bounds), SHP_UNSUPPORTED (the scope already has 1024 facts, see
///         "Limits").
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_scope_check(shp_scope_t* scope, const shp_dim_t* a,
                                                         shp_cmp_t op, const shp_dim_t* b,
                                                         const char* message);

/* ---- Hints, guards and assumptions --------------------------------------------------- */

/** What an operation does with a shape comparison it needs and the engine cannot decide
 *  (fixed values). */
typedef enum {
  SHP_GUARDS_NEVER = 0,     /**< Fail with SHP_INCONCLUSIVE (the default). */
  SHP_GUARDS_FROM_HINTS = 1 /**< Decide it on the hints and record a guard named after the op. */
} shp_guard_policy_t;

/// Gives variable `name` an example value (like a PyTorch hint of a backed SymInt). The
/// variable is created if the scope does not know it yet (it may still be declared). A hint is
/// never a fact: compare, bounds and every TRUE/FALSE answer ignore it; only shp_dim_guard and
/// the SHP_GUARDS_FROM_HINTS policy read it. Hints of 0 and 1 are ordinary values: nothing is
/// specialized on them. Setting a hint again replaces it.
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL arguments, invalid name),
///         SHP_CONSTRAINT_VIOLATION (the value lies outside the variable's range, or violates a
///         constraint, assertion or guard whose variables all have hints; the message names it
///         and the values; the previous hint stays).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_scope_set_hint(shp_scope_t* scope, const char* name,
                                                            int64_t value);

/// The hint of variable `name`: `*has_hint_out` is false (and `*value_out` untouched) when it
/// has none.
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL arguments), SHP_NOT_FOUND (no such variable).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_scope_hint(const shp_scope_t* scope, const char* name,
                                                        bool* has_hint_out, int64_t* value_out);

/// Sets what operations do with a shape comparison they cannot decide (see
/// shp_guard_policy_t). Under SHP_GUARDS_FROM_HINTS, broadcasting, matmul's contracting and
/// batch dims, concatenate's other axes, reshape sizes, slice and pad bounds are decided on the
/// hints: when the hints satisfy what the op needs, the op records it as a guard (its origin
/// names the op and the axis) and succeeds; when they do not, the op fails with
/// SHP_SHAPE_MISMATCH naming the hint values, and records nothing. A symbolic dimension is
/// broadcast only when it is provably 1: a hint of 1 never makes it broadcast.
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL scope, unknown policy).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_scope_set_guard_policy(shp_scope_t* scope,
                                                                    shp_guard_policy_t policy);

/// Decides `a op b` for code that branches on shapes. A decided comparison gives its value and
/// records nothing. An undecidable one is evaluated on the hints, and the comparison or its
/// negation, whichever the hints satisfy, is recorded as a guard: it becomes a fact of the
/// scope (later decisions stay consistent with it), and every program built from the scope
/// afterwards carries it as a precondition (a run whose shapes violate it fails with
/// SHP_GUARD_FAILED naming the guard, `message` and the values).
/// @param[in] message  Shown when the guard fails; may be NULL. Copied.
/// @param[out] bool_out Receives the value of the comparison (decided, or on the hints).
/// @return NULL, or SHP_INVALID_ARGUMENT, SHP_SCOPE_MISMATCH, SHP_INCONCLUSIVE (undecidable and
///         a variable has no hint; the message names it).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_dim_guard(const shp_dim_t* a, shp_cmp_t op,
                                                       const shp_dim_t* b, const char* message,
                                                       bool* bool_out);

/// Adds the guard `a op b` explicitly, typically to trace one variant of a program (trace
/// once under `seq > 1024` and once, in another scope, under `seq <= 1024`; then
/// shp_program_create_variants). Nothing is recorded when it already follows from the facts.
/// @param[in] message  Shown when the guard fails; may be NULL. Copied.
/// @return NULL, or SHP_INVALID_ARGUMENT, SHP_SCOPE_MISMATCH, SHP_UNSATISFIABLE (it contradicts
///         the constraints), SHP_CONSTRAINT_VIOLATION (the hints violate it), SHP_UNSUPPORTED
///         (the scope already has 1024 facts, see "Limits").
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_scope_assume(shp_scope_t* scope, const shp_dim_t* a,
                                                          shp_cmp_t op, const shp_dim_t* b,
                                                          const char* message);

/// Number of variables the scope knows (declared, or mentioned by a constraint or a dim).
/// 0 for NULL.
SHP_API size_t shp_scope_variable_count(const shp_scope_t* scope);
/// Name of variable `i` (0 <= i < count, in order of first mention); borrowed, valid until the
/// scope is destroyed. NULL if `scope` is NULL or `i` is out of range.
SHP_API const char* shp_scope_variable_name(const shp_scope_t* scope, size_t i);
/// Declared range of variable `i` ([1, INT64_MAX] unless declared).
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL pointers, `i` out of range).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_scope_variable_range(const shp_scope_t* scope,
                                                                  size_t i, int64_t* min_out,
                                                                  int64_t* max_out);
/// Whether variable `i` is unbacked (data-dependent: made by shp_tensor_nonzero,
/// shp_tensor_boolean_mask or shp_tensor_size_from_value). False for NULL or out of range.
SHP_API bool shp_scope_variable_is_unbacked(const shp_scope_t* scope, size_t i);
/// The op that produces unbacked variable `i`, e.g. "nonzero of a (n, 4) tensor" (borrowed,
/// valid until the scope is destroyed); NULL for other variables, NULL or out of range.
SHP_API const char* shp_scope_variable_origin(const shp_scope_t* scope, size_t i);
/// Number of facts: the constraints given at creation, then the assertions added by
/// shp_scope_check. 0 for NULL.
SHP_API size_t shp_scope_constraint_count(const shp_scope_t* scope);
/// Text of fact `i` (as written for constraints, printed for assertions); borrowed, valid
/// until the scope is destroyed or changed. NULL if out of range.
SHP_API const char* shp_scope_constraint_text(const shp_scope_t* scope, size_t i);

/* ---- Dims ------------------------------------------------------------------------------- */

/// Parses a dimension expression (syntax: see shp_scope_create) into its normal form.
/// @return NULL, or SHP_INVALID_ARGUMENT, SHP_PARSE_ERROR (input text, column, what was
///         expected and what was found), SHP_DIVISION_BY_ZERO (a divisor that is 0
///         wherever the constraints hold; see shp_dim_floordiv for one that may be 0),
///         SHP_OVERFLOW, SHP_UNSUPPORTED (a normal form too large, e.g. (a+b+c+d+e)^40).
///         Parentheses and calls nest at most 1000 deep (deeper text is SHP_PARSE_ERROR).
///         Messages quote at most about 200 bytes of the input, around the error column,
///         with control characters and invalid UTF-8 escaped as \xNN.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_dim_parse(shp_scope_t* scope, const char* text,
                                                       const shp_dim_t** dim_out);
/// The constant `value` as a dim of `scope`.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_dim_constant(shp_scope_t* scope, int64_t value,
                                                          const shp_dim_t** dim_out);
/// The variable `name` (created on first mention; a scope has at most 4096 variables, more
/// is SHP_UNSUPPORTED, see "Limits").
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_dim_variable(shp_scope_t* scope, const char* name,
                                                          const shp_dim_t** dim_out);

/// Arithmetic on dims of one scope; the result is the interned normal form. Overflow is
/// SHP_OVERFLOW; operands of two scopes are SHP_SCOPE_MISMATCH (naming both scopes'
/// constraints). max/min fold when the comparison is decided.
/// Divisors of floordiv/mod: a constant 0, or a divisor that is 0 wherever the constraints
/// hold, is SHP_DIVISION_BY_ZERO naming it. A divisor that may be 0 (mod(n, floordiv(m, 3))
/// with m >= 1, as JAX accepts it) or whose sign is unknown is accepted: the result is kept
/// as written (not simplified), shp_dim_evaluate and shape solving report
/// SHP_DIVISION_BY_ZERO where the divisor is 0, and shp_dim_bounds / shp_dim_compare answer
/// for the valuations where the dims compared are defined (a divisor that is never negative
/// counts as >= 1 there: mod(n, floordiv(m, 3)) >= 0 is SHP_TRUE, m >= 3 stays SHP_UNKNOWN).
/// A constraint over such a dim holds only where it is defined (mod(n, floordiv(m, 3)) == 0
/// implies m >= 3).
/// floordiv/mod/max/min nest at most 1000 deep, as the parser accepts, and a dim has at most
/// 100000 atoms and terms written out: a larger result is SHP_UNSUPPORTED, so every dim
/// prints as text that parses back. So is a result past the dimension limits of "Limits"
/// (more than 1024 terms, 4096 distinct factors in a product, a factor's exponent above 64),
/// so that every dim can be serialized and loaded.
/// Nested max (min) are flattened: max(a, max(b, c)) and max(max(a, b), c) are the same dim,
/// printed max(a, max(b, c)) (operands in a fixed structural order, nested to the right);
/// constants fold (max(max(n, 2), 9) is max(n, 9)); an operand that another provably beats or
/// ties is dropped (max(x, min(x, y)) is x); operands shared by two min operands of a max are
/// factored out (max(min(x, y), min(x, z)) is min(x, max(y, z))), and the same for min of max.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_dim_add(const shp_dim_t* a, const shp_dim_t* b,
                                                     const shp_dim_t** dim_out);
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_dim_sub(const shp_dim_t* a, const shp_dim_t* b,
                                                     const shp_dim_t** dim_out);
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_dim_mul(const shp_dim_t* a, const shp_dim_t* b,
                                                     const shp_dim_t** dim_out);
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_dim_floordiv(const shp_dim_t* a, const shp_dim_t* b,
                                                          const shp_dim_t** dim_out);
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_dim_mod(const shp_dim_t* a, const shp_dim_t* b,
                                                     const shp_dim_t** dim_out);
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_dim_max(const shp_dim_t* a, const shp_dim_t* b,
                                                     const shp_dim_t** dim_out);
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_dim_min(const shp_dim_t* a, const shp_dim_t* b,
                                                     const shp_dim_t** dim_out);
/// -a.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_dim_neg(const shp_dim_t* a, const shp_dim_t** dim_out);
/// a^exponent (exponent >= 0).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_dim_pow(const shp_dim_t* a, int64_t exponent,
                                                     const shp_dim_t** dim_out);

/// Writes the canonical text of `dim` (e.g. "2*b + 1", "a^2*b", "floordiv(a, 3)",
/// "max(a, b)"), snprintf-style: `*len_out` = full length without NUL; at most `cap` bytes
/// including the NUL are written; a NULL `buf` (whatever `cap`) is a size query. The text
/// parses back to the same dim, or, when shp_scope_check has added facts since the dim was
/// built, to a dim provably equal to it (max(n, 3) reads back as n once n >= 3 is known).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_dim_to_string(const shp_dim_t* dim, char* buf,
                                                           size_t cap, size_t* len_out);
/// True (and `*value_out` set, if non-NULL) when `dim` is a constant. False for NULL.
SHP_API bool shp_dim_is_constant(const shp_dim_t* dim, int64_t* value_out);
/// The variables occurring in `dim` (also inside floordiv/mod/max/min), in order of their
/// first mention in the scope: writes min(count, cap) names to `names_out` (borrowed, valid
/// until the scope is destroyed) and the count to `*count_out`; `names_out` may be NULL when
/// `cap` is 0.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_dim_variables(const shp_dim_t* dim,
                                                           const char** names_out, size_t cap,
                                                           size_t* count_out);

/// Sound inclusive bounds of `dim` under the scope's ranges, constraints and assertions:
/// every valuation that satisfies them gives a value in [*lo_out, *hi_out]. INT64_MIN /
/// INT64_MAX mean unbounded.
///
/// Work budget. Each query (a bounds, a comparison, a max/min/floordiv/mod simplification
/// while building or parsing a dim, the satisfiability check of shp_scope_check and of
/// shp_scope_create) may do a fixed amount of elimination work; deriving the variables'
/// bounds from the facts, done once per scope and set of facts by the first query that needs
/// it, has a fixed amount of its own. The work is counted in steps, not time, so a given
/// sequence of calls gives the same answers on every machine. Small scopes stay far below it.
/// On large scopes (tens of variables, hundreds of constraints) a query that reaches it
/// stops early and answers weaker, never wrong: wider bounds, SHP_UNKNOWN instead of
/// SHP_TRUE/SHP_FALSE, a max/min left unsimplified, a contradiction among the constraints not
/// reported as SHP_UNSATISFIABLE. Such degraded answers may also depend on the calls made
/// earlier on the scope, since bounds derived before a shp_scope_check are kept after it.
/// Bounds and comparisons of dims with max/min split cases on which operand wins
/// (max(x - y, 0) + min(x, y) == x is SHP_TRUE), within the same budget; constraints that
/// mention max/min bound their variables the same way (max(n, 3) >= 10 gives n >= 10).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_dim_bounds(const shp_dim_t* dim, int64_t* lo_out,
                                                        int64_t* hi_out);
/// Three-valued comparison `a op b` under the scope's facts: SHP_TRUE when it holds for every
/// valuation satisfying them, SHP_FALSE when it holds for none, SHP_UNKNOWN otherwise (or when
/// the engine cannot tell, e.g. past the work budget of shp_dim_bounds). Equality is
/// semantic: `b == 1` is SHP_UNKNOWN; `2*floordiv(a, 2) + mod(a, 2) == a` is SHP_TRUE.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_dim_compare(const shp_dim_t* a, shp_cmp_t op,
                                                         const shp_dim_t* b,
                                                         shp_truth_t* truth_out);
/// Evaluates `dim` with variable values given by name. Every variable of `dim` must be given;
/// names unknown to the scope are SHP_NOT_FOUND; a name given twice or a value outside its
/// variable's declared range is SHP_INVALID_ARGUMENT. Constraints are not checked here (use
/// shp_scope_solve). Overflow is SHP_OVERFLOW; a floordiv/mod divisor that is 0 at these
/// values is SHP_DIVISION_BY_ZERO naming it.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_dim_evaluate(const shp_dim_t* dim,
                                                          const char* const* names,
                                                          const int64_t* values, size_t n,
                                                          int64_t* value_out);

/* ---- Shapes and solving ----------------------------------------------------------------- */

/// Parses a shape spec: comma-separated dims, optionally in one pair of parentheses, trailing
/// comma allowed; "" and "()" are rank 0. `_` takes one dim from `like`, `...` (last position
/// only) takes the rest of it.
/// @param[in]  like      Concrete dims for `_` and `...`; may be NULL (then `like_rank` is
///                       ignored and `_`/`...` are errors). A negative entry is an unknown size
///                       (JAX's None): `_` or `...` there is an error; elsewhere a constant of
///                       the spec must equal a known entry ("different size"). Not retained.
/// @param[out] dims_out  Receives min(rank, dims_cap) dims; may be NULL if `dims_cap` is 0.
/// @param[out] rank_out  Receives the rank, so a first call with `dims_cap` 0 sizes the array.
/// @return NULL, or SHP_INVALID_ARGUMENT, SHP_PARSE_ERROR (with the dimension index and
///         column), SHP_DIVISION_BY_ZERO, SHP_OVERFLOW.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_shape_parse(shp_scope_t* scope, const char* spec,
                                                         const int64_t* like, size_t like_rank,
                                                         const shp_dim_t** dims_out,
                                                         size_t dims_cap, size_t* rank_out);
/// Solves every variable of the specs from concrete shapes: argument i has spec `specs[i]`
/// and shape `shapes[i]` of `ranks[i]` dims. As in JAX, `_` in a spec takes the given size at
/// its position and `...` (last position only) the remaining axes, binding nothing; a spec
/// may have surrounding spaces and parentheses. Linear dims (iterated over arguments), products
/// once a factor is known (`a*b, a` with (12, 3)), perfect powers (`a^2` with 9), and
/// `max(a, c)` when the value exceeds c. Then checks, in this order: rank, constant dims,
/// remainders ("Division had remainder 1 when computing the value of 'd' ..."), ranges
/// ("Expected value >= 1 for dimension variable 'b' ..."), that every variable was found,
/// consistency between arguments, and every constraint and assertion whose variables are all
/// known ("constraint a >= 2 violated: a - 2 = -1 ..."). Messages name `args[i].shape[j]`,
/// the specs and the values found so far.
/// @return NULL, or SHP_INVALID_ARGUMENT, SHP_PARSE_ERROR, SHP_SHAPE_MISMATCH (rank, constant,
///         remainder, inconsistency), SHP_CONSTRAINT_VIOLATION (range, constraint,
///         assertion), SHP_UNSOLVABLE (naming every variable that cannot be determined),
///         SHP_OVERFLOW.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_scope_solve(shp_scope_t* scope, size_t num_args,
                                                         const char* const* specs,
                                                         const int64_t* const* shapes,
                                                         const size_t* ranks,
                                                         shp_bindings_t** bindings_out);
/// Number of variables in `b` (0 for NULL).
SHP_API size_t shp_bindings_count(const shp_bindings_t* b);
/// Name of binding `i`, in order of the variables' first mention; borrowed until
/// shp_bindings_destroy. NULL if out of range.
SHP_API const char* shp_bindings_name(const shp_bindings_t* b, size_t i);
/// Value of binding `i`; 0 if out of range.
SHP_API int64_t shp_bindings_value(const shp_bindings_t* b, size_t i);
/// Releases bindings. NULL is a no-op.
SHP_API void shp_bindings_destroy(shp_bindings_t* b);

/* ---- Tensors ---------------------------------------------------------------------------- */

/** A traced tensor: a dtype and a symbolic shape (dims of its scope). Owned by its scope,
 *  immutable, valid until the scope is destroyed; never destroyed one by one. Every function
 *  that takes tensors requires them to belong to one scope (else SHP_SCOPE_MISMATCH). */
typedef struct shp_tensor shp_tensor_t;

/** Element types (fixed values; also the values in serialized programs). SHP_BOOL is one byte
 *  (0 or 1). SHP_F16 is IEEE binary16 and SHP_BF16 bfloat16 (the upper half of binary32), both
 *  stored as their 16 bits; the integer types are two's complement (signed) or plain binary.
 *
 *  The compute types are SHP_F32, SHP_F64, SHP_I32, SHP_I64 and SHP_BOOL. The others (added with
 *  schema version 9) are storage types: an operation on them computes in f32
 *  (SHP_F16, SHP_BF16), i32 (SHP_I8, SHP_U8, SHP_I16, SHP_U16) or i64 (SHP_U32, SHP_U64) and
 *  rounds (to nearest even) or wraps once when it stores its result, so a traced program shows
 *  those conversions. Operations that only move elements (reshape, transpose, slice, concatenate,
 *  pad, take, reverse, trilu, select, broadcast_to, boolean_mask, convert) take every type as it
 *  is. SHP_U64 division, remainder and power are refused (SHP_UNSUPPORTED). The table of which
 *  operation takes which type, and the conversion rules: docs/dtypes.md. */
typedef enum {
  SHP_F32 = 0,
  SHP_F64 = 1,
  SHP_I32 = 2,
  SHP_I64 = 3,
  SHP_BOOL = 4,
  SHP_F16 = 5,
  SHP_BF16 = 6,
  SHP_I8 = 7,
  SHP_U8 = 8,
  SHP_I16 = 9,
  SHP_U16 = 10,
  SHP_U32 = 11,
  SHP_U64 = 12
} shp_dtype_t;

/** Elementwise unary operations (fixed values). exp..round, erf (the error function) and
 *  tan..atanh (trigonometric and hyperbolic functions and their inverses; outside the domain,
 *  e.g. asin(2) or acosh(0.5), NaN) need a floating-point operand;
 *  neg, abs, sign a numeric one; not a bool or integer one (logical / bitwise). */
/* BEGIN GENERATED shp_unary_op_t (tools/gen_ops.py from cc/ops/ops.toml; do not edit) */
typedef enum {
  SHP_NEG = 0,
  SHP_ABS = 1,
  SHP_EXP = 2,
  SHP_LOG = 3,
  SHP_LOG1P = 4,
  SHP_EXPM1 = 5,
  SHP_SQRT = 6,
  SHP_RSQRT = 7,
  SHP_SIN = 8,
  SHP_COS = 9,
  SHP_TANH = 10,
  SHP_LOGISTIC = 11,
  SHP_FLOOR = 12,
  SHP_CEIL = 13,
  SHP_ROUND = 14,
  SHP_SIGN = 15,
  SHP_NOT = 16,
  SHP_ERF = 17,
  SHP_TAN = 18,
  SHP_SINH = 19,
  SHP_COSH = 20,
  SHP_ASIN = 21,
  SHP_ACOS = 22,
  SHP_ATAN = 23,
  SHP_ASINH = 24,
  SHP_ACOSH = 25,
  SHP_ATANH = 26
} shp_unary_op_t;
/* END GENERATED shp_unary_op_t */

/** Elementwise binary operations with NumPy broadcasting (fixed values). Both operands have
 *  the same dtype (no implicit promotion). add..rem need numeric operands (integer div
 *  rounds toward zero and rem has the sign of the dividend, as in C); and/or/xor need bool or
 *  integer operands. Integer arithmetic never traps: add/sub/mul wrap modulo 2^bits,
 *  x / 0 == x rem 0 == 0, INT_MIN / -1 == INT_MIN (wraps) and INT_MIN rem -1 == 0; pow wraps,
 *  and a negative exponent gives 1 for base 1, +-1 for base -1 and 0 otherwise. Floats follow
 *  IEEE (x / 0 is +-inf or NaN, x rem 0 is NaN, pow as C pow); max/min return NaN if either
 *  operand is NaN (numpy.maximum/minimum). */
/* BEGIN GENERATED shp_binary_op_t (tools/gen_ops.py from cc/ops/ops.toml; do not edit) */
typedef enum {
  SHP_ADD = 0,
  SHP_SUB = 1,
  SHP_MUL = 2,
  SHP_DIV = 3,
  SHP_POW = 4,
  SHP_MAX = 5,
  SHP_MIN = 6,
  SHP_REM = 7,
  SHP_AND = 8,
  SHP_OR = 9,
  SHP_XOR = 10
} shp_binary_op_t;
/* END GENERATED shp_binary_op_t */

/** Reductions (fixed values). mean needs a floating-point operand. */
/* BEGIN GENERATED shp_reduce_op_t (tools/gen_ops.py from cc/ops/ops.toml; do not edit) */
typedef enum {
  SHP_REDUCE_SUM = 0,
  SHP_REDUCE_MEAN = 1,
  SHP_REDUCE_MAX = 2,
  SHP_REDUCE_MIN = 3,
  SHP_REDUCE_PROD = 4
} shp_reduce_op_t;
/* END GENERATED shp_reduce_op_t */

/*
 * Shape rules. Every operation infers its result shape symbolically, using the scope's
 * decision procedure:
 *  - a provably wrong shape is SHP_SHAPE_MISMATCH, naming the operation and showing the
 *    symbolic shapes ("add: incompatible shapes for broadcasting: (v,) and (4,) ...",
 *    "matmul: contracting dimensions differ: 4 vs v ...");
 *  - a needed fact that the engine can neither prove nor refute is SHP_INCONCLUSIVE: the
 *    message names the comparison and the scope's constraints, and suggests the fixes (a
 *    constraint, max/min, a declared range, or shp_scope_check);
 *  - reshape with an inferred dimension whose divisibility is unknown records a shape
 *    assertion instead (like shp_scope_check), which programs carry and check at run time.
 * Broadcasting follows NumPy; a symbolic dimension broadcasts only when it is provably 1.
 * Wrong dtypes are SHP_DTYPE_MISMATCH; bad axes or attributes SHP_INVALID_ARGUMENT. Axes
 * may be negative (counted from the end). On error nothing is added to the scope, except
 * for facts: nothing is undone that the engine learned.
 * Every function below writes the new tensor to `*tensor_out` (untouched on error), and
 * does not keep the arrays it is given.
 */

/// A named data input, with a shape spec in the dim syntax (see shp_shape_parse; `_` and
/// `...` are not allowed), e.g. "batch, 784".
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL arguments, empty name, bad dtype),
///         SHP_PARSE_ERROR, SHP_SHAPE_MISMATCH (a provably negative dimension).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_input(shp_scope_t* scope, const char* name,
                                                          shp_dtype_t dtype, const char* shape_spec,
                                                          const shp_tensor_t** tensor_out);
/// A named data input with `rank` dims of `scope` (`dims` may be NULL when `rank` is 0).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_input_dims(shp_scope_t* scope, const char* name,
                                                               shp_dtype_t dtype,
                                                               const shp_dim_t* const* dims,
                                                               size_t rank,
                                                               const shp_tensor_t** tensor_out);
/// A named integer input that gives the value of the dimension variable `var_name` (created
/// if needed): a scalar SHP_I64 tensor usable like any other, named `var_name`. A program
/// that lists it among its inputs takes the variable's value from it at run time instead of
/// solving it from input shapes, so variables that appear in no input shape (e.g. the length
/// of an iota) need no dummy array.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_dim_input(shp_scope_t* scope,
                                                              const char* var_name,
                                                              const shp_tensor_t** tensor_out);
/// A constant with a concrete shape. Copies `nbytes` bytes of little-endian elements
/// (bool: one byte, 0 or 1), which must equal product(shape) * element size; `data` may be
/// NULL when `nbytes` is 0. Constants are never program inputs.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_constant(shp_scope_t* scope, shp_dtype_t dtype,
                                                             const int64_t* shape, size_t rank,
                                                             const void* data, size_t nbytes,
                                                             const shp_tensor_t** tensor_out);

/// Elementwise `op(x)`; same shape and dtype as `x`.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_unary(shp_unary_op_t op, const shp_tensor_t* x,
                                                          const shp_tensor_t** tensor_out);
/// Elementwise `a op b` with broadcasting.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_binary(shp_binary_op_t op,
                                                           const shp_tensor_t* a,
                                                           const shp_tensor_t* b,
                                                           const shp_tensor_t** tensor_out);
/// Elementwise comparison `a op b` with broadcasting; the result is SHP_BOOL.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_compare(const shp_tensor_t* a, shp_cmp_t op,
                                                            const shp_tensor_t* b,
                                                            const shp_tensor_t** tensor_out);
/// `pred ? on_true : on_false` elementwise, the three broadcast together; `pred` is SHP_BOOL.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_select(const shp_tensor_t* pred,
                                                           const shp_tensor_t* on_true,
                                                           const shp_tensor_t* on_false,
                                                           const shp_tensor_t** tensor_out);
/// Converts the elements to `dtype` (floats to integers round toward zero and saturate to the
/// integer's range, NaN gives 0; f64 to f32 rounds to nearest; to bool: != 0).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_convert(const shp_tensor_t* x,
                                                            shp_dtype_t dtype,
                                                            const shp_tensor_t** tensor_out);
/// Broadcasts `x` to the shape `dims` (NumPy broadcast_to: trailing axes aligned; each axis of
/// `x` equals the target or is provably 1).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_broadcast_to(const shp_tensor_t* x,
                                                                 const shp_dim_t* const* dims,
                                                                 size_t rank,
                                                                 const shp_tensor_t** tensor_out);
/// Reshapes `x` to `dims` (row-major). One entry may be NULL: that dimension is inferred as
/// floordiv(size of x, product of the others); when the divisibility cannot be decided, a
/// shape assertion is recorded. Otherwise the sizes must be provably equal.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_reshape(const shp_tensor_t* x,
                                                            const shp_dim_t* const* dims,
                                                            size_t rank,
                                                            const shp_tensor_t** tensor_out);
/// Permutes the axes: result axis i is axis `permutation[i]` of `x` (`rank` = rank of x).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_transpose(const shp_tensor_t* x,
                                                              const int64_t* permutation,
                                                              size_t rank,
                                                              const shp_tensor_t** tensor_out);
/// Concatenates `n` >= 1 tensors of one dtype and rank along `axis`; the other axes must be
/// provably equal.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_concatenate(const shp_tensor_t* const* xs,
                                                                size_t n, int64_t axis,
                                                                const shp_tensor_t** tensor_out);
/// x[start:limit:stride] on every axis (`rank` = rank of x). `start`/`limit` may be NULL
/// (all 0 / the dimensions) or have NULL entries (the same default per axis); `strides` may be
/// NULL (all 1), entries >= 1. Needs 0 <= start <= limit <= dimension, provably.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_slice(const shp_tensor_t* x,
                                                          const shp_dim_t* const* start,
                                                          const shp_dim_t* const* limit,
                                                          const int64_t* strides, size_t rank,
                                                          const shp_tensor_t** tensor_out);
/// Pads each axis with `low[i]` elements before and `high[i]` after (provably >= 0), filled
/// with `value` (converted to the dtype).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_pad(const shp_tensor_t* x,
                                                        const shp_dim_t* const* low,
                                                        const shp_dim_t* const* high, size_t rank,
                                                        double value,
                                                        const shp_tensor_t** tensor_out);
/// Reduces over `axes` (distinct; `num_axes` 0 reduces over every axis), keeping them as size
/// 1 when `keepdims`.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_reduce(shp_reduce_op_t op,
                                                           const shp_tensor_t* x,
                                                           const int64_t* axes, size_t num_axes,
                                                           bool keepdims,
                                                           const shp_tensor_t** tensor_out);
/// XLA dot_general: the result axes are the batch axes, then the free axes of `a`, then the
/// free axes of `b`. Batch and contracting dimensions must be provably equal pairwise.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_dot_general(
    const shp_tensor_t* a, const shp_tensor_t* b, const int64_t* lhs_batch,
    const int64_t* rhs_batch, size_t num_batch, const int64_t* lhs_contracting,
    const int64_t* rhs_contracting, size_t num_contracting, const shp_tensor_t** tensor_out);
/// A tensor of shape `dims` (rank >= 1) whose elements count 0, 1, ... along `axis`.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_iota(shp_scope_t* scope, shp_dtype_t dtype,
                                                         const shp_dim_t* const* dims, size_t rank,
                                                         int64_t axis,
                                                         const shp_tensor_t** tensor_out);
/// How shp_tensor_scatter combines an update with the base element it hits (its `reduction`).
typedef enum {
  SHP_SCATTER_REPLACE = 0, /* the update (among repeated indices: the last position's) */
  SHP_SCATTER_ADD = 1,     /* element + update */
  SHP_SCATTER_MUL = 2,     /* element * update */
  SHP_SCATTER_MAX = 3,     /* the larger (NaN if either is NaN) */
  SHP_SCATTER_MIN = 4      /* the smaller (NaN if either is NaN) */
} shp_scatter_reduction_t;
/* BEGIN GENERATED c_functions (tools/gen_ops.py from cc/ops/ops.toml; do not edit) */
/// NumPy matmul: (..., n, k) x (..., k, m) -> (..., n, m), batch axes broadcast; a rank-1
/// operand is a row (lhs) or column (rhs) vector whose axis is removed from the result.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_matmul(const shp_tensor_t* a,
                                                           const shp_tensor_t* b,
                                                           const shp_tensor_t** tensor_out);
/// Softmax along `axis` (floating point).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_softmax(const shp_tensor_t* x, int64_t axis,
                                                            const shp_tensor_t** tensor_out);
/// (x - mean) / sqrt(variance + epsilon) along `axis` (floating point; epsilon >= 0).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_layer_norm(const shp_tensor_t* x, int64_t axis,
                                                               double epsilon,
                                                               const shp_tensor_t** tensor_out);
/// Inclusive cumulative sum along `axis`.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_cumsum(const shp_tensor_t* x, int64_t axis,
                                                           const shp_tensor_t** tensor_out);
/// np.take(x, indices, axis): shape x[:axis] + indices + x[axis+1:]; integer indices (an index
/// outside [0, dimension) is an error at run time).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_take(const shp_tensor_t* x,
                                                         const shp_tensor_t* indices, int64_t axis,
                                                         const shp_tensor_t** tensor_out);
/// np.take_along_axis(x, indices, axis), PyTorch gather, ONNX GatherElements. x: any dtype,
/// rank at least 1; indices: i32 or i64 of x's rank, every dimension but `axis` provably equal
/// to x's. The result has the indices' shape and x's dtype: result[..., j, ...] = x[...,
/// indices[..., j, ...], ...] along `axis` (in [-rank, rank)). With n = x's dimension `axis`,
/// an index in [-n, 0) counts from the end (i + n, as NumPy and ONNX); one outside [-n, n)
/// fails the run (SHP_INVALID_ARGUMENT naming the index, its position and the axis). Reverse
/// mode: the cotangent added into zeros of x's shape at the gathered positions (scatter_add).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_take_along_axis(
    const shp_tensor_t* x, const shp_tensor_t* indices, int64_t axis,
    const shp_tensor_t** tensor_out);
/// The transpose of take (np.add.at on a copy of `base`, JAX's base.at[..., indices, ...].add):
/// a tensor of base's shape and dtype where, for every position j of `indices`, the slice of
/// `updates` at j is added into `base` along `axis` at index indices[j]; repeated indices
/// accumulate, in the order of their positions (reproducible results). `updates` has the shape
/// of take(base, indices, axis): base[:axis] + indices + base[axis+1:]. Numeric base and
/// updates of one dtype, integer indices of any rank (an index outside [0, dimension) is an
/// error at run time, as for take). take(x, i, axis)'s reverse-mode derivative is
/// scatter_add(zeros, i, cotangent, axis).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_scatter_add(const shp_tensor_t* base,
                                                                const shp_tensor_t* indices,
                                                                const shp_tensor_t* updates,
                                                                int64_t axis,
                                                                const shp_tensor_t** tensor_out);
/// scatter_add with a choice of reduction (ONNX ScatterElements/ScatterND, JAX's base.at[...,
/// indices, ...].set/add/multiply/max/min): a tensor of base's shape and dtype where, for every
/// position j of `indices` in row-major order, the slice of `updates` at j is combined along
/// `axis` with the base's slice at index indices[j]. `reduction` (shp_scatter_reduction_t):
/// SHP_SCATTER_REPLACE (the update replaces the element; with repeated indices the update at
/// the last position wins, deterministically), SHP_SCATTER_ADD, SHP_SCATTER_MUL (integers
/// wrap), SHP_SCATTER_MAX or SHP_SCATTER_MIN (a NaN on either side gives NaN). Elements no
/// index hits keep the base's value. The layout is scatter_add's: `updates` has the shape of
/// take(base, indices, axis) = base[:axis] + indices + base[axis+1:]; numeric base and updates
/// of one dtype, integer indices of any rank, each in [0, dimension) (another fails the run
/// naming the index and its position). Derivatives: REPLACE (an update that loses to a later
/// repeat gets none), ADD, and MAX/MIN (ties share the derivative equally); MUL is refused
/// (SHP_UNSUPPORTED).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_scatter(const shp_tensor_t* base,
                                                            const shp_tensor_t* indices,
                                                            const shp_tensor_t* updates,
                                                            int64_t axis, int64_t reduction,
                                                            const shp_tensor_t** tensor_out);
/// Fused scaled dot-product attention (ONNX Attention, PyTorch scaled_dot_product_attention). q
/// [..., hq, s, d], k [..., hkv, l, d], v [..., hkv, l, dv] of one floating-point dtype and
/// equal leading dims; hq a multiple of hkv (grouped-query: query head h reads kv head h / (hq
/// / hkv)); equal or both constant. mask: bool (true keeps the key, false adds -inf) or q's
/// dtype (added to the scores), broadcastable to the scores [..., hq, s, l]; pass a rank-0 true
/// for none. scale: the factor of q.k, 0 for 1/sqrt(d) (finite). causal: 0 none, 1 upper-left
/// (query i sees keys j <= i; PyTorch's is_causal, ONNX without a past cache), 2 lower-right (j
/// <= i + l - s; ONNX with a past cache of l - s keys). Per query row: z = scale * q.k +
/// (causal bias + mask bias); the weights are softmax(z) (the softmax op: max subtracted; a NaN
/// or +inf in z gives NaN), except a row whose bias, or z, is -inf at every key (fully masked):
/// its weights and result row are 0 (ONNX's Attention). Result [..., hq, s, dv] = weights . v.
/// Derivatives in q, k, v and a float mask (the composite's: matmul, softmax, select).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_attention(
    const shp_tensor_t* q, const shp_tensor_t* k, const shp_tensor_t* v, const shp_tensor_t* mask,
    double scale, int64_t causal, const shp_tensor_t** tensor_out);
/// np.flip(x, axes): the order of the elements reversed along each axis of `axes` (num_axes
/// entries; negative axes count from the end; each axis at most once; num_axes == 0 gives a
/// copy of x). Any dtype; the shape does not change. Needed for the transpose of cumsum.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_reverse(const shp_tensor_t* x,
                                                            const int64_t* axes, size_t num_axes,
                                                            const shp_tensor_t** tensor_out);
/// numpy.triu(x, k) (upper) or numpy.tril(x, k) (lower), ONNX Trilu: the matrices in the last
/// two axes of x (rank >= 2, any dtype) with the elements below diagonal k (upper: where j - i
/// < k) or above it (lower: where j - i > k) set to zero (false for bool). k may be any value
/// (positive: above the main diagonal). The shape does not change.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_trilu(const shp_tensor_t* x, int64_t k,
                                                          bool upper,
                                                          const shp_tensor_t** tensor_out);
/* END GENERATED c_functions */
/// The value of `dim` (a dim of `scope`) as a scalar SHP_I64 tensor, like JAX's
/// jnp.array(x.shape[0]).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_dim_value(shp_scope_t* scope,
                                                              const shp_dim_t* dim,
                                                              const shp_tensor_t** tensor_out);
/// ONNX TopK (torch.topk): the `k` largest (`largest`) or smallest elements of `x` along `axis`
/// (negative: from the end) as two tensors of x's shape with that axis of size k: the values
/// (x's dtype: SHP_F32, SHP_F64, SHP_I32 or SHP_I64) and their SHP_I64 indices along the axis.
/// Order: best first (descending for largest, ascending for smallest); equal values by the
/// lower index first; NaN is larger than +inf (first for largest, last for smallest), as
/// ONNX's reference and numpy's sort; -0.0 equals 0.0. `sorted` false allows any order: the
/// result is the sorted one. `k` is a dim of x's scope (constant, symbolic, or made by
/// shp_tensor_size_from_value) with 0 <= k <= the axis's size: provably, else recorded as a
/// shape assertion checked at run time; a data-dependent k must be checked first
/// (shp_scope_check). The two results are two nodes (top_k_values and top_k_indices) with one
/// selection each; the values are differentiable (the cotangent is added at the indices).
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL arguments, axis out of range, rank 0),
///         SHP_DTYPE_MISMATCH (bool), SHP_SHAPE_MISMATCH (k provably outside [0, size]),
///         SHP_INCONCLUSIVE (a data-dependent k not known to fit), SHP_SCOPE_MISMATCH.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_top_k(const shp_tensor_t* x, const shp_dim_t* k,
                                                          int64_t axis, bool largest, bool sorted,
                                                          const shp_tensor_t** values_out,
                                                          const shp_tensor_t** indices_out);

/* ---- Data-dependent sizes -------------------------------------------------------------------
 * Some sizes come from the data: the number of nonzero elements, the rows a mask selects, a
 * length the program computes. Each op below makes a new *unbacked* dimension variable (like
 * PyTorch's unbacked SymInts): named u0, u1, ... (the first free name) unless the caller names
 * it, with the bounds its op guarantees as facts (0 <= u <= numel(x) for nonzero). It has no
 * hint and is never solved from input shapes: comparisons are answered from its bounds and
 * the facts only; shp_dim_guard on an undecided comparison over it fails with
 * SHP_INCONCLUSIVE naming the variable, its op and bounds, and the shp_scope_check that fixes
 * it (the fact is then used by the engine and checked by the runtime once the value is known).
 * Later ops may use the variable in their shapes like any dim (slice to u, iota of length u,
 * reshape [u, 2] -> [2*u], matmul over a u axis, ...). At run time the program is planned in
 * stages: the part before the first data-dependent op per input shape, each later part when
 * the value is known (plans cached by input shapes and values). See docs/data_dependent.md. */

/// np.argwhere(x): the indices of the nonzero elements of `x` (any dtype and rank; floats:
/// -0.0 is zero and NaN is nonzero; bool: true) as an SHP_I64 tensor of shape [u, rank(x)], in
/// row-major order. `u` is a new unbacked variable with 0 <= u <= numel(x)
/// (shp_tensor_dim(*indices_out, 0) returns it).
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL arguments).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_nonzero(const shp_tensor_t* x,
                                                            const shp_tensor_t** indices_out);
/// x[mask] along `axis`: the SHP_BOOL `mask` (rank k >= 1) covers axes axis..axis+k-1 of `x`
/// (its shape must equal theirs, provably); the result replaces those axes by one axis of
/// length u (a new unbacked variable, 0 <= u <= numel(mask)) holding, in row-major order, the
/// slices whose mask entry is true. `axis` may be negative (counts from the end of x's axes).
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL arguments, axis out of range, x's rank below
///         axis + k), SHP_DTYPE_MISMATCH (mask not SHP_BOOL), SHP_SHAPE_MISMATCH (the mask's
///         shape differs from the axes it covers), SHP_INCONCLUSIVE (their equality is
///         undecided), SHP_SCOPE_MISMATCH.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_boolean_mask(const shp_tensor_t* x,
                                                                 const shp_tensor_t* mask,
                                                                 int64_t axis,
                                                                 const shp_tensor_t** tensor_out);
/// A dim whose value is the scalar SHP_I64 tensor `value`, computed by the program (like
/// PyTorch's `.item()` used as a size): a new unbacked variable named `name` (NULL or "": u0,
/// u1, ...) with the declared range [min, max] (0 <= min <= max; INT64_MAX: unbounded), which
/// the engine uses as facts and the runtime checks when the value is computed (a value
/// outside fails the run with SHP_CONSTRAINT_VIOLATION naming the variable, the op and the
/// value).
/// @param[out] dim_out Receives the dim, owned by the scope.
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL arguments, invalid or taken name, min < 0,
///         min > max), SHP_DTYPE_MISMATCH (not SHP_I64), SHP_SHAPE_MISMATCH (not rank 0).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_size_from_value(const shp_tensor_t* value,
                                                                    const char* name, int64_t min,
                                                                    int64_t max,
                                                                    const shp_dim_t** dim_out);

/* ---- Neural-network building blocks (ONNX semantics) --------------------------------------
 * Composites of the operations above, recorded through the trace: programs that use them
 * serialize, differentiate and fuse like any other (an elementwise chain runs as one pass).
 * Floating-point x (f32, f64) unless said otherwise; tensor arguments of x's dtype and scope.
 * Arguments are checked before anything is recorded: a rejected call adds no tensor. */

/// ONNX LeakyRelu: x >= 0 ? x : alpha * x (alpha finite).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_leaky_relu(const shp_tensor_t* x, double alpha,
                                                               const shp_tensor_t** tensor_out);
/// ONNX PRelu: x >= 0 ? x : slope * x, where `slope` broadcasts to x's shape (never the reverse).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_prelu(
    const shp_tensor_t* x, const shp_tensor_t* slope /* broadcasts to x */,
    const shp_tensor_t** tensor_out);
/// ONNX Elu: x >= 0 ? x : alpha * (e^x - 1) (computed with expm1; alpha finite).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_elu(const shp_tensor_t* x, double alpha,
                                                        const shp_tensor_t** tensor_out);
/// ONNX Selu: gamma * (x > 0 ? x : alpha * (e^x - 1)) (ONNX's defaults: alpha =
/// 1.67326319217681884765625, gamma = 1.05070102214813232421875).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_selu(const shp_tensor_t* x, double alpha,
                                                         double gamma,
                                                         const shp_tensor_t** tensor_out);
/// ONNX Softplus, log(1 + e^x), in the stable form max(x, 0) + log1p(e^-|x|).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_softplus(const shp_tensor_t* x,
                                                             const shp_tensor_t** tensor_out);
/// ONNX Softsign: x / (1 + |x|).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_softsign(const shp_tensor_t* x,
                                                             const shp_tensor_t** tensor_out);
/// ONNX Clip: min(max(x, min), max), for every numeric dtype; -INFINITY / INFINITY mean no
/// bound (NaN bounds are errors). min > max gives max everywhere (as ONNX). Integer x: the
/// bounds are rounded inward (ceil(min), floor(max)); a bound beyond the dtype's range is none.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_clip(const shp_tensor_t* x, double min,
                                                         double max,
                                                         const shp_tensor_t** tensor_out);
/// ONNX HardSigmoid: max(0, min(1, alpha * x + beta)) (ONNX's defaults: 0.2, 0.5).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_hard_sigmoid(const shp_tensor_t* x,
                                                                 double alpha, double beta,
                                                                 const shp_tensor_t** tensor_out);
/// ONNX LogSoftmax (opset 13: one axis, negative counts from the end), in the stable form
/// x - max - log(sum(e^(x - max))) along `axis`.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_log_softmax(const shp_tensor_t* x, int64_t axis,
                                                                const shp_tensor_t** tensor_out);
/// ONNX BatchNormalization, inference form: x [N, C, ...] (rank >= 2); scale, bias, mean, var
/// each [C] (provably C); epsilon finite and >= 0. Computes a = scale / sqrt(var + epsilon)
/// and b = bias - mean * a on [C], then x * a + b (one fused pass over x).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_batch_norm(
    const shp_tensor_t* x /* [N, C, ...] */, const shp_tensor_t* scale, const shp_tensor_t* bias,
    const shp_tensor_t* mean, const shp_tensor_t* var /* each [C] */, double epsilon,
    const shp_tensor_t** tensor_out);
/// ONNX LRN across channels: x [N, C, ...] (rank >= 2), size >= 1; y = x * (bias + alpha /
/// size * s)^-beta, s the sum of the squares over channels [c - floor((size - 1) / 2),
/// c + ceil((size - 1) / 2)] (zero outside [0, C)). ONNX's defaults: alpha 1e-4, beta 0.75,
/// bias 1.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_lrn(const shp_tensor_t* x /* [N, C, ...] */,
                                                        int64_t size, double alpha, double beta,
                                                        double bias,
                                                        const shp_tensor_t** tensor_out);
/// Padding modes of shp_tensor_pad_mode (ONNX Pad's constant, reflect and edge; numpy.pad's
/// constant, reflect and edge).
typedef enum { SHP_PAD_CONSTANT = 0, SHP_PAD_REFLECT = 1, SHP_PAD_EDGE = 2 } shp_pad_mode_t;
/// Pads each axis i of x (any dtype) by low[i] before and high[i] after (dims of x's scope,
/// provably >= 0; `rank` = rank of x). SHP_PAD_CONSTANT fills with `value` (shp_tensor_pad);
/// SHP_PAD_REFLECT mirrors without repeating the edge and needs every non-zero pad <= dim - 1;
/// SHP_PAD_EDGE repeats the edge element and needs dim >= 1 on every padded axis. A need that
/// is provably false is SHP_SHAPE_MISMATCH naming the axis; one the engine cannot decide is
/// recorded as a shape assertion (checked at run time). Axes are padded in order, as numpy.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_pad_mode(
    const shp_tensor_t* x, const shp_dim_t* const* low, const shp_dim_t* const* high, size_t rank,
    shp_pad_mode_t mode, double value /* SHP_PAD_CONSTANT only */, const shp_tensor_t** tensor_out);
/// Channel orders of shp_tensor_depth_to_space (ONNX DepthToSpace's modes).
typedef enum { SHP_DEPTH_TO_SPACE_DCR = 0, SHP_DEPTH_TO_SPACE_CRD = 1 } shp_depth_to_space_mode_t;
/// ONNX DepthToSpace (pixel shuffle): x [N, C, H, W] (any dtype) -> [N, C / b^2, H * b, W * b],
/// b = blocksize >= 1. C must be provably divisible by b^2 (else SHP_SHAPE_MISMATCH, or
/// SHP_INCONCLUSIVE naming the constraint to add, such as 'mod(c, 4) == 0').
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_depth_to_space(
    const shp_tensor_t* x /* [N, C, H, W] */, int64_t blocksize, shp_depth_to_space_mode_t mode,
    const shp_tensor_t** tensor_out);
/// ONNX SpaceToDepth, the inverse of DCR depth_to_space: x [N, C, H, W] (any dtype) ->
/// [N, C * b^2, H / b, W / b]; H and W must be provably divisible by b = blocksize >= 1.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_space_to_depth(const shp_tensor_t* x,
                                                                   int64_t blocksize,
                                                                   const shp_tensor_t** tensor_out);

/// ONNX/PyTorch-style auto padding for conv and pooling.
typedef enum {
  SHP_AUTO_PAD_NOTSET = 0,     /* use the explicit pads */
  SHP_AUTO_PAD_SAME_UPPER = 1, /* out = ceil(in / stride); the extra pad goes at the end */
  SHP_AUTO_PAD_SAME_LOWER = 2, /* the same; the extra pad goes at the beginning */
  SHP_AUTO_PAD_VALID = 3       /* no padding */
} shp_auto_pad_t;
/// ONNX Conv in NCHW layout with 1 to 3 spatial axes (f32 or f64): x [N, C, *in] (rank
/// num_spatial + 2), w [O, C/groups, *kernel] -> [N, O, *out], out = floordiv(in + pad_begin +
/// pad_end - (kernel - 1) * dilation - 1, stride) + 1, a dim expression. `strides` and
/// `dilations` have num_spatial entries >= 1 (NULL: all 1); `pads` NULL (all 0) or 2 *
/// num_spatial entries, the beginnings then the ends (ONNX order), used only with
/// SHP_AUTO_PAD_NOTSET. SAME_UPPER/SAME_LOWER pads are dim expressions of the input sizes.
/// groups >= 1 divides C and O (depthwise: groups == C). bias: NULL or [O], added (broadcast).
/// An output size that is provably < 1 is an error; one that may be is checked at run time
/// (SHP_CONSTRAINT_VIOLATION naming conv and the axis).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_conv(
    const shp_tensor_t* x, const shp_tensor_t* w, const shp_tensor_t* bias /* NULL or [O] */,
    size_t num_spatial, const int64_t* strides /* NULL: all 1 */,
    const int64_t* dilations /* NULL: all 1 */,
    const int64_t* pads /* NULL: all 0; else 2*num_spatial: begins then ends (ONNX order) */,
    shp_auto_pad_t auto_pad, int64_t groups, const shp_tensor_t** tensor_out);
/// ONNX ConvTranspose: x [N, C, *in], w [C, O/groups, *kernel] (ONNX layout) -> [N, O, *out],
/// out = (in - 1) * stride + (kernel - 1) * dilation + 1 - pad_begin - pad_end +
/// output_padding. output_padding: NULL (all 0) or num_spatial entries, each >= 0 and smaller
/// than the stride or the dilation. SAME_UPPER/SAME_LOWER give out = in * stride, the odd pad
/// at the end / the beginning (as onnxruntime). Computed as a conv of x dilated by the strides
/// with the flipped kernel. Other arguments as shp_tensor_conv.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_conv_transpose(
    const shp_tensor_t* x, const shp_tensor_t* w /* [C, O/groups, *kernel] (ONNX layout) */,
    const shp_tensor_t* bias /* NULL or [O] */, size_t num_spatial, const int64_t* strides,
    const int64_t* dilations, const int64_t* pads, const int64_t* output_padding /* NULL: 0 */,
    shp_auto_pad_t auto_pad, int64_t groups, const shp_tensor_t** tensor_out);
/// XLA ReduceWindow: `op` SHP_REDUCE_SUM, SHP_REDUCE_MAX or SHP_REDUCE_MIN over a sliding window
/// on every axis of x (rank >= 1, `rank` entries per array; f32, f64, i32, i64). x is first
/// base-dilated (base_dilation - 1 holes between neighbours), then padded by pad_low/pad_high
/// (dims of any sign: negative crops); holes and padding hold the reduction's identity (0,
/// -inf / the lowest int, +inf / the highest int). Output element o of an axis reduces the
/// positions o * stride + k * window_dilation, k < window; its size is floordiv((in - 1) *
/// base_dilation + 1 + pad_low + pad_high - ((window - 1) * window_dilation + 1), stride) + 1,
/// which must be >= 1 (provably, or it is checked at run time: SHP_CONSTRAINT_VIOLATION naming
/// reduce_window and the axis). strides, window_dilation, base_dilation: NULL or entries >= 1
/// (NULL: all 1); pad_low, pad_high: NULL (all 0) or `rank` dims.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_reduce_window(
    shp_reduce_op_t op, const shp_tensor_t* x, const int64_t* window, const int64_t* strides,
    const int64_t* window_dilation, const int64_t* base_dilation, const shp_dim_t* const* pad_low,
    const shp_dim_t* const* pad_high, size_t rank, const shp_tensor_t** tensor_out);
/// ONNX MaxPool (opset 12+: dilations) on x [N, C, *spatial] (rank num_spatial + 2; f32, f64,
/// i32, i64) -> [N, C, *out]. kernel_shape: num_spatial entries >= 1; strides, dilations: NULL
/// (all 1) or entries >= 1; pads: NULL (all 0) or 2 * num_spatial entries, the beginnings then
/// the ends, each >= 0 and smaller than the kernel extent (kernel - 1) * dilation + 1, only
/// with SHP_AUTO_PAD_NOTSET. SAME_UPPER/SAME_LOWER: out = ceil(in / stride), the pads dim
/// expressions of the input sizes (ceil_mode does not apply). Otherwise out = floordiv(in +
/// pads - extent, stride) + 1, or with ceil_mode the ceiling, less one when the last window
/// would start at or past in + pad_begin (PyTorch, the ONNX reference). Padding never wins (it
/// is -inf, or the lowest int). A reduce_window max.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_max_pool(
    const shp_tensor_t* x /* [N, C, *spatial] */, size_t num_spatial, const int64_t* kernel_shape,
    const int64_t* strides /* NULL: 1 */, const int64_t* dilations /* NULL: 1 */,
    const int64_t* pads /* NULL: 0; else 2*num_spatial, begins then ends */,
    shp_auto_pad_t auto_pad, bool ceil_mode, const shp_tensor_t** tensor_out);
/// ONNX AveragePool (opset 19: dilations) on a floating-point x: the window sums divided by the
/// number of elements each window counts: the input elements only, or with count_include_pad
/// the explicit (or auto) pads too; the ceil-mode overhang past the end never counts (PyTorch,
/// the ONNX reference). Other arguments as shp_tensor_max_pool.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_avg_pool(
    const shp_tensor_t* x, size_t num_spatial, const int64_t* kernel_shape, const int64_t* strides,
    const int64_t* dilations, const int64_t* pads, shp_auto_pad_t auto_pad, bool ceil_mode,
    bool count_include_pad, const shp_tensor_t** tensor_out);
/// ONNX GlobalAveragePool: the mean over the spatial axes of x [N, C, *spatial] (rank >= 3,
/// floating point), kept as size 1: [N, C, 1, ...].
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_global_avg_pool(
    const shp_tensor_t* x, const shp_tensor_t** tensor_out);
/// ONNX GlobalMaxPool: the max over the spatial axes (rank >= 3; f32, f64, i32, i64), kept.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_global_max_pool(
    const shp_tensor_t* x, const shp_tensor_t** tensor_out);

/// The dtype of a tensor; (shp_dtype_t)-1 for NULL.
SHP_API shp_dtype_t shp_tensor_dtype(const shp_tensor_t* tensor);
/// The symbolic shape of a tensor: min(rank, cap) dims to `dims_out` (may be NULL when `cap`
/// is 0), the rank to `*rank_out`. The dims are owned by the tensor's scope.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_shape(const shp_tensor_t* tensor,
                                                          const shp_dim_t** dims_out, size_t cap,
                                                          size_t* rank_out);

/* ---- Programs --------------------------------------------------------------------------- */

/** An immutable program: named inputs and outputs with symbolic shapes, the operations between
 *  them, its constraints and assertions, and how each dimension variable is determined.
 *  Owned by the caller; independent of the scope it was traced in. Functions taking a
 *  `const shp_program_t*` may be called concurrently. */
typedef struct shp_program shp_program_t;
/** Bytes produced by shp_program_serialize. Owned by the caller. */
typedef struct shp_buffer shp_buffer_t;
/** An n-d array: dtype, shape and row-major contiguous data (see "Arrays" below). */
typedef struct shp_array shp_array_t;

/** The role of a program input (fixed values). */
typedef enum {
  SHP_INPUT_DATA = 0, /**< A tensor; its shape determines dimension variables. */
  SHP_INPUT_DIM = 1,  /**< A scalar i64 giving one dimension variable (shp_tensor_dim_input). */
  SHP_INPUT_PARAMETER = 2, /**< A tensor of constant shape with a default (shp_tensor_parameter). */
  SHP_INPUT_TANGENT = 3,   /**< Made by shp_program_jvp: `x.tangent`, the tangent of input x. */
  SHP_INPUT_COTANGENT = 4  /**< Made by shp_program_vjp/grad: `y.cotangent`, of output y. */
} shp_input_role_t;

/** The role of a program output (fixed values). */
typedef enum {
  SHP_OUTPUT_PRIMAL = 0,  /**< Computed by the program as traced. */
  SHP_OUTPUT_TANGENT = 1, /**< Made by shp_program_jvp: `y.tangent`. */
  SHP_OUTPUT_GRAD = 2     /**< Made by shp_program_vjp/grad: `x.grad`. */
} shp_output_role_t;

/// A named parameter of the program being traced: an input (role SHP_INPUT_PARAMETER) with
/// the concrete shape `shape` (`rank` dims; NULL if `rank` is 0) and the default value `data`
/// (`nbytes` = product(shape) * element size; copied, and stored in the program, compressed
/// like constants where that pays). A run may leave it out (the default is used) or give it by
/// name (the value is checked for dtype and shape, then used): new weights without
/// re-exporting. Names with '.' are reserved for derived names (x.tangent, y.cotangent,
/// x.grad), for parameters as for every input and output name.
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL arguments, an empty or reserved name, a
///         negative dimension, `nbytes` not matching, bool bytes other than 0/1, above the
///         limits), SHP_OVERFLOW.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_parameter(shp_scope_t* scope, const char* name,
                                                              shp_dtype_t dtype,
                                                              const int64_t* shape, size_t rank,
                                                              const void* data, size_t nbytes,
                                                              const shp_tensor_t** tensor_out);

/// Creates a program computing `outputs` (named `output_names`, unique, non-empty) from
/// `inputs` (tensors made by shp_tensor_input*, shp_tensor_dim_input), which keep this order
/// and their names (unique). Every input the outputs depend on must be listed (an unlisted one
/// is an error naming it); a listed input that no output uses stays in the signature.
/// Constants are part of the program, never inputs. The program carries the scope's
/// constraints, declared ranges and assertions, and is independent of the scope afterwards.
/// Every dimension variable of the program must be determined by an input: solvable from the
/// input shapes (a dimension linear in it, a product with known factors, a perfect power, or
/// max/min with a known operand, iterating), or given by a dimension input.
/// @param[out] program_out Receives the program, owned by the caller (shp_program_destroy).
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL arguments, duplicate or empty names, an
///         unlisted input, a non-input tensor among the inputs), SHP_SCOPE_MISMATCH (tensors
///         of another scope), SHP_UNSOLVABLE (naming the variables).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_program_create(
    shp_scope_t* scope, const shp_tensor_t* const* inputs, size_t num_inputs,
    const shp_tensor_t* const* outputs, const char* const* output_names, size_t num_outputs,
    shp_program_t** program_out);
/// Releases a program. NULL is a no-op.
SHP_API void shp_program_destroy(shp_program_t* program);

/// Number of inputs (0 for NULL).
SHP_API size_t shp_program_input_count(const shp_program_t* program);
/// Name of input `i`: borrowed, valid until the program is destroyed; NULL if out of range.
SHP_API const char* shp_program_input_name(const shp_program_t* program, size_t i);
/// Dtype of input `i`; (shp_dtype_t)-1 if out of range.
SHP_API shp_dtype_t shp_program_input_dtype(const shp_program_t* program, size_t i);
/// Role of input `i`; (shp_input_role_t)-1 if out of range.
SHP_API shp_input_role_t shp_program_input_role(const shp_program_t* program, size_t i);
/// Whether input `i` has a default value (a parameter, grad's cotangent, or a fill default such
/// as the default tangents of shp_program_jvp_with_default_tangents); false if out of range.
SHP_API bool shp_program_input_has_default(const shp_program_t* program, size_t i);
/// A copy of the default value of input `i` as a new array (shp_array_destroy). A fill default
/// gives the filled array only when the input's shape is constant; over a symbolic shape its
/// value depends on the run (shp_program_input_default_fill gives the fill value).
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL arguments, `i` out of range, an input without
///         a default, a fill default over a symbolic shape), SHP_OUT_OF_MEMORY.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_program_input_default(const shp_program_t* program,
                                                                   size_t i,
                                                                   shp_array_t** array_out);
/// The value of the fill default of input `i` (schema version 11): a run that leaves the input
/// out uses this value in every element of the shape the other inputs' variables give it.
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL arguments, `i` out of range, an input without a
///         fill default: none, or a default array as parameters and grad's cotangent have).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_program_input_default_fill(
    const shp_program_t* program, size_t i, double* value_out);
/// Symbolic shape of input `i`, e.g. "(batch, 784)", written snprintf-style.
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL program or len_out, `i` out of range).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_program_input_shape_string(
    const shp_program_t* program, size_t i, char* buf, size_t cap, size_t* len_out);
/// Number of outputs (0 for NULL).
SHP_API size_t shp_program_output_count(const shp_program_t* program);
/// Name of output `i`: borrowed until the program is destroyed; NULL if out of range.
SHP_API const char* shp_program_output_name(const shp_program_t* program, size_t i);
/// Dtype of output `i`; (shp_dtype_t)-1 if out of range.
SHP_API shp_dtype_t shp_program_output_dtype(const shp_program_t* program, size_t i);
/// Role of output `i`; (shp_output_role_t)-1 if out of range.
SHP_API shp_output_role_t shp_program_output_role(const shp_program_t* program, size_t i);
/// Symbolic shape of output `i`, written snprintf-style.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_program_output_shape_string(
    const shp_program_t* program, size_t i, char* buf, size_t cap, size_t* len_out);
/// Number of dimension variables the program's shapes use (0 for NULL).
SHP_API size_t shp_program_variable_count(const shp_program_t* program);
/// Name of variable `i` (borrowed until the program is destroyed); NULL if out of range.
SHP_API const char* shp_program_variable_name(const shp_program_t* program, size_t i);
/// Sound bounds of variable `i` under the program's declared ranges and constraints (of variant
/// 0 for a multi-variant program): INT64_MIN / INT64_MAX mean unbounded.
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL arguments, `i` out of range).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_program_variable_bounds(const shp_program_t* program,
                                                                     size_t i, int64_t* lo_out,
                                                                     int64_t* hi_out);
/// Whether program variable `i` is unbacked (data-dependent; its value comes from the op
/// that produces it at run time, never from input shapes). False for NULL or out of range.
SHP_API bool shp_program_variable_is_unbacked(const shp_program_t* program, size_t i);
/// The op that produces unbacked variable `i` ("nonzero of a (n, 4) tensor"; borrowed until the
/// program is destroyed); NULL for other variables, NULL or out of range.
SHP_API const char* shp_program_variable_origin(const shp_program_t* program, size_t i);
/// Number of constraints (0 for NULL).
SHP_API size_t shp_program_constraint_count(const shp_program_t* program);
/// Text of constraint `i` as written (borrowed until the program is destroyed); NULL if out
/// of range.
SHP_API const char* shp_program_constraint_text(const shp_program_t* program, size_t i);
/// Number of assertions (from shp_scope_check and ops such as reshape; 0 for NULL).
SHP_API size_t shp_program_assertion_count(const shp_program_t* program);
/// Text of assertion `i`, e.g. "mod(n, 4) == 0" (borrowed); NULL if out of range.
SHP_API const char* shp_program_assertion_text(const shp_program_t* program, size_t i);
/// Message of assertion `i`, shown when it fails at run time (borrowed); NULL if out of range.
SHP_API const char* shp_program_assertion_message(const shp_program_t* program, size_t i);
/// Number of guards (from shp_dim_guard, shp_scope_assume and ops deciding on hints) of the
/// program; of variant 0 for a multi-variant program. 0 for NULL.
SHP_API size_t shp_program_guard_count(const shp_program_t* program);
/// Text of guard `i`, e.g. "s0 == s1" (borrowed until the program is destroyed); NULL if out
/// of range.
SHP_API const char* shp_program_guard_text(const shp_program_t* program, size_t i);
/// Message of guard `i` ("" when none was given; borrowed); NULL if out of range.
SHP_API const char* shp_program_guard_message(const shp_program_t* program, size_t i);
/// What recorded guard `i`: "shp_dim_guard", "shp_scope_assume", or the op and axis, e.g.
/// "mul: axis 0 of the result when broadcasting (s0,) and (s1,)" (borrowed); NULL if out of
/// range.
SHP_API const char* shp_program_guard_origin(const shp_program_t* program, size_t i);

/* ---- Program metadata ----------------------------------------------------------------------
 * String key/value pairs saved with the program (schema version 14; a program without metadata
 * is written as before, so older readers still read it), e.g. the ONNX names of an imported
 * model's inputs and outputs (keys "onnx.names", "onnx.types"). The library never interprets
 * them. Keys are non-empty printable UTF-8 (no control characters) of at most 256 bytes, values
 * UTF-8 of at most 1 MiB (1048576 bytes); a program has at most 1024 entries, each key once,
 * listed in increasing byte order of the keys (so the same program and metadata always save to
 * the same bytes). The loader refuses a file that breaks one of these rules
 * (SHP_INVALID_PROGRAM). Transformations keep the metadata of the program they transform
 * (shp_program_jvp, _jvp_with_default_tangents, _vjp, _grad, _vmap);
 * shp_program_create_variants keeps the first variant's; shp_program_create,
 * shp_program_create_body and shp_function_export make programs without metadata. */

/// A copy of `program` whose metadata has `key` set to `value` (replacing its value if the key
/// is present), or without `key` when `value` is NULL (the same metadata when it is absent).
/// Programs are immutable: `program` is unchanged. The copy shares the program's dimension
/// expressions and copies the rest (its cost is about a copy of the constants' bytes).
/// @param[in]  key   NUL-terminated UTF-8, copied.
/// @param[in]  value NUL-terminated UTF-8, copied; NULL removes `key`.
/// @param[out] program_out Receives the copy, owned by the caller (shp_program_destroy).
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL `program`, `key` or `program_out`; an empty key,
///         a key above 256 bytes or with a control character or invalid UTF-8, a value above
///         1 MiB or not UTF-8, a 1025th entry: the message names the argument and the limit).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_program_with_metadata(const shp_program_t* program,
                                                                   const char* key,
                                                                   const char* value,
                                                                   shp_program_t** program_out);
/// Number of metadata entries (0 for NULL).
SHP_API size_t shp_program_metadata_count(const shp_program_t* program);
/// Key of metadata entry `i`, in increasing byte order of the keys (borrowed until the program
/// is destroyed); NULL if out of range.
SHP_API const char* shp_program_metadata_key(const shp_program_t* program, size_t i);
/// Value of metadata key `key` (borrowed until the program is destroyed); NULL if the program
/// has no such key, or for NULL arguments.
SHP_API const char* shp_program_metadata_value(const shp_program_t* program, const char* key);

/* ---- Control flow --------------------------------------------------------------------------
 * cond, while_loop and scan are operations whose branches and bodies are programs (made by
 * shp_program_create or shp_program_create_body in the same scope, or loaded): a subprogram's
 * variables are the scope's variables of the same names, its inputs must be data inputs, and
 * it may not have guards, variants or data-dependent sizes (SHP_INVALID_ARGUMENT otherwise).
 * Shapes are checked symbolically when the op is recorded: a subprogram's input types must be
 * provably those of the operands it is given, and the values a loop carries keep their types
 * (dtype and provably equal shape; SHP_SHAPE_MISMATCH or SHP_DTYPE_MISMATCH naming both
 * otherwise). The results are written to results_out[0..num_results), which must be exactly
 * the number of results the operation has. At run time each subprogram is planned once per
 * shape and reused for every iteration; only the taken branch of a cond runs. Serialized
 * programs with control flow have schema version 10.
 *
 * Differentiation (shp_program_jvp, _vjp, _grad): jvp of all three (the subprograms are
 * transformed as programs); vjp and grad of cond (the branches' vjps) and of scan (as JAX
 * transposes it: a forward scan that stacks the carry entering each step, then a scan in the
 * other direction running the body's vjp); the vjp of a while_loop with max_trips is that of
 * the scan of max_trips steps it equals (each step runs the body where the condition holds),
 * and is refused with SHP_UNSUPPORTED without max_trips (the trip count depends on the data). Cost:
 * a scan's FLOPs and bytes accessed are its length times its body's, a cond's the larger branch's,
 * a while_loop's max_trips times its condition's and body's plus one condition (SHP_UNSUPPORTED
 * without max_trips: the worst case is unbounded); peak bytes add each subprogram's own peak and
 * the step's scratch (the carried values twice, every result, a slice of each scanned operand). */

/// The number of tensors `scope` has traced so far: a mark taken before a function traces a
/// body, for shp_program_create_body. 0 for NULL.
SHP_API size_t shp_scope_trace_mark(const shp_scope_t* scope);

/// The program of a control-flow body traced in `scope` by a function that began at `mark`
/// (shp_scope_trace_mark): what `outputs` compute from `inputs` (data inputs made after the
/// mark, in order; outputs are named "out0", "out1", ...). Tensors made before the mark that
/// the outputs use are the function's captures (closures): each becomes one more input of the
/// program ("capture0", ...) after `inputs`, and the caller passes it to the op after its own
/// operands. On entry, the first *num_captures_inout tensors of `captures` are captures the
/// program must take first, in that order, used or not (the union of two branches' captures,
/// so that both take the same operands); on success `captures` holds every capture and
/// *num_captures_inout their count. `captures` has room for `captures_capacity` tensors
/// (`mark` + shp_scope_variable_count + the given captures is always enough). Constants are copied
/// into the program, not captured. A variable of the scope that the body's shapes use but no
/// input's shape determines becomes a dimension input of the program, captured as a
/// shp_tensor_dim_value tensor of that variable (the scope's existing one when it has one).
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL arguments, an input that is not a data input
///         made after the mark, an input of the scope that the outputs use but that is not in
///         `inputs`, more captures than captures_capacity), SHP_UNSOLVABLE. A data-dependent
///         size the body computes (shp_tensor_nonzero, ...) stays the body's own: its runtime
///         reads it per run (a cond's or a scan's y's dim with one becomes a new
///         data-dependent size of the scope; a loop's carried value must keep its size, and a
///         scan's ys the first iteration's, checked each iteration).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_program_create_body(
    shp_scope_t* scope, size_t mark, const shp_tensor_t* const* inputs, size_t num_inputs,
    const shp_tensor_t* const* outputs, size_t num_outputs, const shp_tensor_t** captures,
    size_t captures_capacity, size_t* num_captures_inout, shp_program_t** program_out);

/// lax.cond / torch.cond: runs `true_program` when the SHP_BOOL scalar `pred` is true, else
/// `false_program`, on `operands` (each branch takes exactly these, in order) and returns the
/// branch's results. Both branches return the same number of results with the same dtypes
/// (SHP_DTYPE_MISMATCH otherwise) and ranks (SHP_SHAPE_MISMATCH naming both shapes otherwise).
/// A dim the branches give provably equal sizes keeps that size; any other dim (sizes not
/// provably equal under the scope's facts, or computed from data inside a branch) becomes a
/// new unbacked (data-dependent) variable of the scope, as shp_tensor_nonzero makes, named
/// u0, u1, ... (shp_scope_variable_origin says "cond: dim d of result k, ..."), whose declared
/// range is the hull of both branches' bounds for that dim; the branch that runs sets its
/// value. Only the taken branch runs.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_cond(
    shp_scope_t* scope, const shp_tensor_t* pred, const shp_program_t* true_program,
    const shp_program_t* false_program, const shp_tensor_t* const* operands, size_t num_operands,
    const shp_tensor_t** results_out, size_t num_results);

/// lax.while_loop: carry = init; while cond_program(carry, consts) is true: carry =
/// body_program(carry, consts); returns the carry (num_results == num_init). cond_program
/// returns one SHP_BOOL scalar; body_program returns the next carry, each value with the type
/// of its initial value. max_trips >= 0 bounds the iterations (a run that would exceed it
/// fails with SHP_CONSTRAINT_VIOLATION; the cost is then bounded); -1: unbounded.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_while_loop(
    shp_scope_t* scope, const shp_program_t* cond_program, const shp_program_t* body_program,
    const shp_tensor_t* const* init, size_t num_init, const shp_tensor_t* const* consts,
    size_t num_consts, int64_t max_trips, const shp_tensor_t** results_out, size_t num_results);

/// lax.scan: for i in 0..length-1 (length-1..0 when `reverse`): (carry, y_i) =
/// body_program(carry, x_i..., consts...), where x_i is slice i of each of `xs` along `axis`
/// (>= 0; each xs has the same, provably equal, size there: the length, a dim of the scope).
/// `length` may be NULL when xs is not empty, else it gives the length (a size >= 0). Returns
/// the final carry (num_init results), then each y stacked along `axis` (body results after the
/// carry): num_results == the body's output count.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_scan(
    shp_scope_t* scope, const shp_program_t* body_program, const shp_tensor_t* const* init,
    size_t num_init, const shp_tensor_t* const* xs, size_t num_xs,
    const shp_tensor_t* const* consts, size_t num_consts, int64_t axis, const shp_dim_t* length,
    bool reverse, const shp_tensor_t** results_out, size_t num_results);

/* ---- Multi-variant programs ----------------------------------------------------------- */

/// Combines programs traced under different guards into one program with several variants,
/// in this order (a multi-variant argument contributes its variants). A run solves the
/// variables, evaluates each variant's guards in order and runs the first variant whose guards
/// all hold; overlapping variants are allowed (the first wins). The runtime caches the choice
/// with the plan. The variants must have the same constraints and declared ranges, the same
/// inputs (names, order, roles, dtypes, ranks, defaults) and outputs (names, roles, dtypes,
/// ranks); a symbolic shape may differ from variant 0's only where the variant's guards make
/// them provably equal. At most 64 variants. At creation, the decision procedure checks whether
/// the variants cover every valuation the constraints allow (shp_program_variants_exhaustive).
/// Serialized in one file (schema version 3).
/// @param[in]  variants     `num_variants` programs; not retained (copied).
/// @param[out] program_out  Receives the new program. Untouched on error.
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL arguments, no variant, too many, a difference
///         that the message names: which variant, input or output, axis, and the two sizes).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_program_create_variants(
    const shp_program_t* const* variants, size_t num_variants, shp_program_t** program_out);
/// Number of variants (1 for a program made by shp_program_create; 0 for NULL).
SHP_API size_t shp_program_variant_count(const shp_program_t* program);
/// Number of guards of variant `v`; 0 if out of range or NULL.
SHP_API size_t shp_program_variant_guard_count(const shp_program_t* program, size_t v);
/// Text of guard `i` of variant `v` (borrowed); NULL if out of range.
SHP_API const char* shp_program_variant_guard_text(const shp_program_t* program, size_t v,
                                                   size_t i);
/// Message of guard `i` of variant `v` (borrowed); NULL if out of range.
SHP_API const char* shp_program_variant_guard_message(const shp_program_t* program, size_t v,
                                                      size_t i);
/// Whether the variants' guards cover every valuation that the constraints allow: SHP_TRUE
/// when proven (always when some variant has no guard), SHP_FALSE when a counterexample was
/// found and checked by evaluating every guard (shp_program_variants_counterexample),
/// SHP_UNKNOWN when neither could be shown (the program still works; an uncovered shape fails
/// with SHP_GUARD_FAILED). A single-variant program with guards is answered the same way.
/// SHP_UNKNOWN for NULL.
SHP_API shp_truth_t shp_program_variants_exhaustive(const shp_program_t* program);
/// The counterexample when shp_program_variants_exhaustive is SHP_FALSE, written
/// snprintf-style, e.g. "n = 3 satisfies the constraints and no variant's guards (variant 0:
/// n >= 4 is false; variant 1: n <= 2 is false)"; "" otherwise.
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL program or len_out).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_program_variants_counterexample(
    const shp_program_t* program, char* buf, size_t cap, size_t* len_out);
/// The variant that shp_program_check_shapes chose for `bindings` (-1 for bindings made by
/// shp_scope_solve, or NULL).
SHP_API int64_t shp_bindings_variant(const shp_bindings_t* bindings);

/// A readable listing, written snprintf-style: the signature with symbolic shapes, the
/// variables with their ranges and how each is found, the constraints, the assertions, and one
/// line per operation with its symbolic result type.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_program_to_text(const shp_program_t* program,
                                                             char* buf, size_t cap,
                                                             size_t* len_out);

/** What shp_program_cost measures (fixed values). */
typedef enum {
  /** Floating-point operations, a multiply-add counted as 2: the sum of each operation's rule
   *  (docs/ops.md, column FLOPs; e.g. matmul 2 * result elements * contracted size, an
   *  elementwise op 1 per result element, data movement 0). */
  SHP_COST_FLOPS = 0,
  /** Per operation as traced (before fusion; constants excluded): the bytes of its operands
   *  read plus the bytes of its result written. */
  SHP_COST_BYTES_ACCESSED = 1,
  /** The outputs' bytes plus the runtime's arena for intermediates under its own planning
   *  rules: buffers that are never live at once share a region, a region is as large as its
   *  largest buffer (64-byte aligned), the arena is the sum of the regions. The runtime never
   *  plans a larger arena for any shape (it uses first-fit offsets only when they need less). */
  SHP_COST_PEAK_BYTES = 2,
  /** The inputs with the parameter role plus the constants (the weights). */
  SHP_COST_PARAMETER_BYTES = 3
} shp_cost_kind_t;

/// What the program costs for every shape at once: a dim expression over its variables in the
/// dim syntax (e.g. "538634*batch" FLOPs for the README's MLP), written snprintf-style. A
/// multi-variant program gives variant 0's formula (shp_runtime_cost evaluates the variant
/// that runs). Time linear in the program (a 1,000-operation program: a few ms).
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL `program` or `len_out`; `kind` not a
///         shp_cost_kind_t value), SHP_UNSUPPORTED (SHP_COST_PEAK_BYTES of a program the
///         runtime cannot plan).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_program_cost(const shp_program_t* program,
                                                          shp_cost_kind_t kind, char* buf,
                                                          size_t cap, size_t* len_out);
/// Sound bounds of shp_program_cost's formula under the program's declared ranges and
/// constraints: every shape the program accepts costs within [*lo_out, *hi_out]. *hi_out is
/// the guaranteed worst case, or INT64_MAX when it is unbounded (then
/// shp_program_cost_unbounded_reason names the variables that make it so).
/// @return As shp_program_cost (NULL `lo_out` or `hi_out`: SHP_INVALID_ARGUMENT).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_program_cost_bounds(const shp_program_t* program,
                                                                 shp_cost_kind_t kind,
                                                                 int64_t* lo_out, int64_t* hi_out);
/// Why the worst case of `kind` is unbounded, snprintf-style, e.g. "no upper bound on batch;
/// declare a range (shp_scope_declare) or add a constraint such as batch <= 4096 when
/// tracing"; "" when shp_program_cost_bounds gives a finite *hi_out.
/// @return As shp_program_cost.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_program_cost_unbounded_reason(
    const shp_program_t* program, shp_cost_kind_t kind, char* buf, size_t cap, size_t* len_out);

/// The program as a Graphviz DOT graph, written snprintf-style: one node per operation in
/// topological order with its attributes, edges labelled with dtypes and symbolic shapes,
/// inputs with their roles, outputs with their names, constants folded into their consumers'
/// labels, one cluster per variant, and a legend with the variables, constraints, assertions,
/// guards and variants. Render it with `dot -Tsvg` (`shapepoly graph FILE -o out.svg`).
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL `program` or `len_out`).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_program_to_dot(const shp_program_t* program, char* buf,
                                                            size_t cap, size_t* len_out);

/// Checks concrete input shapes against the program without running it: input
/// `input_names[k]` has shape `shapes[k]` of `ranks[k]` dims; every input is given exactly
/// once, except that an input with a default may be left out (as in a run). For a dimension input
/// (SHP_INPUT_DIM), `ranks[k]` is 0 and `shapes[k]` points to its value. Solves the variables, then
/// checks ranks, constant dims, ranges, consistency, constraints, guards and assertions, with
/// messages naming the input and axis ("input 'x': axis 1 is 785 but the program requires
/// 784"), and picks the variant that would run (shp_bindings_variant).
/// @param[out] bindings_out Receives the values of the program's variables (owned by the
///             caller; shp_bindings_destroy). Untouched on error.
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL arguments, missing or repeated inputs),
///         SHP_NOT_FOUND (an unknown input name), SHP_SHAPE_MISMATCH, SHP_CONSTRAINT_VIOLATION,
///         SHP_GUARD_FAILED (a guard fails; or no variant applies: the first failure of each),
///         SHP_UNSOLVABLE, SHP_OVERFLOW (a dimension, or the byte size of an input or output,
///         overflows int64: such an array cannot exist, and the runtime refuses it too).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_program_check_shapes(
    const shp_program_t* program, const char* const* input_names, const int64_t* const* shapes,
    const size_t* ranks, size_t num_inputs, shp_bindings_t** bindings_out);
/// The concrete shape of output `i` for variable values `bindings` (from
/// shp_program_check_shapes on this program): min(rank, cap) dims to `dims_out` (may be NULL
/// when `cap` is 0), the rank to `*rank_out`. In the variant the bindings chose (bindings from
/// shp_scope_solve: the first variant whose guards hold on them; SHP_GUARD_FAILED if none).
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL arguments, `i` out of range, a variable missing
///         from `bindings`), SHP_OVERFLOW, SHP_DIVISION_BY_ZERO.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_program_output_shape(const shp_program_t* program,
                                                                  size_t i,
                                                                  const shp_bindings_t* bindings,
                                                                  int64_t* dims_out, size_t cap,
                                                                  size_t* rank_out);

/// Serializes a program to the portable format (flatbuffers/program.fbs, file identifier
/// "SHP1", extension ".shpoly"). Deterministic: loading the bytes and serializing again gives
/// the same bytes. Constants are zlib-compressed when that pays.
/// @param[out] buffer_out Receives the bytes (owned by the caller; shp_buffer_destroy).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_program_serialize(const shp_program_t* program,
                                                               shp_buffer_t** buffer_out);
/// The bytes of a buffer (borrowed until shp_buffer_destroy); NULL for NULL.
SHP_API const void* shp_buffer_data(const shp_buffer_t* buffer);
/// The size of a buffer in bytes; 0 for NULL.
SHP_API size_t shp_buffer_size(const shp_buffer_t* buffer);
/// Releases a buffer. NULL is a no-op.
SHP_API void shp_buffer_destroy(shp_buffer_t* buffer);

/** Options of shp_program_load_with_options. `max_bytes` caps the bytes that the program's
 *  constants may hold once inflated, in total (default SHP_LOAD_DEFAULT_MAX_BYTES, 1 GiB).
 *  Owned by the caller; may be destroyed right after the load. */
typedef struct shp_load_options shp_load_options_t;
/** The default of shp_load_options_set_max_bytes: 1 GiB. */
#define SHP_LOAD_DEFAULT_MAX_BYTES ((size_t)1 << 30)
/// Creates load options with the defaults (max_bytes = SHP_LOAD_DEFAULT_MAX_BYTES).
/// @param[out] options_out Receives the options, owned by the caller
///             (shp_load_options_destroy). Untouched on error.
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL `options_out`), SHP_OUT_OF_MEMORY.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_load_options_create(shp_load_options_t** options_out);
/// Sets the most bytes the constants may hold once inflated, in total. The loader checks the
/// sizes a file declares against it (per constant and in total) before inflating anything, so
/// a small file cannot make it allocate more. The format's own limits (1 GiB per constant,
/// 4 GiB in total) apply whatever the value; 0 admits only programs without constants.
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL `options`).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_load_options_set_max_bytes(shp_load_options_t* options,
                                                                        size_t max_bytes);
/// Releases options. NULL is a no-op.
SHP_API void shp_load_options_destroy(shp_load_options_t* options);

/// Loads a serialized program with the default options (shp_program_load_with_options with
/// NULL options).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_program_load(const void* data, size_t size,
                                                          shp_program_t** program_out);
/// Loads a serialized program. Copies what it needs: `data` may be freed afterwards. Runs the
/// FlatBuffers verifier, then checks the constants' declared sizes against the format's limits
/// and `max_bytes`, then a semantic verifier (names, indices in range, expression DAG order,
/// ranks, dtypes, every operation's shape re-inferred, constraints, the solve recipe), and
/// only then inflates the constants: time and memory are linear in `size` plus the declared
/// constant bytes, so hostile data cannot make it crash, hang or allocate without bound.
/// Names (inputs, outputs, variables) must be ones tracing can make: non-empty, without NUL
/// bytes; a dimension input is named after its variable.
/// @param[in] options May be NULL (defaults); not retained.
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL `data` or `program_out`), SHP_INVALID_PROGRAM
///         (malformed, truncated or inconsistent data, or constants above `max_bytes`: the
///         message names the cap and shp_load_options_set_max_bytes), SHP_VERSION_MISMATCH
///         (a newer schema version or format), SHP_OUT_OF_MEMORY.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_program_load_with_options(
    const void* data, size_t size, const shp_load_options_t* options, shp_program_t** program_out);
/// Loads a program from the file at `path` (as shp_program_load, default options).
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL arguments; a file that cannot be read, with the
///         path and the OS reason), SHP_NOT_FOUND (no such file), and the errors of
///         shp_program_load, whose messages start with the path.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_program_load_file(const char* path,
                                                               shp_program_t** program_out);
/// Saves a program to the file at `path` (the bytes of shp_program_serialize). Writes
/// `path`.tmp first and renames it, so a failed save leaves an existing file intact.
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL arguments; the file cannot be written, with the
///         path and the OS reason, e.g. "cannot write 'out/m.shpoly': No such file or
///         directory"), SHP_NOT_FOUND (a missing folder), SHP_OUT_OF_MEMORY.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_program_save_file(const shp_program_t* program,
                                                               const char* path);
/// The newest schema version this library reads and writes (one more for each schema change;
/// flatbuffers/README.md lists what each version adds). A program is written with the lowest
/// version that expresses it: 1 unless it has parameters, defaults or derived inputs and
/// outputs (jvp, vjp, grad; version 2), or guards or several variants (version 3), or ops added
/// later (their version), or a fill default (default tangents; version 11), so older readers
/// keep reading every other program.
SHP_API int32_t shp_program_schema_version(void);

/* ---- Differentiation -------------------------------------------------------------------- */

/*  Automatic differentiation as program transformations: each function takes a program,
 *  traced or just loaded (from any language), and returns a new program; the original is
 *  untouched. The result keeps the original's inputs (roles, defaults), outputs, variables,
 *  constraints and assertions, so transformations compose to any order (jvp of grad is a
 *  Hessian-vector product; grad of grad works) and the results serialize like any program.
 *
 *  Only f32 and f64 values carry derivatives; integer and bool values, and inputs not named
 *  in `wrt`, contribute nothing (zeros stay symbolic: no operation is added for them). Ops
 *  with zero derivative: floor, ceil, round, sign, comparisons, iota, dim_value, convert to or
 *  from integers. Non-differentiable points follow JAX: abs'(0) = 0; max/min split a tie
 *  0.5/0.5 (reduce_max/reduce_min split it equally among the tied elements); relu (max(x, 0))
 *  at 0 gets 0.5; pow(a, b): d/da is 0 where b == 0 and d/db is 0 where a == 0; sqrt'(0) and
 *  log'(0) are inf. An op without a rule is SHP_UNSUPPORTED naming the op, never a zero.
 *
 *  Derived names: inputs `x.tangent` and `y.cotangent`, outputs `y.tangent` and `x.grad`;
 *  a name already taken repeats the suffix ("y.cotangent.cotangent"). The grad of an output
 *  that is itself a derivative of x is named by its order: of "x.grad" it is "x.grad.grad",
 *  of "x.grad.grad" it is "x.grad.grad.grad", so a name means one order only.
 *  Every program these functions make binds its inputs by name only (see shp_runtime_run):
 *  names are the way to give x and x.tangent, which may have the same dtype and shape.
 *
 *  Errors of all three: SHP_INVALID_ARGUMENT (NULL arguments, a name given twice),
 *  SHP_NOT_FOUND (a name that is no input or output, listing them), SHP_DTYPE_MISMATCH (a
 *  non-floating-point input or output), SHP_UNSUPPORTED (an op without a rule), and the
 *  program's own limits. */

/// Forward mode. Inputs: the original inputs, then `x.tangent` (role SHP_INPUT_TANGENT, same
/// dtype and symbolic shape) for each input x named in `wrt`. Outputs: the original outputs,
/// then `y.tangent` (SHP_OUTPUT_TANGENT) for every floating-point output y.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_program_jvp(const shp_program_t* program,
                                                         const char* const* wrt, size_t num_wrt,
                                                         shp_program_t** program_out);
/// shp_program_jvp whose tangents have defaults, as grad's seed has the default 1: tangent
/// `x.tangent` of `wrt[k]` gets the fill default `default_fill[k]` (e.g. 1: the derivative
/// along all ones), so a run that leaves it out (by name) uses that value in every element of
/// x's shape at that run, which x and the other inputs determine; a run may still give it by
/// name. shp_program_input_has_default is then true and shp_program_input_default_fill gives
/// the value. `default_fill` NULL: no defaults (shp_program_jvp). The program gets schema
/// version 11 (readers before it refuse it); a tangent default survives serialize and load, and
/// transformations of the result keep it.
/// @param[in] default_fill `num_wrt` values, each finite in its input's dtype; or NULL.
/// @return NULL, or the errors of shp_program_jvp, SHP_INVALID_ARGUMENT (a value that is not a
///         finite value of the input's dtype, e.g. NaN, inf or 1e300 for f32).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_program_jvp_with_default_tangents(
    const shp_program_t* program, const char* const* wrt, size_t num_wrt,
    const double* default_fill, shp_program_t** program_out);
/// Reverse mode. Inputs: the original inputs, then `y.cotangent` (SHP_INPUT_COTANGENT) for
/// each output y named in `of`. Outputs: the original outputs, then `x.grad` (SHP_OUTPUT_GRAD)
/// for each input x named in `wrt`.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_program_vjp(const shp_program_t* program,
                                                         const char* const* of, size_t num_of,
                                                         const char* const* wrt, size_t num_wrt,
                                                         shp_program_t** program_out);
/// The gradient of the scalar floating-point output `of` (any other rank is
/// SHP_SHAPE_MISMATCH). Inputs: the original inputs, then `of.cotangent` with the default 1,
/// so a plain run computes the gradient and a run that names it scales it. Outputs: `of`,
/// then `x.grad` for each input x named in `wrt`.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_program_grad(const shp_program_t* program,
                                                          const char* of, const char* const* wrt,
                                                          size_t num_wrt,
                                                          shp_program_t** program_out);

/*  Batching as a program transformation (vmap): a program for one example becomes the program
 *  for a batch of them, the batch size a new dimension variable. Works on any program, traced
 *  or loaded; the result is an ordinary program (serialize it, differentiate it, batch it again:
 *  each vmap adds one axis). It keeps the inputs' names, roles and fill defaults, the outputs'
 *  names and roles, the constraints, assertions, guards and variants. The batch variable ranges
 *  over [0, inf): a batch of 0 runs. Unbatched inputs (weights) are shared by every element.
 *  Per-example gradients: vmap of grad. Ops are batched by their rules (docs/ops.md); nonzero,
 *  boolean_mask and size_from_value on a batched operand are refused (their sizes differ per
 *  element), as is conv with batched weights. */

/// Batches `program`. `in_axes[i]`: the axis of input i (in the batched input's shape, 0 to the
/// input's rank) that is the batch, or -1: not batched (the same value for every element).
/// At least one input must be batched (its shape gives the batch size); dimension inputs and
/// inputs with a default value of a fixed shape (parameters) cannot be. `out_axes[o]`: where
/// output o's batch axis goes (0 to its rank), or -1 for an output that does not depend on a
/// batched input (it keeps its shape); `out_axes` NULL with `num_outputs` 0: every batch axis
/// first. `batch_dim_name`: the new variable, not one the program has; NULL: "vmap0" (or
/// "vmap1", ... when taken, so vmap of a vmap needs no name).
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL arguments, counts other than the program's
///         inputs and outputs, an axis out of range or not allowed, naming the input or output;
///         no batched input; a taken or invalid name), SHP_UNSUPPORTED (an op that cannot be
///         batched, named), and the program's own limits.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_program_vmap(const shp_program_t* program,
                                                          const int64_t* in_axes, size_t num_inputs,
                                                          const int64_t* out_axes,
                                                          size_t num_outputs,
                                                          const char* batch_dim_name,
                                                          shp_program_t** program_out);

/* ---- Runtime ---------------------------------------------------------------------------- */

/** Executes a program on concrete arrays of any shape the program accepts, without
 *  recompilation. Owned by the caller; keeps its program alive (the program handle may be
 *  destroyed first). Used by one thread at a time; create one runtime per thread from a
 *  shared program (many runtimes may run one program concurrently).
 *
 *  Per concrete binding (the input shapes and the values of dimension inputs) a runtime builds
 *  a plan -- the size of every value, buffer offsets in one arena reusing dead buffers, the
 *  kernel of every step (chains of elementwise operations fused into one pass), the thread
 *  split -- and keeps it in a bounded LRU cache, so a known shape skips the solver. Results
 *  never depend on the cache state. Numerics: float32 reductions (sum, mean, prod) and cumsum
 *  accumulate in double and round once; softmax subtracts the maximum first; layer_norm is
 *  two-pass with a double mean; matmul accumulates in the element type (FMA).
 *
 *  Fusion never changes a result: a fused chain gives the bits of the same operations run one
 *  by one (except the sign and payload of a NaN, which IEEE 754 leaves open). The environment
 * variable SHP_FUSION=off, read by shp_runtime_create, makes the runtimes created while it is set
 * run every elementwise operation as its own step (and the matmul + bias epilogue unfused), to rule
 * fusion out when a result looks wrong; "on" or unset is the default; another value is ignored with
 * one line on stderr. */
typedef struct shp_runtime shp_runtime_t;
/** Options of shp_runtime_create: number of threads per kernel call (default: every hardware
 *  thread) and plan cache capacity (default 16). Owned by the caller; may be destroyed right
 *  after shp_runtime_create. */
typedef struct shp_runtime_options shp_runtime_options_t;

/// Creates runtime options with the defaults (all hardware threads, plan cache capacity 16).
/// @param[out] options_out Receives the options, owned by the caller
///             (shp_runtime_options_destroy). Untouched on error.
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL `options_out`), SHP_OUT_OF_MEMORY.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_runtime_options_create(
    shp_runtime_options_t** options_out);
/// Sets the number of threads each kernel call may use (the calling thread included), at most
/// 256 (the cap: more would not speed up any kernel, and each thread costs a stack); 0 restores
/// the default (every hardware thread, at most 256), 1 runs everything on the calling thread.
/// The threads are created by shp_runtime_create, which fails with SHP_OUT_OF_MEMORY if the
/// system refuses them.
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL `options`, `n` < 0 or > 256, the message naming
///         the cap).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_runtime_options_set_num_threads(
    shp_runtime_options_t* options, int32_t n);
/// Sets how many plans the runtime caches (least recently used is evicted); 0 caches none
/// (every call solves and plans again).
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL `options`).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_runtime_options_set_plan_cache_capacity(
    shp_runtime_options_t* options, size_t n);
/// Lets the runtime allocate each data-dependent stage of a program for the upper bounds of
/// its data-dependent sizes (at the call's input shapes) when that arena needs at most
/// `max_bytes`, so that the arena never grows whatever counts the data gives; stages whose
/// bounds are unbounded or larger are allocated for the actual sizes (the default, max_bytes
/// 0). Results never depend on it.
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL `options`).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_runtime_options_set_bound_allocation(
    shp_runtime_options_t* options, size_t max_bytes);
/// Bounds the iterations of every while_loop and scan per call (`max` >= 0; -1, the default:
/// no bound): a loop that would run more fails with SHP_CONSTRAINT_VIOLATION (a scan before it
/// starts). For programs from files that are not trusted, whose loops could otherwise run as
/// long as an int64 counts.
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL `options`, `max` < -1).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_runtime_options_set_max_loop_iterations(
    shp_runtime_options_t* options, int64_t max);
/// Releases options. NULL is a no-op.
SHP_API void shp_runtime_options_destroy(shp_runtime_options_t* options);

/// Creates a runtime for `program`.
/// @param[in]  program     Not consumed; the runtime keeps its own reference to the program.
/// @param[in]  options     May be NULL (defaults); not retained.
/// @param[out] runtime_out Receives the runtime, owned by the caller (shp_runtime_destroy).
///             Untouched on error.
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL `program` or `runtime_out`), SHP_UNSUPPORTED
///         (an operation this runtime cannot execute), SHP_OUT_OF_MEMORY (also when the system
///         refuses the threads; the message says so, with how many were asked and created; no
///         thread is left behind and a later call with fewer threads may succeed).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_runtime_create(const shp_program_t* program,
                                                            const shp_runtime_options_t* options,
                                                            shp_runtime_t** runtime_out);
/// Releases a runtime (and its reference to the program). NULL is a no-op.
SHP_API void shp_runtime_destroy(shp_runtime_t* runtime);

/// Runs the program. Input `k` is `inputs[k]`, bound to the program input named
/// `input_names[k]`; `input_names` may be NULL only when `num_inputs` equals the program's
/// input count (the inputs are then taken in the declared order) and the program is plain:
/// a program with a parameter, a default, a tangent or cotangent input, or made by
/// shp_program_jvp/vjp/grad, binds by name only (SHP_INVALID_ARGUMENT otherwise), so no value
/// silently takes another's place. Names are the way; positions are for plain data inputs. An input
/// with a default may be left out (a fill default then takes the shape the other inputs' variables
/// give it); given by name, its value is checked for dtype and shape. A
/// dimension input (SHP_INPUT_DIM) is a rank-0 SHP_I64 array holding the variable's value. Every
/// check happens before anything is allocated or computed, in this order: names, dtypes, then
/// ranks, dimensions, constraints, guards and assertions with the solver's messages naming the
/// input
/// ("input 'x': axis 1 is 5 but the program requires 784"). A multi-variant program runs the
/// first variant whose guards hold (shp_runtime_last_variant says which).
/// @param[in]  inputs      Borrowed for the call only; never written.
/// @param[out] outputs_out `num_outputs` slots, which must equal the program's output count:
///             receive new arrays in the program's output order, owned by the caller
///             (shp_array_destroy). Untouched on error.
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL arguments, missing or repeated inputs naming
///         them, a wrong count, an index of `take` or `scatter_add` outside [0, dimension)),
///         SHP_NOT_FOUND (an unknown input name), SHP_DTYPE_MISMATCH, SHP_SHAPE_MISMATCH,
///         SHP_CONSTRAINT_VIOLATION, SHP_GUARD_FAILED (a guard fails, or no variant applies,
///         with each variant's first failure), SHP_OVERFLOW, SHP_OUT_OF_MEMORY. After an error
///         the runtime is fully usable.
/// REQUIRES: no input is being written by another thread during the call.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_runtime_run(
    shp_runtime_t* runtime, const char* const* input_names, const shp_array_t* const* inputs,
    size_t num_inputs, shp_array_t** outputs_out, size_t num_outputs);
/// Like shp_runtime_run, but writes into caller-provided arrays: `outputs[j]` must have
/// exactly output j's dtype and shape (checked before computing; see shp_runtime_dry_run).
/// @param[in] outputs Borrowed; their data is overwritten. They must not overlap the inputs
///            or each other. On error their contents are unspecified only for errors raised
///            while computing: the `take` or `scatter_add` index error and
///            SHP_OUT_OF_MEMORY (a kernel's workspace); every other error leaves them
///            untouched.
/// @return As shp_runtime_run, plus SHP_DTYPE_MISMATCH / SHP_SHAPE_MISMATCH naming the output
///         whose array does not match.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_runtime_run_into(
    shp_runtime_t* runtime, const char* const* input_names, const shp_array_t* const* inputs,
    size_t num_inputs, shp_array_t* const* outputs, size_t num_outputs);
/// A dry run: every check of shp_runtime_run on input dtypes and shapes alone, then the output
/// shapes (read them with shp_runtime_output_shape). Input `k` is named `input_names[k]` (or
/// positional when `input_names` is NULL, as for shp_runtime_run), has dtype `dtypes[k]`
/// (`dtypes` may be NULL: the program's dtypes) and shape `shapes[k]` of `ranks[k]` dims; for
/// a dimension input `ranks[k]` is 0 and `shapes[k]` points to its value. Plans and caches like
/// a run, so a following run on these shapes is a cache hit.
/// @return As shp_runtime_run (without the `take` and `scatter_add` index errors).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_runtime_dry_run(
    shp_runtime_t* runtime, const char* const* input_names, const shp_dtype_t* dtypes,
    const int64_t* const* shapes, const size_t* ranks, size_t num_inputs);
/// The cost `kind` (shp_program_cost) for concrete input shapes, without running: the
/// arguments and every check are those of shp_runtime_dry_run, then the formula of the variant
/// that would run is evaluated. For SHP_COST_PEAK_BYTES the value bounds the memory the run
/// would use (its arena plus its outputs). Plans and caches like a dry run.
/// @param[out] value_out Receives the cost. Untouched on error.
/// @return As shp_runtime_dry_run, plus SHP_INVALID_ARGUMENT (NULL `value_out`; `kind` not a
///         shp_cost_kind_t value), SHP_OVERFLOW (the value overflows int64).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_runtime_cost(
    shp_runtime_t* runtime, shp_cost_kind_t kind, const char* const* input_names,
    const shp_dtype_t* dtypes, const int64_t* const* shapes, const size_t* ranks, size_t num_inputs,
    int64_t* value_out);
/// The shape of output `i` from the last successful shp_runtime_dry_run, shp_runtime_run or
/// shp_runtime_run_into: min(rank, cap) dims to `dims_out` (may be NULL when `cap` is 0), the
/// rank to `*rank_out`.
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL `runtime` or `rank_out`, `i` out of range, no
///         successful call yet).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_runtime_output_shape(const shp_runtime_t* runtime,
                                                                  size_t i, int64_t* dims_out,
                                                                  size_t cap, size_t* rank_out);
/// Whether dim `axis` of output `i` from the last successful shp_runtime_dry_run,
/// shp_runtime_run or shp_runtime_run_into is data-dependent, and its bounds. After a dry run
/// of a program with data-dependent sizes, such a dim is -1 in shp_runtime_output_shape (the
/// dry run never computes data) and [*min_out, *max_out] bounds it at those input shapes
/// (INT64_MAX: unbounded); after a run it is the computed size (min = max = the size). Other
/// dims: false, min = max = the size.
/// @param[out] data_dependent_out, min_out, max_out  Each may be NULL.
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL `runtime`, `i` or `axis` out of range, no
///         successful call yet).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_runtime_output_dim_bounds(const shp_runtime_t* runtime,
                                                                       size_t i, size_t axis,
                                                                       bool* data_dependent_out,
                                                                       int64_t* min_out,
                                                                       int64_t* max_out);
/// Number of plans built (calls whose binding was not in the cache); 0 for NULL.
SHP_API uint64_t shp_runtime_plans_built(const shp_runtime_t* runtime);
/// Number of calls that found their plan in the cache; 0 for NULL.
SHP_API uint64_t shp_runtime_cache_hits(const shp_runtime_t* runtime);
/// Wall time of the last plan build in nanoseconds (solving the variables, checking the
/// constraints and planning); 0 for NULL or before the first plan.
SHP_API int64_t shp_runtime_last_plan_build_ns(const shp_runtime_t* runtime);
/// The index of the variant the last successful shp_runtime_run or shp_runtime_run_into used
/// (0 for a single-variant program), -1 before any such run or for NULL.
SHP_API int64_t shp_runtime_last_variant(const shp_runtime_t* runtime);
/// Plans built for shapes that variant `v` ran on; 0 if out of range or NULL.
SHP_API uint64_t shp_runtime_variant_plans_built(const shp_runtime_t* runtime, size_t v);
/// Calls on variant `v` that found their plan in the cache; 0 if out of range or NULL.
SHP_API uint64_t shp_runtime_variant_cache_hits(const shp_runtime_t* runtime, size_t v);
/// Number of threads each kernel call may use; 0 for NULL.
SHP_API int32_t shp_runtime_num_threads(const shp_runtime_t* runtime);
/// The Highway SIMD target this runtime's kernels dispatch to, e.g. "AVX3"; a static string
/// (never freed). "" for NULL.
SHP_API const char* shp_runtime_simd_target(const shp_runtime_t* runtime);

/* ---- Compiled functions (automatic dynamic shapes) ---------------------------------------- */

/** A compiled function: a trace callback, traced again when a call's shapes fit no variant
 *  traced so far, like torch.compile with automatic dynamic shapes. Owned by the caller; used
 *  by one thread at a time. */
typedef struct shp_function shp_function_t;
/** Options of shp_function_create. Owned by the caller. */
typedef struct shp_function_options shp_function_options_t;

/** Which axes are symbolic in a new trace (fixed values). */
typedef enum {
  SHP_DYNAMIC_AUTO = 0, /**< The first trace is static; an axis whose size changes becomes
                             symbolic in the next trace (the default). */
  SHP_DYNAMIC_ALL = 1,  /**< Every axis is symbolic from the first trace. */
  SHP_DYNAMIC_NONE = 2  /**< Every new shape is traced statically. */
} shp_dynamic_mode_t;

/** What a call does when no variant covers its shapes (fixed values). */
typedef enum {
  SHP_STANCE_DEFAULT = 0,           /**< Trace again up to the recompile limit, then fail with
                                         SHP_GUARD_FAILED giving the reasons. */
  SHP_STANCE_FAIL_ON_RECOMPILE = 1, /**< Never trace again once a variant exists: fail with
                                         SHP_GUARD_FAILED naming the failed guards. */
  SHP_STANCE_DYNAMIC_ON_LIMIT = 2,  /**< At the limit, trace one fully dynamic variant (every
                                         axis symbolic, static marks ignored) instead of failing. */
  SHP_STANCE_FORCE_TRACE = 3        /**< Trace every call and run that trace once (no cache):
                                         the variants are neither used nor changed (to debug a
                                         trace function, as PyTorch's force_eager). PyTorch's
                                         eager_on_recompile and fail_on_recompile map to
                                         FAIL_ON_RECOMPILE here; running eagerly has no
                                         meaning for a traced program. */
} shp_stance_t;

/// The trace callback: builds the outputs from `inputs` in `scope` with the shp_tensor_*
/// functions (and may branch on shapes with shp_dim_guard, whose guards become the variant's),
/// writes `num_outputs` tensors of `scope` to `outputs`, and returns NULL, or an error
/// (shp_error_create, or one returned by the library), which the call passes on with its code.
/// `scope` belongs to the library: do not destroy it or keep it, its dims or tensors. Every
/// input axis is a variable (s0, s1, ... in input and axis order) with the call's size as its
/// hint and the guard policy SHP_GUARDS_FROM_HINTS; a static axis has the guard `sK == size`.
typedef shp_error_t* (*shp_trace_fn)(shp_scope_t* scope, const shp_tensor_t* const* inputs,
                                     size_t num_inputs, const shp_tensor_t** outputs,
                                     size_t num_outputs, void* user_data);

/// Creates function options with the defaults: SHP_DYNAMIC_AUTO, duck sizing on, recompile
/// limit 8, SHP_STANCE_DEFAULT, every hardware thread.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_function_options_create(
    shp_function_options_t** options_out);
/// Releases options. NULL is a no-op.
SHP_API void shp_function_options_destroy(shp_function_options_t* options);
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL options, unknown mode).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_function_options_set_dynamic(
    shp_function_options_t* options, shp_dynamic_mode_t mode);
/// Duck sizing (on by default): dynamic axes whose sizes were equal (and above 1) in every call
/// traced so far get the guard `sJ == sI` in the next trace; a call where they differ traces a
/// variant with separate sizes.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_function_options_set_duck_sizing(
    shp_function_options_t* options, bool on);
/// The most variants (traces) the function makes, in [1, 64]; default 8.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_function_options_set_recompile_limit(
    shp_function_options_t* options, int32_t limit);
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_function_options_set_stance(
    shp_function_options_t* options, shp_stance_t stance);
/// Threads per kernel call of the function's runtime (as shp_runtime_options_set_num_threads).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_function_options_set_num_threads(
    shp_function_options_t* options, int32_t num_threads);

/// Creates a compiled function with named inputs (`dtypes`, `ranks`) and named outputs. Nothing
/// is traced until the first call. The event log also goes to stderr when the environment
/// variable SHAPEPOLY_LOG contains `recompiles`, `guards` or `dynamic` (read here).
/// @param[in] options May be NULL (the defaults). Not retained.
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL arguments, a repeated input name, an unknown
///         dtype, a rank above 64, no output).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_function_create(
    shp_trace_fn trace_fn, void* user_data, const char* const* input_names,
    const shp_dtype_t* dtypes, const size_t* ranks, size_t num_inputs,
    const char* const* output_names, size_t num_outputs, const shp_function_options_t* options,
    shp_function_t** function_out);
/// Releases a function (its variants, runtime and log). NULL is a no-op.
SHP_API void shp_function_destroy(shp_function_t* function);
/// Makes axis `axis` of input `input` symbolic in every later trace, with sizes in
/// [min, max] (INT64_MAX: unbounded; 0 <= min <= max).
/// @return NULL, or SHP_INVALID_ARGUMENT, SHP_NOT_FOUND (no such input).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_function_mark_dynamic(shp_function_t* function,
                                                                   const char* input, int64_t axis,
                                                                   int64_t min, int64_t max);
/// Keeps axis `axis` of input `input` static in every later trace (a new size, a new variant).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_function_mark_static(shp_function_t* function,
                                                                  const char* input, int64_t axis);
/// torch._dynamo.mark_unbacked: axis `axis` of input `input` is symbolic in every later trace,
/// sizes in [0, inf) with no 0/1 specialization, and has no hint: a comparison on it that the
/// engine cannot decide fails the trace with SHP_INCONCLUSIVE (naming it) instead of becoming a
/// guard from the call's size, and it is never duck-sized with another axis.
/// @return NULL, or SHP_INVALID_ARGUMENT, SHP_NOT_FOUND (no such input).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_function_mark_unbacked(shp_function_t* function,
                                                                    const char* input,
                                                                    int64_t axis);
/// torch._dynamo.maybe_mark_dynamic: axis `axis` of input `input` is symbolic in every later
/// trace, but a trace function that specializes it (a guard pinning its size) is not an error,
/// unlike shp_function_mark_dynamic.
/// @return NULL, or SHP_INVALID_ARGUMENT, SHP_NOT_FOUND (no such input).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_function_maybe_mark_dynamic(shp_function_t* function,
                                                                         const char* input,
                                                                         int64_t axis);
/// Sets the stance (any time).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_function_set_stance(shp_function_t* function,
                                                                 shp_stance_t stance);
/// Calls the function: binds the inputs by name, runs the first variant whose guards hold
/// (through one runtime with its plan cache), or traces a new variant as the policy and the
/// stance say, logs why, and runs it. Outputs as shp_runtime_run (new arrays, owned by the
/// caller).
/// @return NULL, or the errors of shp_runtime_run; SHP_GUARD_FAILED when no variant applies and
///         the stance or the recompile limit forbids a new trace (with the reasons); the trace
///         function's own error (its code; the message says it came from the trace function);
///         SHP_SCOPE_MISMATCH when it returns a tensor of another scope.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_function_call(
    shp_function_t* function, const char* const* names, const shp_array_t* const* inputs,
    size_t num_inputs, shp_array_t** outputs_out, size_t num_outputs);
/// Number of events logged: one per trace ("trace 2 for call 3 (x: (8, 3)): variant 0: input
/// 'x' axis 0: size 8 failed guard s0 == 4 (marked dynamic now)"), why each axis of a new
/// variant is static ("variant 0: input 'x' axis 1: static (only one size seen)"), its guards,
/// and refused traces. 0 for NULL.
SHP_API size_t shp_function_event_count(const shp_function_t* function);
/// Text of event `i` (borrowed until the function is destroyed); NULL if out of range.
SHP_API const char* shp_function_event_text(const shp_function_t* function, size_t i);
/// Number of traces made (= variants); 0 for NULL.
SHP_API uint64_t shp_function_trace_count(const shp_function_t* function);
/// Number of calls served by an existing variant; 0 for NULL.
SHP_API uint64_t shp_function_cache_hits(const shp_function_t* function);
/// Number of variants; 0 for NULL.
SHP_API size_t shp_function_variant_count(const shp_function_t* function);
/// The variants seen so far as one multi-variant program (with their guards and the coverage
/// report), which runs without the trace function, in any language.
/// @return NULL, or SHP_INVALID_ARGUMENT (NULL arguments, nothing traced yet).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_function_export(const shp_function_t* function,
                                                             shp_program_t** program_out);

/* ---- Arrays ----------------------------------------------------------------------------- */

/// Creates an array that owns zeroed, 64-byte aligned memory for product(shape) elements.
/// @param[in]  shape     `rank` dims >= 0 (may be NULL when `rank` is 0); copied.
/// @param[out] array_out Receives the array, owned by the caller (shp_array_destroy).
///             Untouched on error.
/// @return NULL, or SHP_INVALID_ARGUMENT (bad dtype, NULL `shape` with `rank` > 0, a negative
///         dim, NULL `array_out`), SHP_OVERFLOW (the byte size overflows), SHP_OUT_OF_MEMORY.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_array_create(shp_dtype_t dtype, const int64_t* shape,
                                                          size_t rank, shp_array_t** array_out);
/// Creates an array that borrows caller memory (no copy): `data` must stay valid, and must not
/// be freed, while the array exists. `nbytes` must equal product(shape) * element size.
/// Any alignment. SHP_BOOL elements are one byte each (non-zero is true).
/// @param[in]  data      May be NULL only when `nbytes` is 0.
/// @param[out] array_out Receives the array, owned by the caller (shp_array_destroy, which
///             does not free `data`). Untouched on error.
/// @return NULL, or SHP_INVALID_ARGUMENT (as shp_array_create, NULL `data`, a wrong
///         `nbytes`), SHP_OVERFLOW, SHP_OUT_OF_MEMORY.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_array_wrap(shp_dtype_t dtype, const int64_t* shape,
                                                        size_t rank, void* data, size_t nbytes,
                                                        shp_array_t** array_out);
/// The array's data (owned or borrowed, see above); NULL for NULL. Writable.
SHP_API void* shp_array_data(const shp_array_t* array);
/// The array's size in bytes; 0 for NULL.
SHP_API size_t shp_array_nbytes(const shp_array_t* array);
/// The array's dtype; (shp_dtype_t)-1 for NULL.
SHP_API shp_dtype_t shp_array_dtype(const shp_array_t* array);
/// The array's rank; 0 for NULL.
SHP_API size_t shp_array_rank(const shp_array_t* array);
/// The array's `rank` dims, borrowed until the array is destroyed; NULL for NULL (and possibly
/// for rank 0).
SHP_API const int64_t* shp_array_shape(const shp_array_t* array);
/// Releases an array (its memory if it owns it). NULL is a no-op.
SHP_API void shp_array_destroy(shp_array_t* array);

/* ---- SIMD ------------------------------------------------------------------------------- */

/// Returns the name of the Highway SIMD target that the kernels dispatch to now, e.g. "AVX3",
/// "AVX2", "SSE4", "SCALAR": the CPU's best compiled target unless shp_set_simd_target or the
/// SHP_SIMD_TARGET environment variable capped it. Always the target a kernel called next
/// runs on (it is itself dispatched).
/// @return A static NUL-terminated string; never NULL, never freed.
SHP_API const char* shp_simd_target(void);

/// Makes every kernel dispatch to exactly the SIMD target `name` (all better targets are
/// disabled with hwy::DisableTargets, which re-resolves Highway's dispatch tables), e.g. to
/// compare targets on one machine; "best" or NULL lifts the cap. `name` is a Highway target
/// name as shp_simd_target() gives them, case ignored. With the Debian Highway 1.0.3 build
/// the library is compiled for AVX3, AVX2, SSE4, SSSE3 and SCALAR (AVX3_DL and EMU128 are
/// names Highway knows but does not compile here); error messages list both sets.
///
/// Process-wide, and shared with every other user of libhwy in the process (Highway keeps one
/// choice). Meant to be called before kernels run on other threads: Highway's chosen-target
/// mask is atomic, so a kernel running meanwhile never crashes and finishes on the target it
/// started on, and a kernel dispatched during the call runs on the old target or the new one
/// (the kernels of one program run may then use both). Programs and runtimes need not be
/// recreated: matmul weights packed for another target are not used (the product then packs
/// as it goes).
///
/// Results are those of the chosen target's kernels. On one target they are bit-identical for
/// every thread count. Across targets, integer ops, comparisons, selects, copies, gathers and
/// transposes give the same bits; float results may differ in the last bits (the vector width
/// orders sums; matmul uses FMA where the target has it), and tanh, exp, logistic and erf stay
/// within their documented ulp bounds on every target.
///
/// SHP_SIMD_TARGET: when the library loads (before any kernel can run) its value goes through
/// this function; unset or empty means "best". An invalid value (unknown, not compiled, or a
/// target this CPU cannot run) is ignored -- the kernels keep the best target -- and one line
/// "libshapepoly: SHP_SIMD_TARGET=<value> ignored: <reason>; using <target>" is written to
/// stderr. shp_simd_target() reports the target in use either way.
/// @param[in] name A target name, "best", or NULL. Not retained.
/// @return NULL on success (the cap is in place), or an error the caller must destroy; on
///         error nothing changes:
///   - SHP_INVALID_ARGUMENT for a name that is neither "best" nor a Highway target name
///     (the message lists the accepted names);
///   - SHP_UNSUPPORTED for a target not compiled into the library, or one this CPU cannot run
///     ("AVX3 is not supported by this CPU; it supports: AVX2, SSE4, SSSE3, SCALAR").
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_set_simd_target(const char* name);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SHAPEPOLY_SHAPEPOLY_H_ */
