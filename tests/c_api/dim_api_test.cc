// The dim engine's C API through the shipped shared library: results, NULL safety,
// untouched out-params on error, snprintf-style strings, error codes and messages.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "shapepoly/shapepoly.h"

namespace {

// Returns the code of `err` and destroys it.
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

struct Scope {
  explicit Scope(std::initializer_list<const char*> constraints = {}) {
    std::vector<const char*> c(constraints);
    EXPECT_EQ(shp_scope_create(c.data(), c.size(), &s), nullptr);
  }
  ~Scope() { shp_scope_destroy(s); }
  const shp_dim_t* Dim(const char* text) {
    const shp_dim_t* d = nullptr;
    EXPECT_EQ(shp_dim_parse(s, text, &d), nullptr) << text;
    return d;
  }
  std::string Str(const shp_dim_t* d) {
    char buf[256];
    size_t len = 0;
    EXPECT_EQ(shp_dim_to_string(d, buf, sizeof buf, &len), nullptr);
    return buf;
  }
  shp_scope_t* s = nullptr;
};

TEST(DimApi, ArithmeticIsInterned) {
  Scope sc;
  const shp_dim_t *a = sc.Dim("a"), *b = sc.Dim("b"), *r = nullptr;
  ASSERT_EQ(shp_dim_add(a, b, &r), nullptr);
  EXPECT_EQ(r, sc.Dim("b + a"));
  ASSERT_EQ(shp_dim_mul(r, r, &r), nullptr);
  EXPECT_EQ(sc.Str(r), "a^2 + 2*a*b + b^2");
  ASSERT_EQ(shp_dim_sub(r, r, &r), nullptr);
  int64_t v = -1;
  EXPECT_TRUE(shp_dim_is_constant(r, &v));
  EXPECT_EQ(v, 0);
  ASSERT_EQ(shp_dim_floordiv(sc.Dim("3*a + 3"), sc.Dim("3"), &r), nullptr);
  EXPECT_EQ(sc.Str(r), "a + 1");
  ASSERT_EQ(shp_dim_mod(sc.Dim("6*a"), sc.Dim("3"), &r), nullptr);
  EXPECT_EQ(sc.Str(r), "0");
  ASSERT_EQ(shp_dim_max(a, sc.Dim("a + 1"), &r), nullptr);
  EXPECT_EQ(sc.Str(r), "a + 1");
  ASSERT_EQ(shp_dim_min(a, b, &r), nullptr);
  EXPECT_EQ(sc.Str(r), "min(a, b)");
  ASSERT_EQ(shp_dim_neg(a, &r), nullptr);
  EXPECT_EQ(sc.Str(r), "-a");
  ASSERT_EQ(shp_dim_pow(a, 3, &r), nullptr);
  EXPECT_EQ(sc.Str(r), "a^3");
  ASSERT_EQ(shp_dim_variable(sc.s, "zz", &r), nullptr);
  EXPECT_EQ(sc.Str(r), "zz");
  const char* names[4] = {};
  size_t count = 0;
  ASSERT_EQ(shp_dim_variables(sc.Dim("floordiv(b, 2) + a*3 + max(zz, 4)"), names, 4, &count),
            nullptr);
  ASSERT_EQ(count, 3u);  // in order of first mention: a, b, zz
  EXPECT_STREQ(names[0], "a");
  EXPECT_STREQ(names[1], "b");
  EXPECT_STREQ(names[2], "zz");
  ASSERT_EQ(shp_dim_variables(sc.Dim("7"), nullptr, 0, &count), nullptr);
  EXPECT_EQ(count, 0u);
}

TEST(DimApi, ToStringTruncatesSafely) {
  Scope sc;
  const shp_dim_t* d = sc.Dim("2*batch + 1");
  char buf[6] = {'x', 'x', 'x', 'x', 'x', 'x'};
  size_t len = 0;
  ASSERT_EQ(shp_dim_to_string(d, buf, 5, &len), nullptr);
  EXPECT_EQ(len, 11u);
  EXPECT_STREQ(buf, "2*ba");
  EXPECT_EQ(buf[5], 'x');
  ASSERT_EQ(shp_dim_to_string(d, nullptr, 0, &len), nullptr);
  EXPECT_EQ(len, 11u);
  // NULL buf with cap > 0 is a size query too, as the header's conventions say (issue 17).
  len = 0;
  ASSERT_EQ(shp_dim_to_string(d, nullptr, 4, &len), nullptr);
  EXPECT_EQ(len, 11u);
}

TEST(DimApi, NullSafetyAndUntouchedOutParams) {
  Scope sc;
  const shp_dim_t* sentinel = reinterpret_cast<const shp_dim_t*>(0x1);
  const shp_dim_t* out = sentinel;
  EXPECT_EQ(Code(shp_dim_parse(nullptr, "a", &out)), SHP_INVALID_ARGUMENT);
  EXPECT_EQ(Code(shp_dim_parse(sc.s, nullptr, &out)), SHP_INVALID_ARGUMENT);
  EXPECT_EQ(Code(shp_dim_parse(sc.s, "a", nullptr)), SHP_INVALID_ARGUMENT);
  EXPECT_EQ(Code(shp_dim_add(nullptr, sc.Dim("a"), &out)), SHP_INVALID_ARGUMENT);
  EXPECT_EQ(Code(shp_dim_parse(sc.s, "a +", &out)), SHP_PARSE_ERROR);
  EXPECT_EQ(out, sentinel);
  int64_t lo = 7, hi = 7;
  EXPECT_EQ(Code(shp_dim_bounds(nullptr, &lo, &hi)), SHP_INVALID_ARGUMENT);
  EXPECT_EQ(lo, 7);
  // Out-of-range enum values are tested from C (c_api_test.c): in C++ they are not valid values.
  EXPECT_EQ(Code(shp_scope_create(nullptr, 1, nullptr)), SHP_INVALID_ARGUMENT);
  shp_scope_t* s = nullptr;
  const char* bad[] = {"a >= 1", nullptr};
  EXPECT_EQ(Code(shp_scope_create(bad, 2, &s)), SHP_INVALID_ARGUMENT);
  EXPECT_EQ(s, nullptr);
  EXPECT_EQ(shp_scope_variable_count(nullptr), 0u);
  EXPECT_EQ(shp_scope_variable_name(sc.s, 99), nullptr);
  EXPECT_FALSE(shp_dim_is_constant(nullptr, nullptr));
  shp_scope_destroy(nullptr);
  shp_bindings_destroy(nullptr);
  EXPECT_EQ(shp_bindings_count(nullptr), 0u);
  // The scope stays usable after every error.
  EXPECT_EQ(sc.Str(sc.Dim("a + a")), "2*a");
}

TEST(DimApi, CompareBoundsEvaluate) {
  Scope sc({"a >= b + 8", "b >= c + 2"});
  shp_truth_t t;
  ASSERT_EQ(shp_dim_compare(sc.Dim("a"), SHP_CMP_GE, sc.Dim("11"), &t), nullptr);
  EXPECT_EQ(t, SHP_TRUE);
  ASSERT_EQ(shp_dim_compare(sc.Dim("b"), SHP_CMP_EQ, sc.Dim("1"), &t), nullptr);
  EXPECT_EQ(t, SHP_FALSE);
  ASSERT_EQ(shp_dim_compare(sc.Dim("c"), SHP_CMP_EQ, sc.Dim("1"), &t), nullptr);
  EXPECT_EQ(t, SHP_UNKNOWN);
  int64_t lo, hi;
  ASSERT_EQ(shp_dim_bounds(sc.Dim("a - c"), &lo, &hi), nullptr);
  EXPECT_EQ(lo, 10);
  EXPECT_EQ(hi, INT64_MAX);
  const char* names[] = {"a", "b"};
  int64_t values[] = {20, 3};
  int64_t v = 0;
  ASSERT_EQ(shp_dim_evaluate(sc.Dim("floordiv(a, b) + mod(a, b)"), names, values, 2, &v), nullptr);
  EXPECT_EQ(v, 6 + 2);
  EXPECT_EQ(Code(shp_dim_evaluate(sc.Dim("a + c"), names, values, 2, &v)), SHP_INVALID_ARGUMENT);
  const char* unknown[] = {"zz"};
  EXPECT_EQ(Code(shp_dim_evaluate(sc.Dim("a"), unknown, values, 1, &v)), SHP_NOT_FOUND);
  int64_t zero[] = {0};
  EXPECT_EQ(Code(shp_dim_evaluate(sc.Dim("a"), names, zero, 1, &v)), SHP_INVALID_ARGUMENT);
}

TEST(DimApi, ErrorsCarryPreciseMessages) {
  Scope sc;
  const shp_dim_t* d = nullptr;
  EXPECT_EQ(Message(shp_dim_parse(sc.s, "2*(a, b", &d)),
            "syntax error in symbolic dimension '2*(a, b' at column 4: expected ')' but found ','");
  size_t rank = 0;
  EXPECT_EQ(Message(shp_shape_parse(sc.s, "2*(a, b", nullptr, 0, nullptr, 0, &rank)),
            "syntax error in symbolic shape '2*(a, b' in dimension 0 at column 4: expected ')' but "
            "found ','");
  EXPECT_EQ(Code(shp_dim_parse(sc.s, "floordiv(a, b - b)", &d)), SHP_DIVISION_BY_ZERO);
  // A divisor that may be 0 is accepted; evaluating where it is 0 is SHP_DIVISION_BY_ZERO.
  ASSERT_EQ(Code(shp_dim_parse(sc.s, "floordiv(a, b - 1)", &d)), SHP_OK);
  {
    const char* names[] = {"a", "b"};
    int64_t vals[] = {7, 3}, v = 0;
    EXPECT_EQ(Code(shp_dim_evaluate(d, names, vals, 2, &v)), SHP_OK);
    EXPECT_EQ(v, 3);
    vals[1] = 1;
    EXPECT_EQ(Code(shp_dim_evaluate(d, names, vals, 2, &v)), SHP_DIVISION_BY_ZERO);
  }
  EXPECT_EQ(Code(shp_dim_parse(sc.s, "9223372036854775807 + 1", &d)), SHP_OVERFLOW);
  shp_scope_t* s = nullptr;
  const char* unsat[] = {"a >= b + 1", "b >= a"};
  shp_error_t* err = shp_scope_create(unsat, 2, &s);
  EXPECT_EQ(shp_error_code(err), SHP_UNSATISFIABLE);
  EXPECT_NE(std::string(shp_error_message(err)).find("a >= b + 1, b >= a"), std::string::npos);
  shp_error_destroy(err);
  Scope other({"q >= 3"});
  err = shp_dim_add(sc.Dim("a"), other.Dim("q"), &d);
  EXPECT_EQ(shp_error_code(err), SHP_SCOPE_MISMATCH);
  EXPECT_NE(std::string(shp_error_message(err)).find("{q >= 3}"), std::string::npos);
  shp_error_destroy(err);
}

// Issue 17, finding 6: what the builders make prints as text that parses back.
TEST(DimApi, PrintedDimsParseBack) {
  Scope sc;
  auto round_trip = [&](const shp_dim_t* d) {
    size_t len = 0;
    EXPECT_EQ(shp_dim_to_string(d, nullptr, 0, &len), nullptr);
    std::string text(len + 1, '\0');
    EXPECT_EQ(shp_dim_to_string(d, &text[0], text.size(), &len), nullptr);
    text.resize(len);
    const shp_dim_t* back = nullptr;
    shp_error_t* err = shp_dim_parse(sc.s, text.c_str(), &back);
    EXPECT_EQ(err, nullptr) << text.substr(0, 200) << ": " << shp_error_message(err);
    shp_error_destroy(err);
    EXPECT_EQ(back, d) << text.substr(0, 200);
  };
  const shp_dim_t *k = nullptr, *d = nullptr;
  ASSERT_EQ(shp_dim_constant(sc.s, INT64_MIN, &k), nullptr);
  round_trip(k);
  ASSERT_EQ(shp_dim_mul(k, sc.Dim("a"), &d), nullptr);
  round_trip(d);
  ASSERT_EQ(shp_dim_add(sc.Dim("a^2"), d, &d), nullptr);  // a^2 - 9223372036854775808*a
  round_trip(d);
  ASSERT_EQ(shp_dim_min(sc.Dim("-a"), k, &d), nullptr);
  round_trip(d);
  // 1000 nested levels (the documented limit) print and parse back; one more is refused.
  // A max chain: a floordiv chain re-runs the builder's simplification proofs at each level
  // (~30 s under the sanitizers); round_trip_test builds each kind of atom 1000 deep.
  const shp_dim_t* e = sc.Dim("a");
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(shp_dim_sub(e, sc.Dim("c"), &e), nullptr);
    ASSERT_EQ(shp_dim_max(e, sc.Dim("b"), &e), nullptr);
  }
  round_trip(e);
  ASSERT_EQ(shp_dim_sub(e, sc.Dim("c"), &e), nullptr);
  shp_error_t* err = shp_dim_max(e, sc.Dim("b"), &d);
  EXPECT_EQ(shp_error_code(err), SHP_UNSUPPORTED);
  EXPECT_NE(std::string(shp_error_message(err)).find("nested too deeply (more than 1000"),
            std::string::npos);
  shp_error_destroy(err);
  // 100k-deep text is a parse error, not a stack overflow.
  std::string deep = std::string(100000, '(') + "a" + std::string(100000, ')');
  EXPECT_EQ(Code(shp_dim_parse(sc.s, deep.c_str(), &d)), SHP_PARSE_ERROR);
}

