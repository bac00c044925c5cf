// Error objects: shp_error_* thunks and the helpers declared in c_api_internal.h.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include "c_api/c_api_internal.h"
#include "cc/base/error.h"
#include "shapepoly/shapepoly.h"

namespace {

// Returned when allocating an error fails. "out of memory" fits std::string's small buffer,
// so building this object at load time does not allocate either.
shp_error g_out_of_memory{SHP_OUT_OF_MEMORY, "out of memory", nullptr};

struct CodeText {
  const char* full;  // "SHP_X: description"
  const char* description;
};

// Indexed by code value; must list every code of enum shp_code in order.
constexpr CodeText kCodeTexts[] = {
    {"SHP_OK: success", "success"},
    {"SHP_INVALID_ARGUMENT: invalid argument", "invalid argument"},
    {"SHP_PARSE_ERROR: parse error", "parse error"},
    {"SHP_INCONCLUSIVE: symbolic comparison is inconclusive",
     "symbolic comparison is inconclusive"},
    {"SHP_SCOPE_MISMATCH: objects belong to different scopes",
     "objects belong to different scopes"},
    {"SHP_UNSATISFIABLE: constraints are unsatisfiable", "constraints are unsatisfiable"},
    {"SHP_SHAPE_MISMATCH: shape mismatch", "shape mismatch"},
    {"SHP_CONSTRAINT_VIOLATION: constraint violated", "constraint violated"},
    {"SHP_UNSOLVABLE: dimension variables cannot be solved",
     "dimension variables cannot be solved"},
    {"SHP_DIVISION_BY_ZERO: division by zero", "division by zero"},
    {"SHP_OVERFLOW: integer overflow", "integer overflow"},
    {"SHP_DTYPE_MISMATCH: dtype mismatch", "dtype mismatch"},
    {"SHP_NOT_FOUND: not found", "not found"},
    {"SHP_INVALID_PROGRAM: invalid program", "invalid program"},
    {"SHP_VERSION_MISMATCH: version mismatch", "version mismatch"},
    {"SHP_UNSUPPORTED: unsupported", "unsupported"},
    {"SHP_OUT_OF_MEMORY: out of memory", "out of memory"},
    {"SHP_INTERNAL: internal error", "internal error"},
    {"SHP_GUARD_FAILED: guard failed", "guard failed"},
};
static_assert(sizeof(kCodeTexts) / sizeof(kCodeTexts[0]) == SHP_GUARD_FAILED + 1,
              "kCodeTexts must list every shp_code value");

// Length of the valid UTF-8 sequence at text[i], 0 if there is none.
size_t Utf8Length(const std::string& text, size_t i) {
  const unsigned char c = static_cast<unsigned char>(text[i]);
  const size_t len = c < 0x80           ? 1
                     : (c >> 5) == 0x6  ? 2
                     : (c >> 4) == 0xE  ? 3
                     : (c >> 3) == 0x1E ? 4
                                        : 0;
  if (len == 0 || i + len > text.size()) return 0;
  uint32_t cp = len == 1 ? c : c & (0x7F >> len);
  for (size_t k = 1; k < len; ++k) {
    const unsigned char next = static_cast<unsigned char>(text[i + k]);
    if ((next & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (next & 0x3F);
  }
  static const uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

// Messages are documented as UTF-8, but some quote names as given (e.g. a duplicate input
// name): every byte that is not part of valid UTF-8 becomes \xNN.
std::string ValidUtf8(std::string msg) {
  size_t i = 0;
  while (i < msg.size()) {
    const size_t len = Utf8Length(msg, i);
    if (len == 0) break;
    i += len;
  }
  if (i == msg.size()) return msg;
  std::string out(msg, 0, i);
  while (i < msg.size()) {
    const size_t len = Utf8Length(msg, i);
    if (len > 0) {
      out.append(msg, i, len);
      i += len;
    } else {
      static const char kHex[] = "0123456789abcdef";
      const unsigned char c = static_cast<unsigned char>(msg[i++]);
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// Witness i of `error`, or null (NULL error, no detail, out of range).
const shp::ErrorWitness* WitnessAt(const shp_error_t* error, size_t i) {
  if (error == nullptr || error->detail == nullptr || i >= error->detail->witnesses.size()) {
    return nullptr;
  }
  return &error->detail->witnesses[i];
}

const CodeText* FindCodeText(int32_t code) {
  if (code < 0 || code > SHP_GUARD_FAILED) return nullptr;
  return &kCodeTexts[code];
}

}  // namespace

namespace shp {
namespace capi {

shp_error_t* OutOfMemoryError() noexcept { return &g_out_of_memory; }

shp_error_t* MakeError(shp::Code code, std::string msg) noexcept {
  return MakeError(code, std::move(msg), nullptr);
}

shp_error_t* MakeError(shp::Code code, std::string msg,
                       std::shared_ptr<const shp::ErrorDetail> detail) noexcept {
  try {
    if (code == shp::Code::kOk) {
      msg = "internal error: an error was raised with code SHP_OK: " + msg;
      code = shp::Code::kInternal;
    }
    if (code == shp::Code::kOutOfMemory && msg.empty()) return OutOfMemoryError();
    const int32_t value = static_cast<int32_t>(code);
    if (msg.empty()) {
      const CodeText* text = FindCodeText(value);
      msg = text != nullptr ? text->description : "unknown error code";
    }
    if (detail != nullptr) {
      // Names and fixes quote user text: the same UTF-8 repair as the message.
      auto clean = std::make_shared<shp::ErrorDetail>(*detail);
      for (shp::ErrorWitness& w : clean->witnesses) {
        for (std::string& n : w.names) n = ValidUtf8(std::move(n));
      }
      for (std::string& f : clean->fixes) f = ValidUtf8(std::move(f));
      detail = std::move(clean);
    }
    return new shp_error{value, ValidUtf8(std::move(msg)), std::move(detail)};
  } catch (...) {  // std::bad_alloc from the string or the object
    return OutOfMemoryError();
  }
}

shp_error_t* ErrorFromCurrentException() noexcept {
  try {
    try {
      throw;
    } catch (const shp::Error& e) {
      return MakeError(e.code(), e.message(), e.detail());
    } catch (const std::bad_alloc&) {
      return OutOfMemoryError();
    } catch (const std::exception& e) {
      return MakeError(shp::Code::kInternal, std::string("internal error: ") + e.what());
    } catch (...) {
      return MakeError(shp::Code::kInternal, "internal error: unknown exception");
    }
  } catch (...) {  // building the message string itself failed
    return OutOfMemoryError();
  }
}

}  // namespace capi
}  // namespace shp

extern "C" {

shp_code_t shp_error_code(const shp_error_t* error) {
  return error == nullptr ? SHP_OK : error->code;
}

const char* shp_error_message(const shp_error_t* error) {
  return error == nullptr ? "" : error->message.c_str();
}

size_t shp_error_witness_count(const shp_error_t* error) {
  return error == nullptr || error->detail == nullptr ? 0 : error->detail->witnesses.size();
}

bool shp_error_witness_holds(const shp_error_t* error, size_t i) {
  const shp::ErrorWitness* w = WitnessAt(error, i);
  return w != nullptr && w->holds;
}

size_t shp_error_witness_variable_count(const shp_error_t* error, size_t i) {
  const shp::ErrorWitness* w = WitnessAt(error, i);
  return w == nullptr ? 0 : w->names.size();
}

const char* shp_error_witness_variable_name(const shp_error_t* error, size_t i, size_t j) {
  const shp::ErrorWitness* w = WitnessAt(error, i);
  return w == nullptr || j >= w->names.size() ? nullptr : w->names[j].c_str();
}

int64_t shp_error_witness_variable_value(const shp_error_t* error, size_t i, size_t j) {
  const shp::ErrorWitness* w = WitnessAt(error, i);
  return w == nullptr || j >= w->values.size() ? 0 : w->values[j];
}

size_t shp_error_fix_count(const shp_error_t* error) {
  return error == nullptr || error->detail == nullptr ? 0 : error->detail->fixes.size();
}

const char* shp_error_fix(const shp_error_t* error, size_t i) {
  if (error == nullptr || error->detail == nullptr || i >= error->detail->fixes.size()) {
    return nullptr;
  }
  return error->detail->fixes[i].c_str();
}

void shp_error_destroy(shp_error_t* error) {
  if (error == nullptr || error == &g_out_of_memory) return;
  delete error;
}

const char* shp_code_string(shp_code_t code) {
  const CodeText* text = FindCodeText(code);
  return text != nullptr ? text->full : "unknown error code";
}

shp_error_t* shp_error_create(shp_code_t code, const char* message) {
  const std::string text = message ? message : "";
  if (code < 1 || code > SHP_GUARD_FAILED) {
    return shp::capi::MakeError(shp::Code::kInvalidArgument,
                                "an error was created with the invalid code " +
                                    std::to_string(code) + (text.empty() ? "" : ": " + text));
  }
  return shp::capi::MakeError(static_cast<shp::Code>(code), text);
}

}  // extern "C"
