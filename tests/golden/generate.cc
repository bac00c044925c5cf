// Writes the golden programs of this schema version through the public C API:
//   bazel run //tests/golden:generate -- $PWD/tests/golden
// Files are only ever added (one set per schema version): every released file must keep
// loading and round-tripping byte-identically (golden_test), so an existing file is never
// overwritten. Their inputs and expected outputs (.npy) come from expected.py (README.md).
#include <functional>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "shapepoly/shapepoly.h"

namespace {

void Check(shp_error_t* e, const char* what) {
  if (!e) return;
  std::fprintf(stderr, "generate: %s: %s\n", what, shp_error_message(e));
  std::exit(1);
}

#define CHECK(call) Check((call), #call)

std::string ReadFile(const std::string& path, bool* found) {
  std::ifstream in(path, std::ios::binary);
  *found = static_cast<bool>(in);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Program.schema_version of serialized bytes (flatbuffers/program.fbs: field 0 of the root
// table): a writer uses the lowest version that expresses the program, so files are named by
// what they hold, not by the newest version of this library.
uint32_t SchemaVersionOf(const std::string& bytes) {
  auto u32 = [&](size_t at) {
    uint32_t v = 0;
    std::memcpy(&v, bytes.data() + at, 4);
    return v;
  };
  size_t table = u32(0);
  size_t vtable = table - static_cast<int32_t>(u32(table));
  uint16_t vsize = 0, field = 0;
  std::memcpy(&vsize, bytes.data() + vtable, 2);
  if (vsize > 4) std::memcpy(&field, bytes.data() + vtable + 4, 2);
  return field ? u32(table + field) : 0;
}

// Writes `<stem>_v<schema version>.shpoly` unless it exists: released golden files are never
// rewritten, even when this library would now write other bytes for the same program
// (golden_test pins the old bytes).
void Write(const std::string& dir, const std::string& stem, shp_program_t* p) {
  shp_buffer_t* b = nullptr;
  CHECK(shp_program_serialize(p, &b));
  std::string bytes(static_cast<const char*>(shp_buffer_data(b)), shp_buffer_size(b));
  shp_buffer_destroy(b);
  shp_program_destroy(p);
  std::string name = stem + "_v" + std::to_string(SchemaVersionOf(bytes)) + ".shpoly";
  bool found = false;
  std::string old = ReadFile(dir + "/" + name, &found);
  if (found) {
    std::printf("kept %s (%s)\n", name.c_str(),
                old == bytes ? "same bytes" : "differs from what this library writes");
    return;
  }
  std::ofstream out(dir + "/" + name, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    std::fprintf(stderr, "generate: cannot write %s/%s\n", dir.c_str(), name.c_str());
    std::exit(1);
  }
  std::printf("wrote %s (%zu bytes)\n", name.c_str(), bytes.size());
}

std::vector<float> Weights(size_t n, float scale) {
  std::vector<float> v(n);
  uint32_t s = 12345;
  for (size_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    v[i] = scale * static_cast<float>(static_cast<int>((s >> 24) % 16) - 8) /
           8.0f;  // few distinct values: compressible
  }
  return v;
}

// softmax(relu(x @ w1 + b1) @ w2 + b2), batch symbolic, weights as constants.
shp_program_t* Mlp() {
  shp_scope_t* s;
  CHECK(shp_scope_create(nullptr, 0, &s));
  const shp_tensor_t *x, *w1, *b1, *w2, *b2, *zero, *h, *y;
  CHECK(shp_tensor_input(s, "x", SHP_F32, "batch, 784", &x));
  std::vector<float> W1 = Weights(784 * 16, 0.1f), B1(16, 0.01f), W2 = Weights(16 * 10, 0.5f),
                     B2(10, 0.0f);
  float z = 0.0f;
  int64_t s1[] = {784, 16}, sb1[] = {16}, s2[] = {16, 10}, sb2[] = {10};
  CHECK(shp_tensor_constant(s, SHP_F32, s1, 2, W1.data(), W1.size() * 4, &w1));
  CHECK(shp_tensor_constant(s, SHP_F32, sb1, 1, B1.data(), B1.size() * 4, &b1));
  CHECK(shp_tensor_constant(s, SHP_F32, s2, 2, W2.data(), W2.size() * 4, &w2));
  CHECK(shp_tensor_constant(s, SHP_F32, sb2, 1, B2.data(), B2.size() * 4, &b2));
  CHECK(shp_tensor_constant(s, SHP_F32, nullptr, 0, &z, 4, &zero));
  CHECK(shp_tensor_matmul(x, w1, &h));
  CHECK(shp_tensor_binary(SHP_ADD, h, b1, &h));
  CHECK(shp_tensor_binary(SHP_MAX, h, zero, &h));
  CHECK(shp_tensor_matmul(h, w2, &y));
  CHECK(shp_tensor_binary(SHP_ADD, y, b2, &y));
  CHECK(shp_tensor_softmax(y, -1, &y));
  const char* names[] = {"probs"};
  shp_program_t* p;
  CHECK(shp_program_create(s, &x, 1, &y, names, 1, &p));
  shp_scope_destroy(s);
  return p;
}

// Constraints, a declared range, a user assertion, a reshape assertion, a dimension input.
shp_program_t* Constrained() {
  const char* cons[] = {"n >= 4", "n <= 4096", "m >= n"};
  const char* names[] = {"p"};
  int64_t lo[] = {0}, hi[] = {8};
  shp_scope_t* s;
  CHECK(shp_scope_create_with_ranges(cons, 3, names, lo, hi, 1, &s));
  const shp_tensor_t *x, *y, *pad, *k, *r, *cat, *sl, *io, *padded;
  CHECK(shp_tensor_input(s, "x", SHP_F32, "n, 3", &x));
  CHECK(shp_tensor_input(s, "y", SHP_F32, "m, 3", &y));
  CHECK(shp_tensor_input(s, "pad", SHP_F32, "p", &pad));
  CHECK(shp_tensor_dim_input(s, "k", &k));
  const shp_dim_t *n, *m, *kd, *p, *two, *zero, *one;
  CHECK(shp_dim_variable(s, "n", &n));
  CHECK(shp_dim_variable(s, "m", &m));
  CHECK(shp_dim_variable(s, "k", &kd));
  CHECK(shp_dim_variable(s, "p", &p));
  CHECK(shp_dim_constant(s, 2, &two));
  CHECK(shp_dim_constant(s, 0, &zero));
  CHECK(shp_dim_constant(s, 1, &one));
  const shp_dim_t* target[] = {nullptr, two};
  CHECK(shp_tensor_reshape(x, target, 2, &r));  // records mod(3*n, 2) == 0
  CHECK(shp_scope_check(s, m, SHP_CMP_LE, n, "y must not be longer than x"));
  const shp_tensor_t* both[] = {x, y};
  CHECK(shp_tensor_concatenate(both, 2, 0, &cat));
  const shp_dim_t* start[] = {one, zero};
  const shp_dim_t* limit[] = {n, two};
  int64_t strides[] = {2, 1};
  CHECK(shp_tensor_slice(x, start, limit, strides, 2, &sl));
  const shp_dim_t* low[] = {p};
  const shp_dim_t* high[] = {one};
  CHECK(shp_tensor_pad(pad, low, high, 1, 0.0, &padded));
  CHECK(shp_tensor_iota(s, SHP_I64, &kd, 1, 0, &io));
  const shp_tensor_t* ins[] = {x, y, pad, k};
  const shp_tensor_t* outs[] = {r, cat, sl, padded, io};
  const char* out_names[] = {"pairs", "joined", "odd_rows", "padded", "range"};
  shp_program_t* prog;
  CHECK(shp_program_create(s, ins, 4, outs, out_names, 5, &prog));
  shp_scope_destroy(s);
  return prog;
}

// One program per dtype: an input, a constant, an elementwise op, a reduction.
shp_program_t* PerDtype(shp_dtype_t dt) {
  shp_scope_t* s;
  CHECK(shp_scope_create(nullptr, 0, &s));
  const shp_tensor_t *x, *c, *y, *r;
  CHECK(shp_tensor_input(s, "x", dt, "n, 4", &x));
  unsigned char bytes[32] = {0};
  for (int i = 0; i < 32; ++i) bytes[i] = static_cast<unsigned char>(dt == SHP_BOOL ? (i % 2) : 0);
  if (dt == SHP_F32) {
    float v[4] = {1, 2, 3, 4};
    std::memcpy(bytes, v, sizeof v);
  }
  if (dt == SHP_F64) {
    double v[4] = {1, 2, 3, 4};
    std::memcpy(bytes, v, sizeof v);
  }
  if (dt == SHP_I32) {
    int32_t v[4] = {1, 2, 3, 4};
    std::memcpy(bytes, v, sizeof v);
  }
  if (dt == SHP_I64) {
    int64_t v[4] = {1, 2, 3, 4};
    std::memcpy(bytes, v, sizeof v);
  }
  size_t size[] = {4, 8, 4, 8, 1};
  int64_t shape[] = {4};
  CHECK(shp_tensor_constant(s, dt, shape, 1, bytes, 4 * size[dt], &c));
  const char* names[] = {"y", "r"};
  if (dt == SHP_BOOL) {
    CHECK(shp_tensor_binary(SHP_XOR, x, c, &y));
    CHECK(shp_tensor_convert(y, SHP_I32, &r));
    CHECK(shp_tensor_reduce(SHP_REDUCE_SUM, r, nullptr, 0, false, &r));
  } else {
    CHECK(shp_tensor_binary(SHP_MUL, x, c, &y));
    int64_t axes[] = {1};
    CHECK(shp_tensor_reduce(SHP_REDUCE_MAX, y, axes, 1, false, &r));
  }
  const shp_tensor_t* outs[] = {y, r};
  shp_program_t* p;
  CHECK(shp_program_create(s, &x, 1, outs, names, 2, &p));
  shp_scope_destroy(s);
  return p;
}

// ---- Programs with an expected output per op (schema v1, second set) ----
// Each covers one op family over several dtypes, with the attribute forms that must survive
// a save and a load: empty integer lists (dot_general without batch or contracting axes,
// transpose/slice/pad/reduce of a scalar), negative axes, rank 0 and rank >= 3 operands.

// One program under construction: named inputs in order, named outputs in order.
class Builder {
 public:
  explicit Builder(std::vector<const char*> constraints = {}) {
    CHECK(shp_scope_create(constraints.data(), constraints.size(), &s_));
  }
  shp_scope_t* scope() const { return s_; }
  const shp_tensor_t* In(const char* name, shp_dtype_t dt, const char* spec) {
    const shp_tensor_t* t;
    CHECK(shp_tensor_input(s_, name, dt, spec, &t));
    ins_.push_back(t);
    return t;
  }
  const shp_dim_t* D(const char* text) {
    const shp_dim_t* d;
    CHECK(shp_dim_parse(s_, text, &d));
    return d;
  }
  void Out(const std::string& name, const shp_tensor_t* t) {
    names_.push_back(name);
    outs_.push_back(t);
  }
  shp_program_t* Finish() {
    std::vector<const char*> names;
    for (const std::string& n : names_) names.push_back(n.c_str());
    shp_program_t* p;
    CHECK(shp_program_create(s_, ins_.data(), ins_.size(), outs_.data(), names.data(), names.size(),
                             &p));
    shp_scope_destroy(s_);
    return p;
  }

 private:
  shp_scope_t* s_ = nullptr;
  std::vector<const shp_tensor_t*> ins_, outs_;
  std::vector<std::string> names_;
};

const char* const kDtypeName[] = {"f32", "f64", "i32", "i64", "bool"};

const shp_tensor_t* Un(shp_unary_op_t op, const shp_tensor_t* x) {
  const shp_tensor_t* t;
  CHECK(shp_tensor_unary(op, x, &t));
  return t;
}
const shp_tensor_t* Bin(shp_binary_op_t op, const shp_tensor_t* a, const shp_tensor_t* b) {
  const shp_tensor_t* t;
  CHECK(shp_tensor_binary(op, a, b, &t));
  return t;
}
const shp_tensor_t* Cmp(shp_cmp_t op, const shp_tensor_t* a, const shp_tensor_t* b) {
  const shp_tensor_t* t;
  CHECK(shp_tensor_compare(a, op, b, &t));
  return t;
}
const shp_tensor_t* Red(shp_reduce_op_t op, const shp_tensor_t* x, std::vector<int64_t> axes,
                        bool keep) {
  const shp_tensor_t* t;
  CHECK(shp_tensor_reduce(op, x, axes.empty() ? nullptr : axes.data(), axes.size(), keep, &t));
  return t;
}
const shp_tensor_t* Dot(const shp_tensor_t* a, const shp_tensor_t* b, std::vector<int64_t> lb,
                        std::vector<int64_t> rb, std::vector<int64_t> lc, std::vector<int64_t> rc) {
  const shp_tensor_t* t;
  CHECK(shp_tensor_dot_general(a, b, lb.data(), rb.data(), lb.size(), lc.data(), rc.data(),
                               lc.size(), &t));
  return t;
}
const shp_tensor_t* Transpose(const shp_tensor_t* x, std::vector<int64_t> perm) {
  const shp_tensor_t* t;
  CHECK(shp_tensor_transpose(x, perm.data(), perm.size(), &t));
  return t;
}
const shp_tensor_t* MatMul(const shp_tensor_t* a, const shp_tensor_t* b) {
  const shp_tensor_t* t;
  CHECK(shp_tensor_matmul(a, b, &t));
  return t;
}

// dot_general: no batch axes (the common case), batch axes, no contracting axes (outer
// products), both lists empty, a rank-0 result, f32/f64/i32/i64.
shp_program_t* DotGeneral() {
  Builder b;
  const shp_tensor_t* a = b.In("a", SHP_F32, "m, k");
  const shp_tensor_t* w = b.In("w", SHP_F32, "k, n");
  const shp_tensor_t* c = b.In("c", SHP_F32, "bt, m, k");
  const shp_tensor_t* d = b.In("d", SHP_F32, "bt, k, n");
  const shp_tensor_t* u = b.In("u", SHP_F32, "m");
  const shp_tensor_t* v = b.In("v", SHP_F32, "n");
  const shp_tensor_t* ai = b.In("ai", SHP_I64, "m, k");
  const shp_tensor_t* wi = b.In("wi", SHP_I32, "k, n");
  const shp_tensor_t* cd = b.In("cd", SHP_F64, "bt, m, k");
  b.Out("no_batch", Dot(a, w, {}, {}, {1}, {0}));
  b.Out("no_batch_negative_axes", Dot(a, w, {}, {}, {-1}, {-2}));
  b.Out("gram", Dot(a, a, {}, {}, {0}, {0}));
  b.Out("batched", Dot(c, d, {0}, {0}, {2}, {1}));
  b.Out("outer", Dot(u, v, {}, {}, {}, {}));
  b.Out("batch_no_contracting", Dot(c, c, {0, 1}, {0, 1}, {}, {}));
  b.Out("rank0", Dot(u, u, {}, {}, {0}, {0}));
  b.Out("i64", Dot(ai, ai, {}, {}, {0}, {0}));
  const shp_tensor_t* wi64;
  CHECK(shp_tensor_convert(wi, SHP_I64, &wi64));
  b.Out("i64_no_batch", Dot(ai, wi64, {}, {}, {1}, {0}));
  b.Out("i32_outer", Dot(wi, wi, {}, {}, {}, {}));
  b.Out("f64_batched", Dot(cd, cd, {0}, {0}, {2}, {2}));
  b.Out("f64_two_contracting", Dot(cd, cd, {}, {}, {0, 2}, {0, 2}));
  return b.Finish();
}

// transpose of rank 3, 2, 1 and 0 (an empty permutation) over every dtype.
shp_program_t* TransposeProgram() {
  Builder b;
  const shp_tensor_t* x = b.In("x", SHP_F32, "p, q, r");
  const shp_tensor_t* d = b.In("d", SHP_F64, "p, q, r");
  const shp_tensor_t* i = b.In("i", SHP_I32, "p, q");
  const shp_tensor_t* l = b.In("l", SHP_I64, "q");
  const shp_tensor_t* m = b.In("m", SHP_BOOL, "q, r");
  const shp_tensor_t* s = b.In("s", SHP_F32, "");
  const shp_tensor_t* si = b.In("si", SHP_I64, "");
  b.Out("perm_201", Transpose(x, {2, 0, 1}));
  b.Out("perm_102", Transpose(x, {1, 0, 2}));
  b.Out("identity", Transpose(x, {0, 1, 2}));
  b.Out("twice", Transpose(Transpose(d, {2, 0, 1}), {2, 0, 1}));
  b.Out("f64_perm_210", Transpose(d, {2, 1, 0}));
  b.Out("i32", Transpose(i, {1, 0}));
  b.Out("i64_rank1", Transpose(l, {0}));
  b.Out("bool", Transpose(m, {1, 0}));
  b.Out("scalar", Transpose(s, {}));
  b.Out("scalar_i64", Transpose(si, {}));
  return b.Finish();
}

// Rank-0 operands through every op that accepts them; most store an empty integer list.
shp_program_t* Scalars() {
  Builder b;
  const shp_tensor_t* s = b.In("s", SHP_F32, "");
  const shp_tensor_t* si = b.In("si", SHP_I64, "");
  const shp_tensor_t* sb = b.In("sb", SHP_BOOL, "");
  const shp_tensor_t* x = b.In("x", SHP_F32, "n");
  const shp_tensor_t* t;
  b.Out("sum", Red(SHP_REDUCE_SUM, s, {}, false));
  b.Out("mean_keepdims", Red(SHP_REDUCE_MEAN, s, {}, true));
  b.Out("max_i64", Red(SHP_REDUCE_MAX, si, {}, false));
  b.Out("prod_i64_keepdims", Red(SHP_REDUCE_PROD, si, {}, true));
  b.Out("sum_all_axes", Red(SHP_REDUCE_SUM, x, {}, false));
  b.Out("min_all_keepdims", Red(SHP_REDUCE_MIN, x, {}, true));
  CHECK(shp_tensor_slice(s, nullptr, nullptr, nullptr, 0, &t));
  b.Out("slice", t);
  CHECK(shp_tensor_pad(si, nullptr, nullptr, 0, 3.0, &t));
  b.Out("pad", t);
  CHECK(shp_tensor_reshape(s, nullptr, 0, &t));
  b.Out("reshape", t);
  const shp_dim_t* one = b.D("1");
  const shp_dim_t* ones[] = {one, one};
  CHECK(shp_tensor_reshape(si, ones, 2, &t));
  b.Out("reshape_1x1", t);
  CHECK(shp_tensor_broadcast_to(sb, nullptr, 0, &t));
  b.Out("broadcast", t);
  const shp_dim_t* to[] = {b.D("n"), b.D("2")};
  CHECK(shp_tensor_broadcast_to(s, to, 2, &t));
  b.Out("broadcast_n_2", t);
  CHECK(shp_tensor_convert(s, SHP_I32, &t));
  b.Out("convert", t);
  b.Out("unary", Un(SHP_NEG, si));
  b.Out("not", Un(SHP_NOT, sb));
  b.Out("scalar_plus_vector", Bin(SHP_ADD, s, x));
  b.Out("compare", Cmp(SHP_CMP_LT, x, s));
  const shp_tensor_t* sel;
  CHECK(shp_tensor_select(sb, s, x, &sel));
  b.Out("select", sel);
  CHECK(shp_tensor_dim_value(b.scope(), b.D("n"), &t));
  b.Out("dim_n", t);
  return b.Finish();
}

// Every unary op a floating-point dtype accepts; log, log1p, sqrt and rsqrt read `p` > 0.
shp_program_t* UnaryFloat(shp_dtype_t dt) {
  Builder b;
  const shp_tensor_t* x = b.In("x", dt, "n");
  const shp_tensor_t* p = b.In("p", dt, "n");
  const char* names[] = {"neg", "abs", "exp",  "log",      "log1p", "expm1", "sqrt",  "rsqrt",
                         "sin", "cos", "tanh", "logistic", "floor", "ceil",  "round", "sign"};
  for (int op = SHP_NEG; op <= SHP_SIGN; ++op) {
    bool positive = op == SHP_LOG || op == SHP_LOG1P || op == SHP_SQRT || op == SHP_RSQRT;
    b.Out(names[op], Un(static_cast<shp_unary_op_t>(op), positive ? p : x));
  }
  b.Out("exp_neg_abs", Un(SHP_EXP, Un(SHP_NEG, Un(SHP_ABS, x))));  // a fused chain
  return b.Finish();
}

// neg, abs, sign and not of the integers; not of bool.
shp_program_t* UnaryInt() {
  Builder b;
  const shp_tensor_t* i = b.In("i", SHP_I32, "n");
  const shp_tensor_t* l = b.In("l", SHP_I64, "n, 2");
  const shp_tensor_t* m = b.In("m", SHP_BOOL, "n");
  const shp_unary_op_t ops[] = {SHP_NEG, SHP_ABS, SHP_SIGN, SHP_NOT};
  const char* names[] = {"neg", "abs", "sign", "not"};
  for (int k = 0; k < 4; ++k) {
    b.Out(std::string("i32_") + names[k], Un(ops[k], i));
    b.Out(std::string("i64_") + names[k], Un(ops[k], l));
  }
  b.Out("bool_not", Un(SHP_NOT, m));
  return b.Finish();
}

// Every binary op and comparison of one dtype, with broadcasting, then select. For integers
// `b` has no zero (division by zero is not pinned here) and `e` holds exponents in [0, 3];
// `p` is positive so that pow stays real for floats.
shp_program_t* BinaryProgram(shp_dtype_t dt) {
  Builder b;
  const shp_tensor_t* x = b.In("a", dt, "n, 3");
  const shp_tensor_t* y = b.In("b", dt, "3");
  bool is_bool = dt == SHP_BOOL, is_float = dt == SHP_F32 || dt == SHP_F64;
  if (!is_bool) {
    const shp_tensor_t* p = b.In("p", dt, "n, 3");
    const shp_tensor_t* e = b.In("e", dt, "3");
    const char* names[] = {"add", "sub", "mul", "div", "pow", "max", "min", "rem"};
    for (int op = SHP_ADD; op <= SHP_REM; ++op) {
      auto o = static_cast<shp_binary_op_t>(op);
      b.Out(names[op], op == SHP_POW ? Bin(o, p, e) : Bin(o, x, y));
    }
    b.Out("sub_reversed", Bin(SHP_SUB, y, x));
    b.Out("mul_add_chain", Bin(SHP_ADD, Bin(SHP_MUL, x, x), y));  // a fused chain
  }
  if (!is_float) {
    b.Out("and", Bin(SHP_AND, x, y));
    b.Out("or", Bin(SHP_OR, x, y));
    b.Out("xor", Bin(SHP_XOR, x, y));
  }
  const char* cmp[] = {"eq", "ne", "lt", "le", "gt", "ge"};
  for (int op = SHP_CMP_EQ; op <= SHP_CMP_GE; ++op)
    b.Out(cmp[op], Cmp(static_cast<shp_cmp_t>(op), x, y));
  const shp_tensor_t* sel;
  CHECK(shp_tensor_select(Cmp(SHP_CMP_LT, x, y), x, y, &sel));
  b.Out("select", sel);
  return b.Finish();
}

// Every dtype converted to every dtype (floats to integers round toward zero; to bool != 0).
shp_program_t* Convert() {
  Builder b;
  const shp_tensor_t* in[5];
  for (int d = 0; d < 5; ++d) in[d] = b.In(kDtypeName[d], static_cast<shp_dtype_t>(d), "n");
  for (int from = 0; from < 5; ++from) {
    for (int to = 0; to < 5; ++to) {
      const shp_tensor_t* t;
      CHECK(shp_tensor_convert(in[from], static_cast<shp_dtype_t>(to), &t));
      b.Out(std::string(kDtypeName[from]) + "_to_" + kDtypeName[to], t);
    }
  }
  return b.Finish();
}

// broadcast_to, reshape, concatenate, slice, pad and iota over several dtypes, with symbolic
// dims, negative axes and strides.
shp_program_t* ShapeOps() {
  Builder b;
  const shp_tensor_t* x = b.In("x", SHP_F32, "n, 4");
  const shp_tensor_t* y = b.In("y", SHP_F32, "n, 1");
  const shp_tensor_t* i = b.In("i", SHP_I32, "n, 4");
  const shp_tensor_t* l = b.In("l", SHP_I64, "n");
  const shp_tensor_t* m = b.In("m", SHP_BOOL, "n, 4");
  const shp_dim_t *n = b.D("n"), *zero = b.D("0"), *one = b.D("1"), *two = b.D("2"),
                  *three = b.D("3"), *four = b.D("4");
  const shp_tensor_t* t;
  const shp_dim_t* b3[] = {three, n, four};
  CHECK(shp_tensor_broadcast_to(x, b3, 3, &t));
  b.Out("broadcast_rank3", t);
  const shp_dim_t* b2[] = {n, four};
  CHECK(shp_tensor_broadcast_to(y, b2, 2, &t));
  b.Out("broadcast_axis_of_1", t);
  CHECK(shp_tensor_broadcast_to(m, b3, 3, &t));
  b.Out("broadcast_bool", t);
  const shp_dim_t* r1[] = {four, n};
  CHECK(shp_tensor_reshape(x, r1, 2, &t));
  b.Out("reshape_4_n", t);
  const shp_dim_t* r2[] = {nullptr, two};
  CHECK(shp_tensor_reshape(i, r2, 2, &t));
  b.Out("reshape_inferred", t);
  const shp_dim_t* r3[] = {b.D("4*n")};
  CHECK(shp_tensor_reshape(m, r3, 1, &t));
  b.Out("reshape_flat_bool", t);
  const shp_tensor_t* xx[] = {x, x};
  CHECK(shp_tensor_concatenate(xx, 2, 0, &t));
  b.Out("concat_axis0", t);
  const shp_tensor_t* xy[] = {x, y, x};
  CHECK(shp_tensor_concatenate(xy, 3, -1, &t));
  b.Out("concat_negative_axis", t);
  const shp_tensor_t* ll[] = {l, l, l};
  CHECK(shp_tensor_concatenate(ll, 3, 0, &t));
  b.Out("concat_i64", t);
  const shp_tensor_t* mm[] = {m, m};
  CHECK(shp_tensor_concatenate(mm, 2, 1, &t));
  b.Out("concat_bool", t);
  const shp_dim_t* st[] = {one, zero};
  const shp_dim_t* li[] = {n, four};
  int64_t strides[] = {2, 3};
  CHECK(shp_tensor_slice(x, st, li, strides, 2, &t));
  b.Out("slice_strided", t);
  const shp_dim_t* st2[] = {nullptr, one};
  CHECK(shp_tensor_slice(i, st2, nullptr, nullptr, 2, &t));
  b.Out("slice_defaults", t);
  const shp_dim_t* li3[] = {b.D("floordiv(n, 2)")};
  CHECK(shp_tensor_slice(l, nullptr, li3, nullptr, 1, &t));
  b.Out("slice_half", t);
  const shp_dim_t* lo[] = {one, zero};
  const shp_dim_t* hi[] = {zero, two};
  CHECK(shp_tensor_pad(x, lo, hi, 2, -1.5, &t));
  b.Out("pad", t);
  const shp_dim_t* lo2[] = {n, one};
  const shp_dim_t* hi2[] = {one, zero};
  CHECK(shp_tensor_pad(i, lo2, hi2, 2, 7.0, &t));
  b.Out("pad_symbolic_i32", t);
  CHECK(shp_tensor_pad(m, lo, hi, 2, 1.0, &t));
  b.Out("pad_bool", t);
  const shp_dim_t* io1[] = {n, three};
  CHECK(shp_tensor_iota(b.scope(), SHP_I32, io1, 2, 1, &t));
  b.Out("iota_i32_axis1", t);
  const shp_dim_t* io2[] = {b.D("n + 1")};
  CHECK(shp_tensor_iota(b.scope(), SHP_F32, io2, 1, 0, &t));
  b.Out("iota_f32", t);
  const shp_dim_t* io3[] = {two, n};
  CHECK(shp_tensor_iota(b.scope(), SHP_I64, io3, 2, -1, &t));
  b.Out("iota_i64_negative_axis", t);
  CHECK(shp_tensor_iota(b.scope(), SHP_F64, io3, 2, 0, &t));
  b.Out("iota_f64_axis0", t);
  return b.Finish();
}

// Every reduction over one axis, two axes (keepdims), a negative axis and all axes (an empty
// list), per numeric dtype. `q` holds factors for prod (near 1 for floats, in [-2, 2] for
// integers) so products stay exact or representable.
shp_program_t* Reductions() {
  Builder b;
  const std::vector<std::vector<int64_t>> forms = {{1}, {0, 2}, {-1}, {}};
  const char* form_names[] = {"axis1", "axes02_keepdims", "axis_neg1", "all"};
  const char* op_names[] = {"sum", "mean", "max", "min", "prod"};
  for (int d = 0; d < 4; ++d) {
    auto dt = static_cast<shp_dtype_t>(d);
    std::string prefix = std::string(kDtypeName[d]) + "_";
    const shp_tensor_t* x = b.In(("x" + std::to_string(d)).c_str(), dt, "a, b, c");
    const shp_tensor_t* q = b.In(("q" + std::to_string(d)).c_str(), dt, "a, b, c");
    for (int op = SHP_REDUCE_SUM; op <= SHP_REDUCE_PROD; ++op) {
      if (op == SHP_REDUCE_MEAN && d >= 2) continue;  // mean needs floats
      for (size_t f = 0; f < forms.size(); ++f) {
        if (op == SHP_REDUCE_PROD && d >= 2 && forms[f].size() != 1)
          continue;  // may overflow integers
        const shp_tensor_t* in = op == SHP_REDUCE_PROD ? q : x;
        b.Out(prefix + op_names[op] + "_" + form_names[f],
              Red(static_cast<shp_reduce_op_t>(op), in, forms[f], f == 1));
      }
    }
  }
  return b.Finish();
}

// matmul (matrix, vector and broadcast batch forms), softmax, layer_norm, cumsum, take and
// dim_value, over several dtypes.
shp_program_t* Nn() {
  Builder b;
  const shp_tensor_t* a = b.In("a", SHP_F32, "n, k");
  const shp_tensor_t* w = b.In("w", SHP_F32, "k, m");
  const shp_tensor_t* u = b.In("u", SHP_F32, "k");
  const shp_tensor_t* c = b.In("c", SHP_F32, "bt, n, k");
  const shp_tensor_t* ad = b.In("ad", SHP_F64, "n, k");
  const shp_tensor_t* ai = b.In("ai", SHP_I32, "n, k");
  const shp_tensor_t* al = b.In("al", SHP_I64, "k, m");
  const shp_tensor_t* idx = b.In("idx", SHP_I32, "3");
  const shp_tensor_t* idx2 = b.In("idx2", SHP_I64, "2, 2");
  const shp_tensor_t* t;
  b.Out("matmul", MatMul(a, w));
  b.Out("matmul_vector_matrix", MatMul(u, w));
  b.Out("matmul_matrix_vector", MatMul(a, u));
  b.Out("matmul_vector_vector", MatMul(u, u));
  b.Out("matmul_broadcast_batch", MatMul(c, w));
  b.Out("matmul_f64", MatMul(ad, Transpose(ad, {1, 0})));
  b.Out("matmul_i32", MatMul(ai, Transpose(ai, {1, 0})));
  b.Out("matmul_i64", MatMul(Transpose(al, {1, 0}), al));
  CHECK(shp_tensor_softmax(a, -1, &t));
  b.Out("softmax_last", t);
  CHECK(shp_tensor_softmax(c, 1, &t));
  b.Out("softmax_axis1_rank3", t);
  CHECK(shp_tensor_softmax(ad, 0, &t));
  b.Out("softmax_f64_axis0", t);
  CHECK(shp_tensor_layer_norm(a, -1, 1e-5, &t));
  b.Out("layer_norm_last", t);
  CHECK(shp_tensor_layer_norm(ad, 0, 0.0, &t));
  b.Out("layer_norm_f64_axis0", t);
  CHECK(shp_tensor_layer_norm(c, 2, 0.5, &t));
  b.Out("layer_norm_rank3", t);
  CHECK(shp_tensor_cumsum(a, 0, &t));
  b.Out("cumsum_axis0", t);
  CHECK(shp_tensor_cumsum(ad, -1, &t));
  b.Out("cumsum_f64_last", t);
  CHECK(shp_tensor_cumsum(ai, 1, &t));
  b.Out("cumsum_i32", t);
  CHECK(shp_tensor_cumsum(al, 0, &t));
  b.Out("cumsum_i64", t);
  CHECK(shp_tensor_take(a, idx, 1, &t));
  b.Out("take_axis1", t);
  CHECK(shp_tensor_take(ai, idx2, 0, &t));
  b.Out("take_2d_indices", t);
  CHECK(shp_tensor_take(ad, idx, -1, &t));
  b.Out("take_negative_axis", t);
  CHECK(shp_tensor_dim_value(b.scope(), b.D("n"), &t));
  b.Out("dim_n", t);
  CHECK(shp_tensor_dim_value(b.scope(), b.D("2*n*k + floordiv(m, 2) - bt"), &t));
  b.Out("dim_expression", t);
  return b.Finish();
}

// Sizes 0 are ordinary values (a declared range [0, 1000]): reductions over an empty axis
// (identities, -inf/+inf, integer limits, mean NaN), matmul and dot_general with an empty
// contracting axis (zeros), and shape ops and kernels on empty operands.
shp_program_t* Empty() {
  const char* names[] = {"n"};
  int64_t lo[] = {0}, hi[] = {1000};
  shp_scope_t* s;
  CHECK(shp_scope_create_with_ranges(nullptr, 0, names, lo, hi, 1, &s));
  const shp_tensor_t *x, *w, *i, *l, *y, *idx, *t;
  CHECK(shp_tensor_input(s, "x", SHP_F32, "n, 3", &x));
  CHECK(shp_tensor_input(s, "w", SHP_F32, "3, 2", &w));
  CHECK(shp_tensor_input(s, "i", SHP_I32, "n, 3", &i));
  CHECK(shp_tensor_input(s, "l", SHP_I64, "n", &l));
  CHECK(shp_tensor_input(s, "y", SHP_F64, "n, 1", &y));
  CHECK(shp_tensor_input(s, "idx", SHP_I32, "n", &idx));
  std::vector<const shp_tensor_t*> outs;
  std::vector<std::string> out_names;
  auto out = [&](const char* name, const shp_tensor_t* v) {
    out_names.push_back(name);
    outs.push_back(v);
  };
  out("sum_f32", Red(SHP_REDUCE_SUM, x, {0}, false));
  out("mean_f32", Red(SHP_REDUCE_MEAN, x, {0}, true));
  out("max_f32", Red(SHP_REDUCE_MAX, x, {0}, false));
  out("min_f64", Red(SHP_REDUCE_MIN, y, {}, false));
  out("prod_f32", Red(SHP_REDUCE_PROD, x, {0}, false));
  out("max_i32", Red(SHP_REDUCE_MAX, i, {0}, false));
  out("min_i32", Red(SHP_REDUCE_MIN, i, {-2}, false));
  out("sum_i64", Red(SHP_REDUCE_SUM, l, {}, false));
  out("prod_i64", Red(SHP_REDUCE_PROD, l, {0}, true));
  out("sum_rows", Red(SHP_REDUCE_SUM, x, {1}, false));
  out("matmul", MatMul(x, w));
  out("matmul_empty_contracting", MatMul(Transpose(x, {1, 0}), x));
  out("dot_general_empty_contracting", Dot(i, i, {}, {}, {0}, {0}));
  CHECK(shp_tensor_softmax(x, 1, &t));
  out("softmax", t);
  CHECK(shp_tensor_layer_norm(y, 0, 1e-5, &t));
  out("layer_norm", t);
  CHECK(shp_tensor_cumsum(i, 0, &t));
  out("cumsum", t);
  const shp_tensor_t* xx[] = {x, x};
  CHECK(shp_tensor_concatenate(xx, 2, 0, &t));
  out("concat", t);
  const shp_dim_t *one, *zero, *n, *three;
  CHECK(shp_dim_constant(s, 1, &one));
  CHECK(shp_dim_constant(s, 0, &zero));
  CHECK(shp_dim_constant(s, 3, &three));
  CHECK(shp_dim_variable(s, "n", &n));
  const shp_dim_t* low[] = {one, zero};
  const shp_dim_t* high[] = {zero, one};
  CHECK(shp_tensor_pad(i, low, high, 2, -4.0, &t));
  out("pad", t);
  const shp_dim_t* to[] = {n, three};
  CHECK(shp_tensor_broadcast_to(y, to, 2, &t));
  out("broadcast", t);
  CHECK(shp_tensor_iota(s, SHP_I64, &n, 1, 0, &t));
  out("iota", t);
  const shp_tensor_t* c;
  float cv[] = {1.5f, -2.0f, 4.0f};
  int64_t cs[] = {3};
  CHECK(shp_tensor_constant(s, SHP_F32, cs, 1, cv, sizeof cv, &c));
  CHECK(shp_tensor_take(c, idx, 0, &t));
  out("take_empty_indices", t);
  CHECK(shp_tensor_take(x, idx, 0, &t));
  out("take_rows", t);
  out("exp", Un(SHP_EXP, x));
  out("add_broadcast", Bin(SHP_ADD, y, y));
  const shp_tensor_t* ins[] = {x, w, i, l, y, idx};
  std::vector<const char*> cn;
  for (const std::string& o : out_names) cn.push_back(o.c_str());
  shp_program_t* p;
  CHECK(shp_program_create(s, ins, 6, outs.data(), cn.data(), cn.size(), &p));
  shp_scope_destroy(s);
  return p;
}

const shp_tensor_t* Reverse(const shp_tensor_t* x, std::vector<int64_t> axes) {
  const shp_tensor_t* t;
  CHECK(shp_tensor_reverse(x, axes.empty() ? nullptr : axes.data(), axes.size(), &t));
  return t;
}

// reverse (np.flip) over every dtype: no axes (a copy, also of a scalar), one axis, a negative
// one, several given unsorted, every axis of a rank-4 operand, symbolic extents, and size-0
// axes (n has the declared range [0, 1000], so a case may set n = 0).
shp_program_t* ReverseProgram() {
  Builder b;
  CHECK(shp_scope_declare(b.scope(), "n", 0, 1000));
  const shp_tensor_t* x = b.In("x", SHP_F32, "n, 3, 5");
  const shp_tensor_t* d = b.In("d", SHP_F64, "2*n + 1, 3");
  const shp_tensor_t* i = b.In("i", SHP_I32, "n, 17");
  const shp_tensor_t* l = b.In("l", SHP_I64, "2, n, 3, 2");
  const shp_tensor_t* m = b.In("m", SHP_BOOL, "n, 4");
  const shp_tensor_t* s = b.In("s", SHP_F32, "");
  const shp_tensor_t* e = b.In("e", SHP_F32, "0, n");
  b.Out("axis0", Reverse(x, {0}));
  b.Out("negative_axis", Reverse(x, {-1}));
  b.Out("axes_2_0", Reverse(x, {2, 0}));
  b.Out("no_axes", Reverse(x, {}));
  b.Out("f64_both", Reverse(d, {1, -2}));
  b.Out("i32_last", Reverse(i, {1}));
  b.Out("i64_every_axis", Reverse(l, {3, -4, 1, 2}));
  b.Out("i64_middle", Reverse(l, {-3}));
  b.Out("bool", Reverse(m, {0, 1}));
  b.Out("scalar", Reverse(s, {}));
  b.Out("empty_axis", Reverse(e, {0, 1}));
  return b.Finish();
}

const shp_tensor_t* Trilu(const shp_tensor_t* x, int64_t k, bool upper) {
  const shp_tensor_t* t;
  CHECK(shp_tensor_trilu(x, k, upper, &t));
  return t;
}

// trilu (numpy triu/tril, added in version 6) over every dtype: both triangles, k inside,
// on and far outside the matrices (the int64 extremes), square, wide, tall and batched
// matrices with symbolic extents, and size-0 axes (n has the declared range [0, 1000]).
shp_program_t* TriluProgram() {
  Builder b;
  CHECK(shp_scope_declare(b.scope(), "n", 0, 1000));
  const shp_tensor_t* x = b.In("x", SHP_F32, "n, n");
  const shp_tensor_t* d = b.In("d", SHP_F64, "3, 2*n + 1");
  const shp_tensor_t* i = b.In("i", SHP_I32, "n + 2, 3");
  const shp_tensor_t* l = b.In("l", SHP_I64, "2, n, 5");
  const shp_tensor_t* m = b.In("m", SHP_BOOL, "n, 4");
  const shp_tensor_t* e = b.In("e", SHP_F32, "2, 0, n");
  b.Out("upper", Trilu(x, 0, true));
  b.Out("lower", Trilu(x, 0, false));
  b.Out("f64_upper_k2", Trilu(d, 2, true));
  b.Out("f64_lower_k_minus1", Trilu(d, -1, false));
  b.Out("i32_upper_k_minus2", Trilu(i, -2, true));
  b.Out("i64_batched_lower_k1", Trilu(l, 1, false));
  b.Out("bool_upper", Trilu(m, 1, true));
  b.Out("k_max_upper", Trilu(x, INT64_MAX, true));
  b.Out("k_min_lower", Trilu(x, INT64_MIN, false));
  b.Out("empty", Trilu(e, 0, true));
  return b.Finish();
}

const shp_tensor_t* TakeAlongAxis(const shp_tensor_t* x, const shp_tensor_t* i, int64_t axis) {
  const shp_tensor_t* t;
  CHECK(shp_tensor_take_along_axis(x, i, axis, &t));
  return t;
}

// take_along_axis (np.take_along_axis, ONNX GatherElements; added in version 12) over every
// dtype with i32 and i64 indices, negative ones among them (they count from the end): on the
// first, a middle and the last axis (a negative axis), more and fewer positions than the axis,
// symbolic extents, a wide row (SIMD gathers), and size-0 axes (n has the range [0, 1000]).
shp_program_t* TakeAlongAxisProgram() {
  Builder b;
  CHECK(shp_scope_declare(b.scope(), "n", 0, 1000));
  const shp_tensor_t* x = b.In("x", SHP_F32, "n, 3, 5");
  const shp_tensor_t* i = b.In("i", SHP_I32, "n, 4, 5");
  const shp_tensor_t* d = b.In("d", SHP_F64, "2*n + 1, 3");
  const shp_tensor_t* j = b.In("j", SHP_I64, "2, 3");
  const shp_tensor_t* l = b.In("l", SHP_I64, "n, 4");
  const shp_tensor_t* k = b.In("k", SHP_I64, "n, 7");
  const shp_tensor_t* c = b.In("c", SHP_I32, "6, n");
  const shp_tensor_t* ci = b.In("ci", SHP_I32, "2, n");
  const shp_tensor_t* m = b.In("m", SHP_BOOL, "n, 4");
  const shp_tensor_t* mi = b.In("mi", SHP_I32, "n, 2");
  const shp_tensor_t* e = b.In("e", SHP_F32, "2, 0");
  const shp_tensor_t* ei = b.In("ei", SHP_I64, "2, 0");
  const shp_tensor_t* y = b.In("y", SHP_F32, "n, 1031");
  const shp_tensor_t* yi = b.In("yi", SHP_I64, "n, 1031");
  b.Out("f32_middle_axis", TakeAlongAxis(x, i, 1));
  b.Out("f64_first_axis_fewer", TakeAlongAxis(d, j, 0));
  b.Out("i64_last_axis_more", TakeAlongAxis(l, k, -1));
  b.Out("i32_first_axis_fewer", TakeAlongAxis(c, ci, -2));
  b.Out("bool_last_axis", TakeAlongAxis(m, mi, 1));
  b.Out("empty", TakeAlongAxis(e, ei, 1));
  b.Out("f32_wide", TakeAlongAxis(y, yi, 1));
  return b.Finish();
}

const shp_tensor_t* Scatter(const shp_tensor_t* b, const shp_tensor_t* i, const shp_tensor_t* u,
                            int64_t axis, shp_scatter_reduction_t r) {
  const shp_tensor_t* t;
  CHECK(shp_tensor_scatter(b, i, u, axis, r, &t));
  return t;
}

// scatter (added in version 15) with each reduction over the numeric dtypes, i32 and i64
// indices in [0, n) with repeats (replace: the last repeat wins), on the first, the last
// (negative) and a middle axis, a scalar index, a size-0 index list, and a 1031-wide row (n has
// the range [0, 1000]: size-0 axes too).
shp_program_t* ScatterProgram() {
  Builder b;
  CHECK(shp_scope_declare(b.scope(), "n", 0, 1000));
  const shp_tensor_t* x = b.In("x", SHP_F32, "3, n");
  const shp_tensor_t* i = b.In("i", SHP_I32, "5");
  const shp_tensor_t* u = b.In("u", SHP_F32, "5, n");
  const shp_tensor_t* d = b.In("d", SHP_F64, "n, 4");
  const shp_tensor_t* j = b.In("j", SHP_I64, "2, 3");
  const shp_tensor_t* v = b.In("v", SHP_F64, "n, 2, 3");
  const shp_tensor_t* l = b.In("l", SHP_I64, "n, 3, 2");
  const shp_tensor_t* k = b.In("k", SHP_I64, "");
  const shp_tensor_t* w = b.In("w", SHP_I64, "n, 2");
  const shp_tensor_t* c = b.In("c", SHP_I32, "4, n");
  const shp_tensor_t* ci = b.In("ci", SHP_I32, "0");
  const shp_tensor_t* cu = b.In("cu", SHP_I32, "0, n");
  const shp_tensor_t* y = b.In("y", SHP_F32, "2, 1031");
  const shp_tensor_t* yi = b.In("yi", SHP_I64, "7");
  const shp_tensor_t* yu = b.In("yu", SHP_F32, "2, 7");
  b.Out("f32_replace_first_axis", Scatter(x, i, u, 0, SHP_SCATTER_REPLACE));
  b.Out("f32_max_first_axis", Scatter(x, i, u, 0, SHP_SCATTER_MAX));
  b.Out("f64_add_last_axis", Scatter(d, j, v, -1, SHP_SCATTER_ADD));
  b.Out("f64_min_last_axis", Scatter(d, j, v, -1, SHP_SCATTER_MIN));
  b.Out("i64_mul_scalar_index", Scatter(l, k, w, 1, SHP_SCATTER_MUL));
  b.Out("i32_replace_empty_indices", Scatter(c, ci, cu, 0, SHP_SCATTER_REPLACE));
  b.Out("f32_min_wide", Scatter(y, yi, yu, 1, SHP_SCATTER_MIN));
  return b.Finish();
}

// tan, sinh, cosh, asin, acos, atan, asinh, acosh, atanh (added in version 7), f32 and f64:
// x holds special values (+-0, +-inf, NaN, a tiny one), u values in [-1, 1] with the edges and
// one beyond, c values >= 1 with 1 itself and one below; a fused chain atan(sinh(x) * u + c).
shp_program_t* TrigProgram() {
  Builder b;
  CHECK(shp_scope_declare(b.scope(), "n", 1, 1000));
  const shp_dtype_t dts[] = {SHP_F32, SHP_F64};
  const char* prefix[] = {"", "f64_"};
  for (int k = 0; k < 2; ++k) {
    const std::string p = prefix[k];
    const shp_tensor_t* x = b.In((p + "x").c_str(), dts[k], k == 0 ? "n" : "2*n + 1");
    const shp_tensor_t* u = b.In((p + "u").c_str(), dts[k], k == 0 ? "n" : "2*n + 1");
    const shp_tensor_t* c = b.In((p + "c").c_str(), dts[k], k == 0 ? "n" : "2*n + 1");
    const shp_unary_op_t ops[] = {SHP_TAN,  SHP_SINH,  SHP_COSH,  SHP_ASIN, SHP_ACOS,
                                  SHP_ATAN, SHP_ASINH, SHP_ACOSH, SHP_ATANH};
    const char* names[] = {"tan",  "sinh",  "cosh",  "asin", "acos",
                           "atan", "asinh", "acosh", "atanh"};
    for (int j = 0; j < 9; ++j) {
      const bool unit = ops[j] == SHP_ASIN || ops[j] == SHP_ACOS || ops[j] == SHP_ATANH;
      b.Out(p + names[j], Un(ops[j], unit ? u : ops[j] == SHP_ACOSH ? c : x));
    }
    const shp_tensor_t *t, *s;
    CHECK(shp_tensor_binary(SHP_MUL, Un(SHP_SINH, x), u, &t));
    CHECK(shp_tensor_binary(SHP_ADD, t, c, &s));
    b.Out(p + "atan_of_sinh_mul_add", Un(SHP_ATAN, s));
  }
  return b.Finish();
}

// top_k (top_k_values and top_k_indices, added in version 8) over f32, f64, i32 and i64: both
// orders, a constant, symbolic, whole-axis and zero k, first, middle and last axes; ties (x:
// quarters) keep the lower index, NaN is the greatest value (s: special values).
shp_program_t* TopKProgram() {
  Builder b;
  CHECK(shp_scope_declare(b.scope(), "n", 1, 1000));
  const shp_tensor_t* x = b.In("x", SHP_F32, "n, 6");
  const shp_tensor_t* s = b.In("s", SHP_F32, "n, 8");
  const shp_tensor_t* d = b.In("d", SHP_F64, "2*n + 1");
  const shp_tensor_t* i = b.In("i", SHP_I32, "3, n");
  const shp_tensor_t* l = b.In("l", SHP_I64, "n, 4, 3");
  auto top_k = [&](const std::string& name, const shp_tensor_t* t, const char* k, int64_t axis,
                   bool largest) {
    const shp_dim_t* kd;
    CHECK(shp_dim_parse(b.scope(), k, &kd));
    const shp_tensor_t *v, *idx;
    CHECK(shp_tensor_top_k(t, kd, axis, largest, true, &v, &idx));
    b.Out(name + "_values", v);
    b.Out(name + "_indices", idx);
  };
  top_k("largest2", x, "2", -1, true);
  top_k("smallest_axis0", x, "n", 0, false);
  top_k("k0", x, "0", 1, true);
  top_k("special_largest3", s, "3", 1, true);
  top_k("special_smallest8", s, "8", 1, false);
  top_k("f64_largest", d, "n + 1", 0, true);
  top_k("i32_smallest", i, "n", 1, false);
  top_k("i64_middle", l, "2", 1, true);
  return b.Finish();
}

const shp_tensor_t* Convert(const shp_tensor_t* x, shp_dtype_t to) {
  const shp_tensor_t* t;
  CHECK(shp_tensor_convert(x, to, &t));
  return t;
}

// The narrow element types (version 9): f16 arithmetic computed in f32 and rounded once (a
// fused chain, a reduction, a matmul, softmax), bf16 through conversions, u8 and i8 wrapping,
// u64's unsigned order, i16 saturation, element moves of u16 and u32, and conversions.
shp_program_t* NarrowProgram() {
  Builder b;
  CHECK(shp_scope_declare(b.scope(), "n", 1, 1000));
  const shp_tensor_t* h = b.In("h", SHP_F16, "n, 3");
  const shp_tensor_t* q = b.In("q", SHP_U8, "n, 3");
  const shp_tensor_t* i = b.In("i", SHP_I8, "n");
  const shp_tensor_t* u = b.In("u", SHP_U64, "n");
  const shp_tensor_t* w = b.In("w", SHP_U16, "3");
  b.Out("f16_tanh_mul_add", Un(SHP_TANH, Bin(SHP_ADD, Bin(SHP_MUL, h, h), h)));
  b.Out("f16_sum_rows", Red(SHP_REDUCE_SUM, h, {1}, false));
  const uint16_t hw[6] = {0x3c00, 0xb800, 0x3400, 0x4000, 0x0001, 0x7bff};  // 1 -.5 .25 2 tiny max
  const int64_t hws[2] = {3, 2};
  const shp_tensor_t* hm;
  CHECK(shp_tensor_constant(b.scope(), SHP_F16, hws, 2, hw, sizeof hw, &hm));
  b.Out("f16_matmul", MatMul(h, hm));
  const shp_tensor_t* sm;
  CHECK(shp_tensor_softmax(h, -1, &sm));
  b.Out("f16_softmax", sm);
  b.Out("f16_via_bf16_to_f32", Convert(Convert(h, SHP_BF16), SHP_F32));
  b.Out("u8_add_wraps", Bin(SHP_ADD, q, Bin(SHP_MUL, q, q)));
  b.Out("u8_scaled_f32", Bin(SHP_DIV, Convert(q, SHP_F32), Convert(Convert(q, SHP_F16), SHP_F32)));
  b.Out("i8_mul_wraps", Bin(SHP_MUL, i, Bin(SHP_SUB, i, Bin(SHP_ADD, i, i))));
  b.Out("i8_neg_abs", Un(SHP_ABS, Un(SHP_NEG, i)));
  const uint64_t half = uint64_t{1} << 63;
  const shp_tensor_t* big;
  CHECK(shp_tensor_constant(b.scope(), SHP_U64, nullptr, 0, &half, sizeof half, &big));
  const shp_tensor_t* ub = Bin(SHP_MUL, u, big);  // 0 or 2^63 by parity, then added
  const shp_tensor_t* uu = Bin(SHP_ADD, u, ub);
  b.Out("u64_lt", Cmp(SHP_CMP_LT, uu, big));
  b.Out("u64_max", Bin(SHP_MAX, uu, big));
  b.Out("u64_reduce_max", Red(SHP_REDUCE_MAX, uu, {0}, true));
  b.Out("u64_to_f32", Convert(uu, SHP_F32));
  b.Out("f16_to_i16", Convert(Bin(SHP_MUL, h, Convert(big, SHP_F16)), SHP_I16));
  const shp_tensor_t* ws[2] = {w, w};
  const shp_tensor_t* cat;
  CHECK(shp_tensor_concatenate(ws, 2, 0, &cat));
  b.Out("u16_concat_u32", Convert(cat, SHP_U32));
  return b.Finish();
}

const shp_tensor_t* ScatterAdd(const shp_tensor_t* base, const shp_tensor_t* indices,
                               const shp_tensor_t* updates, int64_t axis) {
  const shp_tensor_t* t;
  CHECK(shp_tensor_scatter_add(base, indices, updates, axis, &t));
  return t;
}

// scatter_add (the transpose of take) over every numeric dtype and both index dtypes: indices
// of rank 0, 1 and 2, repeated indices (they accumulate), no indices, a negative axis,
// symbolic extents, size-0 operands (n has the declared range [0, 1000], so a case may set
// n = 0) and a wide base (the threaded kernel).
shp_program_t* ScatterAddProgram() {
  Builder b;
  CHECK(shp_scope_declare(b.scope(), "n", 0, 1000));
  const shp_tensor_t* x = b.In("x", SHP_F32, "n, 3, 5");
  const shp_tensor_t* i = b.In("i", SHP_I32, "2*n + 1");
  const shp_tensor_t* u = b.In("u", SHP_F32, "n, 2*n + 1, 5");
  const shp_tensor_t* d = b.In("d", SHP_F64, "n, 4");
  const shp_tensor_t* j = b.In("j", SHP_I64, "2, 3");
  const shp_tensor_t* v = b.In("v", SHP_F64, "n, 2, 3");
  const shp_tensor_t* c = b.In("c", SHP_I32, "7, n");
  const shp_tensor_t* k = b.In("k", SHP_I64, "");
  const shp_tensor_t* w = b.In("w", SHP_I32, "n");
  const shp_tensor_t* l = b.In("l", SHP_I64, "5, 2, n");
  const shp_tensor_t* r = b.In("r", SHP_I32, "6");
  const shp_tensor_t* q = b.In("q", SHP_I64, "5, 6, n");
  const shp_tensor_t* s = b.In("s", SHP_F32, "3");
  const shp_tensor_t* h = b.In("h", SHP_I32, "n");
  const shp_tensor_t* g = b.In("g", SHP_F32, "n");
  const shp_tensor_t* e = b.In("e", SHP_I32, "0");
  const shp_tensor_t* eu = b.In("eu", SHP_F32, "n, 3, 0");
  const shp_tensor_t* y = b.In("y", SHP_F32, "n, 1031");
  const shp_tensor_t* yi = b.In("yi", SHP_I64, "2*n");
  const shp_tensor_t* yu = b.In("yu", SHP_F32, "2*n, 1031");
  b.Out("f32_axis1", ScatterAdd(x, i, u, 1));
  b.Out("f64_rank2_negative_axis", ScatterAdd(d, j, v, -1));
  b.Out("i32_scalar_index", ScatterAdd(c, k, w, 0));
  b.Out("i64_repeated", ScatterAdd(l, r, q, 1));
  b.Out("f32_accumulate", ScatterAdd(s, h, g, 0));
  b.Out("no_indices", ScatterAdd(x, e, eu, -1));
  b.Out("wide_rows", ScatterAdd(y, yi, yu, 0));
  return b.Finish();
}

// ---- Schema version 2: parameters, defaults and derived programs ----

const shp_tensor_t* Parameter(shp_scope_t* s, const char* name, std::vector<int64_t> shape,
                              const std::vector<float>& values) {
  const shp_tensor_t* t;
  CHECK(shp_tensor_parameter(s, name, SHP_F32, shape.data(), shape.size(), values.data(),
                             values.size() * sizeof(float), &t));
  return t;
}

// softmax(relu(x @ w1 + b1) @ w2 + b2) with a symbolic batch and the weights as parameters:
// a run may leave them out (the stored defaults) or give new ones by name.
shp_program_t* MlpParams() {
  shp_scope_t* s;
  CHECK(shp_scope_create(nullptr, 0, &s));
  const shp_tensor_t *x, *zero;
  CHECK(shp_tensor_input(s, "x", SHP_F32, "batch, 8", &x));
  const shp_tensor_t* w1 = Parameter(s, "w1", {8, 16}, Weights(8 * 16, 0.5f));
  const shp_tensor_t* b1 = Parameter(s, "b1", {16}, Weights(16, 0.25f));
  const shp_tensor_t* w2 = Parameter(s, "w2", {16, 4}, Weights(16 * 4, 0.5f));
  const shp_tensor_t* b2 = Parameter(s, "b2", {4}, std::vector<float>(4, 0.125f));
  float z = 0.0f;
  CHECK(shp_tensor_constant(s, SHP_F32, nullptr, 0, &z, 4, &zero));
  const shp_tensor_t* h = Bin(SHP_MAX, Bin(SHP_ADD, MatMul(x, w1), b1), zero);
  const shp_tensor_t* y;
  CHECK(shp_tensor_softmax(Bin(SHP_ADD, MatMul(h, w2), b2), -1, &y));
  const shp_tensor_t* ins[] = {x, w1, b1, w2, b2};
  const char* names[] = {"probs"};
  shp_program_t* p;
  CHECK(shp_program_create(s, ins, 5, &y, names, 1, &p));
  shp_scope_destroy(s);
  return p;
}

// The gradient of a least-squares loss mean((tanh(x @ w + b) - y)^2) (f64, symbolic batch)
// with respect to the data input x and the parameter w: outputs loss, x.grad, w.grad; the
// input loss.cotangent has the default 1 (a run that names it scales the gradients).
shp_program_t* Grad() {
  shp_scope_t* s;
  CHECK(shp_scope_create(nullptr, 0, &s));
  const shp_tensor_t *x, *y, *w, *b;
  CHECK(shp_tensor_input(s, "x", SHP_F64, "batch, 6", &x));
  CHECK(shp_tensor_input(s, "y", SHP_F64, "batch, 3", &y));
  std::vector<float> wf = Weights(6 * 3, 0.5f);
  std::vector<double> wv(wf.begin(), wf.end()), bv = {0.25, -0.5, 0.125};
  int64_t ws[] = {6, 3}, bs[] = {3};
  CHECK(shp_tensor_parameter(s, "w", SHP_F64, ws, 2, wv.data(), wv.size() * 8, &w));
  CHECK(shp_tensor_parameter(s, "b", SHP_F64, bs, 1, bv.data(), bv.size() * 8, &b));
  const shp_tensor_t* d = Bin(SHP_SUB, Un(SHP_TANH, Bin(SHP_ADD, MatMul(x, w), b)), y);
  const shp_tensor_t* loss = Red(SHP_REDUCE_MEAN, Bin(SHP_MUL, d, d), {}, false);
  const shp_tensor_t* ins[] = {x, y, w, b};
  const char* names[] = {"loss"};
  shp_program_t* f;
  CHECK(shp_program_create(s, ins, 4, &loss, names, 1, &f));
  shp_scope_destroy(s);
  const char* wrt[] = {"x", "w"};
  shp_program_t* g;
  CHECK(shp_program_grad(f, "loss", wrt, 2, &g));
  shp_program_destroy(f);
  return g;
}

// ---- Schema version 3: guards and multi-variant programs ----

// A row softmax of x: f32[rows, cols] in one variant, traced under the guard `cols op 16`:
// the softmax op (plain) or max-subtract, exp, sum, divide.
shp_program_t* RowSoftmax(shp_cmp_t op, bool plain, const char* message) {
  shp_scope_t* s;
  CHECK(shp_scope_create(nullptr, 0, &s));
  const shp_tensor_t *x, *y;
  CHECK(shp_tensor_input(s, "x", SHP_F32, "rows, cols", &x));
  const shp_dim_t *cols, *sixteen;
  CHECK(shp_dim_parse(s, "cols", &cols));
  CHECK(shp_dim_constant(s, 16, &sixteen));
  CHECK(shp_scope_assume(s, cols, op, sixteen, message));
  if (plain) {
    CHECK(shp_tensor_softmax(x, -1, &y));
  } else {
    const shp_tensor_t* e = Un(SHP_EXP, Bin(SHP_SUB, x, Red(SHP_REDUCE_MAX, x, {-1}, true)));
    y = Bin(SHP_DIV, e, Red(SHP_REDUCE_SUM, e, {-1}, true));
  }
  const char* names[] = {"y"};
  shp_program_t* p;
  CHECK(shp_program_create(s, &x, 1, &y, names, 1, &p));
  shp_scope_destroy(s);
  return p;
}

// Two variants of a row softmax in one program: the softmax op where cols <= 16, the
// composition where cols > 16 (exhaustive; a run picks the first whose guard holds).
shp_program_t* RowSoftmaxVariants() {
  shp_program_t* v[] = {
      RowSoftmax(SHP_CMP_LE, true, "row softmax: the softmax op for short rows"),
      RowSoftmax(SHP_CMP_GT, false, "row softmax: max-subtract, exp, sum, divide for long rows")};
  shp_program_t* p;
  CHECK(shp_program_create_variants(v, 2, &p));
  shp_program_destroy(v[0]);
  shp_program_destroy(v[1]);
  return p;
}

}  // namespace

// conv through the C API's ONNX forms (f32 and f64; symbolic batch and spatial sizes): 3x3 with a
// bias, strides + dilations + groups + uneven pads, depthwise with a depth multiplier and
// SAME_UPPER, conv_transpose (input dilation, flipped kernel, output padding), and 1-D with
// SAME_LOWER and negative (cropping) pads.
shp_program_t* ConvProgram() {
  Builder b;
  const shp_tensor_t* x = b.In("x", SHP_F32, "n, 4, h, 5");
  const shp_tensor_t* w = b.In("w", SHP_F32, "6, 4, 3, 3");
  const shp_tensor_t* bias = b.In("bias", SHP_F32, "6");
  const shp_tensor_t* wg = b.In("wg", SHP_F32, "4, 2, 2, 3");
  const shp_tensor_t* wd = b.In("wd", SHP_F32, "8, 1, 3, 3");
  const shp_tensor_t* wt = b.In("wt", SHP_F32, "4, 3, 3, 3");
  const shp_tensor_t* d = b.In("d", SHP_F64, "n, 2, 2*h + 1");
  const shp_tensor_t* w1 = b.In("w1", SHP_F64, "3, 2, 3");
  const shp_tensor_t* t;
  const int64_t pads1[] = {1, 1, 1, 1};
  CHECK(shp_tensor_conv(x, w, bias, 2, nullptr, nullptr, pads1, SHP_AUTO_PAD_NOTSET, 1, &t));
  b.Out("basic_bias", t);
  const int64_t st2[] = {2, 1}, dl2[] = {1, 2}, pads2[] = {0, 1, 1, 0};
  CHECK(shp_tensor_conv(x, wg, nullptr, 2, st2, dl2, pads2, SHP_AUTO_PAD_NOTSET, 2, &t));
  b.Out("strided_dilated_groups", t);
  const int64_t st3[] = {2, 2};
  CHECK(shp_tensor_conv(x, wd, nullptr, 2, st3, nullptr, nullptr, SHP_AUTO_PAD_SAME_UPPER, 4, &t));
  b.Out("depthwise_same_upper", t);
  const int64_t padt[] = {1, 0, 1, 1}, adj[] = {1, 0};
  CHECK(shp_tensor_conv_transpose(x, wt, nullptr, 2, st3, nullptr, padt, adj, SHP_AUTO_PAD_NOTSET,
                                  1, &t));
  b.Out("transpose", t);
  const int64_t st1[] = {2};
  CHECK(shp_tensor_conv(d, w1, nullptr, 1, st1, nullptr, nullptr, SHP_AUTO_PAD_SAME_LOWER, 1, &t));
  b.Out("f64_same_lower", t);
  const int64_t pads1d[] = {-1, 2};
  CHECK(shp_tensor_conv(d, w1, nullptr, 1, nullptr, nullptr, pads1d, SHP_AUTO_PAD_NOTSET, 1, &t));
  b.Out("f64_cropped", t);
  return b.Finish();
}

// Pooling and erf (schema version 4), symbolic batch and spatial sizes: max_pool 3x3/2 with pads
// and ceil mode, avg_pool 2x2/2 with and without the pads counted, SAME_UPPER max_pool with
// dilation, global pools, reduce_window min (f64) with both dilations and a cropping pad, and
// erf of a pooled map. (onnxruntime has no f64 AveragePool or Erf: the export test runs these.)
shp_program_t* PoolProgram() {
  Builder b;
  const shp_tensor_t* x = b.In("x", SHP_F32, "n, 3, h, w");
  const shp_tensor_t* d = b.In("d", SHP_F32, "n, 2, 2*h + 1");
  const shp_tensor_t* k = b.In("k", SHP_F64, "n, 2, h + 4");
  const shp_tensor_t* t;
  const int64_t k3[] = {3, 3}, s2[] = {2, 2}, p1[] = {1, 1, 1, 1}, k2[] = {2, 2};
  CHECK(shp_tensor_max_pool(x, 2, k3, s2, nullptr, p1, SHP_AUTO_PAD_NOTSET, true, &t));
  b.Out("max_3x3_s2_ceil", t);
  const int64_t p01[] = {0, 1, 1, 0};
  CHECK(shp_tensor_avg_pool(x, 2, k2, s2, nullptr, p01, SHP_AUTO_PAD_NOTSET, false, true, &t));
  b.Out("avg_2x2_count_pad", t);
  CHECK(shp_tensor_avg_pool(x, 2, k3, nullptr, nullptr, p1, SHP_AUTO_PAD_NOTSET, false, false, &t));
  b.Out("avg_3x3_exclude_pad", t);
  const int64_t dl[] = {2, 1};
  CHECK(shp_tensor_max_pool(x, 2, k2, s2, dl, nullptr, SHP_AUTO_PAD_SAME_UPPER, false, &t));
  b.Out("max_same_upper_dilated", t);
  CHECK(shp_tensor_global_avg_pool(x, &t));
  b.Out("global_avg", t);
  CHECK(shp_tensor_global_max_pool(x, &t));
  b.Out("global_max", t);
  const int64_t k1[] = {3};
  CHECK(shp_tensor_avg_pool(d, 1, k1, k1, nullptr, nullptr, SHP_AUTO_PAD_NOTSET, true, false, &t));
  CHECK(shp_tensor_unary(SHP_ERF, t, &t));
  b.Out("erf_of_avg_1d", t);
  const int64_t win[] = {1, 1, 3}, str[] = {1, 1, 2}, wdl[] = {1, 1, 2}, bdl[] = {1, 1, 2};
  const shp_dim_t* zero = b.D("0");
  const shp_dim_t* low[] = {zero, zero, b.D("1")};
  const shp_dim_t* high[] = {zero, zero, b.D("-1")};
  CHECK(shp_tensor_reduce_window(SHP_REDUCE_MIN, k, win, str, wdl, bdl, low, high, 3, &t));
  b.Out("min_window", t);
  return b.Finish();
}

// Data-dependent sizes (schema version 5): nonzero of a matrix, the rows whose score is
// positive and their mean (sum / count), a 2-D mask flattening its axes, and an iota whose
// length is a computed scalar with a declared range.
shp_program_t* DataDependentProgram() {
  Builder b;
  const shp_tensor_t* x = b.In("x", SHP_F32, "n, 3");
  const shp_tensor_t* score = b.In("score", SHP_F32, "n");
  const shp_tensor_t* m = b.In("m", SHP_BOOL, "n, 3");
  const shp_tensor_t* v = b.In("v", SHP_I64, "");
  const shp_tensor_t *t, *zero, *mask, *rows, *sum, *count;
  CHECK(shp_tensor_nonzero(x, &t));
  b.Out("nonzero", t);
  const float z = 0.0f;
  CHECK(shp_tensor_constant(b.scope(), SHP_F32, nullptr, 0, &z, sizeof z, &zero));
  CHECK(shp_tensor_compare(score, SHP_CMP_GT, zero, &mask));
  CHECK(shp_tensor_boolean_mask(x, mask, 0, &rows));
  b.Out("rows", rows);
  const int64_t axis0 = 0;
  CHECK(shp_tensor_reduce(SHP_REDUCE_SUM, rows, &axis0, 1, false, &sum));
  const shp_dim_t* dims[2];
  size_t rank;
  CHECK(shp_tensor_shape(rows, dims, 2, &rank));
  CHECK(shp_tensor_dim_value(b.scope(), dims[0], &count));
  CHECK(shp_tensor_convert(count, SHP_F32, &count));
  CHECK(shp_tensor_binary(SHP_DIV, sum, count, &t));
  b.Out("mean", t);
  CHECK(shp_tensor_boolean_mask(x, m, 0, &t));
  b.Out("masked_2d", t);
  const shp_dim_t* k;
  CHECK(shp_tensor_size_from_value(v, "k", 0, 5, &k));
  CHECK(shp_tensor_iota(b.scope(), SHP_I64, &k, 1, 0, &t));
  b.Out("iota_k", t);
  return b.Finish();
}

// A control-flow body: `f` over fresh inputs of `specs` in b's scope, a program of its own
// (shp_program_create: no captures).
shp_program_t* Body(
    Builder& b, const std::vector<std::pair<shp_dtype_t, const char*>>& specs,
    const std::function<std::vector<const shp_tensor_t*>(const std::vector<const shp_tensor_t*>&)>&
        f) {
  std::vector<const shp_tensor_t*> in;
  for (size_t i = 0; i < specs.size(); ++i) {
    const shp_tensor_t* t;
    const std::string name = "arg" + std::to_string(i);
    CHECK(shp_tensor_input(b.scope(), name.c_str(), specs[i].first, specs[i].second, &t));
    in.push_back(t);
  }
  std::vector<const shp_tensor_t*> out = f(in);
  std::vector<std::string> names;
  std::vector<const char*> cnames;
  for (size_t i = 0; i < out.size(); ++i) names.push_back("out" + std::to_string(i));
  for (const std::string& n : names) cnames.push_back(n.c_str());
  shp_program_t* p;
  CHECK(shp_program_create(b.scope(), in.data(), in.size(), out.data(), cnames.data(), out.size(),
                           &p));
  return p;
}

// Data-dependent sizes of control flow (version 13: ControlFlowOptions.sizes): a cond whose
// two results differ in size between its branches (the true branch runs: p > 0), a cond whose
// taken (false) branch masks y (a size computed inside the branch), and a scan whose ys mask
// each slice (the first iteration sets their size; t = 0 included).
shp_program_t* CondSizesProgram() {
  Builder b;
  CHECK(shp_scope_declare(b.scope(), "t", 0, 1000));
  const shp_tensor_t* x = b.In("x", SHP_F64, "n");
  const shp_tensor_t* y = b.In("y", SHP_F64, "m");
  const shp_tensor_t* p = b.In("p", SHP_F64, "");
  const shp_tensor_t* xs = b.In("xs", SHP_F64, "t, 3");
  auto scalar = [&b](double v) {
    const shp_tensor_t* t;
    CHECK(shp_tensor_constant(b.scope(), SHP_F64, nullptr, 0, &v, 8, &t));
    return t;
  };
  const shp_tensor_t* zero = scalar(0.0);
  const std::vector<std::pair<shp_dtype_t, const char*>> xy = {{SHP_F64, "n"}, {SHP_F64, "m"}};
  shp_program_t* yes = Body(b, xy, [&](const std::vector<const shp_tensor_t*>& in) {
    return std::vector<const shp_tensor_t*>{Bin(SHP_MUL, in[0], scalar(2.0)), in[1]};
  });
  shp_program_t* no = Body(b, xy, [&](const std::vector<const shp_tensor_t*>& in) {
    return std::vector<const shp_tensor_t*>{Bin(SHP_ADD, in[1], scalar(1.0)), in[0]};
  });
  const shp_tensor_t *pos, *neg;
  CHECK(shp_tensor_compare(p, SHP_CMP_GT, zero, &pos));
  CHECK(shp_tensor_compare(p, SHP_CMP_LT, zero, &neg));
  const shp_tensor_t* ops[2] = {x, y};
  const shp_tensor_t* a[2];
  CHECK(shp_tensor_cond(b.scope(), pos, yes, no, ops, 2, a, 2));
  b.Out("a0", a[0]);
  b.Out("a1", a[1]);
  shp_program_t* twice = Body(b, xy, [&](const std::vector<const shp_tensor_t*>& in) {
    return std::vector<const shp_tensor_t*>{Bin(SHP_MUL, in[0], scalar(2.0))};
  });
  shp_program_t* masked = Body(b, xy, [&](const std::vector<const shp_tensor_t*>& in) {
    const shp_tensor_t *m, *t;
    CHECK(shp_tensor_compare(in[1], SHP_CMP_GT, zero, &m));
    CHECK(shp_tensor_boolean_mask(in[1], m, 0, &t));
    return std::vector<const shp_tensor_t*>{t};
  });
  const shp_tensor_t* c;
  CHECK(shp_tensor_cond(b.scope(), neg, twice, masked, ops, 2, &c, 1));
  b.Out("b", c);
  const shp_tensor_t* sum;
  CHECK(shp_tensor_reduce(SHP_REDUCE_SUM, c, nullptr, 0, false, &sum));
  b.Out("b_sum", sum);
  shp_program_t* body =
      Body(b, {{SHP_F64, ""}, {SHP_F64, "3"}}, [&](const std::vector<const shp_tensor_t*>& in) {
        const shp_tensor_t *m, *t, *s;
        CHECK(shp_tensor_compare(in[1], SHP_CMP_GT, zero, &m));
        CHECK(shp_tensor_boolean_mask(in[1], m, 0, &t));
        CHECK(shp_tensor_reduce(SHP_REDUCE_SUM, in[1], nullptr, 0, false, &s));
        return std::vector<const shp_tensor_t*>{Bin(SHP_ADD, in[0], s), t};
      });
  const shp_tensor_t* r[2];
  CHECK(shp_tensor_scan(b.scope(), body, &zero, 1, &xs, 1, nullptr, 0, 0, nullptr, false, r, 2));
  b.Out("s_c", r[0]);
  b.Out("s_ys", r[1]);
  return b.Finish();
}

// Control flow (version 10): an f64 RNN scan over a symbolic length (n = 0 included) with its
// weights as a constant operand, the ys stacked; an i32 scan along axis 1, reversed, with a
// length-only count; a cond on the data whose branches return two results; a while_loop (a
// Newton square root of every element, f64) bounded by max_trips.
shp_program_t* ControlFlowProgram() {
  Builder b;
  CHECK(shp_scope_declare(b.scope(), "n", 0, 1000));
  const shp_tensor_t* x = b.In("x", SHP_F64, "n, 3");
  const shp_tensor_t* h = b.In("h", SHP_F64, "3");
  const shp_tensor_t* w = b.In("w", SHP_F64, "3, 3");
  const shp_tensor_t* k = b.In("k", SHP_I32, "2, n");
  const shp_tensor_t* a = b.In("a", SHP_F64, "4");
  shp_program_t* rnn =
      Body(b, {{SHP_F64, "3"}, {SHP_F64, "3"}, {SHP_F64, "3, 3"}},
           [](const std::vector<const shp_tensor_t*>& in) {
             const shp_tensor_t* m;
             CHECK(shp_tensor_matmul(in[0], in[2], &m));
             const shp_tensor_t* next = Un(SHP_TANH, Bin(SHP_ADD, m, in[1]));
             return std::vector<const shp_tensor_t*>{next, Bin(SHP_MUL, next, in[1])};
           });
  const shp_tensor_t* r[2];
  CHECK(shp_tensor_scan(b.scope(), rnn, &h, 1, &x, 1, &w, 1, 0, nullptr, false, r, 2));
  b.Out("rnn_h", r[0]);
  b.Out("rnn_ys", r[1]);
  // Running sums of the columns of k from the right (axis 1, reversed), and the step count.
  shp_program_t* cumsum =
      Body(b, {{SHP_I32, "2"}, {SHP_I32, "2"}}, [](const std::vector<const shp_tensor_t*>& in) {
        const shp_tensor_t* s = Bin(SHP_ADD, in[0], in[1]);
        return std::vector<const shp_tensor_t*>{s, s};
      });
  const shp_tensor_t* zero2;
  const int32_t zeros[2] = {0, 0};
  const int64_t two = 2;
  CHECK(shp_tensor_constant(b.scope(), SHP_I32, &two, 1, zeros, sizeof zeros, &zero2));
  const shp_tensor_t* c[2];
  CHECK(shp_tensor_scan(b.scope(), cumsum, &zero2, 1, &k, 1, nullptr, 0, 1, nullptr, true, c, 2));
  b.Out("i32_total", c[0]);
  b.Out("i32_suffix_sums", c[1]);
  shp_program_t* count = Body(b, {{SHP_I64, ""}}, [&b](const std::vector<const shp_tensor_t*>& in) {
    const int64_t one = 1;
    const shp_tensor_t* o;
    CHECK(shp_tensor_constant(b.scope(), SHP_I64, nullptr, 0, &one, 8, &o));
    return std::vector<const shp_tensor_t*>{Bin(SHP_ADD, in[0], o)};
  });
  const int64_t zero = 0;
  const shp_tensor_t* i0;
  CHECK(shp_tensor_constant(b.scope(), SHP_I64, nullptr, 0, &zero, 8, &i0));
  const shp_tensor_t* steps;
  CHECK(shp_tensor_scan(b.scope(), count, &i0, 1, nullptr, 0, nullptr, 0, 0, b.D("2*n + 1"), false,
                        &steps, 1));
  b.Out("steps", steps);
  // cond: (x * 2, h + 1) when sum(x) > 0, else (x - 1, h * h).
  const std::vector<std::pair<shp_dtype_t, const char*>> xh = {{SHP_F64, "n, 3"}, {SHP_F64, "3"}};
  auto scalar = [&b](double v) {
    const shp_tensor_t* t;
    CHECK(shp_tensor_constant(b.scope(), SHP_F64, nullptr, 0, &v, 8, &t));
    return t;
  };
  const shp_tensor_t* two_f = scalar(2.0);
  const shp_tensor_t* one_f = scalar(1.0);
  shp_program_t* yes = Body(b, xh, [&](const std::vector<const shp_tensor_t*>& in) {
    return std::vector<const shp_tensor_t*>{Bin(SHP_MUL, in[0], two_f), Bin(SHP_ADD, in[1], one_f)};
  });
  shp_program_t* no = Body(b, xh, [&](const std::vector<const shp_tensor_t*>& in) {
    return std::vector<const shp_tensor_t*>{Bin(SHP_SUB, in[0], one_f), Bin(SHP_MUL, in[1], in[1])};
  });
  const shp_tensor_t* sum;
  CHECK(shp_tensor_reduce(SHP_REDUCE_SUM, x, nullptr, 0, false, &sum));
  const shp_tensor_t* pred;
  CHECK(shp_tensor_compare(sum, SHP_CMP_GT, scalar(0.0), &pred));
  const shp_tensor_t* ops[2] = {x, h};
  const shp_tensor_t* cr[2];
  CHECK(shp_tensor_cond(b.scope(), pred, yes, no, ops, 2, cr, 2));
  b.Out("cond_x", cr[0]);
  b.Out("cond_h", cr[1]);
  // Newton: v = (v + a / v) / 2 while max |v*v - a| > 1e-9, from v = a + 1 (a >= 0).
  const std::vector<std::pair<shp_dtype_t, const char*>> va = {{SHP_F64, "4"}, {SHP_F64, "4"}};
  shp_program_t* go_on = Body(b, va, [&](const std::vector<const shp_tensor_t*>& in) {
    const shp_tensor_t* err = Un(SHP_ABS, Bin(SHP_SUB, Bin(SHP_MUL, in[0], in[0]), in[1]));
    const shp_tensor_t* worst;
    CHECK(shp_tensor_reduce(SHP_REDUCE_MAX, err, nullptr, 0, false, &worst));
    const shp_tensor_t* p;
    CHECK(shp_tensor_compare(worst, SHP_CMP_GT, scalar(1e-9), &p));
    return std::vector<const shp_tensor_t*>{p};
  });
  shp_program_t* step = Body(b, va, [&](const std::vector<const shp_tensor_t*>& in) {
    const shp_tensor_t* next = Bin(SHP_DIV, Bin(SHP_ADD, in[0], Bin(SHP_DIV, in[1], in[0])), two_f);
    return std::vector<const shp_tensor_t*>{next, in[1]};
  });
  const shp_tensor_t* init[2] = {Bin(SHP_ADD, a, one_f), a};
  const shp_tensor_t* root[2];
  CHECK(shp_tensor_while_loop(b.scope(), go_on, step, init, 2, nullptr, 0, 100, root, 2));
  b.Out("newton_sqrt", root[0]);
  for (shp_program_t* p : {rnn, cumsum, count, yes, no, go_on, step}) shp_program_destroy(p);
  return b.Finish();
}

// ---- Schema version 11: fill defaults ----

// The jvp of y = sum(tanh(x * w), axis 1) (f64, x: [n, 3], w: [3]) with respect to x and w,
// with the default tangents 1 (x.tangent, shaped [n, 3] by the run) and -0.5 (w.tangent).
shp_program_t* JvpDefaultsProgram() {
  shp_scope_t* s;
  CHECK(shp_scope_create(nullptr, 0, &s));
  const shp_tensor_t *x, *w;
  CHECK(shp_tensor_input(s, "x", SHP_F64, "n, 3", &x));
  CHECK(shp_tensor_input(s, "w", SHP_F64, "3", &w));
  const shp_tensor_t* y = Red(SHP_REDUCE_SUM, Un(SHP_TANH, Bin(SHP_MUL, x, w)), {1}, false);
  const shp_tensor_t* ins[] = {x, w};
  const char* names[] = {"y"};
  shp_program_t* f;
  CHECK(shp_program_create(s, ins, 2, &y, names, 1, &f));
  shp_scope_destroy(s);
  const char* wrt[] = {"x", "w"};
  const double fills[] = {1.0, -0.5};
  shp_program_t* j;
  CHECK(shp_program_jvp_with_default_tangents(f, wrt, 2, fills, &j));
  shp_program_destroy(f);
  return j;
}

// Schema version 14: metadata (string pairs saved with the program). y = tanh(x) * 2 with the
// keys an ONNX import writes (JSON values), a non-ASCII value and an empty one, set in an order
// other than the stored (increasing) one.
shp_program_t* MetadataProgram() {
  shp_scope_t* s;
  CHECK(shp_scope_create(nullptr, 0, &s));
  const shp_tensor_t *x, *two;
  CHECK(shp_tensor_input(s, "x", SHP_F32, "n, 4", &x));
  const float v = 2.0f;
  CHECK(shp_tensor_constant(s, SHP_F32, nullptr, 0, &v, 4, &two));
  const shp_tensor_t* y = Bin(SHP_MUL, Un(SHP_TANH, x), two);
  const char* names[] = {"y"};
  shp_program_t* p;
  CHECK(shp_program_create(s, &x, 1, &y, names, 1, &p));
  shp_scope_destroy(s);
  const char* entries[][2] = {
      {"onnx.types", R"({"inputs":{"x":"FLOAT"},"outputs":{"y":"FLOAT"}})"},
      {"onnx.names", R"({"inputs":{"x":"input.x"},"outputs":{"y":"output.y"}})"},
      {"producer.note", "\xc3\xa9t\xc3\xa9 \xe2\x9c\x93\nline 2"},
      {"empty", ""},
  };
  for (const auto& e : entries) {
    shp_program_t* q;
    CHECK(shp_program_with_metadata(p, e[0], e[1], &q));
    shp_program_destroy(p);
    p = q;
  }
  return p;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: generate OUTPUT_DIR\n");
    return 2;
  }
  std::string dir = argv[1];
  Write(dir, "mlp", Mlp());
  Write(dir, "constraints", Constrained());
  const char* dtypes[] = {"f32", "f64", "i32", "i64", "bool"};
  for (int d = 0; d < 5; ++d) {
    Write(dir, std::string("dtype_") + dtypes[d], PerDtype(static_cast<shp_dtype_t>(d)));
  }
  Write(dir, "dot_general", DotGeneral());
  Write(dir, "transpose", TransposeProgram());
  Write(dir, "scalars", Scalars());
  Write(dir, "unary_f32", UnaryFloat(SHP_F32));
  Write(dir, "unary_f64", UnaryFloat(SHP_F64));
  Write(dir, "unary_int", UnaryInt());
  for (int d = 0; d < 5; ++d) {
    Write(dir, std::string("binary_") + dtypes[d], BinaryProgram(static_cast<shp_dtype_t>(d)));
  }
  Write(dir, "convert", Convert());
  Write(dir, "shape_ops", ShapeOps());
  Write(dir, "reductions", Reductions());
  Write(dir, "nn", Nn());
  Write(dir, "empty", Empty());
  Write(dir, "reverse", ReverseProgram());
  Write(dir, "scatter_add", ScatterAddProgram());
  Write(dir, "mlp_params", MlpParams());
  Write(dir, "grad", Grad());
  Write(dir, "row_softmax_variants", RowSoftmaxVariants());
  Write(dir, "conv", ConvProgram());
  Write(dir, "pool", PoolProgram());
  Write(dir, "data_dependent", DataDependentProgram());
  Write(dir, "trilu", TriluProgram());
  Write(dir, "trig", TrigProgram());
  Write(dir, "topk", TopKProgram());
  Write(dir, "narrow", NarrowProgram());
  Write(dir, "control_flow", ControlFlowProgram());
  Write(dir, "jvp_defaults", JvpDefaultsProgram());
  Write(dir, "take_along_axis", TakeAlongAxisProgram());
  Write(dir, "cond_sizes", CondSizesProgram());
  Write(dir, "metadata", MetadataProgram());
  Write(dir, "scatter", ScatterProgram());
  return 0;
}
