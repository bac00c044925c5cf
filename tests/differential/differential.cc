#include "tests/differential/differential.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>

namespace shpdiff {

CheckResult CheckProgramRuns(const Program& p, uint64_t rotation,
                             const std::vector<std::string>& targets,
                             std::map<std::string, long>* coverage);

bool StrictNaN() {
  static const bool strict = [] {
    const char* v = std::getenv("SHP_DIFF_STRICT_NAN");
    return v && *v && std::strcmp(v, "0") != 0;
  }();
  return strict;
}

namespace {

std::string TakeMessage(shp_error_t* e) {
  std::string m = e ? shp_error_message(e) : "";
  shp_error_destroy(e);
  return m;
}

struct RunConfig {
  bool fused;
  int threads;
  bool loaded;
  std::string Text(const std::string& target) const {
    return std::string(fused ? "fused" : "unfused") + ", " + std::to_string(threads) +
           (threads == 1 ? " thread" : " threads") + (loaded ? ", saved+loaded program" : "") +
           ", target " + target;
  }
};

struct Outcome {
  int code = 0;  // 0: ok
  std::string error;
  std::vector<shp_array_t*> outputs;
  ~Outcome() {
    for (shp_array_t* a : outputs) shp_array_destroy(a);
  }
};

shp_runtime_t* CreateRuntime(const shp_program_t* prog, const RunConfig& c, int* code,
                             std::string* error) {
  shp_runtime_options_t* opts = nullptr;
  shp_error_t* e = shp_runtime_options_create(&opts);
  if (!e) e = shp_runtime_options_set_num_threads(opts, c.threads);
  if (c.fused)
    unsetenv("SHP_FUSION");
  else
    setenv("SHP_FUSION", "off", 1);
  shp_runtime_t* rt = nullptr;
  if (!e) e = shp_runtime_create(prog, opts, &rt);
  unsetenv("SHP_FUSION");
  shp_runtime_options_destroy(opts);
  if (e) {
    *code = shp_error_code(e);
    *error = TakeMessage(e);
    return nullptr;
  }
  *code = 0;
  return rt;
}

std::string ValueText(shp_dtype_t t, const uint8_t* p) {
  char buf[96];
  switch (t) {
    case SHP_F32: {
      float f;
      uint32_t u;
      std::memcpy(&f, p, 4);
      std::memcpy(&u, p, 4);
      std::snprintf(buf, sizeof buf, "%.9g (0x%08" PRIx32 ")", static_cast<double>(f), u);
      break;
    }
    case SHP_F64: {
      double f;
      uint64_t u;
      std::memcpy(&f, p, 8);
      std::memcpy(&u, p, 8);
      std::snprintf(buf, sizeof buf, "%.17g (0x%016" PRIx64 ")", f, u);
      break;
    }
    case SHP_I32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      std::snprintf(buf, sizeof buf, "%" PRId32, v);
      break;
    }
    case SHP_I64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      std::snprintf(buf, sizeof buf, "%" PRId64, v);
      break;
    }
    case SHP_BOOL:
      std::snprintf(buf, sizeof buf, "%u", static_cast<unsigned>(*p));
      break;
    case SHP_F16:
    case SHP_BF16: {
      uint16_t u;
      std::memcpy(&u, p, 2);
      std::snprintf(buf, sizeof buf, "%.9g (0x%04x)", HalfValue(t, u), static_cast<unsigned>(u));
      break;
    }
    case SHP_I8:
      std::snprintf(buf, sizeof buf, "%d", static_cast<int>(static_cast<int8_t>(*p)));
      break;
    case SHP_I16: {
      int16_t v;
      std::memcpy(&v, p, 2);
      std::snprintf(buf, sizeof buf, "%d", static_cast<int>(v));
      break;
    }
    default: {  // u8, u16, u32, u64
      uint64_t v = 0;
      std::memcpy(&v, p, DTypeSize(t));  // little-endian
      std::snprintf(buf, sizeof buf, "%" PRIu64, v);
      break;
    }
  }
  return buf;
}

