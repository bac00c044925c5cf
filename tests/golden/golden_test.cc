// Every golden program (tests/golden/*.shpoly, written by released schema versions) loads
// through the C API and serializes back to exactly the same bytes.
#include <dirent.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "shapepoly/shapepoly.h"

namespace {

const char kDir[] = "tests/golden";

std::vector<std::string> GoldenFiles() {
  std::vector<std::string> out;
  DIR* d = opendir(kDir);
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n.size() > 7 && n.compare(n.size() - 7, 7, ".shpoly") == 0) out.push_back(n);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

std::string Read(const std::string& name) {
  std::ifstream in(std::string(kDir) + "/" + name, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

shp_program_t* Load(const std::string& bytes) {
  shp_program_t* p = nullptr;
  shp_error_t* e = shp_program_load(bytes.data(), bytes.size(), &p);
  EXPECT_EQ(e, nullptr) << shp_error_message(e);
  shp_error_destroy(e);
  return p;
}

std::string Text(const shp_program_t* p) {
  size_t len = 0;
  shp_error_destroy(shp_program_to_text(p, nullptr, 0, &len));
  std::string t(len + 1, '\0');
  shp_error_destroy(shp_program_to_text(p, &t[0], t.size(), &len));
  t.resize(len);
  return t;
}

TEST(Golden, EveryFileLoadsAndRoundTripsByteIdentically) {
  std::vector<std::string> files = GoldenFiles();
  ASSERT_GE(files.size(), 7u);
  for (const std::string& f : files) {
    SCOPED_TRACE(f);
    std::string bytes = Read(f);
    shp_program_t* p = Load(bytes);
    ASSERT_NE(p, nullptr);
    shp_buffer_t* b = nullptr;
    ASSERT_EQ(shp_program_serialize(p, &b), nullptr);
    EXPECT_EQ(std::string(static_cast<const char*>(shp_buffer_data(b)), shp_buffer_size(b)), bytes);
    shp_buffer_destroy(b);
    shp_program_destroy(p);
  }
}

TEST(Golden, MlpSignature) {
  shp_program_t* p = Load(Read("mlp_v1.shpoly"));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(Text(p).substr(0, 54), "program(x: f32[batch, 784]) -> (probs: f32[batch, 10])");
  int64_t x[] = {3, 784};
  const int64_t* shapes[] = {x};
  size_t ranks[] = {2};
  const char* names[] = {"x"};
  shp_bindings_t* bind = nullptr;
  ASSERT_EQ(shp_program_check_shapes(p, names, shapes, ranks, 1, &bind), nullptr);
  EXPECT_EQ(shp_bindings_value(bind, 0), 3);
  shp_bindings_destroy(bind);
  shp_program_destroy(p);
}

TEST(Golden, ConstraintsAndAssertions) {
  shp_program_t* p = Load(Read("constraints_v1.shpoly"));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(shp_program_constraint_count(p), 3u);
  ASSERT_EQ(shp_program_assertion_count(p), 2u);
  EXPECT_STREQ(shp_program_assertion_text(p, 0), "mod(n, 2) == 0");
  EXPECT_STREQ(shp_program_assertion_message(p, 1), "y must not be longer than x");
  EXPECT_EQ(shp_program_input_role(p, 3), SHP_INPUT_DIM);
  int64_t x[] = {6, 3}, y[] = {6, 3}, pad[] = {2}, k = 4;
  const int64_t* shapes[] = {x, y, pad, &k};
  size_t ranks[] = {2, 2, 1, 0};
  const char* names[] = {"x", "y", "pad", "k"};
  shp_bindings_t* bind = nullptr;
  ASSERT_EQ(shp_program_check_shapes(p, names, shapes, ranks, 4, &bind), nullptr);
  shp_bindings_destroy(bind);
  x[0] = 7;  // odd: violates the reshape assertion (and m <= n holds)
  y[0] = 7;
  shp_error_t* e = shp_program_check_shapes(p, names, shapes, ranks, 4, &bind);
  EXPECT_EQ(shp_error_code(e), SHP_CONSTRAINT_VIOLATION);
  EXPECT_NE(std::string(shp_error_message(e)).find("must be divisible by 2"), std::string::npos)
      << shp_error_message(e);
  shp_error_destroy(e);
  shp_program_destroy(p);
}

TEST(Golden, OnePerDtype) {
  const char* files[] = {"dtype_f32_v1.shpoly", "dtype_f64_v1.shpoly", "dtype_i32_v1.shpoly", "dtype_i64_v1.shpoly",
                         "dtype_bool_v1.shpoly"};
  for (int d = 0; d < 5; ++d) {
    shp_program_t* p = Load(Read(files[d]));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(shp_program_input_dtype(p, 0), static_cast<shp_dtype_t>(d));
    shp_program_destroy(p);
  }
}

}  // namespace
