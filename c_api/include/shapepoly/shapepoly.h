/*
 * libshapepoly: the stable C API.
 *
 * libshapepoly traces a tensor program once with symbolic dimensions ("batch", "2*seq + 1"),
 * serializes it, and then loads and runs it on any concrete shapes that satisfy its
 * constraints. This header is the only public interface of libshapepoly.so. It favours
 * simplicity over convenience: most applications use it through the Rust, Go or C# wrappers,
 * which map each function here to one method.
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
 *   shp_runtime_t          caller       shp_runtime_destroy         destroyed; keeps its program
 *                                                                   alive internally
 *   shp_error_t            caller       shp_error_destroy           destroyed
 *
 *   No owned handle requires another one to be destroyed later: owned handles may be
 *   destroyed in any order. Every destroy function returns void and accepts NULL.
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
  SHP_INTERNAL = 17             /**< A bug in libshapepoly; please report it. */
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
typedef enum {
  SHP_CMP_EQ = 0,
  SHP_CMP_NE = 1,
  SHP_CMP_LT = 2,
  SHP_CMP_LE = 3,
  SHP_CMP_GT = 4,
  SHP_CMP_GE = 5
} shp_cmp_t;

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
///         hold together), SHP_DIVISION_BY_ZERO, SHP_OVERFLOW.
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
/// @return NULL, or SHP_INVALID_ARGUMENT, SHP_SCOPE_MISMATCH, SHP_UNSATISFIABLE (the assertion
///         is provably false under the scope's constraints).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_scope_check(shp_scope_t* scope, const shp_dim_t* a,
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
/// Number of facts: the constraints given at creation, then the assertions added by
/// shp_scope_check. 0 for NULL.
SHP_API size_t shp_scope_constraint_count(const shp_scope_t* scope);
/// Text of fact `i` (as written for constraints, printed for assertions); borrowed, valid
/// until the scope is destroyed or changed. NULL if out of range.
SHP_API const char* shp_scope_constraint_text(const shp_scope_t* scope, size_t i);

/* ---- Dims ------------------------------------------------------------------------------- */

/// Parses a dimension expression (syntax: see shp_scope_create) into its normal form.
/// @return NULL, or SHP_INVALID_ARGUMENT, SHP_PARSE_ERROR (input text, column, what was
///         expected and what was found), SHP_DIVISION_BY_ZERO (a divisor that may be zero),
///         SHP_OVERFLOW, SHP_UNSUPPORTED (a normal form too large, e.g. (a+b+c+d+e)^40).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_dim_parse(shp_scope_t* scope, const char* text,
                                                     const shp_dim_t** dim_out);
/// The constant `value` as a dim of `scope`.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_dim_constant(shp_scope_t* scope, int64_t value,
                                                        const shp_dim_t** dim_out);
/// The variable `name` (created on first mention).
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_dim_variable(shp_scope_t* scope, const char* name,
                                                        const shp_dim_t** dim_out);

/// Arithmetic on dims of one scope; the result is the interned normal form. Overflow is
/// SHP_OVERFLOW; operands of two scopes are SHP_SCOPE_MISMATCH (naming both scopes'
/// constraints). floordiv/mod need a divisor that is provably non-zero (else
/// SHP_DIVISION_BY_ZERO naming the divisor); max/min fold when the comparison is decided.
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
/// including the NUL are written; `buf` may be NULL when `cap` is 0. The text parses back to
/// the same dim.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_dim_to_string(const shp_dim_t* dim, char* buf,
                                                         size_t cap, size_t* len_out);
/// True (and `*value_out` set, if non-NULL) when `dim` is a constant. False for NULL.
SHP_API bool shp_dim_is_constant(const shp_dim_t* dim, int64_t* value_out);

