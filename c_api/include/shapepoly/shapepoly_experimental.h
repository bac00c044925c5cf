/*
 * libshapepoly: experimental and test-only functions.
 *
 * The functions declared here are exported by libshapepoly.so like those of shapepoly.h, but
 * they carry NO ABI promise: any of them may change its signature or behaviour, or disappear,
 * in any release, even within one SHP_ABI_VERSION. They exist for the library's own tests,
 * demos and experiments. Applications should use shapepoly.h only; code that includes this
 * header must be ready to follow it from release to release.
 *
 * Installed next to shapepoly.h (include/shapepoly/shapepoly_experimental.h); it includes
 * shapepoly.h, whose conventions (errors, NULL arguments, threading) apply here too.
 */
#ifndef SHAPEPOLY_SHAPEPOLY_EXPERIMENTAL_H_
#define SHAPEPOLY_SHAPEPOLY_EXPERIMENTAL_H_

#include <stddef.h>

#include "shapepoly/shapepoly.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- SIMD smoke test -------------------------------------------------------------------- */

/// Test-only: the first SIMD kernel of the library, kept as a smoke test of the Highway dynamic
/// dispatch and of the error conventions (the C, binding and error tests call it).
///
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

#endif /* SHAPEPOLY_SHAPEPOLY_EXPERIMENTAL_H_ */
