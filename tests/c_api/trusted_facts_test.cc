// Issue 39 item 4: facts stored in a program file are not trusted by the loader. Derived facts
// (the bounds of data-dependent sizes, u0 <= 4*n for nonzero of an (n, 4) tensor) are never
// checked at run time, so a file whose stored bound was edited (u0 <= 2) must be refused:
// otherwise shp_program_variable_bounds and shp_program_cost_bounds(SHP_COST_PEAK_BYTES)
// report a bound far below what a run allocates. The files are edited in place with the
// generated FlatBuffers accessors (as a hostile writer would).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "flatbuffers/program_generated.h"
#include "shapepoly/shapepoly.h"

namespace {

namespace fb = ::shapepoly::fb;

std::string Message(shp_error_t* err) {
  std::string m = err ? shp_error_message(err) : "";
  shp_error_destroy(err);
  return m;
}

#define OK(call) ASSERT_EQ(Message(call), "")

// The bytes of a program with nonzero over x: (n, 4), 1 <= n <= 1000; its derived fact is
// u0 <= 4*n, so u0 <= 4000. `mask` uses boolean_mask of x by a (n,) mask instead (u0 <= n).
std::vector<uint8_t> NonzeroProgram(bool mask) {
  shp_scope_t* s = nullptr;
  const char* constraints[] = {
      "1000 >= n"};  // written so that n is not dim 0 (a default, unstored)
  EXPECT_EQ(Message(shp_scope_create(constraints, 1, &s)), "");
  const shp_tensor_t* x = nullptr;
  EXPECT_EQ(Message(shp_tensor_input(s, "x", SHP_F32, "n, 4", &x)), "");
  const shp_tensor_t* y = nullptr;
  std::vector<const shp_tensor_t*> ins = {x};
  if (mask) {
    const shp_tensor_t* m = nullptr;
    EXPECT_EQ(Message(shp_tensor_input(s, "m", SHP_BOOL, "n", &m)), "");
    EXPECT_EQ(Message(shp_tensor_boolean_mask(x, m, 0, &y)), "");
    ins.push_back(m);
  } else {
    EXPECT_EQ(Message(shp_tensor_nonzero(x, &y)), "");
  }
  const char* names[] = {"y"};
  shp_program_t* p = nullptr;
  EXPECT_EQ(Message(shp_program_create(s, ins.data(), ins.size(), &y, names, 1, &p)), "");
  shp_buffer_t* b = nullptr;
  EXPECT_EQ(Message(shp_program_serialize(p, &b)), "");
  const uint8_t* d = static_cast<const uint8_t*>(shp_buffer_data(b));
  std::vector<uint8_t> bytes(d, d + shp_buffer_size(b));
  shp_buffer_destroy(b);
  shp_program_destroy(p);
  shp_scope_destroy(s);
  return bytes;
}

// The index of the first DAG entry CONST `value` or VAR `name`, or -1.
int64_t FindDim(const fb::Program* r, bool var, int64_t value, const std::string& name = "") {
  for (uint32_t i = 0; i < r->dims()->size(); ++i) {
    const fb::Dim* d = r->dims()->Get(i);
    if (!var && d->op() == fb::DimOp::CONST && d->value() == value) return i;
    if (var && d->op() == fb::DimOp::VAR &&
        r->variables()->Get(static_cast<uint32_t>(d->value()))->name()->str() == name) {
      return i;
    }
  }
  return -1;
}

// Rewrites derived fact 0 in place: its lhs and/or rhs dim index (-1: unchanged).
void EditDerived(std::vector<uint8_t>* bytes, int64_t lhs, int64_t rhs) {
  fb::Program* r = const_cast<fb::Program*>(fb::GetProgram(bytes->data()));
  ASSERT_NE(r->derived(), nullptr);
  ASSERT_GE(r->derived()->size(), 1u);
  // A generated table is a flatbuffers::Table (a private base): write its scalar fields in place.
  auto* f = reinterpret_cast<flatbuffers::Table*>(const_cast<fb::Fact*>(r->derived()->Get(0)));
  if (lhs >= 0) {
    ASSERT_TRUE(f->SetField<uint32_t>(fb::Fact::VT_LHS, static_cast<uint32_t>(lhs), 0));
  }
  if (rhs >= 0) {
    ASSERT_TRUE(f->SetField<uint32_t>(fb::Fact::VT_RHS, static_cast<uint32_t>(rhs), 0));
  }
}

// Loads `bytes`; on success reports what the program claims (bounds of variable `var` and the
// worst-case peak bytes), since that is the bug: a run of x = ones(1000, 4) makes 4000 rows.
std::string LoadAndDescribe(const std::vector<uint8_t>& bytes, const std::string& var,
                            shp_error_t** err) {
  shp_program_t* p = nullptr;
  *err = shp_program_load(bytes.data(), bytes.size(), &p);
  if (*err != nullptr) return "";
  std::string out;
  for (size_t i = 0; i < shp_program_variable_count(p); ++i) {
    if (var != shp_program_variable_name(p, i)) continue;
    int64_t lo = 0, hi = 0;
    shp_error_destroy(shp_program_variable_bounds(p, i, &lo, &hi));
    out +=
        "variable_bounds(" + var + ") = [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  }
  int64_t lo = 0, hi = 0;
  shp_error_destroy(shp_program_cost_bounds(p, SHP_COST_PEAK_BYTES, &lo, &hi));
  out += ", cost_bounds(PEAK_BYTES).hi = " + std::to_string(hi);
  shp_program_destroy(p);
  return out;
}

void ExpectRefused(const std::vector<uint8_t>& bytes, const std::string& var,
                   const std::vector<std::string>& parts) {
  shp_error_t* err = nullptr;
  const std::string claims = LoadAndDescribe(bytes, var, &err);
  ASSERT_NE(err, nullptr) << "the edited file loaded and claims " << claims;
  EXPECT_EQ(shp_error_code(err), SHP_INVALID_PROGRAM) << shp_error_message(err);
  for (const std::string& part : parts) {
    EXPECT_NE(std::string(shp_error_message(err)).find(part), std::string::npos)
        << "message: " << shp_error_message(err) << "\nexpected to contain: " << part;
  }
  shp_error_destroy(err);
}

TEST(TrustedFacts, UneditedProgramLoadsWithTheDerivedBound) {
  const std::vector<uint8_t> bytes = NonzeroProgram(false);
  shp_error_t* err = nullptr;
  const std::string claims = LoadAndDescribe(bytes, "u0", &err);
  ASSERT_EQ(Message(err), "");
  EXPECT_NE(claims.find("variable_bounds(u0) = [0, 4000]"), std::string::npos) << claims;
  // 4000 rows of 2 i64 = 64000 bytes of output at least.
  const size_t at = claims.find("PEAK_BYTES).hi = ");
  ASSERT_NE(at, std::string::npos);
  EXPECT_GE(std::stoll(claims.substr(at + 17)), 64000) << claims;
}

// The edit: u0 <= 4*n becomes u0 <= 2 (a CONST entry of the DAG: the rank of the
// result). Before the fix this loaded and claimed [0, 2] and a few bytes.
TEST(TrustedFacts, EditedDerivedBoundIsRefused) {
  std::vector<uint8_t> bytes = NonzeroProgram(false);
  const int64_t two = FindDim(fb::GetProgram(bytes.data()), false, 2);
  ASSERT_GE(two, 0);
  EditDerived(&bytes, -1, two);
  ExpectRefused(bytes, "u0", {"derived fact 0 ('u0 <= 2')", "u0 <= 4*n", "nonzero"});
}

// A derived fact about a variable the data does not produce (n, solved from the input shapes)
// would bound it without any check: n <= 2 while a run has n = 1000.
TEST(TrustedFacts, DerivedFactOnAnInputVariableIsRefused) {
  std::vector<uint8_t> bytes = NonzeroProgram(false);
  const fb::Program* r = fb::GetProgram(bytes.data());
  const int64_t n = FindDim(r, true, 0, "n");
  const int64_t two = FindDim(r, false, 2);
  ASSERT_GE(n, 0);
  ASSERT_GE(two, 0);
  EditDerived(&bytes, n, two);
  ExpectRefused(bytes, "n", {"derived fact 0 ('n <= 2')", "no data-dependent operation"});
}

// boolean_mask's bound (u0 <= n, the mask's elements) edited to u0 <= 4: refused as well.
TEST(TrustedFacts, EditedBooleanMaskBoundIsRefused) {
  std::vector<uint8_t> bytes = NonzeroProgram(true);
  const int64_t four = FindDim(fb::GetProgram(bytes.data()), false, 4);
  ASSERT_GE(four, 0);
  EditDerived(&bytes, -1, four);
  ExpectRefused(bytes, "u0", {"derived fact 0 ('u0 <= 4')", "u0 <= n", "boolean_mask"});
}

}  // namespace
