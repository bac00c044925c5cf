// Composites on the narrow element types: computed in the compute type end to end and converted
// once, as one op is (cc/trace/narrow.cc); rounding after each step of a composite would lose
// the result to cancellation (conv + bias in f16).
#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/ops/composites/composites.h"
#include "cc/trace/trace.h"

namespace shp {
namespace ops {
namespace composites {

const trace::Tensor* OnceInComputeType(
    const char* fn, std::vector<const trace::Tensor*> args,
    const std::function<const trace::Tensor*(const std::vector<const trace::Tensor*>&)>& body) {
  const trace::Tensor* first = nullptr;
  for (const trace::Tensor* a : args) {
    if (a != nullptr && trace::IsNarrow(a->type.dtype)) {
      first = a;
      break;
    }
  }
  if (first == nullptr) return body(args);
  const trace::DType narrow = first->type.dtype;
  for (const trace::Tensor* a : args) {
    if (a != nullptr && a->type.dtype != narrow) {
      throw Error(Code::kDtypeMismatch,
                  std::string(fn) + ": operand dtypes differ: " + trace::DTypeName(narrow) +
                      " and " + trace::DTypeName(a->type.dtype) + " (convert one operand first)");
    }
  }
  for (const trace::Tensor*& a : args) {
    if (a != nullptr) a = first->owner->Convert(a, trace::ComputeDType(narrow));
  }
  const trace::Tensor* y = body(args);
  return y->type.dtype == trace::ComputeDType(narrow) ? y->owner->Convert(y, narrow) : y;
}

}  // namespace composites
}  // namespace ops
}  // namespace shp
