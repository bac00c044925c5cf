// Parameters, defaults, roles and jvp/vjp/grad through the shipped shared library.
#include <gtest/gtest.h>

#include <cmath>
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

int32_t Code(shp_error_t* err) {
  int32_t c = err ? shp_error_code(err) : SHP_OK;
  shp_error_destroy(err);
  return c;
}

#define OK(call) ASSERT_EQ(Message(call), "")

// loss = reduce_sum(tanh(x @ w)) with the parameter w (2x2) and x of shape (batch, 2).
shp_program_t* Loss() {
  shp_scope_t* s = nullptr;
  EXPECT_EQ(shp_scope_create(nullptr, 0, &s), nullptr);
  const shp_tensor_t *x, *w, *h, *t, *loss;
  const float wv[] = {0.5f, -1.0f, 2.0f, 0.25f};
  const int64_t wshape[] = {2, 2};
  EXPECT_EQ(shp_tensor_input(s, "x", SHP_F32, "batch, 2", &x), nullptr);
  EXPECT_EQ(shp_tensor_parameter(s, "w", SHP_F32, wshape, 2, wv, sizeof wv, &w), nullptr);
  EXPECT_EQ(shp_tensor_matmul(x, w, &h), nullptr);
  EXPECT_EQ(shp_tensor_unary(SHP_TANH, h, &t), nullptr);
  EXPECT_EQ(shp_tensor_reduce(SHP_REDUCE_SUM, t, nullptr, 0, false, &loss), nullptr);
  const shp_tensor_t* ins[] = {x, w};
  const char* names[] = {"loss"};
  shp_program_t* p = nullptr;
  EXPECT_EQ(shp_program_create(s, ins, 2, &loss, names, 1, &p), nullptr);
  shp_scope_destroy(s);
  return p;
}

shp_program_t* Reload(const shp_program_t* p) {
  shp_buffer_t* b = nullptr;
  EXPECT_EQ(shp_program_serialize(p, &b), nullptr);
  shp_program_t* q = nullptr;
  EXPECT_EQ(shp_program_load(shp_buffer_data(b), shp_buffer_size(b), &q), nullptr);
  shp_buffer_destroy(b);
  return q;
}

std::vector<float> Floats(const shp_array_t* a) {
  const float* d = static_cast<const float*>(shp_array_data(a));
  return std::vector<float>(d, d + shp_array_nbytes(a) / sizeof(float));
}

TEST(AutodiffApi, ParametersRolesAndDefaults) {
  shp_program_t* p = Loss();
  ASSERT_EQ(shp_program_input_count(p), 2u);
  EXPECT_EQ(shp_program_input_role(p, 1), SHP_INPUT_PARAMETER);
  EXPECT_FALSE(shp_program_input_has_default(p, 0));
  EXPECT_TRUE(shp_program_input_has_default(p, 1));
  EXPECT_FALSE(shp_program_input_has_default(p, 7));
  EXPECT_FALSE(shp_program_input_has_default(nullptr, 0));
  shp_array_t* w = nullptr;
  OK(shp_program_input_default(p, 1, &w));
  EXPECT_EQ(Floats(w), (std::vector<float>{0.5f, -1.0f, 2.0f, 0.25f}));
  shp_array_destroy(w);
  EXPECT_EQ(Code(shp_program_input_default(p, 0, &w)), SHP_INVALID_ARGUMENT);
  EXPECT_NE(Message(shp_program_input_default(p, 0, &w)).find("'x' has no default"),
            std::string::npos);
  // Shapes are checked as a run binds: the parameter may be left out.
  const char* xname[] = {"x"};
  const int64_t xshape[] = {3, 2};
  const int64_t* shapes[] = {xshape};
  const size_t ranks[] = {2};
  shp_bindings_t* b = nullptr;
  OK(shp_program_check_shapes(p, xname, shapes, ranks, 1, &b));
  EXPECT_EQ(shp_bindings_value(b, 0), 3);
  shp_bindings_destroy(b);
  const char* wname[] = {"w"};
  const int64_t* wshapes[] = {xshape};
  std::string m = Message(shp_program_check_shapes(p, wname, wshapes, ranks, 1, &b));
  EXPECT_NE(m.find("'x' is missing"), std::string::npos) << m;
  EXPECT_EQ(shp_program_output_role(p, 0), SHP_OUTPUT_PRIMAL);
  EXPECT_EQ(static_cast<int>(shp_program_output_role(p, 1)), -1);
  // Reserved names.
  shp_scope_t* s = nullptr;
  OK(shp_scope_create(nullptr, 0, &s));
  const shp_tensor_t* t = nullptr;
  const float one = 1;
  EXPECT_EQ(Code(shp_tensor_parameter(s, "w.grad", SHP_F32, nullptr, 0, &one, 4, &t)),
            SHP_INVALID_ARGUMENT);
  EXPECT_EQ(Code(shp_tensor_parameter(s, "w", SHP_F32, nullptr, 0, &one, 3, &t)),
            SHP_INVALID_ARGUMENT);
  shp_scope_destroy(s);
  shp_program_destroy(p);
}

