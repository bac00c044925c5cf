// Data-dependent sizes of a program: which node produces each unbacked variable, and the
// checks the runtime makes once their values are known (declared ranges, assertions and
// guards over them). Derived facts (u <= numel(x)) hold by construction and are never checked.
#include <algorithm>
#include <string>

#include "cc/base/error.h"
#include "cc/dim/eval.h"
#include "cc/ops/op_def.h"
#include "cc/program/program.h"

namespace shp {
namespace program {

using dim::Expr;

void Program::ComputeUnbacked() {
  const dim::Scope& s = *scope_;
  const size_t nv = s.variables().size();
  unbacked_producer_.assign(nv, -1);
  unbacked_origin_.assign(nv, std::string());
  unbacked_name_.assign(nv, std::string());
  unbacked_bounds_.assign(nv, {});
  for (const dim::Fact& f : s.facts()) {
    if (f.is_guard || !(f.is_derived || f.is_assertion)) continue;
    // var op e, or e op var (flipped); e must not mention var.
    for (int side = 0; side < 2; ++side) {
      const Expr* v = side == 0 ? f.lhs : f.rhs;
      const Expr* e = side == 0 ? f.rhs : f.lhs;
      if (v->AsVar() < 0 || !s.IsUnbacked(v->AsVar())) continue;
      bool self = false;
      for (int32_t w : s.VarsOf(e)) self = self || w == v->AsVar();
      if (self) continue;
      dim::Cmp op = f.op;
      if (side == 1) {
        op = op == dim::Cmp::kLt   ? dim::Cmp::kGt
             : op == dim::Cmp::kLe ? dim::Cmp::kGe
             : op == dim::Cmp::kGt ? dim::Cmp::kLt
             : op == dim::Cmp::kGe ? dim::Cmp::kLe
                                   : op;
      }
      if (op == dim::Cmp::kNe) continue;
      unbacked_bounds_[static_cast<size_t>(v->AsVar())].push_back(VarBound{op, e});
      break;
    }
  }
  unbacked_checks_.clear();
  has_unbacked_ = false;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    for (const Expr* u : ops::Def(n.op).UnbackedSizes(n.attrs)) {
      const int32_t v = u->AsVar();
      if (v < 0 || !s.IsUnbacked(v)) {
        throw Error(Code::kInvalidProgram, "program: node " + std::to_string(i) + " (" +
                                               OpName(n.op) + ") produces " + s.ToString(u) +
                                               ", which is not a data-dependent variable");
      }
      int32_t& first = unbacked_producer_[static_cast<size_t>(v)];
      if (first >= 0) {
        // A second producer must compute the same value: the same op on the same counted
        // operand (boolean_mask's tangent masks the tangent with the same mask), or another
        // result's node of the same cond operation.
        const Node& f = nodes_[static_cast<size_t>(first)];
        const size_t ni = inputs_.size();
        const ops::NodeView fv{f.op,         f.attrs, f.operands, static_cast<int32_t>(ni) + first,
                               f.type.dtype, nullptr};
        const ops::NodeView nv{n.op,         n.attrs, n.operands, static_cast<int32_t>(ni + i),
                               n.type.dtype, nullptr};
        const bool same_mask = f.op == n.op && n.op == ops::OpKind::kBooleanMask &&
                               f.operands.back() == n.operands.back();
        // A cond or scan that recomputes another's results (its jvp: the primal results and
        // their tangents): it runs with the sizes known, and its body's shapes are checked.
        const bool same_cond =
            f.op == n.op && (n.op == ops::OpKind::kCond || n.op == ops::OpKind::kScan);
        if (!same_mask && !same_cond && !ops::SameOperation(fv, nv)) {
          throw Error(Code::kInvalidProgram, "program: the data-dependent size '" + s.VarName(v) +
                                                 "' is produced by node " + std::to_string(first) +
                                                 " and again by node " + std::to_string(i) +
                                                 " from different data");
        }
        continue;
      }
      first = static_cast<int32_t>(i);
      unbacked_origin_[static_cast<size_t>(v)] = s.variables()[static_cast<size_t>(v)].origin;
      unbacked_name_[static_cast<size_t>(v)] = s.VarName(v);
      has_unbacked_ = true;
    }
  }
  // Each assertion or guard over unbacked variables is checked when the last of them (in
  // the order of their producers) is known.
  for (const dim::Fact& f : s.facts()) {
    if (f.is_derived || !f.is_assertion) continue;
    int32_t last = -1;
    for (const Expr* side : {f.lhs, f.rhs}) {
      for (int32_t v : s.VarsOf(side)) {
        const int32_t node = UnbackedProducer(v);
        if (node >= 0 && (last < 0 || node > UnbackedProducer(last))) last = v;
      }
    }
    if (last < 0) continue;
    unbacked_checks_.push_back(
        UnbackedCheck{f.lhs, f.op, f.rhs, f.text, f.message, f.is_guard, last});
  }
}

void Program::CheckUnbacked(int32_t var, const std::vector<int64_t>& values) const {
  const size_t v = static_cast<size_t>(var);
  const int64_t x = values[v];
  const std::string& name = unbacked_name_[v];
  const std::string producer =
      "computed by " + unbacked_origin_[v] + " (node %" +
      std::to_string(inputs_.size() + static_cast<size_t>(unbacked_producer_[v])) + ")";
  const auto& r = var_ranges_[v];
  if (x < r.first || x > r.second) {
    throw Error(Code::kConstraintViolation,
                "the data-dependent size " + name + " = " + std::to_string(x) + ", " + producer +
                    ", lies outside its declared range [" + std::to_string(r.first) + ", " +
                    (r.second == dim::kPosInf ? std::string("inf") : std::to_string(r.second)) +
                    "]");
  }
  for (const UnbackedCheck& c : unbacked_checks_) {
    if (c.var != var) continue;
    const int64_t l = dim::Evaluate(c.lhs, values);
    const int64_t rv = dim::Evaluate(c.rhs, values);
    if (dim::CmpHolds(l, c.op, rv)) continue;
    throw Error(c.is_guard ? Code::kGuardFailed : Code::kConstraintViolation,
                std::string(c.is_guard ? "guard '" : "check '") + c.text +
                    "' does not hold for the data: " + name + " = " + std::to_string(x) + ", " +
                    producer + " (" + std::to_string(l) + " " + dim::CmpSymbol(c.op) + " " +
                    std::to_string(rv) + " is false)" +
                    (c.message.empty() ? "" : "; message: " + c.message));
  }
}

std::pair<int64_t, int64_t> Program::UnbackedInterval(
    int32_t var, const std::vector<std::pair<int64_t, int64_t>>& iv) const {
  std::pair<int64_t, int64_t> r = UnbackedRange(var);
  for (const VarBound& b : UnbackedBounds(var)) {
    const std::pair<int64_t, int64_t> e = dim::EvaluateBounds(b.e, iv);
    const bool lower = b.op == dim::Cmp::kGe || b.op == dim::Cmp::kGt || b.op == dim::Cmp::kEq;
    const bool upper = b.op == dim::Cmp::kLe || b.op == dim::Cmp::kLt || b.op == dim::Cmp::kEq;
    if (lower && e.first != dim::kNegInf) {
      const int64_t lo = b.op == dim::Cmp::kGt && e.first < dim::kPosInf ? e.first + 1 : e.first;
      r.first = std::max(r.first, lo);
    }
    if (upper && e.second != dim::kPosInf) {
      const int64_t hi = b.op == dim::Cmp::kLt && e.second > dim::kNegInf ? e.second - 1 : e.second;
      r.second = std::min(r.second, hi);
    }
  }
  return r;
}

bool Program::variable_is_unbacked(size_t i) const {
  if (i >= used_vars_.size()) return false;
  return UnbackedProducer(used_vars_[i]) >= 0;
}

const std::string& Program::variable_origin(size_t i) const {
  static const std::string kNone;
  if (!variable_is_unbacked(i)) return kNone;
  return unbacked_origin_[static_cast<size_t>(used_vars_[i])];
}

}  // namespace program
}  // namespace shp