// Issue 17, finding 7: messages quote a bounded, escaped excerpt of the input.
TEST(DimApi, MessagesQuoteLongAndBinaryInputSafely) {
  Scope sc;
  const shp_dim_t* d = nullptr;
  std::string text = std::string(500000, 'a') + " $ " + std::string(500000, 'b');
  std::string m = Message(shp_dim_parse(sc.s, text.c_str(), &d));
  EXPECT_LT(m.size(), 400u);
  EXPECT_NE(m.find("'...aaaa"), std::string::npos) << m;
  EXPECT_NE(m.find("aaaa $ bbbb"), std::string::npos) << m;
  EXPECT_NE(m.find("bbbb...'"), std::string::npos) << m;
  EXPECT_NE(m.find("at column 500001"), std::string::npos) << m;
  m = Message(shp_dim_parse(sc.s, "a \x07 \xff b", &d));
  EXPECT_NE(m.find("'a \\x07 \\xff b'"), std::string::npos) << m;
  EXPECT_NE(m.find("found '\\x07'"), std::string::npos) << m;
  m = Message(shp_dim_variable(sc.s, "x\x1b[2J", &d));
  EXPECT_NE(m.find("'x\\x1b[2J'"), std::string::npos) << m;
  // A linear solve below the variable's range is a range violation.
  const char* specs[] = {"10 - a"};
  const int64_t twelve[] = {12};
  const int64_t* shapes[] = {twelve};
  const size_t ranks[] = {1};
  shp_bindings_t* b = nullptr;
  shp_error_t* err = shp_scope_solve(sc.s, 1, specs, shapes, ranks, &b);
  EXPECT_EQ(shp_error_code(err), SHP_CONSTRAINT_VIOLATION);
  m = shp_error_message(err);
  shp_error_destroy(err);
  EXPECT_NE(m.find("Expected value >= 1 for dimension variable 'a', but found -2."),
            std::string::npos)
      << m;
  EXPECT_EQ(m.find("perfect"), std::string::npos) << m;
}

