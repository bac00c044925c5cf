// Writes the golden programs of this schema version through the public C API:
//   bazel run //tests/golden:generate -- $PWD/tests/golden
// Files are only ever added (one set per schema version): every released file must keep
// loading and round-tripping byte-identically (golden_test).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
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

void Write(const std::string& dir, const std::string& name, shp_program_t* p) {
  shp_buffer_t* b = nullptr;
  CHECK(shp_program_serialize(p, &b));
  std::ofstream out(dir + "/" + name, std::ios::binary);
  out.write(static_cast<const char*>(shp_buffer_data(b)), static_cast<std::streamsize>(shp_buffer_size(b)));
  if (!out) {
    std::fprintf(stderr, "generate: cannot write %s/%s\n", dir.c_str(), name.c_str());
    std::exit(1);
  }
  std::printf("wrote %s (%zu bytes)\n", name.c_str(), shp_buffer_size(b));
  shp_buffer_destroy(b);
  shp_program_destroy(p);
}

std::vector<float> Weights(size_t n, float scale) {
  std::vector<float> v(n);
  uint32_t s = 12345;
  for (size_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    v[i] = scale * static_cast<float>(static_cast<int>((s >> 24) % 16) - 8) / 8.0f;  // few distinct values: compressible
  }
  return v;
}

// softmax(relu(x @ w1 + b1) @ w2 + b2), batch symbolic, weights as constants.
shp_program_t* Mlp() {
  shp_scope_t* s;
  CHECK(shp_scope_create(nullptr, 0, &s));
  const shp_tensor_t *x, *w1, *b1, *w2, *b2, *zero, *h, *y;
  CHECK(shp_tensor_input(s, "x", SHP_F32, "batch, 784", &x));
  std::vector<float> W1 = Weights(784 * 16, 0.1f), B1(16, 0.01f), W2 = Weights(16 * 10, 0.5f), B2(10, 0.0f);
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
  if (dt == SHP_F32) { float v[4] = {1, 2, 3, 4}; std::memcpy(bytes, v, sizeof v); }
  if (dt == SHP_F64) { double v[4] = {1, 2, 3, 4}; std::memcpy(bytes, v, sizeof v); }
  if (dt == SHP_I32) { int32_t v[4] = {1, 2, 3, 4}; std::memcpy(bytes, v, sizeof v); }
  if (dt == SHP_I64) { int64_t v[4] = {1, 2, 3, 4}; std::memcpy(bytes, v, sizeof v); }
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

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: generate OUTPUT_DIR\n");
    return 2;
  }
  std::string dir = argv[1];
  std::string v = "v" + std::to_string(shp_program_schema_version());
  Write(dir, "mlp_" + v + ".shpoly", Mlp());
  Write(dir, "constraints_" + v + ".shpoly", Constrained());
  const char* dtypes[] = {"f32", "f64", "i32", "i64", "bool"};
  for (int d = 0; d < 5; ++d) {
    Write(dir, std::string("dtype_") + dtypes[d] + "_" + v + ".shpoly", PerDtype(static_cast<shp_dtype_t>(d)));
  }
  return 0;
}