std::string ShapeText(const shp_array_t* a) {
  std::string s = "(";
  for (size_t k = 0; k < shp_array_rank(a); ++k)
    s += (k ? "," : "") + std::to_string(shp_array_shape(a)[k]);
  return s + ")";
}

std::string SizesText(const Program& p, size_t k) {
  std::string s;
  for (size_t v = 0; v < p.vars.size(); ++v)
    s += (v ? " " : "") + p.vars[v].name + "=" + std::to_string(p.valuations[k][v]);
  return s.empty() ? "(no variables)" : s;
}

bool BothNaN(shp_dtype_t t, const uint8_t* a, const uint8_t* b) {
  return IsNaNAt(t, a) && IsNaNAt(t, b);
}

// "" if equal (or, unless StrictNaN(), equal but for the bits of NaNs: *nan_only is then
// set), else the first difference.
std::string Compare(const Outcome& ref, const Outcome& got, bool* nan_only) {
  if (ref.code != got.code) {
    return "reference " +
           (ref.code ? "failed (" + std::string(shp_code_string(ref.code)) + ": " + ref.error + ")"
                     : std::string("succeeded")) +
           ", other side " +
           (got.code ? "failed (" + std::string(shp_code_string(got.code)) + ": " + got.error + ")"
                     : std::string("succeeded"));
  }
  if (ref.code) return "";
  for (size_t o = 0; o < ref.outputs.size(); ++o) {
    const shp_array_t* a = ref.outputs[o];
    const shp_array_t* b = got.outputs[o];
    std::string where = "output o" + std::to_string(o);
    if (shp_array_dtype(a) != shp_array_dtype(b)) return where + ": dtypes differ";
    if (ShapeText(a) != ShapeText(b))
      return where + ": shapes differ: " + ShapeText(a) + " vs " + ShapeText(b);
    size_t n = shp_array_nbytes(a);
    const uint8_t* pa = static_cast<const uint8_t*>(shp_array_data(a));
    const uint8_t* pb = static_cast<const uint8_t*>(shp_array_data(b));
    if (n == 0 || std::memcmp(pa, pb, n) == 0) continue;
    shp_dtype_t t = shp_array_dtype(a);
    size_t es = DTypeSize(t);
    size_t first = 0, count = 0, nan_pairs = 0;
    for (size_t j = 0; j < n / es; ++j) {
      if (std::memcmp(pa + j * es, pb + j * es, es) != 0) {
        if (count == 0) first = j;
        ++count;
        if (BothNaN(t, pa + j * es, pb + j * es)) ++nan_pairs;
      }
    }
    if (nan_pairs == count && !StrictNaN()) {
      *nan_only = true;
      continue;
    }
    return std::string(nan_pairs == count ? "NaN bits differ (SHP_DIFF_STRICT_NAN): " : "") +
           where + " " + DTypeName(t) + ShapeText(a) + ": element " + std::to_string(first) +
           " (flat index; " + std::to_string(count) + " of " + std::to_string(n / es) +
           " elements differ): reference (unfused, 1 thread) " + ValueText(t, pa + first * es) +
           ", other " + ValueText(t, pb + first * es);
  }
  return "";
}

void Run(shp_runtime_t* rt, const std::vector<const char*>& names,
         const std::vector<shp_array_t*>& inputs, size_t num_outputs, Outcome* out) {
  std::vector<shp_array_t*> outs(num_outputs, nullptr);
  std::vector<const shp_array_t*> ins(inputs.begin(), inputs.end());
  shp_error_t* e =
      shp_runtime_run(rt, names.data(), ins.data(), ins.size(), outs.data(), outs.size());
  if (e) {
    out->code = shp_error_code(e);
    out->error = TakeMessage(e);
    return;
  }
  out->outputs = outs;
}

