// shapepoly: command-line tool over the public C API.
//
//   shapepoly inspect FILE.shpoly
//       prints the program's listing (signature with symbolic shapes, variables,
//       constraints, assertions, guards with their messages and origins, operations; each
//       variant's listing for a multi-variant program), then, for a program with guards or
//       several variants, the dispatch: which guards each variant runs under and whether
//       they cover every shape the constraints allow (else a counterexample).
//   shapepoly check FILE.shpoly --shape NAME=D0,D1,... [--shape ...]
//       tells whether those input shapes are accepted; if so prints the variant that would
//       run (multi-variant programs), the variable values and the output shapes, otherwise
//       the exact error (SHP_GUARD_FAILED: the failed guard, or each variant's first failed
//       guard). A dimension input (which gives a dimension variable) takes its value:
//       --shape k=5. A scalar input: --shape s=
//       An input with a default (a parameter, grad's cotangent) may be left out.
//   shapepoly run FILE.shpoly [--input NAME=FILE.npy ...] --output-dir DIR
//       runs the program on .npy inputs (little-endian f4/f8/i4/i8/b1, C order; a dimension
//       input is a 0-d int64 array), bound by name, and writes DIR/<output name>.npy for every
//       output (DIR is created with its parents, after a successful run). An input with a
//       default may be left out (the default is used) or given, e.g. new weights:
//       --input w1=w1.npy. A multi-variant program says which variant ran.
//   shapepoly inspect --cost FILE.shpoly
//       prints each cost formula (FLOPs, bytes accessed, peak bytes, parameter bytes) with its
//       worst case under the constraints, or why it is unbounded.
//   shapepoly check ... --cost
//       also prints the four costs for those shapes.
//   shapepoly graph FILE.shpoly [-o OUT.dot|OUT.svg]
//       draws the program (Graphviz DOT; SVG through `dot -Tsvg` when Graphviz is installed,
//       else the DOT text next to it).
//   shapepoly jvp FILE.shpoly --wrt X[,X...] -o OUT.shpoly
//   shapepoly vjp FILE.shpoly --of Y[,Y...] --wrt X[,X...] -o OUT.shpoly
//   shapepoly grad FILE.shpoly --of Y --wrt X[,X...] -o OUT.shpoly
//       writes the derived program (shp_program_jvp / _vjp / _grad): inputs X.tangent (jvp) or
//       Y.cotangent (vjp; grad's has the default 1), outputs Y.tangent (jvp) or X.grad.
//
//   shapepoly help [COMMAND] | COMMAND --help | -h | --version
//       usage or one command's help (its output format) on stdout; the library version, ABI
//       version and .shpoly schema version.
//
// Shapes print as the listing writes them: dtype[d0, d1], concrete or symbolic (f32[8, 784],
// f32[batch, 784]; f32[] a scalar). File errors name the path and the OS reason.
// Exit status: 0 accepted / printed / written, 1 rejected or the file is invalid, 2 usage
// error.
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iterator>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <sys/stat.h>
#include <sys/types.h>

#include "shapepoly/shapepoly.h"

