// Data-dependent sizes through the shared library (issue 13): nonzero, boolean_mask and
// size_from_value make unbacked variables with sound bounds; guards on them teach the fix;
// shp_scope_check becomes a fact and a run-time assertion; later ops use the variables in
// their shapes; the runtime plans the stages when the values are known; programs round-trip.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
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

// Expects `call` to fail with `code` and a message containing each of `parts`.
void ExpectFails(shp_error_t* e, shp_code_t code, const std::vector<std::string>& parts) {
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(shp_error_code(e), code) << shp_error_message(e);
  for (const std::string& part : parts) {
    EXPECT_NE(std::string(shp_error_message(e)).find(part), std::string::npos)
        << "message: " << shp_error_message(e) << "\nexpected to contain: " << part;
  }
  shp_error_destroy(e);
}

std::string Str(const shp_dim_t* d) {
  char buf[256];
  size_t len = 0;
  shp_error_destroy(shp_dim_to_string(d, buf, sizeof buf, &len));
  return buf;
}

std::string ShapeOf(const shp_tensor_t* t) {
  const shp_dim_t* dims[16];
  size_t rank = 0;
  shp_error_t* e = shp_tensor_shape(t, dims, 16, &rank);
  if (e) return Message(e);
  std::string out = "(";
  for (size_t i = 0; i < rank; ++i) out += (i ? ", " : "") + Str(dims[i]);
  return out + (rank == 1 ? ",)" : ")");
}

