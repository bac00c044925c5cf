#include "cc/dim/dag.h"

#include "cc/base/error.h"
#include "cc/dim/detail/fold.h"
#include "cc/dim/detail/normal_form.h"

namespace shp {
namespace dim {

// The entries in the order of the recursive walk this replaced (entry order is part of the
// file format): operands left to right, each atom after its operands, a term's power, product
// and coefficient entries after its atoms.
struct DagWriter::Fold {
  using Value = uint32_t;
  struct State {
    std::vector<uint32_t> ops;  // one entry per finished term
    std::vector<uint32_t> fs;   // the current term's factors
  };
  DagWriter* w;
  bool Find(const dim::Expr* e, uint32_t* out) {
    auto it = w->memo_.find(e);
    if (it == w->memo_.end()) return false;
    *out = it->second;
    return true;
  }
  void Begin(const dim::Expr*, State*) {}
  void BeginTerm(const dim::Term&, State* s) { s->fs.clear(); }
  void Factor(const dim::Factor& f, uint32_t atom, State* s) {
    s->fs.push_back(f.exp == 1 ? atom : w->Add(DagOp::kPow, f.exp, {atom}));
  }
  void EndTerm(const dim::Term& t, State* s) {
    if (t.mono->factors.empty()) {
      s->ops.push_back(w->Add(DagOp::kConst, t.coeff, {}));
      return;
    }
    uint32_t m = s->fs.size() == 1 ? s->fs[0] : w->Add(DagOp::kMul, 0, s->fs);
    s->ops.push_back(
        t.coeff == 1 ? m : w->Add(DagOp::kMul, 0, {w->Add(DagOp::kConst, t.coeff, {}), m}));
  }
  uint32_t End(const dim::Expr* e, State* s) {
    uint32_t r;
    if (e->IsConstant()) {
      r = w->Add(DagOp::kConst, e->ConstantTerm(), {});  // the entry of its one term, if any
    } else if (e->terms.size() == 1) {
      r = s->ops[0];
    } else {
      r = w->Add(DagOp::kAdd, 0, s->ops);
    }
    w->memo_.emplace(e, r);
    return r;
  }
  bool FindAtom(const dim::Atom*, uint32_t*) { return false; }  // Add deduplicates
  uint32_t Var(const dim::Atom* a) { return w->Add(DagOp::kVar, a->var, {}); }
  uint32_t Op(const dim::Expr*, const dim::Atom* a, uint32_t x, uint32_t y) {
    switch (a->kind) {
      case AtomKind::kFloorDiv:
        return w->Add(DagOp::kFloorDiv, 0, {x, y});
      case AtomKind::kMod:
        return w->Add(DagOp::kMod, 0, {x, y});
      case AtomKind::kMax:
        return w->Add(DagOp::kMax, 0, {x, y});
      case AtomKind::kMin:
        return w->Add(DagOp::kMin, 0, {x, y});
      case AtomKind::kVar:
        break;
    }
    throw Error(Code::kInternal, "unknown atom kind");
  }
};

uint32_t DagWriter::Expr(const dim::Expr* e) {
  Fold fold{this};
  return detail::FoldExpr(&fold, e);
}

std::vector<uint32_t> DagWriter::Shape(const std::vector<const dim::Expr*>& v) {
  std::vector<uint32_t> out;
  for (const dim::Expr* e : v) out.push_back(Expr(e));
  return out;
}

uint32_t DagWriter::Add(DagOp op, int64_t value, const std::vector<uint32_t>& operands) {
  auto key = std::make_tuple(op, value, operands);
  auto it = index_.find(key);
  if (it != index_.end()) return it->second;
  uint32_t i = static_cast<uint32_t>(entries_.size());
  entries_.push_back(DagEntry{op, value, operands});
  index_.emplace(std::move(key), i);
  return i;
}

}  // namespace dim
}  // namespace shp
