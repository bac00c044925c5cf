// Program metadata through the C API (the shipped shared library): set, read, saved and loaded,
// kept by the transformations, and the argument errors.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

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

// y = sum(tanh(x) * w) over a symbolic batch.
struct Prog {
  shp_scope_t* scope = nullptr;
  shp_program_t* program = nullptr;
  Prog() {
    EXPECT_EQ(shp_scope_create(nullptr, 0, &scope), nullptr);
    const shp_tensor_t *x, *w, *t, *m, *y;
    EXPECT_EQ(shp_tensor_input(scope, "x", SHP_F32, "batch, 4", &x), nullptr);
    EXPECT_EQ(shp_tensor_input(scope, "w", SHP_F32, "4", &w), nullptr);
    EXPECT_EQ(shp_tensor_unary(SHP_TANH, x, &t), nullptr);
    EXPECT_EQ(shp_tensor_binary(SHP_MUL, t, w, &m), nullptr);
    EXPECT_EQ(shp_tensor_reduce(SHP_REDUCE_SUM, m, nullptr, 0, false, &y), nullptr);
    const shp_tensor_t* ins[] = {x, w};
    const shp_tensor_t* outs[] = {y};
    const char* names[] = {"y"};
    EXPECT_EQ(shp_program_create(scope, ins, 2, outs, names, 1, &program), nullptr);
  }
  ~Prog() {
    shp_program_destroy(program);
    shp_scope_destroy(scope);
  }
};

std::string Bytes(const shp_program_t* p) {
  shp_buffer_t* buf = nullptr;
  EXPECT_EQ(shp_program_serialize(p, &buf), nullptr);
  std::string out(static_cast<const char*>(shp_buffer_data(buf)), shp_buffer_size(buf));
  shp_buffer_destroy(buf);
  return out;
}

std::string Value(const shp_program_t* p, const char* key) {
  const char* v = shp_program_metadata_value(p, key);
  return v ? v : "<absent>";
}

TEST(MetadataApi, SetReadSaveLoad) {
  Prog g;
  EXPECT_EQ(shp_program_metadata_count(g.program), 0u);
  EXPECT_EQ(shp_program_metadata_key(g.program, 0), nullptr);
  EXPECT_EQ(shp_program_metadata_value(g.program, "onnx.names"), nullptr);
  shp_program_t *a, *ab, *ba, *b;
  OK(shp_program_with_metadata(g.program, "onnx.names", "{\"inputs\": {}}", &a));
  OK(shp_program_with_metadata(a, "author", "\xc3\xa9t\xc3\xa9", &ab));
  OK(shp_program_with_metadata(g.program, "author", "\xc3\xa9t\xc3\xa9", &b));
  OK(shp_program_with_metadata(b, "onnx.names", "{\"inputs\": {}}", &ba));
  EXPECT_EQ(shp_program_metadata_count(g.program), 0u);  // programs are immutable
  ASSERT_EQ(shp_program_metadata_count(ab), 2u);
  EXPECT_STREQ(shp_program_metadata_key(ab, 0), "author");  // increasing key order
  EXPECT_STREQ(shp_program_metadata_key(ab, 1), "onnx.names");
  EXPECT_EQ(shp_program_metadata_key(ab, 2), nullptr);
  EXPECT_EQ(Value(ab, "onnx.names"), "{\"inputs\": {}}");
  EXPECT_EQ(Value(ab, "author"), "\xc3\xa9t\xc3\xa9");
  EXPECT_EQ(Value(ab, "onnx"), "<absent>");
  const std::string bytes = Bytes(ab);
  EXPECT_EQ(bytes, Bytes(ba));  // canonical: the order of the calls does not matter
  shp_program_t* loaded;
  OK(shp_program_load(bytes.data(), bytes.size(), &loaded));
  ASSERT_EQ(shp_program_metadata_count(loaded), 2u);
  EXPECT_EQ(Value(loaded, "author"), "\xc3\xa9t\xc3\xa9");
  EXPECT_EQ(Bytes(loaded), bytes);
  // Replace, then remove both keys: the program without metadata, the same bytes as before.
  shp_program_t *replaced, *one, *none;
  OK(shp_program_with_metadata(loaded, "author", "", &replaced));
  EXPECT_EQ(Value(replaced, "author"), "");
  OK(shp_program_with_metadata(replaced, "author", nullptr, &one));
  EXPECT_EQ(shp_program_metadata_count(one), 1u);
  OK(shp_program_with_metadata(one, "onnx.names", nullptr, &none));
  EXPECT_EQ(shp_program_metadata_count(none), 0u);
  EXPECT_EQ(Bytes(none), Bytes(g.program));
  EXPECT_GE(shp_program_schema_version(), 14);  // metadata is version 14
  for (shp_program_t* p : {a, ab, ba, b, loaded, replaced, one, none}) shp_program_destroy(p);
  // NULL programs.
  EXPECT_EQ(shp_program_metadata_count(nullptr), 0u);
  EXPECT_EQ(shp_program_metadata_key(nullptr, 0), nullptr);
  EXPECT_EQ(shp_program_metadata_value(nullptr, "k"), nullptr);
  EXPECT_EQ(shp_program_metadata_value(g.program, nullptr), nullptr);
}

