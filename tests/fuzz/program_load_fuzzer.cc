// libFuzzer target for loading and running serialized programs (Program::Load behind
// shp_program_load, then the runtime). Any input must give a program or a clean shp::Error
// (kInvalidProgram, kVersionMismatch, kInvalidArgument) — never a crash, hang, leak or
// unbounded allocation. Invariants checked for every input that loads:
//   1. serializing the program, loading those bytes and serializing again gives the same
//      bytes (what we write is canonical), and the listing is reproduced;
//   2. a runtime can be created (or refuses with kUnsupported), and at up to two small
//      valuations that satisfy the program's constraints, with inputs of the right dtypes
//      and shapes, a dry run and a run either fail with shp::Error or succeed; a successful
//      run gives the dry run's output shapes, and running again (plan from the cache) with
//      output buffers pre-filled with another byte pattern gives the same bytes (every
//      output byte is written, results do not depend on the cache).
// Sizes are bounded before anything runs: every value of the program (intermediates
// included) is evaluated at the valuation the runtime solves, and large ones are skipped.
// Seeds: tests/fuzz/corpus/program (copies of tests/golden/*.shpoly).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/dim/scope.h"
#include "cc/program/program.h"
#include "cc/runtime/runtime.h"
#include "cc/ir/dtype.h"
#include "tests/fuzz/fuzz_util.h"

namespace dim = shp::dim;
namespace program = shp::program;
namespace runtime = shp::runtime;
namespace trace = shp::trace;

namespace {

using shp::fuzz::Holds;
using shp::fuzz::Next;

// Elements per value and over all values at one valuation: keeps a run to milliseconds
// (a matmul on values this size is at most ~2^24 multiply-adds).
constexpr int64_t kMaxElements = 1 << 12;
constexpr int64_t kMaxTotalElements = 1 << 15;
constexpr int kValuationAttempts = 24;
constexpr int kMaxRuns = 2;

// What the inputs reached, printed at exit when SHP_FUZZ_STATS is set (tools/run_fuzzers.sh
// shows it after a replay, so a corpus that stops reaching the runtime is visible).
struct Stats {
  long inputs = 0, loaded = 0, runtimes = 0, valuations = 0, runs_ok = 0, runs_refused = 0;
  ~Stats() {
    if (std::getenv("SHP_FUZZ_STATS") == nullptr) return;
    std::fprintf(
        stderr,
        "program_load_fuzzer stats: %ld inputs, %ld loaded, %ld runtimes, %ld valuations run, "
        "%ld runs ok, %ld refused\n",
        inputs, loaded, runtimes, valuations, runs_ok, runs_refused);
  }
} stats;

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "program_load_fuzzer: invariant broken: %s\n", what.c_str());
  std::abort();
}

// The program's private scope: every shape expression points to it. Null when no value of
// the program has a dimension (then there is nothing to solve).
dim::Scope* ScopeOf(const program::Program& p) {
  for (size_t v = 0; v < p.num_values(); ++v) {
    const trace::TensorType& t = p.value_type(static_cast<int32_t>(v));
    if (!t.shape.empty()) return t.shape[0]->scope;
  }
  return nullptr;
}

// Evaluated shape of every value; false if one is undefined, negative or too large.
bool ValueShapes(const program::Program& p, const dim::Scope* s, const std::vector<int64_t>& values,
                 const std::vector<bool>& known, std::vector<std::vector<int64_t>>* shapes) {
  shapes->assign(p.num_values(), {});
  int64_t total = 0;
  for (size_t v = 0; v < p.num_values(); ++v) {
    int64_t elements = 1;
    for (const dim::Expr* d : p.value_type(static_cast<int32_t>(v)).shape) {
      int64_t x;
      try {
        x = s->Evaluate(d, values, known);
      } catch (const shp::Error&) {
        return false;
      }
      if (x < 0 || x > kMaxElements) return false;
      elements *= x;  // both <= 2^12 after the check below: no overflow
      if (elements > kMaxElements) return false;
      (*shapes)[v].push_back(x);
    }
    total += elements;
    if (total > kMaxTotalElements) return false;
  }
  return true;
}

// A small value of a variable inside its declared range.
int64_t PickValue(const dim::Variable& var, uint64_t* rng) {
  static const int64_t kSmall[] = {1, 2, 3, 4, 5, 7, 8, 16, 0, 6, 9, 12, 32, 64};
  uint64_t r = Next(rng);
  int64_t v;
  if (r % 4 == 0 && var.lo != dim::kNegInf && var.lo > -64 && var.lo < 64) {
    v = var.lo + static_cast<int64_t>((r >> 8) % 4);
  } else {
    v = kSmall[(r >> 8) % (sizeof kSmall / sizeof kSmall[0])];
  }
  return v;
}

