// The deepest dimension expressions the builders allow (dim kMaxNestingDepth = 1000 levels of
// floordiv/mod/max/min), through every layer that walks them, on a 256 KB thread stack (Go and
// C# callers often run on small stacks): bounds, compare, evaluate, print and parse back,
// trace, serialize, load, plan and run.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cc/base/testing.h"
#include "shapepoly/shapepoly.h"

namespace {

using ::shp::testing::OnSmallStack;

constexpr size_t kSmallStack = 256 * 1024;
// The builders' limit (cc/dim kMaxNestingDepth). Under the sanitizers (the asan suite) the
// chains are 250 levels deep: building one proves each level's simplification again, which
// took 4 of .ci/run's minutes at 1000 levels in the unoptimized ASan build (19 s in the default
// build). The default build checks the deepest chains on the small stack; the sanitizer build
// checks that every walker is memory-safe on deep ones (with ASan's larger frames, on the same
// stack).
constexpr int kDepth = ::shp::testing::kSanitized ? 250 : 1000;

std::string Message(shp_error_t* err) {
  std::string m = err ? shp_error_message(err) : "";
  shp_error_destroy(err);
  return m;
}

#define OK(call) ASSERT_EQ(Message(call), "")

const shp_dim_t* Var(shp_scope_t* s, const char* name) {
  const shp_dim_t* d = nullptr;
  EXPECT_EQ(Message(shp_dim_variable(s, name, &d)), "");
  return d;
}

const shp_dim_t* Constant(shp_scope_t* s, int64_t v) {
  const shp_dim_t* d = nullptr;
  EXPECT_EQ(Message(shp_dim_constant(s, v, &d)), "");
  return d;
}

// One level around `e`, of four kinds; every kind stays >= 0 for a >= 0, b >= 2, c >= 1.
const shp_dim_t* Wrap(shp_scope_t* s, int kind, const shp_dim_t* e) {
  const shp_dim_t *t = nullptr, *out = nullptr;
  shp_error_t* err = nullptr;
  switch (kind) {
    case 0:  // floordiv(e + 1, b)
      err = shp_dim_add(e, Constant(s, 1), &t);
      if (!err) err = shp_dim_floordiv(t, Var(s, "b"), &out);
      break;
    case 1:  // mod(e + c, b)
      err = shp_dim_add(e, Var(s, "c"), &t);
      if (!err) err = shp_dim_mod(t, Var(s, "b"), &out);
      break;
    case 2:  // max(e - c, b)
      err = shp_dim_sub(e, Var(s, "c"), &t);
      if (!err) err = shp_dim_max(t, Var(s, "b"), &out);
      break;
    default:  // min(e + b, 7 * c)
      err = shp_dim_add(e, Var(s, "b"), &t);
      if (!err) {
        const shp_dim_t* k = nullptr;
        err = shp_dim_mul(Constant(s, 7), Var(s, "c"), &k);
        if (!err) err = shp_dim_min(t, k, &out);
      }
      break;
  }
  EXPECT_EQ(Message(err), "");
  return out;
}

void DeepDimThroughEveryLayer(int kind) {
  const char* constraints[] = {"b >= 2"};
  shp_scope_t* s = nullptr;
  OK(shp_scope_create(constraints, 1, &s));
  const shp_tensor_t* x = nullptr;
  OK(shp_tensor_input(s, "x", SHP_F32, "a, b, c", &x));
  const shp_dim_t* e = Var(s, "a");
  for (int i = 0; i < kDepth; ++i) e = Wrap(s, kind, e);
  ASSERT_NE(e, nullptr);

  // The dim engine.
  int64_t lo = 0, hi = 0;
  OK(shp_dim_bounds(e, &lo, &hi));
  EXPECT_LE(lo, hi);
  EXPECT_GE(lo, 0);
  shp_truth_t truth = SHP_UNKNOWN;
  OK(shp_dim_compare(e, SHP_CMP_GE, Constant(s, 0), &truth));
  EXPECT_EQ(truth, SHP_TRUE);
  const char* names[] = {"a", "b", "c"};
  const int64_t values[] = {5, 3, 2};
  int64_t expected = -1;
  OK(shp_dim_evaluate(e, names, values, 3, &expected));
  EXPECT_GE(expected, lo);
  EXPECT_LE(expected, hi);

  // Printed and parsed back: the same expression.
  size_t len = 0;
  OK(shp_dim_to_string(e, nullptr, 0, &len));
  std::string text(len + 1, '\0');
  OK(shp_dim_to_string(e, &text[0], text.size(), &len));
  text.resize(len);
  const shp_dim_t* back = nullptr;
  OK(shp_dim_parse(s, text.c_str(), &back));
  OK(shp_dim_compare(back, SHP_CMP_EQ, e, &truth));
  EXPECT_EQ(truth, SHP_TRUE);

  // A program whose output has the deep dimension: traced, serialized, loaded, run.
  const shp_dim_t* dims[] = {e};
  const shp_tensor_t* y = nullptr;
  OK(shp_tensor_iota(s, SHP_I64, dims, 1, 0, &y));
  const shp_tensor_t* ins[] = {x};
  const shp_tensor_t* outs[] = {y};
  const char* out_names[] = {"y"};
  shp_program_t* traced = nullptr;
  OK(shp_program_create(s, ins, 1, outs, out_names, 1, &traced));
  size_t text_len = 0;
  OK(shp_program_to_text(traced, nullptr, 0, &text_len));
  EXPECT_GT(text_len, static_cast<size_t>(kDepth));
  shp_buffer_t* bytes = nullptr;
  OK(shp_program_serialize(traced, &bytes));
  shp_program_t* loaded = nullptr;
  OK(shp_program_load(shp_buffer_data(bytes), shp_buffer_size(bytes), &loaded));
  shp_buffer_destroy(bytes);

  for (shp_program_t* p : {traced, loaded}) {
    shp_runtime_t* rt = nullptr;
    OK(shp_runtime_create(p, nullptr, &rt));
    const int64_t shape[] = {5, 3, 2};
    shp_array_t* in = nullptr;
    OK(shp_array_create(SHP_F32, shape, 3, &in));
    const char* in_names[] = {"x"};
    const shp_array_t* inputs[] = {in};
    shp_array_t* out = nullptr;
    OK(shp_runtime_run(rt, in_names, inputs, 1, &out, 1));
    ASSERT_EQ(shp_array_rank(out), 1u);
    EXPECT_EQ(shp_array_shape(out)[0], expected);
    const int64_t* data = static_cast<const int64_t*>(shp_array_data(out));
    if (expected > 0) {
      EXPECT_EQ(data[expected - 1], expected - 1);
    }
    shp_array_destroy(out);
    shp_array_destroy(in);
    shp_runtime_destroy(rt);
  }
  shp_program_destroy(loaded);
  shp_program_destroy(traced);
  shp_scope_destroy(s);
}

TEST(DeepDims, DeepestBuildableDimsWorkThroughEveryLayerOnASmallStack) {
  for (int kind = 0; kind < 4; ++kind) {
    SCOPED_TRACE(kind);
    OnSmallStack(kSmallStack, [&] { DeepDimThroughEveryLayer(kind); });
  }
}

// Regression: hash-consing let e = max(e - c, e - b), repeated, double the text of e with each
// level: 24 levels printed 285 MB in 8 s and evaluated in 3 s, 40 would never finish. Builders
// now refuse an expression past 100000 atoms and terms written out (as deeper nesting).
TEST(DeepDims, RepeatedSubexpressionsCannotGrowTheTextWithoutBound) {
  shp_scope_t* s = nullptr;
  OK(shp_scope_create(nullptr, 0, &s));
  const shp_dim_t* e = Var(s, "a");
  int level = 0;
  shp_error_t* refused = nullptr;
  for (; level < 64 && refused == nullptr; ++level) {
    const shp_dim_t *x = nullptr, *y = nullptr, *z = nullptr;
    OK(shp_dim_sub(e, Var(s, "c"), &x));
    OK(shp_dim_sub(e, Var(s, "b"), &y));
    refused = shp_dim_max(x, y, &z);
    if (refused == nullptr) e = z;
  }
  ASSERT_NE(refused, nullptr);
  EXPECT_EQ(shp_error_code(refused), SHP_UNSUPPORTED);
  EXPECT_NE(std::string(shp_error_message(refused)).find("too large written out (more than 100000"),
            std::string::npos)
      << shp_error_message(refused);
  shp_error_destroy(refused);
  EXPECT_LT(level, 20);
  // What was built prints in bounded size and parses back.
  size_t len = 0;
  OK(shp_dim_to_string(e, nullptr, 0, &len));
  EXPECT_LT(len, 2000000u);
  std::string text(len + 1, '\0');
  OK(shp_dim_to_string(e, &text[0], text.size(), &len));
  text.resize(len);
  const shp_dim_t* back = nullptr;
  OK(shp_dim_parse(s, text.c_str(), &back));
  EXPECT_EQ(back, e);
  shp_scope_destroy(s);
}

}  // namespace