const shp_dim_t* DimOf(const shp_tensor_t* t, size_t axis) {
  const shp_dim_t* dims[16];
  size_t rank = 0;
  shp_error_destroy(shp_tensor_shape(t, dims, 16, &rank));
  return axis < rank ? dims[axis] : nullptr;
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

struct Array {
  shp_array_t* a = nullptr;
  Array(shp_dtype_t dt, std::vector<int64_t> shape) {
    EXPECT_EQ(Message(shp_array_create(dt, shape.data(), shape.size(), &a)), "");
  }
  explicit Array(shp_array_t* x) : a(x) {}
  ~Array() { shp_array_destroy(a); }
  Array(const Array&) = delete;
  template <typename T>
  T* data() const {
    return static_cast<T*>(shp_array_data(a));
  }
  std::vector<int64_t> shape() const {
    return std::vector<int64_t>(shp_array_shape(a), shp_array_shape(a) + shp_array_rank(a));
  }
};

struct Program {
  shp_program_t* p = nullptr;
  shp_runtime_t* r = nullptr;
  Program(shp_scope_t* s, std::vector<const shp_tensor_t*> ins,
          std::vector<const shp_tensor_t*> outs, size_t threads = 1, size_t bound_bytes = 0) {
    std::vector<std::string> names;
    for (size_t i = 0; i < outs.size(); ++i) names.push_back("y" + std::to_string(i));
    std::vector<const char*> cn;
    for (const std::string& n : names) cn.push_back(n.c_str());
    EXPECT_EQ(Message(shp_program_create(s, ins.data(), ins.size(), outs.data(), cn.data(),
                                         outs.size(), &p)),
              "");
    MakeRuntime(threads, bound_bytes);
  }
  explicit Program(shp_program_t* loaded) : p(loaded) { MakeRuntime(1, 0); }
  void MakeRuntime(size_t threads, size_t bound_bytes) {
    shp_runtime_options_t* o = nullptr;
    EXPECT_EQ(Message(shp_runtime_options_create(&o)), "");
    EXPECT_EQ(Message(shp_runtime_options_set_num_threads(o, static_cast<int32_t>(threads))), "");
    EXPECT_EQ(Message(shp_runtime_options_set_bound_allocation(o, bound_bytes)), "");
    if (p) {
      EXPECT_EQ(Message(shp_runtime_create(p, o, &r)), "");
    }
    shp_runtime_options_destroy(o);
  }
  ~Program() {
    shp_runtime_destroy(r);
    shp_program_destroy(p);
  }
  // Runs on `inputs` (by position); the outputs, or the error.
  shp_error_t* Run(const std::vector<const Array*>& inputs, std::vector<shp_array_t*>* outs) {
    std::vector<const shp_array_t*> in;
    for (const Array* a : inputs) in.push_back(a->a);
    outs->assign(shp_program_output_count(p), nullptr);
    return shp_runtime_run(r, nullptr, in.data(), in.size(), outs->data(), outs->size());
  }
};

// ---- Tracing: shapes, bounds, guards ----

TEST(DataDependent, NonzeroShapeAndBounds) {
  Scope sc;
  const shp_tensor_t* x = sc.In("x", "n, 4");
  const shp_tensor_t* idx = nullptr;
  OK(shp_tensor_nonzero(x, &idx));
  EXPECT_EQ(ShapeOf(idx), "(u0, 2)");
  EXPECT_EQ(shp_tensor_dtype(idx), SHP_I64);
  const shp_dim_t* u = DimOf(idx, 0);
  int64_t lo = 0, hi = 0;
  OK(shp_dim_bounds(u, &lo, &hi));
  EXPECT_EQ(lo, 0);
  EXPECT_EQ(hi, INT64_MAX);  // n is unbounded
  // The bound relative to n is a fact: u0 <= 4*n is decided, u0 <= 3*n is not.
  shp_truth_t t;
  OK(shp_dim_compare(u, SHP_CMP_LE, sc.Dim("4*n"), &t));
  EXPECT_EQ(t, SHP_TRUE);
  OK(shp_dim_compare(u, SHP_CMP_LE, sc.Dim("3*n"), &t));
  EXPECT_EQ(t, SHP_UNKNOWN);
  OK(shp_dim_compare(u, SHP_CMP_GE, sc.Dim("0"), &t));
  EXPECT_EQ(t, SHP_TRUE);
  // The variable is listed as unbacked, with its origin.
  size_t nv = shp_scope_variable_count(sc.s);
  bool found = false;
  for (size_t i = 0; i < nv; ++i) {
    if (std::string(shp_scope_variable_name(sc.s, i)) != "u0") {
      EXPECT_FALSE(shp_scope_variable_is_unbacked(sc.s, i));
      EXPECT_EQ(shp_scope_variable_origin(sc.s, i), nullptr);
      continue;
    }
    found = true;
    EXPECT_TRUE(shp_scope_variable_is_unbacked(sc.s, i));
    EXPECT_NE(std::string(shp_scope_variable_origin(sc.s, i)).find("nonzero"), std::string::npos);
  }
  EXPECT_TRUE(found);
  // A second op makes u1.
  const shp_tensor_t* idx2 = nullptr;
  OK(shp_tensor_nonzero(x, &idx2));
  EXPECT_EQ(ShapeOf(idx2), "(u1, 2)");
}

TEST(DataDependent, BoundsFollowDeclaredRanges) {
  // For nonzero over (n, 4) with 1 <= n <= N, u is in [0, 4*N]: checked for many N.
  for (int64_t nmax : {1, 2, 7, 100, 1000000}) {
    shp_scope_t* s = nullptr;
    OK(shp_scope_create(nullptr, 0, &s));
    OK(shp_scope_declare(s, "n", 1, nmax));
    const shp_tensor_t* x = nullptr;
    OK(shp_tensor_input(s, "x", SHP_F32, "n, 4", &x));
    const shp_tensor_t* idx = nullptr;
    OK(shp_tensor_nonzero(x, &idx));
    int64_t lo = -1, hi = -1;
    OK(shp_dim_bounds(DimOf(idx, 0), &lo, &hi));
    EXPECT_EQ(lo, 0);
    EXPECT_EQ(hi, 4 * nmax);
    shp_scope_destroy(s);
  }
}

TEST(DataDependent, GuardIsInconclusiveAndTeachesTheCheck) {
  Scope sc;
  const shp_tensor_t* x = sc.In("x", "n, 4");
  const shp_tensor_t* idx = nullptr;
  OK(shp_tensor_nonzero(x, &idx));
  bool b = false;
  ExpectFails(shp_dim_guard(DimOf(idx, 0), SHP_CMP_GE, sc.Dim("1"), "need a row", &b),
              SHP_INCONCLUSIVE,
              {"u0", "data-dependent", "nonzero", "[0, inf]", "u0 <= 4*n",
               "shp_scope_check(scope, u0, SHP_CMP_GE, 1"});
  // A hint is refused: it has no example value.
  ExpectFails(shp_scope_set_hint(sc.s, "u0", 3), SHP_INVALID_ARGUMENT,
              {"data-dependent", "shp_scope_check"});
  // Decided comparisons need no guard.
  OK(shp_dim_guard(DimOf(idx, 0), SHP_CMP_GE, sc.Dim("0"), nullptr, &b));
  EXPECT_TRUE(b);
}

TEST(DataDependent, BroadcastAndReshapeErrorsTeach) {
  Scope sc;
  const shp_tensor_t* x = sc.In("x", "n");
  const shp_tensor_t* idx = nullptr;
  OK(shp_tensor_nonzero(x, &idx));
  const shp_dim_t* u = DimOf(idx, 0);
  // A [u] vector against an [n] vector: neither is provably 1 nor equal to the other.
  const shp_dim_t* one[1] = {u};
  const shp_tensor_t* ones = nullptr;
  OK(shp_tensor_iota(sc.s, SHP_F32, one, 1, 0, &ones));
  const shp_tensor_t* sum = nullptr;
  ExpectFails(shp_tensor_binary(SHP_ADD, ones, x, &sum), SHP_INCONCLUSIVE,
              {"u0", "data-dependent", "nonzero", "shp_scope_check(scope, u0, SHP_CMP_EQ, n"});
  // Reshaping [u] to [-1, 2] needs u to be even.
  const shp_dim_t* to[2] = {nullptr, sc.Dim("2")};
  const shp_tensor_t* r = nullptr;
  ExpectFails(
      shp_tensor_reshape(ones, to, 2, &r), SHP_INCONCLUSIVE,
      {"u0", "data-dependent", "reshape", "shp_scope_check(scope, mod(u0, 2), SHP_CMP_EQ, 0"});
  // A branch on it.
  bool b;
  ExpectFails(shp_dim_guard(u, SHP_CMP_GT, sc.Dim("n - 3"), nullptr, &b), SHP_INCONCLUSIVE,
              {"u0", "nonzero", "shp_scope_check"});
  // After the check, the reshape is decided.
  const shp_dim_t* zero = sc.Dim("0");
  const shp_dim_t* m = nullptr;
  OK(shp_dim_mod(u, sc.Dim("2"), &m));
  OK(shp_scope_check(sc.s, m, SHP_CMP_EQ, zero, "pairs"));
  OK(shp_tensor_reshape(ones, to, 2, &r));
  EXPECT_EQ(ShapeOf(r), "(floordiv(u0, 2), 2)");
}

TEST(DataDependent, ArgumentErrors) {
  Scope sc;
  const shp_tensor_t* x = sc.In("x", "n, 3");
  const shp_tensor_t* mask = sc.In("m", "n", SHP_BOOL);
  const shp_tensor_t* fmask = sc.In("fm", "n");
  const shp_tensor_t* other = sc.In("o", "k", SHP_BOOL);
  const shp_tensor_t* out = nullptr;
  ExpectFails(shp_tensor_nonzero(nullptr, &out), SHP_INVALID_ARGUMENT, {"x"});
  ExpectFails(shp_tensor_nonzero(x, nullptr), SHP_INVALID_ARGUMENT, {"tensor_out"});
  ExpectFails(shp_tensor_boolean_mask(x, fmask, 0, &out), SHP_DTYPE_MISMATCH, {"bool"});
  ExpectFails(shp_tensor_boolean_mask(x, mask, 2, &out), SHP_INVALID_ARGUMENT, {"axis"});
  const shp_tensor_t* mask4 = sc.In("m4", "4", SHP_BOOL);
  ExpectFails(shp_tensor_boolean_mask(x, mask4, 1, &out), SHP_SHAPE_MISMATCH,
              {"mask", "(4,)", "(n, 3)"});
  ExpectFails(shp_tensor_boolean_mask(x, other, 0, &out), SHP_INCONCLUSIVE, {"k", "n"});
  OK(shp_tensor_boolean_mask(x, mask, -2, &out));
  EXPECT_EQ(ShapeOf(out), "(u0, 3)");
  const shp_tensor_t* v = sc.In("v", "", SHP_I64);
  const shp_dim_t* d = nullptr;
  ExpectFails(shp_tensor_size_from_value(v, "k2", -1, 5, &d), SHP_INVALID_ARGUMENT, {"-1"});
  ExpectFails(shp_tensor_size_from_value(v, "k2", 5, 4, &d), SHP_INVALID_ARGUMENT, {"empty"});
  ExpectFails(shp_tensor_size_from_value(v, "n", 0, 4, &d), SHP_INVALID_ARGUMENT, {"'n'"});
  ExpectFails(shp_tensor_size_from_value(x, "k2", 0, 4, &d), SHP_DTYPE_MISMATCH, {"i64"});
  ExpectFails(shp_tensor_size_from_value(v, "k2", 0, 4, nullptr), SHP_INVALID_ARGUMENT,
              {"dim_out"});
  OK(shp_tensor_size_from_value(v, "k2", 1, 4, &d));
  EXPECT_EQ(Str(d), "k2");
  int64_t lo, hi;
  OK(shp_dim_bounds(d, &lo, &hi));
  EXPECT_EQ(lo, 1);
  EXPECT_EQ(hi, 4);
}

// ---- Running ----

// Row-major argwhere, computed here.
std::vector<int64_t> ArgWhere(const std::vector<float>& x, const std::vector<int64_t>& shape) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] == 0.0f) continue;
    size_t rem = i;
    std::vector<int64_t> idx(shape.size());
    for (size_t k = shape.size(); k-- > 0;) {
      idx[k] = static_cast<int64_t>(rem % static_cast<size_t>(shape[k]));
      rem /= static_cast<size_t>(shape[k]);
    }
    out.insert(out.end(), idx.begin(), idx.end());
  }
  return out;
}

