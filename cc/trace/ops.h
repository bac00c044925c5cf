// The tracer's names for the operation vocabulary of cc/ops (the single place an op is
// defined): the kinds, the typed attributes and the names.
#ifndef SHAPEPOLY_CC_TRACE_OPS_H_
#define SHAPEPOLY_CC_TRACE_OPS_H_

#include "cc/ops/attrs.h"
#include "cc/ops/op_kind.h"

namespace shp {
namespace trace {

using ops::Attrs;
using ops::DotDims;
using ops::IsBinary;
using ops::IsCompare;
using ops::IsReduce;
using ops::IsUnary;
using ops::IsValidOpKind;
using ops::OpKind;
using ops::OpName;

}  // namespace trace
}  // namespace shp

#endif  // SHAPEPOLY_CC_TRACE_OPS_H_