namespace {

const char kUsage[] =
    "usage: shapepoly inspect [--cost] FILE.shpoly\n"
    "       shapepoly check FILE.shpoly --shape NAME=D0,D1,... [--shape ...] [--cost]\n"
    "       shapepoly graph FILE.shpoly [-o OUT.dot|OUT.svg]\n"
    "       shapepoly run FILE.shpoly [--input NAME=FILE.npy ...] --output-dir DIR\n"
    "       shapepoly jvp FILE.shpoly --wrt X[,X...] -o OUT.shpoly\n"
    "       shapepoly vjp FILE.shpoly --of Y[,Y...] --wrt X[,X...] -o OUT.shpoly\n"
    "       shapepoly grad FILE.shpoly --of Y --wrt X[,X...] -o OUT.shpoly\n"
    "       shapepoly vmap FILE.shpoly --in-axes X=A[,X=A...] [--out-axes Y=A[,...]]\n"
    "                      [--name B] -o OUT.shpoly\n"
    "       shapepoly help [COMMAND] | COMMAND --help | --version\n"
    "\n"
    "  inspect  the program's listing: signature, variables, constraints, assertions, input\n"
    "           roles (parameter, tangent, cotangent; \"with a default\"), output roles,\n"
    "           guards and variants, and the dispatch (which variant runs where; coverage)\n"
    "           --cost: FLOPs, bytes accessed, peak and parameter bytes as formulas of the\n"
    "           variables, each with its worst case under the constraints\n"
    "  check    whether input shapes are accepted and which variant would run; inputs with\n"
    "           a default may be left out; --cost: the four costs for those shapes\n"
    "  graph    the program as a Graphviz graph: DOT on stdout or in OUT.dot, SVG in OUT.svg\n"
    "  run      runs on .npy inputs bound by name; inputs with a default may be left out\n"
    "           (the default is used) or given to replace it, e.g. --input w1=w1.npy\n"
    "  jvp      forward mode: adds inputs X.tangent and outputs Y.tangent\n"
    "  vjp      reverse mode: adds inputs Y.cotangent and outputs X.grad\n"
    "  grad     the gradient of the scalar output Y: outputs Y, X.grad; Y.cotangent has the\n"
    "           default 1\n"
    "  vmap     the program for a batch of examples: input X batched along axis A (the\n"
    "           others shared), the batch size a new variable (vmap0 or --name)\n"
    "\n"
    "Shapes are written dtype[d0, d1, ...], e.g. f32[batch, 784] or f32[8, 784]; f32[] is a\n"
    "scalar. Exit status: 0 ok, 1 rejected or failed, 2 usage error.\n";

// Per-command help: the arguments and what the command prints.
struct CommandHelp {
  const char* name;
  const char* text;
};

const CommandHelp kCommandHelp[] = {
    {"inspect",
     "usage: shapepoly inspect [--cost] FILE.shpoly\n"
     "\n"
     "Prints the program's listing on stdout:\n"
     "  program(NAME: DTYPE[DIMS], ...) -> (NAME: DTYPE[DIMS], ...)   the signature\n"
     "  variables: / constraints: / assertions: / guards:             one per line\n"
     "  %N = OP(%A, ...) ... : DTYPE[DIMS]                            one line per operation\n"
     "Dims are symbolic (batch, 2*n + 1). For a program with guards or several variants, a\n"
     "'dispatch:' section follows: each variant's guards and messages and whether they cover\n"
     "every shape the constraints allow (else a counterexample).\n"
     "\n"
     "With --cost, prints instead one line per cost (shp_program_cost):\n"
     "  flops           FORMULA; at most N (H) for VAR <= MAX, ...\n"
     "  bytes accessed  FORMULA bytes; at most N bytes (H) for ...\n"
     "  peak bytes      FORMULA bytes; ...        the outputs plus the runtime's arena\n"
     "  parameter bytes FORMULA bytes; ...\n"
     "H is N in readable units (kB, MB, GB; kFLOP, MFLOP, GFLOP). A cost without a worst case\n"
     "says '; no worst case (unbounded)', and a last line 'unbounded: ...' names the variables\n"
     "that make it so and how to bound them.\n"},
    {"check",
     "usage: shapepoly check FILE.shpoly --shape NAME=D0,D1,... [--shape ...] [--cost]\n"
     "\n"
     "Tells whether those input shapes are accepted, without running. A dimension input takes\n"
     "its value (--shape k=5), a scalar input nothing (--shape s=); an input with a default may\n"
     "be left out. Prints on stdout:\n"
     "  accepted | rejected\n"
     "  variant: V of N (GUARDS)          multi-variant programs: the variant that would run\n"
     "  variables:\n    NAME = VALUE\n"
     "  defaults used:\n    NAME: DTYPE[DIMS]\n"
     "  outputs:\n    NAME: DTYPE[DIMS] [(tangent)|(grad)]\n"
     "  cost:                             with --cost (shp_runtime_cost)\n"
     "    flops: N (H) / bytes accessed: N (H) / peak bytes: N (H) / parameter bytes: N (H)\n"
     "A rejection prints the error code and message on stderr and exits 1.\n"},
    {"graph",
     "usage: shapepoly graph FILE.shpoly [-o OUT.dot|OUT.svg]\n"
     "\n"
     "Draws the program (shp_program_to_dot): operations in topological order with their\n"
     "attributes, edges labelled with dtypes and symbolic shapes, inputs with their roles,\n"
     "outputs with their names, constants folded into their consumers' labels, and a legend\n"
     "with the constraints, assertions, guards and variants. Without -o the DOT text goes to\n"
     "stdout. OUT.svg is rendered with Graphviz's `dot -Tsvg`; when `dot` is missing the DOT\n"
     "text is written to OUT.dot instead and a note says so. OUT's folder is created if\n"
     "missing. Prints 'wrote OUT'.\n"},
    {"run",
     "usage: shapepoly run FILE.shpoly [--input NAME=FILE.npy ...] --output-dir DIR\n"
     "\n"
     "Runs the program on .npy inputs (little-endian f4/f8/i4/i8/b1, C order; a dimension\n"
     "input is a 0-d int64 array) bound by name. An input with a default may be left out or\n"
     "given to replace it. DIR is created if missing (with its parents). Writes DIR/NAME.npy\n"
     "for every output and prints on stdout:\n"
     "  ran variant V of N (GUARDS)       multi-variant programs\n"
     "  NAME: DIR/NAME.npy [(tangent)|(grad)]\n"},
    {"jvp",
     "usage: shapepoly jvp FILE.shpoly --wrt X[,X...] -o OUT.shpoly\n"
     "\n"
     "Writes the forward-mode program: inputs X.tangent added, outputs Y.tangent for every\n"
     "float output. Prints 'wrote OUT (N bytes)' and the derived signature.\n"},
    {"vjp",
     "usage: shapepoly vjp FILE.shpoly --of Y[,Y...] --wrt X[,X...] -o OUT.shpoly\n"
     "\n"
     "Writes the reverse-mode program: inputs Y.cotangent added, outputs X.grad. Prints\n"
     "'wrote OUT (N bytes)' and the derived signature.\n"},
    {"grad",
     "usage: shapepoly grad FILE.shpoly --of Y --wrt X[,X...] -o OUT.shpoly\n"
     "\n"
     "Writes the gradient program of the scalar output Y: outputs Y and X.grad; Y.cotangent\n"
     "has the default 1. Prints 'wrote OUT (N bytes)' and the derived signature.\n"},
    {"vmap",
     "usage: shapepoly vmap FILE.shpoly --in-axes X=A[,X=A...] [--out-axes Y=A[,Y=A...]]\n"
     "                      [--name B] -o OUT.shpoly\n"
     "\n"
     "Writes the batched program (shp_program_vmap): input X takes the batch at axis A of its\n"
     "batched shape (0 to its rank); inputs not named are shared by every example (-1). Output\n"
     "Y gets the batch at axis A (default 0; -1: an output that depends on no batched input).\n"
     "The batch size is the new variable B (default vmap0, or vmap1, ... when taken). Prints\n"
     "'wrote OUT (N bytes)' and the batched signature.\n"},
};

// Usage on stderr for a usage error (exit 2).
int Usage() {
  std::fputs(kUsage, stderr);
  return 2;
}

// Asked-for help goes to stdout and succeeds; an unknown command is a usage error.
int Help(const std::string& cmd) {
  if (cmd.empty()) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  for (const CommandHelp& h : kCommandHelp) {
    if (cmd == h.name) {
      std::fputs(h.text, stdout);
      return 0;
    }
  }
  std::fprintf(stderr, "shapepoly: unknown command '%s'\n", cmd.c_str());
  return Usage();
}

int Version() {
  std::printf("shapepoly %s (ABI version %d, .shpoly schema version %d)\n", shp_version_string(),
              static_cast<int>(shp_abi_version()), static_cast<int>(shp_program_schema_version()));
  return 0;
}

// Usage error with a specific reason first.
int UsageError(const std::string& why) {
  std::fprintf(stderr, "shapepoly: %s\n", why.c_str());
  return Usage();
}

// By shp_dtype_t.
constexpr int kNumDtypes = 13;
const char* const kDtypes[kNumDtypes] = {"f32", "f64", "i32", "i64", "bool", "f16", "bf16",
                                         "i8",  "u8",  "i16", "u16", "u32",  "u64"};

const char* DtypeName(int dt) { return dt >= 0 && dt < kNumDtypes ? kDtypes[dt] : "?"; }

// " (tangent)" / " (grad)" after a derived output, as the program listing marks it.
std::string OutputRoleSuffix(const shp_program_t* p, size_t i) {
  switch (shp_program_output_role(p, i)) {
    case SHP_OUTPUT_TANGENT:
      return " (tangent)";
    case SHP_OUTPUT_GRAD:
      return " (grad)";
    default:
      return "";
  }
}

// Prints the error (code and message), destroys it, returns 1.
int Fail(shp_error_t* e, const char* what) {
  std::fprintf(stderr, "%s: %s\n  %s\n", what, shp_code_string(shp_error_code(e)),
               shp_error_message(e));
  shp_error_destroy(e);
  return 1;
}

// Reads a whole file; false if it cannot be opened or read, with the OS reason in `why` (a
// directory opens but fails to read: EISDIR).
bool ReadAll(const std::string& path, std::string* bytes, std::string* why) {
  errno = 0;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    *why = std::strerror(errno);
    return false;
  }
  char chunk[1 << 16];
  size_t n = 0;
  bytes->clear();
  while ((n = std::fread(chunk, 1, sizeof(chunk), f)) > 0) bytes->append(chunk, n);
  const bool ok = !std::ferror(f);
  if (!ok) *why = std::strerror(errno ? errno : EIO);
  std::fclose(f);
  return ok;
}

