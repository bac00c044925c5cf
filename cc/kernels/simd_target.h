// The SIMD target the kernels dispatch to, and a process-wide cap on it (SHP_SIMD_TARGET,
// shp_set_simd_target). Plain C++ (no Highway types).
#ifndef SHAPEPOLY_CC_KERNELS_SIMD_TARGET_H_
#define SHAPEPOLY_CC_KERNELS_SIMD_TARGET_H_

#include <cstdint>
#include <string>

namespace shp {
namespace kernels {

// Name of the Highway target the kernels dispatch to now, e.g. "AVX3". Every kernel family is
// compiled for the same targets and dispatches on the same global choice (Highway's, shared by
// every user of libhwy in the process), so this one name holds for all of them: it is the
// target a kernel called next runs on. Static string. Thread-safe.
const char* SimdTargetName();

// Outcome of SetSimdTarget.
enum class SimdTargetStatus : int32_t {
  kOk,
  kUnknownName,   // not "best" and not a Highway target name (any case)
  kNotCompiled,   // a Highway target that this library was not compiled for
  kNotSupported,  // compiled, but this CPU cannot run it
};

// Makes the kernels dispatch to exactly the target `name` (a Highway target name as
// SimdTargetName gives them, compared ignoring case), by disabling every better target with
// hwy::DisableTargets; "best" or nullptr lifts the cap. On an error nothing changes and
// *message (if not null) names the value and what was accepted. Process-wide (Highway's
// choice is shared by every user of libhwy in the process); serialized with other calls. A
// kernel dispatched on another thread meanwhile runs on the old target or the new one (Highway's
// chosen-target mask is atomic). The capped set is also set as Highway's mock of the supported
// targets, so that hwy::SupportedTargets() reports it and keeps the cap (it drops a DisableTargets
// mask from the dispatch otherwise); hwy::SetSupportedTargetsForTest(0) elsewhere ends that part.
SimdTargetStatus SetSimdTarget(const char* name, std::string* message);

// The target requested by the last successful SetSimdTarget (or SHP_SIMD_TARGET at load),
// "best" when none. Static string.
const char* SimdTargetRequested();

// Highway target bits (HWY_AVX2, ...): compiled into the kernels; run by this CPU (detected
// once, when the library loads; unaffected by the cap, unlike hwy::SupportedTargets).
int64_t CompiledSimdTargets();
int64_t CpuSimdTargets();

// "AVX2, SSE4, SSSE3" for a mask of target bits, best first.
std::string SimdTargetList(int64_t targets);

// The environment variable read once when the library loads (a static initializer of this
// file, before any kernel can be dispatched): its value goes through SetSimdTarget. An empty
// or unset value leaves the best target. An invalid value is ignored (the kernels keep the
// best target) and one line "libshapepoly: SHP_SIMD_TARGET=<value> ignored: <reason>" goes to
// stderr; SimdTargetEnvError() returns that reason ("" when the value was applied or unset).
inline constexpr const char kSimdTargetEnv[] = "SHP_SIMD_TARGET";
const std::string& SimdTargetEnvError();

}  // namespace kernels
}  // namespace shp

#endif  // SHAPEPOLY_CC_KERNELS_SIMD_TARGET_H_
