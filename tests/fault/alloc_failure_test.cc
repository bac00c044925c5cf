// Allocation-failure sweep (issue 17, "Fault injection"), through the shipped shared library
// and the public header only. alloc_hook makes exactly the k-th allocation fail, for k = 1..N
// over each step of a representative workload: trace (a scope with constraints, dims, every op
// family, constants incl. a compressed one, the program), serialize, load, create (1 and 2
// threads) and run (run, a failing run, dry run, output shape, run_into, at two shapes).
// Every call must succeed or return SHP_OUT_OF_MEMORY (the static out-of-memory error or one
// with a message) with its out-params untouched; the call is then repeated without injection
// and the step goes on. The step's results must equal the reference bit for bit (serialized
// bytes, program text, outputs, error messages): every object stayed usable and kept no
// partial state.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "shapepoly/shapepoly.h"
#include "tests/fault/alloc_hook.h"

namespace {

// Sweep every kStride-th injection point only (set by the BUILD file for sanitizer builds,
// where every allocation costs several times more).
#if defined(SHP_FAULT_SWEEP_STRIDE)
constexpr uint64_t kStride = SHP_FAULT_SWEEP_STRIDE;
#else
constexpr uint64_t kStride = 1;
#endif

// Whether shp_runtime_run_into leaves its outputs untouched when it runs out of memory. The
// header documents that it does not: the reduce, cumsum, concatenate, pad and layer_norm
// kernels allocate while computing, as does a thread's first (or a larger) per-thread scratch
// buffer, after earlier steps may have written outputs (like the take index error). Every
// other out-param of every call is checked.
constexpr bool kRunIntoOomKeepsOutputs = false;

// Expected result of a call that must fail: the code and message of the counting run.
constexpr shp_code_t kAnyError = -1;

std::string Take(shp_error_t* err) {
  std::string m = err ? shp_error_message(err) : "";
  shp_error_destroy(err);
  return m;
}

// One sweep over one step of the workload.
class Sweep {
 public:
  // A sweep that does not `inject` only checks the calls (Arm does nothing).
  explicit Sweep(const char* step, bool inject = true) : step_(step), inject_(inject) {}

  // The counting run (k = 0) injects nothing and records the reference error messages.
  bool counting() const { return k_ == 0; }

  // Starts counting (and, unless counting, failing the k-th allocation). Once per step run.
  void Arm() {
    if (inject_) shp_fault::Arm(k_);
  }

  // Runs `call` (returning shp_error_t*), which should give `expected` (SHP_OK: success;
  // kAnyError: the error of the counting run, same code and message). If it returns
  // SHP_OUT_OF_MEMORY after the injected failure, `untouched()` must hold (no out-param
  // written); injection stops and the call is repeated, which must now give `expected`.
  // Anything else is a failure naming the step, k and the call. Returns false if the step
  // cannot go on. The test's own allocations (strings, map) are made with injection paused.
  template <typename Call, typename Untouched>
  bool Do(const char* what, Call call, Untouched untouched, shp_code_t expected = SHP_OK) {
    shp_error_t* err = call();
    if (err == nullptr && expected == SHP_OK) return true;
    const bool armed = shp_fault::Armed();
    shp_fault::Disarm();
    if (err != nullptr && shp_error_code(err) == SHP_OUT_OF_MEMORY) {
      const std::string message = shp_error_message(err);
      shp_error_destroy(err);
      if (!shp_fault::Fired()) {
        return Fail(what, "SHP_OUT_OF_MEMORY without an injected failure: " + message);
      }
      ++oom_calls_;
      if (message.empty()) return Fail(what, "an out-of-memory error without a message");
      if (!untouched()) return Fail(what, "an out-param was written although the call failed");
      err = call();  // the objects must be usable: the call now gives its normal result
      // Injection stays off for the rest of this run: its one failure has happened.
    } else if (armed) {
      resume_ = true;
    }
    const shp_code_t code = shp_error_code(err);
    const std::string message = shp_error_message(err);
    shp_error_destroy(err);
    if (expected == kAnyError) {
      if (code == SHP_OK) return Fail(what, "succeeded, expected an error");
      const std::string got = std::string(shp_code_string(code)) + ": " + message;
      if (counting()) {
        messages_[what] = got;
      } else if (messages_[what] != got) {
        return Fail(what, "gave '" + got + "' instead of '" + messages_[what] + "'");
      }
    } else if (code != expected) {
      return Fail(what, std::string("returned ") + shp_code_string(code) + " (" + message +
                            "), expected " + shp_code_string(expected));
    }
    if (resume_) {
      resume_ = false;
      shp_fault::Resume();
    }
    return true;
  }
  template <typename Call>
  bool Do(const char* what, Call call, shp_code_t expected = SHP_OK) {
    return Do(
        what, call, [] { return true; }, expected);
  }

  // Reports a failure (with injection off: gtest allocates).
  bool Fail(const char* what, const std::string& why) {
    shp_fault::Disarm();
    resume_ = false;
    ADD_FAILURE() << step_ << ", failing allocation " << k_ << ", " << what << ": " << why;
    return false;
  }

