// Differential tests of the runtime from the outside (issue 36): random programs as users
// write them (program_gen.h), run fused and unfused, 1 and 2 threads, saved and loaded, on the
// SIMD targets this CPU runs, and op by op (the stepwise oracle); the outputs must be the same
// bytes (differential.h). Outside the sanitizers, the library's stderr is watched for its
// "internal error" line (a broken fused layout, run unfused).
//   - Seeds/*: 20,000 programs from fixed seeds in 20 cases (200 under the sanitizers);
//     SHP_DIFF_PROGRAMS overrides the count, SHP_DIFF_SEED the first seed.
//   - FreshSeed: ~10 s (3 s sanitized; SHP_DIFF_FRESH_SECONDS, 0 skips it) from a time-based
//     seed, printed.
//   - Corpus: every program text in tests/differential/corpus/ (issue 36's expressions, the
//     minimized failures found so far), at its `sizes`, on every target.
// A failure prints the program, the sizes, the configuration, the output and element, both
// values, and the minimized program (paste it into a file of corpus/ to keep it).
#include <dirent.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cc/base/testing.h"  // SHP_TEST_SANITIZED
#include "tests/differential/differential.h"
#include "tests/differential/program_gen.h"

namespace shpdiff {
namespace {

constexpr int kShards = 20;
#ifdef SHP_TEST_SANITIZED
constexpr long kDefaultPrograms = 200;
constexpr double kDefaultFreshSeconds = 3;
#else
constexpr long kDefaultPrograms = 20000;
constexpr double kDefaultFreshSeconds = 10;
#endif
constexpr uint64_t kDefaultSeed = 0x5eed0036;

long EnvLong(const char* name, long def) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtol(v, nullptr, 0) : def;
}

const std::vector<std::string>& Targets() {
  static const std::vector<std::string> t = [] {
    InstallCrashReporter();
    return AvailableTargets();
  }();
  return t;
}

// Checks the program of `seed`; on failure, minimizes it and fails the test with both.
void CheckSeed(uint64_t seed, uint64_t rotation, long* runs) {
  PrngSource src(seed);
  Program p = Generate(src);
  SetCrashContext("seed " + std::to_string(seed) + " rotation " + std::to_string(rotation) +
                  " (save the text below to a file; program_fuzz --replay FILE checks it on "
                  "every target and minimizes it)\n" +
                  ToText(p));
  CheckResult r = CheckProgram(p, rotation, Targets());
  *runs += r.runs;
  if (!r.failed) return;
  std::string text, report;
  if (!r.build_error) text = MinimizeFailure(p, rotation, Targets(), &report);
  ADD_FAILURE() << "seed " << seed << " (rotation " << rotation << "): " << r.report
                << "\n\nminimized:\n"
                << text << "\n"
                << report;
}

class Seeds : public ::testing::TestWithParam<int> {};

TEST_P(Seeds, FusedEqualsUnfused) {
  const long total = EnvLong("SHP_DIFF_PROGRAMS", kDefaultPrograms);
  const uint64_t first = static_cast<uint64_t>(EnvLong("SHP_DIFF_SEED", kDefaultSeed));
  const int shard = GetParam();
  long runs = 0, programs = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (long i = shard; i < total; i += kShards) {
    CheckSeed(first + static_cast<uint64_t>(i), static_cast<uint64_t>(i), &runs);
    ++programs;
    if (::testing::Test::HasFailure()) break;
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("shard %d: %ld programs, %ld runs compared, %.1f s (%.0f programs/s)\n", shard,
              programs, runs, s, programs / std::max(s, 1e-9));
}

INSTANTIATE_TEST_SUITE_P(Differential, Seeds, ::testing::Range(0, kShards));

TEST(Differential, FreshSeed) {
  const double seconds = static_cast<double>(
      EnvLong("SHP_DIFF_FRESH_SECONDS", static_cast<long>(kDefaultFreshSeconds)));
  if (seconds <= 0) GTEST_SKIP() << "SHP_DIFF_FRESH_SECONDS=0";
  const uint64_t seed = static_cast<uint64_t>(
      std::chrono::system_clock::now().time_since_epoch().count() & 0xffffffffffffLL);
  std::printf("fresh seed %llu (SHP_DIFF_SEED=%llu SHP_DIFF_PROGRAMS=N reproduces the run)\n",
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed));
  std::fflush(stdout);
  auto t0 = std::chrono::steady_clock::now();
  long runs = 0, programs = 0;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds) {
    CheckSeed(seed + static_cast<uint64_t>(programs), static_cast<uint64_t>(programs), &runs);
    ++programs;
    if (HasFailure()) break;
  }
  std::printf("fresh seed %llu: %ld programs, %ld runs compared\n",
              static_cast<unsigned long long>(seed), programs, runs);
}

