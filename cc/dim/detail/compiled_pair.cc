// CompiledPair (detail/compiled_pair.h).
#include "cc/dim/detail/compiled_pair.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "cc/dim/detail/fold.h"
#include "cc/dim/detail/normal_form.h"
#include "cc/dim/scope.h"

namespace shp {
namespace dim {
namespace detail {

struct CompiledPair::Fold {
  using Value = int32_t;
  struct State {
    size_t start = 0;  // the expression's terms in `pending`, emitted once its atoms are
  };
  CompiledPair* p;
  std::vector<Ins>& pending;  // the terms of the expressions being walked, innermost last
  std::vector<std::pair<const void*, int32_t>>& memo;  // expressions and atoms compiled
  bool Lookup(const void* key, Value* out) const {
    for (const auto& m : memo) {
      if (m.first == key) {
        *out = m.second;
        return true;
      }
    }
    return false;
  }
  int32_t NewSlot() { return static_cast<int32_t>(p->slots_++); }
  bool Find(const Expr* e, Value* out) {
    if (e->AsVar() >= 0) {  // 0 + 1 * v: no operation can fail
      *out = -e->AsVar() - 1;
      return true;
    }
    return Lookup(e, out);
  }
  void Begin(const Expr*, State* s) { s->start = pending.size(); }
  void BeginTerm(const Term& t, State*) { pending.push_back({OpCode::kTerm, 0, 0, 0, t.coeff}); }
  void Factor(const dim::Factor& f, Value atom, State*) {
    pending.push_back({OpCode::kFactor, atom, f.exp, 0, 0});
  }
  void EndTerm(const Term&, State*) { pending.push_back({OpCode::kEndTerm, 0, 0, 0, 0}); }
  Value End(const Expr* e, State* s) {
    const int32_t dst = NewSlot();
    if (e->IsConstant()) {
      p->code_.push_back({OpCode::kConst, 0, 0, dst, e->ConstantTerm()});
    } else {
      p->code_.push_back({OpCode::kBegin, 0, 0, 0, 0});
      const Ins* c = pending.data() + s->start;
      const size_t size = pending.size() - s->start;
      // A term is kTerm, its kFactors and kEndTerm, so c[i + 1] and c[i + 2] exist after a
      // kTerm followed by a kFactor.
      for (size_t i = 0; i < size; ++i) {
        // k (no factor) and k * v (v a variable, exponent 1: MulPow is one checked product).
        if (c[i].op != OpCode::kTerm) {
          p->code_.push_back(c[i]);
        } else if (c[i + 1].op == OpCode::kEndTerm) {
          p->code_.push_back({OpCode::kAddConst, 0, 0, 0, c[i].k});
          i += 1;
        } else if (c[i + 1].op == OpCode::kFactor && c[i + 1].a < 0 && c[i + 1].b == 1 &&
                   c[i + 2].op == OpCode::kEndTerm) {
          p->code_.push_back({OpCode::kAddLinear, c[i + 1].a, 0, 0, c[i].k});
          i += 2;
        } else {
          p->code_.push_back(c[i]);
        }
      }
      p->code_.push_back({OpCode::kStore, 0, 0, dst, 0});
    }
    pending.resize(s->start);
    memo.emplace_back(e, dst);
    return dst;
  }
  bool FindAtom(const Atom* a, Value* out) { return Lookup(a, out); }
  Value Var(const Atom* a) { return -a->var - 1; }
  Value Op(const Expr*, const Atom* a, Value x, Value y) {
    OpCode op = OpCode::kMin;
    // clang-format off
    switch (a->kind) {
      case AtomKind::kFloorDiv: op = OpCode::kFloorDiv; break;
      case AtomKind::kMod: op = OpCode::kMod; break;
      case AtomKind::kMax: op = OpCode::kMax; break;
      default: break;  // kMin (a variable is never an operation)
    }
    // clang-format on
    const int32_t dst = NewSlot();
    p->code_.push_back({op, x, y, dst, 0});
    memo.emplace_back(a, dst);
    return dst;
  }
};

void CompiledPair::Compile(const Expr* l, const Expr* r) {
  code_.clear();
  slots_ = 0;
  pending_.clear();
  memo_.clear();
  Fold fold{this, pending_, memo_};
  fold.pending.reserve(32);
  fold.memo.reserve(16);
  code_.reserve(32);
  lhs_ = FoldExpr(&fold, l);
  rhs_ = FoldExpr(&fold, r);
}

std::vector<int32_t> CompiledPair::Vars() const {
  std::vector<int32_t> out;
  Vars(&out);
  return out;
}

void CompiledPair::Vars(std::vector<int32_t>* vars) const {
  std::vector<int32_t>& out = *vars;
  out.clear();
  auto add = [&](int32_t x) {
    if (x < 0) out.push_back(-x - 1);
  };
  for (const Ins& i : code_) {
    if (i.op == OpCode::kAddLinear || i.op == OpCode::kFactor || i.op >= OpCode::kFloorDiv) {
      add(i.a);
    }
    if (i.op >= OpCode::kFloorDiv) add(i.b);
  }
  add(lhs_);
  add(rhs_);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

bool CompiledPair::Run(const int64_t* val, int64_t* slots, int64_t* l, int64_t* r) const {
  auto get = [&](int32_t x) { return x >= 0 ? slots[x] : val[-x - 1]; };
  int64_t sum = 0, prod = 0;
  for (const Ins& i : code_) {
    switch (i.op) {
      case OpCode::kConst:
        slots[i.dst] = i.k;
        break;
      case OpCode::kBegin:
        sum = 0;
        break;
      case OpCode::kAddConst:
        if (__builtin_add_overflow(sum, i.k, &sum)) return false;
        break;
      case OpCode::kAddLinear:
        if (__builtin_mul_overflow(i.k, get(i.a), &prod)) return false;
        if (__builtin_add_overflow(sum, prod, &sum)) return false;
        break;
      case OpCode::kTerm:
        prod = i.k;
        break;
      case OpCode::kFactor: {
        // MulPow (eval.cc): one checked product per power, the trivial cases skipped.
        const int64_t v = get(i.a);
        if (v == 1 || prod == 0) break;
        if (v == 0) {
          prod = 0;
        } else if (v == -1) {
          if (prod == INT64_MIN) return false;
          if (i.b % 2) prod = -prod;
        } else {
          for (int32_t e = 0; e < i.b; ++e) {
            if (__builtin_mul_overflow(prod, v, &prod)) return false;
          }
        }
        break;
      }
      case OpCode::kEndTerm:
        if (__builtin_add_overflow(sum, prod, &sum)) return false;
        break;
      case OpCode::kStore:
        slots[i.dst] = sum;
        break;
      case OpCode::kFloorDiv:
      case OpCode::kMod: {
        const int64_t x = get(i.a), y = get(i.b);
        if (y == 0 || (i.op == OpCode::kFloorDiv && x == INT64_MIN && y == -1)) return false;
        slots[i.dst] = i.op == OpCode::kFloorDiv ? FloorDivInt(x, y) : ModInt(x, y);
        break;
      }
      case OpCode::kMax:
        slots[i.dst] = std::max(get(i.a), get(i.b));
        break;
      case OpCode::kMin:
        slots[i.dst] = std::min(get(i.a), get(i.b));
        break;
    }
  }
  *l = get(lhs_);
  *r = get(rhs_);
  return true;
}

}  // namespace detail
}  // namespace dim
}  // namespace shp
