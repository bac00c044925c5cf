// The one error type of the C++ layers. Internal code throws shp::Error; the C ABI
// thunks (c_api/) catch it and turn it into an shp_error_t*. Codes mirror the fixed
// values of the public shp_code enum in shapepoly.h (checked there by static_assert).
#ifndef SHAPEPOLY_CC_BASE_ERROR_H_
#define SHAPEPOLY_CC_BASE_ERROR_H_

#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace shp {

enum class Code : int32_t {
  kOk = 0,
  kInvalidArgument = 1,
  kParseError = 2,
  kInconclusive = 3,
  kScopeMismatch = 4,
  kUnsatisfiable = 5,
  kShapeMismatch = 6,
  kConstraintViolation = 7,
  kUnsolvable = 8,
  kDivisionByZero = 9,
  kOverflow = 10,
  kDtypeMismatch = 11,
  kNotFound = 12,
  kInvalidProgram = 13,
  kVersionMismatch = 14,
  kUnsupported = 15,
  kOutOfMemory = 16,
  kInternal = 17,
  kGuardFailed = 18,
};

// A concrete valuation of dimension variables that satisfies every fact of a scope and its
// variables' ranges, verified by evaluation; `holds` says whether it makes the comparison the
// error is about true. names[i] has the value values[i].
struct ErrorWitness {
  bool holds = false;
  std::vector<std::string> names;
  std::vector<int64_t> values;
};

// What an undecided comparison (kInconclusive) or a violated constraint
// (kConstraintViolation) carries besides its message: at most one witness of each side, and
// fixes, each verified before it is listed (cc/dim/explain.h). The message shows them too.
struct ErrorDetail {
  std::vector<ErrorWitness> witnesses;
  std::vector<std::string> fixes;
};

class Error : public std::exception {
 public:
  Error(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  Error(Code code, std::string message, std::shared_ptr<const ErrorDetail> detail)
      : code_(code), message_(std::move(message)), detail_(std::move(detail)) {}
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // Null when the error has none.
  const std::shared_ptr<const ErrorDetail>& detail() const { return detail_; }
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  Code code_;
  std::string message_;
  std::shared_ptr<const ErrorDetail> detail_;
};

}  // namespace shp

#endif  // SHAPEPOLY_CC_BASE_ERROR_H_