// Input data: small values (valid and invalid gather indices alike) plus, rarely, extremes
// (INT_MIN / -1, division by zero, NaN, infinities) whose semantics are documented.
void FillInput(trace::DType dtype, int64_t elements, uint64_t* rng, std::vector<uint8_t>* out) {
  out->assign(static_cast<size_t>(elements) * trace::DTypeSize(dtype), 0);
  for (int64_t i = 0; i < elements; ++i) {
    uint64_t r = Next(rng);
    bool extreme = r % 16 == 0;
    int64_t small = static_cast<int64_t>((r >> 8) % 12) - 3;
    uint8_t* at = out->data() + static_cast<size_t>(i) * trace::DTypeSize(dtype);
    switch (dtype) {
      case trace::DType::kF32: {
        static const float kExt[] = {std::numeric_limits<float>::quiet_NaN(),
                                     std::numeric_limits<float>::infinity(),
                                     -std::numeric_limits<float>::infinity(), -0.0f};
        float x = extreme ? kExt[(r >> 4) % 4] : static_cast<float>(small) * 0.5f;
        std::memcpy(at, &x, sizeof x);
        break;
      }
      case trace::DType::kF64: {
        static const double kExt[] = {std::numeric_limits<double>::quiet_NaN(),
                                      std::numeric_limits<double>::infinity(),
                                      -std::numeric_limits<double>::infinity(), -0.0};
        double x = extreme ? kExt[(r >> 4) % 4] : static_cast<double>(small) * 0.5;
        std::memcpy(at, &x, sizeof x);
        break;
      }
      case trace::DType::kI32: {
        static const int32_t kExt[] = {std::numeric_limits<int32_t>::min(),
                                       std::numeric_limits<int32_t>::max(), -1, 0};
        int32_t x = extreme ? kExt[(r >> 4) % 4] : static_cast<int32_t>(small);
        std::memcpy(at, &x, sizeof x);
        break;
      }
      case trace::DType::kI64: {
        static const int64_t kExt[] = {std::numeric_limits<int64_t>::min(),
                                       std::numeric_limits<int64_t>::max(), -1, 0};
        int64_t x = extreme ? kExt[(r >> 4) % 4] : small;
        std::memcpy(at, &x, sizeof x);
        break;
      }
      case trace::DType::kBool:
        *at = static_cast<uint8_t>(r & 1);
        break;
    }
  }
}

class Sink : public runtime::OutputSink {
 public:
  Sink(const std::vector<std::vector<int64_t>>& expected, uint8_t fill)
      : expected_(expected), fill_(fill) {}
  void* Output(size_t i, trace::DType dtype, const int64_t* shape, size_t rank) override {
    if (i != outs.size() || i >= expected_.size()) Fail("output sink called out of order");
    if (std::vector<int64_t>(shape, shape + rank) != expected_[i])
      Fail("run and dry run disagree on an output shape");
    int64_t elements = 1;
    for (size_t k = 0; k < rank; ++k) elements *= shape[k];
    outs.emplace_back(static_cast<size_t>(elements) * trace::DTypeSize(dtype), fill_);
    return outs.back().data();
  }
  std::vector<std::vector<uint8_t>> outs;

 private:
  const std::vector<std::vector<int64_t>>& expected_;
  uint8_t fill_;
};

