#include "cc/dim/rebuild.h"
#include "cc/dim/detail/fold.h"
#include "cc/dim/detail/normal_form.h"

namespace shp {
namespace dim {

// The destination's operators in the order of the recursive walk this replaced (the first
// error, if the destination's facts refuse something, stays the same).
struct Rebuilder::Fold {
  using Value = const dim::Expr*;
  struct State {
    const dim::Expr* sum = nullptr;
    const dim::Expr* prod = nullptr;
  };
  Rebuilder* r;
  bool Find(const dim::Expr* e, Value* out) {
    auto it = r->exprs_.find(e);
    if (it == r->exprs_.end()) return false;
    *out = it->second;
    return true;
  }
  void Begin(const dim::Expr*, State* s) { s->sum = r->dst_->Constant(0); }
  void BeginTerm(const dim::Term& t, State* s) { s->prod = r->dst_->Constant(t.coeff); }
  void Factor(const dim::Factor& f, Value atom, State* s) {
    s->prod = r->dst_->Mul(s->prod, r->dst_->Pow(atom, f.exp));
  }
  void EndTerm(const dim::Term&, State* s) { s->sum = r->dst_->Add(s->sum, s->prod); }
  Value End(const dim::Expr* e, State* s) {
    r->exprs_.emplace(e, s->sum);
    return s->sum;
  }
  bool FindAtom(const dim::Atom* a, Value* out) {
    auto it = r->atoms_.find(a);
    if (it == r->atoms_.end()) return false;
    *out = it->second;
    return true;
  }
  Value Var(const dim::Atom* a) {
    Value v = r->dst_->Var(a->name);
    r->atoms_.emplace(a, v);
    return v;
  }
  Value Op(const dim::Expr*, const dim::Atom* a, Value x, Value y) {
    Value v = nullptr;
    // clang-format off
    switch (a->kind) {
      case AtomKind::kVar: break;
      case AtomKind::kFloorDiv: v = r->dst_->FloorDiv(x, y); break;
      case AtomKind::kMod: v = r->dst_->Mod(x, y); break;
      case AtomKind::kMax: v = r->dst_->Max(x, y); break;
      case AtomKind::kMin: v = r->dst_->Min(x, y); break;
    }
    // clang-format on
    r->atoms_.emplace(a, v);
    return v;
  }
};

const dim::Expr* Rebuilder::Expr(const dim::Expr* e) {
  if (e == nullptr) return nullptr;
  Fold fold{this};
  return detail::FoldExpr(&fold, e);
}

std::vector<const dim::Expr*> Rebuilder::Shape(const std::vector<const dim::Expr*>& v) {
  std::vector<const dim::Expr*> out;
  out.reserve(v.size());
  for (const dim::Expr* e : v) out.push_back(Expr(e));
  return out;
}

}  // namespace dim
}  // namespace shp