// Writes `size` bytes to a new file `path`; false with the OS reason in `why`.
bool WriteAll(const std::string& path, const void* data, size_t size, std::string* why) {
  errno = 0;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) {
    *why = std::strerror(errno);
    return false;
  }
  bool ok = std::fwrite(data, 1, size, f) == size;
  if (!ok) *why = std::strerror(errno ? errno : EIO);
  if (std::fclose(f) != 0 && ok) {
    *why = std::strerror(errno);
    ok = false;
  }
  return ok;
}

// mkdir -p: creates `dir` and its missing parents; false with the failing prefix and the OS
// reason.
bool MakeDirs(const std::string& dir, std::string* failed, std::string* why) {
  for (size_t at = 1; at <= dir.size(); ++at) {
    if (at < dir.size() && dir[at] != '/') continue;
    const std::string prefix = dir.substr(0, at);
    struct stat st;
    if (::stat(prefix.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode)) continue;
      errno = ENOTDIR;
    } else if (errno == ENOENT && (::mkdir(prefix.c_str(), 0777) == 0 || errno == EEXIST)) {
      continue;
    }
    *failed = prefix;
    *why = std::strerror(errno);
    return false;
  }
  return true;
}

shp_program_t* LoadFile(const char* path, int* status) {
  std::string bytes, why;
  if (!ReadAll(path, &bytes, &why)) {
    std::fprintf(stderr, "shapepoly: cannot open '%s': %s\n", path, why.c_str());
    *status = 1;
    return nullptr;
  }
  shp_program_t* p = nullptr;
  shp_error_t* e = shp_program_load(bytes.data(), bytes.size(), &p);
  if (e) {
    *status = Fail(e, (std::string("shapepoly: cannot load '") + path + "'").c_str());
    return nullptr;
  }
  return p;
}

bool ParseDims(const std::string& text, std::vector<int64_t>* out) {
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) return false;
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(item.c_str(), &end, 10);
    if (errno || *end != '\0') return false;
    out->push_back(static_cast<int64_t>(v));
  }
  return true;
}