TEST(DataDependent, NonzeroRunsEmptyPartialFull) {
  Scope sc;
  OK(shp_scope_declare(sc.s, "n", 0, INT64_MAX));
  const shp_tensor_t* x = sc.In("x", "n, 4");
  const shp_tensor_t* idx = nullptr;
  OK(shp_tensor_nonzero(x, &idx));
  for (size_t threads : {1, 2}) {
    Program prog(sc.s, {x}, {idx}, threads);
    std::mt19937 rng(7);
    for (int64_t n : {0, 1, 3, 50, 10000}) {
      for (double density : {0.0, 0.3, 1.0}) {
        Array a(SHP_F32, {n, 4});
        std::vector<float> v(static_cast<size_t>(n * 4));
        std::bernoulli_distribution keep(density);
        for (float& f : v) f = keep(rng) ? 1.5f : 0.0f;
        if (!v.empty()) std::memcpy(a.data<float>(), v.data(), v.size() * sizeof(float));
        std::vector<shp_array_t*> outs;
        OK(prog.Run({&a}, &outs));
        Array y(outs[0]);
        std::vector<int64_t> want = ArgWhere(v, {n, 4});
        ASSERT_EQ(y.shape(), (std::vector<int64_t>{static_cast<int64_t>(want.size() / 2), 2}));
        EXPECT_EQ(std::vector<int64_t>(y.data<int64_t>(), y.data<int64_t>() + want.size()), want);
      }
    }
    // One plan per input shape, then one per (shape, count).
    EXPECT_GT(shp_runtime_plans_built(prog.r), 0u);
  }
}

