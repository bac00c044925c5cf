// Writes the programs with guards and variants that cli_test.sh inspects, checks and runs
// (the golden file row_softmax_variants_v3 covers the exhaustive pair):
//   gap.shpoly      row softmax variants under cols <= 8 and cols >= 17: not exhaustive
//   hinted.shpoly   x * y traced with hints s0 = s1 = 5 under SHP_GUARDS_FROM_HINTS: one
//                   variant, guarded by s0 == s1 (recorded by the op)
//   unknown.shpoly  variants under mod(n*n, 7) != 3 and n >= 5: exhaustive, but neither
//                   provable nor refutable (coverage unknown)
//   usage: guard_programs OUTPUT_DIR
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "shapepoly/shapepoly.h"

namespace {

void Check(shp_error_t* e, const char* what) {
  if (!e) return;
  std::fprintf(stderr, "guard_programs: %s: %s\n", what, shp_error_message(e));
  std::exit(1);
}

#define CHECK(call) Check((call), #call)

const shp_dim_t* Dim(shp_scope_t* s, const char* text) {
  const shp_dim_t* d;
  CHECK(shp_dim_parse(s, text, &d));
  return d;
}

void Write(const std::string& path, shp_program_t* p) {
  shp_buffer_t* b = nullptr;
  CHECK(shp_program_serialize(p, &b));
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(shp_buffer_data(b)),
            static_cast<std::streamsize>(shp_buffer_size(b)));
  shp_buffer_destroy(b);
  shp_program_destroy(p);
  if (!out) {
    std::fprintf(stderr, "guard_programs: cannot write %s\n", path.c_str());
    std::exit(1);
  }
}

shp_program_t* Create(shp_scope_t* s, const shp_tensor_t* x, const shp_tensor_t* y) {
  const char* names[] = {"y"};
  shp_program_t* p;
  CHECK(shp_program_create(s, &x, 1, &y, names, 1, &p));
  shp_scope_destroy(s);
  return p;
}

// A row softmax of x: f32[rows, cols] traced under `cols op bound`.
shp_program_t* RowSoftmax(shp_cmp_t op, const char* bound, const char* message) {
  shp_scope_t* s;
  CHECK(shp_scope_create(nullptr, 0, &s));
  const shp_tensor_t *x, *y;
  CHECK(shp_tensor_input(s, "x", SHP_F32, "rows, cols", &x));
  CHECK(shp_scope_assume(s, Dim(s, "cols"), op, Dim(s, bound), message));
  CHECK(shp_tensor_softmax(x, -1, &y));
  return Create(s, x, y);
}

// x: f32[n] through the unary op `u`, traced under `lhs op rhs`.
shp_program_t* Unary(const char* lhs, shp_cmp_t op, const char* rhs, shp_unary_op_t u) {
  shp_scope_t* s;
  CHECK(shp_scope_create(nullptr, 0, &s));
  CHECK(shp_scope_assume(s, Dim(s, lhs), op, Dim(s, rhs), nullptr));
  const shp_tensor_t *x, *y;
  CHECK(shp_tensor_input(s, "x", SHP_F32, "n", &x));
  CHECK(shp_tensor_unary(u, x, &y));
  return Create(s, x, y);
}

shp_program_t* Variants(shp_program_t* a, shp_program_t* b) {
  shp_program_t* v[] = {a, b};
  shp_program_t* p;
  CHECK(shp_program_create_variants(v, 2, &p));
  shp_program_destroy(a);
  shp_program_destroy(b);
  return p;
}

shp_program_t* Hinted() {
  shp_scope_t* s;
  CHECK(shp_scope_create(nullptr, 0, &s));
  CHECK(shp_scope_set_guard_policy(s, SHP_GUARDS_FROM_HINTS));
  CHECK(shp_scope_set_hint(s, "s0", 5));
  CHECK(shp_scope_set_hint(s, "s1", 5));
  const shp_tensor_t *x, *y, *z;
  CHECK(shp_tensor_input(s, "x", SHP_F32, "s0", &x));
  CHECK(shp_tensor_input(s, "y", SHP_F32, "s1", &y));
  CHECK(shp_tensor_binary(SHP_MUL, x, y, &z));
  const shp_tensor_t* ins[] = {x, y};
  const char* names[] = {"z"};
  shp_program_t* p;
  CHECK(shp_program_create(s, ins, 2, &z, names, 1, &p));
  shp_scope_destroy(s);
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: guard_programs OUTPUT_DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  Write(dir + "/gap.shpoly", Variants(RowSoftmax(SHP_CMP_LE, "8", "short rows"),
                                      RowSoftmax(SHP_CMP_GE, "17", "long rows")));
  Write(dir + "/hinted.shpoly", Hinted());
  Write(dir + "/unknown.shpoly", Variants(Unary("mod(n*n, 7)", SHP_CMP_NE, "3", SHP_EXP),
                                          Unary("n", SHP_CMP_GE, "5", SHP_TANH)));
  return 0;
}
