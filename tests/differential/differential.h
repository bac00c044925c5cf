// Runs one Program (program_gen.h) on fused and unfused runtimes and compares the outputs bit
// for bit, and minimizes a failing program.
//
// For one program: the program is built through the C API, serialized and loaded back; on the
// SIMD target chosen by `rotation` (shp_set_simd_target) the reference runtime is unfused
// (SHP_FUSION=off) with 1 thread, and each of these must give the same bytes at every
// valuation: fused 1 thread, fused 2 threads, unfused 2 threads, the loaded program fused and
// unfused (one with 1 thread, one with 2, swapped by rotation). Over consecutive rotations every
// target this CPU runs meets every configuration. An error on one side only (or different
// error codes) is a failure too. Every other program (even rotation) is also run op by op,
// each op a program of its own (the stepwise oracle: no slot, register or fusion shared between
// ops), which must give the whole unfused program's bytes. Results that differ only in the
// sign/payload bits of NaNs pass and are counted unless SHP_DIFF_STRICT_NAN=1. With
// WatchLibraryStderr, the library's "internal error" line (a broken fused layout that it ran
// unfused) fails the program that caused it.
#ifndef SHAPEPOLY_TESTS_DIFFERENTIAL_DIFFERENTIAL_H_
#define SHAPEPOLY_TESTS_DIFFERENTIAL_DIFFERENTIAL_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tests/differential/program_gen.h"

namespace shpdiff {

// The SIMD targets shp_set_simd_target accepts on this CPU and build, best first (the cap is
// lifted again before returning).
std::vector<std::string> AvailableTargets();

struct CheckResult {
  bool failed = false;       // a mismatch, or an error on one side only
  bool build_error = false;  // the program could not be built (a generator bug when generated)
  std::string report;        // what failed: config, sizes, output, element, both values
  size_t valuation = 0;      // the valuation that failed
  long runs = 0;             // runtime runs compared
  long both_failed = 0;      // runs where the reference and the other side failed alike
  long nan_only = 0;         // runs equal but for the sign/payload bits of NaNs (tolerated
                             // unless SHP_DIFF_STRICT_NAN=1)
  std::string nan_report;    // the first such run
};

// Whether NaNs must have the same bits (SHP_DIFF_STRICT_NAN set and not 0). By default a
// result that differs only in the bits of NaN elements passes and is counted.
bool StrictNaN();

// Checks p at each of its valuations. `targets`: AvailableTargets(); `rotation` picks the
// target and the thread counts of the loaded program's runtimes. Adds "target X", "threads N",
// "outcome ..." counters to *coverage when it is not null.
CheckResult CheckProgram(const Program& p, uint64_t rotation,
                         const std::vector<std::string>& targets,
                         std::map<std::string, long>* coverage = nullptr);

// Like CheckProgram, in a forked child: a crash (signal) counts as a failure (report says
// which signal). For the minimizer and the fuzzing CLI.
CheckResult CheckProgramInChild(const Program& p, uint64_t rotation,
                                const std::vector<std::string>& targets);

// Greedy minimization: drops outputs, replaces nodes by an operand of the same type or by a
// new input, keeps only the failing valuation, while `still_fails` holds. At most
// `max_checks` calls of still_fails.
Program Minimize(const Program& p, const std::function<bool(const Program&)>& still_fails,
                 int max_checks = 400);

// Minimizes with CheckProgramInChild (crashes included) and returns the text of the result
// with a header comment; the report of the minimized program in *report.
std::string MinimizeFailure(const Program& p, uint64_t rotation,
                            const std::vector<std::string>& targets, std::string* report);

// Sends fd 2 to a temporary file that CheckProgram reads after each program (echoing it to
// the real stderr): the library's "libshapepoly: internal error" line (a fused layout that
// broke the evaluator's contract, run unfused; said once per process) fails that program.
// Not under the sanitizers (their reports must reach the terminal as they happen).
void WatchLibraryStderr();
std::string DrainLibraryStderr();

// Mains that call MaybeRunChildCheck() first may call EnableFreshProcessChecks(): then
// CheckProgramInChild re-executes /proc/self/exe (a fresh process, with SHP_DIFF_CHILD set)
// instead of checking in a forked copy. MaybeRunChildCheck returns unless SHP_DIFF_CHILD is set;
// then it checks that program, reports to the parent and exits.
void EnableFreshProcessChecks();
void MaybeRunChildCheck();

// Crash reporting: on SIGSEGV/SIGBUS/SIGFPE/SIGILL/SIGABRT, prints the text set by
// SetCrashContext to stderr before dying. Install once per process.
void InstallCrashReporter();
void SetCrashContext(const std::string& text);

}  // namespace shpdiff

#endif  // SHAPEPOLY_TESTS_DIFFERENTIAL_DIFFERENTIAL_H_