// A concrete shape as the listing writes symbolic ones: "[3, 4]", "[5]", "[]" (after a dtype).
std::string Join(const int64_t* d, size_t n) {
  std::string s = "[";
  for (size_t i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

// A shape as a Python tuple, for .npy headers: "(3, 4)", "(5,)", "()".
std::string NpyShape(const int64_t* d, size_t n) {
  std::string s = "(";
  for (size_t i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + (n == 1 ? ",)" : ")");
}

// The guards of variant `v`, joined by " and " ("no guards" when it has none).
std::string VariantGuards(const shp_program_t* p, size_t v) {
  std::string s;
  for (size_t i = 0; i < shp_program_variant_guard_count(p, v); ++i) {
    s += (i ? " and " : "") + std::string(shp_program_variant_guard_text(p, v, i));
  }
  return s.empty() ? "no guards" : s;
}

// After the listing, for a program with guards or several variants: where each variant runs
// and whether the guards cover every valuation the constraints allow.
int PrintDispatch(const shp_program_t* p) {
  const size_t nv = shp_program_variant_count(p);
  if (nv <= 1 && shp_program_guard_count(p) == 0) return 0;
  std::printf("dispatch:\n");
  if (nv == 1) {
    std::printf("  runs where %s holds; other shapes fail with SHP_GUARD_FAILED\n",
                VariantGuards(p, 0).c_str());
  } else {
    std::printf("  %zu variants; a run takes the first whose guards all hold\n", nv);
    for (size_t v = 0; v < nv; ++v) {
      std::printf("  variant %zu: %s", v, VariantGuards(p, v).c_str());
      for (size_t i = 0; i < shp_program_variant_guard_count(p, v); ++i) {
        const char* m = shp_program_variant_guard_message(p, v, i);
        if (m && *m) std::printf("  \"%s\"", m);
      }
      std::printf("\n");
    }
  }
  // A single variant's guards are where it runs: the same question, worded for one program.
  const char* label = nv > 1 ? "exhaustive" : "guards cover every allowed shape";
  switch (shp_program_variants_exhaustive(p)) {
    case SHP_TRUE:
      std::printf("  %s: yes (every shape the constraints allow has a variant)\n", label);
      break;
    case SHP_FALSE: {
      size_t len = 0;
      shp_error_t* e = shp_program_variants_counterexample(p, nullptr, 0, &len);
      if (e) return Fail(e, "shapepoly");
      std::string cex(len + 1, '\0');
      e = shp_program_variants_counterexample(p, &cex[0], cex.size(), &len);
      if (e) return Fail(e, "shapepoly");
      cex.resize(len);
      std::printf("  %s: no: %s\n", label, cex.c_str());
      break;
    }
    default:
      std::printf(
          "  %s: unknown (neither proven nor refuted; a shape that no variant covers fails "
          "with SHP_GUARD_FAILED)\n",
          label);
  }
  return 0;
}

// ---- Cost ----

struct CostRow {
  shp_cost_kind_t kind;
  const char* name;
  bool bytes;  // else FLOPs
};
const CostRow kCosts[] = {{SHP_COST_FLOPS, "flops", false},
                          {SHP_COST_BYTES_ACCESSED, "bytes accessed", true},
                          {SHP_COST_PEAK_BYTES, "peak bytes", true},
                          {SHP_COST_PARAMETER_BYTES, "parameter bytes", true}};

// 13893632 bytes -> "13.9 MB"; 2206244864 FLOPs -> "2.21 GFLOP" (decimal units).
std::string Readable(int64_t v, bool bytes) {
  const char* units[] = {"", "k", "M", "G", "T", "P", "E"};
  double x = static_cast<double>(v);
  size_t u = 0;
  while (x >= 999.5 && u + 1 < sizeof units / sizeof *units) {
    x /= 1000;
    ++u;
  }
  char buf[64];
  if (u == 0) {
    std::snprintf(buf, sizeof buf, "%lld %s", static_cast<long long>(v), bytes ? "B" : "FLOP");
  } else {
    std::snprintf(buf, sizeof buf, "%.3g %s%s", x, units[u], bytes ? "B" : "FLOP");
  }
  return buf;
}

// A size query, then the text (the header's snprintf convention).
template <class F>
shp_error_t* GetString(F f, std::string* out) {
  size_t len = 0;
  if (shp_error_t* e = f(nullptr, 0, &len)) return e;
  out->assign(len + 1, '\0');
  if (shp_error_t* e = f(&(*out)[0], out->size(), &len)) return e;
  out->resize(len);
  return nullptr;
}

// "batch <= 4096, n <= 100": the variables' upper bounds under the constraints.
std::string UpperBounds(const shp_program_t* p) {
  std::string text;
  for (size_t i = 0; i < shp_program_variable_count(p); ++i) {
    int64_t lo = 0, hi = 0;
    shp_error_t* e = shp_program_variable_bounds(p, i, &lo, &hi);
    if (e) {
      shp_error_destroy(e);
      continue;
    }
    if (hi == INT64_MAX) continue;
    text += (text.empty() ? "" : ", ") + std::string(shp_program_variable_name(p, i)) +
            " <= " + std::to_string(hi);
  }
  return text;
}

int InspectCost(const char* path) {
  int status = 0;
  shp_program_t* p = LoadFile(path, &status);
  if (!p) return status;
  const std::string bounds = UpperBounds(p);
  std::vector<std::string> reasons;  // why worst cases are unbounded, each said once
  for (const CostRow& c : kCosts) {
    std::string formula, reason;
    int64_t lo = 0, hi = 0;
    shp_error_t* e = GetString(
        [&](char* b, size_t cap, size_t* len) { return shp_program_cost(p, c.kind, b, cap, len); },
        &formula);
    if (!e) e = shp_program_cost_bounds(p, c.kind, &lo, &hi);
    if (!e) {
      e = GetString(
          [&](char* b, size_t cap, size_t* len) {
            return shp_program_cost_unbounded_reason(p, c.kind, b, cap, len);
          },
          &reason);
    }
    if (e) {
      int rc = Fail(e, "shapepoly inspect --cost");
      shp_program_destroy(p);
      return rc;
    }
    std::string line = formula + (c.bytes ? " bytes" : "");
    if (hi == INT64_MAX) {
      line += "; no worst case (unbounded)";
      if (std::find(reasons.begin(), reasons.end(), reason) == reasons.end())
        reasons.push_back(reason);
    } else if (lo == hi) {
      line += " (" + Readable(hi, c.bytes) + ")";
    } else {
      line += "; at most " + std::to_string(hi) + " (" + Readable(hi, c.bytes) + ")";
      if (!bounds.empty()) line += " for " + bounds;
    }
    std::printf("%-16s %s\n", c.name, line.c_str());
  }
  for (const std::string& r : reasons) std::printf("unbounded: %s\n", r.c_str());
  shp_program_destroy(p);
  return 0;
}

// The four costs for one binding of the inputs (check --cost).
int PrintShapeCosts(shp_program_t* p, const std::vector<const char*>& names,
                    const std::vector<const int64_t*>& shapes, const std::vector<size_t>& ranks) {
  shp_runtime_t* r = nullptr;
  shp_error_t* e = shp_runtime_create(p, nullptr, &r);
  if (e) return Fail(e, "shapepoly check --cost");
  std::printf("cost:\n");
  for (const CostRow& c : kCosts) {
    int64_t v = 0;
    e = shp_runtime_cost(r, c.kind, names.data(), nullptr, shapes.data(), ranks.data(),
                         names.size(), &v);
    if (e) {
      shp_runtime_destroy(r);
      return Fail(e, "shapepoly check --cost");
    }
    std::printf("  %s: %lld (%s)\n", c.name, static_cast<long long>(v),
                Readable(v, c.bytes).c_str());
  }
  shp_runtime_destroy(r);
  return 0;
}

// ---- Graph ----

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// 'text' for sh, with every ' written as '\''.
std::string ShellQuote(const std::string& text) {
  std::string q = "'";
  for (char ch : text) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

bool HaveDot() { return std::system("command -v dot >/dev/null 2>&1") == 0; }

int Graph(const char* path, const std::string& out) {
  int status = 0;
  shp_program_t* p = LoadFile(path, &status);
  if (!p) return status;
  std::string dot;
  shp_error_t* e = GetString(
      [&](char* b, size_t cap, size_t* len) { return shp_program_to_dot(p, b, cap, len); }, &dot);
  shp_program_destroy(p);
  if (e) return Fail(e, "shapepoly graph");
  if (out.empty()) {
    std::fputs(dot.c_str(), stdout);
    return 0;
  }
  std::string why;
  const size_t slash = out.rfind('/');
  std::string failed;
  if (slash != std::string::npos && slash > 0 && !MakeDirs(out.substr(0, slash), &failed, &why)) {
    std::fprintf(stderr, "shapepoly: cannot create '%s': %s\n", failed.c_str(), why.c_str());
    return 1;
  }
  if (EndsWith(out, ".svg") && HaveDot()) {
    // dot reads the graph from a temporary file next to the output (no shell quoting of DOT).
    const std::string tmp = out + ".dot.tmp";
    if (!WriteAll(tmp, dot.data(), dot.size(), &why)) {
      std::fprintf(stderr, "shapepoly: cannot write '%s': %s\n", tmp.c_str(), why.c_str());
      return 1;
    }
    const std::string cmd = "dot -Tsvg -o " + ShellQuote(out) + " " + ShellQuote(tmp);
    int rc = std::system(cmd.c_str());
    std::remove(tmp.c_str());
    if (rc != 0) {
      std::fprintf(stderr, "shapepoly: dot -Tsvg failed (status %d) writing '%s'\n", rc,
                   out.c_str());
      return 1;
    }
    std::printf("wrote %s\n", out.c_str());
    return 0;
  }
  std::string target = out;
  if (EndsWith(out, ".svg")) {
    target = out.substr(0, out.size() - 4) + ".dot";
    std::fprintf(stderr,
                 "shapepoly: Graphviz's `dot` is not installed (apt-get install graphviz): "
                 "writing the DOT text to '%s' instead of '%s'\n",
                 target.c_str(), out.c_str());
  }
  if (!WriteAll(target, dot.data(), dot.size(), &why)) {
    std::fprintf(stderr, "shapepoly: cannot write '%s': %s\n", target.c_str(), why.c_str());
    return 1;
  }
  std::printf("wrote %s\n", target.c_str());
  return 0;
}

int Inspect(const char* path) {
  int status = 0;
  shp_program_t* p = LoadFile(path, &status);
  if (!p) return status;
  size_t len = 0;
  shp_error_t* e = shp_program_to_text(p, nullptr, 0, &len);
  if (e) return Fail(e, "shapepoly");
  std::string text(len + 1, '\0');
  e = shp_program_to_text(p, &text[0], text.size(), &len);
  if (e) return Fail(e, "shapepoly");
  text.resize(len);
  std::fputs(text.c_str(), stdout);
  int rc = PrintDispatch(p);
  shp_program_destroy(p);
  return rc;
}

int Check(const char* path, const std::vector<std::string>& specs, bool cost) {
  int status = 0;
  shp_program_t* p = LoadFile(path, &status);
  if (!p) return status;
  std::vector<std::string> names;
  std::vector<std::vector<int64_t>> dims;
  for (const std::string& s : specs) {
    size_t eq = s.find('=');
    std::vector<int64_t> d;
    if (eq == std::string::npos || eq == 0 || !ParseDims(s.substr(eq + 1), &d)) {
      std::fprintf(stderr, "shapepoly: bad --shape '%s' (expected NAME=D0,D1,...)\n", s.c_str());
      shp_program_destroy(p);
      return 2;
    }
    names.push_back(s.substr(0, eq));
    dims.push_back(d);
  }
  // Inputs with a default that are not given take their default's (constant) shape, as a run
  // would use the default; a fill default (a jvp's default tangent) is left out, as a run may.
  std::vector<std::string> defaulted;
  for (size_t i = 0; i < shp_program_input_count(p); ++i) {
    const char* name = shp_program_input_name(p, i);
    if (!shp_program_input_has_default(p, i) ||
        std::find(names.begin(), names.end(), name) != names.end()) {
      continue;
    }
    double fill = 0;
    if (shp_error_t* no_fill = shp_program_input_default_fill(p, i, &fill)) {
      shp_error_destroy(no_fill);  // a default array
    } else {
      char text[64];
      std::snprintf(text, sizeof text, "%.17g", fill);
      defaulted.push_back(std::string(name) + ": every element " + text);
      continue;
    }
    shp_array_t* a = nullptr;
    shp_error_t* e = shp_program_input_default(p, i, &a);
    if (e) {
      int rc = Fail(e, "shapepoly check");
      shp_program_destroy(p);
      return rc;
    }
    names.push_back(name);
    dims.emplace_back(shp_array_shape(a), shp_array_shape(a) + shp_array_rank(a));
    defaulted.push_back(std::string(name) + ": " + DtypeName(shp_array_dtype(a)) +
                        Join(dims.back().data(), dims.back().size()));
    shp_array_destroy(a);
  }
  std::vector<const char*> name_ptrs;
  std::vector<const int64_t*> shape_ptrs;
  std::vector<size_t> ranks;
  for (size_t k = 0; k < names.size(); ++k) {
    bool is_dim = false;
    for (size_t i = 0; i < shp_program_input_count(p); ++i) {
      if (names[k] == shp_program_input_name(p, i))
        is_dim = shp_program_input_role(p, i) == SHP_INPUT_DIM;
    }
    if (is_dim && dims[k].size() != 1) {
      std::fprintf(
          stderr,
          "shapepoly: input '%s' gives a dimension variable: pass one value (--shape %s=N)\n",
          names[k].c_str(), names[k].c_str());
      shp_program_destroy(p);
      return 2;
    }
    name_ptrs.push_back(names[k].c_str());
    shape_ptrs.push_back(dims[k].data());
    ranks.push_back(is_dim ? 0 : dims[k].size());
  }
  shp_bindings_t* b = nullptr;
  shp_error_t* e = shp_program_check_shapes(p, name_ptrs.data(), shape_ptrs.data(), ranks.data(),
                                            names.size(), &b);
  if (e) {
    std::printf("rejected\n");
    int rc = Fail(e, "shapepoly check");
    shp_program_destroy(p);
    return rc;
  }
  std::printf("accepted\n");
  if (shp_program_variant_count(p) > 1) {
    const int64_t v = shp_bindings_variant(b);
    std::printf("variant: %lld of %zu (%s)\n", static_cast<long long>(v),
                shp_program_variant_count(p), VariantGuards(p, static_cast<size_t>(v)).c_str());
  }
  if (shp_bindings_count(b)) std::printf("variables:\n");
  for (size_t i = 0; i < shp_bindings_count(b); ++i) {
    std::printf("  %s = %lld\n", shp_bindings_name(b, i),
                static_cast<long long>(shp_bindings_value(b, i)));
  }
  if (!defaulted.empty()) std::printf("defaults used:\n");
  for (const std::string& d : defaulted) std::printf("  %s\n", d.c_str());
  std::printf("outputs:\n");
  for (size_t i = 0; i < shp_program_output_count(p); ++i) {
    int64_t d[64];
    size_t rank = 0;
    e = shp_program_output_shape(p, i, b, d, 64, &rank);
    if (e) {
      int rc = Fail(e, "shapepoly check");
      shp_bindings_destroy(b);
      shp_program_destroy(p);
      return rc;
    }
    std::printf("  %s: %s%s%s\n", shp_program_output_name(p, i),
                DtypeName(shp_program_output_dtype(p, i)), Join(d, rank < 64 ? rank : 64).c_str(),
                OutputRoleSuffix(p, i).c_str());
  }
  shp_bindings_destroy(b);
  int rc = cost ? PrintShapeCosts(p, name_ptrs, shape_ptrs, ranks) : 0;
  shp_program_destroy(p);
  return rc;
}

// ---- .npy files (NumPy format versions 1-3, little-endian, C order) ----

// By shp_dtype_t; bf16 is what numpy writes for ml_dtypes.bfloat16 (a 2-byte void).
const char* kNpyDescr[kNumDtypes] = {"<f4", "<f8", "<i4", "<i8", "|b1", "<f2", "<V2",
                                     "|i1", "|u1", "<i2", "<u2", "<u4", "<u8"};
const uint64_t kNpyItemSize[kNumDtypes] = {4, 8, 4, 8, 1, 2, 2, 1, 1, 2, 2, 4, 8};

// Reads an .npy file into a new owned array; on failure prints why and returns nullptr.
shp_array_t* ReadNpy(const std::string& path) {
  std::string bytes;
  auto bad = [&](const std::string& why) -> shp_array_t* {
    std::fprintf(stderr, "shapepoly: '%s': %s\n", path.c_str(), why.c_str());
    return nullptr;
  };
  std::string why;
  if (!ReadAll(path, &bytes, &why)) return bad("cannot read: " + why);
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) return bad("not an .npy file");
  int major = static_cast<unsigned char>(bytes[6]);
  size_t hlen = 0, start = 0;
  if (major == 1) {
    hlen = static_cast<unsigned char>(bytes[8]) |
           static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8;
    start = 10;
  } else if ((major == 2 || major == 3) && bytes.size() >= 12) {
    for (int k = 0; k < 4; ++k)
      hlen |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + k])) << (8 * k);
    start = 12;
  } else {
    return bad("unsupported .npy version");
  }
  if (start + hlen > bytes.size()) return bad("truncated header");
  std::string header = bytes.substr(start, hlen);
  auto field = [&](const char* key) -> std::string {
    size_t at = header.find(std::string("'") + key + "'");
    if (at == std::string::npos) return "";
    at = header.find(':', at);
    return at == std::string::npos ? "" : header.substr(at + 1);
  };
  std::string descr = field("descr"), fortran = field("fortran_order"), shape = field("shape");
  int dtype = -1;
  for (int d = 0; d < kNumDtypes; ++d) {
    size_t q = descr.find('\'');
    if (q != std::string::npos && descr.compare(q + 1, 3, kNpyDescr[d]) == 0) dtype = d;
  }
  if (dtype < 0) {
    return bad(
        "unsupported dtype (float16/32/64, bfloat16, int8/16/32/64, uint8/16/32/64 or "
        "bool, little-endian)");
  }
  if (fortran.find("True") < fortran.find(',')) return bad("Fortran order is not supported");
  size_t open = shape.find('('), close = shape.find(')');
  if (open == std::string::npos || close == std::string::npos) return bad("malformed shape");
  std::vector<int64_t> dims;
  std::stringstream ss(shape.substr(open + 1, close - open - 1));
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.find_first_not_of(" ") == std::string::npos) continue;
    char* end = nullptr;
    errno = 0;
    dims.push_back(std::strtoll(item.c_str(), &end, 10));
    if (errno || end == item.c_str() ||
        std::string(end).find_first_not_of(" ") != std::string::npos) {
      return bad("malformed shape");
    }
  }
  // The header must not make us allocate (and zero) more than the file holds: compare with the
  // data length first. Negative or overflowing shapes are left to shp_array_create's errors.
  size_t data_at = start + hlen;
  uint64_t need = kNpyItemSize[dtype];
  bool sized = true;
  for (int64_t d : dims) {
    sized = sized && d >= 0 && !__builtin_mul_overflow(need, static_cast<uint64_t>(d), &need);
  }
  if (sized && need > bytes.size() - data_at) return bad("truncated data");
  shp_array_t* a = nullptr;
  shp_error_t* e = shp_array_create(static_cast<shp_dtype_t>(dtype), dims.data(), dims.size(), &a);
  if (e) {
    Fail(e, ("shapepoly: '" + path + "'").c_str());
    return nullptr;
  }
  if (bytes.size() - data_at < shp_array_nbytes(a)) {
    shp_array_destroy(a);
    return bad("truncated data");
  }
  std::copy(bytes.begin() + static_cast<std::ptrdiff_t>(data_at),
            bytes.begin() + static_cast<std::ptrdiff_t>(data_at + shp_array_nbytes(a)),
            static_cast<char*>(shp_array_data(a)));
  return a;
}