// The README's example: the mean of the rows of x whose score exceeds a threshold.
TEST(DataDependent, MaskThenAverage) {
  Scope sc;
  const shp_tensor_t* x = sc.In("x", "n, 3");
  const shp_tensor_t* score = sc.In("score", "n");
  float th = 0.5f;
  const shp_tensor_t* t = nullptr;
  OK(shp_tensor_constant(sc.s, SHP_F32, nullptr, 0, &th, sizeof th, &t));
  const shp_tensor_t* mask = nullptr;
  OK(shp_tensor_compare(score, SHP_CMP_GT, t, &mask));
  const shp_tensor_t* rows = nullptr;
  OK(shp_tensor_boolean_mask(x, mask, 0, &rows));
  EXPECT_EQ(ShapeOf(rows), "(u0, 3)");
  const shp_tensor_t* sum = nullptr;
  int64_t axis0 = 0;
  OK(shp_tensor_reduce(SHP_REDUCE_SUM, rows, &axis0, 1, false, &sum));
  // count = the u axis's size as a value (dim_value), converted to f32.
  const shp_tensor_t* count = nullptr;
  OK(shp_tensor_dim_value(sc.s, DimOf(rows, 0), &count));
  const shp_tensor_t* countf = nullptr;
  OK(shp_tensor_convert(count, SHP_F32, &countf));
  const shp_tensor_t* mean = nullptr;
  OK(shp_tensor_binary(SHP_DIV, sum, countf, &mean));
  Program prog(sc.s, {x, score}, {mean, rows});
  for (int64_t n : {5, 8}) {
    for (int selected = 0; selected <= n; ++selected) {
      Array xa(SHP_F32, {n, 3}), sa(SHP_F32, {n});
      for (int64_t i = 0; i < n * 3; ++i) xa.data<float>()[i] = static_cast<float>(i);
      // The rows with odd index first, then even ones, until `selected` are chosen.
      std::vector<bool> pick(static_cast<size_t>(n), false);
      int chosen = 0;
      for (int pass = 0; pass < 2; ++pass) {
        for (int64_t i = 1 - pass; i < n && chosen < selected; i += 2) {
          pick[static_cast<size_t>(i)] = true;
          ++chosen;
        }
      }
      for (int64_t i = 0; i < n; ++i) sa.data<float>()[i] = pick[static_cast<size_t>(i)] ? 1 : 0;
      std::vector<shp_array_t*> outs;
      OK(prog.Run({&xa, &sa}, &outs));
      Array mean_out(outs[0]), rows_out(outs[1]);
      ASSERT_EQ(rows_out.shape(), (std::vector<int64_t>{selected, 3}));
      for (int c = 0; c < 3; ++c) {
        double s = 0;
        int64_t r = 0;
        for (int64_t i = 0; i < n; ++i) {
          if (!pick[static_cast<size_t>(i)]) continue;
          s += static_cast<double>(i * 3 + c);
          EXPECT_EQ(rows_out.data<float>()[r * 3 + c], static_cast<float>(i * 3 + c));
          ++r;
        }
        const float got = mean_out.data<float>()[c];
        if (selected == 0) {
          EXPECT_TRUE(std::isnan(got));
        } else {
          EXPECT_FLOAT_EQ(got, static_cast<float>(s / selected));
        }
      }
    }
  }
}

