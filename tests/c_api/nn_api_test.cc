// The neural-network building blocks of the C API (c_api/nn_api.cc) through the shared
// library: symbolic result shapes, every argument error and its message, and small runs
// against values computed here (onnxruntime checks them at scale: tools/python/test_nn_ort.py).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "shapepoly/shapepoly.h"

namespace {

std::string Message(shp_error_t* err) {
  std::string m = err ? shp_error_message(err) : "";
  shp_error_destroy(err);
  return m;
}

#define OK(call) ASSERT_EQ(Message(call), "")

// Expects `call` to fail with `code` and a message containing `part`.
#define FAILS(call, code, part)                                                       \
  do {                                                                                \
    shp_error_t* e_ = (call);                                                         \
    ASSERT_NE(e_, nullptr);                                                           \
    EXPECT_EQ(shp_error_code(e_), code) << shp_error_message(e_);                     \
    EXPECT_NE(std::string(shp_error_message(e_)).find(part), std::string::npos)       \
        << "message: " << shp_error_message(e_) << "\nexpected to contain: " << part; \
    shp_error_destroy(e_);                                                            \
  } while (0)

std::string ShapeOf(const shp_tensor_t* t) {
  const shp_dim_t* dims[16];
  size_t rank = 0;
  shp_error_t* e = shp_tensor_shape(t, dims, 16, &rank);
  if (e) return Message(e);
  std::string out = "(";
  for (size_t i = 0; i < rank; ++i) {
    char buf[128];
    size_t len;
    shp_error_destroy(shp_dim_to_string(dims[i], buf, sizeof buf, &len));
    out += (i ? ", " : "") + std::string(buf);
  }
  return out + (rank == 1 ? ",)" : ")");
}

struct Scope {
  shp_scope_t* s = nullptr;
  explicit Scope(std::vector<const char*> constraints = {}) {
    EXPECT_EQ(shp_scope_create(constraints.data(), constraints.size(), &s), nullptr);
  }
  ~Scope() { shp_scope_destroy(s); }
  const shp_tensor_t* In(const char* name, const char* spec, shp_dtype_t dt = SHP_F32) {
    const shp_tensor_t* t = nullptr;
    EXPECT_EQ(Message(shp_tensor_input(s, name, dt, spec, &t)), "");
    return t;
  }
  const shp_dim_t* Dim(const char* text) {
    const shp_dim_t* d = nullptr;
    EXPECT_EQ(Message(shp_dim_parse(s, text, &d)), "");
    return d;
  }
};

// Runs the one-output program ins -> out on f32 arrays (data[i] of shape shapes[i]).
std::vector<float> RunF32(shp_scope_t* s, const std::vector<const shp_tensor_t*>& ins,
                          const shp_tensor_t* out, const std::vector<std::vector<float>>& data,
                          const std::vector<std::vector<int64_t>>& shapes,
                          std::vector<int64_t>* out_shape = nullptr) {
  shp_program_t* p = nullptr;
  const char* name = "y";
  EXPECT_EQ(Message(shp_program_create(s, ins.data(), ins.size(), &out, &name, 1, &p)), "");
  shp_runtime_t* r = nullptr;
  EXPECT_EQ(Message(shp_runtime_create(p, nullptr, &r)), "");
  std::vector<shp_array_t*> arrays;
  for (size_t i = 0; i < data.size(); ++i) {
    shp_array_t* a = nullptr;
    EXPECT_EQ(Message(shp_array_wrap(SHP_F32, shapes[i].data(), shapes[i].size(),
                                     const_cast<float*>(data[i].data()),
                                     data[i].size() * sizeof(float), &a)),
              "");
    arrays.push_back(a);
  }
  shp_array_t* y = nullptr;
  std::vector<float> result;
  EXPECT_EQ(Message(shp_runtime_run(r, nullptr, arrays.data(), arrays.size(), &y, 1)), "");
  if (y) {
    const float* v = static_cast<const float*>(shp_array_data(y));
    result.assign(v, v + shp_array_nbytes(y) / sizeof(float));
    if (out_shape) {
      int64_t dims[8];
      size_t rank = 0;
      EXPECT_EQ(Message(shp_runtime_output_shape(r, 0, dims, 8, &rank)), "");
      out_shape->assign(dims, dims + rank);
    }
  }
  shp_array_destroy(y);
  for (shp_array_t* a : arrays) shp_array_destroy(a);
  shp_runtime_destroy(r);
  shp_program_destroy(p);
  return result;
}

TEST(NnApi, ActivationsKeepTheSymbolicShape) {
  Scope sc;
  const shp_tensor_t* x = sc.In("x", "n, 2*m + 1");
  const shp_tensor_t* y = nullptr;
  OK(shp_tensor_leaky_relu(x, 0.1, &y));
  EXPECT_EQ(ShapeOf(y), "(n, 2*m + 1)");
  OK(shp_tensor_elu(x, 1.0, &y));
  EXPECT_EQ(ShapeOf(y), "(n, 2*m + 1)");
  OK(shp_tensor_selu(x, 1.67, 1.05, &y));
  OK(shp_tensor_softplus(x, &y));
  OK(shp_tensor_softsign(x, &y));
  OK(shp_tensor_hard_sigmoid(x, 0.2, 0.5, &y));
  OK(shp_tensor_clip(x, -1, INFINITY, &y));
  OK(shp_tensor_log_softmax(x, -1, &y));
  EXPECT_EQ(ShapeOf(y), "(n, 2*m + 1)");
  const shp_tensor_t* slope = sc.In("slope", "2*m + 1");
  OK(shp_tensor_prelu(x, slope, &y));
  EXPECT_EQ(ShapeOf(y), "(n, 2*m + 1)");
}

TEST(NnApi, ActivationErrorsNameTheArgument) {
  Scope sc;
  const shp_tensor_t* x = sc.In("x", "n, 4");
  const shp_tensor_t* xi = sc.In("xi", "n, 4", SHP_I32);
  const shp_tensor_t* xb = sc.In("xb", "n", SHP_BOOL);
  const shp_tensor_t* y = reinterpret_cast<const shp_tensor_t*>(&sc);  // must stay untouched
  const shp_tensor_t* const before = y;
  FAILS(shp_tensor_leaky_relu(xi, 0.1, &y), SHP_DTYPE_MISMATCH,
        "leaky_relu: argument 'x' has dtype i32; expected f32, f64, f16 or bf16");
  FAILS(shp_tensor_leaky_relu(x, NAN, &y), SHP_INVALID_ARGUMENT,
        "leaky_relu: argument 'alpha' must be finite, got nan");
  FAILS(shp_tensor_elu(nullptr, 1, &y), SHP_INVALID_ARGUMENT, "argument 'x' must not be NULL");
  FAILS(shp_tensor_elu(x, 1, nullptr), SHP_INVALID_ARGUMENT,
        "argument 'tensor_out' must not be NULL");
  FAILS(shp_tensor_selu(x, 1, INFINITY, &y), SHP_INVALID_ARGUMENT, "'gamma' must be finite");
  FAILS(shp_tensor_hard_sigmoid(x, 0.2, -INFINITY, &y), SHP_INVALID_ARGUMENT,
        "'beta' must be finite");
  FAILS(shp_tensor_softplus(xi, &y), SHP_DTYPE_MISMATCH, "softplus: argument 'x' has dtype i32");
  FAILS(shp_tensor_softsign(xb, &y), SHP_DTYPE_MISMATCH, "softsign: argument 'x' has dtype bool");
  FAILS(shp_tensor_clip(xb, 0, 1, &y), SHP_DTYPE_MISMATCH,
        "clip: argument 'x' has dtype bool; expected a numeric dtype");
  FAILS(shp_tensor_clip(x, NAN, 1, &y), SHP_INVALID_ARGUMENT, "clip: argument 'min' is NaN");
  FAILS(shp_tensor_clip(x, 0, NAN, &y), SHP_INVALID_ARGUMENT, "clip: argument 'max' is NaN");
  FAILS(shp_tensor_log_softmax(x, 2, &y), SHP_INVALID_ARGUMENT,
        "log_softmax: axis 2 is out of range for 'x' of rank 2 (expected -2 <= axis < 2)");
  FAILS(shp_tensor_log_softmax(x, -3, &y), SHP_INVALID_ARGUMENT, "axis -3 is out of range");
  // prelu: slope's dtype, scope and broadcast direction.
  FAILS(shp_tensor_prelu(x, xi, &y), SHP_DTYPE_MISMATCH,
        "prelu: argument 'slope' has dtype i32; expected f32 (the dtype of 'x')");
  FAILS(shp_tensor_prelu(x, nullptr, &y), SHP_INVALID_ARGUMENT, "'slope' must not be NULL");
  const shp_tensor_t* wide = sc.In("wide", "3, n, 4");
  FAILS(shp_tensor_prelu(x, wide, &y), SHP_SHAPE_MISMATCH,
        "prelu: 'slope' of shape (3, n, 4) does not broadcast to 'x' of shape (n, 4)");
  const shp_tensor_t* three = sc.In("three", "3");
  FAILS(shp_tensor_prelu(x, three, &y), SHP_SHAPE_MISMATCH,
        "prelu: 'slope' does not broadcast to 'x': broadcast_to: ");
  Scope other;
  const shp_tensor_t* foreign = other.In("s", "4");
  FAILS(shp_tensor_prelu(x, foreign, &y), SHP_SCOPE_MISMATCH,
        "prelu: argument 'slope' belongs to another scope than 'x'");
  EXPECT_EQ(y, before);
}

TEST(NnApi, ClipOfIntegersRoundsTheBoundsInward) {
  Scope sc;
  const shp_tensor_t* x = sc.In("x", "n", SHP_I32);
  const shp_tensor_t* y = nullptr;
  OK(shp_tensor_clip(x, -1.5, 2.5, &y));  // [-1, 2]
  EXPECT_EQ(shp_tensor_dtype(y), SHP_I32);
  OK(shp_tensor_clip(x, -1e30, 1e30, &y));  // no bounds: beyond the range
  EXPECT_EQ(ShapeOf(y), "(n,)");
  const shp_tensor_t* x64 = sc.In("x64", "n", SHP_I64);
  OK(shp_tensor_clip(x64, 1e30, INFINITY, &y));  // saturates at INT64_MAX
  EXPECT_EQ(shp_tensor_dtype(y), SHP_I64);
  OK(shp_tensor_clip(x64, -INFINITY, 9.3e18, &y));  // past INT64_MAX: no bound
}

TEST(NnApi, ActivationValues) {
  Scope sc;
  const shp_tensor_t* x = sc.In("x", "n");
  const std::vector<float> in = {-3.0f, -0.5f, 0.0f, 0.25f, 2.0f, 30.0f};
  const std::vector<std::vector<int64_t>> shape = {{6}};
  const shp_tensor_t* y = nullptr;
  OK(shp_tensor_leaky_relu(x, 0.1, &y));
  std::vector<float> r = RunF32(sc.s, {x}, y, {in}, shape);
  ASSERT_EQ(r.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_FLOAT_EQ(r[i], in[i] >= 0 ? in[i] : 0.1f * in[i]);
  }
  OK(shp_tensor_softplus(x, &y));
  r = RunF32(sc.s, {x}, y, {in}, shape);
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_NEAR(r[i], std::log1p(std::exp(static_cast<double>(in[i]))),
                1e-6 * (1 + std::fabs(in[i])));
  }
  OK(shp_tensor_hard_sigmoid(x, 0.2, 0.5, &y));
  r = RunF32(sc.s, {x}, y, {in}, shape);
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_FLOAT_EQ(r[i], std::fmax(0.0f, std::fmin(1.0f, 0.2f * in[i] + 0.5f)));
  }
  OK(shp_tensor_clip(x, -1, 1, &y));
  r = RunF32(sc.s, {x}, y, {in}, shape);
  for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ(r[i], std::fmax(-1.0f, std::fmin(1.0f, in[i])));
  OK(shp_tensor_log_softmax(x, 0, &y));
  r = RunF32(sc.s, {x}, y, {in}, shape);
  double z = 0;
  for (float v : in) z += std::exp(static_cast<double>(v) - 30.0);
  for (size_t i = 0; i < in.size(); ++i) EXPECT_NEAR(r[i], in[i] - 30.0 - std::log(z), 1e-5);
}