bool WriteNpy(const std::string& path, const shp_array_t* a, std::string* why) {
  std::string header =
      std::string("{'descr': '") + kNpyDescr[shp_array_dtype(a)] +
      "', 'fortran_order': False, 'shape': " + NpyShape(shp_array_shape(a), shp_array_rank(a)) +
      ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string bytes("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  bytes += header;
  bytes.append(static_cast<const char*>(shp_array_data(a)), shp_array_nbytes(a));
  return WriteAll(path, bytes.data(), bytes.size(), why);
}

int Run(const char* path, const std::vector<std::string>& inputs, const std::string& out_dir) {
  int status = 0;
  shp_program_t* p = LoadFile(path, &status);
  if (!p) return status;
  std::vector<std::string> names;
  std::vector<shp_array_t*> arrays;
  auto cleanup = [&] {
    for (shp_array_t* a : arrays) shp_array_destroy(a);
    shp_program_destroy(p);
  };
  for (const std::string& spec : inputs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos) {
      cleanup();
      return Usage();
    }
    names.push_back(spec.substr(0, eq));
    shp_array_t* a = ReadNpy(spec.substr(eq + 1));
    if (!a) {
      cleanup();
      return 1;
    }
    arrays.push_back(a);
  }
  shp_runtime_t* rt = nullptr;
  shp_error_t* e = shp_runtime_create(p, nullptr, &rt);
  if (e) {
    cleanup();
    return Fail(e, "shapepoly: cannot create a runtime");
  }
  // Always by name (never positional, which a program with defaults refuses), also when
  // every input is left out to its default: the name list is then empty but not NULL.
  std::vector<const char*> cnames;
  for (const std::string& n : names) cnames.push_back(n.c_str());
  const char* none = nullptr;
  size_t n_out = shp_program_output_count(p);
  std::vector<shp_array_t*> outs(n_out, nullptr);
  e = shp_runtime_run(rt, cnames.empty() ? &none : cnames.data(), arrays.data(), arrays.size(),
                      outs.data(), n_out);
  const int64_t variant = shp_runtime_last_variant(rt);
  shp_runtime_destroy(rt);
  if (e) {
    cleanup();
    return Fail(e, "shapepoly: run failed");
  }
  // Created only after a successful run, so a failed run leaves nothing behind.
  std::string failed, why;
  if (!MakeDirs(out_dir, &failed, &why)) {
    std::fprintf(stderr, "shapepoly: cannot create '%s': %s\n", failed.c_str(), why.c_str());
    for (shp_array_t* o : outs) shp_array_destroy(o);
    cleanup();
    return 1;
  }
  if (shp_program_variant_count(p) > 1) {
    std::printf("ran variant %lld of %zu (%s)\n", static_cast<long long>(variant),
                shp_program_variant_count(p),
                VariantGuards(p, static_cast<size_t>(variant)).c_str());
  }
  for (size_t j = 0; j < n_out; ++j) {
    const bool slash = !out_dir.empty() && out_dir.back() == '/';
    std::string file = out_dir + (slash ? "" : "/") + shp_program_output_name(p, j) + ".npy";
    if (!WriteNpy(file, outs[j], &why)) {
      std::fprintf(stderr, "shapepoly: cannot write '%s': %s\n", file.c_str(), why.c_str());
      status = 1;
    } else {
      std::printf("%s: %s%s\n", shp_program_output_name(p, j), file.c_str(),
                  OutputRoleSuffix(p, j).c_str());
    }
    shp_array_destroy(outs[j]);
  }
  cleanup();
  return status;
}