  // Counts the step's allocations, then runs it once per allocation, making that one fail.
  // `step(sweep)` builds its fresh state without injection, calls Arm() right before the calls
  // under test and Disarm after them, checks its results against the reference, and returns
  // false if it could not go on.
  template <typename Step>
  void Run(Step step) {
    k_ = 0;
    ASSERT_TRUE(step(*this)) << step_ << ": the step fails without injection";
    const uint64_t n = shp_fault::Count();
    ASSERT_GT(n, 0u) << step_ << ": no allocation was counted (is the hook linked?)";
    uint64_t points = 0;
    for (uint64_t k = 1; k <= n; k += kStride) {
      k_ = k;
      const bool ok = step(*this);
      shp_fault::Disarm();
      if (shp_fault::Fired()) ++points;
      if (!ok || ::testing::Test::HasFailure()) {
        ADD_FAILURE() << step_ << ": stopped at failing allocation " << k << " of " << n;
        return;
      }
    }
    std::printf(
        "fault sweep %-26s %6llu allocations, %6llu injection points (stride %llu), "
        "%6llu calls returned SHP_OUT_OF_MEMORY, all clean\n",
        step_, static_cast<unsigned long long>(n), static_cast<unsigned long long>(points),
        static_cast<unsigned long long>(kStride), static_cast<unsigned long long>(oom_calls_));
    std::fflush(stdout);
    total_points_ += points;
    total_allocations_ += n;
  }

  static uint64_t total_points() { return total_points_; }
  static uint64_t total_allocations() { return total_allocations_; }