// Issue 38 (tenferro's p10_default_inputs pitfall): y = x^3 in f64; its jvp takes x and
// x.tangent, both f64 scalars. Swapped positionally they would give 3*5^2*2 = 150 instead of
// 3*2^2*5 = 60, so a positional run of a transformed program is refused; by name it runs.
TEST(AutodiffApi, SwappedPositionalRunOfAJvpProgramIsRefused) {
  shp_scope_t* s = nullptr;
  OK(shp_scope_create(nullptr, 0, &s));
  const shp_tensor_t *x, *x2, *y;
  OK(shp_tensor_input(s, "x", SHP_F64, "", &x));
  OK(shp_tensor_binary(SHP_MUL, x, x, &x2));
  OK(shp_tensor_binary(SHP_MUL, x2, x, &y));
  const char* out_names[] = {"y"};
  shp_program_t* p = nullptr;
  OK(shp_program_create(s, &x, 1, &y, out_names, 1, &p));
  shp_scope_destroy(s);
  const char* wrt[] = {"x"};
  shp_program_t* jp = nullptr;
  OK(shp_program_jvp(p, wrt, 1, &jp));
  ASSERT_EQ(shp_program_input_count(jp), 2u);
  EXPECT_FALSE(shp_program_input_has_default(jp, 1));

  shp_runtime_t* rt = nullptr;
  OK(shp_runtime_create(jp, nullptr, &rt));
  double xv = 2, vv = 5;
  shp_array_t *xa = nullptr, *va = nullptr;
  OK(shp_array_wrap(SHP_F64, nullptr, 0, &xv, sizeof xv, &xa));
  OK(shp_array_wrap(SHP_F64, nullptr, 0, &vv, sizeof vv, &va));
  const shp_array_t* swapped[] = {va, xa};
  shp_array_t* out[2] = {nullptr, nullptr};
  shp_error_t* err = shp_runtime_run(rt, nullptr, swapped, 2, out, 2);
  ASSERT_NE(err, nullptr);
  EXPECT_EQ(shp_error_code(err), SHP_INVALID_ARGUMENT);
  std::string m = shp_error_message(err);
  shp_error_destroy(err);
  EXPECT_NE(m.find("bind every input by name"), std::string::npos) << m;
  EXPECT_EQ(out[0], nullptr);
  EXPECT_EQ(out[1], nullptr);

  const char* names[] = {"x.tangent", "x"};
  OK(shp_runtime_run(rt, names, swapped, 2, out, 2));
  EXPECT_EQ(*static_cast<const double*>(shp_array_data(out[0])), 8.0);
  EXPECT_EQ(*static_cast<const double*>(shp_array_data(out[1])), 60.0);
  for (shp_array_t* a : out) shp_array_destroy(a);
  shp_array_destroy(xa);
  shp_array_destroy(va);
  shp_runtime_destroy(rt);
  shp_program_destroy(jp);
  shp_program_destroy(p);
}