// Splits "a,b" into names; false on an empty name.
bool SplitNames(const std::string& text, std::vector<std::string>* out) {
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) return false;
    out->push_back(item);
  }
  return !out->empty() && text.back() != ',';
}

int WriteDerived(const std::string& cmd, shp_program_t* d, const std::string& out_path);

// "x=0,y=1" as (name, axis) pairs; false for an empty item, a missing '=' or a bad axis.
bool SplitAxes(const std::string& text, std::vector<std::pair<std::string, int64_t>>* out) {
  std::vector<std::string> items;
  if (!SplitNames(text, &items)) return false;
  for (const std::string& item : items) {
    const size_t eq = item.find('=');
    if (eq == 0 || eq == std::string::npos || eq + 1 == item.size()) return false;
    char* end = nullptr;
    const std::string num = item.substr(eq + 1);
    errno = 0;
    const long long v = std::strtoll(num.c_str(), &end, 10);
    if (errno != 0 || *end != '\0' || v < -1 || v > 64) return false;
    out->emplace_back(item.substr(0, eq), static_cast<int64_t>(v));
  }
  return true;
}

// jvp, vjp, grad: loads FILE, derives, writes OUT and prints the derived signature.
int Derive(const std::string& cmd, const char* path, const std::vector<std::string>& wrt,
           const std::vector<std::string>& of, const std::string& out_path) {
  int status = 0;
  shp_program_t* p = LoadFile(path, &status);
  if (!p) return status;
  std::vector<const char*> cwrt, cof;
  for (const std::string& n : wrt) cwrt.push_back(n.c_str());
  for (const std::string& n : of) cof.push_back(n.c_str());
  shp_program_t* d = nullptr;
  shp_error_t* e = nullptr;
  if (cmd == "jvp") {
    e = shp_program_jvp(p, cwrt.data(), cwrt.size(), &d);
  } else if (cmd == "vjp") {
    e = shp_program_vjp(p, cof.data(), cof.size(), cwrt.data(), cwrt.size(), &d);
  } else {
    e = shp_program_grad(p, cof[0], cwrt.data(), cwrt.size(), &d);
  }
  shp_program_destroy(p);
  if (e) return Fail(e, ("shapepoly " + cmd).c_str());
  return WriteDerived(cmd, d, out_path);
}