struct ProgramDeleter {
  void operator()(shp_program_t* p) const { shp_program_destroy(p); }
};
struct RuntimeDeleter {
  void operator()(shp_runtime_t* r) const { shp_runtime_destroy(r); }
};

// The stepwise oracle: every op of p run as a program of its own (unfused, 1 thread), its
// operands given as inputs (constants copied in); no register, slot or fusion is shared
// between two ops, so the whole program's unfused run must give the same bytes. Fills *out
// with p's outputs; false (with *why) if a step cannot be built or fails.
bool RunStepwise(const Program& p, const std::vector<shp_array_t*>& inputs, size_t k, Outcome* out,
                 std::string* why) {
  std::vector<shp_array_t*> values(p.nodes.size(), nullptr);
  std::vector<shp_array_t*> owned;
  auto cleanup = [&] {
    for (shp_array_t* a : owned) shp_array_destroy(a);
  };
  size_t next_input = 0;
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    const Node& n = p.nodes[i];
    if (n.op == "input") {
      values[i] = inputs[next_input++];
      continue;
    }
    if (n.op == "const") continue;
    Program q;
    q.vars = p.vars;
    q.valuations = {p.valuations[k]};
    std::vector<const shp_array_t*> args;
    std::vector<std::string> names;
    std::map<int, int> remap;
    for (int a : n.args) {
      if (remap.count(a)) continue;
      Node in = p.nodes[a];
      if (in.op != "const") {
        in.op = "input";
        in.name = "a" + std::to_string(remap.size());
        names.push_back(in.name);
        args.push_back(values[a]);
      }
      in.args.clear();
      remap[a] = static_cast<int>(q.nodes.size());
      q.nodes.push_back(in);
    }
    // Every variable given by an input shape (an op's own dims may need one its operands lack).
    for (size_t v = 0; v < p.vars.size(); ++v) {
      Node in;
      in.op = "input";
      in.name = "var_" + p.vars[v].name;
      in.type.dtype = SHP_BOOL;
      in.type.shape = {Dim{static_cast<int>(v), 1, 0}};
      q.nodes.push_back(in);
      names.push_back(in.name);
      int64_t len = p.valuations[k][v];
      shp_array_t* arr = nullptr;
      shp_error_destroy(shp_array_create(SHP_BOOL, &len, 1, &arr));
      owned.push_back(arr);
      args.push_back(arr);
    }
    Node op = n;
    for (int& a : op.args) a = remap[a];
    q.nodes.push_back(op);
    q.outputs = {static_cast<int>(q.nodes.size() - 1)};
    std::string err;
    std::unique_ptr<shp_program_t, ProgramDeleter> prog(Build(q, &err));
    if (!prog) {
      *why = "step v" + std::to_string(i) + " does not build: " + err;
      cleanup();
      return false;
    }
    int code;
    RunConfig c{false, 1, false};
    std::unique_ptr<shp_runtime_t, RuntimeDeleter> rt(CreateRuntime(prog.get(), c, &code, &err));
    if (!rt) {
      *why = "step v" + std::to_string(i) + ": shp_runtime_create: " + err;
      cleanup();
      return false;
    }
    std::vector<const char*> cn;
    for (const auto& nm : names) cn.push_back(nm.c_str());
    shp_array_t* result = nullptr;
    shp_error_t* e = shp_runtime_run(rt.get(), cn.data(), args.data(), args.size(), &result, 1);
    if (e) {
      *why = "step v" + std::to_string(i) + " (" + n.op + ") failed: " + TakeMessage(e);
      cleanup();
      return false;
    }
    owned.push_back(result);
    values[i] = result;
  }
  // The outputs: copies (an output may be an input or a constant: constants have no value
  // here, so a program with a constant output is skipped).
  for (int o : p.outputs) {
    if (values[o] == nullptr) {
      *why = "a constant output";
      cleanup();
      return false;
    }
    shp_array_t* copy = nullptr;
    shp_error_t* e = shp_array_create(shp_array_dtype(values[o]), shp_array_shape(values[o]),
                                      shp_array_rank(values[o]), &copy);
    if (e) {
      *why = TakeMessage(e);
      cleanup();
      return false;
    }
    if (shp_array_nbytes(copy))
      std::memcpy(shp_array_data(copy), shp_array_data(values[o]), shp_array_nbytes(copy));
    out->outputs.push_back(copy);
  }
  cleanup();
  return true;
}

}  // namespace

