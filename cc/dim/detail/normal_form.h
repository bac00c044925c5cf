// The normal form of dimension expressions, private to cc/dim (only cc/dim/*.cc include
// this header; code elsewhere uses the handle in expr.h and the functions of cc/dim).
//
// An Expr is a sum of terms (coefficient * monomial); a Mono is a product of atoms with
// positive exponents; an Atom is a variable or floordiv/mod/max/min of normalized operands.
// Atoms, monomials and expressions are hash-consed in their Scope, so structurally equal
// objects are the same pointer. All objects are immutable and live as long as their Scope.
#ifndef SHAPEPOLY_CC_DIM_DETAIL_NORMAL_FORM_H_
#define SHAPEPOLY_CC_DIM_DETAIL_NORMAL_FORM_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_set>
#include <vector>

#include "cc/dim/expr.h"
#include "cc/dim/scope.h"

namespace shp {
namespace dim {

enum class AtomKind : uint8_t { kVar = 0, kFloorDiv = 1, kMod = 2, kMax = 3, kMin = 4 };

struct Atom {
  AtomKind kind;
  int32_t var;       // kVar: index of the variable in its scope; otherwise -1
  const char* name;  // kVar: the variable's name (owned by the scope); otherwise nullptr
  const Expr* a;     // operands of floordiv/mod/max/min (nullptr for kVar)
  const Expr* b;
  size_t hash;
  uint32_t id;  // creation index within the scope (only for hashing; never for ordering)
  // Nesting: 0 for a variable, else 1 + the deepest atom of a and b (<= kMaxNestingDepth).
  int32_t depth;
  // Atoms and terms when written out as a tree (1 for a variable; <= kMaxExpandedSize): with
  // hash-consing a DAG can be exponentially larger as text, and printing and evaluation walk
  // the tree.
  uint32_t expanded_size;
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

// Structural total orders, independent of creation order (so printing is deterministic).
int CompareAtoms(const Atom* x, const Atom* y);
int CompareMonos(const Mono* x, const Mono* y);  // higher degree first
int CompareExprs(const Expr* x, const Expr* y);

// A scope's interned objects (pointers into the deques stay valid).
struct Scope::Store {
  struct AtomHash {
    size_t operator()(const Atom* a) const { return a->hash; }
  };
  struct AtomEq {
    bool operator()(const Atom* x, const Atom* y) const {
      return x->kind == y->kind && x->var == y->var && x->a == y->a && x->b == y->b;
    }
  };
  struct MonoHash {
    size_t operator()(const Mono* m) const { return m->hash; }
  };
  struct MonoEq {
    bool operator()(const Mono* x, const Mono* y) const { return x->factors == y->factors; }
  };
  struct ExprHash {
    size_t operator()(const Expr* e) const { return e->hash; }
  };
  struct ExprEq {
    bool operator()(const Expr* x, const Expr* y) const { return x->terms == y->terms; }
  };

  std::deque<std::string> var_names;  // stable storage for Atom::name
  std::deque<Atom> atoms;
  std::deque<Mono> monos;
  std::deque<Expr> exprs;
  std::unordered_set<const Atom*, AtomHash, AtomEq> atom_set;
  std::unordered_set<const Mono*, MonoHash, MonoEq> mono_set;
  std::unordered_set<const Expr*, ExprHash, ExprEq> expr_set;
};

}  // namespace dim
}  // namespace shp

#endif  // SHAPEPOLY_CC_DIM_DETAIL_NORMAL_FORM_H_
