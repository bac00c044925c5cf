#include "cc/ops/batch.h"

#include <string>
#include <utility>
#include <vector>

#include "cc/base/error.h"
#include "cc/ops/op_def.h"

namespace shp {
namespace ops {

Shape WithBatchAxis(const BatchNode& n, const Shape& shape) {
  Shape s{n.size};
  s.insert(s.end(), shape.begin(), shape.end());
  return s;
}

std::vector<int64_t> ShiftAxes(const std::vector<int64_t>& axes) {
  std::vector<int64_t> out;
  out.reserve(axes.size());
  for (int64_t a : axes) out.push_back(a + 1);
  return out;
}

Value BatchedOperand(AdBuilder& b, const BatchNode& n, size_t i) {
  if (n.batched[i] != nullptr) return n.batched[i];
  Value x = n.operands[i];
  return b.BroadcastTo(x, WithBatchAxis(n, b.type(x).shape));
}

Value PadBatchedRank(AdBuilder& b, Value x, size_t rank) {
  const Shape& s = b.type(x).shape;
  if (s.size() >= rank + 1) return x;
  Shape to{s[0]};
  to.insert(to.end(), rank + 1 - s.size(), b.dims()->Constant(1));
  to.insert(to.end(), s.begin() + 1, s.end());
  return b.Reshape(x, to);
}

Value MoveAxisToFront(AdBuilder& b, Value x, size_t from) {
  if (from == 0) return x;
  const size_t rank = b.type(x).shape.size();
  std::vector<int64_t> perm{static_cast<int64_t>(from)};
  for (size_t i = 0; i < rank; ++i) {
    if (i != from) perm.push_back(static_cast<int64_t>(i));
  }
  return b.Transpose(x, perm);
}

Value BatchElementwise(AdBuilder& b, const BatchNode& n) {
  const size_t rank = b.type(n.result).shape.size();
  std::vector<Value> xs;
  for (size_t i = 0; i < n.operands.size(); ++i)
    xs.push_back(n.is_batched(i) ? PadBatchedRank(b, n.batched[i], rank) : n.operands[i]);
  return b.Apply(n.op, n.attrs, xs);
}

Value BatchWithAttrs(AdBuilder& b, const BatchNode& n, Attrs attrs) {
  std::vector<Value> xs;
  for (size_t i = 0; i < n.operands.size(); ++i) xs.push_back(BatchedOperand(b, n, i));
  return b.Apply(n.op, std::move(attrs), xs);
}

Value MergeBatchIntoAxis(AdBuilder& b, const BatchNode& n, Value x, size_t axis) {
  const Shape& s = b.type(x).shape;  // [size, x...]
  Value moved = x;
  if (axis > 0) {
    std::vector<int64_t> perm{0, static_cast<int64_t>(axis) + 1};
    for (size_t i = 1; i < s.size(); ++i) {
      if (i != axis + 1) perm.push_back(static_cast<int64_t>(i));
    }
    moved = b.Transpose(x, perm);
  }
  const Shape& m = b.type(moved).shape;
  Shape merged{b.dims()->Mul(n.size, m[1])};
  merged.insert(merged.end(), m.begin() + 2, m.end());
  return b.Reshape(moved, merged);
}

Value SplitBatchFromAxis(AdBuilder& b, const BatchNode& n, Value merged, size_t axis,
                         const Shape& element_shape) {
  Shape split{n.size, element_shape[axis]};
  const Shape& m = b.type(merged).shape;
  split.insert(split.end(), m.begin() + 1, m.end());
  Value y = b.Reshape(merged, split);  // [size, n, x[:axis], x[axis+1:]]
  if (axis == 0) return y;
  std::vector<int64_t> perm{0};
  for (size_t i = 0; i < axis; ++i) perm.push_back(static_cast<int64_t>(i) + 2);
  perm.push_back(1);
  for (size_t i = axis + 2; i < split.size(); ++i) perm.push_back(static_cast<int64_t>(i));
  return b.Transpose(y, perm);
}

Value MergedIndices(AdBuilder& b, const BatchNode& n, Value indices, const dim::Expr* len) {
  using trace::DType;
  const Shape& s = b.type(indices).shape;  // [size, idx...]
  Value idx = b.type(indices).dtype == DType::kI64 ? indices : b.Convert(indices, DType::kI64);
  Shape lead{n.size};
  lead.insert(lead.end(), s.size() - 1, b.dims()->Constant(1));
  Value element = b.Apply(OpKind::kIota, IotaAttrs{DType::kI64, lead, 0}, {});
  Value n_len = b.Apply(OpKind::kDimValue, DimValueAttrs{len}, {});
  Value zero = b.Apply(OpKind::kDimValue, DimValueAttrs{b.dims()->Constant(0)}, {});
  Value valid =
      b.Binary(OpKind::kAnd, b.Binary(OpKind::kGe, idx, zero), b.Binary(OpKind::kLt, idx, n_len));
  Value last =
      b.Apply(OpKind::kDimValue, DimValueAttrs{b.dims()->Sub(n.size, b.dims()->Constant(1))}, {});
  // Past the end: shifted past the last element's range; negative: unchanged.
  Value invalid = b.Select(b.Binary(OpKind::kLt, idx, zero), idx, b.Add(idx, b.Mul(last, n_len)));
  return b.Select(valid, b.Add(idx, b.Mul(element, n_len)), invalid);
}

void NotBatchable(OpKind op, const std::string& why) {
  throw Error(Code::kUnsupported,
              std::string("vmap: the operation ") + OpName(op) + " cannot be batched: " + why);
}

Value OpDef::Batch(AdBuilder&, const BatchNode& n) const {
  NotBatchable(n.op, "it has no batching rule");
}

}  // namespace ops
}  // namespace shp