 private:
  const char* step_;
  const bool inject_;
  uint64_t k_ = 0;
  bool resume_ = false;
  uint64_t oom_calls_ = 0;
  std::map<std::string, std::string> messages_;
  static uint64_t total_points_;
  static uint64_t total_allocations_;
};

uint64_t Sweep::total_points_ = 0;
uint64_t Sweep::total_allocations_ = 0;

// ---- The workload -------------------------------------------------------------------------

constexpr int64_t kFeatures = 8;
constexpr size_t kInputs = 5;
constexpr size_t kOutputs = 7;

struct ScopeDeleter {
  void operator()(shp_scope_t* s) const { shp_scope_destroy(s); }
};
struct ProgramDeleter {
  void operator()(shp_program_t* p) const { shp_program_destroy(p); }
};
struct RuntimeDeleter {
  void operator()(shp_runtime_t* r) const { shp_runtime_destroy(r); }
};
struct ArrayDeleter {
  void operator()(shp_array_t* a) const { shp_array_destroy(a); }
};
using ProgramPtr = std::unique_ptr<shp_program_t, ProgramDeleter>;
using RuntimePtr = std::unique_ptr<shp_runtime_t, RuntimeDeleter>;
using ArrayPtr = std::unique_ptr<shp_array_t, ArrayDeleter>;

// Traces the program, with the calls checked by `s` (arms it):
//   scope: constraints n >= 2, mod(n, 2) == 0; dims parsed, bounded, compared; a parse error
//   inputs x (batch, n), w (n, 8), b (8)
//   h = x @ w;  a = tanh(max(h + b, 0)) * 0.5     (a fused elementwise chain)
//   m = a @ mix                                    (mix: an 8x8 constant that compresses)
//   y = softmax(m, -1);  s = reduce_sum(m * m, axis 1)
//   t = reshape(transpose(a), (4, -1))             (inferred dim: 2*batch)
//   i = convert(a > 0.25, i32);  errors: a bad permutation, matmul(x, x)
//   k: a dimension input (declared [0, 64]); c = cumsum(iota(k))
//   l = layer_norm(pad(slice(concatenate(a, a), stride 2 on axis 1), 1 each side), -1)
//   g = take(select(a > 0.25, a, 0.5), idx, axis 1)   (idx: an i32 input)
//   an assertion n <= 64 (shp_scope_check)
ProgramPtr TraceProgram(Sweep& s) {
  static const char* const kConstraints[] = {"n >= 2", "mod(n, 2) == 0"};
  static const float kHalf = 0.5f, kZero = 0.f, kQuarter = 0.25f;
  float mix_data[kFeatures * kFeatures];
  for (int i = 0; i < kFeatures * kFeatures; ++i) mix_data[i] = (i % 9 == 0) ? 1.f : 0.125f;
  const int64_t mix_shape[] = {kFeatures, kFeatures};
  const int64_t perm[] = {1, 0}, bad_perm[] = {0, 0};
  const int64_t axis1[] = {1};

  shp_scope_t* scope = nullptr;
  s.Arm();
  if (!s.Do(
          "shp_scope_create", [&] { return shp_scope_create(kConstraints, 2, &scope); },
          [&] { return scope == nullptr; })) {
    return nullptr;
  }
  std::unique_ptr<shp_scope_t, ScopeDeleter> owner(scope);

  const shp_dim_t *two_n = nullptr, *four = nullptr, *n = nullptr, *bad_dim = nullptr;
  const shp_dim_t* parsed[2] = {nullptr, nullptr};
  const shp_tensor_t *x = nullptr, *w = nullptr, *b = nullptr, *half = nullptr, *zero = nullptr;
  const shp_tensor_t *quarter = nullptr, *mix = nullptr, *h = nullptr, *hb = nullptr;
  const shp_tensor_t *relu = nullptr, *th = nullptr, *a = nullptr, *m = nullptr, *y = nullptr;
  const shp_tensor_t *sq = nullptr, *sum = nullptr, *at = nullptr, *t = nullptr, *gt = nullptr;
  const shp_tensor_t *ind = nullptr, *bad = nullptr, *kt = nullptr, *io = nullptr;
  const shp_tensor_t *cs = nullptr, *cat = nullptr, *sl = nullptr, *pd = nullptr, *ln = nullptr;
  const shp_tensor_t *idx = nullptr, *sel = nullptr, *tk = nullptr;
  const shp_dim_t *k = nullptr, *zero_dim = nullptr, *one = nullptr, *sixty_four = nullptr;
  const int64_t slice_strides[] = {1, 2};
  int64_t lo = 0, hi = 0;
  shp_truth_t truth = SHP_UNKNOWN;
  size_t rank = 0;
  static const char* const kSolveSpec[] = {"batch, 2*n"};
  static const int64_t kSolveDims[] = {3, 8};
  static const int64_t* const kSolveShape[] = {kSolveDims};
  static const size_t kSolveRank = 2;
  static const char* const kEvalNames[] = {"n"};
  static const int64_t kEvalValues[] = {6};
  shp_bindings_t* solved = nullptr;
  char text[64] = {0};
  size_t len = 0, num_vars = 0;
  const char* var_names[2] = {nullptr, nullptr};
  int64_t value = 0;
  shp_program_t* p = nullptr;
  const bool ok =
      s.Do("shp_scope_declare", [&] { return shp_scope_declare(scope, "k", 0, 64); }) &&
      s.Do(
          "shp_dim_parse", [&] { return shp_dim_parse(scope, "2*n", &two_n); },
          [&] { return two_n == nullptr; }) &&
      s.Do("shp_dim_variable", [&] { return shp_dim_variable(scope, "n", &n); }) &&
      s.Do("shp_dim_constant", [&] { return shp_dim_constant(scope, 4, &four); }) &&
      s.Do(
          "shp_dim_bounds", [&] { return shp_dim_bounds(two_n, &lo, &hi); },
          [&] { return lo == 0 && hi == 0; }) &&
      s.Do(
          "shp_dim_compare", [&] { return shp_dim_compare(two_n, SHP_CMP_GE, four, &truth); },
          [&] { return truth == SHP_UNKNOWN; }) &&
      s.Do(
          "shp_dim_parse (error)", [&] { return shp_dim_parse(scope, "n + * 2", &bad_dim); },
          [&] { return bad_dim == nullptr; }, kAnyError) &&
      s.Do(
          "shp_shape_parse",
          [&] {
            return shp_shape_parse(scope, "batch, floordiv(n, 2)", nullptr, 0, parsed, 2, &rank);
          },
          [&] { return rank == 0 && parsed[0] == nullptr; }) &&
      s.Do(
          "shp_scope_solve",
          [&] { return shp_scope_solve(scope, 1, kSolveSpec, kSolveShape, &kSolveRank, &solved); },
          [&] { return solved == nullptr; }) &&
      s.Do(
          "shp_dim_to_string",
          [&] { return shp_dim_to_string(parsed[1], text, sizeof text, &len); },
          [&] { return len == 0 && text[0] == '\0'; }) &&
      s.Do(
          "shp_dim_variables",
          [&] { return shp_dim_variables(parsed[1], var_names, 2, &num_vars); },
          [&] { return num_vars == 0; }) &&
      s.Do(
          "shp_dim_evaluate",
          [&] { return shp_dim_evaluate(two_n, kEvalNames, kEvalValues, 1, &value); },
          [&] { return value == 0; }) &&
      s.Do(
          "shp_tensor_input x",
          [&] { return shp_tensor_input(scope, "x", SHP_F32, "batch, n", &x); },
          [&] { return x == nullptr; }) &&
      s.Do("shp_tensor_input w",
           [&] { return shp_tensor_input(scope, "w", SHP_F32, "n, 8", &w); }) &&
      s.Do("shp_tensor_input b", [&] { return shp_tensor_input(scope, "b", SHP_F32, "8", &b); }) &&
      s.Do("shp_tensor_constant half",
           [&] { return shp_tensor_constant(scope, SHP_F32, nullptr, 0, &kHalf, 4, &half); }) &&
      s.Do("shp_tensor_constant zero",
           [&] { return shp_tensor_constant(scope, SHP_F32, nullptr, 0, &kZero, 4, &zero); }) &&
      s.Do("shp_tensor_constant quarter",
           [&] {
             return shp_tensor_constant(scope, SHP_F32, nullptr, 0, &kQuarter, 4, &quarter);
           }) &&
      s.Do(
          "shp_tensor_constant mix",
          [&] {
            return shp_tensor_constant(scope, SHP_F32, mix_shape, 2, mix_data, sizeof mix_data,
                                       &mix);
          },
          [&] { return mix == nullptr; }) &&
      s.Do(
          "shp_tensor_matmul", [&] { return shp_tensor_matmul(x, w, &h); },
          [&] { return h == nullptr; }) &&
      s.Do("shp_tensor_binary add", [&] { return shp_tensor_binary(SHP_ADD, h, b, &hb); }) &&
      s.Do("shp_tensor_binary max", [&] { return shp_tensor_binary(SHP_MAX, hb, zero, &relu); }) &&
      s.Do("shp_tensor_unary tanh", [&] { return shp_tensor_unary(SHP_TANH, relu, &th); }) &&
      s.Do("shp_tensor_binary mul", [&] { return shp_tensor_binary(SHP_MUL, th, half, &a); }) &&
      s.Do(
          "shp_tensor_matmul (error)", [&] { return shp_tensor_matmul(x, x, &bad); },
          [&] { return bad == nullptr; }, kAnyError) &&
      s.Do(
          "shp_tensor_transpose (error)",
          [&] { return shp_tensor_transpose(a, bad_perm, 2, &bad); },
          [&] { return bad == nullptr; }, kAnyError) &&
      s.Do("shp_tensor_matmul mix", [&] { return shp_tensor_matmul(a, mix, &m); }) &&
      s.Do("shp_tensor_softmax", [&] { return shp_tensor_softmax(m, -1, &y); }) &&
      s.Do("shp_tensor_binary square", [&] { return shp_tensor_binary(SHP_MUL, m, m, &sq); }) &&
      s.Do("shp_tensor_reduce",
           [&] { return shp_tensor_reduce(SHP_REDUCE_SUM, sq, axis1, 1, false, &sum); }) &&
      s.Do("shp_tensor_transpose", [&] { return shp_tensor_transpose(a, perm, 2, &at); }) &&
      s.Do(
          "shp_tensor_reshape",
          [&] {
            const shp_dim_t* dims[] = {four, nullptr};
            return shp_tensor_reshape(at, dims, 2, &t);
          },
          [&] { return t == nullptr; }) &&
      s.Do("shp_tensor_compare", [&] { return shp_tensor_compare(a, SHP_CMP_GT, quarter, &gt); }) &&
      s.Do("shp_tensor_convert", [&] { return shp_tensor_convert(gt, SHP_I32, &ind); }) &&
      s.Do("shp_dim_constant 0", [&] { return shp_dim_constant(scope, 0, &zero_dim); }) &&
      s.Do("shp_dim_constant 1", [&] { return shp_dim_constant(scope, 1, &one); }) &&
      s.Do("shp_dim_constant 64", [&] { return shp_dim_constant(scope, 64, &sixty_four); }) &&
      s.Do("shp_scope_check",
           [&] { return shp_scope_check(scope, n, SHP_CMP_LE, sixty_four, "n is at most 64"); }) &&
      s.Do(
          "shp_tensor_dim_input", [&] { return shp_tensor_dim_input(scope, "k", &kt); },
          [&] { return kt == nullptr; }) &&
      s.Do("shp_dim_variable k", [&] { return shp_dim_variable(scope, "k", &k); }) &&
      s.Do("shp_tensor_iota", [&] { return shp_tensor_iota(scope, SHP_I64, &k, 1, 0, &io); }) &&
      s.Do("shp_tensor_cumsum", [&] { return shp_tensor_cumsum(io, 0, &cs); }) &&
      s.Do("shp_tensor_concatenate",
           [&] {
             const shp_tensor_t* parts[] = {a, a};
             return shp_tensor_concatenate(parts, 2, 1, &cat);
           }) &&
      s.Do("shp_tensor_slice",
           [&] { return shp_tensor_slice(cat, nullptr, nullptr, slice_strides, 2, &sl); }) &&
      s.Do("shp_tensor_pad",
           [&] {
             const shp_dim_t* low[] = {zero_dim, one};
             const shp_dim_t* high[] = {zero_dim, one};
             return shp_tensor_pad(sl, low, high, 2, -1.0, &pd);
           }) &&
      s.Do("shp_tensor_layer_norm", [&] { return shp_tensor_layer_norm(pd, -1, 1e-5, &ln); }) &&
      s.Do("shp_tensor_input idx",
           [&] { return shp_tensor_input(scope, "idx", SHP_I32, "3", &idx); }) &&
      s.Do("shp_tensor_select", [&] { return shp_tensor_select(gt, a, half, &sel); }) &&
      s.Do("shp_tensor_take", [&] { return shp_tensor_take(sel, idx, 1, &tk); }) &&
      s.Do(
          "shp_program_create",
          [&] {
            const shp_tensor_t* ins[] = {x, w, b, kt, idx};
            const shp_tensor_t* outs[] = {y, sum, t, ind, cs, ln, tk};
            const char* names[] = {"y", "s", "t", "i", "c", "l", "g"};
            return shp_program_create(scope, ins, kInputs, outs, names, kOutputs, &p);
          },
          [&] { return p == nullptr; });
  shp_fault::Disarm();
  bool solved_ok = solved != nullptr && shp_bindings_count(solved) == 2;
  for (size_t i = 0; solved_ok && i < 2; ++i) {
    const std::string name = shp_bindings_name(solved, i);
    solved_ok = shp_bindings_value(solved, i) == (name == "n" ? 4 : name == "batch" ? 3 : -1);
  }
  shp_bindings_destroy(solved);
  if (!ok) return nullptr;
  if (!solved_ok) {
    s.Fail("shp_scope_solve", "wrong values");
    return nullptr;
  }
  if (std::strcmp(text, "floordiv(n, 2)") != 0 || num_vars != 1 || value != 12) {
    s.Fail("dims", std::string("wrong results: ") + text);
    return nullptr;
  }
  return ProgramPtr(p);
}

// Serialized bytes of a program (without injection).
std::string Bytes(const shp_program_t* p) {
  shp_buffer_t* buf = nullptr;
  EXPECT_EQ(Take(shp_program_serialize(p, &buf)), "");
  std::string bytes(static_cast<const char*>(shp_buffer_data(buf)), shp_buffer_size(buf));
  shp_buffer_destroy(buf);
  return bytes;
}

// The text listing of a program (without injection).
std::string Text(const shp_program_t* p) {
  size_t len = 0;
  EXPECT_EQ(Take(shp_program_to_text(p, nullptr, 0, &len)), "");
  std::string text(len + 1, '\0');
  EXPECT_EQ(Take(shp_program_to_text(p, &text[0], text.size(), &len)), "");
  text.resize(len);
  return text;
}

// Input data and arrays of one shape (made without injection).
struct Case {
  int64_t batch, n;
  std::vector<float> x, w, b;
  int64_t k;
  int32_t idx[3] = {2, 0, 7}, bad_idx[3] = {2, 99, 0};  // 99: outside [0, 8)
  std::vector<double> x64;                              // a wrong dtype for x
  ArrayPtr xa, wa, ba, xa64, ka, idxa, bad_idxa;
  Case(int64_t batch_, int64_t n_, int64_t k_) : batch(batch_), n(n_), k(k_) {
    x.resize(static_cast<size_t>(batch * n));
    w.resize(static_cast<size_t>(n * kFeatures));
    b.resize(kFeatures);
    for (size_t i = 0; i < x.size(); ++i) x[i] = 0.03f * static_cast<float>(i % 17) - 0.2f;
    for (size_t i = 0; i < w.size(); ++i) w[i] = 0.05f * static_cast<float>(i % 11) - 0.25f;
    for (size_t i = 0; i < b.size(); ++i) b[i] = 0.1f * static_cast<float>(i);
    x64.assign(x.begin(), x.end());
    const int64_t xs[] = {batch, n}, ws[] = {n, kFeatures}, bs[] = {kFeatures};
    shp_array_t *xp = nullptr, *wp = nullptr, *bp = nullptr, *x64p = nullptr;
    EXPECT_EQ(Take(shp_array_wrap(SHP_F32, xs, 2, x.data(), x.size() * 4, &xp)), "");
    EXPECT_EQ(Take(shp_array_wrap(SHP_F32, ws, 2, w.data(), w.size() * 4, &wp)), "");
    EXPECT_EQ(Take(shp_array_wrap(SHP_F32, bs, 1, b.data(), b.size() * 4, &bp)), "");
    EXPECT_EQ(Take(shp_array_wrap(SHP_F64, xs, 2, x64.data(), x64.size() * 8, &x64p)), "");
    xa.reset(xp);
    wa.reset(wp);
    ba.reset(bp);
    xa64.reset(x64p);
    const int64_t is[] = {3};
    shp_array_t *kp = nullptr, *ip = nullptr, *bip = nullptr;
    EXPECT_EQ(Take(shp_array_wrap(SHP_I64, nullptr, 0, &k, 8, &kp)), "");
    EXPECT_EQ(Take(shp_array_wrap(SHP_I32, is, 1, idx, sizeof idx, &ip)), "");
    EXPECT_EQ(Take(shp_array_wrap(SHP_I32, is, 1, bad_idx, sizeof bad_idx, &bip)), "");
    ka.reset(kp);
    idxa.reset(ip);
    bad_idxa.reset(bip);
  }
};

// The outputs of the runs of one step, as bytes.
using Outputs = std::vector<std::string>;

// The dtype and shape of each output at one case.
struct OutputSpec {
  shp_dtype_t dtype;
  std::vector<int64_t> shape;
};
using OutputSpecs = std::vector<OutputSpec>;

// The runtime calls under test, checked by `s` (arms it): run at `c0` (inputs by name, in
// another order), a run with an f64 `x` (an error before computing) and one with an index out
// of range (an error while computing), a dry run at `c1`'s shapes, an output shape, and
// run_into at `c1` into zeroed arrays of `specs1`. Appends the outputs of both runs.
bool RunCalls(Sweep& s, shp_runtime_t* rt, const Case& c0, const Case& c1,
              const OutputSpecs& specs1, Outputs* results) {
  static const char* const kNames[kInputs] = {"b", "x", "w", "k", "idx"};
  const shp_array_t* in0[] = {c0.ba.get(), c0.xa.get(), c0.wa.get(), c0.ka.get(), c0.idxa.get()};
  const shp_array_t* in_f64[] = {c0.ba.get(), c0.xa64.get(), c0.wa.get(), c0.ka.get(),
                                 c0.idxa.get()};
  const shp_array_t* in_range[] = {c0.ba.get(), c0.xa.get(), c0.wa.get(), c0.ka.get(),
                                   c0.bad_idxa.get()};
  const shp_array_t* in1[] = {c1.ba.get(), c1.xa.get(), c1.wa.get(), c1.ka.get(), c1.idxa.get()};
  const int64_t dxs[] = {c1.batch, c1.n}, dws[] = {c1.n, kFeatures}, dbs[] = {kFeatures};
  const int64_t dis[] = {3};
  const int64_t* dshapes[] = {dbs, dxs, dws, &c1.k, dis};
  const size_t dranks[] = {1, 2, 2, 0, 1};
  // Caller-provided outputs for c1, zeroed, made without injection.
  shp_array_t* into[kOutputs] = {};
  ArrayPtr into_owners[kOutputs];
  for (size_t j = 0; j < kOutputs; ++j) {
    EXPECT_EQ(Take(shp_array_create(specs1[j].dtype, specs1[j].shape.data(), specs1[j].shape.size(),
                                    &into[j])),
              "");
    into_owners[j].reset(into[j]);
  }
  auto into_zero = [&] {
    for (shp_array_t* o : into) {
      const char* d = static_cast<const char*>(shp_array_data(o));
      for (size_t i = 0; i < shp_array_nbytes(o); ++i) {
        if (d[i] != 0) return false;
      }
    }
    return true;
  };
  shp_array_t* outs[kOutputs] = {};
  auto outs_null = [&] {
    for (shp_array_t* o : outs) {
      if (o != nullptr) return false;
    }
    return true;
  };
  int64_t dims[2] = {-1, -1};
  size_t rank = 99;
  s.Arm();
  const bool ok =
      s.Do(
          "shp_runtime_run",
          [&] { return shp_runtime_run(rt, kNames, in0, kInputs, outs, kOutputs); }, outs_null) &&
      s.Do(
          "shp_runtime_run (dtype error)",
          [&] {
            shp_array_t* none[kOutputs] = {};
            return shp_runtime_run(rt, kNames, in_f64, kInputs, none, kOutputs);
          },
          kAnyError) &&
      s.Do(
          "shp_runtime_run (index error)",
          [&] {
            shp_array_t* none[kOutputs] = {};
            return shp_runtime_run(rt, kNames, in_range, kInputs, none, kOutputs);
          },
          kAnyError) &&
      s.Do("shp_runtime_dry_run",
           [&] { return shp_runtime_dry_run(rt, kNames, nullptr, dshapes, dranks, kInputs); }) &&
      s.Do(
          "shp_runtime_output_shape",
          [&] { return shp_runtime_output_shape(rt, 2, dims, 2, &rank); },
          [&] { return rank == 99; }) &&
      s.Do(
          "shp_runtime_run_into",
          [&] { return shp_runtime_run_into(rt, kNames, in1, kInputs, into, kOutputs); },
          [&] { return kRunIntoOomKeepsOutputs ? into_zero() : true; });
  shp_fault::Disarm();
  ArrayPtr out_owners[kOutputs];
  for (size_t j = 0; j < kOutputs; ++j) out_owners[j].reset(outs[j]);
  if (!ok) return false;
  if (rank != 2 || dims[0] != 4 || dims[1] != 2 * c1.batch) {
    return s.Fail("shp_runtime_output_shape", "wrong shape");
  }
  for (shp_array_t* o : outs) {
    results->emplace_back(static_cast<const char*>(shp_array_data(o)), shp_array_nbytes(o));
  }
  for (shp_array_t* o : into) {
    results->emplace_back(static_cast<const char*>(shp_array_data(o)), shp_array_nbytes(o));
  }
  return true;
}

// The outputs' dtypes and shapes at case `c` (without injection).
OutputSpecs Specs(const shp_program_t* p, const Case& c) {
  static const char* const kNames[kInputs] = {"b", "x", "w", "k", "idx"};
  const int64_t xs[] = {c.batch, c.n}, ws[] = {c.n, kFeatures}, bs[] = {kFeatures}, is[] = {3};
  const int64_t* shapes[] = {bs, xs, ws, &c.k, is};
  const size_t ranks[] = {1, 2, 2, 0, 1};
  shp_runtime_t* rt = nullptr;
  EXPECT_EQ(Take(shp_runtime_create(p, nullptr, &rt)), "");
  EXPECT_EQ(Take(shp_runtime_dry_run(rt, kNames, nullptr, shapes, ranks, kInputs)), "");
  OutputSpecs specs;
  for (size_t j = 0; j < kOutputs; ++j) {
    OutputSpec spec{shp_program_output_dtype(p, j), std::vector<int64_t>(8)};
    size_t rank = 0;
    EXPECT_EQ(Take(shp_runtime_output_shape(rt, j, spec.shape.data(), 8, &rank)), "");
    spec.shape.resize(rank);
    specs.push_back(spec);
  }
  shp_runtime_destroy(rt);
  return specs;
}

// Creates a runtime with `threads` threads without injection.
RuntimePtr MakeRuntime(const shp_program_t* p, int32_t threads) {
  shp_runtime_options_t* o = nullptr;
  EXPECT_EQ(Take(shp_runtime_options_create(&o)), "");
  EXPECT_EQ(Take(shp_runtime_options_set_num_threads(o, threads)), "");
  shp_runtime_t* rt = nullptr;
  EXPECT_EQ(Take(shp_runtime_create(p, o, &rt)), "");
  shp_runtime_options_destroy(o);
  return RuntimePtr(rt);
}

class AllocFailure : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    Sweep none("reference", false);
    reference_ = TraceProgram(none).release();
    ASSERT_NE(reference_, nullptr);
    bytes_ = new std::string(Bytes(reference_));
    text_ = new std::string(Text(reference_));
    c0_ = new Case(3, 4, 5);
    c1_ = new Case(8209, 6, 9);
    specs1_ = new OutputSpecs(Specs(reference_, *c1_));
    for (int threads : {1, 2}) {
      RuntimePtr rt = MakeRuntime(reference_, threads);
      outputs_[threads] = new Outputs;
      ASSERT_TRUE(RunCalls(none, rt.get(), *c0_, *c1_, *specs1_, outputs_[threads]));
    }
    shp_fault::Disarm();
  }
  static void TearDownTestSuite() {
    shp_program_destroy(reference_);
    delete bytes_;
    delete text_;
    delete c0_;
    delete c1_;
    delete specs1_;
    for (Outputs* o : outputs_) delete o;
    std::printf("fault sweep total: %llu allocations, %llu injection points, all clean\n",
                static_cast<unsigned long long>(Sweep::total_allocations()),
                static_cast<unsigned long long>(Sweep::total_points()));
  }

  static shp_program_t* reference_;
  static std::string* bytes_;
  static std::string* text_;
  static Case* c0_;
  static Case* c1_;
  static OutputSpecs* specs1_;
  static Outputs* outputs_[3];
};