TEST(NnApi, BatchNorm) {
  Scope sc;
  const shp_tensor_t* x = sc.In("x", "n, c, h, w");
  const shp_tensor_t* p[4] = {sc.In("scale", "c"), sc.In("bias", "c"), sc.In("mean", "c"),
                              sc.In("var", "c")};
  const shp_tensor_t* y = nullptr;
  OK(shp_tensor_batch_norm(x, p[0], p[1], p[2], p[3], 1e-5, &y));
  EXPECT_EQ(ShapeOf(y), "(n, c, h, w)");
  const shp_tensor_t* x2 = sc.In("x2", "n, c");
  OK(shp_tensor_batch_norm(x2, p[0], p[1], p[2], p[3], 0, &y));
  EXPECT_EQ(ShapeOf(y), "(n, c)");
  const shp_tensor_t* x1 = sc.In("x1", "c");
  FAILS(shp_tensor_batch_norm(x1, p[0], p[1], p[2], p[3], 1e-5, &y), SHP_SHAPE_MISMATCH,
        "batch_norm: argument 'x' has rank 1 (shape (c,)); expected rank >= 2 ([N, C, ...])");
  FAILS(shp_tensor_batch_norm(x, p[0], p[1], p[2], p[3], -1, &y), SHP_INVALID_ARGUMENT,
        "batch_norm: argument 'epsilon' must be >= 0, got -1");
  FAILS(shp_tensor_batch_norm(x, p[0], p[1], p[2], nullptr, 1e-5, &y), SHP_INVALID_ARGUMENT,
        "argument 'var' must not be NULL");
  const shp_tensor_t* d = sc.In("d", "d");
  FAILS(shp_tensor_batch_norm(x, p[0], d, p[2], p[3], 1e-5, &y), SHP_INCONCLUSIVE,
        "batch_norm: the size of 'bias' must equal C (axis 1 of 'x'): cannot prove d == c");
  const shp_tensor_t* c1 = sc.In("c1", "c + 1");
  FAILS(shp_tensor_batch_norm(x, p[0], p[1], c1, p[3], 1e-5, &y), SHP_SHAPE_MISMATCH,
        "the size of 'mean' must equal C (axis 1 of 'x'): c + 1 == c is false");
  const shp_tensor_t* m2 = sc.In("m2", "c, 1");
  FAILS(shp_tensor_batch_norm(x, p[0], p[1], p[2], m2, 1e-5, &y), SHP_SHAPE_MISMATCH,
        "argument 'var' has shape (c, 1); expected [C] = (c,)");
  const shp_tensor_t* f64 = sc.In("f64", "c", SHP_F64);
  FAILS(shp_tensor_batch_norm(x, f64, p[1], p[2], p[3], 1e-5, &y), SHP_DTYPE_MISMATCH,
        "argument 'scale' has dtype f64; expected f32");

  // Values: x [1, 2, 2]: channel 0 scale 2, bias 1, mean 3, var 4; channel 1 all 1 / 0.
  Scope v;
  const shp_tensor_t* vx = v.In("x", "n, 2, 2");
  const shp_tensor_t* vp[4] = {v.In("scale", "2"), v.In("bias", "2"), v.In("mean", "2"),
                               v.In("var", "2")};
  OK(shp_tensor_batch_norm(vx, vp[0], vp[1], vp[2], vp[3], 0.0, &y));
  const std::vector<float> r =
      RunF32(v.s, {vx, vp[0], vp[1], vp[2], vp[3]}, y,
             {{1, 5, 2, 4}, {2, 1}, {1, 0}, {3, 0}, {4, 1}}, {{1, 2, 2}, {2}, {2}, {2}, {2}});
  const std::vector<float> want = {2 * (1 - 3) / 2.0f + 1, 2 * (5 - 3) / 2.0f + 1, 2, 4};
  EXPECT_EQ(r, want);
}