// vmap: loads FILE, batches it (axes by name), writes OUT and prints the batched signature.
int Vmap(const char* path, const std::vector<std::pair<std::string, int64_t>>& in,
         const std::vector<std::pair<std::string, int64_t>>& out, const std::string& name,
         const std::string& out_path) {
  int status = 0;
  shp_program_t* p = LoadFile(path, &status);
  if (!p) return status;
  std::vector<int64_t> in_axes(shp_program_input_count(p), -1);
  std::vector<int64_t> out_axes(shp_program_output_count(p), 0);
  auto assign = [&](const std::vector<std::pair<std::string, int64_t>>& given, bool inputs,
                    std::vector<int64_t>* axes) {
    for (const auto& g : given) {
      bool found = false;
      std::string known;
      for (size_t i = 0; i < axes->size(); ++i) {
        const char* n = inputs ? shp_program_input_name(p, i) : shp_program_output_name(p, i);
        known += (known.empty() ? "" : ", ") + std::string(n);
        if (g.first == n) {
          (*axes)[i] = g.second;
          found = true;
        }
      }
      if (!found) {
        std::fprintf(stderr, "shapepoly vmap: --%s-axes names no %s '%s' (the %ss: %s)\n",
                     inputs ? "in" : "out", inputs ? "input" : "output", g.first.c_str(),
                     inputs ? "input" : "output", known.c_str());
        return false;
      }
    }
    return true;
  };
  if (!assign(in, true, &in_axes) || !assign(out, false, &out_axes)) {
    shp_program_destroy(p);
    return 1;
  }
  shp_program_t* d = nullptr;
  shp_error_t* e = shp_program_vmap(p, in_axes.data(), in_axes.size(), out_axes.data(),
                                    out_axes.size(), name.empty() ? nullptr : name.c_str(), &d);
  shp_program_destroy(p);
  if (e) return Fail(e, "shapepoly vmap");
  return WriteDerived("vmap", d, out_path);
}