shp_program_t* AllocFailure::reference_ = nullptr;
std::string* AllocFailure::bytes_ = nullptr;
std::string* AllocFailure::text_ = nullptr;
Case* AllocFailure::c0_ = nullptr;
Case* AllocFailure::c1_ = nullptr;
OutputSpecs* AllocFailure::specs1_ = nullptr;
Outputs* AllocFailure::outputs_[3] = {nullptr, nullptr, nullptr};

TEST_F(AllocFailure, Trace) {
  Sweep sweep("trace");
  sweep.Run([&](Sweep& s) {
    ProgramPtr p = TraceProgram(s);
    if (p == nullptr) return false;
    if (Bytes(p.get()) != *bytes_) return s.Fail("trace", "serialized bytes differ");
    if (Text(p.get()) != *text_) return s.Fail("trace", "program text differs");
    return true;
  });
}

TEST_F(AllocFailure, Serialize) {
  Sweep sweep("serialize");
  sweep.Run([&](Sweep& s) {
    shp_buffer_t* buf = nullptr;
    size_t len = 0, shape_len = 0;
    char shape[64] = {0};
    s.Arm();
    const bool ok =
        s.Do(
            "shp_program_serialize", [&] { return shp_program_serialize(reference_, &buf); },
            [&] { return buf == nullptr; }) &&
        s.Do(
            "shp_program_to_text",
            [&] { return shp_program_to_text(reference_, nullptr, 0, &len); },
            [&] { return len == 0; }) &&
        s.Do(
            "shp_program_input_shape_string",
            [&] {
              return shp_program_input_shape_string(reference_, 0, shape, sizeof shape, &shape_len);
            },
            [&] { return shape_len == 0; });
    shp_fault::Disarm();
    std::unique_ptr<shp_buffer_t, void (*)(shp_buffer_t*)> owner(buf, shp_buffer_destroy);
    if (!ok) return false;
    const std::string got(static_cast<const char*>(shp_buffer_data(buf)), shp_buffer_size(buf));
    if (got != *bytes_) return s.Fail("shp_program_serialize", "the bytes differ");
    if (len != text_->size()) return s.Fail("shp_program_to_text", "the length differs");
    if (std::string(shape) != "(batch, n)") return s.Fail("input_shape_string", shape);
    return true;
  });
}

