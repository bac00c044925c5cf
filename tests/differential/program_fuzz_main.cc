// program_fuzz: generates random programs (program_gen.h) for a while and checks each fused
// against unfused (differential.h); prints progress, the seeds, the count and the coverage, and
// on failure the minimized program.
//
//   program_fuzz --seconds N [--seed S] [--jobs J] [--count N] [--print-coverage]
//                [--save-failures] [--corpus DIR]
//   program_fuzz --replay FILE...      checks program texts (corpus files), minimizing failures
//   program_fuzz --bytes FILE          prints and checks the program of a libFuzzer input of
//                                      tests/fuzz:program_gen_fuzzer
//
// --jobs J forks J processes (program i of the run goes to job i mod J); a job that crashes is
// reported with the seed it was on and that program minimized (in forked children). Failures
// are saved to DIR (default tests/differential/corpus) as fail-<seed>.txt with --save-failures.
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/differential/differential.h"
#include "tests/differential/program_gen.h"

namespace {

using shpdiff::CheckResult;
using shpdiff::Program;

struct Args {
  double seconds = 60;
  uint64_t seed = 0;
  bool seed_given = false;
  int jobs = 1;
  long count = -1;
  bool coverage = false;
  bool save = false;
  std::string corpus = "tests/differential/corpus";
  std::vector<std::string> replay;
  std::string bytes;
};

// Shared between the jobs and the parent (mmap MAP_SHARED): progress and the current seed.
struct JobState {
  std::atomic<long> programs;
  std::atomic<long> runs;
  std::atomic<uint64_t> current_seed;
  std::atomic<uint64_t> current_index;
  std::atomic<int> failed;
};

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void SaveFailure(const Args& a, const std::string& name, const std::string& text) {
  if (!a.save) return;
  std::string path = a.corpus + "/" + name + ".txt";
  std::ofstream out(path);
  out << text;
  std::printf("saved %s\n", path.c_str());
}

void ReportFailure(const Args& a, const Program& p, uint64_t seed, uint64_t rotation,
                   const std::string& report, const std::vector<std::string>& targets) {
  std::printf("\n==== FAILURE at seed %llu (rotation %llu):\n%s\n",
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(rotation),
              report.c_str());
  std::fflush(stdout);
  std::string mreport;
  std::string text = shpdiff::MinimizeFailure(p, rotation, targets, &mreport);
  std::printf("==== minimized program (seed %llu):\n%s\n%s\n",
              static_cast<unsigned long long>(seed), text.c_str(), mreport.c_str());
  std::fflush(stdout);
  SaveFailure(a, "fail-" + std::to_string(seed), text);
}

// One job: programs index j, j + jobs, ... until the deadline or the count.
void RunJob(const Args& a, int job, double deadline, JobState* st, int out_fd,
            const std::vector<std::string>& targets) {
  std::map<std::string, long> cov;
  bool nan_printed = false;
  for (long i = job;; i += a.jobs) {
    if (a.count >= 0 && i >= a.count) break;
    if (Now() >= deadline) break;
    uint64_t seed = a.seed + static_cast<uint64_t>(i);
    st->current_seed = seed;
    st->current_index = static_cast<uint64_t>(i);
    shpdiff::PrngSource src(seed);
    Program p = shpdiff::Generate(src);
    shpdiff::CountCoverage(p, &cov);
    CheckResult r = shpdiff::CheckProgram(p, static_cast<uint64_t>(i), targets, &cov);
    st->runs += r.runs;
    ++st->programs;
    if (r.nan_only && !nan_printed) {
      nan_printed = true;
      std::printf(
          "\n==== note (job %d, seed %llu): %s (tolerated; SHP_DIFF_STRICT_NAN=1 fails "
          "on it):\n%s\n",
          job, static_cast<unsigned long long>(seed), r.nan_report.c_str(),
          shpdiff::ToText(p).c_str());
      std::fflush(stdout);
    }
    if (r.failed) {
      st->failed = 1;
      ReportFailure(a, p, seed, static_cast<uint64_t>(i), r.report, targets);
      break;
    }
  }
  std::string msg;
  for (auto& [k, v] : cov) msg += k + "\t" + std::to_string(v) + "\n";
  size_t off = 0;
  while (off < msg.size()) {
    ssize_t w = write(out_fd, msg.data() + off, msg.size() - off);
    if (w <= 0) break;
    off += static_cast<size_t>(w);
  }
}

void PrintCoverage(const std::map<std::string, long>& cov) {
  std::map<std::string, std::vector<std::pair<std::string, long>>> groups;
  for (auto& [k, v] : cov) {
    size_t sp = k.find(' ');
    groups[k.substr(0, sp)].push_back({k.substr(sp + 1), v});
  }
  std::printf("\ncoverage:\n");
  for (auto& [g, items] : groups) {
    if (g == "op") {
      // one line per op: its dtypes
      std::map<std::string, std::string> per_op;
      for (auto& [k, v] : items) {
        size_t c = k.find(':');
        per_op[k.substr(0, c)] += " " + k.substr(c + 1) + "=" + std::to_string(v);
      }
      std::printf("  ops x dtypes (operand dtype):\n");
      for (auto& [op, s] : per_op) std::printf("    %-12s%s\n", op.c_str(), s.c_str());
      continue;
    }
    std::printf("  %s:", g.c_str());
    for (auto& [k, v] : items) std::printf("  %s=%ld", k.c_str(), v);
    std::printf("\n");
  }
  long seen = 0;
  std::vector<std::string> missing;
  for (const std::string& k : shpdiff::ElementwiseCombos()) {
    if (cov.count(k))
      ++seen;
    else
      missing.push_back(k.substr(3));
  }
  std::printf("  elementwise op x dtype combinations seen: %ld of %zu\n", seen,
              shpdiff::ElementwiseCombos().size());
  long all_seen = 0;
  for (const std::string& k : shpdiff::OpDTypeCombos()) all_seen += cov.count(k) ? 1 : 0;
  std::printf("  op x dtype combinations seen (every op of the IR): %ld of %zu\n", all_seen,
              shpdiff::OpDTypeCombos().size());
  if (!missing.empty()) {
    std::printf("  not seen:");
    for (const auto& m : missing) std::printf(" %s", m.c_str());
    std::printf("\n");
  }
}

int Replay(const Args& a, const std::vector<std::string>& targets) {
  int failures = 0;
  for (const std::string& f : a.replay) {
    std::ifstream in(f);
    std::stringstream ss;
    ss << in.rdbuf();
    Program p;
    std::string err;
    if (!shpdiff::ParseText(ss.str(), &p, &err)) {
      std::printf("%s: parse error: %s\n", f.c_str(), err.c_str());
      ++failures;
      continue;
    }
    bool failed = false;
    for (uint64_t rot = 0; rot < 2 * targets.size() && !failed; ++rot) {
      CheckResult r = shpdiff::CheckProgramInChild(p, rot, targets);
      if (r.failed) {
        failed = true;
        ReportFailure(a, p, 0, rot, r.report, targets);
      }
    }
    failures += failed;
    std::printf("%s: %s\n", f.c_str(), failed ? "FAILED" : "ok");
  }
  return failures ? 1 : 0;
}

void Usage() {
  std::fprintf(stderr,
               "usage: program_fuzz --seconds N [--seed S] [--jobs J] [--count N] "
               "[--print-coverage] [--save-failures] [--corpus DIR]\n"
               "       program_fuzz --replay FILE...\n"
               "       program_fuzz --bytes FUZZER_INPUT\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  shpdiff::MaybeRunChildCheck();  // a minimizer's check in a fresh process: never returns
  shpdiff::EnableFreshProcessChecks();
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) Usage();
      return argv[++i];
    };
    if (s == "--seconds") {
      a.seconds = std::atof(next().c_str());
    } else if (s == "--seed") {
      a.seed = std::strtoull(next().c_str(), nullptr, 0);
      a.seed_given = true;
    } else if (s == "--jobs") {
      a.jobs = std::max(1, std::atoi(next().c_str()));
    } else if (s == "--count") {
      a.count = std::atol(next().c_str());
    } else if (s == "--print-coverage") {
      a.coverage = true;
    } else if (s == "--save-failures") {
      a.save = true;
    } else if (s == "--corpus") {
      a.corpus = next();
    } else if (s == "--bytes") {
      a.bytes = next();
    } else if (s == "--replay") {
      while (i + 1 < argc) a.replay.push_back(argv[++i]);
    } else {
      Usage();
    }
  }
  const std::vector<std::string> targets = shpdiff::AvailableTargets();
  std::printf("program_fuzz: SIMD targets:");
  for (const auto& t : targets) std::printf(" %s", t.c_str());
  std::printf("\n");
  if (!a.replay.empty() || !a.bytes.empty()) shpdiff::WatchLibraryStderr();
  if (!a.replay.empty()) return Replay(a, targets);
  if (!a.bytes.empty()) {  // a libFuzzer input of tests/fuzz:program_gen_fuzzer
    std::ifstream in(a.bytes, std::ios::binary);
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    shpdiff::ByteSource src(reinterpret_cast<const uint8_t*>(data.data()), data.size());
    Program p = shpdiff::Generate(src, shpdiff::FuzzerGenOptions());
    std::printf("%s", shpdiff::ToText(p).c_str());
    const std::string path = "/tmp/program_fuzz_bytes.txt";
    std::ofstream(path) << shpdiff::ToText(p);
    a.replay = {path};
    return Replay(a, targets);
  }
  if (!a.seed_given)
    a.seed = static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count() &
                                   0xffffffffffffLL);
  std::printf("program_fuzz: seed %llu, %d job(s), %.0f s%s (program i uses seed %llu + i)\n",
              static_cast<unsigned long long>(a.seed), a.jobs, a.seconds,
              a.count >= 0 ? (", at most " + std::to_string(a.count) + " programs").c_str() : "",
              static_cast<unsigned long long>(a.seed));
  std::fflush(stdout);

  void* mem = mmap(nullptr, sizeof(JobState) * static_cast<size_t>(a.jobs), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    std::perror("mmap");
    return 2;
  }
  JobState* st = new (mem) JobState[a.jobs];
  const double t0 = Now();
  const double deadline = t0 + a.seconds;
  std::vector<pid_t> pids(a.jobs);
  std::vector<int> fds(a.jobs);
  for (int j = 0; j < a.jobs; ++j) {
    int p[2];
    if (pipe(p) != 0) return 2;
    std::fflush(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
      close(p[0]);
      shpdiff::InstallCrashReporter();
      shpdiff::WatchLibraryStderr();
      RunJob(a, j, deadline, &st[j], p[1], targets);
      close(p[1]);
      std::fflush(nullptr);
      _exit(st[j].failed ? 1 : 0);
    }
    close(p[1]);
    pids[j] = pid;
    fds[j] = p[0];
  }
  // Collect the coverage while waiting (a pipe must not fill up), printing progress.
  std::map<std::string, long> cov;
  std::vector<std::string> buf(a.jobs);
  std::vector<bool> done(a.jobs, false);
  int alive = a.jobs, failures = 0;
  double last = t0;
  while (alive > 0) {
    for (int j = 0; j < a.jobs; ++j) {
      if (done[j]) continue;
      int status;
      pid_t r = waitpid(pids[j], &status, WNOHANG);
      if (r == 0) continue;
      char b[65536];
      ssize_t n;
      while ((n = read(fds[j], b, sizeof b)) > 0) buf[j].append(b, static_cast<size_t>(n));
      close(fds[j]);
      done[j] = true;
      --alive;
      if (WIFSIGNALED(status)) {
        ++failures;
        uint64_t seed = st[j].current_seed, idx = st[j].current_index;
        std::printf("\n==== job %d CRASHED (signal %d, %s) on seed %llu\n", j, WTERMSIG(status),
                    strsignal(WTERMSIG(status)), static_cast<unsigned long long>(seed));
        shpdiff::PrngSource src(seed);
        Program p = shpdiff::Generate(src);
        ReportFailure(a, p, seed, idx, "CRASH (signal " + std::to_string(WTERMSIG(status)) + ")",
                      targets);
      } else if (WEXITSTATUS(status) != 0) {
        ++failures;
      }
      std::istringstream in(buf[j]);
      std::string line;
      while (std::getline(in, line)) {
        size_t tab = line.rfind('\t');
        if (tab != std::string::npos) cov[line.substr(0, tab)] += std::atol(line.c_str() + tab + 1);
      }
    }
    double now = Now();
    if (now - last >= 10) {
      long progs = 0;
      for (int j = 0; j < a.jobs; ++j) progs += st[j].programs;
      std::printf("[%5.0f s] %ld programs (%.0f/s)\n", now - t0, progs, progs / (now - t0));
      std::fflush(stdout);
      last = now;
    }
    if (alive > 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  long programs = 0, runs = 0;
  for (int j = 0; j < a.jobs; ++j) {
    programs += st[j].programs;
    runs += st[j].runs;
  }
  const double secs = Now() - t0;
  std::printf(
      "\nprogram_fuzz: %ld programs, %ld runs compared, %.1f s, %.0f programs/s, seed %llu, "
      "%d failure(s)\n",
      programs, runs, secs, programs / std::max(secs, 1e-9),
      static_cast<unsigned long long>(a.seed), failures);
  if (a.coverage) PrintCoverage(cov);
  return failures ? 1 : 0;
}
