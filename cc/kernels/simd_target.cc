// Dynamic dispatch for SimdTargetName (see simd_target.h): foreach_target.h re-includes this
// file once per Highway target; the HWY_ONCE pass emits the dispatch table, the entry point and
// the cap on the target (SetSimdTarget, SHP_SIMD_TARGET).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cc/kernels/simd_target.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace shp::kernels::HWY_NAMESPACE {

const char* SimdTargetNameTarget() { return hwy::TargetName(HWY_TARGET); }

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "cc/kernels/simd_target.h"

namespace shp {
namespace kernels {

HWY_EXPORT(SimdTargetNameTarget);

const char* SimdTargetName() { return HWY_DYNAMIC_DISPATCH(SimdTargetNameTarget)(); }

namespace {

constexpr int kTargetBits = 63;  // HWY_* target bits are 1 << 0 .. 1 << 62

// Highway 1.0.3's SupportedTargets() first stores the detected set, without the
// DisableTargets mask, as the chosen target of every dispatch table; only the first dispatch
// after a DeInit applies the mask again. So every call is followed by a DeInit.
int64_t DetectCpuTargets() {
  const int64_t targets = hwy::SupportedTargets();
  hwy::GetChosenTarget().DeInit();
  return targets;
}

// Whether a and b are equal with ASCII letters compared ignoring case (not the locale's rules:
// target names are ASCII).
bool EqualIgnoringAsciiCase(const char* a, const char* b) {
  const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
  for (; *a != '\0' && lower(*a) == lower(*b); ++a, ++b) {
  }
  return *a == '\0' && *b == '\0';
}

// The target bit named `name` (ASCII case ignored), 0 if Highway knows no such target.
int64_t TargetFromName(const char* name) {
  for (int bit = 0; bit < kTargetBits; ++bit) {
    const int64_t target = int64_t{1} << bit;
    const char* known = hwy::TargetName(target);
    if (std::strcmp(known, "Unknown") != 0 && EqualIgnoringAsciiCase(name, known)) return target;
  }
  return 0;
}

bool IsBest(const char* name) { return EqualIgnoringAsciiCase(name, "best"); }

int64_t KnownTargets() {
  int64_t known = 0;
  for (int bit = 0; bit < kTargetBits; ++bit) {
    const int64_t target = int64_t{1} << bit;
    if (std::strcmp(hwy::TargetName(target), "Unknown") != 0) known |= target;
  }
  return known;
}

std::mutex& SetMutex() {
  static std::mutex mu;
  return mu;
}

std::atomic<const char*>& Requested() {
  static std::atomic<const char*> requested{"best"};
  return requested;
}

std::string& EnvError() {
  static std::string error;
  return error;
}

// Applies SHP_SIMD_TARGET once, when the library (or a binary linking the kernels) loads:
// before main() or dlopen() returns, so before any kernel can be dispatched.
struct ApplyEnvAtLoad {
  ApplyEnvAtLoad() {
    CpuSimdTargets();  // detect before any cap is set
    const char* value = std::getenv(kSimdTargetEnv);
    if (value == nullptr || value[0] == '\0') return;
    std::string message;
    if (SetSimdTarget(value, &message) == SimdTargetStatus::kOk) return;
    EnvError() = message;
    std::fprintf(stderr, "libshapepoly: %s=%s ignored: %s; using %s\n", kSimdTargetEnv, value,
                 message.c_str(), SimdTargetName());
  }
};
const ApplyEnvAtLoad apply_env_at_load;

}  // namespace

int64_t CompiledSimdTargets() { return HWY_TARGETS; }

int64_t CpuSimdTargets() {
  static const int64_t cpu = DetectCpuTargets();
  return cpu;
}

std::string SimdTargetList(int64_t targets) {
  std::string out;
  for (int bit = 0; bit < kTargetBits; ++bit) {
    const int64_t target = int64_t{1} << bit;
    if ((targets & target) == 0) continue;
    if (!out.empty()) out += ", ";
    out += hwy::TargetName(target);
  }
  return out;
}

SimdTargetStatus SetSimdTarget(const char* name, std::string* message) {
  std::string ignored;
  std::string& msg = message != nullptr ? *message : ignored;
  const int64_t compiled = CompiledSimdTargets();
  const int64_t runnable = CpuSimdTargets() & compiled;
  int64_t target = 0;  // 0: no cap
  if (name != nullptr && !IsBest(name)) {
    target = TargetFromName(name);
    if (target == 0) {
      msg = std::string("unknown SIMD target '") + name + "': expected \"best\" or one of " +
            SimdTargetList(KnownTargets()) +
            " (compiled into this library: " + SimdTargetList(compiled) +
            "; this CPU runs: " + SimdTargetList(runnable) + ")";
      return SimdTargetStatus::kUnknownName;
    }
    const char* canonical = hwy::TargetName(target);
    const std::string prefix =
        std::strcmp(name, canonical) == 0 ? "" : "SIMD target '" + std::string(name) + "': ";
    if ((target & compiled) == 0) {
      msg = prefix + canonical +
            " is not compiled into this library; it is compiled for: " + SimdTargetList(compiled) +
            " (this CPU runs: " + SimdTargetList(runnable) + ")";
      return SimdTargetStatus::kNotCompiled;
    }
    if ((target & runnable) == 0) {
      msg = prefix + canonical +
            " is not supported by this CPU; it supports: " + SimdTargetList(runnable);
      return SimdTargetStatus::kNotSupported;
    }
  }
  std::lock_guard<std::mutex> lock(SetMutex());
  // Every better target has a lower bit; DisableTargets also re-resolves the dispatch tables
  // (it DeInits Highway's chosen target, so the next dispatch applies the new mask). Highway
  // 1.0.3's SupportedTargets() would drop the mask from the dispatch whenever anything in the
  // process calls it (it re-detects and stores the unmasked set as the chosen target), except
  // while a target set is mocked: so the capped set is also given as that mock, which
  // SupportedTargets returns without re-detecting. 0 ends the mock (no cap). The mock goes
  // first: a dispatch between the two calls then resolves to the old target or the new one,
  // never to an unmasked re-detection.
  const int64_t disabled = target == 0 ? 0 : target - 1;
  hwy::SetSupportedTargetsForTest(target == 0 ? 0 : CpuSimdTargets() & ~disabled);
  hwy::DisableTargets(disabled);
  Requested().store(target == 0 ? "best" : hwy::TargetName(target));
  return SimdTargetStatus::kOk;
}

const char* SimdTargetRequested() { return Requested().load(); }

const std::string& SimdTargetEnvError() { return EnvError(); }

}  // namespace kernels
}  // namespace shp
#endif  // HWY_ONCE