// Derivative names name one order each: the third derivative of x^4 is x.grad.grad.grad,
// never x.grad again (grad keeps only `of`, so x.grad is no output of the second program).
TEST(AutodiffApi, DerivativeNamesStayUniqueAcrossOrders) {
  shp_scope_t* s = nullptr;
  OK(shp_scope_create(nullptr, 0, &s));
  const shp_tensor_t *x, *x2, *y;
  OK(shp_tensor_input(s, "x", SHP_F64, "", &x));
  OK(shp_tensor_binary(SHP_MUL, x, x, &x2));
  OK(shp_tensor_binary(SHP_MUL, x2, x2, &y));
  const char* out_names[] = {"y"};
  shp_program_t* p = nullptr;
  OK(shp_program_create(s, &x, 1, &y, out_names, 1, &p));
  shp_scope_destroy(s);
  const char* wrt[] = {"x"};
  shp_program_t *g1 = nullptr, *g2 = nullptr, *g3 = nullptr;
  OK(shp_program_grad(p, "y", wrt, 1, &g1));
  OK(shp_program_grad(g1, "x.grad", wrt, 1, &g2));
  OK(shp_program_grad(g2, "x.grad.grad", wrt, 1, &g3));
  EXPECT_STREQ(shp_program_output_name(g1, 1), "x.grad");
  EXPECT_STREQ(shp_program_output_name(g2, 1), "x.grad.grad");
  EXPECT_STREQ(shp_program_output_name(g3, 0), "x.grad.grad");
  EXPECT_STREQ(shp_program_output_name(g3, 1), "x.grad.grad.grad");
  shp_program_destroy(g3);
  shp_program_destroy(g2);
  shp_program_destroy(g1);
  shp_program_destroy(p);
}

