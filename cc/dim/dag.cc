#include "cc/dim/dag.h"

#include "cc/base/error.h"
#include "cc/dim/detail/normal_form.h"

namespace shp {
namespace dim {

uint32_t DagWriter::Expr(const dim::Expr* e) {
  auto it = memo_.find(e);
  if (it != memo_.end()) return it->second;
  uint32_t r;
  if (e->IsConstant()) {
    r = Add(DagOp::kConst, e->ConstantTerm(), {});
  } else if (e->terms.size() == 1) {
    r = Term(e->terms[0]);
  } else {
    std::vector<uint32_t> ops;
    for (const dim::Term& t : e->terms) ops.push_back(Term(t));
    r = Add(DagOp::kAdd, 0, ops);
  }
  memo_.emplace(e, r);
  return r;
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

uint32_t DagWriter::Atom(const dim::Atom* a) {
  // Operands are written left to right (braced lists evaluate in order): entry order is
  // part of the file format.
  switch (a->kind) {
    case AtomKind::kVar:
      return Add(DagOp::kVar, a->var, {});
    case AtomKind::kFloorDiv:
      return Add(DagOp::kFloorDiv, 0, {Expr(a->a), Expr(a->b)});
    case AtomKind::kMod:
      return Add(DagOp::kMod, 0, {Expr(a->a), Expr(a->b)});
    case AtomKind::kMax:
      return Add(DagOp::kMax, 0, {Expr(a->a), Expr(a->b)});
    case AtomKind::kMin:
      return Add(DagOp::kMin, 0, {Expr(a->a), Expr(a->b)});
  }
  throw Error(Code::kInternal, "unknown atom kind");
}

uint32_t DagWriter::Term(const dim::Term& t) {
  if (t.mono->factors.empty()) return Add(DagOp::kConst, t.coeff, {});
  std::vector<uint32_t> fs;
  for (const Factor& f : t.mono->factors) {
    uint32_t a = Atom(f.atom);
    fs.push_back(f.exp == 1 ? a : Add(DagOp::kPow, f.exp, {a}));
  }
  uint32_t m = fs.size() == 1 ? fs[0] : Add(DagOp::kMul, 0, fs);
  if (t.coeff == 1) return m;
  return Add(DagOp::kMul, 0, {Add(DagOp::kConst, t.coeff, {}), m});
}

}  // namespace dim
}  // namespace shp