/// Sound inclusive bounds of `dim` under the scope's ranges, constraints and assertions:
/// every valuation that satisfies them gives a value in [*lo_out, *hi_out]. INT64_MIN /
/// INT64_MAX mean unbounded.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_dim_bounds(const shp_dim_t* dim, int64_t* lo_out,
                                                      int64_t* hi_out);
/// Three-valued comparison `a op b` under the scope's facts: SHP_TRUE when it holds for every
/// valuation satisfying them, SHP_FALSE when it holds for none, SHP_UNKNOWN otherwise (or when
/// the engine cannot tell). Equality is semantic: `b == 1` is SHP_UNKNOWN;
/// `2*floordiv(a, 2) + mod(a, 2) == a` is SHP_TRUE.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_dim_compare(const shp_dim_t* a, shp_cmp_t op,
                                                       const shp_dim_t* b,
                                                       shp_truth_t* truth_out);
/// Evaluates `dim` with variable values given by name. Every variable of `dim` must be given;
/// names unknown to the scope are SHP_NOT_FOUND; a name given twice or a value outside its
/// variable's declared range is SHP_INVALID_ARGUMENT. Constraints are not checked here (use
/// shp_scope_solve). Overflow is SHP_OVERFLOW.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_dim_evaluate(const shp_dim_t* dim,
                                                        const char* const* names,
                                                        const int64_t* values, size_t n,
                                                        int64_t* value_out);

/* ---- Shapes and solving ----------------------------------------------------------------- */

/// Parses a shape spec: comma-separated dims, optionally in one pair of parentheses, trailing
/// comma allowed; "" and "()" are rank 0. `_` takes one dim from `like`, `...` (last position
/// only) takes the rest of it.
/// @param[in]  like      Concrete dims for `_` and `...`; may be NULL (then `like_rank` is
///                       ignored and `_`/`...` are errors). Not retained.
/// @param[out] dims_out  Receives min(rank, dims_cap) dims; may be NULL if `dims_cap` is 0.
/// @param[out] rank_out  Receives the rank, so a first call with `dims_cap` 0 sizes the array.
/// @return NULL, or SHP_INVALID_ARGUMENT, SHP_PARSE_ERROR (with the dimension index and
///         column), SHP_DIVISION_BY_ZERO, SHP_OVERFLOW.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_shape_parse(shp_scope_t* scope, const char* spec,
                                                       const int64_t* like, size_t like_rank,
                                                       const shp_dim_t** dims_out,
                                                       size_t dims_cap, size_t* rank_out);
/// Solves every variable of the specs from concrete shapes: argument i has spec `specs[i]`
/// and shape `shapes[i]` of `ranks[i]` dims. Linear dims (iterated over arguments), products
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

/* ---- SIMD ------------------------------------------------------------------------------- */

/// Returns the name of the Highway SIMD target that the kernels dispatch to on this CPU,
/// e.g. "AVX3", "AVX2", "SSE4", "EMU128". Chosen once, at the first kernel call.
/// @return A static NUL-terminated string; never NULL, never freed.
SHP_API const char* shp_simd_target(void);

/// Sums `n` floats with the dispatched SIMD kernel. The sum is accumulated in double
/// precision and rounded to float once, so it is accurate even with cancellation
/// (e.g. {1e8, 1, -1e8} gives exactly 1). Infinities and NaNs propagate as in IEEE
/// arithmetic; a finite sum beyond the float range gives +/-infinity.
/// @param[in]  data    `n` floats, any alignment; may be NULL only if `n` is 0.
///                     Not retained after the call.
/// @param[in]  n       Number of elements; 0 gives a sum of 0.
/// @param[out] sum_out Receives the sum. Untouched on error.
/// @return NULL on success, or an error the caller must destroy:
///   - SHP_INVALID_ARGUMENT if `data` is NULL while `n` > 0, or `sum_out` is NULL.
/// REQUIRES: `data` points to at least `n` readable floats.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_simd_sum_f32(const float* data, size_t n,
                                                        float* sum_out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SHAPEPOLY_SHAPEPOLY_H_ */