TEST(AutodiffApi, GradOfALoadedProgramRunsByName) {
  shp_program_t* p0 = Loss();
  shp_program_t* p = Reload(p0);
  const char* wrt[] = {"x", "w"};
  shp_program_t* g = nullptr;
  OK(shp_program_grad(p, "loss", wrt, 2, &g));
  shp_program_t* gl = Reload(g);
  ASSERT_EQ(shp_program_output_count(gl), 3u);
  EXPECT_STREQ(shp_program_output_name(gl, 1), "x.grad");
  EXPECT_EQ(shp_program_output_role(gl, 1), SHP_OUTPUT_GRAD);
  EXPECT_STREQ(shp_program_input_name(gl, 2), "loss.cotangent");
  EXPECT_EQ(shp_program_input_role(gl, 2), SHP_INPUT_COTANGENT);
  EXPECT_TRUE(shp_program_input_has_default(gl, 2));

  shp_runtime_t* rt = nullptr;
  OK(shp_runtime_create(gl, nullptr, &rt));
  const float xv[] = {1, 2, -1, 0.5f, 0, 3};
  const int64_t xs[] = {3, 2};
  shp_array_t* x = nullptr;
  OK(shp_array_wrap(SHP_F32, xs, 2, const_cast<float*>(xv), sizeof xv, &x));
  const char* names[] = {"x"};
  const shp_array_t* in[] = {x};
  shp_array_t* out[3] = {};
  OK(shp_runtime_run(rt, names, in, 1, out, 3));
  // w.grad = x^T (1 - tanh(x w)^2), checked against the formula.
  const float w[] = {0.5f, -1.0f, 2.0f, 0.25f};
  std::vector<float> expect(4, 0);
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 2; ++c) {
      float h = xv[r * 2] * w[c] + xv[r * 2 + 1] * w[2 + c];
      float d = 1 - std::tanh(h) * std::tanh(h);
      for (int k = 0; k < 2; ++k) expect[k * 2 + c] += xv[r * 2 + k] * d;
    }
  }
  std::vector<float> got = Floats(out[2]);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(got[i], expect[i], 1e-5) << i;
  for (shp_array_t* a : out) shp_array_destroy(a);
  // Positional binding is refused for a program with defaults.
  shp_array_t* out2[3] = {};
  std::string m = Message(shp_runtime_run(rt, nullptr, in, 1, out2, 3));
  EXPECT_NE(m.find("bind every input by name"), std::string::npos) << m;
  shp_runtime_destroy(rt);
  shp_array_destroy(x);

  // Errors name what is wrong; outputs stay untouched.
  shp_program_t* bad = reinterpret_cast<shp_program_t*>(0x1);
  const char* nope[] = {"nope"};
  m = Message(shp_program_jvp(p, nope, 1, &bad));
  EXPECT_NE(m.find("no input 'nope' (the inputs: x, w)"), std::string::npos) << m;
  EXPECT_EQ(bad, reinterpret_cast<shp_program_t*>(0x1));
  EXPECT_EQ(Code(shp_program_vjp(p, nope, 1, wrt, 2, &bad)), SHP_NOT_FOUND);
  EXPECT_EQ(Code(shp_program_grad(nullptr, "loss", wrt, 2, &bad)), SHP_INVALID_ARGUMENT);
  EXPECT_EQ(Code(shp_program_grad(p, nullptr, wrt, 2, &bad)), SHP_INVALID_ARGUMENT);
  EXPECT_EQ(Code(shp_program_jvp(p, nullptr, 1, &bad)), SHP_INVALID_ARGUMENT);

  // jvp of a derived program: inputs and outputs keep their roles.
  const char* wx[] = {"x"};
  shp_program_t* hvp = nullptr;
  OK(shp_program_jvp(gl, wx, 1, &hvp));
  EXPECT_EQ(shp_program_input_role(hvp, 3), SHP_INPUT_TANGENT);
  EXPECT_STREQ(shp_program_output_name(hvp, 4), "x.grad.tangent");
  EXPECT_EQ(shp_program_output_role(hvp, 4), SHP_OUTPUT_TANGENT);
  shp_program_destroy(hvp);
  shp_program_destroy(gl);
  shp_program_destroy(g);
  shp_program_destroy(p);
  shp_program_destroy(p0);
}