// Serializes the derived program `d` (destroyed here) to OUT and prints its signature.
int WriteDerived(const std::string& cmd, shp_program_t* d, const std::string& out_path) {
  shp_buffer_t* b = nullptr;
  shp_error_t* e = shp_program_serialize(d, &b);
  if (e) {
    shp_program_destroy(d);
    return Fail(e, ("shapepoly " + cmd).c_str());
  }
  std::string why;
  bool ok = WriteAll(out_path, shp_buffer_data(b), shp_buffer_size(b), &why);
  size_t size = shp_buffer_size(b);
  shp_buffer_destroy(b);
  if (!ok) {
    std::fprintf(stderr, "shapepoly: cannot write '%s': %s\n", out_path.c_str(), why.c_str());
    shp_program_destroy(d);
    return 1;
  }
  size_t len = 0;
  std::string text;
  e = shp_program_to_text(d, nullptr, 0, &len);
  if (!e) {
    text.assign(len + 1, '\0');
    e = shp_program_to_text(d, &text[0], text.size(), &len);
  }
  shp_program_destroy(d);
  if (e) return Fail(e, "shapepoly");
  text.resize(std::min(len, text.find('\n')));
  std::printf("wrote %s (%zu bytes)\n%s\n", out_path.c_str(), size, text.c_str());
  return 0;
}

}  // namespace

bool IsHelpFlag(const std::string& a) { return a == "-h" || a == "--help"; }

int main(int argc, char** argv) {
  if (argc < 2) return Usage();
  std::string cmd = argv[1];
  if (IsHelpFlag(cmd) || cmd == "help") {
    if (argc > 3) return Usage();
    return Help(argc == 3 ? argv[2] : "");
  }
  if (cmd == "--version" || cmd == "version") return argc == 2 ? Version() : Usage();
  for (int i = 2; i < argc; ++i) {
    if (IsHelpFlag(argv[i])) return Help(cmd);
  }
  if (argc < 3) return Usage();
  if (cmd == "inspect" && argc == 3) return Inspect(argv[2]);
  if (cmd == "inspect" && argc == 4) {
    if (std::string(argv[2]) == "--cost") return InspectCost(argv[3]);
    if (std::string(argv[3]) == "--cost") return InspectCost(argv[2]);
    return Usage();
  }
  if (cmd == "graph") {
    std::string out;
    for (int i = 3; i < argc; ++i) {
      std::string a = argv[i];
      if ((a == "-o" || a == "--output") && i + 1 < argc) {
        out = argv[++i];
      } else {
        return UsageError("unexpected argument '" + a + "' for graph");
      }
    }
    return Graph(argv[2], out);
  }
  if (cmd == "check") {
    std::vector<std::string> specs;
    bool cost = false;
    for (int i = 3; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--cost") {
        cost = true;
      } else if (a == "--shape" && i + 1 < argc) {
        specs.push_back(argv[++i]);
      } else if (a.rfind("--shape=", 0) == 0) {
        specs.push_back(a.substr(8));
      } else {
        return Usage();
      }
    }
    return Check(argv[2], specs, cost);
  }
  if (cmd == "run") {
    std::vector<std::string> inputs;
    std::string out_dir;
    for (int i = 3; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--input" && i + 1 < argc) {
        inputs.push_back(argv[++i]);
      } else if (a == "--output-dir" && i + 1 < argc) {
        out_dir = argv[++i];
      } else {
        return Usage();
      }
    }
    if (out_dir.empty()) return Usage();
    return Run(argv[2], inputs, out_dir);
  }
  if (cmd == "jvp" || cmd == "vjp" || cmd == "grad") {
    std::vector<std::string> wrt, of;
    std::string out_path;
    for (int i = 3; i < argc; ++i) {
      std::string a = argv[i];
      std::string value = i + 1 < argc ? argv[i + 1] : "";
      if ((a == "--wrt" || a == "--of") && i + 1 < argc) {
        ++i;
        if (!SplitNames(value, a == "--wrt" ? &wrt : &of)) {
          return UsageError("bad " + a + " '" + value + "' (expected NAME[,NAME...])");
        }
      } else if ((a == "-o" || a == "--output") && i + 1 < argc) {
        out_path = argv[++i];
      } else {
        return UsageError("unexpected argument '" + a + "' for " + cmd);
      }
    }
    if (cmd != "jvp" && of.empty()) {
      return UsageError(cmd == "grad" ? "grad needs --of Y: the scalar output to differentiate"
                                      : "vjp needs --of Y[,Y...]: the outputs given cotangents");
    }
    if (cmd == "jvp" && !of.empty()) {
      return UsageError("jvp takes no --of: it gives the tangent of every float output");
    }
    if (cmd == "grad" && of.size() != 1) {
      return UsageError("grad takes one --of output (a scalar); use vjp for several");
    }
    if (wrt.empty()) {
      return UsageError(cmd + " needs --wrt X[,X...]: the inputs to differentiate by");
    }
    if (out_path.empty()) return UsageError(cmd + " needs -o OUT.shpoly");
    return Derive(cmd, argv[2], wrt, of, out_path);
  }
  if (cmd == "vmap") {
    std::vector<std::pair<std::string, int64_t>> in, out;
    std::string name, out_path;
    for (int i = 3; i < argc; ++i) {
      std::string a = argv[i];
      std::string value = i + 1 < argc ? argv[i + 1] : "";
      if ((a == "--in-axes" || a == "--out-axes") && i + 1 < argc) {
        ++i;
        if (!SplitAxes(value, a == "--in-axes" ? &in : &out)) {
          return UsageError("bad " + a + " '" + value + "' (expected NAME=AXIS[,NAME=AXIS...])");
        }
      } else if (a == "--name" && i + 1 < argc) {
        name = argv[++i];
      } else if ((a == "-o" || a == "--output") && i + 1 < argc) {
        out_path = argv[++i];
      } else {
        return UsageError("unexpected argument '" + a + "' for vmap");
      }
    }
    if (in.empty()) return UsageError("vmap needs --in-axes X=A[,X=A...]: the batched inputs");
    if (out_path.empty()) return UsageError("vmap needs -o OUT.shpoly");
    return Vmap(argv[2], in, out, name, out_path);
  }
  return Usage();
}
