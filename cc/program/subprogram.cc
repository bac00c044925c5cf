#include "cc/program/subprogram.h"

#include <algorithm>
#include <utility>

#include "cc/base/error.h"
#include "cc/dim/rebuild.h"
#include "cc/ops/op_def.h"

namespace shp {
namespace program {

ProgramBody::ProgramBody(std::shared_ptr<const Program> p) : p_(std::move(p)) {
  auto refuse = [](const std::string& why) {
    throw Error(Code::kInvalidArgument, "a control-flow subprogram cannot " + why);
  };
  if (p_ == nullptr) refuse("be NULL");
  if (p_->num_variants() != 1 || !p_->guard_texts().empty()) refuse("have guards or variants");
  if (p_->subprogram_depth() + 1 > kMaxSubprogramDepth) {
    refuse("nest subprograms more than " + std::to_string(kMaxSubprogramDepth) +
           " deep (a file could not be loaded)");
  }
  // Tensors bound by position: data inputs, and the tangents and cotangents of a subprogram
  // that autodiff transformed (never a default, which a position could not leave out).
  for (const Input& in : p_->inputs()) {
    const bool tensor = in.role == trace::InputRole::kData || in.role == trace::InputRole::kDim ||
                        in.role == trace::InputRole::kTangent ||
                        in.role == trace::InputRole::kCotangent;
    if (!tensor || in.has_default()) {
      refuse("have the input '" + in.name + "', which is not a tensor without a default");
    }
  }
}

std::vector<trace::TensorType> ProgramBody::Rebuilt(dim::Scope* scope, const std::string& what,
                                                    bool inputs) const {
  return p_->WithScope([&](dim::Scope& own) {
    std::vector<trace::TensorType> types;
    if (inputs) {
      for (const Input& in : p_->inputs()) types.push_back(in.type);
    } else {
      for (const Output& o : p_->outputs()) types.push_back(p_->value_type(o.value));
    }
    // Dims over the subprogram's own data-dependent sizes have no expression outside it.
    std::vector<std::vector<bool>> local(types.size());
    for (size_t k = 0; k < types.size(); ++k) {
      for (const dim::Expr* e : types[k].shape) {
        bool l = false;
        for (int32_t v : own.VarsOf(e)) l = l || p_->UnbackedProducer(v) >= 0;
        local[k].push_back(l);
      }
    }
    for (size_t k = 0; k < types.size(); ++k) {
      const trace::TensorType& t = types[k];
      for (size_t d = 0; d < t.shape.size(); ++d) {
        if (local[k][d]) continue;
        const dim::Expr* e = t.shape[d];
        for (int32_t v : own.VarsOf(e)) {
          const std::string& name = own.variables()[static_cast<size_t>(v)].name;
          if (scope->FindVar(name) < 0) {
            throw Error(Code::kInvalidArgument,
                        what + " uses the variable '" + name + "', which its scope does not have");
          }
        }
      }
    }
    dim::Rebuilder r(scope);
    for (size_t k = 0; k < types.size(); ++k) {
      for (size_t d = 0; d < types[k].shape.size(); ++d) {
        const dim::Expr*& e = types[k].shape[d];
        e = local[k][d] ? nullptr : r.Expr(e);
      }
    }
    return types;
  });
}

std::vector<trace::TensorType> ProgramBody::InputTypes(dim::Scope* scope,
                                                       const std::string& what) const {
  return Rebuilt(scope, what, true);
}

std::vector<trace::TensorType> ProgramBody::OutputTypes(dim::Scope* scope,
                                                        const std::string& what) const {
  return Rebuilt(scope, what, false);
}

std::pair<int64_t, int64_t> ProgramBody::OutputDimBounds(size_t k, size_t d) const {
  return p_->WithScope([&](dim::Scope& own) {
    const trace::TensorType& t = p_->value_type(p_->outputs().at(k).value);
    const dim::Interval b = own.Bounds(t.shape.at(d));
    return std::make_pair(std::max<int64_t>(b.lo, 0), b.hi);
  });
}

const dim::Expr* ProgramBody::Flops(dim::Scope* scope) const {
  if (p_->has_unbacked()) {
    throw Error(Code::kUnsupported,
                "cost: a subprogram computes data-dependent sizes (nonzero, boolean_mask, "
                "size_from_value or a cond of differently shaped branches), so its cost depends "
                "on the data");
  }
  return p_->WithScope([&](dim::Scope& own) {
    dim::Rebuilder r(scope);
    return r.Expr(ProgramFlops(*p_, own));
  });
}

const ProgramBody& BodyOf(const ops::Subprogram& op) {
  const auto* b = dynamic_cast<const ProgramBody*>(&op);
  if (b == nullptr) throw Error(Code::kInternal, "a subprogram that is not a program");
  return *b;
}

const dim::Expr* ProgramFlops(const Program& p, dim::Scope& s) {
  const dim::Expr* total = s.Constant(0);
  const size_t ni = p.inputs().size();
  for (size_t i = 0; i < p.nodes().size(); ++i) {
    const Node& n = p.nodes()[i];
    ops::CostContext c;
    c.scope = &s;
    for (int32_t v : n.operands) c.operands.push_back(&p.value_type(v));
    c.result = &n.type;
    c.attrs = &n.attrs;
    if (ops::IsControlFlow(n.op)) {
      const ops::NodeView a{n.op,         n.attrs, n.operands, static_cast<int32_t>(ni + i),
                            n.type.dtype, nullptr};
      for (size_t j = 0; j < i && !c.repeated; ++j) {
        const Node& m = p.nodes()[j];
        const ops::NodeView b{m.op,         m.attrs, m.operands, static_cast<int32_t>(ni + j),
                              m.type.dtype, nullptr};
        c.repeated = ops::SameOperation(a, b);
      }
    }
    total = s.Add(total, ops::Def(n.op).Flops(c));
  }
  return total;
}

}  // namespace program
}  // namespace shp
