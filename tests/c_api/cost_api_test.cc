// Symbolic cost and the program's picture through the shipped shared library: formulas,
// bounds and the unbounded reason, shp_runtime_cost against the formula and against what the
// runtime plans, argument errors, and shp_program_to_dot.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "shapepoly/shapepoly.h"

namespace {

std::string Message(shp_error_t* err) {
  std::string m = err ? shp_error_message(err) : "";
  shp_error_destroy(err);
  return m;
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

#define OK(call) ASSERT_EQ(Message(call), "")

// x[batch, 8] @ w[8, 4] + b, relu, then softmax; weights are constants.
struct Mlp {
  shp_scope_t* scope = nullptr;
  shp_program_t* program = nullptr;
  explicit Mlp(const std::vector<const char*>& constraints) {
    EXPECT_EQ(Message(shp_scope_create(constraints.data(), constraints.size(), &scope)), "");
    const shp_tensor_t *x, *w, *b, *z, *h, *y;
    EXPECT_EQ(Message(shp_tensor_input(scope, "x", SHP_F32, "batch, 8", &x)), "");
    std::vector<float> wv(8 * 4, 0.5f), bv(4, 0.25f);
    int64_t ws[] = {8, 4}, bs[] = {4};
    float zero = 0;
    EXPECT_EQ(Message(shp_tensor_constant(scope, SHP_F32, ws, 2, wv.data(), 128, &w)), "");
    EXPECT_EQ(Message(shp_tensor_constant(scope, SHP_F32, bs, 1, bv.data(), 16, &b)), "");
    EXPECT_EQ(Message(shp_tensor_constant(scope, SHP_F32, nullptr, 0, &zero, 4, &z)), "");
    EXPECT_EQ(Message(shp_tensor_matmul(x, w, &h)), "");
    EXPECT_EQ(Message(shp_tensor_binary(SHP_ADD, h, b, &h)), "");
    EXPECT_EQ(Message(shp_tensor_binary(SHP_MAX, h, z, &h)), "");
    EXPECT_EQ(Message(shp_tensor_softmax(h, 1, &y)), "");
    const char* name = "y";
    EXPECT_EQ(Message(shp_program_create(scope, &x, 1, &y, &name, 1, &program)), "");
  }
  ~Mlp() {
    shp_program_destroy(program);
    shp_scope_destroy(scope);
  }
};

std::string Formula(const shp_program_t* p, shp_cost_kind_t kind) {
  size_t len = 0;
  EXPECT_EQ(Message(shp_program_cost(p, kind, nullptr, 0, &len)), "");
  std::string t(len + 1, '\0');
  EXPECT_EQ(Message(shp_program_cost(p, kind, &t[0], t.size(), &len)), "");
  t.resize(len);
  return t;
}

std::string Reason(const shp_program_t* p, shp_cost_kind_t kind) {
  size_t len = 0;
  EXPECT_EQ(Message(shp_program_cost_unbounded_reason(p, kind, nullptr, 0, &len)), "");
  std::string t(len + 1, '\0');
  EXPECT_EQ(Message(shp_program_cost_unbounded_reason(p, kind, &t[0], t.size(), &len)), "");
  t.resize(len);
  return t;
}

int64_t RuntimeCost(shp_runtime_t* r, shp_cost_kind_t kind, int64_t batch) {
  const char* names[] = {"x"};
  int64_t shape[] = {batch, 8};
  const int64_t* shapes[] = {shape};
  size_t ranks[] = {2};
  int64_t v = -1;
  EXPECT_EQ(Message(shp_runtime_cost(r, kind, names, nullptr, shapes, ranks, 1, &v)), "");
  return v;
}

TEST(CostApiTest, FormulasBoundsAndValues) {
  Mlp m({"batch <= 1000"});
  // matmul 2*batch*4*8, add and max 4 per row each, softmax 5 per element.
  EXPECT_EQ(Formula(m.program, SHP_COST_FLOPS), "92*batch");
  EXPECT_EQ(Formula(m.program, SHP_COST_PARAMETER_BYTES), "148");  // 32 + 4 + 1 floats
  int64_t lo = 0, hi = 0;
  OK(shp_program_cost_bounds(m.program, SHP_COST_FLOPS, &lo, &hi));
  EXPECT_EQ(lo, 92);
  EXPECT_EQ(hi, 92000);
  EXPECT_EQ(Reason(m.program, SHP_COST_FLOPS), "");
  shp_runtime_t* r = nullptr;
  OK(shp_runtime_create(m.program, nullptr, &r));
  EXPECT_EQ(RuntimeCost(r, SHP_COST_FLOPS, 10), 920);
  EXPECT_EQ(RuntimeCost(r, SHP_COST_PARAMETER_BYTES, 10), 148);
  // Every kind at every batch stays within the bounds; peak equals the bound at 1000.
  for (int k = 0; k < 4; ++k) {
    shp_cost_kind_t kind = static_cast<shp_cost_kind_t>(k);
    OK(shp_program_cost_bounds(m.program, kind, &lo, &hi));
    for (int64_t b : {1, 7, 64, 1000}) {
      int64_t v = RuntimeCost(r, kind, b);
      EXPECT_LE(lo, v) << k << " " << b;
      EXPECT_LE(v, hi) << k << " " << b;
    }
    EXPECT_EQ(hi, RuntimeCost(r, kind, 1000)) << k;
  }
  shp_runtime_destroy(r);
}

TEST(CostApiTest, UnboundedNamesTheVariable) {
  Mlp m({});
  int64_t lo = 0, hi = 0;
  OK(shp_program_cost_bounds(m.program, SHP_COST_PEAK_BYTES, &lo, &hi));
  EXPECT_EQ(hi, INT64_MAX);
  EXPECT_GT(lo, 0);
  EXPECT_TRUE(Contains(Reason(m.program, SHP_COST_PEAK_BYTES), "no upper bound on batch"));
  EXPECT_EQ(Reason(m.program, SHP_COST_PARAMETER_BYTES), "");
}

TEST(CostApiTest, Errors) {
  Mlp m({});
  size_t len = 0;
  int64_t lo = 0, hi = 0, v = 0;
  EXPECT_TRUE(
      Contains(Message(shp_program_cost(nullptr, SHP_COST_FLOPS, nullptr, 0, &len)), "'program'"));
  EXPECT_TRUE(Contains(Message(shp_program_cost(m.program, SHP_COST_FLOPS, nullptr, 0, nullptr)),
                       "'len_out'"));
  shp_error_t* e = shp_program_cost(m.program, static_cast<shp_cost_kind_t>(9), nullptr, 0, &len);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(shp_error_code(e), SHP_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(Message(e), "9"));
  EXPECT_TRUE(Contains(Message(shp_program_cost_bounds(m.program, SHP_COST_FLOPS, nullptr, &hi)),
                       "'lo_out'"));
  lo = 123;
  EXPECT_NE(Message(shp_program_cost_bounds(m.program, static_cast<shp_cost_kind_t>(-1), &lo, &hi)),
            "");
  EXPECT_EQ(lo, 123);  // untouched on error
  shp_runtime_t* r = nullptr;
  OK(shp_runtime_create(m.program, nullptr, &r));
  const char* names[] = {"x"};
  int64_t shape[] = {3, 9};  // axis 1 must be 8
  const int64_t* shapes[] = {shape};
  size_t ranks[] = {2};
  v = 77;
  std::string msg =
      Message(shp_runtime_cost(r, SHP_COST_FLOPS, names, nullptr, shapes, ranks, 1, &v));
  EXPECT_TRUE(Contains(msg, "input 'x'")) << msg;
  EXPECT_EQ(v, 77);
  EXPECT_TRUE(Contains(
      Message(shp_runtime_cost(r, SHP_COST_FLOPS, names, nullptr, shapes, ranks, 1, nullptr)),
      "'value_out'"));
  // The runtime stays usable.
  EXPECT_EQ(RuntimeCost(r, SHP_COST_FLOPS, 2), 184);
  shp_runtime_destroy(r);
}

TEST(CostApiTest, VariableBounds) {
  Mlp m({"batch <= 1000", "batch >= 2"});
  ASSERT_EQ(shp_program_variable_count(m.program), 1u);
  int64_t lo = 0, hi = 0;
  OK(shp_program_variable_bounds(m.program, 0, &lo, &hi));
  EXPECT_EQ(lo, 2);
  EXPECT_EQ(hi, 1000);
  EXPECT_TRUE(Contains(Message(shp_program_variable_bounds(m.program, 1, &lo, &hi)), "range"));
}

TEST(CostApiTest, Dot) {
  Mlp m({});
  size_t len = 0;
  OK(shp_program_to_dot(m.program, nullptr, 0, &len));
  std::string dot(len + 1, '\0');
  OK(shp_program_to_dot(m.program, &dot[0], dot.size(), &len));
  dot.resize(len);
  EXPECT_TRUE(Contains(dot, "digraph")) << dot;
  EXPECT_TRUE(Contains(dot, "matmul")) << dot;
  EXPECT_TRUE(Contains(dot, "softmax")) << dot;
  EXPECT_TRUE(Contains(dot, "f32[batch, 8]")) << dot;
  EXPECT_TRUE(Contains(Message(shp_program_to_dot(nullptr, nullptr, 0, &len)), "'program'"));
}

}  // namespace