TEST_F(AllocFailure, Load) {
  Sweep sweep("load");
  const std::string truncated = bytes_->substr(0, bytes_->size() / 2);
  sweep.Run([&](Sweep& s) {
    shp_load_options_t* options = nullptr;
    shp_program_t* p = nullptr;
    shp_program_t* bad = nullptr;
    static const char* const kNames[kInputs] = {"b", "x", "w", "k", "idx"};
    const int64_t xs[] = {c0_->batch, c0_->n}, ws[] = {c0_->n, kFeatures}, bs[] = {kFeatures};
    const int64_t is[] = {3};
    const int64_t* shapes[] = {bs, xs, ws, &c0_->k, is};
    const size_t ranks[] = {1, 2, 2, 0, 1};
    shp_bindings_t* bindings = nullptr;
    int64_t dims[2] = {-1, -1};
    size_t rank = 99;
    s.Arm();
    bool ok = s.Do(
        "shp_load_options_create", [&] { return shp_load_options_create(&options); },
        [&] { return options == nullptr; });
    std::unique_ptr<shp_load_options_t, void (*)(shp_load_options_t*)> owner(
        options, shp_load_options_destroy);
    ok = ok &&
         s.Do("shp_load_options_set_max_bytes",
              [&] { return shp_load_options_set_max_bytes(options, 1 << 20); }) &&
         s.Do(
             "shp_program_load_with_options",
             [&] {
               return shp_program_load_with_options(bytes_->data(), bytes_->size(), options, &p);
             },
             [&] { return p == nullptr; }) &&
         s.Do(
             "shp_program_load (error)",
             [&] { return shp_program_load(truncated.data(), truncated.size(), &bad); },
             [&] { return bad == nullptr; }, kAnyError) &&
         s.Do(
             "shp_program_check_shapes",
             [&] { return shp_program_check_shapes(p, kNames, shapes, ranks, kInputs, &bindings); },
             [&] { return bindings == nullptr; }) &&
         s.Do(
             "shp_program_output_shape",
             [&] { return shp_program_output_shape(p, 2, bindings, dims, 2, &rank); },
             [&] { return rank == 99; });
    shp_fault::Disarm();
    ProgramPtr loaded(p);
    shp_bindings_destroy(bindings);
    if (!ok) return false;
    if (rank != 2 || dims[0] != 4 || dims[1] != 2 * c0_->batch) {
      return s.Fail("shp_program_output_shape", "wrong shape");
    }
    if (Bytes(p) != *bytes_) return s.Fail("shp_program_load", "serializing again differs");
    if (Text(p) != *text_) return s.Fail("shp_program_load", "the program text differs");
    return true;
  });
}

