// Symbolic dimension expressions in normal form.
//
// An Expr is a sum of terms (coefficient * monomial); a Mono is a product of atoms with
// positive exponents; an Atom is a variable or floordiv/mod/max/min of normalized operands.
// Atoms, monomials and expressions are hash-consed in their Scope, so structurally equal
// objects are the same pointer, whichever way they were built (parser or operators).
// All objects are immutable and live as long as their Scope.
#ifndef SHAPEPOLY_CC_DIM_EXPR_H_
#define SHAPEPOLY_CC_DIM_EXPR_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace shp {
namespace dim {

class Scope;
struct Expr;

enum class AtomKind : uint8_t { kVar = 0, kFloorDiv = 1, kMod = 2, kMax = 3, kMin = 4 };

struct Atom {
  AtomKind kind;
  int32_t var;     // kVar: index of the variable in its scope; otherwise -1
  const char* name;  // kVar: the variable's name (owned by the scope); otherwise nullptr
  const Expr* a;   // operands of floordiv/mod/max/min (nullptr for kVar)
  const Expr* b;
  size_t hash;
  uint32_t id;     // creation index within the scope (only for hashing; never for ordering)
};

struct Factor {
  const Atom* atom;
  int32_t exp;  // >= 1
  bool operator==(const Factor& o) const { return atom == o.atom && exp == o.exp; }
};

struct Mono {
  std::vector<Factor> factors;  // sorted by CompareAtoms; empty = the constant monomial 1
  int32_t degree;               // sum of exponents
  size_t hash;
};

struct Term {
  const Mono* mono;
  int64_t coeff;  // never 0
  bool operator==(const Term& o) const { return mono == o.mono && coeff == o.coeff; }
};

struct Expr {
  Scope* scope;
  std::vector<Term> terms;  // sorted by CompareMonos (descending); constant term last
  size_t hash;

  bool IsConstant() const { return terms.empty() || (terms.size() == 1 && terms[0].mono->factors.empty()); }
  int64_t ConstantTerm() const {
    return (!terms.empty() && terms.back().mono->factors.empty()) ? terms.back().coeff : 0;
  }
  // The single atom when this expression is exactly `1 * atom`, else nullptr.
  const Atom* AsAtom() const {
    if (terms.size() != 1 || terms[0].coeff != 1) return nullptr;
    const Mono* m = terms[0].mono;
    return (m->factors.size() == 1 && m->factors[0].exp == 1) ? m->factors[0].atom : nullptr;
  }
  // The variable index when this expression is exactly one variable, else -1.
  int32_t AsVar() const {
    const Atom* at = AsAtom();
    return (at && at->kind == AtomKind::kVar) ? at->var : -1;
  }
};

// The number of terms of `e`'s normal form (0 for the constant 0), and the highest degree
// of its monomials (0 for a constant). Loaders and fuzzers cap work with them.
size_t NumTerms(const Expr* e);
int32_t Degree(const Expr* e);

// Structural total orders, independent of creation order (so printing is deterministic).
int CompareAtoms(const Atom* x, const Atom* y);
int CompareMonos(const Mono* x, const Mono* y);  // higher degree first
int CompareExprs(const Expr* x, const Expr* y);

}  // namespace dim
}  // namespace shp

#endif  // SHAPEPOLY_CC_DIM_EXPR_H_
