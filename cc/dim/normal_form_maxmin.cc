// Max and min in the normal form: the canonical form of max/min chains (flattened,
// constants folded, operands ordered and deduplicated, absorbed or dominated ones dropped),
// with the proofs it asks the decision procedure for. Part of the normal form
// (normal_form.cc: interning and the ring operators).
#include <algorithm>
#include <vector>

#include "cc/base/error.h"
#include "cc/dim/decide.h"
#include "cc/dim/detail/normal_form.h"
#include "cc/dim/int_math.h"
#include "cc/dim/poly1.h"
#include "cc/dim/scope.h"

namespace shp {
namespace dim {

namespace {

// The expression is one max (or min) atom: its single term is 1 * atom.
const Atom* AsAtomOf(const Expr* e, AtomKind kind) {
  if (e->terms.size() != 1 || e->terms[0].coeff != 1) return nullptr;
  const Mono* m = e->terms[0].mono;
  if (m->factors.size() != 1 || m->factors[0].exp != 1 || m->factors[0].atom->kind != kind)
    return nullptr;
  return m->factors[0].atom;
}

// Operand lists past this many are not flattened (the chain would nest as deep as it is
// long: a balanced tree of depth 10 has 1024 leaves).
constexpr size_t kMaxFlatOperands = 64;

// Operands of a nested max (or min) flattened: the canonical form nests to the right
// (max(o1, max(o2, o3))), but older files and other builders may nest either way. Stops
// past kMaxFlatOperands (a shared DAG can be far larger written out).
void Flatten(const Expr* e, AtomKind kind, std::vector<const Expr*>* out) {
  std::vector<const Expr*> stack{e};
  while (!stack.empty() && out->size() <= kMaxFlatOperands) {
    const Expr* x = stack.back();
    stack.pop_back();
    if (const Atom* at = AsAtomOf(x, kind)) {
      stack.push_back(at->b);
      stack.push_back(at->a);
    } else {
      out->push_back(x);
    }
  }
}

bool ExprLess(const Expr* x, const Expr* y) { return CompareExprs(x, y) < 0; }

// Levels of max/min atoms that Truncated walks below a chain's operand.
constexpr int kTruncateDepth = 6;

// Truncation of lattice terms: a term p built from max and min commutes with a min by a,
// min(a, p(x1, ..., xn)) = p(min(a, x1), ..., min(a, xn)) (max and min distribute over min(a,
// .)), so inside an operand of the chain min(S, ...), a nested min(a, Y) with a in S may be
// Y (truncating Y by a gives min(a, Y) back) and a nested max(a, Y) may be a; dually for max
// chains. e is rewritten that way, walking through max/min atoms only (an arithmetic node in
// between does not commute with truncation). `chain` holds the chain's other operands.
const Expr* Truncated(Scope& s, const Expr* e, const std::vector<const Expr*>& chain, bool is_max,
                      int depth) {
  if (depth > kTruncateDepth) return e;
  const AtomKind kind = is_max ? AtomKind::kMax : AtomKind::kMin;
  const AtomKind dual = is_max ? AtomKind::kMin : AtomKind::kMax;
  const bool same = AsAtomOf(e, kind) != nullptr;
  if (!same && AsAtomOf(e, dual) == nullptr) return e;
  std::vector<const Expr*> ops;
  Flatten(e, same ? kind : dual, &ops);
  if (ops.size() > kMaxFlatOperands) return e;
  auto in_chain = [&](const Expr* x) {
    return std::find(chain.begin(), chain.end(), x) != chain.end();
  };
  std::vector<const Expr*> kept;
  for (const Expr* o : ops) {
    if (!same && in_chain(o)) return o;  // min(a, .. max(a, Y) ..): max(a, Y) is a
    if (same && in_chain(o)) continue;   // min(a, .. min(a, Y) ..): min(a, Y) is Y
    kept.push_back(o);
  }
  if (kept.empty()) kept = ops;  // every operand in the chain: left as it is
  bool changed = kept.size() != ops.size();
  for (const Expr*& o : kept) {
    const Expr* t = Truncated(s, o, chain, is_max, depth + 1);
    changed = changed || t != o;
    o = t;
  }
  if (!changed) return e;
  const bool as_max = same ? is_max : !is_max;
  const Expr* r = kept[0];
  for (size_t i = 1; i < kept.size(); ++i) r = as_max ? s.Max(r, kept[i]) : s.Min(r, kept[i]);
  return r;
}

}  // namespace

namespace {

// Adds scale * t to q when the term t is c*x^k (or a constant); false otherwise.
bool AddTerm(const Term& t, int32_t x, __int128 scale, poly1::Poly* q) {
  {
    size_t k = 0;
    if (!t.mono->factors.empty()) {
      const Factor& f = t.mono->factors[0];
      if (t.mono->factors.size() != 1 || f.atom->kind != AtomKind::kVar || f.atom->var != x ||
          f.exp < 1 || f.exp > 16) {
        return false;
      }
      k = static_cast<size_t>(f.exp);
    }
    if (q->size() <= k) q->resize(k + 1, 0);
    __int128 c;
    if (t.coeff == kNegInf || !poly1::MulChecked(scale, t.coeff, &c) ||
        __builtin_add_overflow((*q)[k], c, &(*q)[k])) {
      return false;
    }
  }
  return true;
}

// Adds scale * e to q when e is a polynomial in variable x alone (false otherwise).
bool AddPolynomial(const Expr* e, int32_t x, __int128 scale, poly1::Poly* q) {
  for (const Term& t : e->terms) {
    if (!AddTerm(t, x, scale, q)) return false;
  }
  return true;
}

// D * e >= q(x) for every x: q a polynomial lower bound of e scaled by D (the lcm of e's
// divisors), each c*floordiv(a, k) (k >= 1) bounded by c*(a - k + 1)/k for c > 0 and c*a/k
// for c < 0, each c*mod(a, k) by 0 or c*(k - 1); a a polynomial in x. False when e has
// another form.
bool LowerPolynomial(const Expr* e, int32_t x, poly1::Poly* q) {
  int64_t lcm = 1;
  for (const Term& t : e->terms) {
    for (const Factor& f : t.mono->factors) {
      if (f.atom->kind != AtomKind::kFloorDiv && f.atom->kind != AtomKind::kMod) continue;
      if (!f.atom->b->IsConstant() || f.atom->b->ConstantTerm() < 1) return false;
      const int64_t k = f.atom->b->ConstantTerm();
      if (__builtin_mul_overflow(lcm / Gcd64(lcm, k), k, &lcm) || lcm > (int64_t{1} << 20))
        return false;
    }
  }
  q->assign(1, 0);
  for (const Term& t : e->terms) {
    const Mono* m = t.mono;
    const bool atom = m->factors.size() == 1 && m->factors[0].exp == 1 &&
                      (m->factors[0].atom->kind == AtomKind::kFloorDiv ||
                       m->factors[0].atom->kind == AtomKind::kMod);
    if (!atom) {
      if (!AddTerm(t, x, lcm, q)) return false;
      continue;
    }
    const Atom* at = m->factors[0].atom;
    const int64_t k = at->b->ConstantTerm();
    const __int128 c = t.coeff;
    if (at->kind == AtomKind::kFloorDiv) {
      // c * floordiv(a, k) * lcm >= c * (lcm / k) * (a - k + 1) or c * (lcm / k) * a.
      if (!AddPolynomial(at->a, x, c * (lcm / k), q)) return false;
      if (c > 0 && __builtin_add_overflow((*q)[0], -c * (lcm / k) * (k - 1), &(*q)[0]))
        return false;
    } else {
      poly1::Poly a;  // a must be a polynomial in x even where only the range is used
      if (!AddPolynomial(at->a, x, 1, &a)) return false;
      if (c < 0 && __builtin_add_overflow((*q)[0], c * (k - 1) * lcm, &(*q)[0])) return false;
    }
  }
  return true;
}

}  // namespace

bool Scope::ProvesNonNegativeByCases(const Expr* d) {
  constexpr int64_t kCases = 64;  // the small values evaluated one by one, at most
  if (RuleSkippedForTesting("SmallValueCases")) return false;
  int32_t x = -1;
  for (int32_t v : VarsOf(d)) {
    if (x >= 0 && v != x) return false;
    x = v;
  }
  if (x < 0) return false;
  const Interval xb = decider_->VarBounds()[static_cast<size_t>(x)];
  if (xb.lo == kNegInf || xb.lo > (int64_t{1} << 40)) return false;
  poly1::Poly q;
  if (!LowerPolynomial(d, x, &q)) return false;
  std::vector<int64_t> vals(vars_.size(), 0);
  std::vector<bool> known(vals.size(), false);
  known[static_cast<size_t>(x)] = true;
  for (int64_t x0 = xb.lo; x0 <= xb.lo + kCases && x0 <= xb.hi; ++x0) {
    if (poly1::NonNegativeFrom(q, x0)) return true;  // d >= q / D >= 0 from x0 on
    vals[static_cast<size_t>(x)] = x0;
    try {
      if (Evaluate(d, vals, known) < 0) return false;
    } catch (const Error&) {
      return false;
    }
    if (x0 == xb.hi) return true;  // every value evaluated
  }
  return false;
}

bool Scope::ProvesGe(const Expr* x, const Expr* y, bool full) {
  // x - y, or else y - x (INT64_MIN - v can fit where v - INT64_MIN does not).
  const Expr* d = nullptr;
  int sign = 1;
  try {
    d = Sub(x, y);
  } catch (const Error&) {
    try {
      d = Sub(y, x);
      sign = -1;
    } catch (const Error&) {
      return false;  // difference not representable
    }
  }
  Interval iv = decider_->IntervalOf(d);
  if (sign > 0 ? iv.lo >= 0 : iv.hi <= 0) return true;
  if (!full) return false;
  iv = decider_->Bounds(d, /*sign_only=*/true);
  if (sign > 0 ? iv.lo >= 0 : iv.hi <= 0) return true;
  try {
    return ProvesNonNegativeByCases(sign > 0 ? d : Scale(d, -1));
  } catch (const Error&) {  // -d not representable
    return false;
  }
}

const Expr* Scope::MaxMin(const Expr* a, const Expr* b, bool is_max) {
  CheckSameScope(a, b, is_max ? "max" : "min");
  if (a == b) return a;
  if (a->IsConstant() && b->IsConstant()) {  // even when no difference fits (INT64_MAX, INT64_MIN)
    return (a->ConstantTerm() >= b->ConstantTerm()) == is_max ? a : b;
  }
  const AtomKind kind = is_max ? AtomKind::kMax : AtomKind::kMin;
  const AtomKind dual = is_max ? AtomKind::kMin : AtomKind::kMax;
  const bool nested =
      AsAtomOf(a, kind) || AsAtomOf(b, kind) || AsAtomOf(a, dual) || AsAtomOf(b, dual);
  if (nested) {
    std::vector<const Expr*> ops;
    Flatten(a, kind, &ops);
    Flatten(b, kind, &ops);
    if (ops.size() <= kMaxFlatOperands) return MaxMinOf(std::move(ops), is_max);
  }
  // a - b, or else b - a (INT64_MIN - x can fit where x - INT64_MIN does not: trying one
  // order only made max(x, y) and max(y, x) different expressions).
  const Expr* x = a;
  const Expr* y = b;  // d = x - y
  const Expr* d = nullptr;
  for (int order = 0; order < 2 && d == nullptr; ++order) {
    if (order == 1) std::swap(x, y);
    try {
      d = Sub(x, y);
    } catch (const Error&) {
      d = nullptr;  // difference not representable
    }
  }
  if (d) {
    // Cheap interval arithmetic first; the full procedure only when it cannot decide.
    for (int full = 0; full < 2; ++full) {
      Interval iv = full ? decider_->Bounds(d, /*sign_only=*/true) : decider_->IntervalOf(d);
      if (iv.lo >= 0) return is_max ? x : y;
      if (iv.hi <= 0) return is_max ? y : x;
    }
    if (ProvesNonNegativeByCases(d)) return is_max ? x : y;
    try {
      if (ProvesNonNegativeByCases(Scale(d, -1))) return is_max ? y : x;
    } catch (const Error&) {  // -d not representable
    }
  }
  if (CompareExprs(a, b) > 0) std::swap(a, b);
  const Atom* at = InternAtom(kind, -1, a, b);
  return MonoExpr(InternMono({Factor{at, 1}}), 1);
}

const Expr* Scope::MaxMinOf(std::vector<const Expr*> ops, bool is_max) {
  const AtomKind kind = is_max ? AtomKind::kMax : AtomKind::kMin;
  const AtomKind dual = is_max ? AtomKind::kMin : AtomKind::kMax;
  // Constants fold into one; then order and deduplicate.
  const Expr* best_const = nullptr;
  std::vector<const Expr*> rest;
  for (const Expr* o : ops) {
    if (!o->IsConstant()) {
      rest.push_back(o);
    } else if (!best_const || (o->ConstantTerm() > best_const->ConstantTerm()) == is_max) {
      best_const = o;
    }
  }
  if (best_const) rest.push_back(best_const);
  std::sort(rest.begin(), rest.end(), ExprLess);
  rest.erase(std::unique(rest.begin(), rest.end()), rest.end());
  ops.swap(rest);
  // Truncation (Truncated): each max/min operand rewritten under the others; then the chain
  // is rebuilt from the smaller operands (each rewrite drops operands, so this terminates).
  bool truncated = false;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!AsAtomOf(ops[i], dual)) continue;
    std::vector<const Expr*> others(ops);
    others.erase(others.begin() + static_cast<std::ptrdiff_t>(i));
    const Expr* t = Truncated(*this, ops[i], others, is_max, 1);
    truncated = truncated || t != ops[i];
    ops[i] = t;
  }
  if (truncated) {
    const Expr* r = ops[0];
    for (size_t i = 1; i < ops.size(); ++i) r = is_max ? Max(r, ops[i]) : Min(r, ops[i]);
    return r;
  }
  // Absorption: max(x, min(x, y)) = x, and generally an operand that is a min over a
  // superset of another operand's min-operands (x alone: {x}) is never the largest.
  std::vector<std::vector<const Expr*>> sets(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    Flatten(ops[i], dual, &sets[i]);
    if (sets[i].size() > kMaxFlatOperands) sets[i] = {ops[i]};  // cut short: as one operand
    std::sort(sets[i].begin(), sets[i].end(), ExprLess);
    sets[i].erase(std::unique(sets[i].begin(), sets[i].end()), sets[i].end());
  }
  std::vector<bool> keep(ops.size(), true);
  for (size_t i = 0; i < ops.size(); ++i) {
    for (size_t j = 0; j < ops.size() && keep[i]; ++j) {
      if (j == i || !keep[j] || sets[j].size() > sets[i].size()) continue;
      if (std::includes(sets[i].begin(), sets[i].end(), sets[j].begin(), sets[j].end(), ExprLess)) {
        keep[i] = false;
      }
    }
  }
  // Dominance under the facts: an operand that another kept one provably beats (or ties)
  // goes; the winner stays, so the value does not change. Always the full procedure, pair
  // by pair: a printed chain reparses from its innermost pair, which must fold the same.
  for (size_t i = 0; i < ops.size(); ++i) {
    for (size_t j = 0; j < ops.size() && keep[i]; ++j) {
      if (j == i || !keep[j]) continue;
      if (is_max ? ProvesGe(ops[j], ops[i], true) : ProvesGe(ops[i], ops[j], true)) {
        keep[i] = false;
      }
    }
  }
  std::vector<const Expr*> kept;
  std::vector<std::vector<const Expr*>> kept_sets;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!keep[i]) continue;
    kept.push_back(ops[i]);
    kept_sets.push_back(std::move(sets[i]));
  }
  // Distributivity: two min-operands that share operands C factor them out,
  // max(min(C, R1), min(C, R2)) = min(C, max(min(R1), min(R2))); the first such pair in
  // order, then the whole is rebuilt (so no two min-operands of a canonical chain share an
  // operand, nor do those of any part of it, which a reparse builds first). Each
  // application makes the expression smaller, so rebuilding terminates.
  for (size_t i = 0; i < kept.size(); ++i) {
    if (kept_sets[i].size() < 2) continue;
    for (size_t j = i + 1; j < kept.size(); ++j) {
      if (kept_sets[j].size() < 2) continue;
      std::vector<const Expr*> common;
      std::set_intersection(kept_sets[i].begin(), kept_sets[i].end(), kept_sets[j].begin(),
                            kept_sets[j].end(), std::back_inserter(common), ExprLess);
      if (common.empty()) continue;
      const Expr* inner = nullptr;  // max of min(S_i \ C) and min(S_j \ C)
      for (size_t k : {i, j}) {
        std::vector<const Expr*> r;
        std::set_difference(kept_sets[k].begin(), kept_sets[k].end(), common.begin(), common.end(),
                            std::back_inserter(r), ExprLess);
        const Expr* m = r[0];  // not empty: absorption dropped subsets
        for (size_t q = 1; q < r.size(); ++q) m = is_max ? Min(m, r[q]) : Max(m, r[q]);
        inner = inner ? (is_max ? Max(inner, m) : Min(inner, m)) : m;
      }
      const Expr* result = inner;
      for (const Expr* c : common) result = is_max ? Min(result, c) : Max(result, c);
      for (size_t k = 0; k < kept.size(); ++k) {
        if (k == i || k == j) continue;
        result = is_max ? Max(result, kept[k]) : Min(result, kept[k]);
      }
      return result;
    }
  }
  // The canonical form: operands in structural order, nested to the right.
  const Expr* result = kept.back();
  for (size_t i = kept.size() - 1; i-- > 0;) {
    const Atom* at = InternAtom(kind, -1, kept[i], result);
    result = MonoExpr(InternMono({Factor{at, 1}}), 1);
  }
  return result;
}

}  // namespace dim
}  // namespace shp