// Creation with 1 and 2 threads; the runtime must then give the reference outputs.
void CreateSweep(const char* name, shp_program_t* program, int threads, const Case& c0,
                 const Case& c1, const OutputSpecs& specs1, const Outputs& reference) {
  Sweep sweep(name);
  sweep.Run([&](Sweep& s) {
    shp_runtime_options_t* o = nullptr;
    shp_runtime_t* rt = nullptr;
    s.Arm();
    bool ok = s.Do(
        "shp_runtime_options_create", [&] { return shp_runtime_options_create(&o); },
        [&] { return o == nullptr; });
    std::unique_ptr<shp_runtime_options_t, void (*)(shp_runtime_options_t*)> owner(
        o, shp_runtime_options_destroy);
    ok = ok &&
         s.Do("shp_runtime_options_set_num_threads",
              [&] { return shp_runtime_options_set_num_threads(o, threads); }) &&
         s.Do("shp_runtime_options_set_plan_cache_capacity",
              [&] { return shp_runtime_options_set_plan_cache_capacity(o, 4); }) &&
         s.Do(
             "shp_runtime_create", [&] { return shp_runtime_create(program, o, &rt); },
             [&] { return rt == nullptr; });
    shp_fault::Disarm();
    RuntimePtr runtime(rt);
    if (!ok) return false;
    if (shp_runtime_num_threads(rt) != threads) return s.Fail("create", "wrong thread count");
    Sweep check("check", false);
    Outputs got;
    if (!RunCalls(check, rt, c0, c1, specs1, &got))
      return s.Fail("create", "the runtime cannot run");
    if (got != reference) return s.Fail("create", "outputs differ from the reference");
    return true;
  });
}

