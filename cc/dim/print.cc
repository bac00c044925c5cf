// Deterministic, readable printing: `2*b + 1`, `a^2*b`, `floordiv(a, 3)`, `max(a, b)`.
// Terms come in normal-form order (higher degree first), the constant last.
#include <string>
#include <vector>

#include "cc/dim/parse.h"
#include "cc/dim/scope.h"
#include "cc/dim/detail/normal_form.h"

namespace shp {
namespace dim {
namespace {

// Printed text or an expression still to print.
struct Piece {
  std::string text;
  const Expr* expr;
};

// Appends the text of `e` to *text, except the operands of its floordiv/mod/max/min: for each,
// operand(x) is called where x's text belongs.
template <class Operand>
void AppendTerms(const Expr* e, std::string& text, Operand operand) {
  if (e->terms.empty()) text += "0";
  bool first = true;
  for (const Term& t : e->terms) {
    // |coeff| as unsigned so that INT64_MIN prints correctly.
    bool neg = t.coeff < 0;
    uint64_t mag = neg ? 0 - static_cast<uint64_t>(t.coeff) : static_cast<uint64_t>(t.coeff);
    if (first) {
      if (neg) text += "-";
    } else {
      text += neg ? " - " : " + ";
    }
    first = false;
    if (t.mono->factors.empty()) {
      text += std::to_string(mag);
      continue;
    }
    if (mag != 1) {
      text += std::to_string(mag);
      text += "*";
    }
    bool first_factor = true;
    for (const Factor& f : t.mono->factors) {
      if (!first_factor) text += "*";
      first_factor = false;
      const Atom* a = f.atom;
      // clang-format off
      switch (a->kind) {
        case AtomKind::kVar: text += a->name; break;
        case AtomKind::kFloorDiv: text += "floordiv("; break;
        case AtomKind::kMod: text += "mod("; break;
        case AtomKind::kMax: text += "max("; break;
        case AtomKind::kMin: text += "min("; break;
      }
      // clang-format on
      if (a->kind != AtomKind::kVar) {
        operand(a->a);
        text += ", ";
        operand(a->b);
        text += ")";
      }
      if (f.exp != 1) {
        text += "^";
        text += std::to_string(f.exp);
      }
    }
  }
}

// Appends the pieces of `e` in order: text, and the operands of its floordiv/mod/max/min.
void Expand(const Expr* e, std::vector<Piece>* pieces) {
  std::string text;
  AppendTerms(e, text, [&](const Expr* x) {
    pieces->push_back({std::move(text), nullptr});
    text.clear();
    pieces->push_back({"", x});
  });
  pieces->push_back({std::move(text), nullptr});
}

// Whether `e` has no floordiv, mod, max or min (its text is one piece).
bool IsFlat(const Expr* e) {
  for (const Term& t : e->terms) {
    for (const Factor& f : t.mono->factors) {
      if (f.atom->kind != AtomKind::kVar) return false;
    }
  }
  return true;
}

// Prints with an explicit stack: expressions nest kMaxNestingDepth deep, and callers may run
// on small thread stacks.
void AppendExpr(const Expr* e, std::string* out) {
  if (IsFlat(e)) {  // most dimensions: printed in place, without the stack
    AppendTerms(e, *out, [](const Expr*) {});
    return;
  }
  std::vector<Piece> stack{{"", e}};
  std::vector<Piece> pieces;
  while (!stack.empty()) {
    Piece p = std::move(stack.back());
    stack.pop_back();
    if (p.expr == nullptr) {
      *out += p.text;
      continue;
    }
    pieces.clear();
    Expand(p.expr, &pieces);
    for (size_t i = pieces.size(); i-- > 0;) stack.push_back(std::move(pieces[i]));
  }
}

}  // namespace

std::string Scope::ToString(const Expr* e) const {
  std::string out;
  AppendExpr(e, &out);
  return out;
}

std::string Scope::ShapeToString(const std::vector<const Expr*>& dims) const {
  std::string out = "(";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) out += ", ";
    AppendExpr(dims[i], &out);
  }
  if (dims.size() == 1) out += ",";
  out += ")";
  return out;
}

std::string Scope::FactToString(const Fact& f) const {
  return ToString(f.lhs) + " " + CmpSymbol(f.op) + " " + ToString(f.rhs);
}

std::string Scope::ConstraintsToString() const {
  if (facts_.empty()) return "{no constraints}";
  std::string out = "{";
  for (size_t i = 0; i < facts_.size(); ++i) {
    if (i) out += ", ";
    out += QuoteForMessage(facts_[i].text);  // user text, for messages
  }
  return out + "}";
}

const Expr* Scope::Parse(const std::string& text) { return ParseExpr(this, text, true); }

std::vector<const Expr*> Scope::ParseShape(const std::string& spec,
                                           const std::vector<int64_t>* like) {
  return ParseShapeSpec(this, spec, like);
}

}  // namespace dim
}  // namespace shp