// u used in later shapes: slice to u, iota of length u, reshape [u, 2] -> [2*u], a matmul over
// a u axis.
TEST(DataDependent, ChainsUseTheSizeInLaterShapes) {
  Scope sc;
  const shp_tensor_t* x = sc.In("x", "n");
  const shp_tensor_t* w = sc.In("w", "n");
  const shp_tensor_t* idx = nullptr;
  OK(shp_tensor_nonzero(x, &idx));  // (u0, 1)
  const shp_dim_t* u = DimOf(idx, 0);
  // slice w[:u] (u <= n is a derived fact, so the slice is in range)
  const shp_dim_t* start[1] = {sc.Dim("0")};
  const shp_dim_t* limit[1] = {u};
  const shp_tensor_t* head = nullptr;
  OK(shp_tensor_slice(w, start, limit, nullptr, 1, &head));
  EXPECT_EQ(ShapeOf(head), "(u0,)");
  // iota of length u, as f32
  const shp_dim_t* ud[1] = {u};
  const shp_tensor_t* io = nullptr;
  OK(shp_tensor_iota(sc.s, SHP_F32, ud, 1, 0, &io));
  // head . iota: a matmul over the u axis
  const shp_tensor_t* dot = nullptr;
  OK(shp_tensor_matmul(head, io, &dot));
  // reshape the (u, 1) indices to (u,) then pair them: concat [u] [u] -> [2u] via reshape of
  // (u, 2) built from the indices and their iota
  const shp_tensor_t* idxf = nullptr;
  OK(shp_tensor_convert(idx, SHP_F32, &idxf));
  const shp_dim_t* u1[2] = {u, sc.Dim("1")};
  const shp_tensor_t* io2 = nullptr;
  OK(shp_tensor_iota(sc.s, SHP_F32, u1, 2, 0, &io2));
  const shp_tensor_t* pair = nullptr;
  const shp_tensor_t* cat[2] = {idxf, io2};
  OK(shp_tensor_concatenate(cat, 2, 1, &pair));  // (u0, 2)
  const shp_dim_t* flat[1] = {sc.Dim("2*u0")};
  const shp_tensor_t* pairs = nullptr;
  OK(shp_tensor_reshape(pair, flat, 1, &pairs));
  EXPECT_EQ(ShapeOf(pairs), "(2*u0,)");
  Program prog(sc.s, {x, w}, {dot, pairs});
  for (int64_t n : {4, 9}) {
    for (int mode = 0; mode < 3; ++mode) {
      Array xa(SHP_F32, {n}), wa(SHP_F32, {n});
      std::vector<int64_t> nz;
      for (int64_t i = 0; i < n; ++i) {
        const bool on = mode == 0 ? false : mode == 2 ? true : (i % 3 == 1);
        xa.data<float>()[i] = on ? -2.0f : 0.0f;
        wa.data<float>()[i] = static_cast<float>(i + 1);
        if (on) nz.push_back(i);
      }
      std::vector<shp_array_t*> outs;
      OK(prog.Run({&xa, &wa}, &outs));
      Array d(outs[0]), p(outs[1]);
      double want = 0;
      for (size_t k = 0; k < nz.size(); ++k) want += static_cast<double>((k + 1) * k);
      EXPECT_FLOAT_EQ(d.data<float>()[0], static_cast<float>(want));
      ASSERT_EQ(p.shape(), (std::vector<int64_t>{static_cast<int64_t>(2 * nz.size())}));
      for (size_t k = 0; k < nz.size(); ++k) {
        EXPECT_EQ(p.data<float>()[2 * k], static_cast<float>(nz[k]));
        EXPECT_EQ(p.data<float>()[2 * k + 1], static_cast<float>(k));
      }
    }
  }
}

