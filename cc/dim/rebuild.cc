#include "cc/dim/rebuild.h"
#include "cc/dim/detail/normal_form.h"

namespace shp {
namespace dim {

const dim::Expr* Rebuilder::Atom(const dim::Atom* a) {
  auto it = atoms_.find(a);
  if (it != atoms_.end()) return it->second;
  const dim::Expr* r = nullptr;
  // clang-format off
  switch (a->kind) {
    case AtomKind::kVar: r = dst_->Var(a->name); break;
    case AtomKind::kFloorDiv: r = dst_->FloorDiv(Expr(a->a), Expr(a->b)); break;
    case AtomKind::kMod: r = dst_->Mod(Expr(a->a), Expr(a->b)); break;
    case AtomKind::kMax: r = dst_->Max(Expr(a->a), Expr(a->b)); break;
    case AtomKind::kMin: r = dst_->Min(Expr(a->a), Expr(a->b)); break;
  }
  // clang-format on
  atoms_.emplace(a, r);
  return r;
}

const dim::Expr* Rebuilder::Expr(const dim::Expr* e) {
  if (e == nullptr) return nullptr;
  auto it = exprs_.find(e);
  if (it != exprs_.end()) return it->second;
  const dim::Expr* sum = dst_->Constant(0);
  for (const Term& t : e->terms) {
    const dim::Expr* prod = dst_->Constant(t.coeff);
    for (const Factor& f : t.mono->factors) prod = dst_->Mul(prod, dst_->Pow(Atom(f.atom), f.exp));
    sum = dst_->Add(sum, prod);
  }
  exprs_.emplace(e, sum);
  return sum;
}

std::vector<const dim::Expr*> Rebuilder::Shape(const std::vector<const dim::Expr*>& v) {
  std::vector<const dim::Expr*> out;
  out.reserve(v.size());
  for (const dim::Expr* e : v) out.push_back(Expr(e));
  return out;
}

}  // namespace dim
}  // namespace shp