std::vector<std::string> CorpusFiles() {
  std::vector<std::string> files;
  const std::string dir = "tests/differential/corpus";
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n.size() > 4 && n.substr(n.size() - 4) == ".txt") files.push_back(dir + "/" + n);
    }
    closedir(d);
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(Differential, Corpus) {
  std::vector<std::string> files = CorpusFiles();
  ASSERT_GE(files.size(), 10u) << "tests/differential/corpus/*.txt not found (run from the "
                                  "runfiles root; the BUILD file lists them as data)";
  for (const std::string& f : files) {
    std::ifstream in(f);
    std::stringstream ss;
    ss << in.rdbuf();
    Program p;
    std::string err;
    ASSERT_TRUE(ParseText(ss.str(), &p, &err)) << f << ": " << err;
    EXPECT_EQ(ToText(p),
              [&] {
                Program q;
                std::string e2;
                EXPECT_TRUE(ParseText(ToText(p), &q, &e2)) << e2;
                return ToText(q);
              }())
        << f << ": the text does not survive print + parse";
    for (size_t t = 0; t < Targets().size(); ++t) {
      SetCrashContext(f + "\n" + ToText(p));
      // Every target, with each thread layout of the loaded program.
      for (uint64_t rot : {t, t + Targets().size()}) {
        CheckResult r = CheckProgram(p, rot, Targets());
        if (r.failed) {
          std::string report, text;
          if (!r.build_error) text = MinimizeFailure(p, rot, Targets(), &report);
          ADD_FAILURE() << f << ": " << r.report << "\n\nminimized:\n" << text << "\n" << report;
        }
      }
    }
  }
}

// The generator's text form survives print + parse, and the generator is deterministic.
TEST(Differential, TextRoundTripAndDeterminism) {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    PrngSource a(seed), b(seed);
    Program p = Generate(a), q = Generate(b);
    ASSERT_EQ(ToText(p), ToText(q));
    Program r;
    std::string err;
    ASSERT_TRUE(ParseText(ToText(p), &r, &err)) << err << "\n" << ToText(p);
    ASSERT_EQ(ToText(p), ToText(r));
  }
  // Every byte string gives a valid program (the libFuzzer source).
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    PrngSource bytes(seed);
    std::vector<uint8_t> data(bytes.Below(200));
    for (uint8_t& c : data) c = static_cast<uint8_t>(bytes.Bits());
    ByteSource src(data.data(), data.size());
    Program p = Generate(src);
    std::string err;
    shp_program_t* prog = Build(p, &err);
    EXPECT_NE(prog, nullptr) << err << "\n" << ToText(p);
    shp_program_destroy(prog);
  }
}

// The minimizer keeps what the predicate needs and drops the rest.
TEST(Differential, MinimizerShrinks) {
  int tried = 0;
  for (uint64_t seed = 1; seed <= 2000 && tried < 20; ++seed) {
    PrngSource src(seed);
    Program p = Generate(src);
    auto has_tanh = [](const Program& c) {
      for (const Node& n : c.nodes)
        if (n.op == "tanh") return true;
      return false;
    };
    if (p.nodes.size() < 10 || !has_tanh(p)) continue;
    ++tried;
    Program m = Minimize(p, [&](const Program& c) {
      std::string err;
      shp_program_t* prog = Build(c, &err);
      shp_program_destroy(prog);
      return prog != nullptr && has_tanh(c);
    });
    EXPECT_TRUE(has_tanh(m));
    EXPECT_LE(m.nodes.size(), 4u) << ToText(p) << "\nminimized to\n" << ToText(m);
  }
  EXPECT_EQ(tried, 20);
}

}  // namespace
}  // namespace shpdiff

int main(int argc, char** argv) {
  shpdiff::MaybeRunChildCheck();  // a minimizer's check in a fresh process: never returns
  shpdiff::EnableFreshProcessChecks();
#ifndef SHP_TEST_SANITIZED
  shpdiff::WatchLibraryStderr();
#endif
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