namespace {
int g_real_stderr = -1;  // the process's stderr while fd 2 goes to g_watch_fd
int g_watch_fd = -1;
off_t g_watch_off = 0;
bool g_fresh_process = false;
const char kInternalError[] = "libshapepoly: internal error";
}  // namespace

void WatchLibraryStderr() {
  if (g_watch_fd >= 0) return;
  char path[] = "/tmp/shp-diff-stderr-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return;
  unlink(path);
  std::fflush(stderr);
  g_real_stderr = dup(2);
  if (g_real_stderr < 0 || dup2(fd, 2) < 0) {
    close(fd);
    return;
  }
  g_watch_fd = fd;
}

std::string DrainLibraryStderr() {
  if (g_watch_fd < 0) return "";
  std::fflush(stderr);
  std::string s;
  char b[4096];
  ssize_t n;
  while ((n = pread(g_watch_fd, b, sizeof b, g_watch_off)) > 0) {
    s.append(b, static_cast<size_t>(n));
    g_watch_off += n;
  }
  size_t off = 0;
  while (off < s.size()) {
    ssize_t w = write(g_real_stderr, s.data() + off, s.size() - off);
    if (w <= 0) break;
    off += static_cast<size_t>(w);
  }
  return s;
}

void EnableFreshProcessChecks() { g_fresh_process = true; }

void MaybeRunChildCheck() {
  const char* file = std::getenv("SHP_DIFF_CHILD");
  if (file == nullptr) return;
  const char* fd_text = std::getenv("SHP_DIFF_CHILD_FD");
  const char* rot_text = std::getenv("SHP_DIFF_CHILD_ROT");
  int fd = fd_text ? std::atoi(fd_text) : 1;
  uint64_t rot = rot_text ? std::strtoull(rot_text, nullptr, 10) : 0;
  if (std::getenv("SHP_DIFF_CHILD_WATCH")) WatchLibraryStderr();
  std::string text;
  if (FILE* f = std::fopen(file, "rb")) {
    char b[4096];
    size_t n;
    while ((n = std::fread(b, 1, sizeof b, f)) > 0) text.append(b, n);
    std::fclose(f);
  }
  Program p;
  std::string err, msg;
  if (!ParseText(text, &p, &err)) {
    msg = "FB0\nthe child could not parse the program: " + err;
  } else {
    CheckResult r = CheckProgram(p, rot, AvailableTargets());
    msg = std::string(r.failed ? "F" : "P") + (r.build_error ? "B" : "-") +
          std::to_string(r.valuation) + "\n" + r.report;
  }
  size_t off = 0;
  while (off < msg.size()) {
    ssize_t w = write(fd, msg.data() + off, msg.size() - off);
    if (w <= 0) break;
    off += static_cast<size_t>(w);
  }
  DrainLibraryStderr();
  _exit(0);
}

std::vector<std::string> AvailableTargets() {
  std::vector<std::string> r;
  for (const char* t : {"AVX3_SPR", "AVX3_ZEN4", "AVX3_DL", "AVX3", "AVX2", "SSE4", "SSSE3", "SSE2",
                        "EMU128", "SCALAR"}) {
    shp_error_t* e = shp_set_simd_target(t);
    if (e == nullptr) r.push_back(t);
    shp_error_destroy(e);
  }
  shp_error_destroy(shp_set_simd_target("best"));
  if (r.empty()) r.push_back("best");
  return r;
}

