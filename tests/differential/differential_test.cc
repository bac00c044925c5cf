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
//   - EveryOpAndDTypeGenerated: the programs of Seeds reach every op of the IR with every dtype
//     it takes, the narrow types (f16 ... u64, about a quarter of the programs) included, and
//     their inputs every narrow type's edge values.
// A failure prints the program, the sizes, the configuration, the output and element, both
// values, and the minimized program (paste it into a file of corpus/ to keep it).
#include <dirent.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
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
// Counts the runs (and those of programs with narrow types in *narrow_runs).
void CheckSeed(uint64_t seed, uint64_t rotation, long* runs, long* narrow_runs = nullptr,
               long* narrow_programs = nullptr) {
  PrngSource src(seed);
  Program p = Generate(src);
  SetCrashContext("seed " + std::to_string(seed) + " rotation " + std::to_string(rotation) +
                  " (save the text below to a file; program_fuzz --replay FILE checks it on "
                  "every target and minimizes it)\n" +
                  ToText(p));
  CheckResult r = CheckProgram(p, rotation, Targets());
  *runs += r.runs;
  if (HasNarrow(p) && narrow_runs) {
    *narrow_runs += r.runs;
    ++*narrow_programs;
  }
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
  long runs = 0, programs = 0, narrow_runs = 0, narrow_programs = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (long i = shard; i < total; i += kShards) {
    CheckSeed(first + static_cast<uint64_t>(i), static_cast<uint64_t>(i), &runs, &narrow_runs,
              &narrow_programs);
    ++programs;
    if (::testing::Test::HasFailure()) break;
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "shard %d: %ld programs, %ld runs compared (narrow types: %ld programs, %ld runs), %.1f s "
      "(%.0f programs/s)\n",
      shard, programs, runs, narrow_programs, narrow_runs, s, programs / std::max(s, 1e-9));
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

// The programs of Seeds (the default seeds and count, generated only) reach every op of the IR
// with every dtype it takes, the eight narrow types included, and hold each narrow type's
// edge values among their inputs (f16/bf16: the largest finite values, subnormals, inf, NaN;
// integers: min and max).
TEST(Differential, EveryOpAndDTypeGenerated) {
  std::map<std::string, long> cov;
  long narrow = 0;
  std::set<std::string> edges;
  for (long i = 0; i < 20000; ++i) {
    PrngSource src(kDefaultSeed + static_cast<uint64_t>(i));
    Program p = Generate(src);
    CountCoverage(p, &cov);
    if (!HasNarrow(p)) continue;
    ++narrow;
    if (i % 7) continue;  // the inputs of some of them
    std::vector<shp_array_t*> in = MakeInputs(p, p.valuations.size() - 1);
    for (shp_array_t* a : in) {
      const shp_dtype_t t = shp_array_dtype(a);
      const uint8_t* d = static_cast<const uint8_t*>(shp_array_data(a));
      const size_t es = DTypeSize(t), n = shp_array_nbytes(a) / es;
      for (size_t j = 0; j < n && IsNarrow(t); ++j) {
        uint64_t u = 0;
        std::memcpy(&u, d + j * es, es);
        if (t == SHP_F16 || t == SHP_BF16) {
          const double v = HalfValue(t, static_cast<uint16_t>(u));
          const double max = HalfValue(t, t == SHP_F16 ? 0x7bff : 0x7f7f);
          if (std::fabs(v) == max) edges.insert(std::string(DTypeName(t)) + " max");
          if ((u & 0x7fff) != 0 && (u & (t == SHP_F16 ? 0x7c00 : 0x7f80)) == 0)
            edges.insert(std::string(DTypeName(t)) + " subnormal");
          if (std::isinf(v)) edges.insert(std::string(DTypeName(t)) + " inf");
          if (std::isnan(v)) edges.insert(std::string(DTypeName(t)) + " nan");
        } else {
          const uint64_t top = es == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * es)) - 1;
          const bool is_unsigned = t == SHP_U8 || t == SHP_U16 || t == SHP_U32 || t == SHP_U64;
          const uint64_t mn = is_unsigned ? 0 : (top >> 1) + 1, mx = is_unsigned ? top : top >> 1;
          if (u == mn) edges.insert(std::string(DTypeName(t)) + " min");
          if (u == mx) edges.insert(std::string(DTypeName(t)) + " max");
        }
      }
      shp_array_destroy(a);
    }
  }
  std::vector<std::string> missing;
  long narrow_combos = 0;
  auto is_narrow_combo = [](const std::string& k) {
    for (shp_dtype_t t : kNarrowDTypes) {
      const std::string d = DTypeName(t);
      if (k.find(":" + d) != std::string::npos || k.find(">" + d) != std::string::npos) return true;
    }
    return false;
  };
  for (const std::string& k : OpDTypeCombos()) {
    if (!cov.count(k))
      missing.push_back(k);
    else if (is_narrow_combo(k))
      ++narrow_combos;
  }
  if (std::getenv("SHP_DIFF_VERBOSE")) {  // the rarest combinations
    std::vector<std::pair<long, std::string>> seen;
    for (const std::string& k : OpDTypeCombos())
      if (cov.count(k)) seen.push_back({cov[k], k});
    std::sort(seen.begin(), seen.end());
    for (size_t k = 0; k < seen.size() && k < 40; ++k)
      std::printf("  %s: %ld\n", seen[k].second.c_str(), seen[k].first);
  }
  std::string m;
  for (const auto& k : missing) m += " " + k;
  EXPECT_TRUE(missing.empty()) << missing.size()
                               << " op x dtype combinations never generated:" << m;
  for (shp_dtype_t t : kNarrowDTypes) {
    const bool is_float = t == SHP_F16 || t == SHP_BF16;
    const std::vector<std::string> want =
        is_float ? std::vector<std::string>{"max", "subnormal", "inf", "nan"}
                 : std::vector<std::string>{"min", "max"};
    for (const std::string& e : want)
      EXPECT_TRUE(edges.count(std::string(DTypeName(t)) + " " + e)) << DTypeName(t) << " " << e;
  }
  std::printf(
      "20000 programs: %ld with narrow types; %zu op x dtype combinations generated, %ld of them "
      "with a narrow type\n",
      narrow, OpDTypeCombos().size() - missing.size(), narrow_combos);
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
