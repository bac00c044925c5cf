// Deterministic, readable printing: `2*b + 1`, `a^2*b`, `floordiv(a, 3)`, `max(a, b)`.
// Terms come in normal-form order (higher degree first), the constant last.
#include <string>

#include "cc/dim/parse.h"
#include "cc/dim/scope.h"
#include "cc/dim/detail/normal_form.h"

namespace shp {
namespace dim {
namespace {

void AppendAtom(const Scope& s, const Atom* a, std::string* out);

void AppendExpr(const Scope& s, const Expr* e, std::string* out) {
  if (e->terms.empty()) {
    *out += "0";
    return;
  }
  bool first = true;
  for (const Term& t : e->terms) {
    // |coeff| as unsigned so that INT64_MIN prints correctly.
    bool neg = t.coeff < 0;
    uint64_t mag = neg ? 0 - static_cast<uint64_t>(t.coeff) : static_cast<uint64_t>(t.coeff);
    if (first) {
      if (neg) *out += "-";
    } else {
      *out += neg ? " - " : " + ";
    }
    first = false;
    if (t.mono->factors.empty()) {
      *out += std::to_string(mag);
      continue;
    }
    if (mag != 1) {
      *out += std::to_string(mag);
      *out += "*";
    }
    bool first_factor = true;
    for (const Factor& f : t.mono->factors) {
      if (!first_factor) *out += "*";
      first_factor = false;
      AppendAtom(s, f.atom, out);
      if (f.exp != 1) {
        *out += "^";
        *out += std::to_string(f.exp);
      }
    }
  }
}

void AppendAtom(const Scope& s, const Atom* a, std::string* out) {
  const char* fn = nullptr;
  // clang-format off
  switch (a->kind) {
    case AtomKind::kVar:
      *out += a->name;
      return;
    case AtomKind::kFloorDiv: fn = "floordiv("; break;
    case AtomKind::kMod: fn = "mod("; break;
    case AtomKind::kMax: fn = "max("; break;
    case AtomKind::kMin: fn = "min("; break;
  }
  // clang-format on
  *out += fn;
  AppendExpr(s, a->a, out);
  *out += ", ";
  AppendExpr(s, a->b, out);
  *out += ")";
}

}  // namespace

std::string Scope::ToString(const Expr* e) const {
  std::string out;
  AppendExpr(*e->scope, e, &out);
  return out;
}

std::string Scope::ShapeToString(const std::vector<const Expr*>& dims) const {
  std::string out = "(";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) out += ", ";
    AppendExpr(*this, dims[i], &out);
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