CheckResult CheckProgram(const Program& p, uint64_t rotation,
                         const std::vector<std::string>& targets,
                         std::map<std::string, long>* coverage) {
  DrainLibraryStderr();
  CheckResult res = CheckProgramRuns(p, rotation, targets, coverage);
  // The library reports a broken fused layout (a planner bug; it then runs unfused) once per
  // process on stderr: the program that made it say so is this one.
  const std::string said = DrainLibraryStderr();
  const size_t at = said.find(kInternalError);
  if (at != std::string::npos && !res.failed) {
    res.failed = true;
    res.report =
        "the library reported an internal error on stderr (the first time in this "
        "process, so the first program to cause it): " +
        said.substr(at, said.find('\n', at) - at) + "\nprogram:\n" + ToText(p);
  }
  return res;
}

CheckResult CheckProgramRuns(const Program& p, uint64_t rotation,
                             const std::vector<std::string>& targets,
                             std::map<std::string, long>* coverage) {
  CheckResult res;
  std::string error;
  std::unique_ptr<shp_program_t, ProgramDeleter> prog(Build(p, &error));
  if (!prog) {
    res.failed = true;
    res.build_error = true;
    res.report = "the program does not build: " + error;
    return res;
  }
  // Save + load.
  shp_buffer_t* buf = nullptr;
  shp_error_t* e = shp_program_serialize(prog.get(), &buf);
  shp_program_t* loaded_raw = nullptr;
  if (!e) e = shp_program_load(shp_buffer_data(buf), shp_buffer_size(buf), &loaded_raw);
  shp_buffer_destroy(buf);
  if (e) {
    res.failed = true;
    res.report = "save/load round trip failed: " + TakeMessage(e);
    return res;
  }
  std::unique_ptr<shp_program_t, ProgramDeleter> loaded(loaded_raw);

  const std::string target = targets[rotation % targets.size()];
  const int lt = 1 + static_cast<int>((rotation / targets.size()) % 2);
  e = shp_set_simd_target(target == "best" ? nullptr : target.c_str());
  if (e) {
    res.failed = true;
    res.report = "shp_set_simd_target(" + target + "): " + TakeMessage(e);
    return res;
  }
  const std::vector<RunConfig> configs = {
      {false, 1, false}, {true, 1, false}, {true, 2, false},
      {false, 2, false}, {true, lt, true}, {false, 3 - lt, true},
  };
  std::vector<std::unique_ptr<shp_runtime_t, RuntimeDeleter>> rts;
  std::vector<int> create_codes;
  std::vector<std::string> create_errors;
  for (const RunConfig& c : configs) {
    int code;
    std::string err;
    rts.emplace_back(CreateRuntime(c.loaded ? loaded.get() : prog.get(), c, &code, &err));
    create_codes.push_back(code);
    create_errors.push_back(err);
    if (coverage) {
      (*coverage)["target " + target]++;
      (*coverage)["threads " + std::to_string(c.threads) + (c.fused ? " fused" : " unfused")]++;
    }
  }
  auto fail = [&](size_t ci, size_t k, const std::string& what) {
    res.failed = true;
    res.valuation = k;
    res.report = "MISMATCH: " + configs[ci].Text(target) + " vs reference (" +
                 configs[0].Text(target) + ") at sizes " + SizesText(p, k) + " (valuation " +
                 std::to_string(k) + "): " + what + "\nprogram:\n" + ToText(p);
  };
  for (size_t ci = 1; ci < configs.size(); ++ci) {
    if (create_codes[ci] != create_codes[0]) {
      fail(ci, 0,
           "shp_runtime_create: reference code " + std::to_string(create_codes[0]) + " (" +
               create_errors[0] + "), other code " + std::to_string(create_codes[ci]) + " (" +
               create_errors[ci] + ")");
      shp_error_destroy(shp_set_simd_target(nullptr));
      return res;
    }
  }
  if (!rts[0]) {
    if (coverage) (*coverage)["outcome runtime refused (both sides)"]++;
    shp_error_destroy(shp_set_simd_target(nullptr));
    return res;
  }
  const std::vector<std::string> names = InputNames(p);
  std::vector<const char*> cnames;
  for (const auto& s : names) cnames.push_back(s.c_str());
  for (size_t k = 0; k < p.valuations.size() && !res.failed; ++k) {
    std::vector<shp_array_t*> inputs = MakeInputs(p, k);
    Outcome ref;
    Run(rts[0].get(), cnames, inputs, p.outputs.size(), &ref);
    for (size_t ci = 1; ci < configs.size(); ++ci) {
      Outcome got;
      Run(rts[ci].get(), cnames, inputs, p.outputs.size(), &got);
      ++res.runs;
      bool nan_only = false;
      std::string diff = Compare(ref, got, &nan_only);
      if (nan_only && res.nan_report.empty()) {
        res.nan_report = "NaN bits differ (sign/payload only): " + configs[ci].Text(target) +
                         " vs reference at sizes " + SizesText(p, k);
      }
      if (nan_only) ++res.nan_only;
      if (!diff.empty()) {
        fail(ci, k, diff);
        break;
      }
      if (ref.code) ++res.both_failed;
    }
    // SHP_DIFF_SHOW_ERRORS=1 prints why both sides refused a run (to check that the refusals
    // the generator provokes are the intended ones).
    if (ref.code && std::getenv("SHP_DIFF_SHOW_ERRORS"))
      std::fprintf(stderr, "differential: both sides refused at sizes %s: %s\n",
                   SizesText(p, k).c_str(), ref.error.c_str());
    // The stepwise oracle (every other program: it costs a program per op).
    if (!res.failed && ref.code == 0 && rotation % 2 == 0) {
      Outcome step;
      std::string why;
      if (RunStepwise(p, inputs, k, &step, &why)) {
        bool nan_only = false;
        std::string diff = Compare(ref, step, &nan_only);
        if (nan_only) ++res.nan_only;
        if (!diff.empty()) {
          res.failed = true;
          res.valuation = k;
          res.report = "MISMATCH: the whole program (" + configs[0].Text(target) +
                       ") vs each op run as a program of its own at sizes " + SizesText(p, k) +
                       " (valuation " + std::to_string(k) + "): " + diff + "\nprogram:\n" +
                       ToText(p);
        }
        if (coverage) (*coverage)["outcome stepwise-oracle-compared"]++;
      } else {
        if (coverage) (*coverage)["outcome stepwise-oracle-skipped"]++;
        if (std::getenv("SHP_DIFF_VERBOSE"))
          std::fprintf(stderr, "differential: stepwise oracle skipped: %s\n", why.c_str());
      }
    }
    if (coverage)
      (*coverage)[ref.code
                      ? "outcome run-error-both-sides:" + std::string(shp_code_string(ref.code))
                      : "outcome run-ok"]++;
    for (shp_array_t* a : inputs) shp_array_destroy(a);
  }
  if (coverage && res.nan_only) (*coverage)["outcome nan-bits-only-differ"] += res.nan_only;
  shp_error_destroy(shp_set_simd_target(nullptr));
  return res;
}