// Runs `p` at one valuation of its scope's variables. False if the valuation was not usable.
bool RunAt(const program::Program& p, runtime::Runtime* rt, const dim::Scope* s,
           const std::vector<int64_t>& values, uint64_t* rng) {
  std::vector<bool> known(values.size(), true);
  std::vector<std::vector<int64_t>> shapes;
  if (!ValueShapes(p, s, values, known, &shapes)) return false;
  const std::vector<program::Input>& decl = p.inputs();
  std::vector<std::vector<uint8_t>> data(decl.size());
  std::vector<runtime::ArrayView> views(decl.size());
  std::vector<std::string> names;
  std::vector<std::vector<int64_t>> check_shapes;
  for (size_t i = 0; i < decl.size(); ++i) {
    runtime::ArrayView& a = views[i];
    a.dtype = decl[i].type.dtype;
    names.push_back(decl[i].name);
    if (decl[i].role == program::InputRole::kDim) {
      int64_t x = decl[i].var >= 0 && static_cast<size_t>(decl[i].var) < values.size()
                      ? values[decl[i].var]
                      : 1;
      data[i].resize(sizeof x);
      std::memcpy(data[i].data(), &x, sizeof x);
      check_shapes.push_back({x});
    } else {
      const std::vector<int64_t>& shape = shapes[i];
      a.shape = shape.data();
      a.rank = shape.size();
      int64_t elements = 1;
      for (int64_t d : shape) elements *= d;
      FillInput(a.dtype, elements, rng, &data[i]);
      check_shapes.push_back(shape);
    }
    a.data = data[i].data();
  }
  // The runtime plans with the variables the program's checker solves, which need not be
  // the sampled ones when a shape does not determine them uniquely: bound those sizes too.
  try {
    program::ShapeCheck check = p.CheckShapes(names, check_shapes);
    if (s != nullptr) {
      std::vector<int64_t> solved = values;
      for (size_t k = 0; k < check.var_names.size(); ++k) {
        int32_t idx = s->FindVar(check.var_names[k]);
        // Another variant may name variables that variant 0 does not have.
        if (idx < 0 && check.variant > 0) continue;
        if (idx < 0 || static_cast<size_t>(idx) >= solved.size())
          Fail("checker solved an unknown variable");
        solved[idx] = check.var_values[k];
      }
      std::vector<std::vector<int64_t>> solved_shapes;
      if (!ValueShapes(p, s, solved, known, &solved_shapes)) return false;
    }
  } catch (const shp::Error&) {
    return false;  // shapes or constraints rejected: the runtime must reject them too
  }
  std::vector<const char*> cnames;
  for (const std::string& n : names) cnames.push_back(n.c_str());
  try {
    std::vector<std::vector<int64_t>> out_shapes =
        rt->OutputShapes(cnames.data(), views.data(), views.size());
    Sink first(out_shapes, 0x00), second(out_shapes, 0xA5);
    rt->Run(cnames.data(), views.data(), views.size(), &first);
    rt->Run(cnames.data(), views.data(), views.size(), &second);
    if (first.outs.size() != out_shapes.size() || second.outs.size() != out_shapes.size()) {
      Fail("a run did not produce every output");
    }
    for (size_t i = 0; i < first.outs.size(); ++i) {
      if (first.outs[i] != second.outs[i]) {
        Fail("output " + std::to_string(i) +
             " differs between two runs on the same inputs (unwritten bytes?)");
      }
    }
    ++stats.runs_ok;
  } catch (const shp::Error&) {
    // Errors are allowed (e.g. take with an index out of range); the runtime stays usable.
    ++stats.runs_refused;
  }
  ++stats.valuations;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (1 << 16)) return 0;
  ++stats.inputs;
  std::shared_ptr<const program::Program> p;
  // Constants capped at 16 MiB (the default is 1 GiB): a 18 KB zlib bomb inflating to hundreds
  // of MB is a legal file under the default cap, but inflating and re-compressing it under
  // ASan took 22 s and 2 GB (a libFuzzer timeout, not a library bug); the cap's refusal is
  // fuzzed instead.
  program::LoadOptions options;
  options.max_bytes = 16 << 20;
  try {
    p = program::Program::Load(data, size, options);
  } catch (const shp::Error& e) {
    if (e.code() != shp::Code::kInvalidProgram && e.code() != shp::Code::kVersionMismatch &&
        e.code() != shp::Code::kInvalidArgument) {
      Fail(std::string("an unexpected error class escaped the loader: ") + e.what());
    }
    return 0;
  }
  ++stats.loaded;
  std::string once = p->Serialize();
  std::unique_ptr<program::Program> q = program::Program::Load(once.data(), once.size(), options);
  if (q->Serialize() != once || q->text() != p->text()) Fail("serialization is not canonical");

  std::unique_ptr<runtime::Runtime> rt;
  try {
    runtime::Options options;
    options.num_threads = 1;             // deterministic, and the fuzzer owns the cores
    options.plan_cache_capacity = 1;     // the second valuation evicts the first plan
    options.max_loop_iterations = 1000;  // a mutated loop bound must not run for hours
    rt.reset(new runtime::Runtime(p, options));
  } catch (const shp::Error& e) {
    if (e.code() != shp::Code::kUnsupported)
      Fail(std::string("runtime creation failed: ") + e.what());
    return 0;
  }
  ++stats.runtimes;
  dim::Scope* s = ScopeOf(*p);
  uint64_t rng = size;
  for (size_t i = 0; i < size; i += 61) rng = rng * 131 + data[i];
  int runs = 0;
  if (s == nullptr) {
    RunAt(*p, rt.get(), nullptr, {}, &rng);
    return 0;
  }
  const std::vector<dim::Variable>& vars = s->variables();
  for (int attempt = 0; attempt < kValuationAttempts && runs < kMaxRuns; ++attempt) {
    std::vector<int64_t> values;
    bool ok = true;
    for (const dim::Variable& var : vars) {
      values.push_back(PickValue(var, &rng));
      ok &= values.back() >= var.lo && values.back() <= var.hi;
    }
    std::vector<bool> known(values.size(), true);
    for (const dim::Fact& f : s->facts()) {
      if (!ok) break;
      try {
        ok = Holds(s->Evaluate(f.lhs, values, known), f.op, s->Evaluate(f.rhs, values, known));
      } catch (const shp::Error&) {
        ok = false;
      }
    }
    if (ok && RunAt(*p, rt.get(), s, values, &rng)) ++runs;
  }
  return 0;
}
