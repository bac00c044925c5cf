// Program metadata (schema version 14): set, saved, loaded back, and hostile files refused.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "cc/base/error.h"
#include "cc/base/limits.h"
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

std::unique_ptr<Program> Small() {
  auto s = dim::Scope::Create({}, {});
  trace::Trace t(s.get());
  const Tensor* x = t.Input("x", DType::kF32, "n, 3");
  return Program::FromTrace(t, {x}, {t.Unary(trace::OpKind::kNeg, x)}, {"y"});
}

std::unique_ptr<Program> Load(const std::string& bytes) {
  return Program::Load(bytes.data(), bytes.size());
}

Error LoadError(const std::string& bytes) {
  return Catch([&] { Program::Load(bytes.data(), bytes.size()); });
}

std::string Patch(const std::string& bytes, const std::string& from, const std::string& to) {
  size_t at = bytes.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  EXPECT_EQ(bytes.find(from, at + 1), std::string::npos) << from << " occurs twice";
  std::string out = bytes;
  out.replace(at, from.size(), to);
  return out;
}

// A program file with no inputs, outputs or nodes and the given metadata entries, declaring
// schema version `version`.
std::string BareFile(const std::vector<std::pair<std::string, std::string>>& entries,
                     uint32_t version = kSchemaVersion) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<fb::KeyValue>> kvs;
  for (const auto& e : entries) {
    auto value = b.CreateString(e.second);
    auto key = b.CreateString(e.first);
    kvs.push_back(fb::CreateKeyValue(b, key, value));
  }
  auto md = b.CreateVector(kvs);
  auto producer = b.CreateString("test");
  auto root = fb::CreateProgram(b, version, producer, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, md);
  fb::FinishProgramBuffer(b, root);
  return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

TEST(Metadata, SavedLoadedAndCanonical) {
  std::unique_ptr<Program> p = Small();
  EXPECT_TRUE(p->metadata().empty());
  const std::string plain = p->Serialize();
  EXPECT_EQ(p->SchemaVersionNeeded(), 1u);
  const std::string one = "1", two = "{\"x\": \"\xc3\xa9\\n\"}\n";
  std::unique_ptr<Program> ab = p->WithMetadata("b", &two)->WithMetadata("a.b", &one);
  std::unique_ptr<Program> ba = p->WithMetadata("a.b", &one)->WithMetadata("b", &two);
  EXPECT_TRUE(p->metadata().empty());  // unchanged
  ASSERT_EQ(ab->metadata().size(), 2u);
  EXPECT_EQ(ab->metadata()[0].first, "a.b");  // in increasing key order
  EXPECT_EQ(ab->metadata()[1].second, two);
  EXPECT_EQ(ab->SchemaVersionNeeded(), 14u);
  const std::string bytes = ab->Serialize();
  EXPECT_EQ(bytes, ba->Serialize());  // the same program and metadata: the same bytes
  std::unique_ptr<Program> loaded = Load(bytes);
  EXPECT_EQ(loaded->metadata(), ab->metadata());
  EXPECT_EQ(loaded->Serialize(), bytes);
  ASSERT_NE(loaded->metadata_value("b"), nullptr);
  EXPECT_EQ(*loaded->metadata_value("b"), two);
  EXPECT_EQ(loaded->metadata_value("c"), nullptr);
  EXPECT_EQ(loaded->metadata_value("a"), nullptr);
  // Replacing a value, removing keys (present or not): back to the program without metadata,
  // written as before (version 1, the same bytes).
  const std::string three = "3";
  EXPECT_EQ(*loaded->WithMetadata("b", &three)->metadata_value("b"), "3");
  std::unique_ptr<Program> none = loaded->WithMetadata("b", nullptr)->WithMetadata("a.b", nullptr);
  EXPECT_TRUE(none->metadata().empty());
  EXPECT_EQ(none->Serialize(), plain);
  EXPECT_EQ(loaded->WithMetadata("zz", nullptr)->metadata(), loaded->metadata());
  // An empty value is a value.
  const std::string empty;
  EXPECT_EQ(p->WithMetadata("k", &empty)->metadata().size(), 1u);
}