TEST(DimApi, ShapesAndSolve) {
  Scope sc;
  const int64_t like[] = {3, 4, 5};
  const shp_dim_t* dims[4] = {};
  size_t rank = 0;
  ASSERT_EQ(shp_shape_parse(sc.s, "(_, b, ...)", like, 3, dims, 4, &rank), nullptr);
  EXPECT_EQ(rank, 3u);
  EXPECT_EQ(sc.Str(dims[0]), "3");
  EXPECT_EQ(sc.Str(dims[1]), "b");
  ASSERT_EQ(shp_shape_parse(sc.s, "a, b, c, d, e", nullptr, 0, dims, 2, &rank), nullptr);
  EXPECT_EQ(rank, 5u);  // only 2 written
  ASSERT_EQ(shp_shape_parse(sc.s, "()", nullptr, 0, nullptr, 0, &rank), nullptr);
  EXPECT_EQ(rank, 0u);

  const char* specs[] = {"a*b", "a"};
  const int64_t s0[] = {12}, s1[] = {3};
  const int64_t* shapes[] = {s0, s1};
  const size_t ranks[] = {1, 1};
  shp_bindings_t* b = nullptr;
  Scope fresh;  // bindings come in order of first mention: a, then b
  ASSERT_EQ(shp_scope_solve(fresh.s, 2, specs, shapes, ranks, &b), nullptr);
  ASSERT_EQ(shp_bindings_count(b), 2u);
  EXPECT_STREQ(shp_bindings_name(b, 0), "a");
  EXPECT_EQ(shp_bindings_value(b, 0), 3);
  EXPECT_STREQ(shp_bindings_name(b, 1), "b");
  EXPECT_EQ(shp_bindings_value(b, 1), 4);
  EXPECT_EQ(shp_bindings_name(b, 2), nullptr);
  shp_bindings_destroy(b);

  const char* specs2[] = {"b, b, 2*d"};
  const int64_t s2[] = {3, 3, 5};
  const int64_t* shapes2[] = {s2};
  const size_t ranks2[] = {3};
  shp_error_t* err = shp_scope_solve(sc.s, 1, specs2, shapes2, ranks2, &b);
  EXPECT_EQ(shp_error_code(err), SHP_SHAPE_MISMATCH);
  EXPECT_NE(std::string(shp_error_message(err))
                .find("Division had remainder 1 when computing the value of 'd'"),
            std::string::npos);
  shp_error_destroy(err);
}

