// The tensor-level limits under their ops:: names; the one table is cc/base/limits.h.
#ifndef SHAPEPOLY_CC_OPS_LIMITS_H_
#define SHAPEPOLY_CC_OPS_LIMITS_H_

#include "cc/base/limits.h"

namespace shp {
namespace ops {

using limits::kMaxConstantBytes;
using limits::kMaxNodes;
using limits::kMaxOperands;
using limits::kMaxRank;
using limits::kMaxTotalConstantBytes;

}  // namespace ops
}  // namespace shp

#endif  // SHAPEPOLY_CC_OPS_LIMITS_H_