TEST(DataDependent, CheckIsAFactAndARunTimeAssertion) {
  Scope sc;
  const shp_tensor_t* x = sc.In("x", "n");
  const shp_tensor_t* idx = nullptr;
  OK(shp_tensor_nonzero(x, &idx));
  const shp_dim_t* u = DimOf(idx, 0);
  OK(shp_scope_check(sc.s, u, SHP_CMP_GE, sc.Dim("1"), "at least one hit"));
  shp_truth_t t;
  OK(shp_dim_compare(u, SHP_CMP_GE, sc.Dim("1"), &t));
  EXPECT_EQ(t, SHP_TRUE);
  bool b = false;
  OK(shp_dim_guard(u, SHP_CMP_GT, sc.Dim("0"), nullptr, &b));
  EXPECT_TRUE(b);
  Program prog(sc.s, {x}, {idx});
  EXPECT_EQ(shp_program_assertion_count(prog.p), 1u);
  Array ok(SHP_F32, {3});
  ok.data<float>()[0] = 0;
  ok.data<float>()[1] = 1;
  ok.data<float>()[2] = 0;
  std::vector<shp_array_t*> outs;
  OK(prog.Run({&ok}, &outs));
  shp_array_destroy(outs[0]);
  Array zero(SHP_F32, {3});
  std::memset(zero.data<float>(), 0, 3 * sizeof(float));
  ExpectFails(prog.Run({&zero}, &outs), SHP_CONSTRAINT_VIOLATION,
              {"u0 >= 1", "at least one hit", "nonzero", "u0 = 0"});
  // The runtime stays usable.
  OK(prog.Run({&ok}, &outs));
  shp_array_destroy(outs[0]);
}

TEST(DataDependent, SizeFromValueRangeIsChecked) {
  Scope sc;
  const shp_tensor_t* v = sc.In("v", "", SHP_I64);
  const shp_dim_t* k = nullptr;
  OK(shp_tensor_size_from_value(v, "k", 1, 5, &k));
  const shp_dim_t* kd[1] = {k};
  const shp_tensor_t* io = nullptr;
  OK(shp_tensor_iota(sc.s, SHP_I64, kd, 1, 0, &io));
  Program prog(sc.s, {v}, {io});
  for (int64_t val : {1, 5, 3}) {
    Array a(SHP_I64, {});
    *a.data<int64_t>() = val;
    std::vector<shp_array_t*> outs;
    OK(prog.Run({&a}, &outs));
    Array y(outs[0]);
    ASSERT_EQ(y.shape(), std::vector<int64_t>{val});
    for (int64_t i = 0; i < val; ++i) EXPECT_EQ(y.data<int64_t>()[i], i);
  }
  for (int64_t val : {0, 6, -3}) {
    Array a(SHP_I64, {});
    *a.data<int64_t>() = val;
    std::vector<shp_array_t*> outs;
    ExpectFails(prog.Run({&a}, &outs), SHP_CONSTRAINT_VIOLATION,
                {"k = " + std::to_string(val), "size_from_value", "[1, 5]"});
  }
}

TEST(DataDependent, DryRunReportsDataDependentDimsWithBounds) {
  Scope sc;
  const shp_tensor_t* x = sc.In("x", "n, 4");
  const shp_tensor_t* idx = nullptr;
  OK(shp_tensor_nonzero(x, &idx));
  Program prog(sc.s, {x}, {idx});
  const int64_t shape[2] = {10, 4};
  const int64_t* shapes[1] = {shape};
  const size_t ranks[1] = {2};
  OK(shp_runtime_dry_run(prog.r, nullptr, nullptr, shapes, ranks, 1));
  int64_t dims[2];
  size_t rank = 0;
  OK(shp_runtime_output_shape(prog.r, 0, dims, 2, &rank));
  EXPECT_EQ(dims[0], -1);
  EXPECT_EQ(dims[1], 2);
  bool dd = false;
  int64_t lo = -1, hi = -1;
  OK(shp_runtime_output_dim_bounds(prog.r, 0, 0, &dd, &lo, &hi));
  EXPECT_TRUE(dd);
  EXPECT_EQ(lo, 0);
  EXPECT_EQ(hi, 40);
  OK(shp_runtime_output_dim_bounds(prog.r, 0, 1, &dd, &lo, &hi));
  EXPECT_FALSE(dd);
  EXPECT_EQ(lo, 2);
  EXPECT_EQ(hi, 2);
  ExpectFails(shp_runtime_output_dim_bounds(prog.r, 0, 2, &dd, &lo, &hi), SHP_INVALID_ARGUMENT,
              {"axis 2"});
  // After a run: the computed size.
  Array a(SHP_F32, {10, 4});
  for (int i = 0; i < 40; ++i) a.data<float>()[i] = (i % 5 == 0) ? 1.0f : 0.0f;
  std::vector<shp_array_t*> outs;
  OK(prog.Run({&a}, &outs));
  shp_array_destroy(outs[0]);
  OK(shp_runtime_output_dim_bounds(prog.r, 0, 0, &dd, &lo, &hi));
  EXPECT_TRUE(dd);
  EXPECT_EQ(lo, 8);
  EXPECT_EQ(hi, 8);
  // The runtime cost depends on the data: refused with the reason.
  int64_t cost = 0;
  ExpectFails(shp_runtime_cost(prog.r, SHP_COST_FLOPS, nullptr, nullptr, shapes, ranks, 1, &cost),
              SHP_UNSUPPORTED, {"data-dependent", "shp_program_cost"});
}

