// CompiledPair: a pair of dim expressions compiled to straight-line code over int64 value
// slots, for callers that evaluate them at thousands of valuations (explain_search.cc's witness and
// refutation searches). Private to cc/dim, like normal_form.h.
#ifndef SHAPEPOLY_CC_DIM_DETAIL_COMPILED_PAIR_H_
#define SHAPEPOLY_CC_DIM_DETAIL_COMPILED_PAIR_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "cc/dim/expr.h"

namespace shp {
namespace dim {
namespace detail {

// A side pair compiled once: straight-line code over value slots, each atom of the expressions' DAG
// computed once. It does the int64 operations of Evaluate's first walk with the same checks (a
// result beyond int64, a division by zero: no value), so it gives the same values; it has no
// value at a few more valuations (where only Evaluate's 128-bit retry of an overflowing
// expansion succeeds), which a search then skips. What a search finds is checked with
// Evaluate (SatisfiesFacts) before use.
class CompiledPair {
 public:
  // (Again on the same object: replaces what it held, reusing its buffers.)
  void Compile(const Expr* l, const Expr* r);
  // l and r at `val`; false where Evaluate would fail or needs its 128-bit retry. `slots`:
  // scratch of slots() values.
  bool Run(const int64_t* val, int64_t* slots, int64_t* l, int64_t* r) const;
  size_t slots() const { return slots_; }
  // The variables it reads (what VarsOf gives for l and r), sorted, without duplicates.
  std::vector<int32_t> Vars() const;
  void Vars(std::vector<int32_t>* out) const;  // the same into *out

 private:
  // An operand is a slot (>= 0) or variable v (-v - 1).
  enum class OpCode : uint8_t {
    kConst,      // slot dst = k
    kBegin,      // sum = 0
    kAddConst,   // sum += k
    kAddLinear,  // sum += k * operand a
    kTerm,       // prod = k
    kFactor,     // prod *= operand a ^ b
    kEndTerm,    // sum += prod
    kStore,      // slot dst = sum
    // The atoms last: slot dst = floordiv(operand a, operand b), likewise for the others.
    kFloorDiv,
    kMod,
    kMax,
    kMin,
  };
  struct Ins {
    OpCode op;
    int32_t a, b, dst;
    int64_t k;
  };
  struct Fold;  // the compiler (a visitor of detail::FoldExpr)
  std::vector<Ins> code_;
  // The compiler's buffers, kept for the next Compile.
  std::vector<Ins> pending_;
  std::vector<std::pair<const void*, int32_t>> memo_;
  size_t slots_ = 0;
  int32_t lhs_ = 0, rhs_ = 0;
};

}  // namespace detail
}  // namespace dim
}  // namespace shp

#endif  // SHAPEPOLY_CC_DIM_DETAIL_COMPILED_PAIR_H_
