// The decision procedure: sound bounds of dimension expressions under a scope's facts.
//
// Method (see decide.cc): every non-constant monomial is treated as an integer-valued
// unknown ("column"). We collect linear facts about the columns — the constraints and
// assertions, interval bounds of each monomial, the implicit facts of every atom
// (k*floordiv(x,k) + mod(x,k) == x, 0 <= mod(x,k) < k, max(a,b) >= a, ...), and
// McCormick relaxations of products (a*b >= a + b - 1 when a, b >= 1) — and project them
// onto z = e by Fourier–Motzkin elimination with integer tightening. Every derived row is
// a non-negative combination of valid facts, so every bound is sound; dropping rows (to
// cap the work) only weakens results. Column order is structural, so the answer does not
// depend on the order in which constraints were given.
#ifndef SHAPEPOLY_CC_DIM_DECIDE_H_
#define SHAPEPOLY_CC_DIM_DECIDE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "cc/dim/scope.h"

namespace shp {
namespace dim {

class Decider {
 public:
  explicit Decider(Scope* scope);
  ~Decider();
  // Facts changed: drop every cache.
  void Reset();
  // Best sound bounds of `e`.
  Interval Bounds(const Expr* e);
  // Interval-arithmetic bounds only (cheap, weaker).
  Interval IntervalOf(const Expr* e);
  // Throws kUnsatisfiable naming the facts when they cannot all hold.
  void CheckSatisfiable();
  // True if a short greedy search finds values (within the declared ranges) that satisfy
  // every fact: a proof of satisfiability without elimination. False says nothing.
  bool FindWitness() const;
  // Bounds of each variable implied by the facts.
  const std::vector<Interval>& VarBounds();

  struct Row {
    std::vector<int64_t> c;  // one coefficient per column
    int64_t c0;              // sum(c[i] * col[i]) + c0 >= 0  (== 0 when eq)
    uint64_t origin;         // bit i: fact i (i < 62); bit 62: a later fact; bit 63: implicit
    bool eq = false;
  };

 private:
  struct System;
  void Prepare();
  Interval AtomInterval(const Atom* a);
  Interval MonoInterval(const Mono* m);
  void Build(System* sys, const Expr* query);
  Interval Project(const Expr* e);
  std::string DescribeOrigin(uint64_t origin) const;

  Scope* s_;
  bool prepared_ = false;
  bool preparing_ = false;
  std::vector<Interval> var_bounds_;
  std::unordered_map<const Atom*, Interval> atom_iv_;
  std::unordered_map<const Mono*, Interval> mono_iv_;
  std::unordered_map<const Expr*, Interval> bounds_cache_;
  std::unique_ptr<System> base_;  // the facts' rows, shared by every query until Reset
};

}  // namespace dim
}  // namespace shp

#endif  // SHAPEPOLY_CC_DIM_DECIDE_H_