TEST(DataDependent, DryRunBoundsUseTheChecks) {
  Scope sc;
  const shp_tensor_t* x = sc.In("x", "n, 4");
  const shp_tensor_t* idx = nullptr;
  OK(shp_tensor_nonzero(x, &idx));
  const shp_dim_t* u = DimOf(idx, 0);
  OK(shp_scope_check(sc.s, u, SHP_CMP_GE, sc.Dim("2"), "two or more"));
  OK(shp_scope_check(sc.s, sc.Dim("n + 5"), SHP_CMP_GE, u, "not too many"));
  Program prog(sc.s, {x}, {idx});
  const int64_t shape[2] = {10, 4};
  const int64_t* shapes[1] = {shape};
  const size_t ranks[1] = {2};
  OK(shp_runtime_dry_run(prog.r, nullptr, nullptr, shapes, ranks, 1));
  bool dd = false;
  int64_t lo = -1, hi = -1;
  OK(shp_runtime_output_dim_bounds(prog.r, 0, 0, &dd, &lo, &hi));
  EXPECT_TRUE(dd);
  EXPECT_EQ(lo, 2);
  EXPECT_EQ(hi, 15);  // min(4*n, n + 5) at n = 10
}

TEST(DataDependent, InconclusiveCarriesWitnessesAndTheCheck) {
  Scope sc;
  const shp_tensor_t* x = sc.In("x", "n, 4");
  const shp_tensor_t* idx = nullptr;
  OK(shp_tensor_nonzero(x, &idx));
  bool b = false;
  shp_error_t* e = shp_dim_guard(DimOf(idx, 0), SHP_CMP_GE, sc.Dim("3"), nullptr, &b);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(shp_error_code(e), SHP_INCONCLUSIVE);
  ASSERT_EQ(shp_error_fix_count(e), 1u);
  EXPECT_EQ(std::string(shp_error_fix(e, 0)), "shp_scope_check(scope, u0, SHP_CMP_GE, 3, message)");
  // Witnesses, when shown, satisfy u0 <= 4*n and make the comparison as they say.
  for (size_t w = 0; w < shp_error_witness_count(e); ++w) {
    int64_t n = -1, u0 = -1;
    for (size_t j = 0; j < shp_error_witness_variable_count(e, w); ++j) {
      const std::string name = shp_error_witness_variable_name(e, w, j);
      if (name == "n") n = shp_error_witness_variable_value(e, w, j);
      if (name == "u0") u0 = shp_error_witness_variable_value(e, w, j);
    }
    ASSERT_GE(n, 1);
    ASSERT_GE(u0, 0);
    EXPECT_LE(u0, 4 * n);
    EXPECT_EQ(shp_error_witness_holds(e, w), u0 >= 3);
  }
  EXPECT_EQ(shp_error_witness_count(e), 2u);
  shp_error_destroy(e);
}

