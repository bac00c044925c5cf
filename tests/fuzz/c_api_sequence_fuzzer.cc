// libFuzzer target for the C API as a caller sees it (shapepoly.h only): the input is a
// program of calls over a small table of live handles -- scopes, dims, traced tensors,
// programs, buffers, load and runtime options, runtimes, arrays, bindings and errors. Each
// step reads an opcode and its arguments from the input: create and destroy, parse fuzzed
// text, dim arithmetic, comparisons and bounds, tracing with valid and invalid dtypes, ranks,
// axes and out-of-range enums (passed from C: c_api_enum_shim.c), NULL where the header says
// an argument is checked, handles of two scopes mixed, serialize, load (also truncated or
// with a flipped byte), runtimes created and run on arrays of right and wrong shapes, dtypes
// and names, and calls on objects after they failed. Only what the header permits: no
// dangling pointer, no handle of a destroyed scope. Invariants (abort on violation):
//   1. an error has a code of the enum and a non-empty, valid UTF-8 message of bounded
//      length; on error every out-param is untouched; on success out handles are non-NULL;
//   2. a dim prints as text that parses back to the same (interned) dim, or to one provably
//      equal when facts were added since it was built; bounds are ordered;
//      a dim compares TRUE to itself for ==, <=, >=;
//   3. a run at a valuation gives outputs of the traced shapes evaluated there, and after any
//      later call (failed ones included) re-running a runtime on the inputs of its last
//      successful run gives the same bytes;
//   4. everything is destroyed at the end (ASan's leak check finds what is not).
// Sizes stay small: every traced tensor is sized at four valuations (every variable 1, 2, 3
// or 4), and a program is run only at a valuation where its inputs and outputs -- hence every
// tensor in between -- have at most kMaxElements elements, which the program's own shape
// check must solve back.
// Seeds: tests/fuzz/corpus/c_api.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "shapepoly/shapepoly.h"
#include "tests/fuzz/c_api_enum_shim.h"

namespace {

constexpr size_t kMaxInputSize = 1 << 13;
constexpr size_t kMaxMessage = 1 << 16;  // messages quote at most ~200 bytes of any input
constexpr int kNumVals = 4;              // valuations: every variable k + 1
constexpr int64_t kMaxElements = 1 << 10;
constexpr size_t kMaxRank = 4;
constexpr size_t kMaxScopes = 3, kMaxDims = 48, kMaxTensors = 64, kMaxPrograms = 4, kMaxBuffers = 4,
                 kMaxRuntimes = 3, kMaxOptions = 2, kMaxArrays = 6, kMaxErrors = 4,
                 kMaxBindings = 2;
constexpr int kMaxSteps = 160;

struct Stats {
  long inputs = 0, calls = 0, errors = 0, tensors = 0, programs = 0, loads = 0, runtimes = 0,
       runs_ok = 0, reruns = 0;
  ~Stats() {
    if (std::getenv("SHP_FUZZ_STATS") == nullptr) return;
    std::fprintf(stderr,
                 "c_api_sequence_fuzzer stats: %ld inputs, %ld calls, %ld errors, %ld tensors, "
                 "%ld programs, %ld loads, %ld runtimes, %ld runs ok, %ld re-runs compared\n",
                 inputs, calls, errors, tensors, programs, loads, runtimes, runs_ok, reruns);
  }
} stats;

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "c_api_sequence_fuzzer: invariant broken: %s\n", what.c_str());
  std::abort();
}

