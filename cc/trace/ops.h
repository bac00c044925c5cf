// Operation kinds and their attributes, shared by the tracer (cc/trace), programs
// (cc/program) and the serialized format. The numeric values of OpKind are the values of
// shapepoly.fb.OpCode: append only, never renumber.
#ifndef SHAPEPOLY_CC_TRACE_OPS_H_
#define SHAPEPOLY_CC_TRACE_OPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "cc/dim/expr.h"
#include "cc/trace/dtype.h"

namespace shp {
namespace trace {

enum class OpKind : int32_t {
  kConstant = 0,
  // Elementwise unary.
  kNeg = 1, kAbs = 2, kExp = 3, kLog = 4, kLog1p = 5, kExpm1 = 6, kSqrt = 7, kRsqrt = 8,
  kSin = 9, kCos = 10, kTanh = 11, kLogistic = 12, kFloor = 13, kCeil = 14, kRound = 15,
  kSign = 16, kNot = 17,
  // Elementwise binary with NumPy broadcasting.
  kAdd = 18, kSub = 19, kMul = 20, kDiv = 21, kPow = 22, kMax = 23, kMin = 24, kRem = 25,
  kAnd = 26, kOr = 27, kXor = 28,
  // Comparisons (result bool), with broadcasting.
  kEq = 29, kNe = 30, kLt = 31, kLe = 32, kGt = 33, kGe = 34,
  kSelect = 35,
  kConvert = 36,
  kBroadcastTo = 37,
  kReshape = 38,
  kTranspose = 39,
  kConcatenate = 40,
  kSlice = 41,
  kPad = 42,
  kReduceSum = 43, kReduceMean = 44, kReduceMax = 45, kReduceMin = 46, kReduceProd = 47,
  kMatMul = 48,
  kDotGeneral = 49,
  kIota = 50,
  kSoftmax = 51,
  kLayerNorm = 52,
  kCumSum = 53,
  kTake = 54,
  kDimValue = 55,
};
constexpr int32_t kNumOpKinds = 56;

inline bool IsValidOpKind(int32_t v) { return v >= 0 && v < kNumOpKinds; }
inline bool IsUnary(OpKind k) { return k >= OpKind::kNeg && k <= OpKind::kNot; }
inline bool IsBinary(OpKind k) { return k >= OpKind::kAdd && k <= OpKind::kXor; }
inline bool IsCompare(OpKind k) { return k >= OpKind::kEq && k <= OpKind::kGe; }
inline bool IsReduce(OpKind k) { return k >= OpKind::kReduceSum && k <= OpKind::kReduceProd; }

// Lower-case name used in messages and listings: "add", "reduce_sum", "dot_general".
const char* OpName(OpKind k);

// Dimension numbers of dot_general (axes of lhs and rhs).
struct DotDims {
  std::vector<int64_t> lhs_batch, rhs_batch, lhs_contracting, rhs_contracting;
};

// The attributes of an operation; each op uses the fields listed here, the others keep
// their defaults (so that two equal operations compare equal).
//   convert:           dtype
//   broadcast_to:      dims (target shape)
//   reshape:           dims (target shape; the entry at `axis` is nullptr when it is
//                      inferred, and axis = -1 when nothing is inferred)
//   transpose:         ints (permutation)
//   concatenate:       axis
//   slice:             dims (start), dims2 (limit), ints (strides)
//   pad:               dims (low), dims2 (high), fvalue (padding value)
//   reduce_*:          ints (axes, sorted, unique), keepdims
//   dot_general:       dot
//   iota:              dtype, dims (shape), axis
//   softmax, cumsum:   axis
//   layer_norm:        axis, fvalue (epsilon)
//   take:              axis
//   dim_value:         dims (one expression)
//   constant:          buffer (index of the constant's bytes in the trace or program)
struct Attrs {
  DType dtype = DType::kF32;
  int64_t axis = 0;
  std::vector<int64_t> ints;
  bool keepdims = false;
  std::vector<const dim::Expr*> dims;
  std::vector<const dim::Expr*> dims2;
  DotDims dot;
  double fvalue = 0.0;
  int32_t buffer = -1;
};

}  // namespace trace
}  // namespace shp

#endif  // SHAPEPOLY_CC_TRACE_OPS_H_
