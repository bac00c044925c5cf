// Issue 39 item 6: one limits table (cc/base/limits.h, documented in the C header's "Limits")
// is enforced identically when a program is built, serialized and loaded. For each limit a
// program exactly at it is created, serialized and loaded back; one step past it is refused
// by the builder (SHP_UNSUPPORTED, naming the limit), never created and then unloadable.
// The numbers are the header's (1024 facts, exponent 64, 1024 terms, 4096 variables, 65536
// DAG entries), written out here so that a change to the table is a visible change here.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "shapepoly/shapepoly.h"

namespace {

constexpr size_t kFacts = 1024;
constexpr int64_t kPow = 64;
constexpr size_t kTerms = 1024;
constexpr size_t kVariables = 4096;
constexpr size_t kDagEntries = 65536;

std::string Message(shp_error_t* err) {
  std::string m = err ? shp_error_message(err) : "";
  shp_error_destroy(err);
  return m;
}

#define OK(call) ASSERT_EQ(Message(call), "")

void ExpectFails(shp_error_t* e, shp_code_t code, const std::vector<std::string>& parts) {
  ASSERT_NE(e, nullptr) << "expected a refusal";
  EXPECT_EQ(shp_error_code(e), code) << shp_error_message(e);
  for (const std::string& part : parts) {
    EXPECT_NE(std::string(shp_error_message(e)).find(part), std::string::npos)
        << "message: " << shp_error_message(e) << "\nexpected to contain: " << part;
  }
  shp_error_destroy(e);
}

struct Scope {
  shp_scope_t* s = nullptr;
  Scope() { EXPECT_EQ(Message(shp_scope_create(nullptr, 0, &s)), ""); }
  ~Scope() { shp_scope_destroy(s); }
  const shp_dim_t* Dim(const std::string& text) {
    const shp_dim_t* d = nullptr;
    EXPECT_EQ(Message(shp_dim_parse(s, text.c_str(), &d)), "");
    return d;
  }
  const shp_tensor_t* In(const std::string& name, const std::vector<const shp_dim_t*>& dims) {
    const shp_tensor_t* t = nullptr;
    EXPECT_EQ(
        Message(shp_tensor_input_dims(s, name.c_str(), SHP_F32, dims.data(), dims.size(), &t)), "");
    return t;
  }
};

// Creates a program of `inputs` whose one output is the sum of their element counts' worth
// of work (reduce_sum of each, added), serializes it and loads it back: each must succeed.
// Returns the error of the first step that failed ("" when all did).
std::string CreateSerializeLoad(shp_scope_t* s, const std::vector<const shp_tensor_t*>& inputs) {
  const shp_tensor_t* out = nullptr;
  for (const shp_tensor_t* x : inputs) {
    const shp_tensor_t* r = nullptr;
    std::string m = Message(shp_tensor_reduce(SHP_REDUCE_SUM, x, nullptr, 0, false, &r));
    if (!m.empty()) return "reduce_sum: " + m;
    if (out == nullptr) {
      out = r;
    } else {
      m = Message(shp_tensor_binary(SHP_ADD, out, r, &out));
      if (!m.empty()) return "add: " + m;
    }
  }
  const char* name = "y";
  shp_program_t* p = nullptr;
  std::string m = Message(shp_program_create(s, inputs.data(), inputs.size(), &out, &name, 1, &p));
  if (!m.empty()) return "create: " + m;
  shp_buffer_t* b = nullptr;
  m = Message(shp_program_serialize(p, &b));
  shp_program_destroy(p);
  if (!m.empty()) return "serialize: " + m;
  shp_program_t* q = nullptr;
  m = Message(shp_program_load(shp_buffer_data(b), shp_buffer_size(b), &q));
  shp_buffer_destroy(b);
  shp_program_destroy(q);
  return m.empty() ? "" : "load: " + m;
}

// ---- facts: constraints, assertions, guards and derived facts together ----

TEST(Limits, Facts) {
  Scope sc;
  const shp_dim_t* n = sc.Dim("n");
  const shp_tensor_t* x = sc.In("x", {n});
  // Each guard is stricter than the last, so each is recorded: n <= 5000, n <= 4999, ...
  for (size_t k = 0; k < kFacts; ++k) {
    OK(shp_scope_assume(sc.s, n, SHP_CMP_LE, sc.Dim(std::to_string(5000 - k)), "g"));
  }
  EXPECT_EQ(CreateSerializeLoad(sc.s, {x}), "");
  // One more (the 1,030 guards): refused when it is added, naming the limit.
  ExpectFails(shp_scope_assume(sc.s, n, SHP_CMP_LE, sc.Dim(std::to_string(5000 - kFacts)), "g"),
              SHP_UNSUPPORTED, {"1024", "facts"});
  // A check (assertion) counts as well.
  ExpectFails(shp_scope_check(sc.s, n, SHP_CMP_GE, sc.Dim("1"), "c"), SHP_UNSUPPORTED, {"1024"});
  // And the scope is unchanged: the program at the limit still round-trips.
  EXPECT_EQ(CreateSerializeLoad(sc.s, {x}), "");
}

TEST(Limits, FactsIncludeConstraints) {
  std::vector<std::string> texts;
  for (size_t k = 0; k <= kFacts; ++k) texts.push_back("n <= " + std::to_string(5000 - k));
  std::vector<const char*> c;
  for (const std::string& t : texts) c.push_back(t.c_str());
  shp_scope_t* s = nullptr;
  ExpectFails(shp_scope_create(c.data(), c.size(), &s), SHP_UNSUPPORTED, {"1024"});
  OK(shp_scope_create(c.data(), kFacts, &s));  // exactly at the limit
  const shp_dim_t* n = nullptr;
  OK(shp_dim_variable(s, "n", &n));
  const shp_tensor_t* x = nullptr;
  OK(shp_tensor_input_dims(s, "x", SHP_F32, &n, 1, &x));
  EXPECT_EQ(CreateSerializeLoad(s, {x}), "");
  shp_scope_destroy(s);
}

// ---- the exponent of a factor ----

TEST(Limits, Exponent) {
  Scope sc;
  const shp_dim_t* n = sc.Dim("n");
  const shp_dim_t* p = nullptr;
  OK(shp_dim_pow(n, kPow, &p));
  const shp_tensor_t* x = sc.In("x", {n, p});
  EXPECT_EQ(CreateSerializeLoad(sc.s, {x}), "");
  const shp_dim_t* past = nullptr;
  ExpectFails(shp_dim_pow(n, kPow + 1, &past), SHP_UNSUPPORTED, {"'n' to the power 65", "64"});
  ExpectFails(shp_dim_mul(p, n, &past), SHP_UNSUPPORTED, {"'n' to the power 65", "64"});
  // Through the parser as well (never a dim the loader refuses).
  EXPECT_NE(Message(shp_dim_parse(sc.s, "n^65", &past)), "");
  EXPECT_NE(Message(shp_dim_parse(sc.s, "n^40 * n^40", &past)), "");
}

// ---- terms of one dimension expression ----

// (1 + a + ... + a^31) * (1 + b + ... + b^31): 1024 distinct terms.
std::string TermsText(size_t per_side) {
  std::string l = "1", r = "1";
  for (size_t i = 1; i < per_side; ++i) {
    l += " + a^" + std::to_string(i);
    r += " + b^" + std::to_string(i);
  }
  return "(" + l + ") * (" + r + ")";
}

TEST(Limits, Terms) {
  Scope sc;
  const shp_dim_t* a = sc.Dim("a");
  const shp_dim_t* b = sc.Dim("b");
  const shp_dim_t* big = sc.Dim(TermsText(32));
  size_t len = 0;
  char buf[8];
  shp_error_destroy(shp_dim_to_string(big, buf, sizeof buf, &len));
  const shp_tensor_t* x = sc.In("x", {a, b, big});
  EXPECT_EQ(CreateSerializeLoad(sc.s, {x}), "");
  const shp_dim_t* past = nullptr;
  ExpectFails(shp_dim_add(big, sc.Dim("c"), &past), SHP_UNSUPPORTED,
              {"1025 terms", "the limit is 1024"});
  // The case: a dim with 1,716 terms (builders allowed 4,096, the loader 1,024).
  EXPECT_NE(Message(shp_dim_parse(sc.s, "(1 + a + b + c + d + e + f)^6", &past)), "");
  (void)kTerms;
}

// ---- dimension variables ----

TEST(Limits, Variables) {
  Scope sc;
  std::vector<const shp_tensor_t*> inputs;
  for (size_t i = 0; i < kVariables / 64; ++i) {
    std::vector<const shp_dim_t*> dims;
    for (size_t j = 0; j < 64; ++j) {
      dims.push_back(sc.Dim("v" + std::to_string(i) + "_" + std::to_string(j)));
    }
    inputs.push_back(sc.In("x" + std::to_string(i), dims));
  }
  EXPECT_EQ(shp_scope_variable_count(sc.s), kVariables);
  EXPECT_EQ(CreateSerializeLoad(sc.s, inputs), "");
  const shp_dim_t* past = nullptr;
  ExpectFails(shp_dim_variable(sc.s, "w", &past), SHP_UNSUPPORTED, {"'w'", "4096"});
  EXPECT_NE(Message(shp_dim_parse(sc.s, "w + 1", &past)), "");
  EXPECT_EQ(shp_scope_variable_count(sc.s), kVariables);
}

// ---- entries of the dimension DAG ----

// Dims over a, b, c, each a sum of `per_dim` distinct monomials a^i*b^j*c^k (every monomial
// is its own DAG entry), `count` dims from monomial number `first` on.
std::vector<std::string> MonomialSums(size_t first, size_t count, size_t per_dim) {
  std::vector<std::string> out;
  size_t m = first;
  for (size_t d = 0; d < count; ++d) {
    std::string text;
    for (size_t t = 0; t < per_dim; ++t, ++m) {
      const size_t i = 1 + m % 60, j = 1 + (m / 60) % 60, k = 1 + m / 3600;
      text += (t ? " + a^" : "a^") + std::to_string(i) + "*b^" + std::to_string(j) + "*c^" +
              std::to_string(k);
    }
    out.push_back(text);
  }
  return out;
}

TEST(Limits, DagEntries) {
  Scope sc;
  std::vector<const shp_dim_t*> dims = {sc.Dim("a"), sc.Dim("b"), sc.Dim("c")};
  // 70 dims of 1000 monomials: more than 65536 distinct entries.
  for (const std::string& t : MonomialSums(0, 70, 1000)) dims.push_back(sc.Dim(t));
  std::vector<const shp_tensor_t*> inputs;
  inputs.push_back(sc.In("x0", std::vector<const shp_dim_t*>(dims.begin(), dims.begin() + 40)));
  inputs.push_back(sc.In("x1", std::vector<const shp_dim_t*>(dims.begin() + 40, dims.end())));
  const std::string past = CreateSerializeLoad(sc.s, inputs);
  EXPECT_EQ(past.rfind("create: ", 0), 0u) << past;
  EXPECT_NE(past.find("65536"), std::string::npos) << past;
  EXPECT_NE(past.find("DAG entries"), std::string::npos) << past;
  // 60 of them (about 60,000 entries) are within the limit: created and loaded.
  Scope ok;
  std::vector<const shp_dim_t*> fewer = {ok.Dim("a"), ok.Dim("b"), ok.Dim("c")};
  for (const std::string& t : MonomialSums(0, 60, 1000)) fewer.push_back(ok.Dim(t));
  EXPECT_EQ(CreateSerializeLoad(ok.s, {ok.In("x", fewer)}), "");
  (void)kDagEntries;
}

}  // namespace
