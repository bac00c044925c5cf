// Loading hostile files: decompression bombs are rejected from the declared sizes before
// anything is inflated (LoadOptions::max_bytes), and names the C API could not carry (NUL
// bytes) or the tracer would not make are rejected with the entry named.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/base/testing.h"
#include "cc/program/program.h"
#include "cc/trace/trace.h"
#include "flatbuffers/program_generated.h"

namespace shp {
namespace program {
namespace {

namespace fb = ::shapepoly::fb;
using ::shp::testing::Catch;
using ::shp::testing::Contains;
using trace::DType;
using trace::Tensor;

// A program file whose buffers are `num_buffers` Buffer tables that all share one data vector
// (FlatBuffers allows shared offsets), each declaring `declared` bytes. With a real zlib
// stream this is a decompression bomb: the stream is stored once, inflated once per buffer.
std::string SharedBufferFile(const std::string& stream, uint64_t declared, size_t num_buffers) {
  flatbuffers::FlatBufferBuilder b;
  b.ForceVectorAlignment(stream.size(), 1, 16);
  auto data = b.CreateVector(reinterpret_cast<const uint8_t*>(stream.data()), stream.size());
  std::vector<flatbuffers::Offset<fb::Buffer>> bufs;
  for (size_t i = 0; i < num_buffers; ++i)
    bufs.push_back(fb::CreateBuffer(b, fb::Compression::ZLIB, declared, data));
  auto root = fb::CreateProgram(b, kSchemaVersion, b.CreateString("bomb"), 0, 0, 0, 0, 0, 0, 0,
                                b.CreateVector(bufs));
  fb::FinishProgramBuffer(b, root);
  return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

std::string Deflate(const std::string& data) {
  uLongf cap = compressBound(static_cast<uLong>(data.size()));
  std::string z(cap, '\0');
  EXPECT_EQ(
      compress2(reinterpret_cast<Bytef*>(&z[0]), &cap, reinterpret_cast<const Bytef*>(data.data()),
                static_cast<uLong>(data.size()), Z_BEST_COMPRESSION),
      Z_OK);
  z.resize(cap);
  return z;
}

double LoadMillis(const std::string& bytes, const LoadOptions& options, Error* error) {
  auto start = std::chrono::steady_clock::now();
  *error = Catch([&] { Program::Load(bytes.data(), bytes.size(), options); });
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// Regression: each buffer was inflated (up to 1 GiB each, 4 GiB in all) before the total was
// known: a ~1 MB file took seconds and gigabytes. Now the declared total is checked first.
TEST(Load, DecompressionBombIsRejectedBeforeInflating) {
  // A valid zlib stream of 16 MiB of zeros (~16 KB), shared by 64k buffers: 1 TiB declared.
  const uint64_t each = uint64_t{16} << 20;
  std::string bomb = SharedBufferFile(Deflate(std::string(each, '\0')), each, 65536);
  EXPECT_GT(bomb.size(), size_t{1} << 20);
  EXPECT_LT(bomb.size(), size_t{2} << 20);
  Error e(Code::kOk, "");
  double ms = LoadMillis(bomb, LoadOptions(), &e);
  std::printf("a %zu-byte file declaring %llu bytes was rejected in %.2f ms\n", bomb.size(),
              static_cast<unsigned long long>(each * 65536), ms);
  EXPECT_EQ(e.code(), Code::kInvalidProgram);
  EXPECT_TRUE(Contains(e.message(), "max_bytes = 1073741824")) << e.message();
  EXPECT_TRUE(Contains(e.message(), "shp_load_options_set_max_bytes")) << e.message();
  EXPECT_LT(ms, 500.0);  // the bound is < 50 ms; generous here for sanitizers and busy machines

  // One buffer above the cap, backed by data the stream could not even inflate: still
  // rejected from the declared size alone (before the fix: 1 GiB was allocated first).
  std::string one = SharedBufferFile(std::string(1040500, 'x'), uint64_t{1} << 30, 2);
  ms = LoadMillis(one, LoadOptions{uint64_t{512} << 20}, &e);
  EXPECT_EQ(e.code(), Code::kInvalidProgram);
  EXPECT_TRUE(Contains(e.message(), "buffer 0 declares 1073741824 bytes")) << e.message();
  EXPECT_TRUE(Contains(e.message(), "max_bytes = 536870912")) << e.message();
  EXPECT_LT(ms, 500.0);
  // With the default cap the first buffer fits and the total does not.
  ms = LoadMillis(one, LoadOptions(), &e);
  EXPECT_TRUE(Contains(e.message(), "buffers 0..1")) << e.message();
  EXPECT_LT(ms, 500.0);
}

// A program with two constants (one compressed), its serialized bytes and their total.
struct Constants {
  std::string bytes;
  uint64_t total = 0;
};
Constants TwoConstants() {
  auto s = dim::Scope::Create({}, {});
  trace::Trace t(s.get());
  const Tensor* x = t.Input("x", DType::kF32, "4096");
  std::vector<float> ones(4096, 1.0f), ramp(8);
  for (size_t i = 0; i < ramp.size(); ++i) ramp[i] = static_cast<float>(i);
  const Tensor* big = t.Constant(DType::kF32, {4096}, ones.data(), 4096 * 4);
  const Tensor* small = t.Constant(DType::kF32, {8}, ramp.data(), 8 * 4);
  auto p = Program::FromTrace(t, {x}, {t.Binary(trace::OpKind::kAdd, x, big), small},
                              {"out_yy", "out_zz"});
  return {p->Serialize(), 4096 * 4 + 8 * 4};
}

TEST(Load, FileJustUnderTheCapLoads) {
  Constants c = TwoConstants();
  std::unique_ptr<Program> p = Program::Load(c.bytes.data(), c.bytes.size(), LoadOptions{c.total});
  EXPECT_EQ(p->buffers().size(), 2u);
  EXPECT_EQ(p->buffers()[0].size() + p->buffers()[1].size(), c.total);
  EXPECT_EQ(p->Serialize(), c.bytes);
  Error e = Catch([&] { Program::Load(c.bytes.data(), c.bytes.size(), LoadOptions{c.total - 1}); });
  EXPECT_EQ(e.code(), Code::kInvalidProgram);
  EXPECT_TRUE(Contains(e.message(), "max_bytes = " + std::to_string(c.total - 1))) << e.message();
  e = Catch([&] { Program::Load(c.bytes.data(), c.bytes.size(), LoadOptions{4096 * 4 - 1}); });
  EXPECT_TRUE(Contains(e.message(), "buffer 0 declares 16384 bytes")) << e.message();
  // A zero cap still loads programs without constants.
  auto s = dim::Scope::Create({}, {});
  trace::Trace t(s.get());
  const Tensor* x = t.Input("x", DType::kF32, "n");
  std::string plain =
      Program::FromTrace(t, {x}, {t.Unary(trace::OpKind::kNeg, x)}, {"y"})->Serialize();
  EXPECT_EQ(Program::Load(plain.data(), plain.size(), LoadOptions{0})->inputs().size(), 1u);
}

// Every cheap check runs before inflation: a file whose constant stream is corrupt and whose
// output is invalid reports the output (before: the stream, after inflating it).
TEST(Load, SemanticChecksComeBeforeInflation) {
  Constants c = TwoConstants();
  auto root = fb::GetProgram(c.bytes.data());
  const fb::Buffer* zbuf = root->buffers()->Get(0);
  ASSERT_EQ(zbuf->compression(), fb::Compression::ZLIB);
  size_t data_at =
      static_cast<size_t>(zbuf->data()->data() - reinterpret_cast<const uint8_t*>(c.bytes.data()));
  std::string bad = c.bytes;
  for (size_t i = 2; i < zbuf->data()->size(); ++i) bad[data_at + i] = '\xff';
  Error e = Catch([&] { Program::Load(bad.data(), bad.size()); });
  EXPECT_TRUE(Contains(e.message(), "not a valid zlib stream")) << e.message();
  // Now also give output 0 a name with a NUL byte: that is reported, not the stream.
  size_t name_at = bad.find("out_yy");
  ASSERT_NE(name_at, std::string::npos);
  bad[name_at + 3] = '\0';
  e = Catch([&] { Program::Load(bad.data(), bad.size()); });
  EXPECT_EQ(e.code(), Code::kInvalidProgram);
  EXPECT_TRUE(Contains(e.message(), "output 0 has the name")) << e.message();
}

// ---- Names ----

// `bytes` with the one occurrence of `from` replaced by `to` (same length).
std::string Patch(const std::string& bytes, const std::string& from, const std::string& to) {
  size_t at = bytes.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  EXPECT_EQ(bytes.find(from, at + 1), std::string::npos) << from << " occurs twice";
  std::string out = bytes;
  out.replace(at, from.size(), to);
  return out;
}

std::string NamedProgram() {
  auto s = dim::Scope::Create({}, {});
  trace::Trace t(s.get());
  const Tensor* x = t.Input("in_x", DType::kF32, "wvar, avar");
  const Tensor* k = t.DimInput("kdim");
  s->Check(s->Var("avar"), dim::Cmp::kLe, s->Constant(4096), "msg_q");
  return Program::FromTrace(t, {x, k}, {t.Unary(trace::OpKind::kNeg, x)}, {"out_y"})->Serialize();
}

Error LoadError(const std::string& bytes) {
  return Catch([&] { Program::Load(bytes.data(), bytes.size()); });
}

// Regression: names with NUL bytes loaded, then read truncated through the C API ("in") and
// could not be bound; names the tracer cannot make are rejected too, naming the entry.
TEST(Load, NamesWithNulBytesAreRejected) {
  std::string good = NamedProgram();
  EXPECT_EQ(Program::Load(good.data(), good.size())->inputs()[0].name, "in_x");

  Error e = LoadError(Patch(good, "in_x", std::string("in\0x", 4)));
  EXPECT_EQ(e.code(), Code::kInvalidProgram);
  EXPECT_TRUE(Contains(e.message(), "input 0 has the name 'in\\x00x'")) << e.message();
  EXPECT_TRUE(Contains(e.message(), "NUL")) << e.message();
  EXPECT_EQ(e.message().find('\0'), std::string::npos);

  e = LoadError(Patch(good, "out_y", std::string("out\0y", 5)));
  EXPECT_EQ(e.code(), Code::kInvalidProgram);
  EXPECT_TRUE(Contains(e.message(), "output 0 has the name 'out\\x00y'")) << e.message();

  e = LoadError(Patch(good, "wvar", std::string("w\0ar", 4)));
  EXPECT_EQ(e.code(), Code::kInvalidProgram);
  EXPECT_TRUE(Contains(e.message(), "variable 1 has the name 'w\\x00ar'")) << e.message();
  EXPECT_EQ(e.message().find('\0'), std::string::npos);

  e = LoadError(Patch(good, "msg_q", std::string("msg\0q", 5)));
  EXPECT_EQ(e.code(), Code::kInvalidProgram);
  EXPECT_TRUE(Contains(e.message(), "assertion 0 has a message with a NUL byte")) << e.message();
}

TEST(Load, NamesTheTracerWouldRejectAreRejected) {
  std::string good = NamedProgram();
  // Control characters and invalid UTF-8 (messages quote names: they must stay UTF-8).
  Error bad = LoadError(Patch(good, "in_x", std::string("in\x1bx", 4)));
  EXPECT_EQ(bad.code(), Code::kInvalidProgram);
  EXPECT_TRUE(Contains(bad.message(), "control character 27")) << bad.message();
  bad = LoadError(Patch(good, "out_y", std::string("out\xffy", 5)));
  EXPECT_TRUE(Contains(bad.message(), "not valid UTF-8")) << bad.message();
  EXPECT_EQ(bad.message().find('\xff'), std::string::npos);
  // Programs refuse such output names when they are made, too.
  auto sc = dim::Scope::Create({}, {});
  trace::Trace t(sc.get());
  const Tensor* x = t.Input("x", DType::kF32, "3");
  bad = Catch([&] { Program::FromTrace(t, {x}, {x}, {"y\tz"}); });
  EXPECT_TRUE(Contains(bad.message(), "control character 9")) << bad.message();
  Error e = LoadError(Patch(good, "wvar", "w-ar"));  // not a dimension variable name
  EXPECT_EQ(e.code(), Code::kInvalidProgram);
  EXPECT_TRUE(Contains(e.message(), "variable 1 has the name 'w-ar'")) << e.message();
  std::string other = Patch(good, "wvar", "v_42");  // a valid name loads
  std::vector<std::string> vars = Program::Load(other.data(), other.size())->variable_names();
  EXPECT_NE(std::find(vars.begin(), vars.end(), "v_42"), vars.end());
  // A dimension input is named after its variable; "kdim" is both the variable and the input.
  size_t first = good.find("kdim");
  ASSERT_NE(first, std::string::npos);
  ASSERT_NE(good.find("kdim", first + 1), std::string::npos);
  for (size_t at : {first, good.find("kdim", first + 1)}) {
    std::string bad = good;
    bad[at + 3] = 'x';  // "kdix"
    e = LoadError(bad);
    EXPECT_EQ(e.code(), Code::kInvalidProgram);
    EXPECT_TRUE(Contains(e.message(), "input 1 is named")) << e.message();
  }
}

// ---- Bool constants ----

// Regression: a bool constant with a byte other than 0/1 loaded (tracing rejects it), and then
// `x and not x` could be true.
TEST(Load, BoolConstantBytesOtherThanZeroOrOneAreRejected) {
  const uint8_t mask[16] = {1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1, 0, 0, 0, 1, 1};
  auto s = dim::Scope::Create({}, {});
  trace::Trace t(s.get());
  const Tensor* x = t.Input("x", DType::kBool, "16");
  const Tensor* k = t.Constant(DType::kBool, {16}, mask, sizeof(mask));
  std::string good =
      Program::FromTrace(t, {x}, {t.Binary(trace::OpKind::kAnd, x, k)}, {"y"})->Serialize();
  EXPECT_EQ(Program::Load(good.data(), good.size())->nodes().size(), 2u);

  std::string raw(reinterpret_cast<const char*>(mask), sizeof(mask));
  std::string bad_byte = raw;
  bad_byte[5] = 2;
  Error e = LoadError(Patch(good, raw, bad_byte));
  EXPECT_EQ(e.code(), Code::kInvalidProgram);
  EXPECT_TRUE(Contains(e.message(), "a bool constant) has the byte 2 at element 5")) << e.message();
  EXPECT_TRUE(Contains(e.message(), "must be 0 or 1")) << e.message();
  bad_byte[5] = static_cast<char>(0xff);
  e = LoadError(Patch(good, raw, bad_byte));
  EXPECT_TRUE(Contains(e.message(), "has the byte 255 at element 5")) << e.message();
}

}  // namespace
}  // namespace program
}  // namespace shp
