// Operations on the narrow element types (f16, bf16, i8, u8, i16, u16, u32, u64): computed in
// the compute type and converted once on store. f16 and bf16 compute in f32 and round to nearest
// even; i8, u8, i16, u16 compute in i32 and u32 in i64, whose wrapping arithmetic truncated to the
// narrow width is exactly the narrow type's wrapping arithmetic (a ring homomorphism), and whose
// order, division and conversions agree on every narrow value. u64 computes in i64 on the same
// bits: exact for the ring operations and equality; the ordered ones (comparisons, max, min,
// their reductions, top_k) flip the sign bit of both sides, which maps unsigned order onto signed
// order; division, remainder and power of u64 are refused (no kernel). Operations that only move
// elements take every type as it is (ops::TakesNarrowTypes).
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/ops/op_def.h"
#include "cc/trace/trace.h"

namespace shp {
namespace trace {
namespace {

using ops::OpKind;

// Results that are ordered by the operands' order (the u64 sign-bit flip applies).
bool IsOrdered(OpKind op, const Attrs& attrs) {
  switch (op) {
    case OpKind::kLt:
    case OpKind::kLe:
    case OpKind::kGt:
    case OpKind::kGe:
    case OpKind::kMax:
    case OpKind::kMin:
    case OpKind::kReduceMax:
    case OpKind::kReduceMin:
    case OpKind::kTopKValues:
    case OpKind::kTopKIndices:
      return true;
    case OpKind::kReduceWindow: {
      const OpKind r = std::get<ops::WindowAttrs>(attrs).reduction;
      return r == OpKind::kReduceMax || r == OpKind::kReduceMin;
    }
    default:
      return false;
  }
}

// Results that are not values of the operands' type (bools, indices, sizes).
bool ResultIsIndex(OpKind op) {
  return ops::IsCompare(op) || op == OpKind::kNonzero || op == OpKind::kTopKIndices ||
         op == OpKind::kSizeFromValue;
}

// u64 operations without a kernel: i64 division, remainder and power differ from u64's.
bool U64Refused(OpKind op) {
  return op == OpKind::kDiv || op == OpKind::kRem || op == OpKind::kPow;
}

}  // namespace

bool Trace::NeedsNarrowLowering(OpKind op, const Attrs& attrs,
                                const std::vector<const Tensor*>& operands) {
  if (op == OpKind::kConvert) return false;
  if (op == OpKind::kIota && attrs.index() != 0 && std::holds_alternative<ops::IotaAttrs>(attrs) &&
      IsNarrow(std::get<ops::IotaAttrs>(attrs).dtype)) {
    return true;
  }
  for (size_t k = 0; k < operands.size(); ++k) {
    if (IsNarrow(operands[k]->type.dtype) &&
        (!ops::TakesNarrowTypes(op) || ops::IsIndexOperand(op, k))) {
      return true;
    }
  }
  return false;
}

const Tensor* Trace::ApplyNarrow(OpKind op, Attrs attrs,
                                 const std::vector<const Tensor*>& operands) {
  const std::string name = ops::OpName(op);
  if (op == OpKind::kIota) {
    ops::IotaAttrs a = std::get<ops::IotaAttrs>(attrs);
    const DType target = a.dtype;
    a.dtype = ComputeDType(target);
    return Convert(Apply(op, a, {}), target);
  }
  // The data operands' one narrow type (index operands are converted on their own).
  DType narrow = DType::kF32;
  bool any = false;
  for (size_t k = 0; k < operands.size(); ++k) {
    if (ops::IsIndexOperand(op, k) || !IsNarrow(operands[k]->type.dtype)) continue;
    narrow = operands[k]->type.dtype;
    any = true;
    break;
  }
  if (any) {
    for (size_t k = 0; k < operands.size(); ++k) {
      const DType d = operands[k]->type.dtype;
      if (ops::IsIndexOperand(op, k) || d == narrow) continue;
      if (IsNarrow(d) || d == ComputeDType(narrow)) {
        throw Error(Code::kDtypeMismatch, name + ": operand dtypes differ: " + DTypeName(narrow) +
                                              " and " + DTypeName(d) +
                                              " (convert one operand first)");
      }
    }
  }
  const bool u64 = any && narrow == DType::kU64;
  const bool flip = u64 && IsOrdered(op, attrs);
  if (u64 && U64Refused(op)) {
    throw Error(Code::kUnsupported,
                name +
                    ": u64 operands are not supported (u64 division, remainder and power "
                    "have no kernel); convert them to i64 or f64 first");
  }
  if (u64 && op == OpKind::kAbs) return operands[0];  // |x| == x for unsigned x
  const int64_t min64 = std::numeric_limits<int64_t>::min();
  auto sign_bit = [&]() { return Constant(DType::kI64, {}, &min64, sizeof min64); };
  std::vector<const Tensor*> wide;
  for (size_t k = 0; k < operands.size(); ++k) {
    const Tensor* x = operands[k];
    const DType d = x->type.dtype;
    if (IsNarrow(d)) {
      x = Convert(x, ComputeDType(d));
      if (flip && d == DType::kU64 && !ops::IsIndexOperand(op, k))
        x = Binary(OpKind::kXor, x, sign_bit());
    }
    wide.push_back(x);
  }
  if (u64 && op == OpKind::kSign) {  // 0 or 1 for unsigned x
    const int64_t zero = 0;
    return Convert(Binary(OpKind::kNe, wide[0], Constant(DType::kI64, {}, &zero, sizeof zero)),
                   DType::kU64);
  }
  const Tensor* r = Apply(op, std::move(attrs), wide);
  if (!any || ResultIsIndex(op) || r->type.dtype != ComputeDType(narrow)) return r;
  if (flip) r = Binary(OpKind::kXor, r, sign_bit());
  return Convert(r, narrow);
}

}  // namespace trace
}  // namespace shp
