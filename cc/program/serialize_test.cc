// Serialization: round trips (every op), determinism, and rejection of corrupt, truncated,
// hostile or future-version data.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/program/program.h"
#include "cc/base/testing.h"
#include "cc/trace/trace.h"
#include "flatbuffers/program_generated.h"

namespace shp {
namespace program {
namespace {

using ::shp::testing::Catch;
using ::shp::testing::Contains;
using trace::DType;
using trace::OpKind;
using trace::Tensor;

// A program that uses every operation, constraints, an assertion, a declared range,
// a dimension input and a compressible constant.
std::unique_ptr<Program> EveryOp() {
  auto s = dim::Scope::Create({"n >= 2", "n <= 1048576"}, {{"p", 0, 16}});
  trace::Trace t(s.get());
  const Tensor* x = t.Input("x", DType::kF32, "b, n");
  const Tensor* w = t.Input("w", DType::kF32, "n, 8");
  const Tensor* k = t.DimInput("k");
  const Tensor* idx = t.Input("idx", DType::kI32, "s");
  const Tensor* pad = t.Input("pad", DType::kF32, "p");
  s->Check(s->Var("b"), dim::Cmp::kLe, s->Constant(4096), "batch at most 4096");
  std::vector<float> cdata(256, 0.5f);
  const Tensor* c = t.Constant(DType::kF32, {8}, cdata.data(), 32);
  const Tensor* big = t.Constant(DType::kF32, {256}, cdata.data(), 1024);
  std::vector<const Tensor*> outs;
  const Tensor* h = t.MatMul(x, w);     // (b, 8)
  for (OpKind op : ops::kAllOpKinds) {  // every numeric unary op
    if (ops::IsUnary(op) && op != OpKind::kNot) h = t.Unary(op, h);
  }
  for (OpKind op : ops::kAllOpKinds) {  // every numeric binary op
    if (ops::IsBinary(op) && op != OpKind::kAnd && op != OpKind::kOr && op != OpKind::kXor) {
      h = t.Binary(op, h, c);
    }
  }
  const Tensor* bools = t.Binary(OpKind::kLt, h, c);
  for (OpKind op : ops::kAllOpKinds) {
    if (!ops::IsCompare(op)) continue;
    const Tensor* q = t.Binary(op, h, c);
    bools = t.Binary(OpKind::kAnd, bools, q);
    bools = t.Binary(OpKind::kOr, bools, q);
    bools = t.Binary(OpKind::kXor, bools, t.Unary(OpKind::kNot, q));
  }
  h = t.Select(bools, h, t.Convert(t.Convert(h, DType::kF64), DType::kF32));
  outs.push_back(h);
  outs.push_back(t.BroadcastTo(c, {s->Var("b"), s->Constant(3), s->Constant(8)}));
  outs.push_back(t.Reshape(x, {nullptr, s->Constant(2)}));
  outs.push_back(t.Transpose(x, {1, 0}));
  outs.push_back(t.Concatenate({x, x}, 1));
  outs.push_back(t.Slice(x, {s->Constant(0), s->Constant(1)}, {s->Var("b"), s->Var("n")}, {2, 1}));
  outs.push_back(t.Pad(x, {s->Constant(1), s->Var("p")}, {s->Constant(0), s->Constant(2)}, -1.5));
  for (OpKind op : ops::kAllOpKinds) {
    if (!ops::IsReduce(op)) continue;
    const int code = static_cast<int>(op);  // alternates the axis and keepdims
    outs.push_back(t.Reduce(op, x, {code % 2 ? 1 : 0}, code % 2 == 0));
  }
  const Tensor* x3 = t.Reshape(x, {s->Var("b"), s->Var("n"), s->Constant(1)});
  outs.push_back(t.DotGeneral(x3, x3, trace::DotDims{{0}, {0}, {1}, {1}}));
  outs.push_back(t.Iota(DType::kI64, {s->Var("k"), s->Constant(2)}, 0));
  outs.push_back(t.LayerNorm(x, 1, 1e-5));
  outs.push_back(t.CumSum(x, 0));
  outs.push_back(t.Take(w, idx, 0));
  outs.push_back(t.Binary(OpKind::kMul, t.DimValue(s->Parse("2*b*n + k")), k));
  outs.push_back(t.Binary(OpKind::kAdd, big, big));
  outs.push_back(pad);
  std::vector<std::string> names;
  for (size_t i = 0; i < outs.size(); ++i) names.push_back("out" + std::to_string(i));
  return Program::FromTrace(t, {x, w, k, idx, pad}, outs, names);
}

TEST(Serialize, EveryOpRoundTripsByteIdentically) {
  auto p = EveryOp();
  std::string bytes = p->Serialize();
  EXPECT_EQ(bytes.substr(4, 4), "SHP1");
  auto q = Program::Load(bytes.data(), bytes.size());
  EXPECT_EQ(q->Serialize(), bytes);
  EXPECT_EQ(q->text(), p->text());
  EXPECT_EQ(q->buffers(), p->buffers());
  EXPECT_EQ(q->nodes().size(), p->nodes().size());
  for (size_t i = 0; i < p->outputs().size(); ++i)
    EXPECT_EQ(q->output_shape_string(i), p->output_shape_string(i));
  // And the loaded program works.
  ShapeCheck c = q->CheckShapes({"x", "w", "k", "idx", "pad"}, {{4, 6}, {6, 8}, {3}, {5}, {2}});
  EXPECT_EQ(c.output_shapes[2], (std::vector<int64_t>{12, 2}));
}

// Regression: empty integer-list attributes (dot_general without batch or contracting dims,
// transpose of a scalar, reduce of a scalar) serialized fine but failed to load as
// "misaligned vector": the alignment check looked at the data pointer of an empty vector.
TEST(Serialize, EmptyIntegerListsLoad) {
  auto s = dim::Scope::Create({}, {});
  trace::Trace t(s.get());
  const Tensor* a = t.Input("a", DType::kF32, "m, k");
  const Tensor* b = t.Input("b", DType::kF32, "k, n");
  const Tensor* v = t.Input("v", DType::kF32, "k");
  const Tensor* scalar = t.Input("s", DType::kF32, "");
  std::vector<const Tensor*> outs = {
      t.DotGeneral(a, b, trace::DotDims{{}, {}, {1}, {0}}),  // no batch dims: the common case
      t.DotGeneral(v, v, trace::DotDims{{}, {}, {}, {}}),    // outer product: nothing at all
      t.DotGeneral(a, b, trace::DotDims{{1}, {0}, {}, {}}),  // batch dims, no contracting dims
      t.Transpose(scalar, {}),
      t.Reduce(OpKind::kReduceSum, scalar, {}, false),
      t.Reduce(OpKind::kReduceMax, scalar, {}, true),
  };
  auto p =
      Program::FromTrace(t, {a, b, v, scalar}, outs, {"mm", "outer", "batch", "tr", "sum", "max"});
  std::string bytes = p->Serialize();
  std::unique_ptr<Program> q;
  try {
    q = Program::Load(bytes.data(), bytes.size());
  } catch (const Error& e) {
    FAIL() << "load failed: " << e.what();
  }
  EXPECT_EQ(q->Serialize(), bytes);
  ShapeCheck c = q->CheckShapes({"a", "b", "v", "s"}, {{2, 3}, {3, 4}, {3}, {}});
  EXPECT_EQ(c.output_shapes[0], (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(c.output_shapes[1], (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(c.output_shapes[2], (std::vector<int64_t>{3, 2, 4}));
  EXPECT_EQ(c.output_shapes[3], (std::vector<int64_t>{}));
  EXPECT_EQ(c.output_shapes[5], (std::vector<int64_t>{}));
}

TEST(Serialize, LargeConstantsAreCompressed) {
  auto p = EveryOp();
  std::string bytes = p->Serialize();
  auto root = shapepoly::fb::GetProgram(bytes.data());
  bool compressed = false;
  for (const shapepoly::fb::Buffer* b : *root->buffers()) {
    if (b->compression() == shapepoly::fb::Compression::ZLIB) {
      compressed = true;
      EXPECT_EQ(b->size(), 1024u);
      EXPECT_LT(b->data()->size(), 100u);
    }
  }
  EXPECT_TRUE(compressed);
}

TEST(Serialize, RejectsGarbageAndTruncation) {
  std::string bytes = EveryOp()->Serialize();
  EXPECT_EQ(Catch([&] { Program::Load("abc", 3); }).code(), Code::kInvalidProgram);
  Error e = Catch([&] { Program::Load("0123456789abcdef", 16); });
  EXPECT_EQ(e.code(), Code::kInvalidProgram);
  EXPECT_TRUE(Contains(e.message(), "not a shapepoly program"));
  for (size_t n : {size_t{8}, size_t{16}, bytes.size() / 2}) {
    EXPECT_EQ(Catch([&] { Program::Load(bytes.data(), n); }).code(), Code::kInvalidProgram) << n;
  }
  // Flipping bytes never crashes: every result is a program or a clean error.
  for (size_t i = 0; i < bytes.size(); i += 7) {
    std::string m = bytes;
    m[i] = static_cast<char>(m[i] ^ 0x5a);
    try {
      Program::Load(m.data(), m.size());
    } catch (const Error& err) {
      EXPECT_TRUE(err.code() == Code::kInvalidProgram || err.code() == Code::kVersionMismatch)
          << err.message();
    }
  }
}

// Builds a minimal program directly with FlatBuffers, to test the semantic verifier.
namespace fb = ::shapepoly::fb;

std::string Hostile(int variant, uint32_t version = kSchemaVersion) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<fb::Variable>> vars = {
      fb::CreateVariable(b, b.CreateString("n"))};
  std::vector<flatbuffers::Offset<fb::Dim>> dims;
  dims.push_back(fb::CreateDim(b, fb::DimOp::VAR, 0));    // 0: n
  dims.push_back(fb::CreateDim(b, fb::DimOp::CONST, 4));  // 1: 4
  std::vector<uint32_t> ops = {variant == 0 ? 3u : 0u, 1u};
  dims.push_back(fb::CreateDim(b, fb::DimOp::MUL, 0, b.CreateVector(ops)));  // 2: 4*n
  std::vector<uint32_t> shape = {variant == 1 ? 7u : 0u};
  std::vector<flatbuffers::Offset<fb::Input>> ins = {fb::CreateInput(
      b, b.CreateString("x"), fb::InputRole::DATA, fb::DType::F32, b.CreateVector(shape))};
  std::vector<uint32_t> operands = {variant == 2 ? 1u : 0u};
  std::vector<uint32_t> node_shape = {variant == 3 ? 2u : 0u};
  std::vector<flatbuffers::Offset<fb::Node>> nodes = {
      fb::CreateNode(b,
                     variant == 4   ? static_cast<fb::OpCode>(999)
                     : variant == 7 ? fb::OpCode::ERF    // added in schema version 4
                     : variant == 8 ? fb::OpCode::ATANH  // added in schema version 7
                                    : fb::OpCode::EXP,
                     b.CreateVector(operands), fb::DType::F32, b.CreateVector(node_shape))};
  std::vector<flatbuffers::Offset<fb::Output>> outs = {
      fb::CreateOutput(b, b.CreateString("y"), variant == 5 ? 9 : 1)};
  std::vector<flatbuffers::Offset<fb::SolveStep>> steps = {
      fb::CreateSolveStep(b, 0, 0, variant == 6 ? -1 : 0)};
  auto root = fb::CreateProgram(
      b, version, b.CreateString("test"), b.CreateVector(vars), b.CreateVector(dims), 0, 0,
      b.CreateVector(ins), b.CreateVector(outs), b.CreateVector(nodes), 0, b.CreateVector(steps));
  fb::FinishProgramBuffer(b, root);
  return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

// An op newer than the version a file declares is refused (an older reader would not know it),
// and a writer declares the version of the newest op it uses.
TEST(Serialize, OpsNeedTheSchemaVersionThatAddedThem) {
  EXPECT_EQ(OpSchemaVersion(OpKind::kReverse), 1u);
  EXPECT_EQ(OpSchemaVersion(OpKind::kScatterAdd), 2u);
  EXPECT_EQ(OpSchemaVersion(OpKind::kConv), 4u);
  EXPECT_EQ(OpSchemaVersion(OpKind::kReduceWindow), 4u);
  EXPECT_EQ(OpSchemaVersion(OpKind::kErf), 4u);
  std::string old = Hostile(7, 3);
  Error e = Catch([&] { Program::Load(old.data(), old.size()); });
  EXPECT_TRUE(Contains(e.message(),
                       "erf is an operation, a feature of schema version 4, but the "
                       "file declares version 3"))
      << e.message();
  std::string v4 = Hostile(7, 4);
  std::unique_ptr<Program> p = Program::Load(v4.data(), v4.size());
  EXPECT_EQ(p->SchemaVersionNeeded(), 4u);
  std::string again = p->Serialize();
  EXPECT_EQ(flatbuffers::GetRoot<fb::Program>(again.data())->schema_version(), 4u);
  EXPECT_EQ(OpSchemaVersion(OpKind::kTan), 7u);
  EXPECT_EQ(OpSchemaVersion(OpKind::kAtanh), 7u);
  std::string v6 = Hostile(8, 6);
  e = Catch([&] { Program::Load(v6.data(), v6.size()); });
  EXPECT_TRUE(Contains(e.message(),
                       "atanh is an operation, a feature of schema version 7, but the "
                       "file declares version 6"))
      << e.message();
  std::string v7 = Hostile(8, 7);
  EXPECT_EQ(Program::Load(v7.data(), v7.size())->SchemaVersionNeeded(), 7u);
}

TEST(Serialize, FutureVersionsAreVersionMismatch) {
  std::string bytes = Hostile(-1, kSchemaVersion + 1);
  Error e = Catch([&] { Program::Load(bytes.data(), bytes.size()); });
  EXPECT_EQ(e.code(), Code::kVersionMismatch);
  EXPECT_TRUE(Contains(e.message(), "schema version " + std::to_string(kSchemaVersion + 1)))
      << e.message();
  std::string other = EveryOp()->Serialize();
  other[7] = '2';  // "SHP2": a future incompatible format
  EXPECT_EQ(Catch([&] { Program::Load(other.data(), other.size()); }).code(),
            Code::kVersionMismatch);
}

TEST(Serialize, SemanticVerifierRejectsInconsistentPrograms) {
  std::string good = Hostile(-1);
  auto p = Program::Load(good.data(), good.size());
  EXPECT_EQ(p->output_shape_string(0), "(n,)");
  const char* expect[] = {"does not come before it",
                          "refers to a missing dimension",
                          "does not come before it",
                          "records the type f32(4*n,) but its operands give f32(n,)",
                          "unknown operation",
                          "refers to a missing value",
                          "solve recipe"};
  for (int v = 0; v <= 6; ++v) {
    std::string bad = Hostile(v);
    Error e = Catch([&] { Program::Load(bad.data(), bad.size()); });
    EXPECT_EQ(e.code(), Code::kInvalidProgram) << v;
    EXPECT_TRUE(Contains(e.message(), expect[v])) << v;
  }
}

// A fill default (schema version 11): x: f32[n], x.tangent: f32[n] (or f32[m], m found from no
// other input) with has_default_fill, y = exp(x).
std::string WithFill(double fill, uint32_t version = kSchemaVersion, bool own_variable = false,
                     fb::DType dtype = fb::DType::F32, bool with_buffer = false) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<fb::Variable>> vars = {
      fb::CreateVariable(b, b.CreateString("n")), fb::CreateVariable(b, b.CreateString("m"))};
  std::vector<flatbuffers::Offset<fb::Dim>> dims = {fb::CreateDim(b, fb::DimOp::VAR, 0),
                                                    fb::CreateDim(b, fb::DimOp::VAR, 1),
                                                    fb::CreateDim(b, fb::DimOp::CONST, 1)};
  // (With a default buffer: the constant shape (1,), which such a default needs.)
  std::vector<uint32_t> xs = {0}, ts = {with_buffer ? 2u : own_variable ? 1u : 0u};
  std::vector<flatbuffers::Offset<fb::Input>> ins = {
      fb::CreateInput(b, b.CreateString("x"), fb::InputRole::DATA, dtype, b.CreateVector(xs)),
      fb::CreateInput(b, b.CreateString("x.tangent"), fb::InputRole::TANGENT, dtype,
                      b.CreateVector(ts), -1, with_buffer ? 0 : -1, true, fill)};
  std::vector<uint32_t> operands = {0};
  std::vector<flatbuffers::Offset<fb::Node>> nodes = {
      fb::CreateNode(b, fb::OpCode::NEG, b.CreateVector(operands), dtype, b.CreateVector(xs))};
  std::vector<flatbuffers::Offset<fb::Output>> outs = {fb::CreateOutput(b, b.CreateString("y"), 2)};
  std::vector<flatbuffers::Offset<fb::SolveStep>> steps = {fb::CreateSolveStep(b, 0, 0, 0)};
  std::vector<flatbuffers::Offset<fb::Buffer>> buffers;
  if (with_buffer) {
    std::vector<uint8_t> four(4, 0);
    buffers.push_back(fb::CreateBuffer(b, fb::Compression::NONE, 4, b.CreateVector(four)));
  }
  auto root =
      fb::CreateProgram(b, version, b.CreateString("test"), b.CreateVector(vars),
                        b.CreateVector(dims), 0, 0, b.CreateVector(ins), b.CreateVector(outs),
                        b.CreateVector(nodes), b.CreateVector(buffers), b.CreateVector(steps));
  fb::FinishProgramBuffer(b, root);
  return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

TEST(Serialize, FillDefaultsLoadRoundTripAndAreVerified) {
  EXPECT_GE(kSchemaVersion, 11u);  // fill defaults are version 11
  std::string good = WithFill(1.0);
  std::unique_ptr<Program> p = Program::Load(good.data(), good.size());
  ASSERT_TRUE(p->inputs()[1].has_fill);
  EXPECT_EQ(p->inputs()[1].fill, 1.0);
  EXPECT_TRUE(p->inputs()[1].has_default());
  EXPECT_EQ(p->SchemaVersionNeeded(), 11u);
  const std::string written = p->Serialize();
  EXPECT_EQ(flatbuffers::GetRoot<fb::Program>(written.data())->schema_version(), 11u);
  EXPECT_EQ(Program::Load(written.data(), written.size())->Serialize(), written);
  EXPECT_TRUE(Contains(p->text(), "input 'x.tangent' (tangent) with the default fill 1 : f32[n]"))
      << p->text();
  // A fill of 0 (the field's default value) is still a fill default.
  std::string zero = WithFill(0.0);
  std::unique_ptr<Program> z = Program::Load(zero.data(), zero.size());
  EXPECT_TRUE(z->inputs()[1].has_fill);
  const std::string zero_written = z->Serialize();
  EXPECT_TRUE(Program::Load(zero_written.data(), zero_written.size())->inputs()[1].has_fill);

  struct Bad {
    std::string bytes;
    const char* message;
  };
  const Bad bad[] = {
      {WithFill(1.0, 10),
       "input 1 has a fill default, a feature of schema version 11, but the file declares "
       "version 10"},
      {WithFill(std::nan("")), "input 1: the fill default is nan, which is not a finite f32 value"},
      {WithFill(1e39), "is 1e+39, which is not a finite f32 value"},
      {WithFill(-INFINITY, kSchemaVersion, false, fb::DType::F64),
       "is -inf, which is not a finite f64 value"},
      {WithFill(1.5, kSchemaVersion, false, fb::DType::I32),
       "is 1.5, which is not exactly a i32 value"},
      {WithFill(2, kSchemaVersion, false, fb::DType::BOOL), "is not a bool value (0 or 1)"},
      {WithFill(1.0, kSchemaVersion, true),
       "input 'x.tangent' cannot have a fill default: its shape uses the variable 'm', which no "
       "other input determines"},
      {WithFill(1.0, kSchemaVersion, false, fb::DType::F32, true),
       "input 1 has both a default value and a fill default"},
  };
  for (const Bad& b : bad) {
    Error e = Catch([&] { Program::Load(b.bytes.data(), b.bytes.size()); });
    EXPECT_EQ(e.code(), Code::kInvalidProgram) << b.message;
    EXPECT_TRUE(Contains(e.message(), b.message)) << e.message();
  }
  // Integer and bool fills that are exact load.
  std::string i32 = WithFill(-2147483648.0, kSchemaVersion, false, fb::DType::I32);
  EXPECT_EQ(Program::Load(i32.data(), i32.size())->inputs()[1].fill, -2147483648.0);
  std::string i32_over = WithFill(2147483648.0, kSchemaVersion, false, fb::DType::I32);
  EXPECT_EQ(Catch([&] { Program::Load(i32_over.data(), i32_over.size()); }).code(),
            Code::kInvalidProgram);
}

}  // namespace
}  // namespace program
}  // namespace shp