bool ValidUtf8(const unsigned char* s, size_t n) {
  for (size_t i = 0; i < n;) {
    unsigned char c = s[i];
    size_t len = c < 0x80           ? 1
                 : (c >> 5) == 0x6  ? 2
                 : (c >> 4) == 0xE  ? 3
                 : (c >> 3) == 0x1E ? 4
                                    : 0;
    if (len == 0 || i + len > n) return false;
    uint32_t cp = len == 1 ? c : c & (0x7F >> len);
    for (size_t k = 1; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    static const uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

// The input, read front to back; past its end every read gives 0.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool done() const { return pos_ >= size_; }
  uint8_t U8() { return pos_ < size_ ? data_[pos_++] : 0; }
  uint32_t U16() { return U8() | (static_cast<uint32_t>(U8()) << 8); }
  size_t Pick(size_t n) { return n == 0 ? 0 : U8() % n; }
  bool OneIn(int n) { return U8() % n == 0; }
  // Rarely true: a NULL where the header says the argument is checked.
  bool Null() { return U8() < 6; }
  int64_t Int() {
    static const int64_t kSpecial[] = {std::numeric_limits<int64_t>::min(),
                                       std::numeric_limits<int64_t>::max(),
                                       std::numeric_limits<int64_t>::min() + 1,
                                       int64_t{1} << 31,
                                       -(int64_t{1} << 31),
                                       int64_t{1} << 62,
                                       1000,
                                       -1000};
    uint8_t b = U8();
    if (b < 200) return static_cast<int64_t>(b % 13) - 4;
    if (b < 240) return kSpecial[b % 8];
    uint64_t x = 0;
    for (int i = 0; i < 8; ++i) x = (x << 8) | U8();
    return static_cast<int64_t>(x);
  }
  // An enum value: mostly in range, sometimes just outside, rarely anything.
  int32_t Enum(int32_t count) {
    uint8_t b = U8();
    if (b < 232) return b % count;
    if (b < 248) return b % 2 == 0 ? -1 : count;
    return static_cast<int32_t>(U16() | (U16() << 16));
  }
  // Text from fragments of the dim syntax, names, extremes and raw bytes (never NUL).
  std::string Text() {
    static const char* const kFragments[] = {"a",
                                             "b",
                                             "n",
                                             "batch",
                                             "seq",
                                             "x",
                                             "0",
                                             "1",
                                             "2",
                                             "3",
                                             "4",
                                             "-1",
                                             " + ",
                                             " - ",
                                             "*",
                                             "^",
                                             "^2",
                                             "(",
                                             ")",
                                             ", ",
                                             "floordiv(",
                                             "mod(",
                                             "max(",
                                             "min(",
                                             " // ",
                                             " % ",
                                             " >= ",
                                             " <= ",
                                             " == ",
                                             " < ",
                                             " > ",
                                             "9223372036854775807",
                                             "-9223372036854775808",
                                             "_",
                                             "...",
                                             "2*a + 1",
                                             "a*b",
                                             "a - 1",
                                             "4*n",
                                             "\xff",
                                             "\t",
                                             "\xc3\xa9",
                                             "\x01",
                                             "10",
                                             "64",
                                             "k"};
    constexpr size_t kNum = sizeof kFragments / sizeof kFragments[0];
    std::string s;
    size_t len = U8() % 12;
    for (size_t i = 0; i < len; ++i) {
      uint8_t b = U8();
      if (b < 0xF0) {
        s += kFragments[b % kNum];
      } else {
        uint8_t c = U8();
        s += static_cast<char>(c == 0 ? 1 : c);
      }
    }
    return s;
  }
  // Names: mostly a few fixed ones (so inputs meet), sometimes fuzzed text.
  std::string Name() {
    static const char* const kNames[] = {"a", "b", "n", "x", "y", "batch", "seq", "w"};
    if (U8() < 224) return kNames[U8() % 8];
    return Text();
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

template <typename T>
T* Sentinel() {
  static char byte;
  return reinterpret_cast<T*>(&byte);
}

struct ErrorSlot {
  shp_error_t* error;
  shp_code_t code;
  std::string message;
};

struct Dim {
  const shp_dim_t* dim;
  shp_scope_t* scope;
};

struct Tensor {
  const shp_tensor_t* tensor;
  shp_scope_t* scope;
  int32_t dtype;
  enum Kind { kOp, kData, kDimInput } kind;
  std::string name;  // of inputs
  // Concrete shape at valuation k, when every dim evaluates and this tensor and its operands
  // have at most kMaxElements elements there.
  std::array<bool, kNumVals> sized{};
  std::array<std::vector<int64_t>, kNumVals> shape;
};

// What running a program needs: its inputs and outputs at the valuations where it is small.
struct Meta {
  std::vector<std::string> input_names;
  std::vector<int32_t> input_dtypes;
  std::vector<bool> dim_input;
  std::vector<std::array<std::vector<int64_t>, kNumVals>> input_shapes;
  std::vector<int32_t> output_dtypes;
  std::vector<std::array<std::vector<int64_t>, kNumVals>> output_shapes;
  std::array<bool, kNumVals> runnable{};
};

struct ProgramSlot {
  shp_program_t* program;
  std::shared_ptr<const Meta> meta;  // null for a program loaded from altered bytes
};

struct BufferSlot {
  shp_buffer_t* buffer;
  std::shared_ptr<const Meta> meta;
};

struct LastRun {
  int k = -1;
  std::vector<std::vector<uint8_t>> inputs;
  std::vector<std::vector<uint8_t>> outputs;
};

struct RuntimeSlot {
  shp_runtime_t* runtime;
  std::shared_ptr<const Meta> meta;
  LastRun last;
};

struct ArraySlot {
  shp_array_t* array;
  std::unique_ptr<std::vector<uint8_t>> borrowed;  // memory of a wrapped array
};

// The element types (shp_dtype_t: f32 f64 i32 i64 bool, then the narrow f16 bf16 i8 u8 i16 u16
// u32 u64).
constexpr int32_t kNumDTypes = 13;

size_t DTypeSize(int32_t dtype) {
  static const size_t kSize[kNumDTypes] = {4, 8, 4, 8, 1, 2, 2, 1, 1, 2, 2, 4, 8};
  return dtype >= 0 && dtype < kNumDTypes ? kSize[dtype] : 0;
}

class Session {
 public:
  explicit Session(Reader* in) : in_(*in) {}
  ~Session() { Teardown(); }

  void Step();
  void Teardown();

 private:
  // ---- Errors --------------------------------------------------------------------------------

  // Checks the error's invariants; keeps a few errors alive for a while (their messages must
  // not change), destroys the others. Returns the code (SHP_OK for NULL).
  shp_code_t Check(shp_error_t* e, const char* call) {
    ++stats.calls;
    // SHP_FUZZ_TRACE=1 lists the calls: how to see what a seed reaches.
    static const bool trace = std::getenv("SHP_FUZZ_TRACE") != nullptr;
    if (trace) {
      std::fprintf(stderr, "  %s: %s\n", call, e ? shp_error_message(e) : "ok");
    }
    if (e == nullptr) return SHP_OK;
    ++stats.errors;
    shp_code_t code = shp_error_code(e);
    if (code < SHP_INVALID_ARGUMENT || code > SHP_INTERNAL)
      Fail(std::string(call) + ": error code " + std::to_string(code) + " is not in the enum");
    if (code == SHP_INTERNAL) Fail(std::string(call) + ": SHP_INTERNAL: " + shp_error_message(e));
    const char* m = shp_error_message(e);
    if (m == nullptr) Fail(std::string(call) + ": NULL message");
    size_t n = std::strlen(m);
    if (n == 0) Fail(std::string(call) + ": empty message");
    if (n > kMaxMessage) Fail(std::string(call) + ": message of " + std::to_string(n) + " bytes");
    if (!ValidUtf8(reinterpret_cast<const unsigned char*>(m), n))
      Fail(std::string(call) + ": message is not valid UTF-8: " + m);
    const char* text = shp_code_string(code);
    if (text == nullptr || *text == '\0') Fail("shp_code_string gave no text");
    if (errors_.size() < kMaxErrors && in_.OneIn(4)) {
      errors_.push_back({e, code, m});
    } else {
      shp_error_destroy(e);
    }
    return code;
  }

  // For calls with an out handle: checks the error, that `out` is untouched on error and
  // non-NULL on success.
  template <typename T>
  bool Got(shp_error_t* e, T* out, const char* call) {
    shp_code_t code = Check(e, call);
    if (code != SHP_OK) {
      if (out != Sentinel<T>()) Fail(std::string(call) + ": out-param written on error");
      return false;
    }
    if (out == nullptr || out == Sentinel<T>())
      Fail(std::string(call) + ": success without an out handle");
    return true;
  }

  void CheckKeptErrors() {
    for (const ErrorSlot& s : errors_) {
      if (shp_error_code(s.error) != s.code || s.message != shp_error_message(s.error))
        Fail("a kept error changed");
    }
  }

  // ---- Picking handles ---------------------------------------------------------------------

  shp_scope_t* PickScope() {
    if (scopes_.empty() || in_.Null()) return nullptr;
    return scopes_[in_.Pick(scopes_.size())];
  }
  // A dim, mostly of `scope` when given (else of any scope); NULL rarely.
  const Dim* PickDim(shp_scope_t* scope = nullptr) {
    if (dims_.empty()) return nullptr;
    if (scope != nullptr && !in_.OneIn(8)) {
      std::vector<const Dim*> same;
      for (const Dim& d : dims_)
        if (d.scope == scope) same.push_back(&d);
      if (!same.empty()) return same[same.size() - 1 - in_.Pick(same.size())];
    }
    return &dims_[dims_.size() - 1 - in_.Pick(dims_.size())];
  }
  const shp_dim_t* DimOrNull(const Dim* d) { return d == nullptr || in_.Null() ? nullptr : d->dim; }
  // A tensor, mostly recent and of the same scope as `like`.
  Tensor* PickTensor(const Tensor* like = nullptr) {
    if (tensors_.empty()) return nullptr;
    if (like != nullptr && !in_.OneIn(8)) {
      std::vector<Tensor*> same;
      for (Tensor& t : tensors_)
        if (t.scope == like->scope) same.push_back(&t);
      if (!same.empty()) return same[same.size() - 1 - in_.Pick(same.size())];
    }
    return &tensors_[tensors_.size() - 1 - in_.Pick(tensors_.size())];
  }
  const shp_tensor_t* TensorOrNull(const Tensor* t) {
    return t == nullptr || in_.Null() ? nullptr : t->tensor;
  }
  // `rank` dims of the scope (or of others, or NULL entries when `nulls`).
  std::vector<const shp_dim_t*> Dims(shp_scope_t* scope, size_t rank, bool nulls) {
    std::vector<const shp_dim_t*> out;
    for (size_t i = 0; i < rank; ++i) {
      const Dim* d = PickDim(scope);
      out.push_back(d == nullptr || (nulls && in_.Null()) ? nullptr : d->dim);
    }
    return out;
  }
  std::vector<int64_t> Axes(size_t n) {
    std::vector<int64_t> axes;
    for (size_t i = 0; i < n; ++i) axes.push_back(in_.OneIn(16) ? in_.Int() : in_.Pick(7) - 3);
    return axes;
  }

  // ---- Dims ----------------------------------------------------------------------------------

  void AddDim(const shp_dim_t* d, shp_scope_t* scope) {
    for (const Dim& x : dims_)
      if (x.dim == d) return;
    if (dims_.size() >= kMaxDims) dims_.erase(dims_.begin());
    dims_.push_back({d, scope});
  }

  // Whether `d` uses an unbacked (data-dependent) variable of `scope`.
  bool HasUnbacked(const shp_dim_t* d, shp_scope_t* scope) {
    size_t count = 0;
    if (Check(shp_dim_variables(d, nullptr, 0, &count), "shp_dim_variables") != SHP_OK)
      Fail("shp_dim_variables failed on a valid dim");
    std::vector<const char*> names(count);
    size_t again = 0;
    if (Check(shp_dim_variables(d, names.data(), count, &again), "shp_dim_variables") != SHP_OK)
      Fail("shp_dim_variables failed on a valid dim");
    for (const char* name : names) {
      for (size_t i = 0; i < shp_scope_variable_count(scope); ++i) {
        const char* v = shp_scope_variable_name(scope, i);
        if (v != nullptr && std::strcmp(v, name) == 0 && shp_scope_variable_is_unbacked(scope, i))
          return true;
      }
    }
    return false;
  }

  // The value of `d` with every variable set to `value`; false when it does not evaluate.
  bool Evaluate(const shp_dim_t* d, int64_t value, int64_t* out) {
    size_t count = 0;
    if (Check(shp_dim_variables(d, nullptr, 0, &count), "shp_dim_variables") != SHP_OK)
      Fail("shp_dim_variables failed on a valid dim");
    std::vector<const char*> names(count);
    size_t again = 0;
    if (Check(shp_dim_variables(d, names.data(), count, &again), "shp_dim_variables") != SHP_OK ||
        again != count)
      Fail("shp_dim_variables disagrees with its size query");
    std::vector<int64_t> values(count, value);
    int64_t v = 0x5A5A;
    shp_code_t code =
        Check(shp_dim_evaluate(d, names.data(), values.data(), count, &v), "shp_dim_evaluate");
    if (code != SHP_OK) {
      if (v != 0x5A5A) Fail("shp_dim_evaluate wrote its result on error");
      return false;
    }
    *out = v;
    return true;
  }

  // Print, parse back: the same interned dim.
  void RoundTrip(const Dim& d) {
    size_t len = 0;
    if (Check(shp_dim_to_string(d.dim, nullptr, in_.U8(), &len), "shp_dim_to_string") != SHP_OK)
      Fail("shp_dim_to_string size query failed");
    std::string text(len + 1, '\x7f');
    size_t cap = in_.OneIn(4) ? in_.Pick(len + 2) : len + 1;
    size_t len2 = 0;
    if (Check(shp_dim_to_string(d.dim, &text[0], cap, &len2), "shp_dim_to_string") != SHP_OK ||
        len2 != len)
      Fail("shp_dim_to_string disagrees with its size query");
    if (cap > 0 && text[std::min(cap - 1, len)] != '\0')
      Fail("shp_dim_to_string did not terminate within cap");
    if (cap > len) {
      text.resize(len);
      const shp_dim_t* back = Sentinel<const shp_dim_t>();
      if (!Got(shp_dim_parse(d.scope, text.c_str(), &back), back, "shp_dim_parse"))
        Fail("printed dim does not parse back: " + text);
      // Facts added since the dim was built (shp_scope_check) may fold a max/min when the
      // text is parsed again: then the two must be provably equal.
      int32_t truth = -1;
      if (back != d.dim &&
          (Check(shim_dim_compare(back, SHP_CMP_EQ, d.dim, &truth), "shp_dim_compare") != SHP_OK ||
           truth != SHP_TRUE))
        Fail("printed dim parses back to an unequal dim: " + text);
    }
  }

  void DimQueries(const Dim& d) {
    int64_t lo = 7, hi = 7;
    shp_code_t code = Check(shp_dim_bounds(d.dim, &lo, &hi), "shp_dim_bounds");
    if (code == SHP_OK && lo > hi) Fail("bounds out of order");
    if (code != SHP_OK && (lo != 7 || hi != 7)) Fail("shp_dim_bounds wrote on error");
    static const int32_t kReflexive[] = {SHP_CMP_EQ, SHP_CMP_LE, SHP_CMP_GE};
    int32_t truth = -1;
    int32_t op = kReflexive[in_.Pick(3)];
    if (Check(shim_dim_compare(d.dim, op, d.dim, &truth), "shp_dim_compare") == SHP_OK &&
        truth != SHP_TRUE)
      Fail("a dim does not compare equal to itself");
    int64_t c = 0;
    if (shp_dim_is_constant(d.dim, &c)) {
      const shp_dim_t* k = Sentinel<const shp_dim_t>();
      if (Got(shp_dim_constant(d.scope, c, &k), k, "shp_dim_constant") && k != d.dim)
        Fail("a constant dim is not interned");
    }
  }

  void DimOp(uint8_t which) {
    const Dim* a = PickDim();
    shp_scope_t* scope = a ? a->scope : nullptr;
    const Dim* b = PickDim(scope);
    const shp_dim_t* x = DimOrNull(a);
    const shp_dim_t* y = DimOrNull(b);
    const shp_dim_t* out = Sentinel<const shp_dim_t>();
    shp_error_t* e;
    const char* call;
    switch (which % 9) {
      case 0:
        e = shp_dim_add(x, y, &out), call = "shp_dim_add";
        break;
      case 1:
        e = shp_dim_sub(x, y, &out), call = "shp_dim_sub";
        break;
      case 2:
        e = shp_dim_mul(x, y, &out), call = "shp_dim_mul";
        break;
      case 3:
        e = shp_dim_floordiv(x, y, &out), call = "shp_dim_floordiv";
        break;
      case 4:
        e = shp_dim_mod(x, y, &out), call = "shp_dim_mod";
        break;
      case 5:
        e = shp_dim_max(x, y, &out), call = "shp_dim_max";
        break;
      case 6:
        e = shp_dim_min(x, y, &out), call = "shp_dim_min";
        break;
      case 7:
        e = shp_dim_neg(x, &out), call = "shp_dim_neg";
        y = x;
        break;
      default: {
        int64_t exponent = in_.OneIn(8) ? in_.Int() : in_.Pick(4);
        e = shp_dim_pow(x, exponent, &out), call = "shp_dim_pow";
        y = x;
      }
    }
    if (!Got(e, out, call)) return;
    if (x == nullptr || y == nullptr) Fail(std::string(call) + ": accepted NULL");
    if (b != nullptr && y == b->dim && a->scope != b->scope)
      Fail(std::string(call) + ": combined dims of two scopes");
    AddDim(out, a->scope);
  }

  // ---- Tensors -------------------------------------------------------------------------------

  // Registers a traced tensor and sizes it at every valuation (operands must be sized too).
  void AddTensor(const shp_tensor_t* t, shp_scope_t* scope, Tensor::Kind kind,
                 const std::string& name, const std::vector<const Tensor*>& operands) {
    ++stats.tensors;
    Tensor r;
    r.tensor = t;
    r.scope = scope;
    r.kind = kind;
    r.name = name;
    r.dtype = shim_tensor_dtype(t);
    if (r.dtype < 0 || r.dtype >= kNumDTypes) Fail("a traced tensor has no valid dtype");
    size_t rank = 0;
    if (Check(shp_tensor_shape(t, nullptr, 0, &rank), "shp_tensor_shape") != SHP_OK)
      Fail("shp_tensor_shape failed on a tensor");
    std::vector<const shp_dim_t*> dims(rank);
    size_t again = 0;
    if (Check(shp_tensor_shape(t, dims.data(), rank, &again), "shp_tensor_shape") != SHP_OK ||
        again != rank)
      Fail("shp_tensor_shape disagrees with its size query");
    for (const shp_dim_t* d : dims) {
      if (d == nullptr) Fail("a tensor has a NULL dim");
      AddDim(d, scope);
    }
    // A data-dependent dim (an unbacked variable: nonzero, boolean_mask, size_from_value) has
    // no value at a valuation: such tensors are never sized, so programs with them are built,
    // saved, loaded and dry-run but not run against predicted shapes.
    bool data_dependent = false;
    for (const shp_dim_t* d : dims) data_dependent = data_dependent || HasUnbacked(d, scope);
    for (int k = 0; k < kNumVals; ++k) {
      bool ok = !data_dependent;
      for (const Tensor* o : operands) ok &= o->sized[k];
      int64_t elements = 1;
      for (size_t i = 0; ok && i < rank; ++i) {
        int64_t v;
        ok = Evaluate(dims[i], k + 1, &v) && v >= 0 && v <= kMaxElements;
        if (ok) {
          elements *= v;
          ok = elements <= kMaxElements;
          r.shape[k].push_back(v);
        }
      }
      r.sized[k] = ok;
      if (!ok) r.shape[k].clear();
    }
    if (tensors_.size() >= kMaxTensors) tensors_.erase(tensors_.begin());
    tensors_.push_back(std::move(r));
  }

  void TensorOp(uint8_t which);

  // ---- Programs, runtimes ------------------------------------------------------------------

  void CreateProgram();
  void QueryProgram(const ProgramSlot& slot);
  void CreateVariants();
  void LoadProgram();
  void CreateRuntime();
  void Run(RuntimeSlot* slot, bool perturb);
  void Rerun(RuntimeSlot* slot);
  void DryRun(RuntimeSlot* slot);
  void ArrayOp(uint8_t which);
  void Destroy(uint8_t which);

  Reader& in_;
  std::vector<shp_scope_t*> scopes_;
  std::vector<Dim> dims_;
  std::vector<Tensor> tensors_;
  std::vector<ProgramSlot> programs_;
  std::vector<BufferSlot> buffers_;
  std::vector<RuntimeSlot> runtimes_;
  std::vector<shp_runtime_options_t*> runtime_options_;
  std::vector<shp_load_options_t*> load_options_;
  std::vector<ArraySlot> arrays_;
  std::vector<ErrorSlot> errors_;
  std::vector<shp_bindings_t*> bindings_;
};

void Session::TensorOp(uint8_t which) {
  const shp_tensor_t* out = Sentinel<const shp_tensor_t>();
  shp_scope_t* scope = nullptr;
  std::vector<const Tensor*> operands;
  Tensor::Kind kind = Tensor::kOp;
  std::string name;
  shp_error_t* e = nullptr;
  const char* call = "";
  bool null_arg = false;  // a required argument was NULL: the call must fail
  Tensor* x = PickTensor();
  // Operand checks, from the tensor table (a missing one is a NULL argument).
  auto operand = [&](Tensor* t) -> const shp_tensor_t* {
    const shp_tensor_t* p = TensorOrNull(t);
    if (p == nullptr) null_arg = true;
    if (t != nullptr) operands.push_back(t);
    return p;
  };
  switch (which % 23) {
    case 0: {  // data input from a spec
      scope = PickScope();
      name = in_.Name();
      std::string spec = in_.OneIn(3) ? in_.Text() : std::string(in_.OneIn(2) ? "n, 3" : "a, b");
      const char* spec_arg = in_.Null() ? nullptr : spec.c_str();
      null_arg = scope == nullptr || spec_arg == nullptr;
      e = shim_tensor_input(scope, name.c_str(), in_.Enum(kNumDTypes), spec_arg, &out);
      call = "shp_tensor_input";
      kind = Tensor::kData;
      break;
    }
    case 1: {  // data input from dims
      scope = PickScope();
      name = in_.Name();
      size_t rank = in_.Pick(kMaxRank + 1);
      std::vector<const shp_dim_t*> dims = Dims(scope, rank, true);
      for (const shp_dim_t* d : dims) null_arg |= d == nullptr;
      null_arg |= scope == nullptr;
      e = shim_tensor_input_dims(scope, name.c_str(), in_.Enum(kNumDTypes), dims.data(), rank,
                                 &out);
      call = "shp_tensor_input_dims";
      kind = Tensor::kData;
      break;
    }
    case 2: {  // dim input
      scope = PickScope();
      name = in_.Name();
      null_arg = scope == nullptr;
      e = shp_tensor_dim_input(scope, name.c_str(), &out);
      call = "shp_tensor_dim_input";
      kind = Tensor::kDimInput;
      break;
    }
    case 3: {  // constant
      scope = PickScope();
      int32_t dtype = in_.Enum(kNumDTypes);
      size_t rank = in_.Pick(3);
      std::vector<int64_t> shape;
      int64_t elements = 1;
      for (size_t i = 0; i < rank; ++i) {
        shape.push_back(in_.OneIn(16) ? in_.Int() : in_.Pick(4));
        elements *= std::max<int64_t>(0, std::min<int64_t>(shape.back(), 3));
      }
      size_t nbytes = static_cast<size_t>(elements) * DTypeSize(dtype);
      if (in_.OneIn(8)) nbytes += in_.Pick(3);
      std::vector<uint8_t> data(nbytes);
      for (uint8_t& byte : data)
        byte = dtype == SHP_BOOL && !in_.OneIn(16) ? in_.U8() & 1 : in_.U8();
      null_arg = scope == nullptr;
      e = shim_tensor_constant(scope, dtype, shape.data(), rank,
                               data.empty() ? nullptr : data.data(), nbytes, &out);
      call = "shp_tensor_constant";
      break;
    }
    case 4: {
      int32_t op = in_.Enum(17);
      e = shim_tensor_unary(op, operand(x), &out), call = "shp_tensor_unary";
      break;
    }
    case 5: {
      int32_t op = in_.Enum(11);
      const shp_tensor_t* a = operand(x);
      e = shim_tensor_binary(op, a, operand(PickTensor(x)), &out), call = "shp_tensor_binary";
      break;
    }
    case 6: {
      int32_t op = in_.Enum(6);
      const shp_tensor_t* a = operand(x);
      e = shim_tensor_compare(a, op, operand(PickTensor(x)), &out), call = "shp_tensor_compare";
      break;
    }
    case 7: {
      const shp_tensor_t* p = operand(x);
      const shp_tensor_t* t = operand(PickTensor(x));
      const shp_tensor_t* f = operand(PickTensor(x));
      e = shp_tensor_select(p, t, f, &out), call = "shp_tensor_select";
      break;
    }
    case 8: {
      const shp_tensor_t* t = operand(x);
      e = shim_tensor_convert(t, in_.Enum(kNumDTypes), &out), call = "shp_tensor_convert";
      break;
    }
    case 9:
    case 10: {  // broadcast_to, reshape (one NULL entry allowed)
      size_t rank = in_.Pick(kMaxRank + 1);
      std::vector<const shp_dim_t*> dims = Dims(x ? x->scope : nullptr, rank, which % 22 == 10);
      const shp_tensor_t* t = operand(x);
      if (which % 22 == 9) {
        for (const shp_dim_t* d : dims) null_arg |= d == nullptr;
        e = shp_tensor_broadcast_to(t, dims.data(), rank, &out), call = "shp_tensor_broadcast_to";
      } else {
        e = shp_tensor_reshape(t, dims.data(), rank, &out), call = "shp_tensor_reshape";
      }
      break;
    }
    case 11: {  // transpose: a permutation, or not
      size_t rank = x && !x->shape[0].empty() ? x->shape[0].size() : in_.Pick(kMaxRank + 1);
      if (in_.OneIn(8)) rank = in_.Pick(kMaxRank + 2);
      std::vector<int64_t> perm(rank);
      for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(i);
      for (size_t i = rank; i > 1; --i) std::swap(perm[i - 1], perm[in_.Pick(i)]);
      if (rank > 0 && in_.OneIn(8)) perm[in_.Pick(rank)] = in_.Int();
      e = shp_tensor_transpose(operand(x), perm.data(), rank, &out), call = "shp_tensor_transpose";
      break;
    }
    case 12: {
      size_t n = 1 + in_.Pick(3);
      std::vector<const shp_tensor_t*> xs;
      for (size_t i = 0; i < n; ++i) xs.push_back(operand(i == 0 ? x : PickTensor(x)));
      if (in_.OneIn(16)) n = 0, null_arg = true;
      e = shp_tensor_concatenate(xs.data(), n, in_.Pick(5) - 2, &out);
      call = "shp_tensor_concatenate";
      break;
    }
    case 13: {  // slice
      size_t rank = in_.Pick(kMaxRank + 1);
      shp_scope_t* s = x ? x->scope : nullptr;
      std::vector<const shp_dim_t*> start = Dims(s, rank, true), limit = Dims(s, rank, true);
      std::vector<int64_t> strides;
      for (size_t i = 0; i < rank; ++i)
        strides.push_back(in_.OneIn(8) ? in_.Int() : 1 + in_.Pick(3));
      const shp_tensor_t* t = operand(x);
      const shp_dim_t* const* starts = in_.OneIn(3) ? nullptr : start.data();
      const shp_dim_t* const* limits = in_.OneIn(3) ? nullptr : limit.data();
      const int64_t* steps = in_.OneIn(3) ? nullptr : strides.data();
      e = shp_tensor_slice(t, starts, limits, steps, rank, &out);
      call = "shp_tensor_slice";
      break;
    }
    case 14: {  // pad
      size_t rank = in_.Pick(kMaxRank + 1);
      shp_scope_t* s = x ? x->scope : nullptr;
      std::vector<const shp_dim_t*> low = Dims(s, rank, false), high = Dims(s, rank, false);
      for (size_t i = 0; i < rank; ++i) null_arg |= low[i] == nullptr || high[i] == nullptr;
      double value = static_cast<double>(in_.Int());
      e = shp_tensor_pad(operand(x), low.data(), high.data(), rank, value, &out);
      call = "shp_tensor_pad";
      break;
    }
    case 15: {
      std::vector<int64_t> axes = Axes(in_.Pick(3));
      int32_t op = in_.Enum(5);
      const shp_tensor_t* t = operand(x);
      bool keepdims = in_.OneIn(2);
      e = shim_tensor_reduce(op, t, axes.data(), axes.size(), keepdims, &out);
      call = "shp_tensor_reduce";
      break;
    }
    case 16: {
      const shp_tensor_t* a = operand(x);
      e = shp_tensor_matmul(a, operand(PickTensor(x)), &out), call = "shp_tensor_matmul";
      break;
    }
    case 17: {
      const shp_tensor_t* a = operand(x);
      const shp_tensor_t* b = operand(PickTensor(x));
      size_t nb = in_.Pick(2), nc = in_.Pick(3);
      std::vector<int64_t> lb = Axes(nb), rb = Axes(nb), lc = Axes(nc), rc = Axes(nc);
      e = shp_tensor_dot_general(a, b, lb.data(), rb.data(), nb, lc.data(), rc.data(), nc, &out);
      call = "shp_tensor_dot_general";
      break;
    }
    case 18: {
      scope = PickScope();
      size_t rank = in_.Pick(kMaxRank + 1);
      std::vector<const shp_dim_t*> dims = Dims(scope, rank, false);
      for (const shp_dim_t* d : dims) null_arg |= d == nullptr;
      null_arg |= scope == nullptr;
      int32_t dtype = in_.Enum(kNumDTypes);
      int64_t axis = static_cast<int64_t>(in_.Pick(5)) - 2;
      e = shim_tensor_iota(scope, dtype, dims.data(), rank, axis, &out);
      call = "shp_tensor_iota";
      break;
    }
    case 19: {
      int64_t axis = in_.OneIn(16) ? in_.Int() : in_.Pick(5) - 2;
      const shp_tensor_t* t = operand(x);
      switch (in_.Pick(3)) {
        case 0:
          e = shp_tensor_softmax(t, axis, &out), call = "shp_tensor_softmax";
          break;
        case 1:
          e = shp_tensor_layer_norm(t, axis, in_.OneIn(8) ? -1.0 : 1e-5, &out);
          call = "shp_tensor_layer_norm";
          break;
        default:
          e = shp_tensor_cumsum(t, axis, &out), call = "shp_tensor_cumsum";
      }
      break;
    }
    case 20: {
      int64_t axis = in_.Pick(5) - 2;
      const shp_tensor_t* t = operand(x);
      if (in_.OneIn(2)) {
        e = shp_tensor_take(t, operand(PickTensor(x)), axis, &out), call = "shp_tensor_take";
      } else {
        std::vector<int64_t> axes = Axes(in_.Pick(3));
        e = shp_tensor_reverse(t, axes.data(), axes.size(), &out), call = "shp_tensor_reverse";
      }
      break;
    }
    case 21: {  // data-dependent sizes: nonzero, boolean_mask, size_from_value (+ iota)
      const shp_tensor_t* t = operand(x);
      switch (in_.Pick(3)) {
        case 0:
          e = shp_tensor_nonzero(t, &out), call = "shp_tensor_nonzero";
          break;
        case 1: {
          int64_t axis = in_.OneIn(16) ? in_.Int() : in_.Pick(5) - 2;
          e = shp_tensor_boolean_mask(t, operand(PickTensor(x)), axis, &out);
          call = "shp_tensor_boolean_mask";
          break;
        }
        default: {
          const shp_dim_t* k = nullptr;
          const int64_t lo = in_.OneIn(8) ? in_.Int() : in_.Pick(3);
          const int64_t hi = in_.OneIn(8) ? INT64_MAX : lo + in_.Pick(6);
          call = "shp_tensor_size_from_value";
          e = shp_tensor_size_from_value(t, in_.OneIn(4) ? "k" : nullptr, lo, hi, &k);
          if (e == nullptr) {
            if (k == nullptr) Fail("shp_tensor_size_from_value: success without a dim");
            call = "shp_tensor_iota";
            e = shp_tensor_iota(x->scope, SHP_I64, &k, 1, 0, &out);
          }
        }
      }
      break;
    }
    default: {  // dim_value
      scope = PickScope();
      const Dim* d = PickDim(scope);
      const shp_dim_t* dim = DimOrNull(d);
      null_arg = scope == nullptr || dim == nullptr;
      e = shp_tensor_dim_value(scope, dim, &out), call = "shp_tensor_dim_value";
      break;
    }
  }
  if (!Got(e, out, call)) return;
  if (null_arg) Fail(std::string(call) + ": accepted a NULL argument");
  if (scope == nullptr) {
    if (operands.empty()) Fail(std::string(call) + ": success without a scope");
    scope = operands[0]->scope;
  }
  for (const Tensor* o : operands)
    if (o->scope != scope) Fail(std::string(call) + ": combined tensors of two scopes");
  // Copies: AddTensor may drop the oldest tensors, which `operands` point to.
  std::vector<Tensor> copies;
  for (const Tensor* o : operands) copies.push_back(*o);
  std::vector<const Tensor*> ptrs;
  for (const Tensor& c : copies) ptrs.push_back(&c);
  AddTensor(out, scope, kind, name, ptrs);
}

void Session::CreateProgram() {
  shp_scope_t* scope = PickScope();
  std::vector<const Tensor*> inputs, outputs, same;
  std::vector<const shp_tensor_t*> in_ptrs, out_ptrs;
  // Every input of the scope, rarely one left out (an output may depend on it).
  for (const Tensor& t : tensors_) {
    if (t.scope != scope) continue;
    same.push_back(&t);
    if (t.kind != Tensor::kOp && inputs.size() < 6 && !in_.OneIn(8)) inputs.push_back(&t);
  }
  if (in_.OneIn(8)) {
    Tensor* odd = PickTensor();  // a non-input, or a tensor of another scope
    if (odd != nullptr) inputs.push_back(odd);
  }
  size_t num_outputs = 1 + in_.Pick(2);
  std::vector<std::string> names;
  for (size_t i = 0; i < num_outputs; ++i) {
    const Tensor* t = same.empty() || in_.OneIn(16) ? PickTensor()
                                                    : same[same.size() - 1 - in_.Pick(same.size())];
    if (t == nullptr) return;
    outputs.push_back(t);
    names.push_back(in_.OneIn(8) ? in_.Text() : "out" + std::to_string(i));
  }
  for (const Tensor* t : inputs) in_ptrs.push_back(t->tensor);
  for (const Tensor* t : outputs) out_ptrs.push_back(t->tensor);
  std::vector<const char*> cnames;
  for (const std::string& n : names) cnames.push_back(n.c_str());
  shp_program_t* p = Sentinel<shp_program_t>();
  if (!Got(shp_program_create(scope, in_ptrs.data(), in_ptrs.size(), out_ptrs.data(), cnames.data(),
                              out_ptrs.size(), &p),
           p, "shp_program_create")) {
    return;
  }
  if (scope == nullptr) Fail("shp_program_create accepted a NULL scope");
  ++stats.programs;
  auto meta = std::make_shared<Meta>();
  if (shp_program_input_count(p) != inputs.size() || shp_program_output_count(p) != outputs.size())
    Fail("program input/output counts differ from the traced ones");
  meta->runnable.fill(true);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = *inputs[i];
    if (t.scope != scope || t.kind == Tensor::kOp) Fail("shp_program_create took a non-input");
    const char* name = shp_program_input_name(p, i);
    if (name == nullptr || t.name != name) Fail("program input name differs from the traced one");
    if (shim_program_input_role(p, i) !=
        (t.kind == Tensor::kDimInput ? SHP_INPUT_DIM : SHP_INPUT_DATA))
      Fail("program input role differs");
    if (shim_program_input_dtype(p, i) != t.dtype) Fail("program input dtype differs");
    meta->input_names.push_back(name);
    meta->input_dtypes.push_back(t.dtype);
    meta->dim_input.push_back(t.kind == Tensor::kDimInput);
    meta->input_shapes.push_back(t.shape);
    for (int k = 0; k < kNumVals; ++k) meta->runnable[k] = meta->runnable[k] && t.sized[k];
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& t = *outputs[i];
    if (t.scope != scope) Fail("shp_program_create took an output of another scope");
    if (shim_program_output_dtype(p, i) != t.dtype) Fail("program output dtype differs");
    meta->output_dtypes.push_back(t.dtype);
    meta->output_shapes.push_back(t.shape);
    for (int k = 0; k < kNumVals; ++k) meta->runnable[k] = meta->runnable[k] && t.sized[k];
  }
  // The program's checker must solve each valuation back: else the runtime would size the
  // values at another valuation.
  for (int k = 0; k < kNumVals; ++k) {
    if (!meta->runnable[k]) continue;
    std::vector<const char*> names_k;
    std::vector<const int64_t*> shapes;
    std::vector<size_t> ranks;
    const int64_t value = k + 1;
    for (size_t i = 0; i < inputs.size(); ++i) {
      names_k.push_back(meta->input_names[i].c_str());
      shapes.push_back(meta->dim_input[i] ? &value : meta->input_shapes[i][k].data());
      ranks.push_back(meta->dim_input[i] ? 0 : meta->input_shapes[i][k].size());
    }
    shp_bindings_t* b = Sentinel<shp_bindings_t>();
    if (!Got(shp_program_check_shapes(p, names_k.data(), shapes.data(), ranks.data(), inputs.size(),
                                      &b),
             b, "shp_program_check_shapes")) {
      meta->runnable[k] = false;
      continue;
    }
    for (size_t j = 0; j < shp_bindings_count(b); ++j) {
      if (shp_bindings_name(b, j) == nullptr) Fail("a binding without a name");
      if (shp_bindings_value(b, j) != value) meta->runnable[k] = false;
    }
    for (size_t o = 0; o < outputs.size() && meta->runnable[k]; ++o) {
      size_t rank = 0, again = 0;
      if (Check(shp_program_output_shape(p, o, b, nullptr, 0, &rank), "shp_program_output_shape") !=
          SHP_OK)
        Fail("shp_program_output_shape failed after a successful shape check");
      std::vector<int64_t> dims(rank);
      if (Check(shp_program_output_shape(p, o, b, dims.data(), rank, &again),
                "shp_program_output_shape") != SHP_OK ||
          again != rank)
        Fail("shp_program_output_shape disagrees with its size query");
      if (dims != meta->output_shapes[o][k])
        Fail("shp_program_output_shape differs from the traced shape");
    }
    shp_bindings_destroy(b);
  }
  if (programs_.size() >= kMaxPrograms) {
    shp_program_destroy(programs_.front().program);
    programs_.erase(programs_.begin());
  }
  programs_.push_back({p, std::move(meta)});
}

void Session::QueryProgram(const ProgramSlot& slot) {
  shp_program_t* p = slot.program;
  size_t n = shp_program_input_count(p);
  size_t i = in_.Pick(n + 2);  // sometimes out of range
  const char* name = shp_program_input_name(p, i);
  if ((name == nullptr) != (i >= n)) Fail("shp_program_input_name disagrees with the count");
  char small[8];
  size_t len = 0;
  size_t cap = in_.Pick(9);
  shp_code_t code =
      Check(shp_program_input_shape_string(p, i, in_.OneIn(4) ? nullptr : small, cap, &len),
            "shp_program_input_shape_string");
  if ((code == SHP_OK) != (i < n)) Fail("shp_program_input_shape_string and the count disagree");
  size_t m = shp_program_output_count(p);
  size_t o = in_.Pick(m + 2);
  code = Check(shp_program_output_shape_string(p, o, small, cap, &len),
               "shp_program_output_shape_string");
  if ((code == SHP_OK) != (o < m)) Fail("shp_program_output_shape_string and the count disagree");
  if (code == SHP_OK && cap > 0 && small[std::min(cap - 1, len)] != '\0')
    Fail("shape string not terminated within cap");
  for (size_t v = 0; v <= shp_program_variable_count(p); ++v) {
    if ((shp_program_variable_name(p, v) == nullptr) != (v == shp_program_variable_count(p)))
      Fail("shp_program_variable_name disagrees with the count");
  }
  for (size_t c = 0; c <= shp_program_constraint_count(p); ++c) {
    if ((shp_program_constraint_text(p, c) == nullptr) != (c == shp_program_constraint_count(p)))
      Fail("shp_program_constraint_text disagrees with the count");
  }
  for (size_t a = 0; a <= shp_program_assertion_count(p); ++a) {
    bool past = a == shp_program_assertion_count(p);
    if ((shp_program_assertion_text(p, a) == nullptr) != past ||
        (shp_program_assertion_message(p, a) == nullptr) != past)
      Fail("shp_program_assertion_* disagrees with the count");
  }
  for (size_t g = 0; g <= shp_program_guard_count(p); ++g) {
    bool past = g == shp_program_guard_count(p);
    if ((shp_program_guard_text(p, g) == nullptr) != past ||
        (shp_program_guard_message(p, g) == nullptr) != past ||
        (shp_program_guard_origin(p, g) == nullptr) != past)
      Fail("shp_program_guard_* disagrees with the count");
  }
  const size_t nv = shp_program_variant_count(p);
  if (nv < 1) Fail("a program without variants");
  for (size_t v = 0; v <= nv; ++v) {
    size_t ng = shp_program_variant_guard_count(p, v);
    if (v == nv && ng != 0) Fail("guards of a variant past the count");
    if ((shp_program_variant_guard_text(p, v, ng) != nullptr) ||
        (v < nv && ng > 0 && shp_program_variant_guard_message(p, v, ng - 1) == nullptr))
      Fail("shp_program_variant_guard_* disagrees with the count");
  }
  const int32_t exhaustive = shim_program_variants_exhaustive(p);
  if (exhaustive < SHP_FALSE || exhaustive > SHP_UNKNOWN) Fail("a truth value out of the enum");
  size_t cex_len = 0;
  if (Check(shp_program_variants_counterexample(p, nullptr, 0, &cex_len),
            "shp_program_variants_counterexample") != SHP_OK ||
      (cex_len > 0) != (exhaustive == SHP_FALSE))
    Fail("a counterexample exactly when the variants are not exhaustive");
  size_t full = 0;
  if (Check(shp_program_to_text(p, nullptr, 0, &full), "shp_program_to_text") != SHP_OK)
    Fail("shp_program_to_text size query failed");
  std::string text(full + 1, '\x7f');
  size_t full2 = 0;
  if (Check(shp_program_to_text(p, &text[0], text.size(), &full2), "shp_program_to_text") !=
          SHP_OK ||
      full2 != full || text[full] != '\0' || std::strlen(text.c_str()) != full)
    Fail("shp_program_to_text disagrees with its size query");
}

// Combines one to three programs into a multi-variant program (usually refused: their inputs
// differ), then queries it; its runs are only checked to fail cleanly or succeed.
void Session::CreateVariants() {
  std::vector<const shp_program_t*> list;
  const size_t n = 1 + in_.Pick(3);
  for (size_t k = 0; k < n; ++k) {
    list.push_back(in_.OneIn(16) ? nullptr : programs_[in_.Pick(programs_.size())].program);
  }
  shp_program_t* p = Sentinel<shp_program_t>();
  if (!Got(shp_program_create_variants(in_.Null() ? nullptr : list.data(), list.size(), &p), p,
           "shp_program_create_variants"))
    return;
  if (shp_program_variant_count(p) < list.size()) Fail("variants were lost");
  ProgramSlot slot{p, nullptr};
  QueryProgram(slot);
  if (programs_.size() >= kMaxPrograms) {
    shp_program_destroy(programs_.front().program);
    programs_.erase(programs_.begin());
  }
  programs_.push_back(slot);
}

void Session::LoadProgram() {
  if (buffers_.empty()) return;
  const BufferSlot& slot = buffers_[in_.Pick(buffers_.size())];
  const uint8_t* bytes = static_cast<const uint8_t*>(shp_buffer_data(slot.buffer));
  size_t size = shp_buffer_size(slot.buffer);
  if (bytes == nullptr || size == 0) Fail("an empty buffer");
  std::vector<uint8_t> data(bytes, bytes + size);
  bool altered = false;
  switch (in_.Pick(6)) {
    case 0:
      data.resize(in_.U16() % size), altered = true;
      break;
    case 1: {
      size_t at = in_.U16();
      at = (at | (in_.U16() << 16)) % size;
      data[at] ^= static_cast<uint8_t>(1 + in_.Pick(255)), altered = true;
      break;
    }
    default:
      break;
  }
  shp_load_options_t* options = nullptr;
  if (!load_options_.empty() && in_.OneIn(2))
    options = load_options_[in_.Pick(load_options_.size())];
  shp_program_t* p = Sentinel<shp_program_t>();
  shp_error_t* e = in_.OneIn(2) && options == nullptr
                       ? shp_program_load(data.empty() ? nullptr : data.data(), data.size(), &p)
                       : shp_program_load_with_options(data.empty() ? nullptr : data.data(),
                                                       data.size(), options, &p);
  shp_code_t code = Check(e, "shp_program_load");
  if (code != SHP_OK) {
    if (p != Sentinel<shp_program_t>()) Fail("shp_program_load wrote on error");
    if (!altered && options == nullptr) Fail("a serialized program does not load back");
    if (code != SHP_INVALID_PROGRAM && code != SHP_VERSION_MISMATCH &&
        code != SHP_INVALID_ARGUMENT && code != SHP_OUT_OF_MEMORY)
      Fail("shp_program_load failed with an undocumented code");
    return;
  }
  if (p == nullptr || p == Sentinel<shp_program_t>()) Fail("shp_program_load: no program");
  ++stats.loads;
  if (!altered) {  // canonical: serializing again gives the same bytes
    shp_buffer_t* again = Sentinel<shp_buffer_t>();
    if (!Got(shp_program_serialize(p, &again), again, "shp_program_serialize"))
      Fail("a loaded program does not serialize");
    if (shp_buffer_size(again) != size || std::memcmp(shp_buffer_data(again), bytes, size) != 0)
      Fail("serialize(load(bytes)) != bytes");
    shp_buffer_destroy(again);
  }
  if (programs_.size() >= kMaxPrograms) {
    shp_program_destroy(programs_.front().program);
    programs_.erase(programs_.begin());
  }
  // A program from altered bytes may have any sizes: never run.
  programs_.push_back({p, altered ? nullptr : slot.meta});
}

void Session::CreateRuntime() {
  if (programs_.empty()) return;
  const ProgramSlot& slot = programs_[in_.Pick(programs_.size())];
  shp_runtime_options_t* options = nullptr;
  if (!runtime_options_.empty() && !in_.OneIn(4))
    options = runtime_options_[in_.Pick(runtime_options_.size())];
  shp_runtime_t* r = Sentinel<shp_runtime_t>();
  bool null_program = in_.Null();
  // Without options the runtime would take every hardware thread: the fuzzer keeps to <= 2.
  if (options == nullptr && !null_program) return;
  if (!Got(shp_runtime_create(null_program ? nullptr : slot.program, options, &r), r,
           "shp_runtime_create")) {
    return;
  }
  if (null_program) Fail("shp_runtime_create accepted a NULL program");
  ++stats.runtimes;
  int32_t threads = shp_runtime_num_threads(r);
  if (threads < 1 || threads > 2) Fail("runtime thread count not as set");
  if (shp_runtime_simd_target(r) == nullptr) Fail("NULL SIMD target");
  if (runtimes_.size() >= kMaxRuntimes) {
    shp_runtime_destroy(runtimes_.front().runtime);
    runtimes_.erase(runtimes_.begin());
  }
  runtimes_.push_back({r, slot.meta, LastRun()});
}

// Random contents: small numbers, rarely NaN, infinities or integer extremes; bools 0/1.
void Fill(Reader* in, int32_t dtype, std::vector<uint8_t>* bytes) {
  size_t size = DTypeSize(dtype);
  if (size == 0) {  // an invalid dtype: any bytes
    for (uint8_t& b : *bytes) b = in->U8();
    return;
  }
  for (size_t at = 0; at + size <= bytes->size(); at += size) {
    uint8_t r = in->U8();
    int64_t small = static_cast<int64_t>(r % 9) - 3;
    switch (dtype) {
      case SHP_F32: {
        float v = r >= 250 ? (r & 1 ? std::numeric_limits<float>::infinity()
                                    : std::numeric_limits<float>::quiet_NaN())
                           : static_cast<float>(small) * 0.5f;
        std::memcpy(&(*bytes)[at], &v, sizeof v);
        break;
      }
      case SHP_F64: {
        double v =
            r >= 250 ? -std::numeric_limits<double>::infinity() : static_cast<double>(small) * 0.25;
        std::memcpy(&(*bytes)[at], &v, sizeof v);
        break;
      }
      case SHP_I32: {
        int32_t v = r >= 250 ? std::numeric_limits<int32_t>::min() : static_cast<int32_t>(small);
        std::memcpy(&(*bytes)[at], &v, sizeof v);
        break;
      }
      case SHP_I64: {
        int64_t v = r >= 250 ? std::numeric_limits<int64_t>::min() : small;
        std::memcpy(&(*bytes)[at], &v, sizeof v);
        break;
      }
      default:
        (*bytes)[at] = r & 1;
    }
  }
}

int64_t Elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// A run at a valuation where the program is small: outputs of the traced shapes. With
// `perturb`, one thing is wrong (a dtype, a dim, a name, a count, a NULL), and the call must
// fail or still give the right shapes.
void Session::Run(RuntimeSlot* slot, bool perturb) {
  if (slot->meta == nullptr) return;
  const Meta& m = *slot->meta;
  std::vector<int> ks;
  for (int k = 0; k < kNumVals; ++k)
    if (m.runnable[k]) ks.push_back(k);
  if (ks.empty()) return;
  int k = ks[in_.Pick(ks.size())];
  size_t n = m.input_names.size();
  std::vector<std::vector<uint8_t>> data(n);
  std::vector<std::vector<int64_t>> shapes(n);
  std::vector<int32_t> dtypes(m.input_dtypes);
  std::vector<std::string> names(m.input_names);
  for (size_t i = 0; i < n; ++i) {
    shapes[i] = m.dim_input[i] ? std::vector<int64_t>() : m.input_shapes[i][k];
    data[i].resize(static_cast<size_t>(Elements(shapes[i])) * DTypeSize(dtypes[i]));
    if (m.dim_input[i]) {
      int64_t value = k + 1;
      data[i].resize(sizeof value);
      std::memcpy(data[i].data(), &value, sizeof value);
    } else {
      Fill(&in_, dtypes[i], &data[i]);
    }
  }
  bool wrong = false;
  size_t num_outputs = m.output_dtypes.size();
  bool positional = in_.OneIn(3);
  // Into arrays of the table (any dtype and shape; distinct, so they do not overlap).
  const bool into_table = perturb && !arrays_.empty() && in_.OneIn(4);
  if (perturb && n > 0 && !into_table) {
    size_t i = in_.Pick(n);
    switch (in_.Pick(5)) {
      case 0:  // another dtype (data of its size)
        dtypes[i] = (dtypes[i] + 1 + static_cast<int32_t>(in_.Pick(kNumDTypes - 1))) % kNumDTypes;
        data[i].assign(static_cast<size_t>(Elements(shapes[i])) * DTypeSize(dtypes[i]), 0);
        wrong = true;
        break;
      case 1:  // one dim one more or one less (at most 5: sizes stay small)
        if (!shapes[i].empty()) {
          int64_t& d = shapes[i][in_.Pick(shapes[i].size())];
          d = d > 0 && in_.OneIn(2) ? d - 1 : std::min<int64_t>(d + 1, 5);
          data[i].assign(static_cast<size_t>(Elements(shapes[i])) * DTypeSize(dtypes[i]), 0);
        }
        break;  // may still be valid (e.g. a broadcast axis): not necessarily wrong
      case 2:   // a wrong name
        names[i] = in_.Name() + "?";
        positional = false;
        wrong = names[i] != m.input_names[i];
        break;
      case 3:
        num_outputs += 1 + in_.Pick(2);
        wrong = true;
        break;
      default:  // a missing input
        data.pop_back(), shapes.pop_back(), dtypes.pop_back(), names.pop_back();
        wrong = true;
    }
  }
  std::vector<shp_array_t*> arrays;
  std::vector<const char*> cnames;
  for (size_t i = 0; i < data.size(); ++i) {
    shp_array_t* a = Sentinel<shp_array_t>();
    bool ok = Got(shim_array_wrap(dtypes[i], shapes[i].data(), shapes[i].size(),
                                  data[i].empty() ? nullptr : data[i].data(), data[i].size(), &a),
                  a, "shp_array_wrap");
    if (!ok) Fail("shp_array_wrap refused a valid array");
    arrays.push_back(a);
    cnames.push_back(names[i].c_str());
  }
  if (into_table) {
    std::vector<size_t> order(arrays_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[in_.Pick(i)]);
    std::vector<shp_array_t*> targets;
    for (size_t o = 0; o < num_outputs; ++o)
      targets.push_back(o < order.size() ? arrays_[order[o]].array : nullptr);
    shp_code_t code =
        Check(shp_runtime_run_into(slot->runtime, positional ? nullptr : cnames.data(),
                                   arrays.data(), arrays.size(), targets.data(), num_outputs),
              "shp_runtime_run_into");
    for (shp_array_t* a : arrays) shp_array_destroy(a);
    if (code != SHP_OK) return;
    for (size_t o = 0; o < num_outputs; ++o) {
      shp_array_t* a = targets[o];
      if (a == nullptr) Fail("shp_runtime_run_into accepted a NULL output");
      std::vector<int64_t> shape(shp_array_shape(a), shp_array_shape(a) + shp_array_rank(a));
      if (shim_array_dtype(a) != m.output_dtypes[o] || shape != m.output_shapes[o][k])
        Fail("shp_runtime_run_into wrote an output array of another dtype or shape");
    }
    ++stats.runs_ok;
    return;
  }
  std::vector<shp_array_t*> outs(num_outputs + 1, Sentinel<shp_array_t>());
  shp_code_t code = Check(shp_runtime_run(slot->runtime, positional ? nullptr : cnames.data(),
                                          arrays.data(), arrays.size(), outs.data(), num_outputs),
                          "shp_runtime_run");
  for (shp_array_t* a : arrays) shp_array_destroy(a);
  if (code != SHP_OK) {
    for (shp_array_t* o : outs)
      if (o != Sentinel<shp_array_t>()) Fail("shp_runtime_run wrote an output on error");
    return;
  }
  if (wrong) Fail("shp_runtime_run accepted wrong inputs");
  LastRun run;
  run.k = k;
  run.inputs = data;
  std::vector<std::vector<int64_t>> expected_shapes;
  for (size_t i = 0; i < n; ++i)
    expected_shapes.push_back(m.dim_input[i] ? std::vector<int64_t>() : m.input_shapes[i][k]);
  bool same_shapes = shapes == expected_shapes;
  for (size_t o = 0; o < num_outputs; ++o) {
    shp_array_t* a = outs[o];
    if (a == nullptr || a == Sentinel<shp_array_t>()) Fail("shp_runtime_run: an output missing");
    if (shim_array_dtype(a) != m.output_dtypes[o]) Fail("an output has the wrong dtype");
    std::vector<int64_t> shape(shp_array_shape(a), shp_array_shape(a) + shp_array_rank(a));
    if (same_shapes && shape != m.output_shapes[o][k])
      Fail("an output shape differs from the traced shape at the valuation");
    if (shp_array_nbytes(a) != static_cast<size_t>(Elements(shape)) * DTypeSize(m.output_dtypes[o]))
      Fail("an output's byte size does not match its shape");
    const uint8_t* bytes = static_cast<const uint8_t*>(shp_array_data(a));
    run.outputs.emplace_back(bytes, bytes + shp_array_nbytes(a));
    shp_array_destroy(a);
  }
  ++stats.runs_ok;
  if (same_shapes && dtypes == m.input_dtypes) slot->last = std::move(run);
}

// Runs again on the inputs of the last successful run: the same bytes, whatever happened since.
void Session::Rerun(RuntimeSlot* slot) {
  if (slot->meta == nullptr || slot->last.k < 0) return;
  const Meta& m = *slot->meta;
  const LastRun& last = slot->last;
  size_t n = m.input_names.size();
  std::vector<shp_array_t*> arrays;
  std::vector<const char*> names;
  std::vector<std::vector<uint8_t>> data = last.inputs;  // wrapped arrays are writable
  for (size_t i = 0; i < n; ++i) {
    std::vector<int64_t> shape =
        m.dim_input[i] ? std::vector<int64_t>() : m.input_shapes[i][last.k];
    shp_array_t* a = Sentinel<shp_array_t>();
    if (in_.OneIn(2)) {
      if (!Got(shim_array_wrap(m.input_dtypes[i], shape.data(), shape.size(),
                               data[i].empty() ? nullptr : data[i].data(), data[i].size(), &a),
               a, "shp_array_wrap"))
        Fail("shp_array_wrap refused a valid array");
    } else {
      if (!Got(shim_array_create(m.input_dtypes[i], shape.data(), shape.size(), &a), a,
               "shp_array_create"))
        Fail("shp_array_create refused a valid array");
      if (shp_array_nbytes(a) != data[i].size()) Fail("shp_array_create: wrong size");
      if (!data[i].empty()) std::memcpy(shp_array_data(a), data[i].data(), data[i].size());
    }
    arrays.push_back(a);
    names.push_back(m.input_names[i].c_str());
  }
  size_t num_outputs = m.output_dtypes.size();
  std::vector<shp_array_t*> outs(num_outputs);
  bool into = in_.OneIn(2);
  shp_code_t code;
  if (into) {
    for (size_t o = 0; o < num_outputs; ++o) {
      const std::vector<int64_t>& shape = m.output_shapes[o][last.k];
      if (!Got(shim_array_create(m.output_dtypes[o], shape.data(), shape.size(), &outs[o]), outs[o],
               "shp_array_create"))
        Fail("shp_array_create refused a valid output array");
      std::memset(shp_array_data(outs[o]), 0xA5, shp_array_nbytes(outs[o]));
    }
    code = Check(shp_runtime_run_into(slot->runtime, names.data(), arrays.data(), n, outs.data(),
                                      num_outputs),
                 "shp_runtime_run_into");
  } else {
    code = Check(
        shp_runtime_run(slot->runtime, names.data(), arrays.data(), n, outs.data(), num_outputs),
        "shp_runtime_run");
  }
  for (shp_array_t* a : arrays) shp_array_destroy(a);
  if (code != SHP_OK) Fail("a runtime failed on the inputs of its last successful run");
  ++stats.reruns;
  for (size_t o = 0; o < num_outputs; ++o) {
    const uint8_t* bytes = static_cast<const uint8_t*>(shp_array_data(outs[o]));
    if (shp_array_nbytes(outs[o]) != last.outputs[o].size() ||
        (!last.outputs[o].empty() &&
         std::memcmp(bytes, last.outputs[o].data(), last.outputs[o].size()) != 0))
      Fail("re-running a runtime on the same inputs gave other bytes");
    shp_array_destroy(outs[o]);
  }
}

// A dry run on fuzzed shapes (no data is allocated), then the output shapes.
void Session::DryRun(RuntimeSlot* slot) {
  size_t n = in_.Pick(4);
  std::vector<std::string> names;
  std::vector<int32_t> dtypes;
  std::vector<std::vector<int64_t>> shapes(n);
  std::vector<const int64_t*> ptrs;
  std::vector<size_t> ranks;
  std::vector<const char*> cnames;
  for (size_t i = 0; i < n; ++i) {
    bool from_meta = slot->meta != nullptr && i < slot->meta->input_names.size() && !in_.OneIn(4);
    names.push_back(from_meta ? slot->meta->input_names[i] : in_.Name());
    dtypes.push_back(from_meta && !in_.OneIn(4) ? slot->meta->input_dtypes[i]
                                                : in_.Enum(kNumDTypes));
    size_t rank = in_.Pick(kMaxRank + 1);
    for (size_t j = 0; j < rank; ++j) shapes[i].push_back(in_.OneIn(8) ? in_.Int() : in_.Pick(6));
    if (rank == 0) shapes[i].push_back(1 + in_.Pick(4));  // a dimension input's value
    ranks.push_back(rank);
  }
  for (size_t i = 0; i < n; ++i) {
    ptrs.push_back(shapes[i].data());
    cnames.push_back(names[i].c_str());
  }
  const char* const* names_arg = in_.OneIn(4) ? nullptr : cnames.data();
  const int32_t* dtypes_arg = in_.OneIn(4) ? nullptr : dtypes.data();
  shp_code_t code = Check(
      shim_runtime_dry_run(slot->runtime, names_arg, dtypes_arg, ptrs.data(), ranks.data(), n),
      "shp_runtime_dry_run");
  int64_t dims[kMaxRank + 2];
  size_t rank = 0;
  size_t i = in_.Pick(4);
  size_t cap = in_.Pick(kMaxRank + 3);
  code = Check(shp_runtime_output_shape(slot->runtime, i, dims, cap, &rank),
               "shp_runtime_output_shape");
  (void)code;
}

void Session::ArrayOp(uint8_t which) {
  if (which % 3 == 2) {
    if (!arrays_.empty()) {
      size_t i = in_.Pick(arrays_.size());
      shp_array_destroy(arrays_[i].array);
      arrays_.erase(arrays_.begin() + i);
    }
    return;
  }
  int32_t dtype = in_.Enum(kNumDTypes);
  size_t rank = in_.Pick(kMaxRank + 1);
  std::vector<int64_t> shape;
  for (size_t i = 0; i < rank; ++i) shape.push_back(in_.OneIn(16) ? in_.Int() : in_.Pick(5));
  bool valid_shape = dtype >= 0 && dtype < kNumDTypes;
  int64_t elements = 1;
  for (int64_t d : shape) {
    valid_shape &= d >= 0 && d <= 4;
    elements *= valid_shape ? d : 1;
  }
  shp_array_t* a = Sentinel<shp_array_t>();
  std::unique_ptr<std::vector<uint8_t>> memory;
  if (which % 3 == 0) {
    // Huge valid shapes would allocate: only small ones (or invalid ones) go to create.
    if (!valid_shape && dtype >= 0 && dtype < kNumDTypes) {
      bool negative = false;
      for (int64_t d : shape) negative |= d < 0;
      if (!negative) return;  // large but valid: an allocation, not a bug
    }
    if (!Got(shim_array_create(dtype, shape.data(), rank, &a), a, "shp_array_create")) {
      if (valid_shape) Fail("shp_array_create refused a valid array");
      return;
    }
    if (shp_array_nbytes(a) != static_cast<size_t>(elements) * DTypeSize(dtype))
      Fail("shp_array_create: wrong size");
    for (size_t i = 0; i < shp_array_nbytes(a); ++i)
      if (static_cast<uint8_t*>(shp_array_data(a))[i] != 0) Fail("shp_array_create: not zeroed");
  } else {
    size_t nbytes = valid_shape ? static_cast<size_t>(elements) * DTypeSize(dtype) : in_.Pick(64);
    if (in_.OneIn(8)) nbytes += 1;
    memory.reset(new std::vector<uint8_t>(nbytes));
    Fill(&in_, dtype, memory.get());
    bool ok = Got(shim_array_wrap(dtype, shape.data(), rank,
                                  memory->empty() ? nullptr : memory->data(), nbytes, &a),
                  a, "shp_array_wrap");
    if (!ok) return;
    if (shp_array_data(a) != (memory->empty() ? shp_array_data(a) : memory->data()))
      Fail("a wrapped array does not borrow its memory");
  }
  if (shim_array_dtype(a) != dtype || shp_array_rank(a) != rank) Fail("array metadata differs");
  if (arrays_.size() >= kMaxArrays) {
    shp_array_destroy(arrays_.front().array);
    arrays_.erase(arrays_.begin());
  }
  arrays_.push_back({a, std::move(memory)});
}

void Session::Destroy(uint8_t which) {
  switch (which % 7) {
    case 0:
      if (!programs_.empty()) {
        size_t i = in_.Pick(programs_.size());
        shp_program_destroy(programs_[i].program);
        programs_.erase(programs_.begin() + i);
      }
      break;
    case 1:
      if (!buffers_.empty()) {
        size_t i = in_.Pick(buffers_.size());
        shp_buffer_destroy(buffers_[i].buffer);
        buffers_.erase(buffers_.begin() + i);
      }
      break;
    case 2:
      if (!runtimes_.empty()) {
        size_t i = in_.Pick(runtimes_.size());
        Rerun(&runtimes_[i]);
        shp_runtime_destroy(runtimes_[i].runtime);
        runtimes_.erase(runtimes_.begin() + i);
      }
      break;
    case 3:
      if (!errors_.empty()) {
        size_t i = in_.Pick(errors_.size());
        shp_error_destroy(errors_[i].error);
        errors_.erase(errors_.begin() + i);
      }
      break;
    case 4:
      if (!bindings_.empty()) {
        size_t i = in_.Pick(bindings_.size());
        shp_bindings_destroy(bindings_[i]);
        bindings_.erase(bindings_.begin() + i);
      }
      break;
    case 5:  // every destroy function accepts NULL
      shp_scope_destroy(nullptr), shp_program_destroy(nullptr), shp_buffer_destroy(nullptr);
      shp_runtime_destroy(nullptr), shp_runtime_options_destroy(nullptr);
      shp_load_options_destroy(nullptr), shp_array_destroy(nullptr), shp_error_destroy(nullptr);
      shp_bindings_destroy(nullptr);
      if (shp_error_code(nullptr) != SHP_OK || std::strcmp(shp_error_message(nullptr), "") != 0)
        Fail("the NULL error is not success");
      break;
    default:
      if (!runtime_options_.empty() && in_.OneIn(2)) {
        shp_runtime_options_destroy(runtime_options_.back());
        runtime_options_.pop_back();
      } else if (!load_options_.empty()) {
        shp_load_options_destroy(load_options_.back());
        load_options_.pop_back();
      }
  }
}

void Session::Step() {
  uint8_t op = in_.U8();
  uint8_t arg = in_.U8();
  switch (op % 24) {
    case 0: {  // scope create, with or without ranges
      if (scopes_.size() >= kMaxScopes) break;
      size_t n = in_.Pick(4);
      std::vector<std::string> texts;
      for (size_t i = 0; i < n; ++i)
        texts.push_back(in_.OneIn(2) ? in_.Text() : std::string(i % 2 ? "n >= 2" : "a <= 16"));
      std::vector<const char*> ptrs;
      for (const std::string& t : texts) ptrs.push_back(t.c_str());
      bool null_list = n > 0 && in_.Null();
      shp_scope_t* s = Sentinel<shp_scope_t>();
      shp_error_t* e;
      if (arg & 1) {
        size_t r = in_.Pick(3);
        std::vector<std::string> names;
        std::vector<int64_t> mins, maxs;
        for (size_t i = 0; i < r; ++i) {
          names.push_back(in_.Name());
          mins.push_back(in_.OneIn(4) ? in_.Int() : in_.Pick(3));
          maxs.push_back(in_.OneIn(4) ? in_.Int() : 4 + in_.Pick(60));
        }
        std::vector<const char*> cn;
        for (const std::string& nm : names) cn.push_back(nm.c_str());
        e = shp_scope_create_with_ranges(null_list ? nullptr : ptrs.data(), n, cn.data(),
                                         mins.data(), maxs.data(), r, &s);
      } else {
        e = shp_scope_create(null_list ? nullptr : ptrs.data(), n, &s);
      }
      if (Got(e, s, "shp_scope_create")) {
        if (null_list) Fail("shp_scope_create accepted a NULL list");
        scopes_.push_back(s);
      }
      break;
    }
    case 1: {  // scope destroy: its dims and tensors go with it
      if (scopes_.empty() || !in_.OneIn(3)) break;
      size_t i = in_.Pick(scopes_.size());
      shp_scope_t* s = scopes_[i];
      dims_.erase(
          std::remove_if(dims_.begin(), dims_.end(), [s](const Dim& d) { return d.scope == s; }),
          dims_.end());
      tensors_.erase(std::remove_if(tensors_.begin(), tensors_.end(),
                                    [s](const Tensor& t) { return t.scope == s; }),
                     tensors_.end());
      shp_scope_destroy(s);
      scopes_.erase(scopes_.begin() + i);
      break;
    }
    case 2: {
      shp_scope_t* s = PickScope();
      std::string name = in_.Name();
      int64_t lo = in_.OneIn(4) ? in_.Int() : in_.Pick(3);
      int64_t hi = in_.OneIn(4) ? in_.Int() : 4 + in_.Pick(60);
      if (Check(shp_scope_declare(s, in_.Null() ? nullptr : name.c_str(), lo, hi),
                "shp_scope_declare") == SHP_OK &&
          s == nullptr)
        Fail("shp_scope_declare accepted a NULL scope");
      break;
    }
    case 3: {
      shp_scope_t* s = PickScope();
      const Dim* a = PickDim(s);
      const Dim* b = PickDim(s);
      std::string message = in_.Text();
      const shp_dim_t* x = DimOrNull(a);
      int32_t op = in_.Enum(6);
      const shp_dim_t* y = DimOrNull(b);
      const char* m = in_.OneIn(2) ? nullptr : message.c_str();
      switch (arg % 4) {
        case 0:
          Check(shim_scope_check(s, x, op, y, m), "shp_scope_check");
          break;
        case 1:
          Check(shim_scope_assume(s, x, op, y, m), "shp_scope_assume");
          break;
        case 2: {
          bool out = false;
          if (Check(shim_dim_guard(x, op, y, m, in_.Null() ? nullptr : &out), "shp_dim_guard") ==
                  SHP_OK &&
              (x == nullptr || y == nullptr))
            Fail("shp_dim_guard accepted NULL");
          break;
        }
        default: {  // hints and the guard policy, then what they decide
          std::string name = in_.OneIn(4) ? in_.Name() : std::string(in_.OneIn(2) ? "n" : "a");
          const int64_t value = in_.OneIn(4) ? in_.Int() : static_cast<int64_t>(in_.Pick(20));
          const shp_code_t set =
              Check(shp_scope_set_hint(s, in_.Null() ? nullptr : name.c_str(), value),
                    "shp_scope_set_hint");
          bool has = false;
          int64_t got = 0;
          if (set == SHP_OK &&
              (Check(shp_scope_hint(s, name.c_str(), &has, &got), "shp_scope_hint") != SHP_OK ||
               !has || got != value))
            Fail("a hint that was set does not read back");
          Check(shim_scope_set_guard_policy(s, in_.OneIn(8) ? static_cast<int32_t>(in_.Int())
                                                            : static_cast<int32_t>(in_.Pick(2))),
                "shp_scope_set_guard_policy");
          break;
        }
      }
      break;
    }
    case 4: {  // scope queries
      shp_scope_t* s = PickScope();
      size_t n = shp_scope_variable_count(s);
      size_t i = in_.Pick(n + 2);
      if ((shp_scope_variable_name(s, i) == nullptr) != (i >= n))
        Fail("shp_scope_variable_name disagrees with the count");
      int64_t lo = 3, hi = 3;
      shp_code_t code = Check(shp_scope_variable_range(s, i, &lo, &hi), "shp_scope_variable_range");
      if ((code == SHP_OK) != (i < n)) Fail("shp_scope_variable_range disagrees with the count");
      if (code == SHP_OK && lo > hi) Fail("a variable range is empty");
      size_t c = shp_scope_constraint_count(s);
      size_t j = in_.Pick(c + 2);
      if ((shp_scope_constraint_text(s, j) == nullptr) != (j >= c))
        Fail("shp_scope_constraint_text disagrees with the count");
      break;
    }
    case 5: {
      shp_scope_t* s = PickScope();
      std::string text = in_.Text();
      const shp_dim_t* d = Sentinel<const shp_dim_t>();
      if (Got(shp_dim_parse(s, in_.Null() ? nullptr : text.c_str(), &d), d, "shp_dim_parse")) {
        if (s == nullptr) Fail("shp_dim_parse accepted a NULL scope");
        AddDim(d, s);
      }
      break;
    }
    case 6: {
      shp_scope_t* s = PickScope();
      const shp_dim_t* d = Sentinel<const shp_dim_t>();
      shp_error_t* e;
      if (arg & 1) {
        e = shp_dim_constant(s, in_.Int(), &d);
      } else {
        std::string name = in_.Name();
        e = shp_dim_variable(s, name.c_str(), &d);
      }
      if (Got(e, d, "shp_dim_constant/variable")) AddDim(d, s);
      break;
    }
    case 7:
    case 8:
      DimOp(arg);
      break;
    case 9:
      if (!dims_.empty()) {
        const Dim& d = dims_[dims_.size() - 1 - in_.Pick(dims_.size())];
        RoundTrip(d);
        DimQueries(d);
      }
      break;
    case 10: {  // compare two dims (maybe of two scopes), evaluate
      const Dim* a = PickDim();
      const Dim* b = PickDim(a ? a->scope : nullptr);
      int32_t truth = 9;
      const shp_dim_t* x = DimOrNull(a);
      int32_t op = in_.Enum(6);
      const shp_dim_t* y = DimOrNull(b);
      shp_code_t code = Check(shim_dim_compare(x, op, y, &truth), "shp_dim_compare");
      if (code == SHP_OK) {
        if (x == nullptr || y == nullptr) Fail("shp_dim_compare accepted NULL");
        if (truth < SHP_FALSE || truth > SHP_UNKNOWN) Fail("a truth value out of the enum");
        if (a->scope != b->scope) Fail("compared dims of two scopes");
      }
      if (a != nullptr) {
        int64_t v;
        Evaluate(a->dim, 1 + in_.Pick(4), &v);
      }
      break;
    }
    case 11: {  // shape parse, solve
      shp_scope_t* s = PickScope();
      std::string spec = in_.Text();
      int64_t like[3] = {1 + static_cast<int64_t>(in_.Pick(4)), 2, 3};
      const shp_dim_t* dims[kMaxRank];
      size_t rank = 0;
      const int64_t* like_arg = in_.OneIn(2) ? like : nullptr;
      size_t cap = in_.Pick(kMaxRank + 1);
      shp_code_t code =
          Check(shp_shape_parse(s, spec.c_str(), like_arg, 3, dims, cap, &rank), "shp_shape_parse");
      if (code == SHP_OK && arg & 1) {
        std::vector<int64_t> shape;
        for (size_t i = 0; i < rank; ++i) shape.push_back(in_.Pick(6));
        const char* specs[] = {spec.c_str()};
        const int64_t* shapes[] = {shape.data()};
        size_t ranks[] = {in_.OneIn(4) ? rank + 1 : rank};
        if (ranks[0] > shape.size()) shape.push_back(1);
        shapes[0] = shape.data();
        shp_bindings_t* b = Sentinel<shp_bindings_t>();
        if (Got(shp_scope_solve(s, 1, specs, shapes, ranks, &b), b, "shp_scope_solve")) {
          size_t count = shp_bindings_count(b);
          if (shp_bindings_name(b, count) != nullptr) Fail("a binding past the count");
          if (bindings_.size() < kMaxBindings)
            bindings_.push_back(b);
          else
            shp_bindings_destroy(b);
        }
      }
      break;
    }
    case 12:
    case 13:
    case 14:
    case 15:
      TensorOp(arg);
      break;
    case 16:
      CreateProgram();
      break;
    case 17:
      if (!programs_.empty()) {
        const ProgramSlot& slot = programs_[in_.Pick(programs_.size())];
        if (arg & 2) {
          CreateVariants();
        } else if (arg & 1) {
          QueryProgram(slot);
        } else {
          shp_buffer_t* b = Sentinel<shp_buffer_t>();
          if (Got(shp_program_serialize(slot.program, &b), b, "shp_program_serialize")) {
            if (buffers_.size() >= kMaxBuffers) {
              shp_buffer_destroy(buffers_.front().buffer);
              buffers_.erase(buffers_.begin());
            }
            buffers_.push_back({b, slot.meta});
          } else {
            Fail("a program does not serialize");
          }
        }
      }
      break;
    case 18:
      LoadProgram();
      break;
    case 19:
      if (arg & 1) {
        if (load_options_.size() >= kMaxOptions) break;
        shp_load_options_t* o = Sentinel<shp_load_options_t>();
        if (Got(shp_load_options_create(&o), o, "shp_load_options_create")) {
          size_t max_bytes = in_.OneIn(2) ? in_.Pick(64) : static_cast<size_t>(in_.Int());
          Check(shp_load_options_set_max_bytes(in_.Null() ? nullptr : o, max_bytes),
                "shp_load_options_set_max_bytes");
          load_options_.push_back(o);
        }
      } else {
        if (runtime_options_.size() >= kMaxOptions) break;
        shp_runtime_options_t* o = Sentinel<shp_runtime_options_t>();
        if (!Got(shp_runtime_options_create(&o), o, "shp_runtime_options_create")) break;
        int32_t n =
            in_.OneIn(4) ? static_cast<int32_t>(in_.Int()) : static_cast<int32_t>(in_.Pick(300));
        shp_code_t code =
            Check(shp_runtime_options_set_num_threads(o, n), "shp_runtime_options_set_num_threads");
        if ((code == SHP_OK) != (n >= 0 && n <= 256)) Fail("the thread cap is not 256");
        // The fuzzer keeps to one or two threads.
        if (Check(shp_runtime_options_set_num_threads(o, 1 + in_.Pick(2)),
                  "shp_runtime_options_set_num_threads") != SHP_OK)
          Fail("1 or 2 threads refused");
        Check(shp_runtime_options_set_plan_cache_capacity(o, in_.Pick(3)),
              "shp_runtime_options_set_plan_cache_capacity");
        runtime_options_.push_back(o);
      }
      break;
    case 20:
      CreateRuntime();
      break;
    case 21:
      if (!runtimes_.empty()) {
        RuntimeSlot* slot = &runtimes_[in_.Pick(runtimes_.size())];
        switch (arg % 4) {
          case 0:
            Run(slot, false);
            break;
          case 1:
            Run(slot, true);
            break;
          case 2:
            DryRun(slot);
            break;
          default:
            Rerun(slot);
        }
      }
      break;
    case 22:
      ArrayOp(arg);
      break;
    default:
      Destroy(arg);
  }
  CheckKeptErrors();
}

void Session::Teardown() {
  // Every runtime still gives its last results, then everything goes, in an order the
  // input chooses (owned handles may be destroyed in any order).
  for (RuntimeSlot& r : runtimes_) Rerun(&r);
  bool scopes_first = in_.OneIn(2);
  if (scopes_first) {
    for (shp_scope_t* s : scopes_) shp_scope_destroy(s);
    scopes_.clear();
  }
  for (RuntimeSlot& r : runtimes_) shp_runtime_destroy(r.runtime);
  for (ProgramSlot& p : programs_) shp_program_destroy(p.program);
  for (BufferSlot& b : buffers_) shp_buffer_destroy(b.buffer);
  for (shp_runtime_options_t* o : runtime_options_) shp_runtime_options_destroy(o);
  for (shp_load_options_t* o : load_options_) shp_load_options_destroy(o);
  for (ArraySlot& a : arrays_) shp_array_destroy(a.array);
  for (ErrorSlot& e : errors_) shp_error_destroy(e.error);
  for (shp_bindings_t* b : bindings_) shp_bindings_destroy(b);
  for (shp_scope_t* s : scopes_) shp_scope_destroy(s);
  runtimes_.clear(), programs_.clear(), buffers_.clear(), runtime_options_.clear();
  load_options_.clear(), arrays_.clear(), errors_.clear(), bindings_.clear(), scopes_.clear();
  dims_.clear(), tensors_.clear();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > kMaxInputSize) return 0;
  ++stats.inputs;
  if (shp_abi_version() != SHP_ABI_VERSION) Fail("ABI version mismatch");
  Reader in(data, size);
  Session session(&in);
  for (int step = 0; step < kMaxSteps && !in.done(); ++step) session.Step();
  return 0;
}
