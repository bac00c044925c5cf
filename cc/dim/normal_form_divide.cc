// Division in the normal form: floordiv and mod (Scope::DivMod and its cases), exact
// polynomial division and the constant quotients the decision procedure proves. Part of
// the normal form (normal_form.cc: interning and the ring operators).
#include <algorithm>
#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/dim/detail/normal_form.h"
#include "cc/dim/int_math.h"
#include "cc/dim/scope.h"

namespace shp {
namespace dim {

namespace {

// Splits `a` into k*Q + R with every coefficient of R in [0, k).
void SplitByConstant(Scope* s, const Expr* a, int64_t k, const Expr** q, const Expr** r) {
  std::vector<Term> qt, rt;
  for (const Term& t : a->terms) {
    int64_t qc = FloorDivInt(t.coeff, k);
    int64_t rc = ModInt(t.coeff, k);  // not coeff - qc*k: qc*k may pass INT64_MIN
    if (qc) qt.push_back(Term{t.mono, qc});
    if (rc) rt.push_back(Term{t.mono, rc});
  }
  *q = s->MakeExpr(std::move(qt));
  *r = s->MakeExpr(std::move(rt));
}

// Exact multivariate division by `b` (graded order): returns a = b*q + r, where q only
// takes steps with integer coefficients.
void DividePoly(Scope* s, const Expr* a, const Expr* b, const Expr** q, const Expr** r) {
  const Term& lead = b->terms[0];
  std::vector<Term> qt, rt;
  const Expr* p = a;
  size_t steps = 0;
  while (!p->terms.empty()) {
    if (++steps > 4 * 4096)
      throw Error(Code::kUnsupported, "dimension expression too large to divide");
    const Term& t = p->terms[0];
    // Does lead.mono divide t.mono?
    std::vector<Factor> rest;
    bool divides = t.coeff % lead.coeff == 0;
    if (divides) {
      size_t j = 0;
      for (const Factor& f : t.mono->factors) {
        if (j < lead.mono->factors.size() && lead.mono->factors[j].atom == f.atom) {
          if (lead.mono->factors[j].exp > f.exp) {
            divides = false;
            break;
          }
          if (f.exp > lead.mono->factors[j].exp)
            rest.push_back(Factor{f.atom, f.exp - lead.mono->factors[j].exp});
          ++j;
        } else {
          rest.push_back(f);
        }
      }
      if (j != lead.mono->factors.size()) divides = false;
    }
    if (divides) {
      Term qterm{s->InternMono(rest), t.coeff / lead.coeff};
      qt.push_back(qterm);
      p = s->Sub(p, s->Mul(b, s->MonoExpr(qterm.mono, qterm.coeff)));
    } else {
      rt.push_back(t);
      p = s->Sub(p, s->MonoExpr(t.mono, t.coeff));
    }
  }
  *q = s->MakeExpr(std::move(qt));
  *r = s->MakeExpr(std::move(rt));
}

}  // namespace

const Expr* Scope::DivMod(const Expr* a, const Expr* b, bool want_mod) {
  CheckSameScope(a, b, want_mod ? "mod" : "floordiv");
  const char* opname = want_mod ? "mod" : "floordiv";
  if (b->IsConstant()) return DivModByConstant(a, b->ConstantTerm(), want_mod, opname);
  // Symbolic divisor: its sign must be known.
  Interval bi = Bounds(b);
  if (bi.hi <= -1) {
    const Expr* r = DivMod(Neg(a), Neg(b), want_mod);
    return want_mod ? Neg(r) : r;
  }
  if (bi.lo == 0 && bi.hi == 0) {
    throw Error(Code::kDivisionByZero,
                std::string("division by zero: the divisor '") + ToString(b) + "' of " + opname +
                    "(" + ToString(a) + ", " + ToString(b) +
                    ") is 0 wherever the constraints hold (" + ConstraintsToString() + ")");
  }
  if (bi.lo < 1) return DivModMayBeZero(a, b, want_mod);
  if (a->terms.empty()) return a;
  if (const Expr* e = DivModCancelCommon(a, b, want_mod)) return e;
  const Expr *q, *r;
  DividePoly(this, a, b, &q, &r);
  if (r->terms.empty()) return want_mod ? r : q;
  if (Compare(r, Cmp::kGe, Constant(0)) == Truth::kTrue &&
      Compare(r, Cmp::kLt, b) == Truth::kTrue) {
    return want_mod ? r : q;
  }
  if (const Expr* e = DivModFoldNested(q, r, b, want_mod)) return e;
  if (const Expr* e = DivModProvenQuotient(q, r, b, want_mod)) return e;
  if (want_mod) return MonoExpr(InternMono({Factor{InternAtom(AtomKind::kMod, -1, r, b), 1}}), 1);
  return Add(q, MonoExpr(InternMono({Factor{InternAtom(AtomKind::kFloorDiv, -1, r, b), 1}}), 1));
}

const Expr* Scope::DivModByConstant(const Expr* a, int64_t k, bool want_mod, const char* opname) {
  if (k == 0) {
    throw Error(Code::kDivisionByZero,
                std::string("division by zero in ") + opname + "(" + ToString(a) + ", 0)");
  }
  if (k < 0) {  // floordiv(a, -k) = floordiv(-a, k); mod(a, -k) = -mod(-a, k)
    const Expr* r = DivMod(Neg(a), Constant(CheckedNeg(k)), want_mod);
    return want_mod ? Neg(r) : r;
  }
  if (k == 1) return want_mod ? Constant(0) : a;
  const Expr *q, *r;
  SplitByConstant(this, a, k, &q, &r);
  if (r->IsConstant()) {
    int64_t rc = r->ConstantTerm();
    return want_mod ? Constant(ModInt(rc, k)) : Add(q, Constant(FloorDivInt(rc, k)));
  }
  // floordiv(g*R', g*k') = floordiv(R', k'); mod(g*R', g*k') = g*mod(R', k').
  int64_t g = k;
  for (const Term& t : r->terms) g = Gcd64(g, t.coeff);  // <= k: 2^62 never stands in
  if (g > 1) {
    std::vector<Term> rt;
    for (const Term& t : r->terms) rt.push_back(Term{t.mono, t.coeff / g});
    r = MakeExpr(std::move(rt));
    k /= g;
  }
  Interval iv = Bounds(r);
  if (iv.lo != kNegInf && iv.hi != kPosInf && FloorDivInt(iv.lo, k) == FloorDivInt(iv.hi, k)) {
    int64_t q0 = FloorDivInt(iv.lo, k);
    if (want_mod) return Scale(Sub(r, Constant(CheckedMul(q0, k))), g);
    return Add(q, Constant(q0));
  }
  // floordiv(floordiv(x, d) + c, k) == floordiv(x + c*d, d*k) for constants d, k >= 1 and c
  // (issue 43; floordiv(x, d) + c is floordiv(x + c*d, d)), as DivModFoldNested does for a
  // symbolic k; mod keeps its atom (its printed form stays).
  if (!want_mod) {
    const Atom* inner = nullptr;
    int64_t c = 0;
    for (const Term& t : r->terms) {
      if (t.mono->factors.empty()) {
        c = t.coeff;
      } else if (!inner && t.coeff == 1 && t.mono->factors.size() == 1 &&
                 t.mono->factors[0].exp == 1) {
        inner = t.mono->factors[0].atom;
      } else {
        inner = nullptr;
        c = 0;
        break;
      }
    }
    if (inner && inner->kind == AtomKind::kFloorDiv && inner->b->IsConstant() &&
        inner->b->ConstantTerm() >= 1) {
      const int64_t d = inner->b->ConstantTerm();
      int64_t dk = 0, cd = 0;
      if (!__builtin_mul_overflow(d, k, &dk) && !__builtin_mul_overflow(c, d, &cd)) {
        try {  // x + c*d may overflow: then the atom stays
          return Add(q, FloorDiv(Add(inner->a, Constant(cd)), Constant(dk)));
        } catch (const Error&) {
        }
      }
    }
  }
  const Expr* kk = Constant(k);
  if (want_mod)
    return Scale(MonoExpr(InternMono({Factor{InternAtom(AtomKind::kMod, -1, r, kk), 1}}), 1), g);
  return Add(q, MonoExpr(InternMono({Factor{InternAtom(AtomKind::kFloorDiv, -1, r, kk), 1}}), 1));
}

const Expr* Scope::DivModMayBeZero(const Expr* a, const Expr* b, bool want_mod) {
  // A divisor that may be zero (issue 14, as JAX accepts mod(n, floordiv(m, 3))): the
  // expression stays one opaque atom, unsimplified, so evaluating it where the divisor is
  // 0 is SHP_DIVISION_BY_ZERO. Decisions hold wherever it is defined (decide.h): for a
  // divisor never negative, that is where it is >= 1, and the simplification it has there
  // becomes a row of the questions about the atom (x == y gives floordiv(x, y) == 1).
  const Atom* atom = InternAtom(want_mod ? AtomKind::kMod : AtomKind::kFloorDiv, -1, a, b);
  const Expr* e = MonoExpr(InternMono({Factor{atom, 1}}), 1);
  if (!where_defined_.count(atom)) {
    // Where b != 0 the atom is exact when a is a multiple of b: a == q*b as polynomials,
    // or a - k*b == 0 under the facts for the k of a sample (x == y: floordiv(2*x, y) is
    // 2). That value becomes a row of the questions about the atom (rules/divmod.cc).
    try {
      const Expr* alt = nullptr;
      const Expr *q, *r;
      DividePoly(this, a, b, &q, &r);
      if (r->terms.empty()) {
        alt = want_mod ? Constant(0) : q;
      } else if (const Expr* k = SampleQuotient(a, b)) {
        if (Compare(Sub(a, Mul(k, b)), Cmp::kEq, Constant(0)) == Truth::kTrue) {
          alt = want_mod ? Constant(0) : k;
        }
      }
      if (alt) where_defined_.emplace(atom, alt);
    } catch (const Error&) {  // overflow: no such form
    }
  }
  return e;
}

const Expr* Scope::DivModCancelCommon(const Expr* a, const Expr* b, bool want_mod) {
  // Common factors of numerator and divisor cancel (issue 14): floordiv(g*x, g*y) ==
  // floordiv(x, y) and mod(g*x, g*y) == g*mod(x, y) for g > 0, where g is the gcd of every
  // coefficient times the monomial every term shares (when the facts make it >= 1, so the
  // divisor left stays positive).
  int64_t g = 0;
  for (const Expr* x : {a, b}) {
    for (const Term& t : x->terms) g = Gcd64(g, t.coeff);
  }
  std::vector<Factor> common = b->terms[0].mono->factors;
  for (const Expr* x : {a, b}) {
    for (const Term& t : x->terms) {
      std::vector<Factor> keep;
      for (const Factor& c : common) {
        for (const Factor& f : t.mono->factors) {
          if (f.atom == c.atom) keep.push_back(Factor{c.atom, std::min(c.exp, f.exp)});
        }
      }
      common.swap(keep);
    }
  }
  const Mono* cm = InternMono(common);
  if (!common.empty() && Bounds(MonoExpr(cm, 1)).lo < 1) cm = unit_mono_;
  if (g <= 1 && cm == unit_mono_) return nullptr;
  auto divide = [&](const Expr* x) {
    std::vector<Term> out;
    for (const Term& t : x->terms) {
      std::vector<Factor> rest;
      size_t j = 0;
      for (const Factor& f : t.mono->factors) {
        if (j < cm->factors.size() && cm->factors[j].atom == f.atom) {
          if (f.exp > cm->factors[j].exp)
            rest.push_back(Factor{f.atom, f.exp - cm->factors[j].exp});
          ++j;
        } else {
          rest.push_back(f);
        }
      }
      out.push_back(Term{InternMono(std::move(rest)), t.coeff / g});
    }
    return MakeExpr(std::move(out));
  };
  // b / (g*cm) >= 1 holds, but the procedure must see it too, or the division below
  // would be refused where the uncancelled one was not.
  const Expr* b2 = divide(b);
  if (b2->IsConstant() || Bounds(b2).lo >= 1) {
    const Expr* r = DivMod(divide(a), b2, want_mod);
    return want_mod ? Mul(MonoExpr(cm, g), r) : r;
  }
  return nullptr;
}

const Expr* Scope::DivModFoldNested(const Expr* q, const Expr* r, const Expr* b, bool want_mod) {
  // Nested floors fold (issue 14): floordiv(floordiv(x, d), b) == floordiv(x, d*b) and
  // mod(floordiv(x, d), b) == floordiv(x, d) - b*floordiv(x, d*b), for a constant d >= 1
  // and b >= 1 (here on the remainder r of a == q*b + r, so that what prints reparses to
  // itself). Only a constant inner divisor: a chain of symbolic ones keeps its nesting (and
  // its depth limit, kMaxNestingDepth).
  if (!(r->terms.size() == 1 && r->terms[0].coeff == 1 && r->terms[0].mono->factors.size() == 1 &&
        r->terms[0].mono->factors[0].exp == 1 &&
        r->terms[0].mono->factors[0].atom->kind == AtomKind::kFloorDiv &&
        r->terms[0].mono->factors[0].atom->b->IsConstant())) {
    return nullptr;
  }
  const Atom* inner = r->terms[0].mono->factors[0].atom;
  const Expr* d = nullptr;
  try {  // d*b may overflow, or its bounds not show it >= 1: then no fold
    d = Mul(inner->b, b);
    if (!d->IsConstant() && Bounds(d).lo < 1) d = nullptr;
  } catch (const Error&) {
    d = nullptr;
  }
  if (!d) return nullptr;
  try {  // the folded form is never deeper or larger, but a refusal keeps the atom
    const Expr* folded = FloorDiv(inner->a, d);
    return want_mod ? Sub(r, Mul(b, folded)) : Add(q, folded);
  } catch (const Error&) {
  }
  return nullptr;
}

const Expr* Scope::DivModProvenQuotient(const Expr* q, const Expr* r, const Expr* b,
                                        bool want_mod) {
  // A constant quotient k of r by b that the facts prove (k*b <= r < (k + 1)*b): x == y
  // gives floordiv(3*x, y) == 3; s a multiple of 3, s >= 3 gives floordiv(s, floordiv(s, 3))
  // == 3. The candidate k is r / b at the variables' lowest values (a guess; only a proof
  // makes it the answer). Only when a fact mentions a variable of r or b: without one, the
  // bounds above already said what the ranges imply.
  bool constrained = false;
  if (!facts_.empty()) {
    std::vector<int32_t> vs = VarsOf(r);
    for (int32_t v : VarsOf(b)) vs.push_back(v);
    for (const Fact& f : facts_) {
      for (const Expr* side : {f.lhs, f.rhs}) {
        for (int32_t v : VarsOf(side)) {
          constrained = constrained || std::find(vs.begin(), vs.end(), v) != vs.end();
        }
      }
      if (constrained) break;
    }
  }
  if (!constrained) return nullptr;
  std::vector<int64_t> values(vars_.size(), 0);
  std::vector<bool> known(vars_.size(), false);
  bool sampled = true;
  for (const Expr* x : {r, b}) {
    for (int32_t v : VarsOf(x)) {
      if (known[v]) continue;
      Interval iv = Bounds(Var(vars_[v].name, /*mark_used=*/false));
      if (iv.lo == kNegInf && iv.hi == kPosInf) sampled = false;
      values[v] = iv.lo != kNegInf ? iv.lo : iv.hi;
      known[v] = true;
    }
  }
  int64_t r0 = 0, b0 = 0;
  if (sampled) {
    try {
      r0 = Evaluate(r, values, known);
      b0 = Evaluate(b, values, known);
    } catch (const Error&) {
      sampled = false;
    }
  }
  if (!sampled || b0 < 1) return nullptr;
  const int64_t k = FloorDivInt(r0, b0);
  try {
    const Expr* rest = Sub(r, Scale(b, k));
    if (Compare(rest, Cmp::kGe, Constant(0)) == Truth::kTrue &&
        Compare(rest, Cmp::kLt, b) == Truth::kTrue) {
      return want_mod ? rest : Add(q, Constant(k));
    }
  } catch (const Error&) {  // k*b overflows: no such quotient to prove
  }
  return nullptr;
}

const Expr* Scope::SampleQuotient(const Expr* a, const Expr* b) {
  std::vector<int64_t> values(vars_.size(), 0);
  std::vector<bool> known(vars_.size(), false);
  for (const Expr* x : {a, b}) {
    for (int32_t v : VarsOf(x)) {
      if (known[v]) continue;
      const Interval iv = Bounds(Var(vars_[v].name, /*mark_used=*/false));
      values[v] = iv.lo > 1 ? iv.lo : iv.hi < 1 ? iv.hi : 1;
      known[v] = true;
    }
  }
  try {
    const int64_t b0 = Evaluate(b, values, known);
    if (b0 == 0) return nullptr;
    return Constant(FloorDivInt(Evaluate(a, values, known), b0));
  } catch (const Error&) {
    return nullptr;
  }
}

}  // namespace dim
}  // namespace shp
