// Witnesses and verified fixes of SHP_INCONCLUSIVE errors through the shipped shared library:
// the accessors, their NULL and range safety, and that what they return is what the message
// shows and what the comparison needs.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "shapepoly/shapepoly.h"

namespace {

std::string Message(shp_error_t* err) {
  std::string m = err ? shp_error_message(err) : "";
  shp_error_destroy(err);
  return m;
}

#define OK(call) ASSERT_EQ(Message(call), "")

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(ExplainApi, GuardWithoutHintsHasTwoWitnessesAndVerifiedFixes) {
  const char* constraints[] = {"n >= 2"};
  shp_scope_t* scope = nullptr;
  OK(shp_scope_create(constraints, 1, &scope));
  const shp_dim_t* n = nullptr;
  const shp_dim_t* four = nullptr;
  OK(shp_dim_parse(scope, "n", &n));
  OK(shp_dim_parse(scope, "4", &four));
  bool out = false;
  shp_error_t* e = shp_dim_guard(n, SHP_CMP_EQ, four, "", &out);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(shp_error_code(e), SHP_INCONCLUSIVE);
  const std::string msg = shp_error_message(e);
  ASSERT_EQ(shp_error_witness_count(e), 2u) << msg;
  bool seen[2] = {false, false};
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_EQ(shp_error_witness_variable_count(e, i), 1u);
    EXPECT_STREQ(shp_error_witness_variable_name(e, i, 0), "n");
    const int64_t v = shp_error_witness_variable_value(e, i, 0);
    EXPECT_GE(v, 2);  // satisfies the constraint
    const bool holds = shp_error_witness_holds(e, i);
    EXPECT_EQ(holds, v == 4);
    seen[holds ? 1 : 0] = true;
    EXPECT_TRUE(
        Contains(msg, "n = " + std::to_string(v) + (holds ? " makes it true" : " makes it false")))
        << msg;
  }
  EXPECT_TRUE(seen[0] && seen[1]);
  EXPECT_TRUE(shp_error_witness_holds(e, 0));  // the true witness comes first
  ASSERT_GE(shp_error_fix_count(e), 1u) << msg;
  for (size_t i = 0; i < shp_error_fix_count(e); ++i) {
    ASSERT_NE(shp_error_fix(e, i), nullptr);
    EXPECT_TRUE(Contains(msg, shp_error_fix(e, i))) << shp_error_fix(e, i);
  }
  EXPECT_STREQ(shp_error_fix(e, 0),
               "add the constraint 'n == 4' when creating the scope, or assert it first: "
               "shp_scope_check(scope, n, SHP_CMP_EQ, 4)");
  // Out of range: 0 / NULL / false.
  EXPECT_EQ(shp_error_witness_variable_count(e, 2), 0u);
  EXPECT_EQ(shp_error_witness_variable_name(e, 0, 1), nullptr);
  EXPECT_EQ(shp_error_witness_variable_name(e, 5, 0), nullptr);
  EXPECT_EQ(shp_error_witness_variable_value(e, 0, 1), 0);
  EXPECT_FALSE(shp_error_witness_holds(e, 2));
  EXPECT_EQ(shp_error_fix(e, shp_error_fix_count(e)), nullptr);
  shp_error_destroy(e);

  // The listed constraint fix really decides it: a scope created with it answers TRUE.
  const char* fixed[] = {"n >= 2", "n == 4"};
  shp_scope_t* scope2 = nullptr;
  OK(shp_scope_create(fixed, 2, &scope2));
  const shp_dim_t* n2 = nullptr;
  const shp_dim_t* four2 = nullptr;
  OK(shp_dim_parse(scope2, "n", &n2));
  OK(shp_dim_parse(scope2, "4", &four2));
  OK(shp_dim_guard(n2, SHP_CMP_EQ, four2, "", &out));
  EXPECT_TRUE(out);
  shp_scope_destroy(scope2);
  shp_scope_destroy(scope);
}

TEST(ExplainApi, TracingShapeCheckOffersMaxInTheSpec) {
  shp_scope_t* scope = nullptr;
  OK(shp_scope_create(nullptr, 0, &scope));
  const shp_tensor_t* x = nullptr;
  const shp_tensor_t* y = nullptr;
  OK(shp_tensor_input(scope, "x", SHP_F32, "(a, 3)", &x));
  OK(shp_tensor_input(scope, "y", SHP_F32, "(b, 3)", &y));
  const shp_tensor_t* z = nullptr;
  shp_error_t* e = shp_tensor_binary(SHP_ADD, x, y, &z);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(shp_error_code(e), SHP_INCONCLUSIVE) << shp_error_message(e);
  EXPECT_EQ(shp_error_witness_count(e), 2u) << shp_error_message(e);
  bool has_max = false;
  for (size_t i = 0; i < shp_error_fix_count(e); ++i) {
    has_max = has_max || Contains(shp_error_fix(e, i), "max(a, b)");
  }
  EXPECT_TRUE(has_max) << shp_error_message(e);
  shp_error_destroy(e);
  shp_scope_destroy(scope);
}

// A violated constraint names the nearest change of one input dimension as its fix.
TEST(ExplainApi, ViolationNamesTheNearestChangeOfOneDimension) {
  const char* constraints[] = {"a >= b + 8"};
  shp_scope_t* scope = nullptr;
  OK(shp_scope_create(constraints, 1, &scope));
  const char* specs[] = {"a", "b"};
  const int64_t x[] = {10};
  const int64_t y[] = {5};
  const int64_t* shapes[] = {x, y};
  const size_t ranks[] = {1, 1};
  shp_bindings_t* bindings = nullptr;
  shp_error_t* e = shp_scope_solve(scope, 2, specs, shapes, ranks, &bindings);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(shp_error_code(e), SHP_CONSTRAINT_VIOLATION);
  EXPECT_EQ(shp_error_witness_count(e), 0u);
  ASSERT_EQ(shp_error_fix_count(e), 1u) << shp_error_message(e);
  EXPECT_STREQ(shp_error_fix(e, 0), "change args[0].shape[0] from 10 to 13");
  EXPECT_TRUE(Contains(shp_error_message(e), "change args[0].shape[0] from 10 to 13"));
  shp_error_destroy(e);
  shp_scope_destroy(scope);
}

TEST(ExplainApi, NullAndOtherErrorsHaveNoDetail) {
  EXPECT_EQ(shp_error_witness_count(nullptr), 0u);
  EXPECT_FALSE(shp_error_witness_holds(nullptr, 0));
  EXPECT_EQ(shp_error_witness_variable_count(nullptr, 0), 0u);
  EXPECT_EQ(shp_error_witness_variable_name(nullptr, 0, 0), nullptr);
  EXPECT_EQ(shp_error_witness_variable_value(nullptr, 0, 0), 0);
  EXPECT_EQ(shp_error_fix_count(nullptr), 0u);
  EXPECT_EQ(shp_error_fix(nullptr, 0), nullptr);
  shp_error_t* e = shp_error_create(SHP_INCONCLUSIVE, "from a callback");
  EXPECT_EQ(shp_error_witness_count(e), 0u);
  EXPECT_EQ(shp_error_fix_count(e), 0u);
  EXPECT_EQ(shp_error_fix(e, 0), nullptr);
  shp_error_destroy(e);
}

}  // namespace
