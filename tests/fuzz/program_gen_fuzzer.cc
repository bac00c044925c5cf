// libFuzzer target, structure-aware: the input bytes are the choices of the program generator
// (tests/differential/program_gen.h, ByteSource), so every input builds a valid program of
// the public C API (any byte string; exhausted bytes read as zeros). Each program runs fused
// and unfused (SHP_FUSION=off), 1 and 2 threads, saved and loaded, on one SIMD target chosen by
// the input (tests/differential/differential.h); the outputs must be the same bytes. A mismatch,
// or an error on one side only, prints the program and its minimized form, then aborts.
// Sizes stay small (at most 2,048 elements per value) so an input runs in milliseconds under
// the sanitizers. Seeds: tests/fuzz/corpus/program_gen. `program_fuzz --bytes FILE` prints the
// program of an input (and checks it) outside the fuzzer.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/differential/differential.h"
#include "tests/differential/program_gen.h"

namespace {

struct Stats {
  long inputs = 0, runs = 0, both_failed = 0, nan_only = 0;
  ~Stats() {
    if (std::getenv("SHP_FUZZ_STATS") == nullptr) return;
    std::fprintf(stderr,
                 "program_gen_fuzzer stats: %ld inputs, %ld runs compared, %ld failed on both "
                 "sides alike, %ld differ only in NaN bits\n",
                 inputs, runs, both_failed, nan_only);
  }
} stats;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<std::string> targets = shpdiff::AvailableTargets();
  shpdiff::ByteSource src(data, size);
  shpdiff::Program p = shpdiff::Generate(src, shpdiff::FuzzerGenOptions());
  const uint64_t rotation = src.Below(2 * targets.size());
  shpdiff::CheckResult r = shpdiff::CheckProgram(p, rotation, targets);
  ++stats.inputs;
  stats.runs += r.runs;
  stats.both_failed += r.both_failed;
  stats.nan_only += r.nan_only;
  if (!r.failed) return 0;
  std::fprintf(stderr, "program_gen_fuzzer: invariant broken: %s\n", r.report.c_str());
  if (!r.build_error) {
    shpdiff::Program m = shpdiff::Minimize(p, [&](const shpdiff::Program& c) {
      shpdiff::CheckResult cr = shpdiff::CheckProgram(c, rotation, targets);
      return cr.failed && !cr.build_error;
    });
    std::fprintf(stderr, "program_gen_fuzzer: minimized program:\n%s", shpdiff::ToText(m).c_str());
  }
  std::abort();
}
