// Program metadata: string key/value pairs saved with the program (schema version 14).
#include <algorithm>
#include <string>

#include "cc/base/error.h"
#include "cc/base/limits.h"
#include "cc/dim/parse.h"
#include "cc/program/program.h"
#include "cc/trace/trace.h"

namespace shp {
namespace program {

namespace {

// The byte offset of the first byte of `text` that does not begin a valid UTF-8 character
// (overlong forms, surrogates and code points past U+10FFFF are invalid) or is NUL;
// text.size() if there is none.
size_t FirstBadUtf8(const std::string& text) {
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == 0) return i;
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = 0;
    unsigned char lo = 0x80, hi = 0xbf;  // the allowed range of the second byte
    if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      if (c == 0xe0) lo = 0xa0;  // no overlong forms
      if (c == 0xed) hi = 0x9f;  // no surrogates
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      if (c == 0xf0) lo = 0x90;  // no overlong forms
      if (c == 0xf4) hi = 0x8f;  // at most U+10FFFF
    } else {
      return i;
    }
    if (n - i < len) return i;
    for (size_t k = 1; k < len; ++k) {
      const unsigned char d = static_cast<unsigned char>(text[i + k]);
      if (k == 1 ? (d < lo || d > hi) : (d < 0x80 || d > 0xbf)) return i;
    }
    i += len;
  }
  return n;
}

std::string Bytes(size_t n) { return std::to_string(n) + (n == 1 ? " byte" : " bytes"); }

}  // namespace

std::string MetadataEntryProblem(const std::string& key, const std::string& value) {
  if (key.empty()) return "a metadata key must not be empty";
  if (key.size() > limits::kMaxMetadataKeyBytes) {
    return "the metadata key " + dim::QuoteForMessage(key) + " has " + Bytes(key.size()) +
           ", above the limit of " + std::to_string(limits::kMaxMetadataKeyBytes);
  }
  const std::string key_problem = trace::NameProblem(key);
  if (!key_problem.empty()) {
    return "the metadata key " + dim::QuoteForMessage(key) + " " + key_problem +
           " (keys are printable UTF-8)";
  }
  if (value.size() > limits::kMaxMetadataValueBytes) {
    return "the value of metadata key '" + key + "' has " + Bytes(value.size()) +
           ", above the limit of " + std::to_string(limits::kMaxMetadataValueBytes) + " (1 MiB)";
  }
  const size_t bad = FirstBadUtf8(value);
  if (bad < value.size()) {
    return "the value of metadata key '" + key + "' is not UTF-8 without NUL (byte " +
           std::to_string(bad) + ")";
  }
  return "";
}

const std::string* Program::metadata_value(const std::string& key) const {
  auto it = std::lower_bound(metadata_.begin(), metadata_.end(), key,
                             [](const std::pair<std::string, std::string>& e,
                                const std::string& k) { return e.first < k; });
  return it != metadata_.end() && it->first == key ? &it->second : nullptr;
}

std::unique_ptr<Program> Program::WithMetadata(const std::string& key,
                                               const std::string* value) const {
  const std::string problem = MetadataEntryProblem(key, value ? *value : std::string());
  if (!problem.empty()) throw Error(Code::kInvalidArgument, "with_metadata: " + problem);
  Metadata m = metadata_;
  auto it = std::lower_bound(m.begin(), m.end(), key,
                             [](const std::pair<std::string, std::string>& e,
                                const std::string& k) { return e.first < k; });
  const bool present = it != m.end() && it->first == key;
  if (value == nullptr) {
    if (present) m.erase(it);
  } else if (present) {
    it->second = *value;
  } else {
    if (m.size() >= limits::kMaxMetadataEntries) {
      throw Error(Code::kInvalidArgument, "with_metadata: the program already has " +
                                              std::to_string(limits::kMaxMetadataEntries) +
                                              " metadata entries, the limit; cannot add the key '" +
                                              key + "'");
    }
    m.insert(it, {key, *value});
  }
  // Programs are immutable: a copy (sharing the scope and its lock) with the new metadata.
  std::unique_ptr<Program> out(new Program(*this));
  out->metadata_ = std::move(m);
  return out;
}

std::unique_ptr<Program> Program::WithMetadataOf(std::unique_ptr<Program> p,
                                                 const Program& source) {
  if (p) p->metadata_ = source.metadata_;
  return p;
}

}  // namespace program
}  // namespace shp
