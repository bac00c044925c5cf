// The type of a traced tensor or program value (the IR's, below cc/trace and cc/ops): a dtype and a
// symbolic shape.
#ifndef SHAPEPOLY_CC_IR_TENSOR_TYPE_H_
#define SHAPEPOLY_CC_IR_TENSOR_TYPE_H_

#include <vector>

#include "cc/dim/expr.h"
#include "cc/ir/dtype.h"

namespace shp {
namespace ir {

// A dtype and a symbolic shape (one expression of the scope per axis).
struct TensorType {
  DType dtype = DType::kF32;
  std::vector<const dim::Expr*> shape;
};

}  // namespace ir

namespace trace {
using ir::TensorType;
}  // namespace trace
}  // namespace shp

#endif  // SHAPEPOLY_CC_IR_TENSOR_TYPE_H_