// Issue 38 item 12: tangents may have defaults. jvp of loss(x, w) with respect to x and the
// parameter w, x.tangent defaulting to 1 (over x's symbolic shape) and w.tangent to 0.5: a run
// that leaves them out equals a run that gives those arrays, at every batch size, after a
// serialize/load round trip too.
TEST(AutodiffApi, JvpTangentsMayHaveFillDefaults) {
  shp_program_t* p = Loss();
  ASSERT_NE(p, nullptr);
  const char* wrt[] = {"x", "w"};
  const double fills[] = {1.0, 0.5};
  shp_program_t* jp = nullptr;
  OK(shp_program_jvp_with_default_tangents(p, wrt, 2, fills, &jp));
  ASSERT_EQ(shp_program_input_count(jp), 4u);
  EXPECT_STREQ(shp_program_input_name(jp, 2), "x.tangent");
  EXPECT_STREQ(shp_program_input_name(jp, 3), "w.tangent");
  EXPECT_TRUE(shp_program_input_has_default(jp, 2));
  EXPECT_TRUE(shp_program_input_has_default(jp, 3));
  double v = 0;
  OK(shp_program_input_default_fill(jp, 2, &v));
  EXPECT_EQ(v, 1.0);
  OK(shp_program_input_default_fill(jp, 3, &v));
  EXPECT_EQ(v, 0.5);
  // w.tangent's shape is constant: its default is an array; x.tangent's is symbolic.
  shp_array_t* wd = nullptr;
  OK(shp_program_input_default(jp, 3, &wd));
  EXPECT_EQ(Floats(wd), std::vector<float>(4, 0.5f));
  shp_array_destroy(wd);
  shp_array_t* xd = reinterpret_cast<shp_array_t*>(0x1);
  std::string m = Message(shp_program_input_default(jp, 2, &xd));
  EXPECT_NE(m.find("input 'x.tangent' has the fill default 1 over the symbolic shape (batch, 2)"),
            std::string::npos)
      << m;
  EXPECT_EQ(xd, reinterpret_cast<shp_array_t*>(0x1));
  // Inputs without a fill default; NULL arguments.
  v = -7;
  EXPECT_EQ(Code(shp_program_input_default_fill(jp, 0, &v)), SHP_INVALID_ARGUMENT);
  m = Message(shp_program_input_default_fill(jp, 1, &v));
  EXPECT_NE(m.find("input 'w' has no fill default (its default is an array"), std::string::npos)
      << m;
  EXPECT_EQ(Code(shp_program_input_default_fill(jp, 4, &v)), SHP_INVALID_ARGUMENT);
  EXPECT_EQ(Code(shp_program_input_default_fill(nullptr, 2, &v)), SHP_INVALID_ARGUMENT);
  EXPECT_EQ(Code(shp_program_input_default_fill(jp, 2, nullptr)), SHP_INVALID_ARGUMENT);
  EXPECT_EQ(v, -7);
  // shp_program_jvp (and a NULL default_fill) makes tangents without defaults.
  shp_program_t* plain = nullptr;
  OK(shp_program_jvp_with_default_tangents(p, wrt, 2, nullptr, &plain));
  EXPECT_FALSE(shp_program_input_has_default(plain, 2));
  shp_program_destroy(plain);

  shp_program_t* loaded = Reload(jp);
  ASSERT_NE(loaded, nullptr);
  OK(shp_program_input_default_fill(loaded, 2, &v));
  EXPECT_EQ(v, 1.0);
  for (const shp_program_t* prog :
       {static_cast<const shp_program_t*>(jp), static_cast<const shp_program_t*>(loaded)}) {
    shp_runtime_t* rt = nullptr;
    OK(shp_runtime_create(prog, nullptr, &rt));
    for (int64_t batch : {3, 5, 3, 1}) {
      SCOPED_TRACE(batch);
      std::vector<float> xv(static_cast<size_t>(batch) * 2), ones(xv.size(), 1.0f);
      for (size_t i = 0; i < xv.size(); ++i) xv[i] = 0.25f * static_cast<float>(i) - 0.5f;
      float halves[] = {0.5f, 0.5f, 0.5f, 0.5f};
      const int64_t xs[] = {batch, 2}, ws[] = {2, 2};
      shp_array_t *xa = nullptr, *ta = nullptr, *wa = nullptr;
      OK(shp_array_wrap(SHP_F32, xs, 2, xv.data(), xv.size() * 4, &xa));
      OK(shp_array_wrap(SHP_F32, xs, 2, ones.data(), ones.size() * 4, &ta));
      OK(shp_array_wrap(SHP_F32, ws, 2, halves, sizeof halves, &wa));
      // Left out: the defaults.
      const char* one_name[] = {"x"};
      const shp_array_t* one_in[] = {xa};
      shp_array_t* by_default[2] = {};
      OK(shp_runtime_run(rt, one_name, one_in, 1, by_default, 2));
      // Given: the arrays the defaults stand for.
      const char* all_names[] = {"x", "x.tangent", "w.tangent"};
      const shp_array_t* all_in[] = {xa, ta, wa};
      shp_array_t* given[2] = {};
      OK(shp_runtime_run(rt, all_names, all_in, 3, given, 2));
      for (int k = 0; k < 2; ++k) EXPECT_EQ(Floats(by_default[k]), Floats(given[k])) << k;
      if (batch > 0) {
        EXPECT_NE(Floats(given[1])[0], 0.0f);
      }
      // A dry run leaves them out as well.
      const shp_dtype_t dt[] = {SHP_F32};
      const int64_t* shapes[] = {xs};
      const size_t ranks[] = {2};
      OK(shp_runtime_dry_run(rt, one_name, dt, shapes, ranks, 1));
      for (shp_array_t* a : by_default) shp_array_destroy(a);
      for (shp_array_t* a : given) shp_array_destroy(a);
      shp_array_destroy(xa);
      shp_array_destroy(ta);
      shp_array_destroy(wa);
    }
    // Given by name, a tangent is still checked against x's shape; positions stay refused.
    float xv[6] = {}, tv[8] = {};
    const int64_t xs[] = {3, 2}, ts[] = {4, 2};
    shp_array_t *xa = nullptr, *ta = nullptr;
    OK(shp_array_wrap(SHP_F32, xs, 2, xv, sizeof xv, &xa));
    OK(shp_array_wrap(SHP_F32, ts, 2, tv, sizeof tv, &ta));
    const char* names[] = {"x", "x.tangent"};
    const shp_array_t* in[] = {xa, ta};
    shp_array_t* out[2] = {};
    EXPECT_EQ(Code(shp_runtime_run(rt, names, in, 2, out, 2)), SHP_SHAPE_MISMATCH);
    m = Message(shp_runtime_run(rt, nullptr, in, 1, out, 2));
    EXPECT_NE(m.find("bind every input by name"), std::string::npos) << m;
    EXPECT_EQ(out[0], nullptr);
    shp_array_destroy(xa);
    shp_array_destroy(ta);
    shp_runtime_destroy(rt);
  }

  // Transformations keep the defaults: grad of the jvp's tangent output.
  shp_program_t* g = nullptr;
  const char* wx[] = {"x"};
  OK(shp_program_grad(jp, "loss.tangent", wx, 1, &g));
  EXPECT_TRUE(shp_program_input_has_default(g, 2));
  OK(shp_program_input_default_fill(g, 2, &v));
  EXPECT_EQ(v, 1.0);
  shp_program_destroy(g);

  // Values that are not finite in the tangent's dtype, and bad arguments.
  shp_program_t* bad = reinterpret_cast<shp_program_t*>(0x1);
  const double nan_fill[] = {std::nan(""), 0.5};
  m = Message(shp_program_jvp_with_default_tangents(p, wrt, 2, nan_fill, &bad));
  EXPECT_NE(m.find("the fill default of input 'x.tangent' is nan, which is not a finite f32 value"),
            std::string::npos)
      << m;
  const double huge[] = {1.0, 1e300};
  EXPECT_EQ(Code(shp_program_jvp_with_default_tangents(p, wrt, 2, huge, &bad)),
            SHP_INVALID_ARGUMENT);
  const double inf[] = {INFINITY, 1.0};
  EXPECT_EQ(Code(shp_program_jvp_with_default_tangents(p, wrt, 2, inf, &bad)),
            SHP_INVALID_ARGUMENT);
  EXPECT_EQ(Code(shp_program_jvp_with_default_tangents(p, nullptr, 1, fills, &bad)),
            SHP_INVALID_ARGUMENT);
  EXPECT_EQ(Code(shp_program_jvp_with_default_tangents(p, wrt, 2, fills, nullptr)),
            SHP_INVALID_ARGUMENT);
  const char* nope[] = {"nope"};
  EXPECT_EQ(Code(shp_program_jvp_with_default_tangents(p, nope, 1, fills, &bad)), SHP_NOT_FOUND);
  EXPECT_EQ(bad, reinterpret_cast<shp_program_t*>(0x1));
  shp_program_destroy(loaded);
  shp_program_destroy(jp);
  shp_program_destroy(p);
}

}  // namespace