TEST(NnApi, Lrn) {
  Scope sc;
  const shp_tensor_t* x = sc.In("x", "n, c, h, w");
  const shp_tensor_t* y = nullptr;
  OK(shp_tensor_lrn(x, 5, 1e-4, 0.75, 1.0, &y));
  EXPECT_EQ(ShapeOf(y), "(n, c, h, w)");
  FAILS(shp_tensor_lrn(x, 0, 1e-4, 0.75, 1.0, &y), SHP_INVALID_ARGUMENT,
        "lrn: argument 'size' must be >= 1, got 0");
  FAILS(shp_tensor_lrn(x, 3, 1e-4, NAN, 1.0, &y), SHP_INVALID_ARGUMENT, "'beta' must be finite");
  FAILS(shp_tensor_lrn(sc.In("v", "c"), 3, 1e-4, 0.75, 1.0, &y), SHP_SHAPE_MISMATCH,
        "lrn: argument 'x' has rank 1");
  // size 2 on 3 channels: the window of c is [c, c + 1].
  Scope v;
  const shp_tensor_t* vx = v.In("x", "1, 3");
  OK(shp_tensor_lrn(vx, 2, 0.5, 1.0, 1.0, &y));
  const std::vector<float> r = RunF32(v.s, {vx}, y, {{1, 2, 3}}, {{1, 3}});
  const float want[] = {1 / (1 + 0.25f * 5), 2 / (1 + 0.25f * 13), 3 / (1 + 0.25f * 9)};
  ASSERT_EQ(r.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(r[i], want[i]);
}

TEST(NnApi, PadModes) {
  Scope sc({"n >= 3"});
  const shp_tensor_t* x = sc.In("x", "n, m");
  const shp_dim_t* lo[2] = {sc.Dim("2"), sc.Dim("0")};
  const shp_dim_t* hi[2] = {sc.Dim("1"), sc.Dim("k")};
  const shp_tensor_t* y = nullptr;
  OK(shp_tensor_pad_mode(x, lo, hi, 2, SHP_PAD_CONSTANT, 7, &y));
  EXPECT_EQ(ShapeOf(y), "(n + 3, k + m)");
  OK(shp_tensor_pad_mode(x, lo, hi, 2, SHP_PAD_EDGE, 0, &y));  // records m >= 1
  EXPECT_EQ(ShapeOf(y), "(n + 3, k + m)");
  OK(shp_tensor_pad_mode(x, lo, hi, 2, SHP_PAD_REFLECT, 0, &y));  // records k <= m - 1
  EXPECT_EQ(ShapeOf(y), "(n + 3, k + m)");
  const shp_dim_t* big[2] = {sc.Dim("n"), sc.Dim("0")};
  FAILS(shp_tensor_pad_mode(x, big, hi, 2, SHP_PAD_REFLECT, 0, &y), SHP_SHAPE_MISMATCH,
        "pad_mode: reflect padding of axis 0 needs each pad <= dim - 1 (dim n): n <= n - 1 is "
        "false");
  // An undecided need of axis 0 (k <= n - 1) is not kept when axis 1 then fails.
  const shp_dim_t* k_lo[2] = {sc.Dim("k"), sc.Dim("0")};
  const shp_dim_t* m_hi[2] = {sc.Dim("0"), sc.Dim("m")};
  FAILS(shp_tensor_pad_mode(x, k_lo, m_hi, 2, SHP_PAD_REFLECT, 0, &y), SHP_SHAPE_MISMATCH,
        "reflect padding of axis 1 needs each pad <= dim - 1 (dim m): m <= m - 1 is false");
  shp_truth_t truth = SHP_TRUE;
  OK(shp_dim_compare(sc.Dim("k"), SHP_CMP_LE, sc.Dim("n - 1"), &truth));
  EXPECT_EQ(truth, SHP_UNKNOWN);
  const shp_dim_t* neg[2] = {sc.Dim("-1"), sc.Dim("0")};
  FAILS(shp_tensor_pad_mode(x, neg, hi, 2, SHP_PAD_EDGE, 0, &y), SHP_SHAPE_MISMATCH,
        "pad_mode: low[0] must be >= 0: -1 >= 0 is false");
  FAILS(shp_tensor_pad_mode(x, lo, hi, 1, SHP_PAD_EDGE, 0, &y), SHP_INVALID_ARGUMENT,
        "pad_mode: rank 1 given for 'x' of rank 2");
  // An out-of-range value as C can pass it: converted in the call, never loaded from an
  // enum-typed variable (UBSan's invalid-enum-load check would flag the test itself).
  FAILS(shp_tensor_pad_mode(x, lo, hi, 2, static_cast<shp_pad_mode_t>(9), 0, &y),
        SHP_INVALID_ARGUMENT,
        "pad_mode: argument 'mode' is not a shp_pad_mode_t value: 9 (expected 0..2");
  const shp_dim_t* null_lo[2] = {nullptr, sc.Dim("0")};
  FAILS(shp_tensor_pad_mode(x, null_lo, hi, 2, SHP_PAD_EDGE, 0, &y), SHP_INVALID_ARGUMENT,
        "pad_mode: low[0] is NULL");
  Scope other;
  const shp_dim_t* foreign[2] = {other.Dim("2"), other.Dim("q")};
  FAILS(shp_tensor_pad_mode(x, lo, foreign, 2, SHP_PAD_EDGE, 0, &y), SHP_SCOPE_MISMATCH,
        "pad_mode");
  const shp_tensor_t* e = sc.In("e", "0, 2");
  const shp_dim_t* one[2] = {sc.Dim("1"), sc.Dim("0")};
  FAILS(shp_tensor_pad_mode(e, one, one, 2, SHP_PAD_EDGE, 0, &y), SHP_SHAPE_MISMATCH,
        "pad_mode: edge padding of axis 0 needs a non-empty axis (dim 0 >= 1): 0 >= 1 is false");

  // numpy.pad values on a 3 x 2 input: reflect rows by (2, 1), edge columns by (1, 2).
  Scope v;
  const shp_tensor_t* vx = v.In("x", "r, 2");
  const shp_dim_t* rl[2] = {v.Dim("2"), v.Dim("0")};
  const shp_dim_t* rh[2] = {v.Dim("1"), v.Dim("0")};
  OK(shp_tensor_pad_mode(vx, rl, rh, 2, SHP_PAD_REFLECT, 0, &y));
  const shp_dim_t* el[2] = {v.Dim("0"), v.Dim("1")};
  const shp_dim_t* eh[2] = {v.Dim("0"), v.Dim("2")};
  const shp_tensor_t* z = nullptr;
  OK(shp_tensor_pad_mode(y, el, eh, 2, SHP_PAD_EDGE, 0, &z));
  std::vector<int64_t> shape;
  const std::vector<float> r = RunF32(v.s, {vx}, z, {{1, 2, 3, 4, 5, 6}}, {{3, 2}}, &shape);
  EXPECT_EQ(shape, (std::vector<int64_t>{6, 5}));
  const std::vector<float> want = {5, 5, 6, 6, 6, 3, 3, 4, 4, 4, 1, 1, 2, 2, 2,
                                   3, 3, 4, 4, 4, 5, 5, 6, 6, 6, 3, 3, 4, 4, 4};
  EXPECT_EQ(r, want);
  // The recorded assertion r >= 3 (reflect by 2) fails at run time for r = 2.
  shp_program_t* p = nullptr;
  const char* name = "y";
  OK(shp_program_create(v.s, &vx, 1, &z, &name, 1, &p));
  shp_runtime_t* rt = nullptr;
  OK(shp_runtime_create(p, nullptr, &rt));
  const shp_dtype_t dt = SHP_F32;
  const int64_t small[2] = {2, 2};
  const int64_t* shapes[1] = {small};
  const size_t ranks[1] = {2};
  FAILS(shp_runtime_dry_run(rt, nullptr, &dt, shapes, ranks, 1), SHP_CONSTRAINT_VIOLATION,
        "reflect padding of axis 0");
  shp_runtime_destroy(rt);
  shp_program_destroy(p);
}

TEST(NnApi, DepthToSpaceAndBack) {
  Scope sc({"mod(c, 4) == 0"});
  const shp_tensor_t* x = sc.In("x", "n, c, h, w");
  const shp_tensor_t* y = nullptr;
  OK(shp_tensor_depth_to_space(x, 2, SHP_DEPTH_TO_SPACE_DCR, &y));
  EXPECT_EQ(ShapeOf(y), "(n, floordiv(c, 4), 2*h, 2*w)");
  OK(shp_tensor_depth_to_space(x, 2, SHP_DEPTH_TO_SPACE_CRD, &y));
  const shp_tensor_t* z = nullptr;
  OK(shp_tensor_space_to_depth(y, 2, &z));
  EXPECT_EQ(ShapeOf(z), "(n, 4*floordiv(c, 4), h, w)");
  const shp_tensor_t* x4 = sc.In("x4", "n, 4*k, 3*h, 6");
  OK(shp_tensor_depth_to_space(x4, 2, SHP_DEPTH_TO_SPACE_DCR, &y));
  EXPECT_EQ(ShapeOf(y), "(n, k, 6*h, 12)");
  OK(shp_tensor_space_to_depth(x4, 3, &y));
  EXPECT_EQ(ShapeOf(y), "(n, 36*k, h, 2)");

  FAILS(shp_tensor_depth_to_space(x, 3, SHP_DEPTH_TO_SPACE_DCR, &y), SHP_INCONCLUSIVE,
        "depth_to_space: C (axis 1 of 'x', c) must be divisible by blocksize^2 = 9: cannot "
        "prove mod(c, 9) == 0");
  FAILS(shp_tensor_depth_to_space(x, 3, SHP_DEPTH_TO_SPACE_DCR, &y), SHP_INCONCLUSIVE,
        "add the constraint 'mod(c, 9) == 0' when creating the scope");
  const shp_tensor_t* x6 = sc.In("x6", "n, 6, h, w");
  FAILS(shp_tensor_depth_to_space(x6, 2, SHP_DEPTH_TO_SPACE_CRD, &y), SHP_SHAPE_MISMATCH,
        "depth_to_space: C (axis 1 of 'x', 6) must be divisible by blocksize^2 = 4: 2 == 0 is "
        "false");
  FAILS(shp_tensor_depth_to_space(x, 0, SHP_DEPTH_TO_SPACE_DCR, &y), SHP_INVALID_ARGUMENT,
        "depth_to_space: argument 'blocksize' must be >= 1, got 0");
  FAILS(shp_tensor_depth_to_space(x, 2, static_cast<shp_depth_to_space_mode_t>(2), &y),
        SHP_INVALID_ARGUMENT, "argument 'mode' is not a shp_depth_to_space_mode_t value: 2");
  FAILS(shp_tensor_depth_to_space(sc.In("x3", "c, h, w"), 2, SHP_DEPTH_TO_SPACE_DCR, &y),
        SHP_SHAPE_MISMATCH,
        "depth_to_space: argument 'x' has rank 3 (shape (c, h, w)); expected "
        "rank 4 ([N, C, H, W])");
  FAILS(shp_tensor_space_to_depth(x, 2, &y), SHP_INCONCLUSIVE,
        "space_to_depth: H (axis 2 of 'x', h) must be divisible by blocksize = 2");
  FAILS(shp_tensor_space_to_depth(x4, 2, &y), SHP_INCONCLUSIVE, "H (axis 2 of 'x', 3*h)");
  const shp_tensor_t* x5 = sc.In("x5", "n, c, 4, 5");
  FAILS(shp_tensor_space_to_depth(x5, 2, &y), SHP_SHAPE_MISMATCH,
        "space_to_depth: W (axis 3 of 'x', 5) must be divisible by blocksize = 2");
  FAILS(shp_tensor_space_to_depth(x5, -1, &y), SHP_INVALID_ARGUMENT, "'blocksize' must be >= 1");

  // Values: ONNX's DepthToSpace examples on [1, 8, 1, 1] -> [1, 2, 2, 2].
  Scope v;
  const shp_tensor_t* vx = v.In("x", "1, 8, 1, 1");
  std::vector<float> in(8);
  for (int i = 0; i < 8; ++i) in[i] = static_cast<float>(i);
  OK(shp_tensor_depth_to_space(vx, 2, SHP_DEPTH_TO_SPACE_DCR, &y));
  EXPECT_EQ(RunF32(v.s, {vx}, y, {in}, {{1, 8, 1, 1}}),
            (std::vector<float>{0, 2, 4, 6, 1, 3, 5, 7}));
  OK(shp_tensor_depth_to_space(vx, 2, SHP_DEPTH_TO_SPACE_CRD, &y));
  EXPECT_EQ(RunF32(v.s, {vx}, y, {in}, {{1, 8, 1, 1}}), in);
  // space_to_depth inverts DCR depth_to_space.
  OK(shp_tensor_depth_to_space(vx, 2, SHP_DEPTH_TO_SPACE_DCR, &y));
  OK(shp_tensor_space_to_depth(y, 2, &z));
  EXPECT_EQ(RunF32(v.s, {vx}, z, {in}, {{1, 8, 1, 1}}), in);
}

}  // namespace