TEST(DataDependent, SerializationRoundTrip) {
  Scope sc;
  const shp_tensor_t* x = sc.In("x", "n, 3");
  const shp_tensor_t* score = sc.In("score", "n");
  float zero = 0.0f;
  const shp_tensor_t* z = nullptr;
  OK(shp_tensor_constant(sc.s, SHP_F32, nullptr, 0, &zero, sizeof zero, &z));
  const shp_tensor_t* mask = nullptr;
  OK(shp_tensor_compare(score, SHP_CMP_GT, z, &mask));
  const shp_tensor_t* rows = nullptr;
  OK(shp_tensor_boolean_mask(x, mask, 0, &rows));
  OK(shp_scope_check(sc.s, DimOf(rows, 0), SHP_CMP_LE, sc.Dim("n - 1"), "not every row"));
  Program prog(sc.s, {x, score}, {rows});
  shp_buffer_t* buf = nullptr;
  OK(shp_program_serialize(prog.p, &buf));
  shp_program_t* loaded = nullptr;
  OK(shp_program_load(shp_buffer_data(buf), shp_buffer_size(buf), &loaded));
  shp_buffer_t* again = nullptr;
  OK(shp_program_serialize(loaded, &again));
  ASSERT_EQ(shp_buffer_size(buf), shp_buffer_size(again));
  EXPECT_EQ(std::memcmp(shp_buffer_data(buf), shp_buffer_data(again), shp_buffer_size(buf)), 0);
  shp_buffer_destroy(buf);
  shp_buffer_destroy(again);
  Program lp(loaded);
  bool found = false;
  for (size_t i = 0; i < shp_program_variable_count(loaded); ++i) {
    if (std::string(shp_program_variable_name(loaded, i)) != "u0") {
      EXPECT_FALSE(shp_program_variable_is_unbacked(loaded, i));
      continue;
    }
    found = true;
    EXPECT_TRUE(shp_program_variable_is_unbacked(loaded, i));
    EXPECT_NE(std::string(shp_program_variable_origin(loaded, i)).find("boolean_mask"),
              std::string::npos);
    int64_t lo, hi;
    OK(shp_program_variable_bounds(loaded, i, &lo, &hi));
    EXPECT_EQ(lo, 0);
  }
  EXPECT_TRUE(found);
  std::mt19937 rng(3);
  for (int trial = 0; trial < 20; ++trial) {
    const int64_t n = 1 + trial % 7;
    Array xa(SHP_F32, {n, 3}), sa(SHP_F32, {n});
    for (int64_t i = 0; i < n * 3; ++i) xa.data<float>()[i] = static_cast<float>(i);
    int positive = 0;
    for (int64_t i = 0; i < n; ++i) {
      sa.data<float>()[i] = static_cast<float>(static_cast<int>(rng() % 3) - 1);
      positive += sa.data<float>()[i] > 0;
    }
    std::vector<shp_array_t*> o1, o2;
    shp_error_t* e1 = prog.Run({&xa, &sa}, &o1);
    shp_error_t* e2 = lp.Run({&xa, &sa}, &o2);
    if (positive == n) {
      // The check holds for every row count below n only.
      ExpectFails(e1, SHP_CONSTRAINT_VIOLATION, {"not every row"});
      ExpectFails(e2, SHP_CONSTRAINT_VIOLATION, {"not every row"});
      continue;
    }
    ASSERT_EQ(Message(e1), "");
    ASSERT_EQ(Message(e2), "");
    Array a1(o1[0]), a2(o2[0]);
    ASSERT_EQ(a1.shape(), a2.shape());
    ASSERT_EQ(a1.shape()[0], positive);
    EXPECT_EQ(std::memcmp(a1.data<float>(), a2.data<float>(), shp_array_nbytes(a1.a)), 0);
  }
}

TEST(DataDependent, BoundAllocationGivesTheSameResults) {
  Scope sc;
  const shp_tensor_t* x = sc.In("x", "n");
  const shp_tensor_t* mask = nullptr;
  const shp_tensor_t* z = nullptr;
  float zero = 0;
  OK(shp_tensor_constant(sc.s, SHP_F32, nullptr, 0, &zero, sizeof zero, &z));
  OK(shp_tensor_compare(x, SHP_CMP_NE, z, &mask));
  const shp_tensor_t* sel = nullptr;
  OK(shp_tensor_boolean_mask(x, mask, 0, &sel));
  const shp_tensor_t* sq = nullptr;
  OK(shp_tensor_binary(SHP_MUL, sel, sel, &sq));
  Program plain(sc.s, {x}, {sq}, 1, 0);
  Program bounded(sc.s, {x}, {sq}, 1, 1 << 20);
  std::mt19937 rng(11);
  for (int trial = 0; trial < 30; ++trial) {
    Array a(SHP_F32, {257});
    for (int i = 0; i < 257; ++i) a.data<float>()[i] = (rng() % 4 == 0) ? 0.0f : float(i);
    std::vector<shp_array_t*> o1, o2;
    OK(plain.Run({&a}, &o1));
    OK(bounded.Run({&a}, &o2));
    Array y1(o1[0]), y2(o2[0]);
    ASSERT_EQ(y1.shape(), y2.shape());
    EXPECT_EQ(std::memcmp(y1.data<float>(), y2.data<float>(), shp_array_nbytes(y1.a)), 0);
  }
}

}  // namespace
