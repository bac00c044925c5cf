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
 *   (Scopes, dims, tensors, programs and runtimes arrive in later versions of this header.)
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
