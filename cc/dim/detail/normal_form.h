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
#include <vector>

#include "cc/dim/expr.h"
#include "cc/dim/flat_table.h"
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

// A scope's interned objects (pointers into the deques stay valid), found by hash in the
// tables.
struct Scope::Store {
  std::deque<std::string> var_names;  // stable storage for Atom::name
  std::deque<Atom> atoms;
  std::deque<Mono> monos;
  std::deque<Expr> exprs;
  PtrTable<Atom> atom_table;
  PtrTable<Mono> mono_table;
  PtrTable<Expr> expr_table;
};

}  // namespace dim
}  // namespace shp

#endif  // SHAPEPOLY_CC_DIM_DETAIL_NORMAL_FORM_H_