TEST_F(AllocFailure, CreateOneThread) {
  CreateSweep("create (1 thread)", reference_, 1, *c0_, *c1_, *specs1_, *outputs_[1]);
}

TEST_F(AllocFailure, CreateTwoThreads) {
  CreateSweep("create (2 threads)", reference_, 2, *c0_, *c1_, *specs1_, *outputs_[2]);
}

// Runs on a fresh runtime (no cached plan) with 1 and 2 threads.
void RunSweep(const char* name, shp_program_t* program, int threads, const Case& c0, const Case& c1,
              const OutputSpecs& specs1, const Outputs& reference) {
  Sweep sweep(name);
  sweep.Run([&](Sweep& s) {
    RuntimePtr rt = MakeRuntime(program, threads);
    Outputs got;
    if (!RunCalls(s, rt.get(), c0, c1, specs1, &got)) return false;
    if (got != reference) return s.Fail("run", "outputs differ from the reference");
    // The same runtime again, now with its plans cached.
    Outputs again;
    Sweep check("check", false);
    if (!RunCalls(check, rt.get(), c0, c1, specs1, &again))
      return s.Fail("run", "cannot run again");
    if (again != reference) return s.Fail("run", "outputs of a second run differ");
    return true;
  });
}

TEST_F(AllocFailure, RunOneThread) {
  RunSweep("run (1 thread)", reference_, 1, *c0_, *c1_, *specs1_, *outputs_[1]);
}

TEST_F(AllocFailure, RunTwoThreads) {
  RunSweep("run (2 threads)", reference_, 2, *c0_, *c1_, *specs1_, *outputs_[2]);
}

}  // namespace
