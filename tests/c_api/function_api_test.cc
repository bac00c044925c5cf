// Compiled functions with automatic dynamic shapes, through the shipped shared library: the
// PyTorch scenarios (automatic dynamic, 0/1 hints, mark_static and the recompile limit,
// stances, duck sizing) and export.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "shapepoly/shapepoly.h"

namespace {

std::string CodeAndMessage(shp_error_t* err) {
  if (!err) return "0";
  std::string m = std::to_string(shp_error_code(err)) + ": " + shp_error_message(err);
  shp_error_destroy(err);
  return m;
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

#define OK(call) ASSERT_EQ(CodeAndMessage(call), "0")

// y = softmax(x, axis 1) * 2 when cols > 4 (decided with shp_dim_guard), else exp(x).
struct Counters {
  int traces = 0;
  shp_function_t* reenter = nullptr;  // calls this function from the trace function when set
  std::string reenter_error;
  bool fail = false;
  shp_scope_t* foreign = nullptr;  // returns a tensor of this scope when set
};

shp_error_t* RowFn(shp_scope_t* scope, const shp_tensor_t* const* inputs, size_t num_inputs,
                   const shp_tensor_t** outputs, size_t num_outputs, void* user_data) {
  Counters* c = static_cast<Counters*>(user_data);
  ++c->traces;
  if (c->fail) return shp_error_create(SHP_UNSUPPORTED, "the model refuses this shape");
  if (num_inputs != 1 || num_outputs != 1) return shp_error_create(SHP_INTERNAL, "arity");
  if (c->foreign) return shp_tensor_input(c->foreign, "z", SHP_F32, "(3,)", &outputs[0]);
  if (c->reenter) {
    const char* name = "x";
    shp_array_t* y = nullptr;
    shp_error_t* e = shp_function_call(c->reenter, &name, nullptr, 0, &y, 1);
    c->reenter_error = e ? shp_error_message(e) : "";
    shp_error_destroy(e);
  }
  const shp_dim_t* dims[2];
  size_t rank = 0;
  shp_error_t* e = shp_tensor_shape(inputs[0], dims, 2, &rank);
  if (e) return e;
  const shp_dim_t* four = nullptr;
  if ((e = shp_dim_constant(scope, 4, &four))) return e;
  bool wide = false;
  if ((e = shp_dim_guard(dims[1], SHP_CMP_GT, four, "wide rows", &wide))) return e;
  if (!wide) return shp_tensor_unary(SHP_EXP, inputs[0], &outputs[0]);
  const shp_tensor_t *sm, *two;
  if ((e = shp_tensor_softmax(inputs[0], 1, &sm))) return e;
  const float v = 2.0f;
  if ((e = shp_tensor_constant(scope, SHP_F32, nullptr, 0, &v, sizeof v, &two))) return e;
  return shp_tensor_binary(SHP_MUL, sm, two, &outputs[0]);
}

shp_function_t* NewFunction(Counters* c, shp_function_options_t* o = nullptr) {
  const char* in = "x";
  const shp_dtype_t dt = SHP_F32;
  const size_t rank = 2;
  const char* out = "y";
  shp_function_t* f = nullptr;
  EXPECT_EQ(CodeAndMessage(shp_function_create(RowFn, c, &in, &dt, &rank, 1, &out, 1, o, &f)), "0");
  return f;
}

// The reference: what RowFn computes, in plain C++.
std::vector<float> Reference(int64_t rows, int64_t cols) {
  std::vector<float> y(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r) {
    double mx = -1e30, sum = 0;
    for (int64_t k = 0; k < cols; ++k) mx = std::max(mx, 0.01 * ((r * cols + k) % 97));
    for (int64_t k = 0; k < cols; ++k) sum += std::exp(0.01 * ((r * cols + k) % 97) - mx);
    for (int64_t k = 0; k < cols; ++k) {
      const double x = 0.01 * ((r * cols + k) % 97);
      y[static_cast<size_t>(r * cols + k)] =
          static_cast<float>(cols > 4 ? 2 * std::exp(x - mx) / sum : std::exp(x));
    }
  }
  return y;
}

shp_array_t* Input(int64_t rows, int64_t cols) {
  const int64_t shape[] = {rows, cols};
  shp_array_t* a = nullptr;
  EXPECT_EQ(shp_array_create(SHP_F32, shape, 2, &a), nullptr);
  float* d = static_cast<float*>(shp_array_data(a));
  for (int64_t i = 0; i < rows * cols; ++i) d[i] = static_cast<float>(0.01 * (i % 97));
  return a;
}

// Calls `f` (or runs `rt`) at rows x cols; checks the output against the reference.
std::string Call(shp_function_t* f, int64_t rows, int64_t cols, shp_runtime_t* rt = nullptr) {
  shp_array_t* a = Input(rows, cols);
  const char* name = "x";
  shp_array_t* y = nullptr;
  std::string err = CodeAndMessage(rt ? shp_runtime_run(rt, &name, &a, 1, &y, 1)
                                      : shp_function_call(f, &name, &a, 1, &y, 1));
  if (err == "0") {
    const std::vector<float> want = Reference(rows, cols);
    const float* got = static_cast<const float*>(shp_array_data(y));
    for (size_t i = 0; i < want.size(); ++i) {
      if (std::fabs(got[i] - want[i]) > 1e-5f * (1 + std::fabs(want[i]))) {
        err = "wrong value at " + std::to_string(i);
        break;
      }
    }
    shp_array_destroy(y);
  }
  shp_array_destroy(a);
  return err;
}

std::string Events(const shp_function_t* f) {
  std::string t;
  for (size_t i = 0; i < shp_function_event_count(f); ++i)
    t += std::string(shp_function_event_text(f, i)) + "\n";
  return t;
}

TEST(Function, StaticThenDynamicThenNoMoreTraces) {
  Counters c;
  shp_function_t* f = NewFunction(&c);
  EXPECT_EQ("0", Call(f, 4, 8));
  EXPECT_EQ(1u, shp_function_trace_count(f));
  EXPECT_EQ("0", Call(f, 8, 8));  // batch changed: traced again with a symbolic batch
  EXPECT_EQ(2u, shp_function_trace_count(f));
  EXPECT_TRUE(Contains(Events(f),
                       "input 'x' axis 0: size 8 failed guard s0 == 4 (marked dynamic "
                       "now)"))
      << Events(f);
  EXPECT_TRUE(Contains(Events(f), "variant 1: input 'x' axis 1: static (only one size seen)"))
      << Events(f);
  for (int64_t b : {3, 100, 1, 0 + 17}) EXPECT_EQ("0", Call(f, b, 8)) << b;
  EXPECT_EQ(2u, shp_function_trace_count(f));  // a third size: no new trace
  EXPECT_EQ(4u, shp_function_cache_hits(f));
  EXPECT_EQ(2, c.traces);
  shp_function_destroy(f);
}

// PyTorch issue #133653's class: a size seen at 1 and then at 7 becomes one symbol valid at 1.
TEST(Function, SizeOneThenSevenIsOneSymbolValidAtOne) {
  Counters c;
  shp_function_t* f = NewFunction(&c);
  EXPECT_EQ("0", Call(f, 1, 8));
  EXPECT_EQ("0", Call(f, 7, 8));
  shp_program_t* p = nullptr;
  OK(shp_function_export(f, &p));
  ASSERT_EQ(2u, shp_program_variant_count(p));
  // The dynamic variant has no guard on the batch: batch 1 and 0 are in it.
  for (size_t g = 0; g < shp_program_variant_guard_count(p, 1); ++g)
    EXPECT_FALSE(Contains(shp_program_variant_guard_text(p, 1, g), "s0")) << g;
  shp_runtime_t* rt = nullptr;
  OK(shp_runtime_create(p, nullptr, &rt));
  EXPECT_EQ("0", Call(nullptr, 1, 8, rt));
  EXPECT_EQ("0", Call(nullptr, 0, 8, rt));
  EXPECT_EQ(1, shp_runtime_last_variant(rt));
  shp_runtime_destroy(rt);
  shp_program_destroy(p);
  shp_function_destroy(f);
}

TEST(Function, MarkStaticRetracesUpToTheLimitThenTheStanceDecides) {
  for (shp_stance_t stance : {SHP_STANCE_DEFAULT, SHP_STANCE_DYNAMIC_ON_LIMIT}) {
    Counters c;
    shp_function_options_t* o = nullptr;
    OK(shp_function_options_create(&o));
    OK(shp_function_options_set_recompile_limit(o, 3));
    OK(shp_function_options_set_stance(o, stance));
    shp_function_t* f = NewFunction(&c, o);
    shp_function_options_destroy(o);
    OK(shp_function_mark_static(f, "x", 0));
    for (int64_t b : {2, 3, 4}) EXPECT_EQ("0", Call(f, b, 8)) << b;
    EXPECT_EQ(3u, shp_function_trace_count(f));
    std::string fifth = Call(f, 5, 8);
    if (stance == SHP_STANCE_DEFAULT) {
      EXPECT_EQ(0u, fifth.rfind("18: ", 0)) << fifth;
      EXPECT_TRUE(Contains(fifth, "recompile limit 3")) << fifth;
      EXPECT_TRUE(Contains(fifth, "guard s0 == 2")) << fifth;
      EXPECT_EQ(3u, shp_function_trace_count(f));
      EXPECT_EQ("0", Call(f, 3, 8));  // the function stays usable
    } else {
      EXPECT_EQ("0", fifth);
      EXPECT_EQ(4u, shp_function_trace_count(f));
      EXPECT_TRUE(Contains(Events(f), "fully dynamic")) << Events(f);
      for (int64_t b : {6, 50}) EXPECT_EQ("0", Call(f, b, 8));
      EXPECT_EQ(4u, shp_function_trace_count(f));
    }
    shp_function_destroy(f);
  }
}

TEST(Function, FailOnRecompileNamesTheGuard) {
  Counters c;
  shp_function_t* f = NewFunction(&c);
  EXPECT_EQ("0", Call(f, 4, 8));
  OK(shp_function_set_stance(f, SHP_STANCE_FAIL_ON_RECOMPILE));
  std::string err = Call(f, 9, 8);
  EXPECT_EQ(0u, err.rfind("18: ", 0)) << err;
  EXPECT_TRUE(Contains(err, "FAIL_ON_RECOMPILE")) << err;
  EXPECT_TRUE(Contains(err, "guard s0 == 4")) << err;
  EXPECT_TRUE(Contains(err, "s0 = 9")) << err;
  EXPECT_EQ("0", Call(f, 4, 8));
  EXPECT_EQ(1u, shp_function_trace_count(f));
  shp_function_destroy(f);
}

TEST(Function, DuckSizingAssumesEqualSizesUntilACallDiffers) {
  Counters c;
  shp_function_options_t* o = nullptr;
  OK(shp_function_options_create(&o));
  OK(shp_function_options_set_dynamic(o, SHP_DYNAMIC_ALL));
  shp_function_t* f = NewFunction(&c, o);
  shp_function_options_destroy(o);
  EXPECT_EQ("0", Call(f, 5, 5));
  EXPECT_TRUE(Contains(Events(f), "guard s1 == s0 (from duck sizing")) << Events(f);
  EXPECT_EQ("0", Call(f, 7, 7));  // still equal: no trace
  EXPECT_EQ(1u, shp_function_trace_count(f));
  EXPECT_EQ("0", Call(f, 5, 6));
  EXPECT_EQ(2u, shp_function_trace_count(f));
  EXPECT_TRUE(Contains(Events(f), "size 6 failed guard s1 == s0 (duck sizing")) << Events(f);
  shp_function_destroy(f);
}

// The guard recorded by shp_dim_guard inside the trace function splits the variants, and the
// exported program gives the function's outputs on every shape it saw, from the file alone.
TEST(Function, ExportRunsEveryShapeSeen) {
  Counters c;
  shp_function_options_t* o = nullptr;
  OK(shp_function_options_create(&o));
  OK(shp_function_options_set_dynamic(o, SHP_DYNAMIC_ALL));
  shp_function_t* f = NewFunction(&c, o);
  shp_function_options_destroy(o);
  const int64_t shapes[][2] = {{2, 3}, {2, 9}, {5, 4}, {5, 5}, {1, 30}};
  for (const auto& s : shapes) EXPECT_EQ("0", Call(f, s[0], s[1]));
  EXPECT_EQ(2u, shp_function_trace_count(f)) << Events(f);  // cols <= 4 and cols > 4
  EXPECT_TRUE(Contains(Events(f), "guard cols") || Contains(Events(f), "guard s1")) << Events(f);
  shp_program_t* p = nullptr;
  OK(shp_function_export(f, &p));
  EXPECT_EQ(SHP_TRUE, shp_program_variants_exhaustive(p));
  shp_buffer_t* b = nullptr;
  OK(shp_program_serialize(p, &b));
  shp_program_t* q = nullptr;
  OK(shp_program_load(shp_buffer_data(b), shp_buffer_size(b), &q));
  shp_buffer_destroy(b);
  shp_function_destroy(f);  // the file runs without the trace function
  shp_runtime_t* rt = nullptr;
  OK(shp_runtime_create(q, nullptr, &rt));
  for (const auto& s : shapes) EXPECT_EQ("0", Call(nullptr, s[0], s[1], rt)) << s[1];
  shp_runtime_destroy(rt);
  shp_program_destroy(q);
  shp_program_destroy(p);
}

TEST(Function, TraceErrorsPassThroughAndLeaveTheFunctionUsable) {
  Counters c;
  shp_function_t* f = NewFunction(&c);
  c.fail = true;
  std::string err = Call(f, 2, 8);
  EXPECT_EQ(0u, err.rfind("15: the trace function failed: the model refuses this shape", 0)) << err;
  c.fail = false;
  shp_scope_t* other = nullptr;
  OK(shp_scope_create(nullptr, 0, &other));
  c.foreign = other;
  err = Call(f, 2, 8);
  EXPECT_EQ(0u, err.rfind("4: ", 0)) << err;
  EXPECT_TRUE(Contains(err, "another scope")) << err;
  c.foreign = nullptr;
  shp_scope_destroy(other);
  EXPECT_EQ(0u, shp_function_trace_count(f));  // failed traces leave nothing behind
  c.reenter = f;  // a trace function that calls its own function is refused, not recursed
  EXPECT_EQ("0", Call(f, 3, 8));
  EXPECT_TRUE(Contains(c.reenter_error, "called from its own trace function")) << c.reenter_error;
  c.reenter = nullptr;
  EXPECT_EQ(1u, shp_function_trace_count(f));
  // Bad calls: names, dtypes, ranks, counts.
  shp_array_t* a = Input(2, 8);
  const char* bad = "nope";
  shp_array_t* y = nullptr;
  EXPECT_EQ(0u, CodeAndMessage(shp_function_call(f, &bad, &a, 1, &y, 1)).rfind("12: ", 0));
  const char* name = "x";
  EXPECT_EQ(0u, CodeAndMessage(shp_function_call(f, &name, &a, 1, &y, 2)).rfind("1: ", 0));
  EXPECT_EQ(0u, CodeAndMessage(shp_function_call(nullptr, &name, &a, 1, &y, 1)).rfind("1: ", 0));
  shp_array_destroy(a);
  const int64_t s3[] = {2, 2, 2};
  shp_array_t* r3 = nullptr;
  OK(shp_array_create(SHP_F32, s3, 3, &r3));
  EXPECT_EQ(0u, CodeAndMessage(shp_function_call(f, &name, &r3, 1, &y, 1)).rfind("6: ", 0));
  shp_array_destroy(r3);
  shp_program_t* p = nullptr;
  shp_function_t* fresh = NewFunction(&c);
  EXPECT_EQ(0u, CodeAndMessage(shp_function_export(fresh, &p)).rfind("1: ", 0));
  EXPECT_EQ(0u, CodeAndMessage(shp_function_mark_dynamic(fresh, "x", 2, 0, 5)).rfind("1: ", 0));
  EXPECT_EQ(0u, CodeAndMessage(shp_function_mark_static(fresh, "q", 0)).rfind("12: ", 0));
  shp_function_destroy(fresh);
  shp_function_destroy(f);
  shp_error_t* e = shp_error_create(99, "x");
  EXPECT_EQ(SHP_INVALID_ARGUMENT, shp_error_code(e));
  shp_error_destroy(e);
}

}  // namespace