// The copy shares the original's scope: it outlives the original, checks shapes, serializes
// and replays on its own, also from several threads at once with the original.
TEST(Metadata, TheCopyIsAProgramOfItsOwn) {
  std::unique_ptr<Program> p = Small();
  const std::string plain = p->Serialize();
  const std::string v = "v";
  std::unique_ptr<Program> q = p->WithMetadata("k", &v);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      const Program& r = t % 2 ? *p : *q;
      for (int i = 1; i < 50; ++i) {
        ShapeCheck c = r.CheckShapes({"x"}, {{i, 3}});
        EXPECT_EQ(c.output_shapes[0], (std::vector<int64_t>{i, 3}));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  p.reset();
  ShapeCheck c = q->CheckShapes({"x"}, {{7, 3}});
  EXPECT_EQ(c.var_values, std::vector<int64_t>{7});
  Error e = Catch([&] { q->CheckShapes({"x"}, {{7, 4}}); });
  EXPECT_EQ(e.code(), Code::kShapeMismatch);
  std::unique_ptr<Program> back = Load(q->Serialize());
  EXPECT_EQ(back->WithMetadata("k", nullptr)->Serialize(), plain);
  EXPECT_EQ(q->text(), back->text());
  Replay r = q->ReplayIntoTrace();
  EXPECT_EQ(r.inputs.size(), 1u);
}

TEST(Metadata, BuilderLimitsNameTheArgument) {
  std::unique_ptr<Program> p = Small();
  const std::string v = "v";
  auto refused = [&](const std::string& key, const std::string& value, const std::string& what) {
    Error e = Catch([&] { p->WithMetadata(key, &value); });
    EXPECT_EQ(e.code(), Code::kInvalidArgument) << key;
    EXPECT_TRUE(Contains(e.message(), what)) << e.message();
  };
  refused("", v, "key must not be empty");
  refused(std::string(257, 'k'), v, "has 257 bytes, above the limit of 256");
  EXPECT_EQ(p->WithMetadata(std::string(256, 'k'), &v)->metadata().size(), 1u);
  refused("a\tb", v, "control character 9");
  refused("a\xff", v, "not valid UTF-8");
  refused("k", std::string((size_t{1} << 20) + 1, 'v'), "above the limit of 1048576 (1 MiB)");
  const std::string mib(size_t{1} << 20, 'v');
  EXPECT_EQ(p->WithMetadata("k", &mib)->metadata_value("k")->size(), size_t{1} << 20);
  refused("k", std::string("a\0b", 3), "not UTF-8 without NUL (byte 1)");
  refused("k", "\xed\xa0\x80", "not UTF-8");  // a surrogate
  refused("k", "\xc0\xaf", "not UTF-8");      // overlong
  refused("k", "\xe2\x82", "not UTF-8");      // truncated
  const std::string emoji = "\xf0\x9f\x98\x80";
  EXPECT_EQ(*p->WithMetadata("k", &emoji)->metadata_value("k"), emoji);
}

TEST(Metadata, AtMost1024Entries) {
  std::vector<std::pair<std::string, std::string>> entries;
  for (int i = 0; i < 1024; ++i) {
    char key[16];
    std::snprintf(key, sizeof key, "k%04d", i);
    entries.push_back({key, "v"});
  }
  std::unique_ptr<Program> full = Load(BareFile(entries));
  EXPECT_EQ(full->metadata().size(), 1024u);
  const std::string v = "v";
  Error e = Catch([&] { full->WithMetadata("z", &v); });
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(e.message(), "1024 metadata entries, the limit")) << e.message();
  EXPECT_EQ(full->WithMetadata("k0000", &v)->metadata().size(), 1024u);  // replacing is fine
  entries.push_back({"z", "v"});
  e = LoadError(BareFile(entries));
  EXPECT_EQ(e.code(), Code::kInvalidProgram);
  EXPECT_TRUE(Contains(e.message(), "1025 metadata entries, at most 1024")) << e.message();
}

TEST(Metadata, HostileFilesAreRefused) {
  std::unique_ptr<Program> p = Small();
  const std::string a = "va", b = "vb";
  const std::string good = p->WithMetadata("ka", &a)->WithMetadata("kb", &b)->Serialize();
  ASSERT_EQ(Load(good)->metadata().size(), 2u);
  auto refused = [&](const std::string& bytes, const std::string& what) {
    Error e = LoadError(bytes);
    EXPECT_EQ(e.code(), Code::kInvalidProgram) << what;
    EXPECT_TRUE(Contains(e.message(), what)) << e.message();
  };
  refused(Patch(good, "kb", "ka"), "the key 'ka' appears twice");
  refused(Patch(good, "ka", "kc"), "the key 'kb' comes after 'kc'");
  refused(Patch(good, "ka", std::string("k\0", 2)), "contains the control character 0");
  refused(Patch(good, "vb", std::string("v\0", 2)), "not UTF-8 without NUL");
  refused(Patch(good, "vb", "v\xff"), "not UTF-8");
  // Entries past the limits (files no builder writes).
  refused(BareFile({{std::string(257, 'k'), "v"}}), "its key has 257 bytes");
  refused(BareFile({{"k", std::string((size_t{1} << 20) + 1, 'v')}}), "value 1048577");
  refused(BareFile({{"", "v"}}), "key must not be empty");
  // Metadata in a file that declares an older version.
  refused(BareFile({{"k", "v"}}, 13), "a feature of schema version 14");
  EXPECT_EQ(Load(BareFile({{"k", "v"}}))->metadata().size(), 1u);
}

}  // namespace
}  // namespace program
}  // namespace shp