// JAX's specs: `_` and `...` take the given sizes and bind nothing; spaces and parentheses
// around a spec do not matter; a constant that differs from the given size is a mismatch.
TEST(DimApi, SolveWithPlaceholdersAndEllipsis) {
  const int64_t s0[] = {7, 4, 5, 6};
  const int64_t* shapes[] = {s0};
  const size_t ranks[] = {4};
  for (const char* spec : {"_, b, ...", " ( _, b, ... ) ", "_, b, _, _", "(_, b, 5, ...)"}) {
    Scope sc;
    shp_bindings_t* b = nullptr;
    const char* specs[] = {spec};
    ASSERT_EQ(Message(shp_scope_solve(sc.s, 1, specs, shapes, ranks, &b)), "") << spec;
    ASSERT_EQ(shp_bindings_count(b), 1u) << spec;
    EXPECT_STREQ(shp_bindings_name(b, 0), "b");
    EXPECT_EQ(shp_bindings_value(b, 0), 4);
    shp_bindings_destroy(b);
  }
  Scope sc;
  shp_bindings_t* b = nullptr;
  const char* bad[] = {"_, b, 9, ..."};
  shp_error_t* err = shp_scope_solve(sc.s, 1, bad, shapes, ranks, &b);
  EXPECT_EQ(shp_error_code(err), SHP_SHAPE_MISMATCH);
  EXPECT_NE(std::string(shp_error_message(err)).find("args[0]"), std::string::npos)
      << shp_error_message(err);
  EXPECT_NE(std::string(shp_error_message(err)).find("different size 5"), std::string::npos)
      << shp_error_message(err);
  shp_error_destroy(err);
}

