// Hints, guards, assumptions and multi-variant programs through the shipped shared library.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "shapepoly/shapepoly.h"

namespace {

std::string Message(shp_error_t* err) {
  std::string m = err ? shp_error_message(err) : "";
  shp_error_destroy(err);
  return m;
}

// "code: message" so that a failed expectation shows both.
std::string CodeAndMessage(shp_error_t* err) {
  if (!err) return "0";
  std::string m = std::to_string(shp_error_code(err)) + ": " + shp_error_message(err);
  shp_error_destroy(err);
  return m;
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

#define OK(call) ASSERT_EQ(Message(call), "")

const shp_dim_t* D(shp_scope_t* s, const char* text) {
  const shp_dim_t* d = nullptr;
  EXPECT_EQ(Message(shp_dim_parse(s, text, &d)), "");
  return d;
}

shp_program_t* Create(shp_scope_t* s, std::vector<const shp_tensor_t*> ins,
                      const shp_tensor_t* out) {
  const char* name = "y";
  shp_program_t* p = nullptr;
  EXPECT_EQ(Message(shp_program_create(s, ins.data(), ins.size(), &out, &name, 1, &p)), "");
  return p;
}

shp_program_t* Reload(const shp_program_t* p) {
  shp_buffer_t* b = nullptr;
  EXPECT_EQ(shp_program_serialize(p, &b), nullptr);
  shp_program_t* q = nullptr;
  EXPECT_EQ(Message(shp_program_load(shp_buffer_data(b), shp_buffer_size(b), &q)), "");
  shp_buffer_destroy(b);
  return q;
}

std::string Text(const shp_program_t* p) {
  size_t len = 0;
  EXPECT_EQ(shp_program_to_text(p, nullptr, 0, &len), nullptr);
  std::string t(len + 1, '\0');
  EXPECT_EQ(shp_program_to_text(p, &t[0], t.size(), &len), nullptr);
  t.resize(len);
  return t;
}

std::string Counterexample(const shp_program_t* p) {
  size_t len = 0;
  EXPECT_EQ(shp_program_variants_counterexample(p, nullptr, 0, &len), nullptr);
  std::string t(len + 1, '\0');
  EXPECT_EQ(shp_program_variants_counterexample(p, &t[0], t.size(), &len), nullptr);
  t.resize(len);
  return t;
}

// Runs `rt` on f32 inputs of the given shapes (values i * 0.01); returns the error (code and
// message, "0" for success) and the outputs' data.
struct RunResult {
  std::string error;
  std::vector<std::vector<float>> outputs;
};
RunResult RunOn(shp_runtime_t* rt, std::vector<const char*> names,
                std::vector<std::vector<int64_t>> shapes, size_t num_outputs = 1) {
  std::vector<shp_array_t*> arrays;
  for (const auto& sh : shapes) {
    shp_array_t* a = nullptr;
    EXPECT_EQ(shp_array_create(SHP_F32, sh.data(), sh.size(), &a), nullptr);
    float* d = static_cast<float*>(shp_array_data(a));
    size_t n = shp_array_nbytes(a) / sizeof(float);
    for (size_t i = 0; i < n; ++i) d[i] = static_cast<float>(i % 97) * 0.01f;
    arrays.push_back(a);
  }
  std::vector<shp_array_t*> outs(num_outputs, nullptr);
  RunResult r;
  r.error = CodeAndMessage(
      shp_runtime_run(rt, names.data(), arrays.data(), arrays.size(), outs.data(), outs.size()));
  for (shp_array_t* o : outs) {
    if (!o) continue;
    const float* d = static_cast<const float*>(shp_array_data(o));
    r.outputs.emplace_back(d, d + shp_array_nbytes(o) / sizeof(float));
    shp_array_destroy(o);
  }
  for (shp_array_t* a : arrays) shp_array_destroy(a);
  return r;
}

shp_runtime_t* NewRuntime(const shp_program_t* p) {
  shp_runtime_t* rt = nullptr;
  EXPECT_EQ(Message(shp_runtime_create(p, nullptr, &rt)), "");
  return rt;
}

// ---- Hints ----

TEST(Hints, AreCheckedAgainstRangesAndConstraints) {
  const char* c[] = {"n >= 8", "m >= n + 2"};
  shp_scope_t* s = nullptr;
  OK(shp_scope_create(c, 2, &s));
  shp_error_t* e = shp_scope_set_hint(s, "n", 3);
  ASSERT_EQ(SHP_CONSTRAINT_VIOLATION, shp_error_code(e));
  EXPECT_TRUE(Contains(shp_error_message(e), "n >= 8")) << shp_error_message(e);
  shp_error_destroy(e);
  OK(shp_scope_set_hint(s, "n", 10));
  e = shp_scope_set_hint(s, "m", 11);  // m >= n + 2 = 12 fails on the hints
  ASSERT_EQ(SHP_CONSTRAINT_VIOLATION, shp_error_code(e));
  EXPECT_TRUE(Contains(shp_error_message(e), "m = 11")) << shp_error_message(e);
  EXPECT_TRUE(Contains(shp_error_message(e), "n = 10")) << shp_error_message(e);
  shp_error_destroy(e);
  bool has = true;
  int64_t v = 0;
  OK(shp_scope_hint(s, "m", &has, &v));
  EXPECT_FALSE(has);  // the refused hint was not kept
  OK(shp_scope_set_hint(s, "m", 12));
  OK(shp_scope_hint(s, "m", &has, &v));
  EXPECT_TRUE(has);
  EXPECT_EQ(12, v);
  EXPECT_EQ(SHP_NOT_FOUND, shp_error_code(e = shp_scope_hint(s, "zz", &has, &v)));
  shp_error_destroy(e);
  // A new variable gets a hint and stays declarable; its declared range must hold the hint.
  OK(shp_scope_set_hint(s, "k", 0 + 5));
  EXPECT_EQ(SHP_CONSTRAINT_VIOLATION, shp_error_code(e = shp_scope_declare(s, "k", 6, 9)));
  shp_error_destroy(e);
  OK(shp_scope_declare(s, "k", 0, 9));
  EXPECT_EQ(SHP_CONSTRAINT_VIOLATION, shp_error_code(e = shp_scope_set_hint(s, "k", 10)));
  shp_error_destroy(e);
  OK(shp_scope_set_hint(s, "k", 0));  // 0 is an ordinary value
  EXPECT_EQ(SHP_INVALID_ARGUMENT, shp_error_code(e = shp_scope_set_hint(s, "2x", 1)));
  shp_error_destroy(e);
  EXPECT_EQ(SHP_INVALID_ARGUMENT, shp_error_code(e = shp_scope_set_hint(nullptr, "n", 1)));
  shp_error_destroy(e);
  shp_scope_destroy(s);
}

TEST(Hints, NeverChangeAnswers) {
  shp_scope_t* s = nullptr;
  OK(shp_scope_create(nullptr, 0, &s));
  const shp_dim_t* n = D(s, "n");
  const shp_dim_t* four = D(s, "4");
  shp_truth_t t;
  OK(shp_dim_compare(n, SHP_CMP_GE, four, &t));
  EXPECT_EQ(SHP_UNKNOWN, t);
  int64_t lo, hi;
  OK(shp_scope_set_hint(s, "n", 100));
  OK(shp_dim_compare(n, SHP_CMP_GE, four, &t));
  EXPECT_EQ(SHP_UNKNOWN, t);
  OK(shp_dim_bounds(n, &lo, &hi));
  EXPECT_EQ(1, lo);
  EXPECT_EQ(INT64_MAX, hi);
  EXPECT_EQ(0u, shp_scope_constraint_count(s) - 0);  // no fact was added
  shp_scope_destroy(s);
}

// ---- Guards ----

TEST(Guards, DecidedComparisonsRecordNothing) {
  const char* c[] = {"n >= 8"};
  shp_scope_t* s = nullptr;
  OK(shp_scope_create(c, 1, &s));
  bool b = false;
  OK(shp_dim_guard(D(s, "n"), SHP_CMP_GE, D(s, "4"), "m", &b));
  EXPECT_TRUE(b);
  OK(shp_dim_guard(D(s, "n"), SHP_CMP_LT, D(s, "2"), "m", &b));
  EXPECT_FALSE(b);
  EXPECT_EQ(1u, shp_scope_constraint_count(s));
  shp_scope_destroy(s);
}

TEST(Guards, UnhintedVariableIsInconclusive) {
  shp_scope_t* s = nullptr;
  OK(shp_scope_create(nullptr, 0, &s));
  bool b = true;
  shp_error_t* e = shp_dim_guard(D(s, "n"), SHP_CMP_GT, D(s, "1024"), nullptr, &b);
  ASSERT_EQ(SHP_INCONCLUSIVE, shp_error_code(e));
  EXPECT_TRUE(Contains(shp_error_message(e), "'n' has no hint")) << shp_error_message(e);
  EXPECT_TRUE(Contains(shp_error_message(e), "shp_scope_set_hint")) << shp_error_message(e);
  shp_error_destroy(e);
  EXPECT_TRUE(b);  // untouched
  shp_scope_destroy(s);
}

// A guard recorded from the hints: the branch taken, a fact that later decisions rely on, and
// a precondition of every program built afterwards.
TEST(Guards, RecordedGuardIsAFactAndAPrecondition) {
  shp_scope_t* s = nullptr;
  OK(shp_scope_create(nullptr, 0, &s));
  OK(shp_scope_set_hint(s, "n", 12));
  const shp_tensor_t* x = nullptr;
  OK(shp_tensor_input(s, "x", SHP_F32, "(n,)", &x));
  const shp_dim_t* eight = D(s, "8");
  const shp_dim_t* zero = D(s, "0");
  // Without the guard, slicing [0:8] of an axis n is undecidable.
  const shp_tensor_t* y = nullptr;
  shp_error_t* e = shp_tensor_slice(x, &zero, &eight, nullptr, 1, &y);
  ASSERT_EQ(SHP_INCONCLUSIVE, shp_error_code(e)) << shp_error_message(e);
  shp_error_destroy(e);
  bool big = false;
  OK(shp_dim_guard(D(s, "n"), SHP_CMP_GE, eight, "long enough for the head", &big));
  EXPECT_TRUE(big);
  OK(shp_tensor_slice(x, &zero, &eight, nullptr, 1, &y));  // now decided by the guard
  shp_program_t* p = Create(s, {x}, y);
  ASSERT_EQ(1u, shp_program_guard_count(p));
  EXPECT_STREQ("n >= 8", shp_program_guard_text(p, 0));
  EXPECT_STREQ("long enough for the head", shp_program_guard_message(p, 0));
  EXPECT_STREQ("shp_dim_guard", shp_program_guard_origin(p, 0));
  EXPECT_EQ(nullptr, shp_program_guard_text(p, 1));
  EXPECT_TRUE(Contains(Text(p), "guards:\n  n >= 8")) << Text(p);
  // Not exhaustive: n = 1 satisfies the constraints but not the guard.
  EXPECT_EQ(SHP_FALSE, shp_program_variants_exhaustive(p));
  EXPECT_TRUE(Contains(Counterexample(p), "n = 1 satisfies the constraints")) << Counterexample(p);

  shp_program_t* q = Reload(p);
  ASSERT_EQ(1u, shp_program_guard_count(q));
  EXPECT_STREQ("shp_dim_guard", shp_program_guard_origin(q, 0));
  shp_runtime_t* rt = NewRuntime(q);
  EXPECT_EQ("0", RunOn(rt, {"x"}, {{8}}).error);
  EXPECT_EQ("0", RunOn(rt, {"x"}, {{100}}).error);
  RunResult bad = RunOn(rt, {"x"}, {{7}});
  EXPECT_EQ(0u, bad.error.rfind("18: ", 0)) << bad.error;
  EXPECT_TRUE(Contains(bad.error, "guard n >= 8")) << bad.error;
  EXPECT_TRUE(Contains(bad.error, "n = 7")) << bad.error;
  EXPECT_TRUE(Contains(bad.error, "long enough for the head")) << bad.error;
  EXPECT_EQ("0", RunOn(rt, {"x"}, {{9}}).error);  // usable after the failure
  shp_runtime_destroy(rt);
  shp_program_destroy(q);
  shp_program_destroy(p);
  shp_scope_destroy(s);
}

TEST(Guards, TheNegationIsRecordedWhenTheHintsSayNo) {
  shp_scope_t* s = nullptr;
  OK(shp_scope_create(nullptr, 0, &s));
  OK(shp_scope_set_hint(s, "seq", 512));
  bool blocked = true;
  OK(shp_dim_guard(D(s, "seq"), SHP_CMP_GT, D(s, "1024"), nullptr, &blocked));
  EXPECT_FALSE(blocked);
  shp_truth_t t;
  OK(shp_dim_compare(D(s, "seq"), SHP_CMP_LE, D(s, "1024"), &t));
  EXPECT_EQ(SHP_TRUE, t);  // the guard is a fact now
  // The hints must keep satisfying every fact.
  shp_error_t* e = shp_scope_set_hint(s, "seq", 2048);
  EXPECT_EQ(SHP_CONSTRAINT_VIOLATION, shp_error_code(e));
  EXPECT_TRUE(Contains(shp_error_message(e), "guard 'seq <= 1024'")) << shp_error_message(e);
  shp_error_destroy(e);
  shp_scope_destroy(s);
}

// ---- Guard policy: PyTorch's guards from ops ----

TEST(GuardPolicy, BroadcastOnEqualHintsGuardsEquality) {
  shp_scope_t* s = nullptr;
  OK(shp_scope_create(nullptr, 0, &s));
  const shp_tensor_t *x, *y, *z;
  OK(shp_tensor_input(s, "x", SHP_F32, "(s0,)", &x));
  OK(shp_tensor_input(s, "y", SHP_F32, "(s1,)", &y));
  // The default policy: today's behaviour.
  shp_error_t* e = shp_tensor_binary(SHP_MUL, x, y, &z);
  EXPECT_EQ(SHP_INCONCLUSIVE, shp_error_code(e));
  shp_error_destroy(e);
  OK(shp_scope_set_guard_policy(s, SHP_GUARDS_FROM_HINTS));
  OK(shp_scope_set_hint(s, "s0", 5));
  OK(shp_scope_set_hint(s, "s1", 5));
  OK(shp_tensor_binary(SHP_MUL, x, y, &z));
  shp_program_t* p = Create(s, {x, y}, z);
  ASSERT_EQ(1u, shp_program_guard_count(p));
  EXPECT_STREQ("s0 == s1", shp_program_guard_text(p, 0));
  EXPECT_EQ(0u, std::string(shp_program_guard_origin(p, 0)).rfind("mul: ", 0))
      << shp_program_guard_origin(p, 0);
  shp_runtime_t* rt = NewRuntime(p);
  EXPECT_EQ("0", RunOn(rt, {"x", "y"}, {{7}, {7}}).error);
  RunResult bad = RunOn(rt, {"x", "y"}, {{5}, {6}});
  EXPECT_EQ(0u, bad.error.rfind("18: ", 0)) << bad.error;
  EXPECT_TRUE(Contains(bad.error, "s0 = 5")) << bad.error;
  EXPECT_TRUE(Contains(bad.error, "s1 = 6")) << bad.error;
  shp_runtime_destroy(rt);
  shp_program_destroy(p);
  shp_scope_destroy(s);
}

TEST(GuardPolicy, UnequalHintsFailNamingTheHintsAndRecordNothing) {
  shp_scope_t* s = nullptr;
  OK(shp_scope_create(nullptr, 0, &s));
  OK(shp_scope_set_guard_policy(s, SHP_GUARDS_FROM_HINTS));
  OK(shp_scope_set_hint(s, "s0", 5));
  OK(shp_scope_set_hint(s, "s1", 6));
  const shp_tensor_t *x, *y, *z;
  OK(shp_tensor_input(s, "x", SHP_F32, "(s0,)", &x));
  OK(shp_tensor_input(s, "y", SHP_F32, "(s1,)", &y));
  shp_error_t* e = shp_tensor_binary(SHP_MUL, x, y, &z);
  ASSERT_EQ(SHP_SHAPE_MISMATCH, shp_error_code(e));
  EXPECT_TRUE(Contains(shp_error_message(e), "s0 = 5")) << shp_error_message(e);
  EXPECT_TRUE(Contains(shp_error_message(e), "s1 = 6")) << shp_error_message(e);
  shp_error_destroy(e);
  EXPECT_EQ(0u, shp_scope_constraint_count(s));
  // A hint of 1 does not make a dimension broadcast (no 0/1 specialization).
  OK(shp_scope_set_hint(s, "s0", 1));
  e = shp_tensor_binary(SHP_MUL, x, y, &z);
  EXPECT_EQ(SHP_SHAPE_MISMATCH, shp_error_code(e));
  shp_error_destroy(e);
  EXPECT_EQ(0u, shp_scope_constraint_count(s));
  // Without a hint the policy cannot decide: inconclusive, as before.
  const shp_tensor_t* w;
  OK(shp_tensor_input(s, "w", SHP_F32, "(s2,)", &w));
  e = shp_tensor_binary(SHP_ADD, x, w, &z);
  EXPECT_EQ(SHP_INCONCLUSIVE, shp_error_code(e));
  shp_error_destroy(e);
  e = shp_scope_set_guard_policy(s, static_cast<shp_guard_policy_t>(7));
  EXPECT_EQ(SHP_INVALID_ARGUMENT, shp_error_code(e));
  shp_error_destroy(e);
  shp_scope_destroy(s);
}

TEST(GuardPolicy, MatmulConcatenateAndReshapeGuardOnHints) {
  shp_scope_t* s = nullptr;
  OK(shp_scope_create(nullptr, 0, &s));
  OK(shp_scope_set_guard_policy(s, SHP_GUARDS_FROM_HINTS));
  for (const char* v : {"b", "k1", "k2", "c", "r"}) OK(shp_scope_set_hint(s, v, 4));
  const shp_tensor_t *a, *w, *m, *other, *cat, *flat;
  OK(shp_tensor_input(s, "a", SHP_F32, "(b, k1)", &a));
  OK(shp_tensor_input(s, "w", SHP_F32, "(k2, c)", &w));
  OK(shp_tensor_matmul(a, w, &m));  // k1 == k2
  OK(shp_tensor_input(s, "o", SHP_F32, "(r, k2)", &other));
  const shp_tensor_t* parts[] = {a, other};
  OK(shp_tensor_concatenate(parts, 2, 0, &cat));  // k1 == k2 is a fact already
  const shp_dim_t* to = D(s, "b*c");
  OK(shp_tensor_reshape(m, &to, 1, &flat));
  const char* names[] = {"y"};
  const shp_tensor_t* ins[] = {a, w, other};
  shp_program_t* p = nullptr;
  OK(shp_program_create(s, ins, 3, &flat, names, 1, &p));
  ASSERT_EQ(1u, shp_program_guard_count(p)) << Text(p);
  EXPECT_STREQ("k1 == k2", shp_program_guard_text(p, 0));
  EXPECT_EQ(0u, std::string(shp_program_guard_origin(p, 0)).rfind("matmul: ", 0))
      << shp_program_guard_origin(p, 0);
  shp_program_destroy(p);
  // concatenate's other axes on their own.
  const shp_tensor_t *u, *v, *uv;
  OK(shp_scope_set_hint(s, "p", 3));
  OK(shp_scope_set_hint(s, "q", 3));
  OK(shp_tensor_input(s, "u", SHP_F32, "(2, p)", &u));
  OK(shp_tensor_input(s, "v", SHP_F32, "(5, q)", &v));
  const shp_tensor_t* uvs[] = {u, v};
  OK(shp_tensor_concatenate(uvs, 2, 0, &uv));
  const shp_tensor_t* uv_ins[] = {u, v};
  OK(shp_program_create(s, uv_ins, 2, &uv, names, 1, &p));
  bool found = false;
  for (size_t i = 0; i < shp_program_guard_count(p); ++i) {
    if (std::string(shp_program_guard_text(p, i)) == "p == q") {
      found = true;
      EXPECT_EQ(0u, std::string(shp_program_guard_origin(p, i)).rfind("concatenate: ", 0));
    }
  }
  EXPECT_TRUE(found) << Text(p);
  shp_program_destroy(p);
  // reshape sizes: (a, b) to (c,) needs a*b == c.
  const shp_tensor_t *r, *q, *rr, *sum;
  for (const char* v : {"ra", "rb"}) OK(shp_scope_set_hint(s, v, 3));
  OK(shp_scope_set_hint(s, "rc", 9));
  OK(shp_tensor_input(s, "r", SHP_F32, "(ra, rb)", &r));
  OK(shp_tensor_input(s, "q", SHP_F32, "(rc,)", &q));
  const shp_dim_t* rc = D(s, "rc");
  OK(shp_tensor_reshape(r, &rc, 1, &rr));
  OK(shp_tensor_binary(SHP_ADD, rr, q, &sum));
  const shp_tensor_t* rq[] = {r, q};
  OK(shp_program_create(s, rq, 2, &sum, names, 1, &p));
  found = false;
  for (size_t i = 0; i < shp_program_guard_count(p); ++i) {
    found |= std::string(shp_program_guard_origin(p, i)).rfind("reshape: ", 0) == 0 &&
             Contains(shp_program_guard_text(p, i), "ra*rb");
  }
  EXPECT_TRUE(found) << Text(p);
  shp_runtime_t* rt = NewRuntime(p);
  EXPECT_EQ("0", RunOn(rt, {"r", "q"}, {{2, 5}, {10}}).error);
  EXPECT_EQ(0u, RunOn(rt, {"r", "q"}, {{2, 5}, {9}}).error.rfind("18: ", 0));
  shp_runtime_destroy(rt);
  shp_program_destroy(p);
  shp_scope_destroy(s);
}

// PyTorch's 0/1 specialization: a program traced with hint batch = 1 still runs at batch 1000.
TEST(GuardPolicy, HintOfOneDoesNotSpecialize) {
  shp_scope_t* s = nullptr;
  OK(shp_scope_create(nullptr, 0, &s));
  OK(shp_scope_set_guard_policy(s, SHP_GUARDS_FROM_HINTS));
  OK(shp_scope_set_hint(s, "batch", 1));
  const shp_tensor_t *x, *w, *h, *y;
  OK(shp_tensor_input(s, "x", SHP_F32, "(batch, 4)", &x));
  const float wv[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  const int64_t ws[] = {4, 3};
  OK(shp_tensor_constant(s, SHP_F32, ws, 2, wv, sizeof wv, &w));
  OK(shp_tensor_matmul(x, w, &h));
  OK(shp_tensor_softmax(h, 1, &y));
  shp_program_t* p = Create(s, {x}, y);
  EXPECT_EQ(0u, shp_program_guard_count(p));
  EXPECT_EQ(SHP_TRUE, shp_program_variants_exhaustive(p));
  shp_runtime_t* rt = NewRuntime(p);
  for (int64_t b : {1, 1000, 0 + 7}) {
    RunResult r = RunOn(rt, {"x"}, {{b, 4}});
    EXPECT_EQ("0", r.error) << b;
    ASSERT_EQ(1u, r.outputs.size());
    EXPECT_EQ(static_cast<size_t>(b * 3), r.outputs[0].size());
  }
  shp_runtime_destroy(rt);
  shp_program_destroy(p);
  shp_scope_destroy(s);
}

// ---- Assumptions and variants ----

// The row softmax of the issue: the plain op when cols <= 16, else max-subtract, exp, sum, div.
shp_program_t* RowSoftmax(bool small, const char* extra_guard = nullptr) {
  shp_scope_t* s = nullptr;
  EXPECT_EQ(shp_scope_create(nullptr, 0, &s), nullptr);
  EXPECT_EQ(Message(shp_scope_assume(s, D(s, "cols"), small ? SHP_CMP_LE : SHP_CMP_GT, D(s, "16"),
                                     small ? "short rows" : "long rows")),
            "");
  if (extra_guard) {
    const shp_dim_t* rows = D(s, "rows");
    EXPECT_EQ(Message(shp_scope_assume(s, rows, SHP_CMP_LE, D(s, extra_guard), nullptr)), "");
  }
  const shp_tensor_t *x, *y;
  EXPECT_EQ(shp_tensor_input(s, "x", SHP_F32, "(rows, cols)", &x), nullptr);
  if (small) {
    EXPECT_EQ(shp_tensor_softmax(x, 1, &y), nullptr);
  } else {
    const int64_t axis = 1;
    const shp_tensor_t *mx, *d, *ex, *sum;
    EXPECT_EQ(shp_tensor_reduce(SHP_REDUCE_MAX, x, &axis, 1, true, &mx), nullptr);
    EXPECT_EQ(shp_tensor_binary(SHP_SUB, x, mx, &d), nullptr);
    EXPECT_EQ(shp_tensor_unary(SHP_EXP, d, &ex), nullptr);
    EXPECT_EQ(shp_tensor_reduce(SHP_REDUCE_SUM, ex, &axis, 1, true, &sum), nullptr);
    EXPECT_EQ(shp_tensor_binary(SHP_DIV, ex, sum, &y), nullptr);
  }
  shp_program_t* p = Create(s, {x}, y);
  shp_scope_destroy(s);
  return p;
}

TEST(Assume, RefusesContradictionsAndHintConflicts) {
  const char* c[] = {"n <= 100"};
  shp_scope_t* s = nullptr;
  OK(shp_scope_create(c, 1, &s));
  shp_error_t* e = shp_scope_assume(s, D(s, "n"), SHP_CMP_GT, D(s, "200"), nullptr);
  EXPECT_EQ(SHP_UNSATISFIABLE, shp_error_code(e));
  shp_error_destroy(e);
  OK(shp_scope_set_hint(s, "n", 50));
  e = shp_scope_assume(s, D(s, "n"), SHP_CMP_GT, D(s, "64"), nullptr);
  EXPECT_EQ(SHP_CONSTRAINT_VIOLATION, shp_error_code(e));
  EXPECT_TRUE(Contains(shp_error_message(e), "n = 50")) << shp_error_message(e);
  shp_error_destroy(e);
  EXPECT_EQ(1u, shp_scope_constraint_count(s));
  OK(shp_scope_assume(s, D(s, "n"), SHP_CMP_LE, D(s, "64"), nullptr));
  EXPECT_EQ(2u, shp_scope_constraint_count(s));
  OK(shp_scope_assume(s, D(s, "n"), SHP_CMP_LE, D(s, "80"), nullptr));  // already a fact
  EXPECT_EQ(2u, shp_scope_constraint_count(s));
  shp_scope_destroy(s);
}

TEST(Variants, DispatchOnBothSidesAndAtTheBoundary) {
  shp_program_t* v[] = {RowSoftmax(true), RowSoftmax(false)};
  shp_program_t* p = nullptr;
  OK(shp_program_create_variants(v, 2, &p));
  EXPECT_EQ(2u, shp_program_variant_count(p));
  EXPECT_EQ(SHP_TRUE, shp_program_variants_exhaustive(p));
  EXPECT_EQ("", Counterexample(p));
  EXPECT_STREQ("cols <= 16", shp_program_variant_guard_text(p, 0, 0));
  EXPECT_STREQ("cols > 16", shp_program_variant_guard_text(p, 1, 0));
  EXPECT_STREQ("long rows", shp_program_variant_guard_message(p, 1, 0));
  EXPECT_EQ(nullptr, shp_program_variant_guard_text(p, 2, 0));
  EXPECT_TRUE(Contains(Text(p), "== variant 1 ==")) << Text(p);
  shp_program_t* q = Reload(p);
  ASSERT_EQ(2u, shp_program_variant_count(q));
  EXPECT_EQ(SHP_TRUE, shp_program_variants_exhaustive(q));
  for (shp_program_t* prog : {p, q}) {
    shp_runtime_t* rt = NewRuntime(prog);
    EXPECT_EQ(-1, shp_runtime_last_variant(rt));
    const int64_t cols[] = {1, 15, 16, 17, 64, 16, 17};
    const int64_t want[] = {0, 0, 0, 1, 1, 0, 1};
    for (size_t i = 0; i < 7; ++i) {
      RunResult r = RunOn(rt, {"x"}, {{3, cols[i]}});
      ASSERT_EQ("0", r.error) << cols[i];
      EXPECT_EQ(want[i], shp_runtime_last_variant(rt)) << cols[i];
      // Both paths compute a row softmax: every row sums to 1.
      for (int64_t row = 0; row < 3; ++row) {
        double sum = 0;
        for (int64_t c = 0; c < cols[i]; ++c) sum += r.outputs[0][row * cols[i] + c];
        EXPECT_NEAR(1.0, sum, 1e-5);
      }
    }
    // cols 16 and 17 ran twice: cache hits, one plan per shape, counted per variant.
    EXPECT_EQ(3u, shp_runtime_variant_plans_built(rt, 0));
    EXPECT_EQ(2u, shp_runtime_variant_plans_built(rt, 1));
    EXPECT_EQ(1u, shp_runtime_variant_cache_hits(rt, 0));
    EXPECT_EQ(1u, shp_runtime_variant_cache_hits(rt, 1));
    EXPECT_EQ(0u, shp_runtime_variant_plans_built(rt, 2));
    // A failing run leaves the last variant as it was.
    EXPECT_NE("0", RunOn(rt, {"x"}, {{3}}).error);
    EXPECT_EQ(1, shp_runtime_last_variant(rt));
    shp_runtime_destroy(rt);
  }
  // check_shapes says which variant would run.
  const char* name = "x";
  const int64_t shape[] = {2, 17};
  const int64_t* shapes[] = {shape};
  const size_t ranks[] = {2};
  shp_bindings_t* b = nullptr;
  OK(shp_program_check_shapes(q, &name, shapes, ranks, 1, &b));
  EXPECT_EQ(1, shp_bindings_variant(b));
  int64_t dims[2];
  size_t rank = 0;
  OK(shp_program_output_shape(q, 0, b, dims, 2, &rank));
  EXPECT_EQ(17, dims[1]);
  shp_bindings_destroy(b);
  shp_program_destroy(q);
  shp_program_destroy(p);
  for (shp_program_t* x : v) shp_program_destroy(x);
}

TEST(Variants, NonExhaustiveSetHasAVerifiedCounterexample) {
  shp_program_t* v[] = {RowSoftmax(true), RowSoftmax(false, "8")};  // cols > 16 needs rows <= 8
  shp_program_t* p = nullptr;
  OK(shp_program_create_variants(v, 2, &p));
  ASSERT_EQ(SHP_FALSE, shp_program_variants_exhaustive(p));
  const std::string cex = Counterexample(p);
  // Parse "rows = R, cols = C" (in variable order) and check it ourselves.
  size_t at_rows = cex.find("rows = "), at_cols = cex.find("cols = ");
  ASSERT_NE(std::string::npos, at_rows) << cex;
  ASSERT_NE(std::string::npos, at_cols) << cex;
  const long rows = std::strtol(cex.c_str() + at_rows + 7, nullptr, 10);
  const long cols = std::strtol(cex.c_str() + at_cols + 7, nullptr, 10);
  EXPECT_GE(rows, 1);
  EXPECT_GE(cols, 1);
  EXPECT_FALSE(cols <= 16) << cex;              // variant 0's guard fails
  EXPECT_FALSE(cols > 16 && rows <= 8) << cex;  // and one of variant 1's
  // The runtime agrees: no variant applies, and the message lists each variant's failure.
  shp_runtime_t* rt = NewRuntime(p);
  RunResult r = RunOn(rt, {"x"}, {{rows, cols}});
  EXPECT_EQ(0u, r.error.rfind("18: no variant", 0)) << r.error;
  EXPECT_TRUE(Contains(r.error, "variant 0: guard cols <= 16")) << r.error;
  EXPECT_TRUE(Contains(r.error, "variant 1: guard rows <= 8")) << r.error;
  EXPECT_EQ("0", RunOn(rt, {"x"}, {{9, 5}}).error);  // covered shapes still run
  EXPECT_EQ(0, shp_runtime_last_variant(rt));
  shp_runtime_destroy(rt);
  shp_program_destroy(p);
  for (shp_program_t* x : v) shp_program_destroy(x);
}

// Exhaustive, but neither provable by the decision procedure nor refutable by a search: n*n
// mod 7 is never 3, so the first variant covers everything.
TEST(Variants, UndecidableCoverageIsUnknown) {
  shp_program_t* v[2];
  for (int k = 0; k < 2; ++k) {
    shp_scope_t* s = nullptr;
    OK(shp_scope_create(nullptr, 0, &s));
    if (k == 0) {
      OK(shp_scope_assume(s, D(s, "mod(n*n, 7)"), SHP_CMP_NE, D(s, "3"), nullptr));
    } else {
      OK(shp_scope_assume(s, D(s, "n"), SHP_CMP_GE, D(s, "5"), nullptr));
    }
    const shp_tensor_t *x, *y;
    OK(shp_tensor_input(s, "x", SHP_F32, "(n,)", &x));
    OK(shp_tensor_unary(k == 0 ? SHP_EXP : SHP_TANH, x, &y));
    v[k] = Create(s, {x}, y);
    shp_scope_destroy(s);
  }
  ASSERT_EQ(1u, shp_program_guard_count(v[0])) << "the engine proved the guard itself";
  shp_program_t* p = nullptr;
  OK(shp_program_create_variants(v, 2, &p));
  EXPECT_EQ(SHP_UNKNOWN, shp_program_variants_exhaustive(p));
  EXPECT_EQ("", Counterexample(p));
  shp_runtime_t* rt = NewRuntime(p);
  EXPECT_EQ("0", RunOn(rt, {"x"}, {{4}}).error);
  EXPECT_EQ(0, shp_runtime_last_variant(rt));
  shp_runtime_destroy(rt);
  shp_program_destroy(p);
  for (shp_program_t* x : v) shp_program_destroy(x);
}

TEST(Variants, IncompatibleVariantsAreRefusedNamingTheDifference) {
  shp_program_t* base = RowSoftmax(true);
  auto make = [](const char* name, const char* spec, shp_dtype_t dt) {
    shp_scope_t* s = nullptr;
    EXPECT_EQ(shp_scope_create(nullptr, 0, &s), nullptr);
    EXPECT_EQ(shp_scope_assume(s, D(s, "cols"), SHP_CMP_GT, D(s, "16"), nullptr), nullptr);
    const shp_tensor_t *x, *y;
    EXPECT_EQ(Message(shp_tensor_input(s, name, dt, spec, &x)), "");
    EXPECT_EQ(shp_tensor_unary(SHP_ABS, x, &y), nullptr);
    shp_program_t* p = Create(s, {x}, y);
    shp_scope_destroy(s);
    return p;
  };
  struct Case {
    shp_program_t* other;
    const char* want;
  } cases[] = {
      {make("z", "(rows, cols)", SHP_F32), "names input 0 'z', variant 0 'x'"},
      {make("x", "(rows, cols)", SHP_F64), "dtype f64"},
      {make("x", "(rows, cols, 2)", SHP_F32), "rank 3"},
      {make("x", "(rows, 2*cols)", SHP_F32), "input 'x' axis 1 the size 2*cols"},
  };
  for (const Case& c : cases) {
    const shp_program_t* pair[] = {base, c.other};
    shp_program_t* p = nullptr;
    shp_error_t* e = shp_program_create_variants(pair, 2, &p);
    ASSERT_EQ(SHP_INVALID_ARGUMENT, shp_error_code(e)) << c.want;
    EXPECT_TRUE(Contains(shp_error_message(e), "variant 1")) << shp_error_message(e);
    EXPECT_TRUE(Contains(shp_error_message(e), c.want)) << shp_error_message(e);
    shp_error_destroy(e);
    EXPECT_EQ(nullptr, p);
    shp_program_destroy(c.other);
  }
  shp_program_t* p = nullptr;
  shp_error_t* e = shp_program_create_variants(nullptr, 0, &p);
  EXPECT_EQ(SHP_INVALID_ARGUMENT, shp_error_code(e));
  shp_error_destroy(e);
  const shp_program_t* with_null[] = {base, nullptr};
  e = shp_program_create_variants(with_null, 2, &p);
  EXPECT_EQ(SHP_INVALID_ARGUMENT, shp_error_code(e));
  shp_error_destroy(e);
  shp_program_destroy(base);
}

// Symbolic shapes may differ where the variant's guards make them equal.
TEST(Variants, ShapesEqualUnderTheGuardsAreAccepted) {
  shp_program_t* v[2];
  for (int k = 0; k < 2; ++k) {
    shp_scope_t* s = nullptr;
    OK(shp_scope_create(nullptr, 0, &s));
    const shp_tensor_t *x, *y;
    OK(shp_tensor_input(s, "x", SHP_F32, "(rows, cols)", &x));
    if (k == 0) {
      OK(shp_scope_assume(s, D(s, "cols"), SHP_CMP_NE, D(s, "32"), nullptr));
      OK(shp_tensor_unary(SHP_NEG, x, &y));
    } else {
      OK(shp_scope_assume(s, D(s, "cols"), SHP_CMP_EQ, D(s, "32"), nullptr));
      const shp_dim_t* to[] = {D(s, "rows"), D(s, "32")};
      OK(shp_tensor_reshape(x, to, 2, &y));  // output (rows, 32): equal to (rows, cols) here
    }
    v[k] = Create(s, {x}, y);
    shp_scope_destroy(s);
  }
  shp_program_t* p = nullptr;
  OK(shp_program_create_variants(v, 2, &p));
  EXPECT_EQ(SHP_TRUE, shp_program_variants_exhaustive(p));
  shp_runtime_t* rt = NewRuntime(p);
  RunResult r = RunOn(rt, {"x"}, {{2, 32}});
  ASSERT_EQ("0", r.error);
  EXPECT_EQ(1, shp_runtime_last_variant(rt));
  EXPECT_FLOAT_EQ(0.01f, r.outputs[0][1]);  // the reshape copies
  r = RunOn(rt, {"x"}, {{2, 31}});
  ASSERT_EQ("0", r.error);
  EXPECT_EQ(0, shp_runtime_last_variant(rt));
  EXPECT_FLOAT_EQ(-0.01f, r.outputs[0][1]);
  shp_runtime_destroy(rt);
  shp_program_destroy(p);
  for (shp_program_t* x : v) shp_program_destroy(x);
}

// Variants of variants flatten; grad transforms each variant.
TEST(Variants, NestAndTransform) {
  shp_program_t* small = RowSoftmax(true);
  shp_program_t* large = RowSoftmax(false);
  const shp_program_t* pair[] = {small, large};
  shp_program_t* p = nullptr;
  OK(shp_program_create_variants(pair, 2, &p));
  const shp_program_t* again[] = {p, small};
  shp_program_t* three = nullptr;
  OK(shp_program_create_variants(again, 3 - 1, &three));
  EXPECT_EQ(3u, shp_program_variant_count(three));
  // vjp of y with respect to x, in both variants.
  const char* of[] = {"y"};
  const char* wrt[] = {"x"};
  shp_program_t* g = nullptr;
  OK(shp_program_vjp(p, of, 1, wrt, 1, &g));
  EXPECT_EQ(2u, shp_program_variant_count(g));
  EXPECT_EQ(SHP_TRUE, shp_program_variants_exhaustive(g));
  shp_program_t* gq = Reload(g);
  shp_runtime_t* rt = NewRuntime(gq);
  for (int64_t c : {4, 40}) {
    RunResult r = RunOn(rt, {"x", "y.cotangent"}, {{2, c}, {2, c}}, 2);
    ASSERT_EQ("0", r.error) << c;
    EXPECT_EQ(c > 16 ? 1 : 0, shp_runtime_last_variant(rt));
    ASSERT_EQ(2u, r.outputs.size());
    EXPECT_EQ(static_cast<size_t>(2 * c), r.outputs[1].size());
  }
  shp_runtime_destroy(rt);
  for (shp_program_t* x : {small, large, p, three, g, gq}) shp_program_destroy(x);
}

}  // namespace
