// FoldExpr: a bottom-up walk over a normal form (terms in order, factors in order, atom
// operand a before b) with an explicit stack instead of recursion, so that the deepest
// nesting the builders allow (kMaxNestingDepth) never depends on the caller's stack (Go and
// C# callers often run on small ones). Private to cc/dim, like normal_form.h.
//
// The visitor V gives the value type and a per-expression state:
//   using Value = ...; struct State {...};  (State default-constructible)
//   bool Find(const Expr* e, Value* out);          // a memoized result, or false
//   void Begin(const Expr* e, State* s);
//   void BeginTerm(const Term& t, State* s);
//   void Factor(const Factor& f, const Value& atom, State* s);
//   void EndTerm(const Term& t, State* s);
//   Value End(const Expr* e, State* s);           // may memoize
//   bool FindAtom(const Atom* at, Value* out);    // a memoized atom, or false
//   Value Var(const Atom* at);
//   Value Op(const Expr* e, const Atom* at, const Value& a, const Value& b);  // may memoize
// The callbacks run in the order a recursive walk would call them.
#ifndef SHAPEPOLY_CC_DIM_DETAIL_FOLD_H_
#define SHAPEPOLY_CC_DIM_DETAIL_FOLD_H_

#include <cstddef>
#include <utility>
#include <vector>

#include "cc/dim/detail/normal_form.h"

namespace shp {
namespace dim {
namespace detail {

// A stack with a few frames inline (flat expressions need one, and no allocation).
template <typename Frame, size_t kInline = 4>
class FrameStack {
 public:
  bool empty() const { return size_ == 0; }
  Frame& back() { return size_ <= kInline ? inline_[size_ - 1] : heap_[size_ - kInline - 1]; }
  void push(Frame f) {
    if (size_ < kInline) {
      inline_[size_] = std::move(f);
    } else {
      heap_.push_back(std::move(f));
    }
    ++size_;
  }
  void pop() {
    if (size_ > kInline) {
      heap_.pop_back();
    } else {
      inline_[size_ - 1] = Frame();  // releases what the frame's state holds
    }
    --size_;
  }

 private:
  Frame inline_[kInline];
  std::vector<Frame> heap_;
  size_t size_ = 0;
};

template <typename V>
typename V::Value FoldExpr(V* v, const Expr* root) {
  using Value = typename V::Value;
  struct Frame {
    const Expr* e = nullptr;
    size_t term = 0;
    size_t factor = 0;
    bool in_term = false;
    int waiting = 0;  // 1: for the current atom's operand a, 2: for its operand b
    Value a{};
    typename V::State state{};
  };
  Value found{};
  if (v->Find(root, &found)) return found;
  FrameStack<Frame> stack;
  Frame first;
  first.e = root;
  v->Begin(root, &first.state);
  stack.push(std::move(first));
  Value value{};  // of the operand just finished, when the top frame is waiting
  for (;;) {
    Frame& f = stack.back();
    const Expr* child = nullptr;  // an operand to walk before `f` can go on
    if (f.waiting != 0) {
      const dim::Factor& fa = f.e->terms[f.term].mono->factors[f.factor];
      if (f.waiting == 1) {
        f.a = std::move(value);
        if (v->Find(fa.atom->b, &value)) {
          f.waiting = 2;
          continue;  // as if b had just been walked
        }
        f.waiting = 2;
        child = fa.atom->b;
      } else {
        f.waiting = 0;
        Value atom = v->Op(f.e, fa.atom, f.a, value);
        v->Factor(fa, atom, &f.state);
        ++f.factor;
      }
    }
    while (child == nullptr && f.term < f.e->terms.size()) {
      const Term& t = f.e->terms[f.term];
      if (!f.in_term) {
        v->BeginTerm(t, &f.state);
        f.factor = 0;
        f.in_term = true;
      }
      if (f.factor < t.mono->factors.size()) {
        const dim::Factor& fa = t.mono->factors[f.factor];
        Value atom{};
        const bool known = v->FindAtom(fa.atom, &atom);
        if (!known && fa.atom->kind == AtomKind::kVar) {
          atom = v->Var(fa.atom);
        } else if (!known && v->Find(fa.atom->a, &value)) {
          // Operand a is known: continue as if it had just been walked.
          f.waiting = 1;
          break;
        } else if (!known) {
          f.waiting = 1;
          child = fa.atom->a;
          break;
        }
        v->Factor(fa, atom, &f.state);
        ++f.factor;
        continue;
      }
      v->EndTerm(t, &f.state);
      f.in_term = false;
      ++f.term;
    }
    if (child != nullptr) {
      Frame next;
      next.e = child;
      v->Begin(child, &next.state);
      stack.push(std::move(next));  // `f` is stale from here
      continue;
    }
    if (f.waiting != 0) continue;  // operand a was memoized: resume with it
    value = v->End(f.e, &f.state);
    stack.pop();
    if (stack.empty()) return value;
  }
}

}  // namespace detail
}  // namespace dim
}  // namespace shp

#endif  // SHAPEPOLY_CC_DIM_DETAIL_FOLD_H_