TEST(DimApi, DeclareCheckAndIntrospection) {
  shp_scope_t* s = nullptr;
  const char* cons[] = {"n <= 64"};
  const char* names[] = {"n"};
  const int64_t mins[] = {0}, maxs[] = {INT64_MAX};
  ASSERT_EQ(shp_scope_create_with_ranges(cons, 1, names, mins, maxs, 1, &s), nullptr);
  ASSERT_EQ(shp_scope_declare(s, "m", -3, 3), nullptr);
  EXPECT_EQ(Code(shp_scope_declare(s, "m", 0, 1)), SHP_INVALID_ARGUMENT);
  EXPECT_EQ(shp_scope_variable_count(s), 2u);
  EXPECT_STREQ(shp_scope_variable_name(s, 0), "n");
  int64_t lo, hi;
  ASSERT_EQ(shp_scope_variable_range(s, 1, &lo, &hi), nullptr);
  EXPECT_EQ(lo, -3);
  EXPECT_EQ(hi, 3);
  const shp_dim_t *n = nullptr, *eight = nullptr;
  ASSERT_EQ(shp_dim_parse(s, "n", &n), nullptr);
  ASSERT_EQ(shp_dim_constant(s, 8, &eight), nullptr);
  ASSERT_EQ(shp_scope_check(s, n, SHP_CMP_GE, eight, "n must be at least 8"), nullptr);
  EXPECT_EQ(shp_scope_constraint_count(s), 2u);
  EXPECT_STREQ(shp_scope_constraint_text(s, 0), "n <= 64");
  EXPECT_STREQ(shp_scope_constraint_text(s, 1), "n >= 8");
  ASSERT_EQ(shp_dim_bounds(n, &lo, &hi), nullptr);
  EXPECT_EQ(lo, 8);
  EXPECT_EQ(hi, 64);
  shp_scope_destroy(s);
}

}  // namespace
