// The normal form: integer helpers, structural orders, interning (hash-consing) of atoms,
// monomials and expressions, and the memoized arithmetic operators that build normal forms
// (floordiv/mod/max/min consult the decision procedure to fold). The division cases are in
// normal_form_divide.cc, the max/min canonical form in normal_form_maxmin.cc. Scope
// lifecycle, facts and queries are in scope.cc.
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