CheckResult CheckProgramInChild(const Program& p, uint64_t rotation,
                                const std::vector<std::string>& targets) {
  int fds[2];
  CheckResult res;
  if (pipe(fds) != 0) return CheckProgram(p, rotation, targets);
  // A fresh process (the program text in a file) when the main supports it: the library's
  // once-per-process messages are then said again.
  std::string text_path;
  if (g_fresh_process) {
    char path[] = "/tmp/shp-diff-child-XXXXXX";
    int tfd = mkstemp(path);
    if (tfd >= 0) {
      const std::string text = ToText(p);
      bool ok = write(tfd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
      close(tfd);
      if (ok) text_path = path;
    }
  }
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return CheckProgram(p, rotation, targets);
  }
  if (pid == 0) {
    close(fds[0]);
    signal(SIGABRT, SIG_DFL);
    signal(SIGSEGV, SIG_DFL);
    if (!text_path.empty()) {
      setenv("SHP_DIFF_CHILD", text_path.c_str(), 1);
      setenv("SHP_DIFF_CHILD_FD", std::to_string(fds[1]).c_str(), 1);
      setenv("SHP_DIFF_CHILD_ROT", std::to_string(rotation).c_str(), 1);
      if (g_watch_fd >= 0) setenv("SHP_DIFF_CHILD_WATCH", "1", 1);
      if (g_real_stderr >= 0) dup2(g_real_stderr, 2);
      char arg0[] = "differential-child";
      char* argv[] = {arg0, nullptr};
      execv("/proc/self/exe", argv);
      // exec failed: check in this forked copy
    }
    CheckResult r = CheckProgram(p, rotation, targets);
    std::string msg = std::string(r.failed ? "F" : "P") + (r.build_error ? "B" : "-") +
                      std::to_string(r.valuation) + "\n" + r.report;
    size_t off = 0;
    while (off < msg.size()) {
      ssize_t w = write(fds[1], msg.data() + off, msg.size() - off);
      if (w <= 0) break;
      off += static_cast<size_t>(w);
    }
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string msg;
  char b[4096];
  ssize_t n;
  while ((n = read(fds[0], b, sizeof b)) > 0) msg.append(b, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!text_path.empty()) unlink(text_path.c_str());
  if (WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0) || msg.size() < 3) {
    res.failed = true;
    res.report = WIFSIGNALED(status)
                     ? "CRASH: signal " + std::to_string(WTERMSIG(status)) + " (" +
                           strsignal(WTERMSIG(status)) + ")"
                     : "CRASH: the check exited with status " + std::to_string(WEXITSTATUS(status));
    res.report += " on target " + targets[rotation % targets.size()] + "\nprogram:\n" + ToText(p);
    return res;
  }
  res.failed = msg[0] == 'F';
  res.build_error = msg[1] == 'B';
  size_t nl = msg.find('\n');
  res.valuation = static_cast<size_t>(std::strtoul(msg.substr(2, nl - 2).c_str(), nullptr, 10));
  res.report = msg.substr(nl + 1);
  return res;
}

