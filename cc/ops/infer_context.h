// The shared vocabulary of symbolic shape inference: what every op's Infer uses to decide
// facts about dimensions and to report errors in one style.
//
// Errors (shp::Error), all prefixed with the operation's name:
//   kShapeMismatch   the shapes are provably incompatible ("add: incompatible shapes for
//                    broadcasting: (v,) and (4,)", "matmul: contracting dimensions differ:
//                    4 vs v");
//   kInconclusive    a needed comparison is UNKNOWN; the message names the comparison, the
//                    scope's constraints and the fixes;
//   kDtypeMismatch   operand dtypes that the operation does not accept;
//   kInvalidArgument bad attributes (axes out of range, wrong operand count, ...).
#ifndef SHAPEPOLY_CC_OPS_INFER_CONTEXT_H_
#define SHAPEPOLY_CC_OPS_INFER_CONTEXT_H_

#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/dim/scope.h"
#include "cc/ops/attrs.h"
#include "cc/ops/op_kind.h"
#include "cc/ir/tensor_type.h"

namespace shp {
namespace ops {

enum class InferMode {
  kTrace,   // record a shape assertion where the operation allows it
  kVerify,  // never record: a fact that would be asserted must already be provable
};

// Which dtypes an elementwise or reduction op accepts.
enum class OperandRule { kAny, kNumeric, kFloat, kLogical };

class InferContext {
 public:
  InferContext(dim::Scope* s, OpKind op, const std::vector<trace::TensorType>& in, InferMode mode)
      : s_(s), op_(op), in_(in), mode_(mode) {}

  dim::Scope* scope() const { return s_; }
  InferMode mode() const { return mode_; }
  const trace::TensorType& in(size_t i) const { return in_[i]; }
  size_t num_in() const { return in_.size(); }

  std::string Name() const { return OpName(op_); }
  std::string Str(const dim::Expr* e) const { return s_->ToString(e); }
  std::string Str(const Shape& sh) const { return s_->ShapeToString(sh); }
  // "(a, _, 4)": a shape whose entries may be nullptr.
  std::string SpecStr(const Shape& sh) const;

  [[noreturn]] void Fail(Code code, const std::string& msg) const;
  [[noreturn]] void Mismatch(const std::string& msg) const { Fail(Code::kShapeMismatch, msg); }
  [[noreturn]] void Invalid(const std::string& msg) const { Fail(Code::kInvalidArgument, msg); }
  [[noreturn]] void Inconclusive(const dim::Expr* a, dim::Cmp op, const dim::Expr* b,
                                 const std::string& context) const;

  // TRUE -> true, FALSE -> false, UNKNOWN -> GuardOnHints (true, or an error).
  bool Decide(const dim::Expr* a, dim::Cmp op, const dim::Expr* b,
              const std::string& context) const;
  // For a comparison the engine cannot decide that the operation needs to hold: under the
  // scope's GuardPolicy::kFromHints while tracing, records it as a guard named after the
  // operation when the hints satisfy it, and fails kShapeMismatch naming the hint values when
  // they do not; otherwise (or when a variable has no hint) kInconclusive.
  void GuardOnHints(const dim::Expr* a, dim::Cmp op, const dim::Expr* b,
                    const std::string& context) const;
  bool IsOne(const dim::Expr* e) const;
  // A dimension given as an attribute must be able to be a size (>= 0).
  void CheckSize(const dim::Expr* d, const std::string& what) const;
  int64_t NormAxis(int64_t axis, size_t rank, const std::string& what) const;
  // Sorts and normalizes `axes` for an operand of rank `rank`; a repeated axis is an error.
  void NormAxes(std::vector<int64_t>* axes, size_t rank) const;
  void RequireDType(trace::DType t, bool ok, const std::string& what) const;
  void RequireRule(trace::DType t, OperandRule rule, bool plural) const;
  void SameDType(trace::DType a, trace::DType b) const;
  // NumPy broadcasting of several shapes. A symbolic dimension broadcasts only when it is
  // provably 1; otherwise the dimensions must be provably equal.
  Shape Broadcast(const std::vector<const Shape*>& shapes, const std::string& what) const;
  const dim::Expr* Product(const Shape& sh) const;  // nullptr entries are skipped

 private:
  dim::Scope* s_;
  OpKind op_;
  const std::vector<trace::TensorType>& in_;
  InferMode mode_;
};

}  // namespace ops
}  // namespace shp

#endif  // SHAPEPOLY_CC_OPS_INFER_CONTEXT_H_
