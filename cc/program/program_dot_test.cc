// Program::ToDot: nodes, edge labels, roles, folded constants, the legend, escaping, validity
// (through Graphviz's dot when it is installed), determinism and speed.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cc/base/testing.h"
#include "cc/program/program.h"
#include "cc/trace/trace.h"

namespace shp {
namespace program {
namespace {

using ::shp::testing::Contains;
using trace::DType;
using trace::OpKind;
using trace::Tensor;

int Count(const std::string& text, const std::string& part) {
  int n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Renders `dot_text` with Graphviz (skips the test when dot is not installed); fails on a
// nonzero exit or on any warning or error dot prints.
void ExpectRenders(const std::string& dot_text) {
  if (std::system("command -v dot >/dev/null 2>&1") != 0) GTEST_SKIP() << "dot is not installed";
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = tmp != nullptr ? tmp : "/tmp";
  const std::string in = dir + "/graph.dot", svg = dir + "/graph.svg", err = dir + "/dot.err";
  {
    std::ofstream f(in, std::ios::binary);
    f << dot_text;
  }
  // Fontconfig needs a writable cache (the test's home is not).
  const std::string cmd =
      "XDG_CACHE_HOME='" + dir + "' dot -Tsvg '" + in + "' -o '" + svg + "' 2>'" + err + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << ReadFile(err) << "\n" << dot_text;
  const std::string messages = ReadFile(err);
  EXPECT_FALSE(Contains(messages, "Warning") || Contains(messages, "Error") ||
               Contains(messages, "rror:"))
      << messages << "\n"
      << dot_text;
  EXPECT_TRUE(Contains(ReadFile(svg), "</svg>"));
}

struct Traced {
  std::unique_ptr<dim::Scope> scope;
  std::unique_ptr<trace::Trace> trace;
};

Traced NewTrace(const std::vector<std::string>& constraints = {}) {
  Traced t;
  t.scope = dim::Scope::Create(constraints);
  t.trace.reset(new trace::Trace(t.scope.get()));
  return t;
}

// x @ w1 + b1 -> tanh -> @ w2 (a constant) -> * 0.5 -> softmax.
std::unique_ptr<Program> MakeMlp() {
  Traced t = NewTrace({"batch <= 4096"});
  trace::Trace& tr = *t.trace;
  const Tensor* x = tr.Input("x", DType::kF32, "batch, 784");
  std::vector<float> w1(784 * 16, 0.25f), b1(16, 1.0f), w2(16 * 10, -1.0f);
  const Tensor* pw1 = tr.Parameter("w1", DType::kF32, {784, 16}, w1.data(), w1.size() * 4);
  const Tensor* pb1 = tr.Parameter("b1", DType::kF32, {16}, b1.data(), b1.size() * 4);
  const Tensor* cw2 = tr.Constant(DType::kF32, {16, 10}, w2.data(), w2.size() * 4);
  const float half = 0.5f;
  const Tensor* c = tr.Constant(DType::kF32, {}, &half, 4);
  const Tensor* h = tr.Unary(OpKind::kTanh, tr.Binary(OpKind::kAdd, tr.MatMul(x, pw1), pb1));
  const Tensor* y = tr.Softmax(tr.Binary(OpKind::kMul, tr.MatMul(h, cw2), c), -1);
  return Program::FromTrace(tr, {x, pw1, pb1}, {y, h}, {"probs", "hidden"});
}

TEST(ProgramDot, DrawsOpsEdgesInputsAndOutputs) {
  auto p = MakeMlp();
  const std::string d = p->ToDot();
  EXPECT_EQ(d.rfind("digraph program {\n", 0), 0u) << d;
  EXPECT_TRUE(Contains(d, "rankdir=TB"));
  // Every operation but the constants is a node, labelled with its call and attributes.
  for (const char* op : {"%5 = matmul(%0, %1)", "%6 = add(%5, %2)", "%7 = tanh(%6)",
                         "%8 = matmul(%7, %3)", "%9 = mul(%8, %4)", "%10 = softmax(%9)"}) {
    EXPECT_TRUE(Contains(d, op)) << op << "\n" << d;
  }
  EXPECT_TRUE(Contains(d, "softmax(%9)\\naxis=1")) << d;
  // Edges carry the symbolic shapes in the listing's notation.
  EXPECT_TRUE(Contains(d, "in0 -> n5 [label=\"f32[batch, 784]\", weight=4]")) << d;
  EXPECT_TRUE(Contains(d, "in1 -> n5 [label=\"f32[784, 16]\"]")) << d;
  EXPECT_TRUE(Contains(d, "n7 -> n8 [label=\"f32[batch, 16]\", weight=4]")) << d;
  EXPECT_TRUE(Contains(d, "n10 -> out0 [label=\"f32[batch, 10]\", weight=4]")) << d;
  EXPECT_TRUE(Contains(d, "n7 -> out1 [label=\"f32[batch, 16]\", weight=4]")) << d;
  // Inputs: name, role, type; outputs: name.
  EXPECT_TRUE(Contains(d, "in0 [label=\"x\\ndata\\nf32[batch, 784]\"")) << d;
  EXPECT_TRUE(Contains(d, "in1 [label=\"w1\\nparameter\\nf32[784, 16]\"")) << d;
  EXPECT_TRUE(Contains(d, "out0 [label=\"probs\"")) << d;
  EXPECT_TRUE(Contains(d, "out1 [label=\"hidden\"")) << d;
  // Topological order: each node is declared after its operands.
  EXPECT_LT(d.find("n5 ["), d.find("n6 ["));
  EXPECT_LT(d.find("n9 ["), d.find("n10 ["));
  // The legend: variables with their source, constraints.
  EXPECT_TRUE(Contains(d, "shape=note")) << d;
  EXPECT_TRUE(Contains(d, "variables:\\l  batch >= 1  (from input 'x' axis 0)\\l")) << d;
  EXPECT_TRUE(Contains(d, "constraints:\\l  batch <= 4096\\l")) << d;
  ExpectRenders(d);
}

TEST(ProgramDot, FoldsConstantsIntoTheirConsumers) {
  auto p = MakeMlp();
  const std::string d = p->ToDot();
  // The constants %3 (a matrix) and %4 (a scalar, with its value) are no nodes...
  EXPECT_FALSE(Contains(d, "n3 [")) << d;
  EXPECT_FALSE(Contains(d, "n4 [")) << d;
  EXPECT_FALSE(Contains(d, "n3 ->")) << d;
  EXPECT_FALSE(Contains(d, "n4 ->")) << d;
  // ...but lines of their consumers' labels.
  EXPECT_TRUE(Contains(d, "%8 = matmul(%7, %3)\\n%3 = const f32[16, 10]\"")) << d;
  EXPECT_TRUE(Contains(d, "%9 = mul(%8, %4)\\n%4 = const f32[] 0.5\"")) << d;
  EXPECT_EQ(Count(d, "%3 = const"), 1) << d;
}

TEST(ProgramDot, ShowsSmallConstantValuesOfEveryDtypeOnce) {
  Traced t = NewTrace();
  trace::Trace& tr = *t.trace;
  const Tensor* x = tr.Input("x", DType::kF64, "n, 3");
  const double row[3] = {0.1, -2.0, 1e300};
  const Tensor* c = tr.Constant(DType::kF64, {3}, row, sizeof row);
  const Tensor* y = tr.Binary(OpKind::kAdd, tr.Binary(OpKind::kMul, c, c), x);
  const Tensor* i = tr.Input("i", DType::kI64, "n");
  const int64_t big = -9000000000;
  const Tensor* j = tr.Binary(OpKind::kAdd, i, tr.Constant(DType::kI64, {}, &big, 8));
  const bool yes = true;
  const Tensor* b = tr.Input("b", DType::kBool, "n");
  const Tensor* k = tr.Binary(OpKind::kAnd, b, tr.Constant(DType::kBool, {}, &yes, 1));
  const int32_t four[4] = {1, 2, 3, 4}, five[5] = {1, 2, 3, 4, 5};
  const Tensor* q = tr.Input("q", DType::kI32, "4");
  const Tensor* r = tr.Binary(OpKind::kSub, q, tr.Constant(DType::kI32, {4}, four, 16));
  const Tensor* q5 = tr.Input("q5", DType::kI32, "5");
  const Tensor* r5 = tr.Binary(OpKind::kSub, q5, tr.Constant(DType::kI32, {5}, five, 20));
  auto p = Program::FromTrace(tr, {x, i, b, q, q5}, {y, j, k, r, r5}, {"y", "j", "k", "r", "r5"});
  const std::string d = p->ToDot();
  EXPECT_TRUE(Contains(d, "mul(%5, %5)\\n%5 = const f64[3] [0.1, -2, 1e+300]\"")) << d;
  EXPECT_EQ(Count(d, "%5 = const"), 1) << d;  // used twice by the same op: listed once
  EXPECT_TRUE(Contains(d, "const i64[] -9000000000\"")) << d;
  EXPECT_TRUE(Contains(d, "const bool[] true\"")) << d;
  EXPECT_TRUE(Contains(d, "const i32[4] [1, 2, 3, 4]\"")) << d;
  EXPECT_TRUE(Contains(d, "const i32[5]\"")) << d;  // too many values to show
  ExpectRenders(d);
}

TEST(ProgramDot, DrawsAConstantThatIsAnOutput) {
  Traced t = NewTrace();
  trace::Trace& tr = *t.trace;
  const Tensor* x = tr.Input("x", DType::kF32, "n");
  const float two = 2.0f;
  const Tensor* c = tr.Constant(DType::kF32, {}, &two, 4);
  auto p = Program::FromTrace(tr, {x}, {tr.Binary(OpKind::kMul, x, c), c}, {"y", "two"});
  const std::string d = p->ToDot();
  EXPECT_TRUE(Contains(d, "n1 [label=\"%1 = const f32[] 2\", shape=box, style=dashed]")) << d;
  EXPECT_TRUE(Contains(d, "n1 -> n2 [label=\"f32[]\"]")) << d;
  EXPECT_TRUE(Contains(d, "n1 -> out1 [label=\"f32[]\"]")) << d;
  ExpectRenders(d);
}

TEST(ProgramDot, ShowsRolesOfDimensionInputsAndDerivedOutputs) {
  Traced t = NewTrace();
  trace::Trace& tr = *t.trace;
  const Tensor* k = tr.DimInput("k");
  const Tensor* x = tr.Input("x", DType::kF32, "n, k");
  const Tensor* g = tr.DerivedInput("y.cotangent", InputRole::kCotangent, DType::kF32,
                                    {t.scope->Var("n"), t.scope->Var("k")});
  const Tensor* v = tr.DimValue(t.scope->Parse("2*k"));
  auto p = Program::FromTrace(tr, {x, k, g}, {tr.Binary(OpKind::kMul, x, g), v}, {"x.grad", "v"},
                              {OutputRole::kGrad, OutputRole::kPrimal});
  const std::string d = p->ToDot();
  EXPECT_TRUE(Contains(d, "in1 [label=\"k\\ndimension k\\ni64[]\"")) << d;
  EXPECT_TRUE(Contains(d, "in2 [label=\"y.cotangent\\ncotangent\\nf32[n, k]\"")) << d;
  EXPECT_TRUE(Contains(d, "out0 [label=\"x.grad\\ngrad\"")) << d;
  EXPECT_TRUE(Contains(d, "out1 [label=\"v\"")) << d;
  EXPECT_TRUE(Contains(d, "dim_value() \\ndim=2*k") || Contains(d, "dim_value()\\ndim=2*k")) << d;
  EXPECT_TRUE(Contains(d, "k >= 1  (given by input 'k')")) << d;
  ExpectRenders(d);
}

TEST(ProgramDot, LegendListsAssertionsAndGuards) {
  Traced t = NewTrace({"n >= 2", "n <= 4096"});
  dim::Scope* s = t.scope.get();
  trace::Trace& tr = *t.trace;
  const Tensor* x = tr.Input("x", DType::kF32, "n");
  s->SetHint("n", 16);
  ASSERT_TRUE(s->Guard(s->Var("n"), dim::Cmp::kGe, s->Constant(8), "long enough", "test"));
  const Tensor* y =
      tr.Reshape(tr.Slice(x, {nullptr}, {s->Constant(8)}, {}), {nullptr, s->Constant(4)});
  s->Check(s->Var("n"), dim::Cmp::kLe, s->Constant(1024), "n is \"at most\" 1024");
  auto p = Program::FromTrace(tr, {x}, {y}, {"y"});
  const std::string d = p->ToDot();
  EXPECT_TRUE(Contains(d, "constraints:\\l  n >= 2\\l  n <= 4096\\l")) << d;
  EXPECT_TRUE(Contains(d, "assertions:\\l")) << d;
  EXPECT_TRUE(Contains(d, "  n <= 1024  \\\"n is \\\"at most\\\" 1024\\\"\\l")) << d;
  EXPECT_TRUE(Contains(d, "guards:\\l  n >= 8  \\\"long enough\\\"  (from test)\\l")) << d;
  EXPECT_FALSE(Contains(d, "variants")) << d;
  ExpectRenders(d);
}

// A long legend section lists its first entries and says how many more the listing has.
TEST(ProgramDot, LegendSectionsAreBounded) {
  Traced t = NewTrace();
  dim::Scope* s = t.scope.get();
  const Tensor* x = t.trace->Input("x", DType::kF32, "n");
  for (int i = 0; i < 40; ++i) {
    s->Check(s->Var("n"), dim::Cmp::kLe, s->Constant(5000 - i), "");  // each one stronger
  }
  auto p = Program::FromTrace(*t.trace, {x}, {x}, {"y"});
  ASSERT_EQ(p->assertion_texts().size(), 40u);
  const std::string d = p->ToDot();
  EXPECT_TRUE(Contains(d, "  n <= 4969\\l  ... and 8 more (see the listing)\\l")) << d;
  EXPECT_FALSE(Contains(d, "n <= 4968")) << d;
  ExpectRenders(d);
}

// Two variants behind guards: each is a cluster of its operations, inputs and outputs are
// shared, and the legend lists each variant's guards and the coverage.
TEST(ProgramDot, DrawsEveryVariant) {
  std::vector<std::shared_ptr<const Program>> variants;
  for (int v = 0; v < 2; ++v) {
    Traced t = NewTrace({"n <= 100"});
    dim::Scope* s = t.scope.get();
    trace::Trace& tr = *t.trace;
    const Tensor* x = tr.Input("x", DType::kF32, "n");
    s->SetHint("n", v == 0 ? 16 : 4);
    s->Guard(s->Var("n"), dim::Cmp::kGe, s->Constant(8), "", "big");
    const Tensor* y = v == 0 ? tr.Binary(OpKind::kMul, x, x) : tr.Unary(OpKind::kTanh, x);
    variants.push_back(Program::FromTrace(tr, {x}, {y}, {"y"}));
  }
  auto p = Program::CreateVariants(variants);
  ASSERT_EQ(p->num_variants(), 2u);
  const std::string d = p->ToDot();
  EXPECT_TRUE(Contains(d, "subgraph cluster_v0 {")) << d;
  EXPECT_TRUE(Contains(d, "subgraph cluster_v1 {")) << d;
  EXPECT_TRUE(Contains(d, "n1 [label=\"%1 = mul(%0, %0)\"")) << d;
  EXPECT_TRUE(Contains(d, "v1n1 [label=\"%1 = tanh(%0)\"")) << d;
  EXPECT_TRUE(Contains(d, "in0 -> v1n1 [label=\"f32[n]\", weight=4]")) << d;
  EXPECT_TRUE(Contains(d, "n1 -> out0")) << d;
  EXPECT_TRUE(Contains(d, "v1n1 -> out0")) << d;
  EXPECT_EQ(Count(d, "  out0 [label="), 1) << d;
  EXPECT_EQ(Count(d, "  in0 [label="), 1) << d;
  EXPECT_TRUE(Contains(d, "label=\"variant 0: n >= 8\";")) << d;
  EXPECT_TRUE(Contains(d, "label=\"variant 1: n < 8\";")) << d;
  EXPECT_TRUE(Contains(d, "2 variants: the first whose guards hold runs\\lexhaustive: yes\\l"))
      << d;
  EXPECT_TRUE(Contains(d, "variant 0 guards:\\l  n >= 8  (from big)\\l")) << d;
  EXPECT_TRUE(Contains(d, "variant 1 guards:\\l  n < 8  (from big)\\l")) << d;
  ExpectRenders(d);
}

// Variants that leave valuations uncovered: the legend says so, with the counterexample.
TEST(ProgramDot, LegendGivesTheCounterexampleOfIncompleteVariants) {
  std::vector<std::shared_ptr<const Program>> variants;
  for (int v = 0; v < 2; ++v) {
    Traced t = NewTrace();
    dim::Scope* s = t.scope.get();
    trace::Trace& tr = *t.trace;
    const Tensor* x = tr.Input("x", DType::kF32, "n");
    s->SetHint("n", 16);
    s->Guard(s->Var("n"), dim::Cmp::kGe, s->Constant(8 + v), "", "");
    variants.push_back(Program::FromTrace(tr, {x}, {tr.Unary(OpKind::kExp, x)}, {"y"}));
  }
  auto p = Program::CreateVariants(variants);
  ASSERT_EQ(p->variants_exhaustive(), dim::Truth::kFalse);
  const std::string d = p->ToDot();
  EXPECT_TRUE(Contains(d, "\\lexhaustive: no: n = ")) << d;
  EXPECT_TRUE(Contains(d, "variant 1 guards:\\l  n >= 9\\l")) << d;
  ExpectRenders(d);
}

// Names may hold any printable UTF-8, quotes and backslashes included.
TEST(ProgramDot, EscapesNames) {
  Traced t = NewTrace();
  trace::Trace& tr = *t.trace;
  const Tensor* x = tr.Input("say \"hi\" \\n <b>", DType::kF32, "n");
  const Tensor* y = tr.Input("\xc3\xa9t\xc3\xa9\\", DType::kF32, "n");
  auto p = Program::FromTrace(tr, {x, y}, {tr.Binary(OpKind::kAdd, x, y)}, {"out\"\\"});
  const std::string d = p->ToDot();
  EXPECT_TRUE(Contains(d, "in0 [label=\"say \\\"hi\\\" \\\\n <b>\\ndata")) << d;
  EXPECT_TRUE(Contains(d, "in1 [label=\"\xc3\xa9t\xc3\xa9\\\\\\ndata")) << d;
  EXPECT_TRUE(Contains(d, "out0 [label=\"out\\\"\\\\\"")) << d;
  ExpectRenders(d);
}

// Long lines are wrapped: at a space when there is one, else at the width.
TEST(ProgramDot, WrapsLongLines) {
  Traced t = NewTrace();
  trace::Trace& tr = *t.trace;
  const std::string name(130, 'a');
  const Tensor* x = tr.Input(name, DType::kF32, "n, m, k");
  dim::Scope* s = t.scope.get();
  const Tensor* y = tr.Reshape(x, {s->Parse("n*m*k"), s->Parse("1")});
  auto p = Program::FromTrace(tr, {x}, {y}, {"y"});
  const std::string d = p->ToDot();
  EXPECT_TRUE(Contains(d, "\"" + std::string(60, 'a') + "\\n" + std::string(60, 'a') + "\\n" +
                              std::string(10, 'a') + "\\ndata"))
      << d;
  // The legend's long lines continue indented.
  EXPECT_TRUE(Contains(d, "  n >= 1  (from input\\l    '" + std::string(55, 'a') + "\\l    " +
                              std::string(56, 'a') + "\\l    " + std::string(19, 'a') +
                              "' axis 0)\\l"))
      << d;
  ExpectRenders(d);
}

TEST(ProgramDot, IsDeterministicAndSurvivesSerialization) {
  auto p = MakeMlp();
  const std::string d = p->ToDot();
  EXPECT_EQ(d, p->ToDot());
  const std::string bytes = p->Serialize();
  auto q = Program::Load(bytes.data(), bytes.size());
  EXPECT_EQ(d, q->ToDot());
}

// Linear in the program's size: a chain of 1000 operations is drawn in milliseconds.
TEST(ProgramDot, ChainOfAThousandOpsIsFast) {
  Traced t = NewTrace();
  trace::Trace& tr = *t.trace;
  const Tensor* x = tr.Input("x", DType::kF32, "batch, 2*seq + 1");
  const float one = 1.0f;
  const Tensor* c = tr.Constant(DType::kF32, {}, &one, 4);
  const Tensor* y = x;
  for (int i = 0; i < 999; ++i) {
    y = i % 3 == 0 ? tr.Binary(OpKind::kAdd, y, c) : tr.Unary(OpKind::kTanh, y);
  }
  auto p = Program::FromTrace(tr, {x}, {y}, {"y"});
  ASSERT_EQ(p->nodes().size(), 1000u);
  double best = 1e9;
  std::string d;
  for (int rep = 0; rep < 5; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    d = p->ToDot();
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::printf("ToDot of a 1000-op chain: %.3f ms (best of 5), %zu bytes\n", best, d.size());
  EXPECT_LT(best, 100.0);  // loose: a few ms on the project's machines, even under ASan
  EXPECT_EQ(Count(d, "shape=box, style=rounded"), 999);
  EXPECT_EQ(Count(d, "\"f32[batch, 2*seq + 1]\""), 1000);  // 998 between ops, one in, one out
  ExpectRenders(d);
}

}  // namespace
}  // namespace program
}  // namespace shp