Program Minimize(const Program& p0, const std::function<bool(const Program&)>& still_fails,
                 int max_checks) {
  Program best = p0;
  int checks = 0;
  auto try_candidate = [&](Program c) {
    if (checks >= max_checks) return false;
    Compact(&c);
    // Types must still hold (an operand replaced by one of the same type keeps every type).
    for (size_t i = 0; i < c.nodes.size(); ++i) {
      std::string why;
      Type before = c.nodes[i].type;
      if (!InferType(&c, i, &why)) return false;
      if (c.nodes[i].type.dtype != before.dtype || !(c.nodes[i].type.shape == before.shape))
        return false;
    }
    ++checks;
    if (!still_fails(c)) return false;
    best = c;
    return true;
  };
  bool progress = true;
  while (progress && checks < max_checks) {
    progress = false;
    // Drop outputs.
    for (size_t o = 0; best.outputs.size() > 1 && o < best.outputs.size(); ++o) {
      Program c = best;
      c.outputs.erase(c.outputs.begin() + static_cast<long>(o));
      if (try_candidate(c)) {
        progress = true;
        --o;
      }
    }
    // Make one earlier value the only output (from the first value on: the smallest wins).
    for (size_t k = 0; k < best.nodes.size(); ++k) {
      if (best.nodes[k].op == "const" ||
          (best.outputs.size() == 1 && best.outputs[0] == static_cast<int>(k)))
        continue;
      Program c = best;
      c.outputs = {static_cast<int>(k)};
      if (try_candidate(c)) {
        progress = true;
        break;
      }
    }
    // Replace a node by an operand of the same type (from the last node back).
    for (size_t i = best.nodes.size(); i-- > 0;) {
      if (i >= best.nodes.size()) continue;
      const Node n = best.nodes[i];
      bool done = false;
      for (int a : n.args) {
        const Type& at = best.nodes[a].type;
        if (at.dtype != n.type.dtype || !(at.shape == n.type.shape)) continue;
        Program c = best;
        for (Node& m : c.nodes)
          for (int& x : m.args)
            if (x == static_cast<int>(i)) x = a;
        for (int& o : c.outputs)
          if (o == static_cast<int>(i)) o = a;
        if (try_candidate(c)) {
          progress = done = true;
          break;
        }
      }
      if (done || n.op == "input" || n.op == "const") continue;
      // Replace it by a new input of its type.
      Program c = best;
      Node in;
      in.op = "input";
      in.name = "m" + std::to_string(i);
      for (const Node& m : c.nodes)
        if (m.name == in.name) in.name += "_";
      in.type = n.type;
      c.nodes[i] = in;
      if (try_candidate(c)) progress = true;
    }
  }
  return best;
}

