// The normal form: integer helpers, structural orders, interning (hash-consing) of atoms,
// monomials and expressions, and the memoized arithmetic operators that build normal forms
// (floordiv/mod/max/min consult the decision procedure to fold). Scope lifecycle, facts and
// queries are in scope.cc.
#include <algorithm>
#include <cstring>
#include <deque>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/base/limits.h"
#include "cc/dim/decide.h"
#include "cc/dim/detail/normal_form.h"
#include "cc/dim/explain.h"
#include "cc/dim/int_math.h"
#include "cc/dim/parse.h"
#include "cc/dim/rebuild.h"
#include "cc/dim/scope.h"

namespace shp {
namespace dim {
namespace {

// Normal forms larger than the limits table's (cc/base/limits.h: terms, factors of a monomial,
// the exponent of a factor) are refused (kUnsupported) so that hostile input such as
// (a+b+c+d)^40 cannot allocate without bound, and every expression a builder makes can be
// serialized and loaded back (the loader builds with these same functions).
using limits::kMaxFactors;
using limits::kMaxPow;
using limits::kMaxTerms;
// Exponents and degrees past this overflow-proof bound fail first with kOverflow.
constexpr int32_t kMaxExponent = 1 << 20;

size_t Mix(size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }

int Sign(int v) { return (v > 0) - (v < 0); }

size_t AtomHashOf(AtomKind kind, int32_t var, const Expr* a, const Expr* b) {
  size_t h = Mix(static_cast<size_t>(kind) + 1, static_cast<size_t>(var + 7));
  if (a) h = Mix(h, a->hash);
  if (b) h = Mix(h, b->hash);
  return h;
}

// The stored object equal to `probe` (by `eq`), stored first if new (pointers into a deque
// stay valid).
template <typename T, typename Eq>
const T* Intern(T&& probe, std::deque<T>* store, PtrTable<T>* table, Eq eq) {
  if (const T* found = table->Find(probe.hash, eq)) return found;
  store->push_back(std::move(probe));
  const T* p = &store->back();
  table->Insert(p);
  return p;
}

// The hash of an expression with these terms (MakeExpr's; MonoExpr probes with it).
size_t ExprHashOf(const Term* terms, size_t n) {
  size_t h = 0x9a3c;
  for (size_t i = 0; i < n; ++i)
    h = Mix(Mix(h, terms[i].mono->hash), static_cast<size_t>(terms[i].coeff));
  return h;
}

}  // namespace

int64_t CheckedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    throw Error(Code::kOverflow, "integer overflow in dimension arithmetic");
  return r;
}
int64_t CheckedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    throw Error(Code::kOverflow, "integer overflow in dimension arithmetic");
  return r;
}
int64_t CheckedNeg(int64_t a) {
  if (a == kNegInf) throw Error(Code::kOverflow, "integer overflow in dimension arithmetic");
  return -a;
}
int64_t FloorDivInt(int64_t a, int64_t b) {
  if (b == 0) throw Error(Code::kDivisionByZero, "division by zero");
  if (a == kNegInf && b == -1)
    throw Error(Code::kOverflow, "integer overflow in dimension arithmetic");
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t ModInt(int64_t a, int64_t b) {
  if (b == 0) throw Error(Code::kDivisionByZero, "division by zero");
  if (b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

// ---- Structural orders ----

int CompareAtoms(const Atom* x, const Atom* y) {
  if (x == y) return 0;
  if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
  // Variables of one scope have distinct names; order by name for readable output.
  if (x->kind == AtomKind::kVar) return Sign(std::strcmp(x->name, y->name));
  int c = CompareExprs(x->a, y->a);
  if (c) return c;
  return CompareExprs(x->b, y->b);
}

int CompareMonos(const Mono* x, const Mono* y) {
  if (x == y) return 0;
  if (x->degree != y->degree) return x->degree > y->degree ? -1 : 1;
  size_t n = std::min(x->factors.size(), y->factors.size());
  for (size_t i = 0; i < n; ++i) {
    const Factor& fx = x->factors[i];
    const Factor& fy = y->factors[i];
    int c = CompareAtoms(fx.atom, fy.atom);
    if (c) return c;  // the mono containing the earlier atom sorts first
    if (fx.exp != fy.exp) return fx.exp > fy.exp ? -1 : 1;
  }
  if (x->factors.size() != y->factors.size()) return x->factors.size() > y->factors.size() ? -1 : 1;
  return 0;
}

int CompareExprs(const Expr* x, const Expr* y) {
  if (x == y) return 0;
  size_t n = std::min(x->terms.size(), y->terms.size());
  for (size_t i = 0; i < n; ++i) {
    int c = CompareMonos(x->terms[i].mono, y->terms[i].mono);
    if (c) return c;
    if (x->terms[i].coeff != y->terms[i].coeff)
      return x->terms[i].coeff < y->terms[i].coeff ? -1 : 1;
  }
  if (x->terms.size() != y->terms.size()) return x->terms.size() < y->terms.size() ? -1 : 1;
  return 0;
}

// ---- Interning ----

namespace {

int32_t NestingDepth(const Expr* e) {
  int32_t d = 0;
  for (const Term& t : e->terms) {
    for (const Factor& f : t.mono->factors) d = std::max(d, f.atom->depth);
  }
  return d;
}

// Atoms and terms of `e` written out as a tree; each atom's size is <= kMaxExpandedSize, so
// the sum cannot overflow for the term counts the limits allow.
uint64_t ExpandedSize(const Expr* e) {
  uint64_t n = 0;
  for (const Term& t : e->terms) {
    n += 1;
    for (const Factor& f : t.mono->factors) n += f.atom->expanded_size;
  }
  return n;
}

}  // namespace

const Atom* Scope::InternAtom(AtomKind kind, int32_t var, const Expr* a, const Expr* b) {
  Atom probe{kind, var, var >= 0 ? store_->var_names[var].c_str() : nullptr,
             a,    b,   AtomHashOf(kind, var, a, b),
             0,    0,   1};
  auto same = [&](const Atom* x) {
    return x->kind == kind && x->var == var && x->a == a && x->b == b;
  };
  if (const Atom* found = store_->atom_table.Find(probe.hash, same)) return found;
  if (kind != AtomKind::kVar) {
    // The parser accepts this nesting and no more: whatever is built prints as text that
    // parses back, and the recursive walks over atoms stay shallow.
    probe.depth = 1 + std::max(NestingDepth(a), NestingDepth(b));
    if (probe.depth > kMaxNestingDepth) {
      throw Error(Code::kUnsupported, "dimension expression nested too deeply (more than " +
                                          std::to_string(kMaxNestingDepth) +
                                          " levels of floordiv, mod, max and min)");
    }
    const uint64_t size = 1 + ExpandedSize(a) + ExpandedSize(b);
    if (size > kMaxExpandedSize) {
      throw Error(Code::kUnsupported,
                  "dimension expression too large written out (more than " +
                      std::to_string(kMaxExpandedSize) +
                      " atoms and terms: a subexpression is repeated too often)");
    }
    probe.expanded_size = static_cast<uint32_t>(size);
  }
  probe.id = static_cast<uint32_t>(store_->atoms.size());
  store_->atoms.push_back(probe);
  const Atom* p = &store_->atoms.back();
  store_->atom_table.Insert(p);
  return p;
}

const Atom* Scope::FindAtom(AtomKind kind, const Expr* a, const Expr* b) const {
  return store_->atom_table.Find(AtomHashOf(kind, -1, a, b), [&](const Atom* x) {
    return x->kind == kind && x->var == -1 && x->a == a && x->b == b;
  });
}

const Mono* Scope::InternMono(std::vector<Factor> factors) {
  std::sort(factors.begin(), factors.end(),
            [](const Factor& x, const Factor& y) { return CompareAtoms(x.atom, y.atom) < 0; });
  if (factors.size() > kMaxFactors) {
    throw Error(Code::kUnsupported,
                "dimension expression too large (a product of " + std::to_string(factors.size()) +
                    " distinct factors; the limit is " + std::to_string(kMaxFactors) + ")");
  }
  for (const Factor& f : factors) {
    if (f.exp > kMaxPow) {
      const std::string base = f.atom->kind == AtomKind::kVar &&
                                       static_cast<size_t>(f.atom->var) < store_->var_names.size()
                                   ? "'" + store_->var_names[static_cast<size_t>(f.atom->var)] + "'"
                                   : std::string("an atom");
      throw Error(Code::kUnsupported, "dimension expression too large (" + base + " to the power " +
                                          std::to_string(f.exp) + "; the limit is an exponent of " +
                                          std::to_string(kMaxPow) + ")");
    }
  }
  Mono probe{std::move(factors), 0, 0};
  size_t h = 0x51ed27;
  int64_t degree = 0;
  for (const Factor& f : probe.factors) {
    h = Mix(Mix(h, f.atom->hash), static_cast<size_t>(f.exp));
    degree += f.exp;
  }
  if (degree > kMaxExponent)
    throw Error(Code::kOverflow, "monomial degree too large in dimension expression");
  probe.degree = static_cast<int32_t>(degree);
  probe.hash = h;
  const std::vector<Factor>& fs = probe.factors;
  return Intern(std::move(probe), &store_->monos, &store_->mono_table,
                [&fs](const Mono* x) { return x->factors == fs; });
}

const Mono* Scope::MonoMul(const Mono* x, const Mono* y) {
  if (x->factors.empty()) return y;
  if (y->factors.empty()) return x;
  std::vector<Factor> out;
  out.reserve(x->factors.size() + y->factors.size());
  size_t i = 0, j = 0;
  while (i < x->factors.size() || j < y->factors.size()) {
    if (j == y->factors.size()) {
      out.push_back(x->factors[i++]);
    } else if (i == x->factors.size()) {
      out.push_back(y->factors[j++]);
    } else {
      int c = CompareAtoms(x->factors[i].atom, y->factors[j].atom);
      if (c < 0) {
        out.push_back(x->factors[i++]);
      } else if (c > 0) {
        out.push_back(y->factors[j++]);
      } else {
        int64_t e = static_cast<int64_t>(x->factors[i].exp) + y->factors[j].exp;
        if (e > kMaxExponent)
          throw Error(Code::kOverflow, "exponent too large in dimension expression");
        out.push_back(Factor{x->factors[i].atom, static_cast<int32_t>(e)});
        ++i;
        ++j;
      }
    }
  }
  return InternMono(std::move(out));
}

const Expr* Scope::MakeExpr(std::vector<Term> terms) {
  auto before = [](const Term& x, const Term& y) { return CompareMonos(x.mono, y.mono) < 0; };
  if (!std::is_sorted(terms.begin(), terms.end(), before))
    std::sort(terms.begin(), terms.end(), before);
  // Equal monomials are adjacent now: add their coefficients in place, then drop zeros.
  size_t kept = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    if (kept > 0 && terms[kept - 1].mono == terms[i].mono) {
      terms[kept - 1].coeff = CheckedAdd(terms[kept - 1].coeff, terms[i].coeff);
    } else {
      terms[kept++] = terms[i];
    }
  }
  terms.resize(kept);
  terms.erase(
      std::remove_if(terms.begin(), terms.end(), [](const Term& t) { return t.coeff == 0; }),
      terms.end());
  if (terms.size() > kMaxTerms) {
    throw Error(Code::kUnsupported,
                "dimension expression too large (" + std::to_string(terms.size()) +
                    " terms in normal form; the limit is " + std::to_string(kMaxTerms) + ")");
  }
  Expr probe{this, std::move(terms), 0, 0, -1, false};
  probe.hash = ExprHashOf(probe.terms.data(), probe.terms.size());
  // What the public handle answers without the representation (expr.h).
  const std::vector<Term>& ts = probe.terms;
  const bool has_constant = !ts.empty() && ts.back().mono->factors.empty();
  probe.is_constant = ts.empty() || (ts.size() == 1 && has_constant);
  probe.constant_term = has_constant ? ts.back().coeff : 0;
  if (ts.size() == 1 && ts[0].coeff == 1 && ts[0].mono->factors.size() == 1 &&
      ts[0].mono->factors[0].exp == 1 && ts[0].mono->factors[0].atom->kind == AtomKind::kVar) {
    probe.as_var = ts[0].mono->factors[0].atom->var;
  }
  return Intern(std::move(probe), &store_->exprs, &store_->expr_table,
                [&ts](const Expr* x) { return x->terms == ts; });
}

const Expr* Scope::MonoExpr(const Mono* m, int64_t coeff) {
  // Most calls find an existing expression: probe without building a term vector.
  const Term t{m, coeff};
  if (coeff != 0) {
    const Expr* found = store_->expr_table.Find(ExprHashOf(&t, 1), [&t](const Expr* x) {
      return x->terms.size() == 1 && x->terms[0] == t;
    });
    if (found) return found;
  }
  return MakeExpr({t});
}

const Expr* Scope::Constant(int64_t value) {
  // Small constants come up constantly (coefficients, shapes): keep them at hand.
  constexpr int64_t kLo = -16, kHi = 256;
  if (value >= kLo && value <= kHi) {
    const Expr*& slot = small_constants_[static_cast<size_t>(value - kLo)];
    if (!slot) slot = value == 0 ? MakeExpr({}) : MonoExpr(unit_mono_, value);
    return slot;
  }
  return value == 0 ? MakeExpr({}) : MonoExpr(unit_mono_, value);
}

const Expr* Scope::Var(const std::string& name, bool mark_used) {
  int32_t v = FindVar(name);
  if (v < 0) {
    if (!IsValidVarName(name)) {
      throw Error(Code::kInvalidArgument,
                  "'" + QuoteForMessage(name) + "' is not a valid dimension variable name");
    }
    v = AddVariable(name);
  }
  if (mark_used) vars_[v].used = true;
  if (var_exprs_.size() <= static_cast<size_t>(v))
    var_exprs_.resize(static_cast<size_t>(v) + 1, nullptr);
  const Expr*& e = var_exprs_[static_cast<size_t>(v)];
  if (!e) e = MonoExpr(InternMono({Factor{InternAtom(AtomKind::kVar, v, nullptr, nullptr), 1}}), 1);
  return e;
}
// ---- Normal-form arithmetic ----

const Expr* Scope::AddImpl(const Expr* a, const Expr* b) {
  CheckSameScope(a, b, "add");
  if (a->terms.empty()) return b;
  if (b->terms.empty()) return a;
  // Both term lists are sorted: merge them (MakeExpr then skips sorting).
  std::vector<Term> t;
  t.reserve(a->terms.size() + b->terms.size());
  std::merge(a->terms.begin(), a->terms.end(), b->terms.begin(), b->terms.end(),
             std::back_inserter(t),
             [](const Term& x, const Term& y) { return CompareMonos(x.mono, y.mono) < 0; });
  return MakeExpr(std::move(t));
}

const Expr* Scope::Neg(const Expr* a) { return Scale(a, -1); }

const Expr* Scope::ScaleImpl(const Expr* a, int64_t c) {
  if (c == 1) return a;
  std::vector<Term> t;
  if (c != 0) {
    t.reserve(a->terms.size());
    for (const Term& x : a->terms) t.push_back(Term{x.mono, CheckedMul(x.coeff, c)});
  }
  return MakeExpr(std::move(t));
}

const Expr* Scope::SubImpl(const Expr* a, const Expr* b) {
  CheckSameScope(a, b, "sub");
  if (a == b) return Constant(0);
  return Add(a, Neg(b));
}

const Expr* Scope::MulImpl(const Expr* a, const Expr* b) {
  CheckSameScope(a, b, "mul");
  if (b->IsConstant()) return Scale(a, b->ConstantTerm());
  if (a->IsConstant()) return Scale(b, a->ConstantTerm());
  if (a->terms.size() * b->terms.size() > kMaxTerms * 4) {
    throw Error(Code::kUnsupported, "dimension expression too large (product of " +
                                        std::to_string(a->terms.size()) + " and " +
                                        std::to_string(b->terms.size()) + " terms)");
  }
  std::vector<Term> t;
  t.reserve(a->terms.size() * b->terms.size());
  for (const Term& x : a->terms) {
    for (const Term& y : b->terms)
      t.push_back(Term{MonoMul(x.mono, y.mono), CheckedMul(x.coeff, y.coeff)});
  }
  return MakeExpr(std::move(t));
}

const Expr* Scope::PowImpl(const Expr* a, int64_t k) {
  if (k < 0) throw Error(Code::kInvalidArgument, "negative exponent in dimension expression");
  if (k == 0) return Constant(1);
  if (k > kMaxExponent) throw Error(Code::kOverflow, "exponent too large in dimension expression");
  if (a->terms.size() == 1) {  // c*m ^ k, without expansion
    const Term& t = a->terms[0];
    int64_t c = 1;
    for (int64_t i = 0; i < k; ++i) {
      c = CheckedMul(c, t.coeff);
      if ((c == 1 || c == -1) && (t.coeff == 1 || t.coeff == -1)) {
        c = (t.coeff == -1 && (k % 2)) ? -1 : 1;
        break;
      }
    }
    std::vector<Factor> f;
    for (const Factor& x : t.mono->factors) {
      int64_t e = CheckedMul(x.exp, k);
      if (e > kMaxExponent)
        throw Error(Code::kOverflow, "exponent too large in dimension expression");
      f.push_back(Factor{x.atom, static_cast<int32_t>(e)});
    }
    return MonoExpr(InternMono(std::move(f)), c);
  }
  const Expr* result = Constant(1);
  const Expr* base = a;
  while (k > 0) {
    if (k & 1) result = Mul(result, base);
    k >>= 1;
    if (k) base = Mul(base, base);
  }
  return result;
}

// Splits `a` into k*Q + R with every coefficient of R in [0, k).
static void SplitByConstant(Scope* s, const Expr* a, int64_t k, const Expr** q, const Expr** r) {
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
static void DividePoly(Scope* s, const Expr* a, const Expr* b, const Expr** q, const Expr** r) {
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

const Expr* Scope::DivMod(const Expr* a, const Expr* b, bool want_mod) {
  CheckSameScope(a, b, want_mod ? "mod" : "floordiv");
  const char* opname = want_mod ? "mod" : "floordiv";
  if (b->IsConstant()) {
    int64_t k = b->ConstantTerm();
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
    const Expr* kk = Constant(k);
    if (want_mod)
      return Scale(MonoExpr(InternMono({Factor{InternAtom(AtomKind::kMod, -1, r, kk), 1}}), 1), g);
    return Add(q, MonoExpr(InternMono({Factor{InternAtom(AtomKind::kFloorDiv, -1, r, kk), 1}}), 1));
  }
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
  if (bi.lo < 1) {
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
      // 2). That value becomes a row of the questions about the atom (decide_rows.cc).
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
  if (a->terms.empty()) return a;
  // Common factors of numerator and divisor cancel (issue 14): floordiv(g*x, g*y) ==
  // floordiv(x, y) and mod(g*x, g*y) == g*mod(x, y) for g > 0, where g is the gcd of every
  // coefficient times the monomial every term shares (when the facts make it >= 1, so the
  // divisor left stays positive).
  {
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
    if (g > 1 || cm != unit_mono_) {
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
    }
  }
  const Expr *q, *r;
  DividePoly(this, a, b, &q, &r);
  if (r->terms.empty()) return want_mod ? r : q;
  if (Compare(r, Cmp::kGe, Constant(0)) == Truth::kTrue &&
      Compare(r, Cmp::kLt, b) == Truth::kTrue) {
    return want_mod ? r : q;
  }
  // Nested floors fold (issue 14): floordiv(floordiv(x, d), b) == floordiv(x, d*b) and
  // mod(floordiv(x, d), b) == floordiv(x, d) - b*floordiv(x, d*b), for a constant d >= 1
  // and b >= 1 (here on the remainder r of a == q*b + r, so that what prints reparses to
  // itself). Only a constant inner divisor: a chain of symbolic ones keeps its nesting (and
  // its depth limit, kMaxNestingDepth).
  if (r->terms.size() == 1 && r->terms[0].coeff == 1 && r->terms[0].mono->factors.size() == 1 &&
      r->terms[0].mono->factors[0].exp == 1 &&
      r->terms[0].mono->factors[0].atom->kind == AtomKind::kFloorDiv &&
      r->terms[0].mono->factors[0].atom->b->IsConstant()) {
    const Atom* inner = r->terms[0].mono->factors[0].atom;
    const Expr* d = nullptr;
    try {  // d*b may overflow, or its bounds not show it >= 1: then no fold
      d = Mul(inner->b, b);
      if (!d->IsConstant() && Bounds(d).lo < 1) d = nullptr;
    } catch (const Error&) {
      d = nullptr;
    }
    if (d) {
      try {  // the folded form is never deeper or larger, but a refusal keeps the atom
        const Expr* folded = FloorDiv(inner->a, d);
        return want_mod ? Sub(r, Mul(b, folded)) : Add(q, folded);
      } catch (const Error&) {
      }
    }
  }
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
  if (constrained) {
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
    if (sampled && b0 >= 1) {
      const int64_t k = FloorDivInt(r0, b0);
      try {
        const Expr* rest = Sub(r, Scale(b, k));
        if (Compare(rest, Cmp::kGe, Constant(0)) == Truth::kTrue &&
            Compare(rest, Cmp::kLt, b) == Truth::kTrue) {
          return want_mod ? rest : Add(q, Constant(k));
        }
      } catch (const Error&) {  // k*b overflows: no such quotient to prove
      }
    }
  }
  if (want_mod) return MonoExpr(InternMono({Factor{InternAtom(AtomKind::kMod, -1, r, b), 1}}), 1);
  return Add(q, MonoExpr(InternMono({Factor{InternAtom(AtomKind::kFloorDiv, -1, r, b), 1}}), 1));
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

}  // namespace

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
  return sign > 0 ? iv.lo >= 0 : iv.hi <= 0;
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

// ---- Memoized public operators ----
// Tracing rebuilds the same dims over and over (broadcasting, reshapes); each operation's
// result is remembered per scope, so a repeat costs one hash lookup.

size_t Scope::MemoHash::operator()(const MemoKey& k) const {
  return Mix(Mix(Mix(reinterpret_cast<size_t>(k.a), reinterpret_cast<size_t>(k.b)),
                 static_cast<size_t>(k.k)),
             static_cast<size_t>(k.op));
}

const Expr* Scope::Memo(MemoOp op, const Expr* a, const Expr* b, int64_t k) {
  MemoKey key{a, b, k, op};
  if (const Expr* found = memo_.Find(key)) return found;
  const Expr* r = nullptr;
  // clang-format off
  switch (op) {
    case MemoOp::kAdd: r = AddImpl(a, b); break;
    case MemoOp::kSub: r = SubImpl(a, b); break;
    case MemoOp::kMul: r = MulImpl(a, b); break;
    case MemoOp::kScale: r = ScaleImpl(a, k); break;
    case MemoOp::kPow: r = PowImpl(a, k); break;
    case MemoOp::kFloorDiv: r = DivMod(a, b, false); break;
    case MemoOp::kMod: r = DivMod(a, b, true); break;
    case MemoOp::kMax: r = MaxMin(a, b, true); break;
    case MemoOp::kMin: r = MaxMin(a, b, false); break;
  }
  // clang-format on
  if (r != nullptr) memo_.Insert(key, r);
  return r;
}

const Expr* Scope::Add(const Expr* a, const Expr* b) { return Memo(MemoOp::kAdd, a, b, 0); }
const Expr* Scope::Sub(const Expr* a, const Expr* b) { return Memo(MemoOp::kSub, a, b, 0); }
const Expr* Scope::Mul(const Expr* a, const Expr* b) { return Memo(MemoOp::kMul, a, b, 0); }
const Expr* Scope::Scale(const Expr* a, int64_t c) { return Memo(MemoOp::kScale, a, nullptr, c); }
const Expr* Scope::Pow(const Expr* a, int64_t k) { return Memo(MemoOp::kPow, a, nullptr, k); }
const Expr* Scope::FloorDiv(const Expr* a, const Expr* b) {
  return Memo(MemoOp::kFloorDiv, a, b, 0);
}
const Expr* Scope::Mod(const Expr* a, const Expr* b) { return Memo(MemoOp::kMod, a, b, 0); }
const Expr* Scope::Max(const Expr* a, const Expr* b) { return Memo(MemoOp::kMax, a, b, 0); }
const Expr* Scope::Min(const Expr* a, const Expr* b) { return Memo(MemoOp::kMin, a, b, 0); }

}  // namespace dim
}  // namespace shp
