// The tensor and program C API through the shipped shared library.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "shapepoly/shapepoly.h"

namespace {

int32_t Code(shp_error_t* err) {
  int32_t c = shp_error_code(err);
  shp_error_destroy(err);
  return c;
}

std::string Message(shp_error_t* err) {
  std::string m = shp_error_message(err);
  shp_error_destroy(err);
  return m;
}

#define OK(call) ASSERT_EQ(Message(call), "")

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

// An MLP: softmax(tanh(x @ w + b)) with a symbolic batch.
struct Mlp {
  shp_scope_t* scope = nullptr;
  const shp_tensor_t *x = nullptr, *w = nullptr, *b = nullptr, *y = nullptr;
  Mlp() {
    EXPECT_EQ(shp_scope_create(nullptr, 0, &scope), nullptr);
    EXPECT_EQ(shp_tensor_input(scope, "x", SHP_F32, "batch, 784", &x), nullptr);
    EXPECT_EQ(shp_tensor_input(scope, "w", SHP_F32, "784, 10", &w), nullptr);
    EXPECT_EQ(shp_tensor_input(scope, "b", SHP_F32, "10", &b), nullptr);
    const shp_tensor_t *h, *a, *t;
    EXPECT_EQ(shp_tensor_matmul(x, w, &h), nullptr);
    EXPECT_EQ(shp_tensor_binary(SHP_ADD, h, b, &a), nullptr);
    EXPECT_EQ(shp_tensor_unary(SHP_TANH, a, &t), nullptr);
    EXPECT_EQ(shp_tensor_softmax(t, -1, &y), nullptr);
  }
  ~Mlp() { shp_scope_destroy(scope); }
  shp_program_t* Program() {
    const shp_tensor_t* ins[] = {x, w, b};
    const shp_tensor_t* outs[] = {y};
    const char* names[] = {"probs"};
    shp_program_t* p = nullptr;
    EXPECT_EQ(shp_program_create(scope, ins, 3, outs, names, 1, &p), nullptr);
    return p;
  }
};

TEST(TensorApi, OpsInferSymbolicShapes) {
  Mlp m;
  EXPECT_EQ(ShapeOf(m.y), "(batch, 10)");
  EXPECT_EQ(shp_tensor_dtype(m.y), SHP_F32);
  const shp_tensor_t* c;
  OK(shp_tensor_compare(m.y, SHP_CMP_LT, m.b, &c));
  EXPECT_EQ(shp_tensor_dtype(c), SHP_BOOL);
  const shp_dim_t *n, *four;
  OK(shp_dim_parse(m.scope, "batch", &n));
  OK(shp_dim_constant(m.scope, 4, &four));
  const shp_dim_t* target[] = {nullptr, four};
  const shp_tensor_t* r;
  OK(shp_tensor_reshape(m.x, target, 2, &r));
  EXPECT_EQ(ShapeOf(r), "(196*batch, 4)");
  const shp_tensor_t* s;
  const shp_dim_t* start[] = {nullptr, four};
  int64_t strides[] = {1, 2};
  OK(shp_tensor_slice(m.x, start, nullptr, strides, 2, &s));
  EXPECT_EQ(ShapeOf(s), "(batch, 390)");
  const shp_tensor_t* red;
  int64_t axes[] = {0};
  OK(shp_tensor_reduce(SHP_REDUCE_MEAN, m.x, axes, 1, true, &red));
  EXPECT_EQ(ShapeOf(red), "(1, 784)");
  const shp_tensor_t* v;
  OK(shp_tensor_dim_value(m.scope, n, &v));
  EXPECT_EQ(shp_tensor_dtype(v), SHP_I64);
  EXPECT_EQ(ShapeOf(v), "()");
  const shp_tensor_t* io;
  const shp_dim_t* io_dims[] = {n};
  OK(shp_tensor_iota(m.scope, SHP_I32, io_dims, 1, 0, &io));
  const shp_tensor_t* tk;
  OK(shp_tensor_take(m.w, io, 0, &tk));
  EXPECT_EQ(ShapeOf(tk), "(batch, 10)");
  float data[4] = {1, 2, 3, 4};
  int64_t cshape[] = {2, 2};
  const shp_tensor_t* k;
  OK(shp_tensor_constant(m.scope, SHP_F32, cshape, 2, data, sizeof data, &k));
  EXPECT_EQ(ShapeOf(k), "(2, 2)");
}

TEST(TensorApi, ErrorsLeaveOutParamsUntouched) {
  Mlp m;
  const shp_tensor_t* sentinel = reinterpret_cast<const shp_tensor_t*>(0x1);
  const shp_tensor_t* out = sentinel;
  shp_error_t* e = shp_tensor_matmul(m.w, m.x, &out);
  EXPECT_EQ(shp_error_code(e), SHP_INCONCLUSIVE);
  EXPECT_NE(std::string(shp_error_message(e)).find("matmul: cannot decide whether 10 == batch"),
            std::string::npos);
  shp_error_destroy(e);
  EXPECT_EQ(out, sentinel);
  EXPECT_EQ(Code(shp_tensor_binary(SHP_ADD, m.x, m.w, &out)), SHP_SHAPE_MISMATCH);
  EXPECT_EQ(Code(shp_tensor_unary(SHP_EXP, nullptr, &out)), SHP_INVALID_ARGUMENT);
  // Out-of-range enum values (and the -1 of shp_tensor_dtype(NULL)) are tested from C in
  // c_api_test.c: in C++ they are not valid values of the enum types.
  EXPECT_EQ(Code(shp_tensor_binary(SHP_ADD, m.x, m.x, nullptr)), SHP_INVALID_ARGUMENT);
  EXPECT_EQ(Code(shp_tensor_input(m.scope, "z", SHP_F32, "3 +", &out)), SHP_PARSE_ERROR);
  Mlp other;
  EXPECT_EQ(Code(shp_tensor_binary(SHP_ADD, m.b, other.b, &out)), SHP_SCOPE_MISMATCH);
  EXPECT_EQ(out, sentinel);
}

TEST(TensorApi, ScopeCheckMakesAnOpDecidable) {
  shp_scope_t* s;
  OK(shp_scope_create(nullptr, 0, &s));
  const shp_tensor_t *a, *b, *c;
  OK(shp_tensor_input(s, "a", SHP_F32, "n", &a));
  OK(shp_tensor_input(s, "b", SHP_F32, "m", &b));
  EXPECT_EQ(Code(shp_tensor_binary(SHP_MUL, a, b, &c)), SHP_INCONCLUSIVE);
  const shp_dim_t *n, *m;
  OK(shp_dim_variable(s, "n", &n));
  OK(shp_dim_variable(s, "m", &m));
  OK(shp_scope_check(s, n, SHP_CMP_EQ, m, "a and b have one length"));
  OK(shp_tensor_binary(SHP_MUL, a, b, &c));
  const shp_tensor_t* ins[] = {a, b};
  const char* names[] = {"c"};
  shp_program_t* p;
  OK(shp_program_create(s, ins, 2, &c, names, 1, &p));
  ASSERT_EQ(shp_program_assertion_count(p), 1u);
  EXPECT_STREQ(shp_program_assertion_message(p, 0), "a and b have one length");
  int64_t sa[] = {3}, sb[] = {4};
  const int64_t* shapes[] = {sa, sb};
  size_t ranks[] = {1, 1};
  const char* in_names[] = {"a", "b"};
  shp_bindings_t* bind = nullptr;
  std::string msg = Message(shp_program_check_shapes(p, in_names, shapes, ranks, 2, &bind));
  EXPECT_NE(msg.find("a and b have one length"), std::string::npos) << msg;
  EXPECT_EQ(bind, nullptr);
  shp_program_destroy(p);
  shp_scope_destroy(s);
}

TEST(ProgramApi, IntrospectionAndListing) {
  Mlp m;
  shp_program_t* p = m.Program();
  ASSERT_NE(p, nullptr);
  shp_scope_destroy(m.scope);  // the program is independent of its scope
  m.scope = nullptr;
  EXPECT_EQ(shp_program_input_count(p), 3u);
  EXPECT_STREQ(shp_program_input_name(p, 0), "x");
  EXPECT_EQ(shp_program_input_name(p, 3), nullptr);
  EXPECT_EQ(shp_program_input_dtype(p, 1), SHP_F32);
  EXPECT_EQ(shp_program_input_role(p, 2), SHP_INPUT_DATA);
  char buf[64];
  size_t len;
  OK(shp_program_input_shape_string(p, 0, buf, sizeof buf, &len));
  EXPECT_STREQ(buf, "(batch, 784)");
  EXPECT_EQ(Code(shp_program_input_shape_string(p, 5, buf, sizeof buf, &len)),
            SHP_INVALID_ARGUMENT);
  EXPECT_EQ(shp_program_output_count(p), 1u);
  EXPECT_STREQ(shp_program_output_name(p, 0), "probs");
  EXPECT_EQ(shp_program_output_dtype(p, 0), SHP_F32);
  OK(shp_program_output_shape_string(p, 0, buf, 4, &len));
  EXPECT_STREQ(buf, "(ba");
  EXPECT_EQ(len, std::string("(batch, 10)").size());
  EXPECT_EQ(shp_program_variable_count(p), 1u);
  EXPECT_STREQ(shp_program_variable_name(p, 0), "batch");
  EXPECT_EQ(shp_program_constraint_count(p), 0u);
  OK(shp_program_to_text(p, nullptr, 0, &len));
  std::string text(len + 1, '\0');
  OK(shp_program_to_text(p, &text[0], text.size(), &len));
  EXPECT_NE(
      text.find(
          "program(x: f32[batch, 784], w: f32[784, 10], b: f32[10]) -> (probs: f32[batch, 10])"),
      std::string::npos);
  shp_program_destroy(p);
  shp_program_destroy(nullptr);
}

TEST(ProgramApi, CheckShapesAndOutputShapes) {
  Mlp m;
  shp_program_t* p = m.Program();
  int64_t x[] = {8, 784}, w[] = {784, 10}, b[] = {10};
  const int64_t* shapes[] = {x, w, b};
  size_t ranks[] = {2, 2, 1};
  const char* names[] = {"x", "w", "b"};
  shp_bindings_t* bind = nullptr;
  OK(shp_program_check_shapes(p, names, shapes, ranks, 3, &bind));
  ASSERT_EQ(shp_bindings_count(bind), 1u);
  EXPECT_STREQ(shp_bindings_name(bind, 0), "batch");
  EXPECT_EQ(shp_bindings_value(bind, 0), 8);
  int64_t dims[4];
  size_t rank;
  OK(shp_program_output_shape(p, 0, bind, dims, 4, &rank));
  ASSERT_EQ(rank, 2u);
  EXPECT_EQ(dims[0], 8);
  EXPECT_EQ(dims[1], 10);
  shp_bindings_destroy(bind);
  x[1] = 785;
  shp_error_t* e = shp_program_check_shapes(p, names, shapes, ranks, 3, &bind);
  EXPECT_EQ(shp_error_code(e), SHP_SHAPE_MISMATCH);
  EXPECT_NE(std::string(shp_error_message(e))
                .find("input 'x': axis 1 is 785 but the program requires 784"),
            std::string::npos);
  shp_error_destroy(e);
  shp_program_destroy(p);
}

TEST(ProgramApi, DimensionInputs) {
  shp_scope_t* s;
  OK(shp_scope_create(nullptr, 0, &s));
  const shp_tensor_t *k, *io;
  OK(shp_tensor_dim_input(s, "k", &k));
  const shp_dim_t* kd;
  OK(shp_dim_variable(s, "k", &kd));
  OK(shp_tensor_iota(s, SHP_F32, &kd, 1, 0, &io));
  const char* names[] = {"range"};
  shp_program_t* p;
  // The iota's length is the variable k, which no listed input determines.
  EXPECT_EQ(Code(shp_program_create(s, nullptr, 0, &io, names, 1, &p)), SHP_UNSOLVABLE);
  const shp_tensor_t* other;
  OK(shp_tensor_input(s, "x", SHP_F32, "n", &other));
  OK(shp_tensor_iota(s, SHP_F32, &kd, 1, 0, &io));
  shp_error_t* e = shp_program_create(s, &other, 1, &io, names, 1, &p);
  EXPECT_EQ(shp_error_code(e), SHP_UNSOLVABLE);
  EXPECT_NE(std::string(shp_error_message(e)).find("'k'"), std::string::npos);
  shp_error_destroy(e);
  OK(shp_program_create(s, &k, 1, &io, names, 1, &p));
  EXPECT_EQ(shp_program_input_role(p, 0), SHP_INPUT_DIM);
  EXPECT_EQ(shp_program_input_dtype(p, 0), SHP_I64);
  int64_t value = 5;
  const int64_t* shapes[] = {&value};
  size_t ranks[] = {0};
  const char* in_names[] = {"k"};
  shp_bindings_t* bind;
  OK(shp_program_check_shapes(p, in_names, shapes, ranks, 1, &bind));
  int64_t dims[2];
  size_t rank;
  OK(shp_program_output_shape(p, 0, bind, dims, 2, &rank));
  EXPECT_EQ(rank, 1u);
  EXPECT_EQ(dims[0], 5);
  shp_bindings_destroy(bind);
  shp_program_destroy(p);
  shp_scope_destroy(s);
}

TEST(ProgramApi, SerializeLoadRoundTrip) {
  Mlp m;
  shp_program_t* p = m.Program();
  shp_buffer_t* buf;
  OK(shp_program_serialize(p, &buf));
  const char* bytes = static_cast<const char*>(shp_buffer_data(buf));
  std::string first(bytes, shp_buffer_size(buf));
  EXPECT_EQ(first.substr(4, 4), "SHP1");
  shp_program_t* q;
  OK(shp_program_load(first.data(), first.size(), &q));
  shp_buffer_t* again;
  OK(shp_program_serialize(q, &again));
  EXPECT_EQ(std::string(static_cast<const char*>(shp_buffer_data(again)), shp_buffer_size(again)),
            first);
  EXPECT_EQ(shp_program_schema_version(), 15);  // the newest version (scatter)
  shp_program_t* bad = reinterpret_cast<shp_program_t*>(0x1);
  EXPECT_EQ(Code(shp_program_load(first.data(), 10, &bad)), SHP_INVALID_PROGRAM);
  EXPECT_EQ(Code(shp_program_load(nullptr, 10, &bad)), SHP_INVALID_ARGUMENT);
  EXPECT_EQ(bad, reinterpret_cast<shp_program_t*>(0x1));
  shp_buffer_destroy(buf);
  shp_buffer_destroy(again);
  shp_buffer_destroy(nullptr);
  shp_program_destroy(p);
  shp_program_destroy(q);
}

// shp_program_load_with_options: the cap on the constants' inflated bytes, checked from the
// declared sizes (a file just at the cap loads, one byte less is refused naming the cap).
TEST(ProgramApi, LoadOptionsCapTheConstants) {
  shp_scope_t* s;
  OK(shp_scope_create(nullptr, 0, &s));
  const shp_tensor_t *x, *c, *y;
  OK(shp_tensor_input(s, "x", SHP_F32, "n, 1024", &x));
  std::vector<float> ones(1024, 1.0f);
  const int64_t shape[] = {1024};
  OK(shp_tensor_constant(s, SHP_F32, shape, 1, ones.data(), 4096, &c));
  OK(shp_tensor_binary(SHP_ADD, x, c, &y));
  const char* names[] = {"y"};
  shp_program_t* p;
  OK(shp_program_create(s, &x, 1, &y, names, 1, &p));
  shp_buffer_t* buf;
  OK(shp_program_serialize(p, &buf));
  const void* data = shp_buffer_data(buf);
  const size_t size = shp_buffer_size(buf);

  shp_load_options_t* o = reinterpret_cast<shp_load_options_t*>(0x1);
  EXPECT_EQ(Code(shp_load_options_create(nullptr)), SHP_INVALID_ARGUMENT);
  OK(shp_load_options_create(&o));
  EXPECT_EQ(Code(shp_load_options_set_max_bytes(nullptr, 1)), SHP_INVALID_ARGUMENT);
  shp_program_t* q = nullptr;
  OK(shp_program_load_with_options(data, size, o, &q));  // default: 1 GiB
  shp_program_destroy(q);
  OK(shp_program_load_with_options(data, size, nullptr, &q));  // NULL: the defaults
  shp_program_destroy(q);
  OK(shp_load_options_set_max_bytes(o, 4096));
  OK(shp_program_load_with_options(data, size, o, &q));
  EXPECT_EQ(shp_program_input_count(q), 1u);
  shp_program_destroy(q);
  OK(shp_load_options_set_max_bytes(o, 4095));
  shp_program_t* untouched = reinterpret_cast<shp_program_t*>(0x1);
  shp_error_t* e = shp_program_load_with_options(data, size, o, &untouched);
  EXPECT_EQ(shp_error_code(e), SHP_INVALID_PROGRAM);
  std::string m = Message(e);
  EXPECT_NE(m.find("max_bytes = 4095"), std::string::npos) << m;
  EXPECT_NE(m.find("shp_load_options_set_max_bytes"), std::string::npos) << m;
  EXPECT_EQ(untouched, reinterpret_cast<shp_program_t*>(0x1));
  EXPECT_EQ(Code(shp_program_load_with_options(nullptr, size, o, &q)), SHP_INVALID_ARGUMENT);
  EXPECT_EQ(Code(shp_program_load_with_options(data, size, o, nullptr)), SHP_INVALID_ARGUMENT);
  shp_load_options_destroy(o);
  shp_load_options_destroy(nullptr);
  shp_buffer_destroy(buf);
  shp_program_destroy(p);
  shp_scope_destroy(s);
}

// Regression: a file whose input name holds a NUL byte loaded, and the name read back
// truncated ("in") could not be bound. It is refused, naming the input.
TEST(ProgramApi, LoadRejectsNamesWithNul) {
  shp_scope_t* s;
  OK(shp_scope_create(nullptr, 0, &s));
  const shp_tensor_t *x, *y;
  OK(shp_tensor_input(s, "in_x", SHP_F32, "n", &x));
  OK(shp_tensor_unary(SHP_NEG, x, &y));
  const char* names[] = {"out_y"};
  shp_program_t* p;
  OK(shp_program_create(s, &x, 1, &y, names, 1, &p));
  shp_buffer_t* buf;
  OK(shp_program_serialize(p, &buf));
  std::string bytes(static_cast<const char*>(shp_buffer_data(buf)), shp_buffer_size(buf));
  size_t at = bytes.find("in_x");
  ASSERT_NE(at, std::string::npos);
  bytes[at + 2] = '\0';
  shp_program_t* q = nullptr;
  shp_error_t* e = shp_program_load(bytes.data(), bytes.size(), &q);
  EXPECT_EQ(shp_error_code(e), SHP_INVALID_PROGRAM);
  std::string m = Message(e);
  EXPECT_NE(m.find("input 0 has the name 'in\\x00x'"), std::string::npos) << m;
  EXPECT_EQ(q, nullptr);
  shp_program_destroy(q);
  shp_buffer_destroy(buf);
  shp_program_destroy(p);
  shp_scope_destroy(s);
}

TEST(ProgramApi, ConstProgramIsSharedAcrossThreads) {
  Mlp m;
  shp_program_t* p = m.Program();
  std::vector<std::thread> threads;
  std::vector<int> good(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 1; i <= 100; ++i) {
        int64_t x[] = {i, 784}, w[] = {784, 10}, b[] = {10};
        const int64_t* shapes[] = {x, w, b};
        size_t ranks[] = {2, 2, 1};
        const char* names[] = {"x", "w", "b"};
        shp_bindings_t* bind = nullptr;
        shp_error_t* e = shp_program_check_shapes(p, names, shapes, ranks, 3, &bind);
        shp_buffer_t* buf = nullptr;
        shp_error_t* e2 = shp_program_serialize(p, &buf);
        if (!e && !e2 && shp_bindings_value(bind, 0) == i) ++good[t];
        shp_error_destroy(e);
        shp_error_destroy(e2);
        shp_bindings_destroy(bind);
        shp_buffer_destroy(buf);
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(good[t], 100);
  shp_program_destroy(p);
}

}  // namespace

namespace {

// shp_program_save_file / shp_program_load_file, and their errors naming the path and the OS
// reason.
TEST(ProgramApi, SaveAndLoadFiles) {
  Mlp m;
  shp_program_t* p = m.Program();
  char dir_template[] = "/tmp/shapepoly_files_XXXXXX";
  ASSERT_NE(nullptr, mkdtemp(dir_template));
  const std::string dir = dir_template;
  const std::string path = dir + "/mlp.shpoly";
  OK(shp_program_save_file(p, path.c_str()));
  OK(shp_program_save_file(p, path.c_str()));  // replaces it
  shp_program_t* q = nullptr;
  OK(shp_program_load_file(path.c_str(), &q));
  EXPECT_EQ(3u, shp_program_input_count(q));
  shp_program_destroy(q);
  EXPECT_NE(0, access((path + ".tmp").c_str(), F_OK));  // no temporary left behind
  shp_error_t* e = shp_program_load_file((dir + "/none.shpoly").c_str(), &q);
  EXPECT_EQ(SHP_NOT_FOUND, shp_error_code(e));
  EXPECT_NE(std::string::npos, std::string(shp_error_message(e)).find("none.shpoly': No such file"))
      << shp_error_message(e);
  shp_error_destroy(e);
  e = shp_program_save_file(p, (dir + "/missing/dir/m.shpoly").c_str());
  EXPECT_EQ(SHP_NOT_FOUND, shp_error_code(e));
  EXPECT_NE(std::string::npos,
            std::string(shp_error_message(e))
                .find("cannot write '" + dir + "/missing/dir/m.shpoly': No such"))
      << shp_error_message(e);
  shp_error_destroy(e);
  const std::string junk = dir + "/junk.shpoly";
  FILE* f = fopen(junk.c_str(), "wb");
  fputs("not a program at all", f);
  fclose(f);
  e = shp_program_load_file(junk.c_str(), &q);
  EXPECT_EQ(SHP_INVALID_PROGRAM, shp_error_code(e));
  EXPECT_EQ(0u, std::string(shp_error_message(e)).find("'" + junk + "': ")) << shp_error_message(e);
  shp_error_destroy(e);
  e = shp_program_load_file(dir.c_str(), &q);  // a folder
  EXPECT_NE(SHP_OK, shp_error_code(e));
  shp_error_destroy(e);
  EXPECT_EQ(SHP_INVALID_ARGUMENT, Code(shp_program_load_file(nullptr, &q)));
  EXPECT_EQ(SHP_INVALID_ARGUMENT, Code(shp_program_save_file(p, nullptr)));
  remove(path.c_str());
  remove(junk.c_str());
  rmdir(dir.c_str());
  shp_program_destroy(p);
}

}  // namespace

namespace {

// The runtime's messages: a run without names names the missing inputs, and a range violation
// leads with the input and axis.
TEST(ProgramApi, RunMessagesNameInputsAndAxes) {
  Mlp m;
  shp_program_t* p = m.Program();
  shp_runtime_t* rt = nullptr;
  OK(shp_runtime_create(p, nullptr, &rt));
  shp_array_t* out = nullptr;
  shp_error_t* e = shp_runtime_run(rt, nullptr, nullptr, 0, &out, 1);
  ASSERT_EQ(SHP_INVALID_ARGUMENT, shp_error_code(e));
  EXPECT_EQ(0u, std::string(shp_error_message(e)).find("inputs 'x', 'w', 'b' are missing"))
      << shp_error_message(e);
  shp_error_destroy(e);
  const int64_t xs[] = {0, 784}, ws[] = {784, 10}, bs[] = {10};
  shp_array_t *x, *w, *b;
  OK(shp_array_create(SHP_F32, xs, 2, &x));
  OK(shp_array_create(SHP_F32, ws, 2, &w));
  OK(shp_array_create(SHP_F32, bs, 1, &b));
  const shp_array_t* one[] = {x};
  e = shp_runtime_run(rt, nullptr, one, 1, &out, 1);
  EXPECT_EQ(0u, std::string(shp_error_message(e)).find("inputs 'w', 'b' are missing"))
      << shp_error_message(e);
  shp_error_destroy(e);
  const char* names[] = {"x", "w", "b"};
  const shp_array_t* all[] = {x, w, b};
  e = shp_runtime_run(rt, names, all, 3, &out, 1);
  ASSERT_EQ(SHP_CONSTRAINT_VIOLATION, shp_error_code(e));
  EXPECT_EQ(0u, std::string(shp_error_message(e))
                    .find("input 'x': axis 0 is 0 but batch must be >= 1. Expected value >= 1 "
                          "for dimension variable 'batch', but found 0."))
      << shp_error_message(e);
  shp_error_destroy(e);
  for (shp_array_t* a : {x, w, b}) shp_array_destroy(a);
  shp_runtime_destroy(rt);
  shp_program_destroy(p);
}

}  // namespace