std::string MinimizeFailure(const Program& p, uint64_t rotation,
                            const std::vector<std::string>& targets, std::string* report) {
  CheckResult first = CheckProgramInChild(p, rotation, targets);
  Program start = p;
  if (first.failed && !first.build_error && first.valuation < p.valuations.size() &&
      first.report.rfind("CRASH", 0) != 0) {
    start.valuations = {p.valuations[first.valuation]};
    if (!CheckProgramInChild(start, rotation, targets).failed) start = p;
  }
  auto still = [&](const Program& c) {
    CheckResult r = CheckProgramInChild(c, rotation, targets);
    return r.failed && !r.build_error;
  };
  Program m = Minimize(start, still);
  CheckResult r = CheckProgramInChild(m, rotation, targets);
  *report = r.report;
  return "# minimized failure (target " + targets[rotation % targets.size()] + ")\n" + ToText(m);
}

namespace {
char g_context[1 << 16];
size_t g_context_len = 0;

void CrashHandler(int sig) {
  const int out = g_real_stderr >= 0 ? g_real_stderr : 2;
  ssize_t ignored = 0;
  if (g_watch_fd >= 0) {  // what the library (or a sanitizer) said since the last drain
    char b[4096];
    ssize_t n;
    while ((n = pread(g_watch_fd, b, sizeof b, g_watch_off)) > 0) {
      ignored = write(out, b, static_cast<size_t>(n));
      g_watch_off += n;
    }
  }
  const char head[] = "\n==== differential: crash while checking this program:\n";
  ignored = write(out, head, sizeof head - 1);
  ignored = write(out, g_context, g_context_len);
  (void)ignored;
  signal(sig, SIG_DFL);
  raise(sig);
}

void DeathCallback() {  // a sanitizer's report ends the process without a signal
  const int out = g_real_stderr >= 0 ? g_real_stderr : 2;
  const char head[] = "\n==== differential: sanitizer error while checking this program:\n";
  ssize_t ignored = write(out, head, sizeof head - 1);
  ignored = write(out, g_context, g_context_len);
  (void)ignored;
}
}  // namespace

}  // namespace shpdiff

// The sanitizers' runtime, when linked in (weak: absent in the default build).
extern "C" void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

namespace shpdiff {

void InstallCrashReporter() {
  for (int s : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) signal(s, CrashHandler);
  if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(DeathCallback);
}

void SetCrashContext(const std::string& text) {
  g_context_len = std::min(text.size(), sizeof g_context);
  std::memcpy(g_context, text.data(), g_context_len);
}

}  // namespace shpdiff
