// The constants of a loaded program (Program::Loader, program_load.h): their declared sizes
// against the format's limits and the caller's cap before anything is allocated, their
// inflation last, and the bytes of bool constants and defaults.
#include <zlib.h>

#include <cstdint>
#include <new>
#include <string>

#include "cc/ops/limits.h"
#include "cc/ops/op_def.h"
#include "cc/program/program.h"
#include "cc/program/program_load.h"
#include "flatbuffers/program_generated.h"

namespace shp {
namespace program {

using loading::Bad;
using loading::Len;
using trace::OpKind;

void Program::Loader::CheckBuffers() {
  const uint64_t cap = options.max_bytes;
  const std::string cap_text = "the load cap max_bytes = " + std::to_string(cap) +
                               " bytes (LoadOptions::max_bytes, shp_load_options_set_max_bytes)";
  uint64_t total = 0;
  for (size_t i = 0; i < Len(r->buffers()); ++i) {
    const fb::Buffer* bf = r->buffers()->Get(static_cast<flatbuffers::uoffset_t>(i));
    std::string where = "buffer " + std::to_string(i);
    uint64_t want = bf->size();
    size_t have = Len(bf->data());
    if (want > ops::kMaxConstantBytes) {
      Bad(where + " declares " + std::to_string(want) + " bytes, above the format's limit of " +
          std::to_string(ops::kMaxConstantBytes) + " bytes per constant");
    }
    if (want > cap) Bad(where + " declares " + std::to_string(want) + " bytes, above " + cap_text);
    total += want;  // at most 2^30 per buffer and fewer than 2^31 buffers: no overflow
    if (total > ops::kMaxTotalConstantBytes) {
      Bad("the constants declare more than the format's limit of " +
          std::to_string(ops::kMaxTotalConstantBytes) + " bytes in total (at buffer " +
          std::to_string(i) + ")");
    }
    if (total > cap) {
      Bad("the constants declare at least " + std::to_string(total) + " bytes (buffers 0.." +
          std::to_string(i) + "), above " + cap_text);
    }
    if (bf->compression() == fb::Compression::NONE) {
      if (have != want)
        Bad(where + " holds " + std::to_string(have) + " bytes but records " +
            std::to_string(want));
    } else if (bf->compression() == fb::Compression::ZLIB) {
      // zlib cannot expand more than ~1032:1; refuse sizes the stream cannot produce.
      if (want > uint64_t{have} * 1032 + 64)
        Bad(where + " records an impossible uncompressed size");
    } else {
      Bad(where + " has an unknown compression");
    }
    buffer_sizes.push_back(want);
  }
}

void Program::Loader::InflateBuffers() {
  for (size_t i = 0; i < buffer_sizes.size(); ++i) {
    const fb::Buffer* bf = r->buffers()->Get(static_cast<flatbuffers::uoffset_t>(i));
    const uint64_t want = buffer_sizes[i];
    const size_t have = Len(bf->data());
    const Bytef* in = reinterpret_cast<const Bytef*>(bf->data() ? bf->data()->data() : nullptr);
    std::string out;
    if (bf->compression() == fb::Compression::NONE) {
      out.assign(reinterpret_cast<const char*>(in), have);
    } else {
      out.assign(static_cast<size_t>(want), '\0');
      uLongf got = static_cast<uLongf>(want);
      int rc = uncompress(reinterpret_cast<Bytef*>(want ? &out[0] : nullptr), &got, in,
                          static_cast<uLong>(have));
      if (rc == Z_MEM_ERROR) throw std::bad_alloc();  // not the file's fault
      if (want == 0 && rc == Z_BUF_ERROR) rc = Z_OK;
      if (rc != Z_OK || got != want) {
        Bad("buffer " + std::to_string(i) + " is not a valid zlib stream of " +
            std::to_string(want) + " bytes");
      }
    }
    p->buffers_.push_back(std::move(out));
  }
}

void Program::Loader::CheckBoolConstants() {
  for (size_t i = 0; i < p->inputs_.size(); ++i) {
    const Input& in = p->inputs_[i];
    if (in.default_buffer < 0 || in.type.dtype != trace::DType::kBool) continue;
    const std::string& bytes = p->buffers_[static_cast<size_t>(in.default_buffer)];
    for (size_t k = 0; k < bytes.size(); ++k) {
      if (static_cast<unsigned char>(bytes[k]) > 1) {
        Bad("input " + std::to_string(i) + " has a bool default with the byte " +
            std::to_string(static_cast<unsigned char>(bytes[k])) + " at element " +
            std::to_string(k) + " (bool elements must be 0 or 1)");
      }
    }
  }
  for (size_t i = 0; i < p->nodes_.size(); ++i) {
    const Node& n = p->nodes_[i];
    if (n.op != OpKind::kConstant || n.type.dtype != trace::DType::kBool) continue;
    const int32_t buffer = std::get<ops::ConstantAttrs>(n.attrs).buffer;
    const std::string& bytes = p->buffers_[static_cast<size_t>(buffer)];
    for (size_t k = 0; k < bytes.size(); ++k) {
      const unsigned char b = static_cast<unsigned char>(bytes[k]);
      if (b > 1) {
        Bad("node " + std::to_string(i) + " (%" + std::to_string(p->inputs_.size() + i) +
            ", a bool constant) has the byte " + std::to_string(b) + " at element " +
            std::to_string(k) + " of buffer " + std::to_string(buffer) +
            " (bool elements must be 0 or 1)");
      }
    }
  }
}

}  // namespace program
}  // namespace shp
