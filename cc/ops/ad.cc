// The rules' builder helpers, and the defaults of OpDef's rules (no rule: an error).
#include "cc/ops/ad.h"

#include <string>

#include "cc/base/error.h"
#include "cc/ops/op_def.h"

namespace shp {
namespace ops {

// f16 and bf16 too: their arithmetic is f32 between conversions (cc/trace/narrow.cc), so a
// gradient flows through the conversions and has its input's type.
bool IsDifferentiable(trace::DType dtype) { return trace::IsAnyFloat(dtype); }

Value AdBuilder::SumToShape(Value ct, const Shape& shape) {
  const Shape& from = type(ct).shape;
  if (from == shape) return ct;
  dim::Scope* s = dims();
  const dim::Expr* one = s->Constant(1);
  const size_t lead = from.size() - shape.size();  // broadcasting only adds leading axes
  std::vector<int64_t> axes;
  for (size_t i = 0; i < from.size(); ++i) {
    if (i < lead) {
      axes.push_back(static_cast<int64_t>(i));
      continue;
    }
    // Broadcasting expands an axis only where the operand's dimension is (provably) 1; a
    // dimension provably equal to the result's is the same axis, never summed.
    const dim::Expr* d = shape[i - lead];
    if (d == from[i] || from[i] == one) continue;
    if (d == one || (!d->IsConstant() && s->Compare(d, dim::Cmp::kEq, one) == dim::Truth::kTrue))
      axes.push_back(static_cast<int64_t>(i));
  }
  Value out = axes.empty() ? ct : ReduceSum(ct, axes, /*keepdims=*/true);
  if (type(out).shape != shape) out = Reshape(out, shape);
  return out;
}

namespace {

[[noreturn]] void NoRule(OpKind op, const char* kind) {
  throw Error(Code::kUnsupported,
              std::string("autodiff: the operation ") + OpName(op) + " has no " + kind + " rule");
}

}  // namespace

Value OpDef::Jvp(AdBuilder&, const AdNode& n, const std::vector<Value>&) const {
  NoRule(n.op, "JVP (forward-mode)");
}

std::vector<Value> OpDef::Vjp(AdBuilder&, const AdNode& n, Value, const std::vector<bool>&) const {
  NoRule(n.op, "VJP (reverse-mode)");
}

}  // namespace ops
}  // namespace shp