TEST(MetadataApi, TransformationsKeepIt) {
  Prog g;
  shp_program_t* p;
  OK(shp_program_with_metadata(g.program, "k", "v", &p));
  const char* x[] = {"x"};
  const char* y[] = {"y"};
  shp_program_t *jvp, *vjp, *grad, *vmap, *variants;
  OK(shp_program_jvp(p, x, 1, &jvp));
  OK(shp_program_vjp(p, y, 1, x, 1, &vjp));
  OK(shp_program_grad(p, "y", x, 1, &grad));
  const int64_t in_axes[] = {0, -1};
  OK(shp_program_vmap(p, in_axes, 2, nullptr, 0, nullptr, &vmap));
  const shp_program_t* list[] = {p, g.program};
  OK(shp_program_create_variants(list, 2, &variants));
  for (shp_program_t* q : {jvp, vjp, grad, vmap, variants}) {
    EXPECT_EQ(shp_program_metadata_count(q), 1u);
    EXPECT_EQ(Value(q, "k"), "v");
    const std::string bytes = Bytes(q);
    shp_program_t* back;
    OK(shp_program_load(bytes.data(), bytes.size(), &back));
    EXPECT_EQ(Value(back, "k"), "v");
    shp_program_destroy(back);
    shp_program_destroy(q);
  }
  // create_variants keeps the first variant's metadata (here: none).
  const shp_program_t* other[] = {g.program, p};
  OK(shp_program_create_variants(other, 2, &variants));
  EXPECT_EQ(shp_program_metadata_count(variants), 0u);
  shp_program_destroy(variants);
  shp_program_destroy(p);
}

TEST(MetadataApi, ErrorsNameTheArgumentAndTheLimit) {
  Prog g;
  shp_program_t* out = reinterpret_cast<shp_program_t*>(0x1);
  EXPECT_EQ(Code(shp_program_with_metadata(nullptr, "k", "v", &out)), SHP_INVALID_ARGUMENT);
  std::string m = Message(shp_program_with_metadata(g.program, nullptr, "v", &out));
  EXPECT_NE(m.find("key"), std::string::npos) << m;
  m = Message(shp_program_with_metadata(g.program, "k", "v", nullptr));
  EXPECT_NE(m.find("program_out"), std::string::npos) << m;
  m = Message(shp_program_with_metadata(g.program, "", "v", &out));
  EXPECT_NE(m.find("key must not be empty"), std::string::npos) << m;
  const std::string long_key(257, 'k');
  shp_error_t* e = shp_program_with_metadata(g.program, long_key.c_str(), "v", &out);
  EXPECT_EQ(shp_error_code(e), SHP_INVALID_ARGUMENT);
  m = Message(e);
  EXPECT_NE(m.find("257 bytes, above the limit of 256"), std::string::npos) << m;
  m = Message(shp_program_with_metadata(g.program, "a\nb", "v", &out));
  EXPECT_NE(m.find("control character 10"), std::string::npos) << m;
  const std::string big((size_t{1} << 20) + 1, 'v');
  m = Message(shp_program_with_metadata(g.program, "k", big.c_str(), &out));
  EXPECT_NE(m.find("value of metadata key 'k' has 1048577 bytes, above the limit of 1048576"),
            std::string::npos)
      << m;
  m = Message(shp_program_with_metadata(g.program, "k", "\xff", &out));
  EXPECT_NE(m.find("not UTF-8"), std::string::npos) << m;
  EXPECT_EQ(out, reinterpret_cast<shp_program_t*>(0x1));  // untouched on errors
  // The 1025th entry.
  shp_program_t* p = nullptr;
  OK(shp_program_with_metadata(g.program, "k0", "v", &p));
  for (int i = 1; i < 1024; ++i) {
    shp_program_t* q = nullptr;
    OK(shp_program_with_metadata(p, ("k" + std::to_string(i)).c_str(), "v", &q));
    shp_program_destroy(p);
    p = q;
  }
  EXPECT_EQ(shp_program_metadata_count(p), 1024u);
  m = Message(shp_program_with_metadata(p, "z", "v", &out));
  EXPECT_NE(m.find("1024 metadata entries, the limit"), std::string::npos) << m;
  shp_program_destroy(p);
}

}  // namespace
