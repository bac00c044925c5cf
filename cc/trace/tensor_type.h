// The type of a traced tensor or program value: a dtype and a symbolic shape.
#ifndef SHAPEPOLY_CC_TRACE_TENSOR_TYPE_H_
#define SHAPEPOLY_CC_TRACE_TENSOR_TYPE_H_

#include <vector>

#include "cc/dim/expr.h"
#include "cc/trace/dtype.h"

namespace shp {
namespace trace {

// A dtype and a symbolic shape (one expression of the scope per axis).
struct TensorType {
  DType dtype = DType::kF32;
  std::vector<const dim::Expr*> shape;
};

}  // namespace trace
}  // namespace shp

#endif  // SHAPEPOLY_CC_TRACE_TENSOR_TYPE_H_
